//! Settings as data the engine owns: declared with their limits, validated
//! with a sentence, saved across restarts, and applied (poll interval,
//! notifications per kind, who a new connection enrolls as).

use std::sync::Arc;
use std::time::Duration;

use anp::EventKind;
use countersign_engine::*;
use serde_json::{json, Value};

use crate::common::*;

fn value(view: &SettingsView, id: &str) -> Value {
    view.settings
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no setting {id}"))
        .value
        .clone()
}

#[tokio::test]
async fn settings_persist_across_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(test_config(data.path(), "ada@fabrikam.example")).unwrap();
    let view = engine.settings_view().await.unwrap();
    let ids: Vec<&str> = view.settings.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            POLL_INTERVAL,
            NOTIFY_NEW_PROPOSAL,
            NOTIFY_DISPUTE,
            NOTIFY_BREACH,
            NOTIFY_BURST_SUMMARY,
            NOTIFY_EXPIRY_REMINDER,
            APPROVER_NAME,
            APPROVER_EMAIL,
            THEME,
            KEY_IDLE_LOCK,
            KEY_CONFIRM_ABOVE,
            OANP_ALLOW_TEST_RECEIPTS
        ]
    );
    assert_eq!(value(&view, NOTIFY_DISPUTE), json!(true), "on by default");
    assert_eq!(
        value(&view, OANP_ALLOW_TEST_RECEIPTS),
        json!(false),
        "off by default"
    );
    assert_eq!(value(&view, APPROVER_EMAIL), json!("ada@fabrikam.example"));
    assert_eq!(view.data_dir, data.path().display().to_string());
    let key = anp::keys::parse_public_key(&engine.approver_public_key()).unwrap();
    assert_eq!(view.approver.key_fingerprint, anp::keys::fingerprint(&key));

    engine.set_setting(POLL_INTERVAL, json!(30)).await.unwrap();
    engine
        .set_setting(NOTIFY_BURST_SUMMARY, json!(false))
        .await
        .unwrap();
    engine
        .set_setting(APPROVER_NAME, json!("  Ada Lovelace "))
        .await
        .unwrap();
    engine.shutdown().await;
    drop(engine);

    let reopened = Engine::open(test_config(data.path(), "ada@fabrikam.example")).unwrap();
    let view = reopened.settings_view().await.unwrap();
    assert_eq!(value(&view, POLL_INTERVAL), json!(30));
    assert_eq!(value(&view, NOTIFY_BURST_SUMMARY), json!(false));
    assert_eq!(value(&view, NOTIFY_NEW_PROPOSAL), json!(true));
    assert_eq!(
        value(&view, APPROVER_NAME),
        json!("Ada Lovelace"),
        "trimmed"
    );
    assert_eq!(view.approver.name, "Ada Lovelace");
    assert_eq!(reopened.approver_profile().name, "Ada Lovelace");
}

#[tokio::test]
async fn each_wrong_value_is_refused_with_a_sentence_and_nothing_is_saved() {
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(test_config(data.path(), "ada@fabrikam.example")).unwrap();
    let cases = [
        (POLL_INTERVAL, json!(1), "from 2 to 3600"),
        (POLL_INTERVAL, json!(3601), "from 2 to 3600"),
        (POLL_INTERVAL, json!("5"), "whole number"),
        (POLL_INTERVAL, json!(2.5), "whole number"),
        (NOTIFY_DISPUTE, json!("off"), "on or off"),
        (
            APPROVER_EMAIL,
            json!("not an email"),
            "is not an email address",
        ),
        (APPROVER_NAME, json!(""), "1 to 200 characters"),
        (APPROVER_NAME, json!("two\nlines"), "on one line"),
        ("no.such.setting", json!(true), "There is no setting called"),
    ];
    for (id, wrong, says) in cases {
        let err = engine.set_setting(id, wrong.clone()).await.unwrap_err();
        assert_eq!(err.code(), "invalid_input");
        assert!(err.to_string().contains(says), "{id} = {wrong}: {err}");
    }
    let view = engine.settings_view().await.unwrap();
    for setting in &view.settings {
        assert_eq!(setting.value, setting.default, "{} unchanged", setting.id);
    }
}

#[tokio::test]
async fn a_notification_kind_turned_off_is_silent_and_not_replayed_when_back_on() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let recorder = Arc::new(Recorder::default());
    engine.set_notifier(recorder.clone());
    engine
        .set_setting(NOTIFY_NEW_PROPOSAL, json!(false))
        .await
        .unwrap();
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    assert_eq!(engine.inbox().await.unwrap().len(), 1, "it is in the inbox");
    assert!(recorder.pending.lock().unwrap().is_empty(), "but silent");

    engine
        .set_setting(NOTIFY_NEW_PROPOSAL, json!(true))
        .await
        .unwrap();
    engine.refresh().await.unwrap();
    assert!(recorder.pending.lock().unwrap().is_empty(), "no replay");
    submit(&agent, &session, EventKind::Offer, offer(1100, DAY)).await;
    engine.refresh().await.unwrap();
    assert_eq!(recorder.pending.lock().unwrap().len(), 1, "the next one");
    assert!(recorder.pending.lock().unwrap()[0].burst_summary);

    engine
        .set_setting(NOTIFY_BURST_SUMMARY, json!(false))
        .await
        .unwrap();
    submit(&agent, &session, EventKind::Offer, offer(1050, DAY)).await;
    engine.refresh().await.unwrap();
    let notices = recorder.pending.lock().unwrap().clone();
    assert_eq!(notices.len(), 2);
    assert!(
        !notices[1].burst_summary,
        "the shell is told not to summarize"
    );
}

