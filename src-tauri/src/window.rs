//! The one main window: bringing it forward and titling it with the count
//! of decisions waiting on the person.

use countersign_engine::Humanizer;
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

/// "Countersign" or "(1,234) Countersign": how many decisions wait on the
/// person, as they see it in the task bar, in the same words as the UI's
/// `document.title`.
pub fn title(waiting: u32, human: &Humanizer) -> String {
    if waiting == 0 {
        "Countersign".to_owned()
    } else {
        format!("({}) Countersign", human.count(u64::from(waiting)))
    }
}

/// Sets the native window title from the count of decisions waiting.
pub fn set_waiting_title<R: Runtime>(app: &AppHandle<R>, waiting: u32, human: &Humanizer) {
    if let Some(window) = app.get_webview_window(MAIN) {
        if let Err(error) = window.set_title(&title(waiting, human)) {
            tracing::debug!("window title: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::title;
    use countersign_engine::Humanizer;

    #[test]
    fn the_title_counts_as_a_person_writes_numbers() {
        let en = Humanizer::in_zone("en_GB.UTF-8", "UTC");
        assert_eq!(title(0, &en), "Countersign");
        assert_eq!(title(3, &en), "(3) Countersign");
        assert_eq!(title(1234, &en), "(1,234) Countersign");
    }
}
