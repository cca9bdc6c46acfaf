//! The data directory is its owner's alone: the database and its WAL, the
//! approver key, the sandbox host's database and the demo parties' keys,
//! the exports. An install from before that rule is fixed on start.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use countersign_engine::*;

/// Every path at and below `dir` (links not followed), with its mode.
fn modes(dir: &Path) -> Vec<(PathBuf, u32)> {
    let meta = std::fs::symlink_metadata(dir).unwrap();
    let mut all = vec![(dir.to_owned(), meta.permissions().mode() & 0o7777)];
    if meta.is_dir() {
        for entry in std::fs::read_dir(dir).unwrap() {
            all.extend(modes(&entry.unwrap().path()));
        }
    }
    all
}

/// The paths that are not owner-only (0700 directories, 0600 files).
fn open_to_others(dir: &Path) -> Vec<String> {
    modes(dir)
        .into_iter()
        .filter(|(path, mode)| {
            let wanted = if path.is_dir() { 0o700 } else { 0o600 };
            *mode != wanted
        })
        .map(|(path, mode)| format!("{} {mode:o}", path.display()))
        .collect()
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn quiet_config(dir: &Path) -> EngineConfig {
    let mut config = crate::common::config_in(dir.to_owned());
    config.sandbox = SandboxMode::Off;
    config.poll_interval = Duration::from_secs(3600);
    config
}

#[tokio::test]
async fn an_install_left_readable_by_others_is_owner_only_after_start() {
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("data");
    // A console that is still running keeps its WAL and shared memory.
    let first = Engine::open(quiet_config(&data)).unwrap();
    assert!(data.join("console.sqlite3-wal").exists());
    assert!(data.join("console.sqlite3-shm").exists());
    // What an older console left: an exports folder, a sandbox with its
    // host database and a demo key, all as a 022 umask makes them.
    for dir in ["exports", "sandbox"] {
        std::fs::create_dir(data.join(dir)).unwrap();
    }
    std::fs::write(data.join("exports/session-s1.json"), b"{}").unwrap();
    std::fs::write(data.join("sandbox/host.sqlite3"), b"").unwrap();
    std::fs::write(data.join("sandbox/vendor-0.key.json"), b"{}").unwrap();
    for (path, _) in modes(&data) {
        chmod(&path, if path.is_dir() { 0o755 } else { 0o644 });
    }
    assert!(open_to_others(&data).len() >= 9, "{:?}", modes(&data));

    let second = Engine::open(quiet_config(&data)).unwrap();
    assert_eq!(open_to_others(&data), Vec::<String>::new());
    // Still the same console: the key was kept, not replaced.
    assert_eq!(second.approver_public_key(), first.approver_public_key());
    second.start().await.unwrap();
    second.shutdown().await;
    first.shutdown().await;
}
