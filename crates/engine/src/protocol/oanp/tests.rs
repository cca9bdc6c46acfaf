//! The OANP seam on the vendored fixtures (`vendor/oanp/fixtures/`): the
//! development receipt is the development arbiter's test-mode receipt
//! (proof only when test receipts are allowed), the two forgeries are not
//! proof, each for its own reason, and what is signed stays apart from
//! what the arbiter merely reports.

use super::read;
use crate::views::{OanpReceiptView, ReceiptDetail};

const DEV: &[u8] = include_bytes!("../../../../../vendor/oanp/fixtures/dev-receipt.json");
const FORGED: &[u8] = include_bytes!("../../../../../vendor/oanp/fixtures/forged-receipt.json");
const FORGED_KID: &[u8] =
    include_bytes!("../../../../../vendor/oanp/fixtures/forged-kid-receipt.json");

fn oanp(detail: &ReceiptDetail) -> &OanpReceiptView {
    match detail {
        ReceiptDetail::OanpReceipt(v) => v,
    }
}

fn check<'a>(v: &'a OanpReceiptView, id: &str) -> &'a crate::views::OanpCheck {
    v.checks.iter().find(|c| c.id == id).unwrap()
}

#[test]
fn the_development_receipt_is_test_mode_and_not_proof_unless_allowed() {
    let refused = read(DEV, None, false).unwrap();
    assert!(!refused.proof);
    assert!(refused.test_mode);
    assert_eq!(refused.status, "valid");
    let v = oanp(&refused.detail);
    assert_eq!(v.signer.mode.as_deref(), Some("test"));
    assert!(v.signer.pinned);
    assert!(
        v.signed.genuine,
        "the signature is the development arbiter's"
    );
    let mode = check(v, "mode");
    assert!(!mode.ok && !mode.skipped, "{mode:?}");
    assert!(
        refused.headline.starts_with("NOT PROOF (mode check)"),
        "{}",
        refused.headline
    );
    assert_eq!(
        v.checks.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        [
            "header",
            "key",
            "signature",
            "signer",
            "mode",
            "terms",
            "chain"
        ]
    );
    assert!(check(v, "chain").skipped, "no log was given");

    let allowed = read(DEV, None, true).unwrap();
    assert!(allowed.proof);
    assert!(
        allowed.headline.starts_with("Proof for testing only"),
        "{}",
        allowed.headline
    );
    assert!(oanp(&allowed.detail).allow_test);
}

#[test]
fn the_forgeries_are_not_proof_each_for_its_reason() {
    let forged = read(FORGED, None, true).unwrap();
    assert!(!forged.proof);
    let v = oanp(&forged.detail);
    assert_eq!(v.status, "valid", "a self-made key signs validly");
    assert!(!v.signer.pinned);
    assert!(!v.signed.genuine);
    assert!(!check(v, "signer").ok);
    assert!(
        forged.headline.starts_with("NOT PROOF (signer check)"),
        "{}",
        forged.headline
    );

    let kid = read(FORGED_KID, None, true).unwrap();
    assert!(!kid.proof);
    let v = oanp(&kid.detail);
    assert!(!v.signer.pinned);
    assert_eq!(v.signer.kid.as_deref(), Some("ed25519-28860223a6941457"));
    let signer = check(v, "signer");
    assert!(!signer.ok && !signer.skipped, "{signer:?}");
}

#[test]
fn signed_terms_stand_apart_from_the_arbiters_report() {
    let v = read(DEV, None, false).unwrap();
    let v = oanp(&v.detail);
    let terms = v.signed.final_terms.as_ref().unwrap();
    assert_eq!(terms.price.amount_minor, "41900");
    assert_eq!(terms.price.amount.as_ref().unwrap().value, "419.00");
    assert_eq!(terms.price.currency, "USD");
    assert_eq!(
        terms
            .inclusions
            .iter()
            .map(|i| i.kind.as_str())
            .collect::<Vec<_>>(),
        ["warranty", "cable"]
    );
    assert_eq!(
        v.signed.session_id.as_deref(),
        Some("01M42N9KCCR8TAGDXTFR3Q8TE8")
    );
    assert!(v.report.notice.contains("not covered by its signature"));
    assert_eq!(
        v.report
            .invariants
            .iter()
            .map(|i| i.id.as_str())
            .collect::<Vec<_>>(),
        ["I1", "I2", "I3", "I4", "I5", "I6", "I7"]
    );
    assert_eq!(
        v.report.invariants[0].name.as_deref(),
        Some("Bounded rounds")
    );
    assert_eq!(v.report.parties.len(), 2);
    let merchant = &v.report.parties[1];
    assert_eq!(merchant.role, "merchant");
    assert_eq!(merchant.agent_id.as_deref(), Some("ten_sandbox.merchant"));
    assert_eq!(merchant.utilities[0].kind, "cable");
    assert_eq!(merchant.utilities[0].value, "0.3");
    assert_eq!(v.report.rounds.len(), 2);
    let last = &v.report.rounds[1];
    assert_eq!(last.verdict.as_deref(), Some("fair"));
    assert_eq!(last.fairness_score.as_deref(), Some("1.0000"));
    assert_eq!(last.outcome.as_deref(), Some("accepted"));
    // No stated adjustment: target cost plus the inclusions' value (0).
    assert_eq!(last.suggested_price.as_ref().unwrap().amount_minor, "41900");
    assert_eq!(last.suggested_basis.as_deref(), Some("derived"));
    assert_eq!(v.report.claimed_mode.as_deref(), Some("test"));
    assert_eq!(v.report.max_rounds, Some(5));
    assert!(v.report.problems.is_empty(), "{:?}", v.report.problems);
}

#[test]
fn an_edited_price_in_the_stated_terms_fails_terms_and_the_report_still_shows_it() {
    let mut receipt: serde_json::Value = serde_json::from_slice(DEV).unwrap();
    receipt["final_terms"]["price"]["amount_minor"] = serde_json::json!(100);
    receipt["verdicts"] = serde_json::json!("<img src=x onerror=alert(1)>");
    let bytes = serde_json::to_vec(&receipt).unwrap();
    let r = read(&bytes, None, true).unwrap();
    assert!(!r.proof);
    let v = oanp(&r.detail);
    assert!(!check(v, "terms").ok);
    assert_eq!(
        v.signed.final_terms.as_ref().unwrap().price.amount_minor,
        "41900"
    );
    assert_eq!(
        v.report
            .stated_final_terms
            .as_ref()
            .unwrap()
            .price
            .amount_minor,
        "100"
    );
    assert!(v.report.rounds.is_empty());
}

#[test]
fn bytes_that_are_not_a_receipt_are_refused_with_a_sentence() {
    for (bytes, says) in [
        (&b"not json"[..], "The receipt cannot be read"),
        (&b"[1,2]"[..], "The receipt is not a JSON object"),
        (
            &b"{\"n\": 123456789012345678901234567890}"[..],
            "The receipt cannot be read",
        ),
    ] {
        let e = read(bytes, None, false).unwrap_err().to_string();
        assert!(e.starts_with(says), "{e}");
        assert!(e.ends_with("Nothing was filed."), "{e}");
    }
    let e = read(DEV, Some(b"{}"), false).unwrap_err().to_string();
    assert!(e.contains("session log is not a JSON array"), "{e}");
}
