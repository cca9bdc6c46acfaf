//! The [`Engine`] handle: cheap to clone (an `Arc` inside), so the shell keeps
//! one in Tauri state and every command calls one method. The work is in
//! sibling modules (`poller`, `inbox`, `decide`, `history`, `connect`),
//! which are handed the [`Context`] and never this facade; what they return
//! that only the facade keeps (the background poller) is applied here. The
//! calls the sandbox crate makes are in `sandbox`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::broadcast;

use crate::config::{ApproverProfile, EngineConfig, SandboxMode};
use crate::context::Context;
use crate::error::{DecideError, EngineError};
use crate::notify::Notifier;
use crate::settings::{ApproverCard, SettingsView};
use crate::store::{HostRecord, Store};
use crate::views::*;

/// Shared state behind every clone of an [`Engine`].
struct Inner {
    /// What the workers are handed.
    ctx: Arc<Context>,
    /// Background tasks (the poller) to stop on shutdown.
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// `start` was called (the work waits for the key when it is not
    /// loaded yet: a sealed key before its first unlock).
    started: std::sync::atomic::AtomicBool,
}

/// The console engine. Clone it freely; all clones share one state.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

/// File name of the database inside the data directory.
pub const DATABASE_FILE: &str = "console.sqlite3";

impl Engine {
    /// Opens the data directory: creates it, makes it and everything in it
    /// its owner's only (an install from before that rule included),
    /// migrates the database, loads or creates the approver key. Starts
    /// nothing; see [`Engine::start`].
    pub fn open(config: EngineConfig) -> Result<Engine, EngineError> {
        let data_dir_error = |e: std::io::Error| EngineError::DataDir {
            path: config.data_dir.display().to_string(),
            detail: e.to_string(),
        };
        crate::owner_only::create_dir(&config.data_dir).map_err(data_dir_error)?;
        crate::owner_only::restrict_tree(&config.data_dir).map_err(data_dir_error)?;
        let database = config.data_dir.join(DATABASE_FILE);
        crate::owner_only::prepare_database(&database).map_err(data_dir_error)?;
        let store = Store::open(&database)?;
        let vault = crate::keystore::KeyVault::open(crate::keystore::VaultOptions {
            data_dir: &config.data_dir,
            choice: config.key_store,
            passphrase: config.key_passphrase.as_deref(),
            now: config.clock.now(),
        })?;
        if vault.is_kept()? {
            // The keys of this console's records (a build before keys were
            // recorded had one): the retiring one, if a move is unfinished,
            // is the older.
            let now = crate::clock::format_time(config.clock.now());
            if let Some(old) = vault.retiring_public() {
                let fp = crate::edge::keyfile::fingerprint(&old);
                store.adopt_signing_key(&fp, &crate::edge::keyfile::public_key_text(&old), &now)?;
            }
            let current = vault.public_key();
            store.adopt_signing_key(
                &vault.fingerprint(),
                &crate::edge::keyfile::public_key_text(&current),
                &now,
            )?;
        }
        Ok(Engine {
            inner: Arc::new(Inner {
                ctx: Arc::new(Context::new(config, store, vault)),
                tasks: Mutex::new(Vec::new()),
                started: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// Starts the poller. Call once, inside a tokio runtime, after the
    /// shell started the sandbox beside the engine when
    /// [`Engine::wants_sandbox`] said so; a second call does nothing. A
    /// sealed key not unlocked yet signs nothing, so the poller then starts
    /// at its first unlock.
    pub async fn start(&self) -> Result<(), EngineError> {
        if !self
            .inner
            .started
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            // The desk's figures of sessions stored before this build kept
            // them, read in the background.
            let ctx = self.inner.ctx.clone();
            tokio::task::spawn_blocking(move || crate::desk::warm(&ctx));
        }
        if self.ctx().vault.request_key().is_err() {
            return Ok(());
        }
        self.start_now().await
    }

    async fn start_now(&self) -> Result<(), EngineError> {
        if !self.tasks().is_empty() {
            return Ok(()); // already started: one poller per engine
        }
        if self.ctx().vault.retiring_fingerprint().is_some() {
            // A move to a new key left unfinished (a host unreachable, or a
            // stop mid-move): carried on now, before the poller signs for
            // those hosts with a key they may have retired.
            let ctx = self.inner.ctx.clone();
            let finishing = tokio::spawn(async move {
                if let Err(e) = crate::rotate::move_to_new_key(&ctx, None).await {
                    tracing::warn!(error = %e, "finishing the move to a new key failed");
                }
            });
            self.tasks().push(finishing);
        }
        let poller = tokio::spawn(crate::poller::run(self.inner.ctx.clone()));
        self.tasks().push(poller);
        Ok(())
    }

    /// Stops the poller; stored data stays. (The shell stops the sandbox.)
    pub async fn shutdown(&self) {
        let tasks: Vec<_> = self.tasks().drain(..).collect();
        for task in tasks {
            task.abort();
        }
    }

    /// A stream of what changed, for `engine://changed`.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.ctx().subscribe()
    }

    /// Replaces the notifier (the shell's notify-rust implementation).
    pub fn set_notifier(&self, notifier: Arc<dyn Notifier>) {
        self.ctx().set_notifier(notifier);
    }

    /// The approver's public key (base64url), as enrolled with hosts.
    pub fn approver_public_key(&self) -> String {
        crate::edge::keyfile::public_key_text(&self.ctx().vault.public_key())
    }

    /// The data directory in use.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.ctx().config.data_dir
    }

    /// The first screen: hosts, unread and waiting counts, sandbox flag, data dir.
    pub async fn app_state(&self) -> Result<AppState, EngineError> {
        let hosts = self.hosts().await?;
        let counts_only = InboxQuery {
            limit: Some(0),
            through: None,
        };
        let counts = self.inbox_of(&hosts, &counts_only)?;
        Ok(AppState {
            sandbox: !hosts.is_empty() && hosts.iter().all(|h| h.sandbox),
            unread: counts.unread,
            waiting: counts.waiting,
            hosts,
            data_dir: self.ctx().config.data_dir.display().to_string(),
            approver: self.approver_profile(),
            locale: self.humanizer().locale_tag().to_owned(),
            time_zone: self.humanizer().time_zone_name().map(str::to_owned),
            key_kept: self.ctx().vault.is_kept()?,
            key_loaded: self.ctx().vault.request_key().is_ok(),
        })
    }

    /// Every pending decision across hosts: those waiting on this person
    /// first, then those waiting on others, each soonest expiry first.
    pub async fn inbox(&self) -> Result<Vec<InboxItem>, EngineError> {
        Ok(self.inbox_page(&InboxQuery::default()).await?.items)
    }

    /// The inbox as a person sees it: a page of rows, soonest expiry first,
    /// and the counts of all of it.
    /// A sandbox host this process does not run (a real host was connected
    /// since) keeps its history but leaves the inbox: its demo offers can no
    /// longer be decided.
    pub async fn inbox_page(&self, query: &InboxQuery) -> Result<InboxPage, EngineError> {
        let hosts = self.hosts().await?;
        self.inbox_of(&hosts, query)
    }

    /// The inbox of `hosts` (as [`Engine::hosts`] found them): a host that
    /// is not polled is left out.
    fn inbox_of(&self, hosts: &[HostInfo], query: &InboxQuery) -> Result<InboxPage, EngineError> {
        let left_out: std::collections::HashSet<String> = hosts
            .iter()
            .filter(|host| !host.polled)
            .map(|host| host.host_id.clone())
            .collect();
        crate::inbox::inbox_page(&*self.store()?, query, &left_out, self.ctx().now())
    }

    /// One proposal with everything needed to decide it, in its kind's
    /// view shape; once decided (here or elsewhere), the same view with
    /// what became of it.
    pub async fn proposal_view(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> Result<ProposalView, EngineError> {
        let now = self.ctx().now();
        // Opening a proposal is the person at work: the idle lock starts again.
        self.ctx().vault.touch(now, self.ctx().idle_lock());
        let approver = self.approver_profile();
        crate::inbox::proposal_view(
            &*self.store()?,
            host_id,
            session_id,
            event_hash,
            &approver,
            now,
        )
    }

    /// Signs and submits a decision, idempotently: the decision is stored
    /// before it is sent, and a retry or a double click reuses it.
    pub async fn decide(&self, request: DecideRequest) -> Result<DecisionResult, DecideError> {
        let decided = crate::decide::decide(self.ctx(), request).await?;
        if decided.sent {
            // Bring the inbox and the log up to date now, not at the next tick.
            let _ = self.refresh().await;
        }
        crate::decide::result(self.ctx(), decided)
    }

    /// Moves a gate request's deadline (the organization's own) later, with
    /// a reason kept beside it at the host, then reads the host again.
    pub async fn extend_deadline(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
        expires_at: &str,
        reason: &str,
    ) -> Result<(), DecideError> {
        crate::decide::extend_deadline(
            self.ctx(),
            host_id,
            session_id,
            event_hash,
            expires_at,
            reason,
        )
        .await?;
        let _ = self.refresh().await;
        Ok(())
    }

    /// Every connected host's stand-ins for this person: given, received,
    /// the roles they may hand over and the colleagues who may take them.
    pub async fn stand_ins(&self) -> Result<crate::views::StandInsView, EngineError> {
        crate::stand_ins::list(self.ctx()).await
    }

    /// Lets a colleague act for this person in some roles for some days
    /// (this computer's zone), signed with the approver key.
    pub async fn give_stand_in(
        &self,
        request: crate::views::GiveStandIn,
    ) -> Result<crate::views::StandInView, EngineError> {
        let made = crate::stand_ins::give(self.ctx(), &request).await?;
        let _ = self.refresh().await;
        Ok(made)
    }

    /// Takes back a stand-in this person gave, or gives up one received.
    pub async fn revoke_stand_in(
        &self,
        host_id: &str,
        delegation_id: &str,
    ) -> Result<crate::views::StandInView, EngineError> {
        let revoked = crate::stand_ins::revoke(self.ctx(), host_id, delegation_id).await?;
        let _ = self.refresh().await;
        Ok(revoked)
    }

    /// Checks an edited counter (in the protocol's own form) by the
    /// protocol's rules, with its diff against the proposal it answers.
    pub async fn validate_counter(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
        counter: Value,
    ) -> Result<CounterCheck, EngineError> {
        crate::inbox::validate_counter(
            &*self.store()?,
            host_id,
            session_id,
            event_hash,
            &counter,
            self.ctx().now(),
        )
    }

    /// The history list, filtered.
    pub async fn sessions(&self, filter: HistoryFilter) -> Result<Vec<SessionRow>, EngineError> {
        crate::history::sessions(&*self.store()?, &filter)
    }

    /// One session in full: timeline, series, decisions, verification.
    pub async fn session_detail(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> Result<SessionDetail, EngineError> {
        crate::history::session_detail(&*self.store()?, self.humanizer(), host_id, session_id)
    }

    /// Writes a session export to the data dir's `exports/`: JSON (the
    /// verifiable log document plus the signed decisions) or CSV of every
    /// term of every entry and decision.
    pub async fn export_session(
        &self,
        host_id: &str,
        session_id: &str,
        format: ExportFormat,
    ) -> Result<ExportResult, EngineError> {
        let dir = self.ctx().config.data_dir.join("exports");
        crate::history::export(
            &*self.store()?,
            self.humanizer(),
            &dir,
            host_id,
            session_id,
            format,
        )
    }

    /// The desk for a date range: money per currency, what was won
    /// against opening asks, waits, decisions by person and role, breaches
    /// and disputes, and every counterparty.
    pub async fn desk(&self, query: DeskQuery) -> Result<DeskOverview, EngineError> {
        let store = self.store()?;
        crate::desk::Desk::read(&store, self.humanizer())?.overview(&query)
    }

    /// One counterparty's page: its identities and keys, sessions, money
    /// and waits.
    pub async fn counterparty(
        &self,
        id: &str,
        query: DeskQuery,
    ) -> Result<CounterpartyPage, EngineError> {
        let store = self.store()?;
        crate::desk::Desk::read(&store, self.humanizer())?.counterparty(id, &query)
    }

    /// The sessions behind a figure of the desk, as History lists them.
    pub async fn desk_sessions(
        &self,
        query: DeskQuery,
        figure: DeskFigure,
    ) -> Result<DeskSessions, EngineError> {
        let store = self.store()?;
        let desk = crate::desk::Desk::read(&store, self.humanizer())?;
        let mut rows = Vec::new();
        for (host_id, session_id) in desk.sessions_behind(&query, &figure)? {
            if let Some(s) = store.session(&host_id, &session_id)? {
                rows.push(crate::history::row(&store, &s)?);
            }
        }
        Ok(DeskSessions { figure, rows })
    }

    /// Records the person's link between two identities of two
    /// counterparties (they are then one); what was verified is unchanged.
    pub async fn link_identities(&self, a: &str, b: &str) -> Result<LinkView, EngineError> {
        // The profile reads the store: before the store is held here.
        let by = self.approver_profile().email;
        let at = self.ctx().now_text();
        let store = self.store()?;
        crate::desk::Desk::read(&store, self.humanizer())?.check_link(a, b)?;
        let link_id = store.link_identities(a, b, &by, &at)?;
        Ok(LinkView {
            link_id,
            a: a.to_owned(),
            b: b.to_owned(),
            linked_by: by,
            linked_at: at,
        })
    }

    /// Undoes a person's link (the record of it is kept).
    pub async fn unlink_identities(&self, link_id: i64) -> Result<(), EngineError> {
        let by = self.approver_profile().email;
        let store = self.store()?;
        if store.unlink_identities(link_id, &by, &self.ctx().now_text())? {
            Ok(())
        } else {
            Err(EngineError::NotFound {
                what: "link",
                id: link_id.to_string(),
            })
        }
    }

    /// Writes a desk list as CSV to the data dir's `exports/`.
    pub async fn export_desk_csv(
        &self,
        query: DeskQuery,
        list: DeskList,
    ) -> Result<ExportResult, EngineError> {
        let store = self.store()?;
        let desk = crate::desk::Desk::read(&store, self.humanizer())?;
        let stamp: String = self
            .ctx()
            .now_text()
            .chars()
            .filter(|c| c.is_ascii_digit())
            .take(14)
            .collect();
        let dir = self.ctx().config.data_dir.join("exports");
        crate::desk::export_csv(&store, &desk, &dir, &query, &list, &stamp)
    }

    /// Writes an audit pack of the decisions `query` selects to the data
    /// dir's `exports/`: `countersign-verify pack` checks it offline.
    pub async fn export_audit_pack(
        &self,
        query: AuditPackQuery,
    ) -> Result<AuditPackResult, EngineError> {
        let made_by = self.approver_profile();
        let store = self.store()?;
        let desk = crate::desk::Desk::read(&store, self.humanizer())?;
        let dir = self.ctx().config.data_dir.join("exports");
        crate::desk::pack::write(
            &store,
            &desk,
            &dir,
            &query,
            &made_by,
            &self.ctx().now_text(),
        )
    }

    /// Verifies a receipt (and its session log) from the bytes the
    /// interface read, and files it: nothing is stored when its protocol
    /// cannot read it. The same bytes filed twice are one receipt.
    pub async fn import_receipt(&self, request: ImportReceipt) -> Result<ReceiptView, EngineError> {
        let now = self.ctx().now_text();
        let view =
            crate::receipts::import(&*self.store()?, &self.ctx().config, &request, false, &now)?;
        self.ctx().emit(ChangeScope::Sessions, None, None);
        Ok(view)
    }

    /// Every filed receipt, the latest first, verified under the settings
    /// in effect; every removal; the settings that loosen what is proof.
    pub async fn receipts(&self) -> Result<ReceiptList, EngineError> {
        crate::receipts::list(&*self.store()?, &self.ctx().config)
    }

    /// Removes a filed receipt: its bytes are deleted, the record of the
    /// removal (which receipt, what it said, who, when) stays.
    pub async fn remove_receipt(&self, receipt_id: &str) -> Result<ReceiptRemoval, EngineError> {
        let now = self.ctx().now_text();
        let removal =
            crate::receipts::remove(&*self.store()?, &self.ctx().config, receipt_id, &now)?;
        self.ctx().emit(ChangeScope::Sessions, None, None);
        Ok(removal)
    }

    /// One filed receipt in full: every check, the signed terms, the
    /// arbiter's unverified report.
    pub async fn receipt_view(&self, receipt_id: &str) -> Result<ReceiptView, EngineError> {
        crate::receipts::view(&*self.store()?, &self.ctx().config, receipt_id)
    }

    /// Writes a filed receipt and its log into the data dir's `exports/`,
    /// byte for byte as imported.
    pub async fn export_receipt(&self, receipt_id: &str) -> Result<ReceiptExport, EngineError> {
        let dir = self.ctx().config.data_dir.join("exports");
        crate::receipts::export(&*self.store()?, &dir, receipt_id)
    }

    /// Enrolls with a host by URL and one-time code, pins its platform key,
    /// and polls it once.
    /// Uses the configured [`ApproverProfile`]; the host only accepts the
    /// email its admin issued the code for (see [`Engine::connect_host_as`]).
    pub async fn connect_host(&self, url: &str, code: &str) -> Result<HostInfo, EngineError> {
        let profile = self.approver_profile();
        self.connect_host_as(url, code, &profile).await
    }

    /// As [`Engine::connect_host`], enrolling under the given name and email
    /// (the email the host's admin issued the code for). Plain HTTP is
    /// refused off this machine (see [`Engine::connect_host_with`]).
    pub async fn connect_host_as(
        &self,
        url: &str,
        code: &str,
        profile: &ApproverProfile,
    ) -> Result<HostInfo, EngineError> {
        self.connect_host_with(url, code, profile, false).await
    }

    /// As [`Engine::connect_host_as`]; `allow_plain_http` is the person's
    /// explicit override for a lab host reached over plain HTTP off this
    /// machine (refused without it, before anything is sent, as `plain_http`),
    /// recorded with the host and shown on Hosts.
    pub async fn connect_host_with(
        &self,
        url: &str,
        code: &str,
        profile: &ApproverProfile,
        allow_plain_http: bool,
    ) -> Result<HostInfo, EngineError> {
        let profile = ApproverProfile {
            name: profile.name.trim().to_owned(),
            email: profile.email.trim().to_owned(),
        };
        profile.validate()?;
        let record =
            crate::connect::connect(self.ctx(), url, code, false, allow_plain_http, &profile)
                .await?;
        let _ = self.refresh().await;
        self.host_info(&record.host_id)
    }

    /// Who this console approves as: the `approver.*` settings, else the
    /// configured approver (the environment or the defaults). What a connect
    /// form offers before the person types their own.
    pub fn approver_profile(&self) -> ApproverProfile {
        self.ctx().approver_profile()
    }

    /// Every setting with its value, the approver with the key fingerprint,
    /// and the data directory: the settings screen.
    pub async fn settings_view(&self) -> Result<SettingsView, EngineError> {
        let effective = crate::settings::Effective::load(&*self.store()?, &self.ctx().config)?;
        let profile = effective.approver(&self.ctx().config);
        let key = self.ctx().vault.public_key();
        Ok(SettingsView {
            settings: effective.into_settings(),
            approver: ApproverCard {
                name: profile.name,
                email: profile.email,
                key_fingerprint: crate::edge::keyfile::fingerprint(&key),
                public_key: crate::edge::keyfile::public_key_text(&key),
            },
            data_dir: self.ctx().config.data_dir.display().to_string(),
            key: self.key_status(),
        })
    }

    /// Where the approver key lives and whether it signs now.
    pub fn key_status(&self) -> crate::keystore::KeyStatus {
        let settings = self.ctx().settings();
        let above = settings
            .confirm_above()
            .map_or_else(|| "0".to_owned(), |d| d.to_string());
        let mut status = self
            .ctx()
            .vault
            .status(self.ctx().now(), settings.idle_lock(), above);
        status.keys = self
            .store()
            .and_then(|s| Ok(s.signing_keys()?))
            .unwrap_or_default()
            .into_iter()
            .map(|k| crate::keystore::KeyUsed {
                fingerprint: k.fingerprint,
                since: k.since,
                retired_at: k.retired_at,
            })
            .collect();
        status
    }

    /// Moves this console to a new approver key (Settings → "Move to a new
    /// key"), or finishes a move begun: every host that knows the old key
    /// first gets the decisions it has not answered, then retires the old
    /// key and enrolls the new one; the old key is deleted once no host
    /// knows it. `passphrase`: a sealed key's (the new key is sealed with
    /// it). Decisions wait meanwhile, and are signed with the key their
    /// host knows.
    pub async fn move_to_new_key(
        &self,
        passphrase: Option<String>,
    ) -> Result<crate::rotate::KeyMove, EngineError> {
        let passphrase = passphrase.map(zeroize::Zeroizing::new);
        crate::rotate::move_to_new_key(self.ctx(), passphrase.as_ref().map(|p| p.as_str())).await
    }

    /// Unlocks the approver key: asks the desktop's secret store again, or
    /// opens the sealed key with `passphrase`. A console whose key was not
    /// loaded at start (a sealed key) starts polling now.
    pub async fn unlock_key(
        &self,
        passphrase: Option<String>,
    ) -> Result<crate::keystore::KeyStatus, EngineError> {
        let vault_now = self.ctx().now();
        let passphrase = zeroize::Zeroizing::new(passphrase.unwrap_or_default());
        let ctx = self.inner.ctx.clone();
        let p = passphrase.clone();
        tokio::task::spawn_blocking(move || ctx.vault.unlock(Some(p.as_str()), vault_now))
            .await
            .map_err(|e| EngineError::KeyStore(format!("the unlock did not finish: {e}")))??;
        if self.tasks().is_empty() && self.inner.started.load(std::sync::atomic::Ordering::SeqCst) {
            self.start_now().await?;
        }
        self.ctx().emit(ChangeScope::Key, None, None);
        Ok(self.key_status())
    }

    /// Locks the approver key now: decisions ask to unlock; the inbox keeps
    /// filling.
    pub fn lock_key(&self) -> crate::keystore::KeyStatus {
        self.ctx().vault.lock();
        self.ctx().emit(ChangeScope::Key, None, None);
        self.key_status()
    }

    /// Seals the key with a passphrase the person chose (where no secret
    /// store keeps it), or changes that passphrase; the key must be unlocked.
    pub async fn set_key_passphrase(
        &self,
        passphrase: String,
    ) -> Result<crate::keystore::KeyStatus, EngineError> {
        let passphrase = zeroize::Zeroizing::new(passphrase);
        let ctx = self.inner.ctx.clone();
        tokio::task::spawn_blocking(move || ctx.vault.set_passphrase(passphrase.as_str()))
            .await
            .map_err(|e| EngineError::KeyStore(format!("sealing did not finish: {e}")))??;
        self.ctx().emit(ChangeScope::Key, None, None);
        Ok(self.key_status())
    }

    /// Validates and saves one setting (it persists across restarts), and
    /// applies it: a new poll interval wakes the poller at once.
    pub async fn set_setting(&self, id: &str, value: Value) -> Result<SettingsView, EngineError> {
        let now = self.ctx().now_text();
        crate::settings::set(&*self.store()?, &self.ctx().config, id, &value, &now)?;
        self.ctx().settings_changed.notify_one();
        self.settings_view().await
    }

    /// How numbers and times are written for people on this machine.
    pub fn humanizer(&self) -> &humanize::Humanizer {
        self.ctx().humanizer()
    }

    /// Exports a disputed session's evidence into the data dir's `exports/`:
    /// the stored copy and the host's conflicting answer, byte for byte, and
    /// `evidence.json` naming the seq, the check and both files' hashes.
    pub async fn export_dispute(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> Result<ExportResult, EngineError> {
        let dir = self.ctx().config.data_dir.join("exports");
        let now = self.ctx().now_text();
        crate::dispute::export(&*self.store()?, &dir, host_id, session_id, &now)
    }

    /// Records the person's note on a disputed session. It stays disputed
    /// and decisions on it stay refused.
    pub async fn acknowledge_dispute(
        &self,
        host_id: &str,
        session_id: &str,
        note: &str,
    ) -> Result<DisputeView, EngineError> {
        let now = self.ctx().now_text();
        let view = crate::dispute::acknowledge(&*self.store()?, host_id, session_id, note, &now)?;
        self.ctx()
            .emit(ChangeScope::Sessions, Some(host_id), Some(session_id));
        Ok(view)
    }

    /// Every connected host.
    pub async fn hosts(&self) -> Result<Vec<HostInfo>, EngineError> {
        let ctx = self.ctx();
        // Read, and the store unlocked, before `updates_of` reads settings.
        let hosts = self.store()?.hosts()?;
        Ok(hosts
            .iter()
            .map(|h| HostInfo {
                polled: ctx.polls(h),
                updates: ctx.updates_of(&h.host_id),
                ..host_info(h)
            })
            .collect())
    }

    /// One poll cycle now, across hosts, ignoring backoff. Errors of single
    /// hosts are recorded on the host (see [`HostInfo`]), not returned.
    pub async fn refresh(&self) -> Result<(), EngineError> {
        crate::poller::poll_all(self.ctx()).await
    }

    /// Re-fetches a session's whole log and checks it against the stored
    /// copy and pin, catching a rewrite anywhere in history. The poller runs
    /// this on a rotating session every few cycles.
    pub async fn audit_session(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> Result<VerificationView, EngineError> {
        crate::poller::audit(self.ctx(), host_id, session_id).await?;
        crate::history::session_detail(&*self.store()?, self.humanizer(), host_id, session_id)
            .map(|d| d.verification)
    }

    /// Marks an offer as opened (clears unread).
    pub async fn mark_seen(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> Result<(), EngineError> {
        self.store()?.mark_seen(host_id, session_id, event_hash)?;
        self.ctx()
            .emit(ChangeScope::Inbox, Some(host_id), Some(session_id));
        Ok(())
    }

    /// Puts away a pending proposal that expired undecided: it leaves the
    /// inbox's expired section, nothing is sent and the host's record is
    /// untouched. A proposal that has not expired is refused: it is decided,
    /// not dismissed.
    pub async fn dismiss(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> Result<(), EngineError> {
        let now = self.ctx().now();
        crate::inbox::dismiss(&*self.store()?, host_id, session_id, event_hash, now)?;
        self.ctx()
            .emit(ChangeScope::Inbox, Some(host_id), Some(session_id));
        Ok(())
    }

    /// Counters of the poller: requests sent, bytes received, cycles.
    pub fn poll_stats(&self) -> crate::poller::PollStats {
        self.ctx()
            .stats
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Makes the next cycle ask every host for its whole summary, as a
    /// console that just started does. For the poll benchmark, which sets
    /// a full cycle beside a conditional one; the engine never needs it.
    #[doc(hidden)]
    pub fn forget_summary_tags(&self) {
        if let Ok(mut tags) = self.ctx().summary_tags.lock() {
            tags.clear();
        }
    }

    // ---- internals ----

    fn ctx(&self) -> &Context {
        &self.inner.ctx
    }

    fn store(&self) -> Result<MutexGuard<'_, Store>, EngineError> {
        self.ctx().store()
    }

    fn tasks(&self) -> MutexGuard<'_, Vec<tokio::task::JoinHandle<()>>> {
        match self.inner.tasks.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn host_info(&self, host_id: &str) -> Result<HostInfo, EngineError> {
        let host = self.store()?.host(host_id)?;
        host.map(|h| HostInfo {
            updates: self.ctx().updates_of(host_id),
            ..host_info(&h)
        })
        .ok_or_else(|| EngineError::NotFound {
            what: "host",
            id: host_id.to_owned(),
        })
    }
}

/// The engine's side of the sandbox. The sandbox itself, an embedded host
/// and the scripted counterparties that negotiate with it, is the
/// `countersign-sandbox` crate, which the shell starts beside the engine;
/// the engine knows it only as one more host reached over HTTP, marked as
/// the sandbox, and offers it these few calls: whether to run at all, where
/// to keep its files, enrolling (or re-pointing) this console, filing its
/// demo receipt, and whether its sessions are polled now.
impl Engine {
    /// Whether this start should run the sandbox: as the config's
    /// [`SandboxMode`] says, and in `Auto` only while no real host is
    /// connected (a new user sees real decisions; a connected one does not).
    pub fn wants_sandbox(&self) -> Result<bool, EngineError> {
        let has_real_host = self.ctx().store()?.hosts()?.iter().any(|h| !h.sandbox);
        Ok(match self.ctx().config.sandbox {
            SandboxMode::Off => false,
            SandboxMode::Always => true,
            SandboxMode::Auto => !has_real_host,
        })
    }

    /// Where the sandbox keeps its host's database and its counterparties'
    /// keys and state (`sandbox/` in the data directory), created
    /// owner-only like everything else there.
    pub fn sandbox_dir(&self) -> Result<PathBuf, EngineError> {
        let dir = self.ctx().config.data_dir.join("sandbox");
        crate::owner_only::create_dir(&dir)?;
        Ok(dir)
    }

    /// Whether the approver key outlives this run (secret store, sealed, or
    /// an earlier build's plain file): the sandbox enrolls only such a key,
    /// since its enrollment would otherwise die with the console.
    pub fn key_is_kept(&self) -> Result<bool, EngineError> {
        self.ctx().vault.is_kept()
    }

    /// Points the sandbox host an earlier start enrolled this console with
    /// at `url`, where it serves now (a new port each start); false when
    /// there is none yet, for [`Engine::connect_sandbox`] to enroll.
    pub fn rebind_sandbox(&self, url: &str) -> Result<bool, EngineError> {
        let store = self.ctx().store()?;
        match store.hosts()?.into_iter().find(|h| h.sandbox) {
            Some(h) => {
                store.set_host_url(&h.host_id, url)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Enrolls this console as `profile` with the sandbox host at `url`
    /// (loopback), with the one-time `code` its admin issued, and stores it
    /// as the sandbox: labelled so, and polled only while it runs.
    pub async fn connect_sandbox(
        &self,
        url: &str,
        code: &str,
        profile: &ApproverProfile,
    ) -> Result<HostInfo, EngineError> {
        let record = crate::connect::connect(self.ctx(), url, code, true, false, profile).await?;
        Ok(host_info(&record))
    }

    /// Files a protocol's demo receipt as the sandbox's: once (the same
    /// bytes are one receipt), and never again once the person removed it.
    pub fn file_sandbox_receipt(
        &self,
        protocol: &str,
        file_name: &str,
        bytes: &[u8],
    ) -> Result<(), EngineError> {
        let ctx = self.ctx();
        crate::receipts::file_sandbox_receipt(
            &*ctx.store()?,
            &ctx.config,
            protocol,
            file_name,
            bytes,
            &ctx.now_text(),
        )
    }

    /// Records whether the sandbox host runs beside this engine now: while
    /// it does, its sessions are polled and decidable; once it stopped,
    /// they stay readable in History only.
    pub fn set_sandbox_running(&self, running: bool) {
        self.ctx().set_sandbox_running(running);
    }
}

pub(crate) fn host_info(h: &HostRecord) -> HostInfo {
    HostInfo {
        host_id: h.host_id.clone(),
        url: h.url.clone(),
        label: h.label.clone(),
        sandbox: h.sandbox,
        reachable: h.reachable,
        last_error: h.last_error.clone(),
        last_poll_at: h.last_poll_at.clone(),
        platform_fingerprint: h.platform_fingerprint.clone(),
        approver_email: h.approver_email.clone(),
        polled: true,
        plain_http: crate::connect::is_plain_http(&h.url),
        plain_http_allowed_at: h.plain_http_allowed_at.clone(),
        updates: crate::views::HostUpdates {
            mode: crate::views::UpdateMode::Polling,
            detail: "Polled.".into(),
        },
    }
}
