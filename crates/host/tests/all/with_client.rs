//! Interoperability with the typed client (crates/client), which
//! verifies the chain after every append and cross-checks the log's buyer
//! key against discovery: a negotiation from open to a two-approver accept.

use crate::common;

use anp::api::Target;
use anp::EventKind;
use common::*;
use countersign_client::{AgentClient, ApproverClient};
use countersign_host_api::approver::DecisionOutcome;

#[tokio::test]
async fn the_typed_clients_negotiate_to_a_two_approver_accept() {
    let t = start(roomy_limits()).await;
    let (vendor, approvers, session, offer_hash) = two_approvers(&t).await;

    let summary = approvers[0].0.summary().await.unwrap();
    let s = summary.sessions.iter().find(|s| s.id == session).unwrap();
    assert_eq!(s.event_count, 3);
    let inbound = s
        .pending
        .iter()
        .find(|p| p.event_hash == offer_hash)
        .unwrap();
    assert_eq!(inbound.approvals_required, 2);

    let (ada, ada_email) = &approvers[0];
    let first = ada
        .decide(&session, &ada.approve_request(&offer_hash, ada_email))
        .await
        .unwrap();
    assert_eq!(first.outcome, DecisionOutcome::AwaitingApprovals);
    let (bob, bob_email) = &approvers[1];
    let second = bob
        .decide(&session, &bob.approve_request(&offer_hash, bob_email))
        .await
        .unwrap();
    assert_eq!(
        second.outcome,
        DecisionOutcome::Appended,
        "{}",
        second.detail
    );

    // the vendor's client re-verifies the extended chain from its pin
    let log = vendor.log(&session, None).await.unwrap();
    assert_eq!(log.session.status, "accepted");
    let accept = log.events.last().unwrap();
    assert_eq!(accept.kind, EventKind::Accept);
    let payload = anp::payload::parse_payload(EventKind::Accept, &accept.payload).unwrap();
    let anp::payload::Payload::Accept(accept_payload) = payload else {
        panic!("not an accept")
    };
    let wk = approvers[0].0.keys().await.unwrap();
    let mut all = vec![accept_payload.approval.clone().unwrap()];
    all.extend(accept_payload.approvals.clone().unwrap_or_default());
    assert_eq!(all.len(), 2);
    for approval in &all {
        let published = wk
            .platform_keys
            .iter()
            .find(|k| k.approved_by.as_deref() == Some(approval.approved_by.as_str()))
            .unwrap();
        let key = anp::keys::parse_public_key(&published.public_key).unwrap();
        anp::approval::verify_approval(approval, &offer_hash, &key).unwrap();
    }
    t.running.shutdown().await;
}

/// A vendor's client with an offer open in a sandbox session, and two
/// approvers' clients of the org that decides on it (each enrolment checked
/// against the host's platform key): the vendor, the approvers, the session
/// and the offer's hash.
async fn two_approvers(
    t: &TestHost,
) -> (
    AgentClient,
    Vec<(ApproverClient, &'static str)>,
    String,
    String,
) {
    let base = t.running.base_url();
    let vendor_key = anp::keys::generate_signing_key();
    let reg = AgentClient::register(
        &base,
        &vendor_key,
        "Contoso Seller Agent",
        "Contoso",
        "sales@contoso.example",
    )
    .await
    .unwrap();
    let vendor = AgentClient::new(&base, vendor_key, &reg.agent_id).unwrap();
    let opened = vendor
        .open_session(Target::Sandbox { sandbox: true }, vendor_envelope())
        .await
        .unwrap();
    let session = opened.session_id.clone();
    let doc = vendor
        .submit(&session, EventKind::Offer, offer(1200, FAR_FUTURE))
        .await
        .unwrap();
    let offer_hash = doc.events.last().unwrap().event_hash.clone();
    let mut approvers = Vec::new();
    for (name, email) in [
        ("Ada", "ada@fabrikam.example"),
        ("Bob", "bob@fabrikam.example"),
    ] {
        let code = t
            .host()
            .enroll_code(countersign_host::SANDBOX_HANDLE, name, email)
            .await
            .unwrap()
            .code;
        let key = anp::keys::generate_signing_key();
        let enrolled = ApproverClient::enroll(&base, &code, name, email, &key)
            .await
            .unwrap();
        assert_eq!(
            enrolled.platform_fingerprint,
            t.host().platform_fingerprint()
        );
        approvers.push((
            ApproverClient::new(&base, key, &enrolled.approver_id).unwrap(),
            email,
        ));
    }
    (vendor, approvers, session, offer_hash)
}

#[tokio::test]
async fn a_console_waiting_for_a_change_hears_of_another_consoles_decision_at_once() {
    use countersign_client::SummaryFetch;
    let t = start(roomy_limits()).await;
    let (_vendor, approvers, session, offer_hash) = two_approvers(&t).await;
    let (ada, _) = &approvers[0];
    let (bob, bob_email) = &approvers[1];
    let SummaryFetch::Changed {
        etag: Some(tag), ..
    } = ada.summary_since(None).await.unwrap()
    else {
        panic!("the first summary carries a tag")
    };
    let (heard, decided) = tokio::join!(ada.summary_waiting(&tag, 90), async {
        t.until_waiting(1).await;
        bob.decide(&session, &bob.approve_request(&offer_hash, bob_email))
            .await
            .unwrap()
    });
    assert_eq!(decided.outcome, DecisionOutcome::AwaitingApprovals);
    // Without the wake-up Ada's request would wait out its 90 s: Unchanged.
    let SummaryFetch::Changed { summary, .. } = heard.unwrap() else {
        panic!("Bob's approval did not reach Ada's waiting console")
    };
    let s = summary.sessions.iter().find(|s| s.id == session).unwrap();
    let pending = s
        .pending
        .iter()
        .find(|p| p.event_hash == offer_hash)
        .unwrap();
    assert_eq!(pending.approvals.len(), 1, "Ada sees Bob's approval");
    t.running.shutdown().await;
}
