//! The vault on the passphrase path (no secret store in these tests: the
//! real Secret Service is exercised by `tests/keyring.rs` on its own D-Bus).

use super::*;

const PASSPHRASE: &str = "a passphrase for these tests";
const MINUTE: Duration = Duration::from_secs(60);

fn at(minutes: i64) -> OffsetDateTime {
    time::macros::datetime!(2026-12-04 09:00 UTC) + time::Duration::minutes(minutes)
}

fn open(dir: &Path, passphrase: Option<&str>) -> Result<KeyVault, EngineError> {
    KeyVault::open(VaultOptions {
        data_dir: dir,
        choice: KeyStoreChoice::Passphrase,
        passphrase,
        now: at(0),
    })
}

/// Every file under `dir`, as bytes.
fn every_file(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(every_file(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

/// Fails when any file under `dir` holds the key's seed in any form the
/// console writes keys in (raw, base64url, hex).
fn assert_seed_nowhere(dir: &Path, key: &SigningKey) {
    let seed = key.to_bytes();
    let forms: Vec<Vec<u8>> = vec![
        seed.to_vec(),
        jcs::b64url::encode(&seed).into_bytes(),
        seed.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
            .into_bytes(),
    ];
    for (path, bytes) in every_file(dir) {
        for form in &forms {
            assert!(
                !bytes.windows(form.len()).any(|w| w == form.as_slice()),
                "{} holds the private key",
                path.display()
            );
        }
    }
}

#[test]
fn a_new_key_is_sealed_and_its_bytes_are_in_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path(), Some(PASSPHRASE)).unwrap();
    let key = vault.request_key().unwrap();
    assert!(dir.path().join(SEALED_FILE).exists());
    assert_seed_nowhere(dir.path(), &key);
    let status = vault.status(at(0), 15 * MINUTE, "0".into());
    assert_eq!(status.protection, KeyProtection::Passphrase);
    assert!(status.unlocked);
}

#[test]
fn a_sealed_key_stays_locked_until_its_passphrase_is_typed() {
    let dir = tempfile::tempdir().unwrap();
    let public = open(dir.path(), Some(PASSPHRASE)).unwrap().public_key();
    let vault = open(dir.path(), None).unwrap();
    assert_eq!(vault.public_key(), public, "the public key is known locked");
    assert_eq!(vault.request_key().unwrap_err().code(), "locked");
    assert!(matches!(
        vault.decision_key(at(0), 15 * MINUTE, None, &vault.fingerprint()),
        Err(DecideError::Locked)
    ));
    let wrong = vault.unlock(Some("not the passphrase at all"), at(1));
    assert!(wrong.unwrap_err().to_string().contains("does not open"));
    vault.unlock(Some(PASSPHRASE), at(1)).unwrap();
    assert_eq!(
        vault
            .decision_key(at(2), 15 * MINUTE, None, &vault.fingerprint())
            .unwrap()
            .verifying_key(),
        public
    );
}

#[test]
fn the_key_locks_after_the_idle_time_and_not_before() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path(), Some(PASSPHRASE)).unwrap();
    let idle = 10 * MINUTE;
    vault
        .decision_key(at(9), idle, None, &vault.fingerprint())
        .unwrap();
    // Activity at minute 9 moved the idle time: still unlocked at 18.
    vault
        .decision_key(at(18), idle, None, &vault.fingerprint())
        .unwrap();
    let unlocked = vault.status(at(27), idle, "0".into());
    assert!(unlocked.unlocked);
    // It says when it will lock, so that Settings can show it then.
    assert_eq!(unlocked.locks_at, Some(crate::clock::format_time(at(28))));
    let locked = vault.status(at(28), idle, "0".into());
    assert!(!locked.unlocked);
    assert_eq!(locked.locks_at, None);
    assert!(matches!(
        vault.decision_key(at(28), idle, None, &vault.fingerprint()),
        Err(DecideError::Locked)
    ));
    // Requests to hosts go on while decisions are locked.
    assert!(vault.request_key().is_ok());
    vault.unlock(Some(PASSPHRASE), at(30)).unwrap();
    vault
        .decision_key(at(31), idle, None, &vault.fingerprint())
        .unwrap();
}

