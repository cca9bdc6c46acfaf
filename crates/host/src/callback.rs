//! Decision hints to gate agents (docs/gate-api.md "Callbacks"): when a
//! request is decided or expires, the host POSTs a small signed hint to the
//! agent's `callback_url`, once, in the background. The hint is not the
//! decision (the agent fetches the request and verifies the receipt), so a
//! hint lost or forged costs at most one poll or one wasted fetch.
//!
//! A host that calls URLs its clients chose can be turned against its own
//! network (SSRF). Which URLs this host calls:
//! - `https://` to a public address: the name is resolved when the hint is
//!   sent, every address it resolves to must be public unicast (not
//!   loopback, private, link-local, unique-local, shared (CGNAT),
//!   documentation, benchmarking, multicast, reserved or unspecified; an
//!   IPv6 form that carries an IPv4 address (`::ffff:a.b.c.d`,
//!   `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged by
//!   that address, and Teredo and local NAT64 are refused), and the
//!   connection goes to the address that was checked (no second lookup to
//!   rebind);
//! - any address in a network an admin allowed
//!   (`--allow-callback-network 10.0.0.0/8`, [`Network`]), by `https://`,
//!   or by `http://` to an address literal (an agent on the host's own
//!   machine or private network: `--allow-callback-network 127.0.0.1/32`);
//! - nothing else: no loopback or private address unless allowed;
//! - no user info, no fragment, at most 2,048 bytes; redirects are not
//!   followed, no proxy is used (`HTTPS_PROXY` and the like are ignored, as
//!   a proxy would resolve the name itself), the answer is not read, 5
//!   seconds at most.
//!
//! The URL is checked when the agent enrolls and again when a hint is sent.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use countersign_host_api::gate::{
    callback_string, CallbackHint, CALLBACK_PROTOCOL, CALLBACK_SIGNATURE_HEADER,
};
use reqwest::Url;

use crate::Host;

/// Longest callback URL accepted.
pub const MAX_URL_BYTES: usize = 2048;
/// How long one delivery may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Why a callback URL is not one this host calls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("callback_url {0}")]
pub struct UrlRefused(pub String);

fn refused(why: impl Into<String>) -> UrlRefused {
    UrlRefused(why.into())
}

/// A network an admin allows callbacks to (`10.0.0.0/8`, `fd00::/8`,
/// `127.0.0.1/32`), although its addresses are not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// Reads `ADDR/PREFIX` (or a lone address, a network of one).
    pub fn parse(text: &str) -> Result<Network, String> {
        let (addr, prefix) = match text.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .trim()
            .parse()
            .map_err(|_| format!("{text:?} is not a network (ADDRESS/PREFIX, e.g. 10.0.0.0/8)"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("{text:?}: the prefix must be 0 to {max}"))?,
            None => max,
        };
        Ok(Network { addr, prefix })
    }

    /// Whether `ip` is in this network (an IPv4-mapped IPv6 address counts
    /// as its IPv4 address).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// What kind of non-public IPv4 address `ip` is, or `None` when public.
fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(if ip.is_unspecified() || a == 0 {
        "an unspecified (\"this network\") address"
    } else if ip.is_loopback() {
        "a loopback address"
    } else if ip.is_private() {
        "a private address"
    } else if ip.is_link_local() {
        "a link-local address"
    } else if ip.is_broadcast() {
        "the broadcast address"
    } else if ip.is_multicast() {
        "a multicast address"
    } else if ip.is_documentation() {
        "a documentation address"
    } else if a == 100 && (64..128).contains(&b) {
        "a shared (carrier-grade NAT) address"
    } else if a == 192 && b == 0 && c == 0 {
        "an IETF protocol assignment"
    } else if a == 198 && (b == 18 || b == 19) {
        "a benchmarking address"
    } else if a >= 240 {
        "a reserved address"
    } else {
        return None;
    })
}

