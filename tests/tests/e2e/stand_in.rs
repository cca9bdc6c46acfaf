//! A decision made as a stand-in (issue 30), in the real app: on a real host
//! of the test's own, Fay (finance) lets Grace stand in for her today, at
//! her own console. A 23,100 USD offer needs a buyer, then finance; once Ann
//! (the buyer) approved, it waits on Grace: her inbox lists it under
//! "Waiting on me", the decision panel says she decides as finance for Fay,
//! and her approval accepts the offer, recorded by the host as made for
//! Fay. On the Stand-ins screen Grace sees whom she stands in for, is
//! refused a delegation with an impossible day (nothing is sent), lets Ann
//! stand in for her as legal, and takes it back.

use countersign_client::ApproverClient;
use countersign_e2e::{outsider, App, E2eError, Result};
use thirtyfour::prelude::*;

use super::{connect_as, inbox_row_of, last_hash};

/// Buyer then finance above 10,000 USD; Grace holds legal, which no rule
/// asks for (she has it to hand over).
const POLICY: &str = r#"
[roles]
buyer = ["ann@fabrikam.example"]
finance = ["fay@fabrikam.example"]
legal = ["grace@fabrikam.example"]

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

fn client_error(what: &'static str) -> impl Fn(countersign_client::ClientError) -> E2eError {
    move |e| E2eError::Unexpected(format!("{what}: {e}"))
}

