//! Moving to a new key: the vault makes the new key and keeps it where the
//! current one is kept (the secret store, or sealed with the same
//! passphrase) before any host hears of it, and keeps the old key beside
//! it, retiring, until every host has moved (`crate::rotate`); then the
//! old key is deleted. A crash at any step leaves both keys kept, so no
//! host is left knowing a key the console lost.

use ed25519_dalek::{SigningKey, VerifyingKey};
use time::OffsetDateTime;

use super::{
    account_for, key_error, read_json, seal_error, sealed, write_atomically, KeyVault, Reference,
    Retiring, RetiringReference, RetiringRoom, Room, SealedKey, SecretStore, State, REFERENCE_FILE,
    REFERENCE_FORMAT, RETIRING_SEALED_FILE,
};
use crate::edge::keyfile;
use crate::error::EngineError;

/// A retiring key from the store, as the reference names it (its private
/// half read now when the store answers; otherwise at unlock).
pub(super) fn from_store(
    store: Option<&SecretStore>,
    reference: RetiringReference,
) -> Result<Retiring, EngineError> {
    let public = super::public_of(&reference.public_key)?;
    let key = store
        .and_then(|s| s.get(&reference.account).ok().flatten())
        .map(|seed| SigningKey::from_bytes(&seed))
        .filter(|k| k.verifying_key() == public);
    Ok(Retiring {
        public,
        key,
        kept: RetiringRoom::Store(reference.account),
    })
}

/// A retiring sealed key beside `state`'s, if one is on file (opened with
/// `passphrase` when given). A file that holds the current key itself is
/// what a crash left mid-rotation before the new key was sealed: removed.
pub(super) fn from_sealed_file(
    dir: &std::path::Path,
    state: &State,
    passphrase: Option<&str>,
) -> Result<Option<Retiring>, EngineError> {
    let Some(sealed) = read_json::<SealedKey>(&dir.join(RETIRING_SEALED_FILE))? else {
        return Ok(None);
    };
    let public = super::public_of(&sealed.public_key)?;
    if public == state.public {
        std::fs::remove_file(dir.join(RETIRING_SEALED_FILE))?;
        return Ok(None);
    }
    let key = passphrase
        .map(|p| sealed::open(&sealed, p).map_err(seal_error))
        .transpose()?;
    Ok(Some(Retiring {
        public,
        key,
        kept: RetiringRoom::Sealed(sealed),
    }))
}

/// Unlocks the retiring key too, as the current one was just unlocked.
pub(super) fn unlock_retiring(state: &mut State, passphrase: Option<&str>) {
    let store = match &state.room {
        Room::Store { store, .. } => store.as_ref(),
        Room::Sealed(_) => None,
    };
    let Some(retiring) = state.retiring.as_mut() else {
        return;
    };
    let key = match &retiring.kept {
        RetiringRoom::Store(account) => store
            .and_then(|s| s.get(account).ok().flatten())
            .map(|seed| SigningKey::from_bytes(&seed)),
        RetiringRoom::Sealed(sealed) => passphrase.and_then(|p| sealed::open(sealed, p).ok()),
    };
    if let Some(key) = key.filter(|k| k.verifying_key() == retiring.public) {
        retiring.key = Some(key);
    }
}

/// Seals the retiring key with a new passphrase too (the person changed
/// it mid-move), so one passphrase still opens both.
pub(super) fn reseal_retiring(
    dir: &std::path::Path,
    state: &mut State,
    passphrase: &str,
) -> Result<(), EngineError> {
    let Some(retiring) = state.retiring.as_mut() else {
        return Ok(());
    };
    let (RetiringRoom::Sealed(_), Some(key)) = (&retiring.kept, &retiring.key) else {
        return Ok(());
    };
    let resealed = sealed::seal(key, passphrase).map_err(seal_error)?;
    let text = serde_json::to_vec_pretty(&resealed)
        .map_err(|e| key_error("The sealed key could not be written", e))?;
    write_atomically(dir, RETIRING_SEALED_FILE, &text)?;
    retiring.kept = RetiringRoom::Sealed(resealed);
    Ok(())
}

fn reference_for(
    account: &str,
    public: &VerifyingKey,
    retiring: Option<RetiringReference>,
) -> Reference {
    Reference {
        format: REFERENCE_FORMAT.to_owned(),
        service: super::secret_store::SERVICE.to_owned(),
        account: account.to_owned(),
        public_key: keyfile::public_key_text(public),
        retiring,
    }
}

fn write_reference(dir: &std::path::Path, reference: &Reference) -> Result<(), EngineError> {
    let text = serde_json::to_vec_pretty(reference)
        .map_err(|e| key_error("The key reference could not be written", e))?;
    write_atomically(dir, REFERENCE_FILE, &text)
}

impl KeyVault {
    /// The current key's fingerprint: the key new enrollments and moved
    /// hosts know.
    pub(crate) fn fingerprint(&self) -> String {
        keyfile::fingerprint(&self.state().public)
    }

    /// The retiring key's fingerprint while a move to a new key is not
    /// finished at every host.
    pub(crate) fn retiring_fingerprint(&self) -> Option<String> {
        self.state()
            .retiring
            .as_ref()
            .map(|r| keyfile::fingerprint(&r.public))
    }

    /// The retiring key's public half, while there is one.
    pub(crate) fn retiring_public(&self) -> Option<VerifyingKey> {
        self.state().retiring.as_ref().map(|r| r.public)
    }

