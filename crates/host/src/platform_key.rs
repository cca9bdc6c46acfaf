//! The platform signing key: signs `session_open`, the buyer envelope and
//! every buyer event. Created on first start, stored readable by its owner
//! only (mode 0600), in the key-file format of `anp::keys`. A key file that
//! others may read is refused: every process of a deployment loads the same
//! file, and each copy must be as private as the first.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anp::keys::{self, SigningKey};

use crate::error::HostError;

/// Where the key lives when the configuration does not say.
pub fn default_path(db_path: &Path) -> PathBuf {
    let mut name = db_path.as_os_str().to_owned();
    name.push(".platform-key.json");
    PathBuf::from(name)
}

/// Loads the key at `path`, creating it (0600) when absent.
pub fn load_or_create(path: &Path) -> Result<SigningKey, HostError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            check_private(path)?;
            keys::decode_key_file(&text)
                .map_err(|e| HostError::Key(format!("{}: {e}", path.display())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(path),
        Err(source) => Err(HostError::Io {
            what: format!("reading platform key {}", path.display()),
            source,
        }),
    }
}

/// Refuses a key file that its group or others may read or write.
fn check_private(path: &Path) -> Result<(), HostError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path)
            .map_err(|source| HostError::Io {
                what: format!("reading platform key {}", path.display()),
                source,
            })?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(HostError::Key(format!(
                "{} is open to other users (mode {:o}); it must be readable by the host's user only: chmod 600 it",
                path.display(),
                mode & 0o777
            )));
        }
    }
    Ok(())
}

/// Writes a new key to a private temporary file beside `path`, then links
/// it into place: the link either creates `path` whole or finds one there,
/// so two processes starting at once never read a half-written key.
fn create(path: &Path) -> Result<SigningKey, HostError> {
    let key = keys::generate_signing_key();
    let io = |source| HostError::Io {
        what: format!("creating platform key {}", path.display()),
        source,
    };
    let mut staging = path.as_os_str().to_owned();
    staging.push(format!(".{}.tmp", crate::ids::uuid()));
    let staging = PathBuf::from(staging);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let written = options.open(&staging).and_then(|mut file| {
        file.write_all(keys::encode_key_file(&key).as_bytes())?;
        file.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&staging);
        return Err(io(e));
    }
    let linked = std::fs::hard_link(&staging, path);
    let _ = std::fs::remove_file(&staging);
    match linked {
        Ok(()) => Ok(key),
        // Another process created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load_or_create(path),
        Err(e) => Err(io(e)),
    }
}
