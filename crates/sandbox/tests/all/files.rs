//! The sandbox keeps its files in the data directory under the engine's
//! rule: its host's database and its counterparties' keys are owner-only.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use countersign_engine::*;

use crate::launch::launch;

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

#[tokio::test]
async fn a_fresh_start_with_the_sandbox_creates_only_owner_only_files() {
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("new").join("data");
    let mut config = crate::launch::config_in(data.clone());
    config.poll_interval = Duration::from_millis(300);
    let engine = Engine::open(config).unwrap();
    let engine = launch(engine).await;
    // Wait (bounded) until every demo has written its keys and state.
    let mut sessions = Vec::new();
    for _ in 0..100 {
        engine.refresh().await.unwrap();
        sessions = engine.sessions(HistoryFilter::default()).await.unwrap();
        if sessions.len() >= 7 && engine.inbox().await.unwrap().len() >= 7 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(sessions.len() >= 7, "{sessions:?}");
    let exported = engine
        .export_session(
            &sessions[0].host_id,
            &sessions[0].session_id,
            ExportFormat::Csv,
        )
        .await
        .unwrap();
    for file in [
        "console.sqlite3",
        "console.sqlite3-wal",
        "console.sqlite3-shm",
        "approver-key.sealed.json",
        "sandbox/host.sqlite3",
        "sandbox/host.sqlite3-wal",
        "sandbox/vendor-0.key.json",
        "sandbox/anex-demo.json",
        "sandbox/oanp-demo.json",
    ] {
        assert!(data.join(file).is_file(), "{file} is missing");
    }
    assert!(Path::new(&exported.path).starts_with(&data));
    assert_eq!(open_to_others(&data), Vec::<String>::new());
    engine.shutdown().await;
}
