//! `countersign-host`: the organization's negotiation host.
//!
//! It serves the four ANP/0.1 agent endpoints of SPEC §6 and discovery
//! (RFC-003), the gate where the org's own agents mirror Concordia
//! transcripts and ask for a person (docs/gate-api.md), and the approver
//! API v1 for every protocol (docs/approver-api.md); stores everything in
//! one SQLite file or in a PostgreSQL database that several host processes
//! share; runs each org's rule-based ANP buyer agent; and never lets an
//! offer be accepted without a signed human decision.
//!
//! Embedding (what the console engine does for its sandbox):
//!
//! ```no_run
//! # async fn demo() -> Result<(), countersign_host::HostError> {
//! use countersign_host::{Host, HostConfig};
//! let host = Host::open(std::path::Path::new("host.db"), HostConfig::default()).await?;
//! let code = host.enroll_code(countersign_host::SANDBOX_HANDLE, "Ada", "ada@fabrikam.example").await?;
//! let running = host.spawn("127.0.0.1:0").await?;
//! println!("listening on {}, enroll with {}", running.addr, code.code);
//! running.shutdown().await;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod admin;
pub mod anex_admin;
mod auth;
pub mod authority_admin;
mod body;
pub mod buyer_agent;
pub mod callback;
pub mod changes;
pub mod config;
pub mod domain;
pub mod error;
mod ids;
pub mod mcp_admin;
pub mod platform_key;
pub mod policy;
pub mod ratelimit;
mod routes;
pub mod screening;
pub(crate) mod server;
mod service;
pub mod store;
mod surface;
mod url_authority;
mod validate;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anp::keys::{self, SigningKey};
use tokio::net::TcpListener;

/// How long a stopping server waits for its last NOTIFY (the writes of its
/// last requests) before it goes without it.
const LAST_ANNOUNCEMENT: std::time::Duration = std::time::Duration::from_secs(2);

pub use admin::{
    AdminError, AgentInfo, ApproverInfo, EnrollmentCode, GateAgentInfo, GateEnrollmentCode,
    OrgInfo, DEFAULT_ENROLLMENT_TTL, SANDBOX_HANDLE,
};
pub use config::{Clock, Connections, Durability, HostConfig, Limit, Limits};
pub use error::{ApiError, HostError};
pub use policy::Policy;
pub use store::{Store, Target};

/// A buyer host over one store: cheap to clone, shared by every request.
/// Several `Host`s (in one process or many) may serve one PostgreSQL
/// database at once; they share nothing but the database and the key file.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

struct Inner {
    target: Target,
    store: Store,
    config: HostConfig,
    platform_key: SigningKey,
    platform_public: String,
    platform_fingerprint: String,
    limiter: ratelimit::RateLimiter,
    changes: changes::Changes,
}

/// Where the platform key is: the configured file, or for SQLite the file
/// beside the database. PostgreSQL has no "beside": every process of a
/// deployment must be given the same file.
fn key_path(target: &Target, config: &HostConfig) -> Result<std::path::PathBuf, HostError> {
    match (&config.platform_key_path, target) {
        (Some(path), _) => Ok(path.clone()),
        (None, Target::Sqlite(db)) => Ok(platform_key::default_path(db)),
        (None, Target::Postgres(_)) => Err(HostError::Config(
            "with PostgreSQL the platform key file must be named (--platform-key FILE or COUNTERSIGN_HOST_PLATFORM_KEY): every host process on one database signs with the same key; the first start creates it (mode 0600), copy it to the others".into(),
        )),
    }
}

impl Host {
    /// Opens (creating and migrating) the store and the platform key.
    /// Refuses a database written by a newer version, and a key other than
    /// the one this database's events are signed with.
    pub async fn open(target: impl Into<Target>, config: HostConfig) -> Result<Host, HostError> {
        let target = target.into();
        let key_path = key_path(&target, &config)?;
        let store = store::open_with(&target, config.durability, config.db_connections).await?;
        let platform_key = platform_key::load_or_create(&key_path)?;
        let vk = platform_key.verifying_key();
        let now = config.clock.now();
        store
            .admin()
            .meta_init("platform_key_since", &anp::api::format_timestamp(now))
            .await?;
        // Every buyer event in this database is signed by one key: a
        // different key file would silently orphan them, so refuse it.
        let fingerprint = keys::fingerprint(&vk);
        let recorded = store
            .admin()
            .meta_init("platform_fingerprint", &fingerprint)
            .await?;
        if recorded != fingerprint {
            return Err(HostError::Key(format!(
                "{} holds key {fingerprint}, but this database's events are signed by {recorded}; restore the original key file",
                key_path.display()
            )));
        }
        let limiter = ratelimit::RateLimiter::for_store(config.limits.clone(), &store);
        Ok(Host {
            inner: Arc::new(Inner {
                target,
                store,
                platform_public: keys::public_key_b64(&vk),
                platform_fingerprint: fingerprint,
                platform_key,
                config,
                limiter,
                changes: changes::Changes::new(),
            }),
        })
    }

