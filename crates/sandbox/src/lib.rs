//! The sandbox: an embedded `countersign-host` on loopback with its own
//! database in the console's data directory, the console enrolled as its
//! approver, and scripted counterparties that negotiate with it for real
//! over HTTP: four ANP vendor agents, the org's Concordia buying agent and
//! OANP buyer (each enrolled at the host's gate) negotiating with a
//! scripted seller or merchant, the org's purchasing assistant asking
//! about plain terms over MCP, and a supplier's ANEX onboarding agent. A
//! new user sees real pending decisions of every protocol within seconds,
//! and the counterparties answer the person's decisions (a new offer after
//! a decline, acceptance of a fair counter).
//!
//! The shell starts it beside the engine ([`start`], before
//! [`Engine::start`]); the engine knows the sandbox only as one more host
//! it reaches over HTTP, through the few calls it offers for it
//! (`Engine::wants_sandbox`, `connect_sandbox`, ...).
//!
//! | module | the counterparty |
//! |---|---|
//! | `anp_vendors` | the scripted ANP vendor agents |
//! | `concordia_negotiation` | the org's Concordia buying agent and a scripted seller |
//! | `oanp_negotiation` | the org's OANP buyer, a scripted merchant and arbiter |
//! | `anex_onboarding` | a supplier's onboarding agent asking over A2A |
//! | `plain_purchaser` | the org's purchasing assistant asking about plain terms over MCP |
//! | `colleague` | the sandbox's policy of authority and Grace, the demo colleague who approves its first steps |
//! | `gate_agent` | what the org's scripted gate agents share |

#![warn(missing_docs)]

use std::path::PathBuf;

use countersign_engine::{owner_only, Engine, EngineError};

mod anex_onboarding;
mod anp_vendors;
mod colleague;
mod concordia_negotiation;
mod gate_agent;
mod oanp_negotiation;
mod plain_purchaser;

/// The publisher's development receipt (`vendor/oanp/fixtures/dev-receipt.json`,
/// byte for byte), filed as the sandbox's demo of an arbiter's receipt: a
/// genuine signature by Valyzen's development arbiter, whose key the
/// console pins as test mode, so it shows as test-mode and not proof until
/// the person allows test receipts. No sandbox key of our own is pinned: a
/// console-made arbiter key would be one more trust root that proves
/// nothing about anyone else's verifier.
const DEMO_RECEIPT: &[u8] = include_bytes!("../../../vendor/oanp/fixtures/dev-receipt.json");

/// The file name the demo receipt is filed under.
const DEMO_RECEIPT_NAME: &str = "sandbox-dev-receipt.json";

/// What went wrong in the sandbox, with a sentence a person can read.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The embedded host or a scripted counterparty failed; the sentence
    /// names which and why.
    #[error("{0}")]
    Failed(String),
    /// A file in the sandbox's directory could not be read or written.
    #[error("A sandbox file could not be read or written: {0}.")]
    Io(#[from] std::io::Error),
    /// The engine refused what the sandbox asked of it (enrolling the
    /// console, filing the demo receipt).
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// A sandbox failure from anything that says what went wrong.
fn sandbox_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Failed(format!("The sandbox could not start: {e}."))
}

/// What every scripted counterparty is handed: the embedded host as its
/// agents reach it (its URL) and as its admin does (the `Host` itself, for
/// enrollment codes), and where it keeps its keys and state across restarts.
#[derive(Clone)]
pub(crate) struct DemoHost {
    /// The embedded host's base URL on loopback.
    pub url: String,
    /// The embedded host, for admin steps (enrollment codes).
    pub host: countersign_host::Host,
    /// The sandbox's directory in the data directory.
    pub dir: PathBuf,
}

/// A running sandbox, for the shell to keep and stop: the embedded host
/// and the scripted counterparties' tasks.
pub struct Sandbox {
    /// The engine it is attached to (told when the sandbox stops).
    engine: Engine,
    /// The embedded host, serving on loopback.
    host: countersign_host::RunningHost,
    /// The counterparties' tasks.
    demos: Vec<tokio::task::JoinHandle<()>>,
}

impl Sandbox {
    /// The embedded host's base URL on loopback.
    pub fn url(&self) -> String {
        self.host.base_url()
    }

