//! Wakes the consoles that wait for a change (`GET /summary?wait=`): every
//! write that succeeds through any surface announces itself here, and each
//! waiting request recomputes its summary once and answers as soon as what
//! its console sees has changed. No timer runs in between: a waiting request
//! sleeps until an announcement, the next pending request's expiry, or the
//! end of its wait, whichever comes first.
//!
//! Several host processes on one PostgreSQL database hear each other through
//! the store's [`crate::store::ChangeFeed`] (LISTEN/NOTIFY): each process publishes its
//! writes, and [`relay_forever`] turns every other process's announcement
//! into a local one. When the listening connection drops, announcements may
//! have been missed: the relay connects again and then wakes every waiter,
//! which recomputes its summary and answers if anything moved meanwhile.

use std::time::Duration;

use tokio::sync::watch;

use crate::Host;

/// A generation counter that every successful write moves on.
#[derive(Debug)]
pub struct Changes {
    tx: watch::Sender<u64>,
    origin: String,
}

impl Default for Changes {
    fn default() -> Self {
        Changes::new()
    }
}

impl Changes {
    /// A counter no one waits on yet.
    pub fn new() -> Changes {
        let (tx, _) = watch::channel(0);
        Changes {
            tx,
            origin: uuid::Uuid::new_v4().simple().to_string(),
        }
    }

    /// Something a console could see may have changed: wake every waiter.
    pub fn announce(&self) {
        self.tx
            .send_modify(|generation| *generation = generation.wrapping_add(1));
    }

    /// A receiver that wakes on the next announcement after this call; take
    /// it before reading what it guards, so no announcement falls between.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.tx.subscribe()
    }

    /// How many requests wait now (what tests and metrics read).
    pub fn waiters(&self) -> usize {
        self.tx.receiver_count()
    }

    /// This process's name in the announcements it publishes to the others
    /// (random per process, so it knows its own when they come back).
    pub fn origin(&self) -> &str {
        &self.origin
    }
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
/// to the other processes on the same database when there can be others. A
/// failure to tell them is logged, not the request's: the write stands, and
/// their waiting consoles learn of it at the end of their wait at the latest.
pub(crate) async fn announce_write(host: &Host) {
    host.changes().announce();
    if let Some(feed) = host.store().change_feed() {
        if let Err(e) = feed.publish(host.changes().origin()).await {
            tracing::warn!(error = %e, "telling the other host processes of a write failed");
        }
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
                    host.changes().announce();
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
    while let Some(origin) = listener.next().await {
        if origin != host.changes().origin() {
            host.changes().announce();
        }
    }
}
