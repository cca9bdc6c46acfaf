//! The local SQLite store: hosts, sessions with their pins, verified events
//! (kept verbatim), the pending set of the last poll, decisions with the exact
//! signed request, what was seen and what was notified, and what the host
//! says about each request of a gate session. History stays
//! readable offline because everything shown comes from here.

mod desk;
mod host_requests;
mod migrations;
mod receipts;

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension, Row};

pub use desk::LinkRecord;
pub use host_requests::HostRequestRecord;
pub use migrations::SCHEMA_VERSION;
pub use receipts::ReceiptRecord;

use crate::views::{Counterparty, Verification};

/// A connected host, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRecord {
    /// Local id.
    pub host_id: String,
    /// Protocol spoken (`ANP/0.1`): the seam for a second protocol.
    pub protocol: String,
    /// Base URL.
    pub url: String,
    /// Name for people.
    pub label: String,
    /// The embedded sandbox.
    pub sandbox: bool,
    /// Our approver id on that host.
    pub approver_id: String,
    /// Our email on that host.
    pub approver_email: String,
    /// Platform public key pinned at enrollment (base64url).
    pub platform_key: String,
    /// Its fingerprint.
    pub platform_fingerprint: String,
    /// Approver keys published in the well-known document (JSON array).
    pub approver_keys: String,
    /// Poll state.
    pub reachable: bool,
    /// Last poll error.
    pub last_error: Option<String>,
    /// Last successful poll.
    pub last_poll_at: Option<String>,
    /// When the person allowed plain HTTP to this host off loopback (the
    /// lab override at connect); `None` when they did not.
    pub plain_http_allowed_at: Option<String>,
    /// The fingerprint of the approver key this host knows (enrolled, or
    /// moved to); `None` only in a record of a build that kept no such
    /// thing, which opening fills in.
    pub key_fingerprint: Option<String>,
}

/// A key this console has signed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKeyRecord {
    /// Its fingerprint.
    pub fingerprint: String,
    /// Its public half (base64url).
    pub public_key: String,
    /// When the console began signing with it (or first recorded it).
    pub since: String,
    /// When it was retired: no host knows it since.
    pub retired_at: Option<String>,
}

/// A session, its pin and its verification state.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    /// Host.
    pub host_id: String,
    /// Session id.
    pub session_id: String,
    /// Protocol of the session.
    pub protocol: String,
    /// Host's status.
    pub status: String,
    /// Sandbox session.
    pub sandbox: bool,
    /// Who is on the other side.
    pub counterparty: Counterparty,
    /// Seq of the last verified event (the pin).
    pub pin_seq: u64,
    /// Its hash.
    pub pin_hash: String,
    /// Event count the host last reported.
    pub remote_count: u64,
    /// Head the host last reported.
    pub remote_head: String,
    /// Verification state.
    pub verification: Verification,
    /// Why disputed / which events are unproven.
    pub dispute_detail: Option<String>,
    /// The failing seq.
    pub failing_seq: Option<u64>,
    /// Failed checks.
    pub failing_checks: Vec<String>,
    /// Seqs with unproven attribution.
    pub unproven: Vec<u64>,
    /// Total of the latest offer.
    pub last_total: Option<String>,
    /// Its currency.
    pub currency: Option<String>,
    /// Time of the latest event.
    pub updated_at: String,
    /// The parties' keys pinned the first time they were seen (JSON object,
    /// party → key).
    pub pinned_keys: String,
}

/// One verified event, kept byte-for-byte as received.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Seq.
    pub seq: u64,
    /// Hash.
    pub event_hash: String,
    /// Actor wire name.
    pub actor: String,
    /// Kind wire name.
    pub kind: String,
    /// Append time.
    pub at: String,
    /// The whole event as JSON text.
    pub body: String,
    /// `verified`, `unproven`, `failed`.
    pub signature_state: String,
}

/// One pending decision from the last summary.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingRecord {
    /// Host.
    pub host_id: String,
    /// Session.
    pub session_id: String,
    /// Offer hash.
    pub event_hash: String,
    /// The protocol's pending record as JSON.
    pub body: String,
    /// Expiry.
    pub expires_at: String,
}

