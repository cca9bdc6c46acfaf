//! The sandbox's scripted OANP negotiation. The org's own buyer agent
//! (Fabrikam's procurement buyer) buys twelve monitors from a merchant
//! (Contoso Monitors) before an arbiter; the merchant and the arbiter are
//! scripted here too. The buyer is enrolled at the embedded host's gate for
//! OANP with a one-time code the host's admin issues, mirrors the session log
//! to the gate over its real HTTP API, and asks for a person's decision
//! before each `offer.accept`. OANP envelopes are unsigned: each links to
//! the one before by `prev_hash` (`oanp::canonical::commit`).
//!
//! The log opens with `session.open` (buyer), `session.ack` (merchant),
//! `session.accept` (arbiter, with the rules: six rounds), the buyer's
//! `offer.propose`, the arbiter's `arbitration.evaluate`, the merchant's
//! `offer.counter` and the arbiter's verdict on it: the first question. The
//! buyer verifies the receipts a decision carries
//! (`countersign_client::check_decision`) before it acts:
//!
//! - approved: it sends `offer.accept` of the merchant's counter, and the
//!   arbiter's `session.agree` fixes those terms: the session is agreed;
//! - denied: the buyer walks away; the arbiter's `session.close` ends the
//!   session with the person's reason as its detail;
//! - countered: the buyer sends the person's terms as its `offer.counter`
//!   of the next round, the arbiter scores it, and the merchant accepts at or
//!   above its floor (`offer.accept`, then `session.agree`) or meets halfway
//!   with a new counter, asked about again; past the rule's last round the
//!   arbiter closes the session;
//! - expired or superseded: the merchant's counter still stands; the buyer
//!   asks again.
//!
//! The arbiter's verdict here is a script's: the offer's price against the
//! attested target (a score of the lower over the higher, fair within the
//! 5 % band), not the publisher's fairness profile. What the demo did is
//! kept in `oanp-demo.json` beside the host's database (the buyer's key,
//! its agent id, the log), so a restart continues the same session.

use countersign_client::{check_decision, GateClient};
use countersign_host_api::gate::{
    CreateSession, GateCounterparty, GateRequestStatus, RequestState,
};
use oanp::receipt::Terms;
use oanp::{Envelope, MessageType, Role};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::gate_agent::{self, key_text, now_text, Asked, Log, Next, Script};
use crate::SandboxError;
use crate::{DemoHost, IoFuture};

/// The buyer agent's name at the gate.
const BUYER_NAME: &str = "Fabrikam Procurement Buyer";
/// Each role's agent id, as the session's `keys` name them.
pub(crate) const BUYER_AGENT: &str = "fabrikam-procurement-buyer";
/// The merchant's agent id.
pub(crate) const MERCHANT_AGENT: &str = "contoso-monitors.merchant";
/// The arbiter's agent id.
pub(crate) const ARBITER_AGENT: &str = "arbiter.sandbox.example";
/// The merchant as the buyer names it to the gate.
pub(crate) const MERCHANT_NAME: &str = "Contoso Monitors Sales Agent";
/// The merchant's organization.
pub(crate) const MERCHANT_ORG: &str = "Contoso Monitors";
/// The one currency of the session.
const CURRENCY: &str = "USD";
/// The merchant's list price for the twelve monitors, in cents.
pub(crate) const LIST_PRICE: i64 = 540_000;
/// The buyer's opening offer, in cents.
pub(crate) const OPENING_BID: i64 = 456_000;
/// The arbiter's attested target cost, in cents.
pub(crate) const TARGET: i64 = 504_000;
/// The merchant never goes below this, in cents.
pub(crate) const FLOOR: i64 = 490_000;
/// The session's round limit (`session_rules.max_rounds`).
pub(crate) const MAX_ROUNDS: u32 = 6;
/// The fair band around a score of 1, in ten-thousandths (`0.05`).
const FAIR_BAND_E4: i64 = 500;

fn sandbox_error(e: impl std::fmt::Display) -> SandboxError {
    gate_agent::demo_error("the OANP demo", e)
}

