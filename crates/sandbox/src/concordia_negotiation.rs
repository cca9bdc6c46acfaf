//! The sandbox's scripted Concordia negotiation. Two parties, each with its
//! own generated Ed25519 key: a seller (Contoso's sales agent, the
//! counterparty) and the org's own buying agent, enrolled at the embedded
//! host's gate with a one-time code the way an admin enrolls one. They
//! write a real signed, hash-chained transcript; the buying agent mirrors
//! every message to the gate and, before it accepts the seller's standing
//! offer, asks for a person's decision there. The agent opens with an
//! offer of its own (proposing needs no person); the seller's counter-offer
//! is the first question, so the person sees the terms diff at once. It
//! verifies the receipts the
//! decision carries (`countersign_client::check_decision`) before acting:
//!
//! - approved: it accepts (`negotiate.accept`), and the session is AGREED;
//! - denied: it tells the seller (`negotiate.signal`), who answers with a
//!   lower offer (or withdraws at its floor), which is asked about again;
//! - countered: it sends the person's terms (`negotiate.counter`); the
//!   seller accepts them at or above its floor, or meets halfway with a
//!   counter-offer, asked about again;
//! - expired or superseded: the seller renews its offer, asked about again.
//!
//! What it did is kept in `concordia-demo.json` beside the host's database
//! (keys, agent id, transcript), so a restart continues the same session.

use approval_receipt::{datetime, edges, keys};
use countersign_client::{check_decision, GateClient};
use countersign_host_api::gate::{
    CreateSession, GateCounterparty, GateRequestStatus, RequestState,
};
use ed25519_dalek::SigningKey;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::gate_agent::{self, key_of, key_text, Asked, Log, Next, Script};
use crate::SandboxError;
use crate::{DemoHost, IoFuture};

/// The seller's party id in the transcript.
pub(crate) const SELLER: &str = "agent_contoso_sales";
/// The org's own buying agent's party id.
pub(crate) const BUYER: &str = "agent_fabrikam_procurement";
/// The seller as the buying agent names it to the gate.
pub(crate) const SELLER_NAME: &str = "Contoso Sales Agent";
/// The seller's organization.
pub(crate) const SELLER_ORG: &str = "Contoso Industrial";
/// The buying agent's name at the gate.
const BUYER_NAME: &str = "Fabrikam Procurement Agent";
/// The seller's first price, in USD.
pub(crate) const FIRST_PRICE: i64 = 48_000;
/// The buying agent's opening offer, in USD.
pub(crate) const OPENING_BID: i64 = 40_000;
/// The seller never goes below this.
pub(crate) const FLOOR: i64 = 42_000;
/// The seller gives up after this many offers of its own.
const MAX_SELLER_OFFERS: usize = 6;
/// How long each offer stands (and the session's `offer_ttl`).
const OFFER_SECS: i64 = gate_agent::ASK_SECS;

fn sandbox_error(e: impl std::fmt::Display) -> SandboxError {
    gate_agent::demo_error("the Concordia demo", e)
}

/// Now plus `offset_secs`, as Concordia messages carry a time.
fn now_text(offset_secs: i64) -> String {
    datetime::format_utc(OffsetDateTime::now_utc() + time::Duration::seconds(offset_secs))
}

/// Everything the demo remembers across restarts.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct DemoState {
    /// The buying agent's key seed (base64url): a sandbox key, made here.
    buyer_key: String,
    /// The seller's.
    seller_key: String,
    /// The gate's id for the buying agent.
    agent_id: String,
    session_id: String,
    /// The whole transcript, in order.
    messages: Vec<Value>,
    /// How many of them the gate holds.
    mirrored: usize,
    asked: Option<Asked>,
    /// Requests made so far (their ids are numbered).
    requests: u32,
}

/// The two parties and what they have written: the transcript grows only
/// through [`Talk::say`], which signs and links each message.
struct Talk<'s> {
    state: &'s mut DemoState,
    buyer: SigningKey,
    seller: SigningKey,
}

