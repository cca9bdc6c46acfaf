//! The view a console shows: signed evidence apart from the arbiter's
//! unverified report, every member typed, one malformed member isolated.

use oanp::envelope::Role;
use oanp::receipt::{Member, NotAReceipt, Receipt, SessionState};
use oanp::view::{SuggestedBasis, REPORT_NOTICE};
use oanp::{Mode, ReceiptView, Signer};
use serde_json::json;

use crate::support::{fixture, verify};

#[test]
fn the_dev_receipt_as_a_console_shows_it() {
    let dev = fixture("dev-receipt");
    let view = ReceiptView::build(&dev, &verify(&dev, false)).unwrap();
    assert!(!view.proof);
    assert!(
        view.headline.starts_with("NOT PROOF (mode check)"),
        "{}",
        view.headline
    );
    assert!(matches!(
        view.signer,
        Signer::Pinned {
            mode: Mode::Test,
            ..
        }
    ));
    assert_eq!(view.checks.len(), 7);

    // The signed part: genuine (a pinned key signed it), but not proof, so
    // nothing to act on.
    assert!(view.signed.genuine);
    let signed = view.signed.final_terms.get().unwrap();
    assert_eq!(
        (
            signed.price.amount_minor.get(),
            signed.price.currency.as_str()
        ),
        (41900, "USD")
    );
    assert_eq!(
        signed
            .inclusions
            .iter()
            .map(|i| i.kind.as_str())
            .collect::<Vec<_>>(),
        ["warranty", "cable"]
    );
    let session = view.signed.session.get().unwrap();
    assert_eq!(
        session.chain_head.as_deref(),
        Some("sha256:acb4235b461c7bcdbe2fbe77bd5a3ecb258ec4a72b8dd6de4bd847087ddd7311")
    );
    assert_eq!(session.extra.len(), 0);
    assert_eq!(view.terms_to_act_on(), None);

    // Everything else is the arbiter's report.
    let report = &view.arbiter_report;
    assert_eq!(report.notice, REPORT_NOTICE);
    assert_eq!(report.state, Member::Read(SessionState::Agreed));
    assert_eq!(report.claimed_mode, Member::Read("test".to_owned()));
    let [buyer, merchant] = &report.parties[..] else {
        panic!("two parties")
    };
    assert_eq!((buyer.role, merchant.role), (Role::Buyer, Role::Merchant));
    assert_eq!(
        buyer.party.get().unwrap().agent_id.as_deref(),
        Some("site-fixture")
    );
    let declared = merchant.party.get().unwrap().declared.as_ref().unwrap();
    assert_eq!(declared.currency.as_deref(), Some("USD"));
    assert_eq!(declared.utilities["warranty"].as_str(), "0.3");
    assert_eq!(declared.inclusions.len(), 2);
    assert_eq!(report.rounds.len(), 2);
    let round = report.rounds[1].verdict.get().unwrap();
    assert_eq!(
        (round.verdict.as_deref(), round.outcome.as_deref()),
        (Some("fair"), Some("accepted"))
    );
    assert_eq!(round.fairness_score.as_ref().unwrap().as_str(), "1.0000");
    let suggested = report.rounds[1].suggested_price.as_ref().unwrap();
    assert_eq!(
        (suggested.amount_minor.get(), suggested.basis),
        (41900, SuggestedBasis::Derived)
    );
    let ids: Vec<&str> = report.invariants.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["I1", "I2", "I3", "I4", "I5", "I6", "I7"]);
    assert_eq!(
        report.invariants[5]
            .invariant
            .get()
            .unwrap()
            .name
            .as_deref(),
        Some("Signed final artifact")
    );
    assert_eq!(
        report.signature_report.get().unwrap().status.as_deref(),
        Some("valid")
    );
    assert_eq!(report.stated_final_terms.get().unwrap(), signed);
    assert!(
        view.unknown_members.is_empty(),
        "{:?}",
        view.unknown_members.keys()
    );

    // Allowed test receipts, the same terms become the ones to act on.
    let allowed = ReceiptView::build(&dev, &verify(&dev, true)).unwrap();
    assert_eq!(allowed.terms_to_act_on(), Some(signed));
}