    /// The key a host knows (`fingerprint`), for requests to it: the
    /// current one, or the retiring one until that host has moved.
    pub(crate) fn request_key_for(&self, fingerprint: &str) -> Result<SigningKey, EngineError> {
        let state = self.state();
        if let Some(retiring) = state
            .retiring
            .as_ref()
            .filter(|r| keyfile::fingerprint(&r.public) == fingerprint)
        {
            return retiring.key.clone().ok_or_else(|| {
                EngineError::Locked(
                    "The approver key this host still knows (the one being retired) is locked: unlock it (Settings → Approver key) so this console can sign.".into(),
                )
            });
        }
        drop(state);
        self.request_key()
    }

    /// Makes the key to move to, and keeps it where the current key is
    /// kept, with the current key beside it as retiring; a move already
    /// begun is carried on (the same new key). Needs the key unlocked, and
    /// asks again for it: the secret store is read again (which may ask the
    /// person), a sealed key needs its passphrase (which seals the new key).
    pub(crate) fn begin_rotation(
        &self,
        passphrase: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<(), EngineError> {
        let mut state = self.state();
        if state.retiring.is_some() {
            return Ok(());
        }
        let current = match (&state.key, state.unlocked) {
            (Some(key), true) => key.clone(),
            _ => return Err(EngineError::Locked(
                "Unlock the approver key first: moving to a new key is signed by the current one."
                    .into(),
            )),
        };
        let new = keyfile::generate();
        let (retiring, room) = match &state.room {
            Room::Store { account, .. } => {
                let store = SecretStore::connect()
                    .map_err(|e| key_error("The desktop's secret store did not answer", e))?;
                // Asked again: the move is as weighty as a decision.
                let seed = store
                    .get(account)
                    .map_err(|e| key_error("The desktop's secret store did not give the key", e))?;
                if seed.map(|s| SigningKey::from_bytes(&s).verifying_key()) != Some(state.public) {
                    return Err(key_error(
                        "The desktop's secret store no longer holds the approver key",
                        account.clone(),
                    ));
                }
                let new_account = account_for(&new.verifying_key());
                store.put(&new_account, &new.to_bytes()).map_err(|e| {
                    key_error("The desktop's secret store did not take the new key", e)
                })?;
                if store.get(&new_account).ok().flatten().map(|s| *s) != Some(new.to_bytes()) {
                    return Err(key_error(
                        "The desktop's secret store",
                        "did not give the new key back",
                    ));
                }
                let old = RetiringReference {
                    account: account.clone(),
                    public_key: keyfile::public_key_text(&state.public),
                };
                write_reference(
                    &self.data_dir,
                    &reference_for(&new_account, &new.verifying_key(), Some(old.clone())),
                )?;
                let retiring = Retiring {
                    public: state.public,
                    key: Some(current),
                    kept: RetiringRoom::Store(old.account),
                };
                let room = Room::Store {
                    store: Some(store),
                    account: new_account,
                };
                (retiring, room)
            }
            Room::Sealed(Some(sealed_now)) => {
                let passphrase = passphrase.filter(|p| !p.is_empty()).ok_or_else(|| {
                    EngineError::InvalidInput(
                        "Type the key's passphrase: the new key is sealed with it.".into(),
                    )
                })?;
                if sealed::open(sealed_now, passphrase)
                    .map_err(seal_error)?
                    .to_bytes()
                    != current.to_bytes()
                {
                    return Err(key_error("The sealed key file", "is not the key in use"));
                }
                // The old key first, then the new: a crash between leaves
                // the old key in both files, which opening tidies.
                let old_text = serde_json::to_vec_pretty(sealed_now)
                    .map_err(|e| key_error("The sealed key could not be written", e))?;
                write_atomically(&self.data_dir, RETIRING_SEALED_FILE, &old_text)?;
                let new_sealed = Self::seal_to_file(&self.data_dir, &new, passphrase)?;
                let retiring = Retiring {
                    public: state.public,
                    key: Some(current),
                    kept: RetiringRoom::Sealed(sealed_now.clone()),
                };
                (retiring, Room::Sealed(Some(new_sealed)))
            }
            Room::Sealed(None) => {
                return Err(EngineError::InvalidInput(
                    "Choose a passphrase first: a key kept nowhere cannot move to another.".into(),
                ))
            }
        };
        state.room = room;
        state.public = new.verifying_key();
        state.key = Some(new);
        state.retiring = Some(retiring);
        state.last_activity = now;
        Ok(())
    }

    /// Deletes the retiring key once no host knows it any more: from the
    /// secret store, or its sealed file. The reference is written first, so
    /// a crash never leaves one naming a deleted item.
    pub(crate) fn finish_rotation(&self) -> Result<(), EngineError> {
        let mut state = self.state();
        let Some(retiring) = state.retiring.take() else {
            return Ok(());
        };
        match (&retiring.kept, &state.room) {
            (RetiringRoom::Store(old), Room::Store { store, account }) => {
                write_reference(&self.data_dir, &reference_for(account, &state.public, None))?;
                if let Some(store) = store {
                    // Best effort: the reference no longer names it.
                    if let Err(e) = store.delete(old) {
                        tracing::warn!(error = %e, "the retired key's store item stays");
                    }
                }
            }
            (RetiringRoom::Sealed(_), _) => {
                match std::fs::remove_file(self.data_dir.join(RETIRING_SEALED_FILE)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        state.retiring = Some(retiring);
                        return Err(EngineError::Io(e));
                    }
                }
            }
            (RetiringRoom::Store(_), Room::Sealed(_)) => {}
        }
        Ok(())
    }
}
