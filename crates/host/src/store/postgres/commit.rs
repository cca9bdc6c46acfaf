//! An ANP session's commit on PostgreSQL as one statement. The commit most
//! appends make (an open session's events, nothing else) is
//! [`PLAIN_APPEND`]; any other is a call of
//! `countersign_commit`, a server-side function a migration creates, that
//! compares and moves the session row on (under its row lock, so commits
//! to one session from every process serialize), inserts the events,
//! pending decisions, approvals and decision, and answers the session's
//! log as the commit left it. One round trip, one transaction, instead of
//! `BEGIN`, a statement per row, `COMMIT` and a read of the log: the
//! statements a backend runs for each append are what limits a
//! PostgreSQL deployment on a small machine (`crates/anp-loadgen`).
//!
//! SQLite keeps the same commit as statements in its writer's savepoint
//! (`negotiation.rs`, `apply`): its statements cost no round trip.

use tokio_postgres::types::ToSql;

use super::PgStore;
use crate::store::negotiation::{is_draft, session_from};
use crate::store::sql::{i, i32_of, is_unique_violation, Row};
use crate::store::{
    Commit, CommitError, LogSnapshot, NegotiationRepo as _, PendingChange, Session, StoreError,
};

/// The function's text, with the parts its versions differ in: what runs
/// before it (`head`), the approvals' array parameters and their insert.
macro_rules! commit_function {
    ($head:literal, $approval_params:literal, $approval_insert:literal) => {
        concat!(
            $head,
            r#"
    CREATE FUNCTION countersign_commit(
        p_fresh BOOLEAN, p_id TEXT, p_agent TEXT, p_org TEXT, p_sandbox BOOLEAN,
        p_status TEXT, p_opened TEXT, p_closed TEXT, p_count BIGINT, p_head TEXT,
        p_standing BIGINT, p_rounds INTEGER, p_version BIGINT,
        p_event_seq BIGINT[], p_event_hash TEXT[], p_event_body TEXT[],
        p_supersede BOOLEAN,
        p_change_ref TEXT[], p_change_held TEXT[], p_change_state TEXT[],
        p_pending_ref TEXT[], p_pending_seq BIGINT[], p_pending_answers TEXT[],
        p_pending_kind TEXT[], p_pending_actor TEXT[], p_pending_expires TEXT[],
        p_pending_payload TEXT[], p_pending_required INTEGER[], p_pending_draft BOOLEAN[],
        p_pending_held TEXT[], p_pending_created TEXT[], p_pending_route TEXT[],
        p_approval_ref TEXT[], p_approval_approver TEXT[], p_approval_text TEXT[],
        p_approval_recorded TEXT[], p_approval_ordinal INTEGER[],
        "#,
            $approval_params,
            r#"
        p_decision_id TEXT, p_decision_approver TEXT, p_decision_body BYTEA,
        p_decision_sha256 TEXT, p_decision_headers TEXT, p_decision_outcome TEXT,
        p_decision_detail TEXT, p_decision_received TEXT,
        p_log_after BIGINT,
        OUT committed BOOLEAN,
        OUT o_id TEXT, OUT o_agent_id TEXT, OUT o_org_handle TEXT, OUT o_sandbox BOOLEAN,
        OUT o_status TEXT, OUT o_opened_at TEXT, OUT o_closed_at TEXT, OUT o_event_count BIGINT,
        OUT o_chain_head TEXT, OUT o_standing_seq BIGINT, OUT o_buyer_rounds INTEGER,
        OUT o_version BIGINT, OUT o_public_key TEXT, OUT o_fingerprint TEXT, OUT o_events TEXT[]
    ) LANGUAGE plpgsql AS $$
    #variable_conflict use_column
    BEGIN
        IF p_fresh THEN
            INSERT INTO sessions (id, agent_id, org_handle, sandbox, status, opened_at, closed_at,
                                  event_count, chain_head, standing_seq, buyer_rounds, version)
            VALUES (p_id, p_agent, p_org, p_sandbox, p_status, p_opened, p_closed,
                    p_count, p_head, p_standing, p_rounds, 1);
        ELSE
            UPDATE sessions SET status = p_status, closed_at = p_closed, event_count = p_count,
                chain_head = p_head, standing_seq = p_standing, buyer_rounds = p_rounds,
                version = version + 1
            WHERE id = p_id AND version = p_version;
            IF NOT FOUND THEN
                committed := FALSE;
                RETURN;
            END IF;
        END IF;
        IF cardinality(p_event_seq) > 0 THEN
            INSERT INTO events (session_id, seq, event_hash, body)
            SELECT p_id, e.seq, e.hash, e.body
            FROM unnest(p_event_seq, p_event_hash, p_event_body) AS e(seq, hash, body);
        END IF;
        IF p_supersede THEN
            UPDATE pending SET state = 'superseded' WHERE session_id = p_id AND state = 'open';
        END IF;
        FOR n IN 1 .. coalesce(cardinality(p_change_ref), 0) LOOP
            IF p_change_held[n] IS NOT NULL THEN
                UPDATE pending SET held_reason = p_change_held[n]
                WHERE session_id = p_id AND ref = p_change_ref[n];
            ELSE
                UPDATE pending SET state = p_change_state[n]
                WHERE session_id = p_id AND ref = p_change_ref[n];
            END IF;
        END LOOP;
        IF cardinality(p_pending_ref) > 0 THEN
            INSERT INTO pending (session_id, ref, seq, answers, kind, actor, expires_at, payload,
                                 approvals_required, draft, held_reason, state, created_at, route)
            SELECT p_id, p.ref, p.seq, p.answers, p.kind, p.actor, p.expires, p.payload,
                   p.required, p.draft, p.held, 'open', p.created, p.route
            FROM unnest(p_pending_ref, p_pending_seq, p_pending_answers, p_pending_kind,
                        p_pending_actor, p_pending_expires, p_pending_payload,
                        p_pending_required, p_pending_draft, p_pending_held, p_pending_created,
                        p_pending_route)
                 AS p(ref, seq, answers, kind, actor, expires, payload, required, draft, held, created,
                      route);
        END IF;
"#,
            $approval_insert,
            r#"        IF p_decision_id IS NOT NULL THEN
            INSERT INTO decisions (decision_id, approver_id, session_id, body, body_sha256,
                                   signed_headers, outcome, detail, received_at)
            VALUES (p_decision_id, p_decision_approver, p_id, p_decision_body, p_decision_sha256,
                    p_decision_headers, p_decision_outcome, p_decision_detail, p_decision_received);
        END IF;
        committed := TRUE;
        IF p_log_after IS NOT NULL THEN
            SELECT s.id, s.agent_id, s.org_handle, s.sandbox, s.status, s.opened_at, s.closed_at,
                   s.event_count, s.chain_head, s.standing_seq, s.buyer_rounds, s.version,
                   a.public_key, a.fingerprint,
                   ARRAY(SELECT e.body FROM events e
                         WHERE e.session_id = s.id AND e.seq > p_log_after AND e.seq <= s.event_count
                         ORDER BY e.seq)
            INTO o_id, o_agent_id, o_org_handle, o_sandbox, o_status, o_opened_at, o_closed_at,
                 o_event_count, o_chain_head, o_standing_seq, o_buyer_rounds, o_version,
                 o_public_key, o_fingerprint, o_events
            FROM sessions s JOIN agents a ON a.id = s.agent_id
            WHERE s.id = p_id;
        END IF;
    END
    $$;
"#
        )
    };
}

