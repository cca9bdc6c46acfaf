//! SQLite storage: opening, pragmas and versioned migrations. One file holds
//! everything; the server and the admin CLI open it at the same time (WAL,
//! busy timeout).

mod migrations;

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use crate::config::Durability;
use crate::error::HostError;

pub use migrations::LATEST_VERSION;

/// How long a connection waits for another writer before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens (creating if needed) and migrates the database.
pub fn open(path: &Path, durability: Durability) -> Result<Connection, HostError> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", durability.pragma())?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    migrations::migrate(&mut conn)?;
    Ok(conn)
}

/// Current UTC time as the protocol writes it.
pub fn now_text(now: time::OffsetDateTime) -> String {
    anp::api::format_timestamp(now)
}
