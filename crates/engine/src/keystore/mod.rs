//! The approver's Ed25519 key has one room: this module is the only code
//! that reads, writes or holds its private half. It lives in the desktop's
//! secret store ([`secret_store`]) or, where none answers, sealed with a
//! passphrase the person chooses ([`sealed`]); never in the clear in a file.
//! The data directory holds only a reference to it (which store, which
//! item, the public key) or the sealed file.
//!
//! The vault also says when the key may sign a decision: only while
//! unlocked, not after the idle time the person set, and above the amount
//! the person set only right after a fresh unlock. Requests to hosts
//! (polling, enrollment) are signed whenever the key is in memory, so the
//! inbox keeps filling while decisions are locked.

mod legacy;
mod rotation;
pub(crate) mod sealed;
pub(crate) mod secret_store;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use ts_rs::TS;

use crate::edge::keyfile;
use crate::error::{DecideError, EngineError};

use sealed::{SealError, SealedKey};
use secret_store::SecretStore;

/// Where the key's reference to the secret store item is kept.
pub(crate) const REFERENCE_FILE: &str = "approver-key.ref.json";
/// Where the passphrase-sealed key is kept.
pub(crate) const SEALED_FILE: &str = "approver-key.sealed.json";
/// Where a passphrase-sealed key being retired is kept until every host
/// has moved to its successor ([`rotation`]).
pub(crate) const RETIRING_SEALED_FILE: &str = "approver-key.retiring.sealed.json";
/// How long a fresh unlock counts as the confirmation a decision above the
/// person's amount asks for.
pub(crate) const CONFIRMATION_WINDOW: time::Duration = time::Duration::minutes(2);

/// Which protection a new key gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyStoreChoice {
    /// The desktop's secret store when one answers, else a passphrase.
    #[default]
    Auto,
    /// The desktop's secret store, or an error naming why it did not answer.
    SecretStore,
    /// A passphrase, even where a secret store answers.
    Passphrase,
}

/// How the key is protected, as Settings names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum KeyProtection {
    /// In the desktop's secret store.
    SecretStore,
    /// Sealed with the person's passphrase (Argon2id, XChaCha20-Poly1305).
    Passphrase,
    /// Not saved anywhere yet: no secret store answered and no passphrase
    /// was chosen; the key is lost when the console closes.
    Unsaved,
}

/// Where the key lives and whether it signs now: the Settings card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct KeyStatus {
    /// How it is protected.
    pub protection: KeyProtection,
    /// One sentence on where it lives, for people.
    pub location: String,
    /// True while decisions may be signed.
    pub unlocked: bool,
    /// True when the key is in memory (requests to hosts are signed, the
    /// inbox fills); false until the first unlock of a passphrase key.
    pub loaded: bool,
    /// What the person should do now, when anything ("Choose a passphrase").
    pub advice: Option<String>,
    /// Said once: the plain key file of an earlier build moved here.
    pub notice: Option<String>,
    /// Minutes without a decision after which the key locks.
    pub idle_lock_minutes: u64,
    /// When the key locks for idleness unless the person acts first (RFC
    /// 3339), while it is unlocked: the engine locks it lazily, at the next
    /// thing asked of it, so the interface reads the status again then.
    pub locks_at: Option<String>,
    /// Above this amount a decision asks to unlock again (0: never).
    #[ts(type = "string")]
    pub confirm_above: String,
    /// The fingerprint of the key that signs now.
    pub fingerprint: String,
    /// While a move to a new key is not finished at every host: the old
    /// key's fingerprint (hosts that still know it are signed for with it).
    pub moving_from: Option<String>,
    /// Every key this console has signed with, oldest first (filled by the
    /// engine from its records).
    pub keys: Vec<KeyUsed>,
}

