//! Where the engine keeps its state and how often it polls.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::error::EngineError;
use crate::keystore::KeyStoreChoice;

/// The environment variable that overrides the data directory, so tests and
/// several instances never share state.
pub const DATA_DIR_ENV: &str = "COUNTERSIGN_DATA_DIR";

/// The environment variable naming the approver's display name.
pub const APPROVER_NAME_ENV: &str = "COUNTERSIGN_APPROVER_NAME";

/// The environment variable naming the approver's email (what a host's admin
/// issues the enrollment code for, and what approvals carry as `approved_by`).
pub const APPROVER_EMAIL_ENV: &str = "COUNTERSIGN_APPROVER_EMAIL";

/// The environment variable choosing where a new approver key is kept:
/// `auto` (the default: the desktop's secret store when one answers, else a
/// passphrase), `secret-store`, or `passphrase`.
pub const KEY_STORE_ENV: &str = "COUNTERSIGN_KEY_STORE";

/// Whether to run the embedded sandbox host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Start the sandbox when no real host is connected (the default: a new
    /// user sees real pending decisions within seconds).
    #[default]
    Auto,
    /// Never start it (tests against their own host, deployments).
    Off,
    /// Always start it, beside any real host.
    Always,
}

/// Who this console approves as: the name and email sent at enrollment,
/// the email is what signed approvals carry as `approved_by`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ApproverProfile {
    /// Display name.
    pub name: String,
    /// Email (`approved_by`).
    pub email: String,
}

impl ApproverProfile {
    /// Checks what a person typed before it goes to a host: a name of
    /// 1–200 characters and one plausible email, both without control
    /// characters, so a typo is named here rather than refused there.
    pub fn validate(&self) -> Result<(), EngineError> {
        use EngineError::InvalidInput;
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
            return Err(InvalidInput(
                "Your name must be 1 to 200 characters, on one line.".into(),
            ));
        }
        let email = self.email.trim();
        let plausible = email.len() <= 254
            && !email.chars().any(|c| c.is_whitespace() || c.is_control())
            && email.split_once('@').is_some_and(|(local, domain)| {
                !local.is_empty() && !domain.is_empty() && !domain.contains('@')
            });
        if !plausible {
            return Err(InvalidInput(format!(
                "{email:?} is not an email address; use the one your host's admin issued the enrollment code for."
            )));
        }
        Ok(())
    }
}

impl Default for ApproverProfile {
    fn default() -> Self {
        ApproverProfile {
            name: "Local approver".to_owned(),
            email: "approver@countersign.local".to_owned(),
        }
    }
}

/// Everything `Engine::open` needs.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// All state: database, key, exports, sandbox host database.
    pub data_dir: PathBuf,
    /// Time between poll cycles when hosts answer.
    pub poll_interval: Duration,
    /// Sandbox policy.
    pub sandbox: SandboxMode,
    /// Identity used when enrolling with a host (the default of the
    /// `approver.*` settings).
    pub approver: ApproverProfile,
    /// How numbers and times are written for people (notifications, tray,
    /// title): the machine's locale and time zone unless a test sets one.
    pub humanizer: humanize::Humanizer,
    /// Where every "now" the engine reads comes from (expiry checks, the
    /// time a decision is signed and stored, what notifications say): the
    /// machine's clock unless a test sets one. Signed requests carry the
    /// machine's time regardless, since the host checks them against its own.
    pub clock: Arc<dyn Clock>,
    /// Where a new approver key is kept (an existing key stays where it is).
    pub key_store: KeyStoreChoice,
    /// A passphrase given up front, for a console with no one to type it
    /// (tests, a headless console): seals a new key and unlocks a sealed
    /// one at start. `None` on a desktop: the person types it.
    pub key_passphrase: Option<String>,
}

impl EngineConfig {
    /// A config with defaults (5 s polling, sandbox when no host, the
    /// machine's locale and time zone) in `data_dir`.
    pub fn new(data_dir: PathBuf) -> EngineConfig {
        EngineConfig {
            data_dir,
            poll_interval: Duration::from_secs(5),
            sandbox: SandboxMode::Auto,
            approver: ApproverProfile::default(),
            humanizer: humanize::Humanizer::from_env(),
            clock: Arc::new(SystemClock),
            key_store: KeyStoreChoice::Auto,
            key_passphrase: None,
        }
    }

    /// Defaults in the resolved data directory ([`resolve_data_dir`]), with
    /// the approver's name and email from `COUNTERSIGN_APPROVER_NAME` and
    /// `COUNTERSIGN_APPROVER_EMAIL` when set.
    pub fn from_env() -> Result<EngineConfig, EngineError> {
        let mut config = EngineConfig::new(resolve_data_dir()?);
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if let Some(name) = var(APPROVER_NAME_ENV) {
            config.approver.name = name.trim().to_owned();
        }
        if let Some(email) = var(APPROVER_EMAIL_ENV) {
            config.approver.email = email.trim().to_owned();
        }
        config.key_store = match var(KEY_STORE_ENV).as_deref().map(str::trim) {
            None | Some("auto") => KeyStoreChoice::Auto,
            Some("secret-store") => KeyStoreChoice::SecretStore,
            Some("passphrase") => KeyStoreChoice::Passphrase,
            Some(other) => {
                return Err(EngineError::InvalidInput(format!(
                    "{KEY_STORE_ENV}={other:?} is not one of auto, secret-store, passphrase."
                )))
            }
        };
        Ok(config)
    }
}

/// `COUNTERSIGN_DATA_DIR` when set and not empty, else the platform's app
/// data directory plus `countersign`.
pub fn resolve_data_dir() -> Result<PathBuf, EngineError> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::data_dir()
        .map(|d| d.join("countersign"))
        .ok_or_else(|| EngineError::DataDir {
            path: "(none)".to_owned(),
            detail: format!("this platform has no app data directory; set {DATA_DIR_ENV}"),
        })
}
