//! The tray icon: how many decisions wait on this person, where they
//! glance (the menu's first line, the tooltip and, where the panel shows
//! one, the number beside the icon), with a way back to the window. Desktops without a tray (or without its library) get no icon
//! and a log line, never a crash.

use countersign_engine::Humanizer;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Runtime};

/// The tray icon and its status line, kept to update the count.
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    status: MenuItem<R>,
}

impl<R: Runtime> Tray<R> {
    /// Creates the tray icon, or `None` (logged) when this desktop has none.
    pub fn create(app: &AppHandle<R>) -> Option<Tray<R>> {
        // The appindicator library is loaded at run time and panics when it is
        // absent; a missing tray must not take the console down with it.
        let app = app.clone();
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(&app)));
        match made {
            Ok(Ok(tray)) => Some(tray),
            Ok(Err(error)) => {
                tracing::warn!("no tray icon: {error}");
                None
            }
            Err(_) => {
                tracing::warn!("no tray icon: this desktop has no tray library");
                None
            }
        }
    }

    /// Shows how many decisions wait on the person: the menu's first
    /// line, the tooltip, and the number beside the icon (none at zero).
    pub fn set_waiting(&self, waiting: u32, human: &Humanizer) {
        let text = waiting_text(waiting, human);
        if let Err(error) = self.icon.set_tooltip(Some(format!("Countersign: {text}"))) {
            tracing::debug!("tray tooltip: {error}");
        }
        let beside = (waiting > 0).then(|| human.count(u64::from(waiting)));
        if let Err(error) = self.icon.set_title(beside) {
            tracing::debug!("tray title: {error}");
        }
        if let Err(error) = self.status.set_text(text) {
            tracing::debug!("tray menu: {error}");
        }
    }
}

/// "Nothing waits on you", "1 decision waits on you", "1,234 decisions
/// wait on you" (the count grouped as the machine's locale writes it).
pub fn waiting_text(waiting: u32, human: &Humanizer) -> String {
    match waiting {
        0 => "Nothing waits on you".to_owned(),
        1 => "1 decision waits on you".to_owned(),
        n => format!("{} decisions wait on you", human.count(u64::from(n))),
    }
}

fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Tray<R>> {
    let status = MenuItem::with_id(app, "status", "Nothing waits on you", false, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open Countersign", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&status, &separator, &open, &quit])?;
    let mut builder = TrayIconBuilder::with_id("countersign")
        .tooltip("Countersign")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => crate::window::focus_main(app),
            "quit" => app.exit(0),
            _ => {}
        })
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::DoubleClick { .. } = event {
                crate::window::focus_main(tray.app_handle());
            }
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    let icon = builder.build(app)?;
    Ok(Tray { icon, status })
}

#[cfg(test)]
mod tests {
    use super::waiting_text;
    use countersign_engine::Humanizer;

    #[test]
    fn the_tray_counts_as_a_person_writes_numbers() {
        let en = Humanizer::in_zone("en_GB.UTF-8", "UTC");
        assert_eq!(waiting_text(0, &en), "Nothing waits on you");
        assert_eq!(waiting_text(1, &en), "1 decision waits on you");
        assert_eq!(waiting_text(1234, &en), "1,234 decisions wait on you");
        let fr = Humanizer::in_zone("fr_FR.UTF-8", "UTC");
        assert_eq!(
            waiting_text(1234, &fr),
            "1\u{202f}234 decisions wait on you"
        );
    }
}
