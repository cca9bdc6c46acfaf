//! Which host a version 2 signature or enrollment proof may name
//! (`countersign_host_api::signing`): the host's own authority, from its
//! configuration and the socket it listens on, never from a header the
//! caller writes (`Host`, `X-Forwarded-Host`): a request made for another
//! host must not verify here because the caller says this is that host.
//!
//! The rule (docs/approver-api.md, "Signed requests"):
//! - the authority of `--public-url`, when it is set (what consoles and
//!   agents behind a proxy or load balancer address);
//! - the address the host listens on, as `ip:port` (a client on the
//!   machine, or inside the deployment, addressing a process directly);
//!   on a loopback address also `localhost:port`; on an unspecified address
//!   (`0.0.0.0`, `[::]`) only the loopback forms, since the host cannot
//!   know which of its names a remote caller used: set `--public-url`.

use std::net::{IpAddr, SocketAddr};

use countersign_host_api::signing::authority;

use crate::Host;

/// The address the server accepted connections on, set on every request
/// by [`Host::serve_until`] (a request extension).
#[derive(Debug, Clone, Copy)]
pub struct Listening(pub SocketAddr);

/// Every authority this host answers to, in canonical form.
pub fn own(host: &Host, listening: Option<SocketAddr>) -> Vec<String> {
    let mut own = Vec::new();
    if let Some(url) = host
        .config()
        .public_url
        .as_deref()
        .and_then(|u| reqwest::Url::parse(u).ok())
    {
        if let (Some(name), Some(port)) = (url.host_str(), url.port_or_known_default()) {
            own.push(authority(name, port));
        }
    }
    if let Some(addr) = listening {
        let port = addr.port();
        if addr.ip().is_unspecified() {
            own.push(authority("127.0.0.1", port));
            own.push(authority("::1", port));
        } else {
            own.push(authority(&ip_text(addr.ip()), port));
        }
        if addr.ip().is_loopback() || addr.ip().is_unspecified() {
            own.push(authority("localhost", port));
        }
    }
    own
}

fn ip_text(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_host_answers_to_its_public_url_and_its_listening_address() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::HostConfig {
            public_url: Some("https://Negotiate.example.com".into()),
            ..crate::HostConfig::default()
        };
        let host = Host::open(dir.path().join("h.db"), config).await.unwrap();
        let at = |text: &str| Some(text.parse::<SocketAddr>().unwrap());
        assert_eq!(
            own(&host, at("127.0.0.1:8480")),
            [
                "negotiate.example.com:443",
                "127.0.0.1:8480",
                "localhost:8480"
            ]
        );
        assert_eq!(
            own(&host, at("10.0.0.5:8480")),
            ["negotiate.example.com:443", "10.0.0.5:8480"]
        );
        assert_eq!(
            own(&host, at("[::]:8480")),
            [
                "negotiate.example.com:443",
                "127.0.0.1:8480",
                "[::1]:8480",
                "localhost:8480"
            ]
        );
    }
}
