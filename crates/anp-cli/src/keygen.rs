//! `anp keygen`: a fresh Ed25519 identity in a key file only its owner can
//! read, never silently replacing an identity that already exists.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anp::keys;
use serde::Serialize;

/// Why no key file was written.
#[derive(Debug, thiserror::Error)]
pub enum KeygenError {
    /// Neither `--out`, `ANP_HOME` nor `HOME` says where the key goes.
    #[error("no key location: pass --out FILE or set ANP_HOME (or HOME)")]
    NoHome,
    /// A key file is already there; identities are not replaced by accident.
    #[error("{0}: already exists; pass --force to replace it (the old identity is lost)")]
    Exists(String),
    /// `--out` names a directory, not a file.
    #[error("{0}: is a directory; name the key file itself, like {0}/key.json")]
    IsDirectory(String),
    /// The directory or the file could not be created or written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file or directory.
        path: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
}

/// What `anp keygen --json` prints: the public half and where the secret is.
#[derive(Debug, Serialize)]
pub struct KeygenOutput {
    /// Raw Ed25519 public key, base64url.
    pub public_key: String,
    /// SHA-256 fingerprint of the key, the identity people compare.
    pub fingerprint: String,
    /// The key file written.
    pub key_file: String,
}

/// The default key file: `$ANP_HOME/key.json`, ANP_HOME defaulting to
/// `~/.config/anp`.
pub fn default_key_path() -> Result<PathBuf, KeygenError> {
    if let Some(home) = std::env::var_os("ANP_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home).join("key.json"));
    }
    let home = std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .ok_or(KeygenError::NoHome)?;
    Ok(PathBuf::from(home).join(".config/anp/key.json"))
}

/// Generates a key and writes it to `out` with mode 0600.
pub fn keygen(out: &Path, force: bool) -> Result<KeygenOutput, KeygenError> {
    let shown = out.display().to_string();
    if out.is_dir() {
        return Err(KeygenError::IsDirectory(shown));
    }
    if !force && out.exists() {
        return Err(KeygenError::Exists(shown));
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir).map_err(|source| KeygenError::Write {
            path: dir.display().to_string(),
            source,
        })?;
    }
    let key = keys::generate_signing_key();
    let text = keys::encode_key_file(&key);
    write_private(out, text.as_bytes(), force).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            KeygenError::Exists(shown.clone())
        } else {
            KeygenError::Write {
                path: shown.clone(),
                source,
            }
        }
    })?;
    let public = key.verifying_key();
    Ok(KeygenOutput {
        public_key: keys::public_key_b64(&public),
        fingerprint: keys::fingerprint(&public),
        key_file: shown,
    })
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Writes `bytes` so that no moment exists where another user could read
/// them: without `force` the file must not exist (checked by the kernel, not
/// by a racy lookup); with `force` a private temporary file replaces it.
fn write_private(path: &Path, bytes: &[u8], force: bool) -> std::io::Result<()> {
    if !force {
        return write_new(path, bytes);
    }
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let _ = fs::remove_file(&tmp);
    write_new(&tmp, bytes)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}