/// The function, as a released migration creates it. Never edit it here:
/// a change is a new migration that replaces it (`COMMIT_FUNCTION_V2`).
///
/// It answers `committed = false` (and nothing else) when the session was
/// not at the version the commit was planned on; a key already taken
/// (an event's seq, a session id, a decision id) fails the call with a
/// unique violation, which the caller reads as the same conflict. With
/// `log_after` NULL it reads no log.
pub(crate) const COMMIT_FUNCTION: &str = commit_function!(
    "",
    "p_approval_step INTEGER[], p_approval_role TEXT[],",
    r#"        IF cardinality(p_approval_ref) > 0 THEN
            INSERT INTO approvals (session_id, ref, approver_id, approval, recorded_at, ordinal,
                                   step, role)
            SELECT p_id, a.ref, a.approver, a.approval, a.recorded, a.ordinal, a.step, a.role
            FROM unnest(p_approval_ref, p_approval_approver, p_approval_text,
                        p_approval_recorded, p_approval_ordinal, p_approval_step, p_approval_role)
                 AS a(ref, approver, approval, recorded, ordinal, step, role);
        END IF;
"#
);

/// The function as the stand-ins migration replaces it: an approval keeps
/// whom it was made for (`approvals.for_email`), one more array parameter
/// after the approvals' roles.
pub(crate) const COMMIT_FUNCTION_V2: &str = commit_function!(
    "
    DROP FUNCTION countersign_commit(BOOLEAN, TEXT, TEXT, TEXT, BOOLEAN, TEXT, TEXT, TEXT, BIGINT, TEXT, BIGINT, INTEGER, BIGINT, BIGINT[], TEXT[], TEXT[], BOOLEAN, TEXT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], INTEGER[], BOOLEAN[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], INTEGER[], INTEGER[], TEXT[], TEXT, TEXT, BYTEA, TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT);",
    "p_approval_step INTEGER[], p_approval_role TEXT[], p_approval_for TEXT[],",
    r#"        IF cardinality(p_approval_ref) > 0 THEN
            INSERT INTO approvals (session_id, ref, approver_id, approval, recorded_at, ordinal,
                                   step, role, for_email)
            SELECT p_id, a.ref, a.approver, a.approval, a.recorded, a.ordinal, a.step, a.role, a.for_email
            FROM unnest(p_approval_ref, p_approval_approver, p_approval_text,
                        p_approval_recorded, p_approval_ordinal, p_approval_step, p_approval_role,
                        p_approval_for)
                 AS a(ref, approver, approval, recorded, ordinal, step, role, for_email);
        END IF;
