//! The Countersign console engine: everything the console knows and does,
//! with no Tauri. It connects to buyer hosts (the sandbox among them, which
//! the `countersign-sandbox` crate runs beside it), polls them, verifies every event against pinned heads, stores what it verified,
//! assembles the inbox, signs decisions and tells the UI what changed.
//!
//! The Tauri shell exposes one command per [`Engine`] method; the shapes are
//! those of `docs/console-contract.md` ([`views`]).

#![warn(missing_docs)]

mod clock;
mod config;
mod connect;
mod context;
mod decide;
mod decided;
mod desk;
mod dispute;
mod edge;
mod engine;
mod error;
mod history;
mod inbox;
mod keystore;
mod notify;
pub mod owner_only;
pub mod poller;
mod protocol;
mod receipts;
mod reminders;
mod rotate;
mod settings;
mod stand_ins;
pub mod store;
pub mod views;
mod watch;

pub use clock::{format_time, Clock, ManualClock, SystemClock};
pub use config::{
    resolve_data_dir, ApproverProfile, EngineConfig, SandboxMode, APPROVER_EMAIL_ENV,
    APPROVER_NAME_ENV, DATA_DIR_ENV, KEY_STORE_ENV,
};
pub use engine::{Engine, DATABASE_FILE};
pub use error::{CommandError, DecideError, EngineError};
pub use humanize::Humanizer;
pub use keystore::{KeyProtection, KeyStatus, KeyStoreChoice, KeyUsed};
pub use notify::{
    notice_actions, BreachNotice, DisputeNotice, NoticeAction, Notifier, PendingNotice,
    SilentNotifier,
};
pub use poller::PollStats;
pub use protocol::oanp::ALLOW_TEST_RECEIPTS as OANP_ALLOW_TEST_RECEIPTS;
pub use rotate::{HostMove, KeyMove};
pub use settings::{
    ApproverCard, Setting, SettingChoice, SettingDef, SettingKind, SettingsView, APPROVER_EMAIL,
    APPROVER_NAME, KEY_CONFIRM_ABOVE, KEY_IDLE_LOCK, NOTIFY_BREACH, NOTIFY_BURST_SUMMARY,
    NOTIFY_DISPUTE, NOTIFY_EXPIRY_REMINDER, NOTIFY_NEW_PROPOSAL, POLL_INTERVAL, THEME,
};
pub use views::*;
pub use watch::WAIT_SECONDS;
