//! The engine's [`Notifier`] seam, implemented with desktop notifications.

use countersign_engine::{BreachNotice, DisputeNotice, Notifier, PendingNotice, ProposalRef};

use crate::notifier::{DesktopNotifier, Note, Opens, SessionTarget};

impl Notifier for DesktopNotifier {
    fn pending(&self, notice: &PendingNotice) {
        self.show(Note {
            title: notice.title.clone(),
            body: notice.body.clone(),
            open: Opens::Proposal(ProposalRef {
                host_id: notice.host_id.clone(),
                session_id: notice.session_id.clone(),
                event_hash: notice.event_hash.clone(),
            }),
            summarize: notice.burst_summary,
        });
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
        });
    }

    fn breach(&self, notice: &BreachNotice) {
        self.show(Note {
            title: notice.title.clone(),
            body: notice.body.clone(),
            open: Opens::Proposal(ProposalRef {
                host_id: notice.host_id.clone(),
                session_id: notice.session_id.clone(),
                event_hash: notice.event_hash.clone(),
            }),
            summarize: false,
        });
    }
}
