//! The admin operations: orgs, agents, approvers and policies. The CLI and
//! an embedding console engine call these same functions, against the same
//! store a running server uses (a SQLite file or a PostgreSQL database).

use serde::Serialize;
use time::OffsetDateTime;

use anp::api::AgentStatus;

use crate::domain::gate::GateProtocol;
use crate::ids;
use crate::policy::{Policy, PolicyError};
use crate::store::{CodeRow, GateCodeRow, Org, Storage, StoreError};

pub use crate::domain::negotiation::plausible_email;
pub use crate::store::parse_status;
pub use countersign_host_api::approver::status_text;

/// How long an enrollment code works unless told otherwise.
pub const DEFAULT_ENROLLMENT_TTL: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The built-in sandbox org's handle (admin CLI only; vendors use `{"sandbox": true}`).
pub const SANDBOX_HANDLE: &str = "sandbox";

/// Why an admin operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// No org with this handle.
    #[error("no org with handle {0:?}")]
    UnknownOrg(String),
    /// No agent with this id.
    #[error("no agent with id {0:?}")]
    UnknownAgent(String),
    /// No approver with this id.
    #[error("no approver with id {0:?}")]
    UnknownApprover(String),
    /// The agent was revoked; revocation is final.
    #[error("agent {0} is revoked and cannot be verified")]
    AgentRevoked(String),
    /// An argument is unusable.
    #[error("{0}")]
    Invalid(String),
    /// The policy file is unusable.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The policy of authority file is unusable (docs/authority.md).
    #[error("policy of authority refused: {0}")]
    Authority(authority::FormatError),
    /// The sandbox org cannot be disabled.
    #[error("the built-in sandbox org cannot be disabled")]
    SandboxFixed,
    /// The store failed.
    #[error("database: {0}")]
    Store(#[from] StoreError),
}

/// One org, as `org list` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrgInfo {
    /// `anp_org_...`, or `sandbox`.
    pub org_handle: String,
    /// Display name (the buyer envelope's `party`).
    pub name: String,
    /// True for the built-in sandbox.
    pub sandbox: bool,
    /// True once disabled: sessions to it are refused.
    pub disabled: bool,
    /// Creation time.
    pub created_at: String,
}

/// One agent, as `agent list` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentInfo {
    /// Registration id.
    pub agent_id: String,
    /// Display name.
    pub agent_name: String,
    /// Vendor.
    pub vendor_name: String,
    /// Contact.
    pub contact_email: String,
    /// Key fingerprint.
    pub fingerprint: String,
    /// Sandbox, verified or revoked.
    pub status: AgentStatus,
    /// Registration time.
    pub registered_at: String,
    /// Whether an admin verified the names (`agent verify`); until then
    /// they are only what the last registration declared.
    pub names_verified: bool,
}

/// One registration of an agent's key, as `agent history` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegistrationInfo {
    /// 1 for the first, then in order.
    pub ordinal: u32,
    /// Display name it declared.
    pub agent_name: String,
    /// Vendor it declared.
    pub vendor_name: String,
    /// Contact it declared.
    pub contact_email: String,
    /// When it arrived.
    pub registered_at: String,
}

/// One approver, as `approver list` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApproverInfo {
    /// Approver id.
    pub approver_id: String,
    /// Org handle.
    pub org_handle: String,
    /// Name.
    pub name: String,
    /// Email (`approved_by`).
    pub email: String,
    /// Key fingerprint.
    pub fingerprint: String,
    /// Enrollment time.
    pub enrolled_at: String,
    /// Revocation time, if revoked.
    pub revoked_at: Option<String>,
    /// When it moved to a new key (another approver id), if it did: its
    /// approvals stand, it signs nothing since.
    pub retired_at: Option<String>,
}

