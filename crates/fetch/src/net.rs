//! Where pinaudit's connections go: name resolution with `--resolve` pins, and
//! the check that a record's host does not lead to this machine or its network.
//!
//! [`pinaudit_core::url::classify_host`] judges a host by its text, before anything is
//! sent; a *name* can still resolve to `127.0.0.1` or a metadata address. So
//! every connection a record leads to is made to the addresses returned here,
//! after they were checked ([`lookup`] with `public_only`): the git `git://`
//! and smart HTTP transports connect to them, and the reqwest clients (git over
//! HTTP(S), web documents) get them through [`Resolver`]. There is no gap
//! between the check and the connection, and a refusal never depends on the
//! port (open or closed, the text is the same).
//!
//! `--resolve HOST:PORT:ADDR` (like curl's) pins a name to an address for every
//! connection of the process: set once by the command ([`set_pins`]).

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, RwLock};

use pinaudit_core::url::{classify_ip, HostClass};

/// One `--resolve HOST:PORT:ADDR` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Lowercase, without brackets or a final dot.
    pub host: String,
    pub(crate) port: u16,
    pub(crate) addr: IpAddr,
}

impl std::str::FromStr for Pin {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!("`{s}`: {why} (write HOST:PORT:ADDR, e.g. `forge.test:443:192.0.2.7`)")
        };
        let (host, rest) = s.split_once(':').ok_or_else(|| bad("no port"))?;
        let (port, addr) = rest.split_once(':').ok_or_else(|| bad("no address"))?;
        let host = normal_host(host);
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port: u16 = port.parse().map_err(|_| bad("the port is not a number"))?;
        let addr = addr.trim_start_matches('[').trim_end_matches(']');
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| bad("the address is not an IP address"))?;
        Ok(Pin { host, port, addr })
    }
}

fn normal_host(host: &str) -> String {
    let h = host.trim().trim_start_matches('[').trim_end_matches(']');
    h.strip_suffix('.').unwrap_or(h).to_ascii_lowercase()
}

static PINS: RwLock<Vec<Pin>> = RwLock::new(Vec::new());

/// Sets the `--resolve` pins of this process (replacing earlier ones).
pub fn set_pins(pins: Vec<Pin>) {
    *PINS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = pins;
}

fn pins() -> Vec<Pin> {
    PINS.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// The address `host:port` is pinned to, if any; `port` `None` matches a pin
/// for any port (reqwest's resolver is not told the port).
fn pinned(host: &str, port: Option<u16>) -> Option<IpAddr> {
    let host = normal_host(host);
    pins()
        .into_iter()
        .find(|p| p.host == host && port.is_none_or(|port| p.port == port))
        .map(|p| p.addr)
}

/// What an address is, in words, when it is not public.
fn non_public(class: HostClass) -> Option<&'static str> {
    Some(match class {
        HostClass::Public => return None,
        HostClass::Loopback => "a loopback address",
        HostClass::Private => "a private-network address",
        HostClass::LinkLocal => "a link-local address",
        HostClass::UniqueLocal => "a unique-local address",
        HostClass::Unspecified => "an unspecified address",
        HostClass::Reserved => "a reserved address",
        HostClass::Invalid => "not a valid address",
    })
}

/// The words of a refusal: [`refuse_non_public`] says the same
/// of a host whose text alone gives it away.
pub use pinaudit_core::error::REFUSED_MARK;

/// The addresses to connect to for `host:port`: the `--resolve` pin, an IP
/// literal, or DNS. With `public_only`, any address that is not public refuses
/// the whole host (before any connection; the same words whatever the port).
pub(crate) fn lookup(host: &str, port: u16, public_only: bool) -> std::io::Result<Vec<SocketAddr>> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match pinned(bare, Some(port)) {
        Some(ip) => vec![SocketAddr::new(ip, port)],
        None => match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => (bare, port)
                .to_socket_addrs()
                .map_err(|e| {
                    std::io::Error::new(
                        e.kind(),
                        format!("failed to resolve address for `{bare}`: {e}"),
                    )
                })?
                .collect(),
        },
    };
    if public_only {
        check(bare, &addrs)?;
    }
    if addrs.is_empty() {
        return Err(std::io::Error::other(format!(
            "failed to resolve address for `{bare}`: no address"
        )));
    }
    Ok(addrs)
}

