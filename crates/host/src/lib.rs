//! `countersign-host`: the reference ANP/0.1 buyer host.
//!
//! It serves the four agent endpoints of SPEC §6, discovery (RFC-003) and
//! the approver API v1, stores everything in one SQLite file, runs each
//! org's rule-based buyer agent, and never accepts an offer without a signed
//! human decision.
//!
//! Embedding (what the console engine does for its sandbox):
//!
//! ```no_run
//! # async fn demo() -> Result<(), countersign_host::HostError> {
//! use countersign_host::{Host, HostConfig};
//! let host = Host::open("host.db".as_ref(), HostConfig::default())?;
//! let code = host.enroll_code(countersign_host::SANDBOX_HANDLE, "Ada", "ada@fabrikam.example")?;
//! let running = host.spawn("127.0.0.1:0").await?;
//! println!("listening on {}, enroll with {}", running.addr, code.code);
//! running.shutdown().await;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod admin;
mod auth;
mod body;
pub mod buyer_agent;
pub mod config;
pub mod db;
mod decisions;
mod domain;
pub mod error;
mod ids;
pub mod platform_key;
pub mod policy;
pub mod ratelimit;
mod routes;
pub mod screening;
mod store;
mod validate;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anp::keys::{self, SigningKey};
use rusqlite::Connection;
use tokio::net::TcpListener;

pub use admin::{
    AdminError, AgentInfo, ApproverInfo, EnrollmentCode, OrgInfo, DEFAULT_ENROLLMENT_TTL,
    SANDBOX_HANDLE,
};
pub use config::{Clock, Durability, HostConfig, Limit, Limits};
pub use error::{ApiError, HostError};
pub use policy::Policy;

/// A buyer host over one database: cheap to clone, shared by every request.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

struct Inner {
    db_path: PathBuf,
    conn: Mutex<Connection>,
    config: HostConfig,
    platform_key: SigningKey,
    platform_public: String,
    platform_fingerprint: String,
    limiter: ratelimit::RateLimiter,
}