impl Talk<'_> {
    /// Signs and appends one message from `from` (`BUYER` or `SELLER`).
    fn say(
        &mut self,
        from: &str,
        kind: &str,
        body: Value,
        reasoning: Option<&str>,
    ) -> Result<(), SandboxError> {
        let to = if from == BUYER { SELLER } else { BUYER };
        let prev = match self.state.messages.last() {
            Some(m) => edges::hash(m).map_err(sandbox_error)?,
            None => concordia::GENESIS_HASH.to_owned(),
        };
        let mut m = json!({
            "concordia": "0.1.0", "type": kind,
            "id": format!("msg_{:04}", self.state.messages.len()),
            "session_id": self.state.session_id, "timestamp": now_text(0),
            "from": {"agent_id": from}, "to": [{"agent_id": to}],
            "prev_hash": prev, "body": body,
        });
        if let Some(text) = reasoning {
            m["reasoning"] = json!(text);
        }
        let key = if from == BUYER {
            &self.buyer
        } else {
            &self.seller
        };
        let pre = edges::canonical(&m).map_err(sandbox_error)?;
        m["signature"] = json!(keys::sign(key, pre.as_bytes()));
        self.state.messages.push(m);
        Ok(())
    }

    /// The seller's offer at `price` USD (`negotiate.offer` or `.counter`).
    fn seller_offers(
        &mut self,
        kind: &str,
        price: i64,
        reasoning: &str,
    ) -> Result<(), SandboxError> {
        self.say(
            SELLER,
            kind,
            offer_body(price, "2027-01-15", "Net 30", 24),
            Some(reasoning),
        )
    }

    /// The seller's offers so far, newest last.
    fn seller_prices(&self) -> Vec<Decimal> {
        self.state
            .messages
            .iter()
            .filter(|m| m.pointer("/from/agent_id").and_then(Value::as_str) == Some(SELLER))
            .filter_map(|m| price_in(m.pointer("/body/terms")?))
            .collect()
    }
}

fn offer_body(price: i64, delivery: &str, payment: &str, warranty_months: u32) -> Value {
    json!({
        "offer_id": format!("off_{}", uuid::Uuid::new_v4().simple()),
        "terms": {
            "item": {"value": "Industrial vibration sensors, model VX-200"},
            "quantity": {"value": 2000, "unit": "units"},
            "price": {"value": price, "currency": "USD"},
            "delivery": {"value": delivery, "type": "date"},
            "payment_terms": {"value": payment},
            "warranty_months": {"value": warranty_months},
        },
        "complete": true,
        "valid_until": now_text(OFFER_SECS),
    })
}

/// The exact price of a terms object (`terms.price.value`).
fn price_in(terms: &Value) -> Option<Decimal> {
    concordia::offer::exact_decimal(terms.pointer("/price/value")?)
}

fn whole(price: Decimal) -> i64 {
    price.round().try_into().unwrap_or(i64::MAX)
}

/// Opens the session: the buying agent proposes it and makes the first
/// offer (proposing needs no person; accepting does), the seller joins and
/// answers with a counter-offer on every term, the first question asked.
fn open(talk: &mut Talk<'_>) -> Result<(), SandboxError> {
    talk.say(
        BUYER,
        "negotiate.open",
        json!({
            "terms": {
                "item": {"value": "Industrial vibration sensors, model VX-200"},
                "quantity": {"value": 2000, "unit": "units"},
            },
            "timing": {"session_ttl": 30 * 24 * 3600, "offer_ttl": OFFER_SECS, "max_rounds": 20},
        }),
        Some("Fabrikam needs 2,000 VX-200 sensors for the new plant."),
    )?;
    talk.say(SELLER, "negotiate.accept_session", json!({}), None)?;
    talk.say(
        BUYER,
        "negotiate.offer",
        offer_body(OPENING_BID, "2027-01-31", "Net 45", 36),
        Some("Our target for this volume, in line with last year's order."),
    )?;
    talk.seller_offers(
        "negotiate.counter",
        FIRST_PRICE,
        "List price for the 2,000-unit volume tier; we can deliver two weeks earlier, on Net 30 with our standard two-year warranty.",
    )
}

