//! The vendor agent client against a real countersign-host on loopback.

use crate::common;

use anp::api::Target;
use anp::{Actor, ChainHead, EventKind};
use common::{new_agent, offer, start_host, Mode, Proxy};
use countersign_client::{default_envelope, AgentClient, ApproverClient, ClientError};
use serde_json::json;

fn sandbox() -> Target {
    Target::Sandbox { sandbox: true }
}

fn envelope() -> serde_json::Value {
    default_envelope("Contoso", "Contoso Seller", "sales@contoso.example")
}

#[tokio::test]
async fn a_full_sandbox_negotiation_verifies_after_every_append() {
    let host = start_host().await;
    let url = host.url();

    // Registration is idempotent per key.
    let key = anp::keys::generate_signing_key();
    let first = AgentClient::register(
        &url,
        &key,
        "Contoso Seller",
        "Contoso",
        "sales@contoso.example",
    )
    .await
    .unwrap();
    let again = AgentClient::register(
        &url,
        &key,
        "Contoso Seller",
        "Contoso",
        "sales@contoso.example",
    )
    .await
    .unwrap();
    assert_eq!(first.agent_id, again.agent_id);
    assert_eq!(
        first.fingerprint,
        anp::keys::fingerprint(&key.verifying_key())
    );
    assert_eq!(first.status, anp::api::AgentStatus::Sandbox);
    let vendor = AgentClient::new(&url, key, &first.agent_id).unwrap();

    // Open: events 1 and 2, verified and pinned.
    let opened = vendor.open_session(sandbox(), envelope()).await.unwrap();
    let sid = opened.session_id.clone();
    assert_eq!(opened.log.events.len(), 2);
    assert_eq!(opened.buyer_envelope["party"], json!("Fabrikam Industries"));
    assert_eq!(vendor.pin(&sid).unwrap().seq, 2);

    // Offer: our signed event is event 3, and the pin moves to it.
    let after_offer = vendor
        .submit(&sid, EventKind::Offer, offer(1400, 500))
        .await
        .unwrap();
    let ours = &after_offer.events[2];
    assert_eq!(
        (ours.seq, ours.actor, ours.kind),
        (3, Actor::VendorAgent, EventKind::Offer)
    );
    assert_eq!(ours.signer.as_deref(), Some(vendor.fingerprint().as_str()));
    assert_eq!(vendor.pin(&sid).unwrap().event_hash, ours.event_hash);

    // The scripted buyer drafts a counter-offer; a person sends it.
    let code = host
        .host()
        .enroll_code(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await
        .unwrap()
        .code;
    let approver_key = anp::keys::generate_signing_key();
    let enrolled =
        ApproverClient::enroll(&url, &code, "Ada", "ada@fabrikam.example", &approver_key)
            .await
            .unwrap();
    let approver = ApproverClient::new(&url, approver_key, &enrolled.approver_id).unwrap();
    let summary = approver.summary().await.unwrap();
    let session = summary.sessions.iter().find(|s| s.id == sid).unwrap();
    assert_eq!(session.event_count, 3);
    let draft = session
        .pending
        .iter()
        .find(|p| p.event_hash.starts_with("draft:"))
        .expect("the scripted buyer drafts a counter-offer");
    let sent = approver
        .decide(&sid, &ApproverClient::send_draft_request(&draft.event_hash))
        .await
        .unwrap();
    assert_eq!(
        sent.outcome,
        countersign_host_api::approver::DecisionOutcome::Appended
    );

    // The vendor sees the buyer's counter, verified against its pin, with
    // the platform key from discovery.
    let news = vendor.log(&sid, Some(3)).await.unwrap();
    assert_eq!(news.events.len(), 1);
    let counter = &news.events[0];
    assert_eq!(
        (counter.seq, counter.actor, counter.kind),
        (4, Actor::Buyer, EventKind::CounterOffer)
    );
    assert_eq!(
        counter.signer.as_deref(),
        Some(enrolled.platform_fingerprint.as_str())
    );
    let price = counter.payload["line_items"][0]["unit_price"]
        .as_f64()
        .unwrap();
    assert!(price < 1400.0, "the buyer counters lower, got {price}");

    // The vendor accepts the buyer's counter (RFC-001, no approval needed).
    let accepted = vendor
        .submit(
            &sid,
            EventKind::Accept,
            json!({ "in_response_to": counter.event_hash }),
        )
        .await
        .unwrap();
    assert_eq!(accepted.session.status, "accepted");
    assert_eq!(vendor.pin(&sid).unwrap().seq, 5);
    let status = vendor.status(&sid).await.unwrap();
    assert_eq!(status.session.event_count, 5);
    assert_eq!(
        status.session.chain_head,
        vendor.pin(&sid).unwrap().event_hash
    );

    // Nothing more but messages and close after acceptance.
    let refused = vendor
        .submit(&sid, EventKind::Offer, offer(1300, 500))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("session_closed"), "{refused}");
    host.shutdown().await;
}