#[tokio::test]
async fn a_dispute_notification_turned_off_is_silent_but_the_session_is_disputed() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let recorder = Arc::new(Recorder::default());
    engine.set_notifier(recorder.clone());
    engine
        .set_setting(NOTIFY_DISPUTE, json!(false))
        .await
        .unwrap();
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.refresh().await.unwrap();
    let host_id = engine.hosts().await.unwrap()[0].host_id.clone();
    world.rewrite_unit_price(&session, 3, 1140, 1400).await;
    let view = engine.audit_session(&host_id, &session).await.unwrap();
    assert_eq!(view.state, Verification::Disputed);
    assert!(recorder.disputed.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_new_connection_enrolls_as_the_approver_settings_say() {
    let world = World::start().await;
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(test_config(data.path(), "ada@fabrikam.example")).unwrap();
    engine
        .set_setting(APPROVER_EMAIL, json!("grace@fabrikam.example"))
        .await
        .unwrap();
    engine
        .set_setting(APPROVER_NAME, json!("Grace Hopper"))
        .await
        .unwrap();
    let state = engine.app_state().await.unwrap();
    assert_eq!(state.approver.email, "grace@fabrikam.example");
    let host = engine
        .connect_host(&world.url, &world.code("grace@fabrikam.example").await)
        .await
        .unwrap();
    assert_eq!(host.approver_email, "grace@fabrikam.example");
    let approvers = world.host().list_approvers().await.unwrap();
    assert!(approvers
        .iter()
        .any(|a| a.email == "grace@fabrikam.example" && a.name == "Grace Hopper"));
}

#[tokio::test]
async fn a_new_poll_interval_applies_at_once() {
    let world = World::start().await;
    // An hour between cycles: only the new setting can bring the offer in.
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    engine.start().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (agent, session) = world.vendor("Northwind").await;
    submit(&agent, &session, EventKind::Offer, offer(1140, DAY)).await;
    engine.set_setting(POLL_INTERVAL, json!(2)).await.unwrap();
    let mut found = false;
    for _ in 0..100 {
        if !engine.inbox().await.unwrap().is_empty() {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    engine.shutdown().await;
    assert!(found, "the poller woke for the new interval");
}

fn setting<'a>(view: &'a SettingsView, id: &str) -> &'a Setting {
    view.settings
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no setting {id}"))
}

#[tokio::test]
async fn the_theme_is_a_choice_of_system_light_or_dark_kept_across_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(test_config(data.path(), "ada@fabrikam.example")).unwrap();
    let view = engine.settings_view().await.unwrap();
    let theme = setting(&view, THEME);
    assert_eq!(
        theme.value,
        json!("system"),
        "the desktop's look by default"
    );
    let SettingKind::Choice { options } = &theme.kind else {
        panic!("the theme is a choice: {:?}", theme.kind);
    };
    let values: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
    assert_eq!(values, ["system", "light", "dark"]);
    let labels: Vec<&str> = options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["System", "Light", "Dark"]);

    let view = engine.set_setting(THEME, json!("dark")).await.unwrap();
    assert_eq!(value(&view, THEME), json!("dark"));
    for wrong in [json!("purple"), json!(true), json!("Dark")] {
        let e = engine.set_setting(THEME, wrong.clone()).await.unwrap_err();
        assert_eq!(e.code(), "invalid_input", "{wrong}");
        assert_eq!(
            e.to_string(),
            "Theme must be one of system, light, dark.",
            "{wrong}"
        );
    }
    engine.shutdown().await;
    drop(engine);
    let engine = Engine::open(test_config(data.path(), "ada@fabrikam.example")).unwrap();
    let view = engine.settings_view().await.unwrap();
    assert_eq!(
        value(&view, THEME),
        json!("dark"),
        "kept, the wrong values not"
    );
}

#[tokio::test]
async fn counting_test_receipts_as_proof_declares_what_turning_it_on_changes() {
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::open(test_config(data.path(), "ada@fabrikam.example")).unwrap();
    let view = engine.settings_view().await.unwrap();
    let test = setting(&view, OANP_ALLOW_TEST_RECEIPTS);
    assert!(
        !test.help.starts_with("Off:"),
        "the help describes the setting, not one state of it: {}",
        test.help
    );
    let confirm = test
        .confirm_on
        .as_deref()
        .expect("turning it on is confirmed");
    assert!(confirm.contains("test-mode key"), "{confirm}");
    assert!(confirm.contains("show as proof"), "{confirm}");
    for other in view
        .settings
        .iter()
        .filter(|s| s.id != OANP_ALLOW_TEST_RECEIPTS)
    {
        assert_eq!(other.confirm_on, None, "{}", other.id);
    }
}
