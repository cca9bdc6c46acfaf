//! Our verdict on every case, as written by hand from RECEIPTS.md (no
//! Python): each check broken alone fails alone, and the fixtures read as
//! published.

use oanp::{CheckId, Mode, Signer, Status};
use serde_json::json;

use crate::support::{fixture, outcomes, verify, TestKey};
use crate::variants::{self, Case, Keys};

/// What we answer for `case`, in the marks `variants::Expect` uses.
pub fn answer(case: &Case) -> (String, bool, String) {
    match case.verify() {
        Ok(v) => {
            let marks = v
                .checks
                .iter()
                .map(|c| match (c.skipped, c.ok) {
                    (true, _) => '-',
                    (false, true) => 'o',
                    (false, false) => 'F',
                })
                .collect();
            (v.status.as_str().to_owned(), v.proof, marks)
        }
        Err(_) => ("unreadable".to_owned(), false, "-------".to_owned()),
    }
}

#[test]
fn every_case_gets_the_answer_written_for_it() {
    let cases = variants::all(&Keys::generate());
    assert!(cases.len() >= 90, "{} cases", cases.len());
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let got = answer(case);
            let want = (
                case.expect.status.to_owned(),
                case.expect.proof,
                case.expect.checks.to_owned(),
            );
            (got != want).then(|| format!("{}: expected {want:?}, got {got:?}", case.name))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} cases:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_checks_are_seven_in_the_published_order_with_a_sentence_each() {
    for case in variants::all(&Keys::generate()) {
        let Ok(v) = case.verify() else {
            continue;
        };
        let ids: Vec<CheckId> = v.checks.iter().map(|c| c.id).collect();
        assert_eq!(ids, CheckId::ALL, "{}", case.name);
        for check in &v.checks {
            assert!(
                check.detail.len() > 20 && check.detail.ends_with('.'),
                "{}: {:?}",
                case.name,
                check.detail
            );
            assert!(!(check.ok && check.skipped), "{}: {:?}", case.name, check);
        }
    }
}

#[test]
fn the_dev_receipt_is_the_development_arbiters_test_receipt() {
    let dev = fixture("dev-receipt");
    let v = verify(&dev, false);
    assert_eq!(v.status, Status::Valid);
    assert!(!v.proof);
    assert_eq!(v.kid.as_deref(), Some("ed25519-2f3286feb69fb953"));
    assert_eq!(
        v.signer,
        Signer::Pinned {
            kid: "ed25519-2f3286feb69fb953".to_owned(),
            label: "the Valyzen development arbiter".to_owned(),
            mode: Mode::Test
        }
    );
    assert_eq!(
        v.signed_terms.as_ref(),
        Some(&dev["signed_payload"]["final_terms"])
    );
    assert_eq!(
        v.signed_session_id.as_deref(),
        Some("01M42N9KCCR8TAGDXTFR3Q8TE8")
    );
    let mode = v.check(CheckId::Mode).unwrap();
    assert!(!mode.ok && mode.detail.contains("test-mode"), "{mode:?}");
    assert!(
        v.headline().starts_with("NOT PROOF (mode check)"),
        "{}",
        v.headline()
    );

    let allowed = verify(&dev, true);
    assert!(allowed.proof);
    assert!(
        allowed.headline().starts_with("Proof for testing only"),
        "{}",
        allowed.headline()
    );
    let chain = allowed.check(CheckId::Chain).unwrap();
    assert!(
        chain.skipped && chain.detail.contains("sha256:6c77e2c67c46ae28"),
        "{chain:?}"
    );
}

#[test]
fn the_forgeries_verify_as_signatures_and_are_not_proof() {
    for (name, kid) in [
        ("forged-receipt", "ephemeral-test"),
        ("forged-kid-receipt", "ed25519-28860223a6941457"),
    ] {
        for allow_test in [false, true] {
            let v = verify(&fixture(name), allow_test);
            assert_eq!(v.status, Status::Valid, "{name}");
            assert!(!v.proof, "{name}");
            assert_eq!(v.signer, Signer::Unknown, "{name}");
            assert_eq!(v.kid.as_deref(), Some(kid));
            let signer = v.check(CheckId::Signer).unwrap();
            assert!(!signer.ok && !signer.skipped, "{name}: {signer:?}");
        }
    }
    let kid = verify(&fixture("forged-kid-receipt"), false);
    assert!(kid.check(CheckId::Signer).unwrap().detail.contains(
        "is the Valyzen arbiter's, but the embedded key is not the pinned one: some other key"
    ));
}

#[test]
fn a_live_pin_holds_the_mode_check_and_a_test_pin_needs_permission() {
    let key = TestKey::generate("k-live");
    let mut r = fixture("dev-receipt");
    key.sign(&mut r);
    let live = crate::support::verify_with(&r, None, false, &[key.pin(Mode::Live)]);
    assert!(live.proof);
    assert_eq!(outcomes(&live)[4], ("mode", true, false));
    let test = crate::support::verify_with(&r, None, false, &[key.pin(Mode::Test)]);
    assert!(!test.proof);
    assert_eq!(outcomes(&test)[4], ("mode", false, false));
    // What the receipt claims about its mode changes nothing.
    r["mode"] = json!("live");
    key.sign(&mut r);
    assert!(!crate::support::verify_with(&r, None, false, &[key.pin(Mode::Test)]).proof);
}

#[test]
fn counterparty_text_in_a_sentence_is_escaped_and_bounded() {
    let key = TestKey::generate(&format!("evil\u{1b}[31m\u{202e}{}", "k".repeat(200)));
    let mut r = fixture("dev-receipt");
    key.sign(&mut r);
    let v = verify(&r, false);
    let detail = &v.check(CheckId::Signer).unwrap().detail;
    assert!(detail.contains("evil\\u{001b}[31m\\u{202e}kkk"), "{detail}");
    assert!(
        !detail.contains('\u{1b}') && !detail.contains('\u{202e}'),
        "{detail}"
    );
    assert!(detail.contains("k…"), "{detail}");
    assert!(detail.len() < 260, "{} bytes", detail.len());
    // The kid itself is kept whole for the caller.
    assert_eq!(v.kid.as_deref(), Some(key.kid.as_str()));
}

#[test]
fn a_proof_with_its_log_checked_says_so_and_one_without_says_not() {
    let key = TestKey::generate("k-chain");
    let (receipt, log) = crate::support::session_for(fixture("dev-receipt"), &key);
    let with_log = crate::support::verify_with(&receipt, Some(&log), false, &[key.pin(Mode::Live)]);
    assert!(with_log.proof);
    assert_eq!(
        with_log.headline(),
        "Proof: signed by the Countersign test arbiter's live key, and every check that ran holds."
    );
    let without = crate::support::verify_with(&receipt, None, false, &[key.pin(Mode::Live)]);
    assert!(without.proof);
    assert!(
        without
            .headline()
            .ends_with("holds. The session log was not checked."),
        "{}",
        without.headline()
    );
}
