//! `pack DIR` through the binary: a pack of one plain-terms session with a
//! person's ApprovalReceipt verifies and names who, as which role, under
//! which threshold; each check fails alone (a changed byte at its record,
//! a role the index claims and the receipt does not sign, a signer that is
//! none of the console's keys); a hostile or broken pack is refused.

use std::path::Path;

use concordia::approval_receipt::keys::public_key_text;
use concordia::approval_receipt::receipt::{
    build_receipt_referencing, sign_receipt, Amount, Decision, ReceiptDraft,
};
use ed25519_dalek::SigningKey;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::cli::{run, stdout};

const DIR: &str = "sessions/0001-plain-po-1";

fn sha256(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// Writes a pack into `root`: the host's signed entry of the terms, a
/// receipt over it signed by `signer`, the index listing `console` as the
/// console's key and claiming `role`.
fn write_pack(root: &Path, signer: &SigningKey, console: &SigningKey, role: &str) {
    let host = SigningKey::generate(&mut rand_core::OsRng);
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
        None,
    );
    plain::entry::sign(&mut entry, &host);
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
            &signer.verifying_key(),
            "urn:countersign:plain:po-1",
        )
        .unwrap(),
        signer,
    )
    .unwrap();
    let record = json!({
        "protocol": "plain", "session_id": "po-1", "messages": [entry],
        "keys": {"host": public_key_text(&host.verifying_key())},
    });
    let decision = json!({
        "decision_id": "dec_1", "action": "approve", "at": "2026-05-10T10:00:00Z",
        "receipt": receipt, "offer": entry,
    });
    let mut files = serde_json::Map::new();
    for (name, value) in [
        ("record.json", record),
        ("host-approvals.json", json!([])),
        ("decisions/dec_1.json", decision),
    ] {
        let path = root.join(DIR).join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes = serde_json::to_vec_pretty(&value).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        files.insert(name.into(), json!(sha256(&bytes)));
    }
    let index = json!({
        "format": "countersign-audit-pack/1",
        "console_keys": [{"public_key": public_key_text(&console.verifying_key())}],
        "sessions": [{
            "dir": DIR, "protocol": "plain", "session_id": "plain:po-1", "files": files,
            "decisions": [{"file": "decisions/dec_1.json", "decision_id": "dec_1", "action": "approve",
                           "at": "2026-05-10T10:00:00Z", "by": "ann@fabrikam.example", "role": role}],
        }],
    });
    std::fs::write(root.join("index.json"), index.to_string()).unwrap();
}

fn json_of(dir: &Path) -> (Option<i32>, Value) {
    let out = run(&["pack", dir.to_str().unwrap(), "--json"]);
    let value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), value)
}

#[test]
fn a_pack_verifies_and_names_who_approved_as_which_role_under_which_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let ann = SigningKey::generate(&mut rand_core::OsRng);
    write_pack(dir.path(), &ann, &ann, "finance");
    let out = run(&["pack", dir.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(": verified (1 sessions, 1 decisions)"),
        "{text}"
    );
    assert!(
        text.contains("dec_1 approve plain:po-1 at 2026-05-10T10:00:00Z: proven, by ann@fabrikam.example (did:key:z"),
        "{text}"
    );
    assert!(
        text.contains(", as finance, under above 1000.00 USD"),
        "{text}"
    );
    let (code, report) = json_of(dir.path());
    assert_eq!(code, Some(0));
    assert_eq!(report["status"], "verified");
    assert_eq!(report["decisions"][0]["status"], "proven");
    assert_eq!(report["decisions"][0]["role"], "finance");
}

#[test]
fn a_changed_byte_fails_at_its_record_and_the_decision_on_it_is_not_proven() {
    let dir = tempfile::tempdir().unwrap();
    let ann = SigningKey::generate(&mut rand_core::OsRng);
    write_pack(dir.path(), &ann, &ann, "finance");
    let record = dir.path().join(DIR).join("record.json");
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, text.replacen("1.25", "1.24", 1)).unwrap();
    let (code, report) = json_of(dir.path());
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["decisions"][0]["status"], "not proven");
    let at_record: Vec<&str> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["at"] == format!("{DIR}/record.json"))
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert_eq!(at_record, ["digest", "signature"], "{report}");
}

#[test]
fn a_role_the_receipt_does_not_sign_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let ann = SigningKey::generate(&mut rand_core::OsRng);
    write_pack(dir.path(), &ann, &ann, "cfo");
    let (code, report) = json_of(dir.path());
    assert_eq!(code, Some(1), "{report}");
    let detail = report["failures"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains(r#"the index says "cfo", the receipt signs "finance""#),
        "{detail}"
    );
    assert_eq!(report["failures"].as_array().unwrap().len(), 1);
}

#[test]
fn a_receipt_signed_by_none_of_the_consoles_keys_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let stranger = SigningKey::generate(&mut rand_core::OsRng);
    let ann = SigningKey::generate(&mut rand_core::OsRng);
    write_pack(dir.path(), &stranger, &ann, "finance");
    let (code, report) = json_of(dir.path());
    assert_eq!(code, Some(1), "{report}");
    let detail = report["failures"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("none of the console keys"), "{detail}");
}

#[test]
fn a_broken_or_hostile_pack_is_refused_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["pack", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("index.json: cannot read it"));
    std::fs::write(dir.path().join("index.json"), "{not json").unwrap();
    let (code, report) = json_of(dir.path());
    assert_eq!(code, Some(2));
    assert!(
        report["unreadable"].as_str().unwrap().contains("not JSON"),
        "{report}"
    );
    std::fs::write(
        dir.path().join("index.json"),
        r#"{"format": "something else"}"#,
    )
    .unwrap();
    let (code, report) = json_of(dir.path());
    assert_eq!(code, Some(2));
    assert!(
        report["unreadable"]
            .as_str()
            .unwrap()
            .contains("countersign-audit-pack/1"),
        "{report}"
    );
    // A folder or a file outside the pack is never read.
    std::fs::write(
        dir.path().join("index.json"),
        json!({"format": "countersign-audit-pack/1", "sessions": [
            {"dir": "../elsewhere", "files": {}},
            {"dir": "sessions/x", "files": {"../../../etc/passwd": "sha256:00", "record.json": "sha256:00"},
             "decisions": [{"file": "../../../etc/passwd", "decision_id": "d"}]},
        ]})
        .to_string(),
    )
    .unwrap();
    let (code, report) = json_of(dir.path());
    assert_eq!(code, Some(1), "{report}");
    let text = report["failures"].to_string();
    assert!(text.contains("a session folder outside the pack"), "{text}");
    assert!(text.contains("a path outside the pack"), "{text}");
    assert!(!text.contains("root:"), "{text}");
    let out = run(&["pack"]);
    assert_eq!(out.status.code(), Some(2));
}