#[test]
fn a_forgery_is_not_genuine_and_its_terms_are_not_to_act_on() {
    for name in ["forged-receipt", "forged-kid-receipt"] {
        let r = fixture(name);
        let view = ReceiptView::build(&r, &verify(&r, true)).unwrap();
        assert!(!view.proof && !view.signed.genuine, "{name}");
        assert_eq!(view.signer, Signer::Unknown);
        assert_eq!(view.terms_to_act_on(), None);
        assert!(
            view.headline.starts_with("NOT PROOF (signer check)"),
            "{}",
            view.headline
        );
        // The report still shows what the forger wrote, labelled as such.
        assert_eq!(
            view.arbiter_report
                .signature_report
                .get()
                .unwrap()
                .status
                .as_deref(),
            Some("valid")
        );
        assert_eq!(view.arbiter_report.notice, REPORT_NOTICE);
    }
}

#[test]
fn the_json_a_console_receives_names_what_vouches_for_each_part() {
    let dev = fixture("dev-receipt");
    let json =
        serde_json::to_value(ReceiptView::build(&dev, &verify(&dev, true)).unwrap()).unwrap();
    assert_eq!(json["proof"], true);
    assert_eq!(json["status"], "valid");
    assert_eq!(
        json["signer"],
        json!({"kind": "pinned", "kid": "ed25519-2f3286feb69fb953", "label": "the Valyzen development arbiter", "mode": "test"})
    );
    assert_eq!(json["signed"]["genuine"], true);
    assert_eq!(
        json["signed"]["final_terms"],
        json!({"state": "read", "value": dev["signed_payload"]["final_terms"]})
    );
    assert_eq!(json["arbiter_report"]["notice"], REPORT_NOTICE);
    assert_eq!(
        json["arbiter_report"]["rounds"][0]["suggested_price"],
        json!({"amount_minor": 41900, "currency": "USD", "basis": "derived"})
    );
    assert_eq!(json["arbiter_report"]["close"], json!({"state": "null"}));
    assert_eq!(
        json["checks"][4],
        json!({"id": "mode", "ok": true, "skipped": false, "detail": json["checks"][4]["detail"]})
    );
}

#[test]
fn one_malformed_member_is_shown_as_such_and_the_rest_is_read() {
    let mut r = fixture("dev-receipt");
    r["verdicts"][0]["fairness_score"] = json!(1.0);
    r["verdicts"][1]["w_minor"] = json!(28000);
    r["verdicts"][1]["t_target_minor"] = json!(520000);
    r["parties"] = json!("both of them");
    r["invariants"].as_object_mut().unwrap().remove("I3");
    r["invariants"]["I8"] = json!({"name": "Something new", "status": "held"});
    r["extension"] = json!({"<script>": "data, not markup"});
    r["final_terms"]["price"]["amount_minor"] = json!(419.99);
    let view = ReceiptView::build(&r, &verify(&r, true)).unwrap();
    let report = &view.arbiter_report;

    match &report.rounds[0].verdict {
        Member::Unreadable { raw, reason } => {
            assert_eq!(raw["fairness_score"], 1.0);
            assert!(reason.contains("travel as strings"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let suggested = report.rounds[1].suggested_price.as_ref().unwrap();
    assert_eq!(suggested.amount_minor.get(), 548000, "t_target + w");
    assert!(
        matches!(&report.parties[0].party, Member::Unreadable { reason, .. } if reason == "not an object")
    );
    assert_eq!(report.invariants[2].id, "I3");
    assert_eq!(report.invariants[2].invariant, Member::Absent);
    assert_eq!(report.invariants[7].id, "I8");
    assert!(
        matches!(&report.stated_final_terms, Member::Unreadable { reason, .. } if reason.contains("written as a float"))
    );
    assert_eq!(
        view.unknown_members["extension"],
        json!({"<script>": "data, not markup"})
    );
    // The signed terms are untouched and still read.
    assert_eq!(
        view.signed
            .final_terms
            .get()
            .unwrap()
            .price
            .amount_minor
            .get(),
        41900
    );
    assert!(!view.proof, "the stated terms differ from the signed ones");
}

#[test]
fn a_receipt_is_an_object() {
    assert_eq!(Receipt::read(&json!([1])).unwrap_err(), NotAReceipt);
    assert_eq!(NotAReceipt.to_string(), "a receipt is a JSON object");
    let r = Receipt::read(&json!({"session_id": 7, "state": "paused", "close": null})).unwrap();
    assert!(matches!(r.session_id, Member::Unreadable { .. }));
    assert_eq!(
        r.state,
        Member::Read(SessionState::Other("paused".to_owned()))
    );
    assert_eq!(r.close, Member::Null);
    assert_eq!(r.verdicts, Member::Absent);
}
