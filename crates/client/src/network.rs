//! A network failure in a sentence a person can act on: what happened, and
//! the next step. The HTTP stack's own words (`tcp connect error:
//! Connection refused (os error 111)`) are for the log, not for the person
//! who pasted an address into the console.

use std::error::Error as StdError;
use std::io::ErrorKind;

/// What kind of failure a request met before any answer arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkFailure {
    /// Nothing listens at the address (connection refused).
    Refused,
    /// No answer within the client's time limit.
    TimedOut,
    /// The name could not be resolved.
    NameNotFound,
    /// The TLS handshake or the certificate failed.
    Tls,
    /// The connection was cut before the answer was complete.
    Cut,
    /// This machine has no route to the address.
    NoRoute,
    /// Anything else.
    Other,
}

/// Classifies `error` by walking its causes (the IO error kind where there
/// is one, the HTTP stack's words where there is not).
pub fn classify(error: &reqwest::Error) -> NetworkFailure {
    if error.is_timeout() {
        return NetworkFailure::TimedOut;
    }
    let mut texts = Vec::new();
    let mut cause: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = cause {
        // An IO error wrapping another hides it from `source()`: look in.
        let mut ios = Vec::new();
        let mut io = e.downcast_ref::<std::io::Error>();
        while let Some(found) = io {
            ios.push(found.kind());
            io = found
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<std::io::Error>());
        }
        for kind in ios {
            match kind {
                ErrorKind::ConnectionRefused => return NetworkFailure::Refused,
                ErrorKind::TimedOut => return NetworkFailure::TimedOut,
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
                | ErrorKind::UnexpectedEof => return NetworkFailure::Cut,
                ErrorKind::NetworkUnreachable | ErrorKind::HostUnreachable => {
                    return NetworkFailure::NoRoute
                }
                // While connecting, bytes that are not TLS (or a TLS alert)
                // are the handshake failing: the only data read that early.
                ErrorKind::InvalidData if error.is_connect() => return NetworkFailure::Tls,
                _ => {}
            }
        }
        texts.push(e.to_string().to_ascii_lowercase());
        cause = e.source();
    }
    let said = |needle: &str| texts.iter().any(|t| t.contains(needle));
    if said("dns error") || said("failed to lookup address") || said("name or service not known") {
        NetworkFailure::NameNotFound
    } else if said("certificate")
        || said("tls")
        || said("ssl")
        || said("handshake")
        || said("received corrupt message")
    {
        NetworkFailure::Tls
    } else if said("connection closed before message completed") || said("connection reset") {
        NetworkFailure::Cut
    } else {
        NetworkFailure::Other
    }
}

/// The failure of a request to `url` as a sentence with its next step.
pub fn explain(url: &str, error: &reqwest::Error) -> String {
    let parsed = reqwest::Url::parse(url).ok();
    let name = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .unwrap_or(url)
        .to_owned();
    let place = match &parsed {
        Some(u) if u.host_str().is_some() => {
            format!("{name}:{}", u.port_or_known_default().unwrap_or(0))
        }
        _ => url.to_owned(),
    };
    match classify(error) {
        NetworkFailure::Refused => format!(
            "nothing is listening at {place} (the connection was refused). Check that the host is running and that the address and port are right"
        ),
        NetworkFailure::TimedOut => format!(
            "{place} did not answer in time. Check your network connection; if it works, the host may be overloaded: try again shortly or ask its admin"
        ),
        NetworkFailure::NameNotFound => format!(
            "the name {name} could not be found. Check the address for typing mistakes, and that this machine is online"
        ),
        NetworkFailure::Tls => format!(
            "a secure connection to {place} could not be set up (its certificate or TLS was refused: {}). Check the address, or ask the host's admin about its certificate",
            innermost(error)
        ),
        NetworkFailure::Cut => format!(
            "the connection to {place} was cut before the answer arrived. Try again; if it keeps happening, a proxy in between may be closing it: ask the host's admin"
        ),
        NetworkFailure::NoRoute => format!(
            "this machine has no route to {place}. Check your network connection (a VPN the host needs, for example)"
        ),
        NetworkFailure::Other => format!(
            "the request to {place} failed ({}). Check your network connection and that the host is running",
            innermost(error)
        ),
    }
}

/// The deepest cause's words: the most specific thing the stack said.
fn innermost(error: &reqwest::Error) -> String {
    let mut last = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        last = e.to_string();
        cause = e.source();
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn failure_of(url: &str, timeout: Duration) -> reqwest::Error {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .no_proxy()
            .build()
            .unwrap();
        client.get(url).send().await.unwrap_err()
    }

    #[tokio::test]
    async fn a_port_nobody_listens_on_says_nothing_is_listening_and_what_to_check() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let url = format!("http://{addr}/");
        let error = failure_of(&url, Duration::from_secs(5)).await;
        assert_eq!(classify(&error), NetworkFailure::Refused);
        let sentence = explain(&url, &error);
        assert!(
            sentence.starts_with(&format!("nothing is listening at {addr}")),
            "{sentence}"
        );
        assert!(
            sentence.contains("Check that the host is running"),
            "{sentence}"
        );
        assert!(!sentence.contains("os error"), "{sentence}");
    }

    #[tokio::test]
    async fn a_host_that_never_answers_is_a_time_out() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // Accepts and then says nothing.
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let url = format!("http://{addr}/");
        let error = failure_of(&url, Duration::from_millis(300)).await;
        assert_eq!(classify(&error), NetworkFailure::TimedOut);
        assert!(explain(&url, &error).contains("did not answer in time"));
        held.abort();
    }

    #[tokio::test]
    async fn a_host_that_hangs_up_mid_answer_is_a_cut_connection() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                drop(socket);
            }
        });
        let url = format!("http://{addr}/");
        let error = failure_of(&url, Duration::from_secs(5)).await;
        assert_eq!(classify(&error), NetworkFailure::Cut, "{error:?}");
        assert!(explain(&url, &error).contains("was cut before the answer arrived"));
        server.abort();
    }

    #[tokio::test]
    async fn tls_to_a_plain_http_port_says_the_secure_connection_failed() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            while let Ok((mut socket, _)) = listener.accept().await {
                let _ = socket
                    .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                    .await;
            }
        });
        let url = format!("https://{addr}/");
        let error = failure_of(&url, Duration::from_secs(5)).await;
        assert_eq!(classify(&error), NetworkFailure::Tls, "{error:?}");
        assert!(explain(&url, &error).contains("a secure connection to"));
        server.abort();
    }
}
