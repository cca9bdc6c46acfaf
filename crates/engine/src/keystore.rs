//! The approver's Ed25519 key: generated once, stored in the data directory
//! readable by its owner only, never sent anywhere (only its public half and
//! signatures leave the machine).

use std::fs;
use std::io::Write;
use std::path::Path;

use ed25519_dalek::SigningKey;

use crate::edge::keyfile;

use crate::error::EngineError;

/// File name of the key inside the data directory.
pub const KEY_FILE: &str = "approver-key.json";

/// Loads the key, or generates and stores a new one when there is none.
pub fn load_or_create(data_dir: &Path) -> Result<SigningKey, EngineError> {
    let path = data_dir.join(KEY_FILE);
    match fs::read_to_string(&path) {
        Ok(text) => {
            check_owner_only(&path)?;
            keyfile::decode(&text).map_err(EngineError::KeyFile)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = keyfile::generate();
            write_owner_only(&path, keyfile::encode(&key).as_bytes())?;
            Ok(key)
        }
        Err(e) => Err(EngineError::Io(e)),
    }
}

#[cfg(unix)]
fn write_owner_only(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(())
}

#[cfg(not(unix))]
fn write_owner_only(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    // On Windows the per-user app data directory is already owner-only.
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(())
}

/// Refuses a key file others can read: a leaked approver key signs approvals.
#[cfg(unix)]
fn check_owner_only(path: &Path) -> Result<(), EngineError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(path)?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(EngineError::KeyFile(format!(
            "{} is readable by other users (mode {:o}); make it owner-only (chmod 600)",
            path.display(),
            mode & 0o777
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner_only(_path: &Path) -> Result<(), EngineError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_created_once_owner_only_and_reloaded() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path()).unwrap();
        let again = load_or_create(dir.path()).unwrap();
        assert_eq!(first.to_bytes(), again.to_bytes());
    }

    #[cfg(unix)]
    #[test]
    fn a_key_others_can_read_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        load_or_create(dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_or_create(dir.path()).unwrap_err();
        assert_eq!(err.code(), "key_file");
        assert!(err.to_string().contains("chmod 600"), "{err}");
    }

    #[test]
    fn a_damaged_key_file_is_an_error_not_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        write_owner_only(&dir.path().join(KEY_FILE), b"{not json").unwrap();
        assert_eq!(load_or_create(dir.path()).unwrap_err().code(), "key_file");
    }
}
