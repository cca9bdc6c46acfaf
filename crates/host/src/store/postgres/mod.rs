//! The PostgreSQL store: several host processes on one database. Every
//! promise is kept by the database, never by a process's memory: a commit
//! compares the session row's version under its row lock (so appends from
//! different processes serialize per session, not globally), nonces and
//! decision ids are primary keys, an enrollment code is spent by one
//! conditional update, and rate-limit windows are counted in an unlogged
//! table every process shares. Durability is the server's
//! `synchronous_commit` (on by default: a commit is on disk before the
//! request is acknowledged).

mod commit;
mod migrations;

use std::str::FromStr as _;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::{NoTls, Row};

use super::*;

pub(crate) use commit::{COMMIT_FUNCTION, COMMIT_FUNCTION_V2};
pub use migrations::LATEST_VERSION;

/// Runs `body`, an operation written once for both stores (see
/// [`super::sql`]), with `db` a [`super::sql::Pg`] on PostgreSQL: `read`
/// `write`, `nonces` and `consistent` (an operation PostgreSQL answers in
/// one statement, one snapshot by itself) on a pooled connection (each
/// statement its own transaction), `snapshot` in one read-only REPEATABLE READ transaction,
/// `tx` and `commit` in one transaction, committed when `body` answers
/// `Ok` (for `commit`, a key taken at commit is a conflict), else rolled
/// back (dropped).
macro_rules! pg_run {
    ($store:expr, read, |$db:ident| $body:expr) => {{
        let client = $store.client().await?;
        let $db = &$crate::store::sql::Pg(&client, &$store.traffic);
        async { $body }.await
    }};
    ($store:expr, write, |$db:ident| $body:expr) => {
        $crate::store::postgres::pg_run!($store, read, |$db| $body)
    };
    ($store:expr, snapshot, |$db:ident| $body:expr) => {{
        let mut client = $store.client().await?;
        $store.traffic.sent(1);
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let $db = &$crate::store::sql::Pg(&tx, &$store.traffic);
        let out: Result<_, StoreError> = async { $body }.await;
        let out = out?;
        $store.traffic.sent(1);
        tx.commit().await?;
        Ok(out)
    }};
    ($store:expr, tx, |$db:ident| $body:expr) => {{
        let mut client = $store.client().await?;
        $store.traffic.sent(1);
        let tx = client.transaction().await?;
        let $db = &$crate::store::sql::Pg(&tx, &$store.traffic);
        let out: Result<_, StoreError> = async { $body }.await;
        let out = out?;
        $store.traffic.sent(1);
        tx.commit().await?;
        Ok(out)
    }};
    ($store:expr, consistent, |$db:ident| $body:expr) => {
        $crate::store::postgres::pg_run!($store, read, |$db| $body)
    };
    ($store:expr, nonces, |$db:ident| $body:expr) => {
        $crate::store::postgres::pg_run!($store, read, |$db| $body)
    };
    ($store:expr, commit, |$db:ident| $body:expr) => {{
        let mut client = $store.client().await?;
        $store.traffic.sent(1);
        let tx = client
            .transaction()
            .await
            .map_err($crate::store::postgres::store)?;
        let $db = &$crate::store::sql::Pg(&tx, &$store.traffic);
        let out: Result<_, CommitError> = async { $body }.await;
        $store.traffic.sent(1);
        match out {
            Ok(v) => {
                tx.commit()
                    .await
                    .map_err($crate::store::postgres::conflict)?;
                Ok(v)
            }
            Err(e) => {
                let _ = tx.rollback().await;
                Err(e)
            }
        }
    }};
}
pub(crate) use pg_run;

/// Connections a host process keeps by default (`serve --db-connections`):
/// 16. A commit holds its connection until PostgreSQL has flushed it to
/// disk, and commits that wait together share one flush; the pool bounds
/// how many can wait at once. Measured with `anp-loadgen` on a 2-core
/// machine (2026-12-08, 32 agents): one process appended 1,860 a second
/// with 4 (the cores a third idle), 2,360 with 8, 2,690 with 16 and 2,770
/// with 24 (p99 higher); three processes on one database did best with 8
/// each, about 5% faster than 16 each and p99 7 ms lower. Processes on one
/// database want about 24 connections in all.
pub const DEFAULT_CONNECTIONS: usize = 16;

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// The PostgreSQL implementation of every repository.
pub struct PgStore {
    pool: Pool,
    describe: String,
    /// Every statement sent, for the load generator's figures.
    pub(crate) traffic: super::sql::Traffic,
    // Where the change feed's dedicated listening connection connects.
    config: tokio_postgres::Config,
    /// The agents this process authenticated (`store/copies.rs`).
    pub(crate) agents: super::copies::AgentCopies,
    /// The ANP logs this process answered (`store/copies.rs`).
    pub(crate) logs: super::copies::LogCopies,
}

