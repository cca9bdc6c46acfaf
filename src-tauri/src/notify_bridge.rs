//! The engine's [`Notifier`] seam, implemented with desktop notifications.

use countersign_engine::{DisputeNotice, Notifier, OfferRef, PendingNotice};
use tauri::Runtime;

use crate::notifier::DesktopNotifier;

impl<R: Runtime> Notifier for DesktopNotifier<R> {
    fn pending(&self, notice: &PendingNotice) {
        let open = OfferRef {
            host_id: notice.host_id.clone(),
            session_id: notice.session_id.clone(),
            event_hash: notice.event_hash.clone(),
        };
        self.show(&notice.title, &notice.body, Some(open));
    }

    fn disputed(&self, notice: &DisputeNotice) {
        let title = format!("Session {} is disputed", short(&notice.session_id));
        let body = format!(
            "The host's log no longer matches what this console verified (event {}: {}). {}",
            notice.seq, notice.check, notice.detail
        );
        self.show(&title, &body, None);
    }
}

/// The first 8 characters of an id, enough to recognise it in a notification.
fn short(id: &str) -> &str {
    match id.char_indices().nth(8) {
        Some((end, _)) => &id[..end],
        None => id,
    }
}