/// Everything the demo remembers across restarts.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct DemoState {
    /// The buyer agent's key seed (base64url): a sandbox key, made here.
    buyer_key: String,
    /// The gate's id for the buyer agent.
    agent_id: String,
    session_id: String,
    /// The whole log, in order.
    messages: Vec<Value>,
    /// How many of them the gate holds.
    mirrored: usize,
    asked: Option<Asked>,
    /// Requests made so far (their ids are numbered).
    requests: u32,
}

fn agent_of(role: Role) -> &'static str {
    match role {
        Role::Buyer => BUYER_AGENT,
        Role::Merchant => MERCHANT_AGENT,
        Role::Arbiter => ARBITER_AGENT,
    }
}

fn money(amount_minor: i64) -> Value {
    json!({"amount_minor": amount_minor, "currency": CURRENCY})
}

fn terms(amount_minor: i64, inclusions: &[&str]) -> Value {
    json!({
        "price": money(amount_minor),
        "inclusions": inclusions
            .iter()
            .map(|kind| json!({"kind": kind, "value": "included"}))
            .collect::<Vec<_>>(),
    })
}

/// A hash committing to a value a party keeps to itself (its ceiling or
/// floor), salted so it cannot be guessed.
fn commitment(secret: i64) -> String {
    let salt = uuid::Uuid::new_v4().simple().to_string();
    jcs::sha256_prefixed(format!("{secret}:{salt}").as_bytes())
}

fn hash(envelope: &Value) -> Result<String, SandboxError> {
    oanp::canonical::commit(envelope).map_err(sandbox_error)
}

/// Appends one envelope from `role`, linked to the one before it.
fn say(
    state: &mut DemoState,
    kind: MessageType,
    role: Role,
    payload: Value,
) -> Result<(), SandboxError> {
    let mut e = json!({
        "type": kind.as_str(),
        "message_id": format!("msg_{:04}", state.messages.len() + 1),
        "session_id": state.session_id,
        "sender": {"role": role.as_str(), "agent_id": agent_of(role)},
        "payload": payload,
    });
    if let Some(last) = state.messages.last() {
        e["prev_hash"] = json!(hash(last)?);
    }
    state.messages.push(e);
    Ok(())
}

/// The arbiter's verdict on an offer of `price` cents in `round`.
fn evaluate(state: &mut DemoState, round: u32, price: i64) -> Result<(), SandboxError> {
    let (low, high) = (price.min(TARGET), price.max(TARGET));
    let score = low.saturating_mul(10_000) / high.max(1);
    let verdict = if score >= 10_000 - FAIR_BAND_E4 {
        "fair"
    } else if price < TARGET {
        "unfair_to_merchant"
    } else {
        "unfair_to_buyer"
    };
    say(
        state,
        MessageType::ArbitrationEvaluate,
        Role::Arbiter,
        json!({
            "round": round,
            "verdict": verdict,
            "fairness_score": format!("{}.{:04}", score / 10_000, score % 10_000),
            "suggested_adjustment": money(TARGET),
        }),
    )
}

/// An offer (`offer.propose` or `offer.counter`) by `role` in `round`, and
/// the arbiter's verdict on it.
fn offer(
    state: &mut DemoState,
    kind: MessageType,
    role: Role,
    round: u32,
    terms: Value,
) -> Result<(), SandboxError> {
    let price = price_of(&terms).ok_or_else(|| sandbox_error("an offer's terms have no price"))?;
    say(
        state,
        kind,
        role,
        json!({"round": round, "terms": terms, "expires_at": now_text(gate_agent::ASK_SECS)}),
    )?;
    evaluate(state, round, price)
}

fn read_terms(terms: &Value) -> Option<Terms> {
    serde_json::from_value(terms.clone()).ok()
}

/// The exact price in minor units of OANP terms.
fn price_of(terms: &Value) -> Option<i64> {
    read_terms(terms).map(|t| t.price.amount_minor.get())
}

