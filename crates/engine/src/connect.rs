//! Connecting to a host: discover it, prove possession of the approver key,
//! enroll with a one-time code, and pin the platform key from discovery
//! (cross-checked with the key the enrollment answer names).

use crate::config::ApproverProfile;
use crate::context::Context;
use crate::error::EngineError;
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

/// Enrolls and stores the host; `sandbox` marks the embedded one.
pub(crate) async fn connect(
    ctx: &Context,
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
    if ctx.store()?.host_by_url(&url)?.is_some() {
        return Err(EngineError::AlreadyConnected(url));
    }
    let enrolled = crate::edge::enroll::enroll(&url, code, profile, &ctx.key).await?;
    let label = url.split("://").nth(1).unwrap_or(&url).to_owned();
    let record = HostRecord {
        host_id: uuid::Uuid::new_v4().to_string(),
        protocol: crate::edge::API_PROTOCOL.to_owned(),
        url: url.clone(),
        label: if sandbox { "Sandbox".to_owned() } else { label },
        sandbox,
        approver_id: enrolled.approver_id,
        approver_email: profile.email.clone(),
        platform_key: enrolled.platform_key,
        platform_fingerprint: enrolled.platform_fingerprint,
        approver_keys: enrolled.approver_keys,
        reachable: true,
        last_error: None,
        last_poll_at: None,
    };
    ctx.store()?.insert_host(&record, &ctx.now_text())?;
    ctx.emit(
        crate::views::ChangeScope::Hosts,
        Some(&record.host_id),
        None,
    );
    Ok(record)
}
