//! The vendor client against a host in each discovery mode (RFC-003 is a
//! draft, optional for ANP/0.1): none (404), exactly RFC-003's document, and
//! ours with `drafts` (approver keys per org, `?org=`, naming no one). Real host, real HTTP on loopback.

use crate::common;

use std::sync::atomic::Ordering;

use anp::api::Target;
use anp::{Actor, EventKind};
use common::{enroll, new_agent, offer, start_host_in, Mode, Proxy};
use countersign_client::{default_envelope, AgentClient, ApproverClient, ClientError, KeySource};
use countersign_host::config::DiscoveryMode;
use countersign_host_api::approver::DecisionOutcome;
use serde_json::json;

async fn open(vendor: &AgentClient) -> String {
    vendor
        .open_session(
            Target::Sandbox { sandbox: true },
            default_envelope("Contoso", "Contoso Seller", "sales@contoso.example"),
        )
        .await
        .unwrap()
        .session_id
}

/// Offer, buyer counter (a person sends the agent's draft), vendor counter,
/// buyer counter (a person's), vendor decline, close: every step verified.
async fn negotiate(vendor: &AgentClient, ada: &ApproverClient) -> String {
    let sid = open(vendor).await;
    vendor
        .submit(&sid, EventKind::Offer, offer(1400, 10))
        .await
        .unwrap();
    let summary = ada.summary().await.unwrap();
    let draft = summary
        .sessions
        .iter()
        .find(|s| s.id == sid)
        .unwrap()
        .pending
        .iter()
        .find(|p| p.event_hash.starts_with("draft:"))
        .unwrap()
        .event_hash
        .clone();
    let sent = ada
        .decide(&sid, &ApproverClient::send_draft_request(&draft))
        .await
        .unwrap();
    assert_eq!(sent.outcome, DecisionOutcome::Appended);
    let news = vendor.log(&sid, Some(3)).await.unwrap();
    assert_eq!(
        news.events
            .iter()
            .map(|e| (e.actor, e.kind))
            .collect::<Vec<_>>(),
        [(Actor::Buyer, EventKind::CounterOffer)]
    );
    let ours = vendor
        .submit(&sid, EventKind::CounterOffer, offer(1300, 10))
        .await
        .unwrap();
    let countered = ada
        .decide(
            &sid,
            &ApproverClient::counter_request(&ours.events[4].event_hash, offer(1200, 10)),
        )
        .await
        .unwrap();
    assert_eq!(countered.outcome, DecisionOutcome::Appended);
    vendor
        .submit(&sid, EventKind::Decline, json!({ "reason": "too low" }))
        .await
        .unwrap();
    let closed = vendor
        .submit(&sid, EventKind::SessionClose, json!({ "reason": "done" }))
        .await
        .unwrap();
    assert_eq!(closed.session.status, "closed");
    let kinds: Vec<EventKind> = closed.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::SessionOpen,
            EventKind::Envelope,
            EventKind::Offer,
            EventKind::CounterOffer,
            EventKind::CounterOffer,
            EventKind::CounterOffer,
            EventKind::Decline,
            EventKind::SessionClose
        ]
    );
    assert_eq!(vendor.status(&sid).await.unwrap().session.event_count, 8);
    sid
}

/// An offer a person approves: the buyer's accept carries an RFC-002 approval.
async fn accepted(vendor: &AgentClient, ada: &ApproverClient) {
    let sid = open(vendor).await;
    let log = vendor
        .submit(&sid, EventKind::Offer, offer(1400, 10))
        .await
        .unwrap();
    let offer_hash = log.events[2].event_hash.clone();
    let done = ada
        .decide(
            &sid,
            &ada.approve_request(&offer_hash, "ada@fabrikam.example"),
        )
        .await
        .unwrap();
    assert_eq!(done.outcome, DecisionOutcome::Appended);
    let seen = vendor.log(&sid, Some(3)).await.unwrap();
    assert_eq!(seen.events.last().unwrap().kind, EventKind::Accept);
    assert_eq!(seen.session.status, "accepted");
}

