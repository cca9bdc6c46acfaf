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

/// A PostgreSQL connection from the pool, or a transaction on one.
pub(crate) struct Pg<'a, C>(pub &'a C);

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
        let rows = self.0.query(&stmt, &pg_params(params)).await?;
        rows.first().map(|r| read(&Row::Pg(r))).transpose()
    }

    async fn exec(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, StoreError> {
        let stmt = self.0.prepare_cached(&pg_text(sql)).await?;
        Ok(self.0.execute(&stmt, &pg_params(params)).await?)
    }

    async fn exec_in_commit(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, CommitError> {
        let stmt = self
            .0
            .prepare_cached(&pg_text(sql))
            .await
            .map_err(StoreError::from)?;
        match self.0.execute(&stmt, &pg_params(params)).await {
            Ok(n) => Ok(n),
            Err(e) if is_unique_violation(&e) => Err(CommitError::Conflict),
            Err(e) => Err(StoreError::from(e).into()),
        }
    }
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
