//! Enrolling with a host: its discovery document (where the platform key
//! is published), proof of possession of the approver key, the one-time
//! code, the cross-check that discovery and the enrollment answer name the
//! same platform key, and the org's approver keys named by person, which
//! only the signed approver API gives (`GET /keys`; the public document
//! names no one).

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

/// A client's failure at the host at `url` as the engine reports it: the
/// host's refusal in its words, an unreachable host, or a garbled answer.
pub(crate) fn client_error(url: &str, e: countersign_client::ClientError) -> EngineError {
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

/// The approver keys a document names (role `approval`, with the email
/// each signs as).
pub(crate) fn approver_keys(doc: &WellKnown) -> Vec<DiscoveredKey> {
    doc.platform_keys
        .iter()
        .filter(|k| k.roles.iter().any(|r| r == "approval") && k.approved_by.is_some())
        .cloned()
        .collect()
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
    let client = ApproverClient::new(url, key.clone(), &enrolled.approver_id)
        .map_err(|e| client_error(url, e))?;
    let named = client.keys().await.map_err(|e| match e {
        countersign_client::ClientError::Http { status: 404, .. } => EngineError::InvalidInput(format!(
            "{url} enrolled this console but does not say whose each approval key is (GET /api/console/v1/keys answered 404), and the console checks every approval against the key of the person it names, so it cannot connect. Ask the host's admin to upgrade countersign-host."
        )),
        other => client_error(url, other),
    })?;
    Ok(Enrolled {
        approver_id: enrolled.approver_id,
        platform_key: enrolled.platform_key,
        platform_fingerprint: enrolled.platform_fingerprint,
        approver_keys: serde_json::to_string(&approver_keys(&named))
            .unwrap_or_else(|_| "[]".into()),
    })
}

/// The org's approver keys now, named (JSON array), for checking approvals
/// in a record just fetched; `None` when the host cannot be asked.
pub(crate) async fn refresh_approver_keys(client: &ApproverClient) -> Option<String> {
    let doc = client.keys().await.ok()?;
    serde_json::to_string(&approver_keys(&doc)).ok()
}

/// Moves this console's approver at the host `client` talks to onto
/// `new_key` (`POST /keys/rotate`, signed by the key `client` holds, which
/// consents): answers the host's record of the move, or a sentence saying
/// why the host did not move (it did not answer, or it refused).
pub(crate) async fn rotate_key(
    client: &ApproverClient,
    new_key: &SigningKey,
    now: time::OffsetDateTime,
) -> Result<countersign_host_api::approver::RotateKeyResponse, String> {
    client.rotate_key(new_key, now).await.map_err(|e| match e {
        countersign_client::ClientError::Transport { detail, .. } => {
            format!("The host did not answer ({detail}); it keeps the old key until it does.")
        }
        other => format!("The host refused the move: {other}"),
    })
}
