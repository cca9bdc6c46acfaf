//! Agent profiles, competence proofs and receipt bundles.

use serde_json::{Map, Value};

use super::super::checks::{self, Checks};
use super::super::vector::Vector;

const PROFILE_FIELDS: [&str; 12] = [
    "type",
    "version",
    "agent_id",
    "name",
    "description",
    "capabilities",
    "negotiation_profile",
    "trust_signals",
    "endpoints",
    "location",
    "ttl",
    "updated_at",
];

/// The keys of each signed nested object of a profile (the SDK's dataclasses).
fn nested_keys(field: &str) -> Option<&'static [&'static str]> {
    Some(match field {
        "capabilities" => &[
            "categories",
            "offer_types",
            "resolution_methods",
            "max_concurrent_sessions",
            "languages",
            "currencies",
        ],
        "negotiation_profile" => &[
            "style",
            "avg_rounds_to_agreement",
            "agreement_rate",
            "avg_session_duration_seconds",
            "concession_pattern",
        ],
        "endpoints" => &["negotiate", "a2a_card", "mcp_manifest"],
        "location" => &["regions", "jurisdictions"],
        _ => return None,
    })
}

const TRUST_KEYS: [&str; 8] = [
    "verascore_did",
    "verascore_tier",
    "verascore_composite",
    "sovereignty",
    "concordia_sessions_completed",
    "attestation_count",
    "concordia_preferred",
    "reputation",
];
const SOVEREIGNTY_KEYS: [&str; 4] = ["L1", "L2", "L3", "L4"];
const ASSERTION_KEYS: [&str; 4] = ["provider", "subject_did", "tier", "composite"];

fn trust_signals(c: &mut Checks, value: &Value) -> Value {
    let Some(obj) = value.as_object() else {
        c.fail("schema", "trust_signals is not an object");
        return value.clone();
    };
    let mut out = Map::new();
    for key in TRUST_KEYS {
        let Some(v) = obj.get(key) else { continue };
        if v.is_null() {
            continue;
        }
        let v = match key {
            "sovereignty" => {
                if let Some(m) = v.as_object() {
                    if let Some(k) = m.keys().find(|k| !SOVEREIGNTY_KEYS.contains(&k.as_str())) {
                        c.fail(
                            "schema",
                            format!("trust_signals.sovereignty has an unknown key {k:?}"),
                        );
                    }
                }
                v.clone()
            }
            "reputation" => match v.as_array() {
                Some(items) => Value::Array(
                    items
                        .iter()
                        .map(|a| match a.as_object() {
                            Some(m) => Value::Object(
                                m.iter()
                                    .filter(|(k, x)| {
                                        ASSERTION_KEYS.contains(&k.as_str()) && !x.is_null()
                                    })
                                    .map(|(k, x)| (k.clone(), x.clone()))
                                    .collect(),
                            ),
                            None => a.clone(),
                        })
                        .collect(),
                ),
                None => v.clone(),
            },
            _ => v.clone(),
        };
        out.insert(key.to_owned(), v);
    }
    Value::Object(out)
}

pub fn agent_profile(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    let fields: Option<Vec<&str>> = v
        .context
        .get("canonical_fields")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect());
    c.check(
        "schema",
        fields.as_deref() == Some(PROFILE_FIELDS.as_slice()),
        || "context.canonical_fields is not the exact signed field list".into(),
    );
    let Some(obj) = input.as_object() else {
        c.fail("schema", "the profile is not an object");
        return;
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !PROFILE_FIELDS.contains(&k.as_str()) && *k != "signature" && *k != "verified")
    {
        c.fail("schema", format!("unknown top-level key {k:?}"));
    }
    let mut canonical = Map::new();
    for field in PROFILE_FIELDS {
        let Some(value) = obj.get(field) else {
            c.fail("schema", format!("the signed field {field} is missing"));
            continue;
        };
        let value = if field == "trust_signals" {
            trust_signals(c, value)
        } else {
            if let (Some(known), Some(m)) = (nested_keys(field), value.as_object()) {
                if let Some(k) = m.keys().find(|k| !known.contains(&k.as_str())) {
                    c.fail("schema", format!("{field} has an unknown key {k:?}"));
                }
            }
            value.clone()
        };
        canonical.insert(field.to_owned(), value);
    }
    let preimage = checks::canonical(c, &Value::Object(canonical));
    checks::optional_digest(c, &v.context, preimage.as_deref());
    let key = checks::key_at(c, v.context.get("public_key_b64url"), "the profile signer");
    checks::signature(
        c,
        key.as_ref(),
        preimage.as_deref(),
        input.get("signature"),
        "the profile",
    );
}

fn merkle_ok(root: &str, attestation_id: &str, proof: &Value) -> bool {
    if root.is_empty() {
        return false;
    }
    let mut current = jcs::sha256_hex(attestation_id.as_bytes());
    let mut index = match proof.get("index") {
        None => 0,
        Some(i) => match i.as_u64() {
            Some(i) => i,
            None => return false,
        },
    };
    let siblings = match proof.get("proof") {
        None => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return false,
    };
    for s in siblings {
        let Some(s) = s.as_str() else { return false };
        let joined = if index % 2 == 0 {
            format!("{current}{s}")
        } else {
            format!("{s}{current}")
        };
        current = jcs::sha256_hex(joined.as_bytes());
        index /= 2;
    }
    current == root
}

pub fn competence_proof(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    for name in [
        "proof_id",
        "agent_id",
        "created_at",
        "claims",
        "attestation_merkle_root",
        "attestation_count",
        "merkle_proofs",
        "revealed_attestations",
        "agent_signature",
    ] {
        c.check("schema", input.get(name).is_some(), || {
            format!("the required field {name} is missing")
        });
    }
    let total = input.pointer("/claims/total_negotiations");
    c.check(
        "binding",
        total.is_some() && total == input.get("attestation_count"),
        || "claims.total_negotiations is not attestation_count".into(),
    );
    let root = input
        .get("attestation_merkle_root")
        .and_then(Value::as_str)
        .unwrap_or("");
    let proofs = input
        .get("merkle_proofs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    match input.get("revealed_attestations").and_then(Value::as_array) {
        Some(revealed) => {
            for (i, att) in revealed.iter().enumerate() {
                let id = att.get("attestation_id").and_then(Value::as_str);
                let proof = proofs.iter().find(|p| {
                    id.is_some() && p.get("attestation_id").and_then(Value::as_str) == id
                });
                match (id, proof) {
                    (Some(id), Some(p)) => {
                        c.check("binding", merkle_ok(root, id, p), || format!("revealed attestation {i}'s inclusion proof does not reach the root"));
                    }
                    _ => c.fail(
                        "binding",
                        format!("revealed attestation {i} has no Merkle proof"),
                    ),
                }
            }
        }
        None => c.fail("schema", "revealed_attestations is not an array"),
    }
    checks::signed_preimage(
        c,
        v,
        &["agent_signature", "concordia_competence_proof"],
        "agent_signature",
        "public_key_b64url",
        "the proof",
    );
}

pub fn receipt_bundle(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    checks::schema(c, "receipt_bundle", input);
    checks::signed_preimage(
        c,
        v,
        &["agent_signature", "concordia_receipt_bundle"],
        "agent_signature",
        "public_key_b64url",
        "the bundle",
    );
}
