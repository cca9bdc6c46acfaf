//! What the engine's workers (poller, `decide`, `connect`, the sandbox) are
//! handed: the store, the clock, the change sink, the notifier, the hosts'
//! clients and the approver's key. They never see the [`Engine`] facade;
//! what only the facade owns (background tasks, the running sandbox host)
//! they return as outcomes for it to keep.
//!
//! [`Engine`]: crate::Engine

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use time::OffsetDateTime;
use tokio::sync::broadcast;

use crate::clock::{format_time, human_time};
use crate::config::{ApproverProfile, EngineConfig};
use crate::edge::transport::HostIo;
use crate::error::EngineError;
use crate::keystore::KeyVault;
use crate::notify::{Notifier, SilentNotifier};
use crate::poller::PollStats;
use crate::store::{HostRecord, Store};
use crate::views::{ChangeScope, EngineEvent};

/// The shared state every worker reads and writes.
pub(crate) struct Context {
    /// Where state lives, the clock, how people read numbers and times.
    pub config: EngineConfig,
    /// The local database.
    store: Mutex<Store>,
    /// The approver's key, in its one room.
    pub vault: KeyVault,
    /// Where changes are reported (`engine://changed`).
    changes: broadcast::Sender<EngineEvent>,
    /// The shell's notifier.
    notifier: RwLock<Arc<dyn Notifier>>,
    /// What the protocols talk to each host with.
    clients: Mutex<HashMap<String, Arc<HostIo>>>,
    /// Per host, the `ETag` of the last summary the poller applied in full:
    /// the next cycle asks for the summary only if it changed.
    pub summary_tags: Mutex<HashMap<String, String>>,
    /// Counters the benchmark reads.
    pub stats: Mutex<PollStats>,
    /// One poll cycle at a time (the loop, `refresh`, after a decision).
    pub poll_lock: tokio::sync::Mutex<()>,
    /// One decision at a time, so a double click reuses the first one.
    pub decide_lock: tokio::sync::Mutex<()>,
    /// Wakes the poller when a setting changed (a new interval applies now).
    pub settings_changed: tokio::sync::Notify,
    /// True while this process runs the embedded sandbox host (its sessions
    /// are polled and decidable only then).
    sandbox_running: AtomicBool,
    /// Per host, how the console hears of its changes now (set by its
    /// watcher, [`crate::watch`]); a host absent here is polled.
    hearing: Mutex<HashMap<String, Hearing>>,
    /// How many decisions waited on the person at the reminders' last
    /// look ([`crate::reminders`]): when one expires with no news from a
    /// host, the count shown (tray, title) changes all the same.
    pub waiting_seen: Mutex<Option<usize>>,
}

/// How the console hears of one host's changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hearing {
    /// A waiting request is held at the host: the timed loop leaves it be.
    Waiting,
    /// The timed loop polls it; why waiting is not used.
    Polling(String),
}

impl Context {
    /// A context over an opened store and key.
    pub(crate) fn new(config: EngineConfig, store: Store, vault: KeyVault) -> Context {
        let (changes, _) = broadcast::channel(1024);
        Context {
            config,
            store: Mutex::new(store),
            vault,
            changes,
            notifier: RwLock::new(Arc::new(SilentNotifier)),
            clients: Mutex::new(HashMap::new()),
            summary_tags: Mutex::new(HashMap::new()),
            stats: Mutex::new(PollStats::default()),
            poll_lock: tokio::sync::Mutex::new(()),
            decide_lock: tokio::sync::Mutex::new(()),
            settings_changed: tokio::sync::Notify::new(),
            sandbox_running: AtomicBool::new(false),
            hearing: Mutex::new(HashMap::new()),
            waiting_seen: Mutex::new(None),
        }
    }