"#
);

/// The call, with every parameter in the function's order.
const CALL: &str = "SELECT * FROM countersign_commit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
     $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, \
     $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39, $40, $41, $42, $43, $44, $45, $46, \
     $47, $48, $49)";

/// The commit most appends make (a session already open moves on by its
/// events, and nothing else changes) as one plain statement: the same
/// compare-and-move of the session row, the same insert, the same answer
/// as [`CALL`] gives, without a function call over 49 parameters (most of
/// them empty arrays) and the statements a plpgsql body runs one by one.
/// Measured with `anp-loadgen --store postgres`: the function cost the
/// database about twice the time of the rows it writes.
///
/// No row when the session was not at version `$7`. The log it answers
/// (events after `$11`, when not NULL) joins the events already stored
/// with those this statement adds, which its own snapshot does not show;
/// the events up to the version compared are all in that snapshot, as the
/// commit that moved the session to it had committed them.
const PLAIN_APPEND: &str = "WITH moved AS (
         UPDATE sessions SET status = $2, closed_at = $3, event_count = $4, chain_head = $5,
             standing_seq = $6, buyer_rounds = $8, version = version + 1
         WHERE id = $1 AND version = $7
         RETURNING id, agent_id, org_handle, sandbox, status, opened_at, closed_at, event_count,
                   chain_head, standing_seq, buyer_rounds, version),
     added AS (
         INSERT INTO events (session_id, seq, event_hash, body)
         SELECT m.id, e.seq, e.hash, e.body
         FROM moved m, unnest($9::BIGINT[], $10::TEXT[], $12::TEXT[]) AS e(seq, hash, body)
         RETURNING seq, body)
     SELECT TRUE, m.id, m.agent_id, m.org_handle, m.sandbox, m.status, m.opened_at, m.closed_at,
            m.event_count, m.chain_head, m.standing_seq, m.buyer_rounds, m.version,
            a.public_key, a.fingerprint,
            CASE WHEN $11::BIGINT IS NULL THEN NULL ELSE ARRAY(
                SELECT l.body FROM (
                    SELECT e.seq, e.body FROM events e WHERE e.session_id = m.id AND e.seq > $11
                    UNION ALL
                    SELECT n.seq, n.body FROM added n WHERE n.seq > $11) AS l
                ORDER BY l.seq) END
     FROM moved m JOIN agents a ON a.id = m.agent_id";

/// The session's counters as PostgreSQL's columns hold them: its event
/// count, standing offer's seq, buyer rounds and the version it was read at.
fn counters(s: &Session) -> (i64, Option<i64>, i32, i64) {
    (
        i(s.event_count),
        s.standing_seq.map(i),
        i32_of(s.buyer_rounds),
        i(s.version),
    )
}