    /// Where this host's data lives.
    pub fn target(&self) -> &Target {
        &self.inner.target
    }

    /// The SQLite file this host uses (`None` on PostgreSQL).
    pub fn db_path(&self) -> Option<&Path> {
        match &self.inner.target {
            Target::Sqlite(path) => Some(path),
            Target::Postgres(_) => None,
        }
    }

    /// The store (what the admin functions take).
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The platform key's fingerprint (signer of every buyer event).
    pub fn platform_fingerprint(&self) -> &str {
        &self.inner.platform_fingerprint
    }

    /// The platform public key, base64url.
    pub fn platform_public_key(&self) -> &str {
        &self.inner.platform_public
    }

    pub(crate) fn platform_key(&self) -> &SigningKey {
        &self.inner.platform_key
    }

    pub(crate) fn limiter(&self) -> &ratelimit::RateLimiter {
        &self.inner.limiter
    }

    /// What wakes the consoles that wait for a change.
    pub fn changes(&self) -> &changes::Changes {
        &self.inner.changes
    }

    pub(crate) fn config(&self) -> &HostConfig {
        &self.inner.config
    }

    /// The host's clock (tests move it forward).
    pub fn clock(&self) -> &Clock {
        &self.inner.config.clock
    }

    fn store_ref(&self) -> &dyn store::Storage {
        self.inner.store.as_ref()
    }

    /// Creates an org; the answer carries its new `org_handle`.
    pub async fn create_org(&self, name: &str) -> Result<OrgInfo, HostError> {
        Ok(admin::create_org(self.store_ref(), name, self.clock().now()).await?)
    }

    /// Issues a one-time approver enrollment code (valid 24 h) for an org
    /// (`SANDBOX_HANDLE` for the sandbox).
    pub async fn enroll_code(
        &self,
        org_handle: &str,
        name: &str,
        email: &str,
    ) -> Result<EnrollmentCode, HostError> {
        let now = self.clock().now();
        Ok(admin::enroll_code(
            self.store_ref(),
            org_handle,
            name,
            email,
            DEFAULT_ENROLLMENT_TTL,
            now,
        )
        .await?)
    }

    /// Enrolls an agent of `org_handle` asking about plain terms over MCP
    /// alone, and issues its token (shown once).
    pub async fn mcp_agent(
        &self,
        org_handle: &str,
        name: &str,
    ) -> Result<mcp_admin::McpAgent, HostError> {
        let now = self.clock().now();
        Ok(mcp_admin::enroll_mcp_agent(self.store_ref(), org_handle, name, None, now).await?)
    }

    /// Issues a gate agent a bearer token for the MCP endpoint (shown once).
    pub async fn mcp_token(&self, agent_id: &str) -> Result<mcp_admin::McpCredential, HostError> {
        let now = self.clock().now();
        Ok(mcp_admin::issue_token(self.store_ref(), agent_id, now).await?)
    }

    /// Issues a one-time code (valid 24 h) that enrolls one gate agent of
    /// an org for `protocol` (`concordia`).
    pub async fn gate_enroll_code(
        &self,
        org_handle: &str,
        name: &str,
        protocol: &str,
    ) -> Result<GateEnrollmentCode, HostError> {
        let now = self.clock().now();
        Ok(admin::gate_enroll_code(
            self.store_ref(),
            org_handle,
            name,
            protocol,
            None,
            DEFAULT_ENROLLMENT_TTL,
            now,
        )
        .await?)
    }

    /// Every gate agent.
    pub async fn list_gate_agents(&self) -> Result<Vec<GateAgentInfo>, HostError> {
        Ok(admin::list_gate_agents(self.store_ref()).await?)
    }

