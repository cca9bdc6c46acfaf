//! The suite's frozen schemas (`conformance/vectors/schemas/`), vendored
//! byte for byte and compiled once. `predicate.json`'s reference to
//! `urn:concordia:schema:reference:v0.5` resolves to the frozen
//! `reference.schema.json`, as the contract says; nothing is fetched.

use std::sync::OnceLock;

use serde_json::Value;

use approval_receipt::schema::Schema;

macro_rules! frozen {
    ($file:literal) => {
        include_str!(concat!(
            "../../../../vendor/concordia/conformance/vectors/schemas/",
            $file
        ))
    };
}

const FILES: &[(&str, &str)] = &[
    ("approval_receipt", frozen!("approval_receipt.schema.json")),
    (
        "atomic_activation_proof",
        frozen!("atomic_activation_proof.schema.json"),
    ),
    ("attestation", frozen!("attestation.schema.json")),
    (
        "cascade_decision_record",
        frozen!("cascade_decision_record.schema.json"),
    ),
    ("chain_session", frozen!("chain_session.schema.json")),
    (
        "closure_predicate",
        frozen!("closure_predicate.schema.json"),
    ),
    (
        "conditional_commitment",
        frozen!("conditional_commitment.schema.json"),
    ),
    (
        "fulfillment_attestation",
        frozen!("fulfillment_attestation.schema.json"),
    ),
    ("mandate", frozen!("mandate.schema.json")),
    ("predicate", frozen!("predicate.json")),
    ("receipt_bundle", frozen!("receipt_bundle.schema.json")),
    ("reference", frozen!("reference.schema.json")),
    (
        "revocation_record",
        frozen!("revocation_record.schema.json"),
    ),
    ("unwind_record", frozen!("unwind_record.schema.json")),
];

/// The frozen schema's JSON, by name (`attestation`, `mandate`, …).
pub fn raw(name: &str) -> Option<Value> {
    FILES
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, text)| serde_json::from_str(text).ok())
}

/// The compiled frozen schema, by name. `None` for an unknown name.
pub fn get(name: &str) -> Option<&'static Schema> {
    static CELLS: OnceLock<Vec<(&'static str, Option<Schema>)>> = OnceLock::new();
    let cells = CELLS.get_or_init(|| {
        let reference = raw("reference");
        FILES
            .iter()
            .map(|(n, _)| {
                let schema = raw(n).and_then(|s| {
                    let resources: Vec<&Value> =
                        reference.iter().filter(|_| *n == "predicate").collect();
                    Schema::compile(&s, &resources).ok()
                });
                (*n, schema)
            })
            .collect()
    });
    cells
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, s)| s.as_ref())
}
