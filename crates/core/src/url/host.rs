//! Is a host on the public internet, or on this machine or its private network?
//!
//! For the server-side request forgery defences to come (a record must not make
//! pinaudit fetch from `127.0.0.1` or a cloud metadata address): a pure function
//! of the host text, no DNS, no connection. Hosts are read as a browser reads
//! them (WHATWG URL host parser, through the `url` crate), so the numeric
//! spellings that reach loopback without saying `127.0.0.1` (`2130706433`,
//! `0x7f000001`, `0177.0.0.1`, `127.1`) are classified as what they reach.
//! A name that DNS would resolve to a private address (`x.nip.io`) is public here;
//! only a check after resolution can catch that.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Where a host is, as far as its text tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostClass {
    /// A domain name or a globally routable address.
    Public,
    /// 127.0.0.0/8, ::1, `localhost`, `*.localhost`.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16 (and the deprecated IPv6 site-local fec0::/10).
    Private,
    /// 169.254/16 (cloud metadata lives there), fe80::/10.
    LinkLocal,
    /// fc00::/7.
    UniqueLocal,
    /// 0.0.0.0, `::`: "this host" to most stacks.
    Unspecified,
    /// Not routable on the internet for another reason: 0/8, carrier-grade NAT
    /// 100.64/10, IETF 192.0.0/24, documentation and benchmarking ranges,
    /// multicast, 240/4, broadcast, ff00::/8, 2001:db8::/32.
    Reserved,
    /// Not a host at all (empty, forbidden characters, a bad IPv6 literal).
    Invalid,
}

impl HostClass {
    /// Whether a fetch from this host leaves the machine and its private network.
    pub fn is_public(self) -> bool {
        self == HostClass::Public
    }
}

/// Classifies `host` (a URL's host: a name, an IPv4 address in any numeric form,
/// or an IPv6 literal with or without brackets; a zone id `%eth0` is ignored).
pub fn classify_host(host: &str) -> HostClass {
    let host = host.trim();
    let bracketed = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    let literal = bracketed.unwrap_or(host);
    let literal = literal
        .split_once('%')
        .map_or(literal, |(addr, _zone)| addr);
    if let Ok(v6) = literal.parse::<Ipv6Addr>() {
        return classify_ip(IpAddr::V6(v6));
    }
    if bracketed.is_some() || host.is_empty() {
        return HostClass::Invalid;
    }
    match ::url::Host::parse(host) {
        Ok(::url::Host::Ipv4(v4)) => classify_ip(IpAddr::V4(v4)),
        Ok(::url::Host::Ipv6(v6)) => classify_ip(IpAddr::V6(v6)),
        Ok(::url::Host::Domain(name)) => {
            // After IDNA mapping, so `LOCALHOST` and full-width spellings count.
            let name = name.strip_suffix('.').unwrap_or(&name);
            if name == "localhost" || name.ends_with(".localhost") {
                HostClass::Loopback
            } else {
                HostClass::Public
            }
        }
        Err(_) => HostClass::Invalid,
    }
}