/// Refuses `host` when one of its addresses is not public (a name that has a
/// public and a private address must not be a way in either).
fn check(host: &str, addrs: &[SocketAddr]) -> std::io::Result<()> {
    for a in addrs {
        if let Some(what) = non_public(classify_ip(a.ip())) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "host `{}` refused: it resolves to {what} (`{}`), {REFUSED_MARK} (records may only name public hosts; pass --allow-local to fetch from it)",
                    pinaudit_core::escape::terminal(host),
                    a.ip()
                ),
            ));
        }
    }
    Ok(())
}

/// Hosts of the HTTP proxies the environment names: reqwest connects to them
/// (and lets them resolve the target), so they are the user's choice, never
/// refused.
fn proxy_hosts() -> Vec<String> {
    [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ]
    .iter()
    .filter_map(|k| std::env::var(k).ok())
    .filter_map(|v| {
        let v = if v.contains("://") {
            v
        } else {
            format!("http://{v}")
        };
        ::url::Url::parse(&v).ok()?.host_str().map(normal_host)
    })
    .collect()
}

/// A reqwest DNS resolver that applies the `--resolve` pins and, with
/// `public_only`, refuses names that resolve to non-public addresses (the
/// addresses it returns are the only ones reqwest connects to).
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    public_only: bool,
    exempt: Arc<Vec<String>>,
}

impl Resolver {
    pub(crate) fn new(public_only: bool) -> Arc<Self> {
        Arc::new(Resolver {
            public_only,
            exempt: Arc::new(proxy_hosts()),
        })
    }
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let public_only = self.public_only && !self.exempt.contains(&normal_host(&host));
        Box::pin(async move {
            let found = tokio::task::spawn_blocking(move || {
                // The pin for any port: reqwest puts the URL's port on what we return.
                match pinned(&host, None) {
                    Some(ip) => {
                        let addrs = vec![SocketAddr::new(ip, 0)];
                        if public_only {
                            check(&host, &addrs)?;
                        }
                        Ok(addrs)
                    }
                    None => lookup(&host, 0, public_only),
                }
            })
            .await
            .map_err(|e| Box::new(std::io::Error::other(e)) as Box<_>)?;
            let addrs =
                found.map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Refuses a record's host unless it is on the public internet.
///
/// Records are written by strangers; a record must not make pinaudit connect to
/// this machine, its private network or a cloud metadata address (server-side
/// request forgery, issue "Reliability and security"). Decided from the host text
/// alone ([`pinaudit_core::url::classify_host`], which reads `2130706433`, `0x7f000001`,
/// `0177.0.0.1` as the addresses they reach), before any connection, so the
/// refusal is the same whether a port there is closed, open or an HTTP server.
/// `--rewrite` targets are the user's own choice and are not checked here. A
/// name that passes is checked again on the addresses it resolves to, when the
/// connection is made (`SyncOptions::public_only`, [`lookup`]).
pub fn refuse_non_public(host: &str) -> Result<(), pinaudit_core::provider::Skip> {
    let what = match pinaudit_core::url::classify_host(host) {
        HostClass::Invalid => "not a valid host",
        class => match non_public(class) {
            None => return Ok(()),
            Some(what) => what,
        },
    };
    Err(pinaudit_core::provider::Skip(format!(
        "host `{}` refused: it is {what}, not a public host (records may only name public hosts; pass --allow-local to fetch from it)",
        pinaudit_core::escape::terminal(host)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_parse_like_curl() {
        let p: Pin = "Forge.Test.:8080:127.0.0.1".parse().unwrap();
        assert_eq!(p.host, "forge.test");
        assert_eq!(p.port, 8080);
        assert_eq!(p.addr, "127.0.0.1".parse::<IpAddr>().unwrap());
        let v6: Pin = "h:443:[::1]".parse().unwrap();
        assert_eq!(v6.addr, "::1".parse::<IpAddr>().unwrap());
        for bad in [
            "h",
            "h:1",
            "h:x:1.2.3.4",
            ":1:1.2.3.4",
            "h:1:nope",
            "h:70000:1.2.3.4",
        ] {
            assert!(bad.parse::<Pin>().is_err(), "{bad}");
        }
    }

    #[test]
    fn literal_addresses_are_checked_when_asked() {
        let e = lookup("127.0.0.1", 9, true).unwrap_err();
        assert!(e.to_string().contains(REFUSED_MARK), "{e}");
        assert!(e.to_string().contains("--allow-local"), "{e}");
        assert_eq!(lookup("127.0.0.1", 9, false).unwrap().len(), 1);
        assert_eq!(lookup("[::1]", 9, false).unwrap()[0].port(), 9);
    }
}
