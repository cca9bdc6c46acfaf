//! The agent-side rules of a negotiation: registration, opening sessions,
//! and what a vendor may append when (SPEC §5, RFC-001), plus the pending
//! decisions every inbound offer opens. Pure of HTTP: each function takes
//! the open transaction and returns a typed [`ApiError`].

use anp::api::{
    codes, AgentStatus, OpenSessionRequest, RegisterRequest, RegisterResponse, SubmitEventRequest,
    Target,
};
use anp::canonical::canonical_hash;
use anp::keys::{self, SigningKey};
use anp::{signed, Actor, Event, EventKind};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::admin::{parse_status, plausible_email};
use crate::auth::Agent;
use crate::error::ApiError;
use crate::policy::Policy;
use crate::screening::Screen;
use crate::store::{self, Author, Session};
use crate::{buyer_agent, ids, validate};

/// An org as the domain needs it.
#[derive(Debug, Clone)]
pub struct Org {
    /// Handle.
    pub handle: String,
    /// Name (the envelope's party).
    pub name: String,
    /// True for the built-in sandbox.
    pub sandbox: bool,
    /// Disabled orgs are refused.
    pub disabled: bool,
    /// Stored policy JSON; `None` for the sandbox's built-in policy.
    pub policy: Option<String>,
}

impl Org {
    /// The org's policy, or why it cannot be read.
    pub fn policy(&self) -> Result<Policy, String> {
        match &self.policy {
            None => Ok(Policy::sandbox()),
            Some(text) => Policy::from_json(text).map_err(|e| e.to_string()),
        }
    }

    /// The org's outbound screen, or why it cannot run.
    pub fn screen(&self) -> Result<Screen, crate::screening::ScreenUnavailable> {
        Screen::from_stored(self.policy.as_deref())
    }
}

/// Loads an org by handle.
pub fn load_org(conn: &Connection, handle: &str) -> Result<Option<Org>, ApiError> {
    Ok(conn
        .query_row(
            "SELECT handle, name, sandbox, disabled, policy FROM orgs WHERE handle = ?1",
            [handle],
            |r| {
                Ok(Org {
                    handle: r.get(0)?,
                    name: r.get(1)?,
                    sandbox: r.get(2)?,
                    disabled: r.get(3)?,
                    policy: r.get(4)?,
                })
            },
        )
        .optional()?)
}

