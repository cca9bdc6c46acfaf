//! Sessions and their events in SQLite: loading, the log document, and the
//! one atomic append. Every append runs inside the caller's IMMEDIATE
//! transaction, reads the head there and inserts `seq + 1` under the
//! `(session_id, seq)` primary key, so concurrent submitters can never fork
//! or skip a seq.

use anp::event::{
    ChainClaim, ChainHead, Event, EventDraft, LogDocument, LogKeys, PublishedKey, SessionInfo,
};
use anp::keys::SigningKey;
use anp::{Actor, EventKind};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use crate::error::ApiError;

/// A session row.
#[derive(Debug, Clone)]
pub struct Session {
    /// Session id.
    pub id: String,
    /// The vendor agent that opened it.
    pub agent_id: String,
    /// The buyer org.
    pub org_handle: String,
    /// True for the sandbox.
    pub sandbox: bool,
    /// `open`, `closed`, `accepted`.
    pub status: String,
    /// Open time.
    pub opened_at: String,
    /// Close time.
    pub closed_at: Option<String>,
    /// Events so far.
    pub event_count: u64,
    /// Last event hash.
    pub chain_head: String,
    /// Seq of the standing offer, if any.
    pub standing_seq: Option<u64>,
    /// Counter-offers the buyer has sent.
    pub buyer_rounds: u32,
}

/// Who signs an event being appended.
pub enum Author<'a> {
    /// The host's platform key.
    Platform(&'a SigningKey),
    /// The vendor's authorship signature, already checked.
    Vendor {
        /// The signature as submitted.
        signature: String,
        /// The vendor key's fingerprint.
        fingerprint: String,
    },
}

/// Loads a session.
pub fn load_session(conn: &Connection, id: &str) -> Result<Option<Session>, ApiError> {
    Ok(conn
        .query_row(
            "SELECT id, agent_id, org_handle, sandbox, status, opened_at, closed_at, event_count, chain_head, standing_seq, buyer_rounds
             FROM sessions WHERE id = ?1",
            [id],
            |r| {
                Ok(Session {
                    id: r.get(0)?,
                    agent_id: r.get(1)?,
                    org_handle: r.get(2)?,
                    sandbox: r.get(3)?,
                    status: r.get(4)?,
                    opened_at: r.get(5)?,
                    closed_at: r.get(6)?,
                    event_count: r.get(7)?,
                    chain_head: r.get(8)?,
                    standing_seq: r.get(9)?,
                    buyer_rounds: r.get(10)?,
                })
            },
        )
        .optional()?)
}

/// Creates an empty session row.
pub fn insert_session(conn: &Connection, s: &Session) -> Result<(), ApiError> {
    conn.execute(
        "INSERT INTO sessions (id, agent_id, org_handle, sandbox, status, opened_at, closed_at, event_count, chain_head, standing_seq, buyer_rounds)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, 0, ?7, NULL, 0)",
        params![s.id, s.agent_id, s.org_handle, s.sandbox, s.status, s.opened_at, s.chain_head],
    )?;
    Ok(())
}

/// Saves the mutable parts of a session (status, standing offer, rounds).
pub fn save_session_state(conn: &Connection, s: &Session) -> Result<(), ApiError> {
    conn.execute(
        "UPDATE sessions SET status = ?2, closed_at = ?3, standing_seq = ?4, buyer_rounds = ?5 WHERE id = ?1",
        params![s.id, s.status, s.closed_at, s.standing_seq, s.buyer_rounds],
    )?;
    Ok(())
}

fn parse_event(text: &str) -> Result<Event, ApiError> {
    serde_json::from_str(text)
        .map_err(|e| ApiError::Internal(format!("stored event unreadable: {e}")))
}

