//! Signed requests to a host's approver API, byte for byte: a decision is
//! POSTed as the exact bytes kept in the store, with the signed headers of
//! each attempt kept beside it, so anyone with the approver's public key
//! can recheck a decline or a counter later, exactly as the host can; a
//! record is read as the exact bytes the host sent (evidence, should they
//! contradict the stored copy).

use std::sync::Arc;
use std::time::Duration;

use anp::api::{self, ErrorBody};
use countersign_client::ApproverClient;
use countersign_host_api::signing::{sign_request_v2, RequestV2, SignedHeadersV2};
use ed25519_dalek::SigningKey;
use rand::Rng;
use time::OffsetDateTime;

/// Why a request did not produce an answer to use.
#[derive(Debug)]
pub(crate) enum SendError {
    /// The host answered with an error.
    Refused { code: String, message: String },
    /// The host could not be reached (after retries).
    Unreachable(String),
    /// The host answered something that is not the protocol.
    Garbled(String),
}

/// A host's successful answer to a decision, byte for byte.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    /// The body.
    pub body: Vec<u8>,
}

/// The longest answer read from a host.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
const ATTEMPTS: u32 = 3;

/// What the IO half of a protocol may use to talk to one host: the
/// polling client (no retries: the poller backs off) and the signer.
pub(crate) struct HostIo {
    /// The approver client of this host.
    pub client: Arc<ApproverClient>,
    /// The host's base URL.
    pub url: String,
    /// This console's approver id there.
    pub approver_id: String,
    /// The approver's key.
    pub key: SigningKey,
    /// Plain HTTP for the requests this module signs itself.
    pub http: reqwest::Client,
}

impl HostIo {
    /// The IO of one host: its approver client (no retries: the poller
    /// backs off itself) and the signer, for `approver_id` at `url`.
    pub(crate) fn new(url: &str, approver_id: &str, key: &SigningKey) -> Result<HostIo, String> {
        let config = countersign_client::ClientConfig {
            retry: countersign_client::RetryPolicy::none(),
            timeout: Duration::from_secs(15),
            ..countersign_client::ClientConfig::default()
        };
        let client = ApproverClient::with_config(url, key.clone(), approver_id, config)
            .map_err(|e| e.to_string())?;
        Ok(HostIo {
            client: Arc::new(client),
            url: url.to_owned(),
            approver_id: approver_id.to_owned(),
            key: key.clone(),
            http: http_client()?,
        })
    }
}

fn nonce() -> String {
    let bytes: [u8; 18] = rand::thread_rng().gen();
    jcs::b64url::encode(&bytes)
}

/// True for a session id that can stand in a path as it is: the ANP id
/// alphabet, and `:` for a gate session (`concordia:ses_…`).
fn plain_segment(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 200
        && !text.chars().all(|c| c == '.')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// The HTTP client a [`HostIo`] signs its own requests on.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .connect_timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| e.to_string())
}

/// An answer's status and body, refused when the body is too large to read.
async fn read_body(
    response: reqwest::Response,
) -> Result<(reqwest::StatusCode, Vec<u8>), SendError> {
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| SendError::Unreachable(e.to_string()))?;
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(SendError::Garbled("the answer is too large".into()));
    }
    Ok((status, bytes.to_vec()))
}

fn refusal(status: reqwest::StatusCode, bytes: &[u8]) -> (String, String) {
    match serde_json::from_slice::<ErrorBody>(bytes) {
        Ok(e) => (e.error.code, e.error.message),
        Err(_) => ("http".to_owned(), format!("HTTP {status}")),
    }
}