/// What kind of non-public address `ip` is, or `None` when public. IPv6
/// forms that carry an IPv4 address are judged by it.
pub fn special(ip: IpAddr) -> Option<String> {
    let v6 = match ip {
        IpAddr::V4(v4) => return special_v4(v4).map(str::to_owned),
        IpAddr::V6(v6) => v6,
    };
    let seg = v6.segments();
    let bits = u128::from(v6);
    let last_v4 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    let embedded =
        |form: &str, v4: Ipv4Addr| special_v4(v4).map(|why| format!("{form} of {v4}, {why}"));
    if v6.is_unspecified() {
        return Some("an unspecified address".into());
    }
    if v6.is_loopback() {
        return Some("a loopback address".into());
    }
    if let Some(v4) = v6.to_ipv4_mapped() {
        return embedded("an IPv4-mapped form", v4);
    }
    if bits >> 32 == 0 {
        return embedded("an IPv4-compatible form", last_v4);
    }
    if bits >> 32 == 0xffff_0000 {
        // ::ffff:0:a.b.c.d, IPv4-translated (SIIT).
        return embedded("an IPv4-translated form", last_v4);
    }
    if seg[0] == 0x0064 && seg[1] == 0xff9b && seg[2..6] == [0, 0, 0, 0] {
        return embedded("a NAT64 form", last_v4);
    }
    if seg[0] == 0x2002 {
        let v4 = Ipv4Addr::from((u32::from(seg[1]) << 16) | u32::from(seg[2]));
        return embedded("a 6to4 form", v4);
    }
    Some(
        if seg[0] == 0x0064 && seg[1] == 0xff9b {
            "a local-use NAT64 address"
        } else if seg[0] == 0x2001 && seg[1] == 0 {
            "a Teredo address"
        } else if v6.is_multicast() {
            "a multicast address"
        } else if (seg[0] & 0xfe00) == 0xfc00 {
            "a unique-local address"
        } else if (seg[0] & 0xffc0) == 0xfe80 {
            "a link-local address"
        } else if (seg[0] & 0xffc0) == 0xfec0 {
            "a site-local address"
        } else if (seg[0] == 0x2001 && seg[1] == 0x0db8) || (seg[0] & 0xfff0) == 0x3ff0 {
            "a documentation address"
        } else if seg[0] == 0x2001 && seg[1] == 0x0002 && seg[2] == 0 {
            "a benchmarking address"
        } else if seg[0] == 0x0100 && seg[1..4] == [0, 0, 0] {
            "a discard-only address"
        } else if (seg[0] & 0xe000) != 0x2000 {
            "not a global unicast address"
        } else {
            return None;
        }
        .into(),
    )
}

/// True for a public unicast address of either family.
pub fn is_public(ip: IpAddr) -> bool {
    special(ip).is_none()
}

/// Whether the host may call `ip`: public, or in a network an admin allowed.
fn callable(ip: IpAddr, allowed: &[Network]) -> Result<(), String> {
    if allowed.iter().any(|n| n.contains(ip)) {
        return Ok(());
    }
    match special(ip) {
        None => Ok(()),
        Some(why) => Err(format!(
            "{ip}, which is not a public address ({why}); this host calls it only if an admin allows its network (--allow-callback-network)"
        )),
    }
}

