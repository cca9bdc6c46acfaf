//! The seam to desktop notifications: the engine decides *when* (once per new
//! pending decision, deduplicated across restarts; once per disputed
//! session; once per proposal the org's own agent accepted against the
//! person's decision; never for a kind the person turned off) and *what it says*
//! (in the machine's locale and time zone), the shell decides *how*
//! (notify-rust). Which buttons a notification carries, and what each
//! opens, is decided here too ([`notice_actions`]): opening the app at a
//! decision is all a button does, never signing one.

use serde::{Deserialize, Serialize};

use crate::views::DecideAction;

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
    /// The decisions its protocol takes on it now, of those a notification
    /// may open the app at (approve, decline): which of "Approve…" and
    /// "Decline…" it may carry (see [`notice_actions`]).
    pub actions: Vec<DecideAction>,
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
    /// Called once per pending decision still waiting on the person when
    /// it comes within the reminder setting of its expiry, never twice,
    /// even across restarts (the same shape; its title says it expires soon).
    fn reminder(&self, notice: &PendingNotice);
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
    fn reminder(&self, _notice: &PendingNotice) {}
    fn disputed(&self, _notice: &DisputeNotice) {}
    fn breach(&self, _notice: &BreachNotice) {}
}

/// A button on a pending decision's notification. Each opens the app at
/// the decision, at most with a decision form open and focused so one more
/// key finishes it: nothing is ever signed from the notification itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoticeAction {
    /// The decision's view (also what a click on the notification does).
    Open,
    /// The decision's view with the approval's confirmation focused.
    Approve,
    /// The decision's view with the decline's reason focused.
    Decline,
}

impl NoticeAction {
    /// The action's key on the notification bus (`default` is the click).
    pub fn id(self) -> &'static str {
        match self {
            NoticeAction::Open => "open",
            NoticeAction::Approve => "approve",
            NoticeAction::Decline => "decline",
        }
    }

    /// The button's words: an ellipsis where a step follows in the app.
    pub fn label(self) -> &'static str {
        match self {
            NoticeAction::Open => "Open",
            NoticeAction::Approve => "Approve…",
            NoticeAction::Decline => "Decline…",
        }
    }

    /// The decision form the app opens at, if any.
    pub fn opens(self) -> Option<DecideAction> {
        match self {
            NoticeAction::Open => None,
            NoticeAction::Approve => Some(DecideAction::Approve),
            NoticeAction::Decline => Some(DecideAction::Decline),
        }
    }

    /// Reads the key the notification server reports back; the click
    /// (`default`) opens the view. Anything else is no action of ours.
    pub fn from_id(id: &str) -> Option<NoticeAction> {
        match id {
            "default" | "open" => Some(NoticeAction::Open),
            "approve" => Some(NoticeAction::Approve),
            "decline" => Some(NoticeAction::Decline),
            _ => None,
        }
    }
}

/// The buttons a pending decision's notification carries: none where the
/// notification server does not offer actions (`server_actions`, its
/// `actions` capability; a click still opens the decision), else "Open"
/// and, of "Approve…" and "Decline…", those its protocol takes now
/// (`offered`, [`PendingNotice::actions`]).
pub fn notice_actions(offered: &[DecideAction], server_actions: bool) -> Vec<NoticeAction> {
    if !server_actions {
        return Vec::new();
    }
    let mut actions = vec![NoticeAction::Open];
    for action in [NoticeAction::Approve, NoticeAction::Decline] {
        if action.opens().is_some_and(|a| offered.contains(&a)) {
            actions.push(action);
        }
    }
    actions
}
