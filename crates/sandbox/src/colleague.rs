//! The sandbox's policy of authority and its demo colleague, so a new user
//! sees a chain of approvals on first launch (docs/authority.md). Grace, a
//! buyer of the sandbox organization, is enrolled once with a key of her own
//! kept in the sandbox's directory; the policy sends Northwind Software's
//! large ANP offers to a buyer, then to finance (the person), and
//! everything else to finance alone, as before. Grace approves the first
//! step of every request waiting on her, a few seconds after it arrives:
//! the person sees an offer approved at its first step by a colleague,
//! waiting on them as the second.

use std::path::{Path, PathBuf};
use std::time::Duration;

use countersign_client::ApproverClient;
use serde::{Deserialize, Serialize};

use crate::{DemoHost, SandboxError};

/// The demo colleague's email (her approvals' `approved_by`).
pub(crate) const EMAIL: &str = "grace@colleague.sandbox.example";
/// Her name as enrolled.
pub(crate) const NAME: &str = "Grace (demo colleague)";
/// Who the sandbox loads its policy as.
const LOADED_BY: &str = "the sandbox";
/// How long Grace takes to look at a request waiting on her.
const LOOKS_AFTER: Duration = Duration::from_secs(3);

fn failed(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Failed(format!("The sandbox's demo colleague: {e}."))
}

/// The sandbox's policy of authority, with `you` (the person's enrolled
/// email) in finance.
pub(crate) fn policy(you: &str) -> String {
    format!(
        r#"# The sandbox's policy of authority (docs/authority.md): Northwind
# Software's offers above 100,000 USD need a buyer (Grace, the demo
# colleague), then finance (you); everything else needs finance alone.

[roles]
buyer = ["{EMAIL}"]
finance = ["{you}"]

[[rule]]
name = "Northwind Software above 100,000 USD"
protocol = ["anp"]
counterparty = ["Northwind Software"]
amount = [{{ currency = "USD", above = "100000" }}]
[[rule.step]]
role = "buyer"
[[rule.step]]
role = "finance"

[unnamed_currency]
reason = "an amount in another currency goes to finance"
[[unnamed_currency.step]]
role = "finance"

[no_rule]
reason = "everything else goes to finance"
[[no_rule.step]]
role = "finance"
"#
    )
}

/// Loads the sandbox's policy for `you`, unless the version in force is
/// already this very text (kept beside the database as `authority.toml`).
pub(crate) async fn load_policy(
    host: &countersign_host::Host,
    dir: &Path,
    you: &str,
) -> Result<(), SandboxError> {
    let text = policy(you);
    let kept = dir.join("authority.toml");
    if std::fs::read_to_string(&kept).ok().as_deref() == Some(text.as_str()) {
        return Ok(());
    }
    host.load_authority(countersign_host::SANDBOX_HANDLE, &text, LOADED_BY)
        .await
        .map_err(failed)?;
    countersign_engine::owner_only::write(&kept, text.as_bytes())?;
    Ok(())
}

/// Grace's enrollment, kept across restarts.
#[derive(Serialize, Deserialize)]
struct Enrolled {
    approver_id: String,
    key: String,
}

fn enrolled_path(dir: &Path) -> PathBuf {
    dir.join("colleague.json")
}

/// Grace's client: enrolled once, then read back.
pub(crate) async fn enroll(host: &DemoHost) -> Result<ApproverClient, SandboxError> {
    let path = enrolled_path(&host.dir);
    if let Ok(text) = std::fs::read_to_string(&path) {
        let kept: Enrolled = serde_json::from_str(&text).map_err(failed)?;
        let key = anp::keys::decode_key_file(&kept.key).map_err(failed)?;
        return ApproverClient::new(&host.url, key, &kept.approver_id).map_err(failed);
    }
    let key = anp::keys::generate_signing_key();
    let code = host
        .host
        .enroll_code(countersign_host::SANDBOX_HANDLE, NAME, EMAIL)
        .await
        .map_err(failed)?;
    let answer = ApproverClient::enroll(&host.url, &code.code, NAME, EMAIL, &key)
        .await
        .map_err(failed)?;
    let kept = Enrolled {
        approver_id: answer.approver_id.clone(),
        key: anp::keys::encode_key_file(&key),
    };
    let text = serde_json::to_vec_pretty(&kept).map_err(failed)?;
    countersign_engine::owner_only::write(&path, &text)?;
    ApproverClient::new(&host.url, key, &answer.approver_id).map_err(failed)
}

/// Approves, as Grace, every ANP offer whose chain waits on her, for as
/// long as the sandbox runs.
pub(crate) async fn run(host: &DemoHost) -> Result<(), SandboxError> {
    let grace = enroll(host).await?;
    loop {
        tokio::time::sleep(LOOKS_AFTER).await;
        let summary = match grace.summary().await {
            Ok(summary) => summary,
            Err(e) => {
                tracing::debug!(error = %e, "the demo colleague could not read the summary");
                continue;
            }
        };
        for session in summary
            .sessions
            .iter()
            .filter(|s| s.protocol == anp::PROTOCOL)
        {
            for pending in &session.pending {
                let mine = pending
                    .route
                    .as_ref()
                    .is_some_and(|route| route.you_may_act);
                if !mine || pending.draft.is_some() {
                    continue;
                }
                let request = grace.approve_request(&pending.event_hash, EMAIL);
                if let Err(e) = grace.decide(&session.id, &request).await {
                    tracing::debug!(error = %e, "the demo colleague's approval was refused");
                }
            }
        }
    }
}