/// The host part of a URL as an address, when it is a literal one (the
/// parser has already normalized forms such as `0x7f.1`).
fn literal(url: &Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Checks a callback URL by its text alone: its length, form, scheme, and
/// that plain `http` names an address literal. Where it points is checked
/// by [`check_destination`].
pub fn check_url(text: &str) -> Result<Url, UrlRefused> {
    if text.len() > MAX_URL_BYTES {
        return Err(refused(format!("is longer than {MAX_URL_BYTES} bytes")));
    }
    let url = Url::parse(text).map_err(|e| refused(format!("is not a URL ({e})")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refused("must not carry user info"));
    }
    if url.fragment().is_some() {
        return Err(refused("must not carry a fragment"));
    }
    if url.host().is_none() {
        return Err(refused("must name a host"));
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if literal(&url).is_some() => Ok(url),
        "http" => Err(refused(
            "uses http, which this host calls only on an address literal in a network an admin allowed; use https",
        )),
        other => Err(refused(format!("uses {other}:, not https"))),
    }
}

/// Checks where a callback URL (already through [`check_url`]) points, as
/// far as its text tells: an address literal must be public or in an
/// allowed network, and plain `http` must name an allowed one.
pub fn check_destination(url: &Url, allowed: &[Network]) -> Result<(), UrlRefused> {
    let Some(ip) = literal(url) else {
        return Ok(());
    };
    if url.scheme() == "http" && !allowed.iter().any(|n| n.contains(ip)) {
        return Err(refused(format!(
            "uses http to {ip}, which this host calls only on an address in a network an admin allowed (--allow-callback-network); use https"
        )));
    }
    callable(ip, allowed).map_err(|why| refused(format!("names {why}")))
}

/// Checks a callback URL as enrollment does: [`check_url`], then
/// [`check_destination`] against the allowed networks.
pub fn check(text: &str, allowed: &[Network]) -> Result<Url, UrlRefused> {
    let url = check_url(text)?;
    check_destination(&url, allowed)?;
    Ok(url)
}

/// Resolves the URL's host and checks every address: where the hint may go.
async fn destination(
    url: &Url,
    allowed: &[Network],
) -> Result<Option<(String, SocketAddr)>, UrlRefused> {
    let port = url
        .port_or_known_default()
        .ok_or_else(|| refused("has no port"))?;
    if literal(url).is_some() {
        return Ok(None);
    }
    let domain = url
        .host_str()
        .ok_or_else(|| refused("must name a host"))?
        .to_owned();
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((domain.as_str(), port))
        .await
        .map_err(|e| refused(format!("names {domain}, which does not resolve ({e})")))?
        .collect();
    let Some(first) = addrs.first().copied() else {
        return Err(refused(format!(
            "names {domain}, which resolves to nothing"
        )));
    };
    for addr in &addrs {
        callable(addr.ip(), allowed)
            .map_err(|why| refused(format!("names {domain}, which resolves to {why}")))?;
    }
    Ok(Some((domain, first)))
}

/// The hint for a request that was decided or expired, and its signature
/// by the platform key.
pub fn signed_hint(
    host: &Host,
    session_id: &str,
    request_id: &str,
    status: &str,
) -> (Vec<u8>, String) {
    let at = anp::api::format_timestamp(host.clock().now());
    let hint = CallbackHint {
        protocol: CALLBACK_PROTOCOL.to_owned(),
        session_id: session_id.to_owned(),
        request_id: request_id.to_owned(),
        status: status.to_owned(),
        at: at.clone(),
    };
    let body = serde_json::to_vec(&hint).unwrap_or_default();
    let signature = anp::keys::sign_b64(
        host.platform_key(),
        callback_string(session_id, request_id, status, &at).as_bytes(),
    );
    (body, signature)
}

/// Sends one hint, at most once, without blocking the caller: a failure is
/// logged and forgotten (polling is the agent's backstop).
pub fn send(host: &Host, url: &str, session_id: &str, request_id: &str, status: &str) {
    let url = url.to_owned();
    let allowed = host.config().callback_networks.clone();
    let (body, signature) = signed_hint(host, session_id, request_id, status);
    tokio::spawn(async move {
        if let Err(e) = deliver(&url, &allowed, body, &signature).await {
            tracing::info!(%url, error = %e, "decision hint not delivered");
        }
    });
}

/// The client that delivers hints: no redirects, and no proxy from the
/// environment (`HTTPS_PROXY` would resolve the name itself, past the
/// address this host checked and pinned).
fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("countersign-host/", env!("CARGO_PKG_VERSION")))
}

