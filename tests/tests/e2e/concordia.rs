//! The sandbox's Concordia offer as a person meets it: the seller's
//! counter-offer, asked about by the org's own buying agent at the embedded
//! host's gate, opened from the inbox with the keyboard; the view names the
//! protocol, the counterparty and the fingerprint of the key its message is
//! signed with, lays out what changed, shows the seller's reasoning as
//! inert text; approved with the keyboard, it reads as decided, and on the
//! gate the agent's request is approved with a receipt that verifies and
//! the session is agreed; in history the session's timeline ends with the
//! agent's accept and its JSON export (the transcript with its keys and the
//! receipt) passes countersign-verify. What the test knows it reads from the demo's own
//! state file (its keys and transcript), never from the app's screen.

use std::collections::BTreeSet;
use std::time::Duration;

use countersign_client::{check_decision, GateClient};
use countersign_e2e::{App, E2eError, Result};
use serde_json::{json, Value};
use thirtyfour::prelude::*;

use super::person::{select_with_keys, text_of, wait_focused};

const SELLER_ORG: &str = "Contoso Industrial";

/// The demo's state file (keys, agent id, transcript), once it asked.
async fn demo_state(app: &App) -> Result<Value> {
    let path = app.data_dir().join("sandbox/concordia-demo.json");
    app.wait_for("the Concordia demo to ask the gate", async || {
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        let state: Value = serde_json::from_str(&text)
            .map_err(|e| E2eError::Unexpected(format!("the demo's state: {e}")))?;
        Ok((state["requests"] == json!(1)).then_some(state))
    })
    .await
}

