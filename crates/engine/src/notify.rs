//! The seam to desktop notifications: the engine decides *when* (once per new
//! pending decision, deduplicated across restarts; once per disputed
//! session; once per proposal the org's own agent accepted against the
//! person's decision; never for a kind the person turned off) and *what it says*
//! (in the machine's locale and time zone), the shell decides *how*
//! (notify-rust).

use serde::{Deserialize, Serialize};

/// A new proposal waits for a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingNotice {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The session's protocol (`ANP/0.1`, `concordia`).
    pub protocol: String,
    /// The proposal (what a click opens).
    pub event_hash: String,
    /// The counterparty's name (counterparty text: show as plain text only).
    pub counterparty_name: String,
    /// Exact amount (`?` when the proposal has none).
    pub total: String,
    /// Its currency.
    pub currency: String,
    /// When it expires.
    pub expires_at: String,
    /// A ready plain-text title.
    pub title: String,
    /// A ready plain-text body: the amount and the expiry as a person
    /// writes them ("570,000 USD · expires in 2 d 23 h (Fri 4 Dec, 06:53)").
    pub body: String,
    /// Whether a burst this notice arrives in may be announced by one
    /// summary (the person's setting); when not, a burst stays silent.
    pub burst_summary: bool,
}

/// A session's record failed verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisputeNotice {
    /// Which host.
    pub host_id: String,
    /// The session's protocol.
    pub protocol: String,
    /// Its name for people.
    pub host_label: String,
    /// Which session.
    pub session_id: String,
    /// The exact seq that failed.
    pub seq: u64,
    /// The failed check.
    pub check: String,
    /// In words.
    pub detail: String,
    /// A ready plain-text title naming the session, host and counterparty.
    pub title: String,
    /// A ready plain-text body.
    pub body: String,
}

/// The org's own agent accepted a proposal against the person's decision
/// (a decline or counter, or a request that expired undecided). The gate
/// is advisory, so this is the moment a person must hear of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreachNotice {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The session's protocol.
    pub protocol: String,
    /// The proposal decided on (what a click opens).
    pub event_hash: String,
    /// A ready plain-text title naming the counterparty.
    pub title: String,
    /// A ready plain-text body: what the agent did and against what.
    pub body: String,
}

/// Implemented by the shell; called from the poller's task, so keep it fast.
pub trait Notifier: Send + Sync {
    /// Called once per new pending decision, never twice, even across restarts.
    fn pending(&self, notice: &PendingNotice);
    /// Called once per session that becomes disputed.
    fn disputed(&self, notice: &DisputeNotice);
    /// Called once per proposal the org's agent accepted against the
    /// person's decision, never twice, even across restarts.
    fn breach(&self, notice: &BreachNotice);
}

/// Drops every notice (the default until the shell sets one).
#[derive(Debug, Default)]
pub struct SilentNotifier;

impl Notifier for SilentNotifier {
    fn pending(&self, _notice: &PendingNotice) {}
    fn disputed(&self, _notice: &DisputeNotice) {}
    fn breach(&self, _notice: &BreachNotice) {}
}
