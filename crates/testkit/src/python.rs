//! The interop Python every suite drives the third-party SDKs with
//! (`concordia-protocol`, `a2a-sdk`, `mcp`, … from `.ci/requirements.txt`):
//! `COUNTERSIGN_PYTHON`, else the repository's `.venv/` that
//! `bash .ci/setup` builds.

use std::path::PathBuf;

/// The interop Python's path; panics naming the fix when there is none.
pub fn interop_python() -> PathBuf {
    if let Some(p) = std::env::var_os("COUNTERSIGN_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        venv.is_file(),
        "the interop tests need the third-party SDKs of .ci/requirements.txt: run `bash .ci/setup` to build .venv/ (missing {})",
        venv.display()
    );
    venv
}
