//! Stand-ins on the approver API (`/delegations`): the host's shapes in,
//! the Stand-ins screen's out.

use countersign_client::ApproverClient;
use countersign_host_api::approver::{Delegation, DelegationList, DelegationState};
use time::OffsetDateTime;

use super::enroll::client_error;
use crate::error::EngineError;
use crate::store::HostRecord;
use crate::views::{ColleagueView, StandInView};

fn view(d: Delegation) -> StandInView {
    StandInView {
        delegation_id: d.delegation_id,
        from: d.from,
        from_name: d.from_name,
        to: d.to,
        to_name: d.to_name,
        roles: d.roles,
        from_date: d.from_date,
        to_date: d.to_date,
        zone: d.zone,
        starts_at: d.starts_at,
        ends_at: d.ends_at,
        state: match d.state {
            DelegationState::Scheduled => "scheduled",
            DelegationState::InForce => "in_force",
            DelegationState::Ended => "ended",
            DelegationState::Revoked => "revoked",
        }
        .to_owned(),
        revoked_at: d.revoked_at,
        revoked_by: d.revoked_by,
    }
}

/// What one host's list says: given, received, the roles held, colleagues.
pub(crate) struct Listed {
    pub given: Vec<StandInView>,
    pub received: Vec<StandInView>,
    pub my_roles: Vec<String>,
    pub colleagues: Vec<ColleagueView>,
}

/// `GET /delegations`.
pub(crate) async fn list(
    client: &ApproverClient,
    host: &HostRecord,
) -> Result<Listed, EngineError> {
    let list: DelegationList = client
        .delegations()
        .await
        .map_err(|e| client_error(&host.url, e))?;
    Ok(Listed {
        given: list.given.into_iter().map(view).collect(),
        received: list.received.into_iter().map(view).collect(),
        my_roles: list.my_roles,
        colleagues: list
            .colleagues
            .into_iter()
            .map(|c| ColleagueView {
                email: c.email,
                name: c.name,
            })
            .collect(),
    })
}

/// `POST /delegations`, signed with the client's key.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn give(
    client: &ApproverClient,
    host: &HostRecord,
    delegation_id: &str,
    to: &str,
    roles: &[String],
    from_date: &str,
    to_date: &str,
    zone: &str,
    at: OffsetDateTime,
) -> Result<StandInView, EngineError> {
    client
        .delegate(delegation_id, to, roles, from_date, to_date, zone, at)
        .await
        .map(view)
        .map_err(|e| client_error(&host.url, e))
}

/// `POST /delegations/<id>/revoke`.
pub(crate) async fn revoke(
    client: &ApproverClient,
    host: &HostRecord,
    delegation_id: &str,
) -> Result<StandInView, EngineError> {
    client
        .revoke_delegation(delegation_id)
        .await
        .map(view)
        .map_err(|e| client_error(&host.url, e))
}