/// One gate agent (the org's own agent), as `agent list` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateAgentInfo {
    /// `gate_…`.
    pub agent_id: String,
    /// The org it acts for.
    pub org_handle: String,
    /// The protocol it mirrors.
    pub protocol: String,
    /// Its name.
    pub name: String,
    /// Key fingerprint.
    pub fingerprint: String,
    /// Where decision hints go, if anywhere.
    pub callback_url: Option<String>,
    /// Enrollment time.
    pub enrolled_at: String,
    /// Revocation time, if revoked.
    pub revoked_at: Option<String>,
    /// The approver named as its owner (an email), if any: never the only
    /// approval of its requests (docs/authority.md).
    pub owner: Option<String>,
}

/// A one-time gate enrollment code, shown once and stored only as a hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateEnrollmentCode {
    /// The code to hand to the agent.
    pub code: String,
    /// The org it enrolls into.
    pub org: String,
    /// The protocol the agent will mirror.
    pub protocol: String,
    /// When it stops working.
    pub expires_at: String,
    /// The owner the agent will have.
    pub owner: Option<String>,
}

/// A one-time enrollment code, shown once and stored only as a hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnrollmentCode {
    /// The code to hand to the approver.
    pub code: String,
    /// The org it enrolls into.
    pub org_handle: String,
    /// When it stops working.
    pub expires_at: String,
}

fn now_text(now: OffsetDateTime) -> String {
    anp::api::format_timestamp(now)
}

/// Creates an org with a fresh unguessable handle and the initial policy.
pub async fn create_org(
    store: &dyn Storage,
    name: &str,
    now: OffsetDateTime,
) -> Result<OrgInfo, AdminError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 160 {
        return Err(AdminError::Invalid(
            "org name must be 1 to 160 characters".into(),
        ));
    }
    let handle = ids::org_handle();
    let policy = serde_json::to_string(&Policy::initial())
        .map_err(|e| AdminError::Invalid(e.to_string()))?;
    let created_at = now_text(now);
    let org = Org {
        handle: handle.clone(),
        name: name.to_owned(),
        sandbox: false,
        disabled: false,
        policy: Some(policy),
        authority: None,
    };
    store.admin().insert_org(&org, &created_at).await?;
    Ok(OrgInfo {
        org_handle: handle,
        name: name.to_owned(),
        sandbox: false,
        disabled: false,
        created_at,
    })
}

async fn require_org(store: &dyn Storage, handle: &str) -> Result<Org, AdminError> {
    store
        .negotiations()
        .org(handle)
        .await?
        .ok_or_else(|| AdminError::UnknownOrg(handle.to_owned()))
}

/// Disables an org: every later session open to it is a uniform refusal.
pub async fn disable_org(store: &dyn Storage, handle: &str) -> Result<(), AdminError> {
    if require_org(store, handle).await?.sandbox {
        return Err(AdminError::SandboxFixed);
    }
    store.admin().disable_org(handle).await?;
    Ok(())
}

/// Every org, the sandbox first, then oldest first.
pub async fn list_orgs(store: &dyn Storage) -> Result<Vec<OrgInfo>, AdminError> {
    Ok(store
        .admin()
        .orgs()
        .await?
        .into_iter()
        .map(|o| OrgInfo {
            org_handle: o.org.handle,
            name: o.org.name,
            sandbox: o.org.sandbox,
            disabled: o.org.disabled,
            created_at: o.created_at,
        })
        .collect())
}

/// Every registered agent, oldest first.
pub async fn list_agents(store: &dyn Storage) -> Result<Vec<AgentInfo>, AdminError> {
    Ok(store
        .admin()
        .agents()
        .await?
        .into_iter()
        .map(|a| AgentInfo {
            agent_id: a.id,
            agent_name: a.agent_name,
            vendor_name: a.vendor_name,
            contact_email: a.contact_email,
            fingerprint: a.fingerprint,
            status: a.status,
            registered_at: a.registered_at,
            names_verified: a.names_verified,
        })
        .collect())
}