/// True for a commit [`PLAIN_APPEND`] makes: an open session's events and
/// its new state, and nothing else.
fn is_plain_append(c: &Commit) -> bool {
    !c.new_session
        && !c.supersede_pending
        && c.pending_changes.is_empty()
        && c.new_pending.is_empty()
        && c.approvals.is_empty()
        && c.decision.is_none()
}

/// A commit's rows as the function's array parameters, one array per
/// column.
#[derive(Default)]
struct Columns {
    event_seq: Vec<i64>,
    event_hash: Vec<String>,
    event_body: Vec<String>,
    change_ref: Vec<String>,
    change_held: Vec<Option<String>>,
    change_state: Vec<Option<String>>,
    pending_ref: Vec<String>,
    pending_seq: Vec<i64>,
    pending_answers: Vec<Option<String>>,
    pending_kind: Vec<String>,
    pending_actor: Vec<String>,
    pending_expires: Vec<String>,
    pending_payload: Vec<String>,
    pending_required: Vec<i32>,
    pending_draft: Vec<bool>,
    pending_held: Vec<Option<String>>,
    pending_created: Vec<String>,
    pending_route: Vec<Option<String>>,
    approval_ref: Vec<String>,
    approval_approver: Vec<String>,
    approval_text: Vec<String>,
    approval_recorded: Vec<String>,
    approval_ordinal: Vec<i32>,
    approval_step: Vec<i32>,
    approval_role: Vec<String>,
    approval_for: Vec<Option<String>>,
}

impl Columns {
    fn of(c: &Commit) -> Columns {
        let mut out = Columns::default();
        for e in &c.events {
            out.event_seq.push(i(e.seq));
            out.event_hash.push(e.event_hash.clone());
            out.event_body.push(e.body.clone());
        }
        for change in &c.pending_changes {
            match change {
                PendingChange::Held { reference, reason } => {
                    out.change_ref.push(reference.clone());
                    out.change_held.push(Some(reason.clone()));
                    out.change_state.push(None);
                }
                PendingChange::Resolved { reference, state } => {
                    out.change_ref.push(reference.clone());
                    out.change_held.push(None);
                    out.change_state.push(Some(state.clone()));
                }
            }
        }
        for p in &c.new_pending {
            let p = &p.row;
            out.pending_ref.push(p.reference.clone());
            out.pending_seq.push(i(p.seq));
            out.pending_answers.push(p.answers.clone());
            out.pending_kind.push(p.kind.clone());
            out.pending_actor.push(p.actor.clone());
            out.pending_expires.push(p.expires_at.clone());
            out.pending_payload.push(p.payload.clone());
            out.pending_required.push(i32_of(p.approvals_required));
            out.pending_draft.push(is_draft(&p.reference));
            out.pending_held.push(p.held_reason.clone());
            out.pending_created.push(p.created_at.clone());
            out.pending_route.push(p.route.clone());
        }
        for a in &c.approvals {
            out.approval_ref.push(a.reference.clone());
            out.approval_approver.push(a.approver_id.clone());
            out.approval_text.push(a.approval.clone());
            out.approval_recorded.push(a.recorded_at.clone());
            out.approval_ordinal.push(i32_of(a.ordinal));
            out.approval_step.push(i32_of(a.step));
            out.approval_role.push(a.role.clone());
            out.approval_for.push(a.for_email.clone());
        }
        out
    }
}

impl PgStore {
    /// Applies `c` in one statement ([`PLAIN_APPEND`] or a call of
    /// `countersign_commit`); with `log_after`, answers the session's log
    /// after that seq as the commit left it.
    pub(crate) async fn commit_session(
        &self,
        c: &Commit,
        log_after: Option<u64>,
    ) -> Result<Option<LogSnapshot>, CommitError> {
        let s = &c.session;
        let cols = Columns::of(c);
        // Only the events after those this process already holds.
        let asked_after = log_after.map(|after| self.logs.known(&s.id).max(after));
        let log_from = asked_after.map(i);
        let row = if is_plain_append(c) {
            self.plain_append(c, &cols, log_from).await?
        } else {
            self.call_commit(c, &cols, log_from).await?
        };
        let Some(row) = row else {
            return Err(CommitError::Conflict);
        };
        let (Some(after), Some(asked_after)) = (log_after, asked_after) else {
            return Ok(None);
        };
        let (session, vendor_key, vendor_fingerprint, fresh) = {
            let r = Row::Pg(&row);
            let fresh: Vec<String> = row.try_get(15).map_err(StoreError::from)?;
            (session_from(&r, 1)?, r.get(13)?, r.get(14)?, fresh)
        };
        drop(row);
        let events = match self
            .logs
            .join(&s.id, after, asked_after, fresh, session.event_count)
        {
            Some(events) => events,
            // The kept log was dropped meanwhile: read it.
            None => {
                return Ok(Some(self.log(&s.id, after).await?.ok_or_else(|| {
                    StoreError::Corrupt(format!("session {} has no log after its commit", s.id))
                })?))
            }
        };
        Ok(Some(LogSnapshot {
            session,
            vendor_key,
            vendor_fingerprint,
            events,
        }))
    }

