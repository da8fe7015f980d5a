//! Where pinaudit's connections go: name resolution with `--resolve` pins, and
//! the check that a record's host does not lead to this machine or its network.
//!
//! [`pinaudit_core::url::classify_host`] judges a host by its text, before anything is
//! sent; a *name* can still resolve to `127.0.0.1` or a metadata address. So
//! every connection a record leads to is made to the addresses returned here,
//! after they were checked ([`Network::lookup`] with `public_only`): the git `git://`
//! and smart HTTP transports connect to them, and the reqwest clients (git over
//! HTTP(S), web documents) get them through [`Resolver`]. There is no gap
//! between the check and the connection, and a refusal never depends on the
//! port (open or closed, the text is the same).
//!
//! `--resolve HOST:PORT:ADDR` (like curl's) pins a name to an address for every
//! connection of one command: the pins are a [`Network`], built once by the
//! command and handed down with the sync options ([`crate::SyncOptions::network`])
//! and the web options, never held by the process, so two audits in one
//! process each connect where their own pins say.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use pinaudit_core::url::{classify_ip, HostClass};

/// One `--resolve HOST:PORT:ADDR` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Lowercase, without brackets or a final dot.
    pub host: String,
    pub(crate) port: u16,
    pub(crate) addr: IpAddr,
}

/// Why a `--resolve` rule can't be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{rule}`: {why} (write HOST:PORT:ADDR, e.g. `forge.test:443:192.0.2.7`)")]
pub struct PinError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it.
    pub why: PinProblem,
}

/// What is wrong with a `--resolve` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PinProblem {
    #[error("no port")]
    NoPort,
    #[error("no address")]
    NoAddress,
    #[error("no host")]
    NoHost,
    #[error("the port is not a number")]
    BadPort,
    #[error("the address is not an IP address")]
    BadAddress,
}

impl std::str::FromStr for Pin {
    type Err = PinError;

    fn from_str(s: &str) -> Result<Self, PinError> {
        let bad = |why| PinError {
            rule: s.to_string(),
            why,
        };
        let (host, rest) = s.split_once(':').ok_or_else(|| bad(PinProblem::NoPort))?;
        let (port, addr) = rest
            .split_once(':')
            .ok_or_else(|| bad(PinProblem::NoAddress))?;
        let host = normal_host(host);
        if host.is_empty() {
            return Err(bad(PinProblem::NoHost));
        }
        let port: u16 = port.parse().map_err(|_| bad(PinProblem::BadPort))?;
        let addr = addr.trim_start_matches('[').trim_end_matches(']');
        let addr: IpAddr = addr.parse().map_err(|_| bad(PinProblem::BadAddress))?;
        Ok(Pin { host, port, addr })
    }
}

fn normal_host(host: &str) -> String {
    let h = host.trim().trim_start_matches('[').trim_end_matches(']');
    h.strip_suffix('.').unwrap_or(h).to_ascii_lowercase()
}

/// Where one command's connections go: its `--resolve` pins. Built once per
/// command and cloned (cheaply) into whatever connects: the sync options of
/// every remote, the web options, and from them each transport and resolver.
#[derive(Debug, Clone, Default)]
pub struct Network {
    pins: Arc<[Pin]>,
}

impl Network {
    /// A network with these `--resolve` pins (none: every name through DNS).
    pub fn new(pins: Vec<Pin>) -> Network {
        Network { pins: pins.into() }
    }

    /// The address `host:port` is pinned to, if any; `port` `None` matches a pin
    /// for any port (reqwest's resolver is not told the port).
    fn pinned(&self, host: &str, port: Option<u16>) -> Option<IpAddr> {
        let host = normal_host(host);
        self.pins
            .iter()
            .find(|p| p.host == host && port.is_none_or(|port| p.port == port))
            .map(|p| p.addr)
    }

