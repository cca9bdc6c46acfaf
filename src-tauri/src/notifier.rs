//! Desktop notifications through notify-rust: one per new pending decision,
//! one reminder per decision about to expire, one per disputed session.
//! Clicking one opens that offer or session. Where the notification server
//! offers actions (its `actions` capability; dunst and GNOME do), a pending
//! decision's notification also carries "Open", "Approve…" and "Decline…":
//! each only opens the app at that decision, the confirmation (or the
//! reason) focused; nothing is signed from the notification. The engine
//! decides when to notify and which buttons a notice may carry
//! ([`countersign_engine::notice_actions`]); this module only decides how.
//!
//! One worker thread shows them at most once a second; a burst (a host with
//! hundreds of new offers) becomes one summary instead of hundreds of
//! notifications and D-Bus connections.

use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use countersign_engine::{
    notice_actions, DecideAction, Humanizer, NoticeAction, ProposalOpening, ProposalRef,
};
use tauri::{AppHandle, Emitter, Runtime};

/// The event a notification click sends to the UI (see the console contract).
pub const OPEN_PROPOSAL_EVENT: &str = "engine://open-proposal";

/// The event a click on a dispute notification sends: open that session.
pub const OPEN_SESSION_EVENT: &str = "engine://open-session";

/// A session, as `engine://open-session` names it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SessionTarget {
    /// Local host id.
    pub host_id: String,
    /// The session on that host.
    pub session_id: String,
}

/// What clicking a notification opens (besides raising the window).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opens {
    /// A pending decision's proposal view.
    Proposal(ProposalRef),
    /// A session's timeline (a disputed session).
    Session(SessionTarget),
    /// Just the window (a summary of many).
    Window,
}

/// The least time between two notifications.
const SPACING: Duration = Duration::from_secs(1);

/// One notification to show.
#[derive(Debug, Clone)]
pub struct Note {
    /// Plain-text title.
    pub title: String,
    /// Plain-text body (escaped here when the server reads markup).
    pub body: String,
    /// What a click opens.
    pub open: Opens,
    /// May a burst it arrives in be announced by one summary (the person's
    /// setting, carried by the engine's notice)? When not, a burst is silent.
    pub summarize: bool,
    /// The decision forms its buttons may open (the engine's notice's
    /// `actions`); empty for notes that carry none.
    pub actions: Vec<DecideAction>,
    /// A reminder that a decision expires soon (a burst of them is summed
    /// up in its own words).
    pub reminder: bool,
}

/// Sends desktop notifications on behalf of the engine.
pub struct DesktopNotifier {
    queue: Sender<Note>,
}

impl DesktopNotifier {
    /// Starts the worker; clicks focus `app`'s main window and open offers.
    /// `human` writes the count of a summary.
    pub fn new<R: Runtime>(app: AppHandle<R>, human: Humanizer) -> Self {
        let (queue, notes) = mpsc::channel();
        let started = std::thread::Builder::new()
            .name("notifications".to_owned())
            .spawn(move || worker(app, notes, human));
        if let Err(error) = started {
            tracing::warn!("no notifications: {error}");
        }
        DesktopNotifier { queue }
    }

    /// Queues a notification; never blocks the engine.
    pub fn show(&self, note: Note) {
        if self.queue.send(note).is_err() {
            tracing::debug!("notification dropped: the worker has stopped");
        }
    }
}

/// The most notifications shown one by one from a single burst; a larger
/// burst becomes one summary.
const MOST_SHOWN_SEPARATELY: usize = 3;

fn worker<R: Runtime>(app: AppHandle<R>, notes: Receiver<Note>, human: Humanizer) {
    let mut failures = Failures::default();
    while let Ok(first) = notes.recv() {
        let mut batch = vec![first];
        batch.extend(notes.try_iter());
        for note in coalesce(batch, &human) {
            let shown = deliver(&app, note);
            match failures.record(shown) {
                Logged::First(reason) => tracing::warn!(
                    "notification not shown: {reason} (the same failure again is logged only at debug level)"
                ),
                Logged::Again(reason) => tracing::debug!("notification not shown: {reason}"),
                Logged::Recovered => tracing::info!("notifications are shown again"),
                Logged::Nothing => {}
            }
        }
        std::thread::sleep(SPACING);
    }
}

/// What a delivery's outcome is worth saying in the log.
#[derive(Debug, PartialEq, Eq)]
enum Logged {
    /// A new failure: warn.
    First(String),
    /// The failure already warned about: quietly.
    Again(String),
    /// Shown after failing.
    Recovered,
    /// Shown, as usual.
    Nothing,
}

/// The last failure, so that a desktop without a notification server (no
/// D-Bus session, no daemon) warns once rather than at every note.
#[derive(Debug, Default)]
struct Failures {
    last: Option<String>,
}

