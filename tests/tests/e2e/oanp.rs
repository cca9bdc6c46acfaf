//! The sandbox's OANP offer as a person meets it: the merchant's counter,
//! asked about by the org's own buyer agent at the embedded host's gate
//! before its `offer.accept`, opened from the inbox with the keyboard. The
//! view names the protocol, says the envelopes are unsigned, shows the
//! counter's price beside the buyer's offer and the arbiter's verdict;
//! approved with the keyboard it reads as decided, and the demo's agent, the
//! only other party, has then mirrored its `offer.accept` and the
//! arbiter's `session.agree`, which the session's timeline ends with. What
//! the test knows it reads from the demo's own state file, never from the
//! app's screen.

use countersign_e2e::{App, E2eError, Result};
use serde_json::{json, Value};
use thirtyfour::prelude::*;

use super::person::{select_with_keys, text_of, wait_focused};

const MERCHANT_ORG: &str = "Contoso Monitors";

/// The demo's state file once `until` holds of it.
async fn demo_state(app: &App, what: &str, until: impl Fn(&Value) -> bool) -> Result<Value> {
    let path = app.data_dir().join("sandbox/oanp-demo.json");
    app.wait_for(what, async || {
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        let state: Value = serde_json::from_str(&text)
            .map_err(|e| E2eError::Unexpected(format!("the OANP demo's state: {e}")))?;
        Ok(until(&state).then_some(state))
    })
    .await
}

/// `amount_minor` of an envelope's `payload.terms.price`, as major units
/// with two decimals and no separators (`5400.00`).
fn price_of(envelope: &Value) -> String {
    let minor = envelope["payload"]["terms"]["price"]["amount_minor"]
        .as_i64()
        .unwrap_or(-1);
    format!("{}.{:02}", minor / 100, minor % 100)
}

fn digits(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_digit() || *c == '.')
        .collect()
}

fn kinds(state: &Value) -> Vec<String> {
    state["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|e| e["type"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn the_sandbox_oanp_counter_shows_price_and_verdict_and_an_approval_agrees_the_session(
) -> Result<()> {
    let app = App::launch().await?;
    app.testid("sandbox-banner").await?;
    let state = demo_state(&app, "the OANP demo to ask the gate", |s| {
        s["requests"] == json!(1) && !s["asked"].is_null()
    })
    .await?;
    let log = state["messages"].as_array().cloned().unwrap_or_default();
    let counter = log
        .iter()
        .rev()
        .find(|e| e["type"] == "offer.counter")
        .cloned()
        .ok_or_else(|| E2eError::Unexpected("the demo's log has no counter".into()))?;
    let offer = log
        .iter()
        .find(|e| e["type"] == "offer.propose")
        .cloned()
        .ok_or_else(|| E2eError::Unexpected("the demo's log has no opening offer".into()))?;

    // The inbox row says its protocol; j/k reach it, Enter opens it.
    app.click("nav-inbox").await?;
    // The inbox re-renders as the other demos' offers arrive: a row found
    // once may be gone the next moment, so each look reads what it needs
    // and a stale row is only a reason to look again (as plain.rs does).
    let protocol = app
        .wait_for("the OANP counter in the inbox", async || {
            for row in app.all("inbox-row").await? {
                let Ok(cell) = row.find(By::Testid("inbox-counterparty")).await else {
                    return Ok(None);
                };
                let Ok(name) = cell.text().await else {
                    return Ok(None);
                };
                if name == MERCHANT_ORG {
                    return Ok(row.attr("data-protocol").await.ok().flatten());
                }
            }
            Ok(None)
        })
        .await?;
    assert_eq!(protocol, "oanp");
    select_with_keys(&app, MERCHANT_ORG).await?;
    app.press(Key::Enter).await?;
    let view = app.testid("offer-view").await?;
    app.wait_for("the OANP offer view", async || {
        Ok((view.attr("data-protocol").await?.as_deref() == Some("oanp")).then_some(()))
    })
    .await?;
    app.testid("oanp-offer").await?;
    assert_eq!(text_of(&app, "offer-protocol").await?, "OANP");
    assert!(text_of(&app, "oanp-unsigned-notice")
        .await?
        .contains("not signed"));
    assert!(digits(&text_of(&app, "oanp-price").await?).contains(&price_of(&counter)));
    assert!(digits(&text_of(&app, "oanp-previous-price").await?).contains(&price_of(&offer)));
    assert!(text_of(&app, "oanp-verdict")
        .await?
        .starts_with("The arbiter's latest verdict:"));
    app.screenshot("oanp-offer").await?;

    // Approved with the keyboard: `a`, then Enter on "Confirm approval".
    app.press("a").await?;
    app.testid("approve-summary").await?;
    wait_focused(&app, "approve-confirm").await?;
    app.press(Key::Enter).await?;
    app.wait_for("the OANP offer to read as approved", async || {
        let decided = match app.driver.find(By::Testid("offer-decided")).await {
            Ok(e) => e.text().await?,
            Err(_) => return Ok(None),
        };
        Ok((decided == "Approved").then_some(()))
    })
    .await?;

    // The demo's agent acted on it: accept, and the arbiter's agreement.
    let after = demo_state(&app, "the OANP demo to accept and agree", |s| {
        kinds(s).last().map(String::as_str) == Some("session.agree")
    })
    .await?;
    let seen = kinds(&after);
    assert_eq!(seen[seen.len() - 2], "offer.accept", "{seen:?}");

    // History: the session's timeline ends with the agreement, once read.
    app.click("toast-open-history").await?;
    app.testid("session-view").await?;
    assert_eq!(text_of(&app, "session-protocol").await?, "OANP");
    app.wait_for("the agreement in the session's timeline", async || {
        if let Ok(button) = app.driver.find(By::Testid("refresh-button")).await {
            let _ = button.click().await;
        }
        let rows = app.all("timeline-row").await?.len();
        Ok((rows == seen.len()).then_some(()))
    })
    .await?;
    let shown = app
        .script(
            "return [...document.querySelectorAll('[data-testid=timeline-row]')]\
               .map(r => r.querySelector('[data-testid=timeline-kind]').dataset.kind);",
            vec![],
        )
        .await?;
    assert_eq!(shown, json!(seen), "the timeline's kinds are the log's");
    app.screenshot("oanp-decided").await?;
    app.quit().await
}