    /// Marks every gate request whose time is up (at this host's clock)
    /// expired and hints each agent that asked for hints; answers how many.
    /// The server does this every `gate_sweep` interval.
    pub async fn expire_gate_requests(&self) -> Result<usize, HostError> {
        service::gate::expire_requests(self)
            .await
            .map_err(|e| HostError::Config(format!("expiring gate requests: {e}")))
    }

    /// Refuses, for the owner, every ANEX ask past its decision deadline
    /// (the requester is told no one decided in time); answers how many.
    /// The server runs it with the gate's sweep.
    pub async fn expire_anex_asks(&self) -> Result<usize, HostError> {
        service::anex::expire_asks(self)
            .await
            .map_err(|e| HostError::Config(format!("expiring ANEX asks: {e}")))
    }

    /// Loads an org's policy from JSON text (the policy file's content).
    pub async fn load_policy(
        &self,
        org_handle: &str,
        policy_json: &str,
    ) -> Result<Policy, HostError> {
        Ok(admin::load_policy(self.store_ref(), org_handle, policy_json).await?)
    }

    /// Loads the next version of an org's policy of authority (TOML text,
    /// docs/authority.md), as `authority load` does; requests already
    /// asked keep the version they were routed under.
    pub async fn load_authority(
        &self,
        org_handle: &str,
        text: &str,
        loaded_by: &str,
    ) -> Result<authority_admin::AuthorityInfo, HostError> {
        let now = self.clock().now();
        Ok(authority_admin::load(self.store_ref(), org_handle, text, loaded_by, now).await?)
    }

    /// Loads an org's ANEX policy (docs/anex-binding.md, "The owner's policy").
    pub async fn load_anex_policy(
        &self,
        org_handle: &str,
        text: &str,
    ) -> Result<anex::Policy, HostError> {
        Ok(anex_admin::load_policy(self.store_ref(), org_handle, text).await?)
    }

    /// Loads an org's ANEX data set; answers the item names it holds.
    pub async fn load_anex_data(
        &self,
        org_handle: &str,
        text: &str,
    ) -> Result<Vec<String>, HostError> {
        Ok(anex_admin::load_data(self.store_ref(), org_handle, text).await?)
    }

    /// Registers an ANEX counterparty agent for an org; the answer carries
    /// its bearer token, shown this once.
    pub async fn add_anex_counterparty(
        &self,
        org_handle: &str,
        identity: &str,
        name: &str,
        relation: Option<&str>,
    ) -> Result<anex_admin::AnexCredential, HostError> {
        let now = self.clock().now();
        Ok(anex_admin::add_counterparty(
            self.store_ref(),
            org_handle,
            identity,
            name,
            relation,
            now,
        )
        .await?)
    }

    /// Revokes an ANEX counterparty's token.
    pub async fn revoke_anex_counterparty(&self, id: &str) -> Result<(), HostError> {
        let now = self.clock().now();
        Ok(anex_admin::revoke_counterparty(self.store_ref(), id, now).await?)
    }

    /// Marks an agent verified by a person.
    pub async fn verify_agent(&self, agent_id: &str) -> Result<(), HostError> {
        Ok(admin::verify_agent(self.store_ref(), agent_id).await?)
    }

    /// A vendor agent's registrations with the names each declared, oldest
    /// first.
    pub async fn agent_registrations(
        &self,
        agent_id: &str,
    ) -> Result<Vec<admin::RegistrationInfo>, HostError> {
        Ok(admin::agent_registrations(self.store_ref(), agent_id).await?)
    }

    /// Revokes an agent.
    pub async fn revoke_agent(&self, agent_id: &str) -> Result<(), HostError> {
        Ok(admin::revoke_agent(self.store_ref(), agent_id).await?)
    }

    /// Every org, the sandbox first.
    pub async fn list_orgs(&self) -> Result<Vec<OrgInfo>, HostError> {
        Ok(admin::list_orgs(self.store_ref()).await?)
    }

    /// Disables an org: sessions to it are refused from now on.
    pub async fn disable_org(&self, org_handle: &str) -> Result<(), HostError> {
        Ok(admin::disable_org(self.store_ref(), org_handle).await?)
    }

    /// Every enrolled approver.
    pub async fn list_approvers(&self) -> Result<Vec<ApproverInfo>, HostError> {
        Ok(admin::list_approvers(self.store_ref()).await?)
    }

    /// Revokes an approver: refused from now on, key closed in discovery,
    /// its pending approvals no longer count.
    pub async fn revoke_approver(&self, approver_id: &str) -> Result<(), HostError> {
        Ok(admin::revoke_approver(self.store_ref(), approver_id, self.clock().now()).await?)
    }

