//! The admin's policy of authority (docs/authority.md): load a version,
//! show the current one (or any earlier one). A file is checked whole by
//! `countersign-authority` before anything is stored; a refusal names the
//! line, the field and the reason.

use std::collections::BTreeMap;

use serde::Serialize;
use time::OffsetDateTime;

use crate::admin::AdminError;
use crate::store::{AuthorityRow, Storage};

/// One rule, as `authority show` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleInfo {
    /// Its place, counted from 1 (the routing reason's "rule 3").
    pub number: usize,
    /// Its name.
    pub name: String,
    /// Each step's roles with their counts ("buyer", "2 of finance",
    /// "all of legal"), a parallel group's joined by " + ".
    pub chain: Vec<String>,
}

/// A version of an org's policy of authority, as loaded or shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuthorityInfo {
    /// The org.
    pub org_handle: String,
    /// The version, counted from 1.
    pub version: u64,
    /// Who loaded it.
    pub loaded_by: String,
    /// When.
    pub loaded_at: String,
    /// Each role and the emails that hold it.
    pub roles: BTreeMap<String, Vec<String>>,
    /// The rules, in order.
    pub rules: Vec<RuleInfo>,
    /// Holders no active approver of the org is enrolled as yet: they cannot
    /// act until they are (a warning, not a refusal: approvers are often
    /// enrolled after the policy is written).
    pub not_enrolled: Vec<String>,
    /// The file as loaded.
    pub text: String,
}

/// What an org without a policy of authority decides by: its buyer
/// policy's one threshold (docs/authority.md, "The old policy").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LegacyInfo {
    /// The org.
    pub org_handle: String,
    /// `approval.above_total`, exact.
    pub above_total: String,
    /// `approval.approvers_required`.
    pub approvers_required: u32,
}

/// What `authority show` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Shown {
    /// A loaded version.
    Loaded(Box<AuthorityInfo>),
    /// No version loaded: the old threshold decides.
    Legacy(LegacyInfo),
}

fn step_text(step: &authority::Step) -> String {
    step.parts
        .iter()
        .map(|p| match p.need {
            authority::Need::One => p.role.clone(),
            authority::Need::Count(n) => format!("{n} of {}", p.role),
            authority::Need::All => format!("all of {}", p.role),
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

async fn info(store: &dyn Storage, row: AuthorityRow) -> Result<AuthorityInfo, AdminError> {
    let policy = authority::parse(&row.text).map_err(|e| {
        AdminError::Invalid(format!(
            "stored policy of authority version {} no longer reads: {e}",
            row.version
        ))
    })?;
    let enrolled: Vec<authority::Person> = store
        .admin()
        .approvers()
        .await?
        .into_iter()
        .filter(|a| a.org_handle == row.org_handle && a.revoked_at.is_none())
        .map(|a| authority::Person::new(&a.email))
        .collect();
    let mut roles = BTreeMap::new();
    let mut not_enrolled = Vec::new();
    for (name, holders) in &policy.roles {
        let people: Vec<String> = match holders {
            authority::Holders::People(p) => p.iter().map(|p| p.to_string()).collect(),
            authority::Holders::EveryApprover => Vec::new(),
        };
        for p in &people {
            if !enrolled.contains(&authority::Person::new(p)) && !not_enrolled.contains(p) {
                not_enrolled.push(p.clone());
            }
        }
        roles.insert(name.clone(), people);
    }
    let rules = policy
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| RuleInfo {
            number: i + 1,
            name: r.name.clone(),
            chain: r.chain.steps.iter().map(step_text).collect(),
        })
        .collect();
    Ok(AuthorityInfo {
        org_handle: row.org_handle,
        version: row.version,
        loaded_by: row.loaded_by,
        loaded_at: row.loaded_at,
        roles,
        rules,
        not_enrolled,
        text: row.text,
    })
}

/// Loads `text` as the org's next version of its policy of authority.
/// Requests already asked keep the version they were routed under.
pub async fn load(
    store: &dyn Storage,
    org_handle: &str,
    text: &str,
    loaded_by: &str,
    now: OffsetDateTime,
) -> Result<AuthorityInfo, AdminError> {
    authority::parse(text).map_err(AdminError::Authority)?;
    let by = loaded_by.trim();
    if by.is_empty() || by.len() > 200 {
        return Err(AdminError::Invalid(
            "--by must name who loads the policy (1 to 200 characters)".into(),
        ));
    }
    let at = anp::api::format_timestamp(now);
    let version = store
        .authority()
        .load_authority(org_handle, text, by, &at)
        .await?
        .ok_or_else(|| AdminError::UnknownOrg(org_handle.to_owned()))?;
    let row = store
        .authority()
        .authority(org_handle, Some(version))
        .await?
        .ok_or_else(|| AdminError::Invalid(format!("version {version} was not stored")))?;
    info(store, row).await
}

/// The org's current policy of authority (or `version`), or, when it has
/// never loaded one, the old threshold it decides by.
pub async fn show(
    store: &dyn Storage,
    org_handle: &str,
    version: Option<u64>,
) -> Result<Shown, AdminError> {
    let org = store
        .negotiations()
        .org(org_handle)
        .await?
        .ok_or_else(|| AdminError::UnknownOrg(org_handle.to_owned()))?;
    match store.authority().authority(org_handle, version).await? {
        Some(row) => Ok(Shown::Loaded(Box::new(info(store, row).await?))),
        None if version.is_some() => Err(AdminError::Invalid(format!(
            "org {org_handle} has no policy of authority version {}",
            version.unwrap_or_default()
        ))),
        None => {
            let policy = org.policy().map_err(AdminError::Invalid)?;
            Ok(Shown::Legacy(LegacyInfo {
                org_handle: org_handle.to_owned(),
                above_total: policy.approval.above_total.to_string(),
                approvers_required: policy.approval.approvers_required,
            }))
        }
    }
}
