//! Settings a person changes, as data the engine owns: each one is declared
//! here (or by a protocol module, see [`crate::protocol::settings`]) with its
//! kind, limits and default, validated here, saved in the store, and shown
//! by one generic screen. A protocol that needs a setting (OANP's "test-mode
//! receipts count") declares one; no new screen, no new command.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::config::{ApproverProfile, EngineConfig};
use crate::error::EngineError;
use crate::store::Store;

/// Seconds between poll cycles.
pub const POLL_INTERVAL: &str = "poll.interval_seconds";
/// Notify when a new proposal waits for a decision.
pub const NOTIFY_NEW_PROPOSAL: &str = "notify.new_proposal";
/// Notify when a session's record is disputed.
pub const NOTIFY_DISPUTE: &str = "notify.dispute";
/// Notify when the org's own agent accepts against the person's decision.
pub const NOTIFY_BREACH: &str = "notify.breach";
/// Notify once for a burst of new proposals (instead of each).
pub const NOTIFY_BURST_SUMMARY: &str = "notify.burst_summary";
/// Minutes before a pending decision expires at which it gets its one
/// reminder (0: no reminders).
pub const NOTIFY_EXPIRY_REMINDER: &str = "notify.expiry_reminder_minutes";
/// The approver's name, sent when connecting to a host.
pub const APPROVER_NAME: &str = "approver.name";
/// The approver's email, sent when connecting and carried by approvals.
pub const APPROVER_EMAIL: &str = "approver.email";
/// The console's look: `system` (the desktop's light or dark), `light`, `dark`.
pub const THEME: &str = "look.theme";
/// Minutes without a decision after which the approver key locks.
pub const KEY_IDLE_LOCK: &str = "key.idle_lock_minutes";
/// Above this amount an approval asks to unlock again (0: never).
pub const KEY_CONFIRM_ABOVE: &str = "key.confirm_above";

/// What kind of value a setting takes, and its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SettingKind {
    /// On or off (`true` / `false`).
    Toggle,
    /// A whole number from `min` to `max`, in `unit`.
    Number {
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
        /// What it counts, for people ("seconds").
        unit: String,
    },
    /// One line of text; `input` is `email` or `text`.
    Text {
        /// How the interface should offer it.
        input: String,
        /// Longest allowed, in characters.
        max_len: u32,
    },
    /// One of a fixed list of values.
    Choice {
        /// Every value allowed, in the order to offer them.
        options: Vec<SettingChoice>,
    },
}

/// One value a [`SettingKind::Choice`] setting may take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SettingChoice {
    /// The value saved (`dark`).
    pub value: String,
    /// Its name for people ("Dark").
    pub label: String,
}

/// One setting as the interface shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Setting {
    /// Stable id (`notify.dispute`).
    pub id: String,
    /// Which heading it sits under.
    pub group: String,
    /// Its name for people.
    pub label: String,
    /// One sentence on what it does.
    pub help: String,
    /// For a toggle whose "on" loosens a safeguard: what turning it on
    /// changes, for the person to confirm before it is saved.
    pub confirm_on: Option<String>,
    /// Its kind and limits.
    #[serde(flatten)]
    pub kind: SettingKind,
    /// The value in effect.
    #[ts(type = "unknown")]
    pub value: Value,
    /// The value when nothing was saved.
    #[ts(type = "unknown")]
    pub default: Value,
}

/// The approver as hosts see it: who this console approves as, and the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ApproverCard {
    /// Name (setting `approver.name`).
    pub name: String,
    /// Email (setting `approver.email`).
    pub email: String,
    /// Fingerprint of the approver key: what a host's admin compares.
    pub key_fingerprint: String,
    /// The public key (base64url).
    pub public_key: String,
}

/// The settings screen: every setting, the approver with the key, the data dir.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SettingsView {
    /// Every setting, in the order to show them.
    pub settings: Vec<Setting>,
    /// Who this console approves as.
    pub approver: ApproverCard,
    /// Where all state lives (read only: `COUNTERSIGN_DATA_DIR` chooses it).
    pub data_dir: String,
    /// Where the approver key lives and whether it signs now.
    pub key: crate::keystore::KeyStatus,
}

