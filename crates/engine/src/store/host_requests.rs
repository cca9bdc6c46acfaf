//! What the host last said about each request of a gate session (its log's
//! `requests`), kept as the JSON text of each so a proposal that left the
//! pending set can be shown as the host decided it, offline. Replaced whole
//! on each fetch: the host lists every request of the session each time.

use rusqlite::{params, OptionalExtension};

use super::Store;

/// One request of a gate session, as the host last described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRequestRecord {
    /// The agent's id for it.
    pub request_id: String,
    /// The message it awaits a decision on (the proposal's hash).
    pub message_hash: String,
    /// The host's description of it (JSON text).
    pub body: String,
}

impl Store {
    /// Replaces what is kept of a session's requests with `requests`, in
    /// the host's order (oldest first).
    pub fn replace_host_requests(
        &self,
        host_id: &str,
        session_id: &str,
        requests: &[HostRequestRecord],
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "DELETE FROM host_requests WHERE host_id = ?1 AND session_id = ?2",
            [host_id, session_id],
        )?;
        let mut st = self.conn.prepare_cached(
            "INSERT OR REPLACE INTO host_requests
               (host_id, session_id, request_id, message_hash, position, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (position, r) in requests.iter().enumerate() {
            st.execute(params![
                host_id,
                session_id,
                r.request_id,
                r.message_hash,
                position as i64,
                r.body
            ])?;
        }
        Ok(())
    }

    /// The messages of a session the host holds requests about, each once.
    pub fn host_request_hashes(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> rusqlite::Result<Vec<String>> {
        let mut st = self.conn.prepare_cached(
            "SELECT DISTINCT message_hash FROM host_requests WHERE host_id = ?1 AND session_id = ?2",
        )?;
        let rows = st.query_map([host_id, session_id], |r| r.get(0))?;
        rows.collect()
    }

    /// Every request the host holds of a session, in its order (oldest
    /// first).
    pub fn host_requests(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> rusqlite::Result<Vec<HostRequestRecord>> {
        let mut st = self.conn.prepare_cached(
            "SELECT request_id, message_hash, body FROM host_requests
             WHERE host_id = ?1 AND session_id = ?2 ORDER BY position",
        )?;
        let rows = st.query_map([host_id, session_id], |r| {
            Ok(HostRequestRecord {
                request_id: r.get(0)?,
                message_hash: r.get(1)?,
                body: r.get(2)?,
            })
        })?;
        rows.collect()
    }

    /// The latest request the host holds about the message `message_hash`
    /// (a new request may follow an expired one).
    pub fn host_request(
        &self,
        host_id: &str,
        session_id: &str,
        message_hash: &str,
    ) -> rusqlite::Result<Option<HostRequestRecord>> {
        self.conn
            .query_row(
                "SELECT request_id, message_hash, body FROM host_requests
                 WHERE host_id = ?1 AND session_id = ?2 AND message_hash = ?3
                 ORDER BY position DESC LIMIT 1",
                [host_id, session_id, message_hash],
                |r| {
                    Ok(HostRequestRecord {
                        request_id: r.get(0)?,
                        message_hash: r.get(1)?,
                        body: r.get(2)?,
                    })
                },
            )
            .optional()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, hash: &str, body: &str) -> HostRequestRecord {
        HostRequestRecord {
            request_id: id.into(),
            message_hash: hash.into(),
            body: body.into(),
        }
    }

    #[test]
    fn the_latest_request_about_a_message_is_found_and_a_fetch_replaces_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        store
            .replace_host_requests(
                "h",
                "s",
                &[record("r1", "m1", "expired"), record("r2", "m1", "denied")],
            )
            .unwrap();
        store
            .replace_host_requests("h", "other", &[record("r9", "m1", "approved")])
            .unwrap();
        let found = store.host_request("h", "s", "m1").unwrap().unwrap();
        assert_eq!(
            (found.request_id.as_str(), found.body.as_str()),
            ("r2", "denied")
        );
        assert!(store.host_request("h", "s", "m2").unwrap().is_none());

        store
            .replace_host_requests("h", "s", &[record("r3", "m2", "pending")])
            .unwrap();
        assert!(
            store.host_request("h", "s", "m1").unwrap().is_none(),
            "replaced"
        );
        assert_eq!(
            store
                .host_request("h", "s", "m2")
                .unwrap()
                .unwrap()
                .request_id,
            "r3"
        );
        assert_eq!(
            store
                .host_request("h", "other", "m1")
                .unwrap()
                .unwrap()
                .body,
            "approved",
            "another session's are its own"
        );
    }
}
