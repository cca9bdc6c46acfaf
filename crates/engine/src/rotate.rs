//! Moving to a new approver key at every host (docs/approver-api.md,
//! "Moving to a new key"). The vault first keeps the new key beside the
//! old one ([`crate::keystore`]); then, host by host and with decisions
//! held back (`decide_lock`), every decision stored but not yet answered
//! is sent as it was signed, with the old key, and only then does the host
//! retire the old key and enroll the new one. So a decision in flight
//! during the move reaches its host exactly once, signed by the key the
//! host knew when it was made; a decision made after is signed with the
//! new key. A host that cannot be reached keeps the old key, and the move
//! is finished there later (again from Settings, or at the next start);
//! the old key is deleted only when no host knows it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::context::Context;
use crate::error::{DecideError, EngineError};
use crate::store::HostRecord;

/// What moving to a new key came to, host by host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct KeyMove {
    /// The fingerprint of the key that signs from now on.
    pub fingerprint: String,
    /// Each host that knew the old key, and whether it moved.
    pub hosts: Vec<HostMove>,
    /// True when every host moved and the old key is deleted.
    pub finished: bool,
}

/// One host's part of a move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HostMove {
    /// Local host id.
    pub host_id: String,
    /// Its name for people.
    pub label: String,
    /// True once the host knows the new key (and refuses the old).
    pub moved: bool,
    /// What happened, for people.
    pub detail: String,
}

/// Begins a move (or carries on one begun) and moves every host that
/// still knows the retiring key. `passphrase`: a sealed key's, which seals
/// the new one.
pub(crate) async fn move_to_new_key(
    ctx: &Context,
    passphrase: Option<&str>,
) -> Result<KeyMove, EngineError> {
    let _no_decision_meanwhile = ctx.decide_lock.lock().await;
    ctx.vault.begin_rotation(passphrase, ctx.now())?;
    let new_key = ctx.vault.request_key()?;
    let new_fp = ctx.vault.fingerprint();
    let new_public = crate::edge::keyfile::public_key_text(&new_key.verifying_key());
    ctx.store()?
        .adopt_signing_key(&new_fp, &new_public, &ctx.now_text())?;
    let mut hosts = Vec::new();
    let Some(old_fp) = ctx.vault.retiring_fingerprint() else {
        return Ok(KeyMove {
            fingerprint: new_fp,
            hosts,
            finished: true,
        });
    };
    let waiting: Vec<HostRecord> = ctx
        .store()?
        .hosts()?
        .into_iter()
        .filter(|h| ctx.key_of(h) == old_fp)
        .collect();
    for host in waiting {
        let outcome = move_host(ctx, &host, &new_key).await;
        let (moved, detail) = match outcome {
            Ok(detail) => (true, detail),
            Err(detail) => (false, detail),
        };
        hosts.push(HostMove {
            host_id: host.host_id.clone(),
            label: host.label.clone(),
            moved,
            detail,
        });
    }
    let left = ctx
        .store()?
        .hosts()?
        .iter()
        .any(|h| ctx.key_of(h) == old_fp);
    if !left {
        ctx.vault.finish_rotation()?;
        ctx.store()?.retire_signing_key(&old_fp, &ctx.now_text())?;
    }
    ctx.emit(crate::views::ChangeScope::Key, None, None);
    ctx.emit(crate::views::ChangeScope::Hosts, None, None);
    Ok(KeyMove {
        fingerprint: new_fp,
        hosts,
        finished: !left,
    })
}

/// Sends `host` every decision it has not answered, then moves it to
/// `new_key`; answers what happened, or why it did not move.
async fn move_host(
    ctx: &Context,
    host: &HostRecord,
    new_key: &ed25519_dalek::SigningKey,
) -> Result<String, String> {
    if host.sandbox && !ctx.sandbox_running() {
        return Err(
            "The sandbox is not running; it moves to the new key the next time it runs.".into(),
        );
    }
    let unsent = ctx
        .store()
        .and_then(|s| Ok(s.unsent_decisions(&host.host_id)?))
        .map_err(|e| e.to_string())?;
    let mut sent = 0;
    for record in unsent {
        let session = ctx
            .store()
            .and_then(|s| Ok(s.session(&record.host_id, &record.session_id)?))
            .map_err(|e| e.to_string())?;
        let Some(session) = session else { continue };
        match crate::decide::send_stored(ctx, host, &session, record).await {
            Ok(_) => sent += 1,
            Err(DecideError::Unreachable(detail)) => {
                return Err(format!(
                    "A decision made here has not reached this host yet ({detail}); it stays on the old key until it does, so that decision is sent as signed. Try again when the host answers."
                ));
            }
            // Refused on its own merits (an offer that expired meanwhile):
            // recorded as refused, as any refusal is; nothing is left to send.
            Err(_) => {}
        }
    }
    let io = ctx.host_io(host).map_err(|e| e.to_string())?;
    let answer = crate::edge::enroll::rotate_key(&io.client, new_key, ctx.now()).await?;
    let fingerprint = crate::edge::keyfile::fingerprint(&new_key.verifying_key());
    ctx.store()
        .and_then(|s| Ok(s.set_host_key(&host.host_id, &answer.approver_id, &fingerprint)?))
        .map_err(|e| e.to_string())?;
    // The keys it publishes now (the old one with its end): what every
    // approval on its logs is checked against.
    let moved = ctx
        .store()
        .ok()
        .and_then(|s| s.host(&host.host_id).ok().flatten());
    if let Some(io) = moved.and_then(|m| ctx.host_io(&m).ok()) {
        if let Some(keys) = crate::edge::enroll::refresh_approver_keys(&io.client).await {
            if let Ok(store) = ctx.store() {
                let _ = store.set_approver_keys(&host.host_id, &keys);
            }
        }
    }
    let at = crate::decide::readable_time(ctx, &answer.retired_at);
    Ok(if sent > 0 {
        format!(
            "Moved: {sent} decision(s) waiting for it were sent first, signed as made; the host retired the old key {at}."
        )
    } else {
        format!("Moved: the host retired the old key {at}.")
    })
}