    /// The store, locked.
    pub(crate) fn store(&self) -> Result<MutexGuard<'_, Store>, EngineError> {
        self.store.lock().map_err(|_| poisoned())
    }

    /// Now, by the injected clock.
    pub(crate) fn now(&self) -> OffsetDateTime {
        self.config.clock.now()
    }

    /// Now, as the protocols write times.
    pub(crate) fn now_text(&self) -> String {
        format_time(self.now())
    }

    /// Now, as `humanize` reads it (what people read is relative to it).
    pub(crate) fn human_now(&self) -> humanize::Timestamp {
        human_time(self.now())
    }

    /// How numbers and times are written for people on this machine.
    pub(crate) fn humanizer(&self) -> &humanize::Humanizer {
        &self.config.humanizer
    }

    /// A stream of what changed.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.changes.subscribe()
    }

    /// Reports a change.
    pub(crate) fn emit(&self, what: ChangeScope, host_id: Option<&str>, session_id: Option<&str>) {
        let _ = self.changes.send(EngineEvent {
            what,
            host_id: host_id.map(str::to_owned),
            session_id: session_id.map(str::to_owned),
        });
    }

    /// The notifier in effect.
    pub(crate) fn notifier(&self) -> Arc<dyn Notifier> {
        match self.notifier.read() {
            Ok(n) => n.clone(),
            Err(_) => Arc::new(SilentNotifier),
        }
    }

    /// Replaces the notifier.
    pub(crate) fn set_notifier(&self, notifier: Arc<dyn Notifier>) {
        if let Ok(mut slot) = self.notifier.write() {
            *slot = notifier;
        }
    }

    /// Whether this process runs the sandbox host.
    pub(crate) fn sandbox_running(&self) -> bool {
        self.sandbox_running.load(Ordering::SeqCst)
    }

    /// Records whether this process runs the sandbox host.
    pub(crate) fn set_sandbox_running(&self, running: bool) {
        self.sandbox_running.store(running, Ordering::SeqCst);
    }

    /// True when this process polls `host` (a sandbox host only while it
    /// runs here).
    pub(crate) fn polls(&self, host: &HostRecord) -> bool {
        !host.sandbox || self.sandbox_running()
    }

    /// The settings in effect (read from the store; on a failure, the
    /// defaults: nothing is silenced by a read error).
    pub(crate) fn settings(&self) -> crate::settings::Effective {
        self.store()
            .and_then(|store| crate::settings::Effective::load(&store, &self.config))
            .unwrap_or_else(|_| crate::settings::Effective::defaults(&self.config))
    }

    /// Who this console approves as.
    pub(crate) fn approver_profile(&self) -> ApproverProfile {
        self.settings().approver(&self.config)
    }

    /// The idle time after which the key locks.
    pub(crate) fn idle_lock(&self) -> std::time::Duration {
        self.settings().idle_lock()
    }

    /// The time between poll cycles in effect.
    pub(crate) fn poll_interval(&self) -> std::time::Duration {
        self.settings().poll_interval(&self.config)
    }

    /// The fingerprint of the approver key `host` knows (a record of a
    /// build that kept none: the console's one key then, the current one).
    pub(crate) fn key_of(&self, host: &HostRecord) -> String {
        host.key_fingerprint
            .clone()
            .unwrap_or_else(|| self.vault.fingerprint())
    }

    /// What the protocols talk to this host with: the approver client (no
    /// retries; the poller backs off) and the signer, one per host, made
    /// again when the host's address or this console's approver id there
    /// changed (it moved to a new key).
    pub(crate) fn host_io(&self, host: &HostRecord) -> Result<Arc<HostIo>, EngineError> {
        let mut clients = self.clients.lock().map_err(|_| poisoned())?;
        if let Some(io) = clients.get(&host.host_id) {
            if io.url.trim_end_matches('/') == host.url.trim_end_matches('/')
                && io.approver_id == host.approver_id
            {
                return Ok(io.clone());
            }
        }
        let key = self.vault.request_key_for(&self.key_of(host))?;
        let io = HostIo::new(&host.url, &host.approver_id, &key)
            .map(Arc::new)
            .map_err(EngineError::InvalidInput)?;
        clients.insert(host.host_id.clone(), io.clone());
        Ok(io)
    }

    /// Records how the console hears of `host_id`'s changes; tells the
    /// Hosts screen when that changed.
    pub(crate) fn set_hearing(&self, host_id: &str, hearing: Hearing) {
        let changed = match self.hearing.lock() {
            Ok(mut all) => all.insert(host_id.to_owned(), hearing.clone()) != Some(hearing),
            Err(_) => false,
        };
        if changed {
            self.emit(ChangeScope::Hosts, Some(host_id), None);
        }
    }

    /// Forgets how `host_id` was heard (its watcher stopped): polled.
    pub(crate) fn forget_hearing(&self, host_id: &str) {
        if let Ok(mut all) = self.hearing.lock() {
            all.remove(host_id);
        }
    }

    /// True while a waiting request stands in for `host_id`'s timed polls.
    pub(crate) fn waits_on(&self, host_id: &str) -> bool {
        self.hearing
            .lock()
            .is_ok_and(|all| all.get(host_id) == Some(&Hearing::Waiting))
    }

    /// How the Hosts screen describes the way `host_id` is heard.
    pub(crate) fn updates_of(&self, host_id: &str) -> crate::views::HostUpdates {
        use crate::views::{HostUpdates, UpdateMode};
        let hearing = self
            .hearing
            .lock()
            .ok()
            .and_then(|all| all.get(host_id).cloned());
        let every = self.poll_interval().as_secs();
        match hearing {
            Some(Hearing::Waiting) => HostUpdates {
                mode: UpdateMode::Waiting,
                detail: "Hears of changes at once: one request waits at the host until something changes.".into(),
            },
            Some(Hearing::Polling(why)) => HostUpdates {
                mode: UpdateMode::Polling,
                detail: format!("Polls every {every} s: {why}"),
            },
            None => HostUpdates {
                mode: UpdateMode::Polling,
                detail: format!("Polls every {every} s."),
            },
        }
    }

    /// Counts poller work (requests sent, bytes received).
    pub(crate) fn count(&self, requests: u64, bytes: u64) {
        if let Ok(mut s) = self.stats.lock() {
            s.requests += requests;
            s.bytes += bytes;
        }
    }
}

pub(crate) fn poisoned() -> EngineError {
    EngineError::InvalidInput("the engine's store lock was poisoned by an earlier panic".into())
}