    /// Runs [`PLAIN_APPEND`]; no row when the session had moved on.
    async fn plain_append(
        &self,
        c: &Commit,
        cols: &Columns,
        log_from: Option<i64>,
    ) -> Result<Option<tokio_postgres::Row>, CommitError> {
        let s = &c.session;
        let (event_count, standing, rounds, version) = counters(s);
        let params: [&(dyn ToSql + Sync); 12] = [
            &s.id,
            &s.status,
            &s.closed_at,
            &event_count,
            &s.chain_head,
            &standing,
            &version,
            &rounds,
            &cols.event_seq,
            &cols.event_hash,
            &log_from,
            &cols.event_body,
        ];
        self.query_commit(PLAIN_APPEND, &params).await
    }

    /// Sends one commit statement; a key already taken is a conflict.
    async fn query_commit(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<tokio_postgres::Row>, CommitError> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(super::store)?;
        self.traffic.sent(1);
        match client.query_opt(&stmt, params).await {
            Ok(row) => Ok(row),
            Err(e) if is_unique_violation(&e) => Err(CommitError::Conflict),
            Err(e) => Err(StoreError::from(e).into()),
        }
    }

    /// Runs `countersign_commit` for any other commit; no row when the
    /// session had moved on.
    async fn call_commit(
        &self,
        c: &Commit,
        cols: &Columns,
        log_from: Option<i64>,
    ) -> Result<Option<tokio_postgres::Row>, CommitError> {
        let s = &c.session;
        let d = c.decision.as_ref();
        let (event_count, standing, rounds, version) = counters(s);
        let (decision_id, decision_approver, decision_body, decision_sha256) = (
            d.map(|d| d.decision_id.as_str()),
            d.map(|d| d.approver_id.as_str()),
            d.map(|d| d.body.as_slice()),
            d.map(|d| d.body_sha256.as_str()),
        );
        let (decision_headers, decision_outcome, decision_detail, decision_received) = (
            d.map(|d| d.signed_headers.as_str()),
            d.map(|d| d.outcome.as_str()),
            d.map(|d| d.detail.as_str()),
            d.map(|d| d.received_at.as_str()),
        );
        let params: [&(dyn ToSql + Sync); 49] = [
            &c.new_session,
            &s.id,
            &s.agent_id,
            &s.org_handle,
            &s.sandbox,
            &s.status,
            &s.opened_at,
            &s.closed_at,
            &event_count,
            &s.chain_head,
            &standing,
            &rounds,
            &version,
            &cols.event_seq,
            &cols.event_hash,
            &cols.event_body,
            &c.supersede_pending,
            &cols.change_ref,
            &cols.change_held,
            &cols.change_state,
            &cols.pending_ref,
            &cols.pending_seq,
            &cols.pending_answers,
            &cols.pending_kind,
            &cols.pending_actor,
            &cols.pending_expires,
            &cols.pending_payload,
            &cols.pending_required,
            &cols.pending_draft,
            &cols.pending_held,
            &cols.pending_created,
            &cols.pending_route,
            &cols.approval_ref,
            &cols.approval_approver,
            &cols.approval_text,
            &cols.approval_recorded,
            &cols.approval_ordinal,
            &cols.approval_step,
            &cols.approval_role,
            &cols.approval_for,
            &decision_id,
            &decision_approver,
            &decision_body,
            &decision_sha256,
            &decision_headers,
            &decision_outcome,
            &decision_detail,
            &decision_received,
            &log_from,
        ];
        let row = self.query_commit(CALL, &params).await?;
        match row {
            Some(row) if row.try_get::<_, bool>(0).map_err(StoreError::from)? => Ok(Some(row)),
            _ => Ok(None),
        }
    }
}
