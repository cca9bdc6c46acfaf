//! One waiting request per host: instead of asking every poll interval, the
//! console asks the host to hold its summary request until something it
//! sees changes (`GET /summary?wait=`, docs/approver-api.md, "Waiting for a
//! change") and applies the answer the moment it comes, as a poll would
//! ([`crate::poller::apply_summary`]). An idle console then sends one
//! request per [`WAIT_SECONDS`] per host, and hears of an offer at once.
//!
//! Where waiting does not work the host is polled on the timer as before,
//! and the Hosts screen says why ([`Hearing::Polling`]): the host refuses
//! `wait` (`400`: its admin switched it off), answers at once without
//! waiting (a host from before waiting), or something between cuts the
//! held request early ([`STRIKES`] times running: a proxy's read timeout).
//! Waiting is tried again after [`TRY_AGAIN`]. A host at its connection
//! cap may end a wait early to make room (`304` with `Retry-After`): that
//! is no strike, and the next request waits as long as it asked. A host that cannot be
//! reached is marked so and asked again after a short pause; the first
//! request that reaches it, carrying the last tag applied, answers with
//! everything that changed meanwhile.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::context::{Context, Hearing};
use crate::edge::wire::{SummaryAnswer, SummaryError};
use crate::poller;

/// How long the host may hold one waiting request: about a minute, so an
/// idle console costs a host about 50 requests an hour, under the 90 s the
/// host allows and the 120 s read timeout its README gives nginx.
pub const WAIT_SECONDS: u64 = 70;
/// A `304` sooner than this did not wait: the host predates waiting.
const HELD_AT_LEAST: Duration = Duration::from_secs(WAIT_SECONDS / 2);
/// A failure after the request was held this long is a cut (a proxy's
/// timeout, a dropped connection), not a host that cannot be reached.
const CUT_AFTER: Duration = Duration::from_secs(10);
/// Early answers or cuts in a row before the host is polled instead.
pub const STRIKES: u32 = 3;
/// How long a host found not to wait is polled before waiting is tried again.
const TRY_AGAIN: Duration = Duration::from_secs(3600);
/// The first pause after a host could not be reached; it doubles to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The longest pause between attempts to reach a host.
const MAX_PAUSE: Duration = Duration::from_secs(60);

/// The watchers of every host; dropping this (the poller stopping) stops them.
#[derive(Default)]
pub(crate) struct Watchers {
    running: std::collections::HashMap<String, tokio::task::JoinHandle<()>>,
}

impl Watchers {
    /// One watcher per host in `hosts` this process polls; the watchers of
    /// hosts no longer there (or whose watcher ended) are dropped.
    pub(crate) fn keep(&mut self, ctx: &Arc<Context>, hosts: &[crate::store::HostRecord]) {
        self.running.retain(|id, task| {
            let wanted = hosts.iter().any(|h| &h.host_id == id && ctx.polls(h));
            if !wanted {
                task.abort();
                ctx.forget_hearing(id);
            }
            wanted && !task.is_finished()
        });
        for host in hosts.iter().filter(|h| ctx.polls(h)) {
            if !self.running.contains_key(&host.host_id) {
                let task = tokio::spawn(watch(ctx.clone(), host.host_id.clone()));
                self.running.insert(host.host_id.clone(), task);
            }
        }
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        for task in self.running.values() {
            task.abort();
        }
    }
}

/// What one waiting request's answer says about the way to hear the host.
enum Outcome {
    /// Changed, or held until the wait ended: waiting works.
    Held,
    /// Held, then ended early to make room at a busy host: waiting works,
    /// and the host asks for this pause first.
    MadeRoom(Duration),
    /// A `304` long before the wait: the host did not hold it.
    Early,
    /// The host refused `wait`.
    Refused,
    /// Failed after being held a while: cut on the way.
    Cut,
    /// Failed at once: the host cannot be reached now.
    Down(String),
}

fn outcome(answer: &Result<SummaryAnswer, SummaryError>, held: Duration) -> Outcome {
    match answer {
        Ok(SummaryAnswer::Changed { .. }) => Outcome::Held,
        Ok(SummaryAnswer::AskLater(after)) => {
            Outcome::MadeRoom((*after).clamp(FIRST_PAUSE, MAX_PAUSE))
        }
        Ok(SummaryAnswer::Unchanged) if held >= HELD_AT_LEAST => Outcome::Held,
        Ok(SummaryAnswer::Unchanged) => Outcome::Early,
        Err(SummaryError::WaitRefused(_)) => Outcome::Refused,
        Err(SummaryError::Unreachable(_)) if held >= CUT_AFTER => Outcome::Cut,
        Err(SummaryError::Unreachable(m) | SummaryError::Protocol(m)) => Outcome::Down(m.clone()),
    }
}

fn pause(failures: u32) -> Duration {
    FIRST_PAUSE
        .saturating_mul(1u32 << failures.saturating_sub(1).min(6))
        .min(MAX_PAUSE)
}

