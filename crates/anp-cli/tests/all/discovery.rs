//! `anp vendor` against a host in each discovery mode (none: 404; rfc003:
//! exactly RFC-003's document; full: ours, which adds `drafts`), as a real binary over loopback
//! HTTP: register, open a sandbox session, offer, counter, decline, close,
//! log, verify and watch all complete, and the output says what could not
//! be cross-checked with the host's published keys.

use countersign_host::config::DiscoveryMode;
use serde_json::Value;

use crate::vendor::{
    anp, fixture_in, json_of, offer_file, pending_draft, registered, sandbox_approver,
};

const LOG_ONLY: &str = "note: buyer signatures were checked against the log's own key, not cross-checked with the host's published keys";
const UNNAMED: &str = "note: approvals are verified against the host's published approval keys, but not matched to the person they name";

/// What each mode's text output must say about keys.
fn expect_notes(mode: DiscoveryMode, text: &str) {
    match mode {
        DiscoveryMode::None => {
            assert!(text.contains(LOG_ONLY), "{text}");
            assert!(text.contains("note: approvals in a buyer accept"), "{text}");
        }
        // The public document names no approver in either mode (no email
        // leaves the host unauthenticated): approvals verify against the
        // org's published keys, unattributed, and the output says so.
        DiscoveryMode::Rfc003 | DiscoveryMode::Full => {
            assert!(text.contains(UNNAMED), "{text}");
            assert!(!text.contains(LOG_ONLY), "{text}");
        }
    }
}

/// What each mode's `--json` output must say about keys.
fn expect_trust(mode: DiscoveryMode, trust: &Value) {
    let sentences = trust["not_cross_checked"].as_array().unwrap();
    match mode {
        DiscoveryMode::None => {
            assert_eq!(trust["buyer_keys_from"], "log", "{trust}");
            assert_eq!(trust["cross_checked"], false);
            assert_eq!(sentences.len(), 2, "{trust}");
            let first = sentences[0].as_str().unwrap();
            assert!(
                first.contains("not cross-checked with the host's published keys"),
                "{trust}"
            );
        }
        DiscoveryMode::Rfc003 | DiscoveryMode::Full => {
            assert_eq!(trust["buyer_keys_from"], "discovery", "{trust}");
            assert_eq!(trust["cross_checked"], false);
            assert_eq!(sentences.len(), 1, "{trust}");
            assert!(
                sentences[0]
                    .as_str()
                    .unwrap()
                    .contains("not matched to the person"),
                "{trust}"
            );
        }
    }
}

fn text_of(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

async fn negotiate_in(mode: DiscoveryMode) {
    let f = fixture_in(mode).await;
    registered(&f).await;
    let home = f.home.path();

    // A person at the buyer, so the sandbox buyer answers offers.
    let ada = sandbox_approver(&f).await;

    let opened = json_of(&anp(home, &["vendor", "open", "--sandbox", "--json"]).await);
    let sid = opened["session_id"].as_str().unwrap().to_owned();
    assert_eq!(opened["head"]["seq"], 2);
    expect_trust(mode, &opened["trust"]);

    let offered = text_of(&anp(home, &["vendor", "offer", &sid, &offer_file(home, 1400)]).await);
    assert!(
        offered.contains("chain verified through event 3"),
        "{offered}"
    );
    expect_notes(mode, &offered);
    let draft = pending_draft(&ada, &sid).await;
    ada.decide(
        &sid,
        &countersign_client::ApproverClient::send_draft_request(&draft),
    )
    .await
    .unwrap();

    let countered = json_of(
        &anp(
            home,
            &["vendor", "counter", &sid, &offer_file(home, 1300), "--json"],
        )
        .await,
    );
    let ours = countered["events"][1]["event_hash"].as_str().unwrap();
    assert_eq!(countered["events"][1]["kind"], "counter_offer");
    expect_trust(mode, &countered["trust"]);
    ada.decide(
        &sid,
        &countersign_client::ApproverClient::counter_request(ours, offer_json(1200)),
    )
    .await
    .unwrap();

    let declined = text_of(
        &anp(
            home,
            &["vendor", "decline", &sid, "--reason", "below our floor"],
        )
        .await,
    );
    assert!(declined.contains("decline: below our floor"), "{declined}");
    assert!(
        declined.contains("chain verified through event 7"),
        "{declined}"
    );
    expect_notes(mode, &declined);
    let closed = json_of(&anp(home, &["vendor", "close", &sid, "--json"]).await);
    assert_eq!(closed["status"], "closed");
    assert_eq!(closed["head"]["seq"], 8);

    // The log, verified by the client, then by `anp verify` on its own.
    let log = anp(home, &["vendor", "log", &sid, "--json"]).await;
    let doc = json_of(&log);
    assert_eq!(doc["events"].as_array().unwrap().len(), 8);
    let file = home.join("log.json");
    std::fs::write(&file, &log.stdout).unwrap();
    let verified = text_of(&anp(home, &["verify", file.to_str().unwrap()]).await);
    assert!(
        verified.contains("verified: 8 events checked"),
        "{verified}"
    );
    expect_trust(mode, &doc["trust"]);
    expect_notes(mode, &text_of(&anp(home, &["vendor", "log", &sid]).await));

    // watch, from a fresh copy of the state pinned before the decline.
    let watch_home = tempfile::tempdir().unwrap();
    for file in ["key.json", "agent.json"] {
        std::fs::copy(home.join(file), watch_home.path().join(file)).unwrap();
    }
    let watched = text_of(
        &anp(
            watch_home.path(),
            &[
                "vendor",
                "watch",
                &sid,
                "--interval",
                "1",
                "--max-polls",
                "3",
            ],
        )
        .await,
    );
    assert!(
        watched.contains("#8 vendor_agent session_close"),
        "{watched}"
    );
    assert!(watched.contains("is closed"), "{watched}");
    expect_notes(mode, &watched);
    let watched = anp(
        watch_home.path(),
        &["vendor", "watch", &sid, "--max-polls", "1", "--json"],
    )
    .await;
    let last: Value = serde_json::from_str(text_of(&watched).lines().last().unwrap()).unwrap();
    assert_eq!(last["ended"], true);
    expect_trust(mode, &last["trust"]);
    f.running.shutdown().await;
}

fn offer_json(unit_price: u32) -> Value {
    let expires = time::OffsetDateTime::now_utc() + time::Duration::days(2);
    serde_json::json!({
        "currency": "USD", "term_months": 24,
        "expires_at": anp::api::format_timestamp(expires),
        "line_items": [{"sku": "CRM-ENT", "description": "CRM seats", "quantity": 100,
                        "unit": "seat/year", "unit_price": unit_price, "currency": "USD"}]
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_negotiation_completes_against_a_host_without_discovery() {
    negotiate_in(DiscoveryMode::None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_negotiation_completes_against_a_host_serving_exactly_rfc003() {
    negotiate_in(DiscoveryMode::Rfc003).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_negotiation_completes_against_a_host_serving_our_full_document() {
    negotiate_in(DiscoveryMode::Full).await;
}