/// A key this console has signed with, as Settings lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct KeyUsed {
    /// Its fingerprint.
    pub fingerprint: String,
    /// When the console began signing with it.
    pub since: String,
    /// When it was retired (no host knows it since); `None` while in use.
    pub retired_at: Option<String>,
}

/// The reference file: which store item holds the key.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reference {
    format: String,
    service: String,
    account: String,
    public_key: String,
    /// The key being retired while hosts still know it ([`rotation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retiring: Option<RetiringReference>,
}

/// The store item of a key being retired.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RetiringReference {
    account: String,
    public_key: String,
}

const REFERENCE_FORMAT: &str = "countersign-key-ref/1";

enum Room {
    Store {
        store: Option<SecretStore>,
        account: String,
    },
    Sealed(Option<SealedKey>),
}

/// The key a rotation retires, kept until every host has moved on.
struct Retiring {
    public: VerifyingKey,
    key: Option<SigningKey>,
    kept: RetiringRoom,
}

/// Where a retiring key is kept: as the current key is.
enum RetiringRoom {
    Store(String),
    Sealed(SealedKey),
}

struct State {
    room: Room,
    public: VerifyingKey,
    key: Option<SigningKey>,
    retiring: Option<Retiring>,
    unlocked: bool,
    last_activity: OffsetDateTime,
    confirmed_at: Option<OffsetDateTime>,
    notice: Option<String>,
    problem: Option<String>,
}

/// The key's one room.
pub(crate) struct KeyVault {
    data_dir: PathBuf,
    state: Mutex<State>,
}

/// What opening the vault needs from the engine's config.
pub(crate) struct VaultOptions<'a> {
    /// The data directory.
    pub data_dir: &'a Path,
    /// Which protection a new key gets.
    pub choice: KeyStoreChoice,
    /// A passphrase given up front (a headless console, tests).
    pub passphrase: Option<&'a str>,
    /// Now.
    pub now: OffsetDateTime,
}

fn key_error(what: &str, detail: impl std::fmt::Display) -> EngineError {
    EngineError::KeyStore(format!("{what}: {detail}"))
}

fn account_for(public: &VerifyingKey) -> String {
    let fp = keyfile::fingerprint(public);
    format!("approver-key-{}", &fp[..32.min(fp.len())])
}

/// Writes `bytes` to `name` in `dir` through a temporary file and a rename,
/// so a crash leaves the old file or the new one, never half of one.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), EngineError> {
    let tmp = dir.join(format!("{name}.tmp"));
    crate::owner_only::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(name))?;
    Ok(())
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, EngineError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| EngineError::KeyFile(format!("{} is damaged: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EngineError::Io(e)),
    }
}

fn public_of(text: &str) -> Result<VerifyingKey, EngineError> {
    keyfile::parse_public_key(text)
        .map_err(|e| EngineError::KeyFile(format!("the public key on file is damaged: {e}")))
}

impl KeyVault {
    /// Opens the key's room: the key already kept (secret store or sealed
    /// file), else a plain key of an earlier build moved into protection,
    /// else a new key.
    pub(crate) fn open(options: VaultOptions<'_>) -> Result<KeyVault, EngineError> {
        let dir = options.data_dir;
        let state = if let Some(reference) = read_json::<Reference>(&dir.join(REFERENCE_FILE))? {
            let retiring = reference.retiring.clone();
            let mut state = Self::open_reference(reference, options.now)?;
            if let Some(retiring) = retiring {
                let store = match &state.room {
                    Room::Store { store, .. } => store.as_ref(),
                    Room::Sealed(_) => None,
                };
                state.retiring = Some(rotation::from_store(store, retiring)?);
            }
            state
        } else if let Some(sealed) = read_json::<SealedKey>(&dir.join(SEALED_FILE))? {
            let mut state = Self::open_sealed(sealed, options.passphrase, options.now)?;
            state.retiring = rotation::from_sealed_file(dir, &state, options.passphrase)?;
            state
        } else {
            Self::first_start(&options)?
        };
        Ok(KeyVault {
            data_dir: dir.to_owned(),
            state: Mutex::new(state),
        })
    }

