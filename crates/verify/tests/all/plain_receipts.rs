//! A person's decision on plain terms through the binary: a Concordia
//! ApprovalReceipt over the host's signed entry of the terms verifies with
//! the entry as its offer, and fails at `offer_hash` when one price in the
//! entry is changed.

use concordia::approval_receipt::receipt::{
    build_receipt_referencing, sign_receipt, Amount, Decision, ReceiptDraft,
};
use serde_json::json;

use super::cli::{run, stdout};

#[test]
fn a_receipt_on_plain_terms_verifies_against_the_hosts_entry_and_not_a_changed_one() {
    let dir = tempfile::tempdir().unwrap();
    let host = ed25519_dalek::SigningKey::generate(&mut rand_core::OsRng);
    let terms = plain::read_terms(&json!({
        "counterparty": {"name": "Contoso Ltd", "id": "contoso.example"},
        "currency": "USD",
        "line_items": [{"description": "Industrial sensor", "sku": "SEN-200", "quantity": "2000", "unit_price": "1.25"}],
    }))
    .unwrap();
    let mut entry = plain::entry::terms_entry(
        plain::entry::Place {
            session_id: "po-1",
            seq: 1,
            prev_hash: plain::GENESIS_HASH,
            at: "2026-05-10T09:00:00Z",
        },
        plain::entry::AgentRef {
            id: "gate_1",
            name: "Purchasing assistant",
        },
        "po-1",
        None,
        &terms.value,
        Some("Cheapest of three quotes."),
    );
    plain::entry::sign(&mut entry, &host);
    let person = ed25519_dalek::SigningKey::generate(&mut rand_core::OsRng);
    let issued = concordia::approval_receipt::datetime::parse("2026-05-10T10:00:00Z").unwrap();
    let draft = ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at: issued,
        expires_at: issued + time::Duration::hours(1),
        decision: Decision::Approve,
        offer_message: entry.clone(),
        amount: terms.amount_text().parse::<Amount>().unwrap(),
        threshold_crossed: "1000.00 USD".parse::<Amount>().unwrap(),
        session_id: "po-1".into(),
        role: Some("finance".into()),
        on_behalf_of: None,
    };
    let receipt = sign_receipt(
        build_receipt_referencing(
            &draft,
            &person.verifying_key(),
            "urn:countersign:plain:po-1",
        )
        .unwrap(),
        &person,
    )
    .unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(
        &good,
        json!({"receipt": receipt, "offer": entry}).to_string(),
    )
    .unwrap();
    let out = run(&[good.to_str().unwrap(), "--now", "2026-05-10T10:30:00Z"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    let mut changed = entry.clone();
    changed["terms"]["line_items"][0]["unit_price"] = json!("1.20");
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        json!({"receipt": receipt, "offer": changed}).to_string(),
    )
    .unwrap();
    let out = run(&[bad.to_str().unwrap(), "--now", "2026-05-10T10:30:00Z"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("offer_hash"), "{}", stdout(&out));
}