/// A setting's declaration: everything but its current value.
#[derive(Debug, Clone)]
pub struct SettingDef {
    /// Stable id.
    pub id: &'static str,
    /// Heading.
    pub group: &'static str,
    /// Name for people.
    pub label: &'static str,
    /// One sentence.
    pub help: &'static str,
    /// Kind and limits.
    pub kind: SettingKind,
    /// Default value.
    pub default: Value,
    /// What turning it on changes, asked before it is saved on (see [`Setting::confirm_on`]).
    pub confirm_on: Option<&'static str>,
}

fn toggle(id: &'static str, label: &'static str, help: &'static str) -> SettingDef {
    SettingDef {
        id,
        group: "Notifications",
        label,
        help,
        kind: SettingKind::Toggle,
        default: Value::Bool(true),
        confirm_on: None,
    }
}

fn choice(value: &str, label: &str) -> SettingChoice {
    SettingChoice {
        value: value.to_owned(),
        label: label.to_owned(),
    }
}

/// Every setting, the engine's first, then each protocol's.
pub(crate) fn definitions(config: &EngineConfig) -> Vec<SettingDef> {
    let mut defs = vec![
        SettingDef {
            id: POLL_INTERVAL,
            group: "Checking hosts",
            label: "Poll interval",
            help: "How often the console asks each host for news.",
            kind: SettingKind::Number {
                min: 2,
                max: 3600,
                unit: "seconds".to_owned(),
            },
            default: Value::from(config.poll_interval.as_secs().clamp(2, 3600)),
            confirm_on: None,
        },
        toggle(
            NOTIFY_NEW_PROPOSAL,
            "A new proposal waits for a decision",
            "A desktop notification for each new offer or counter-offer waiting for you.",
        ),
        toggle(
            NOTIFY_DISPUTE,
            "A session is disputed",
            "A notification that stays on screen when a host's record stops matching what this console verified.",
        ),
        toggle(
            NOTIFY_BREACH,
            "The org's agent acts against a decision",
            "A notification when the org's own agent accepts what you declined or countered, or what expired undecided.",
        ),
        toggle(
            NOTIFY_BURST_SUMMARY,
            "Summary of a burst",
            "When more than three proposals arrive at once, one notification counting them instead of silence.",
        ),
        SettingDef {
            id: NOTIFY_EXPIRY_REMINDER,
            group: "Notifications",
            label: "Remind before a decision expires",
            help: "One reminder for each decision still waiting on you this many minutes before it expires; 0 sends none.",
            kind: SettingKind::Number {
                min: 0,
                max: 1440,
                unit: "minutes".to_owned(),
            },
            default: Value::from(60u64),
            confirm_on: None,
        },
        SettingDef {
            id: APPROVER_NAME,
            group: "Approver",
            label: "Your name",
            help: "Sent when this console connects to a host.",
            kind: SettingKind::Text {
                input: "text".to_owned(),
                max_len: 200,
            },
            default: Value::String(config.approver.name.clone()),
            confirm_on: None,
        },
        SettingDef {
            id: APPROVER_EMAIL,
            group: "Approver",
            label: "Your email",
            help: "The email a host's admin issues enrollment codes for; approvals carry it. Hosts already connected keep the email they enrolled.",
            kind: SettingKind::Text {
                input: "email".to_owned(),
                max_len: 254,
            },
            default: Value::String(config.approver.email.clone()),
            confirm_on: None,
        },
        SettingDef {
            id: THEME,
            group: "Look",
            label: "Theme",
            help: "System follows the desktop's light or dark preference; Light or Dark keeps that look whatever the desktop prefers.",
            kind: SettingKind::Choice {
                options: vec![
                    choice("system", "System"),
                    choice("light", "Light"),
                    choice("dark", "Dark"),
                ],
            },
            default: Value::String("system".to_owned()),
            confirm_on: None,
        },
        SettingDef {
            id: KEY_IDLE_LOCK,
            group: "Approver key",
            label: "Lock after",
            help: "Minutes without a decision after which the key locks; deciding then asks to unlock first. The inbox keeps filling while it is locked.",
            kind: SettingKind::Number {
                min: 1,
                max: 1440,
                unit: "minutes".to_owned(),
            },
            default: Value::from(15u64),
            confirm_on: None,
        },
        SettingDef {
            id: KEY_CONFIRM_ABOVE,
            group: "Approver key",
            label: "Ask again above",
            help: "An approval for more than this amount (in the proposal's own currency) asks to unlock again, even while unlocked. 0 never asks.",
            kind: SettingKind::Number {
                min: 0,
                max: 1_000_000_000_000,
                unit: "in the proposal's currency".to_owned(),
            },
            default: Value::from(0u64),
            confirm_on: None,
        },
    ];
    defs.extend(crate::protocol::settings());
    defs
}

