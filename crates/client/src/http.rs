//! The HTTP layer shared by both roles: one reqwest client with timeouts,
//! SPEC §3 request signing over exactly the bytes sent, bounded retries with
//! jittered exponential backoff for idempotent calls, ANP error bodies parsed
//! into [`ClientError::Http`], and a cap on how much of an answer is read.

use std::time::Duration;

use anp::api::{self, ErrorBody};
use anp::keys::SigningKey;
use countersign_host_api::gate::GateErrorBody;
use countersign_host_api::signing::{self, sign_request_v2, RequestV2};
use rand::Rng;
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use time::OffsetDateTime;

use crate::error::ClientError;
use crate::Result;

/// How many times an idempotent call is tried, and how long to wait between
/// tries. Waits double from `base_delay` up to `max_delay`, each scaled by a
/// random factor in [0.5, 1.0) so that many clients do not retry in lockstep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total tries, the first included (1 means no retry).
    pub max_attempts: u32,
    /// Wait before the second try.
    pub base_delay: Duration,
    /// Longest wait between two tries.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries: for tests and for callers with their own loop.
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The wait before try number `attempt + 1` (attempt counts from 1).
    fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exponent = attempt.saturating_sub(1).min(16);
        let backoff = self
            .base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        let jittered = backoff.mul_f64(rand::thread_rng().gen_range(0.5..1.0));
        match retry_after {
            Some(asked) => asked.max(jittered).min(self.max_delay),
            None => jittered,
        }
    }
}

/// Timeouts, retries and limits for one client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Whole-request timeout (connect, send, read).
    pub timeout: Duration,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Retries for idempotent calls.
    pub retry: RetryPolicy,
    /// Largest answer body read; a longer one is a decode error, not an OOM.
    pub max_response_bytes: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(5),
            retry: RetryPolicy::default(),
            max_response_bytes: 32 * 1024 * 1024,
        }
    }
}

/// Who signs requests: a registration id (agent or approver), its key, and
/// the request string its API takes.
pub(crate) struct Identity {
    pub id: String,
    pub key: SigningKey,
    pub wire: Wire,
}

/// Which request string a signer signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// ANP/0.1's (SPEC §3): the vendor agent API, whose wire is ANP's.
    Anp,
    /// Version 2 of the host's own APIs (approver API, gate):
    /// `countersign_host_api::signing`, covering method, host, path with
    /// query, caller, timestamp, nonce and body.
    Countersign,
}

/// Whether a call may be repeated when it fails on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idempotent {
    /// Safe to repeat: GETs, registration of the same key, decisions with an id.
    Yes,
    /// Not safe: repeating could append twice or burn a one-time code.
    No,
}

/// A base URL and the reqwest client that talks to it.
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    base: String,
    config: ClientConfig,
}

impl Http {
    /// The client's whole-request timeout (what a held request adds its wait to).
    pub fn timeout(&self) -> Duration {
        self.config.timeout
    }

    /// Checks the base URL (http or https, no query) and builds the client.
    pub fn new(base_url: &str, config: ClientConfig) -> Result<Http> {
        let parsed = Url::parse(base_url).map_err(|e| ClientError::InvalidInput {
            what: "host URL",
            detail: format!("{base_url:?} is not a URL ({e})"),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(ClientError::InvalidInput {
                what: "host URL",
                detail: format!("{base_url:?} must be an http:// or https:// URL with a host"),
            });
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(ClientError::InvalidInput {
                what: "host URL",
                detail: format!("{base_url:?} must not carry a query or a fragment"),
            });
        }
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("countersign-client/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError::Transport {
                url: base_url.to_owned(),
                detail: format!("could not build the HTTP client: {e}"),
            })?;
        Ok(Http {
            client,
            base: parsed.as_str().trim_end_matches('/').to_owned(),
            config,
        })
    }

