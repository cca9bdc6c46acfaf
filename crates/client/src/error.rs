//! The client's one error type: each variant says what went wrong in words a
//! person can act on, and keeps the structured facts for programs.

use anp::VerifyReport;

/// Why a call to a host failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The host answered with an error status; `code` and `message` come from
    /// the ANP error body (`{"error": {"code", "message"}, "protocol"}`).
    #[error("the host refused the request (HTTP {status}, {code}): {message}")]
    Http {
        /// HTTP status.
        status: u16,
        /// The ANP error code (`unparsed_error` when the body was not the ANP shape).
        code: String,
        /// The host's sentence, or a short excerpt of a body that was not the ANP shape.
        message: String,
        /// A gate refusal's detail: the message and check a transcript
        /// failed, or the head the host holds.
        gate: Option<Box<countersign_host_api::gate::GateErrorDetail>>,
    },
    /// The host could not be reached, or the connection failed or timed out.
    #[error("could not reach the host at {url}: {detail}")]
    Transport {
        /// The URL that was being requested.
        url: String,
        /// What the network layer said.
        detail: String,
    },
    /// The host answered 2xx, but the body was not what the protocol promises.
    #[error("the host's answer to {what} could not be read: {detail}")]
    Decode {
        /// Which answer.
        what: String,
        /// Why it could not be read.
        detail: String,
    },
    /// The session log failed verification or no longer extends the head
    /// this client pinned: the session is disputed, and the pin was kept.
    #[error("the session log does not verify: {}", describe_report(.0))]
    ChainBroken(Box<VerifyReport>),
    /// A payload this client was asked to send breaks the protocol's schema;
    /// nothing was sent.
    #[error("refusing to send an invalid {kind} payload: {detail}")]
    InvalidPayload {
        /// The event kind.
        kind: String,
        /// Every rule it breaks, in one sentence.
        detail: String,
        /// The broken rules with their paths (empty for rules outside the schema).
        violations: Vec<anp::payload::Violation>,
    },
    /// An argument given to the client is malformed (a base URL, a session id);
    /// nothing was sent.
    #[error("invalid {what}: {detail}")]
    InvalidInput {
        /// Which argument.
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// A key in a log is not the one the client trusts: the log's own `keys`
    /// block disagrees with the host's discovery document or with our key.
    #[error("untrusted key in the session log: {0}")]
    UntrustedKey(String),
    /// The host serves no discovery document (`/.well-known/anp.json`
    /// answered 404). RFC-003 is a draft, optional for an ANP/0.1 host: the
    /// vendor client carries on without it; a caller that needs the host's
    /// published keys (the console) cannot.
    #[error("the host at {url} publishes no discovery document (GET /.well-known/anp.json answered 404), so its keys cannot be cross-checked")]
    NoDiscovery {
        /// The origin asked.
        url: String,
    },
    /// A decision the gate answered does not stand on its receipts (one
    /// fails verification, or too few verify): do not act on it.
    #[error("the decision's receipts do not verify: {0}")]
    ReceiptInvalid(String),
    /// A receipt could not be built for a person's decision; nothing was sent.
    #[error("cannot sign the receipt: {0}")]
    Receipt(String),
    /// The host acknowledged a submission but the log it returned does not
    /// hold the event this client signed.
    #[error("the host acknowledged the {kind} but its log does not contain the event we signed (payload_hash {payload_hash})")]
    NotAppended {
        /// The kind submitted.
        kind: String,
        /// The payload hash signed.
        payload_hash: String,
    },
}

impl ClientError {
    /// The HTTP status when the host refused the request.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The gate's detail when the host refused a gate request: the failing
    /// message and check, or the head it holds.
    pub fn gate_detail(&self) -> Option<&countersign_host_api::gate::GateErrorDetail> {
        match self {
            ClientError::Http { gate, .. } => gate.as_deref(),
            _ => None,
        }
    }

    /// The ANP error code when the host refused the request.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Http { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// A one-line account of a failed verification, naming the first problem.
pub(crate) fn describe_report(report: &VerifyReport) -> String {
    if let Some(rewrite) = &report.rewrite {
        return format!(
            "history was rewritten after the pinned head {}: {}",
            rewrite.pinned, rewrite.detail
        );
    }
    match report.failing.first() {
        Some(failure) => {
            let checks: Vec<&str> = failure.checks.iter().map(|c| c.as_str()).collect();
            let more = report.failing.len() - 1;
            format!(
                "event {} fails {} ({}){}",
                failure.seq,
                checks.join(", "),
                failure.details.join("; "),
                if more > 0 {
                    format!(", and {more} more event(s) fail")
                } else {
                    String::new()
                }
            )
        }
        None => "the verifier reported a failure without details".to_owned(),
    }
}