#[tokio::test]
async fn a_negotiation_completes_against_every_discovery_mode_and_says_what_was_not_cross_checked()
{
    for mode in [
        DiscoveryMode::None,
        DiscoveryMode::Rfc003,
        DiscoveryMode::Full,
    ] {
        let host = start_host_in(mode).await;
        let url = host.url();
        let ada = enroll(&host, "Ada", "ada@fabrikam.example").await;
        let vendor = new_agent(&url, &url).await;
        negotiate(&vendor, &ada).await;
        accepted(&vendor, &ada).await;

        let check = vendor.trusted_keys().await.unwrap().check();
        match mode {
            DiscoveryMode::None => {
                assert_eq!(check.buyer_keys_from, KeySource::Log);
                assert!(!check.cross_checked);
                assert!(
                    check.not_cross_checked[0]
                        .contains("not cross-checked with the host's published keys"),
                    "{check:?}"
                );
                assert!(
                    check.not_cross_checked[1].contains("approvals"),
                    "{check:?}"
                );
            }
            // The public document names no approver (no email leaves the
            // host unauthenticated) in either mode: approvals verify against
            // the org's published keys (`?org=`), unattributed.
            DiscoveryMode::Rfc003 | DiscoveryMode::Full => {
                assert_eq!(check.buyer_keys_from, KeySource::Discovery);
                assert!(!check.cross_checked);
                assert_eq!(check.not_cross_checked.len(), 1, "{check:?}");
                assert!(
                    check.not_cross_checked[0].contains("no approved_by"),
                    "{check:?}"
                );
            }
        }
        host.shutdown().await;
    }
}

#[tokio::test]
async fn without_discovery_tampering_is_still_caught_and_the_buyer_key_may_not_change() {
    let host = start_host_in(DiscoveryMode::None).await;
    let url = host.url();
    let (proxy, via) = Proxy::start(&url).await;
    let vendor = new_agent(&url, &via).await;
    let sid = open(&vendor).await;

    proxy.set(Mode::TamperLastPayload);
    let err = vendor
        .submit(&sid, EventKind::Message, json!({ "body": "hello" }))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::ChainBroken(_)), "{err}");
    assert_eq!(vendor.pin(&sid).unwrap().seq, 2, "the pin stays");

    proxy.set(Mode::SwapBuyerKey);
    let err = vendor.log(&sid, None).await.unwrap_err();
    assert!(
        matches!(err, ClientError::UntrustedKey(ref m) if m.contains("earlier log named")),
        "{err}"
    );

    // A fresh client whose first log names a key that did not sign it: the
    // key is adopted, and the buyer's signatures fail against it.
    let fresh = new_agent(&url, &via).await;
    let err = fresh
        .open_session(
            Target::Sandbox { sandbox: true },
            default_envelope("Contoso", "Contoso Seller", "sales@contoso.example"),
        )
        .await
        .unwrap_err();
    match err {
        ClientError::ChainBroken(report) => {
            assert_eq!(report.failing[0].checks, [anp::Check::Signature]);
        }
        other => panic!("expected a broken chain, got {other}"),
    }

    proxy.set(Mode::Pass);
    let doc = vendor.log(&sid, None).await.unwrap();
    assert_eq!(doc.events.len(), 3, "the host did append the message");
    host.shutdown().await;
}

#[tokio::test]
async fn the_wrapped_and_the_bare_append_answer_are_both_accepted() {
    let host = start_host_in(DiscoveryMode::Full).await;
    let url = host.url();
    let (proxy, via) = Proxy::start(&url).await;
    let vendor = new_agent(&url, &via).await;
    let sid = open(&vendor).await;

    // Our host answers {log, protocol}, as the reference host does.
    let wrapped = vendor
        .submit(&sid, EventKind::Message, json!({ "body": "wrapped" }))
        .await
        .unwrap();
    assert_eq!(wrapped.events.len(), 3);
    assert_eq!(proxy.changed.load(Ordering::SeqCst), 0);

    // A host written from SPEC §6.3's "returns the updated log" answers bare.
    proxy.set(Mode::UnwrapAppend);
    let bare = vendor
        .submit(&sid, EventKind::Message, json!({ "body": "bare" }))
        .await
        .unwrap();
    assert_eq!(bare.events.len(), 4);
    assert_eq!(
        proxy.changed.load(Ordering::SeqCst),
        1,
        "the proxy unwrapped it"
    );
    assert_eq!(vendor.pin(&sid).unwrap().seq, 4);
    host.shutdown().await;
}
