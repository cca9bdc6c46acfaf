//! The one dialect layer under every query the store writes once: a
//! statement is SQL text with SQLite's `?N` placeholders, bound with values
//! both drivers take ([`Param`]), its rows read through one [`Row`] whatever
//! the driver, and run through [`Conn`], which each dialect implements
//! ([`Lite`] on a rusqlite connection, [`Pg`] on a pooled PostgreSQL
//! connection or transaction). What else differs between the two (the
//! group-commit writer, the pool, transactions, which error is a taken key)
//! stays in the dialect's own module, in its `run!` macro.
//!
//! The types a statement binds and reads are PostgreSQL's, which checks
//! them (`INTEGER` is `i32`, `BIGINT` `i64`, `BOOLEAN` `bool`); SQLite
//! takes the same values into its integers, so one Rust type serves both.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use super::{CommitError, StoreError};

/// A value bound to a statement, for either driver.
pub(crate) trait Param: Sync {
    /// As rusqlite binds it.
    fn lite(&self) -> &dyn rusqlite::ToSql;
    /// As tokio-postgres binds it.
    fn pg(&self) -> &(dyn tokio_postgres::types::ToSql + Sync);
}

impl<T: rusqlite::ToSql + tokio_postgres::types::ToSql + Sync> Param for T {
    fn lite(&self) -> &dyn rusqlite::ToSql {
        self
    }
    fn pg(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
        self
    }
}

/// A value read from a column, for either driver.
pub(crate) trait Value:
    rusqlite::types::FromSql + for<'a> tokio_postgres::types::FromSql<'a>
{
}

impl<T: rusqlite::types::FromSql + for<'a> tokio_postgres::types::FromSql<'a>> Value for T {}

/// A count or seq as stored (a signed integer in both databases) read
/// back; a negative one (only by hand) reads as 0.
pub(crate) fn u(v: i64) -> u64 {
    v.max(0) as u64
}

/// A count or seq as stored (`BIGINT`); one beyond `i64` is stored as
/// `i64::MAX`, never wrapped.
pub(crate) fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A small count as stored (`INTEGER`), saturating.
pub(crate) fn i32_of(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// One result row, from either driver.
pub(crate) enum Row<'a, 'b> {
    /// A SQLite row.
    Lite(&'a rusqlite::Row<'b>),
    /// A PostgreSQL row.
    Pg(&'a tokio_postgres::Row),
}

impl Row<'_, '_> {
    /// Column `index` (from 0) as a `T`.
    pub(crate) fn get<T: Value>(&self, index: usize) -> Result<T, StoreError> {
        match self {
            Row::Lite(r) => Ok(r.get(index)?),
            Row::Pg(r) => Ok(r.try_get(index)?),
        }
    }
}

/// How a query's rows become records (one function per record, shared by
/// both dialects).
pub(crate) type Reader<T> = fn(&Row<'_, '_>) -> Result<T, StoreError>;

/// Which database a [`Conn`] speaks to, for the few statements written
/// twice (where one dialect cannot say what the other does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// Runs statements on one connection (or transaction) of either dialect.
pub(crate) trait Conn {
    /// The database's dialect.
    fn dialect(&self) -> Dialect;

    /// Every row of `sql`, each read by `read`.
    async fn rows<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        read: Reader<T>,
    ) -> Result<Vec<T>, StoreError>;

    /// The first row of `sql`, if any.
    async fn row<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        read: Reader<T>,
    ) -> Result<Option<T>, StoreError>;

    /// Runs `sql`; answers how many rows it changed.
    async fn exec(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, StoreError>;

    /// Runs `sql` inside a commit: a key already taken (the dialect's
    /// constraint error) is [`CommitError::Conflict`].
    async fn exec_in_commit(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, CommitError>;
}

/// A SQLite connection (on the writer thread or from the read pool).
pub(crate) struct Lite<'a>(pub &'a rusqlite::Connection);

/// Whether SQLite refused a statement for a constraint (a key taken).
pub(crate) fn is_constraint(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation)
}

