//! Decision hints to gate agents (docs/gate-api.md "Callbacks"): when a
//! request is decided or expires, the host POSTs a small signed hint to the
//! agent's `callback_url`, once, in the background. The hint is not the
//! decision (the agent fetches the request and verifies the receipt), so a
//! hint lost or forged costs at most one poll or one wasted fetch.
//!
//! A host that calls URLs its clients chose can be turned against its own
//! network (SSRF). Which URLs this host calls:
//! - `https://` to a public address only: the name is resolved when the
//!   hint is sent, every address it resolves to must be public unicast (not
//!   loopback, private, link-local, unique-local, shared, documentation,
//!   benchmarking, multicast, reserved or unspecified), and the connection
//!   goes to the address that was checked (no second lookup to rebind);
//! - `http://` to a loopback address literal only (`127.0.0.0/8`, `[::1]`):
//!   an agent on the host's own machine;
//! - no user info, no fragment, at most 2,048 bytes; redirects are not
//!   followed, the answer is not read, 5 seconds at most.
//!
//! The URL is checked when the agent enrolls and again when a hint is sent.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
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

/// True for a public unicast IPv4 address.
fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

/// True for a public unicast address of either family.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return public_v4(v4);
            }
            let first = v6.segments()[0];
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first & 0xffc0) == 0xfec0 // site-local
                || (first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
                || v6 == Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0))
        }
    }
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback(),
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

/// Checks a callback URL by its text (what enrollment does): the rules
/// above that need no lookup.
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
        "https" => match literal(&url) {
            Some(ip) if !is_public(ip) => Err(refused(format!(
                "names {ip}, which is not a public address: https callbacks go to public addresses only"
            ))),
            _ => Ok(url),
        },
        "http" => match literal(&url) {
            Some(ip) if is_loopback(ip) => Ok(url),
            _ => Err(refused(
                "uses http, which this host calls only on a loopback address literal (127.0.0.1, [::1]); use https",
            )),
        },
        other => Err(refused(format!("uses {other}:, not https (or http to loopback)"))),
    }
}

/// Resolves the URL's host and checks every address: where the hint may go.
async fn destination(url: &Url) -> Result<Option<(String, SocketAddr)>, UrlRefused> {
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
    if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
        return Err(refused(format!(
            "names {domain}, which resolves to {}, not a public address",
            bad.ip()
        )));
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
    let (body, signature) = signed_hint(host, session_id, request_id, status);
    tokio::spawn(async move {
        if let Err(e) = deliver(&url, body, &signature).await {
            tracing::info!(%url, error = %e, "decision hint not delivered");
        }
    });
}

async fn deliver(text: &str, body: Vec<u8>, signature: &str) -> Result<(), String> {
    let url = check_url(text).map_err(|e| e.to_string())?;
    let pinned = destination(&url).await.map_err(|e| e.to_string())?;
    let mut builder = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("countersign-host/", env!("CARGO_PKG_VERSION")));
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

    #[test]
    fn only_public_https_and_loopback_http_are_called() {
        for ok in [
            "https://agent.example/hook",
            "https://93.184.215.14:8443/countersign",
            "http://127.0.0.1:9000/hint",
            "http://[::1]:9000/hint",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("http://agent.example/hook", "http"),
            ("http://10.0.0.5/hook", "http"),
            ("https://10.0.0.5/hook", "not a public address"),
            (
                "https://169.254.169.254/latest/meta-data",
                "not a public address",
            ),
            ("https://192.168.1.1/", "not a public address"),
            ("https://100.64.0.1/", "not a public address"),
            ("https://[fd00::1]/", "not a public address"),
            ("https://[fe80::1]/", "not a public address"),
            ("https://[::ffff:127.0.0.1]/", "not a public address"),
            ("https://0.0.0.0/", "not a public address"),
            ("https://user:pw@agent.example/", "user info"),
            ("https://agent.example/#frag", "fragment"),
            ("ftp://agent.example/", "ftp"),
            ("not a url", "not a URL"),
        ] {
            let e = check_url(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let long = format!("https://agent.example/{}", "a".repeat(MAX_URL_BYTES));
        assert!(check_url(&long).unwrap_err().to_string().contains("longer"));
    }
}