    /// The base URL, without a trailing slash.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The origin of the base URL, where `/.well-known/anp.json` lives.
    pub fn origin(&self) -> String {
        Url::parse(&self.base)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| self.base.clone())
    }

    /// The same client settings aimed at the base URL's origin, where the
    /// discovery document lives.
    pub fn at_origin(&self) -> Result<Http> {
        Http::new(&self.origin(), self.config.clone())
    }

    /// Sends a request and decodes a 2xx JSON answer into `T`.
    pub async fn call<T: DeserializeOwned>(
        &self,
        request: Request<'_>,
        signer: Option<&Identity>,
        idempotent: Idempotent,
    ) -> Result<T> {
        match self.call_conditional(request, signer, idempotent).await? {
            Conditional::Fresh { value, .. } => Ok(value),
            Conditional::NotModified { .. } => Err(ClientError::Decode {
                what: "an unconditional request".to_owned(),
                detail: "the host answered 304 Not Modified".to_owned(),
            }),
        }
    }

    /// Sends a request and returns a 2xx answer's bytes exactly as received
    /// (for a caller that must keep them, such as evidence of a dispute).
    pub async fn call_bytes(
        &self,
        request: Request<'_>,
        signer: Option<&Identity>,
        idempotent: Idempotent,
    ) -> Result<Vec<u8>> {
        let reply = self.send(&request, signer, idempotent).await?;
        Ok(reply.bytes)
    }

    /// Sends a request (conditional when it carries `if_none_match`) and
    /// decodes a 2xx JSON answer into `T` with its `ETag`, or reports `304`.
    pub async fn call_conditional<T: DeserializeOwned>(
        &self,
        request: Request<'_>,
        signer: Option<&Identity>,
        idempotent: Idempotent,
    ) -> Result<Conditional<T>> {
        let what = format!("{} {}", request.method, request.path);
        let reply = self.send(&request, signer, idempotent).await?;
        if reply.not_modified {
            return Ok(Conditional::NotModified {
                retry_after: reply.retry_after,
            });
        }
        let value = serde_json::from_slice(&reply.bytes).map_err(|e| ClientError::Decode {
            what,
            detail: e.to_string(),
        })?;
        Ok(Conditional::Fresh {
            value,
            etag: reply.etag,
        })
    }

    async fn send(
        &self,
        request: &Request<'_>,
        signer: Option<&Identity>,
        idempotent: Idempotent,
    ) -> Result<Reply> {
        let attempts = match idempotent {
            Idempotent::Yes => self.config.retry.max_attempts.max(1),
            Idempotent::No => 1,
        };
        let mut attempt = 1;
        loop {
            match self.send_once(request, signer).await {
                Ok(reply) => return Ok(reply),
                Err(failure) if attempt < attempts && failure.retryable => {
                    tokio::time::sleep(self.config.retry.delay(attempt, failure.retry_after)).await;
                    attempt += 1;
                }
                Err(failure) => return Err(failure.error),
            }
        }
    }

    /// One try. Each try is signed afresh: a nonce is single-use, and a try
    /// that reached the host has spent its nonce.
    async fn send_once(
        &self,
        request: &Request<'_>,
        signer: Option<&Identity>,
    ) -> std::result::Result<Reply, Failure> {
        let url_text = match &request.query {
            Some((name, value)) => format!("{}{}?{name}={value}", self.base, request.path),
            None => format!("{}{}", self.base, request.path),
        };
        let url = Url::parse(&url_text).map_err(|e| {
            Failure::fatal(ClientError::InvalidInput {
                what: "request path",
                detail: format!("{url_text:?} is not a URL ({e})"),
            })
        })?;
        let body = request.body.unwrap_or_default();
        let mut builder = self.client.request(request.method.clone(), url.clone());
        if let Some(identity) = signer {
            let timestamp = api::format_timestamp(OffsetDateTime::now_utc());
            let nonce = fresh_nonce();
            match identity.wire {
                Wire::Anp => {
                    let headers = api::sign_request(
                        &identity.key,
                        &identity.id,
                        request.method.as_str(),
                        url.path(),
                        body,
                        &timestamp,
                        &nonce,
                    );
                    for (name, value) in headers.pairs() {
                        builder = builder.header(name, value);
                    }
                }
                Wire::Countersign => {
                    let (authority, target) = authority_and_target(&url);
                    let signed = RequestV2 {
                        method: request.method.as_str(),
                        authority: &authority,
                        path_and_query: &target,
                        body,
                    };
                    let headers =
                        sign_request_v2(&identity.key, &identity.id, &signed, &timestamp, &nonce);
                    for (name, value) in headers.pairs() {
                        builder = builder.header(name, value);
                    }
                }
            }
        }
        if let Some(tag) = request.if_none_match {
            builder = builder.header(reqwest::header::IF_NONE_MATCH, tag);
        }
        if let Some(timeout) = request.timeout {
            builder = builder.timeout(timeout);
        }
        if request.body.is_some() {
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_vec());
        }
        let response = builder.send().await.map_err(|e| Failure {
            retryable: true,
            retry_after: None,
            error: transport(&url_text, &e),
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        // A tag is echoed back on every later request, so an unreadable or
        // oversized one (a host's word, not ours) is dropped, never kept.
        let etag = response
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .filter(|tag| !tag.is_empty() && tag.len() <= MAX_ETAG_BYTES)
            .map(str::to_owned);
        if status == StatusCode::NOT_MODIFIED && request.if_none_match.is_some() {
            return Ok(Reply {
                not_modified: true,
                etag,
                bytes: Vec::new(),
                retry_after,
            });
        }
        let bytes = read_capped(response, self.config.max_response_bytes)
            .await
            .map_err(|detail| match detail {
                ReadFailure::Transport(e) => Failure {
                    retryable: true,
                    retry_after: None,
                    error: transport(&url_text, &e),
                },
                ReadFailure::TooLarge => Failure::fatal(ClientError::Decode {
                    what: format!("{} {}", request.method, request.path),
                    detail: format!(
                        "the answer is larger than {} bytes",
                        self.config.max_response_bytes
                    ),
                }),
            })?;
        if status.is_success() {
            return Ok(Reply {
                not_modified: false,
                etag,
                bytes,
                retry_after: None,
            });
        }
        Err(Failure {
            retryable: status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error(),
            retry_after,
            error: http_error(status, &bytes),
        })
    }
}

