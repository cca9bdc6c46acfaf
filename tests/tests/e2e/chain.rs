//! A chain of approvals as a person meets it (issue 30): on a real host of
//! the test's own, the org's policy of authority sends a 23,100 USD offer
//! to a buyer, then finance. Grace, in finance, opens it first: the
//! inbox lists it after what waits on her ("waits on buyer"); the decision
//! panel says why it was routed, shows both steps, and offers nothing to
//! sign. Once Ann (the buyer, at her own console) approves, the
//! panel says it is Grace's turn, and her approval accepts the offer.

use countersign_client::ApproverClient;
use countersign_e2e::{outsider, App, E2eError, Result};
use thirtyfour::prelude::*;

use super::{connect_as, inbox_row_of, last_hash};

/// Buyer then finance above 10,000 USD; a buyer alone otherwise.
const POLICY: &str = r#"
[roles]
buyer = ["ann@fabrikam.example"]
finance = ["grace@fabrikam.example"]

[[rule]]
name = "Above 10,000 USD"
amount = [{ currency = "USD", above = "10000" }]
[[rule.step]]
role = "buyer"
[[rule.step]]
role = "finance"

[unnamed_currency]
reason = "other currencies go to finance"
[[unnamed_currency.step]]
role = "finance"

[no_rule]
reason = "everything else: one buyer"
[[no_rule.step]]
role = "buyer"
"#;

fn unexpected(what: &'static str) -> impl Fn(countersign_host::HostError) -> E2eError {
    move |e| E2eError::Unexpected(format!("{what}: {e}"))
}

