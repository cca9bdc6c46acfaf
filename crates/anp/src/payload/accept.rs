//! The draft `accept` payload (RFC-001) with its human approval attestation
//! (RFC-002), plus our one addition: `approvals` for multi-approver policies.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::check::{field, Checker, PayloadError};
use super::limits::*;
use crate::keys;

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

/// The `method` of every approval in 0.2.
pub const METHOD_HUMAN: &str = "human";

impl Approval {
    /// Reads one approval, enforcing its shape (the signature itself is
    /// checked by [`crate::approval::verify_approval`]).
    pub fn parse(value: &Value) -> Result<Approval, PayloadError> {
        let mut c = Checker::new();
        let approval = read_approval(&mut c, "", value);
        c.finish()?;
        approval.ok_or_else(|| Checker::incomplete(""))
    }
}

/// RFC-001 `accept`: binds to one offer event by its `event_hash`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct AcceptPayload {
    /// The `event_hash` of the accepted `offer` or `counter_offer`.
    pub in_response_to: String,
    /// Free text up to 4000 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// RFC-002: the (first) human approval; required under
    /// `bind_with_human_approval`, which the host enforces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// Our addition: the further approvals a multi-approver policy needs,
    /// each shaped exactly as `approval`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approvals: Option<Vec<Approval>>,
}

impl AcceptPayload {
    /// Reads an `accept` payload.
    pub fn parse(value: &Value) -> Result<AcceptPayload, PayloadError> {
        let mut c = Checker::new();
        let accept = read_accept(&mut c, value);
        c.finish()?;
        accept.ok_or_else(|| Checker::incomplete(""))
    }

    /// Every approval carried, `approval` first.
    pub fn all_approvals(&self) -> impl Iterator<Item = &Approval> {
        self.approval.iter().chain(self.approvals.iter().flatten())
    }
}

impl TryFrom<Value> for AcceptPayload {
    type Error = PayloadError;

    fn try_from(value: Value) -> Result<AcceptPayload, PayloadError> {
        AcceptPayload::parse(&value)
    }
}

pub(crate) fn read_approval(c: &mut Checker, path: &str, value: &Value) -> Option<Approval> {
    let map = c.object(
        path,
        value,
        &["approved_by", "at", "method", "signature"],
        &[],
    )?;
    let at = |key: &str| field(path, key);
    let approved_by = map
        .get("approved_by")
        .and_then(|v| c.string(&at("approved_by"), v, 1, MAX_CONTACT_LEN));
    let when = map.get("at").and_then(|v| c.date_time(&at("at"), v));
    let method = map
        .get("method")
        .and_then(|v| c.one_of(&at("method"), v, &[METHOD_HUMAN]));
    let signature = map.get("signature").and_then(|v| {
        let path = at("signature");
        let text = c.string(&path, v, 1, MAX_SIGNATURE_LEN)?;
        if keys::parse_signature(&text).is_ok() {
            Some(text)
        } else {
            c.fail(
                &path,
                "must be a base64url Ed25519 signature (64 bytes, unpadded)",
            );
            None
        }
    });
    Some(Approval {
        approved_by: approved_by?,
        at: when?,
        method: method?,
        signature: signature?,
    })
}

pub(crate) fn read_accept(c: &mut Checker, value: &Value) -> Option<AcceptPayload> {
    let map = c.object(
        "",
        value,
        &["in_response_to"],
        &["note", "approval", "approvals"],
    )?;
    let in_response_to = map
        .get("in_response_to")
        .and_then(|v| c.hex64("in_response_to", v));
    let note = map
        .get("note")
        .map(|v| c.string("note", v, 0, MAX_NOTES_LEN));
    let approval = map.get("approval").map(|v| read_approval(c, "approval", v));
    let approvals = map.get("approvals").map(|v| {
        c.array("approvals", v, 1, MAX_EXTRA_APPROVALS, |c, p, item| {
            read_approval(c, p, item)
        })
    });
    if approvals.is_some() && approval.is_none() {
        c.fail(
            "approval",
            "is required when approvals is present (approvals holds the further approvals)",
        );
    }
    Some(AcceptPayload {
        in_response_to: in_response_to?,
        note: note.map_or(Some(None), |t| t.map(Some))?,
        approval: approval.map_or(Some(None), |t| t.map(Some))?,
        approvals: approvals.map_or(Some(None), |t| t.map(Some))?,
    })
}
