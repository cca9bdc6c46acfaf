//! What waits on you, at a glance, and notifications a person can act on:
//! the window's title (the page's and the native window's, as the task bar
//! reads it) and the tray icon (the number beside it and its menu's first
//! line, as a panel reads them over D-Bus) count the decisions waiting and
//! follow the inbox without a touch; a new offer's notification carries "Open", "Approve…" and
//! "Decline…" (dunst offers actions); "Approve…" picked in dunst's own
//! context menu opens the app at that offer with the confirmation focused,
//! having signed nothing, and Enter finishes it; "Decline…" opens another
//! offer at its reason.

use std::time::Duration;

use countersign_e2e::{outsider, paths, App, E2eError, Result};
use serde_json::json;
use thirtyfour::prelude::*;

use super::person::{text_of, wait_focused};
use super::{dunstctl, last_hash, opening_burst_announced, Scenario};

/// "Countersign", or "(3) Countersign" with three decisions waiting.
fn title_for(waiting: u64) -> String {
    if waiting == 0 {
        "Countersign".to_owned()
    } else {
        format!("({waiting}) Countersign")
    }
}

/// The engine's count of decisions waiting on the person.
async fn waiting(app: &App) -> Result<u64> {
    Ok(app.invoke("app_state", json!({})).await?["waiting"]
        .as_u64()
        .unwrap_or(0))
}

/// The names of the X windows on the display (the native titles the task
/// bar shows), read with xwininfo.
fn window_names() -> Result<String> {
    let output = std::process::Command::new("xwininfo")
        .args(["-root", "-tree"])
        .output()
        .map_err(|source| E2eError::Io {
            what: "running xwininfo".into(),
            source,
        })?;
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs gdbus on the tests' session bus; `None` when the call fails (the
/// item went away with an earlier app).
fn gdbus(args: &[&str]) -> Result<Option<String>> {
    let output = std::process::Command::new("gdbus")
        .args(["call", "--session"])
        .args(args)
        .output()
        .map_err(|source| E2eError::Io {
            what: "running gdbus".into(),
            source,
        })?;
    Ok(output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned()))
}

/// What the panel's tray shows of the app's icon, as a panel reads it over
/// D-Bus from the item that registered last with tests/tray-host.py: the
/// label beside the icon (`XAyatanaLabel`) and its menu's layout
/// (`com.canonical.dbusmenu`, every item's label in it).
fn tray_shows() -> Result<Option<(String, String)>> {
    let items = std::env::var_os("COUNTERSIGN_E2E_TRAY_ITEMS").ok_or_else(|| {
        E2eError::Missing("COUNTERSIGN_E2E_TRAY_ITEMS is not set: run tests/e2e.sh".into())
    })?;
    let items = std::fs::read_to_string(items).unwrap_or_default();
    let Some((bus, path)) = items.lines().last().and_then(|l| l.split_once(' ')) else {
        return Ok(None);
    };
    let property = |name: &str| {
        gdbus(&[
            "--dest",
            bus,
            "--object-path",
            path,
            "--method",
            "org.freedesktop.DBus.Properties.Get",
            "org.kde.StatusNotifierItem",
            name,
        ])
    };
    // `(<'3'>,)` and `(<objectpath '/org/…/Menu'>,)`: the text between quotes.
    let quoted = |reply: String| reply.split('\'').nth(1).unwrap_or_default().to_owned();
    let (Some(label), Some(menu)) = (property("XAyatanaLabel")?, property("Menu")?) else {
        return Ok(None);
    };
    let menu = quoted(menu);
    let layout = gdbus(&[
        "--dest",
        bus,
        "--object-path",
        &menu,
        "--method",
        "com.canonical.dbusmenu.GetLayout",
        // The arguments after `--`, or gdbus reads `-1` as an option.
        "--",
        "0",
        "-1",
        "[]",
    ])?;
    Ok(layout.map(|layout| (quoted(label), layout)))
}

/// Waits until the page's title, the native window's and the tray icon
/// (its label and its menu's first line) all count `waiting` decisions.
async fn glanced(app: &App, waiting: u64) -> Result<()> {
    titled(app, &title_for(waiting)).await?;
    let (label, line) = match waiting {
        0 => (String::new(), "Nothing waits on you".to_owned()),
        1 => ("1".to_owned(), "1 decision waits on you".to_owned()),
        n => (n.to_string(), format!("{n} decisions wait on you")),
    };
    let in_menu = format!("'label': <'{line}'>");
    let shown = app
        .wait_within(
            &format!("the tray showing {label:?} and {line:?}"),
            Duration::from_secs(20),
            async || {
                Ok(tray_shows()?
                    .filter(|(shown, layout)| *shown == label && layout.contains(&in_menu)))
            },
        )
        .await;
    if shown.is_err() {
        // What the tray showed instead, for the failure's report.
        return Err(E2eError::Missing(format!(
            "the tray does not count {waiting} waiting: it shows {:?}",
            tray_shows()?
        )));
    }
    Ok(())
}

/// Waits until both the page's title and the native window's are `title`.
async fn titled(app: &App, title: &str) -> Result<()> {
    let quoted = format!("\"{title}\"");
    app.wait_within(
        &format!("the window titled {title:?}"),
        Duration::from_secs(20),
        async || {
            let page = app.driver.title().await?;
            Ok((page == title && window_names()?.contains(&quoted)).then_some(()))
        },
    )
    .await
}

