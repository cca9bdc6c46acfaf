//! Whole-artifact verification a console or the command line calls:
//! attestations (with their transcript) and mandates. Each runs the
//! conformance profiles' own checks, so there is one implementation of each.

use serde_json::{json, Map, Value};
use time::OffsetDateTime;

use crate::conformance::{judge, Vector, Verdict};
use approval_receipt::datetime;

fn run(profile: &str, record_type: &str, input: Value, context: Map<String, Value>) -> Vec<String> {
    let vector = Vector {
        id: "artifact".into(),
        title: "artifact".into(),
        source_fixture: "artifact".into(),
        record_type: record_type.into(),
        profile: profile.into(),
        input,
        context,
        expected: Verdict::Accept,
        expected_reason_class: None,
    };
    judge(&vector).failures
}

/// Verifies a reputation attestation: its schema, every party's signature,
/// every party's countersignature and, when the transcript is given, the
/// receipt set-binding (`message_count`, `chain_head`) and the transcript's
/// own links and signatures. `keys` maps each agent id to its base64url key.
/// Returns every failing check (`check: what was found`), empty when valid.
pub fn verify_attestation(
    attestation: &Value,
    keys: &Value,
    messages: Option<&Value>,
) -> Vec<String> {
    let parties: Vec<Value> = attestation
        .get("parties")
        .and_then(Value::as_array)
        .map(|p| {
            p.iter()
                .filter_map(|x| x.get("agent_id").cloned())
                .collect()
        })
        .unwrap_or_default();
    let mut context = Map::new();
    context.insert("public_keys_b64url".into(), keys.clone());
    let mut failures = run(
        "attestation-v1",
        "attestation",
        attestation.clone(),
        context.clone(),
    );
    context.insert("countersigners".into(), Value::Array(parties));
    failures.extend(run(
        "attestation-countersign-v1",
        "attestation",
        attestation.clone(),
        context,
    ));
    if let Some(messages) = messages {
        let mut ctx = Map::new();
        ctx.insert("public_keys_b64url".into(), keys.clone());
        failures.extend(run(
            "message-chain-v1",
            "message_chain",
            json!({"messages": messages, "receipt": attestation}),
            ctx,
        ));
    }
    failures.sort();
    failures.dedup();
    failures
}

/// Verifies a mandate at `now`: schema, EdDSA signature under the issuer's
/// key, status, validity window (or sequence / state binding), constraints,
/// and, with a delegation chain, every link; with an `action`, that it lies
/// within the effective constraints. Returns every failing check.
pub fn verify_mandate(
    mandate: &Value,
    issuer_key: &Value,
    now: OffsetDateTime,
    action: Option<&Value>,
    delegation_keys: Option<&Value>,
) -> Vec<String> {
    let mut context = Map::new();
    context.insert("issuer_public_key_b64url".into(), issuer_key.clone());
    context.insert("now".into(), json!(datetime::format_utc(now)));
    if let Some(a) = action {
        context.insert("action".into(), a.clone());
    }
    let delegated = mandate
        .get("delegation_chain")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    let profile = if delegated {
        context.insert(
            "delegation_public_keys_b64url".into(),
            delegation_keys.cloned().unwrap_or(json!({})),
        );
        "delegation-chain-v1"
    } else {
        "mandate-v1"
    };
    run(profile, "mandate", mandate.clone(), context)
}
