//! Connecting to a host: discover it, prove possession of the approver key,
//! enroll with a one-time code, and pin the platform key from discovery
//! (cross-checked with the key the enrollment answer names). Plain HTTP is
//! refused off loopback before anything is sent ([`transport`]): the
//! enrollment code and the first pin of the platform key would cross the
//! network in the clear.

use std::net::{IpAddr, Ipv6Addr};

use crate::config::ApproverProfile;
use crate::context::Context;
use crate::error::EngineError;
use crate::store::HostRecord;

fn normalize_url(url: &str) -> Result<String, EngineError> {
    let url = url.trim().trim_end_matches('/');
    let ok =
        (url.starts_with("http://") || url.starts_with("https://")) && url.len() > "https://".len();
    if !ok || url.chars().any(char::is_whitespace) {
        return Err(EngineError::InvalidInput(format!(
            "{url:?} is not a host address; use one like https://anp.example.com."
        )));
    }
    Ok(url.to_owned())
}

/// How the console reaches a host, as [`transport`] decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// `https://`: encrypted, and the host proves its name.
    Https,
    /// `http://` to this machine (127.0.0.0/8, ::1, `localhost`): nothing
    /// leaves it.
    Loopback,
    /// `http://` to another machine, which the person allowed for a lab.
    PlainHttp,
}

/// True for a host (as a parsed URL writes it) that stays on this
/// machine: `localhost`, an IPv4 address in 127.0.0.0/8, `::1`.
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        // Only ::1: 127.0.0.0/8 mapped into IPv6 is not on the list of
        // names that stay here, so it needs the override (the strict side).
        Ok(IpAddr::V6(ip)) => ip == Ipv6Addr::LOCALHOST,
        Err(_) => host.trim_end_matches('.').eq_ignore_ascii_case("localhost"),
    }
}

/// The one rule for how a host may be reached: `https://` always, plain
/// `http://` only to this machine, or with `allow_plain_http`, the
/// person's explicit override for a lab host. Refused with what to do.
pub(crate) fn transport(url: &str, allow_plain_http: bool) -> Result<Transport, EngineError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        EngineError::InvalidInput(format!(
            "{url:?} is not a host address ({e}); use one like https://anp.example.com."
        ))
    })?;
    let host = parsed.host_str().ok_or_else(|| {
        EngineError::InvalidInput(format!(
            "{url:?} names no host; use an address like https://anp.example.com."
        ))
    })?;
    match parsed.scheme() {
        "https" => Ok(Transport::Https),
        "http" if is_loopback(host) => Ok(Transport::Loopback),
        "http" if allow_plain_http => Ok(Transport::PlainHttp),
        "http" => Err(EngineError::PlainHttp {
            url: url.to_owned(),
        }),
        other => Err(EngineError::InvalidInput(format!(
            "{url:?} uses {other}:, not https:; use an address like https://anp.example.com."
        ))),
    }
}

/// True when a stored host is reached over plain HTTP off this machine
/// (allowed for a lab, or connected before the rule): the Hosts screen
/// warns about it.
pub(crate) fn is_plain_http(url: &str) -> bool {
    matches!(transport(url, true), Ok(Transport::PlainHttp))
}

/// Enrolls and stores the host; `sandbox` marks the embedded one;
/// `allow_plain_http` is the person's override for a lab host (see
/// [`transport`]), checked before any request is sent.
pub(crate) async fn connect(
    ctx: &Context,
    url: &str,
    code: &str,
    sandbox: bool,
    allow_plain_http: bool,
    profile: &ApproverProfile,
) -> Result<HostRecord, EngineError> {
    let url = normalize_url(url)?;
    let plain_http = transport(&url, allow_plain_http)? == Transport::PlainHttp;
    let code = code.trim();
    if code.is_empty() || code.len() > 200 {
        return Err(EngineError::InvalidInput(
            "The enrollment code is empty or too long; paste the code the host's admin gave you."
                .into(),
        ));
    }
    if ctx.store()?.host_by_url(&url)?.is_some() {
        return Err(EngineError::AlreadyConnected(url));
    }
    let key = ctx.vault.enrollment_key()?;
    let enrolled = crate::edge::enroll::enroll(&url, code, profile, &key).await?;
    let label = url.split("://").nth(1).unwrap_or(&url).to_owned();
    let record = HostRecord {
        host_id: uuid::Uuid::new_v4().to_string(),
        protocol: crate::edge::API_PROTOCOL.to_owned(),
        url: url.clone(),
        label: if sandbox { "Sandbox".to_owned() } else { label },
        sandbox,
        approver_id: enrolled.approver_id,
        approver_email: profile.email.clone(),
        platform_key: enrolled.platform_key,
        platform_fingerprint: enrolled.platform_fingerprint,
        approver_keys: enrolled.approver_keys,
        reachable: true,
        last_error: None,
        last_poll_at: None,
        plain_http_allowed_at: plain_http.then(|| ctx.now_text()),
        key_fingerprint: Some(crate::edge::keyfile::fingerprint(&key.verifying_key())),
    };
    {
        let store = ctx.store()?;
        store.adopt_signing_key(
            &crate::edge::keyfile::fingerprint(&key.verifying_key()),
            &crate::edge::keyfile::public_key_text(&key.verifying_key()),
            &ctx.now_text(),
        )?;
        store.insert_host(&record, &ctx.now_text())?;
    }
    ctx.emit(
        crate::views::ChangeScope::Hosts,
        Some(&record.host_id),
        None,
    );
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_taken_for_any_host() {
        for url in [
            "https://anp.example.com",
            "https://10.0.0.5:8443",
            "https://[2001:db8::1]",
        ] {
            assert_eq!(transport(url, false).unwrap(), Transport::Https, "{url}");
        }
    }

    #[test]
    fn plain_http_to_this_machine_needs_no_override() {
        for url in [
            "http://127.0.0.1:8080",
            "http://127.45.6.7",
            "http://127.1:9",
            "http://localhost:4100",
            "http://LocalHost.",
            "http://[::1]:4100",
        ] {
            assert_eq!(transport(url, false).unwrap(), Transport::Loopback, "{url}");
            assert!(!is_plain_http(url), "{url}");
        }
    }

    #[test]
    fn plain_http_to_another_machine_is_refused_with_what_to_do() {
        for url in [
            "http://10.0.0.5:8080",
            "http://192.168.1.20",
            "http://anp.example.com",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "http://0.0.0.0:8080",
            "http://[::2]",
            "http://[::ffff:127.0.0.1]:4100",
        ] {
            let refused = transport(url, false).unwrap_err();
            assert_eq!(refused.code(), "plain_http", "{url}");
            let words = refused.to_string();
            assert!(
                words.starts_with(&format!("{url} is plain HTTP")),
                "{words}"
            );
            assert!(words.contains("Use the host's https:// address"), "{words}");
            assert!(
                words.contains("Allow plain HTTP to this host (lab only)"),
                "{words}"
            );
            // The person's override lets it through, and the Hosts screen
            // will say so.
            assert_eq!(transport(url, true).unwrap(), Transport::PlainHttp, "{url}");
            assert!(is_plain_http(url), "{url}");
        }
    }

    #[test]
    fn another_scheme_or_no_host_is_not_a_host_address() {
        for url in ["ftp://anp.example.com", "http://", "file:///x"] {
            let refused = transport(url, true).unwrap_err();
            assert_eq!(refused.code(), "invalid_input", "{url}: {refused}");
        }
    }
}
