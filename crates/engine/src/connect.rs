//! Connecting to a host: discover it, prove possession of the approver key,
//! enroll with a one-time code, and pin the platform key from discovery
//! (cross-checked with the key the enrollment answer names).

use anp::api::{DiscoveredKey, WellKnown};
use countersign_client::ApproverClient;

use crate::config::ApproverProfile;
use crate::engine::{now_text, Engine};
use crate::error::EngineError;
use crate::protocol::ANP_0_1;
use crate::store::HostRecord;

fn normalize_url(url: &str) -> Result<String, EngineError> {
    let url = url.trim().trim_end_matches('/');
    let ok =
        (url.starts_with("http://") || url.starts_with("https://")) && url.len() > "https://".len();
    if !ok || url.chars().any(char::is_whitespace) {
        return Err(EngineError::InvalidInput(format!(
            "{url:?} is not a host address; use one like https://anp.example.com."
        )));
    }
    Ok(url.to_owned())
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

/// The approver keys the host publishes (role `approval`, named by email).
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

/// Enrolls and stores the host; `sandbox` marks the embedded one.
pub(crate) async fn connect(
    engine: &Engine,
    url: &str,
    code: &str,
    sandbox: bool,
    profile: &ApproverProfile,
) -> Result<HostRecord, EngineError> {
    let url = normalize_url(url)?;
    let code = code.trim();
    if code.is_empty() || code.len() > 200 {
        return Err(EngineError::InvalidInput(
            "The enrollment code is empty or too long; paste the code the host's admin gave you."
                .into(),
        ));
    }
    if engine.store()?.host_by_url(&url)?.is_some() {
        return Err(EngineError::AlreadyConnected(url));
    }
    let discovery = countersign_client::well_known(&url)
        .await
        .map_err(|e| client_error(&url, e))?;
    if !names_approvers(&discovery) {
        return Err(EngineError::InvalidInput(format!(
            "{url} publishes only RFC-003's discovery document, which does not say whose each approval key is (approved_by), and the console checks every approval against the key of the person it names, so it cannot connect. Ask the host's admin to publish the full document (countersign-host serves it unless started with --discovery rfc003 or none)."
        )));
    }
    let enrolled =
        ApproverClient::enroll(&url, code, &profile.name, &profile.email, &engine.inner.key)
            .await
            .map_err(|e| client_error(&url, e))?;
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
    let label = url.split("://").nth(1).unwrap_or(&url).to_owned();
    let record = HostRecord {
        host_id: uuid::Uuid::new_v4().to_string(),
        protocol: ANP_0_1.to_owned(),
        url: url.clone(),
        label: if sandbox { "Sandbox".to_owned() } else { label },
        sandbox,
        approver_id: enrolled.approver_id,
        approver_email: profile.email.clone(),
        platform_key: enrolled.platform_key,
        platform_fingerprint: enrolled.platform_fingerprint,
        approver_keys: serde_json::to_string(&approver_keys(&discovery))
            .unwrap_or_else(|_| "[]".into()),
        reachable: true,
        last_error: None,
        last_poll_at: None,
    };
    engine.store()?.insert_host(&record, &now_text())?;
    engine.emit(
        crate::views::ChangeScope::Hosts,
        Some(&record.host_id),
        None,
    );
    Ok(record)
}
