//! Strict, typed payloads for every event kind.

use serde::{Deserialize, Serialize};

/// RFC-002: a human approval, signed by the approver's own key over
/// [`crate::signed::approval_string`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// The approver's enrolled email.
    pub approved_by: String,
    /// ISO 8601 time of the approval.
    pub at: String,
    /// Always `human` in 0.2.
    pub method: String,
    /// base64url Ed25519 signature over the approval string.
    pub signature: String,
}
