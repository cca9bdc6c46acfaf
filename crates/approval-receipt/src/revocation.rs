//! RevocationRecords (v0.7, SPEC §9.6.4c): verify one, and find the one that
//! revokes a receipt.

use ed25519_dalek::VerifyingKey;
use serde_json::Value;
use time::OffsetDateTime;

use crate::{datetime, edges, keys, schema};

/// Each check of a revocation record, in RUNNER_CONTRACT's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevocationReport {
    /// `(check name, passed, sentence)` for each check.
    pub checks: Vec<(&'static str, bool, String)>,
}

impl RevocationReport {
    /// True when every check passed.
    pub fn is_valid(&self) -> bool {
        self.checks.iter().all(|c| c.1)
    }
}

/// Verifies a RevocationRecord: schema, a `revokes` reference naming
/// `revoked_artifact_id`, `signature.alg == "EdDSA"`, and the Ed25519
/// signature over the record without `signature` under `issuer`.
pub fn verify_revocation_record(record: &Value, issuer: &VerifyingKey) -> RevocationReport {
    let mut checks = Vec::new();
    let errors = match schema::revocation_record() {
        Some(s) => s.errors(record),
        None => vec!["the vendored revocation_record schema could not be compiled".to_owned()],
    };
    checks.push(("schema", errors.is_empty(), errors.join("; ")));
    let revoked = record.get("revoked_artifact_id");
    let names = record
        .get("references")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|r| {
                r.get("relationship").and_then(Value::as_str) == Some("revokes")
                    && revoked.is_some()
                    && r.get("id") == revoked
            })
        });
    checks.push((
        "revokes_reference",
        names,
        if names {
            String::new()
        } else {
            "no reference with relationship \"revokes\" names revoked_artifact_id".into()
        },
    ));
    let alg_ok = record.pointer("/signature/alg").and_then(Value::as_str) == Some("EdDSA");
    checks.push((
        "algorithm",
        alg_ok,
        if alg_ok {
            String::new()
        } else {
            "signature.alg is not EdDSA".into()
        },
    ));
    let sig_ok = match (
        record.pointer("/signature/value").and_then(Value::as_str),
        edges::canonical(&edges::without_top_level(record, "signature")),
    ) {
        (Some(sig), Ok(preimage)) => keys::verify(issuer, preimage.as_bytes(), sig),
        _ => false,
    };
    checks.push((
        "signature",
        sig_ok,
        if sig_ok {
            String::new()
        } else {
            "the Ed25519 signature does not verify".into()
        },
    ));
    RevocationReport { checks }
}

/// The `revocation_id` of the first record that revokes `receipt` (its own
/// `id` or any referenced `id`) and is effective at or before `now`.
pub fn find_revocation(receipt: &Value, records: &[Value], now: OffsetDateTime) -> Option<String> {
    let mut ids: Vec<&str> = receipt
        .get("id")
        .and_then(Value::as_str)
        .into_iter()
        .collect();
    if let Some(refs) = receipt.get("references").and_then(Value::as_array) {
        ids.extend(
            refs.iter()
                .filter_map(|r| r.get("id").and_then(Value::as_str)),
        );
    }
    records.iter().find_map(|record| {
        let target = record.get("revoked_artifact_id").and_then(Value::as_str)?;
        if !ids.contains(&target) {
            return None;
        }
        let effective = record
            .get("effective_at")
            .and_then(Value::as_str)
            .map(datetime::parse);
        match effective {
            Some(Ok(at)) if at > now => None,
            // An unreadable effective_at is treated as in force (fail closed).
            _ => Some(
                record
                    .get("revocation_id")
                    .and_then(Value::as_str)
                    .unwrap_or("a revocation record without a revocation_id")
                    .to_owned(),
            ),
        }
    })
}