impl Failures {
    fn record(&mut self, shown: Result<(), String>) -> Logged {
        match shown {
            Ok(()) if self.last.take().is_some() => Logged::Recovered,
            Ok(()) => Logged::Nothing,
            Err(reason) if self.last.as_deref() == Some(reason.as_str()) => Logged::Again(reason),
            Err(reason) => {
                self.last = Some(reason.clone());
                Logged::First(reason)
            }
        }
    }
}

/// A small burst of offers is shown note by note (each opens its own
/// offer); a large one becomes a single summary, or nothing when the person
/// turned summaries off. A dispute is never folded into a summary: each is
/// shown on its own and opens its session.
fn coalesce(batch: Vec<Note>, human: &Humanizer) -> Vec<Note> {
    let (disputes, rest): (Vec<Note>, Vec<Note>) = batch
        .into_iter()
        .partition(|note| matches!(note.open, Opens::Session(_)));
    let (reminders, offers): (Vec<Note>, Vec<Note>) =
        rest.into_iter().partition(|note| note.reminder);
    let mut shown = disputes;
    for (notes, words) in [
        (offers, "new offers wait for your decision."),
        (reminders, "decisions waiting on you expire soon."),
    ] {
        if notes.len() <= MOST_SHOWN_SEPARATELY {
            shown.extend(notes);
        } else if notes.iter().all(|note| note.summarize) {
            shown.push(summary(notes.len(), words, human));
        }
    }
    shown
}

/// One notification standing for `count` notes, counted in `words`.
fn summary(count: usize, words: &str, human: &Humanizer) -> Note {
    Note {
        title: "Countersign".to_owned(),
        body: format!("{} {words}", human.count(count as u64)),
        open: Opens::Window,
        summarize: true,
        actions: Vec::new(),
        reminder: false,
    }
}

/// Shows one note; answers why not when the desktop would not.
fn deliver<R: Runtime>(app: &AppHandle<R>, note: Note) -> Result<(), String> {
    let server = Server::ask();
    let mut notification = notify_rust::Notification::new();
    notification
        .appname("Countersign")
        .summary(&note.title)
        .body(&plain_body(&note.body, server.markup))
        .action("default", "Open");
    // Buttons only on a decision's note, and only where the server shows them.
    if matches!(note.open, Opens::Proposal(_)) {
        for action in notice_actions(&note.actions, server.actions) {
            notification.action(action.id(), action.label());
        }
    }
    // A rewritten log is no passing news: it stays on screen until the person
    // acts (critical notifications do not time out).
    #[cfg(all(unix, not(target_os = "macos")))]
    if matches!(note.open, Opens::Session(_)) {
        notification.urgency(notify_rust::Urgency::Critical);
    }
    match notification.show() {
        #[cfg(all(unix, not(target_os = "macos")))]
        Ok(handle) => {
            // Waiting for the click blocks until the notification closes (the
            // server's timeout): on its own thread, never the worker's.
            let app = app.clone();
            let open = note.open;
            let waiting = std::thread::Builder::new()
                .name("notification-click".to_owned())
                .spawn(move || {
                    handle.wait_for_action(|action| {
                        if let Some(action) = NoticeAction::from_id(action) {
                            clicked(&app, &open, action.opens());
                        }
                    })
                });
            if let Err(error) = waiting {
                tracing::warn!("notification clicks: {error}");
            }
            Ok(())
        }
        #[cfg(not(all(unix, not(target_os = "macos"))))]
        Ok(_) => Ok(()),
        Err(error) => Err(error.to_string()),
    }
}

/// Brings the window forward and opens what the note names: a decision at
/// the form `decide` names, if any (still to be confirmed in the app).
fn clicked<R: Runtime>(app: &AppHandle<R>, open: &Opens, decide: Option<DecideAction>) {
    crate::window::focus_main(app);
    let sent = match open {
        Opens::Proposal(offer) => app.emit(OPEN_PROPOSAL_EVENT, ProposalOpening::of(offer, decide)),
        Opens::Session(session) => app.emit(OPEN_SESSION_EVENT, session),
        Opens::Window => Ok(()),
    };
    if let Err(error) = sent {
        tracing::warn!("notification click event: {error}");
    }
}

/// What the notification server said it does, asked once per note (a
/// server can be replaced while the app runs).
struct Server {
    /// It reads the body as markup.
    markup: bool,
    /// It shows action buttons.
    actions: bool,
}

impl Server {
    #[cfg(all(unix, not(target_os = "macos")))]
    fn ask() -> Server {
        match notify_rust::get_capabilities() {
            Ok(caps) => Server {
                markup: caps.iter().any(|c| c == "body-markup"),
                actions: caps.iter().any(|c| c == "actions"),
            },
            // A server that will not say is taken to read markup (an escaped
            // `&` shown as `&amp;` is better than a vendor's name turned into
            // a link) and to show no buttons (a click still opens the decision).
            Err(_) => Server {
                markup: true,
                actions: false,
            },
        }
    }

    #[cfg(not(all(unix, not(target_os = "macos"))))]
    fn ask() -> Server {
        Server {
            markup: false,
            actions: false,
        }
    }
}

