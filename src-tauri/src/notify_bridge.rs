//! The engine's [`Notifier`] seam, implemented with desktop notifications.

use countersign_engine::{BreachNotice, DisputeNotice, Notifier, PendingNotice, ProposalRef};

use crate::notifier::{DesktopNotifier, Note, Opens, SessionTarget};

impl Notifier for DesktopNotifier {
    fn pending(&self, notice: &PendingNotice) {
        self.show(decision(notice, false));
    }

    fn reminder(&self, notice: &PendingNotice) {
        self.show(decision(notice, true));
    }

    fn disputed(&self, notice: &DisputeNotice) {
        self.show(Note {
            title: notice.title.clone(),
            body: notice.body.clone(),
            open: Opens::Session(SessionTarget {
                host_id: notice.host_id.clone(),
                session_id: notice.session_id.clone(),
            }),
            summarize: false,
            actions: Vec::new(),
            reminder: false,
        });
    }

    fn breach(&self, notice: &BreachNotice) {
        self.show(Note {
            title: notice.title.clone(),
            body: notice.body.clone(),
            open: proposal(&notice.host_id, &notice.session_id, &notice.event_hash),
            summarize: false,
            actions: Vec::new(),
            reminder: false,
        });
    }
}

/// The note about a pending decision (new, or a `reminder` that it expires
/// soon): a click opens it, and its buttons the forms its notice allows.
fn decision(notice: &PendingNotice, reminder: bool) -> Note {
    Note {
        title: notice.title.clone(),
        body: notice.body.clone(),
        open: proposal(&notice.host_id, &notice.session_id, &notice.event_hash),
        summarize: notice.burst_summary,
        actions: notice.actions.clone(),
        reminder,
    }
}

/// What a click on a notice about one proposal opens.
fn proposal(host_id: &str, session_id: &str, event_hash: &str) -> Opens {
    Opens::Proposal(ProposalRef {
        host_id: host_id.to_owned(),
        session_id: session_id.to_owned(),
        event_hash: event_hash.to_owned(),
    })
}
