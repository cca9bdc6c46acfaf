//! The console as a person uses it, keyboard only: approve with Enter and
//! cancel with Escape, the decided state, the next decision one key away,
//! decline and counter without a mouse; mandates in words; numbers and times
//! in the machine's locale and zone (inbox, offer, the notification on the
//! bus); the desktop's dark look; a setting that survives a restart.

use std::time::Duration;

use countersign_e2e::{paths, App, E2eError, Result};
use serde_json::{json, Value};
use thirtyfour::prelude::*;

use super::{last_hash, opening_burst_announced, Scenario};
use countersign_e2e::outsider;

/// Waits (without touching the app) until the vendor's offer is in the
/// inbox: the console polls every 5 seconds by itself.
pub(crate) async fn wait_for_row(app: &App, vendor: &str) -> Result<()> {
    app.wait_for(&format!("an inbox row from {vendor}"), async || {
        for row in app.all("inbox-counterparty").await? {
            if row.text().await? == vendor {
                return Ok(Some(()));
            }
        }
        Ok(None)
    })
    .await
}

/// The selected inbox row's position, and the position of `vendor`'s row,
/// read in one step (-1 for none).
async fn rows(app: &App, vendor: &str) -> Result<(i64, i64)> {
    let found = app
        .script(
            "const rows = [...document.querySelectorAll('[data-testid=inbox-row]')];\
             const name = r => r.querySelector('[data-testid=inbox-counterparty]').textContent;\
             return [rows.findIndex(r => r.dataset.selected === 'true'),\
                     rows.findIndex(r => name(r) === arguments[0])];",
            vec![json!(vendor)],
        )
        .await?;
    Ok((
        found[0].as_i64().unwrap_or(-1),
        found[1].as_i64().unwrap_or(-1),
    ))
}

/// Moves the selection onto `vendor`'s inbox row with j and k, as a person
/// scanning the list does; after each press it waits for the selection to
/// move, so a key the page has not handled yet is never read as handled.
pub(crate) async fn select_with_keys(app: &App, vendor: &str) -> Result<()> {
    for _ in 0..30 {
        let (selected, target) = rows(app, vendor).await?;
        if target < 0 {
            return Err(E2eError::Unexpected(format!("no inbox row from {vendor}")));
        }
        if selected == target {
            return Ok(());
        }
        app.press(if selected < target { "j" } else { "k" }).await?;
        app.wait_within(
            "j or k to move the selection",
            Duration::from_secs(5),
            async || Ok((rows(app, vendor).await?.0 != selected).then_some(())),
        )
        .await?;
    }
    Err(E2eError::Unexpected(format!(
        "j and k never reached {vendor}'s row"
    )))
}

/// Presses Tab until `testid` has the focus (at most 40 times).
async fn tab_to(app: &App, testid: &str) -> Result<()> {
    for _ in 0..40 {
        if app.focused().await?.as_deref() == Some(testid) {
            return Ok(());
        }
        app.press(Key::Tab).await?;
    }
    Err(E2eError::Unexpected(format!("Tab never reached {testid}")))
}

pub(crate) async fn wait_focused(app: &App, testid: &str) -> Result<()> {
    app.wait_within(
        &format!("keyboard focus on {testid}"),
        Duration::from_secs(10),
        async || Ok((app.focused().await?.as_deref() == Some(testid)).then_some(())),
    )
    .await
}