/// First launch: two keys, the buying agent enrolled at the gate with a
/// code the host's admin issues, and the session opened.
async fn begin(sandbox: &DemoHost) -> Result<DemoState, SandboxError> {
    let (buyer, agent_id) = gate_agent::enroll(sandbox, BUYER_NAME, "concordia").await?;
    let seller = SigningKey::generate(&mut rand::rngs::OsRng);
    let mut state = DemoState {
        buyer_key: key_text(&buyer),
        seller_key: key_text(&seller),
        agent_id,
        session_id: format!("ses_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]),
        messages: Vec::new(),
        mirrored: 0,
        asked: None,
        requests: 0,
    };
    open(&mut Talk {
        state: &mut state,
        buyer,
        seller,
    })?;
    Ok(state)
}

/// Runs the demo against the sandbox for as long as it runs.
pub(crate) async fn run(sandbox: &DemoHost) -> Result<(), SandboxError> {
    gate_agent::run(sandbox, "concordia-demo.json", || begin(sandbox)).await
}

impl Script for DemoState {
    fn agent(&self) -> (&str, &str) {
        (&self.buyer_key, &self.agent_id)
    }

    fn step<'a>(&'a mut self, gate: &'a GateClient) -> IoFuture<'a, Result<Next, SandboxError>> {
        Box::pin(step(gate, self))
    }
}

fn message_hash(message: &Value) -> Result<String, SandboxError> {
    edges::hash(message).map_err(sandbox_error)
}

/// Mirrors what the gate does not hold yet.
async fn mirror(gate: &GateClient, state: &mut DemoState) -> Result<(), SandboxError> {
    let log = Log {
        session_id: &state.session_id,
        messages: &state.messages,
        mirrored: &mut state.mirrored,
        hash: message_hash,
    };
    let (buyer_key, seller_key, session_id) =
        (&state.buyer_key, &state.seller_key, &state.session_id);
    gate_agent::mirror(gate, log, || {
        let buyer = key_of(buyer_key)?;
        let seller = key_of(seller_key)?;
        Ok(CreateSession {
            protocol: "concordia".to_owned(),
            session_id: session_id.clone(),
            keys: [
                (
                    BUYER.to_owned(),
                    keys::public_key_text(&buyer.verifying_key()),
                ),
                (
                    SELLER.to_owned(),
                    keys::public_key_text(&seller.verifying_key()),
                ),
            ]
            .into(),
            self_party: BUYER.to_owned(),
            counterparty: GateCounterparty {
                id: SELLER.to_owned(),
                name: Some(SELLER_NAME.to_owned()),
                organization: Some(SELLER_ORG.to_owned()),
            },
            messages: Vec::new(),
        })
    })
    .await
}

/// One turn: mirror, ask about the seller's standing offer, or act on the
/// person's decision.
async fn step(gate: &GateClient, state: &mut DemoState) -> Result<Next, SandboxError> {
    mirror(gate, state).await?;
    let Some(asked) = state.asked.clone() else {
        let Some(index) = state.messages.len().checked_sub(1) else {
            return Err(sandbox_error("its state file holds no transcript"));
        };
        let last = &state.messages[index];
        let standing = last.pointer("/from/agent_id").and_then(Value::as_str) == Some(SELLER)
            && matches!(
                last.get("type").and_then(Value::as_str),
                Some("negotiate.offer" | "negotiate.counter")
            );
        if !standing {
            // Agreed, withdrawn: the negotiation is over.
            return Ok(Next::Done);
        }
        let amount = last
            .pointer("/body/terms")
            .and_then(price_in)
            .map(|p| format!("{p} USD"));
        let hash = message_hash(last)?;
        let asked = gate_agent::ask(
            gate,
            &state.session_id,
            index,
            hash,
            amount,
            &mut state.requests,
        )
        .await?;
        state.asked = Some(asked);
        return Ok(Next::Wait);
    };
    let Some((status, awaited)) =
        gate_agent::settled(gate, &state.session_id, &asked, &state.messages).await?
    else {
        return Ok(Next::Wait);
    };
    let mut talk = Talk {
        buyer: key_of(&state.buyer_key)?,
        seller: key_of(&state.seller_key)?,
        state,
    };
    react(&mut talk, &status, &awaited)?;
    talk.state.asked = None;
    mirror(gate, talk.state).await?;
    Ok(Next::Wait)
}

/// The buying agent acts on a decided request, and the seller answers.
fn react(
    talk: &mut Talk<'_>,
    status: &GateRequestStatus,
    awaited: &Value,
) -> Result<(), SandboxError> {
    if matches!(
        status.status,
        RequestState::Approved | RequestState::Denied | RequestState::Countered
    ) {
        // The host's word is not enough: the receipts must verify.
        check_decision(status, awaited, OffsetDateTime::now_utc()).map_err(sandbox_error)?;
    }
    let offer_id = awaited
        .pointer("/body/offer_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let prices = talk.seller_prices();
    let ours = prices.last().copied().unwrap_or(Decimal::from(FIRST_PRICE));
    let floor = Decimal::from(FLOOR);
    let spent = prices.len() >= MAX_SELLER_OFFERS;
    match status.status {
        RequestState::Approved => talk.say(
            BUYER,
            "negotiate.accept",
            json!({"offer_id": offer_id}),
            Some("Approved by Fabrikam's approver."),
        ),
        RequestState::Denied => {
            // The person's reason reaches the seller, as an ANP decline's does.
            let why = match status.reason.as_deref() {
                Some(reason) => format!("Our approver declined this offer: {reason}"),
                None => "Our approver declined this offer.".to_owned(),
            };
            talk.say(
                BUYER,
                "negotiate.signal",
                json!({"priority_ranking": ["price", "delivery"], "flexibility": {"price": "firm"}}),
                Some(&why),
            )?;
            if ours <= floor || spent {
                talk.say(
                    SELLER,
                    "negotiate.withdraw",
                    json!({"reason": "That was our best price."}),
                    Some("We cannot go below our last offer."),
                )
            } else {
                let next = (ours - (ours - floor) / Decimal::from(2)).max(floor);
                talk.seller_offers(
                    "negotiate.offer",
                    whole(next),
                    "We can move on price if delivery stays on 15 January.",
                )
            }
        }
        RequestState::Countered => {
            let terms = status.counter_terms.clone().unwrap_or(Value::Null);
            let theirs = price_in(&terms);
            // The counter stands no longer than the receipt that authorizes
            // it (docs/gate-api.md): the expiry the person saw in the preview.
            let valid_until = status
                .receipt
                .as_ref()
                .and_then(|r| r.get("expires_at"))
                .and_then(Value::as_str)
                .map_or_else(|| now_text(OFFER_SECS), str::to_owned);
            talk.say(
                BUYER,
                "negotiate.counter",
                json!({
                    "offer_id": format!("off_{}", uuid::Uuid::new_v4().simple()),
                    "terms": terms,
                    "complete": true,
                    "valid_until": valid_until,
                }),
                Some(status.reason.as_deref().unwrap_or("Our counter-offer.")),
            )?;
            let buyer_offer = talk
                .state
                .messages
                .last()
                .and_then(|m| m.pointer("/body/offer_id"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            match theirs {
                Some(p) if p >= floor => talk.say(
                    SELLER,
                    "negotiate.accept",
                    json!({"offer_id": buyer_offer}),
                    Some("We accept your terms."),
                ),
                _ if spent => talk.say(
                    SELLER,
                    "negotiate.withdraw",
                    json!({"reason": "We could not meet your terms."}),
                    None,
                ),
                theirs => {
                    let meet = match theirs {
                        Some(p) => ((ours + p) / Decimal::from(2)).max(floor),
                        None => (ours - (ours - floor) / Decimal::from(2)).max(floor),
                    };
                    talk.seller_offers(
                        "negotiate.counter",
                        whole(meet),
                        "Meeting you halfway; this is close to our floor for this volume.",
                    )
                }
            }
        }
        // Nobody decided in time, or something newer answered it: the
        // seller renews its offer so the question can be asked again.
        RequestState::Expired | RequestState::Superseded | RequestState::Pending => talk
            .seller_offers(
                "negotiate.offer",
                whole(ours),
                "Renewing our offer, unchanged.",
            ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use countersign_host_api::gate::GateAction;

    fn talk_state() -> DemoState {
        DemoState {
            buyer_key: key_text(&SigningKey::generate(&mut rand::rngs::OsRng)),
            seller_key: key_text(&SigningKey::generate(&mut rand::rngs::OsRng)),
            agent_id: "gate_test".into(),
            session_id: "ses_demo_test".into(),
            messages: Vec::new(),
            mirrored: 0,
            asked: None,
            requests: 0,
        }
    }

    fn status(state: RequestState) -> GateRequestStatus {
        GateRequestStatus {
            request_id: "req-1".into(),
            status: state,
            message_hash: String::new(),
            action: GateAction::Accept,
            amount: "48000 USD".into(),
            threshold: "250000 USD".into(),
            expires_at: now_text(60),
            created_at: now_text(0),
            approvals_given: 1,
            approvals_required: 1,
            receipt: None,
            receipts: Vec::new(),
            decided_by: Vec::new(),
            reason: None,
            counter_terms: None,
            held_reason: None,
            extensions: Vec::new(),
            approvals: Vec::new(),
        }
    }

    fn with_talk<T>(state: &mut DemoState, f: impl FnOnce(&mut Talk<'_>) -> T) -> T {
        let (buyer, seller) = (
            key_of(&state.buyer_key).unwrap(),
            key_of(&state.seller_key).unwrap(),
        );
        f(&mut Talk {
            state,
            buyer,
            seller,
        })
    }

    #[test]
    fn the_opening_is_a_transcript_crates_concordia_verifies_with_the_sellers_counter_standing() {
        let mut state = talk_state();
        with_talk(&mut state, open).unwrap();
        let mut ring = concordia::transcript::Keys::new();
        ring.insert(
            BUYER.into(),
            key_of(&state.buyer_key).unwrap().verifying_key(),
        );
        ring.insert(
            SELLER.into(),
            key_of(&state.seller_key).unwrap().verifying_key(),
        );
        let report = concordia::transcript::verify_transcript(&state.messages, &ring);
        assert!(report.is_valid(), "{report:?}");
        let kinds: Vec<&str> = state
            .messages
            .iter()
            .map(|m| m["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "negotiate.open",
                "negotiate.accept_session",
                "negotiate.offer",
                "negotiate.counter"
            ]
        );
        assert_eq!(state.messages[2]["from"]["agent_id"], BUYER);
        assert_eq!(
            price_in(&state.messages[2]["body"]["terms"]),
            Some(Decimal::from(OPENING_BID))
        );
        assert_eq!(state.messages[3]["from"]["agent_id"], SELLER);
        assert_eq!(
            price_in(&state.messages[3]["body"]["terms"]),
            Some(Decimal::from(FIRST_PRICE))
        );
        // The stored keys round-trip.
        let again = key_of(&state.buyer_key).unwrap();
        assert_eq!(key_text(&again), state.buyer_key);
        assert!(key_of("not a key").is_err());
    }

    #[test]
    fn a_decision_whose_receipts_do_not_verify_is_not_acted_on() {
        let mut state = talk_state();
        with_talk(&mut state, open).unwrap();
        let awaited = state.messages[3].clone();
        for decided in [
            RequestState::Approved,
            RequestState::Denied,
            RequestState::Countered,
        ] {
            // The host says so, but carries no receipt: nothing is sent.
            let err = with_talk(&mut state, |t| react(t, &status(decided), &awaited)).unwrap_err();
            assert!(err.to_string().contains("receipt"), "{err}");
            assert_eq!(state.messages.len(), 4, "{decided:?}");
        }
    }

    #[test]
    fn an_expired_request_has_the_seller_renew_its_offer_unchanged() {
        let mut state = talk_state();
        with_talk(&mut state, open).unwrap();
        let awaited = state.messages[2].clone();
        with_talk(&mut state, |t| {
            react(t, &status(RequestState::Expired), &awaited)
        })
        .unwrap();
        let renewed = state.messages.last().unwrap();
        assert_eq!(renewed["type"], "negotiate.offer");
        assert_eq!(renewed["from"]["agent_id"], SELLER);
        assert_eq!(
            price_in(&renewed["body"]["terms"]),
            Some(Decimal::from(FIRST_PRICE))
        );
        assert_ne!(renewed["body"]["offer_id"], awaited["body"]["offer_id"]);
    }

    #[tokio::test]
    async fn a_damaged_state_file_is_refused_with_a_sentence_not_a_panic() {
        let gate = GateClient::new(
            "http://127.0.0.1:9",
            key_of(&talk_state().buyer_key).unwrap(),
            "gate_test",
        )
        .unwrap();
        let mut empty = talk_state();
        let err = step(&gate, &mut empty).await.unwrap_err();
        assert!(err.to_string().contains("holds no transcript"), "{err}");
        let mut ahead = talk_state();
        with_talk(&mut ahead, open).unwrap();
        ahead.mirrored = 9;
        let err = step(&gate, &mut ahead).await.unwrap_err();
        assert!(
            err.to_string().contains("more messages than it kept"),
            "{err}"
        );
        let mut stray = talk_state();
        with_talk(&mut stray, open).unwrap();
        stray.mirrored = stray.messages.len();
        stray.asked = Some(Asked {
            request_id: "req-1".into(),
            index: 40,
        });
        // The request is read first: with no host to answer, that fails
        // before the index is used; either way nothing is written.
        assert!(step(&gate, &mut stray).await.is_err());
        assert_eq!(stray.messages.len(), 4);
    }
}
