//! SQLite's versioned schema migrations, tracked in `PRAGMA user_version`.
//! A database from a newer version is refused, never silently downgraded.

use rusqlite::Connection;

use crate::store::migrations::{render, shared_for, shared_steps, FIRST, FIRST_CHANGES};
use crate::store::sql::Dialect;
use crate::store::StoreError;

/// The schema version this build writes.
pub const LATEST_VERSION: i64 = 2 + shared_steps(Dialect::Sqlite) as i64;

/// Every migration in order, as SQLite runs it.
fn migrations() -> Vec<String> {
    // Versions 1 and 2, then the shared steps.
    [FIRST, FIRST_CHANGES]
        .iter()
        .map(|step| render(step, Dialect::Sqlite))
        .chain(shared_for(Dialect::Sqlite))
        .collect()
}

/// Brings the database up to [`LATEST_VERSION`], each step in a transaction.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > LATEST_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            supported: LATEST_VERSION,
        });
    }
    for (index, sql) in migrations().iter().enumerate().skip(found.max(0) as usize) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the lock.
        let now: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if now > index as i64 {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}
