//! Wakes the consoles that wait for a change (`GET /summary?wait=`): every
//! write that succeeds through any surface announces itself here, to the
//! consoles of the organizations it touched (all of them, when it cannot
//! say which: [`touch`], [`scoped`]), and each such waiting request
//! recomputes its summary once and answers as soon as what its console sees
//! has changed. No timer runs in between: a waiting request
//! sleeps until an announcement, the next pending request's expiry, or the
//! end of its wait, whichever comes first.
//!
//! Several host processes on one PostgreSQL database hear each other through
//! the store's [`crate::store::ChangeFeed`] (LISTEN/NOTIFY): each process publishes its
//! writes with the organizations they touched, and [`relay_forever`] turns every other process's announcement
//! into a local one. When the listening connection drops, announcements may
//! have been missed: the relay connects again and then wakes every waiter,
//! which recomputes its summary and answers if anything moved meanwhile.
//!
//! Publishing does not hold the write's answer: a process's announcements
//! wait in its outbox, merged, and one task ([`publish_until`]) sends
//! them, at most once per [`PUBLISH_SPACING`], and what is left when the
//! server stops. Under load one NOTIFY
//! carries many writes (a NOTIFY per append was a sixth statement on
//! PostgreSQL's busiest path); when idle, the first write goes at once.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::Host;

/// One generation counter per organization that a console waits on; every
/// successful write moves on the counters of the organizations it touched
/// (or all of them, when it cannot say), so an append in one organization
/// never wakes the consoles of another.
#[derive(Debug)]
pub struct Changes {
    orgs: Mutex<Orgs>,
    /// When each approver's waiting request was last answered with a
    /// change: what paces the consoles of a large organization.
    answered: Mutex<HashMap<String, Instant>>,
    origin: String,
    /// What waits to be told to the other processes.
    outbox: Mutex<Outbox>,
    /// Wakes the publisher when the outbox fills.
    outbox_filled: tokio::sync::Notify,
}

/// Announcements not yet published to the other processes, merged into one
/// scope; `publisher` is set while a [`publish_until`] task runs.
#[derive(Debug, Default)]
struct Outbox {
    pending: Option<Scope>,
    publisher: bool,
}

/// The shortest time between two announcements a process publishes: a
/// waiting console on another process hears at most this much later, and
/// a busy process sends at most a hundred NOTIFYs a second however many
/// writes it serves.
pub const PUBLISH_SPACING: Duration = Duration::from_millis(10);

/// A merged announcement naming more organizations than this is sent as
/// "every organization" (a NOTIFY's payload is under 8,000 bytes).
const MOST_HANDLES: usize = 100;

/// How much later than the previous one a console's next answer may come,
/// per console waiting in its organization ([`Changes::not_before`]).
pub const PACE_PER_WAITER: Duration = Duration::from_millis(2);
/// The most a console's answers are spaced, however large its organization.
pub const MAX_PACE: Duration = Duration::from_secs(2);

/// The counters, and when to next forget those nobody waits on.
#[derive(Debug)]
struct Orgs {
    counters: HashMap<String, watch::Sender<u64>>,
    sweep_at: usize,
}

/// The fewest counters kept before ones nobody waits on are forgotten.
const SWEEP_FLOOR: usize = 64;

impl Default for Changes {
    fn default() -> Self {
        Changes::new()
    }
}

impl Changes {
    /// Counters no one waits on yet.
    pub fn new() -> Changes {
        Changes {
            orgs: Mutex::new(Orgs {
                counters: HashMap::new(),
                sweep_at: SWEEP_FLOOR,
            }),
            answered: Mutex::new(HashMap::new()),
            origin: uuid::Uuid::new_v4().simple().to_string(),
            outbox: Mutex::new(Outbox::default()),
            outbox_filled: tokio::sync::Notify::new(),
        }
    }

