//! The sandbox's plain terms as a person meets them: the org's purchasing
//! assistant, an MCP client of the embedded host with no negotiation
//! protocol behind it, asked about Contoso's quote and then revised it. The
//! revised terms are opened from the inbox with the keyboard; the view
//! shows the terms beside the terms they revise as a diff (the changed
//! unit price, the added condition) and the assistant's reasons as its
//! words; approved with the keyboard, the assistant reports executing
//! exactly those terms, which History's timeline ends with. What the test
//! knows it reads from the assistant's own state file and the host's
//! record, never from the app's screen.

use countersign_e2e::{App, E2eError, Result};
use serde_json::Value;
use thirtyfour::prelude::*;

use super::person::{select_with_keys, text_of, wait_focused};

const COUNTERPARTY: &str = "Contoso Sensors Ltd";

/// The assistant's state file once `until` holds of it.
async fn assistant(app: &App, what: &str, until: impl Fn(&Value) -> bool) -> Result<Value> {
    let path = app.data_dir().join("sandbox/plain-purchaser.json");
    app.wait_for(what, async || {
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        let state: Value = serde_json::from_str(&text)
            .map_err(|e| E2eError::Unexpected(format!("the assistant's state: {e}")))?;
        Ok(until(&state).then_some(state))
    })
    .await
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn the_sandbox_plain_terms_show_their_diff_and_an_approval_is_executed() -> Result<()> {
    let app = App::launch().await?;
    app.testid("sandbox-banner").await?;
    assistant(&app, "the assistant to revise its terms", |s| {
        s["asked"] == 2
    })
    .await?;

    app.click("nav-inbox").await?;
    // The inbox re-renders as the other demos' offers arrive: a row found
    // once may be gone the next moment, so each look reads what it needs
    // and a stale row is only a reason to look again.
    let protocol = app
        .wait_for("the revised terms in the inbox", async || {
            for row in app.all("inbox-row").await? {
                let Ok(cell) = row.find(By::Testid("inbox-counterparty")).await else {
                    return Ok(None);
                };
                let Ok(name) = cell.text().await else {
                    return Ok(None);
                };
                if name == COUNTERPARTY {
                    return Ok(row.attr("data-protocol").await.ok().flatten());
                }
            }
            Ok(None)
        })
        .await?;
    assert_eq!(protocol, "plain");
    select_with_keys(&app, COUNTERPARTY).await?;
    app.press(Key::Enter).await?;
    let view = app.testid("offer-view").await?;
    app.wait_for("the plain terms view", async || {
        Ok((view.attr("data-protocol").await?.as_deref() == Some("plain")).then_some(()))
    })
    .await?;
    app.testid("plain-terms-view").await?;
    assert_eq!(text_of(&app, "offer-protocol").await?, "Plain terms");
    assert_eq!(
        text_of(&app, "plain-agent-name").await?,
        "Purchasing assistant"
    );
    assert!(text_of(&app, "plain-rationale-text")
        .await?
        .contains("Contoso came down to 11.90"));
    // The diff: the sensor's unit price changed, a condition was added.
    let changed = app
        .script(
            "return [...document.querySelectorAll('[data-testid=plain-diff-row]')]\
               .map(r => [r.dataset.key, r.dataset.status, r.dataset.fields]);",
            vec![],
        )
        .await?;
    assert!(
        changed.as_array().is_some_and(|rows| rows
            .iter()
            .any(|r| r[0] == "SEN-200" && r[1] == "changed" && r[2] == "unit_price")),
        "{changed}"
    );
    assert!(text_of(&app, "plain-diff-condition-added")
        .await?
        .contains("Delivery by 2027-01-15"));
    app.screenshot("plain-terms").await?;

    // Approved with the keyboard: `a`, then Enter on "Confirm approval".
    app.press("a").await?;
    app.testid("approve-summary").await?;
    assert!(text_of(&app, "plain-summary-total")
        .await?
        .contains("25,300.00"));
    wait_focused(&app, "approve-confirm").await?;
    app.press(Key::Enter).await?;
    app.wait_for("the terms to read as approved", async || {
        let decided = match app.driver.find(By::Testid("offer-decided")).await {
            Ok(e) => e.text().await?,
            Err(_) => return Ok(None),
        };
        Ok((decided == "Approved").then_some(()))
    })
    .await?;

    // The assistant executed exactly those terms.
    assistant(&app, "the assistant to report executing", |s| {
        s["done"] == true
    })
    .await?;
    app.click("toast-open-history").await?;
    app.testid("session-view").await?;
    app.wait_for("the execution in the timeline", async || {
        if let Ok(button) = app.driver.find(By::Testid("refresh-button")).await {
            let _ = button.click().await;
        }
        let kinds = app
            .script(
                "return [...document.querySelectorAll('[data-testid=timeline-row]')]\
                   .map(r => r.querySelector('[data-testid=timeline-kind]').dataset.kind);",
                vec![],
            )
            .await?;
        Ok((kinds
            .as_array()
            .and_then(|k| k.last())
            .and_then(Value::as_str)
            == Some("plain.outcome"))
        .then_some(()))
    })
    .await?;
    app.screenshot("plain-executed").await?;
    app.quit().await
}
