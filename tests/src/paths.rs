//! Where the binaries under test, the artifacts and the notification log are.

use std::path::PathBuf;

use crate::{E2eError, Result};

/// The workspace root (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}

/// The `countersign` binary `cargo test --workspace` built, in the target
/// directory in use (`COUNTERSIGN_APP` overrides it, e.g. for a release build).
pub fn app_binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("COUNTERSIGN_APP") {
        return Ok(PathBuf::from(path));
    }
    debug_binary("countersign")
}

/// The `countersign-verify` binary in the target directory in use
/// (`COUNTERSIGN_VERIFY` overrides it): `cargo test --workspace` builds it,
/// and tests/e2e.sh builds it when only some packages are selected.
pub fn verify_binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("COUNTERSIGN_VERIFY") {
        return Ok(PathBuf::from(path));
    }
    debug_binary("countersign-verify")
}

/// `name` in the target directory's `debug/`, if it was built.
fn debug_binary(name: &str) -> Result<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        workspace_root().join(target)
    };
    let binary = target.join("debug").join(name);
    if binary.exists() {
        Ok(binary)
    } else {
        Err(E2eError::Missing(format!(
            "{} is missing: build it first (`cargo test --workspace --no-run`, as tests/e2e.sh does)",
            binary.display()
        )))
    }
}

/// Where screenshots and logs go: `COUNTERSIGN_E2E_ARTIFACTS`, else `artifacts/`.
pub fn artifacts_dir() -> PathBuf {
    let dir = std::env::var_os("COUNTERSIGN_E2E_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("artifacts"));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// The dbus-monitor log of `Notify` calls that tests/e2e.sh records.
pub fn notify_log() -> Option<PathBuf> {
    std::env::var_os("COUNTERSIGN_E2E_NOTIFY_LOG").map(PathBuf::from)
}
