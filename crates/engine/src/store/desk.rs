//! The desk's records: each session's figures as last computed (forgotten
//! by the schema's triggers when a record they are read from changes), and
//! a person's links between two counterparty identities.

use rusqlite::params;

use super::Store;

/// A person's link between two identities, kept after it is undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRecord {
    /// Its id.
    pub link_id: i64,
    /// One identity.
    pub a: String,
    /// The other.
    pub b: String,
    /// Who linked them.
    pub linked_by: String,
    /// When.
    pub linked_at: String,
    /// Who undid it, when undone.
    pub unlinked_by: Option<String>,
    /// When.
    pub unlinked_at: Option<String>,
}

impl Store {
    /// Every session's stored figures (JSON text), and the sessions that
    /// have none yet.
    #[allow(clippy::type_complexity)]
    pub fn desk_facts(
        &self,
    ) -> rusqlite::Result<(Vec<(String, String, String)>, Vec<(String, String)>)> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.host_id, s.session_id, f.body FROM sessions s
             LEFT JOIN desk_facts f ON f.host_id = s.host_id AND f.session_id = s.session_id",
        )?;
        let mut known = Vec::new();
        let mut missing = Vec::new();
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        for row in rows {
            match row? {
                (h, s, Some(body)) => known.push((h, s, body)),
                (h, s, None) => missing.push((h, s)),
            }
        }
        Ok((known, missing))
    }

    /// Keeps a session's figures until one of its records changes.
    pub fn put_desk_facts(
        &self,
        host_id: &str,
        session_id: &str,
        body: &str,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO desk_facts (host_id, session_id, body) VALUES (?1, ?2, ?3)
             ON CONFLICT (host_id, session_id) DO UPDATE SET body = excluded.body",
            params![host_id, session_id, body],
        )?;
        Ok(())
    }

    /// When this console first saw each of a session's proposals pending
    /// (its notification's claim, subject the proposal's hash): what
    /// dates a proposal whose record carries no time.
    pub fn first_seen_pending(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> rusqlite::Result<Vec<(String, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT subject, at FROM notified WHERE host_id = ?1 AND session_id = ?2
             AND subject <> 'disputed' AND subject NOT LIKE 'breach:%'
             AND subject NOT LIKE 'escalated:%' AND subject NOT LIKE 'reminder:%'",
        )?;
        let rows = stmt.query_map([host_id, session_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    }

    /// Records a person's link between two identities.
    pub fn link_identities(&self, a: &str, b: &str, by: &str, at: &str) -> rusqlite::Result<i64> {
        self.conn.execute(
            "INSERT INTO counterparty_links (a, b, linked_by, linked_at) VALUES (?1, ?2, ?3, ?4)",
            params![a, b, by, at],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Undoes a link (kept, marked undone); false when there is no such
    /// link in force.
    pub fn unlink_identities(&self, link_id: i64, by: &str, at: &str) -> rusqlite::Result<bool> {
        let changed = self.conn.execute(
            "UPDATE counterparty_links SET unlinked_by = ?2, unlinked_at = ?3
             WHERE link_id = ?1 AND unlinked_at IS NULL",
            params![link_id, by, at],
        )?;
        Ok(changed == 1)
    }

    /// Every link, in force or undone, oldest first.
    pub fn identity_links(&self) -> rusqlite::Result<Vec<LinkRecord>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT link_id, a, b, linked_by, linked_at, unlinked_by, unlinked_at
             FROM counterparty_links ORDER BY link_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(LinkRecord {
                link_id: r.get(0)?,
                a: r.get(1)?,
                b: r.get(2)?,
                linked_by: r.get(3)?,
                linked_at: r.get(4)?,
                unlinked_by: r.get(5)?,
                unlinked_at: r.get(6)?,
            })
        })?;
        rows.collect()
    }
}
