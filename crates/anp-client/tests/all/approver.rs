//! The approver client against a real anp-host on loopback: enrollment,
//! summary, logs, idempotent decisions and a two-approver accept.

use crate::common;

use anp::api::{DecisionOutcome, Target};
use anp::payload::AcceptPayload;
use anp::EventKind;
use anp_client::{default_envelope, well_known, ApproverClient};
use common::{new_agent, offer, start_host};

async fn enroll(host: &common::TestHost, name: &str, email: &str) -> ApproverClient {
    let code = host
        .host()
        .enroll_code(anp_host::SANDBOX_HANDLE, name, email)
        .unwrap()
        .code;
    let key = anp::keys::generate_signing_key();
    let enrolled = ApproverClient::enroll(&host.url(), &code, name, email, &key)
        .await
        .unwrap();
    ApproverClient::new(&host.url(), key, &enrolled.approver_id).unwrap()
}

#[tokio::test]
async fn two_approvers_accept_a_large_offer_and_repeats_change_nothing() {
    let host = start_host().await;
    let url = host.url();
    let vendor = new_agent(&url, &url).await;
    let sid = vendor
        .open_session(
            Target::Sandbox { sandbox: true },
            default_envelope("Contoso", "Contoso Seller", "sales@contoso.example"),
        )
        .await
        .unwrap()
        .session_id;
    // 500 seats at 1140: 570000 a year, above the sandbox's 250000 two-approver line.
    let log = vendor
        .submit(&sid, EventKind::Offer, offer(1140, 500))
        .await
        .unwrap();
    let offer_hash = log.events[2].event_hash.clone();

    let ada = enroll(&host, "Ada", "ada@fabrikam.example").await;
    let bob = enroll(&host, "Bob", "bob@fabrikam.example").await;
    let pending = ada.summary().await.unwrap().sessions[0]
        .pending
        .iter()
        .find(|p| p.event_hash == offer_hash)
        .cloned()
        .unwrap();
    assert_eq!(pending.approvals_required, 2);

    let first = ada.approve_request(&offer_hash, "ada@fabrikam.example");
    let answer = ada.decide(&sid, &first).await.unwrap();
    assert_eq!(answer.outcome, DecisionOutcome::AwaitingApprovals);
    let repeat = ada.decide(&sid, &first).await.unwrap();
    assert_eq!(repeat.outcome, DecisionOutcome::AwaitingApprovals);
    assert_eq!(
        repeat.log.session.event_count,
        answer.log.session.event_count
    );

    // The same approver twice is not two approvals.
    let again = ada.approve_request(&offer_hash, "ada@fabrikam.example");
    let err = ada.decide(&sid, &again).await.unwrap_err();
    assert!(err.status().is_some_and(|s| s >= 400), "{err}");

    let second = bob.approve_request(&offer_hash, "bob@fabrikam.example");
    let done = bob.decide(&sid, &second).await.unwrap();
    assert_eq!(done.outcome, DecisionOutcome::Appended);

    // The accept carries both approvals, each verifying against the
    // approver's key as published in discovery.
    let tail = bob.log(&sid, Some(3)).await.unwrap();
    let accept = tail
        .events
        .iter()
        .find(|e| e.kind == EventKind::Accept)
        .unwrap();
    let payload = AcceptPayload::parse(&accept.payload).unwrap();
    assert_eq!(payload.in_response_to, offer_hash);
    let published = well_known(&url).await.unwrap();
    let mut verified = Vec::new();
    for approval in payload.all_approvals() {
        let key = published
            .platform_keys
            .iter()
            .find(|k| k.approved_by.as_deref() == Some(approval.approved_by.as_str()))
            .unwrap();
        let key = anp::keys::parse_public_key(&key.public_key).unwrap();
        anp::approval::verify_approval(approval, &offer_hash, &key).unwrap();
        verified.push(approval.approved_by.clone());
    }
    verified.sort();
    assert_eq!(verified, ["ada@fabrikam.example", "bob@fabrikam.example"]);

    // The vendor sees it too, verified against its pin.
    let seen = vendor.log(&sid, Some(3)).await.unwrap();
    assert_eq!(seen.events.last().unwrap().kind, EventKind::Accept);
    host.running.shutdown().await;
}

#[tokio::test]
async fn a_decline_carries_its_reason_and_enrollment_codes_work_once() {
    let host = start_host().await;
    let url = host.url();
    let vendor = new_agent(&url, &url).await;
    let sid = vendor
        .open_session(
            Target::Sandbox { sandbox: true },
            default_envelope("Contoso", "Contoso Seller", "sales@contoso.example"),
        )
        .await
        .unwrap()
        .session_id;
    let offer_hash = vendor
        .submit(&sid, EventKind::Offer, offer(1400, 10))
        .await
        .unwrap()
        .events[2]
        .event_hash
        .clone();
    let ada = enroll(&host, "Ada", "ada@fabrikam.example").await;
    let decline =
        ApproverClient::decline_request(&offer_hash, "Above our benchmark for this volume.");
    let answer = ada.decide(&sid, &decline).await.unwrap();
    assert_eq!(answer.outcome, DecisionOutcome::Appended);
    let last = answer.log.events.last().unwrap();
    assert_eq!(last.kind, EventKind::Decline);
    assert_eq!(
        last.payload["reason"],
        "Above our benchmark for this volume."
    );

    let code = host
        .host()
        .enroll_code(anp_host::SANDBOX_HANDLE, "Cy", "cy@fabrikam.example")
        .unwrap()
        .code;
    let key = anp::keys::generate_signing_key();
    ApproverClient::enroll(&url, &code, "Cy", "cy@fabrikam.example", &key)
        .await
        .unwrap();
    let err = ApproverClient::enroll(&url, &code, "Cy", "cy@fabrikam.example", &key)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("bad_enrollment_code"), "{err}");
    host.running.shutdown().await;
}
