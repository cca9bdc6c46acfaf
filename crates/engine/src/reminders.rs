//! One reminder per decision about to expire: a pending decision still
//! waiting on the person (see [`crate::inbox::waiting`]) gets exactly one
//! notification when it comes within the reminder setting of its expiry
//! (an hour by default; `notify.expiry_reminder_minutes`, 0 for none). It
//! is claimed in the store's `notified` table under `reminder:<hash>`, so a
//! restart never repeats it; a decision that arrived already that close was
//! told of by its own notice (which says when it expires) and gets none.
//!
//! Run by the poller's loop after each cycle (which wakes for the next one
//! due even when every host is waited on) and after a manual refresh.

use std::collections::HashSet;
use std::time::Duration;

use crate::clock::parse_time;
use crate::context::Context;
use crate::error::EngineError;
use crate::notify::PendingNotice;
use crate::settings::Effective;

/// The subject a proposal's reminder is claimed under in `notified`.
pub(crate) fn subject(event_hash: &str) -> String {
    format!("reminder:{event_hash}")
}

/// True when a proposal expiring at `expires_at` is within the reminder's
/// reach now (reminders on, not yet expired, at most the lead away).
pub(crate) fn within_reach(ctx: &Context, settings: &Effective, expires_at: &str) -> bool {
    let (Some(lead), Some(at)) = (settings.expiry_reminder(), parse_time(expires_at)) else {
        return false;
    };
    let left = at - ctx.now();
    left.is_positive() && left <= lead
}

/// Sends every reminder due now, each once; answers how long until the next
/// one falls due or a waiting decision expires (by the engine's clock),
/// `None` when neither will without news. A failure to read the store is logged and sends nothing.
pub(crate) fn remind(ctx: &Context) -> Option<Duration> {
    match due(ctx) {
        Ok((notices, next)) => {
            if !notices.is_empty() {
                let notifier = ctx.notifier();
                for notice in &notices {
                    notifier.reminder(notice);
                }
            }
            next
        }
        Err(error) => {
            tracing::warn!("expiry reminders: {error}");
            None
        }
    }
}

/// Tells the interface (and the shell's tray and title) when the count of
/// decisions waiting changed since the last look with no host news: one
/// expired here.
fn noticed_count(ctx: &Context, count: usize) {
    let changed = match ctx.waiting_seen.lock() {
        Ok(mut seen) => seen.replace(count).is_some_and(|before| before != count),
        Err(_) => false,
    };
    if changed {
        ctx.emit(crate::views::ChangeScope::Inbox, None, None);
    }
}

/// The reminders to send now (claimed), and the time until the next
/// one falls due or a waiting decision expires.
fn due(ctx: &Context) -> Result<(Vec<PendingNotice>, Option<Duration>), EngineError> {
    let lead = ctx.settings().expiry_reminder();
    let now = ctx.now();
    let now_text = ctx.now_text();
    let mut claimed = Vec::new();
    let mut next: Option<Duration> = None;
    let mut sooner = |wait: Duration| next = Some(next.map_or(wait, |n: Duration| n.min(wait)));
    {
        let store = ctx.store()?;
        let left_out: HashSet<String> = store
            .hosts()?
            .into_iter()
            .filter(|host| !ctx.polls(host))
            .map(|host| host.host_id)
            .collect();
        let all = crate::inbox::waiting(&store, &left_out, now)?;
        noticed_count(ctx, all.len());
        for waiting in all {
            let Some(at) = parse_time(&waiting.pending.expires_at) else {
                continue;
            };
            // Its expiry takes it out of the count: the loop wakes for that too.
            sooner(Duration::try_from(at - now).unwrap_or(Duration::ZERO));
            let Some(lead) = lead else {
                continue;
            };
            let until_due = (at - now) - lead;
            if until_due.is_positive() {
                sooner(Duration::try_from(until_due).unwrap_or(Duration::MAX));
                continue;
            }
            let r = &waiting.record;
            if store.claim_notification(
                &r.host_id,
                &r.session_id,
                &subject(&r.event_hash),
                &now_text,
            )? {
                claimed.push(waiting);
            }
        }
    }
    let mut notices = Vec::new();
    for waiting in claimed {
        let r = &waiting.record;
        let Some(session) = ctx.store()?.session(&r.host_id, &r.session_id)? else {
            continue;
        };
        notices.push(crate::poller::pending_notice(
            ctx,
            &session,
            &waiting.pending,
            "expires soon",
        )?);
    }
    Ok((notices, next))
}
