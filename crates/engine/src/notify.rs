//! The seam to desktop notifications: the engine decides *when* (once per new
//! pending decision, deduplicated across restarts; once per disputed
//! session), the shell decides *how* (notify-rust).

use serde::{Deserialize, Serialize};

/// A new offer waits for a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingNotice {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The offer (what a click opens).
    pub event_hash: String,
    /// The vendor's name (counterparty text: show as plain text only).
    pub vendor_name: String,
    /// Exact total.
    pub total: String,
    /// Its currency.
    pub currency: String,
    /// When it expires.
    pub expires_at: String,
    /// A ready plain-text title.
    pub title: String,
    /// A ready plain-text body.
    pub body: String,
}

/// A session's log failed verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisputeNotice {
    /// Which host.
    pub host_id: String,
    /// Which session.
    pub session_id: String,
    /// The exact seq that failed.
    pub seq: u64,
    /// The failed check.
    pub check: String,
    /// In words.
    pub detail: String,
}

/// Implemented by the shell; called from the poller's task, so keep it fast.
pub trait Notifier: Send + Sync {
    /// Called once per new pending decision, never twice, even across restarts.
    fn pending(&self, notice: &PendingNotice);
    /// Called once per session that becomes disputed.
    fn disputed(&self, notice: &DisputeNotice);
}

/// Drops every notice (the default until the shell sets one).
#[derive(Debug, Default)]
pub struct SilentNotifier;

impl Notifier for SilentNotifier {
    fn pending(&self, _notice: &PendingNotice) {}
    fn disputed(&self, _notice: &DisputeNotice) {}
}
