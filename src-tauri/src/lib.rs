//! Countersign's desktop shell: a thin Tauri 2 layer over the console engine.
//! It exposes one command per engine method, forwards the engine's changes
//! to the UI, shows desktop notifications and keeps the count of decisions
//! waiting on the person in the window title and the tray. Every fact comes
//! from `countersign-engine`.

mod commands;
mod events;
mod memory;
mod notifier;
mod notify_bridge;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod session_lock;
mod tray;
mod window;

use std::sync::Arc;

use countersign_engine::{ChangeScope, CommandError, Engine, EngineConfig, EngineError};
use tauri::{App, Builder, Manager, RunEvent, Runtime};
use tokio::sync::broadcast;

pub use commands::EngineSlot;
pub use events::CHANGED_EVENT;
pub use notifier::{escape_markup, OPEN_PROPOSAL_EVENT};
pub use window::title as window_title;

/// Registers the commands and the setup on any runtime, so the real app and
/// the headless mock-runtime tests run the same code. `config` is `Err` when
/// no data directory could be resolved; the UI then shows why.
pub fn configure<R: Runtime>(
    builder: Builder<R>,
    config: Result<EngineConfig, EngineError>,
) -> Builder<R> {
    // The engine opens (synchronously) before the app is built, so its state
    // is managed before any command can run; it starts in `setup`.
    let opened = config.and_then(Engine::open);
    let engine = opened.as_ref().ok().cloned();
    let slot = match opened {
        Ok(engine) => EngineSlot::ready(engine),
        Err(error) => {
            tracing::error!("the engine could not open: {error}");
            EngineSlot::failed(CommandError::from(error))
        }
    };
    builder
        .manage(slot)
        .invoke_handler(tauri::generate_handler![
            commands::app_state,
            commands::inbox,
            commands::proposal_view,
            commands::decide,
            commands::validate_counter,
            commands::sessions,
            commands::session_detail,
            commands::export_session,
            commands::desk,
            commands::counterparty,
            commands::desk_sessions,
            commands::link_identities,
            commands::unlink_identities,
            commands::export_desk_csv,
            commands::export_audit_pack,
            commands::connect_host,
            commands::hosts,
            commands::refresh,
            commands::mark_seen,
            commands::dismiss_proposal,
            commands::settings,
            commands::set_setting,
            commands::unlock_key,
            commands::lock_key,
            commands::set_key_passphrase,
            commands::move_to_new_key,
            commands::extend_deadline,
            commands::stand_ins,
            commands::give_stand_in,
            commands::revoke_stand_in,
            commands::export_dispute,
            commands::acknowledge_dispute,
            commands::import_receipt,
            commands::receipts,
            commands::remove_receipt,
            commands::receipt_view,
            commands::export_receipt,
        ])
        .setup(move |app| {
            setup(app, engine);
            Ok(())
        })
}

fn setup<R: Runtime>(app: &mut App<R>, engine: Option<Engine>) {
    let handle = app.handle().clone();
    if let Some(tray) = tray::Tray::create(&handle) {
        app.manage(tray);
    }
    let Some(engine) = engine else {
        return;
    };
    engine.set_notifier(Arc::new(notifier::DesktopNotifier::new(
        handle.clone(),
        engine.humanizer().clone(),
    )));
    tauri::async_runtime::spawn(events::forward(handle.clone(), engine.clone()));
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    tauri::async_runtime::spawn(session_lock::watch(engine.clone()));
    app.manage(SandboxSlot::default());
    tauri::async_runtime::spawn(async move {
        let mut changes = engine.subscribe();
        // The sandbox first, beside the engine (when the engine wants one),
        // so the poller's first cycle already sees its host.
        let mut waiting_for_key = start_sandbox(&handle, &engine).await;
        if let Err(error) = engine.start().await {
            tracing::error!("the engine could not start: {error}");
        }
        // A key kept nowhere yet: the sandbox starts once the person chose
        // a passphrase (the key's change is announced).
        while waiting_for_key {
            match changes.recv().await {
                Ok(event) if event.what == ChangeScope::Key => {
                    waiting_for_key = start_sandbox(&handle, &engine).await;
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}

/// Starts the sandbox beside the engine when it wants one; true when it
/// waits for the approver key to be kept (no secret store answered and no
/// passphrase was chosen yet).
async fn start_sandbox<R: Runtime>(handle: &tauri::AppHandle<R>, engine: &Engine) -> bool {
    match countersign_sandbox::start(engine).await {
        Ok(sandbox) => {
            handle.state::<SandboxSlot>().keep(sandbox);
            false
        }
        Err(countersign_sandbox::SandboxError::Engine(EngineError::KeyNotKept)) => {
            tracing::info!("the sandbox waits for the approver key to be kept");
            true
        }
        // The UI reads the failure from app_state's hosts; the log keeps it too.
        Err(error) => {
            tracing::error!("the sandbox could not start: {error}");
            false
        }
    }
}

/// The sandbox the shell started beside the engine, kept to stop on exit.
#[derive(Default)]
struct SandboxSlot(std::sync::Mutex<Option<countersign_sandbox::Sandbox>>);

impl SandboxSlot {
    fn keep(&self, sandbox: Option<countersign_sandbox::Sandbox>) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = sandbox;
        }
    }

    fn take(&self) -> Option<countersign_sandbox::Sandbox> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// Stops the engine's poller, then the sandbox, before the process exits.
fn on_run_event<R: Runtime>(app: &tauri::AppHandle<R>, event: RunEvent) {
    if let RunEvent::Exit = event {
        if let Some(slot) = app.try_state::<EngineSlot>() {
            if let Ok(engine) = slot.get() {
                tauri::async_runtime::block_on(engine.shutdown());
            }
        }
        if let Some(sandbox) = app.try_state::<SandboxSlot>().and_then(|s| s.take()) {
            tauri::async_runtime::block_on(sandbox.shutdown());
        }
    }
}

/// WebKitGTK's DMA-BUF renderer holds GPU-style frame buffers even where
/// there is no GPU (a VM, a remote desktop, Xvfb): measured on this kind of
/// machine, about 75 MB more in the web process, for an app of forms and
/// tables that draws nothing it would speed up. Off unless the person set
/// the variable themselves. Must run before any thread starts.
fn tune_webkit() {
    const DMABUF: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";
    if cfg!(target_os = "linux") && std::env::var_os(DMABUF).is_none() {
        std::env::set_var(DMABUF, "1");
    }
}

/// Starts the desktop app and blocks until it quits.
pub fn run() {
    memory::limit_malloc_arenas();
    tune_webkit();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,countersign=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Colour codes only for a terminal, not in a log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
    let config = EngineConfig::from_env();
    let app = configure(tauri::Builder::default(), config).build(tauri::generate_context!());
    match app {
        Ok(app) => app.run(on_run_event),
        Err(error) => {
            eprintln!("Countersign could not start its window: {error}");
            std::process::exit(1);
        }
    }
}