/// The longest entity tag kept (ours are 34 bytes).
const MAX_ETAG_BYTES: usize = 256;

/// One request, before signing.
pub(crate) struct Request<'a> {
    pub method: Method,
    /// The path below the base URL, starting with `/`, already validated.
    pub path: String,
    /// One query parameter (the only one the protocol uses is `after`).
    pub query: Option<(&'a str, String)>,
    /// The exact JSON bytes to send, which are also the bytes signed.
    pub body: Option<&'a [u8]>,
    /// An entity tag from an earlier answer: the host may answer `304`.
    pub if_none_match: Option<&'a str>,
    /// This request's own whole-request timeout, for one the host may hold
    /// open on purpose (a summary waiting for a change); else the client's.
    pub timeout: Option<Duration>,
}

/// A conditional answer: a fresh value with its entity tag, or unchanged.
pub(crate) enum Conditional<T> {
    /// `2xx`: the decoded answer and the `ETag` it came with, if any.
    Fresh { value: T, etag: Option<String> },
    /// `304 Not Modified`: the answer named by `if_none_match` still holds;
    /// with the `Retry-After` it came with, if any.
    NotModified { retry_after: Option<Duration> },
}

/// What one successful try read.
struct Reply {
    not_modified: bool,
    etag: Option<String>,
    bytes: Vec<u8>,
    /// A `304`'s `Retry-After`: ask again no sooner.
    retry_after: Option<Duration>,
}

