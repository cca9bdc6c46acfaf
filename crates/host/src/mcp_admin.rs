//! The admin operations of the MCP surface (docs/mcp.md): issue a gate
//! agent a bearer token for `/mcp`, list the tokens, revoke one. The token
//! is shown once; only its SHA-256 is stored.

use rand_core::{OsRng, RngCore};
use serde::Serialize;
use time::OffsetDateTime;

use crate::admin::AdminError;
use crate::store::{GateAgentRow, McpTokenRow, Storage};

/// An MCP token as `agent mcp-tokens` lists it (never the token).
#[derive(Debug, Clone, Serialize)]
pub struct McpTokenInfo {
    /// `mcptok_…`: what `agent mcp-revoke` takes.
    pub token_id: String,
    /// The gate agent its calls are attributed to.
    pub agent_id: String,
    /// When it was issued.
    pub created_at: String,
    /// When it was revoked.
    pub revoked_at: Option<String>,
}

/// A token just issued: the only time it is shown.
#[derive(Debug, Clone, Serialize)]
pub struct McpCredential {
    /// The token's record.
    #[serde(flatten)]
    pub info: McpTokenInfo,
    /// `mcp_` + 43 base64url characters: the bearer token.
    pub token: String,
    /// Where an MCP client connects, relative to the host's URL.
    pub endpoint_path: &'static str,
}

/// The MCP endpoint's path on the host.
pub const MCP_PATH: &str = "/mcp";

fn info(row: McpTokenRow) -> McpTokenInfo {
    McpTokenInfo {
        token_id: row.id,
        agent_id: row.agent_id,
        created_at: row.created_at,
        revoked_at: row.revoked_at,
    }
}

/// Issues a bearer token for MCP to an enrolled, unrevoked gate agent.
pub async fn issue_token(
    store: &dyn Storage,
    agent_id: &str,
    now: OffsetDateTime,
) -> Result<McpCredential, AdminError> {
    let Some(agent) = store.gate().gate_agent(agent_id).await? else {
        return Err(AdminError::Invalid(format!(
            "no gate agent with id {agent_id:?}: enroll the agent at the gate first (`agent enroll`), then issue its MCP token"
        )));
    };
    if agent.revoked_at.is_some() {
        return Err(AdminError::AgentRevoked(agent_id.to_owned()));
    }
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let token = format!("mcp_{}", jcs::b64url::encode(&bytes));
    let mut id = [0u8; 16];
    OsRng.fill_bytes(&mut id);
    let row = McpTokenRow {
        id: format!("mcptok_{}", hex::encode(id)),
        agent_id: agent.id,
        token_hash: crate::ids::code_hash(&token),
        created_at: anp::api::format_timestamp(now),
        revoked_at: None,
    };
    store.gate().insert_mcp_token(&row).await?;
    Ok(McpCredential {
        info: info(row),
        token,
        endpoint_path: MCP_PATH,
    })
}

/// Every MCP token, oldest first.
pub async fn list_tokens(store: &dyn Storage) -> Result<Vec<McpTokenInfo>, AdminError> {
    Ok(store
        .gate()
        .mcp_tokens()
        .await?
        .into_iter()
        .map(info)
        .collect())
}

/// Revokes a token: refused from now on, like an unknown one.
pub async fn revoke_token(
    store: &dyn Storage,
    token_id: &str,
    now: OffsetDateTime,
) -> Result<(), AdminError> {
    if store
        .gate()
        .revoke_mcp_token(token_id, &anp::api::format_timestamp(now))
        .await?
    {
        Ok(())
    } else {
        Err(AdminError::Invalid(format!(
            "no MCP token with id {token_id:?}"
        )))
    }
}

/// An agent enrolled for MCP alone, with its token (shown once).
#[derive(Debug, Clone, Serialize)]
pub struct McpAgent {
    /// Its gate agent id (`gate_…`).
    pub agent_id: String,
    /// Its org.
    pub org: String,
    /// `plain`: it asks about plain terms.
    pub protocol: &'static str,
    /// Its token.
    #[serde(flatten)]
    pub credential: McpCredential,
}

/// Enrolls an agent of `org_handle` that asks about plain terms over MCP
/// only (it holds no key, so it signs nothing at the gate's HTTP API), owned
/// by the approver whose email is `owner` when named, and issues its token.
pub async fn enroll_mcp_agent(
    store: &dyn Storage,
    org_handle: &str,
    name: &str,
    owner: Option<&str>,
    now: OffsetDateTime,
) -> Result<McpAgent, AdminError> {
    // The same checks as any gate agent's code (org, name, owner).
    let code = crate::admin::gate_enroll_code(
        store,
        org_handle,
        name,
        countersign_host_api::protocol::PLAIN,
        owner,
        std::time::Duration::from_secs(60),
        now,
    )
    .await?;
    let agent = GateAgentRow {
        id: crate::ids::gate_agent_id(),
        org_handle: org_handle.to_owned(),
        protocol: countersign_host_api::protocol::PLAIN.to_owned(),
        name: name.trim().to_owned(),
        // No key: nothing it could sign verifies; it is reached by its token.
        public_key: String::new(),
        fingerprint: "mcp-only".to_owned(),
        callback_url: None,
        enrolled_at: anp::api::format_timestamp(now),
        revoked_at: None,
        owner_email: code.owner.clone(),
    };
    if !store
        .gate()
        .enroll_gate_agent(
            &crate::ids::code_hash(&code.code),
            &agent,
            now.unix_timestamp(),
        )
        .await?
    {
        return Err(AdminError::Invalid(
            "the agent's enrollment did not take; try again".into(),
        ));
    }
    let credential = issue_token(store, &agent.id, now).await?;
    Ok(McpAgent {
        agent_id: agent.id,
        org: org_handle.to_owned(),
        protocol: countersign_host_api::protocol::PLAIN,
        credential,
    })
}
