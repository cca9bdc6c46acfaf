//! The approver's side: enrollment, the one-request summary, and decisions
//! (approve, decline, counter) with their approval policy, screening and
//! idempotency by `decision_id`.

use anp::api::{
    codes, DecisionAction, DecisionOutcome, DecisionRequest, EnrollRequest, EnrollResponse,
    GivenApproval, PendingDecision, SessionSummary, SignedHeaders, Summary, VendorIdentity,
};
use anp::canonical::sha256_hex;
use anp::keys::{self, SigningKey};
use anp::payload::Approval;
use anp::{signed, Actor, EventKind};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::admin::{parse_status, plausible_email};
use crate::auth::Approver;
use crate::domain::{self, Org};
use crate::error::ApiError;
use crate::store::{self, Author, Session};
use crate::{ids, validate};

/// `POST /enroll`: a one-time, unexpired code plus proof of possession
/// makes an approver of the code's org.
pub fn enroll(
    conn: &Connection,
    req: &EnrollRequest,
    platform_public: &str,
    platform_fingerprint: &str,
    now: OffsetDateTime,
) -> Result<EnrollResponse, ApiError> {
    let key = keys::parse_public_key(&req.public_key)
        .map_err(|e| ApiError::Invalid(format!("public_key: {e}.")))?;
    if !keys::verify_b64(
        &key,
        signed::registration_proof_string(&req.public_key).as_bytes(),
        &req.proof,
    ) {
        return Err(ApiError::refused(400, codes::BAD_PROOF, "proof is not a valid signature by public_key over \"ANP/0.1\\nregister\\n<public_key>\"."));
    }
    let bad_code = || {
        ApiError::refused(403, codes::BAD_ENROLLMENT_CODE, "The enrollment code is unknown, already used or expired; ask the host's admin for a new one.")
    };
    let row: Option<(String, String, i64, Option<String>)> = conn
        .query_row(
            "SELECT org_handle, email, expires_at, used_at FROM enrollment_codes WHERE code_hash = ?1",
            [ids::code_hash(&req.code)],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((org_handle, email, expires_at, used_at)) = row else {
        return Err(bad_code());
    };
    if used_at.is_some() || expires_at <= now.unix_timestamp() {
        return Err(bad_code());
    }
    if !plausible_email(&req.email) || !req.email.eq_ignore_ascii_case(&email) {
        return Err(ApiError::Invalid(format!(
            "email must be the address the code was issued for ({email})."
        )));
    }
    if req.name.trim().is_empty() || req.name.chars().count() > 160 {
        return Err(ApiError::Invalid(
            "name must be 1 to 160 characters.".into(),
        ));
    }
    let id = ids::uuid();
    let at = anp::api::format_timestamp(now);
    conn.execute(
        "UPDATE enrollment_codes SET used_at = ?2 WHERE code_hash = ?1",
        params![ids::code_hash(&req.code), at],
    )?;
    conn.execute(
        "INSERT INTO approvers (id, org_handle, name, email, public_key, fingerprint, enrolled_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![id, org_handle, req.name.trim(), email, req.public_key, keys::fingerprint(&key), at],
    )?;
    Ok(EnrollResponse {
        approver_id: id,
        fingerprint: keys::fingerprint(&key),
        platform_key: platform_public.to_owned(),
        platform_fingerprint: platform_fingerprint.to_owned(),
        protocol: anp::PROTOCOL.to_owned(),
    })
}

fn approvals_given(
    conn: &Connection,
    session_id: &str,
    reference: &str,
) -> Result<Vec<(String, Approval)>, ApiError> {
    let mut stmt = conn.prepare_cached(
        // A revoked approver's approval no longer counts towards the policy.
        "SELECT p.approver_id, p.approval FROM approvals p JOIN approvers a ON a.id = p.approver_id
         WHERE p.session_id = ?1 AND p.ref = ?2 AND a.revoked_at IS NULL ORDER BY p.recorded_at, p.rowid",
    )?;
    let rows = stmt.query_map(params![session_id, reference], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (who, text) = row?;
        let approval: Approval =
            serde_json::from_str(&text).map_err(|e| ApiError::Internal(e.to_string()))?;
        out.push((who, approval));
    }
    Ok(out)
}

/// A pending decision row.
struct Pending {
    reference: String,
    seq: u64,
    answers: Option<String>,
    kind: String,
    actor: String,
    expires_at: String,
    payload: Value,
    approvals_required: u32,
    held_reason: Option<String>,
}

fn pending_rows(
    conn: &Connection,
    session_id: &str,
    only: Option<&str>,
) -> Result<Vec<Pending>, ApiError> {
    let mut stmt = conn.prepare_cached(
        "SELECT ref, seq, answers, kind, actor, expires_at, payload, approvals_required, held_reason
         FROM pending WHERE session_id = ?1 AND state = 'open' AND (?2 IS NULL OR ref = ?2) ORDER BY seq DESC, created_at",
    )?;
    let rows = stmt.query_map(params![session_id, only], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, u64>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, String>(6)?,
            r.get::<_, u32>(7)?,
            r.get::<_, Option<String>>(8)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (
            reference,
            seq,
            answers,
            kind,
            actor,
            expires_at,
            payload,
            approvals_required,
            held_reason,
        ) = row?;
        out.push(Pending {
            reference,
            seq,
            answers,
            kind,
            actor,
            expires_at,
            payload: serde_json::from_str(&payload)
                .map_err(|e| ApiError::Internal(e.to_string()))?,
            approvals_required,
            held_reason,
        });
    }
    Ok(out)
}

/// `GET /summary`: every session of the approver's org with its head and
/// pending decisions, in one answer.
pub fn summary(conn: &Connection, approver: &Approver) -> Result<Summary, ApiError> {
    let mut stmt = conn.prepare(
        "SELECT s.id FROM sessions s WHERE s.org_handle = ?1 ORDER BY s.opened_at, s.id",
    )?;
    let ids: Vec<String> = stmt
        .query_map([&approver.org_handle], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut sessions = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(s) = store::load_session(conn, &id)? else {
            continue;
        };
        let vendor = conn.query_row(
            "SELECT id, agent_name, vendor_name, fingerprint, status FROM agents WHERE id = ?1",
            [&s.agent_id],
            |r| {
                Ok(VendorIdentity {
                    agent_id: r.get(0)?,
                    agent_name: r.get(1)?,
                    vendor_name: r.get(2)?,
                    fingerprint: r.get(3)?,
                    status: parse_status(&r.get::<_, String>(4)?),
                })
            },
        )?;
        let mut pending = Vec::new();
        if s.status == "open" {
            for p in pending_rows(conn, &s.id, None)? {
                let given = approvals_given(conn, &s.id, &p.reference)?;
                pending.push(PendingDecision {
                    seq: p.seq,
                    event_hash: p.reference.clone(),
                    kind: EventKind::parse(&p.kind).unwrap_or(EventKind::Offer),
                    actor: if p.actor == "buyer" {
                        Actor::Buyer
                    } else {
                        Actor::VendorAgent
                    },
                    expires_at: p.expires_at,
                    approvals: given
                        .into_iter()
                        .map(|(_, a)| GivenApproval {
                            approved_by: a.approved_by,
                            at: a.at,
                        })
                        .collect(),
                    approvals_required: p.approvals_required,
                    draft: p.reference.starts_with("draft:").then_some(p.payload),
                    held_reason: p.held_reason,
                });
            }
        }
        sessions.push(SessionSummary {
            id: s.id.clone(),
            status: s.status.clone(),
            sandbox: s.sandbox,
            vendor,
            event_count: s.event_count,
            chain_head: s.chain_head.clone(),
            pending,
        });
    }
    Ok(Summary {
        protocol: anp::PROTOCOL.to_owned(),
        sessions,
    })
}

/// The session an approver may see; anything else is the uniform refusal.
pub fn visible_session(
    conn: &Connection,
    approver: &Approver,
    session_id: &str,
) -> Result<Session, ApiError> {
    match store::load_session(conn, session_id)? {
        Some(s) if s.org_handle == approver.org_handle => Ok(s),
        _ => Err(ApiError::Unauthorized),
    }
}

/// A decision's result before the log is attached.
pub struct Decided {
    /// What happened.
    pub outcome: DecisionOutcome,
    /// A sentence for the console.
    pub detail: String,
}

fn outcome_text(o: DecisionOutcome) -> &'static str {
    match o {
        DecisionOutcome::Appended => "appended",
        DecisionOutcome::AwaitingApprovals => "awaiting_approvals",
        DecisionOutcome::Held => "held",
    }
}