impl<'a> Request<'a> {
    /// A bodyless GET.
    pub fn get(path: String) -> Request<'a> {
        Request {
            method: Method::GET,
            path,
            query: None,
            body: None,
            if_none_match: None,
            timeout: None,
        }
    }

    /// A POST of JSON bytes.
    pub fn post(path: String, body: &'a [u8]) -> Request<'a> {
        Request {
            method: Method::POST,
            path,
            query: None,
            body: Some(body),
            if_none_match: None,
            timeout: None,
        }
    }
}

/// A failed try, and whether trying again may help.
struct Failure {
    retryable: bool,
    retry_after: Option<Duration>,
    error: ClientError,
}

impl Failure {
    fn fatal(error: ClientError) -> Failure {
        Failure {
            retryable: false,
            retry_after: None,
            error,
        }
    }
}

enum ReadFailure {
    Transport(reqwest::Error),
    TooLarge,
}

async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> std::result::Result<Vec<u8>, ReadFailure> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(ReadFailure::TooLarge);
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(ReadFailure::Transport)? {
        if bytes.len() + chunk.len() > limit {
            return Err(ReadFailure::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// What a version 2 signature names of `url`: the authority addressed
/// (`host:port`, the scheme's default port written out) and the request
/// target (path and query, exactly as reqwest sends them). Public for a
/// caller that signs its own requests (the console keeps a decision's
/// signed bytes itself).
pub fn authority_and_target(url: &Url) -> (String, String) {
    let authority = signing::authority(
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or_default(),
    );
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    (authority, target)
}

/// The authority of a base URL, for a version 2 enrollment proof.
pub(crate) fn authority_of(base_url: &str) -> Result<String> {
    let url = Url::parse(base_url).map_err(|e| ClientError::InvalidInput {
        what: "host URL",
        detail: format!("{base_url:?} is not a URL ({e})"),
    })?;
    Ok(authority_and_target(&url).0)
}

/// A fresh single-use nonce: 128 random bits, hex.
fn fresh_nonce() -> String {
    let bytes: [u8; 16] = rand::thread_rng().gen();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn transport(url: &str, error: &reqwest::Error) -> ClientError {
    ClientError::Transport {
        url: url.to_owned(),
        detail: crate::network::explain(url, error),
    }
}

/// The most of a non-ANP error body quoted back in a message.
const EXCERPT_CHARS: usize = 200;

/// An error status with its body read as the ANP error shape when it is
/// one (the gate's shape is ANP's with more members: they are kept).
fn http_error(status: StatusCode, body: &[u8]) -> ClientError {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(parsed) => {
            let gate = serde_json::from_slice::<GateErrorBody>(body)
                .ok()
                .map(|b| b.error)
                .filter(|d| {
                    d.index.is_some()
                        || d.message_id.is_some()
                        || d.check.is_some()
                        || d.head.is_some()
                })
                .map(Box::new);
            ClientError::Http {
                status: status.as_u16(),
                code: parsed.error.code,
                message: parsed.error.message,
                gate,
            }
        }
        Err(_) => {
            let text = String::from_utf8_lossy(body);
            let excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
            ClientError::Http {
                status: status.as_u16(),
                code: "unparsed_error".to_owned(),
                message: if excerpt.trim().is_empty() {
                    format!(
                        "{} with an empty body",
                        status.canonical_reason().unwrap_or("error")
                    )
                } else {
                    format!("the body is not an ANP error: {excerpt:?}")
                },
                gate: None,
            }
        }
    }
}

/// Checks a gate id taken from a caller (a session or request id, or the
/// approver API's `<protocol>:<session_id>`): 1 to 160 of `[A-Za-z0-9._:-]`
/// starting with a letter or digit, so it cannot change which route is
/// called (no `/`, `?`, `%`, no dot segment).
pub(crate) fn gate_segment<'a>(what: &'static str, text: &'a str) -> Result<&'a str> {
    let mut bytes = text.bytes();
    let ok = text.len() <= 160
        && bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(text)
    } else {
        Err(ClientError::InvalidInput {
            what,
            detail: format!(
                "{:?} is not a gate id (letters, digits, '.', '_', ':' and '-', starting with a letter or digit, at most 160)",
                text.chars().take(170).collect::<String>()
            ),
        })
    }
}

/// Checks a path segment taken from a caller (a session id): it must not be
/// able to change which route is called.
pub(crate) fn path_segment<'a>(what: &'static str, text: &'a str) -> Result<&'a str> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(text)
    } else {
        Err(ClientError::InvalidInput {
            what,
            detail: format!(
                "{:?} is not an id (letters, digits, '-' and '_', at most 128)",
                text.chars().take(140).collect::<String>()
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_and_stay_bounded() {
        let policy = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        };
        for attempt in 1..10 {
            let d = policy.delay(attempt, None);
            let full = Duration::from_millis(100)
                .saturating_mul(1 << (attempt - 1))
                .min(Duration::from_secs(1));
            assert!(d >= full / 2 && d < full, "attempt {attempt}: {d:?}");
        }
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(30))),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn error_bodies_in_the_anp_shape_are_parsed() {
        let body =
            br#"{"error":{"code":"rate_limited","message":"slow down"},"protocol":"ANP/0.1"}"#;
        match http_error(StatusCode::TOO_MANY_REQUESTS, body) {
            ClientError::Http {
                status,
                code,
                message,
                ..
            } => {
                assert_eq!(
                    (status, code.as_str(), message.as_str()),
                    (429, "rate_limited", "slow down")
                );
            }
            other => panic!("{other:?}"),
        }
        let err = http_error(StatusCode::BAD_GATEWAY, b"<html>bad gateway</html>");
        assert_eq!(err.code(), Some("unparsed_error"));
        assert!(err.to_string().contains("<html>bad gateway</html>"));
    }

    #[test]
    fn path_segments_cannot_escape_their_route() {
        assert!(path_segment("session id", "5f1c6f2e-9d1a-4c8b-b7e3-2a61c0de9a44").is_ok());
        for bad in ["", "../admin", "a/b", "a?b=1", "a%2f", &"x".repeat(129)] {
            assert!(path_segment("session id", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn gate_ids_cannot_escape_their_route() {
        for ok in ["concordia:ses_9d4e8f01", "ses_1.2", "5f0c-aa"] {
            assert!(gate_segment("session id", ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "..",
            ".x",
            "a/b",
            "a?b",
            "a%2f",
            "a b",
            &"x".repeat(161),
        ] {
            assert!(gate_segment("session id", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn base_urls_are_checked() {
        assert!(Http::new("http://127.0.0.1:8080/", ClientConfig::default()).is_ok());
        for bad in ["ftp://x", "not a url", "http://h/?q=1", "/relative"] {
            assert!(Http::new(bad, ClientConfig::default()).is_err(), "{bad}");
        }
        let http = Http::new("http://127.0.0.1:8080/prefix/", ClientConfig::default()).unwrap();
        assert_eq!(http.base(), "http://127.0.0.1:8080/prefix");
        assert_eq!(http.origin(), "http://127.0.0.1:8080");
    }

    #[test]
    fn a_version_2_signature_names_host_port_and_query() {
        let url = Url::parse("https://Negotiate.Example.com/api/console/v1/s/log?after=2").unwrap();
        assert_eq!(
            authority_and_target(&url),
            (
                "negotiate.example.com:443".to_owned(),
                "/api/console/v1/s/log?after=2".to_owned()
            )
        );
        let url = Url::parse("http://[::1]:8480/api/gate/v1/sessions").unwrap();
        assert_eq!(
            authority_and_target(&url),
            ("[::1]:8480".to_owned(), "/api/gate/v1/sessions".to_owned())
        );
    }
}
