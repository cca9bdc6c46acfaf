//! The sandbox: an embedded `countersign-host` on loopback with its own database in
//! the data directory, this console enrolled as its approver, and scripted
//! demo parties that negotiate with it for real over HTTP: ANP vendor
//! agents, the org's Concordia buying agent and OANP buyer (each enrolled at
//! the host's gate) negotiating with a scripted seller or merchant, and an
//! ANEX onboarding agent. A new user sees real pending decisions of every
//! protocol within seconds, and the demos answer their decisions (a new
//! offer after a decline, acceptance of a fair counter).

use crate::context::Context;
use crate::error::EngineError;
use crate::protocol::{DemoHost, Protocol};

fn sandbox_error(e: impl std::fmt::Display) -> EngineError {
    EngineError::Sandbox(e.to_string())
}

/// A running sandbox, for the engine to keep: the embedded host and the
/// demo tasks (each protocol's scripted counterparties).
pub(crate) struct Sandbox {
    /// The embedded host, serving on loopback.
    pub host: countersign_host::RunningHost,
    /// The demo tasks, to stop on shutdown.
    pub demos: Vec<tokio::task::JoinHandle<()>>,
}

/// Starts the embedded host, enrolls (once), and starts the demos.
pub(crate) async fn start(ctx: &Context) -> Result<Sandbox, EngineError> {
    let dir = ctx.config.data_dir.join("sandbox");
    crate::owner_only::create_dir(&dir)?;
    let database = dir.join("host.sqlite3");
    crate::owner_only::prepare_database(&database)?;
    // Everything that talks to the embedded host is ours and signs version
    // 2: it needs no transition for version 1.
    let config = countersign_host::HostConfig {
        accept_v1_signatures: false,
        ..countersign_host::HostConfig::default()
    };
    let host = countersign_host::Host::open(&database, config)
        .await
        .map_err(sandbox_error)?;
    // The host keeps more files beside its database (its nonces' own
    // database, their WAL): made owner-only as they now stand, and what
    // SQLite creates beside them later copies their mode. The directory
    // itself has been the owner's alone from the start.
    crate::owner_only::restrict_tree(&dir)?;
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
    let existing = ctx.store()?.hosts()?.into_iter().find(|h| h.sandbox);
    match existing {
        Some(h) => {
            ctx.store()?.set_host_url(&h.host_id, &url)?;
        }
        None => {
            let profile = &ctx.approver_profile();
            let code = host
                .enroll_code(
                    countersign_host::SANDBOX_HANDLE,
                    &profile.name,
                    &profile.email,
                )
                .await
                .map_err(sandbox_error)?;
            crate::connect::connect(ctx, &url, &code.code, true, false, profile).await?;
        }
    }
    for protocol in Protocol::ALL {
        let seam = protocol.seam();
        if let Err(e) = seam
            .prepare_sandbox(&host, countersign_host::SANDBOX_HANDLE, &dir)
            .await
        {
            tracing::warn!("sandbox demo of {} not prepared: {e}", seam.name());
        }
    }
    crate::receipts::file_sandbox_demos(&*ctx.store()?, &ctx.config, &ctx.now_text())?;
    let mut demos = Vec::new();
    for protocol in Protocol::ALL {
        let sandbox = DemoHost {
            url: url.clone(),
            host: host.clone(),
            dir: dir.clone(),
        };
        let demo = tokio::spawn(async move {
            if let Err(e) = protocol.seam().run_demo(&sandbox).await {
                tracing::warn!("sandbox demo of {} stopped: {e}", protocol.seam().name());
            }
        });
        demos.push(demo);
    }
    Ok(Sandbox {
        host: running,
        demos,
    })
}