/// Events after `after` (0: all), in order.
pub fn load_events(
    conn: &Connection,
    session_id: &str,
    after: u64,
) -> Result<Vec<Event>, ApiError> {
    let mut stmt = conn.prepare_cached(
        "SELECT body FROM events WHERE session_id = ?1 AND seq > ?2 ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![session_id, after], |r| r.get::<_, String>(0))?;
    let mut events = Vec::new();
    for row in rows {
        events.push(parse_event(&row?)?);
    }
    Ok(events)
}

/// One event by seq.
pub fn load_event(
    conn: &Connection,
    session_id: &str,
    seq: u64,
) -> Result<Option<Event>, ApiError> {
    let body: Option<String> = conn
        .query_row(
            "SELECT body FROM events WHERE session_id = ?1 AND seq = ?2",
            params![session_id, seq],
            |r| r.get(0),
        )
        .optional()?;
    body.map(|b| parse_event(&b)).transpose()
}

/// One event by hash.
pub fn find_event(
    conn: &Connection,
    session_id: &str,
    event_hash: &str,
) -> Result<Option<Event>, ApiError> {
    let body: Option<String> = conn
        .query_row(
            "SELECT body FROM events WHERE session_id = ?1 AND event_hash = ?2",
            params![session_id, event_hash],
            |r| r.get(0),
        )
        .optional()?;
    body.map(|b| parse_event(&b)).transpose()
}

/// Appends one event at the session's head, inside the caller's transaction.
pub fn append(
    conn: &Connection,
    session: &mut Session,
    actor: Actor,
    kind: EventKind,
    payload: Value,
    author: Author<'_>,
    at: String,
) -> Result<Event, ApiError> {
    // Re-read the head inside the transaction: the row is the authority.
    let (count, head): (u64, String) = conn.query_row(
        "SELECT event_count, chain_head FROM sessions WHERE id = ?1",
        [&session.id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let prev = ChainHead {
        seq: count,
        event_hash: head,
    };
    let draft = EventDraft {
        session_id: &session.id,
        prev: &prev,
        actor,
        kind,
        payload,
        at,
    };
    let event = match author {
        Author::Platform(key) => draft.seal_signed(key),
        Author::Vendor {
            signature,
            fingerprint,
        } => draft.seal(Some(signature), Some(fingerprint)),
    };
    let body = serde_json::to_string(&event).map_err(|e| ApiError::Internal(e.to_string()))?;
    conn.prepare_cached(
        "INSERT INTO events (session_id, seq, event_hash, body) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![session.id, event.seq, event.event_hash, body])?;
    conn.prepare_cached(
        "UPDATE sessions SET event_count = ?2, chain_head = ?3 WHERE id = ?1 AND event_count = ?4",
    )?
    .execute(params![session.id, event.seq, event.event_hash, count])?;
    session.event_count = event.seq;
    session.chain_head = event.event_hash.clone();
    Ok(event)
}

fn log_keys(
    conn: &Connection,
    session: &Session,
    platform_public: &str,
    platform_fingerprint: &str,
) -> Result<LogKeys, ApiError> {
    let (vendor_key, vendor_fp): (String, String) = conn.query_row(
        "SELECT public_key, fingerprint FROM agents WHERE id = ?1",
        [&session.agent_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(LogKeys {
        note: Some("vendor_agent: the registered agent key; buyer: this host's platform key, also published at /.well-known/anp.json".into()),
        vendor_agent: Some(PublishedKey {
            public_key: vendor_key,
            fingerprint: vendor_fp,
        }),
        buyer: Some(PublishedKey {
            public_key: platform_public.to_owned(),
            fingerprint: platform_fingerprint.to_owned(),
        }),
    })
}

fn chain_claim(session: &Session) -> ChainClaim {
    ChainClaim {
        // Every stored event was sealed by EventDraft at append time, and
        // every vendor signature checked then.
        verified: true,
        head: session.chain_head.clone(),
    }
}

/// The verifiable log document (SPEC §6.4), with the events after `after`.
pub fn log_document(
    conn: &Connection,
    session: &Session,
    platform_public: &str,
    platform_fingerprint: &str,
    after: u64,
) -> Result<LogDocument, ApiError> {
    Ok(LogDocument {
        protocol: anp::PROTOCOL.to_owned(),
        session: info(session),
        chain: chain_claim(session),
        keys: log_keys(conn, session, platform_public, platform_fingerprint)?,
        events: load_events(conn, &session.id, after)?,
    })
}

/// The log document of [`log_document`] as JSON text, built from the stored
/// event text without parsing it again: the hot path of every append and
/// poll, whose cost would otherwise grow with the session's length.
pub fn log_json(
    conn: &Connection,
    session: &Session,
    platform_public: &str,
    platform_fingerprint: &str,
    after: u64,
) -> Result<String, ApiError> {
    #[derive(serde::Serialize)]
    struct RawLog<'a> {
        protocol: &'a str,
        session: SessionInfo,
        chain: ChainClaim,
        keys: LogKeys,
        events: Vec<Box<serde_json::value::RawValue>>,
    }
    let mut stmt = conn.prepare_cached(
        "SELECT body FROM events WHERE session_id = ?1 AND seq > ?2 ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![session.id, after], |r| r.get::<_, String>(0))?;
    let mut events = Vec::new();
    for row in rows {
        let raw = serde_json::value::RawValue::from_string(row?)
            .map_err(|e| ApiError::Internal(format!("stored event unreadable: {e}")))?;
        events.push(raw);
    }
    let raw = RawLog {
        protocol: anp::PROTOCOL,
        session: info(session),
        chain: chain_claim(session),
        keys: log_keys(conn, session, platform_public, platform_fingerprint)?,
        events,
    };
    serde_json::to_string(&raw).map_err(|e| ApiError::Internal(e.to_string()))
}

/// The `session` block.
pub fn info(session: &Session) -> SessionInfo {
    SessionInfo {
        id: session.id.clone(),
        sandbox: session.sandbox,
        status: session.status.clone(),
        opened_at: session.opened_at.clone(),
        closed_at: session.closed_at.clone(),
        event_count: session.event_count,
        chain_head: session.chain_head.clone(),
    }
}
