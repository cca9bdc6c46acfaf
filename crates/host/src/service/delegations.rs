//! Stand-ins over the approver API: give one (signed by the delegator),
//! list what one gave and received, revoke one from either side.

use std::collections::HashMap;

use countersign_host_api::approver::{Colleague, DelegateRequest, Delegation, DelegationList};
use time::OffsetDateTime;

use crate::auth::Approver;
use crate::domain::{authority, delegation, DomainError};
use crate::store::ApproverRow;
use crate::Host;

/// The org's approvers, every one ever enrolled: read once per request, for
/// who may stand in ([`Approvers::enrolled`]) and the names a delegation
/// shows ([`Approvers::names`]; it may name people who have since left).
struct Approvers(Vec<ApproverRow>);

impl Approvers {
    async fn of(host: &Host, org_handle: &str) -> Result<Approvers, DomainError> {
        let mut all = host.store().admin().approvers().await?;
        all.retain(|a| a.org_handle == org_handle);
        Ok(Approvers(all))
    }

    /// Those enrolled now (neither revoked nor retired).
    fn enrolled(&self) -> Vec<ApproverRow> {
        self.0
            .iter()
            .filter(|a| a.revoked_at.is_none() && a.retired_at.is_none())
            .cloned()
            .collect()
    }

    /// Every name, by lower-cased email.
    fn names(&self) -> HashMap<String, String> {
        self.0
            .iter()
            .map(|a| (a.email.to_ascii_lowercase(), a.name.clone()))
            .collect()
    }
}

/// The roles `approver` holds in its org's current policy.
async fn held(host: &Host, approver: &Approver) -> Result<Vec<String>, DomainError> {
    let org = super::org_of(host, &approver.org_handle).await?;
    let (version, policy) = authority::policy_of(&org)?;
    Ok(match version {
        Some(_) => delegation::roles_held(&policy, &approver.email),
        None => Vec::new(),
    })
}

/// `POST /delegations`: records a delegation the approver signed; the
/// same one sent again is answered the same (`false`: not new).
pub async fn delegate(
    host: &Host,
    approver: &Approver,
    req: &DelegateRequest,
    authority: &str,
    now: OffsetDateTime,
) -> Result<(Delegation, bool), DomainError> {
    let held = held(host, approver).await?;
    let approvers = Approvers::of(host, &approver.org_handle).await?;
    let row = delegation::delegation(approver, req, authority, &held, &approvers.enrolled(), now)?;
    let repo = host.store().authority();
    let fresh = match repo.insert_delegation(&row).await? {
        Ok(()) => {
            // Who may act on the org's requests changed: its consoles look again.
            crate::changes::touch(&approver.org_handle);
            true
        }
        Err(stored) => {
            delegation::same(&stored, &row)?;
            false
        }
    };
    let stored = repo
        .delegations_of(&approver.org_handle, &row.from_email)
        .await?
        .into_iter()
        .find(|d| d.id == row.id)
        .ok_or_else(|| DomainError::Internal("a stored delegation vanished".into()))?;
    Ok((delegation::view(&stored, &approvers.names(), now)?, fresh))
}

/// `GET /delegations`: what the approver gave and received, and what a new
/// one may name.
pub async fn list(
    host: &Host,
    approver: &Approver,
    now: OffsetDateTime,
) -> Result<DelegationList, DomainError> {
    let me = approver.email.to_ascii_lowercase();
    let rows = host
        .store()
        .authority()
        .delegations_of(&approver.org_handle, &me)
        .await?;
    let approvers = Approvers::of(host, &approver.org_handle).await?;
    let names = approvers.names();
    let mut given = Vec::new();
    let mut received = Vec::new();
    for row in &rows {
        let view = delegation::view(row, &names, now)?;
        if row.from_email == me {
            given.push(view);
        } else {
            received.push(view);
        }
    }
    let colleagues = approvers
        .enrolled()
        .into_iter()
        .filter(|a| a.email.to_ascii_lowercase() != me)
        .map(|a| Colleague {
            email: a.email.to_ascii_lowercase(),
            name: a.name,
        })
        .collect();
    Ok(DelegationList {
        given,
        received,
        my_roles: held(host, approver).await?,
        colleagues,
    })
}

/// `POST /delegations/<id>/revoke`: either side ends a delegation now
/// (asked again, answers it as revoked the first time).
pub async fn revoke(
    host: &Host,
    approver: &Approver,
    id: &str,
    now: OffsetDateTime,
) -> Result<Delegation, DomainError> {
    let me = approver.email.to_ascii_lowercase();
    let row = host
        .store()
        .authority()
        .revoke_delegation(
            &approver.org_handle,
            id,
            &me,
            &anp::api::format_timestamp(now),
        )
        .await?
        .ok_or_else(|| {
            DomainError::NotFound(format!("no delegation {id:?} given by or to you."))
        })?;
    crate::changes::touch(&approver.org_handle);
    let approvers = Approvers::of(host, &approver.org_handle).await?;
    delegation::view(&row, &approvers.names(), now)
}
