//! The vendor manager's desk as a person uses it, on the sandbox's first
//! launch (demo counterparties of every protocol offer by themselves): one
//! ANP vendor's offer approved from the inbox, then the Desk reads the money
//! per currency (that approval agreed in USD), lists the sandbox's
//! counterparties by name across protocols, opens the sessions behind a
//! figure, and the approved vendor's page (its identities, sessions, chart).
//! The counterparties' CSV is written where the screen says; an audit pack
//! of approvals is written, and `countersign-verify pack` (the binary, as an
//! auditor would run it) proves the decision, naming who made it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use countersign_e2e::{paths, App, E2eError, Result};
use serde_json::{json, Value};
use thirtyfour::components::SelectElement;
use thirtyfour::prelude::*;
use time::{Duration, OffsetDateTime};

use super::person::{select_with_keys, text_of, wait_focused};

/// The sandbox's quiet ANP vendor: one offer (2,000 × 42 USD), never revised.
const APPROVED: &str = "Litware Security";
/// What that offer comes to, as the app writes money.
const APPROVED_TOTAL: &str = "84,000 USD";
/// The sandbox's other scripted ANP vendors.
const OTHER_ANP: [&str; 3] = [
    "Northwind Software",
    "Tailspin Analytics",
    "Adatum Cloud Storage",
];

/// The inbox's rows as (counterparty, protocol), read in one step.
async fn inbox_rows(app: &App) -> Result<Vec<(String, String)>> {
    let rows = app
        .script(
            "return [...document.querySelectorAll('[data-testid=inbox-row]')].map(r => [\
               r.querySelector('[data-testid=inbox-counterparty]')?.textContent ?? '',\
               r.dataset.protocol ?? '']);",
            vec![],
        )
        .await?;
    Ok(pairs(&rows))
}

/// The desk's counterparty rows as (name, protocols, money text, id), read in one step.
async fn desk_rows(app: &App) -> Result<Vec<(String, Vec<String>, String, String)>> {
    let rows = app
        .script(
            "return [...document.querySelectorAll('[data-testid=desk-counterparty-row]')].map(r => [\
               r.querySelector('[data-testid=desk-counterparty-open]').innerText.trim(),\
               [...r.querySelectorAll('[data-testid=desk-counterparty-protocol]')].map(b => b.dataset.protocol),\
               r.querySelector('[data-testid=desk-counterparty-money]').innerText.trim(),\
               r.dataset.id]);",
            vec![],
        )
        .await?;
    Ok(rows
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    let protocols = r[1]
                        .as_array()
                        .map(|p| {
                            p.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    (string(&r[0]), protocols, string(&r[2]), string(&r[3]))
                })
                .collect()
        })
        .unwrap_or_default())
}

/// What the desk says, for a failure's message.
async fn desk_text(app: &App) -> Result<String> {
    let text = app
        .script(
            "return document.querySelector('[data-testid=desk]')?.innerText ?? document.body.innerText;",
            vec![],
        )
        .await?;
    Ok(string(&text))
}

fn string(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

fn pairs(rows: &Value) -> Vec<(String, String)> {
    rows.as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| (string(&r[0]), string(&r[1])))
                .collect()
        })
        .unwrap_or_default()
}