/// Every registration of a vendor agent's key with the names it declared,
/// oldest first: what an admin reads before `agent verify` (ANP/0.1's
/// registration proof is replayable, so a registration's names are only
/// its sender's claim).
pub async fn agent_registrations(
    store: &dyn Storage,
    agent_id: &str,
) -> Result<Vec<RegistrationInfo>, AdminError> {
    agent_status(store, agent_id).await?;
    Ok(store
        .principals()
        .agent_registrations(agent_id)
        .await?
        .into_iter()
        .map(|r| RegistrationInfo {
            ordinal: r.ordinal,
            agent_name: r.agent_name,
            vendor_name: r.vendor_name,
            contact_email: r.contact_email,
            registered_at: r.registered_at,
        })
        .collect())
}

async fn agent_status(store: &dyn Storage, agent_id: &str) -> Result<AgentStatus, AdminError> {
    store
        .principals()
        .agent(agent_id)
        .await?
        .map(|a| a.status)
        .ok_or_else(|| AdminError::UnknownAgent(agent_id.to_owned()))
}

/// Every gate agent, oldest first.
pub async fn list_gate_agents(store: &dyn Storage) -> Result<Vec<GateAgentInfo>, AdminError> {
    Ok(store
        .gate()
        .gate_agents()
        .await?
        .into_iter()
        .map(|a| GateAgentInfo {
            agent_id: a.id,
            org_handle: a.org_handle,
            protocol: a.protocol,
            name: a.name,
            fingerprint: a.fingerprint,
            callback_url: a.callback_url,
            enrolled_at: a.enrolled_at,
            revoked_at: a.revoked_at,
            owner: a.owner_email,
        })
        .collect())
}

/// True for a gate agent's id (`gate_…`); vendor agents' ids are UUIDs.
pub fn is_gate_agent(agent_id: &str) -> bool {
    agent_id.starts_with("gate_")
}

/// Issues a one-time code that enrolls one gate agent of `org_handle` for
/// `protocol` (`concordia`), owned by the approver whose email is `owner`
/// when one is named (recorded on the agent; docs/authority.md).
pub async fn gate_enroll_code(
    store: &dyn Storage,
    org_handle: &str,
    name: &str,
    protocol: &str,
    owner: Option<&str>,
    ttl: std::time::Duration,
    now: OffsetDateTime,
) -> Result<GateEnrollmentCode, AdminError> {
    require_org(store, org_handle).await?;
    let owner = match owner.map(str::trim) {
        Some(email) if !plausible_email(email) => {
            return Err(AdminError::Invalid(format!(
                "--owner {email:?} is not an email: name the owner by the email their approver enrollment was issued for"
            )))
        }
        Some(email) => Some(email.to_ascii_lowercase()),
        None => None,
    };
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 160 {
        return Err(AdminError::Invalid(
            "agent name must be 1 to 160 characters".into(),
        ));
    }
    let Some(protocol) = GateProtocol::parse(protocol) else {
        let known: Vec<&str> = GateProtocol::ALL.iter().map(|p| p.name()).collect();
        return Err(AdminError::Invalid(format!(
            "the gate does not speak {protocol:?}; --protocol must be one of: {}",
            known.join(", ")
        )));
    };
    let code = ids::gate_code();
    let expires =
        now + time::Duration::seconds(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 4));
    store
        .gate()
        .insert_gate_code(
            &ids::code_hash(&code),
            &GateCodeRow {
                org_handle: org_handle.to_owned(),
                name: name.to_owned(),
                protocol: protocol.name().to_owned(),
                expires_at: expires.unix_timestamp(),
                used: false,
                owner_email: owner.clone(),
            },
        )
        .await?;
    Ok(GateEnrollmentCode {
        code,
        org: org_handle.to_owned(),
        protocol: protocol.name().to_owned(),
        expires_at: now_text(expires),
        owner,
    })
}

