//! Forwards the engine's changes to the UI as `engine://changed`, and keeps
//! the unread count in the window title and the tray current.

use countersign_engine::{ChangeScope, Engine, EngineEvent};
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tokio::sync::broadcast::error::RecvError;

use crate::tray::Tray;

/// The event the UI listens to (see the console contract).
pub const CHANGED_EVENT: &str = "engine://changed";

/// Runs until the engine closes its channel: every change is emitted as is;
/// after a change to the inbox the unread count is re-read.
pub async fn forward<R: Runtime>(app: AppHandle<R>, engine: Engine) {
    let mut changes = engine.subscribe();
    show_unread(&app, &engine).await;
    loop {
        let event = match changes.recv().await {
            Ok(event) => event,
            // Missed some: the UI reloads the inbox, which is always enough.
            Err(RecvError::Lagged(_)) => EngineEvent {
                what: ChangeScope::Inbox,
                host_id: None,
                session_id: None,
            },
            Err(RecvError::Closed) => return,
        };
        if let Err(error) = app.emit(CHANGED_EVENT, &event) {
            tracing::warn!("could not emit {CHANGED_EVENT}: {error}");
        }
        if event.what == ChangeScope::Inbox {
            show_unread(&app, &engine).await;
        }
    }
}

/// Puts the engine's unread count into the window title and the tray.
pub async fn show_unread<R: Runtime>(app: &AppHandle<R>, engine: &Engine) {
    match engine.app_state().await {
        Ok(state) => {
            crate::window::set_unread_title(app, state.unread);
            if let Some(tray) = app.try_state::<Tray<R>>() {
                tray.set_unread(state.unread);
            }
        }
        Err(error) => tracing::warn!("unread count: {error}"),
    }
}