fn find<'a>(defs: &'a [SettingDef], id: &str) -> Result<&'a SettingDef, EngineError> {
    defs.iter()
        .find(|d| d.id == id)
        .ok_or_else(|| EngineError::InvalidInput(format!("There is no setting called {id:?}.")))
}

/// Checks a value against a definition; the value to save, normalized.
fn check(def: &SettingDef, value: &Value) -> Result<Value, EngineError> {
    let wrong = |what: &str| EngineError::InvalidInput(format!("{} must be {what}.", def.label));
    match &def.kind {
        SettingKind::Toggle => value
            .as_bool()
            .map(Value::Bool)
            .ok_or_else(|| wrong("on or off (true or false)")),
        SettingKind::Number { min, max, unit } => match value.as_u64() {
            Some(n) if (*min..=*max).contains(&n) => Ok(Value::from(n)),
            _ => Err(wrong(&format!(
                "a whole number of {unit} from {min} to {max}"
            ))),
        },
        SettingKind::Text { input, max_len } => {
            let text = value.as_str().map(str::trim).ok_or_else(|| wrong("text"))?;
            if text.chars().count() > *max_len as usize {
                return Err(wrong(&format!("at most {max_len} characters")));
            }
            // Name and email are checked as enrollment checks them.
            let probe = match (def.id, input.as_str()) {
                (APPROVER_NAME, _) => ApproverProfile {
                    name: text.to_owned(),
                    email: "a@b".to_owned(),
                },
                (_, "email") => ApproverProfile {
                    name: "x".to_owned(),
                    email: text.to_owned(),
                },
                _ if text.is_empty() || text.chars().any(char::is_control) => {
                    return Err(wrong("one line of text"))
                }
                _ => return Ok(Value::String(text.to_owned())),
            };
            probe.validate()?;
            Ok(Value::String(text.to_owned()))
        }
        SettingKind::Choice { options } => value
            .as_str()
            .and_then(|v| options.iter().find(|o| o.value == v))
            .map(|o| Value::String(o.value.clone()))
            .ok_or_else(|| {
                let names: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
                wrong(&format!("one of {}", names.join(", ")))
            }),
    }
}

/// Each setting's value in effect (saved, else the default), and whether it
/// was saved. A saved value that no longer passes (an older build's, a hand
/// edit) counts as unsaved.
fn current(store: &Store, defs: &[SettingDef]) -> Result<Vec<(Setting, bool)>, EngineError> {
    let saved = store.settings()?;
    Ok(defs
        .iter()
        .map(|def| {
            let kept = saved
                .iter()
                .find(|(id, _)| id == def.id)
                .and_then(|(_, text)| serde_json::from_str::<Value>(text).ok())
                .and_then(|v| check(def, &v).ok());
            let setting = Setting {
                id: def.id.to_owned(),
                group: def.group.to_owned(),
                label: def.label.to_owned(),
                help: def.help.to_owned(),
                confirm_on: def.confirm_on.map(str::to_owned),
                kind: def.kind.clone(),
                value: kept.clone().unwrap_or_else(|| def.default.clone()),
                default: def.default.clone(),
            };
            (setting, kept.is_some())
        })
        .collect())
}

/// Validates and saves one setting.
pub(crate) fn set(
    store: &Store,
    config: &EngineConfig,
    id: &str,
    value: &Value,
    now: &str,
) -> Result<(), EngineError> {
    let defs = definitions(config);
    let def = find(&defs, id)?;
    let value = check(def, value)?;
    store.set_setting(id, &value.to_string(), now)?;
    Ok(())
}