    /// Leaves `scope` for the publisher to tell the other processes;
    /// `false` when no publisher runs (the caller publishes it itself).
    fn queue(&self, scope: &Scope) -> bool {
        let Ok(mut outbox) = self.outbox.lock() else {
            return false;
        };
        if !outbox.publisher {
            return false;
        }
        outbox.pending = Some(match outbox.pending.take() {
            None => scope.clone(),
            Some(pending) => pending.merge(scope),
        });
        drop(outbox);
        self.outbox_filled.notify_one();
        true
    }

    /// Waits for something to publish, and takes it.
    async fn next_to_publish(&self) -> Scope {
        loop {
            if let Some(scope) = self.outbox.lock().ok().and_then(|mut o| o.pending.take()) {
                return scope;
            }
            self.outbox_filled.notified().await;
        }
    }

    /// Ends `running`'s publishing and answers what was queued and not yet
    /// sent; a write from now on publishes itself.
    fn stop_publishing(&self, running: Publishing<'_>) -> Option<Scope> {
        drop(running);
        self.outbox.lock().ok().and_then(|mut o| o.pending.take())
    }

    /// Marks a publisher as running until the answer is dropped.
    fn publishing(&self) -> Publishing<'_> {
        if let Ok(mut outbox) = self.outbox.lock() {
            outbox.publisher = true;
        }
        Publishing(self)
    }

    /// The earliest a waiting request of `approver` in `org` may answer
    /// with a change, when that is still ahead: its previous answer plus
    /// the organization's pace, [`PACE_PER_WAITER`] for each console
    /// waiting in it, at most [`MAX_PACE`]. A console of a small
    /// organization hears at once; a thousand consoles of one organization
    /// each hear at most every two seconds, however fast its offers come,
    /// so that telling them never starves the appends themselves. Changes
    /// meanwhile are folded into the one answer.
    pub fn not_before(&self, approver: &str, org: &str) -> Option<Instant> {
        let waiting = self.orgs.lock().map_or(0, |orgs| {
            orgs.counters
                .get(org)
                .map_or(0, watch::Sender::receiver_count)
        });
        let pace = PACE_PER_WAITER
            .saturating_mul(u32::try_from(waiting).unwrap_or(u32::MAX))
            .min(MAX_PACE);
        let last = self.answered.lock().ok()?.get(approver).copied()?;
        Some(last + pace).filter(|at| *at > Instant::now())
    }

    /// Notes that `approver`'s waiting request was just answered with a
    /// change (what [`Changes::not_before`] paces from).
    pub fn answered(&self, approver: &str) {
        let Ok(mut answered) = self.answered.lock() else {
            return;
        };
        let now = Instant::now();
        if answered.len() >= SWEEP_FLOOR && answered.len().is_power_of_two() {
            // Only an answer within the longest pace still paces anything.
            answered.retain(|_, at| now.duration_since(*at) < MAX_PACE);
        }
        answered.insert(approver.to_owned(), now);
    }

    /// Something the consoles of `scope` could see may have changed: wake
    /// each of them.
    pub fn announce(&self, scope: &Scope) {
        let Ok(orgs) = self.orgs.lock() else { return };
        let bump = |tx: &watch::Sender<u64>| {
            tx.send_modify(|generation| *generation = generation.wrapping_add(1));
        };
        match scope {
            Scope::All => orgs.counters.values().for_each(bump),
            Scope::Orgs(handles) => handles
                .iter()
                .filter_map(|handle| orgs.counters.get(handle))
                .for_each(bump),
        }
    }

    /// A receiver that wakes on the next announcement touching `org` after
    /// this call; take it before reading what it guards, so no announcement
    /// falls between.
    pub fn subscribe(&self, org: &str) -> watch::Receiver<u64> {
        let mut orgs = match self.orgs.lock() {
            Ok(orgs) => orgs,
            Err(poisoned) => poisoned.into_inner(),
        };
        if orgs.counters.len() >= orgs.sweep_at {
            orgs.counters.retain(|_, tx| tx.receiver_count() > 0);
            orgs.sweep_at = (orgs.counters.len() * 2).max(SWEEP_FLOOR);
        }
        orgs.counters
            .entry(org.to_owned())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// How many requests wait now (what tests and metrics read).
    pub fn waiters(&self) -> usize {
        self.orgs.lock().map_or(0, |orgs| {
            orgs.counters
                .values()
                .map(watch::Sender::receiver_count)
                .sum()
        })
    }

    /// This process's name in the announcements it publishes to the others
    /// (random per process, so it knows its own when they come back).
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

/// Whose consoles a write may have changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every organization's (a write that did not say which).
    All,
    /// These organizations' (handles).
    Orgs(Vec<String>),
}