/// The leading count of a text such as "12 sessions" or "1 decision".
fn leading_count(text: &str) -> Option<u64> {
    let digits: String = text
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The full path a `LongId` inside `selector` shows (the text a person reads;
/// its tooltip holds the same value, which the test checks too).
async fn shown_path(app: &App, selector: &str) -> Result<PathBuf> {
    let holder = app.driver.find(By::Css(selector)).await?;
    let long = holder.find(By::Css("[data-long-id]")).await?;
    let text = long.text().await?;
    let title = long.attr("title").await?.unwrap_or_default();
    assert_eq!(text, title, "the path shown is the whole path");
    Ok(PathBuf::from(text))
}

/// Sets a date input as the date picker would: the value, then an `input`
/// event (WebKitGTK's date fields take no typed text through WebDriver).
async fn set_date(app: &App, testid: &str, day: &str) -> Result<()> {
    let now = app
        .script(
            "const [id, day] = arguments;\
             const input = document.querySelector(`[data-testid=${id}]`);\
             input.value = day;\
             input.dispatchEvent(new Event('input', { bubbles: true }));\
             input.dispatchEvent(new Event('change', { bubbles: true }));\
             return input.value;",
            vec![json!(testid), json!(day)],
        )
        .await?;
    assert_eq!(now, json!(day), "{testid} reads the day set");
    Ok(())
}

fn day(at: OffsetDateTime) -> String {
    let d = at.date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// A screenshot of the app alone: the desktop's notifications (the test's
/// dunst keeps every one until clicked) are closed first.
async fn screenshot(app: &App, name: &str) -> Result<PathBuf> {
    let _ = std::process::Command::new("dunstctl")
        .arg("close-all")
        .output();
    app.screenshot(name).await
}

/// Clicks the element `css` selects, brought to the middle of the window
/// first, as a person scrolls to what they click (WebDriver's own scrolling
/// may leave it under the app's sticky header).
async fn click_css(app: &App, css: &str) -> Result<()> {
    let element = app.driver.find(By::Css(css)).await?;
    app.script(
        "arguments[0].scrollIntoView({ block: 'center' });",
        vec![element.to_json()?],
    )
    .await?;
    element.click().await?;
    Ok(())
}

async fn scroll_into_view(app: &App, selector: &str) -> Result<()> {
    app.script(
        "document.querySelector(arguments[0])?.scrollIntoView({ block: 'start' });",
        vec![json!(selector)],
    )
    .await?;
    Ok(())
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn the_desk_shows_money_counterparties_and_figures_and_exports_a_pack_that_verifies(
) -> Result<()> {
    let app = App::launch().await?;
    app.testid("sandbox-banner").await?;

    // 1. The sandbox's offers arrive; the quiet ANP vendor's is approved.
    app.click("nav-inbox").await?;
    let inbox = app
        .wait_for(
            "the sandbox's offers of several protocols in the inbox",
            async || {
                let rows = inbox_rows(&app).await?;
                let protocols: BTreeSet<&str> = rows.iter().map(|(_, p)| p.as_str()).collect();
                let anp_vendors = [APPROVED]
                    .iter()
                    .chain(OTHER_ANP.iter())
                    .all(|v| rows.iter().any(|(name, _)| name == v));
                Ok((anp_vendors && protocols.len() >= 5).then_some(rows))
            },
        )
        .await?;
    select_with_keys(&app, APPROVED).await?;
    app.press(Key::Enter).await?;
    app.testid("offer-view").await?;
    assert_eq!(text_of(&app, "offer-counterparty").await?, APPROVED);
    app.press("a").await?;
    app.testid("approve-summary").await?;
    wait_focused(&app, "approve-confirm").await?;
    app.press(Key::Enter).await?;
    app.wait_for("the offer to read as approved", async || {
        Ok(match app.driver.find(By::Testid("offer-decided")).await {
            Ok(e) => (e.text().await? == "Approved").then_some(()),
            Err(_) => None,
        })
    })
    .await?;
    // Who approved, as the decided offer says it: "Name (email)".
    let by = text_of(&app, "decision-by").await?;
    let email = by
        .rsplit_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .filter(|e| e.contains('@'))
        .ok_or_else(|| E2eError::Unexpected(format!("no email in {by:?}")))?
        .to_owned();
    // The toast says what was sent; read, it is closed (it floats over
    // whatever screen comes next for half a minute).
    let toast = text_of(&app, "toast-text").await?;
    assert!(toast.contains(APPROVED), "{toast}");
    app.click("toast-dismiss").await?;

    // 2. The desk: money per currency, the counterparties by name.
    app.click("nav-desk").await?;
    app.testid("desk").await?;
    let mut seen = String::new();
    let (agreed, opening) = app
        .wait_for("the USD row to carry the approved offer", async || {
            seen = desk_text(&app).await?;
            let Ok(row) = app
                .driver
                .find(By::Css("[data-testid=desk-money-row][data-currency=USD]"))
                .await
            else {
                return Ok(None);
            };
            let agreed = row
                .find(By::Testid("desk-money-agreed"))
                .await?
                .text()
                .await?;
            let opening = row
                .find(By::Testid("desk-money-opening"))
                .await?
                .text()
                .await?;
            Ok((agreed == APPROVED_TOTAL).then_some((agreed, opening)))
        })
        .await
        .map_err(|e| E2eError::Unexpected(format!("{e}; the desk reads:\n{seen}")))?;
    // Nothing else was agreed: the opening ask of the one session agreed is
    // its offer, and nothing was won against it.
    assert_eq!(
        opening, APPROVED_TOTAL,
        "agreed {agreed}, opening {opening}"
    );
    let usd = app
        .driver
        .find(By::Css("[data-testid=desk-money-row][data-currency=USD]"))
        .await?;
    assert_eq!(
        usd.find(By::Testid("desk-money-won")).await?.text().await?,
        "0 USD"
    );

    let rows = app
        .wait_for("the counterparties on the desk", async || {
            let rows = desk_rows(&app).await?;
            Ok(rows.iter().any(|(n, ..)| n == APPROVED).then_some(rows))
        })
        .await?;
    let names: Vec<&str> = rows.iter().map(|(n, ..)| n.as_str()).collect();
    for vendor in OTHER_ANP.iter().chain([&APPROVED]) {
        assert!(names.contains(vendor), "{vendor} on the desk: {names:?}");
    }
    let protocols: BTreeSet<&str> = rows
        .iter()
        .flat_map(|(_, p, ..)| p.iter().map(String::as_str))
        .collect();
    let inbox_protocols: BTreeSet<&str> = inbox.iter().map(|(_, p)| p.as_str()).collect();
    assert!(
        protocols.len() >= 4,
        "counterparties of several protocols: {protocols:?}"
    );
    // Every counterparty the inbox showed is on the desk (this year's range,
    // which holds every session of this first launch). Checked last, so that
    // one missing counterparty does not hide what the rest of the desk does.
    let missing: Vec<(String, String)> = inbox
        .iter()
        .filter(|(name, _)| !names.contains(&name.as_str()))
        .cloned()
        .collect();
    let (_, _, money, approved_id) = rows
        .iter()
        .find(|(n, ..)| n == APPROVED)
        .cloned()
        .unwrap_or_default();
    assert!(
        money.starts_with(&format!("{APPROVED_TOTAL} agreed · won 0 USD")),
        "{APPROVED}'s money: {money:?}"
    );
    // Nothing else was agreed: every other counterparty's money reads none
    // agreed ("—", or "nothing agreed yet in EUR" per currency).
    for (name, _, money, _) in rows.iter().filter(|(n, ..)| n != APPROVED) {
        assert!(
            money
                .lines()
                .all(|line| line == "—" || line.starts_with("nothing agreed yet in ")),
            "only {APPROVED} agreed: {name} reads {money:?}"
        );
    }
    // The wait for that decision names who decided, and as which role.
    let waits = app
        .script(
            "return [...document.querySelectorAll('[data-testid=desk-waits-row]')].map(r => r.innerText);",
            vec![],
        )
        .await?;
    let waits: Vec<String> = waits
        .as_array()
        .map(|w| w.iter().map(string).collect())
        .unwrap_or_default();
    assert!(
        waits
            .iter()
            .any(|w| w.contains(APPROVED) && w.contains(&format!("{email} as "))),
        "the wait of {APPROVED}'s approval, by {email} as a role: {waits:?}"
    );
    screenshot(&app, "desk").await?;
    scroll_into_view(&app, "[data-testid=desk-counterparties]").await?;
    screenshot(&app, "desk-counterparties").await?;

    // 3. A figure opens the sessions behind it: every session in the range.
    let figure = app.testid("desk-sessions").await?;
    assert_eq!(figure.attr("data-figure").await?.as_deref(), Some("all"));
    let sessions = leading_count(&figure.text().await?)
        .ok_or_else(|| E2eError::Unexpected("the sessions figure is no number".into()))?;
    click_css(&app, "[data-testid=desk-sessions][data-figure=all]").await?;
    let listed = app
        .wait_for("the sessions behind the figure", async || {
            let Ok(panel) = app
                .driver
                .find(By::Css(
                    "[data-testid=desk-figure-sessions][data-figure=all]",
                ))
                .await
            else {
                return Ok(None);
            };
            let count = panel
                .find(By::Testid("desk-figure-count"))
                .await?
                .text()
                .await?;
            let rows = panel.find_all(By::Testid("desk-figure-session")).await?;
            Ok((!rows.is_empty()).then_some((count, rows.len() as u64)))
        })
        .await?;
    assert!(listed.1 > 0);
    assert_eq!(
        listed.1, sessions,
        "the figure said {sessions} sessions; the list holds {} ({})",
        listed.1, listed.0
    );
    assert_eq!(leading_count(&listed.0), Some(sessions), "{}", listed.0);
    screenshot(&app, "desk-figure-sessions").await?;
    click_css(&app, "[data-testid=desk-figure-close]").await?;

    // 4. The approved vendor's page: identities, sessions, chart.
    app.wait_for(&format!("{APPROVED}'s row to open"), async || {
        let css = format!("[data-testid=desk-counterparty-row][data-id='{approved_id}'] [data-testid=desk-counterparty-open]");
        Ok(click_css(&app, &css).await.ok())
    })
    .await?;
    let page = app.testid("counterparty-page").await?;
    assert_eq!(
        page.attr("data-id").await?.as_deref(),
        Some(approved_id.as_str())
    );
    assert_eq!(text_of(&app, "counterparty-name").await?, APPROVED);
    let identities = app
        .wait_for("the counterparty's identities", async || {
            let found = app
                .script(
                    "return [...document.querySelectorAll('[data-testid=counterparty-identity]')]\
                       .map(r => [r.dataset.kind, r.querySelector('[data-testid=counterparty-identity-value]').innerText]);",
                    vec![],
                )
                .await?;
            let found = pairs(&found);
            Ok((!found.is_empty()).then_some(found))
        })
        .await?;
    assert!(
        identities
            .iter()
            .any(|(kind, value)| (kind == "key" || kind == "id") && !value.trim().is_empty()),
        "a key or an id among {identities:?}"
    );
    let session_rows = app
        .script(
            "return [...document.querySelectorAll('[data-testid=counterparty-session]')]\
               .map(r => [r.dataset.session, r.innerText]);",
            vec![],
        )
        .await?;
    let session_rows = pairs(&session_rows);
    assert_eq!(
        session_rows.len(),
        1,
        "{APPROVED} has one session: {session_rows:?}"
    );
    let (approved_session, row_text) = &session_rows[0];
    assert!(
        row_text.contains("agreed") && row_text.contains(APPROVED_TOTAL),
        "the session reads agreed at {APPROVED_TOTAL}: {row_text:?}"
    );
    app.testid("counterparty-sessions").await?;
    let chart = app.testid("counterparty-chart").await?;
    assert!(
        !chart
            .find_all(By::Css(
                "[data-testid=counterparty-chart-currency][data-currency=USD]"
            ))
            .await?
            .is_empty(),
        "a USD panel in the chart"
    );
    screenshot(&app, "desk-counterparty").await?;
    scroll_into_view(&app, "[data-testid=counterparty-chart]").await?;
    screenshot(&app, "desk-counterparty-chart").await?;

    // 5. Back on the desk: the counterparties as CSV, where the screen says.
    click_css(&app, "[data-testid=counterparty-back]").await?;
    app.testid("desk").await?;
    let csv_button = "[data-testid=desk-csv][data-list=counterparties]";
    app.wait_for("the counterparties' CSV button", async || {
        Ok(app.driver.find(By::Css(csv_button)).await.ok().map(|_| ()))
    })
    .await?;
    click_css(&app, csv_button).await?;
    let written = app
        .wait_for("the CSV's path", async || {
            Ok(app
                .driver
                .find(By::Css(
                    "[data-testid=desk-csv-path][data-list=counterparties]",
                ))
                .await
                .ok())
        })
        .await?
        .text()
        .await?;
    let csv_path = shown_path(
        &app,
        "[data-testid=desk-csv-path][data-list=counterparties]",
    )
    .await?;
    let csv = std::fs::read_to_string(&csv_path).map_err(|source| E2eError::Io {
        what: format!("reading the CSV at {}", csv_path.display()),
        source,
    })?;
    assert!(
        csv.lines()
            .next()
            .is_some_and(|l| l.starts_with("\"counterparty_id\"")),
        "{csv}"
    );
    assert!(csv.contains(&format!("\"{APPROVED}\"")), "{csv}");
    assert!(
        written.contains(&format!("({} bytes)", count_text(csv.len()))),
        "the screen says how much was written: {written:?}"
    );

    // 6. An audit pack of approvals decided yesterday to tomorrow (UTC).
    scroll_into_view(&app, "[data-testid=audit-pack-form]").await?;
    let now = OffsetDateTime::now_utc();
    set_date(&app, "audit-pack-from", &day(now - Duration::days(1))).await?;
    set_date(&app, "audit-pack-to", &day(now + Duration::days(1))).await?;
    let action = SelectElement::new(&app.testid("audit-pack-action").await?).await?;
    action.select_by_value("approve").await?;
    click_css(&app, "[data-testid=audit-pack-submit]").await?;
    app.wait_for("the audit pack's result", async || {
        if let Ok(error) = app.driver.find(By::Testid("audit-pack-error")).await {
            return Err(E2eError::Unexpected(format!(
                "the audit pack was refused: {}",
                error.text().await?
            )));
        }
        Ok(app.driver.find(By::Testid("audit-pack-result")).await.ok())
    })
    .await?;
    let pack = shown_path(&app, "[data-testid=audit-pack-path]").await?;
    let decisions = text_of(&app, "audit-pack-decisions").await?;
    assert_eq!(decisions, "1 decision", "one approval was made");
    assert_eq!(text_of(&app, "audit-pack-sessions").await?, "1 session");
    assert_eq!(
        text_of(&app, "audit-pack-verify").await?,
        format!("countersign-verify pack {}", pack.display())
    );
    scroll_into_view(&app, "[data-testid=audit-pack-form]").await?;
    screenshot(&app, "desk-audit-pack").await?;

    // The pack's index names the approval of that session, by the approver.
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(pack.join("index.json")).map_err(|source| E2eError::Io {
            what: format!("reading {}/index.json", pack.display()),
            source,
        })?,
    )
    .map_err(|e| E2eError::Unexpected(format!("index.json: {e}")))?;
    let session = index["sessions"]
        .as_array()
        .and_then(|s| {
            s.iter()
                .find(|s| s["session_id"] == json!(approved_session))
        })
        .ok_or_else(|| E2eError::Unexpected(format!("{approved_session} not in {index}")))?;
    let decision_id = session["decisions"][0]["decision_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!decision_id.is_empty(), "{session}");

    // countersign-verify, run as an auditor runs it, proves it offline.
    let verifier = paths::verify_binary()?;
    let output = std::process::Command::new(&verifier)
        .arg("pack")
        .arg(&pack)
        .arg("--json")
        .output()
        .map_err(|source| E2eError::Io {
            what: format!("running {}", verifier.display()),
            source,
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "countersign-verify pack {}: {stdout}\n{stderr}",
        pack.display()
    );
    let report: Value = serde_json::from_str(&stdout)
        .map_err(|e| E2eError::Unexpected(format!("the verifier's JSON: {e}: {stdout}")))?;
    assert_eq!(report["status"], json!("verified"), "{report}");
    let decision = report["decisions"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["decision_id"] == json!(decision_id)))
        .ok_or_else(|| E2eError::Unexpected(format!("{decision_id} not in {report}")))?;
    assert_eq!(decision["by"], json!(email), "{decision}");
    assert!(
        report["failures"].as_array().is_none_or(Vec::is_empty),
        "{report}"
    );

    assert!(
        missing.is_empty(),
        "counterparties in the inbox but not on the desk: {missing:?} (desk protocols \
         {protocols:?}, inbox protocols {inbox_protocols:?})"
    );
    app.quit().await
}

/// A byte count as the app writes counts ("1,234").
fn count_text(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
