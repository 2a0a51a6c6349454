//! The network address a sign-in comes from, which the lockout counts failures under
//! (`oauth::session::throttle_keys`). Behind a load balancer every connection comes from
//! the balancer: counted under its address, five wrong passwords from anyone would lock
//! everyone out. So a peer that the operator names as a proxy (`trusted_proxies`) is
//! looked past, into `X-Forwarded-For`; from anyone else that header is ignored, as a
//! client could write anything there.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;

use crate::images::fetch::address::Cidr;

/// The client's address: `peer` itself, unless it is one of `proxies`; then, walking
/// `X-Forwarded-For` from its end (the hop the proxy added), the first address that is not
/// a proxy, or the last one read where the header ends or holds something else.
pub fn client_address(peer: IpAddr, headers: &HeaderMap, proxies: &[Cidr]) -> IpAddr {
    let trusted = |ip: IpAddr| proxies.iter().any(|proxy| proxy.contains(ip));
    let mut client = peer;
    if !trusted(client) {
        return client;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .collect();
    for hop in hops.iter().rev() {
        let Some(ip) = parse_hop(hop.trim()) else {
            break;
        };
        client = ip;
        if !trusted(ip) {
            break;
        }
    }
    client
}

/// An address as proxies write it: `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`, or with a
/// port (`192.0.2.1:4711`, `[2001:db8::1]:4711`).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let bare = hop.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    bare.unwrap_or(hop)
        .parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_peer_is_looked_past() {
        let proxies = [Cidr::parse("10.0.0.0/8").unwrap()];
        let forwarded = headers(&["198.51.100.7"]);
        assert_eq!(
            client_address(ip("10.1.2.3"), &forwarded, &proxies),
            ip("198.51.100.7")
        );
        assert_eq!(
            client_address(ip("203.0.113.9"), &forwarded, &proxies),
            ip("203.0.113.9"),
            "a client's own header is ignored"
        );
        assert_eq!(
            client_address(ip("10.1.2.3"), &forwarded, &[]),
            ip("10.1.2.3"),
            "no proxies named: the peer"
        );
        assert_eq!(
            client_address(ip("10.1.2.3"), &HeaderMap::new(), &proxies),
            ip("10.1.2.3"),
            "a proxy that did not say: the proxy"
        );
    }

    #[test]
    fn a_chain_is_walked_from_its_end_past_proxies_only() {
        let proxies = [Cidr::parse("10.0.0.0/8").unwrap()];
        // The client wrote the first entry itself; the proxies added the rest.
        let chain = headers(&["6.6.6.6, 198.51.100.7", "10.9.9.9"]);
        assert_eq!(
            client_address(ip("10.1.2.3"), &chain, &proxies),
            ip("198.51.100.7")
        );
        let ported = headers(&["[2001:db8::1]:4711, 10.0.0.5:80"]);
        assert_eq!(
            client_address(ip("10.1.2.3"), &ported, &proxies),
            ip("2001:db8::1")
        );
        let bracketed = headers(&["[2001:db8::2]"]);
        assert_eq!(
            client_address(ip("10.1.2.3"), &bracketed, &proxies),
            ip("2001:db8::2")
        );
        let garbage = headers(&["not an address, 10.0.0.5"]);
        assert_eq!(
            client_address(ip("10.1.2.3"), &garbage, &proxies),
            ip("10.0.0.5"),
            "where the header stops making sense, the last address read"
        );
    }
}