impl Scope {
    /// The announcement another process hears: the origin, then the
    /// organizations' handles, space-separated (none: every organization).
    /// Handles never hold a space (`anp_org_…`, `sandbox`).
    fn message(&self, origin: &str) -> String {
        match self {
            Scope::All => origin.to_owned(),
            Scope::Orgs(handles) => {
                let mut message = origin.to_owned();
                for handle in handles {
                    message.push(' ');
                    message.push_str(handle);
                }
                message
            }
        }
    }

    /// The scope that covers both (every organization, past
    /// [`MOST_HANDLES`]).
    fn merge(self, other: &Scope) -> Scope {
        match (self, other) {
            (Scope::Orgs(mut handles), Scope::Orgs(more)) => {
                for handle in more {
                    if !handles.contains(handle) {
                        handles.push(handle.clone());
                    }
                }
                if handles.len() > MOST_HANDLES {
                    Scope::All
                } else {
                    Scope::Orgs(handles)
                }
            }
            _ => Scope::All,
        }
    }

    /// The origin and scope of an announcement heard from another process
    /// (one with no handles, as processes from before scoping send: every
    /// organization).
    fn heard(message: &str) -> (&str, Scope) {
        let mut words = message.split(' ').filter(|w| !w.is_empty());
        let origin = words.next().unwrap_or_default();
        let handles: Vec<String> = words.map(str::to_owned).collect();
        let scope = if handles.is_empty() {
            Scope::All
        } else {
            Scope::Orgs(handles)
        };
        (origin, scope)
    }
}

tokio::task_local! {
    /// The organizations the request being served has touched so far.
    static TOUCHED: RefCell<Vec<String>>;
}

/// Notes that the request being served touches `org`'s records (called
/// where a request learns its organization: the signed principal, the
/// session it writes to). Outside [`scoped`] it does nothing.
pub(crate) fn touch(org: &str) {
    let _ = TOUCHED.try_with(|touched| {
        let mut touched = touched.borrow_mut();
        if !touched.iter().any(|t| t == org) {
            touched.push(org.to_owned());
        }
    });
}

/// Runs `request` and answers its output with the scope its writes touched
/// (every organization when it touched none it could name).
pub(crate) async fn scoped<F: Future>(request: F) -> (F::Output, Scope) {
    TOUCHED
        .scope(RefCell::new(Vec::new()), async {
            let output = request.await;
            let touched = TOUCHED.with(|t| t.take());
            let scope = if touched.is_empty() {
                Scope::All
            } else {
                Scope::Orgs(touched)
            };
            (output, scope)
        })
        .await
}

/// Set once the server begins to shut down: a waiting summary answers at
/// once (`304`, or the change) instead of holding its connection open, so a
/// long poll never keeps a host process from stopping.
#[derive(Debug, Clone)]
pub struct Stopping(pub watch::Receiver<bool>);

impl Stopping {
    /// Resolves once the server is stopping (at once if it already is; never
    /// if the server dropped the signal without stopping).
    pub async fn stopped(&mut self) {
        if self.0.wait_for(|stopping| *stopping).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Announces a write that succeeded: to this process's waiters at once, and
/// to the other processes on the same database when there can be others
/// (through the outbox, when a publisher runs). A failure to tell them is
/// logged, not the request's: the write stands, and their waiting consoles
/// learn of it at the end of their wait at the latest.
pub(crate) async fn announce_write(host: &Host, scope: &Scope) {
    host.changes().announce(scope);
    let Some(feed) = host.store().change_feed() else {
        return;
    };
    if host.changes().queue(scope) {
        return;
    }
    if let Err(e) = feed.publish(&scope.message(host.changes().origin())).await {
        tracing::warn!(error = %e, "telling the other host processes of a write failed");
    }
}

/// Set while a publisher runs; cleared when its task ends or is aborted,
/// after which writes publish for themselves again.
struct Publishing<'a>(&'a Changes);

impl Drop for Publishing<'_> {
    fn drop(&mut self) {
        if let Ok(mut outbox) = self.0.outbox.lock() {
            outbox.publisher = false;
        }
    }
}

