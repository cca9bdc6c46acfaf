//! A gate request's deadline is the organization's own (its agent asked
//! for it), so an approver who may decide the request now may extend it,
//! with a reason kept beside the request. Never past the offer's own
//! validity (the counterparty's word, which the org cannot extend), and at
//! most 30 days from now.

use countersign_host_api::gate::{DeadlineExtension, ExtendDeadlineRequest};
use time::OffsetDateTime;

use super::decisions::GateDecisionState;
use super::protocol::GateProtocol;
use super::views::{counted_approvals, extensions_of, status_at};
use super::{parse_stored, RequestState};
use crate::auth::Approver;
use crate::domain::authority::{self, Decidable, StoredRoute, Timing};
use crate::domain::DomainError;
use crate::store::{GateCommit, RequestChange};

/// The furthest a deadline may be moved, from now.
pub const MAX_EXTENSION: time::Duration = time::Duration::days(30);

/// The longest reason an extension keeps.
pub const MAX_REASON_CHARS: usize = 500;

/// Checks an extension of `request_id`'s deadline by `approver` and answers
/// the commit that makes it.
pub fn extend(
    protocol: GateProtocol,
    approver: &Approver,
    st: &GateDecisionState,
    request_id: &str,
    req: &ExtendDeadlineRequest,
    now: OffsetDateTime,
) -> Result<GateCommit, DomainError> {
    let state = &st.state;
    let request = state
        .requests
        .iter()
        .find(|r| r.request_id == request_id)
        .ok_or_else(|| {
            DomainError::NotFound(format!("no request {request_id:?} in this session."))
        })?;
    match status_at(request, now) {
        RequestState::Pending => {}
        RequestState::Expired => {
            return Err(DomainError::OfferExpired(format!(
                "request {request_id} expired at {}; an expired request cannot be extended.",
                request.expires_at
            )))
        }
        other => {
            return Err(DomainError::NoStandingOffer(format!(
                "request {request_id} is {}; only a pending request's deadline can be extended.",
                other.as_str()
            )))
        }
    }
    // Only someone who may decide the request now may move its deadline.
    let route = StoredRoute::read(request.route.as_deref(), request.approvals_required)?;
    let counted = counted_approvals(&request.request_id, &state.receipts);
    let enrolled = authority::people(&st.enrolled);
    let owner = st.owner.as_deref().map(::authority::Person::new);
    Decidable {
        route: &route,
        approvals: &counted,
        enrolled: &enrolled,
        owner: owner.as_ref(),
        timing: Timing::new(&request.created_at, now),
        stand_ins: &st.stand_ins,
    }
    .admit(&approver.email, ::authority::Action::Decline)?;
    let reason = req.reason.trim();
    if reason.is_empty()
        || reason.chars().count() > MAX_REASON_CHARS
        || reason.chars().any(char::is_control)
    {
        return Err(DomainError::Invalid(format!(
            "reason must be one line of 1 to {MAX_REASON_CHARS} characters: why the deadline moves."
        )));
    }
    let to = anp::api::parse_timestamp(&req.expires_at).ok_or_else(|| {
        DomainError::Invalid(
            "expires_at must be an RFC 3339 time with an offset (2026-12-09T17:00:00Z).".into(),
        )
    })?;
    if to.unix_timestamp() <= request.expires_unix {
        return Err(DomainError::Invalid(format!(
            "expires_at must be later than the current deadline, {}.",
            request.expires_at
        )));
    }
    if to > now + MAX_EXTENSION {
        return Err(DomainError::Invalid(format!(
            "expires_at may be at most 30 days from now ({}).",
            anp::api::format_timestamp(now + MAX_EXTENSION)
        )));
    }
    // The offer's own validity is the counterparty's: never past it.
    let messages: Vec<serde_json::Value> = state
        .messages
        .iter()
        .map(parse_stored)
        .collect::<Result<_, _>>()?;
    let position = (request.seq as usize).saturating_sub(1);
    let awaited = protocol.awaited(&messages, position, &state.session.counterparty_id)?;
    if let Some(own) = awaited.expires.filter(|own| to > *own) {
        return Err(DomainError::Invalid(format!(
            "expires_at is past the offer's own validity ({}), which is the counterparty's to extend: counter with a later validity instead.",
            anp::api::format_timestamp(own)
        )));
    }
    let mut extensions = extensions_of(request)?;
    extensions.push(DeadlineExtension {
        by: approver.email.clone(),
        from: request.expires_at.clone(),
        to: anp::api::format_timestamp(to),
        reason: reason.to_owned(),
        at: anp::api::format_timestamp(now),
    });
    let mut commit = GateCommit::on(state.session.clone());
    commit.session.updated_at = anp::api::format_timestamp(now);
    commit.request_changes.push(RequestChange::Extend {
        request_id: request.request_id.clone(),
        from_unix: request.expires_unix,
        expires_at: anp::api::format_timestamp(to),
        expires_unix: to.unix_timestamp(),
        extensions: serde_json::to_string(&extensions)
            .map_err(|e| DomainError::Internal(e.to_string()))?,
    });
    Ok(commit)
}
