//! The tray icon: the unread count where a person glances, with a way back to
//! the window. Desktops without a tray (or without its library) get no icon
//! and a log line, never a crash.

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

    /// Shows the unread count in the tooltip and the menu.
    pub fn set_unread(&self, unread: u32) {
        let text = unread_text(unread);
        if let Err(error) = self.icon.set_tooltip(Some(format!("Countersign: {text}"))) {
            tracing::debug!("tray tooltip: {error}");
        }
        if let Err(error) = self.status.set_text(text) {
            tracing::debug!("tray menu: {error}");
        }
    }
}

/// "No offers waiting", "1 offer waiting", "3 offers waiting".
pub fn unread_text(unread: u32) -> String {
    match unread {
        0 => "no offers waiting".to_owned(),
        1 => "1 offer waiting".to_owned(),
        n => format!("{n} offers waiting"),
    }
}

fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Tray<R>> {
    let status = MenuItem::with_id(app, "status", unread_text(0), false, None::<&str>)?;
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
