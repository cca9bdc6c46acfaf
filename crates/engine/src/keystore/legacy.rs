//! The plain key file of earlier builds (`approver-key.json`, the seed in
//! base64url, mode 0600): read once so the key moves into its protection,
//! then removed. Nothing writes it any more.

use std::fs;
use std::path::Path;

use ed25519_dalek::SigningKey;

use crate::edge::keyfile;
use crate::error::EngineError;

/// File name of the plain key of earlier builds, inside the data directory.
pub(crate) const KEY_FILE: &str = "approver-key.json";

/// The plain key, if an earlier build left one.
pub(crate) fn read(data_dir: &Path) -> Result<Option<SigningKey>, EngineError> {
    let path = data_dir.join(KEY_FILE);
    match fs::read_to_string(&path) {
        Ok(text) => keyfile::decode(&text)
            .map(Some)
            .map_err(EngineError::KeyFile),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EngineError::Io(e)),
    }
}

/// Removes the plain key file: called only once its key reads back from
/// where it moved. Its bytes are overwritten first, so a file system that
/// keeps the old blocks keeps zeros.
pub(crate) fn remove(data_dir: &Path) -> Result<(), EngineError> {
    let path = data_dir.join(KEY_FILE);
    if let Ok(meta) = fs::metadata(&path) {
        let zeros = vec![0u8; meta.len() as usize];
        crate::owner_only::write(&path, &zeros)?;
    }
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(EngineError::Io(e)),
    }
}

/// Writes a plain key file as an earlier build did (tests of the move).
#[cfg(test)]
pub(crate) fn write_for_test(data_dir: &Path, key: &SigningKey) {
    crate::owner_only::write(&data_dir.join(KEY_FILE), keyfile::encode(key).as_bytes()).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_key_file_is_an_error_not_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        crate::owner_only::write(&dir.path().join(KEY_FILE), b"{not json").unwrap();
        assert_eq!(read(dir.path()).unwrap_err().code(), "key_file");
    }

    #[test]
    fn a_plain_key_reads_and_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let key = keyfile::generate();
        write_for_test(dir.path(), &key);
        assert_eq!(
            read(dir.path()).unwrap().unwrap().to_bytes(),
            key.to_bytes()
        );
        remove(dir.path()).unwrap();
        assert!(read(dir.path()).unwrap().is_none());
    }
}
