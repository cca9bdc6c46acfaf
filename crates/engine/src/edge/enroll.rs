//! Enrolling with a host: its discovery document (where the platform and
//! approver keys are published), proof of possession of the approver key,
//! the one-time code, and the cross-check that discovery and the
//! enrollment answer name the same platform key.

use anp::api::{DiscoveredKey, WellKnown};
use countersign_client::ApproverClient;
use ed25519_dalek::SigningKey;

use crate::config::ApproverProfile;
use crate::error::EngineError;

/// What enrollment established with a host.
#[derive(Debug, Clone)]
pub(crate) struct Enrolled {
    /// This console's approver id there.
    pub approver_id: String,
    /// The platform key, published by discovery and named by enrollment.
    pub platform_key: String,
    /// Its fingerprint.
    pub platform_fingerprint: String,
    /// The approver keys the host publishes (JSON array).
    pub approver_keys: String,
}

fn client_error(url: &str, e: countersign_client::ClientError) -> EngineError {
    match e {
        countersign_client::ClientError::Http { code, message, .. } => {
            EngineError::HostRefused { code, message }
        }
        countersign_client::ClientError::Transport { detail, .. } => EngineError::Unreachable {
            url: url.to_owned(),
            detail,
        },
        // Discovery is optional for an ANP/0.1 host, but the console pins the
        // host's platform and approver keys from it.
        countersign_client::ClientError::NoDiscovery { .. } => EngineError::InvalidInput(format!(
            "{url} publishes no discovery document (/.well-known/anp.json, RFC-003), and the console needs it to learn the host's platform and approver keys, so it cannot connect. Ask the host's admin to publish it (countersign-host serves it unless started with --discovery none)."
        )),
        other => EngineError::Protocol(other.to_string()),
    }
}

/// The approver keys a discovery document publishes (role `approval`,
/// named by email).
pub(crate) fn approver_keys(doc: &WellKnown) -> Vec<DiscoveredKey> {
    doc.platform_keys
        .iter()
        .filter(|k| k.roles.iter().any(|r| r == "approval") && k.approved_by.is_some())
        .cloned()
        .collect()
}

/// True when the document names each approval key's person (`approved_by`,
/// our addition to RFC-003), which the console checks every approval
/// against. RFC-003 alone does not: against such a host every accept would
/// look disputed. A document with no approval key yet is trusted to name
/// them when it carries our other addition, `drafts`.
fn names_approvers(doc: &WellKnown) -> bool {
    let mut approval = doc
        .platform_keys
        .iter()
        .filter(|k| k.roles.iter().any(|r| r == "approval"))
        .peekable();
    match approval.peek() {
        None => !doc.drafts.is_empty(),
        Some(_) => approval.all(|k| k.approved_by.is_some()),
    }
}

/// Discovers, enrolls with `code` as `profile`, and cross-checks the
/// platform key. Nothing is stored here.
pub(crate) async fn enroll(
    url: &str,
    code: &str,
    profile: &ApproverProfile,
    key: &SigningKey,
) -> Result<Enrolled, EngineError> {
    let discovery = countersign_client::well_known(url)
        .await
        .map_err(|e| client_error(url, e))?;
    if !names_approvers(&discovery) {
        return Err(EngineError::InvalidInput(format!(
            "{url} publishes only RFC-003's discovery document, which does not say whose each approval key is (approved_by), and the console checks every approval against the key of the person it names, so it cannot connect. Ask the host's admin to publish the full document (countersign-host serves it unless started with --discovery rfc003 or none)."
        )));
    }
    let enrolled = ApproverClient::enroll(url, code, &profile.name, &profile.email, key)
        .await
        .map_err(|e| client_error(url, e))?;
    // Pin the platform key only when discovery and enrollment agree on it.
    let published = discovery.platform_keys.iter().any(|k| {
        k.public_key == enrolled.platform_key && k.fingerprint == enrolled.platform_fingerprint
    });
    let computed = anp::keys::parse_public_key(&enrolled.platform_key)
        .map(|k| anp::keys::fingerprint(&k))
        .map_err(|e| EngineError::Protocol(format!("platform key: {e}")))?;
    if !published || computed != enrolled.platform_fingerprint {
        return Err(EngineError::Protocol(
            "the platform key in the enrollment answer is not the one the host publishes in /.well-known/anp.json".into(),
        ));
    }
    Ok(Enrolled {
        approver_id: enrolled.approver_id,
        platform_key: enrolled.platform_key,
        platform_fingerprint: enrolled.platform_fingerprint,
        approver_keys: serde_json::to_string(&approver_keys(&discovery))
            .unwrap_or_else(|_| "[]".into()),
    })
}

/// The host's approver keys now (JSON array), for checking approvals in a
/// record just fetched; `None` when discovery cannot be read.
pub(crate) async fn refresh_approver_keys(client: &ApproverClient) -> Option<String> {
    let doc = client.well_known().await.ok()?;
    serde_json::to_string(&approver_keys(&doc)).ok()
}