/// A pending record and what the inbox needs to place and count it.
#[derive(Debug, Clone)]
pub struct PendingOverview {
    /// The record.
    pub record: PendingRecord,
    /// The person opened it.
    pub seen: bool,
    /// The offer event it names is stored (a draft names none).
    pub offer_stored: bool,
    /// Its session is stored.
    pub session_known: bool,
    /// The person dismissed it once it expired.
    pub dismissed: bool,
}

/// A decision, with the exact request sent.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRecord {
    /// Idempotency key.
    pub decision_id: String,
    /// Host.
    pub host_id: String,
    /// Session.
    pub session_id: String,
    /// Offer answered.
    pub in_response_to: String,
    /// `approve`, `decline`, `counter`.
    pub action: String,
    /// Exact request body bytes (UTF-8 JSON).
    pub body: String,
    /// The signed headers of the last attempt (JSON).
    pub headers: Option<String>,
    /// `pending`, `appended`, `awaiting_approvals`, `held`, `refused`.
    pub outcome: String,
    /// Host's words.
    pub detail: String,
    /// When made.
    pub at: String,
    /// The pending record it answered (JSON), so the proposal can still be
    /// shown once it has left the pending set (a draft is nowhere else).
    pub proposal: Option<String>,
    /// The event the host says the decision appended.
    pub appended: Option<AppendedRef>,
    /// The fingerprint of the approver key that signed it.
    pub key_fingerprint: Option<String>,
}

/// An event a decision appended to the log, as the host's answer names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendedRef {
    /// Its seq.
    pub seq: u64,
    /// Its hash.
    pub event_hash: String,
    /// Its kind (`accept`, `decline`, `counter_offer`).
    pub kind: String,
}

/// A dispute as first detected, with the host's conflicting answer.
#[derive(Debug, Clone, PartialEq)]
pub struct DisputeRecord {
    /// Host.
    pub host_id: String,
    /// Session.
    pub session_id: String,
    /// When this console found it.
    pub detected_at: String,
    /// The exact seq that failed.
    pub seq: u64,
    /// The failed checks.
    pub checks: Vec<String>,
    /// In words.
    pub detail: String,
    /// The request the host answered, e.g. `GET …/log?after=3`.
    pub request: Option<String>,
    /// The answer's body, byte for byte as received.
    pub host_answer: Option<Vec<u8>>,
    /// The person's note, once acknowledged.
    pub acknowledged: Option<Acknowledgement>,
}

/// A person acknowledged a dispute (it stays disputed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acknowledgement {
    /// Their note.
    pub note: String,
    /// When.
    pub at: String,
    /// Who (the email this console approves as on that host).
    pub by: String,
}

/// A per-proposal mark this console keeps (never sent anywhere).
#[derive(Clone, Copy)]
enum Mark {
    /// The person opened it.
    Seen,
    /// The person put it away after it expired.
    Dismissed,
}

/// The store; one connection, guarded by the engine.
pub struct Store {
    conn: Connection,
}

fn host_from_row(r: &Row<'_>) -> rusqlite::Result<HostRecord> {
    Ok(HostRecord {
        host_id: r.get("host_id")?,
        protocol: r.get("protocol")?,
        url: r.get("url")?,
        label: r.get("label")?,
        sandbox: r.get("sandbox")?,
        approver_id: r.get("approver_id")?,
        approver_email: r.get("approver_email")?,
        platform_key: r.get("platform_key")?,
        platform_fingerprint: r.get("platform_fingerprint")?,
        approver_keys: r.get("approver_keys")?,
        reachable: r.get("reachable")?,
        last_error: r.get("last_error")?,
        last_poll_at: r.get("last_poll_at")?,
        plain_http_allowed_at: r.get("plain_http_allowed_at")?,
        key_fingerprint: r.get("key_fingerprint")?,
    })
}

