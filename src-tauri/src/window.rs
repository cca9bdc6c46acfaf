//! The one main window: bringing it forward and titling it with the count.

use tauri::{AppHandle, Manager, Runtime};

/// The main window's label, as `tauri.conf.json` and the capability name it.
pub const MAIN: &str = "main";

/// Shows, unminimizes and focuses the main window (a tray or notification click).
pub fn focus_main<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN) {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}

/// "Countersign" or "(3) Countersign": the count a person sees in the task
/// bar, in the same words as the UI's `document.title`.
pub fn title(unread: u32) -> String {
    if unread == 0 {
        "Countersign".to_owned()
    } else {
        format!("({unread}) Countersign")
    }
}

/// Sets the native window title from the unread count.
pub fn set_unread_title<R: Runtime>(app: &AppHandle<R>, unread: u32) {
    if let Some(window) = app.get_webview_window(MAIN) {
        if let Err(error) = window.set_title(&title(unread)) {
            tracing::debug!("window title: {error}");
        }
    }
}
