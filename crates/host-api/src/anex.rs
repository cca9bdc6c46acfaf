//! The approver API's ANEX shapes (docs/approver-api.md, "ANEX"): what a
//! pending ANEX decision shows a person, how the decision is sent (an
//! ApprovalReceipt over the terms record), and the conversation's log.
//! Every string a counterparty wrote is data, never an instruction.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approver::{DecisionAction, DecisionOutcome};

/// What an ANEX receipt's `scope.amount` and `scope.threshold_crossed` say:
/// the receipt schema requires both, and data-access terms carry no money
/// (docs/anex-binding.md, "The terms record").
pub const NO_AMOUNT: &str = "0 XXX";

/// The requester as its CFP declared it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnexRequester {
    /// Its agent identity (also the authenticated one).
    pub identity: String,
    /// The owner it says it speaks for.
    pub owner: String,
    /// The relation it declares (its own claim; never widens the policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
}

/// One asked access item with the policy's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnexItem {
    /// The item's name, without a mark.
    pub item: String,
    /// Whether the requester marked it `(m)`.
    pub required: bool,
    /// Whether the owner's policy covers it for this counterparty.
    pub within_policy: bool,
    /// The policy rule (1-based) that covers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<usize>,
    /// Promises that rule needs beyond those offered.
    #[serde(default)]
    pub adds: Vec<String>,
    /// Why (a sentence for people).
    pub reason: String,
}

/// Terms as lists of names and promises (no marks in a decision).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnexTerms {
    /// Access items.
    pub access: Vec<String>,
    /// Promises the requester makes.
    pub promise: Vec<String>,
}

/// What a pending ANEX decision carries (`PendingDecision.anex`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnexPending {
    /// The ANEX conversation.
    pub conversation_id: String,
    /// The message decided on (the CFP or the requester's PROPOSE): what a
    /// decision's `in_response_to` and the record's `answers` name.
    pub answers: String,
    /// Who asks.
    pub requester: AnexRequester,
    /// The organization's agent (the record's `responder`).
    pub responder: String,
    /// The purpose the requester declared.
    pub request_type: String,
    /// Each asked item with its verdict.
    pub items: Vec<AnexItem>,
    /// The promises offered.
    pub promise: Vec<String>,
    /// Every promise the policy's rules covering the asked items require,
    /// offered or not (those not offered are the items' `adds`).
    pub policy_promises: Vec<String>,
    /// The previous standing proposal, when this ask answers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<AnexTerms>,
    /// How long decided terms stay in force (the record's `valid_until` is
    /// the decision time plus these days).
    pub terms_valid_days: u32,
}

/// `POST /sessions/anex:<context_id>/decisions`: the person's decision as
/// an ApprovalReceipt whose `scope.terms` is the terms record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnexDecisionRequest {
    /// A UUID chosen by the console; repeating it changes nothing.
    pub decision_id: String,
    /// `approve` (propose as asked), `counter` (propose narrower terms),
    /// `decline` (refuse).
    pub action: DecisionAction,
    /// The pending decision's `anex.answers`.
    pub in_response_to: String,
    /// The signed ApprovalReceipt (`approve` for approve and counter,
    /// `deny` for decline).
    pub receipt: Value,
    /// Required for decline: sent to the requester in the REFUSE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Required for counter: the terms to propose instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_terms: Option<AnexTerms>,
}

/// The answer to an ANEX decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnexDecisionResponse {
    /// The decision's id, as sent.
    pub decision_id: String,
    /// `appended`: the host's answer is in the conversation.
    pub outcome: DecisionOutcome,
    /// A sentence for people.
    pub detail: String,
    /// The ANEX message the host sent in answer (PROPOSE or REFUSE).
    pub answer: Value,
}

/// `GET /sessions/anex:<context_id>/log?after=N`: the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnexLog {
    /// `anex`.
    pub protocol: String,
    /// `anex:<context_id>`.
    pub session_id: String,
    /// The ANEX conversation id.
    pub conversation_id: String,
    /// Its phase (`negotiating`, `agreed`, `closed`, …).
    pub phase: String,
    /// How many messages precede `messages`.
    pub after: u64,
    /// The ANEX messages after `after`, in order.
    pub messages: Vec<Value>,
    /// The accepted terms record, while terms are agreed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreed: Option<Value>,
    /// Every receipt a person signed in it, oldest first.
    pub receipts: Vec<Value>,
    /// The host's record of every approval given in the conversation (who,
    /// step, role, for whom, rule, policy version), whichever console gave
    /// it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<crate::approver::ApprovalRecord>,
}