fn json_col<T: serde::de::DeserializeOwned>(r: &Row<'_>, name: &str) -> rusqlite::Result<T> {
    let text: String = r.get(name)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn session_from_row(r: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    let verification: String = r.get("verification")?;
    Ok(SessionRecord {
        host_id: r.get("host_id")?,
        session_id: r.get("session_id")?,
        protocol: r.get("protocol")?,
        status: r.get("status")?,
        sandbox: r.get("sandbox")?,
        counterparty: json_col(r, "counterparty")?,
        pin_seq: r.get("pin_seq")?,
        pin_hash: r.get("pin_hash")?,
        remote_count: r.get("remote_count")?,
        remote_head: r.get("remote_head")?,
        verification: Verification::parse(&verification),
        dispute_detail: r.get("dispute_detail")?,
        failing_seq: r.get("failing_seq")?,
        failing_checks: json_col(r, "failing_checks")?,
        unproven: json_col(r, "unproven")?,
        last_total: r.get("last_total")?,
        currency: r.get("currency")?,
        updated_at: r.get("updated_at")?,
        pinned_keys: r.get("pinned_keys")?,
    })
}

fn event_from_row(r: &Row<'_>) -> rusqlite::Result<StoredEvent> {
    Ok(StoredEvent {
        seq: r.get("seq")?,
        event_hash: r.get("event_hash")?,
        actor: r.get("actor")?,
        kind: r.get("kind")?,
        at: r.get("at")?,
        body: r.get("body")?,
        signature_state: r.get("signature_state")?,
    })
}

fn decision_from_row(r: &Row<'_>) -> rusqlite::Result<DecisionRecord> {
    Ok(DecisionRecord {
        decision_id: r.get("decision_id")?,
        host_id: r.get("host_id")?,
        session_id: r.get("session_id")?,
        in_response_to: r.get("in_response_to")?,
        action: r.get("action")?,
        body: r.get("body")?,
        headers: r.get("headers")?,
        outcome: r.get("outcome")?,
        detail: r.get("detail")?,
        at: r.get("at")?,
        proposal: r.get("proposal")?,
        appended: match (
            r.get::<_, Option<u64>>("appended_seq")?,
            r.get::<_, Option<String>>("appended_hash")?,
            r.get::<_, Option<String>>("appended_kind")?,
        ) {
            (Some(seq), Some(event_hash), Some(kind)) => Some(AppendedRef {
                seq,
                event_hash,
                kind,
            }),
            _ => None,
        },
        key_fingerprint: r.get("key_fingerprint")?,
    })
}

fn dispute_from_row(r: &Row<'_>) -> rusqlite::Result<DisputeRecord> {
    let note: Option<String> = r.get("acknowledged_note")?;
    let at: Option<String> = r.get("acknowledged_at")?;
    let by: Option<String> = r.get("acknowledged_by")?;
    Ok(DisputeRecord {
        host_id: r.get("host_id")?,
        session_id: r.get("session_id")?,
        detected_at: r.get("detected_at")?,
        seq: r.get("seq")?,
        checks: json_col(r, "checks")?,
        detail: r.get("detail")?,
        request: r.get("request")?,
        host_answer: r.get("host_answer")?,
        acknowledged: match (note, at, by) {
            (Some(note), Some(at), Some(by)) => Some(Acknowledgement { note, at, by }),
            _ => None,
        },
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: &Path) -> rusqlite::Result<Store> {
        let mut conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // FULL: what the person did here (an alert acknowledged, a
        // notification claimed, a decision's local record) survives a
        // power cut, as the host's own records do. The console writes a few
        // small transactions per poll, so the fsync costs nothing a person
        // would notice.
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations::migrate(&mut conn)?;
        Ok(Store { conn })
    }

    /// The schema version on disk.
    pub fn schema_version(&self) -> rusqlite::Result<u32> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0))
    }

    /// Runs `f` in one transaction (a poll's writes land together or not at all).
    pub fn transaction<T>(
        &mut self,
        f: impl FnOnce(&Store) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match f(self) {
            Ok(v) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    // ---- hosts ----

    /// Adds a host.
    pub fn insert_host(&self, h: &HostRecord, now: &str) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO hosts (host_id, protocol, url, label, sandbox, approver_id, approver_email,
             platform_key, platform_fingerprint, approver_keys, reachable, last_error, last_poll_at, created_at,
             plain_http_allowed_at, key_fingerprint)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                h.host_id, h.protocol, h.url, h.label, h.sandbox, h.approver_id, h.approver_email,
                h.platform_key, h.platform_fingerprint, h.approver_keys, h.reachable, h.last_error,
                h.last_poll_at, now, h.plain_http_allowed_at, h.key_fingerprint
            ],
        )?;
        Ok(())
    }

    /// Every host, oldest first.
    pub fn hosts(&self) -> rusqlite::Result<Vec<HostRecord>> {
        let mut st = self
            .conn
            .prepare("SELECT * FROM hosts ORDER BY created_at, host_id")?;
        let rows = st.query_map([], host_from_row)?;
        rows.collect()
    }

    /// One host.
    pub fn host(&self, host_id: &str) -> rusqlite::Result<Option<HostRecord>> {
        self.conn
            .query_row(
                "SELECT * FROM hosts WHERE host_id = ?1",
                [host_id],
                host_from_row,
            )
            .optional()
    }

    /// The host at this URL, if connected.
    pub fn host_by_url(&self, url: &str) -> rusqlite::Result<Option<HostRecord>> {
        self.conn
            .query_row("SELECT * FROM hosts WHERE url = ?1", [url], host_from_row)
            .optional()
    }

    /// Records a poll's outcome for a host.
    pub fn set_host_poll(
        &self,
        host_id: &str,
        reachable: bool,
        last_error: Option<&str>,
        last_poll_at: Option<&str>,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "UPDATE hosts SET reachable = ?2, last_error = ?3,
             last_poll_at = COALESCE(?4, last_poll_at) WHERE host_id = ?1",
            params![host_id, reachable, last_error, last_poll_at],
        )?;
        Ok(())
    }

    /// Updates the host's URL (the sandbox binds a new port each start).
    pub fn set_host_url(&self, host_id: &str, url: &str) -> rusqlite::Result<()> {
        self.conn.execute(
            "UPDATE hosts SET url = ?2 WHERE host_id = ?1",
            params![host_id, url],
        )?;
        Ok(())
    }

    /// Records that `host_id` moved this console to the key `fingerprint`,
    /// where it is the approver `approver_id` now.
    pub fn set_host_key(
        &self,
        host_id: &str,
        approver_id: &str,
        fingerprint: &str,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "UPDATE hosts SET approver_id = ?2, key_fingerprint = ?3 WHERE host_id = ?1",
            params![host_id, approver_id, fingerprint],
        )?;
        Ok(())
    }

    /// Records a key this console signs with (from `since`), and fills the
    /// key of every host and decision a build before keys were recorded
    /// left blank with it (such a console had one key).
    pub fn adopt_signing_key(
        &self,
        fingerprint: &str,
        public_key: &str,
        since: &str,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO signing_keys (fingerprint, public_key, since) VALUES (?1, ?2, ?3)
             ON CONFLICT (fingerprint) DO NOTHING",
            params![fingerprint, public_key, since],
        )?;
        self.conn.execute(
            "UPDATE hosts SET key_fingerprint = ?1 WHERE key_fingerprint IS NULL",
            [fingerprint],
        )?;
        self.conn.execute(
            "UPDATE decisions SET key_fingerprint = ?1 WHERE key_fingerprint IS NULL",
            [fingerprint],
        )?;
        Ok(())
    }

    /// Records that the key `fingerprint` was retired at `at` (no host
    /// knows it any more).
    pub fn retire_signing_key(&self, fingerprint: &str, at: &str) -> rusqlite::Result<()> {
        self.conn.execute(
            "UPDATE signing_keys SET retired_at = COALESCE(retired_at, ?2) WHERE fingerprint = ?1",
            params![fingerprint, at],
        )?;
        Ok(())
    }

    /// Every key this console has signed with, oldest first:
    /// (fingerprint, public key, since, retired at).
    pub fn signing_keys(&self) -> rusqlite::Result<Vec<SigningKeyRecord>> {
        let mut st = self.conn.prepare(
            "SELECT fingerprint, public_key, since, retired_at FROM signing_keys ORDER BY since, fingerprint",
        )?;
        let rows = st.query_map([], |r| {
            Ok(SigningKeyRecord {
                fingerprint: r.get(0)?,
                public_key: r.get(1)?,
                since: r.get(2)?,
                retired_at: r.get(3)?,
            })
        })?;
        rows.collect()
    }

    /// Decisions stored but not yet answered by `host_id` (an attempt that
    /// did not reach it): what must reach it before it moves to a new key.
    pub fn unsent_decisions(&self, host_id: &str) -> rusqlite::Result<Vec<DecisionRecord>> {
        let mut st = self.conn.prepare(
            "SELECT * FROM decisions WHERE host_id = ?1 AND outcome = 'pending' ORDER BY at",
        )?;
        let rows = st.query_map([host_id], decision_from_row)?;
        rows.collect()
    }

    /// Replaces the published approver keys.
    pub fn set_approver_keys(&self, host_id: &str, keys_json: &str) -> rusqlite::Result<()> {
        self.conn.execute(
            "UPDATE hosts SET approver_keys = ?2 WHERE host_id = ?1",
            params![host_id, keys_json],
        )?;
        Ok(())
    }

    /// Keeps the host's record of a session's approvals (JSON, the
    /// approver API's `SessionApprovals`), replacing the last one read.
    pub fn set_session_approvals(
        &self,
        host_id: &str,
        session_id: &str,
        body: &str,
        read_at: &str,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO session_approvals (host_id, session_id, body, read_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (host_id, session_id) DO UPDATE SET body = excluded.body, read_at = excluded.read_at",
            params![host_id, session_id, body, read_at],
        )?;
        Ok(())
    }

    /// The host's record of a session's approvals as last read, if any.
    pub fn session_approvals(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> rusqlite::Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT body FROM session_approvals WHERE host_id = ?1 AND session_id = ?2",
                params![host_id, session_id],
                |r| r.get(0),
            )
            .optional()
    }

    // ---- sessions ----

    /// One session.
    pub fn session(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> rusqlite::Result<Option<SessionRecord>> {
        self.conn
            .query_row(
                "SELECT * FROM sessions WHERE host_id = ?1 AND session_id = ?2",
                [host_id, session_id],
                session_from_row,
            )
            .optional()
    }

    /// Every session of every host, latest first.
    pub fn sessions(&self) -> rusqlite::Result<Vec<SessionRecord>> {
        let mut st = self
            .conn
            .prepare("SELECT * FROM sessions ORDER BY updated_at DESC, session_id")?;
        let rows = st.query_map([], session_from_row)?;
        rows.collect()
    }

    /// Every session of one host.
    pub fn sessions_of(&self, host_id: &str) -> rusqlite::Result<Vec<SessionRecord>> {
        let mut st = self
            .conn
            .prepare("SELECT * FROM sessions WHERE host_id = ?1")?;
        let rows = st.query_map([host_id], session_from_row)?;
        rows.collect()
    }

    /// Inserts or replaces a session row.
    pub fn upsert_session(&self, s: &SessionRecord) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO sessions (host_id, session_id, protocol, status, sandbox, counterparty,
             pin_seq, pin_hash, remote_count, remote_head, verification, dispute_detail, failing_seq,
             failing_checks, unproven, last_total, currency, updated_at, pinned_keys)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
            params![
                s.host_id,
                s.session_id,
                s.protocol,
                s.status,
                s.sandbox,
                to_json(&s.counterparty),
                s.pin_seq,
                s.pin_hash,
                s.remote_count,
                s.remote_head,
                s.verification.as_str(),
                s.dispute_detail,
                s.failing_seq,
                to_json(&s.failing_checks),
                to_json(&s.unproven),
                s.last_total,
                s.currency,
                s.updated_at,
                s.pinned_keys
            ],
        )?;
        Ok(())
    }

    // ---- events ----

    /// Appends verified events (ignored if the seq is already stored: the
    /// stored copy is never overwritten).
    pub fn insert_events(
        &self,
        host_id: &str,
        session_id: &str,
        events: &[StoredEvent],
    ) -> rusqlite::Result<()> {
        let mut st = self.conn.prepare_cached(
            "INSERT OR IGNORE INTO events (host_id, session_id, seq, event_hash, actor, kind, at, body, signature_state)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for e in events {
            st.execute(params![
                host_id,
                session_id,
                e.seq,
                e.event_hash,
                e.actor,
                e.kind,
                e.at,
                e.body,
                e.signature_state
            ])?;
        }
        Ok(())
    }

    /// A session's events in order.
    pub fn events(&self, host_id: &str, session_id: &str) -> rusqlite::Result<Vec<StoredEvent>> {
        let mut st = self.conn.prepare_cached(
            "SELECT * FROM events WHERE host_id = ?1 AND session_id = ?2 ORDER BY seq",
        )?;
        let rows = st.query_map([host_id, session_id], event_from_row)?;
        rows.collect()
    }

    /// Number of stored events of a session.
    pub fn event_count(&self, host_id: &str, session_id: &str) -> rusqlite::Result<u64> {
        self.conn.query_row(
            "SELECT COUNT(*) FROM events WHERE host_id = ?1 AND session_id = ?2",
            [host_id, session_id],
            |r| r.get(0),
        )
    }

    // ---- pending ----

    /// Replaces a host's pending set with the latest summary's.
    pub fn replace_pending(
        &self,
        host_id: &str,
        pending: &[PendingRecord],
    ) -> rusqlite::Result<()> {
        self.conn
            .execute("DELETE FROM pending WHERE host_id = ?1", [host_id])?;
        let mut st = self.conn.prepare_cached(
            "INSERT OR REPLACE INTO pending (host_id, session_id, event_hash, body, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for p in pending {
            st.execute(params![
                p.host_id,
                p.session_id,
                p.event_hash,
                p.body,
                p.expires_at
            ])?;
        }
        Ok(())
    }

    /// Every pending decision, soonest expiry first.
    pub fn pending(&self) -> rusqlite::Result<Vec<PendingRecord>> {
        let mut st = self
            .conn
            .prepare("SELECT * FROM pending ORDER BY expires_at, session_id")?;
        let rows = st.query_map([], |r| {
            Ok(PendingRecord {
                host_id: r.get("host_id")?,
                session_id: r.get("session_id")?,
                event_hash: r.get("event_hash")?,
                body: r.get("body")?,
                expires_at: r.get("expires_at")?,
            })
        })?;
        rows.collect()
    }

    /// Every pending record with what the inbox needs to place and count it
    /// without reading any event: whether it was seen, whether the offer it
    /// names is stored, and whether its session is known.
    pub fn pending_overview(&self) -> rusqlite::Result<Vec<PendingOverview>> {
        let mut st = self.conn.prepare_cached(
            "SELECT p.host_id, p.session_id, p.event_hash, p.body, p.expires_at,
               EXISTS (SELECT 1 FROM seen s WHERE s.host_id = p.host_id
                 AND s.session_id = p.session_id AND s.event_hash = p.event_hash),
               EXISTS (SELECT 1 FROM events e WHERE e.host_id = p.host_id
                 AND e.session_id = p.session_id AND e.event_hash = p.event_hash),
               EXISTS (SELECT 1 FROM sessions x WHERE x.host_id = p.host_id
                 AND x.session_id = p.session_id),
               EXISTS (SELECT 1 FROM dismissed d WHERE d.host_id = p.host_id
                 AND d.session_id = p.session_id AND d.event_hash = p.event_hash)
             FROM pending p ORDER BY p.expires_at, p.session_id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(PendingOverview {
                record: PendingRecord {
                    host_id: r.get(0)?,
                    session_id: r.get(1)?,
                    event_hash: r.get(2)?,
                    body: r.get(3)?,
                    expires_at: r.get(4)?,
                },
                seen: r.get(5)?,
                offer_stored: r.get(6)?,
                session_known: r.get(7)?,
                dismissed: r.get(8)?,
            })
        })?;
        rows.collect()
    }

    /// The pending set of one host, as a set of (session, hash) keys.
    pub fn pending_keys(&self, host_id: &str) -> rusqlite::Result<Vec<(String, String)>> {
        let mut st = self
            .conn
            .prepare("SELECT session_id, event_hash FROM pending WHERE host_id = ?1")?;
        let rows = st.query_map([host_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    }

    // ---- seen, dismissed and notified ----

    /// Puts an expired proposal away: it leaves the inbox, nothing is sent.
    pub fn dismiss(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
        at: &str,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT OR IGNORE INTO dismissed (host_id, session_id, event_hash, at) VALUES (?1, ?2, ?3, ?4)",
            [host_id, session_id, event_hash, at],
        )?;
        Ok(())
    }

    /// True when the person dismissed the proposal.
    pub fn is_dismissed(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> rusqlite::Result<bool> {
        self.has_mark(Mark::Dismissed, host_id, session_id, event_hash)
    }

    /// Marks an offer opened.
    pub fn mark_seen(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT OR IGNORE INTO seen (host_id, session_id, event_hash) VALUES (?1, ?2, ?3)",
            [host_id, session_id, event_hash],
        )?;
        Ok(())
    }

    /// True when the offer was opened.
    pub fn is_seen(
        &self,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> rusqlite::Result<bool> {
        self.has_mark(Mark::Seen, host_id, session_id, event_hash)
    }

    /// True when `mark`'s table holds the proposal.
    fn has_mark(
        &self,
        mark: Mark,
        host_id: &str,
        session_id: &str,
        event_hash: &str,
    ) -> rusqlite::Result<bool> {
        let sql = match mark {
            Mark::Seen => {
                "SELECT 1 FROM seen WHERE host_id = ?1 AND session_id = ?2 AND event_hash = ?3"
            }
            Mark::Dismissed => {
                "SELECT 1 FROM dismissed WHERE host_id = ?1 AND session_id = ?2 AND event_hash = ?3"
            }
        };
        self.conn
            .query_row(sql, [host_id, session_id, event_hash], |_| Ok(()))
            .optional()
            .map(|o| o.is_some())
    }

    /// Records a notification; true when it had not been recorded before
    /// (so the caller notifies exactly once, across restarts).
    pub fn claim_notification(
        &self,
        host_id: &str,
        session_id: &str,
        subject: &str,
        now: &str,
    ) -> rusqlite::Result<bool> {
        let n = self.conn.execute(
            "INSERT OR IGNORE INTO notified (host_id, session_id, subject, at) VALUES (?1, ?2, ?3, ?4)",
            [host_id, session_id, subject, now],
        )?;
        Ok(n == 1)
    }

    /// Whether a notification about `subject` was already claimed.
    pub fn is_notified(
        &self,
        host_id: &str,
        session_id: &str,
        subject: &str,
    ) -> rusqlite::Result<bool> {
        self.conn
            .query_row(
                "SELECT 1 FROM notified WHERE host_id = ?1 AND session_id = ?2 AND subject = ?3",
                [host_id, session_id, subject],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
    }

    /// How many proposals of a session the poller found the org's agent
    /// accepted against the person's decision: it claims one `breach:<hash>`
    /// subject for each, whether or not the notification was on.
    pub fn breaches_found(&self, host_id: &str, session_id: &str) -> rusqlite::Result<u32> {
        self.conn.query_row(
            "SELECT count(*) FROM notified WHERE host_id = ?1 AND session_id = ?2 AND subject LIKE 'breach:%'",
            [host_id, session_id],
            |r| r.get(0),
        )
    }

    // ---- decisions ----

    /// Stores a decision before it is sent.
    pub fn insert_decision(&self, d: &DecisionRecord) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO decisions (decision_id, host_id, session_id, in_response_to, action, body, headers, outcome, detail, at,
             proposal, appended_seq, appended_hash, appended_kind, key_fingerprint)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                d.decision_id, d.host_id, d.session_id, d.in_response_to, d.action, d.body,
                d.headers, d.outcome, d.detail, d.at, d.proposal,
                d.appended.as_ref().map(|a| a.seq),
                d.appended.as_ref().map(|a| a.event_hash.clone()),
                d.appended.as_ref().map(|a| a.kind.clone()),
                d.key_fingerprint
            ],
        )?;
        Ok(())
    }

    /// Records the signed headers of an attempt and its outcome.
    pub fn update_decision(
        &self,
        decision_id: &str,
        headers: Option<&str>,
        outcome: &str,
        detail: &str,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "UPDATE decisions SET headers = COALESCE(?2, headers), outcome = ?3, detail = ?4 WHERE decision_id = ?1",
            params![decision_id, headers, outcome, detail],
        )?;
        Ok(())
    }

    /// Records the event the host says a decision appended.
    pub fn set_decision_appended(
        &self,
        decision_id: &str,
        appended: &AppendedRef,
    ) -> rusqlite::Result<()> {
        self.conn.execute(
            "UPDATE decisions SET appended_seq = ?2, appended_hash = ?3, appended_kind = ?4
             WHERE decision_id = ?1",
            params![
                decision_id,
                appended.seq,
                appended.event_hash,
                appended.kind
            ],
        )?;
        Ok(())
    }

    /// Records the signed headers of an attempt, before it is sent.
    pub fn set_decision_headers(&self, decision_id: &str, headers: &str) -> rusqlite::Result<()> {
        self.conn.execute(
            "UPDATE decisions SET headers = ?2 WHERE decision_id = ?1",
            params![decision_id, headers],
        )?;
        Ok(())
    }

    /// The live (not refused) decision on an offer, if one was made.
    pub fn live_decision(
        &self,
        host_id: &str,
        session_id: &str,
        in_response_to: &str,
    ) -> rusqlite::Result<Option<DecisionRecord>> {
        self.conn
            .query_row(
                "SELECT * FROM decisions WHERE host_id = ?1 AND session_id = ?2 AND in_response_to = ?3
                 AND outcome != 'refused' ORDER BY at DESC LIMIT 1",
                [host_id, session_id, in_response_to],
                decision_from_row,
            )
            .optional()
    }

    /// The latest decision on an offer, refused or not (what the offer view
    /// shows once the offer has left the pending set).
    pub fn latest_decision(
        &self,
        host_id: &str,
        session_id: &str,
        in_response_to: &str,
    ) -> rusqlite::Result<Option<DecisionRecord>> {
        self.conn
            .query_row(
                "SELECT * FROM decisions WHERE host_id = ?1 AND session_id = ?2 AND in_response_to = ?3
                 ORDER BY (outcome = 'refused'), at DESC LIMIT 1",
                [host_id, session_id, in_response_to],
                decision_from_row,
            )
            .optional()
    }

    // ---- settings ----

    /// Every saved setting as (id, JSON value text).
    pub fn settings(&self) -> rusqlite::Result<Vec<(String, String)>> {
        let mut st = self.conn.prepare("SELECT id, value FROM settings")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    }

    /// Saves one setting (JSON value text).
    pub fn set_setting(&self, id: &str, value: &str, now: &str) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT INTO settings (id, value, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(id) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            params![id, value, now],
        )?;
        Ok(())
    }

    // ---- disputes ----

    /// Records a dispute as first found; a later finding of the same session
    /// keeps the first evidence (true when this one was recorded).
    pub fn record_dispute(&self, d: &DisputeRecord) -> rusqlite::Result<bool> {
        let n = self.conn.execute(
            "INSERT OR IGNORE INTO disputes (host_id, session_id, detected_at, seq, checks, detail,
             request, host_answer) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                d.host_id,
                d.session_id,
                d.detected_at,
                d.seq,
                to_json(&d.checks),
                d.detail,
                d.request,
                d.host_answer
            ],
        )?;
        Ok(n == 1)
    }

    /// One session's dispute, if it has one.
    pub fn dispute(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> rusqlite::Result<Option<DisputeRecord>> {
        self.conn
            .query_row(
                "SELECT * FROM disputes WHERE host_id = ?1 AND session_id = ?2",
                [host_id, session_id],
                dispute_from_row,
            )
            .optional()
    }

    /// Records the person's acknowledgement (replacing an earlier one);
    /// true when the session has a dispute to acknowledge.
    pub fn acknowledge_dispute(
        &self,
        host_id: &str,
        session_id: &str,
        ack: &Acknowledgement,
    ) -> rusqlite::Result<bool> {
        let n = self.conn.execute(
            "UPDATE disputes SET acknowledged_note = ?3, acknowledged_at = ?4, acknowledged_by = ?5
             WHERE host_id = ?1 AND session_id = ?2",
            params![host_id, session_id, ack.note, ack.at, ack.by],
        )?;
        Ok(n == 1)
    }

    /// A session's decisions, oldest first.
    pub fn decisions(
        &self,
        host_id: &str,
        session_id: &str,
    ) -> rusqlite::Result<Vec<DecisionRecord>> {
        let mut st = self.conn.prepare(
            "SELECT * FROM decisions WHERE host_id = ?1 AND session_id = ?2 ORDER BY at, decision_id",
        )?;
        let rows = st.query_map([host_id, session_id], decision_from_row)?;
        rows.collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_run_once_and_a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.sqlite3");
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        store
            .conn
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(store);
        assert!(Store::open(&path).is_err());
    }

    #[test]
    fn every_commit_is_fsynced() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let synchronous: i64 = store
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(synchronous, 2, "synchronous=FULL (0 OFF, 1 NORMAL, 2 FULL)");
    }

    #[test]
    fn a_notification_is_claimed_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        assert!(store.claim_notification("h", "s", "e", "t").unwrap());
        assert!(!store.claim_notification("h", "s", "e", "t").unwrap());
    }
}
