//! Group commit for one SQLite file: a writer thread owns the file's write
//! connection and runs every write that is waiting, each in its own
//! savepoint, inside one IMMEDIATE transaction with one commit.
//!
//! Why: with `synchronous=FULL` every commit is an fsync, so one commit per
//! append caps the host at the disk's fsync rate however many agents wait.
//! Sharing the commit is what PostgreSQL does for concurrent backends. Each
//! write still sees the ones before it (they run in order on one
//! connection), a write that fails is rolled back to its savepoint alone,
//! and no caller hears "done" before the commit that holds its write has
//! returned; if that commit fails, every write in it fails.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use rusqlite::Connection;

use crate::store::StoreError;

/// The most writes one commit carries; more wait for the next.
const MAX_BATCH: usize = 256;

/// Tells one caller how its write ended, once the batch's fate is known:
/// `None` when the batch committed, the reason when it did not.
type Delivery = Box<dyn FnOnce(Option<&rusqlite::Error>) + Send>;

/// One caller's write: run on the open transaction (or told why none could
/// be opened), it answers whether its savepoint closed cleanly and how to
/// deliver its result.
type Job = Box<dyn FnOnce(Result<&mut Connection, &rusqlite::Error>) -> (bool, Delivery) + Send>;

/// The sending side of one file's writer thread.
pub(super) struct GroupWriter {
    jobs: mpsc::Sender<Job>,
    /// Read by the tests, which check that queued writes share a commit.
    #[cfg_attr(not(test), allow(dead_code))]
    commits: Arc<AtomicU64>,
}

impl GroupWriter {
    /// Starts the writer thread, which owns `conn` until the writer is
    /// dropped (the thread ends when no sender is left).
    pub(super) fn start(conn: Connection, name: &str) -> Result<GroupWriter, StoreError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let commits = Arc::new(AtomicU64::new(0));
        let counted = commits.clone();
        std::thread::Builder::new()
            .name(format!("sqlite-{name}"))
            .spawn(move || serve(conn, queue, &counted))
            .map_err(|e| StoreError::Task(format!("could not start the SQLite writer: {e}")))?;
        Ok(GroupWriter { jobs, commits })
    }

    /// Transactions committed so far (each carrying one or more writes).
    #[cfg(test)]
    pub(super) fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// Runs `f` in the next commit and answers once that commit is durable
    /// (or has failed). An `Err` from `f` rolls back what `f` did, and only
    /// that.
    pub(super) async fn write<T, E>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel::<Result<T, E>>();
        let job: Job = Box::new(move |conn| match conn {
            Err(begin) => {
                let reason = replicate(begin);
                let delivery: Delivery = Box::new(move |_| {
                    let _ = reply.send(Err(E::from(reason)));
                });
                (true, delivery)
            }
            Ok(conn) => {
                let (result, clean) = in_savepoint(conn, f);
                let delivery: Delivery = Box::new(move |failed| {
                    let result = match (failed, result) {
                        (Some(e), Ok(_)) => Err(E::from(replicate(e))),
                        (_, result) => result,
                    };
                    let _ = reply.send(result);
                });
                (clean, delivery)
            }
        });
        self.jobs
            .send(job)
            .map_err(|_| E::from(StoreError::Task("the SQLite writer has stopped".into())))?;
        answer.await.map_err(|_| {
            E::from(StoreError::Task(
                "the SQLite writer stopped before answering".into(),
            ))
        })?
    }
}

/// The writer thread: take what is waiting, run it in one transaction,
/// commit once, answer everyone.
fn serve(mut conn: Connection, queue: mpsc::Receiver<Job>, commits: &AtomicU64) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if let Err(begin) = conn.execute_batch("BEGIN IMMEDIATE") {
            for job in batch {
                let (_, deliver) = job(Err(&begin));
                deliver(None);
            }
            continue;
        }
        let mut clean = true;
        let mut deliveries = Vec::with_capacity(batch.len());
        for job in batch {
            let (closed, deliver) = job(Ok(&mut conn));
            clean &= closed;
            deliveries.push(deliver);
        }
        let outcome = if clean {
            conn.execute_batch("COMMIT")
        } else {
            Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
                Some("a write's savepoint could not be closed; its batch was rolled back".into()),
            ))
        };
        match outcome {
            Ok(()) => {
                commits.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) if !conn.is_autocommit() => {
                let _ = conn.execute_batch("ROLLBACK");
            }
            Err(_) => {}
        }
        for deliver in deliveries {
            deliver(outcome.as_ref().err());
        }
    }
}

/// Runs one write in its own savepoint; answers its result and whether the
/// savepoint was closed (released, or rolled back and released).
fn in_savepoint<T, E: From<StoreError>>(
    conn: &mut Connection,
    f: impl FnOnce(&mut Connection) -> Result<T, E>,
) -> (Result<T, E>, bool) {
    if let Err(e) = conn.execute_batch("SAVEPOINT grouped_write") {
        return (Err(E::from(StoreError::from(e))), true);
    }
    let result = catch_unwind(AssertUnwindSafe(|| f(conn))).unwrap_or_else(|_| {
        Err(E::from(StoreError::Task(
            "a write panicked; it was rolled back".into(),
        )))
    });
    let close = if result.is_ok() {
        "RELEASE grouped_write"
    } else {
        "ROLLBACK TO grouped_write; RELEASE grouped_write"
    };
    let closed = conn.execute_batch(close).is_ok();
    (result, closed)
}