/// The `data-turn` of the decision panel's chain, once it shows one.
async fn turn(app: &App) -> Result<String> {
    let chain = app.testid("chain-turn").await?;
    Ok(chain.attr("data-turn").await?.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn a_two_step_chain_waits_on_the_buyer_then_offers_finance_its_turn() -> Result<()> {
    let host_dir = tempfile::tempdir().map_err(|source| E2eError::Io {
        what: "creating the host's directory".into(),
        source,
    })?;
    let host =
        countersign_host::Host::open(&host_dir.path().join("host.sqlite3"), Default::default())
            .await
            .map_err(unexpected("opening the host"))?;
    let org = host
        .create_org("Fabrikam")
        .await
        .map_err(unexpected("creating an org"))?
        .org_handle;
    host.load_authority(&org, POLICY, "E2E Admin")
        .await
        .map_err(unexpected("loading the policy of authority"))?;
    let grace_code = host
        .enroll_code(&org, "Grace Hopper", "grace@fabrikam.example")
        .await
        .map_err(unexpected("issuing Grace's code"))?
        .code;
    let ann_code = host
        .enroll_code(&org, "Ann Buyer", "ann@fabrikam.example")
        .await
        .map_err(unexpected("issuing Ann's code"))?
        .code;
    let running = host
        .spawn("127.0.0.1:0")
        .await
        .map_err(unexpected("starting the host"))?;
    let url = running.base_url();
    let ann_key = anp::keys::generate_signing_key();
    let client_error = |what: &'static str| {
        move |e: countersign_client::ClientError| E2eError::Unexpected(format!("{what}: {e}"))
    };
    let enrolled = ApproverClient::enroll(
        &url,
        &ann_code,
        "Ann Buyer",
        "ann@fabrikam.example",
        &ann_key,
    )
    .await
    .map_err(client_error("enrolling Ann"))?;
    let ann = ApproverClient::new(&url, ann_key, &enrolled.approver_id)
        .map_err(client_error("Ann's client"))?;

    let app = App::launch().await?;
    connect_as(
        &app,
        &url,
        &grace_code,
        "Grace Hopper",
        "grace@fabrikam.example",
    )
    .await?;
    app.testid("connected-notice").await?;

    // 3 lines of 10, 11 and 12 seats at 700: 23,100 USD.
    let vendor = outsider::Vendor::register(&url, "Chain Vendor", "Chain Agent").await?;
    running
        .host
        .verify_agent(&vendor.agent_id)
        .await
        .map_err(unexpected("verifying the vendor"))?;
    let session = vendor.open_org_session(&org, "Chain Vendor").await?;
    let log = vendor
        .offer(&session, outsider::offer(3, 700, "Two steps.", &[]))
        .await?;
    let offer_hash = last_hash(&log)?;

    // Grace's inbox lists it after what waits on her, saying on whom it waits.
    let row = inbox_row_of(&app, "Chain Vendor").await?;
    let note = row.find(By::Testid("inbox-waits-on")).await?.text().await?;
    assert_eq!(note, "waits on buyer");
    let section = app.testid("inbox-section").await?.text().await?;
    assert!(section.starts_with("Waiting on others"), "{section}");
    app.screenshot("chain-inbox").await?;
    // Opened: routed, both steps shown, nothing to sign.
    row.click().await?;
    let why = app.testid("chain-why").await?.text().await?;
    assert_eq!(why, "Routed: Above 10,000 USD: rule 1 (policy version 1)");
    let steps = app.all("chain-step").await?;
    assert_eq!(steps.len(), 2);
    assert!(steps[0]
        .text()
        .await?
        .starts_with("Step 1 · buyer 0 of 1; may approve: ann@fabrikam.example"));
    assert_eq!(turn(&app).await?, "not-yours");
    assert!(
        app.all("approve-button").await?.is_empty(),
        "no approve button out of turn"
    );
    app.screenshot("chain-not-yours").await?;

    // Ann approves at her own console: step 1 is met.
    let decided = ann
        .decide(
            &session,
            &ann.approve_request(&offer_hash, "ann@fabrikam.example"),
        )
        .await
        .map_err(client_error("Ann's approval"))?;
    assert_eq!(
        decided.detail,
        "Approved at step 1 as buyer; step 2 waits on finance (1 more)."
    );

    // Grace's panel turns to her without her doing anything.
    app.wait_for("Grace's turn in the chain", async || {
        Ok((turn(&app).await? == "yours").then_some(()))
    })
    .await?;
    let steps = app.all("chain-step").await?;
    assert!(steps[0]
        .text()
        .await?
        .contains("approved by ann@fabrikam.example"));
    app.screenshot("chain-your-turn").await?;
    app.click("approve-button").await?;
    app.click("approve-confirm").await?;
    let outcome = app.testid("outcome").await?.text().await?;
    assert!(outcome.contains("Approved"), "{outcome}");
    let log = vendor.log(&session).await?;
    assert_eq!(
        log.events.last().map(|e| e.kind.as_str()),
        Some("accept"),
        "the offer is accepted once finance approved"
    );
    let result = app.quit().await;
    running.shutdown().await;
    result
}

/// A new user meets a chain on first launch: the sandbox's policy sends
/// Northwind Software's 570,000 USD offer to a buyer, then finance; Grace,
/// the demo colleague, approves the first step by herself, and the offer
/// then waits on the person, whose approval (as finance) accepts it; the
/// history names the chain it was made on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn the_sandbox_shows_a_chain_on_first_launch_approved_by_the_colleague_then_yours(
) -> Result<()> {
    let app = App::launch().await?;
    let row = inbox_row_of(&app, "Northwind Software").await?;
    row.click().await?;
    app.wait_for("the colleague's step, then the person's turn", async || {
        Ok((turn(&app).await? == "yours").then_some(()))
    })
    .await?;
    let why = app.testid("chain-why").await?.text().await?;
    assert_eq!(
        why,
        "Routed: Northwind Software above 100,000 USD: rule 1 (policy version 1)"
    );
    let steps = app.all("chain-step").await?;
    assert_eq!(steps.len(), 2);
    assert!(steps[0]
        .text()
        .await?
        .contains("approved by grace@colleague.sandbox.example"));
    assert!(steps[1]
        .text()
        .await?
        .starts_with("Step 2 · finance 0 of 1"));
    app.screenshot("sandbox-chain").await?;
    app.click("approve-button").await?;
    app.click("approve-confirm").await?;
    let outcome = app.testid("outcome").await?.text().await?;
    assert!(outcome.contains("Approved"), "{outcome}");
    // History names the chain the decision was made on.
    app.click("nav-history").await?;
    app.wait_for("Northwind's history row", async || {
        for r in app.all("history-row").await? {
            if r.text().await?.contains("Northwind Software") {
                return Ok(Some(r));
            }
        }
        Ok(None)
    })
    .await?
    .click()
    .await?;
    let chain = app.testid("decision-chain").await?.text().await?;
    assert_eq!(
        chain,
        "As finance at step 2 · Northwind Software above 100,000 USD: rule 1 (policy version 1) · before it: step 1 buyer grace@colleague.sandbox.example"
    );
    // And the host's record of both approvals, the colleague's and the
    // person's, each with its step and role.
    let recorded = app
        .wait_for("the host's record of the approvals", async || {
            let rows = app.all("host-approval").await?;
            let mut texts = Vec::new();
            for r in rows {
                texts.push(r.text().await?);
            }
            Ok((texts.len() == 2).then_some(texts))
        })
        .await?;
    assert!(
        recorded[0].contains("Step 1 · buyer · grace@colleague.sandbox.example"),
        "{recorded:?}"
    );
    assert!(recorded[1].contains("Step 2 · finance"), "{recorded:?}");
    app.screenshot("sandbox-chain-history").await?;
    app.quit().await
}
