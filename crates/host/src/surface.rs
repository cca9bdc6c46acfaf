//! The host's surfaces, as far as the shared HTTP plumbing needs to know
//! them: which error shape a refusal takes and how large a body may be.
//! The agent API, discovery and the approver API answer in ANP's error
//! shape; the gate in its own (`{"error": {…, "index", "check", "head"},
//! "protocol": "<the session's protocol>"}`) and takes larger bodies
//! (whole transcripts).

use axum::response::IntoResponse;

use crate::error::{ApiError, GateError};
use crate::Host;

/// What a surface answers refusals with, and what it accepts.
pub trait Surface: Send + Sync + 'static {
    /// Its error response.
    type Error: From<ApiError> + IntoResponse + Send + 'static;
    /// The largest request body it reads.
    fn max_body(host: &Host) -> usize;
}

/// The ANP/0.1 agent API, discovery and the approver API.
pub struct AnpShape;

impl Surface for AnpShape {
    type Error = ApiError;
    fn max_body(host: &Host) -> usize {
        host.config().limits.max_body_bytes
    }
}

/// The gate.
pub struct GateShape;

impl Surface for GateShape {
    type Error = GateError;
    fn max_body(host: &Host) -> usize {
        host.config().limits.gate_max_body_bytes
    }
}
