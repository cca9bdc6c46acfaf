//! Wakes the consoles that wait for a change (`GET /summary?wait=`): every
//! write that succeeds through any surface announces itself here, and each
//! waiting request recomputes its summary once and answers as soon as what
//! its console sees has changed. No timer runs in between: a waiting request
//! sleeps until an announcement, the next pending request's expiry, or the
//! end of its wait, whichever comes first.

use tokio::sync::watch;

/// A generation counter that every successful write moves on.
#[derive(Debug)]
pub struct Changes {
    tx: watch::Sender<u64>,
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
        Changes { tx }
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
}
