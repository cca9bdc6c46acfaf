//! Desktop notifications through notify-rust: one per new pending decision and
//! one per disputed session. Clicking a pending one opens that offer. The
//! engine decides when to notify; this module only decides how.

use countersign_engine::OfferRef;
use tauri::{AppHandle, Emitter, Runtime};

/// The event a notification click sends to the UI (see the console contract).
pub const OPEN_OFFER_EVENT: &str = "engine://open-offer";

/// Sends desktop notifications on behalf of the engine.
pub struct DesktopNotifier<R: Runtime> {
    app: AppHandle<R>,
}

impl<R: Runtime> DesktopNotifier<R> {
    /// A notifier that opens offers in `app`'s main window when clicked.
    pub fn new(app: AppHandle<R>) -> Self {
        DesktopNotifier { app }
    }

    /// Shows a notification; a click on it emits `open` (when given) and
    /// focuses the window. Never blocks the caller: the wait for a click runs
    /// on its own thread, and a desktop without a notification service only
    /// costs a log line.
    pub fn show(&self, title: &str, body: &str, open: Option<OfferRef>) {
        let app = self.app.clone();
        let title = title.to_owned();
        let body = body.to_owned();
        let spawned = std::thread::Builder::new()
            .name("notification".to_owned())
            .spawn(move || deliver(app, &title, &body, open));
        if let Err(error) = spawned {
            tracing::warn!("notification thread: {error}");
        }
    }
}

fn deliver<R: Runtime>(app: AppHandle<R>, title: &str, body: &str, open: Option<OfferRef>) {
    let mut notification = notify_rust::Notification::new();
    notification
        .appname("Countersign")
        .summary(title)
        .body(&plain_body(body))
        .action("default", "Open");
    #[cfg(all(unix, not(target_os = "macos")))]
    notification.hint(notify_rust::Hint::Category("im.received".to_owned()));
    match notification.show() {
        #[cfg(all(unix, not(target_os = "macos")))]
        Ok(handle) => handle.wait_for_action(|action| {
            if action == "default" {
                clicked(&app, open.as_ref());
            }
        }),
        #[cfg(not(all(unix, not(target_os = "macos"))))]
        Ok(_) => {}
        Err(error) => tracing::warn!("notification not shown: {error}"),
    }
}

fn clicked<R: Runtime>(app: &AppHandle<R>, open: Option<&OfferRef>) {
    crate::window::focus_main(app);
    if let Some(open) = open {
        if let Err(error) = app.emit(OPEN_OFFER_EVENT, open) {
            tracing::warn!("open-offer event: {error}");
        }
    }
}

/// The body as plain text for servers that read it as markup: counterparty
/// text (a vendor's name) must not become a link or an image there.
fn plain_body(body: &str) -> String {
    if body_is_markup() {
        escape_markup(body)
    } else {
        body.to_owned()
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
fn body_is_markup() -> bool {
    notify_rust::get_capabilities()
        .map(|caps| caps.iter().any(|c| c == "body-markup"))
        .unwrap_or(false)
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
fn body_is_markup() -> bool {
    false
}

/// Escapes the three characters the freedesktop body markup gives meaning to.
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape_markup;

    #[test]
    fn markup_in_counterparty_text_is_escaped() {
        assert_eq!(
            escape_markup("<a href=\"x\">Acme & Co</a>"),
            "&lt;a href=\"x\"&gt;Acme &amp; Co&lt;/a&gt;"
        );
    }
}
