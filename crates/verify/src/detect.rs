//! What a file is, decided in one table. A later protocol adds one row.

use serde_json::Value;

/// The artifacts this tool verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An ANP/0.1 log document (`protocol: "ANP/0.1"`, `events`).
    AnpLog,
    /// A Concordia transcript as the gate carries it: `{"messages": [...], "keys": {...}}`.
    ConcordiaTranscript,
    /// A Concordia ApprovalReceipt, bare or `{"receipt", "offer", …}`.
    ConcordiaReceipt,
    /// A Concordia reputation attestation with its parties' keys: `{"attestation", "keys"}`.
    ConcordiaAttestation,
    /// A Concordia mandate with its issuer's key: `{"mandate", "issuer_public_key"}`.
    ConcordiaMandate,
    /// An OANP arbitrated receipt: `{artifact, signed_payload, jwks, …}`, or
    /// a closed session's unsigned one (`{session_id, state, arbiter, …}`).
    OanpReceipt,
}

impl Kind {
    /// How reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AnpLog => "ANP/0.1 log",
            Kind::ConcordiaTranscript => "Concordia transcript",
            Kind::ConcordiaReceipt => "Concordia ApprovalReceipt",
            Kind::ConcordiaAttestation => "Concordia attestation",
            Kind::ConcordiaMandate => "Concordia mandate",
            Kind::OanpReceipt => "OANP receipt",
        }
    }
}

fn has(v: &Value, member: &str) -> bool {
    v.get(member).is_some()
}

/// The table: the first row whose test holds names the kind (an attestation
/// may carry its transcript, so it comes before the transcript row).
/// A row's test.
type Test = fn(&Value) -> bool;

const TABLE: &[(Kind, Test)] = &[
    (Kind::AnpLog, |v| {
        v.get("protocol")
            .and_then(Value::as_str)
            .is_some_and(|p| p.starts_with("ANP/"))
            && has(v, "events")
    }),
    (Kind::ConcordiaAttestation, |v| {
        has(v, "attestation") && has(v, "keys")
    }),
    (Kind::ConcordiaTranscript, |v| {
        v.get("messages").is_some_and(Value::is_array)
            && v.get("keys").is_some_and(Value::is_object)
    }),
    (Kind::ConcordiaReceipt, |v| {
        v.get("artifact_type").and_then(Value::as_str) == Some("ApprovalReceipt")
            || v.pointer("/receipt/artifact_type").and_then(Value::as_str)
                == Some("ApprovalReceipt")
    }),
    (Kind::ConcordiaMandate, |v| {
        has(v, "mandate") && has(v, "issuer_public_key")
    }),
    (Kind::OanpReceipt, |v| {
        (has(v, "artifact") && has(v, "signed_payload") && has(v, "jwks"))
            || (has(v, "session_id") && has(v, "state") && has(v, "arbiter"))
    }),
];

/// What `value` is, or `None`.
pub fn detect(value: &Value) -> Option<Kind> {
    TABLE.iter().find(|(_, test)| test(value)).map(|(k, _)| *k)
}