async fn deliver(
    text: &str,
    allowed: &[Network],
    body: Vec<u8>,
    signature: &str,
) -> Result<(), String> {
    let url = check(text, allowed).map_err(|e| e.to_string())?;
    let pinned = destination(&url, allowed)
        .await
        .map_err(|e| e.to_string())?;
    let mut builder = client_builder();
    if let Some((domain, addr)) = &pinned {
        builder = builder.resolve(domain, *addr);
    }
    let client = builder.build().map_err(|e| e.to_string())?;
    let answer = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(CALLBACK_SIGNATURE_HEADER, signature)
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if !answer.status().is_success() {
        return Err(format!("the agent answered {}", answer.status()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(ip: &str) -> Option<String> {
        special(ip.parse().unwrap())
    }

    #[test]
    fn public_addresses_of_both_families_are_public() {
        for ip in [
            "93.184.215.14",
            "8.8.8.8",
            "2606:4700::1111",
            "2a00:1450::1",
        ] {
            assert_eq!(why(ip), None, "{ip}");
        }
        // Forms that carry a public IPv4 address are judged by it.
        for ip in ["::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"] {
            assert_eq!(why(ip), None, "{ip}");
        }
    }

    #[test]
    fn each_special_ipv4_range_is_refused_with_its_name() {
        for (ip, name) in [
            ("127.0.0.1", "loopback"),
            ("127.45.6.7", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("255.255.255.255", "broadcast"),
            ("224.0.0.1", "multicast"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.1", "documentation"),
            ("203.0.113.1", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("100.64.0.1", "carrier-grade NAT"),
            ("192.0.0.8", "IETF protocol"),
            ("240.0.0.1", "reserved"),
        ] {
            let got = why(ip).unwrap_or_default();
            assert!(got.contains(name), "{ip}: {got:?}");
        }
    }

    #[test]
    fn each_special_ipv6_range_is_refused_with_its_name() {
        for (ip, name) in [
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fd00::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001:2::1", "benchmarking"),
            ("100::1", "discard-only"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
            ("64:ff9b:1::a00:1", "local-use NAT64"),
            ("4000::1", "not a global unicast"),
        ] {
            let got = why(ip).unwrap_or_default();
            assert!(got.contains(name), "{ip}: {got:?}");
        }
    }

    #[test]
    fn ipv6_forms_carrying_an_ipv4_address_are_judged_by_it() {
        for (ip, form, name) in [
            ("::ffff:127.0.0.1", "IPv4-mapped", "loopback"),
            ("::ffff:10.0.0.1", "IPv4-mapped", "private"),
            ("::127.0.0.1", "IPv4-compatible", "loopback"),
            ("::10.0.0.1", "IPv4-compatible", "private"),
            ("::169.254.169.254", "IPv4-compatible", "link-local"),
            ("::ffff:0:127.0.0.1", "IPv4-translated", "loopback"),
            ("64:ff9b::127.0.0.1", "NAT64", "loopback"),
            ("64:ff9b::a9fe:a9fe", "NAT64", "link-local"),
            ("64:ff9b::c0a8:101", "NAT64", "private"),
            ("2002:7f00:1::", "6to4", "loopback"),
            ("2002:a00:1::1", "6to4", "private"),
            ("2002:a9fe:a9fe::", "6to4", "link-local"),
        ] {
            let got = why(ip).unwrap_or_default();
            assert!(got.contains(form) && got.contains(name), "{ip}: {got:?}");
        }
    }

    #[test]
    fn networks_parse_and_contain() {
        let net = Network::parse("10.0.0.0/8").unwrap();
        assert!(net.contains("10.200.1.1".parse().unwrap()));
        assert!(net.contains("::ffff:10.9.9.9".parse().unwrap()));
        assert!(!net.contains("11.0.0.1".parse().unwrap()));
        assert!(!net.contains("fd00::1".parse().unwrap()));
        let one = Network::parse("127.0.0.1").unwrap();
        assert_eq!(one.to_string(), "127.0.0.1/32");
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6 = Network::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(Network::parse("0.0.0.0/0")
            .unwrap()
            .contains("1.2.3.4".parse().unwrap()));
        for bad in ["10.0.0.0/33", "fd00::/129", "ten/8", "10.0.0.0/x"] {
            assert!(Network::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_public_https_or_allowed_networks_are_called() {
        for ok in [
            "https://agent.example/hook",
            "https://93.184.215.14:8443/countersign",
        ] {
            assert!(check(ok, &[]).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("http://127.0.0.1:9000/hint", "uses http to 127.0.0.1"),
            ("http://[::1]:9000/hint", "uses http to ::1"),
            ("https://127.0.0.1:9000/hint", "loopback"),
            ("https://127.9.9.9/hint", "loopback"),
            ("http://agent.example/hook", "http"),
            ("http://10.0.0.5/hook", "http"),
            ("https://10.0.0.5/hook", "not a public address"),
            (
                "https://169.254.169.254/latest/meta-data",
                "not a public address",
            ),
            ("https://[::ffff:127.0.0.1]/", "not a public address"),
            ("https://[::127.0.0.1]/", "IPv4-compatible"),
            ("https://[64:ff9b::7f00:1]/", "NAT64"),
            ("https://[2002:7f00:1::]/", "6to4"),
            ("https://0.0.0.0/", "not a public address"),
            ("https://user:pw@agent.example/", "user info"),
            ("https://agent.example/#frag", "fragment"),
            ("ftp://agent.example/", "ftp"),
            ("not a url", "not a URL"),
        ] {
            let e = check(bad, &[]).unwrap_err().to_string();
            assert!(e.starts_with("callback_url "), "{e}");
            assert!(e.contains(why), "{bad}: {e}");
        }
        let long = format!("https://agent.example/{}", "a".repeat(MAX_URL_BYTES));
        assert!(check(&long, &[])
            .unwrap_err()
            .to_string()
            .contains("longer"));
    }

    #[test]
    fn an_allowed_network_opens_its_addresses_and_only_those() {
        let allowed = [
            Network::parse("127.0.0.1/32").unwrap(),
            Network::parse("10.0.0.0/8").unwrap(),
        ];
        for ok in [
            "http://127.0.0.1:9000/hint",
            "https://127.0.0.1:9000/hint",
            "http://10.1.2.3/hook",
        ] {
            assert!(check(ok, &allowed).is_ok(), "{ok}");
        }
        for bad in [
            "http://127.0.0.2:9000/hint",
            "http://[::1]:9000/hint",
            "https://192.168.1.1/",
        ] {
            assert!(check(bad, &allowed).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_hint_client_ignores_proxies_from_the_environment() {
        // The builder is all there is to check without touching the
        // process's environment: a proxied client would name its proxy.
        let client = client_builder().build().unwrap();
        let shown = format!("{client:?}");
        assert!(!shown.contains("proxies"), "{shown}");
    }
}