/// Holds one waiting request at `host_id` after another, for as long as the
/// host is there and polled by this process.
async fn watch(ctx: Arc<Context>, host_id: String) {
    let mut strikes = 0u32;
    let mut failures = 0u32;
    let mut answered = 0u64;
    loop {
        let host = match ctx.store().and_then(|s| Ok(s.host(&host_id)?)) {
            Ok(Some(host)) if ctx.polls(&host) => host,
            _ => break,
        };
        let Ok(io) = ctx.host_io(&host) else { break };
        let known = ctx
            .summary_tags
            .lock()
            .ok()
            .and_then(|tags| tags.get(&host_id).cloned());
        let Some(known) = known else {
            // Nothing applied in full yet: a poll first, for a tag to wait on.
            let polled = {
                let _cycle = ctx.poll_lock.lock().await;
                poller::poll_host(&ctx, &host).await
            };
            let tagged = ctx
                .summary_tags
                .lock()
                .is_ok_and(|tags| tags.contains_key(&host_id));
            if polled.is_err() {
                failures += 1;
                tokio::time::sleep(pause(failures)).await;
            } else if !tagged {
                failures = 0;
                ctx.set_hearing(
                    &host_id,
                    Hearing::Polling(
                        "the host tags no summary, so there is nothing to wait on.".into(),
                    ),
                );
                tokio::time::sleep(TRY_AGAIN).await;
            }
            continue;
        };
        // Until the host shows otherwise, the waiting request hears of
        // every change: the timer leaves the host be.
        ctx.set_hearing(&host_id, Hearing::Waiting);
        let asked = Instant::now();
        let answer = crate::edge::wire::summary_waiting(&io.client, &known, WAIT_SECONDS).await;
        let mut later = None;
        let why = match outcome(&answer, asked.elapsed()) {
            Outcome::Held => {
                strikes = 0;
                None
            }
            Outcome::MadeRoom(after) => {
                later = Some(after);
                None
            }
            Outcome::Early => {
                strikes += 1;
                Some("the host answers at once instead of waiting (it predates waiting for changes).")
            }
            Outcome::Refused => {
                strikes = STRIKES;
                Some("the host does not offer waiting for changes.")
            }
            Outcome::Cut => {
                strikes += 1;
                Some("something between here and the host (a proxy's timeout) ends waiting requests early.")
            }
            Outcome::Down(message) => {
                ctx.count(1, 0);
                let _ = poller::mark_unreachable(&ctx, &host, &message);
                failures += 1;
                tokio::time::sleep(pause(failures)).await;
                continue;
            }
        };
        failures = 0;
        if answer.is_ok() {
            apply(&ctx, &host, &io, &known, answer).await;
        } else {
            ctx.count(1, 0);
        }
        if let Some(why) = why.filter(|_| strikes >= STRIKES) {
            strikes = 0;
            ctx.set_hearing(&host_id, Hearing::Polling(why.into()));
            tokio::time::sleep(TRY_AGAIN).await;
            continue;
        }
        if why.is_none() {
            answered += 1;
            if answered.is_multiple_of(poller::AUDIT_EVERY) {
                poller::audit_next(&ctx, &host, answered / poller::AUDIT_EVERY).await;
            }
        }
        if let Some(after) = later {
            // The host is at its connection cap: come back as it asked.
            tokio::time::sleep(after).await;
        }
    }
    ctx.forget_hearing(&host_id);
}

/// Applies a waiting request's answer as a poll's, unless another cycle (a
/// manual refresh, the timer) applied a newer summary while it waited: then
/// that one stands, and the next request waits on its tag.
async fn apply(
    ctx: &Context,
    host: &crate::store::HostRecord,
    io: &crate::edge::transport::HostIo,
    known: &str,
    answer: Result<SummaryAnswer, SummaryError>,
) {
    let _cycle = ctx.poll_lock.lock().await;
    let current = poller::take_summary_tag(ctx, &host.host_id);
    if current.as_deref() == Some(known) {
        if let Err(e) = poller::apply_summary(ctx, host, io, current, answer).await {
            tracing::warn!("host {}: {e}", host.url);
        }
    } else {
        ctx.count(1, 0);
        if let Some(tag) = current {
            poller::remember_summary_tag(ctx, &host.host_id, tag);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ended_to_make_room_is_no_strike_and_its_pause_is_kept_within_bounds() {
        let soon = Duration::from_millis(5);
        let asked = |secs| Ok(SummaryAnswer::AskLater(Duration::from_secs(secs)));
        assert!(
            matches!(outcome(&asked(10), soon), Outcome::MadeRoom(d) if d == Duration::from_secs(10))
        );
        // The same early answer without Retry-After is a host that does not wait.
        assert!(matches!(
            outcome(&Ok(SummaryAnswer::Unchanged), soon),
            Outcome::Early
        ));
        // A host's word on the pause is kept between a second and a minute.
        assert!(matches!(outcome(&asked(3600), soon), Outcome::MadeRoom(d) if d == MAX_PAUSE));
        assert!(matches!(outcome(&asked(0), soon), Outcome::MadeRoom(d) if d == FIRST_PAUSE));
    }
}