fn check_text(field: &str, value: &str, max: usize) -> Result<(), ApiError> {
    let n = value.chars().count();
    if value.trim().is_empty() || n > max {
        return Err(ApiError::Invalid(format!(
            "{field} must be 1 to {max} characters."
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(ApiError::Invalid(format!(
            "{field} must not contain control characters."
        )));
    }
    Ok(())
}

/// SPEC §6.1: registers a key with proof of possession; the same key again
/// returns the same identity. Revoked keys are refused.
pub fn register(
    conn: &Connection,
    req: &RegisterRequest,
    now: OffsetDateTime,
) -> Result<(RegisterResponse, bool), ApiError> {
    check_text("agent_name", &req.agent_name, 160)?;
    check_text("vendor_name", &req.vendor_name, 160)?;
    if !plausible_email(&req.contact_email) {
        return Err(ApiError::Invalid(
            "contact_email is not an email address.".into(),
        ));
    }
    let key = keys::parse_public_key(&req.public_key)
        .map_err(|e| ApiError::Invalid(format!("public_key: {e}.")))?;
    let proof = signed::registration_proof_string(&req.public_key);
    if !keys::verify_b64(&key, proof.as_bytes(), &req.proof) {
        return Err(ApiError::refused(
            400,
            codes::BAD_PROOF,
            "proof is not a valid signature by public_key over \"ANP/0.1\\nregister\\n<public_key>\".",
        ));
    }
    let fingerprint = keys::fingerprint(&key);
    let existing: Option<(String, String)> = conn
        .query_row(
            "SELECT id, status FROM agents WHERE public_key = ?1",
            [&req.public_key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let response = |agent_id: String, status| RegisterResponse {
        agent_id,
        fingerprint: fingerprint.clone(),
        status,
        protocol: anp::PROTOCOL.to_owned(),
    };
    if let Some((id, status)) = existing {
        let status = parse_status(&status);
        if status == AgentStatus::Revoked {
            return Err(ApiError::Unauthorized);
        }
        return Ok((response(id, status), false));
    }
    let id = ids::uuid();
    conn.execute(
        "INSERT INTO agents (id, public_key, fingerprint, agent_name, vendor_name, contact_email, status, registered_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'sandbox', ?7)",
        params![id, req.public_key, fingerprint, req.agent_name, req.vendor_name, req.contact_email, anp::api::format_timestamp(now)],
    )?;
    Ok((response(id, AgentStatus::Sandbox), true))
}

/// SPEC §6.2: opens a session with a buyer org or the sandbox and appends
/// `session_open` and the buyer `envelope`, both signed by the platform key.
pub fn open_session(
    conn: &Connection,
    platform: &SigningKey,
    agent: &Agent,
    req: &OpenSessionRequest,
    now: OffsetDateTime,
) -> Result<Session, ApiError> {
    let org = match &req.target {
        Target::Sandbox { sandbox: true } => load_org(conn, crate::admin::SANDBOX_HANDLE)?,
        Target::Sandbox { sandbox: false } => {
            return Err(ApiError::Invalid(
                "target.sandbox must be true, or give target.org_handle.".into(),
            ))
        }
        Target::Org { org_handle } if org_handle.starts_with("anp_org_") => {
            load_org(conn, org_handle)?
        }
        Target::Org { .. } => None,
    };
    let org = match org {
        Some(org) if !org.disabled => org,
        _ => return Err(ApiError::Unauthorized),
    };
    if !org.sandbox && agent.status != AgentStatus::Verified {
        return Err(ApiError::refused(
            403,
            codes::NOT_VERIFIED,
            "Live targets need an agent verified by a person at this host; use {\"sandbox\": true} until then.",
        ));
    }
    validate::payload(EventKind::Envelope, &req.envelope)?;
    let policy = org
        .policy()
        .map_err(|e| ApiError::Internal(format!("org {} policy unreadable: {e}", org.handle)))?;
    let at = anp::api::format_timestamp(now);
    let mut session = Session {
        id: ids::uuid(),
        agent_id: agent.id.clone(),
        org_handle: org.handle.clone(),
        sandbox: org.sandbox,
        status: "open".into(),
        opened_at: at.clone(),
        closed_at: None,
        event_count: 0,
        chain_head: signed::GENESIS_HASH.to_owned(),
        standing_seq: None,
        buyer_rounds: 0,
    };
    store::insert_session(conn, &session)?;
    let open_payload = json!({
        "protocol": anp::PROTOCOL,
        "agent": { "id": agent.id, "name": agent.name, "fingerprint": agent.fingerprint },
        "envelope": req.envelope,
    });
    store::append(
        conn,
        &mut session,
        Actor::VendorAgent,
        EventKind::SessionOpen,
        open_payload,
        Author::Platform(platform),
        at.clone(),
    )?;
    store::append(
        conn,
        &mut session,
        Actor::Buyer,
        EventKind::Envelope,
        policy.envelope(&org.name),
        Author::Platform(platform),
        at,
    )?;
    Ok(session)
}

/// Loads a session the agent owns; anything else is the uniform refusal.
pub fn owned_session(
    conn: &Connection,
    agent_id: &str,
    session_id: &str,
) -> Result<Session, ApiError> {
    match store::load_session(conn, session_id)? {
        Some(s) if s.agent_id == agent_id => Ok(s),
        _ => Err(ApiError::Unauthorized),
    }
}

/// The standing offer event, if any.
pub fn standing_offer(conn: &Connection, session: &Session) -> Result<Option<Event>, ApiError> {
    match session.standing_seq {
        Some(seq) => store::load_event(conn, &session.id, seq),
        None => Ok(None),
    }
}

fn closed(session: &Session) -> ApiError {
    ApiError::refused(
        409,
        codes::SESSION_CLOSED,
        format!(
            "Session {} is {}; nothing more may be appended.",
            session.id, session.status
        ),
    )
}

fn no_standing(kind: EventKind) -> ApiError {
    ApiError::refused(
        409,
        codes::NO_STANDING_OFFER,
        format!("A {kind} needs a standing offer to answer, and there is none."),
    )
}

/// Refuses an offer payload whose `expires_at` has passed.
pub fn require_future_expiry(
    offer: &Value,
    now: OffsetDateTime,
    what: &str,
) -> Result<OffsetDateTime, ApiError> {
    let expiry = validate::offer_expiry(offer)?;
    if expiry <= now {
        return Err(ApiError::refused(
            409,
            codes::OFFER_EXPIRED,
            format!(
                "The {what}'s expires_at ({}) has already passed.",
                anp::api::format_timestamp(expiry)
            ),
        ));
    }
    Ok(expiry)
}

/// Closes every open pending decision of a session (a new offer, decline,
/// accept or close makes them moot).
pub fn supersede_pending(conn: &Connection, session_id: &str) -> Result<(), ApiError> {
    conn.execute(
        "UPDATE pending SET state = 'superseded' WHERE session_id = ?1 AND state = 'open'",
        [session_id],
    )?;
    Ok(())
}

/// How many approvers an offer needs under the org's policy.
pub fn approvals_required(org: &Org, offer: &Value) -> Result<u32, ApiError> {
    let policy = match org.policy() {
        Ok(p) => p,
        // Unreadable policy: demand the most any policy may ask.
        Err(_) => return Ok(20),
    };
    let total = validate::offer_total(offer)?;
    Ok(if total > policy.approval.above_total {
        policy.approval.approvers_required
    } else {
        1
    })
}

/// Opens a pending decision for an offer event (inbound, or a draft).
#[allow(clippy::too_many_arguments)]
pub fn open_pending(
    conn: &Connection,
    session_id: &str,
    reference: &str,
    seq: u64,
    answers: Option<&str>,
    kind: EventKind,
    actor: Actor,
    offer: &Value,
    approvals_required: u32,
    held_reason: Option<&str>,
    now: OffsetDateTime,
) -> Result<(), ApiError> {
    let expires = offer
        .get("expires_at")
        .and_then(Value::as_str)
        .unwrap_or_default();
    conn.execute(
        "INSERT INTO pending (session_id, ref, seq, answers, kind, actor, expires_at, payload, approvals_required, draft, held_reason, state, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'open', ?12)",
        params![
            session_id, reference, seq, answers, kind.as_str(), actor.as_str(), expires,
            offer.to_string(), approvals_required, reference.starts_with("draft:"), held_reason,
            anp::api::format_timestamp(now)
        ],
    )?;
    Ok(())
}

/// SPEC §6.3: validates and appends a vendor event, then runs the buyer side.
pub fn submit_event(
    conn: &Connection,
    agent: &Agent,
    session: &mut Session,
    req: &SubmitEventRequest,
    now: OffsetDateTime,
) -> Result<(), ApiError> {
    let kind = req.kind;
    if matches!(kind, EventKind::SessionOpen | EventKind::Envelope) {
        return Err(ApiError::Invalid(format!(
            "{kind} events are appended by the host when the session opens."
        )));
    }
    match session.status.as_str() {
        "open" => {}
        "accepted" if matches!(kind, EventKind::Message | EventKind::SessionClose) => {}
        _ => return Err(closed(session)),
    }
    validate::payload(kind, &req.payload)?;
    let payload_hash = canonical_hash(&req.payload);
    let key =
        keys::parse_public_key(&agent.public_key).map_err(|e| ApiError::Internal(e.to_string()))?;
    if !keys::verify_b64(
        &key,
        signed::authorship_string(kind.as_str(), &payload_hash).as_bytes(),
        &req.signature,
    ) {
        return Err(ApiError::refused(
            400,
            codes::BAD_SIGNATURE,
            format!("signature does not verify: sign \"ANP/0.1\\n{kind}\\n{payload_hash}\" with your registered key ({}).", agent.fingerprint),
        ));
    }
    let standing = standing_offer(conn, session)?;
    match kind {
        EventKind::Offer => {
            require_future_expiry(&req.payload, now, "offer")?;
        }
        EventKind::CounterOffer => {
            if standing.is_none() {
                return Err(no_standing(kind));
            }
            require_future_expiry(&req.payload, now, "counter_offer")?;
        }
        EventKind::Decline if standing.is_none() => return Err(no_standing(kind)),
        EventKind::Accept => check_vendor_accept(standing.as_ref(), &req.payload, now)?,
        _ => {}
    }
    let org = load_org(conn, &session.org_handle)?
        .ok_or_else(|| ApiError::Internal("session org missing".into()))?;
    let at = anp::api::format_timestamp(now);
    let event = store::append(
        conn,
        session,
        Actor::VendorAgent,
        kind,
        req.payload.clone(),
        Author::Vendor {
            signature: req.signature.clone(),
            fingerprint: agent.fingerprint.clone(),
        },
        at.clone(),
    )?;
    match kind {
        EventKind::Offer | EventKind::CounterOffer => {
            supersede_pending(conn, &session.id)?;
            session.standing_seq = Some(event.seq);
            let required = approvals_required(&org, &event.payload)?;
            open_pending(
                conn,
                &session.id,
                &event.event_hash,
                event.seq,
                None,
                kind,
                Actor::VendorAgent,
                &event.payload,
                required,
                None,
                now,
            )?;
            draft_reply(conn, session, &org, &event, now)?;
        }
        EventKind::Decline => {
            supersede_pending(conn, &session.id)?;
            session.standing_seq = None;
        }
        EventKind::Accept => {
            supersede_pending(conn, &session.id)?;
            session.standing_seq = None;
            session.status = "accepted".into();
        }
        EventKind::SessionClose => {
            supersede_pending(conn, &session.id)?;
            session.standing_seq = None;
            session.status = "closed".into();
            session.closed_at = Some(at);
        }
        _ => {}
    }
    store::save_session_state(conn, session)
}

/// RFC-001 for a vendor's accept: it answers the standing buyer offer by
/// its event hash, before that offer expires.
fn check_vendor_accept(
    standing: Option<&Event>,
    payload: &Value,
    now: OffsetDateTime,
) -> Result<(), ApiError> {
    let standing = standing.ok_or_else(|| no_standing(EventKind::Accept))?;
    let target = payload
        .get("in_response_to")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if target != standing.event_hash {
        return Err(ApiError::refused(
            409,
            codes::NOT_STANDING,
            format!(
                "accept.in_response_to must be the standing offer's event_hash ({}).",
                standing.event_hash
            ),
        ));
    }
    if standing.actor != Actor::Buyer {
        return Err(ApiError::Invalid(
            "A vendor can only accept the buyer's offer, not its own.".into(),
        ));
    }
    require_future_expiry(&standing.payload, now, "accepted offer")?;
    Ok(())
}

/// The buyer agent's turn: maybe a drafted counter-offer, as a pending
/// decision (screened now, so a person sees why it would be held).
fn draft_reply(
    conn: &Connection,
    session: &Session,
    org: &Org,
    inbound: &Event,
    now: OffsetDateTime,
) -> Result<(), ApiError> {
    let Ok(policy) = org.policy() else {
        return Ok(());
    };
    let Some(draft) = buyer_agent::draft_counter(
        &policy,
        &org.name,
        &inbound.payload,
        session.buyer_rounds,
        now,
    ) else {
        return Ok(());
    };
    if validate::payload(EventKind::CounterOffer, &draft).is_err() {
        tracing::warn!(session = %session.id, "buyer agent drafted an invalid counter-offer; dropped");
        return Ok(());
    }
    let held = match org.screen() {
        Ok(screen) => screen.check(&draft).err().map(|l| l.reason),
        Err(e) => Some(e.to_string()),
    };
    // Sending a draft is one person's decision; acceptance is what needs more.
    let required = 1;
    let reference = format!("draft:{}", ids::uuid());
    open_pending(
        conn,
        &session.id,
        &reference,
        0,
        Some(&inbound.event_hash),
        EventKind::CounterOffer,
        Actor::Buyer,
        &draft,
        required,
        held.as_deref(),
        now,
    )
}