    /// Stops the counterparties and the host and tells the engine its
    /// sessions are no longer polled; everything stored stays.
    pub async fn shutdown(self) {
        for demo in self.demos {
            demo.abort();
        }
        self.engine.set_sandbox_running(false);
        self.host.shutdown().await;
    }
}

/// Starts the sandbox beside `engine` when the engine wants one (see
/// `Engine::wants_sandbox`: by default, while no real host is connected),
/// before the engine's own start: the embedded host, the console enrolled
/// with it once (re-pointed at its new port on later starts), the demo
/// receipt filed, and the scripted counterparties. `None` when the engine
/// wants no sandbox.
pub async fn start(engine: &Engine) -> Result<Option<Sandbox>, SandboxError> {
    if !engine.wants_sandbox()? {
        return Ok(None);
    }
    if !engine.key_is_kept()? {
        // A key kept nowhere (no secret store, no passphrase yet) would
        // lose this enrollment at the next start: the shell starts the
        // sandbox again once a passphrase keeps it.
        return Err(EngineError::KeyNotKept.into());
    }
    let dir = engine.sandbox_dir()?;
    let database = dir.join("host.sqlite3");
    owner_only::prepare_database(&database)?;
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
    owner_only::restrict_tree(&dir)?;
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
    if !engine.rebind_sandbox(&url)? {
        let profile = engine.approver_profile();
        let code = host
            .enroll_code(
                countersign_host::SANDBOX_HANDLE,
                &profile.name,
                &profile.email,
            )
            .await
            .map_err(sandbox_error)?;
        engine.connect_sandbox(&url, &code.code, &profile).await?;
    }
    // The policy of authority names the person as enrolled here (a later
    // change of email in Settings does not change an enrollment).
    let you = engine
        .hosts()
        .await?
        .into_iter()
        .find(|h| h.sandbox)
        .map(|h| h.approver_email)
        .ok_or_else(|| sandbox_error("the console is not enrolled with the sandbox"))?;
    let demo_host = DemoHost {
        url: url.clone(),
        host: host.clone(),
        dir: dir.clone(),
    };
    // Grace is enrolled before the policy names her.
    colleague::enroll(&demo_host).await?;
    colleague::load_policy(&host, &dir, &you).await?;
    if let Err(e) = anex_onboarding::prepare(&host, countersign_host::SANDBOX_HANDLE, &dir).await {
        tracing::warn!("sandbox demo of anex not prepared: {e}");
    }
    engine.file_sandbox_receipt(oanp::report::PROTOCOL, DEMO_RECEIPT_NAME, DEMO_RECEIPT)?;
    engine.set_sandbox_running(true);
    let demos = vec![
        spawn("colleague", demo_host.clone(), |h| async move {
            colleague::run(&h).await
        }),
        spawn("anp", demo_host.clone(), |h| async move {
            anp_vendors::run(&h).await
        }),
        spawn("concordia", demo_host.clone(), |h| async move {
            concordia_negotiation::run(&h).await
        }),
        spawn("oanp", demo_host.clone(), |h| async move {
            oanp_negotiation::run(&h).await
        }),
        spawn("plain terms", demo_host.clone(), |h| async move {
            plain_purchaser::run(&h).await
        }),
        spawn("anex", demo_host, |h| async move {
            anex_onboarding::run(&h.url, &h.dir).await
        }),
    ];
    Ok(Some(Sandbox {
        engine: engine.clone(),
        host: running,
        demos,
    }))
}

/// Runs one protocol's scripted counterparties on their own task, for as
/// long as the sandbox runs; a failure is logged, naming the protocol.
fn spawn<F, Fut>(protocol: &'static str, host: DemoHost, run: F) -> tokio::task::JoinHandle<()>
where
    F: FnOnce(DemoHost) -> Fut,
    Fut: std::future::Future<Output = Result<(), SandboxError>> + Send + 'static,
{
    let demo = run(host);
    tokio::spawn(async move {
        if let Err(e) = demo.await {
            tracing::warn!("sandbox demo of {protocol} stopped: {e}");
        }
    })
}

/// A future of a scripted counterparty's turn (boxed: the gate agents'
/// scripts are trait objects).
pub(crate) type IoFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