/// A copy of a SQLite error for each caller it concerns (`rusqlite::Error`
/// is not `Clone`).
fn replicate(e: &rusqlite::Error) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(code, message) => {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(*code, message.clone()))
        }
        other => StoreError::Task(format!("the commit failed: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> (tempfile::TempDir, GroupWriter, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("group.db");
        let conn = Connection::open(&path).expect("open");
        conn.busy_timeout(std::time::Duration::from_millis(50))
            .expect("busy timeout");
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL);",
        )
        .expect("schema");
        let writer = GroupWriter::start(conn, "test").expect("start");
        (dir, writer, path)
    }

    fn rows(path: &std::path::Path) -> Vec<(String, i64)> {
        let conn = Connection::open(path).expect("open");
        let mut stmt = conn
            .prepare("SELECT k, v FROM t ORDER BY k")
            .expect("prepare");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query");
        rows.collect::<Result<_, _>>().expect("rows")
    }

    fn insert(k: &str, v: i64) -> impl FnOnce(&mut Connection) -> Result<(), StoreError> {
        let k = k.to_owned();
        move |c| {
            c.execute(
                "INSERT INTO t (k, v) VALUES (?1, ?2)",
                rusqlite::params![k, v],
            )?;
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_concurrent_writes_each_land_once() {
        let (_dir, writer, path) = writer();
        let writer = std::sync::Arc::new(writer);
        let mut tasks = Vec::new();
        for i in 0..200 {
            let writer = writer.clone();
            tasks.push(tokio::spawn(async move {
                writer.write(insert(&format!("k{i:03}"), i)).await
            }));
        }
        for t in tasks {
            t.await.expect("task").expect("write");
        }
        let stored = rows(&path);
        assert_eq!(stored.len(), 200);
        assert_eq!(stored[199], ("k199".to_owned(), 199));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_write_is_rolled_back_alone() {
        let (_dir, writer, path) = writer();
        let writer = std::sync::Arc::new(writer);
        writer.write(insert("a", 1)).await.expect("first");
        // The writer is kept busy while three writes queue, so they share
        // the next commit; the middle one half-writes, then fails.
        let (started, has_started) = tokio::sync::oneshot::channel();
        let w0 = writer.clone();
        let busy = tokio::spawn(async move {
            w0.write(move |_: &mut Connection| -> Result<(), StoreError> {
                let _ = started.send(());
                std::thread::sleep(std::time::Duration::from_millis(200));
                Ok(())
            })
            .await
        });
        has_started.await.expect("the busy write started");
        let w1 = writer.clone();
        let w2 = writer.clone();
        let w3 = writer.clone();
        let (r1, r2, r3) = tokio::join!(
            w1.write(insert("b", 2)),
            w2.write(|c: &mut Connection| -> Result<(), StoreError> {
                c.execute("INSERT INTO t (k, v) VALUES ('half', 0)", [])?;
                c.execute("INSERT INTO t (k, v) VALUES ('a', 9)", [])?;
                Ok(())
            }),
            w3.write(insert("c", 3)),
        );
        busy.await.expect("task").expect("busy");
        r1.expect("b lands");
        let err = r2.expect_err("duplicate key");
        assert!(err.to_string().contains("UNIQUE"), "{err}");
        r3.expect("c lands");
        assert_eq!(
            rows(&path),
            vec![("a".into(), 1), ("b".into(), 2), ("c".into(), 3)]
        );
        assert_eq!(
            writer.commits(),
            3,
            "a, the busy write, then b, c and the failed one together"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_sees_the_writes_queued_before_it() {
        let (_dir, writer, _path) = writer();
        let writer = std::sync::Arc::new(writer);
        let (w1, w2) = (writer.clone(), writer.clone());
        let (first, second) = tokio::join!(
            w1.write(|c: &mut Connection| -> Result<usize, StoreError> {
                Ok(c.execute("INSERT OR IGNORE INTO t (k, v) VALUES ('n', 1)", [])?)
            }),
            w2.write(|c: &mut Connection| -> Result<usize, StoreError> {
                Ok(c.execute("INSERT OR IGNORE INTO t (k, v) VALUES ('n', 1)", [])?)
            }),
        );
        let mut inserted = vec![first.expect("first"), second.expect("second")];
        inserted.sort();
        assert_eq!(inserted, vec![0, 1], "one insert, one ignored");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_write_fails_and_the_writer_goes_on() {
        let (_dir, writer, path) = writer();
        let err = writer
            .write(|c: &mut Connection| -> Result<(), StoreError> {
                c.execute("INSERT INTO t (k, v) VALUES ('p', 1)", [])?;
                panic!("boom");
            })
            .await
            .expect_err("panicked");
        assert!(err.to_string().contains("panicked"), "{err}");
        writer
            .write(insert("after", 2))
            .await
            .expect("writer alive");
        assert_eq!(rows(&path), vec![("after".into(), 2)]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_that_cannot_begin_is_refused_with_the_reason() {
        let (_dir, writer, path) = writer();
        // Another connection holds the write lock past the busy timeout (0).
        let other = Connection::open(&path).expect("open");
        other.execute_batch("BEGIN IMMEDIATE").expect("lock");
        let err = writer.write(insert("x", 1)).await.expect_err("locked");
        assert!(err.to_string().contains("locked"), "{err}");
        other.execute_batch("ROLLBACK").expect("unlock");
        writer.write(insert("y", 2)).await.expect("after unlock");
        assert_eq!(rows(&path), vec![("y".into(), 2)]);
    }
}
