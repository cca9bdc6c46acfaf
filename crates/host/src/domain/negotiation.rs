//! The agent-side rules of a negotiation: registration, opening sessions,
//! and what a vendor may append when (SPEC §5, RFC-001), plus the pending
//! decisions every inbound offer opens. Each rule reads what the caller
//! loaded and plans a [`Commit`]; nothing here touches a database.

use anp::api::{AgentStatus, OpenSessionRequest, RegisterRequest, SubmitEventRequest, Target};
use anp::canonical::canonical_hash;
use anp::event::ChainHead;
use anp::keys::{self, SigningKey};
use anp::{signed, Actor, Event, EventDraft, EventKind};
use serde_json::{json, Value};
use time::OffsetDateTime;

use super::authority::{self, StoredRoute};
use super::{stored, DomainError};
use crate::policy::Policy;
use crate::screening::Screen;
use crate::store::{AgentRow, Commit, NewPending, Org, PendingRow, Session};
use crate::{buyer_agent, ids, validate};

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

/// Seals one event at the head of `session` (as planned so far) and adds it
/// to `commit`, moving the planned head forward.
pub fn append(
    commit: &mut Commit,
    actor: Actor,
    kind: EventKind,
    payload: Value,
    author: Author<'_>,
    at: String,
) -> Result<Event, DomainError> {
    let session = &mut commit.session;
    let prev = ChainHead {
        seq: session.event_count,
        event_hash: session.chain_head.clone(),
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
    session.event_count = event.seq;
    session.chain_head = event.event_hash.clone();
    commit.events.push(stored(&event)?);
    Ok(event)
}

fn check_text(field: &str, value: &str, max: usize) -> Result<(), DomainError> {
    let n = value.chars().count();
    if value.trim().is_empty() || n > max {
        return Err(DomainError::Invalid(format!(
            "{field} must be 1 to {max} characters."
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(DomainError::Invalid(format!(
            "{field} must not contain control characters."
        )));
    }
    Ok(())
}

/// A cheap sanity check: one `@`, something on each side, no spaces.
pub fn plausible_email(email: &str) -> bool {
    let parts: Vec<&str> = email.split('@').collect();
    parts.len() == 2
        && !parts[0].is_empty()
        && parts[1].contains('.')
        && email.len() <= 320
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// SPEC §6.1: checks a registration (text fields, proof of possession) and
/// answers the agent row to store if the key is new.
pub fn registration(req: &RegisterRequest, now: OffsetDateTime) -> Result<AgentRow, DomainError> {
    check_text("agent_name", &req.agent_name, 160)?;
    check_text("vendor_name", &req.vendor_name, 160)?;
    if !plausible_email(&req.contact_email) {
        return Err(DomainError::Invalid(
            "contact_email is not an email address.".into(),
        ));
    }
    let key = keys::parse_public_key(&req.public_key)
        .map_err(|e| DomainError::Invalid(format!("public_key: {e}.")))?;
    let proof = signed::registration_proof_string(&req.public_key);
    if !keys::verify_b64(&key, proof.as_bytes(), &req.proof) {
        return Err(DomainError::BadProof(
            "proof is not a valid signature by public_key over \"ANP/0.1\\nregister\\n<public_key>\".".into(),
        ));
    }
    Ok(AgentRow {
        id: ids::uuid(),
        public_key: req.public_key.clone(),
        fingerprint: keys::fingerprint(&key),
        agent_name: req.agent_name.clone(),
        vendor_name: req.vendor_name.clone(),
        contact_email: req.contact_email.clone(),
        status: AgentStatus::Sandbox,
        registered_at: anp::api::format_timestamp(now),
        names_verified: false,
    })
}

/// The org handle a session request targets, or the uniform refusal for a
/// handle that cannot be one.
pub fn target_handle(target: &Target) -> Result<Option<&str>, DomainError> {
    match target {
        Target::Sandbox { sandbox: true } => Ok(Some(crate::admin::SANDBOX_HANDLE)),
        Target::Sandbox { sandbox: false } => Err(DomainError::Invalid(
            "target.sandbox must be true, or give target.org_handle.".into(),
        )),
        Target::Org { org_handle } if org_handle.starts_with("anp_org_") => Ok(Some(org_handle)),
        Target::Org { .. } => Ok(None),
    }
}

/// SPEC §6.2: plans a new session with `org` and its first two events,
/// `session_open` and the buyer `envelope`, both signed by the platform key.
pub fn open_session(
    platform: &SigningKey,
    agent: &AgentRow,
    org: Option<Org>,
    req: &OpenSessionRequest,
    now: OffsetDateTime,
) -> Result<Commit, DomainError> {
    let org = match org {
        Some(org) if !org.disabled => org,
        _ => return Err(DomainError::Unauthorized),
    };
    if !org.sandbox && agent.status != AgentStatus::Verified {
        return Err(DomainError::NotVerified(
            "Live targets need an agent verified by a person at this host; use {\"sandbox\": true} until then.".into(),
        ));
    }
    validate::payload(EventKind::Envelope, &req.envelope)?;
    let policy = org
        .policy()
        .map_err(|e| DomainError::Internal(format!("org {} policy unreadable: {e}", org.handle)))?;
    let at = anp::api::format_timestamp(now);
    let mut commit = Commit::on(Session {
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
        version: 0,
    });
    commit.new_session = true;
    let open_payload = json!({
        "protocol": anp::PROTOCOL,
        "agent": { "id": agent.id, "name": agent.agent_name, "fingerprint": agent.fingerprint },
        "envelope": req.envelope,
    });
    append(
        &mut commit,
        Actor::VendorAgent,
        EventKind::SessionOpen,
        open_payload,
        Author::Platform(platform),
        at.clone(),
    )?;
    append(
        &mut commit,
        Actor::Buyer,
        EventKind::Envelope,
        policy.envelope(&org.name),
        Author::Platform(platform),
        at,
    )?;
    Ok(commit)
}

fn closed(session: &Session) -> DomainError {
    DomainError::SessionClosed(format!(
        "Session {} is {}; nothing more may be appended.",
        session.id, session.status
    ))
}

fn no_standing(kind: EventKind) -> DomainError {
    DomainError::NoStandingOffer(format!(
        "A {kind} needs a standing offer to answer, and there is none."
    ))
}

/// Refuses an offer payload whose `expires_at` has passed.
pub fn require_future_expiry(
    offer: &Value,
    now: OffsetDateTime,
    what: &str,
) -> Result<OffsetDateTime, DomainError> {
    let expiry = validate::offer_expiry(offer)?;
    if expiry <= now {
        return Err(DomainError::OfferExpired(format!(
            "The {what}'s expires_at ({}) has already passed.",
            anp::api::format_timestamp(expiry)
        )));
    }
    Ok(expiry)
}

/// A pending decision for an offer event (inbound, or a draft).
#[allow(clippy::too_many_arguments)]
pub fn pending(
    reference: &str,
    seq: u64,
    answers: Option<&str>,
    kind: EventKind,
    actor: Actor,
    offer: &Value,
    route: &StoredRoute,
    approvals_required: u32,
    held_reason: Option<&str>,
    now: OffsetDateTime,
) -> Result<NewPending, DomainError> {
    let expires = offer
        .get("expires_at")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(NewPending {
        row: PendingRow {
            reference: reference.to_owned(),
            seq,
            answers: answers.map(str::to_owned),
            kind: kind.as_str().to_owned(),
            actor: actor.as_str().to_owned(),
            expires_at: expires.to_owned(),
            payload: offer.to_string(),
            approvals_required,
            held_reason: held_reason.map(str::to_owned),
            created_at: anp::api::format_timestamp(now),
            route: Some(route.to_text()?),
        },
    })
}

/// What a vendor event is checked against: the session as read, its org
/// and its standing offer.
pub struct SessionState {
    /// The session row.
    pub session: Session,
    /// Its org.
    pub org: Org,
    /// The standing offer event, if any.
    pub standing: Option<Event>,
}

/// SPEC §6.3: checks a vendor event (kind, state, payload, authorship
/// signature, standing offer) and plans its append plus the buyer side: the
/// pending decision an offer opens and the buyer agent's draft.
pub fn submit_event(
    agent: &AgentRow,
    state: SessionState,
    req: &SubmitEventRequest,
    now: OffsetDateTime,
) -> Result<Commit, DomainError> {
    let SessionState {
        session,
        org,
        standing,
    } = state;
    let kind = req.kind;
    if matches!(kind, EventKind::SessionOpen | EventKind::Envelope) {
        return Err(DomainError::Invalid(format!(
            "{kind} events are appended by the host when the session opens."
        )));
    }
    match session.status.as_str() {
        "open" => {}
        "accepted" if matches!(kind, EventKind::Message | EventKind::SessionClose) => {}
        _ => return Err(closed(&session)),
    }
    validate::payload(kind, &req.payload)?;
    let payload_hash = canonical_hash(&req.payload);
    let key = keys::parse_public_key(&agent.public_key)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    if !keys::verify_b64(
        &key,
        signed::authorship_string(kind.as_str(), &payload_hash).as_bytes(),
        &req.signature,
    ) {
        return Err(DomainError::BadSignature(format!(
            "signature does not verify: sign \"ANP/0.1\\n{kind}\\n{payload_hash}\" with your registered key ({}).",
            agent.fingerprint
        )));
    }
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
    let at = anp::api::format_timestamp(now);
    let mut commit = Commit::on(session);
    let event = append(
        &mut commit,
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
            commit.supersede_pending = true;
            commit.session.standing_seq = Some(event.seq);
            let facts = authority::anp_facts(&agent.vendor_name, &event.payload)?;
            let route = authority::route(&org, &facts)?;
            commit.new_pending.push(pending(
                &event.event_hash,
                event.seq,
                None,
                kind,
                Actor::VendorAgent,
                &event.payload,
                &route,
                route.approvals_required(),
                None,
                now,
            )?);
            if let Some(draft) = draft_reply(&commit.session, &org, &event, &route, now)? {
                commit.new_pending.push(draft);
            }
        }
        EventKind::Decline => {
            commit.supersede_pending = true;
            commit.session.standing_seq = None;
        }
        EventKind::Accept => {
            commit.supersede_pending = true;
            commit.session.standing_seq = None;
            commit.session.status = "accepted".into();
        }
        EventKind::SessionClose => {
            commit.supersede_pending = true;
            commit.session.standing_seq = None;
            commit.session.status = "closed".into();
            commit.session.closed_at = Some(at);
        }
        _ => {}
    }
    Ok(commit)
}

/// RFC-001 for a vendor's accept: it answers the standing buyer offer by
/// its event hash, before that offer expires.
fn check_vendor_accept(
    standing: Option<&Event>,
    payload: &Value,
    now: OffsetDateTime,
) -> Result<(), DomainError> {
    let standing = standing.ok_or_else(|| no_standing(EventKind::Accept))?;
    let target = payload
        .get("in_response_to")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if target != standing.event_hash {
        return Err(DomainError::NotStanding(format!(
            "accept.in_response_to must be the standing offer's event_hash ({}).",
            standing.event_hash
        )));
    }
    if standing.actor != Actor::Buyer {
        return Err(DomainError::Invalid(
            "A vendor can only accept the buyer's offer, not its own.".into(),
        ));
    }
    require_future_expiry(&standing.payload, now, "accepted offer")?;
    Ok(())
}

/// The buyer agent's turn: maybe a drafted counter-offer, as a pending
/// decision (screened now, so a person sees why it would be held).
fn draft_reply(
    session: &Session,
    org: &Org,
    inbound: &Event,
    route: &StoredRoute,
    now: OffsetDateTime,
) -> Result<Option<NewPending>, DomainError> {
    let Ok(policy) = org.policy() else {
        return Ok(None);
    };
    let Some(draft) = buyer_agent::draft_counter(
        &policy,
        &org.name,
        &inbound.payload,
        session.buyer_rounds,
        now,
    ) else {
        return Ok(None);
    };
    if validate::payload(EventKind::CounterOffer, &draft).is_err() {
        tracing::warn!(session = %session.id, "buyer agent drafted an invalid counter-offer; dropped");
        return Ok(None);
    }
    let held = match org.screen() {
        Ok(screen) => screen.check(&draft).err().map(|l| l.reason),
        Err(e) => Some(e.to_string()),
    };
    // Sending a draft is one person's decision (a counter, which decides
    // the offer's request: someone who may act at its current step);
    // acceptance is what needs more. The draft keeps the offer's route.
    let required = 1;
    let reference = format!("draft:{}", ids::uuid());
    pending(
        &reference,
        0,
        Some(&inbound.event_hash),
        EventKind::CounterOffer,
        Actor::Buyer,
        &draft,
        route,
        required,
        held.as_deref(),
        now,
    )
    .map(Some)
}
