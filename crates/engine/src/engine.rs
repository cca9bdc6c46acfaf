//! The [`Engine`] handle: cheap to clone (an `Arc` inside), so the shell keeps
//! one in Tauri state and every command calls one method.

use std::sync::{Arc, Mutex, RwLock};

use anp::keys::SigningKey;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::config::EngineConfig;
use crate::error::{DecideError, EngineError};
use crate::notify::{Notifier, SilentNotifier};
use crate::store::Store;
use crate::views::*;

/// Shared state behind every clone of an [`Engine`].
pub(crate) struct Inner {
    pub(crate) config: EngineConfig,
    pub(crate) store: Mutex<Store>,
    pub(crate) key: SigningKey,
    pub(crate) changes: broadcast::Sender<EngineEvent>,
    pub(crate) notifier: RwLock<Arc<dyn Notifier>>,
}

/// The console engine. Clone it freely; all clones share one state.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

/// File name of the database inside the data directory.
pub const DATABASE_FILE: &str = "console.sqlite3";

impl Engine {
    /// Opens the data directory: creates it, migrates the database, loads or
    /// creates the approver key. Starts nothing; see [`Engine::start`].
    pub fn open(config: EngineConfig) -> Result<Engine, EngineError> {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| EngineError::DataDir {
            path: config.data_dir.display().to_string(),
            detail: e.to_string(),
        })?;
        let store = Store::open(&config.data_dir.join(DATABASE_FILE))?;
        let key = crate::keystore::load_or_create(&config.data_dir)?;
        let (changes, _) = broadcast::channel(256);
        Ok(Engine {
            inner: Arc::new(Inner {
                config,
                store: Mutex::new(store),
                key,
                changes,
                notifier: RwLock::new(Arc::new(SilentNotifier)),
            }),
        })
    }

    /// Starts the poller, and the sandbox when the config asks for it.
    pub async fn start(&self) -> Result<(), EngineError> {
        Ok(())
    }

    /// Stops the poller and the sandbox; stored data stays.
    pub async fn shutdown(&self) {}

    /// A stream of what changed, for `engine://changed`.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.inner.changes.subscribe()
    }

    /// Replaces the notifier (the shell's notify-rust implementation).
    pub fn set_notifier(&self, notifier: Arc<dyn Notifier>) {
        if let Ok(mut slot) = self.inner.notifier.write() {
            *slot = notifier;
        }
    }

    /// The approver's public key (base64url), as enrolled with hosts.
    pub fn approver_public_key(&self) -> String {
        anp::keys::public_key_b64(&self.inner.key.verifying_key())
    }

    /// The first screen: hosts, unread count, sandbox flag, data dir.
    pub async fn app_state(&self) -> Result<AppState, EngineError> {
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// Pending decisions across hosts, soonest expiry first.
    pub async fn inbox(&self) -> Result<Vec<InboxItem>, EngineError> {
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// One offer with everything needed to decide it.
    pub async fn offer_view(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> Result<OfferView, EngineError> {
        let _ = (host_id, session_id, event_hash);
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// Signs and submits a decision, idempotently.
    pub async fn decide(&self, request: DecideRequest) -> Result<DecisionResult, DecideError> {
        let _ = request;
        Err(DecideError::NotPending)
    }

    /// Checks an edited counter-offer by the protocol's rules, with its diff.
    pub async fn validate_counter(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
        offer: Value,
    ) -> Result<CounterCheck, EngineError> {
        let _ = (host_id, session_id, event_hash, offer);
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// The history list, filtered.
    pub async fn sessions(&self, filter: HistoryFilter) -> Result<Vec<SessionRow>, EngineError> {
        let _ = filter;
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// One session in full: timeline, series, decisions, verification.
    pub async fn session_detail(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> Result<SessionDetail, EngineError> {
        let _ = (host_id, session_id);
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// Writes a session export to the data dir's `exports/`.
    pub async fn export_session(
        &self,
        host_id: &str,
        session_id: &str,
        format: ExportFormat,
    ) -> Result<ExportResult, EngineError> {
        let _ = (host_id, session_id, format);
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// Enrolls with a host by URL and one-time code; pins its platform key.
    pub async fn connect_host(&self, url: &str, code: &str) -> Result<HostInfo, EngineError> {
        let _ = (url, code);
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// Every connected host.
    pub async fn hosts(&self) -> Result<Vec<HostInfo>, EngineError> {
        Err(EngineError::InvalidInput("not implemented yet".into()))
    }

    /// One poll cycle now, across hosts.
    pub async fn refresh(&self) -> Result<(), EngineError> {
        Ok(())
    }

    /// Marks an offer as opened (clears unread).
    pub async fn mark_seen(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> Result<(), EngineError> {
        let store = self.inner.store.lock().map_err(|_| poisoned())?;
        store.mark_seen(host_id, session_id, event_hash)?;
        Ok(())
    }
}

pub(crate) fn poisoned() -> EngineError {
    EngineError::InvalidInput("the engine's store lock was poisoned by an earlier panic".into())
}