impl Conn for Lite<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    async fn rows<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        read: Reader<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut stmt = self.0.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(params.iter().map(|p| p.lite())))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(read(&Row::Lite(r))?);
        }
        Ok(out)
    }

    async fn row<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        read: Reader<T>,
    ) -> Result<Option<T>, StoreError> {
        let mut stmt = self.0.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(params.iter().map(|p| p.lite())))?;
        match rows.next()? {
            Some(r) => Ok(Some(read(&Row::Lite(r))?)),
            None => Ok(None),
        }
    }

    async fn exec(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, StoreError> {
        let mut stmt = self.0.prepare_cached(sql)?;
        Ok(stmt.execute(rusqlite::params_from_iter(params.iter().map(|p| p.lite())))? as u64)
    }

    async fn exec_in_commit(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, CommitError> {
        let mut stmt = self.0.prepare_cached(sql).map_err(StoreError::from)?;
        match stmt.execute(rusqlite::params_from_iter(params.iter().map(|p| p.lite()))) {
            Ok(n) => Ok(n as u64),
            Err(e) if is_constraint(&e) => Err(CommitError::Conflict),
            Err(e) => Err(StoreError::from(e).into()),
        }
    }
}

/// Runs a [`Lite`] operation to its end on this thread: SQLite's calls
/// block and never wait on anything else, so the future is ready at once.
pub(crate) fn now<T, E: From<StoreError>>(f: impl Future<Output = Result<T, E>>) -> Result<T, E> {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => {
            Err(StoreError::Task("a SQLite statement did not finish at once".into()).into())
        }
    }
}

/// A PostgreSQL connection from the pool, or a transaction on one, with
/// the store's [`Traffic`] that every statement it runs is counted in.
pub(crate) struct Pg<'a, C>(pub &'a C, pub &'a Traffic);

/// What a store has sent its database: statements, and the round trips
/// they took (a round trip is one wait for the server's answer; several
/// statements pipelined together would share one). Counted, never
/// enforced: the load generator prints them per append. Only PostgreSQL
/// counts; SQLite runs in the host's own process.
#[derive(Debug, Default)]
pub struct Traffic {
    statements: std::sync::atomic::AtomicU64,
    round_trips: std::sync::atomic::AtomicU64,
}

/// [`Traffic`] at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrafficCount {
    /// Statements sent (`BEGIN` and `COMMIT` each count; a call of a
    /// server-side function counts once, however many it runs inside).
    pub statements: u64,
    /// Waits for the server's answer.
    pub round_trips: u64,
}

impl Traffic {
    /// Counts `statements` sent in one round trip.
    pub(crate) fn sent(&self, statements: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.statements.fetch_add(statements, Relaxed);
        self.round_trips.fetch_add(1, Relaxed);
    }

    /// The counts so far.
    pub fn count(&self) -> TrafficCount {
        use std::sync::atomic::Ordering::Relaxed;
        TrafficCount {
            statements: self.statements.load(Relaxed),
            round_trips: self.round_trips.load(Relaxed),
        }
    }
}

/// Whether PostgreSQL refused a statement because its key is taken.
pub(crate) fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
}

/// `sql` with PostgreSQL's placeholders: each `?N` becomes `$N`.
pub(crate) fn pg_text(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

fn pg_params<'p>(params: &'p [&dyn Param]) -> Vec<&'p (dyn tokio_postgres::types::ToSql + Sync)> {
    params.iter().map(|p| p.pg()).collect()
}