#[test]
fn above_the_amount_a_decision_asks_for_a_fresh_unlock_once() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path(), None).unwrap_or_else(|_| unreachable!());
    // A new key with no passphrase is unsaved but unlocked; seal it first.
    vault.set_passphrase(PASSPHRASE).unwrap();
    let idle = 60 * MINUTE;
    // Opening the console is not a confirmation: the first decision above
    // the amount asks, and nothing else does.
    assert!(matches!(
        vault.decision_key(at(1), idle, Some("900000 USD"), &vault.fingerprint()),
        Err(DecideError::ConfirmAgain { amount }) if amount == "900000 USD"
    ));
    vault
        .decision_key(at(1), idle, None, &vault.fingerprint())
        .unwrap();
    // A fresh unlock counts for two minutes, once.
    vault.unlock(Some(PASSPHRASE), at(1)).unwrap();
    vault
        .decision_key(at(2), idle, Some("900000 USD"), &vault.fingerprint())
        .unwrap();
    // Used up: the next one above the amount asks again.
    assert!(matches!(
        vault.decision_key(at(2), idle, Some("900000 USD"), &vault.fingerprint()),
        Err(DecideError::ConfirmAgain { amount }) if amount == "900000 USD"
    ));
    // Below the amount nothing is asked.
    vault
        .decision_key(at(2), idle, None, &vault.fingerprint())
        .unwrap();
    vault.unlock(Some(PASSPHRASE), at(5)).unwrap();
    // Stale after the window.
    assert!(matches!(
        vault.decision_key(at(8), idle, Some("900000 USD"), &vault.fingerprint()),
        Err(DecideError::ConfirmAgain { .. })
    ));
    vault.unlock(Some(PASSPHRASE), at(9)).unwrap();
    vault
        .decision_key(at(10), idle, Some("900000 USD"), &vault.fingerprint())
        .unwrap();
}

#[test]
fn a_plain_key_file_moves_under_the_passphrase_and_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let key = keyfile::generate();
    legacy::write_for_test(dir.path(), &key);
    let vault = open(dir.path(), Some(PASSPHRASE)).unwrap();
    assert_eq!(
        vault.public_key(),
        key.verifying_key(),
        "the same key, moved"
    );
    assert!(!dir.path().join(legacy::KEY_FILE).exists());
    assert_seed_nowhere(dir.path(), &key);
    let status = vault.status(at(0), MINUTE, "0".into());
    assert!(status.notice.unwrap().contains("moved"), "reported");
    assert!(
        vault.status(at(0), MINUTE, "0".into()).notice.is_none(),
        "reported once"
    );
}

#[test]
fn a_plain_key_file_stays_until_a_passphrase_seals_it() {
    let dir = tempfile::tempdir().unwrap();
    let key = keyfile::generate();
    legacy::write_for_test(dir.path(), &key);
    let vault = open(dir.path(), None).unwrap();
    assert_eq!(
        vault.status(at(0), MINUTE, "0".into()).protection,
        KeyProtection::Unsaved
    );
    assert!(dir.path().join(legacy::KEY_FILE).exists(), "nothing lost");
    // A passphrase too short is refused and nothing moves.
    assert!(vault.set_passphrase("short").is_err());
    assert!(dir.path().join(legacy::KEY_FILE).exists());
    vault.set_passphrase(PASSPHRASE).unwrap();
    assert!(!dir.path().join(legacy::KEY_FILE).exists());
    assert_seed_nowhere(dir.path(), &key);
    let reopened = open(dir.path(), Some(PASSPHRASE)).unwrap();
    assert_eq!(reopened.request_key().unwrap().to_bytes(), key.to_bytes());
}

#[test]
fn a_failed_move_keeps_the_plain_key() {
    let dir = tempfile::tempdir().unwrap();
    let key = keyfile::generate();
    legacy::write_for_test(dir.path(), &key);
    // The sealed file's temporary place is taken by a directory: writing
    // the sealed key fails halfway through the move.
    std::fs::create_dir(dir.path().join(format!("{SEALED_FILE}.tmp"))).unwrap();
    assert!(open(dir.path(), Some(PASSPHRASE)).is_err());
    assert_eq!(
        legacy::read(dir.path()).unwrap().unwrap().to_bytes(),
        key.to_bytes(),
        "the plain key is still there"
    );
}

