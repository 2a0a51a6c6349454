//! Which addresses the image import may connect to: every unicast address of the public
//! internet, and nothing of the server's own network (loopback, private, link-local,
//! carrier-grade NAT, cloud metadata...), unless the operator's allow-list names it.
//!
//! The rules look at the address itself, after DNS: a name is only ever as good as the
//! address it resolves to at the moment of connecting.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused (said in the field error, so an operator can tell what to
/// allow-list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    Loopback,
    Private,
    LinkLocal,
    Unspecified,
    Broadcast,
    SharedCgnat,
    CloudMetadata,
    Multicast,
    Reserved,
}

impl Refused {
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::Loopback => "loopback",
            Refused::Private => "private",
            Refused::LinkLocal => "link-local",
            Refused::Unspecified => "unspecified",
            Refused::Broadcast => "broadcast",
            Refused::SharedCgnat => "shared (carrier-grade NAT)",
            Refused::CloudMetadata => "cloud metadata",
            Refused::Multicast => "multicast",
            Refused::Reserved => "reserved",
        }
    }
}

/// Cloud instance-metadata services outside the ranges refused anyway: Azure's wire server
/// is a public address. (AWS, GCP, Azure, Oracle and DigitalOcean use 169.254.169.254,
/// link-local; Alibaba 100.100.100.200, carrier-grade NAT; AWS's IPv6 fd00:ec2::254,
/// unique local.)
const METADATA_V4: &[Ipv4Addr] = &[
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(169, 254, 170, 2),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(168, 63, 129, 16),
];
const METADATA_V6: &[Ipv6Addr] = &[Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)];

/// Why `ip` may not be connected to, or `None` for a public unicast address.
pub fn refusal(ip: IpAddr) -> Option<Refused> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

fn refusal_v4(ip: Ipv4Addr) -> Option<Refused> {
    let in_net = |net: [u8; 4], bits: u8| Cidr::v4(net, bits).contains(IpAddr::V4(ip));
    if METADATA_V4.contains(&ip) {
        Some(Refused::CloudMetadata)
    } else if ip.is_unspecified() || in_net([0, 0, 0, 0], 8) {
        Some(Refused::Unspecified)
    } else if ip.is_loopback() {
        Some(Refused::Loopback)
    } else if ip.is_private() {
        Some(Refused::Private)
    } else if ip.is_link_local() {
        Some(Refused::LinkLocal)
    } else if ip.is_broadcast() {
        Some(Refused::Broadcast)
    } else if in_net([100, 64, 0, 0], 10) {
        Some(Refused::SharedCgnat)
    } else if ip.is_multicast() {
        Some(Refused::Multicast)
    } else if in_net([240, 0, 0, 0], 4) || in_net([192, 0, 0, 0], 24) {
        // Class E, and the IETF protocol assignments (NAT64 discovery and the like).
        Some(Refused::Reserved)
    } else {
        None
    }
}

fn refusal_v6(ip: Ipv6Addr) -> Option<Refused> {
    // The forms that carry an IPv4 address are judged by that address: IPv4-mapped
    // (::ffff:a.b.c.d, which the operating system connects to over IPv4), IPv4-compatible
    // (::a.b.c.d, deprecated), NAT64 (64:ff9b::/96) and 6to4 (2002::/16, the address in the
    // next 32 bits).
    // (`::1` and `::` come first: they too have the IPv4-compatible form.)
    let in_net = |net: [u16; 8], bits: u8| Cidr::v6(net, bits).contains(IpAddr::V6(ip));
    if ip.is_unspecified() {
        Some(Refused::Unspecified)
    } else if ip.is_loopback() {
        Some(Refused::Loopback)
    } else if let Some(v4) = embedded_v4(ip) {
        refusal_v4(v4)
    } else if METADATA_V6.contains(&ip) {
        Some(Refused::CloudMetadata)
    } else if in_net([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7) {
        Some(Refused::Private)
    } else if in_net([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48) {
        // Local-use NAT64 (RFC 8215): a network's own gateway to IPv4, with the address at
        // a place its prefix length sets (RFC 6052), so it cannot be judged by it. Such a
        // gateway reaches the IPv4 network around it, private addresses and all.
        Some(Refused::Private)
    } else if in_net([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10) {
        Some(Refused::LinkLocal)
    } else if in_net([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10) {
        // Site-local: deprecated, but what it meant is "private".
        Some(Refused::Private)
    } else if ip.is_multicast() {
        Some(Refused::Multicast)
    } else {
        None
    }
}

fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0, 0, _, _] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, a, b, ..] => Some(Ipv4Addr::new(
            (a >> 8) as u8,
            a as u8,
            (b >> 8) as u8,
            b as u8,
        )),
        _ => None,
    }
}

