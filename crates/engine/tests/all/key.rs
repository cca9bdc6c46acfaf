//! The approver key's room, through the engine against a real host: a
//! locked console refuses to sign and the same decision goes through after
//! unlock; the idle lock follows the engine's clock; above the person's
//! amount an approval asks again; and no file the console writes holds the
//! private key.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anp::EventKind;
use countersign_engine::*;
use serde_json::json;
use time::OffsetDateTime;

use crate::common::*;

fn approve(host_id: &str, session: &str, hash: &str) -> DecideRequest {
    DecideRequest {
        host_id: host_id.to_owned(),
        session_id: session.to_owned(),
        in_response_to: hash.to_owned(),
        action: DecideAction::Approve,
        reason: None,
        counter: None,
    }
}

/// Every file under `dir`, with its bytes.
fn every_file(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(every_file(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

/// Fails naming the file when any file under `dir` holds `seed` raw, in
/// base64url or in hex.
pub fn assert_seed_in_no_file(dir: &Path, seed: &[u8; 32]) {
    let forms: Vec<Vec<u8>> = vec![
        seed.to_vec(),
        jcs::b64url::encode(seed).into_bytes(),
        seed.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
            .into_bytes(),
    ];
    let files = every_file(dir);
    assert!(!files.is_empty());
    for (path, bytes) in files {
        for form in &forms {
            assert!(
                !bytes.windows(form.len()).any(|w| w == form.as_slice()),
                "{} holds the approver's private key",
                path.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_console_refuses_to_sign_keeps_polling_and_after_unlock_the_decision_goes_through()
{
    let world = World::start().await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    let recorder = recorded(&engine);
    let status = engine.lock_key();
    assert!(!status.unlocked);
    assert_eq!(status.protection, KeyProtection::Passphrase);

    // Locked: the inbox still fills and notifies.
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap()[0].clone();
    assert_eq!(recorder.pending.lock().unwrap().len(), 1);

    let refused = engine
        .decide(approve(&item.host_id, &session, &item.event_hash))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "locked");
    assert!(refused.to_string().contains("Unlock it"), "{refused}");
    // Nothing was sent: the host's log has no accept.
    let log = agent.log(&session, None).await.unwrap();
    assert!(log.events.iter().all(|e| e.kind != EventKind::Accept));

    // A wrong passphrase leaves it locked.
    let wrong = engine
        .unlock_key(Some("not the passphrase".into()))
        .await
        .unwrap_err();
    assert!(wrong.to_string().contains("does not open"), "{wrong}");
    assert!(!engine.key_status().unlocked);

    engine
        .unlock_key(Some(TEST_PASSPHRASE.into()))
        .await
        .unwrap();
    let result = engine
        .decide(approve(&item.host_id, &session, &item.event_hash))
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended");
    let log = agent.log(&session, None).await.unwrap();
    assert!(log.events.iter().any(|e| e.kind == EventKind::Accept));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idle_lock_fires_by_the_engines_clock_and_above_the_amount_an_approval_asks_again() {
    let world = World::start().await;
    // The engine's clock starts 17 minutes behind the machine's and is
    // moved 17 minutes on: every signature is dated no later than the host's
    // now, which refuses approvals dated in its future.
    let clock = Arc::new(ManualClock::at(
        OffsetDateTime::now_utc() - Duration::from_secs(17 * 60),
    ));
    let given = clock.clone();
    let (_data, engine) = world
        .engine_with("ann@fabrikam.example", move |config| config.clock = given)
        .await;
    engine.set_setting(KEY_IDLE_LOCK, json!(5)).await.unwrap();
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap()[0].clone();

    // Four minutes idle: still unlocked. Six: locked.
    let start = clock.now();
    clock.set(start + Duration::from_secs(4 * 60));
    assert!(engine.key_status().unlocked);
    clock.set(start + Duration::from_secs(9 * 60) + Duration::from_secs(60));
    assert!(!engine.key_status().unlocked);
    let refused = engine
        .decide(approve(&item.host_id, &session, &item.event_hash))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "locked");

    // Above the person's amount (570,000 USD > 100,000), an unlock more
    // than two minutes old asks again.
    engine
        .set_setting(KEY_CONFIRM_ABOVE, json!(100000))
        .await
        .unwrap();
    engine
        .unlock_key(Some(TEST_PASSPHRASE.into()))
        .await
        .unwrap();
    clock.set(clock.now() + Duration::from_secs(3 * 60));
    let asked = engine
        .decide(approve(&item.host_id, &session, &item.event_hash))
        .await
        .unwrap_err();
    assert_eq!(asked.code(), "confirm_again");
    assert!(asked.to_string().contains("570,000 USD"), "{asked}");
    engine
        .unlock_key(Some(TEST_PASSPHRASE.into()))
        .await
        .unwrap();
    let result = engine
        .decide(approve(&item.host_id, &session, &item.event_hash))
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_file_the_console_writes_holds_the_private_key() {
    let world = World::start().await;
    let data = tempfile::tempdir().unwrap();
    // An earlier build's plain key file: moved under the passphrase, removed.
    let key = anp::keys::generate_signing_key();
    std::fs::write(
        data.path().join("approver-key.json"),
        anp::keys::encode_key_file(&key),
    )
    .unwrap();
    let engine = Engine::open(test_config(data.path(), "ann@fabrikam.example")).unwrap();
    assert_eq!(
        engine.approver_public_key(),
        anp::keys::public_key_b64(&key.verifying_key()),
        "the same key, moved"
    );
    assert!(!data.path().join("approver-key.json").exists());
    let status = engine.key_status();
    assert!(status.notice.unwrap().contains("plain file is removed"));
    assert!(
        engine.key_status().notice.is_none(),
        "the move is reported once"
    );

    engine
        .connect_host(&world.url, &world.code("ann@fabrikam.example").await)
        .await
        .unwrap();
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap()[0].clone();
    engine
        .decide(approve(&item.host_id, &session, &item.event_hash))
        .await
        .unwrap();
    engine
        .export_session(&item.host_id, &session, ExportFormat::Json)
        .await
        .unwrap();
    engine
        .export_session(&item.host_id, &session, ExportFormat::Csv)
        .await
        .unwrap();
    engine.shutdown().await;
    drop(engine);
    assert_seed_in_no_file(data.path(), &key.to_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_kept_nowhere_enrolls_nowhere_until_a_passphrase_keeps_it() {
    let world = World::start().await;
    let data = tempfile::tempdir().unwrap();
    // No secret store asked and no passphrase given: the key is only in
    // this run's memory.
    let mut config = test_config(data.path(), "ann@fabrikam.example");
    config.key_passphrase = None;
    let engine = Engine::open(config).unwrap();
    assert_eq!(engine.key_status().protection, KeyProtection::Unsaved);
    assert!(!engine.key_is_kept().unwrap());

    let code = world.code("ann@fabrikam.example").await;
    let refused = engine.connect_host(&world.url, &code).await.unwrap_err();
    assert_eq!(refused.code(), "key_not_kept");
    assert!(
        refused.to_string().contains("Choose a passphrase"),
        "{refused}"
    );
    // Nothing was sent or stored: no host, and the code is still good.
    assert!(engine.hosts().await.unwrap().is_empty());

    engine
        .set_key_passphrase(TEST_PASSPHRASE.into())
        .await
        .unwrap();
    assert!(engine.key_is_kept().unwrap());
    assert_eq!(engine.key_status().protection, KeyProtection::Passphrase);
    engine.connect_host(&world.url, &code).await.unwrap();
    assert_eq!(engine.hosts().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_whose_key_was_revoked_is_told_why_its_decision_is_refused_and_how_to_enroll_again(
) {
    let world = World::start().await;
    let (_data, engine) = world.engine("ann@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap()[0].clone();

    // The host's admin revokes Ann's key (her laptop was lost).
    let ann = world
        .host()
        .list_approvers()
        .await
        .unwrap()
        .into_iter()
        .find(|a| a.email == "ann@fabrikam.example")
        .unwrap();
    world
        .host()
        .revoke_approver(&ann.approver_id)
        .await
        .unwrap();

    let refused = engine
        .decide(approve(&item.host_id, &session, &item.event_hash))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "key_revoked");
    let said = refused.to_string();
    assert!(
        said.contains("revoked by the host's admin") && said.contains("new enrollment code"),
        "{said}"
    );
    let log = agent.log(&session, None).await.unwrap();
    assert!(log.events.iter().all(|e| e.kind != EventKind::Accept));

    // Hosts says the same at the next poll, not "cannot be reached".
    let _ = engine.refresh().await;
    let host = engine.hosts().await.unwrap().remove(0);
    assert!(!host.reachable);
    let shown = host.last_error.unwrap_or_default();
    assert!(
        shown.starts_with("This approver key was revoked"),
        "{shown}"
    );
}
