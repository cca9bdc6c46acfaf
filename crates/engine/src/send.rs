//! Sends a decision as an ANP-signed request and returns the exact signed
//! headers with the answer, so the console keeps the whole request (body and
//! headers) and anyone with the approver's public key can recheck a decline
//! or a counter later, exactly as the host can.

use std::time::Duration;

use anp::api::{self, ErrorBody, SignedHeaders};
use anp::keys::SigningKey;
use countersign_host_api::approver::{DecisionResponse, CONSOLE_API_BASE};
use rand::Rng;
use time::OffsetDateTime;

/// Why a send did not produce a decision response.
#[derive(Debug)]
pub(crate) enum SendError {
    /// The host answered with an ANP error.
    Refused { code: String, message: String },
    /// The host could not be reached (after retries).
    Unreachable(String),
    /// The host answered something that is not the protocol.
    Garbled(String),
}

/// The longest answer read from a host.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
const ATTEMPTS: u32 = 3;

fn nonce() -> String {
    let bytes: [u8; 18] = rand::thread_rng().gen();
    anp::keys::b64url(&bytes)
}

/// POSTs `body` (the exact bytes kept in the store) to the decisions route,
/// signing each attempt afresh (a nonce is single-use). `on_signed` sees the
/// headers of each attempt before it is sent, so they are stored first.
pub(crate) async fn send_decision(
    base_url: &str,
    key: &SigningKey,
    approver_id: &str,
    session_id: &str,
    body: &[u8],
    mut on_signed: impl FnMut(&SignedHeaders),
) -> Result<DecisionResponse, SendError> {
    if !session_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(SendError::Garbled(format!(
            "session id {session_id:?} is not a plain identifier"
        )));
    }
    let path = format!("{}/sessions/{session_id}/decisions", CONSOLE_API_BASE);
    let url = format!("{}{path}", base_url.trim_end_matches('/'));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .connect_timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| SendError::Unreachable(e.to_string()))?;
    let mut last = String::new();
    for attempt in 1..=ATTEMPTS {
        let headers = api::sign_request(
            key,
            approver_id,
            "POST",
            &path,
            body,
            &api::format_timestamp(OffsetDateTime::now_utc()),
            &nonce(),
        );
        on_signed(&headers);
        let mut request = client
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        for (name, value) in headers.pairs() {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status();
                let bytes = response
                    .bytes()
                    .await
                    .map_err(|e| SendError::Unreachable(e.to_string()))?;
                if bytes.len() > MAX_ANSWER_BYTES {
                    return Err(SendError::Garbled("the answer is too large".into()));
                }
                if status.is_success() {
                    return serde_json::from_slice(&bytes)
                        .map_err(|e| SendError::Garbled(format!("decision answer: {e}")));
                }
                let retry = status.is_server_error() || status.as_u16() == 429;
                let (code, message) = match serde_json::from_slice::<ErrorBody>(&bytes) {
                    Ok(e) => (e.error.code, e.error.message),
                    Err(_) => ("http".to_owned(), format!("HTTP {status}")),
                };
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