fn parse_outcome(text: &str) -> DecisionOutcome {
    match text {
        "appended" => DecisionOutcome::Appended,
        "awaiting_approvals" => DecisionOutcome::AwaitingApprovals,
        _ => DecisionOutcome::Held,
    }
}

/// What the host received, kept verbatim.
pub struct Received<'a> {
    /// Body bytes as sent.
    pub body: &'a [u8],
    /// The four signed headers as sent.
    pub headers: &'a SignedHeaders,
}

/// `POST /sessions/:id/decisions`: applies (or replays) one decision.
pub fn decide(
    conn: &Connection,
    platform: &SigningKey,
    approver: &Approver,
    session: &mut Session,
    received: Received<'_>,
    now: OffsetDateTime,
) -> Result<Decided, ApiError> {
    let req: DecisionRequest = crate::body::parse_json(received.body, "decision")?;
    if uuid::Uuid::parse_str(&req.decision_id).is_err() {
        return Err(ApiError::Invalid("decision_id must be a UUID.".into()));
    }
    let body_hash = sha256_hex(received.body);
    let earlier: Option<(String, String, String, String, String)> = conn
        .query_row(
            "SELECT approver_id, session_id, body_sha256, outcome, detail FROM decisions WHERE decision_id = ?1",
            [&req.decision_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .optional()?;
    if let Some((who, sid, hash, outcome, detail)) = earlier {
        if who == approver.id && sid == session.id && hash == body_hash {
            return Ok(Decided {
                outcome: parse_outcome(&outcome),
                detail,
            });
        }
        return Err(ApiError::refused(
            409,
            codes::DECISION_CONFLICT,
            format!(
                "decision_id {} was already used for a different decision.",
                req.decision_id
            ),
        ));
    }
    let decided = apply(conn, platform, approver, session, &req, now)?;
    let headers =
        serde_json::to_string(received.headers).map_err(|e| ApiError::Internal(e.to_string()))?;
    conn.execute(
        "INSERT INTO decisions (decision_id, approver_id, session_id, body, body_sha256, signed_headers, outcome, detail, received_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![req.decision_id, approver.id, session.id, received.body, body_hash, headers, outcome_text(decided.outcome), decided.detail, anp::api::format_timestamp(now)],
    )?;
    Ok(decided)
}

fn state_error(
    conn: &Connection,
    session: &Session,
    reference: &str,
) -> Result<ApiError, ApiError> {
    if session.status != "open" {
        return Ok(ApiError::refused(
            409,
            codes::SESSION_CLOSED,
            format!(
                "Session {} is {}; no decision can be applied.",
                session.id, session.status
            ),
        ));
    }
    if !reference.starts_with("draft:") {
        if let Some(e) = store::find_event(conn, &session.id, reference)? {
            if e.kind.is_offer() {
                return Ok(ApiError::refused(409, codes::NOT_STANDING, format!("The offer at seq {} is no longer the standing offer; a later event answered it.", e.seq)));
            }
        }
    }
    Ok(ApiError::refused(
        409,
        codes::NO_STANDING_OFFER,
        format!("There is no pending decision {reference} in this session."),
    ))
}

fn screen_outbound(org: &Org, payload: &Value) -> Option<String> {
    match org.screen() {
        Ok(screen) => screen
            .check(payload)
            .err()
            .map(|l| format!("Held by outbound screening: {}.", l.reason)),
        Err(e) => Some(format!("Held: {e}.")),
    }
}

fn hold(
    conn: &Connection,
    session: &Session,
    reference: &str,
    reason: String,
) -> Result<Decided, ApiError> {
    conn.execute(
        "UPDATE pending SET held_reason = ?3 WHERE session_id = ?1 AND ref = ?2",
        params![session.id, reference, reason],
    )?;
    Ok(Decided {
        outcome: DecisionOutcome::Held,
        detail: reason,
    })
}

fn resolve(
    conn: &Connection,
    session: &Session,
    reference: &str,
    state: &str,
) -> Result<(), ApiError> {
    conn.execute(
        "UPDATE pending SET state = ?3 WHERE session_id = ?1 AND ref = ?2",
        params![session.id, reference, state],
    )?;
    Ok(())
}

fn apply(
    conn: &Connection,
    platform: &SigningKey,
    approver: &Approver,
    session: &mut Session,
    req: &DecisionRequest,
    now: OffsetDateTime,
) -> Result<Decided, ApiError> {
    let reference = req.in_response_to.as_str();
    let Some(pending) = (if session.status == "open" {
        pending_rows(conn, &session.id, Some(reference))?.pop()
    } else {
        None
    }) else {
        return Err(state_error(conn, session, reference)?);
    };
    let org = domain::load_org(conn, &session.org_handle)?
        .ok_or_else(|| ApiError::Internal("session org missing".into()))?;
    let standing = domain::standing_offer(conn, session)?;
    let is_draft = reference.starts_with("draft:");
    let answered = if is_draft {
        pending.answers.clone().unwrap_or_default()
    } else {
        reference.to_owned()
    };
    if standing.as_ref().map(|e| e.event_hash.as_str()) != Some(answered.as_str()) {
        return Err(state_error(conn, session, &answered)?);
    }
    let at = anp::api::format_timestamp(now);
    match (req.action, is_draft) {
        (DecisionAction::Approve, false) => {
            approve(conn, platform, approver, session, &org, &pending, req, now)
        }
        (DecisionAction::Approve, true) => {
            let draft = pending.payload.clone();
            send_counter(conn, platform, session, &org, reference, draft, now)
        }
        (DecisionAction::Decline, true) => {
            resolve(conn, session, reference, "discarded")?;
            Ok(Decided {
                outcome: DecisionOutcome::Appended,
                detail: "The draft was discarded; nothing was sent.".into(),
            })
        }
        (DecisionAction::Decline, false) => {
            let reason = req.reason.as_deref().map(str::trim).unwrap_or_default();
            if reason.is_empty() || reason.chars().count() > 4000 {
                return Err(ApiError::Invalid(
                    "decline needs a reason of 1 to 4000 characters.".into(),
                ));
            }
            let payload = json!({ "reason": reason });
            validate::payload(EventKind::Decline, &payload)?;
            if let Some(why) = screen_outbound(&org, &payload) {
                return hold(conn, session, reference, why);
            }
            store::append(
                conn,
                session,
                Actor::Buyer,
                EventKind::Decline,
                payload,
                Author::Platform(platform),
                at,
            )?;
            domain::supersede_pending(conn, &session.id)?;
            session.standing_seq = None;
            store::save_session_state(conn, session)?;
            Ok(Decided {
                outcome: DecisionOutcome::Appended,
                detail: format!("Declined the offer at seq {}.", pending.seq),
            })
        }
        (DecisionAction::Counter, _) => {
            let offer = req
                .offer
                .clone()
                .ok_or_else(|| ApiError::Invalid("counter needs an offer.".into()))?;
            send_counter(conn, platform, session, &org, reference, offer, now)
        }
    }
}

fn send_counter(
    conn: &Connection,
    platform: &SigningKey,
    session: &mut Session,
    org: &Org,
    reference: &str,
    offer: Value,
    now: OffsetDateTime,
) -> Result<Decided, ApiError> {
    validate::payload(EventKind::CounterOffer, &offer)?;
    domain::require_future_expiry(&offer, now, "counter-offer")?;
    if let Some(why) = screen_outbound(org, &offer) {
        return hold(conn, session, reference, why);
    }
    let event = store::append(
        conn,
        session,
        Actor::Buyer,
        EventKind::CounterOffer,
        offer,
        Author::Platform(platform),
        anp::api::format_timestamp(now),
    )?;
    domain::supersede_pending(conn, &session.id)?;
    session.standing_seq = Some(event.seq);
    session.buyer_rounds += 1;
    store::save_session_state(conn, session)?;
    Ok(Decided {
        outcome: DecisionOutcome::Appended,
        detail: format!("Sent the counter-offer as seq {}.", event.seq),
    })
}

fn verify_approval(
    approver: &Approver,
    reference: &str,
    approval: &Approval,
    now: OffsetDateTime,
) -> Result<(), ApiError> {
    if approval.approved_by != approver.email {
        return Err(ApiError::Invalid(format!(
            "approval.approved_by must be your enrolled email ({}).",
            approver.email
        )));
    }
    let Some(at) = anp::api::parse_timestamp(&approval.at) else {
        return Err(ApiError::Invalid(
            "approval.at must be an ISO 8601 time.".into(),
        ));
    };
    if at > now + time::Duration::seconds(anp::api::TIMESTAMP_WINDOW_SECS) {
        return Err(ApiError::Invalid(
            "approval.at is in the future; sign the approval at the time of the decision.".into(),
        ));
    }
    let key = keys::parse_public_key(&approver.public_key)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    anp::approval::verify_approval(approval, reference, &key).map_err(|e| match e {
        anp::approval::ApprovalError::NotHuman(_) => ApiError::Invalid(format!("approval: {e}.")),
        _ => ApiError::refused(400, codes::BAD_SIGNATURE, format!(
            "approval: {e}; sign \"ANP/0.2\\napproval\\n<in_response_to>\\n<approved_by>\\n<at>\" with your enrolled key."
        )),
    })?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn approve(
    conn: &Connection,
    platform: &SigningKey,
    approver: &Approver,
    session: &mut Session,
    org: &Org,
    pending: &Pending,
    req: &DecisionRequest,
    now: OffsetDateTime,
) -> Result<Decided, ApiError> {
    let approval = req
        .approval
        .as_ref()
        .ok_or_else(|| ApiError::Invalid("approve needs an approval signed by your key.".into()))?;
    domain::require_future_expiry(&pending.payload, now, "offer")?;
    verify_approval(approver, &pending.reference, approval, now)?;
    let mut given = approvals_given(conn, &session.id, &pending.reference)?;
    if given
        .iter()
        .any(|(who, a)| who == &approver.id || a.approved_by == approver.email)
    {
        return Err(ApiError::refused(
            409,
            codes::POLICY,
            format!(
                "You have already approved this offer; the policy needs {} distinct approvers.",
                pending.approvals_required
            ),
        ));
    }
    let stored = serde_json::to_string(approval).map_err(|e| ApiError::Internal(e.to_string()))?;
    conn.execute(
        "INSERT INTO approvals (session_id, ref, approver_id, approval, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![session.id, pending.reference, approver.id, stored, anp::api::format_timestamp(now)],
    )?;
    given.push((approver.id.clone(), approval.clone()));
    let count = given.len() as u32;
    if count < pending.approvals_required {
        let missing = pending.approvals_required - count;
        return Ok(Decided {
            outcome: DecisionOutcome::AwaitingApprovals,
            detail: format!(
                "Approval {count} of {} recorded; {missing} more distinct approver(s) needed.",
                pending.approvals_required
            ),
        });
    }
    let mut approvals = given.into_iter().map(|(_, a)| a);
    let first = approvals
        .next()
        .ok_or_else(|| ApiError::Internal("no approval".into()))?;
    let rest: Vec<Approval> = approvals.collect();
    let mut payload = json!({ "in_response_to": pending.reference, "approval": first });
    if !rest.is_empty() {
        payload["approvals"] =
            serde_json::to_value(&rest).map_err(|e| ApiError::Internal(e.to_string()))?;
    }
    validate::payload(EventKind::Accept, &payload)?;
    if let Some(why) = screen_outbound(org, &payload) {
        return hold(conn, session, &pending.reference, why);
    }
    let event = store::append(
        conn,
        session,
        Actor::Buyer,
        EventKind::Accept,
        payload,
        Author::Platform(platform),
        anp::api::format_timestamp(now),
    )?;
    domain::supersede_pending(conn, &session.id)?;
    session.standing_seq = None;
    session.status = "accepted".into();
    store::save_session_state(conn, session)?;
    Ok(Decided {
        outcome: DecisionOutcome::Appended,
        detail: format!(
            "Accepted the offer at seq {} (accept is seq {}).",
            pending.seq, event.seq
        ),
    })
}
