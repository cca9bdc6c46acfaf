//! The approver client against a real countersign-host on loopback: enrollment,
//! summary, logs, idempotent decisions and a two-approver accept.

use crate::common;

use anp::api::Target;
use anp::payload::AcceptPayload;
use anp::EventKind;
use common::{enroll, new_agent, offer, start_host};
use countersign_client::{default_envelope, ApproverClient, ClientError, SummaryFetch};
use countersign_host_api::approver::DecisionOutcome;

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
    let published = bob.keys().await.unwrap();
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
    host.shutdown().await;
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
        .enroll_code(
            countersign_host::SANDBOX_HANDLE,
            "Cy",
            "cy@fabrikam.example",
        )
        .await
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
    host.shutdown().await;
}

/// A stand-in for a host's summary route that answers with `etag` and, when
/// `honours` is set, `304` to a matching `If-None-Match`; it records every
/// `If-None-Match` it receives.
async fn summary_stand_in(
    etag: String,
    honours: bool,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>,
) {
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = received.clone();
    let app = axum::Router::new().route(
        "/api/console/v1/summary",
        axum::routing::get(move |headers: HeaderMap| {
            let (etag, log) = (etag.clone(), log.clone());
            async move {
                let asked = headers
                    .get("if-none-match")
                    .map(|v| v.to_str().unwrap().to_owned());
                log.lock().unwrap().push(asked.clone());
                if honours && asked.as_deref() == Some(etag.as_str()) {
                    return (StatusCode::NOT_MODIFIED, [("etag", etag)]).into_response();
                }
                let body = r#"{"protocol":"ANP/0.1","sessions":[]}"#;
                (
                    [
                        ("etag", etag),
                        ("content-type", "application/json".to_owned()),
                    ],
                    body,
                )
                    .into_response()
            }
        }),
    );
    (serve(app).await, received)
}

/// Serves `app` on 127.0.0.1:0; returns its URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn stand_in_client(url: &str) -> ApproverClient {
    ApproverClient::new(url, anp::keys::generate_signing_key(), "appr_test").unwrap()
}

#[tokio::test]
async fn a_summary_is_conditional_on_the_tag_the_host_gave() {
    let (url, received) = summary_stand_in("\"v1\"".to_owned(), true).await;
    let client = stand_in_client(&url);
    let SummaryFetch::Changed { summary, etag } = client.summary_since(None).await.unwrap() else {
        panic!("the first summary is fetched in full");
    };
    assert!(summary.sessions.is_empty());
    assert_eq!(etag.as_deref(), Some("\"v1\""));
    let again = client.summary_since(etag.as_deref()).await.unwrap();
    assert!(matches!(again, SummaryFetch::Unchanged), "{again:?}");
    assert_eq!(*received.lock().unwrap(), [None, Some("\"v1\"".to_owned())]);
    // The unconditional call never sends a tag, so a 304 cannot reach it.
    client.summary().await.unwrap();
    assert_eq!(received.lock().unwrap().last(), Some(&None));
}

#[tokio::test]
async fn a_host_that_ignores_the_tag_is_read_in_full_and_a_huge_tag_is_not_kept() {
    let (url, _) = summary_stand_in("\"v1\"".to_owned(), false).await;
    let client = stand_in_client(&url);
    let fetch = client.summary_since(Some("\"v1\"")).await.unwrap();
    assert!(matches!(fetch, SummaryFetch::Changed { .. }), "{fetch:?}");

    let huge = format!("\"{}\"", "x".repeat(4000));
    let (url, received) = summary_stand_in(huge, true).await;
    let client = stand_in_client(&url);
    let SummaryFetch::Changed { etag, .. } = client.summary_since(None).await.unwrap() else {
        panic!("fetched in full");
    };
    assert_eq!(etag, None, "a 4 KB tag would be echoed on every poll");
    assert_eq!(received.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_304_to_a_request_without_a_tag_is_an_error_naming_it() {
    use axum::http::StatusCode;
    let app = axum::Router::new().route(
        "/api/console/v1/summary",
        axum::routing::get(|| async { StatusCode::NOT_MODIFIED }),
    );
    let error = stand_in_client(&serve(app).await)
        .summary_since(None)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ClientError::Http { status: 304, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("304"), "{error}");
}

#[tokio::test]
async fn a_raw_log_keeps_the_hosts_bytes_beside_the_document_they_parse_to() {
    // A stand-in in front of the host, which the host knows as its public
    // URL (what version 2 signatures sent through it name).
    let (host, proxy, proxy_url) = common::start_host_behind_proxy().await;
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
    vendor
        .submit(&sid, EventKind::Offer, offer(1140, 5))
        .await
        .unwrap();
    let ada = enroll(&host, "Ada", "ada@fabrikam.example").await;
    let direct = ada.log(&sid, None).await.unwrap();

    // Through a stand-in host that sends the same document in other bytes.
    proxy.set(common::Mode::PrettyPrint);
    let key = anp::keys::generate_signing_key();
    let code = host
        .host()
        .enroll_code(
            countersign_host::SANDBOX_HANDLE,
            "Bea",
            "bea@fabrikam.example",
        )
        .await
        .unwrap()
        .code;
    let enrolled = ApproverClient::enroll(&proxy_url, &code, "Bea", "bea@fabrikam.example", &key)
        .await
        .unwrap();
    let bea = ApproverClient::new(&proxy_url, key, &enrolled.approver_id).unwrap();
    let raw = bea.log_raw(&sid, Some(1)).await.unwrap();
    let pretty = serde_json::to_vec_pretty(
        &serde_json::from_slice::<serde_json::Value>(&raw.bytes).unwrap(),
    )
    .unwrap();
    assert_eq!(raw.bytes, pretty, "the bytes as the stand-in sent them");
    assert!(
        raw.bytes.windows(3).any(|w| w == b"\n  "),
        "not re-serialized"
    );
    assert_eq!(
        raw.document.events,
        direct.events[1..].to_vec(),
        "the document they parse to"
    );
    assert_eq!(
        raw.request,
        format!("GET /api/console/v1/sessions/{sid}/log?after=1")
    );
    host.shutdown().await;
}