/// Opens the session: the buyer opens, the merchant joins, the arbiter
/// fixes the rules; the buyer's offer and the merchant's counter, each
/// scored.
fn open(state: &mut DemoState) -> Result<(), SandboxError> {
    say(
        state,
        MessageType::SessionOpen,
        Role::Buyer,
        json!({
            "item": {"sku": "CM-UV27-4K", "description": "Contoso UltraView 27-inch 4K monitor", "quantity": 12},
            "commitment": commitment(500_000),
            "declared": {"max_rounds": MAX_ROUNDS, "currency": CURRENCY, "inclusions": [{"kind": "cable", "value": "included"}]},
        }),
    )?;
    say(
        state,
        MessageType::SessionAck,
        Role::Merchant,
        json!({
            "commitment": commitment(FLOOR),
            "list_price": money(LIST_PRICE),
            "declared": {"max_rounds": MAX_ROUNDS, "currency": CURRENCY, "inclusions": [
                {"kind": "warranty", "value": "included"}, {"kind": "cable", "value": "included"}]},
        }),
    )?;
    say(
        state,
        MessageType::SessionAccept,
        Role::Arbiter,
        json!({
            "session_rules": {
                "max_rounds": MAX_ROUNDS,
                "round_timeout_seconds": gate_agent::ASK_SECS,
                "fairness_profile": "default/v0.1",
                "audit_retention_days": 90,
                "fair_band": "0.05",
            },
            "attested": {
                "list_price": money(LIST_PRICE),
                "inclusion_values": {"warranty": money(46_800), "cable": money(18_000)},
                "t_target": money(TARGET),
                "source": "the sandbox's scripted arbiter: Contoso Monitors' catalogue, sku CM-UV27-4K",
                "captured_at": now_text(0),
            },
            "arbiter_key_id": "sandbox-arbiter-1",
        }),
    )?;
    offer(
        state,
        MessageType::OfferPropose,
        Role::Buyer,
        1,
        terms(OPENING_BID, &["cable"]),
    )?;
    offer(
        state,
        MessageType::OfferCounter,
        Role::Merchant,
        2,
        terms(LIST_PRICE, &["warranty", "cable"]),
    )
}