#[tokio::test]
async fn invalid_payloads_are_refused_before_anything_is_sent() {
    let host = start_host().await;
    let vendor = new_agent(&host.url(), &host.url()).await;
    let sid = vendor
        .open_session(sandbox(), envelope())
        .await
        .unwrap()
        .session_id;

    let mut bad = offer(1400, 500);
    bad["term_months"] = json!(0);
    bad["surprise"] = json!("unknown key");
    match vendor
        .submit(&sid, EventKind::Offer, bad)
        .await
        .unwrap_err()
    {
        ClientError::InvalidPayload {
            kind, violations, ..
        } => {
            assert_eq!(kind, "offer");
            let paths: Vec<&str> = violations.iter().map(|v| v.path.as_str()).collect();
            assert!(paths.contains(&"term_months"), "{paths:?}");
            assert!(paths.contains(&"surprise"), "{paths:?}");
        }
        other => panic!("expected InvalidPayload, got {other}"),
    }

    let mut expired = offer(1400, 500);
    expired["expires_at"] = json!("2020-01-01T00:00:00Z");
    let err = vendor
        .submit(&sid, EventKind::Offer, expired)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already passed"), "{err}");

    let err = vendor
        .submit(
            &sid,
            EventKind::Message,
            json!({ "body": "x".repeat(20_001) }),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::InvalidPayload { .. }), "{err}");

    let mut envelope = envelope();
    envelope["agent"]["declared_ai"] = json!(false);
    let err = vendor.open_session(sandbox(), envelope).await.unwrap_err();
    assert!(matches!(err, ClientError::InvalidPayload { .. }), "{err}");

    // The host's log did not move.
    assert_eq!(vendor.status(&sid).await.unwrap().session.event_count, 2);
    host.shutdown().await;
}