/// The Notify call on the bus whose title contains `title`, as dbus-monitor
/// wrote it (its strings, its actions array), once it is there.
async fn notify_call(app: &App, log_path: &std::path::Path, title: &str) -> Result<String> {
    let needle = format!("string \"{title}\"");
    app.wait_for(&format!("a notification titled {title:?}"), async || {
        let log = std::fs::read_to_string(log_path).unwrap_or_default();
        Ok(log
            .split("member=Notify")
            .find(|call| call.contains(&needle))
            .map(str::to_owned))
    })
    .await
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn a_notifications_approve_opens_the_confirmation_and_the_title_counts_what_waits(
) -> Result<()> {
    let log_path = paths::notify_log().ok_or_else(|| {
        E2eError::Missing("COUNTERSIGN_E2E_NOTIFY_LOG is not set: run tests/e2e.sh".into())
    })?;
    let choice = std::env::var_os("COUNTERSIGN_E2E_DUNST_CHOICE")
        .map(std::path::PathBuf::from)
        .ok_or_else(|| {
            E2eError::Missing("COUNTERSIGN_E2E_DUNST_CHOICE is not set: run tests/e2e.sh".into())
        })?;
    let before = std::fs::read_to_string(&log_path).unwrap_or_default().len();
    let s = Scenario::start("Glance").await?;
    opening_burst_announced(&s.app, &log_path, before).await?;
    let start = waiting(&s.app).await?;
    glanced(&s.app, start).await?;

    // A new offer: the title counts it without a touch (the window is
    // wherever the person left it).
    let session = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    let log = s
        .vendor
        .offer(
            &session,
            outsider::offer(2, 1300, "Act from the notification.", &[]),
        )
        .await?;
    let offer_hash = last_hash(&log)?;
    glanced(&s.app, start + 1).await?;
    assert_eq!(waiting(&s.app).await?, start + 1);

    // Its notification carries the three buttons (dunst offers actions).
    let title = format!("ANP offer from {} waits for you", s.vendor_name);
    let call = notify_call(&s.app, &log_path, &title).await?;
    for shown in [
        "string \"open\"",
        "string \"approve\"",
        "string \"Approve…\"",
        "string \"decline\"",
        "string \"Decline…\"",
    ] {
        assert!(call.contains(shown), "no {shown} in {call}");
    }

    // "Approve…" picked in dunst's context menu, as a person would.
    std::fs::write(&choice, format!("#Approve…\n({title}) [\n")).map_err(|source| {
        E2eError::Io {
            what: "writing the dunst choice".into(),
            source,
        }
    })?;
    // dunst's menu lists the notifications on screen: asked again until
    // ours is among them and the app shows the confirmation.
    s.app
        .wait_for("Approve… from dunst's menu", async || {
            dunstctl(&["context"])?;
            tokio::time::sleep(Duration::from_millis(500)).await;
            Ok((s.app.focused().await?.as_deref() == Some("approve-confirm")).then_some(()))
        })
        .await?;
    wait_focused(&s.app, "approve-confirm").await?;
    let _ = std::fs::remove_file(&choice);
    assert_eq!(text_of(&s.app, "offer-counterparty").await?, s.vendor_name);
    assert!(
        s.vendor
            .log(&session)
            .await?
            .events
            .iter()
            .all(|e| e.kind.as_str() != "accept"),
        "nothing is signed from the notification"
    );
    s.app.screenshot("approve-from-notification").await?;

    // One more key finishes it; the count falls back.
    s.app.press(Key::Enter).await?;
    let (log, _) = s.wait_for_event(&session, "accept").await?;
    let discovery = outsider::well_known(&s.host_url, outsider::SANDBOX_ORG).await?;
    outsider::verify_accept(&log, &discovery, &offer_hash)?;
    glanced(&s.app, start).await?;

    // Another vendor's offer, and its notification's "Decline…": the reason
    // field has the keys; the reason typed, Enter, Enter sends the decline.
    let other_name = format!("{} Decline", s.vendor_name);
    let other =
        outsider::Vendor::register(&s.host_url, &other_name, "E2E Negotiation Agent").await?;
    let declined = other.open_sandbox_session(&other_name).await?;
    other
        .offer(
            &declined,
            outsider::offer(1, 900, "Decline me from the notification.", &[]),
        )
        .await?;
    let title = format!("ANP offer from {other_name} waits for you");
    notify_call(&s.app, &log_path, &title).await?;
    std::fs::write(&choice, format!("#Decline…\n({title}) [\n")).map_err(|source| {
        E2eError::Io {
            what: "writing the dunst choice".into(),
            source,
        }
    })?;
    s.app
        .wait_for("Decline… from dunst's menu", async || {
            dunstctl(&["context"])?;
            tokio::time::sleep(Duration::from_millis(500)).await;
            Ok((s.app.focused().await?.as_deref() == Some("decline-reason")).then_some(()))
        })
        .await?;
    let _ = std::fs::remove_file(&choice);
    assert_eq!(text_of(&s.app, "offer-counterparty").await?, other_name);
    assert!(
        other
            .log(&declined)
            .await?
            .events
            .iter()
            .all(|e| e.kind.as_str() != "decline"),
        "nothing is sent from the notification"
    );
    s.app.press("Over our budget this year").await?;
    s.app.press(Key::Enter).await?;
    wait_focused(&s.app, "confirm-send").await?;
    s.app.press(Key::Enter).await?;
    s.app
        .wait_for("the decline on the host", async || {
            let log = other.log(&declined).await?;
            Ok(log
                .events
                .iter()
                .find(|e| e.kind.as_str() == "decline")
                .map(|e| e.payload["reason"].clone()))
        })
        .await
        .map(|reason| assert_eq!(reason, json!("Over our budget this year")))?;
    s.app.quit().await
}