    /// The addresses to connect to for `host:port`: the `--resolve` pin, an IP
    /// literal, or DNS. With `public_only`, any address that is not public refuses
    /// the whole host (before any connection; the same words whatever the port).
    pub(crate) fn lookup(
        &self,
        host: &str,
        port: u16,
        public_only: bool,
    ) -> std::io::Result<Vec<SocketAddr>> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<SocketAddr> = match self.pinned(bare, Some(port)) {
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

    /// A reqwest resolver with these pins that, with `public_only`, refuses
    /// names resolving to non-public addresses.
    pub(crate) fn resolver(&self, public_only: bool) -> Arc<Resolver> {
        Arc::new(Resolver {
            network: self.clone(),
            public_only,
            exempt: Arc::new(proxy_hosts()),
        })
    }
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
    network: Network,
    public_only: bool,
    exempt: Arc<Vec<String>>,
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let public_only = self.public_only && !self.exempt.contains(&normal_host(&host));
        let network = self.network.clone();
        Box::pin(async move {
            let found = tokio::task::spawn_blocking(move || {
                // The pin for any port: reqwest puts the URL's port on what we return.
                match network.pinned(&host, None) {
                    Some(ip) => {
                        let addrs = vec![SocketAddr::new(ip, 0)];
                        if public_only {
                            check(&host, &addrs)?;
                        }
                        Ok(addrs)
                    }
                    None => network.lookup(&host, 0, public_only),
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
/// connection is made (`SyncOptions::public_only`, [`Network::lookup`]).
pub fn refuse_non_public(host: &str) -> Result<(), pinaudit_core::provider::Skip> {
    let what = match pinaudit_core::url::classify_host(host) {
        HostClass::Invalid => "not a valid host",
        class => match non_public(class) {
            None => return Ok(()),
            Some(what) => what,
        },
    };
    Err(pinaudit_core::provider::Skip::HostRefused {
        host: host.to_string(),
        what: what.to_string(),
    })
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
        let net = Network::default();
        let e = net.lookup("127.0.0.1", 9, true).unwrap_err();
        assert!(e.to_string().contains(REFUSED_MARK), "{e}");
        assert!(e.to_string().contains("--allow-local"), "{e}");
        assert_eq!(net.lookup("127.0.0.1", 9, false).unwrap().len(), 1);
        assert_eq!(net.lookup("[::1]", 9, false).unwrap()[0].port(), 9);
    }

    #[test]
    fn a_bad_pin_says_what_is_wrong_in_words() {
        let e = "h:x:1.2.3.4".parse::<Pin>().unwrap_err();
        assert_eq!(e.why, PinProblem::BadPort);
        assert_eq!(
            e.to_string(),
            "`h:x:1.2.3.4`: the port is not a number (write HOST:PORT:ADDR, e.g. `forge.test:443:192.0.2.7`)"
        );
        assert_eq!("h".parse::<Pin>().unwrap_err().why, PinProblem::NoPort);
        assert_eq!(
            ":1:1.2.3.4".parse::<Pin>().unwrap_err().why,
            PinProblem::NoHost
        );
    }

    /// Two commands in one process (two audits run by a library user, or
    /// tests on parallel threads), each with its own `--resolve` pins: each
    /// connects where its own pins say, and neither sees the other's, in the
    /// git transports' lookups and in the reqwest resolver alike.
    #[test]
    fn two_commands_in_one_process_keep_their_own_pins() {
        use reqwest::dns::Resolve;
        let pin = |s: &str| s.parse::<Pin>().expect("a pin");
        let one = Network::new(vec![pin("forge.test:9418:127.0.0.2")]);
        let two = Network::new(vec![pin("forge.test:9418:127.0.0.3")]);
        let ask = |net: Network| {
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                for _ in 0..50 {
                    seen.push(net.lookup("forge.test", 9418, false).expect("pinned")[0].ip());
                }
                seen
            })
        };
        let (a, b) = (ask(one.clone()), ask(two.clone()));
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(a.join().unwrap().iter().all(|&x| x == ip("127.0.0.2")));
        assert!(b.join().unwrap().iter().all(|&x| x == ip("127.0.0.3")));
        // The pin is for one port: another port of the host is not pinned.
        assert_eq!(one.pinned("forge.test", Some(443)), None);
        // A command without pins sees none of theirs.
        assert_eq!(Network::default().pinned("forge.test", None), None);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let resolved = |net: &Network| {
            let name: reqwest::dns::Name = "forge.test".parse().expect("a name");
            let addrs = rt
                .block_on(net.resolver(false).resolve(name))
                .expect("resolved");
            addrs.map(|a| a.ip()).collect::<Vec<_>>()
        };
        assert_eq!(resolved(&one), vec![ip("127.0.0.2")]);
        assert_eq!(resolved(&two), vec![ip("127.0.0.3")]);
    }
}