impl Host {
    /// Opens (creating and migrating) the database and the platform key.
    /// Refuses a database written by a newer version.
    pub fn open(db_path: &Path, config: HostConfig) -> Result<Host, HostError> {
        let conn = db::open(db_path, config.durability)?;
        let key_path = config
            .platform_key_path
            .clone()
            .unwrap_or_else(|| platform_key::default_path(db_path));
        let platform_key = platform_key::load_or_create(&key_path)?;
        let vk = platform_key.verifying_key();
        let now = config.clock.now();
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('platform_key_since', ?1)",
            [db::now_text(now)],
        )?;
        // Every buyer event in this database is signed by one key: a
        // different key file would silently orphan them, so refuse it.
        let fingerprint = keys::fingerprint(&vk);
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('platform_fingerprint', ?1)",
            [&fingerprint],
        )?;
        let recorded: String = conn.query_row(
            "SELECT value FROM meta WHERE key = 'platform_fingerprint'",
            [],
            |r| r.get(0),
        )?;
        if recorded != fingerprint {
            return Err(HostError::Key(format!(
                "{} holds key {fingerprint}, but this database's events are signed by {recorded}; restore the original key file",
                key_path.display()
            )));
        }
        let limiter = ratelimit::RateLimiter::new(config.limits.clone());
        Ok(Host {
            inner: Arc::new(Inner {
                db_path: db_path.to_owned(),
                conn: Mutex::new(conn),
                platform_public: keys::public_key_b64(&vk),
                platform_fingerprint: keys::fingerprint(&vk),
                platform_key,
                config,
                limiter,
            }),
        })
    }

    /// The database file this host uses.
    pub fn db_path(&self) -> &Path {
        &self.inner.db_path
    }

    /// The platform key's fingerprint (signer of every buyer event).
    pub fn platform_fingerprint(&self) -> &str {
        &self.inner.platform_fingerprint
    }

    /// The platform public key, base64url.
    pub fn platform_public_key(&self) -> &str {
        &self.inner.platform_public
    }

    /// The host's clock (tests move it forward).
    pub fn clock(&self) -> &Clock {
        &self.inner.config.clock
    }

    /// Runs `f` on the database connection (blocking; call from
    /// `spawn_blocking` when inside the async runtime).
    pub(crate) fn with_conn<T>(&self, f: impl FnOnce(&mut Connection) -> T) -> Result<T, ApiError> {
        let mut guard = self
            .inner
            .conn
            .lock()
            .map_err(|_| ApiError::Internal("database lock poisoned".into()))?;
        Ok(f(&mut guard))
    }

    fn admin<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, AdminError>,
    ) -> Result<T, HostError> {
        let guard =
            self.inner.conn.lock().map_err(|_| {
                HostError::Admin(AdminError::Invalid("database lock poisoned".into()))
            })?;
        Ok(f(&guard)?)
    }

    /// Creates an org; the answer carries its new `org_handle`.
    pub fn create_org(&self, name: &str) -> Result<OrgInfo, HostError> {
        let now = self.clock().now();
        self.admin(|c| admin::create_org(c, name, now))
    }

    /// Issues a one-time approver enrollment code (valid 24 h) for an org
    /// (`SANDBOX_HANDLE` for the sandbox).
    pub fn enroll_code(
        &self,
        org_handle: &str,
        name: &str,
        email: &str,
    ) -> Result<EnrollmentCode, HostError> {
        let now = self.clock().now();
        self.admin(|c| admin::enroll_code(c, org_handle, name, email, DEFAULT_ENROLLMENT_TTL, now))
    }

    /// Loads an org's policy from JSON text (the policy file's content).
    pub fn load_policy(&self, org_handle: &str, policy_json: &str) -> Result<Policy, HostError> {
        self.admin(|c| admin::load_policy(c, org_handle, policy_json))
    }

    /// Marks an agent verified by a person.
    pub fn verify_agent(&self, agent_id: &str) -> Result<(), HostError> {
        self.admin(|c| admin::verify_agent(c, agent_id))
    }

    /// Revokes an agent.
    pub fn revoke_agent(&self, agent_id: &str) -> Result<(), HostError> {
        self.admin(|c| admin::revoke_agent(c, agent_id))
    }

    /// Every org, the sandbox first.
    pub fn list_orgs(&self) -> Result<Vec<OrgInfo>, HostError> {
        self.admin(admin::list_orgs)
    }

    /// Disables an org: sessions to it are refused from now on.
    pub fn disable_org(&self, org_handle: &str) -> Result<(), HostError> {
        self.admin(|c| admin::disable_org(c, org_handle))
    }

    /// Every enrolled approver.
    pub fn list_approvers(&self) -> Result<Vec<ApproverInfo>, HostError> {
        self.admin(admin::list_approvers)
    }

    /// Revokes an approver: refused from now on, key closed in discovery,
    /// its pending approvals no longer count.
    pub fn revoke_approver(&self, approver_id: &str) -> Result<(), HostError> {
        let now = self.clock().now();
        self.admin(|c| admin::revoke_approver(c, approver_id, now))
    }

    /// Every registered agent.
    pub fn list_agents(&self) -> Result<Vec<AgentInfo>, HostError> {
        self.admin(admin::list_agents)
    }

    /// Forgets nonces whose timestamps have left the 300-second window (the
    /// server does this every minute); returns how many were removed. A
    /// purged nonce cannot be replayed: its timestamp is outside the window.
    pub fn purge_expired_nonces(&self) -> Result<usize, HostError> {
        let now = self.clock().now();
        self.admin(|c| Ok(auth::purge_nonces(c, now)?))
    }

    /// Serves HTTP on `listener` until the future is dropped or fails.
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        self.serve_until(listener, std::future::pending()).await
    }

    /// Serves HTTP on `listener` until `shutdown` completes.
    pub async fn serve_until(
        self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let purger = tokio::spawn(auth::purge_nonces_forever(self.clone()));
        let app = routes::router(self);
        let result = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(shutdown)
        .await;
        purger.abort();
        result
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

/// Opens `db_path` with `config` and serves on `addr` in the background.
pub async fn spawn(
    db_path: &Path,
    config: HostConfig,
    addr: &str,
) -> Result<RunningHost, HostError> {
    Host::open(db_path, config)?.spawn(addr).await
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