#[test]
fn a_move_keeps_both_keys_sealed_until_it_is_finished_and_neither_in_the_clear() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path(), Some(PASSPHRASE)).unwrap();
    let old = vault.request_key().unwrap();
    let old_fp = vault.fingerprint();

    // A wrong passphrase moves nothing.
    let refused = vault.begin_rotation(Some("not the passphrase at all"), at(1));
    assert!(refused.unwrap_err().to_string().contains("does not open"));
    assert_eq!(vault.fingerprint(), old_fp);
    assert!(!dir.path().join(RETIRING_SEALED_FILE).exists());
    // Locked, nothing moves either.
    vault.lock();
    assert_eq!(
        vault
            .begin_rotation(Some(PASSPHRASE), at(1))
            .unwrap_err()
            .code(),
        "locked"
    );
    vault.unlock(Some(PASSPHRASE), at(1)).unwrap();

    vault.begin_rotation(Some(PASSPHRASE), at(2)).unwrap();
    let new = vault.request_key().unwrap();
    assert_ne!(new.to_bytes(), old.to_bytes());
    assert_eq!(vault.retiring_fingerprint(), Some(old_fp.clone()));
    // A host that still knows the old key is signed for with it.
    assert_eq!(
        vault.request_key_for(&old_fp).unwrap().to_bytes(),
        old.to_bytes()
    );
    assert_eq!(
        vault
            .decision_key(at(2), 15 * MINUTE, None, &old_fp)
            .unwrap()
            .to_bytes(),
        old.to_bytes()
    );
    // Begun again: the same new key (a move is carried on, not restarted).
    vault.begin_rotation(None, at(3)).unwrap();
    assert_eq!(vault.request_key().unwrap().to_bytes(), new.to_bytes());
    assert_seed_nowhere(dir.path(), &old);
    assert_seed_nowhere(dir.path(), &new);

    // Reopened (a stop mid-move): both keys come back with one passphrase,
    // also after the passphrase changed mid-move.
    let reopened = open(dir.path(), Some(PASSPHRASE)).unwrap();
    assert_eq!(reopened.request_key().unwrap().to_bytes(), new.to_bytes());
    assert_eq!(reopened.retiring_fingerprint(), Some(old_fp.clone()));
    let changed = "another passphrase for these tests";
    reopened.set_passphrase(changed).unwrap();
    let reopened = open(dir.path(), Some(changed)).unwrap();
    assert_eq!(
        reopened.request_key_for(&old_fp).unwrap().to_bytes(),
        old.to_bytes()
    );

    // Finished: the old key is gone from disk and from memory.
    reopened.finish_rotation().unwrap();
    assert!(!dir.path().join(RETIRING_SEALED_FILE).exists());
    assert_eq!(reopened.retiring_fingerprint(), None);
    let again = open(dir.path(), Some(changed)).unwrap();
    assert_eq!(again.retiring_fingerprint(), None);
    assert_eq!(again.request_key().unwrap().to_bytes(), new.to_bytes());
    assert_seed_nowhere(dir.path(), &old);
    assert_seed_nowhere(dir.path(), &new);
}

#[test]
fn a_stop_before_the_new_key_was_sealed_leaves_the_old_key_alone() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path(), Some(PASSPHRASE)).unwrap();
    let key = vault.request_key().unwrap();
    // What a stop between the two writes leaves: the old key in both files.
    std::fs::copy(
        dir.path().join(SEALED_FILE),
        dir.path().join(RETIRING_SEALED_FILE),
    )
    .unwrap();
    let reopened = open(dir.path(), Some(PASSPHRASE)).unwrap();
    assert_eq!(reopened.request_key().unwrap().to_bytes(), key.to_bytes());
    assert_eq!(
        reopened.retiring_fingerprint(),
        None,
        "no move is under way"
    );
    assert!(!dir.path().join(RETIRING_SEALED_FILE).exists(), "tidied");
}