    fn open_reference(reference: Reference, now: OffsetDateTime) -> Result<State, EngineError> {
        let public = public_of(&reference.public_key)?;
        let mut state = State {
            room: Room::Store {
                store: None,
                account: reference.account.clone(),
            },
            public,
            key: None,
            retiring: None,
            unlocked: false,
            last_activity: now,
            confirmed_at: None,
            notice: None,
            problem: None,
        };
        match SecretStore::connect().and_then(|store| {
            let seed = store.get(&reference.account)?;
            Ok((store, seed))
        }) {
            Ok((store, Some(seed))) => {
                let key = SigningKey::from_bytes(&seed);
                if key.verifying_key() != public {
                    return Err(key_error(
                        "The secret store's item is not this console's key",
                        reference.account,
                    ));
                }
                state.room = Room::Store {
                    store: Some(store),
                    account: reference.account,
                };
                state.key = Some(key);
                state.unlocked = true;
                // Opened at start without the person: not the confirmation
                // a decision above their amount asks for.
                state.confirmed_at = None;
            }
            Ok((_, None)) => {
                state.problem = Some(format!(
                    "The desktop's secret store no longer holds this console's key (item {}). Ask your host's admin for a new enrollment code and connect again.",
                    reference.account
                ));
            }
            Err(detail) => {
                state.problem = Some(format!(
                    "The desktop's secret store did not answer ({detail}). Unlock or start the desktop's keyring, then Unlock here."
                ));
            }
        }
        Ok(state)
    }