/// The settings in effect, read the way the engine uses them.
#[derive(Debug, Clone)]
pub(crate) struct Effective {
    settings: Vec<(Setting, bool)>,
}

impl Effective {
    /// Reads every setting once.
    pub(crate) fn load(store: &Store, config: &EngineConfig) -> Result<Effective, EngineError> {
        Ok(Effective {
            settings: current(store, &definitions(config))?,
        })
    }

    /// Every default, nothing saved.
    pub(crate) fn defaults(config: &EngineConfig) -> Effective {
        let settings = definitions(config)
            .into_iter()
            .map(|def| {
                let setting = Setting {
                    id: def.id.to_owned(),
                    group: def.group.to_owned(),
                    label: def.label.to_owned(),
                    help: def.help.to_owned(),
                    confirm_on: def.confirm_on.map(str::to_owned),
                    kind: def.kind,
                    value: def.default.clone(),
                    default: def.default,
                };
                (setting, false)
            })
            .collect();
        Effective { settings }
    }

    fn saved(&self, id: &str) -> Option<&Value> {
        self.settings
            .iter()
            .find(|(s, saved)| *saved && s.id == id)
            .map(|(s, _)| &s.value)
    }

    /// A toggle's state (on unless it was turned off).
    pub(crate) fn on(&self, id: &str) -> bool {
        self.saved(id).and_then(Value::as_bool).unwrap_or(true)
    }

    /// A toggle's value in effect: saved, else its declared default (a
    /// toggle that is off by default, like OANP's test receipts, stays off).
    pub(crate) fn toggle(&self, id: &str) -> bool {
        self.settings
            .iter()
            .find(|(s, _)| s.id == id)
            .and_then(|(s, _)| s.value.as_bool())
            .unwrap_or(false)
    }

    /// The approver profile in effect: saved, else the config's.
    pub(crate) fn approver(&self, config: &EngineConfig) -> ApproverProfile {
        let text = |id: &str, fallback: &str| {
            self.saved(id)
                .and_then(Value::as_str)
                .unwrap_or(fallback)
                .to_owned()
        };
        ApproverProfile {
            name: text(APPROVER_NAME, &config.approver.name),
            email: text(APPROVER_EMAIL, &config.approver.email),
        }
    }

    /// The poll interval in effect: saved, else the config's (which may be
    /// shorter than a person may choose, as tests configure it).
    pub(crate) fn poll_interval(&self, config: &EngineConfig) -> Duration {
        self.saved(POLL_INTERVAL)
            .and_then(Value::as_u64)
            .map(Duration::from_secs)
            .unwrap_or(config.poll_interval)
    }

    /// The idle time after which the key locks.
    pub(crate) fn idle_lock(&self) -> Duration {
        let minutes = self
            .settings
            .iter()
            .find(|(s, _)| s.id == KEY_IDLE_LOCK)
            .and_then(|(s, _)| s.value.as_u64())
            .unwrap_or(15);
        Duration::from_secs(minutes.saturating_mul(60))
    }

    /// How long before its expiry a decision still waiting on the person
    /// gets its one reminder; `None` when reminders are off (0 minutes).
    pub(crate) fn expiry_reminder(&self) -> Option<Duration> {
        self.settings
            .iter()
            .find(|(s, _)| s.id == NOTIFY_EXPIRY_REMINDER)
            .and_then(|(s, _)| s.value.as_u64())
            .filter(|minutes| *minutes > 0)
            .map(|minutes| Duration::from_secs(minutes.saturating_mul(60)))
    }

    /// The amount above which an approval asks to unlock again; `None`
    /// when it never asks.
    pub(crate) fn confirm_above(&self) -> Option<rust_decimal::Decimal> {
        self.settings
            .iter()
            .find(|(s, _)| s.id == KEY_CONFIRM_ABOVE)
            .and_then(|(s, _)| s.value.as_u64())
            .filter(|n| *n > 0)
            .map(rust_decimal::Decimal::from)
    }

    /// Every setting, for the screen.
    pub(crate) fn into_settings(self) -> Vec<Setting> {
        self.settings.into_iter().map(|(s, _)| s).collect()
    }
}