/// First launch: the buyer enrolled at the gate with a code the host's
/// admin issues, and the session opened.
async fn begin(sandbox: &DemoHost) -> Result<DemoState, SandboxError> {
    let (buyer, agent_id) = gate_agent::enroll(sandbox, BUYER_NAME, "oanp").await?;
    let mut state = DemoState {
        buyer_key: key_text(&buyer),
        agent_id,
        session_id: format!("oanp_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]),
        messages: Vec::new(),
        mirrored: 0,
        asked: None,
        requests: 0,
    };
    open(&mut state)?;
    Ok(state)
}

/// Runs the demo against the sandbox for as long as it runs.
pub(crate) async fn run(sandbox: &DemoHost) -> Result<(), SandboxError> {
    gate_agent::run(sandbox, "oanp-demo.json", || begin(sandbox)).await
}

impl Script for DemoState {
    fn agent(&self) -> (&str, &str) {
        (&self.buyer_key, &self.agent_id)
    }

    fn step<'a>(&'a mut self, gate: &'a GateClient) -> IoFuture<'a, Result<Next, SandboxError>> {
        Box::pin(step(gate, self))
    }
}

/// Mirrors what the gate does not hold yet.
async fn mirror(gate: &GateClient, state: &mut DemoState) -> Result<(), SandboxError> {
    let log = Log {
        session_id: &state.session_id,
        messages: &state.messages,
        mirrored: &mut state.mirrored,
        hash,
    };
    let session_id = &state.session_id;
    gate_agent::mirror(gate, log, || {
        Ok(CreateSession {
            protocol: "oanp".to_owned(),
            session_id: session_id.clone(),
            keys: [Role::Buyer, Role::Merchant, Role::Arbiter]
                .into_iter()
                .map(|r| (r.as_str().to_owned(), agent_of(r).to_owned()))
                .collect(),
            self_party: Role::Buyer.as_str().to_owned(),
            counterparty: GateCounterparty {
                id: Role::Merchant.as_str().to_owned(),
                name: Some(MERCHANT_NAME.to_owned()),
                organization: Some(MERCHANT_ORG.to_owned()),
            },
            messages: Vec::new(),
        })
    })
    .await
}

/// The merchant's standing offer: its last offer, followed by nothing but
/// the arbiter's verdicts.
fn standing(messages: &[Value]) -> Option<usize> {
    let read: Vec<Envelope> = messages
        .iter()
        .filter_map(|m| Envelope::read(m).ok())
        .collect();
    if read.len() != messages.len() {
        return None;
    }
    let index = read.iter().rposition(|e| {
        matches!(
            e.kind,
            MessageType::OfferPropose | MessageType::OfferCounter | MessageType::OfferAccept
        )
    })?;
    let only_verdicts = read[index + 1..]
        .iter()
        .all(|e| e.kind == MessageType::ArbitrationEvaluate);
    (read[index].sender.role == Role::Merchant
        && read[index].kind != MessageType::OfferAccept
        && only_verdicts)
        .then_some(index)
}

/// One turn: mirror, ask about the merchant's standing counter, or act on
/// the person's decision.
async fn step(gate: &GateClient, state: &mut DemoState) -> Result<Next, SandboxError> {
    mirror(gate, state).await?;
    let Some(asked) = state.asked.clone() else {
        if state.messages.is_empty() {
            return Err(sandbox_error("its state file holds no session log"));
        }
        let Some(index) = standing(&state.messages) else {
            // Agreed or closed: the negotiation is over.
            return Ok(Next::Done);
        };
        let message_hash = hash(&state.messages[index])?;
        // The host reads the amount from the offer's terms itself.
        let asked = gate_agent::ask(
            gate,
            &state.session_id,
            index,
            message_hash,
            None,
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
    react(state, &status, &awaited)?;
    state.asked = None;
    mirror(gate, state).await?;
    Ok(Next::Wait)
}

/// The buyer acts on a decided request; the merchant and the arbiter answer.
fn react(
    state: &mut DemoState,
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
    let counter = Envelope::read(awaited)
        .and_then(|e| e.offer())
        .map_err(sandbox_error)?;
    let round = counter.round.unwrap_or(0);
    let theirs = awaited
        .pointer("/payload/terms")
        .cloned()
        .unwrap_or(Value::Null);
    match status.status {
        RequestState::Approved => agree(state, Role::Buyer, round, theirs),
        RequestState::Denied => {
            let detail = match status.reason.as_deref() {
                Some(reason) => format!(
                    "Fabrikam's approver declined the merchant's offer of round {round}: {reason}"
                ),
                None => {
                    format!("Fabrikam's approver declined the merchant's offer of round {round}.")
                }
            };
            close(state, "buyer_declined", &detail)
        }
        RequestState::Countered => {
            let ours = status.counter_terms.clone().unwrap_or(Value::Null);
            let (Some(asked), Some(listed)) = (price_of(&ours), price_of(&theirs)) else {
                return Err(sandbox_error(
                    "the person's counter or the merchant's offer has no price in minor units",
                ));
            };
            if round + 1 > MAX_ROUNDS {
                return close(
                    state,
                    "max_rounds",
                    "The session's last round passed without an agreement.",
                );
            }
            offer(
                state,
                MessageType::OfferCounter,
                Role::Buyer,
                round + 1,
                ours.clone(),
            )?;
            if asked >= FLOOR {
                return agree(state, Role::Merchant, round + 1, ours);
            }
            if round + 2 > MAX_ROUNDS {
                return close(
                    state,
                    "max_rounds",
                    "The session's last round passed without an agreement.",
                );
            }
            // Halfway, in whole dollars, never below the floor; the
            // merchant keeps the inclusions it offered.
            let meet = ((listed + asked) / 2 / 100 * 100).max(FLOOR);
            let mut next = theirs;
            next["price"] = money(meet);
            offer(
                state,
                MessageType::OfferCounter,
                Role::Merchant,
                round + 2,
                next,
            )
        }
        // Nobody decided in time, or something newer answered the question:
        // the merchant's counter still stands, and is asked about again.
        RequestState::Expired | RequestState::Superseded | RequestState::Pending => Ok(()),
    }
}

/// `by` accepts the other side's offer of `round`; the arbiter fixes its
/// terms.
fn agree(state: &mut DemoState, by: Role, round: u32, terms: Value) -> Result<(), SandboxError> {
    say(
        state,
        MessageType::OfferAccept,
        by,
        json!({"round": round, "terms": terms}),
    )?;
    say(
        state,
        MessageType::SessionAgree,
        Role::Arbiter,
        json!({"final_terms": terms, "round": round}),
    )
}

/// The arbiter ends the session without a deal.
fn close(state: &mut DemoState, reason: &str, detail: &str) -> Result<(), SandboxError> {
    say(
        state,
        MessageType::SessionClose,
        Role::Arbiter,
        json!({"reason": reason, "detail": detail}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate_agent::key_of;
    use countersign_host_api::gate::GateAction;

    fn fresh() -> DemoState {
        DemoState {
            buyer_key: key_text(&ed25519_dalek::SigningKey::generate(&mut rand::rngs::OsRng)),
            agent_id: "gate_test".into(),
            session_id: "oanp_demo_test".into(),
            messages: Vec::new(),
            mirrored: 0,
            asked: None,
            requests: 0,
        }
    }

    fn opened() -> DemoState {
        let mut state = fresh();
        open(&mut state).unwrap();
        state
    }

    fn status(state: RequestState) -> GateRequestStatus {
        GateRequestStatus {
            request_id: "req-1".into(),
            status: state,
            message_hash: String::new(),
            action: GateAction::Accept,
            amount: "5400.00 USD".into(),
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

    fn kinds(state: &DemoState) -> Vec<&str> {
        state
            .messages
            .iter()
            .map(|m| m["type"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn the_opening_is_a_chained_oanp_log_with_the_merchants_counter_standing() {
        let state = opened();
        assert_eq!(
            kinds(&state),
            [
                "session.open",
                "session.ack",
                "session.accept",
                "offer.propose",
                "arbitration.evaluate",
                "offer.counter",
                "arbitration.evaluate"
            ]
        );
        // Each envelope's frame is OANP's and each links to the one before.
        let mut chain = oanp::chain::SessionChain::new();
        for m in &state.messages {
            Envelope::read(m).unwrap();
            chain.push(m).unwrap();
        }
        assert_eq!(standing(&state.messages), Some(5));
        assert_eq!(state.messages[5]["sender"]["role"], "merchant");
        assert_eq!(
            price_of(&state.messages[5]["payload"]["terms"]),
            Some(LIST_PRICE)
        );
        assert_eq!(
            state.messages[4]["payload"]["verdict"],
            "unfair_to_merchant"
        );
        assert_eq!(state.messages[6]["payload"]["verdict"], "unfair_to_buyer");
        assert_eq!(state.messages[6]["payload"]["fairness_score"], "0.9333");
    }

    #[test]
    fn a_decision_whose_receipts_do_not_verify_is_not_acted_on() {
        let mut state = opened();
        let awaited = state.messages[5].clone();
        for decided in [
            RequestState::Approved,
            RequestState::Denied,
            RequestState::Countered,
        ] {
            let err = react(&mut state, &status(decided), &awaited).unwrap_err();
            assert!(err.to_string().contains("receipt"), "{err}");
            assert_eq!(state.messages.len(), 7, "{decided:?}");
        }
    }

    #[test]
    fn an_expired_request_leaves_the_counter_standing_to_be_asked_again() {
        let mut state = opened();
        let awaited = state.messages[5].clone();
        react(&mut state, &status(RequestState::Expired), &awaited).unwrap();
        assert_eq!(state.messages.len(), 7);
        assert_eq!(standing(&state.messages), Some(5));
    }

    #[test]
    fn after_an_agreement_or_a_close_nothing_stands() {
        let mut state = opened();
        agree(&mut state, Role::Buyer, 2, terms(LIST_PRICE, &["cable"])).unwrap();
        assert_eq!(standing(&state.messages), None);
        let mut state = opened();
        close(&mut state, "buyer_declined", "no").unwrap();
        assert_eq!(standing(&state.messages), None);
        // The buyer's own offer is not the merchant's to be asked about.
        let mut state = opened();
        offer(
            &mut state,
            MessageType::OfferCounter,
            Role::Buyer,
            3,
            terms(480_000, &[]),
        )
        .unwrap();
        assert_eq!(standing(&state.messages), None);
    }

    #[tokio::test]
    async fn a_damaged_state_file_is_refused_with_a_sentence_not_a_panic() {
        let gate = GateClient::new(
            "http://127.0.0.1:9",
            key_of(&fresh().buyer_key).unwrap(),
            "gate_test",
        )
        .unwrap();
        let err = step(&gate, &mut fresh()).await.unwrap_err();
        assert!(err.to_string().contains("holds no session log"), "{err}");
        let mut ahead = opened();
        ahead.mirrored = 9;
        let err = step(&gate, &mut ahead).await.unwrap_err();
        assert!(
            err.to_string().contains("more messages than it kept"),
            "{err}"
        );
    }
}
