//! History shows and exports a session whole: the agreed terms, every term
//! of every entry, and the acceptance and decision rows.

use crate::common::*;
use anp::EventKind;
use countersign_engine::*;

#[tokio::test]
async fn an_agreed_anp_session_shows_and_exports_every_term_with_its_acceptance_and_decision() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let (agent, session) = world.vendor("Northwind").await;
    let payload = offer(1140, DAY);
    submit(&agent, &session, EventKind::Offer, payload.clone()).await;
    engine.refresh().await.unwrap();
    let item = engine.inbox().await.unwrap().remove(0);
    let result = engine
        .decide(DecideRequest {
            host_id: item.host_id.clone(),
            session_id: session.clone(),
            in_response_to: item.event_hash.clone(),
            action: DecideAction::Approve,
            reason: None,
            counter: None,
        })
        .await
        .unwrap();
    assert_eq!(result.outcome, "appended", "{}", result.detail);

    let detail = engine
        .session_detail(&item.host_id, &session)
        .await
        .unwrap();
    assert_eq!(detail.row.state, SessionState::Agreed);
    let offer_seq = detail
        .timeline
        .iter()
        .find(|e| e.kind == "offer")
        .unwrap()
        .seq;
    let accept_seq = detail
        .timeline
        .iter()
        .find(|e| e.kind == "accept")
        .unwrap()
        .seq;
    let agreed = detail.agreed.expect("the agreed terms");
    assert_eq!(agreed.proposal_seq, Some(offer_seq));
    assert_eq!(agreed.accept_seq, accept_seq);
    assert_eq!(agreed.accepted_by, Some(Side::Ours));
    // In the order serde_json keeps an object's members (sorted, or as
    // written when a crate of the build turns on `preserve_order`): compared
    // as a set.
    let mut terms: Vec<(&str, &str)> = agreed
        .terms
        .iter()
        .map(|t| (t.name.as_str(), t.value.as_str()))
        .collect();
    terms.sort();
    let expires_at = payload["expires_at"].as_str().unwrap();
    assert_eq!(
        terms,
        [
            ("conditions[0]", "Net 60 payment"),
            ("currency", "USD"),
            ("expires_at", expires_at),
            ("line_items[0].currency", "USD"),
            ("line_items[0].description", "CRM Enterprise seats"),
            ("line_items[0].quantity", "500"),
            ("line_items[0].sku", "CRM-ENT"),
            ("line_items[0].unit", "seat/year"),
            ("line_items[0].unit_price", "1140"),
            ("notes", "Includes premier support."),
            ("term_months", "36"),
        ]
    );

    // The agreed state is one word, in the rows and in the filter.
    let agreed_rows = engine
        .sessions(HistoryFilter {
            state: Some(StateFilter::Agreed),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(agreed_rows.len(), 1);
    assert_eq!(agreed_rows[0].state, SessionState::Agreed);

    let csv = engine
        .export_session(&item.host_id, &session, ExportFormat::Csv)
        .await
        .unwrap();
    let rows = csv_rows(&std::fs::read_to_string(&csv.path).unwrap());
    assert_eq!(
        rows[0],
        [
            "record", "seq", "at", "actor", "side", "kind", "hash", "summary", "amount",
            "currency", "term", "value"
        ]
    );
    let offer_rows: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[0] == "entry" && r[1] == offer_seq.to_string())
        .collect();
    assert_eq!(offer_rows.len(), terms.len(), "one row per term: {rows:?}");
    let mut exported: Vec<(&str, &str)> = offer_rows
        .iter()
        .map(|row| (row[10].as_str(), row[11].as_str()))
        .collect();
    exported.sort();
    assert_eq!(exported, terms, "the same terms as the page");
    for row in &offer_rows {
        assert_eq!(row[8], "570000", "the offer's total beside each term");
        assert_eq!(row[4], "theirs");
    }
    let accept = rows
        .iter()
        .find(|r| r[0] == "entry" && r[5] == "accept")
        .expect("the accept row");
    assert_eq!(accept[1], accept_seq.to_string());
    assert_eq!(accept[4], "ours");
    let decision: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "decision").collect();
    assert!(!decision.is_empty(), "the decision rows: {rows:?}");
    assert!(decision.iter().all(|r| r[5] == "approve"));
    assert!(
        decision
            .iter()
            .any(|r| r[10] == "in_response_to" && r[11] == item.event_hash),
        "{decision:?}"
    );
}