    fn open_sealed(
        sealed: SealedKey,
        passphrase: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<State, EngineError> {
        let public = public_of(&sealed.public_key)?;
        let key = match passphrase {
            Some(p) => Some(sealed::open(&sealed, p).map_err(seal_error)?),
            None => None,
        };
        Ok(State {
            room: Room::Sealed(Some(sealed)),
            public,
            unlocked: key.is_some(),
            confirmed_at: None, // given up front, not typed for a decision
            key,
            retiring: None,
            last_activity: now,
            notice: None,
            problem: None,
        })
    }

    fn first_start(options: &VaultOptions<'_>) -> Result<State, EngineError> {
        let dir = options.data_dir;
        let plain = legacy::read(dir)?;
        let moving = plain.is_some();
        let key = plain.unwrap_or_else(keyfile::generate);
        let public = key.verifying_key();
        let mut state = State {
            room: Room::Sealed(None),
            public,
            key: Some(key.clone()),
            retiring: None,
            unlocked: true,
            last_activity: options.now,
            // A new or moved key, at start: nobody confirmed anything yet.
            confirmed_at: None,
            notice: None,
            problem: None,
        };
        if options.choice != KeyStoreChoice::Passphrase {
            match Self::file_in_store(dir, &key) {
                Ok((store, account)) => {
                    state.room = Room::Store {
                        store: Some(store),
                        account,
                    };
                    if moving {
                        legacy::remove(dir)?;
                        state.notice = Some(
                            "Your approver key moved from a plain file in the data directory into the desktop's secret store; the plain file is removed.".into(),
                        );
                    }
                    return Ok(state);
                }
                Err(detail) if options.choice == KeyStoreChoice::SecretStore => {
                    return Err(key_error(
                        "The desktop's secret store did not take the approver key",
                        detail,
                    ));
                }
                Err(detail) => {
                    state.problem = Some(format!(
                        "No desktop secret store answered ({detail}), so the key is protected by a passphrase you choose."
                    ));
                }
            }
        }
        if let Some(passphrase) = options.passphrase {
            let sealed = Self::seal_to_file(dir, &key, passphrase)?;
            state.room = Room::Sealed(Some(sealed));
            if moving {
                legacy::remove(dir)?;
                state.notice = Some(
                    "Your approver key moved from a plain file in the data directory into a file sealed with your passphrase; the plain file is removed.".into(),
                );
            }
        } else if moving {
            state.notice = Some(
                "Your approver key is still a plain file in the data directory: choose a passphrase in Settings to seal it; the plain file is removed then.".into(),
            );
        }
        Ok(state)
    }

    /// Files the key in the secret store, reads it back, then writes the
    /// reference: a failure at any step leaves what was there before.
    fn file_in_store(dir: &Path, key: &SigningKey) -> Result<(SecretStore, String), String> {
        let store = SecretStore::connect()?;
        let account = account_for(&key.verifying_key());
        store.put(&account, &key.to_bytes())?;
        match store.get(&account)? {
            Some(seed) if *seed == key.to_bytes() => {}
            _ => return Err("the key did not read back from the secret store".into()),
        }
        let reference = Reference {
            format: REFERENCE_FORMAT.to_owned(),
            service: secret_store::SERVICE.to_owned(),
            account: account.clone(),
            public_key: keyfile::public_key_text(&key.verifying_key()),
            retiring: None,
        };
        let text = serde_json::to_vec_pretty(&reference).map_err(|e| e.to_string())?;
        write_atomically(dir, REFERENCE_FILE, &text).map_err(|e| e.to_string())?;
        Ok((store, account))
    }

    /// Seals the key, writes the file, and opens what was written.
    fn seal_to_file(
        dir: &Path,
        key: &SigningKey,
        passphrase: &str,
    ) -> Result<SealedKey, EngineError> {
        let sealed = sealed::seal(key, passphrase).map_err(seal_error)?;
        let text = serde_json::to_vec_pretty(&sealed)
            .map_err(|e| key_error("The sealed key could not be written", e))?;
        write_atomically(dir, SEALED_FILE, &text)?;
        let back = read_json::<SealedKey>(&dir.join(SEALED_FILE))?
            .ok_or_else(|| key_error("The sealed key file", "vanished after it was written"))?;
        if sealed::open(&back, passphrase)
            .map_err(seal_error)?
            .to_bytes()
            != key.to_bytes()
        {
            return Err(key_error("The sealed key file", "does not read back"));
        }
        Ok(back)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The public key: known even while the private half is locked away.
    pub(crate) fn public_key(&self) -> VerifyingKey {
        self.state().public
    }

    /// The key to sign requests to hosts with (polling, enrollment), held
    /// while the console runs once it was loaded; not for decisions.
    pub(crate) fn request_key(&self) -> Result<SigningKey, EngineError> {
        self.state().key.clone().ok_or_else(|| {
            EngineError::Locked(
                "The approver key is locked: unlock it (Settings → Approver key) so this console can sign.".into(),
            )
        })
    }

    /// The key to enroll with a host: only a key that is kept (in the
    /// secret store or sealed), since an enrollment outlives the console's
    /// run and a key kept nowhere does not. (The plain file of an earlier
    /// build still keeps it until a passphrase seals it.)
    pub(crate) fn enrollment_key(&self) -> Result<SigningKey, EngineError> {
        if !self.is_kept()? {
            return Err(EngineError::KeyNotKept);
        }
        self.request_key()
    }

    /// Whether the key outlives this run: in the secret store, sealed, or
    /// still in the plain file of an earlier build.
    pub(crate) fn is_kept(&self) -> Result<bool, EngineError> {
        let kept_nowhere = matches!(self.state().room, Room::Sealed(None));
        Ok(!kept_nowhere || legacy::read(&self.data_dir)?.is_some())
    }

    /// The key to sign one decision with, now: only while unlocked and not
    /// idle for `idle`; with `needs_confirmation` (the amount is above the
    /// person's), only within [`CONFIRMATION_WINDOW`] of a fresh unlock,
    /// which it uses up.
    /// `fingerprint` names the key the decision's host knows: the current
    /// one, or the retiring one until that host has moved.
    pub(crate) fn decision_key(
        &self,
        now: OffsetDateTime,
        idle: Duration,
        needs_confirmation: Option<&str>,
        fingerprint: &str,
    ) -> Result<SigningKey, DecideError> {
        let mut state = self.state();
        expire_if_idle(&mut state, now, idle);
        let retiring = state
            .retiring
            .as_ref()
            .filter(|r| keyfile::fingerprint(&r.public) == fingerprint)
            .map(|r| r.key.clone());
        let key = match (retiring, &state.key, state.unlocked) {
            (Some(Some(key)), _, true) => key,
            (None, Some(key), true) => key.clone(),
            _ => return Err(DecideError::Locked),
        };
        if let Some(amount) = needs_confirmation {
            let fresh = state
                .confirmed_at
                .is_some_and(|at| now >= at && now - at <= CONFIRMATION_WINDOW);
            if !fresh {
                return Err(DecideError::ConfirmAgain {
                    amount: amount.to_owned(),
                });
            }
            state.confirmed_at = None;
        }
        state.last_activity = now;
        Ok(key)
    }

    /// Counts as the person's activity (the idle time starts again), unless
    /// the key already locked.
    pub(crate) fn touch(&self, now: OffsetDateTime, idle: Duration) {
        let mut state = self.state();
        expire_if_idle(&mut state, now, idle);
        if state.unlocked {
            state.last_activity = now;
        }
    }

    /// Locks decisions now (the person's "Lock", or the desktop's session
    /// locking). Requests to hosts go on.
    pub(crate) fn lock(&self) {
        let mut state = self.state();
        state.unlocked = false;
        state.confirmed_at = None;
    }

    /// Unlocks: asks the secret store again (which may ask the person) or
    /// opens the sealed key with `passphrase`.
    pub(crate) fn unlock(
        &self,
        passphrase: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<(), EngineError> {
        let mut state = self.state();
        let public = state.public;
        let key = match &mut state.room {
            Room::Store { store, account } => {
                if store.is_none() {
                    *store =
                        Some(SecretStore::connect().map_err(|e| {
                            key_error("The desktop's secret store did not answer", e)
                        })?);
                }
                let seed = store
                    .as_ref()
                    .map(|s| s.get(account))
                    .transpose()
                    .map_err(|e| key_error("The desktop's secret store did not give the key", e))?
                    .flatten()
                    .ok_or_else(|| {
                        key_error(
                            "The desktop's secret store no longer holds the approver key",
                            account.clone(),
                        )
                    })?;
                SigningKey::from_bytes(&seed)
            }
            Room::Sealed(Some(sealed)) => {
                let passphrase = passphrase.filter(|p| !p.is_empty()).ok_or_else(|| {
                    EngineError::InvalidInput("Type the key's passphrase to unlock it.".into())
                })?;
                sealed::open(sealed, passphrase).map_err(seal_error)?
            }
            Room::Sealed(None) => match &state.key {
                Some(key) => key.clone(),
                None => return Err(key_error("The approver key", "is missing")),
            },
        };
        if key.verifying_key() != public {
            return Err(key_error(
                "The key found",
                "is not this console's approver key",
            ));
        }
        state.key = Some(key);
        state.unlocked = true;
        state.last_activity = now;
        state.confirmed_at = Some(now);
        state.problem = None;
        rotation::unlock_retiring(&mut state, passphrase);
        Ok(())
    }

    /// Seals the key in memory with a new passphrase (where the key is not
    /// in the secret store): the first passphrase, or a change of it. A
    /// plain key file of an earlier build is removed once the sealed file
    /// reads back.
    pub(crate) fn set_passphrase(&self, passphrase: &str) -> Result<(), EngineError> {
        let mut state = self.state();
        if matches!(state.room, Room::Store { .. }) {
            return Err(EngineError::InvalidInput(
                "The key is in the desktop's secret store; it has no passphrase of its own.".into(),
            ));
        }
        let key = match (&state.key, state.unlocked) {
            (Some(key), true) => key.clone(),
            _ => {
                return Err(EngineError::Locked(
                    "Unlock the key with its current passphrase first.".into(),
                ))
            }
        };
        let sealed = Self::seal_to_file(&self.data_dir, &key, passphrase)?;
        rotation::reseal_retiring(&self.data_dir, &mut state, passphrase)?;
        let moved = legacy::read(&self.data_dir)?.is_some();
        if moved {
            legacy::remove(&self.data_dir)?;
            state.notice = Some(
                "Your approver key is sealed with your passphrase; the plain key file is removed."
                    .into(),
            );
        }
        state.room = Room::Sealed(Some(sealed));
        state.problem = None;
        Ok(())
    }

    /// Where the key lives and whether it signs now; the move notice is
    /// handed out once.
    pub(crate) fn status(
        &self,
        now: OffsetDateTime,
        idle: Duration,
        confirm_above: String,
    ) -> KeyStatus {
        let mut state = self.state();
        expire_if_idle(&mut state, now, idle);
        let (protection, location) = match &state.room {
            Room::Store { store, account } => (
                KeyProtection::SecretStore,
                format!(
                    "In {} (service \u{201c}{}\u{201d}, item \u{201c}{account}\u{201d}); the data directory holds only a reference to it.",
                    store.as_ref().map_or("the desktop's secret store", |s| s.name),
                    secret_store::SERVICE
                ),
            ),
            Room::Sealed(Some(_)) => (
                KeyProtection::Passphrase,
                format!("In {SEALED_FILE}, sealed with your passphrase (Argon2id, XChaCha20-Poly1305)."),
            ),
            Room::Sealed(None) => (
                KeyProtection::Unsaved,
                "Only in this console's memory: choose a passphrase to keep it.".to_owned(),
            ),
        };
        let advice = state.problem.clone().or_else(|| match protection {
            KeyProtection::Unsaved => Some(
                "Choose a passphrase: until then the key is lost when the console closes.".into(),
            ),
            _ if !state.unlocked => Some(match protection {
                KeyProtection::Passphrase => "Type the passphrase to unlock.".into(),
                _ => "Unlock to sign: the desktop's secret store is asked again.".into(),
            }),
            _ => None,
        });
        KeyStatus {
            protection,
            location,
            unlocked: state.unlocked,
            loaded: state.key.is_some(),
            advice,
            notice: state.notice.take(),
            idle_lock_minutes: idle.as_secs() / 60,
            locks_at: state
                .unlocked
                .then(|| time::Duration::try_from(idle).ok())
                .flatten()
                .and_then(|idle| state.last_activity.checked_add(idle))
                .map(crate::clock::format_time),
            confirm_above,
            fingerprint: keyfile::fingerprint(&state.public),
            moving_from: state
                .retiring
                .as_ref()
                .map(|r| keyfile::fingerprint(&r.public)),
            keys: Vec::new(),
        }
    }
}

fn expire_if_idle(state: &mut State, now: OffsetDateTime, idle: Duration) {
    let idle = time::Duration::try_from(idle).unwrap_or(time::Duration::MAX);
    if state.unlocked && now - state.last_activity >= idle {
        state.unlocked = false;
        state.confirmed_at = None;
    }
}

fn seal_error(e: SealError) -> EngineError {
    match e {
        SealError::WrongPassphrase => {
            EngineError::InvalidInput("That passphrase does not open the approver key.".into())
        }
        SealError::TooShort => EngineError::InvalidInput(format!(
            "Choose a passphrase of at least {} characters.",
            sealed::MIN_PASSPHRASE_CHARS
        )),
        SealError::Damaged(detail) => EngineError::KeyFile(detail),
    }
}

#[cfg(test)]
mod tests;