/// A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`); a bare address is a network of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    bits: u8,
}

impl Cidr {
    fn v4(octets: [u8; 4], bits: u8) -> Cidr {
        Cidr {
            network: IpAddr::V4(Ipv4Addr::from(octets)),
            bits,
        }
    }

    fn v6(segments: [u16; 8], bits: u8) -> Cidr {
        Cidr {
            network: IpAddr::V6(Ipv6Addr::from(segments)),
            bits,
        }
    }

    pub fn parse(text: &str) -> Option<Cidr> {
        let (address, bits) = match text.split_once('/') {
            Some((address, bits)) => (address, Some(bits.parse::<u8>().ok()?)),
            None => (text, None),
        };
        let network: IpAddr = address
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .ok()?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let bits = bits.unwrap_or(max);
        (bits <= max).then_some(Cidr { network, bits })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        // An IPv4-mapped IPv6 address is the IPv4 address it maps.
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                prefix_equal(u32::from(net).into(), u32::from(ip).into(), self.bits, 32)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_equal(u128::from(net), u128::from(ip), self.bits, 128)
            }
            _ => false,
        }
    }
}

fn prefix_equal(a: u128, b: u128, bits: u8, width: u8) -> bool {
    let shift = u32::from(width - bits);
    bits == 0 || (a >> shift) == (b >> shift)
}

/// The operator's exceptions (the setting `image_fetch_allow`): networks whose addresses
/// may be connected to whatever their kind, and `host:port` pairs that may be fetched from
/// whatever their host resolves to (a name as written in the URL, or an address).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    networks: Vec<Cidr>,
    hosts: Vec<(String, u16)>,
}

impl AllowList {
    /// Reads entries such as `127.0.0.0/8`, `10.1.2.3`, `fd00::/8`, `images.internal:8080`,
    /// `127.0.0.1:9000` or `[::1]:9000`; the error names the entry it cannot read.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<AllowList, String> {
        let mut list = AllowList::default();
        for entry in entries.into_iter().map(str::trim).filter(|e| !e.is_empty()) {
            if let Some(cidr) = Cidr::parse(entry) {
                list.networks.push(cidr);
                continue;
            }
            let host_port = entry
                .rsplit_once(':')
                .and_then(|(host, port)| Some((host, port.parse::<u16>().ok()?)))
                .filter(|(host, _)| !host.is_empty() && !host.contains('/'));
            match host_port {
                Some((host, port)) => list.hosts.push((normal_host(host), port)),
                None => {
                    return Err(format!(
                        "`{entry}` is neither a network (10.0.0.0/8, an address) nor host:port"
                    ));
                }
            }
        }
        Ok(list)
    }

    /// Whether the URL authority `host:port` is named as a whole (then any address its
    /// host resolves to is accepted).
    pub fn names_host(&self, host: &str, port: u16) -> bool {
        let host = normal_host(host);
        self.hosts.iter().any(|(h, p)| *h == host && *p == port)
    }

    pub fn names_address(&self, ip: IpAddr) -> bool {
        self.networks.iter().any(|net| net.contains(ip))
    }
}

