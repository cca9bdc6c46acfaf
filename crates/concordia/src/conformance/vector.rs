//! The vector format of RUNNER_CONTRACT, checked before any profile runs.

use serde_json::{Map, Value};

/// Every `verification_profile` the contract defines.
pub const PROFILES: &[&str] = &[
    "decision-object-v1",
    "offer-binding-v1",
    "receipt-v1",
    "revocation-v1",
    "cascade-decision-v1",
    "fulfillment-attestation-v1",
    "attestation-v1",
    "attestation-countersign-v1",
    "predicate-v1",
    "mandate-v1",
    "delegation-chain-v1",
    "cosign-v1",
    "conditional-commitment-v1",
    "atomic-activation-proof-v1",
    "unwind-record-v1",
    "closure-predicate-v1",
    "chain-session-v1",
    "chain-session-transition-v1",
    "agent-profile-v1",
    "competence-proof-v1",
    "receipt-bundle-v1",
    "message-chain-v1",
];

/// Every `record_type` the contract defines.
pub const RECORD_TYPES: &[&str] = &[
    "decision_object",
    "approval_receipt",
    "revocation_record",
    "cascade_decision_record",
    "fulfillment_attestation",
    "attestation",
    "predicate",
    "mandate",
    "cosign_receipt",
    "conditional_commitment",
    "atomic_activation_proof",
    "unwind_record",
    "closure_predicate",
    "chain_session",
    "chain_session_transition",
    "agent_profile",
    "competence_proof",
    "receipt_bundle",
    "message_chain",
];

const REASON_CLASSES: &[&str] = &[
    "schema",
    "signature",
    "digest",
    "binding",
    "temporal",
    "privacy",
    "transition",
];

/// `accept` or `reject`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every check passed.
    Accept,
    /// Some check failed.
    Reject,
}

impl Verdict {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Accept => "accept",
            Verdict::Reject => "reject",
        }
    }
}

/// A well-formed vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    /// Its stable id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The source fixture's name (informative).
    pub source_fixture: String,
    /// The record type.
    pub record_type: String,
    /// The profile to run: the only dispatch input with the fields below.
    pub profile: String,
    /// The object checked.
    pub input: Value,
    /// The public data the profile needs.
    pub context: Map<String, Value>,
    /// What a conforming runner answers.
    pub expected: Verdict,
    /// The coarse diagnostic class, when given.
    pub expected_reason_class: Option<String>,
}

/// Why a vector is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed vector{}: {why}", id.as_ref().map(|i| format!(" {i}")).unwrap_or_default())]
pub struct MalformedVector {
    /// Its id, when readable.
    pub id: Option<String>,
    /// What is wrong.
    pub why: String,
}

impl Vector {
    /// Checks the format and reads the vector.
    pub fn parse(value: &Value) -> Result<Vector, MalformedVector> {
        let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
        let bad = |why: String| MalformedVector {
            id: id.clone(),
            why,
        };
        let obj = value
            .as_object()
            .ok_or_else(|| bad("not a JSON object".into()))?;
        let string = |name: &str| -> Result<String, MalformedVector> {
            match obj.get(name) {
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                Some(_) => Err(bad(format!("{name} is not a non-empty string"))),
                None => Err(bad(format!("the required field {name} is missing"))),
            }
        };
        let schema_version = string("schema_version")?;
        if schema_version != "concordia-conformance-vector/v1-draft" {
            return Err(bad(format!(
                "schema_version is {schema_version:?}, not concordia-conformance-vector/v1-draft"
            )));
        }
        let vid = string("id")?;
        if !vid.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(bad("id is not printable ASCII".into()));
        }
        let title = string("title")?;
        let source_fixture = string("source_fixture")?;
        let record_type = string("record_type")?;
        if !RECORD_TYPES.contains(&record_type.as_str()) {
            return Err(bad(format!(
                "record_type {record_type:?} is not one the contract defines"
            )));
        }
        let profile = string("verification_profile")?;
        if !PROFILES.contains(&profile.as_str()) {
            return Err(bad(format!(
                "verification_profile {profile:?} is not one the contract defines"
            )));
        }
        let input = match obj.get("input") {
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return Err(bad("input is not an inline JSON object".into())),
            None => return Err(bad("the required field input is missing".into())),
        };
        let context = match obj.get("context") {
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(bad("context is not an object".into())),
            None => return Err(bad("the required field context is missing".into())),
        };
        let expected = match string("expected")?.as_str() {
            "accept" => Verdict::Accept,
            "reject" => Verdict::Reject,
            other => return Err(bad(format!("expected is {other:?}, not accept or reject"))),
        };
        let expected_reason_class = match obj.get("expected_reason_class") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if REASON_CLASSES.contains(&s.as_str()) => Some(s.clone()),
            Some(_) => {
                return Err(bad(
                    "expected_reason_class is not one of the allowed classes".into(),
                ))
            }
        };
        match obj.get("notes") {
            None | Some(Value::String(_)) => {}
            Some(_) => return Err(bad("notes is not a string".into())),
        }
        Ok(Vector {
            id: vid,
            title,
            source_fixture,
            record_type,
            profile,
            input,
            context,
            expected,
            expected_reason_class,
        })
    }
}
