//! The admin operations: orgs, agents, approvers and policies. The CLI and
//! an embedding console engine call these same functions, against the same
//! database file a running server uses.

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use time::OffsetDateTime;

use anp::api::AgentStatus;

use crate::db::now_text;
use crate::ids;
use crate::policy::{Policy, PolicyError};

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
    /// The sandbox org cannot be disabled.
    #[error("the built-in sandbox org cannot be disabled")]
    SandboxFixed,
    /// SQLite failed.
    #[error("database: {0}")]
    Db(#[from] rusqlite::Error),
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

/// Creates an org with a fresh unguessable handle and the initial policy.
pub fn create_org(
    conn: &Connection,
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
    conn.execute(
        "INSERT INTO orgs (handle, name, sandbox, disabled, policy, created_at) VALUES (?1, ?2, 0, 0, ?3, ?4)",
        params![handle, name, policy, created_at],
    )?;
    Ok(OrgInfo {
        org_handle: handle,
        name: name.to_owned(),
        sandbox: false,
        disabled: false,
        created_at,
    })
}

fn require_org(conn: &Connection, handle: &str) -> Result<bool, AdminError> {
    conn.query_row(
        "SELECT sandbox FROM orgs WHERE handle = ?1",
        [handle],
        |r| r.get::<_, bool>(0),
    )
    .optional()?
    .ok_or_else(|| AdminError::UnknownOrg(handle.to_owned()))
}

/// Disables an org: every later session open to it is a uniform refusal.
pub fn disable_org(conn: &Connection, handle: &str) -> Result<(), AdminError> {
    if require_org(conn, handle)? {
        return Err(AdminError::SandboxFixed);
    }
    conn.execute("UPDATE orgs SET disabled = 1 WHERE handle = ?1", [handle])?;
    Ok(())
}

/// Every org, oldest first.
pub fn list_orgs(conn: &Connection) -> Result<Vec<OrgInfo>, AdminError> {
    let mut stmt = conn.prepare(
        "SELECT handle, name, sandbox, disabled, created_at FROM orgs ORDER BY sandbox DESC, created_at, handle",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(OrgInfo {
            org_handle: r.get(0)?,
            name: r.get(1)?,
            sandbox: r.get(2)?,
            disabled: r.get(3)?,
            created_at: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Reads an agent status as stored.
pub fn parse_status(text: &str) -> AgentStatus {
    match text {
        "verified" => AgentStatus::Verified,
        "sandbox" => AgentStatus::Sandbox,
        _ => AgentStatus::Revoked,
    }
}

/// The stored form of an agent status.
pub fn status_text(status: AgentStatus) -> &'static str {
    match status {
        AgentStatus::Sandbox => "sandbox",
        AgentStatus::Verified => "verified",
        AgentStatus::Revoked => "revoked",
    }
}

/// Every registered agent, oldest first.
pub fn list_agents(conn: &Connection) -> Result<Vec<AgentInfo>, AdminError> {
    let mut stmt = conn.prepare(
        "SELECT id, agent_name, vendor_name, contact_email, fingerprint, status, registered_at FROM agents ORDER BY registered_at, id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(AgentInfo {
            agent_id: r.get(0)?,
            agent_name: r.get(1)?,
            vendor_name: r.get(2)?,
            contact_email: r.get(3)?,
            fingerprint: r.get(4)?,
            status: parse_status(&r.get::<_, String>(5)?),
            registered_at: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn agent_status(conn: &Connection, agent_id: &str) -> Result<AgentStatus, AdminError> {
    conn.query_row("SELECT status FROM agents WHERE id = ?1", [agent_id], |r| {
        r.get::<_, String>(0)
    })
    .optional()?
    .map(|s| parse_status(&s))
    .ok_or_else(|| AdminError::UnknownAgent(agent_id.to_owned()))
}

/// Marks an agent verified by a person: it may now open live sessions.
pub fn verify_agent(conn: &Connection, agent_id: &str) -> Result<(), AdminError> {
    if agent_status(conn, agent_id)? == AgentStatus::Revoked {
        return Err(AdminError::AgentRevoked(agent_id.to_owned()));
    }
    conn.execute(
        "UPDATE agents SET status = 'verified' WHERE id = ?1",
        [agent_id],
    )?;
    Ok(())
}

/// Revokes an agent: it is refused everywhere from now on.
pub fn revoke_agent(conn: &Connection, agent_id: &str) -> Result<(), AdminError> {
    agent_status(conn, agent_id)?;
    conn.execute(
        "UPDATE agents SET status = 'revoked' WHERE id = ?1",
        [agent_id],
    )?;
    Ok(())
}

/// Issues a one-time enrollment code for an approver of `org_handle`.
pub fn enroll_code(
    conn: &Connection,
    org_handle: &str,
    name: &str,
    email: &str,
    ttl: std::time::Duration,
    now: OffsetDateTime,
) -> Result<EnrollmentCode, AdminError> {
    require_org(conn, org_handle)?;
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
    conn.execute(
        "INSERT INTO enrollment_codes (code_hash, org_handle, name, email, expires_at, used_at) VALUES (?1, ?2, ?3, ?4, ?5, NULL)",
        params![ids::code_hash(&code), org_handle, name, email, expires.unix_timestamp()],
    )?;
    Ok(EnrollmentCode {
        code,
        org_handle: org_handle.to_owned(),
        expires_at: now_text(expires),
    })
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

/// Every approver, oldest first.
pub fn list_approvers(conn: &Connection) -> Result<Vec<ApproverInfo>, AdminError> {
    let mut stmt = conn.prepare(
        "SELECT id, org_handle, name, email, fingerprint, enrolled_at, revoked_at FROM approvers ORDER BY enrolled_at, id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(ApproverInfo {
            approver_id: r.get(0)?,
            org_handle: r.get(1)?,
            name: r.get(2)?,
            email: r.get(3)?,
            fingerprint: r.get(4)?,
            enrolled_at: r.get(5)?,
            revoked_at: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Revokes an approver: refused from now on; its key's `valid_to` is set.
pub fn revoke_approver(
    conn: &Connection,
    approver_id: &str,
    now: OffsetDateTime,
) -> Result<(), AdminError> {
    let changed = conn.execute(
        "UPDATE approvers SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
        params![approver_id, now_text(now)],
    )?;
    if changed == 0 {
        return Err(AdminError::UnknownApprover(approver_id.to_owned()));
    }
    Ok(())
}

/// Loads a policy (JSON text) for an org, replacing the previous one.
pub fn load_policy(
    conn: &Connection,
    org_handle: &str,
    policy_json: &str,
) -> Result<Policy, AdminError> {
    require_org(conn, org_handle)?;
    let policy = Policy::from_json(policy_json)?;
    let stored = serde_json::to_string(&policy).map_err(|e| AdminError::Invalid(e.to_string()))?;
    conn.execute(
        "UPDATE orgs SET policy = ?2 WHERE handle = ?1",
        params![org_handle, stored],
    )?;
    Ok(policy)
}