/// Hosts compare without case, without IPv6 brackets and without a trailing dot.
fn normal_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Option<Refused> {
        refusal(text.parse().unwrap())
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.215.14",
            "8.8.8.8",
            "1.1.1.1",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert_eq!(refused(ip), None, "{ip}");
        }
    }

    #[test]
    fn the_servers_own_networks_are_refused() {
        use Refused::*;
        for (ip, why) in [
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("10.0.0.1", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("169.254.0.1", LinkLocal),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("255.255.255.255", Broadcast),
            ("100.64.0.1", SharedCgnat),
            ("100.127.255.255", SharedCgnat),
            ("224.0.0.1", Multicast),
            ("240.0.0.1", Reserved),
            ("::1", Loopback),
            ("::", Unspecified),
            ("fc00::1", Private),
            ("fd12:3456::1", Private),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("ff02::1", Multicast),
        ] {
            assert_eq!(refused(ip), Some(why), "{ip}");
        }
    }

    #[test]
    fn cloud_metadata_services_are_refused() {
        for ip in [
            "169.254.169.254",
            "169.254.170.2",
            "100.100.100.200",
            "168.63.129.16",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
        ] {
            assert_eq!(refused(ip), Some(Refused::CloudMetadata), "{ip}");
        }
    }

    #[test]
    fn ipv6_forms_of_refused_ipv4_addresses_are_refused() {
        use Refused::*;
        for (ip, why) in [
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:7f00:1", Loopback),
            ("::ffff:10.1.2.3", Private),
            ("::ffff:192.168.0.1", Private),
            ("::ffff:100.64.0.1", SharedCgnat),
            ("::127.0.0.1", Loopback),
            ("64:ff9b::7f00:1", Loopback),
            ("64:ff9b::a9fe:a9fe", CloudMetadata),
            // Local-use NAT64, whichever place its prefix gives the IPv4 address.
            ("64:ff9b:1::a9fe:a9fe", Private),
            ("64:ff9b:1:a9fe:a9:fe00::", Private),
            ("2002:7f00:1::", Loopback),
            ("2002:c0a8:101::1", Private),
        ] {
            assert_eq!(refused(ip), Some(why), "{ip}");
        }
    }

    #[test]
    fn networks_contain_what_they_should() {
        let net = Cidr::parse("10.8.0.0/13").unwrap();
        assert!(net.contains("10.15.255.255".parse().unwrap()));
        assert!(!net.contains("10.16.0.0".parse().unwrap()));
        assert!(net.contains("::ffff:10.9.1.1".parse().unwrap()));
        let one = Cidr::parse("127.0.0.1").unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6 = Cidr::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("fe80::1".parse().unwrap()));
        assert!(
            Cidr::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        assert_eq!(Cidr::parse("10.0.0.0/33"), None);
        assert_eq!(Cidr::parse("10.0.0/8"), None);
    }

    #[test]
    fn the_allow_list_reads_networks_and_host_port_pairs() {
        let list = AllowList::parse([
            "127.0.0.0/8",
            " fd00::/8 ",
            "",
            "Images.Internal:8080",
            "[::1]:9000",
            "192.168.1.5:80",
        ])
        .unwrap();
        assert!(list.names_address("127.0.0.2".parse().unwrap()));
        assert!(list.names_address("fd00::5".parse().unwrap()));
        assert!(!list.names_address("10.0.0.1".parse().unwrap()));
        assert!(list.names_host("images.internal.", 8080));
        assert!(!list.names_host("images.internal", 8081));
        assert!(list.names_host("[::1]", 9000));
        assert!(list.names_host("192.168.1.5", 80));
        assert!(!list.names_address("192.168.1.5".parse().unwrap()));

        let err = AllowList::parse(["localhost"]).unwrap_err();
        assert!(err.contains("`localhost`"), "{err}");
        assert!(AllowList::parse(["10.0.0.0/40"]).is_err());
        assert!(AllowList::parse([":80"]).is_err());
    }
}
