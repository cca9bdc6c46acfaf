//! Forwards the engine's changes to the UI as `engine://changed`, and keeps
//! the count of decisions waiting on the person in the window title and
//! the tray current: re-read the moment the inbox changes.

use countersign_engine::{ChangeScope, Engine, EngineEvent};
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::tray::Tray;

/// The event the UI listens to (see the console contract).
pub const CHANGED_EVENT: &str = "engine://changed";

/// How long a burst of engine changes may gather before it is forwarded:
/// a host delivering a thousand sessions at once costs the webview a few
/// events instead of a thousand (each emit is a script run in the webview).
const GATHER: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs until the engine closes its channel: each burst of changes is
/// merged (see [`merge`]) and emitted; after a change to the inbox the
/// waiting count is re-read.
pub async fn forward<R: Runtime>(app: AppHandle<R>, engine: Engine) {
    let mut changes = engine.subscribe();
    show_waiting(&app, &engine).await;
    let mut open = true;
    while open {
        let mut burst = match changes.recv().await {
            Ok(event) => vec![event],
            Err(RecvError::Lagged(_)) => vec![missed()],
            Err(RecvError::Closed) => return,
        };
        tokio::time::sleep(GATHER).await;
        loop {
            match changes.try_recv() {
                Ok(event) => burst.push(event),
                Err(TryRecvError::Lagged(_)) => burst.push(missed()),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => {
                    open = false;
                    break;
                }
            }
        }
        let merged = merge(burst);
        for event in &merged {
            if let Err(error) = app.emit(CHANGED_EVENT, event) {
                tracing::warn!("could not emit {CHANGED_EVENT}: {error}");
            }
        }
        if merged.iter().any(|event| event.what == ChangeScope::Inbox) {
            show_waiting(&app, &engine).await;
        }
        crate::memory::release_freed();
    }
}

/// Some changes were missed: the UI reloads the inbox, which is always enough.
fn missed() -> EngineEvent {
    EngineEvent {
        what: ChangeScope::Inbox,
        host_id: None,
        session_id: None,
    }
}

/// One event per scope that changed, in the order first seen. A scope keeps
/// its host and session only when every change to it names the same ones;
/// otherwise it names none, which the UI reads as "reload all of it".
fn merge(burst: Vec<EngineEvent>) -> Vec<EngineEvent> {
    let mut merged: Vec<EngineEvent> = Vec::new();
    for event in burst {
        match merged.iter_mut().find(|m| m.what == event.what) {
            None => merged.push(event),
            Some(kept) => {
                if kept.host_id != event.host_id {
                    kept.host_id = None;
                    kept.session_id = None;
                } else if kept.session_id != event.session_id {
                    kept.session_id = None;
                }
            }
        }
    }
    merged
}

/// Puts the count of decisions waiting on the person (the engine's
/// `waiting`, not the unread count) into the window title and the tray.
pub async fn show_waiting<R: Runtime>(app: &AppHandle<R>, engine: &Engine) {
    match engine.app_state().await {
        Ok(state) => {
            crate::window::set_waiting_title(app, state.waiting, engine.humanizer());
            if let Some(tray) = app.try_state::<Tray<R>>() {
                tray.set_waiting(state.waiting, engine.humanizer());
            }
        }
        Err(error) => tracing::warn!("waiting count: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(what: ChangeScope, host: Option<&str>, session: Option<&str>) -> EngineEvent {
        EngineEvent {
            what,
            host_id: host.map(str::to_owned),
            session_id: session.map(str::to_owned),
        }
    }

    #[test]
    fn a_burst_becomes_one_event_per_scope() {
        let mut burst: Vec<EngineEvent> = (0..1000)
            .map(|i| event(ChangeScope::Sessions, Some("h1"), Some(&format!("s{i}"))))
            .collect();
        burst.push(event(ChangeScope::Inbox, Some("h1"), None));
        burst.push(event(ChangeScope::Sessions, Some("h1"), Some("s3")));
        assert_eq!(
            merge(burst),
            [
                event(ChangeScope::Sessions, Some("h1"), None),
                event(ChangeScope::Inbox, Some("h1"), None),
            ]
        );
    }

    #[test]
    fn one_session_stays_named_and_two_hosts_name_none() {
        let same = vec![
            event(ChangeScope::Inbox, Some("h1"), Some("s1")),
            event(ChangeScope::Inbox, Some("h1"), Some("s1")),
        ];
        assert_eq!(
            merge(same),
            [event(ChangeScope::Inbox, Some("h1"), Some("s1"))]
        );
        let hosts = vec![
            event(ChangeScope::Hosts, Some("h1"), None),
            event(ChangeScope::Hosts, Some("h2"), None),
        ];
        assert_eq!(merge(hosts), [event(ChangeScope::Hosts, None, None)]);
    }
}