/// The body as plain text for servers that read it as markup: counterparty
/// text (a vendor's name) must not become a link or an image there.
fn plain_body(body: &str, markup: bool) -> String {
    if markup {
        escape_markup(body)
    } else {
        body.to_owned()
    }
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
    use super::{coalesce, escape_markup, Failures, Logged, Note, Opens, SessionTarget};
    use countersign_engine::{Humanizer, ProposalRef};

    fn english() -> Humanizer {
        Humanizer::in_zone("en_GB.UTF-8", "UTC")
    }

    #[test]
    fn markup_in_counterparty_text_is_escaped() {
        assert_eq!(
            escape_markup("<a href=\"x\">Acme & Co</a>"),
            "&lt;a href=\"x\"&gt;Acme &amp; Co&lt;/a&gt;"
        );
    }

    /// An offer's note, or else a dispute's.
    fn note(offer: bool) -> Note {
        let open = if offer {
            Opens::Proposal(ProposalRef {
                host_id: "h".into(),
                session_id: "s".into(),
                event_hash: "e".into(),
            })
        } else {
            Opens::Session(SessionTarget {
                host_id: "h".into(),
                session_id: "s".into(),
            })
        };
        Note {
            title: "t".into(),
            body: "b".into(),
            open,
            summarize: true,
            actions: Vec::new(),
            reminder: false,
        }
    }

    #[test]
    fn a_failure_warns_once_until_notifications_work_again() {
        let mut failures = Failures::default();
        let no_bus = || Err("no D-Bus session".to_owned());
        assert_eq!(failures.record(Ok(())), Logged::Nothing);
        assert_eq!(
            failures.record(no_bus()),
            Logged::First("no D-Bus session".into())
        );
        assert_eq!(
            failures.record(no_bus()),
            Logged::Again("no D-Bus session".into())
        );
        assert_eq!(
            failures.record(no_bus()),
            Logged::Again("no D-Bus session".into())
        );
        // A different reason is news again.
        assert_eq!(
            failures.record(Err("timed out".into())),
            Logged::First("timed out".into())
        );
        assert_eq!(failures.record(Ok(())), Logged::Recovered);
        assert_eq!(failures.record(Ok(())), Logged::Nothing);
        assert_eq!(
            failures.record(no_bus()),
            Logged::First("no D-Bus session".into())
        );
    }

    #[test]
    fn a_small_burst_is_shown_note_by_note() {
        let shown = coalesce(vec![note(true), note(false)], &english());
        assert_eq!(shown.len(), 2);
        assert!(
            shown.iter().any(|n| matches!(n.open, Opens::Proposal(_))),
            "each offer keeps its own click"
        );
        assert_eq!(coalesce(vec![note(true); 4], &english()).len(), 1);
    }

    #[test]
    fn a_burst_of_offers_becomes_one_summary_but_every_dispute_stays_its_own() {
        let batch = vec![note(true), note(true), note(true), note(false), note(true)];
        let shown = coalesce(batch, &english());
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(
            matches!(shown[0].open, Opens::Session(_)),
            "the dispute opens its session"
        );
        assert_eq!(shown[1].body, "4 new offers wait for your decision.");
        assert_eq!(
            shown[1].open,
            Opens::Window,
            "a summary opens the window, not one offer"
        );
    }

    #[test]
    fn a_burst_is_silent_when_summaries_are_off_but_disputes_still_show() {
        let quiet = |mut n: Note| {
            n.summarize = false;
            n
        };
        let batch = vec![quiet(note(true)); 5]
            .into_iter()
            .chain([note(false)])
            .collect();
        let shown = coalesce(batch, &english());
        assert_eq!(shown.len(), 1, "{shown:?}");
        assert!(matches!(shown[0].open, Opens::Session(_)));
        // A small burst is not a summary: each still shows.
        assert_eq!(coalesce(vec![quiet(note(true)); 2], &english()).len(), 2);
    }

    #[test]
    fn a_burst_of_reminders_is_summed_up_as_reminders_not_as_new_offers() {
        let reminder = |mut n: Note| {
            n.reminder = true;
            n
        };
        let batch = vec![reminder(note(true)); 4]
            .into_iter()
            .chain([note(true)])
            .collect();
        let shown = coalesce(batch, &english());
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(!shown[0].reminder, "the one new offer shows on its own");
        assert_eq!(shown[1].body, "4 decisions waiting on you expire soon.");
        assert_eq!(shown[1].open, Opens::Window);
    }

    #[test]
    fn a_large_burst_counts_in_the_machines_locale() {
        let shown = coalesce(vec![note(true); 1234], &english());
        assert_eq!(shown[0].body, "1,234 new offers wait for your decision.");
        let german = Humanizer::in_zone("de_DE.UTF-8", "UTC");
        let shown = coalesce(vec![note(true); 1234], &german);
        assert_eq!(shown[0].body, "1.234 new offers wait for your decision.");
    }
}