/// Classifies an address.
pub fn classify_ip(ip: IpAddr) -> HostClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> HostClass {
    let [a, b, c, _] = ip.octets();
    if ip.is_unspecified() {
        HostClass::Unspecified
    } else if a == 127 {
        HostClass::Loopback
    } else if a == 10 || (a == 172 && (16..32).contains(&b)) || (a == 192 && b == 168) {
        HostClass::Private
    } else if a == 169 && b == 254 {
        HostClass::LinkLocal
    } else if a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && (c == 0 || c == 2))
        || (a == 198 && (b == 18 || b == 19))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224
    {
        HostClass::Reserved
    } else {
        HostClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> HostClass {
    let seg = ip.segments();
    // Addresses that carry an IPv4 address reach that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let embedded = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    if ip.is_unspecified() {
        return HostClass::Unspecified;
    }
    if ip.is_loopback() {
        return HostClass::Loopback;
    }
    // IPv4-compatible `::a.b.c.d` (deprecated, still routed by some stacks).
    if seg[..6].iter().all(|s| *s == 0) {
        return classify_v4(embedded(seg[6], seg[7]));
    }
    // NAT64 64:ff9b::/96 and 6to4 2002::/16.
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(embedded(seg[6], seg[7]));
    }
    if seg[0] == 0x2002 {
        let inner = classify_v4(embedded(seg[1], seg[2]));
        if !inner.is_public() {
            return inner;
        }
    }
    match seg[0] {
        s if s & 0xffc0 == 0xfe80 => HostClass::LinkLocal,
        s if s & 0xffc0 == 0xfec0 => HostClass::Private,
        s if s & 0xfe00 == 0xfc00 => HostClass::UniqueLocal,
        s if s & 0xff00 == 0xff00 => HostClass::Reserved,
        0x2001 if seg[1] == 0x0db8 => HostClass::Reserved,
        _ => HostClass::Public,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use HostClass::*;

    #[test]
    fn host_classes() {
        let cases = [
            // names
            ("github.com", Public),
            ("GitHub.com.", Public),
            ("localhost", Loopback),
            ("LOCALHOST", Loopback),
            ("localhost.", Loopback),
            ("api.localhost", Loopback),
            ("ｌｏｃａｌｈｏｓｔ", Loopback),
            ("localhost.example", Public),
            ("notlocalhost", Public),
            ("127.0.0.1.nip.io", Public),
            // IPv4, dotted
            ("8.8.8.8", Public),
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("172.32.0.1", Public),
            ("172.15.0.1", Public),
            ("192.168.1.1", Private),
            ("169.254.169.254", LinkLocal),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Reserved),
            ("100.64.0.1", Reserved),
            ("224.0.0.1", Reserved),
            ("255.255.255.255", Reserved),
            ("192.0.2.1", Reserved),
            // IPv4, numeric obfuscations
            ("2130706433", Loopback),
            ("0x7f000001", Loopback),
            ("0X7F000001", Loopback),
            ("0177.0.0.1", Loopback),
            ("0177.0000.0000.0001", Loopback),
            ("127.1", Loopback),
            ("127.0.1", Loopback),
            ("0x7f.1", Loopback),
            ("0", Unspecified),
            ("0x0", Unspecified),
            ("3232235777", Private),
            ("0xa9fea9fe", LinkLocal),
            ("0251.0376.0251.0376", LinkLocal),
            ("127.0.0.1.", Loopback),
            // IPv6
            ("[::1]", Loopback),
            ("::1", Loopback),
            ("[0:0:0:0:0:0:0:1]", Loopback),
            ("[::]", Unspecified),
            ("[fe80::1]", LinkLocal),
            ("[fe80::1%eth0]", LinkLocal),
            ("[febf::1]", LinkLocal),
            ("[fc00::1]", UniqueLocal),
            ("[fd12:3456::1]", UniqueLocal),
            ("[fec0::1]", Private),
            ("[ff02::1]", Reserved),
            ("[2001:db8::1]", Reserved),
            ("[::ffff:127.0.0.1]", Loopback),
            ("[::ffff:7f00:1]", Loopback),
            ("[::ffff:10.0.0.1]", Private),
            ("[::127.0.0.1]", Loopback),
            ("[64:ff9b::a9fe:a9fe]", LinkLocal),
            ("[2002:7f00:1::]", Loopback),
            ("[2606:4700::1111]", Public),
            ("[::ffff:8.8.8.8]", Public),
            // junk
            ("", Invalid),
            ("[::1", Invalid),
            ("[not-v6]", Invalid),
            ("a b", Invalid),
            ("1.2.3.4.5", Invalid),
            ("256.0.0.1", Invalid),
        ];
        for (host, want) in cases {
            assert_eq!(classify_host(host), want, "{host}");
        }
        assert!(classify_host("github.com").is_public());
        assert!(!classify_host("2130706433").is_public());
    }
}