pub(crate) async fn text_of(app: &App, testid: &str) -> Result<String> {
    Ok(app.testid(testid).await?.text().await?)
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn approving_with_the_keyboard_confirms_on_enter_cancels_on_escape_and_reads_as_decided(
) -> Result<()> {
    let s = Scenario::start("Keys").await?;
    let session = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    let log = s
        .vendor
        .offer(&session, outsider::offer(2, 1200, "Keyboard only.", &[]))
        .await?;
    let offer_hash = last_hash(&log)?;
    s.app.click("nav-inbox").await?;
    wait_for_row(&s.app, &s.vendor_name).await?;
    select_with_keys(&s.app, &s.vendor_name).await?;

    // `a` opens the confirmation with focus on "Confirm approval"; Escape cancels.
    s.app.press("a").await?;
    s.app.testid("approve-summary").await?;
    wait_focused(&s.app, "approve-confirm").await?;
    s.app.press(Key::Escape).await?;
    wait_focused(&s.app, "approve-button").await?;
    assert!(s.app.all("approve-summary").await?.is_empty());
    let untouched = s.vendor.log(&session).await?;
    assert!(
        untouched.events.iter().all(|e| e.kind.as_str() != "accept"),
        "Escape sent nothing"
    );

    // `a`, then Enter: approved.
    s.app.press("a").await?;
    wait_focused(&s.app, "approve-confirm").await?;
    s.app.press(Key::Enter).await?;
    let (log, accept) = s.wait_for_event(&session, "accept").await?;
    let discovery = outsider::well_known(&s.host_url, outsider::SANDBOX_ORG).await?;
    outsider::verify_accept(&log, &discovery, &offer_hash)?;

    // The view reads as decided: who, when, the event it appended; no
    // warning, no countdown, no buttons.
    let summary = s
        .app
        .wait_for("the decided state", async || {
            match s.app.driver.find(By::Testid("decision-summary")).await {
                Ok(summary) => Ok(summary
                    .find(By::Testid("decision-event"))
                    .await
                    .ok()
                    .map(|_| summary)),
                Err(_) => Ok(None),
            }
        })
        .await?;
    assert_eq!(
        summary.attr("data-outcome").await?.as_deref(),
        Some("appended")
    );
    let event = text_of(&s.app, "decision-event").await?;
    assert_eq!(
        event,
        format!("accept appended as seq {}, verified", accept.seq),
        "the accept on the host's log"
    );
    let by = text_of(&s.app, "decision-by").await?;
    assert_eq!(by, "Local approver (approver@countersign.local)");
    assert_eq!(text_of(&s.app, "offer-decided").await?, "Approved");
    let view = s.app.testid("offer-view").await?;
    for gone in [
        "reload-error",
        "countdown",
        "approve-button",
        "offer-approvals",
    ] {
        assert!(
            view.find_all(By::Testid(gone)).await?.is_empty(),
            "no {gone} once decided"
        );
    }
    let toast = text_of(&s.app, "toast-text").await?;
    assert_eq!(
        toast,
        format!(
            "Approval sent to {}: accept appended as seq {}, verified.",
            s.vendor_name, accept.seq
        )
    );
    s.app.screenshot("decided").await?;

    // The unread count agrees with the engine in the nav; the title counts
    // what waits on the person.
    let state = s.app.invoke("app_state", json!({})).await?;
    let unread = state["unread"].as_u64().unwrap_or(0);
    let waiting = state["waiting"].as_u64().unwrap_or(0);
    let nav = text_of(&s.app, "unread-count").await?;
    let expected_nav = if unread == 0 {
        String::new()
    } else {
        format!("{unread} new")
    };
    assert_eq!(nav, expected_nav);
    let title = s.app.driver.title().await?;
    let expected_title = if waiting == 0 {
        "Countersign".to_owned()
    } else {
        format!("({waiting}) Countersign")
    };
    assert_eq!(title, expected_title);

    // The next pending decision is one key away.
    s.app.press("j").await?;
    s.app
        .wait_for("the next pending decision", async || {
            let vendor = match s.app.driver.find(By::Testid("offer-counterparty")).await {
                Ok(v) => v.text().await?,
                Err(_) => return Ok(None),
            };
            let pending =
                s.app.all("approve-button").await?.len() + s.app.all("expired-notice").await?.len();
            Ok((vendor != s.vendor_name && pending > 0).then_some(()))
        })
        .await?;
    // The toast spoke of the decided session: it does not follow the
    // person to another vendor's offer.
    assert!(s.app.all("decision-toast").await?.is_empty());
    s.app.quit().await
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn declining_and_countering_take_the_keyboard_alone() -> Result<()> {
    let s = Scenario::start("KeysOnly").await?;
    let declined = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    s.vendor
        .offer(&declined, outsider::offer(1, 900, "Decline me.", &[]))
        .await?;
    s.app.click("nav-inbox").await?;
    wait_for_row(&s.app, &s.vendor_name).await?;
    select_with_keys(&s.app, &s.vendor_name).await?;
    s.app.press("d").await?;
    wait_focused(&s.app, "decline-reason").await?;
    s.app.press("Over our budget this year").await?;
    // Enter asks to confirm (focus on the confirmation's send), Enter sends.
    s.app.press(Key::Enter).await?;
    wait_focused(&s.app, "confirm-send").await?;
    s.app.press(Key::Enter).await?;
    let (_, decline) = s.wait_for_event(&declined, "decline").await?;
    assert_eq!(
        decline.payload["reason"],
        json!("Over our budget this year")
    );
    s.app.testid("decision-summary").await?;

    // A counter: c, the first price retyped, Enter to check, Send, Enter to confirm.
    let countered = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    s.vendor
        .offer(&countered, outsider::offer(1, 800, "Counter me.", &[]))
        .await?;
    s.app.press(Key::Escape).await?;
    s.app.testid("inbox").await?;
    s.app
        .wait_for("the second offer's row", async || {
            let mut rows = 0;
            for row in s.app.all("inbox-counterparty").await? {
                if row.text().await? == s.vendor_name {
                    rows += 1;
                }
            }
            Ok((rows >= 1).then_some(()))
        })
        .await?;
    select_with_keys(&s.app, &s.vendor_name).await?;
    s.app.press("c").await?;
    s.app.testid("counter-editor").await?;
    // The editor opens with focus in its first field; Tab walks to the price.
    wait_focused(&s.app, "counter-currency").await?;
    tab_to(&s.app, "counter-line-unit_price").await?;
    s.app.press(Key::Control + "a").await?;
    s.app.press("750").await?;
    s.app.press(Key::Enter).await?;
    s.app.testid("counter-preview").await?;
    tab_to(&s.app, "counter-submit").await?;
    s.app.press(Key::Enter).await?;
    wait_focused(&s.app, "confirm-send").await?;
    s.app.press(Key::Enter).await?;
    let (_, counter) = s.wait_for_event(&countered, "counter_offer").await?;
    assert_eq!(
        counter.payload["line_items"][0]["unit_price"].as_f64(),
        Some(750.0)
    );
    s.app.testid("decision-summary").await?;
    // What was offered instead, beside the offer it answered.
    let offered = s.app.testid("decision-countered").await?;
    let price = offered.find(By::Testid("diff-field")).await?.text().await?;
    assert!(price.contains("750"), "the countered unit price: {price}");
    s.app.quit().await
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn a_mandate_names_its_agent_and_says_it_declares_itself_an_ai() -> Result<()> {
    let s = Scenario::start("Mandate").await?;
    let session = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    s.vendor
        .offer(&session, outsider::offer(1, 500, "", &[]))
        .await?;
    s.open_offer().await?;
    let envelope = s.app.testid("envelope-vendor").await?;
    let agent = envelope.find(By::Testid("mandate-agent")).await?;
    assert_eq!(
        agent.attr("data-declared-ai").await?.as_deref(),
        Some("true")
    );
    assert_eq!(
        agent
            .find(By::Testid("mandate-agent-name"))
            .await?
            .text()
            .await?,
        "E2E Negotiation Agent"
    );
    assert!(agent
        .text()
        .await?
        .contains("It declares itself an AI agent."));
    for id in ["envelope-vendor", "envelope-buyer"] {
        let text = s.app.testid(id).await?.text().await?;
        assert!(
            !text.contains('{') && !text.contains("declared_ai"),
            "{id} shows no JSON: {text}"
        );
    }
    assert!(s.app.all("mandate-agent-warning").await?.is_empty());
    s.app.quit().await
}

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec",
];

/// "Fri 4 Dec, 06:53" in UTC+9 (Tokyo keeps no summer time), written here
/// by hand from the offer's own expiry rather than by the app's formatter.
fn tokyo(at: time::OffsetDateTime) -> String {
    let local = at.to_offset(time::UtcOffset::from_hms(9, 0, 0).unwrap_or(time::UtcOffset::UTC));
    format!(
        "{} {} {}, {:02}:{:02}",
        WEEKDAYS[local.weekday().number_days_from_monday() as usize],
        local.day(),
        MONTHS[local.month() as usize - 1],
        local.hour(),
        local.minute()
    )
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn numbers_and_times_read_as_a_person_writes_them_in_the_machines_locale_and_zone(
) -> Result<()> {
    let log_path = paths::notify_log().ok_or_else(|| {
        E2eError::Missing("COUNTERSIGN_E2E_NOTIFY_LOG is not set: run tests/e2e.sh".into())
    })?;
    // A British machine in Tokyo: the day there is often not UTC's.
    let env = [
        ("LANG", "en_GB.UTF-8"),
        ("LC_TIME", "en_GB.UTF-8"),
        ("TZ", "Asia/Tokyo"),
    ];
    let before = std::fs::read_to_string(&log_path).unwrap_or_default().len();
    let app = App::launch_with(&env).await?;
    let s = Scenario::on(app, "Formats").await?;
    let state = s.app.invoke("app_state", json!({})).await?;
    assert_eq!(state["locale"], json!("en-GB"));
    assert_eq!(state["time_zone"], json!("Asia/Tokyo"));
    opening_burst_announced(&s.app, &log_path, before).await?;
    let session = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    // 2 d 23 h 30 min ahead, to the second: "2 d 23 h" for the whole test.
    let expires =
        time::OffsetDateTime::now_utc() + time::Duration::minutes(2 * 1440 + 23 * 60 + 30);
    let expires = expires.replace_nanosecond(0).unwrap_or(expires);
    let mut offer = outsider::offer(1, 1140, "", &[]);
    offer["line_items"][0]["quantity"] = json!(500);
    offer["expires_at"] = json!(expires
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default());
    s.vendor.offer(&session, offer).await?;
    let absolute = tokyo(expires);

    let row = s.inbox_row().await?;
    assert_eq!(
        row.find(By::Testid("inbox-total")).await?.text().await?,
        "570,000 USD"
    );
    assert_eq!(
        row.find(By::Testid("countdown")).await?.text().await?,
        "2 d 23 h"
    );
    assert_eq!(
        row.find(By::Testid("inbox-expires-at"))
            .await?
            .text()
            .await?,
        absolute
    );
    row.click().await?;
    assert_eq!(text_of(&s.app, "offer-total").await?, "570,000 USD");
    assert_eq!(text_of(&s.app, "offer-expires-at").await?, absolute);
    let line = s.app.testid("summary-line").await?.text().await?;
    assert!(line.contains("1,140 USD"), "{line}");

    let body = format!("570,000 USD · expires in 2 d 23 h ({absolute})");
    let seen = s
        .app
        .wait_for("the notification's body on the bus", async || {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            Ok(log.contains(&body).then_some(()))
        })
        .await;
    if seen.is_err() {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        panic!("no Notify with {body:?}; the bus saw, last first: {tail:#?}");
    }
    s.app.screenshot("formats").await?;
    s.app.quit().await
}

/// The computed value of `property` on the first element matching `css`.
async fn computed(app: &App, css: &str, property: &str) -> Result<String> {
    let value = app
        .script(
            "const e = document.querySelector(arguments[0]);\
             return e ? getComputedStyle(e).getPropertyValue(arguments[1]) : null;",
            vec![json!(css), json!(property)],
        )
        .await?;
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| E2eError::Unexpected(format!("nothing matches {css}")))
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn a_desktop_that_prefers_dark_gets_the_dark_look_with_readable_better_and_worse(
) -> Result<()> {
    // The desktop's own setting, as GTK reads it: prefer the dark variant.
    let config = countersign_e2e::app::fresh_data_dir()?;
    let gtk = config.path().join("gtk-3.0");
    std::fs::create_dir_all(&gtk).map_err(|source| E2eError::Io {
        what: "creating a GTK settings folder".into(),
        source,
    })?;
    std::fs::write(
        gtk.join("settings.ini"),
        "[Settings]\ngtk-application-prefer-dark-theme=1\n",
    )
    .map_err(|source| E2eError::Io {
        what: "writing GTK settings".into(),
        source,
    })?;
    let home = config.path().display().to_string();
    let app = App::launch_with(&[("XDG_CONFIG_HOME", &home)]).await?;
    let s = Scenario::on(app, "Dark").await?;
    let session = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    s.vendor
        .offer(&session, outsider::offer(1, 1000, "", &[]))
        .await?;
    s.vendor
        .offer(&session, outsider::offer(1, 900, "Lower.", &[]))
        .await?;
    s.inbox_row().await?;
    let dark: Value = s
        .app
        .script(
            "return matchMedia('(prefers-color-scheme: dark)').matches;",
            vec![],
        )
        .await?;
    assert_eq!(dark, json!(true), "WebKit reports the desktop's preference");
    assert_eq!(
        computed(&s.app, "html", "background-color").await?,
        "rgb(21, 24, 28)"
    );
    assert_eq!(
        computed(&s.app, "body", "color").await?,
        "rgb(230, 232, 235)"
    );
    // A price that fell is better for the buyer: the dark palette's green.
    let better = s
        .app
        .wait_for("a better change in the inbox", async || {
            Ok(s.app
                .driver
                .find_all(By::Css("[data-testid=change][data-effect=better]"))
                .await?
                .into_iter()
                .next())
        })
        .await?;
    let colour = better.css_value("color").await?;
    assert_eq!(colour, "rgb(111, 220, 152)");
    assert_eq!(
        // A plain row: not the selected one (its own colour) and not under
        // the pointer (an earlier test may leave the X pointer anywhere).
        computed(
            &s.app,
            "[data-testid=inbox-row][data-selected=false]:not(:hover)",
            "background-color"
        )
        .await?,
        "rgb(30, 34, 39)"
    );
    s.app.screenshot("dark").await?;
    s.app.quit().await
}

/// The element `[data-testid=testid][data-id=id]` of the settings screen,
/// once it is there.
pub(crate) async fn setting(app: &App, testid: &str, id: &str) -> Result<WebElement> {
    let css = format!("[data-testid={testid}][data-id='{id}']");
    app.wait_for(&css, async || {
        Ok(app
            .driver
            .find_all(By::Css(css.as_str()))
            .await?
            .into_iter()
            .next())
    })
    .await
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn a_setting_changed_on_screen_survives_a_restart() -> Result<()> {
    let data = countersign_e2e::app::fresh_data_dir()?;
    let dir = data.path().to_path_buf();
    let app = App::launch_in(&dir, None, &[]).await?;
    app.click("nav-settings").await?;
    setting(&app, "setting-input", "poll.interval_seconds")
        .await?
        .click()
        .await?;
    app.press(Key::Control + "a").await?;
    app.press("17").await?;
    app.press(Key::Enter).await?;
    setting(&app, "setting-saved", "poll.interval_seconds").await?;
    setting(&app, "setting-input", "notify.burst_summary")
        .await?
        .click()
        .await?;
    setting(&app, "setting-saved", "notify.burst_summary").await?;
    let fingerprint = app.testid("approver-fingerprint").await?.text().await?;
    assert_eq!(fingerprint.len(), 64, "{fingerprint}");
    assert_eq!(
        app.testid("settings-data-dir").await?.text().await?,
        dir.display().to_string()
    );
    app.quit().await?;

    // Another start on the same data directory.
    let again = App::launch_in(&dir, Some(data), &[]).await?;
    again.click("nav-settings").await?;
    let interval = setting(&again, "setting-input", "poll.interval_seconds").await?;
    assert_eq!(interval.prop("value").await?.as_deref(), Some("17"));
    let summary = setting(&again, "setting-input", "notify.burst_summary").await?;
    assert_eq!(summary.prop("checked").await?.as_deref(), Some("false"));
    assert_eq!(
        again.testid("approver-fingerprint").await?.text().await?,
        fingerprint,
        "the same key"
    );
    again.quit().await
}
