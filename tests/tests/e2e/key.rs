//! The approver key as a person meets it (issue 31): on a first launch it
//! goes into the desktop's secret store (the suite's gnome-keyring), never
//! into a file; the desktop's session locking locks it, and the inbox keeps
//! filling; a decision above the amount the person set asks to unlock, and
//! then goes on to the vendor, signed. Then the person moves to a new key
//! from Settings: every approval signed before still verifies, for anyone,
//! with the old key as the host keeps publishing it (with its end); the
//! next approval is signed with the new key; History names the key that
//! signed each decision. Last, the idle lock engages by itself after the
//! minute the person set.

use std::process::Command;

use countersign_e2e::{outsider, E2eError, Result};
use thirtyfour::prelude::*;

use super::person::{setting, text_of, wait_focused, wait_for_row};
use super::{last_hash, Scenario};

/// What the desktop sends on the session bus when its screen locks.
fn lock_the_session() -> Result<()> {
    let status = Command::new("dbus-send")
        .args([
            "--session",
            "--type=signal",
            "/org/freedesktop/ScreenSaver",
            "org.freedesktop.ScreenSaver.ActiveChanged",
            "boolean:true",
        ])
        .status()
        .map_err(|e| E2eError::Unexpected(format!("dbus-send did not run: {e}")))?;
    if !status.success() {
        return Err(E2eError::Unexpected(format!("dbus-send failed: {status}")));
    }
    Ok(())
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn the_key_lives_in_the_secret_store_locks_with_the_session_and_asks_again_above_the_amount(
) -> Result<()> {
    let s = Scenario::start("Keyholder").await?;
    let dir = s.app.data_dir().to_path_buf();

    // Kept in the secret store: the data directory holds only a reference.
    s.app.click("nav-settings").await?;
    assert_eq!(
        text_of(&s.app, "key-protection").await?,
        "The desktop's secret store"
    );
    assert!(text_of(&s.app, "key-location")
        .await?
        .contains("countersign"));
    assert!(dir.join("approver-key.ref.json").exists());
    assert!(!dir.join("approver-key.json").exists());
    assert!(!dir.join("approver-key.sealed.json").exists());

    // Above 1,000 a decision asks to unlock again (typed as a person does).
    setting(&s.app, "setting-input", "key.confirm_above")
        .await?
        .click()
        .await?;
    s.app.press(Key::Control + "a").await?;
    s.app.press("1000").await?;
    s.app.press(Key::Enter).await?;
    setting(&s.app, "setting-saved", "key.confirm_above").await?;

    // Unlocked, but 11,400 USD is above 1,000: approving asks again.
    let above = offered(&s, 1, "Above the amount.").await?;
    approve_and_unlock(
        &s,
        &above,
        "for 11,400 USD, above your limit",
        "key-asks-confirm",
    )
    .await?;

    // The desktop's session locks: so does the key, and Settings says so.
    s.app.click("nav-settings").await?;
    lock_the_session()?;
    s.app
        .wait_for("the key card to read locked", async || {
            let state = text_of(&s.app, "key-state").await?;
            Ok(state.starts_with("Locked").then_some(()))
        })
        .await?;
    s.app.screenshot("key-locked").await?;

    // Locked, the inbox still fills; approving asks to unlock first.
    let small = offered(&s, 1, "While the session is locked.").await?;
    approve_and_unlock(&s, &small, "key is locked", "key-asks-unlock").await?;

    // Moving to a new key, confirmed in a second step (the secret store is
    // asked again; no passphrase to type).
    s.app.click("nav-settings").await?;
    let old_fp = text_of(&s.app, "approver-fingerprint").await?;
    s.app.click("key-move").await?;
    s.app.click("key-move-confirm").await?;
    let done = s
        .app
        .wait_for("the move to be reported done", async || {
            Ok(match s.app.driver.find(By::Testid("key-move-done")).await {
                Ok(e) => Some(e.text().await?),
                Err(_) => None,
            })
        })
        .await?;
    s.app.screenshot("key-moved").await?;
    let new_fp = s
        .app
        .wait_for("Settings to show the new key", async || {
            let shown = text_of(&s.app, "approver-fingerprint").await?;
            Ok((shown != old_fp).then_some(shown))
        })
        .await?;
    assert!(done.contains(&new_fp[..16]), "{done}");
    let rows = s.app.all("key-list-row").await?;
    assert_eq!(rows.len(), 2, "both keys are listed");
    assert!(rows[0].text().await?.contains("Retired"));
    assert!(rows[1].text().await?.contains("Signs now"));

    // What the old key signed verifies, for an outsider, with the old key
    // as published now (valid until the move); nothing is lost.
    let discovery = outsider::well_known(&s.host_url, outsider::SANDBOX_ORG).await?;
    for (session, hash) in [&above, &small] {
        let log = s.vendor.log(session).await?;
        let verified = outsider::verify_accept(&log, &discovery, hash)?;
        assert_eq!(verified.key_fingerprint, old_fp, "signed by the old key");
    }
    // The next approval is signed with the new key (11,400 USD is above
    // the amount, so it asks again first).
    let after = offered(&s, 1, "After the move.").await?;
    approve_and_unlock(&s, &after, "above your limit", "key-after-move").await?;
    let log = s.vendor.log(&after.0).await?;
    let discovery = outsider::well_known(&s.host_url, outsider::SANDBOX_ORG).await?;
    let verified = outsider::verify_accept(&log, &discovery, &after.1)?;
    assert_eq!(verified.key_fingerprint, new_fp, "signed by the new key");

    // History names the key that signed each decision.
    for (session, fp) in [(&small.0, &old_fp), (&after.0, &new_fp)] {
        s.app.click("nav-history").await?;
        s.app
            .wait_for("the session's history row", async || {
                for row in s.app.all("history-row").await? {
                    if row.attr("data-session").await?.as_deref() == Some(session.as_str()) {
                        return Ok(Some(row));
                    }
                }
                Ok(None)
            })
            .await?
            .click()
            .await?;
        let shown = s
            .app
            .wait_for("the decision's key", async || {
                Ok(match s.app.driver.find(By::Testid("decision-key")).await {
                    Ok(e) => Some(e.text().await?),
                    Err(_) => None,
                })
            })
            .await?;
        let shown: String = shown.split_whitespace().collect();
        assert_eq!(&shown, fp, "History names the key that signed it");
    }
    s.app.screenshot("key-history").await?;

    // The idle lock engages by itself: at one minute without a decision,
    // Settings reads locked without a touch.
    s.app.click("nav-settings").await?;
    setting(&s.app, "setting-input", "key.idle_lock_minutes")
        .await?
        .click()
        .await?;
    s.app.press(Key::Control + "a").await?;
    s.app.press("1").await?;
    s.app.press(Key::Enter).await?;
    setting(&s.app, "setting-saved", "key.idle_lock_minutes").await?;
    assert!(text_of(&s.app, "key-state").await?.starts_with("Unlocked"));
    let idle_from = std::time::Instant::now();
    s.app
        .wait_within(
            "the key to lock after a minute idle",
            std::time::Duration::from_secs(100),
            async || {
                let state = text_of(&s.app, "key-state").await?;
                Ok(state.starts_with("Locked").then_some(()))
            },
        )
        .await?;
    assert!(
        idle_from.elapsed() >= std::time::Duration::from_secs(50),
        "locked before its idle time: {:?}",
        idle_from.elapsed()
    );
    s.app.screenshot("key-idle-locked").await?;
    s.app.quit().await
}

/// An offer of `lines` lines at 1,140 USD on a new sandbox session,
/// waiting in the inbox: (session, offer hash).
async fn offered(s: &Scenario, lines: usize, note: &str) -> Result<(String, String)> {
    let session = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    let log = s
        .vendor
        .offer(&session, outsider::offer(lines, 1140, note, &[]))
        .await?;
    let hash = last_hash(&log)?;
    s.app.click("nav-inbox").await?;
    wait_for_row(&s.app, &s.vendor_name).await?;
    Ok((session, hash))
}

/// Opens the offer, approves it, meets the unlock step (whose sentence
/// holds `asked`), checks nothing reached the vendor, unlocks (the secret
/// store is asked again) and sees the same approval reach the vendor.
async fn approve_and_unlock(
    s: &Scenario,
    offer: &(String, String),
    asked: &str,
    shot: &str,
) -> Result<()> {
    let (session, hash) = offer;
    s.app.click("nav-inbox").await?;
    s.app
        .wait_for("the offer's inbox row", async || {
            for row in s.app.all("inbox-row").await? {
                if row.attr("data-session").await?.as_deref() == Some(session.as_str()) {
                    return Ok(Some(row));
                }
            }
            Ok(None)
        })
        .await?
        .click()
        .await?;
    s.app.testid("offer-view").await?;
    s.app.press("a").await?;
    wait_focused(&s.app, "approve-confirm").await?;
    s.app.press(Key::Enter).await?;
    let why = s
        .app
        .wait_for("the unlock step", async || {
            Ok(match s.app.driver.find(By::Testid("unlock-why")).await {
                Ok(e) => Some(e.text().await?),
                Err(_) => None,
            })
        })
        .await?;
    assert!(why.contains(asked), "{why}");
    s.app.screenshot(shot).await?;
    let untouched = s.vendor.log(session).await?;
    assert!(
        untouched.events.iter().all(|e| e.kind.as_str() != "accept"),
        "nothing was signed before the unlock"
    );
    s.app.click("unlock-confirm").await?;
    let (log, _) = s.wait_for_event(session, "accept").await?;
    let discovery = outsider::well_known(&s.host_url, outsider::SANDBOX_ORG).await?;
    outsider::verify_accept(&log, &discovery, hash)?;
    s.app
        .wait_for("the offer to read approved", async || {
            Ok(
                (text_of(&s.app, "offer-decided").await.ok().as_deref() == Some("Approved"))
                    .then_some(()),
            )
        })
        .await
}
