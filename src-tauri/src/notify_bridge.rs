//! The engine's [`Notifier`] seam, implemented with desktop notifications.

use countersign_engine::{DisputeNotice, Notifier, OfferRef, PendingNotice};

use crate::notifier::{DesktopNotifier, Note, Opens, SessionTarget};

impl Notifier for DesktopNotifier {
    fn pending(&self, notice: &PendingNotice) {
        self.show(Note {
            title: notice.title.clone(),
            body: notice.body.clone(),
            open: Opens::Offer(OfferRef {
                host_id: notice.host_id.clone(),
                session_id: notice.session_id.clone(),
                event_hash: notice.event_hash.clone(),
            }),
        });
    }

    fn disputed(&self, notice: &DisputeNotice) {
        self.show(Note {
            title: format!("Session {} is disputed", short(&notice.session_id)),
            body: format!(
                "The host's log no longer matches what this console verified (event {}, {}). {}",
                notice.seq, notice.check, notice.detail
            ),
            open: Opens::Session(SessionTarget {
                host_id: notice.host_id.clone(),
                session_id: notice.session_id.clone(),
            }),
        });
    }
}

/// The first 8 characters of an id, enough to recognise it in a notification.
fn short(id: &str) -> &str {
    match id.char_indices().nth(8) {
        Some((end, _)) => &id[..end],
        None => id,
    }
}