/// Marks an agent verified by a person: it may now open live sessions.
pub async fn verify_agent(store: &dyn Storage, agent_id: &str) -> Result<(), AdminError> {
    if is_gate_agent(agent_id) {
        return Err(AdminError::Invalid(format!(
            "{agent_id} is a gate agent: it was enrolled by an admin's code and needs no verification"
        )));
    }
    if agent_status(store, agent_id).await? == AgentStatus::Revoked {
        return Err(AdminError::AgentRevoked(agent_id.to_owned()));
    }
    // Verifies the agent and the names it now carries.
    store.admin().set_agent_status(agent_id, "verified").await?;
    Ok(())
}

/// Revokes an agent (a vendor agent or a gate agent): it is refused
/// everywhere from now on.
pub async fn revoke_agent(store: &dyn Storage, agent_id: &str) -> Result<(), AdminError> {
    if is_gate_agent(agent_id) {
        let now = now_text(OffsetDateTime::now_utc());
        if !store.gate().revoke_gate_agent(agent_id, &now).await? {
            return Err(AdminError::UnknownAgent(agent_id.to_owned()));
        }
        return Ok(());
    }
    if !store.admin().set_agent_status(agent_id, "revoked").await? {
        return Err(AdminError::UnknownAgent(agent_id.to_owned()));
    }
    Ok(())
}

/// Issues a one-time enrollment code for an approver of `org_handle`.
pub async fn enroll_code(
    store: &dyn Storage,
    org_handle: &str,
    name: &str,
    email: &str,
    ttl: std::time::Duration,
    now: OffsetDateTime,
) -> Result<EnrollmentCode, AdminError> {
    require_org(store, org_handle).await?;
    let name = name.trim();
    let email = email.trim();
    if name.is_empty() || name.chars().count() > 160 {
        return Err(AdminError::Invalid(
            "approver name must be 1 to 160 characters".into(),
        ));
    }
    if !plausible_email(email) {
        return Err(AdminError::Invalid(format!(
            "{email:?} is not an email address (it becomes the approval's approved_by)"
        )));
    }
    let code = ids::enrollment_code();
    let expires =
        now + time::Duration::seconds(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 4));
    store
        .admin()
        .insert_code(
            &ids::code_hash(&code),
            &CodeRow {
                org_handle: org_handle.to_owned(),
                name: name.to_owned(),
                email: email.to_owned(),
                expires_at: expires.unix_timestamp(),
                used: false,
            },
        )
        .await?;
    Ok(EnrollmentCode {
        code,
        org_handle: org_handle.to_owned(),
        expires_at: now_text(expires),
    })
}

/// Every approver, oldest first.
pub async fn list_approvers(store: &dyn Storage) -> Result<Vec<ApproverInfo>, AdminError> {
    Ok(store
        .admin()
        .approvers()
        .await?
        .into_iter()
        .map(|a| ApproverInfo {
            approver_id: a.id,
            org_handle: a.org_handle,
            name: a.name,
            email: a.email,
            fingerprint: a.fingerprint,
            enrolled_at: a.enrolled_at,
            revoked_at: a.revoked_at,
            retired_at: a.retired_at,
        })
        .collect())
}

/// Revokes an approver: refused from now on; its key's `valid_to` is set.
pub async fn revoke_approver(
    store: &dyn Storage,
    approver_id: &str,
    now: OffsetDateTime,
) -> Result<(), AdminError> {
    if !store
        .admin()
        .revoke_approver(approver_id, &now_text(now))
        .await?
    {
        return Err(AdminError::UnknownApprover(approver_id.to_owned()));
    }
    Ok(())
}

/// Loads a policy (JSON text) for an org, replacing the previous one.
pub async fn load_policy(
    store: &dyn Storage,
    org_handle: &str,
    policy_json: &str,
) -> Result<Policy, AdminError> {
    require_org(store, org_handle).await?;
    let policy = Policy::from_json(policy_json)?;
    let stored = serde_json::to_string(&policy).map_err(|e| AdminError::Invalid(e.to_string()))?;
    store.admin().set_policy(org_handle, &stored).await?;
    Ok(policy)
}