fn pool_error(e: impl std::fmt::Display) -> StoreError {
    StoreError::Pool(e.to_string())
}

impl PgStore {
    /// Connects, and creates or migrates the schema.
    pub async fn open(url: &str, connections: usize) -> Result<PgStore, HostError> {
        let config = tokio_postgres::Config::from_str(url).map_err(|e| {
            HostError::Config(format!("{} is not a PostgreSQL URL: {e}", redact(url)))
        })?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(connections.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(std::time::Duration::from_secs(10)))
            .wait_timeout(Some(std::time::Duration::from_secs(30)))
            .build()
            .map_err(|e| HostError::Config(e.to_string()))?;
        let mut client = pool.get().await.map_err(|e| {
            HostError::Store(StoreError::Pool(format!(
                "cannot connect to {}: {e}",
                redact(url)
            )))
        })?;
        migrations::migrate(&mut client).await?;
        Ok(PgStore {
            pool,
            describe: format!("postgresql {}", redact(url)),
            traffic: super::sql::Traffic::default(),
            config,
            agents: super::copies::AgentCopies::default(),
            logs: super::copies::LogCopies::default(),
        })
    }

    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }

    async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Option<Row>, StoreError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await?;
        self.traffic.sent(1);
        Ok(client.query_opt(&stmt, params).await?)
    }
}

use super::sql::is_unique_violation;

pub(crate) fn conflict(e: tokio_postgres::Error) -> CommitError {
    if is_unique_violation(&e) {
        CommitError::Conflict
    } else {
        CommitError::Store(e.into())
    }
}

pub(crate) fn store(e: tokio_postgres::Error) -> CommitError {
    CommitError::Store(e.into())
}

impl Storage for PgStore {
    fn negotiations(&self) -> &dyn NegotiationRepo {
        self
    }
    fn principals(&self) -> &dyn PrincipalRepo {
        self
    }
    fn admin(&self) -> &dyn AdminRepo {
        self
    }
    fn gate(&self) -> &dyn GateRepo {
        self
    }
    fn anex(&self) -> &dyn AnexRepo {
        self
    }
    fn authority(&self) -> &dyn AuthorityRepo {
        self
    }
    fn shared_limits(&self) -> Option<&dyn LimitRepo> {
        Some(self)
    }
    fn describe(&self) -> String {
        self.describe.clone()
    }
    fn traffic(&self) -> Option<TrafficCount> {
        Some(self.traffic.count())
    }
    fn change_feed(&self) -> Option<&dyn ChangeFeed> {
        Some(self)
    }
}

#[async_trait]
impl ChangeFeed for PgStore {
    async fn publish(&self, origin: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        // Counted with the rest: every write pays this one round trip.
        self.traffic.sent(1);
        super::sql::pg_notify(&client, origin).await
    }

    async fn listen(&self) -> Result<ChangeListener, StoreError> {
        Ok(ChangeListener(super::sql::pg_listen(&self.config).await?))
    }
}

#[async_trait]
impl LimitRepo for PgStore {
    async fn count(
        &self,
        scope: &str,
        key: &str,
        window_start: i64,
        by: u64,
    ) -> Result<u64, StoreError> {
        let by = super::sql::i(by);
        let row = self
            .query_opt(
                "INSERT INTO rate_windows (scope, key, window_start, count) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (scope, key, window_start) DO UPDATE SET count = rate_windows.count + $4
                 RETURNING count",
                &[&scope, &key, &window_start, &by],
            )
            .await?
            .ok_or_else(|| StoreError::Corrupt("a rate window vanished".into()))?;
        Ok(super::sql::u(row.try_get(0)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_server_error_reads_in_the_servers_words() {
        let cluster = countersign_testkit::postgres::Cluster::shared().expect("test cluster");
        let url = cluster.fresh_database().await.expect("database");
        let store = PgStore::open(&url, DEFAULT_CONNECTIONS)
            .await
            .expect("open");
        let failed = store
            .query_opt("SELECT 1 / 0", &[])
            .await
            .expect_err("division by zero");
        // The driver alone would say "postgresql: db error".
        assert_eq!(
            failed.to_string(),
            "postgresql: division by zero (SQLSTATE 22012)"
        );
    }
}