#[tokio::test]
async fn host_refusals_become_typed_errors() {
    let host = start_host().await;
    let url = host.url();
    let vendor = new_agent(&url, &url).await;
    let sid = vendor
        .open_session(sandbox(), envelope())
        .await
        .unwrap()
        .session_id;

    // A counter-offer with no standing offer.
    let err = vendor
        .submit(&sid, EventKind::CounterOffer, offer(1400, 500))
        .await
        .unwrap_err();
    assert_eq!(
        (err.status(), err.code()),
        (Some(409), Some("no_standing_offer")),
        "{err}"
    );

    // Someone else's key under our agent id, and an unknown session: the
    // same uniform refusal.
    let impostor =
        AgentClient::new(&url, anp::keys::generate_signing_key(), vendor.agent_id()).unwrap();
    let a = impostor.status(&sid).await.unwrap_err();
    let b = vendor
        .status("0b5e7a0e-0000-4000-8000-000000000000")
        .await
        .unwrap_err();
    for err in [&a, &b] {
        assert_eq!(
            (err.status(), err.code()),
            (Some(401), Some("unauthorized")),
            "{err}"
        );
    }
    assert_eq!(a.to_string(), b.to_string());

    // A live org handle that does not exist: the same refusal.
    let err = vendor
        .open_session(
            Target::Org {
                org_handle: "anp_org_00000000000000000000000000000000".into(),
            },
            envelope(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("unauthorized"), "{err}");

    // A session id that would change the route is refused locally.
    let err = vendor.log("../../register", None).await.unwrap_err();
    assert!(matches!(err, ClientError::InvalidInput { .. }), "{err}");
    host.shutdown().await;
}

#[tokio::test]
async fn a_tampered_event_is_detected_and_the_pin_is_kept() {
    let host = start_host().await;
    let (proxy, proxy_url) = Proxy::start(&host.url()).await;
    let vendor = new_agent(&host.url(), &proxy_url).await;
    let sid = vendor
        .open_session(sandbox(), envelope())
        .await
        .unwrap()
        .session_id;
    vendor
        .submit(
            &sid,
            EventKind::Message,
            json!({ "body": "Hello from Contoso" }),
        )
        .await
        .unwrap();
    let pinned = vendor.pin(&sid).unwrap();
    assert_eq!(pinned.seq, 3);

    proxy.set(Mode::TamperLastPayload);
    let err = vendor
        .submit(
            &sid,
            EventKind::Message,
            json!({ "body": "Second message" }),
        )
        .await
        .unwrap_err();
    match &err {
        ClientError::ChainBroken(report) => {
            assert_eq!(report.failing[0].seq, 4);
            assert!(report.failing[0].checks.contains(&anp::Check::PayloadHash));
        }
        other => panic!("expected ChainBroken, got {other}"),
    }
    assert!(
        err.to_string().contains("event 4 fails payload_hash"),
        "{err}"
    );
    assert_eq!(
        vendor.pin(&sid),
        Some(pinned.clone()),
        "a broken log never advances the pin"
    );

    // The host's own log is intact: once the proxy behaves, it verifies.
    proxy.set(Mode::Pass);
    let log = vendor.log(&sid, None).await.unwrap();
    assert_eq!(log.events.len(), 4);
    assert_eq!(vendor.pin(&sid).unwrap().seq, 4);
    host.shutdown().await;
}

#[tokio::test]
async fn rewritten_history_is_detected_against_the_pin() {
    let host = start_host().await;
    let (proxy, proxy_url) = Proxy::start(&host.url()).await;
    let vendor = new_agent(&host.url(), &proxy_url).await;
    let sid = vendor
        .open_session(sandbox(), envelope())
        .await
        .unwrap()
        .session_id;
    let pinned = vendor.pin(&sid).unwrap();

    proxy.set(Mode::RewriteHistory);
    let err = vendor
        .submit(&sid, EventKind::Message, json!({ "body": "Hello" }))
        .await
        .unwrap_err();
    match &err {
        ClientError::ChainBroken(report) => {
            let rewrite = report.rewrite.as_ref().expect("reported as a rewrite");
            assert_eq!(rewrite.pinned, pinned);
        }
        other => panic!("expected ChainBroken, got {other}"),
    }
    assert!(err.to_string().contains("history was rewritten"), "{err}");
    assert_eq!(vendor.pin(&sid), Some(pinned));

    host.shutdown().await;
}

#[tokio::test]
async fn a_status_that_contradicts_the_pin_is_a_broken_chain() {
    let host = start_host().await;
    let vendor = new_agent(&host.url(), &host.url()).await;
    let sid = vendor
        .open_session(sandbox(), envelope())
        .await
        .unwrap()
        .session_id;
    vendor.set_pin(
        &sid,
        ChainHead {
            seq: 2,
            event_hash: "ab".repeat(32),
        },
    );
    let err = vendor.status(&sid).await.unwrap_err();
    assert!(matches!(err, ClientError::ChainBroken(_)), "{err}");
    let err = vendor.log(&sid, None).await.unwrap_err();
    assert!(matches!(err, ClientError::ChainBroken(_)), "{err}");
    host.shutdown().await;
}