/// Tells the other processes of this one's writes until `stop`, merging
/// what comes in meanwhile into the next NOTIFY (a store without a feed,
/// SQLite, returns at once). At `stop` (the server has answered its last
/// request) what is still queued goes out at once, so a process that stops
/// takes no announcement with it; writes after that publish themselves.
pub(crate) async fn publish_until(host: Host, stop: tokio::sync::oneshot::Receiver<()>) {
    let Some(feed) = host.store().change_feed() else {
        return;
    };
    let changes = host.changes();
    let running = changes.publishing();
    tokio::pin!(stop);
    loop {
        let scope = tokio::select! {
            scope = changes.next_to_publish() => scope,
            _ = &mut stop => break,
        };
        publish(feed, changes, &scope).await;
        tokio::select! {
            () = tokio::time::sleep(PUBLISH_SPACING) => {}
            _ = &mut stop => break,
        }
    }
    if let Some(scope) = changes.stop_publishing(running) {
        publish(feed, changes, &scope).await;
    }
}

async fn publish(feed: &dyn crate::store::ChangeFeed, changes: &Changes, scope: &Scope) {
    if let Err(e) = feed.publish(&scope.message(changes.origin())).await {
        tracing::warn!(error = %e, "telling the other host processes of writes failed");
    }
}

/// The first pause before connecting again after the listening connection
/// failed; it doubles up to [`RELISTEN_MAX`].
const RELISTEN_FIRST: Duration = Duration::from_millis(250);
/// The longest pause between attempts to listen again.
const RELISTEN_MAX: Duration = Duration::from_secs(10);

/// Hears the other processes' writes for as long as the server runs (a
/// store without a feed, SQLite, returns at once).
pub(crate) async fn relay_forever(host: Host) {
    let Some(feed) = host.store().change_feed() else {
        return;
    };
    let mut pause = RELISTEN_FIRST;
    let mut first = true;
    loop {
        match feed.listen().await {
            Ok(mut listener) => {
                pause = RELISTEN_FIRST;
                if !first {
                    // Whatever was announced while no one listened is
                    // unknown: every waiter looks again.
                    tracing::info!("listening for other host processes' changes again");
                    host.changes().announce(&Scope::All);
                }
                first = false;
                relay(&host, &mut listener).await;
                tracing::warn!(
                    "the connection listening for other host processes' changes dropped; connecting again"
                );
            }
            Err(e) => {
                first = false;
                tracing::warn!(error = %e, "cannot listen for other host processes' changes; trying again");
            }
        }
        // Waiters are woken as soon as listening resumes; until then they
        // still answer at the end of their wait with what is current.
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(RELISTEN_MAX);
    }
}