fn signing_key(text: &Value) -> Result<anp::keys::SigningKey> {
    let seed = jcs::b64url::decode(text.as_str().unwrap_or(""))
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| E2eError::Unexpected("a demo key is not a 32-byte seed".into()))?;
    Ok(anp::keys::SigningKey::from_bytes(&seed))
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn the_sandbox_concordia_offer_shows_its_party_key_diff_and_reasoning_and_approves_with_the_keyboard(
) -> Result<()> {
    let app = App::launch().await?;
    app.testid("sandbox-banner").await?;
    let state = demo_state(&app).await?;
    let seller = signing_key(&state["seller_key"])?;
    let fingerprint = anp::keys::fingerprint(&seller.verifying_key());
    let awaited = state["messages"][3].clone();
    let reasoning = awaited["reasoning"].as_str().unwrap_or_default().to_owned();
    assert!(!reasoning.is_empty());

    // The inbox row says its protocol; j/k reach it, Enter opens it.
    app.click("nav-inbox").await?;
    let row = app
        .wait_for("the Concordia offer in the inbox", async || {
            for row in app.all("inbox-row").await? {
                let name = row
                    .find(By::Testid("inbox-counterparty"))
                    .await?
                    .text()
                    .await?;
                if name == SELLER_ORG {
                    return Ok(Some(row));
                }
            }
            Ok(None)
        })
        .await?;
    assert_eq!(
        row.attr("data-protocol").await?.as_deref(),
        Some("concordia")
    );
    select_with_keys(&app, SELLER_ORG).await?;
    app.press(Key::Enter).await?;
    let view = app.testid("offer-view").await?;
    app.wait_for("the Concordia offer view", async || {
        Ok((view.attr("data-protocol").await?.as_deref() == Some("concordia")).then_some(()))
    })
    .await?;
    app.testid("concordia-diff").await?;

    // Protocol, counterparty, the pinned key's fingerprint.
    assert_eq!(text_of(&app, "offer-protocol").await?, "Concordia");
    assert_eq!(text_of(&app, "offer-counterparty").await?, SELLER_ORG);
    assert_eq!(
        text_of(&app, "concordia-key-fingerprint").await?,
        fingerprint
    );
    assert_eq!(
        text_of(&app, "counterparty-fingerprint").await?,
        fingerprint
    );
    assert_eq!(
        text_of(&app, "concordia-message-hash").await?,
        concordia_hash(&awaited)?
    );

    // What changed against the agent's own opening offer: every term it
    // moved (price, delivery, payment terms, warranty), as changed.
    let mut changed = BTreeSet::new();
    for change in app.all("concordia-term-change").await? {
        if change.attr("data-status").await?.as_deref() == Some("changed") {
            changed.insert(change.attr("data-term").await?.unwrap_or_default());
        }
    }
    let expected: BTreeSet<String> = ["delivery", "payment_terms", "price", "warranty_months"]
        .map(str::to_owned)
        .into();
    assert_eq!(changed, expected);

    // The reasoning: exactly the seller's words, as text, no element made of them.
    let shown = app.testid("concordia-reasoning-text").await?;
    assert_eq!(shown.text().await?, reasoning);
    let children = app
        .script(
            "return document.querySelector('[data-testid=concordia-reasoning-text]').childElementCount;",
            vec![],
        )
        .await?;
    assert_eq!(children, json!(0));
    app.screenshot("concordia-offer").await?;

    // Approved with the keyboard: `a`, then Enter on "Confirm approval".
    app.press("a").await?;
    app.testid("approve-summary").await?;
    wait_focused(&app, "approve-confirm").await?;
    app.press(Key::Enter).await?;
    app.wait_for("the Concordia offer to read as approved", async || {
        let decided = match app.driver.find(By::Testid("offer-decided")).await {
            Ok(e) => e.text().await?,
            Err(_) => return Ok(None),
        };
        Ok((decided == "Approved").then_some(()))
    })
    .await?;
    app.testid("decision-summary").await?;
    assert!(
        app.all("approve-button").await?.is_empty(),
        "no approve button once decided"
    );

    // On the gate, as the demo's agent reads it: approved, with a receipt
    // that verifies against the awaited message; then the agent accepts and
    // the session is agreed.
    let url = app
        .invoke("hosts", json!({}))
        .await?
        .as_array()
        .and_then(|hosts| hosts.iter().find(|h| h["sandbox"] == json!(true)))
        .and_then(|h| h["url"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| E2eError::Unexpected("no sandbox host".into()))?;
    let agent = GateClient::new(
        &url,
        signing_key(&state["buyer_key"])?,
        state["agent_id"].as_str().unwrap_or_default(),
    )
    .map_err(|e| E2eError::Unexpected(e.to_string()))?;
    let session = state["session_id"].as_str().unwrap_or_default().to_owned();
    let status = agent
        .request(&session, "req-1")
        .await
        .map_err(|e| E2eError::Unexpected(e.to_string()))?;
    assert_eq!(status.status.as_str(), "approved");
    check_decision(&status, &awaited, time::OffsetDateTime::now_utc())
        .map_err(|e| E2eError::Unexpected(format!("the receipt: {e}")))?;
    app.wait_within(
        "the session to be agreed on the gate",
        Duration::from_secs(30),
        async || {
            let view = agent
                .session(&session)
                .await
                .map_err(|e| E2eError::Unexpected(e.to_string()))?;
            Ok((view.state == "agreed").then_some(()))
        },
    )
    .await?;
    app.screenshot("concordia-decided").await?;

    // History: the toast opens the session; once the console has read the
    // agent's accept, the timeline ends with it; the export is the
    // transcript with its keys and the receipt, and countersign-verify
    // checks it as it is.
    app.click("toast-open-history").await?;
    app.testid("session-view").await?;
    assert_eq!(text_of(&app, "session-protocol").await?, "Concordia");
    app.wait_for("the agent's accept in the session's timeline", async || {
        let kinds = app
            .script(
                "return [...document.querySelectorAll('[data-testid=timeline-row]')]\
                   .map(r => r.querySelector('[data-testid=timeline-kind]').dataset.kind);",
                vec![],
            )
            .await?;
        Ok(
            (kinds.as_array().and_then(|k| k.last()) == Some(&json!("negotiate.accept")))
                .then_some(()),
        )
    })
    .await?;
    assert!(app.all("series-counterparty").await?.len() == 1);
    app.click("export-json").await?;
    let written = app.testid("export-path").await?;
    let path = written.find(By::Css("span.mono")).await?.text().await?;
    let bytes = std::fs::read(&path).map_err(|source| E2eError::Io {
        what: format!("reading the export {path}"),
        source,
    })?;
    let options = countersign_verify::Options {
        now: time::OffsetDateTime::now_utc(),
        offer: None,
        pin: None,
    };
    let outcome =
        countersign_verify::verify_input(&path, &countersign_verify::Input::new(&bytes), &options);
    assert_eq!(outcome.status, "verified", "{:?}", outcome.failures);
    assert!(
        outcome.summary.contains("state agreed"),
        "{}",
        outcome.summary
    );
    assert!(
        outcome.summary.contains("1 receipts checked"),
        "{}",
        outcome.summary
    );
    app.screenshot("concordia-session").await?;
    app.quit().await
}

/// The hash Concordia gives a message (`sha256:` and the hex SHA-256 of its
/// canonical JSON), computed here from the demo's copy.
fn concordia_hash(message: &Value) -> Result<String> {
    let text = jcs::to_string_strict(message).map_err(|e| E2eError::Unexpected(e.to_string()))?;
    Ok(jcs::sha256_prefixed(text.as_bytes()))
}

/// Types `text` into the counter editor's field of term `id`, replacing it.
async fn retype_term(app: &App, id: &str, text: &str) -> Result<()> {
    let field = app
        .driver
        .find(By::Css(format!(
            "[data-testid=counter-term][data-term={id}]"
        )))
        .await?;
    field.send_keys(Key::Control + "a").await?;
    field.send_keys(Key::Backspace).await?;
    if !text.is_empty() {
        field.send_keys(text).await?;
    }
    Ok(())
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn an_impossible_concordia_counter_shows_every_error_beside_its_term_and_cannot_be_sent(
) -> Result<()> {
    let app = App::launch().await?;
    app.testid("sandbox-banner").await?;
    let state = demo_state(&app).await?;
    app.click("nav-inbox").await?;
    app.wait_for("the Concordia offer in the inbox", async || {
        for row in app.all("inbox-counterparty").await? {
            if row.text().await? == SELLER_ORG {
                return Ok(Some(()));
            }
        }
        Ok(None)
    })
    .await?;
    select_with_keys(&app, SELLER_ORG).await?;
    app.press(Key::Enter).await?;
    app.testid("concordia-diff").await?;
    app.click("counter-button").await?;
    app.testid("counter-editor").await?;

    // The counter: an impossible date, a negative quantity, an
    // empty warranty and a price in words.
    retype_term(&app, "delivery", "2027-13-45").await?;
    retype_term(&app, "quantity", "-5").await?;
    retype_term(&app, "warranty_months", "").await?;
    retype_term(&app, "price", "forty thousand").await?;
    app.testid("counter-reason")
        .await?
        .send_keys("Our terms.")
        .await?;
    app.click("counter-validate").await?;
    let errors = app
        .wait_for("every error beside its term", async || {
            let mut terms = BTreeSet::new();
            for e in app.all("field-error").await? {
                terms.insert(e.attr("data-term").await?.unwrap_or_default());
            }
            Ok((terms.len() == 4).then_some(terms))
        })
        .await?;
    let expected: BTreeSet<String> = ["delivery", "price", "quantity", "warranty_months"]
        .map(str::to_owned)
        .into();
    assert_eq!(errors, expected);
    assert!(!app.testid("counter-submit").await?.is_enabled().await?);
    assert!(app.all("counter-preview").await?.is_empty());
    app.screenshot("concordia-counter-impossible").await?;

    // Fixed, it passes; the preview shows the expiry the counter will carry.
    retype_term(&app, "delivery", "2030-01-31").await?;
    retype_term(&app, "quantity", "2000").await?;
    retype_term(&app, "warranty_months", "36").await?;
    retype_term(&app, "price", "40000.00").await?;
    app.click("counter-validate").await?;
    let preview = app.testid("counter-preview").await?;
    let validity = preview
        .find(By::Testid("concordia-validity-change"))
        .await?
        .text()
        .await?;
    assert!(
        !validity.ends_with("→ —"),
        "the counter carries an expiry: {validity}"
    );
    app.click("counter-submit").await?;
    let to = app.testid("confirm-to").await?.text().await?;
    assert!(to.contains(SELLER_ORG), "{to}");
    assert_eq!(
        app.testid("confirm-binds")
            .await?
            .attr("data-binds")
            .await?
            .as_deref(),
        Some("no")
    );
    app.screenshot("concordia-counter-confirm").await?;
    app.click("confirm-send").await?;
    app.wait_for("the Concordia offer to read as countered", async || {
        let decided = match app.driver.find(By::Testid("offer-decided")).await {
            Ok(e) => e.text().await?,
            Err(_) => return Ok(None),
        };
        Ok((decided == "Countered").then_some(()))
    })
    .await?;

    // On the gate: exactly the fixed terms, nothing impossible.
    let url = app
        .invoke("hosts", json!({}))
        .await?
        .as_array()
        .and_then(|hosts| hosts.iter().find(|h| h["sandbox"] == json!(true)))
        .and_then(|h| h["url"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| E2eError::Unexpected("no sandbox host".into()))?;
    {
        let agent = GateClient::new(
            &url,
            signing_key(&state["buyer_key"])?,
            state["agent_id"].as_str().unwrap_or_default(),
        )
        .map_err(|e| E2eError::Unexpected(e.to_string()))?;
        let session = state["session_id"].as_str().unwrap_or_default().to_owned();
        let status = agent
            .request(&session, "req-1")
            .await
            .map_err(|e| E2eError::Unexpected(e.to_string()))?;
        let terms = status.counter_terms.unwrap_or_default();
        assert_eq!(terms["quantity"]["value"], json!(2000), "{terms}");
        assert_eq!(terms["delivery"]["value"], json!("2030-01-31"), "{terms}");
    }
    app.quit().await
}
