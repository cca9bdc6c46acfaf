//! Locks the approver key when the desktop's session locks, where the
//! desktop says so: the screen saver's `ActiveChanged(true)` signal on the
//! session bus (`org.freedesktop.ScreenSaver`, which KDE, Xfce and most
//! others send, and `org.gnome.ScreenSaver`, GNOME's). A desktop that says
//! nothing leaves the idle lock to do the job.

use countersign_engine::Engine;
use futures_util::StreamExt;
use zbus::message::Type;
use zbus::{Connection, MatchRule, MessageStream};

/// The screen savers' interfaces whose `ActiveChanged` is listened to.
const INTERFACES: [&str; 2] = ["org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver"];

/// Listens on the session bus until it goes away; quietly does nothing
/// where there is no session bus.
pub async fn watch(engine: Engine) {
    let connection = match Connection::session().await {
        Ok(c) => c,
        Err(e) => {
            tracing::info!("no session bus, so no session-lock signal: {e}");
            return;
        }
    };
    let mut streams = Vec::new();
    for interface in INTERFACES {
        match stream_for(&connection, interface).await {
            Ok(stream) => streams.push(stream),
            Err(e) => tracing::warn!("not listening to {interface}.ActiveChanged: {e}"),
        }
    }
    let mut signals = futures_util::stream::select_all(streams);
    while let Some(message) = signals.next().await {
        let Ok(message) = message else { continue };
        if let Ok(true) = message.body().deserialize::<bool>() {
            tracing::info!("the desktop session locked: the approver key locks too");
            engine.lock_key();
        }
    }
}

async fn stream_for(connection: &Connection, interface: &str) -> zbus::Result<MessageStream> {
    let rule = MatchRule::builder()
        .msg_type(Type::Signal)
        .interface(interface)
        .member("ActiveChanged")
        .build()?;
    MessageStream::for_match_rule(rule, connection, None).await
}