/// Announces every other process's write until the connection drops.
async fn relay(host: &Host, listener: &mut crate::store::ChangeListener) {
    while let Some(message) = listener.next().await {
        let (origin, scope) = Scope::heard(&message);
        if origin != host.changes().origin() {
            host.changes().announce(&scope);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announcement_carries_its_orgs_to_the_other_processes() {
        let scope = Scope::Orgs(vec!["anp_org_1".into(), "sandbox".into()]);
        let message = scope.message("abc");
        assert_eq!(message, "abc anp_org_1 sandbox");
        assert_eq!(Scope::heard(&message), ("abc", scope));
        assert_eq!(
            Scope::heard(&Scope::All.message("abc")),
            ("abc", Scope::All)
        );
    }

    #[test]
    fn merged_announcements_name_every_org_once_or_all() {
        let a = Scope::Orgs(vec!["o1".into(), "o2".into()]);
        let b = Scope::Orgs(vec!["o2".into(), "o3".into()]);
        assert_eq!(
            a.clone().merge(&b),
            Scope::Orgs(vec!["o1".into(), "o2".into(), "o3".into()])
        );
        assert_eq!(a.clone().merge(&Scope::All), Scope::All);
        assert_eq!(Scope::All.merge(&a), Scope::All);
        let many = Scope::Orgs((0..=MOST_HANDLES).map(|n| format!("o{n}")).collect());
        assert_eq!(a.merge(&many), Scope::All);
    }

    #[tokio::test]
    async fn writes_queued_while_a_publisher_runs_go_out_merged() {
        let changes = Changes::new();
        assert!(
            !changes.queue(&Scope::All),
            "no publisher: the writer publishes"
        );
        let running = changes.publishing();
        assert!(changes.queue(&Scope::Orgs(vec!["o1".into()])));
        assert!(changes.queue(&Scope::Orgs(vec!["o2".into()])));
        assert_eq!(
            changes.next_to_publish().await,
            Scope::Orgs(vec!["o1".into(), "o2".into()])
        );
        drop(running);
        assert!(!changes.queue(&Scope::All), "the publisher stopped");
    }

    #[test]
    fn a_stopping_publisher_hands_over_what_is_still_queued() {
        let changes = Changes::new();
        let running = changes.publishing();
        assert!(changes.queue(&Scope::Orgs(vec!["o1".into()])));
        assert_eq!(
            changes.stop_publishing(running),
            Some(Scope::Orgs(vec!["o1".into()]))
        );
        assert!(
            !changes.queue(&Scope::All),
            "after the last NOTIFY, writers publish themselves"
        );
        let running = changes.publishing();
        assert_eq!(changes.stop_publishing(running), None, "nothing queued");
    }

    #[test]
    fn an_announcement_from_a_process_before_scoping_wakes_every_org() {
        assert_eq!(Scope::heard("0123abcd"), ("0123abcd", Scope::All));
    }

    #[test]
    fn a_write_wakes_only_the_orgs_it_touched_and_one_that_names_none_wakes_all() {
        let changes = Changes::new();
        let (a, b) = (changes.subscribe("a"), changes.subscribe("b"));
        changes.announce(&Scope::Orgs(vec!["a".into()]));
        assert!(a.has_changed().unwrap());
        assert!(!b.has_changed().unwrap());
        changes.announce(&Scope::All);
        assert!(b.has_changed().unwrap());
        assert_eq!(changes.waiters(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_large_orgs_consoles_are_paced_and_a_small_orgs_hear_at_once() {
        let changes = Changes::new();
        let many: Vec<_> = (0..500).map(|_| changes.subscribe("big")).collect();
        let _one = changes.subscribe("small");
        // Never answered: nothing to pace from.
        assert_eq!(changes.not_before("ada", "big"), None);
        changes.answered("ada");
        changes.answered("bob");
        let at = changes.not_before("ada", "big").unwrap();
        assert_eq!(at - Instant::now(), PACE_PER_WAITER * 500);
        // Bob's console is alone in its org: 2 ms.
        assert_eq!(
            changes.not_before("bob", "small").unwrap() - Instant::now(),
            PACE_PER_WAITER
        );
        tokio::time::advance(PACE_PER_WAITER * 500).await;
        assert_eq!(changes.not_before("ada", "big"), None);
        // However many wait, a console hears at least every MAX_PACE.
        let more: Vec<_> = (0..5000).map(|_| changes.subscribe("big")).collect();
        changes.answered("ada");
        assert_eq!(
            changes.not_before("ada", "big").unwrap() - Instant::now(),
            MAX_PACE
        );
        drop((many, more));
    }

    #[test]
    fn counters_nobody_waits_on_are_forgotten() {
        let changes = Changes::new();
        for i in 0..(SWEEP_FLOOR * 3) {
            drop(changes.subscribe(&format!("org{i}")));
        }
        let kept = changes.orgs.lock().unwrap().counters.len();
        assert!(kept <= SWEEP_FLOOR, "{kept} counters kept for no waiter");
    }
}
