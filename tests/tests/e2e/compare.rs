//! Issue 27, items 4 and 7, as a person meets them: a vendor's cut reads
//! as better against the vendor's own previous offer, with our counter as
//! a gap apart; an offer that expired undecided leaves the pending rows for
//! its own section and can be dismissed, with nothing sent.

use super::*;

/// `offer` with its expiry `seconds` from now.
fn expiring_in(mut offer: Value, seconds: i64) -> Value {
    let at = time::OffsetDateTime::now_utc() + time::Duration::seconds(seconds);
    offer["expires_at"] = json!(at
        .replace_nanosecond(0)
        .unwrap_or(at)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default());
    offer
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn a_vendors_cut_reads_better_against_its_own_offer_with_our_counter_as_a_gap_apart(
) -> Result<()> {
    let s = Scenario::start("Compare").await?;
    let session = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    // Two lines of 1,200: 10 + 11 seats, 25,200 USD.
    s.vendor
        .offer(&session, outsider::offer(2, 1200, "Opening offer.", &[]))
        .await?;

    // Our counter: the first line at 1,000 (23,200 USD in all).
    s.open_offer().await?;
    s.counter_first_price("1000").await?;
    s.app.testid("counter-preview").await?;
    s.app.click("counter-submit").await?;
    s.app.click("confirm-send").await?;
    s.outcome().await?;
    s.wait_for_event(&session, "counter_offer").await?;

    // The vendor cuts its own offer to 1,100 a seat: 23,100 USD.
    s.vendor
        .offer(&session, outsider::offer(2, 1100, "Meeting you.", &[]))
        .await?;
    let row = s
        .app
        .wait_for("the vendor's new offer in the inbox", async || {
            let row = s.inbox_row().await?;
            let total = row.find(By::Testid("inbox-total")).await?.text().await?;
            Ok(total.contains("23,100").then_some(row))
        })
        .await?;
    // Against the vendor's own 25,200: 2,100 lower, better for us.
    let change = row.find(By::Testid("change")).await?;
    assert_eq!(change.attr("data-effect").await?.as_deref(), Some("better"));
    let said = change.text().await?;
    assert!(said.contains("2,100"), "the change row reads {said:?}");
    assert!(said.to_lowercase().contains("better"), "{said:?}");
    // Our counter of 23,200 stands apart, as the gap.
    let gap = row.find(By::Testid("inbox-gap")).await?.text().await?;
    assert!(
        gap.contains("100") && gap.contains("below our last counter"),
        "the gap reads {gap:?}"
    );
    s.app.screenshot("inbox-compared").await?;

    // In the offer, each line's price cut is flagged better.
    row.click().await?;
    let diff = s.app.testid("offer-diff").await?;
    let better = diff.find_all(By::Css("[data-effect=better]")).await?;
    assert!(!better.is_empty(), "{}", diff.text().await?);
    assert!(
        diff.find_all(By::Css("[data-effect=worse]"))
            .await?
            .is_empty(),
        "nothing got worse: {}",
        diff.text().await?
    );
    s.app.screenshot("offer-compared").await?;
    s.app.quit().await
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn an_offer_that_expired_undecided_has_its_own_section_and_is_dismissed_with_nothing_sent(
) -> Result<()> {
    let s = Scenario::start("Expired").await?;
    let session = s.vendor.open_sandbox_session(&s.vendor_name).await?;
    s.vendor
        .offer(
            &session,
            expiring_in(outsider::offer(1, 900, "Short-lived.", &[]), 20),
        )
        .await?;
    // Pending first, while it stands.
    s.inbox_row().await?;

    // Once it expired: out of the pending rows, into "Expired, not decided".
    let expired = s
        .app
        .wait_for("the offer in the expired section", async || {
            let _ = s
                .app
                .driver
                .find(By::Testid("refresh-button"))
                .await?
                .click()
                .await;
            for row in s.app.all("expired-row").await? {
                let name = row
                    .find(By::Testid("expired-counterparty"))
                    .await?
                    .text()
                    .await?;
                if name == s.vendor_name {
                    return Ok(Some(row));
                }
            }
            Ok(None)
        })
        .await?;
    for row in s.app.all("inbox-row").await? {
        let name = row
            .find(By::Testid("inbox-counterparty"))
            .await?
            .text()
            .await?;
        assert_ne!(
            name, s.vendor_name,
            "the expired offer is no longer pending"
        );
    }
    s.app.screenshot("inbox-expired").await?;

    expired
        .find(By::Testid("expired-dismiss"))
        .await?
        .click()
        .await?;
    s.app
        .wait_for(
            "the dismissed offer to leave the expired section",
            async || {
                for row in s.app.all("expired-row").await? {
                    let name = row
                        .find(By::Testid("expired-counterparty"))
                        .await?
                        .text()
                        .await?;
                    if name == s.vendor_name {
                        return Ok(None);
                    }
                }
                Ok(Some(()))
            },
        )
        .await?;
    // Nothing was sent: the vendor's log has no answer to the offer.
    let log = s.vendor.log(&session).await?;
    assert!(
        log.events
            .iter()
            .all(|e| !matches!(e.kind.as_str(), "accept" | "decline" | "counter_offer")),
        "{:?}",
        log.events
            .iter()
            .map(|e| e.kind.as_str())
            .collect::<Vec<_>>()
    );
    s.app.quit().await
}