/// `name` enrolled at `url` with a key of its own, by `code`.
async fn approver(url: &str, code: &str, name: &str, email: &str) -> Result<ApproverClient> {
    let key = anp::keys::generate_signing_key();
    let enrolled = ApproverClient::enroll(url, code, name, email, &key)
        .await
        .map_err(client_error("enrolling"))?;
    ApproverClient::new(url, key, &enrolled.approver_id).map_err(client_error("a client"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn a_decision_made_as_a_stand_in_says_for_whom_and_the_stand_ins_screen_gives_and_takes_back(
) -> Result<()> {
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
    let mut codes = Vec::new();
    for (name, email) in [
        ("Grace Hopper", "grace@fabrikam.example"),
        ("Ann Buyer", "ann@fabrikam.example"),
        ("Fay Finance", "fay@fabrikam.example"),
    ] {
        codes.push(
            host.enroll_code(&org, name, email)
                .await
                .map_err(unexpected("issuing a code"))?
                .code,
        );
    }
    let running = host
        .spawn("127.0.0.1:0")
        .await
        .map_err(unexpected("starting the host"))?;
    let url = running.base_url();
    let ann = approver(&url, &codes[1], "Ann Buyer", "ann@fabrikam.example").await?;
    let fay = approver(&url, &codes[2], "Fay Finance", "fay@fabrikam.example").await?;

    let app = App::launch().await?;
    connect_as(
        &app,
        &url,
        &codes[0],
        "Grace Hopper",
        "grace@fabrikam.example",
    )
    .await?;
    app.testid("connected-notice").await?;

    // Fay, at her own console, lets Grace stand in for her as finance today.
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let given = fay
        .delegate(
            "e2e-fay-to-grace",
            "grace@fabrikam.example",
            &["finance".into()],
            &today,
            &today,
            "UTC",
            time::OffsetDateTime::now_utc(),
        )
        .await
        .map_err(client_error("Fay's delegation"))?;

    let vendor = outsider::Vendor::register(&url, "Stand-in Vendor", "Stand-in Agent").await?;
    running
        .host
        .verify_agent(&vendor.agent_id)
        .await
        .map_err(unexpected("verifying the vendor"))?;
    let session = vendor.open_org_session(&org, "Stand-in Vendor").await?;
    let log = vendor
        .offer(&session, outsider::offer(3, 700, "Two steps.", &[]))
        .await?;
    let offer_hash = last_hash(&log)?;
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

    // Grace's inbox lists it as waiting on her (first, with no "waits on"
    // note and no "Waiting on others" heading above it); the panel says for
    // whom she decides.
    let row = app
        .wait_for("the offer waiting on Grace", async || {
            let row = inbox_row_of(&app, "Stand-in Vendor").await?;
            let note = row.find_all(By::Testid("inbox-waits-on")).await?;
            let others = app.all("inbox-section").await?;
            Ok((note.is_empty() && others.is_empty()).then_some(row))
        })
        .await?;
    let note = row.find(By::Testid("inbox-stand-in")).await?.text().await?;
    assert_eq!(note, "for fay@fabrikam.example");
    app.screenshot("stand-in-inbox").await?;
    row.click().await?;
    let turn = app.testid("chain-turn").await?;
    assert_eq!(turn.attr("data-turn").await?.as_deref(), Some("yours"));
    let said = turn.text().await?;
    assert!(
        said.contains("for fay@fabrikam.example"),
        "the panel says Grace decides for Fay: {said}"
    );
    app.screenshot("stand-in-your-turn").await?;
    app.click("approve-button").await?;
    app.click("approve-confirm").await?;
    let outcome = app.testid("outcome").await?.text().await?;
    assert!(outcome.contains("Approved"), "{outcome}");
    let log = vendor.log(&session).await?;
    assert_eq!(
        log.events.last().map(|e| e.kind.as_str()),
        Some("accept"),
        "the offer is accepted once Grace approved for Fay"
    );
    let recorded = running
        .host
        .store()
        .negotiations()
        .approvals(&session, &offer_hash)
        .await
        .map_err(|e| E2eError::Unexpected(format!("reading the approvals: {e}")))?;
    let for_whom: Vec<Option<String>> = recorded.iter().map(|a| a.for_email.clone()).collect();
    assert_eq!(for_whom, [None, Some("fay@fabrikam.example".to_owned())]);

    // The Stand-ins screen: whom Grace stands in for, at this host (the
    // sandbox is listed too).
    app.click("nav-stand-ins").await?;
    let here = app
        .wait_for("this host's stand-ins", async || {
            for h in app.all("stand-in-host").await? {
                if h.text().await?.contains("fay@fabrikam.example") {
                    return Ok(Some(h));
                }
            }
            Ok(None)
        })
        .await?;
    let received = here
        .find(By::Testid("stand-in-received"))
        .await?
        .text()
        .await?;
    assert!(
        received.contains("Fay") && received.contains("finance"),
        "{received}"
    );
    let _ = given;
    // An impossible day is refused in the form, and nothing is given.
    here.find(By::Css(
        "[data-testid=stand-in-to] option[value='ann@fabrikam.example']",
    ))
    .await?
    .click()
    .await?;
    here.find(By::Testid("stand-in-role-legal"))
        .await?
        .click()
        .await?;
    let from = here.find(By::Testid("stand-in-from")).await?;
    from.send_keys(Key::Control + "a").await?;
    from.send_keys("2026-02-30").await?;
    here.find(By::Testid("stand-in-give"))
        .await?
        .click()
        .await?;
    let error = here
        .find(By::Testid("stand-in-error"))
        .await?
        .text()
        .await?;
    assert!(
        error.contains("2026-02-30"),
        "the form says what is wrong: {error}"
    );
    app.screenshot("stand-in-refused").await?;
    let listed = ann
        .delegations()
        .await
        .map_err(client_error("Ann's list"))?;
    assert_eq!(listed.received.len(), 0, "nothing was given");
    // A good form: Ann stands in for Grace as legal today.
    from.send_keys(Key::Control + "a").await?;
    from.send_keys(today.as_str()).await?;
    here.find(By::Testid("stand-in-give"))
        .await?
        .click()
        .await?;
    let row = app
        .wait_for("Ann listed as Grace's stand-in", async || {
            for r in app.all("stand-in-given").await? {
                if r.text().await?.contains("Ann") {
                    return Ok(Some(r));
                }
            }
            Ok(None)
        })
        .await?;
    assert!(row.text().await?.contains("legal"));
    let ann_sees = ann
        .delegations()
        .await
        .map_err(client_error("Ann's list"))?;
    assert_eq!(ann_sees.received.len(), 1);
    assert_eq!(ann_sees.received[0].roles, ["legal"]);
    app.screenshot("stand-in-given").await?;
    // Taken back, after a confirmation.
    row.find(By::Testid("stand-in-revoke"))
        .await?
        .click()
        .await?;
    app.click("stand-in-revoke-yes").await?;
    app.wait_for("the delegation revoked at the host", async || {
        let seen = ann
            .delegations()
            .await
            .map_err(client_error("Ann's list"))?;
        Ok((seen.received[0].revoked_at.is_some()).then_some(()))
    })
    .await?;
    app.screenshot("stand-in-revoked").await?;
    let result = app.quit().await;
    running.shutdown().await;
    result
}
