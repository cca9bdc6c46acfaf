//! Stand-ins over the approver API: give one (signed by the delegator),
//! list what one gave and received, revoke one from either side.

use std::collections::HashMap;

use countersign_host_api::approver::{Colleague, DelegateRequest, Delegation, DelegationList};
use time::OffsetDateTime;

use crate::auth::Approver;
use crate::domain::{authority, delegation, DomainError};
use crate::store::ApproverRow;
use crate::Host;

/// The org's approvers enrolled now (neither revoked nor retired).
async fn colleagues(host: &Host, org_handle: &str) -> Result<Vec<ApproverRow>, DomainError> {
    Ok(host
        .store()
        .admin()
        .approvers()
        .await?
        .into_iter()
        .filter(|a| a.org_handle == org_handle && a.revoked_at.is_none() && a.retired_at.is_none())
        .collect())
}

/// Every name the org's approvers ever had, by lower-cased email (a
/// delegation names people who may since have left).
async fn names(host: &Host, org_handle: &str) -> Result<HashMap<String, String>, DomainError> {
    Ok(host
        .store()
        .admin()
        .approvers()
        .await?
        .into_iter()
        .filter(|a| a.org_handle == org_handle)
        .map(|a| (a.email.to_ascii_lowercase(), a.name))
        .collect())
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
    let colleagues = colleagues(host, &approver.org_handle).await?;
    let row = delegation::delegation(approver, req, authority, &held, &colleagues, now)?;
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
    let names = names(host, &approver.org_handle).await?;
    Ok((delegation::view(&stored, &names, now)?, fresh))
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
    let names = names(host, &approver.org_handle).await?;
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
    let colleagues = colleagues(host, &approver.org_handle)
        .await?
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
    let names = names(host, &approver.org_handle).await?;
    delegation::view(&row, &names, now)
}
