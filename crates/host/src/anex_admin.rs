//! The admin's ANEX operations (docs/anex-binding.md, "Authentication",
//! "The owner's policy", "Data exchange"): load an org's ANEX policy and
//! data set, register counterparty agents and issue their bearer tokens
//! (shown once; only their SHA-256 is stored), list and revoke them.

use rand_core::{OsRng, RngCore as _};
use serde::Serialize;
use time::OffsetDateTime;

use crate::admin::AdminError;
use crate::store::{AnexCounterpartyRow, AnexFile, Storage};

/// A counterparty as `anex counterparty list` prints it (never its token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnexCounterpartyInfo {
    /// `anexcp_…`.
    pub counterparty_id: String,
    /// The org it may talk to.
    pub org_handle: String,
    /// Its ANEX agent identity.
    pub identity: String,
    /// Its display name.
    pub name: String,
    /// The relation the policy's `relations` match.
    pub relation: Option<String>,
    /// When it was registered.
    pub created_at: String,
    /// When its token was revoked.
    pub revoked_at: Option<String>,
}

/// A registered counterparty and its token, shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnexCredential {
    /// The counterparty.
    #[serde(flatten)]
    pub counterparty: AnexCounterpartyInfo,
    /// `anex_` + 43 base64url characters: the bearer token.
    pub token: String,
    /// Where its agent starts: `/a2a/<org>` on this host.
    pub endpoint_path: String,
}

fn info(row: AnexCounterpartyRow) -> AnexCounterpartyInfo {
    AnexCounterpartyInfo {
        counterparty_id: row.id,
        org_handle: row.org_handle,
        identity: row.identity,
        name: row.name,
        relation: row.relation,
        created_at: row.created_at,
        revoked_at: row.revoked_at,
    }
}

async fn require_org(store: &dyn Storage, handle: &str) -> Result<(), AdminError> {
    match store.negotiations().org(handle).await? {
        Some(_) => Ok(()),
        None => Err(AdminError::UnknownOrg(handle.to_owned())),
    }
}

/// Loads an org's ANEX policy (the file's text), refusing it, with the
/// reason, unless `anex::Policy::parse` reads it.
pub async fn load_policy(
    store: &dyn Storage,
    org_handle: &str,
    text: &str,
) -> Result<anex::Policy, AdminError> {
    require_org(store, org_handle).await?;
    let policy = anex::Policy::parse(text)
        .map_err(|e| AdminError::Invalid(format!("the ANEX policy: {e}")))?;
    if !store
        .anex()
        .set_anex_file(org_handle, AnexFile::Policy, text)
        .await?
    {
        return Err(AdminError::UnknownOrg(org_handle.to_owned()));
    }
    Ok(policy)
}

/// Loads an org's data set (what accepted items are answered with);
/// answers the item names it holds.
pub async fn load_data(
    store: &dyn Storage,
    org_handle: &str,
    text: &str,
) -> Result<Vec<String>, AdminError> {
    require_org(store, org_handle).await?;
    let data = anex::exchange::DataSet::parse(text)
        .map_err(|e| AdminError::Invalid(format!("the ANEX data set: {}", e.0)))?;
    if !store
        .anex()
        .set_anex_file(org_handle, AnexFile::Data, text)
        .await?
    {
        return Err(AdminError::UnknownOrg(org_handle.to_owned()));
    }
    Ok(data.names().map(|n| n.as_str().to_owned()).collect())
}

/// Registers a counterparty agent for an org and issues its token.
pub async fn add_counterparty(
    store: &dyn Storage,
    org_handle: &str,
    identity: &str,
    name: &str,
    relation: Option<&str>,
    now: OffsetDateTime,
) -> Result<AnexCredential, AdminError> {
    require_org(store, org_handle).await?;
    anex::AgentId::parse(identity).map_err(|e| {
        AdminError::Invalid(format!(
            "--identity {identity:?} is not an ANEX agent identity: {e}"
        ))
    })?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(AdminError::Invalid(
            "--name must be 1 to 200 characters on one line".into(),
        ));
    }
    if let Some(r) = relation {
        anex::Text::parse(r).map_err(|e| AdminError::Invalid(format!("--relation {r:?}: {e}")))?;
    }
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let token = format!("anex_{}", jcs::b64url::encode(&bytes));
    let mut id = [0u8; 16];
    OsRng.fill_bytes(&mut id);
    let row = AnexCounterpartyRow {
        id: format!("anexcp_{}", hex::encode(id)),
        org_handle: org_handle.to_owned(),
        identity: identity.to_owned(),
        name: name.to_owned(),
        relation: relation.map(str::to_owned),
        token_hash: crate::ids::code_hash(&token),
        created_at: anp::api::format_timestamp(now),
        revoked_at: None,
    };
    store.anex().insert_anex_counterparty(&row).await?;
    Ok(AnexCredential {
        endpoint_path: format!("/a2a/{org_handle}"),
        counterparty: info(row),
        token,
    })
}

/// Every counterparty, oldest first.
pub async fn list_counterparties(
    store: &dyn Storage,
) -> Result<Vec<AnexCounterpartyInfo>, AdminError> {
    Ok(store
        .anex()
        .anex_counterparties()
        .await?
        .into_iter()
        .map(info)
        .collect())
}

/// Revokes a counterparty's token: refused from now on, like an unknown one.
pub async fn revoke_counterparty(
    store: &dyn Storage,
    id: &str,
    now: OffsetDateTime,
) -> Result<(), AdminError> {
    if store
        .anex()
        .revoke_anex_counterparty(id, &anp::api::format_timestamp(now))
        .await?
    {
        Ok(())
    } else {
        Err(AdminError::Invalid(format!(
            "no ANEX counterparty with id {id:?}"
        )))
    }
}