    /// Every registered agent.
    pub async fn list_agents(&self) -> Result<Vec<AgentInfo>, HostError> {
        Ok(admin::list_agents(self.store_ref()).await?)
    }

    /// Forgets nonces whose requests can no longer be accepted: each is kept
    /// until its timestamp is past the window (300.999 s either way) plus a
    /// margin (the server purges every minute); returns how many were
    /// removed. A purged nonce cannot be replayed: its timestamp is outside
    /// the window.
    pub async fn purge_expired_nonces(&self) -> Result<u64, HostError> {
        let now = self.clock().now().unix_timestamp();
        Ok(self.store_ref().principals().purge_nonces(now).await?)
    }

    /// Serves HTTP on `listener` until the future is dropped or fails.
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        self.serve_until(listener, std::future::pending()).await
    }

    /// Serves HTTP on `listener` until `shutdown` completes, within the
    /// configured connection bounds ([`Connections`]).
    pub async fn serve_until(
        self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        // Which address requests arrive on: part of the authorities a
        // version 2 signature may name (crate::url_authority).
        let listening = listener.local_addr()?;
        let purger = tokio::spawn(auth::purge_nonces_forever(self.clone()));
        let sweeper = tokio::spawn(sweep_gate_forever(self.clone()));
        let relay = tokio::spawn(changes::relay_forever(self.clone()));
        let (stop_publishing, publishing_stops) = tokio::sync::oneshot::channel();
        let mut publisher = tokio::spawn(changes::publish_until(self.clone(), publishing_stops));
        let bounds = self.config().connections;
        // Waiting summaries answer the moment shutdown begins, so the
        // connections they hold finish with them.
        let (stop_waiting, stopping) = tokio::sync::watch::channel(false);
        let shutdown = async move {
            shutdown.await;
            let _ = stop_waiting.send(true);
        };
        let app = routes::router(self)
            .layer(axum::Extension(url_authority::Listening(listening)))
            .layer(axum::Extension(changes::Stopping(stopping)));
        server::run(listener, app, bounds, shutdown).await;
        purger.abort();
        sweeper.abort();
        relay.abort();
        // The last requests' writes are announced before the process goes.
        let _ = stop_publishing.send(());
        if tokio::time::timeout(LAST_ANNOUNCEMENT, &mut publisher)
            .await
            .is_err()
        {
            publisher.abort();
        }
        Ok(())
    }

    /// Binds `addr` (for example `127.0.0.1:0`) and serves in a background task.
    pub async fn spawn(self, addr: &str) -> Result<RunningHost, HostError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| HostError::Io {
                what: format!("binding {addr}"),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| HostError::Io {
            what: "reading the bound address".into(),
            source,
        })?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(self.clone().serve_until(listener, async {
            let _ = rx.await;
        }));
        Ok(RunningHost {
            addr,
            host: self,
            stop: tx,
            task,
        })
    }
}

/// Expires due gate requests every `gate_sweep`, and refuses ANEX asks past
/// their decision deadline (hours away, so at most once a minute), for as
/// long as the server runs.
async fn sweep_gate_forever(host: Host) {
    let every = host.config().gate_sweep;
    let anex_every = every.max(std::time::Duration::from_secs(60));
    let mut tick = tokio::time::interval(every);
    let mut anex_swept: Option<std::time::Instant> = None;
    loop {
        tick.tick().await;
        if let Err(e) = host.expire_gate_requests().await {
            tracing::warn!(error = %e, "expiring gate requests failed");
        }
        if anex_swept.is_none_or(|at| at.elapsed() >= anex_every) {
            anex_swept = Some(std::time::Instant::now());
            if let Err(e) = host.expire_anex_asks().await {
                tracing::warn!(error = %e, "expiring ANEX asks failed");
            }
        }
    }
}

/// Opens `target` with `config` and serves on `addr` in the background.
pub async fn spawn(
    target: impl Into<Target>,
    config: HostConfig,
    addr: &str,
) -> Result<RunningHost, HostError> {
    Host::open(target, config).await?.spawn(addr).await
}

/// A host serving in the background; dropping it does not stop it, call
/// [`RunningHost::shutdown`].
pub struct RunningHost {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The host, for admin operations while it runs.
    pub host: Host,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningHost {
    /// `http://ADDR`, the base URL clients use.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting requests and waits for the server to finish.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}
