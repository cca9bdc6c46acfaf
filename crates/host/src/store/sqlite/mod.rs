//! The SQLite store: one file in WAL mode, nothing to install. One writer
//! thread takes the short writes (a commit is a compare on the session's
//! version and a few inserts), every write that is waiting in one
//! transaction and one fsync ([`group`]); reads run on a small pool of
//! their own connections, which WAL lets proceed beside the writer; nonces
//! live in a second file with its own writer, so spending a nonce never
//! waits for an append. The server and the admin CLI open the same files at
//! the same time (busy timeout).

mod group;
mod migrations;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use group::GroupWriter;
use std::time::Duration;

use rusqlite::{params, Connection, TransactionBehavior};

use super::*;
use crate::config::Durability;

pub use migrations::LATEST_VERSION;

/// Runs `body`, an operation written once for both stores (see
/// [`super::sql`]), with `db` a [`super::sql::Lite`] on SQLite: `read` on a
/// pooled read connection (`snapshot` and `consistent`: inside one read
/// transaction), `write`, `tx` and `commit` on the writer thread (each in
/// its own savepoint of the next group commit, rolled back alone when it
/// fails), `nonces` on the nonce file's own writer.
macro_rules! lite_run {
    ($store:expr, read, |$db:ident| $body:expr) => {
        $store
            .read(move |c| {
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&*c);
                    $body
                })
            })
            .await
    };
    ($store:expr, write, |$db:ident| $body:expr) => {
        $store
            .write(move |c| {
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&*c);
                    $body
                })
            })
            .await
    };
    ($store:expr, tx, |$db:ident| $body:expr) => {
        $crate::store::sqlite::lite_run!($store, write, |$db| $body)
    };
    ($store:expr, snapshot, |$db:ident| $body:expr) => {
        $store
            .read(move |c| {
                let tx = c.transaction()?;
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&tx);
                    $body
                })
            })
            .await
    };
    ($store:expr, consistent, |$db:ident| $body:expr) => {
        $crate::store::sqlite::lite_run!($store, snapshot, |$db| $body)
    };
    ($store:expr, nonces, |$db:ident| $body:expr) => {
        $store
            .nonce_write(move |c| {
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&*c);
                    $body
                })
            })
            .await
    };
    ($store:expr, commit, |$db:ident| $body:expr) => {
        $store
            .commit(move |c| {
                $crate::store::sql::now(async {
                    let $db = &$crate::store::sql::Lite(&*c);
                    $body
                })
            })
            .await
    };
}
pub(crate) use lite_run;

/// How long a connection waits for another writer before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Reads that run at once, and idle read connections kept open.
const READERS: usize = 8;

/// The nonce file beside the database: `<db>.nonces`.
pub fn nonce_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".nonces");
    PathBuf::from(name)
}

/// The SQLite implementation of every repository.
pub struct SqliteStore {
    path: PathBuf,
    writer: GroupWriter,
    nonces: GroupWriter,
    readers: Arc<ReadPool>,
}

struct ReadPool {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// At most [`READERS`] reads run at once: a thousand consoles asking
    /// together queue here, instead of each taking a blocking thread (and
    /// its memory) and a connection of its own.
    running: tokio::sync::Semaphore,
}

fn connection(path: &Path, durability: Durability) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", durability.pragma())?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

impl ReadPool {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut conn = match idle {
            Some(conn) => conn,
            None => {
                let conn = Connection::open(&self.path)?;
                conn.busy_timeout(BUSY_TIMEOUT)?;
                conn
            }
        };
        let result = f(&mut conn);
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < READERS {
                idle.push(conn);
            }
        }
        result
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
}

impl SqliteStore {
    /// Opens (creating and migrating) the database and its nonce file.
    pub fn open(path: &Path, durability: Durability) -> Result<SqliteStore, StoreError> {
        let mut writer = connection(path, durability)?;
        migrations::migrate(&mut writer)?;
        let nonces = connection(&nonce_path(path), durability)?;
        nonces.execute_batch(
            "CREATE TABLE IF NOT EXISTS nonces (
                principal TEXT NOT NULL,
                nonce TEXT NOT NULL,
                expires_at INTEGER NOT NULL,
                PRIMARY KEY (principal, nonce)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS nonces_expiry ON nonces(expires_at);",
        )?;
        move_legacy_nonces(&mut writer, &nonces)?;
        Ok(SqliteStore {
            path: path.to_owned(),
            writer: GroupWriter::start(writer, "writer")?,
            nonces: GroupWriter::start(nonces, "nonces")?,
            readers: Arc::new(ReadPool {
                path: path.to_owned(),
                idle: Mutex::new(Vec::new()),
                running: tokio::sync::Semaphore::new(READERS),
            }),
        })
    }

    pub(crate) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let _turn = self
            .readers
            .running
            .acquire()
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?;
        let pool = self.readers.clone();
        blocking(move || pool.with(f)).await
    }

    pub(crate) async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.writer.write(f).await
    }

    /// Runs `f` on the nonce file's writer (never behind an append).
    pub(crate) async fn nonce_write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.nonces.write(f).await
    }

    /// Runs one commit's statements on the writer: an `Err` undoes them.
    pub(crate) async fn commit<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, CommitError> + Send + 'static,
    ) -> Result<T, CommitError> {
        self.writer.write(f).await
    }
}

/// Databases of schema 1 kept nonces in the main file: carry the unexpired
/// ones over (a replay must stay refused across the upgrade), then drop it.
fn move_legacy_nonces(writer: &mut Connection, nonces: &Connection) -> Result<(), StoreError> {
    let legacy: i64 = writer.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'nonces'",
        [],
        |r| r.get(0),
    )?;
    if legacy == 0 {
        return Ok(());
    }
    let tx = writer.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut stmt = tx.prepare("SELECT principal, nonce, expires_at FROM nonces")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        for row in rows {
            let (principal, nonce, expires) = row?;
            nonces.execute(
                "INSERT OR IGNORE INTO nonces (principal, nonce, expires_at) VALUES (?1, ?2, ?3)",
                params![principal, nonce, expires],
            )?;
        }
    }
    tx.execute_batch("DROP TABLE nonces")?;
    tx.commit()?;
    Ok(())
}

impl Storage for SqliteStore {
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
        None
    }
    fn describe(&self) -> String {
        format!("sqlite {}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PRAGMA synchronous` as each writer connection runs it (0 OFF,
    /// 1 NORMAL, 2 FULL): the setting is per connection, so it is read on
    /// the writer threads themselves.
    async fn synchronous_of(store: &SqliteStore) -> (i64, i64) {
        let read = |c: &mut Connection| -> Result<i64, StoreError> {
            Ok(c.query_row("PRAGMA synchronous", [], |r| r.get(0))?)
        };
        (
            store.writer.write(read).await.expect("writer"),
            store.nonces.write(read).await.expect("nonces"),
        )
    }

    #[tokio::test]
    async fn the_default_durability_fsyncs_every_commit_of_both_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store =
            SqliteStore::open(&dir.path().join("host.db"), Durability::default()).expect("open");
        assert_eq!(
            synchronous_of(&store).await,
            (2, 2),
            "FULL on the events and the nonces"
        );
        let store =
            SqliteStore::open(&dir.path().join("fast.db"), Durability::Normal).expect("open");
        assert_eq!(synchronous_of(&store).await, (1, 1), "NORMAL when asked");
    }
}