impl HostIo {
    /// A request to `path_and_query` on this host, signed as the approver
    /// (version 2: method, host, path with query, caller, body), with the
    /// headers it carries.
    fn signed(
        &self,
        method: &str,
        path_and_query: &str,
        body: &[u8],
    ) -> Result<(SignedHeadersV2, reqwest::RequestBuilder), SendError> {
        let text = format!("{}{path_and_query}", self.url.trim_end_matches('/'));
        let url = reqwest::Url::parse(&text)
            .map_err(|e| SendError::Garbled(format!("{text:?} is not a URL ({e})")))?;
        let (authority, target) = countersign_client::authority_and_target(&url);
        let request = RequestV2 {
            method,
            authority: &authority,
            path_and_query: &target,
            body,
        };
        let headers = sign_request_v2(
            &self.key,
            &self.approver_id,
            &request,
            &api::format_timestamp(OffsetDateTime::now_utc()),
            &nonce(),
        );
        let mut builder = match method {
            "POST" => self.http.post(url),
            _ => self.http.get(url),
        };
        for (name, value) in headers.pairs() {
            builder = builder.header(name, value);
        }
        Ok((headers, builder))
    }

    /// GETs `/api/console/v1/sessions/<session>/log[?after=N]`, signed, and
    /// returns the request as people read it and the answer byte for byte.
    pub(crate) async fn get_log(
        &self,
        session_id: &str,
        after: Option<u64>,
    ) -> Result<(String, Vec<u8>), SendError> {
        if !plain_segment(session_id) {
            return Err(SendError::Garbled(format!(
                "session id {session_id:?} is not a plain identifier"
            )));
        }
        let path = format!(
            "{}/sessions/{session_id}/log",
            countersign_host_api::approver::CONSOLE_API_BASE
        );
        let asked = match after {
            Some(after) => format!("{path}?after={after}"),
            None => path,
        };
        let (_, request) = self.signed("GET", &asked, b"")?;
        let response = request
            .send()
            .await
            .map_err(|e| SendError::Unreachable(e.to_string()))?;
        let (status, bytes) = read_body(response).await?;
        if !status.is_success() {
            let (code, message) = refusal(status, &bytes);
            return Err(SendError::Refused { code, message });
        }
        Ok((format!("GET {asked}"), bytes))
    }

    /// POSTs `body` (the exact bytes kept in the store) to the session's
    /// decisions route, signing each attempt afresh (a nonce is single-use).
    /// `on_signed` sees each attempt's headers (JSON) before it is sent.
    pub(crate) async fn post_decision(
        &self,
        session_id: &str,
        body: &[u8],
        on_signed: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<Sent, SendError> {
        if !plain_segment(session_id) {
            return Err(SendError::Garbled(format!(
                "session id {session_id:?} is not a plain identifier"
            )));
        }
        let path = format!(
            "{}/sessions/{session_id}/decisions",
            countersign_host_api::approver::CONSOLE_API_BASE
        );
        let mut last = String::new();
        for attempt in 1..=ATTEMPTS {
            let (headers, request) = self.signed("POST", &path, body)?;
            on_signed(&serde_json::to_string(&headers).unwrap_or_default());
            let request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_vec());
            match request.send().await {
                Ok(response) => {
                    let (status, bytes) = read_body(response).await?;
                    if status.is_success() {
                        return Ok(Sent { body: bytes });
                    }
                    let retry = status.is_server_error() || status.as_u16() == 429;
                    let (code, message) = refusal(status, &bytes);
                    if !retry || attempt == ATTEMPTS {
                        return Err(SendError::Refused { code, message });
                    }
                    last = message;
                }
                Err(e) => last = e.to_string(),
            }
            let backoff = Duration::from_millis(200 * (1 << attempt));
            let jittered = backoff.mul_f64(rand::thread_rng().gen_range(0.5..1.0));
            tokio::time::sleep(jittered).await;
        }
        Err(SendError::Unreachable(last))
    }
}

#[cfg(test)]
mod tests {
    use super::plain_segment;

    #[test]
    fn only_plain_session_ids_go_into_a_path() {
        assert!(plain_segment("7f0c2a4e-1b9d-4c1a-9e55-2f1b7c0d9a10"));
        assert!(plain_segment("concordia:ses_9d4e8f01"));
        assert!(!plain_segment(""));
        assert!(!plain_segment("../summary"));
        assert!(!plain_segment("a/b"));
        assert!(!plain_segment(".."));
        assert!(!plain_segment("a?after=0"));
        assert!(!plain_segment(&"a".repeat(201)));
    }
}
