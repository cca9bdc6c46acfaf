//! The sandbox: an embedded `countersign-host` on loopback with its own database in
//! the data directory, this console enrolled as its approver, and scripted
//! demo vendor agents that negotiate with it for real over HTTP. A new user
//! sees real pending decisions within seconds, and the demo answers their
//! decisions (counters after a decline, acceptance of a fair counter).

use crate::engine::Engine;
use crate::error::EngineError;
use crate::protocol::Protocol;

fn sandbox_error(e: impl std::fmt::Display) -> EngineError {
    EngineError::Sandbox(e.to_string())
}

/// Starts the embedded host, enrolls (once), and starts the demo vendors.
pub(crate) async fn start(engine: &Engine) -> Result<(), EngineError> {
    let dir = engine.inner.config.data_dir.join("sandbox");
    std::fs::create_dir_all(&dir)?;
    let host = countersign_host::Host::open(
        &dir.join("host.sqlite3"),
        countersign_host::HostConfig::default(),
    )
    .await
    .map_err(sandbox_error)?;
    // One local approver decides everything in the sandbox.
    let mut policy = countersign_host::Policy::sandbox();
    policy.approval.approvers_required = 1;
    let policy_json = serde_json::to_string(&policy).map_err(sandbox_error)?;
    host.load_policy(countersign_host::SANDBOX_HANDLE, &policy_json)
        .await
        .map_err(sandbox_error)?;
    let running = host
        .clone()
        .spawn("127.0.0.1:0")
        .await
        .map_err(sandbox_error)?;
    let url = running.base_url();
    let existing = engine.store()?.hosts()?.into_iter().find(|h| h.sandbox);
    match existing {
        Some(h) => {
            engine.store()?.set_host_url(&h.host_id, &url)?;
        }
        None => {
            let profile = &engine.approver_profile();
            let code = host
                .enroll_code(
                    countersign_host::SANDBOX_HANDLE,
                    &profile.name,
                    &profile.email,
                )
                .await
                .map_err(sandbox_error)?;
            crate::connect::connect(engine, &url, &code.code, true, profile).await?;
        }
    }
    *engine.inner.sandbox.lock().await = Some(running);
    for protocol in Protocol::ALL {
        let (url, dir) = (url.clone(), dir.clone());
        let demo = tokio::spawn(async move {
            if let Err(e) = protocol.seam().run_demo(&url, &dir).await {
                tracing::warn!("sandbox demo of {} stopped: {e}", protocol.seam().name());
            }
        });
        engine.spawn_task(demo);
    }
    Ok(())
}