impl<C: deadpool_postgres::GenericClient> Conn for Pg<'_, C> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    async fn rows<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        read: Reader<T>,
    ) -> Result<Vec<T>, StoreError> {
        let stmt = self.0.prepare_cached(&pg_text(sql)).await?;
        self.1.sent(1);
        let rows = self.0.query(&stmt, &pg_params(params)).await?;
        rows.iter().map(|r| read(&Row::Pg(r))).collect()
    }

    async fn row<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        read: Reader<T>,
    ) -> Result<Option<T>, StoreError> {
        let stmt = self.0.prepare_cached(&pg_text(sql)).await?;
        self.1.sent(1);
        let rows = self.0.query(&stmt, &pg_params(params)).await?;
        rows.first().map(|r| read(&Row::Pg(r))).transpose()
    }

    async fn exec(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, StoreError> {
        let stmt = self.0.prepare_cached(&pg_text(sql)).await?;
        self.1.sent(1);
        Ok(self.0.execute(&stmt, &pg_params(params)).await?)
    }

    async fn exec_in_commit(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, CommitError> {
        let stmt = self
            .0
            .prepare_cached(&pg_text(sql))
            .await
            .map_err(StoreError::from)?;
        self.1.sent(1);
        match self.0.execute(&stmt, &pg_params(params)).await {
            Ok(n) => Ok(n),
            Err(e) if is_unique_violation(&e) => Err(CommitError::Conflict),
            Err(e) => Err(StoreError::from(e).into()),
        }
    }
}

/// The PostgreSQL channel every host process of a deployment announces its
/// writes on, and listens to (see [`crate::changes`]).
pub(crate) const CHANGES_CHANNEL: &str = "countersign_changes";

/// Tells every connection listening on [`CHANGES_CHANNEL`] that something
/// changed; `origin` names the announcing process, so it can skip its own.
/// (PostgreSQL only: SQLite is one process's store.)
pub(crate) async fn pg_notify<C: deadpool_postgres::GenericClient>(
    client: &C,
    origin: &str,
) -> Result<(), StoreError> {
    let stmt = client.prepare_cached("SELECT pg_notify($1, $2)").await?;
    client.execute(&stmt, &[&CHANGES_CHANNEL, &origin]).await?;
    Ok(())
}

/// A dedicated PostgreSQL connection listening on [`CHANGES_CHANNEL`]: the
/// announcements arrive in [`Listening::next`], which answers `None` once
/// the connection is gone (the server restarted, the backend was ended, the
/// network failed), after which nothing more arrives and the caller
/// connects again.
pub(crate) struct Listening {
    payloads: tokio::sync::mpsc::UnboundedReceiver<String>,
    // Held so the session (and its LISTEN) lasts as long as this value.
    _client: tokio_postgres::Client,
    driver: tokio::task::JoinHandle<()>,
}

impl Listening {
    /// The next announcement's payload (the announcing process's origin),
    /// or `None` when the connection has dropped.
    pub(crate) async fn next(&mut self) -> Option<String> {
        self.payloads.recv().await
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Connects on its own (outside the pool, whose connections are recycled)
/// and listens on [`CHANGES_CHANNEL`].
pub(crate) async fn pg_listen(config: &tokio_postgres::Config) -> Result<Listening, StoreError> {
    let (client, mut connection) = config.connect(tokio_postgres::NoTls).await?;
    let (tx, payloads) = tokio::sync::mpsc::unbounded_channel();
    // The connection delivers notifications only while it is polled for
    // its messages; it ends (and drops `tx`) when the server closes it.
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => {
                    if tx.send(n.payload().to_owned()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "the connection listening for other host processes' changes failed");
                    return;
                }
                None => return,
            }
        }
    });
    let listening = Listening {
        payloads,
        _client: client,
        driver,
    };
    listening
        ._client
        .batch_execute(&format!("LISTEN {CHANGES_CHANNEL}"))
        .await?;
    Ok(listening)
}

#[cfg(test)]
mod tests {
    use super::pg_text;

    #[test]
    fn placeholders_become_dollars_and_nothing_else_changes() {
        assert_eq!(
            pg_text("SELECT a FROM t WHERE b = ?1 AND (?2 IS NULL OR c = ?12) AND d = '?'"),
            "SELECT a FROM t WHERE b = $1 AND ($2 IS NULL OR c = $12) AND d = '?'"
        );
    }
}
