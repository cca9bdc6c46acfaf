//! `countersign-verify vectors DIR`: every vector a RUNNER_CONTRACT manifest
//! pins, judged, one line each, then `N passed, M failed`.

use std::path::{Path, PathBuf};

use concordia::conformance::{judge_value, Manifest};

/// One vector's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The vector's id (or its path when unreadable).
    pub id: String,
    /// `accept` / `reject`, or `?` when the vector is unreadable.
    pub expected: String,
    /// What this verifier answered (`reject` for a malformed vector).
    pub got: String,
    /// Why, when something failed or was malformed.
    pub why: Vec<String>,
}

impl Line {
    /// True when judged as expected.
    pub fn ok(&self) -> bool {
        self.expected == self.got
    }
}

/// Why a suite could not be run at all.
#[derive(Debug)]
pub struct SuiteError(pub String);

/// Reads `DIR/manifest.json` and judges every vector it lists. Paths are
/// resolved against the nearest ancestor of `DIR` (itself first) that
/// holds them, so a suite's repository-relative paths work.
pub fn run(dir: &Path) -> Result<Vec<Line>, SuiteError> {
    let manifest_path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| SuiteError(format!("{}: {e}", manifest_path.display())))?;
    let value = serde_json::from_str(&text)
        .map_err(|e| SuiteError(format!("{}: not JSON: {e}", manifest_path.display())))?;
    let manifest = Manifest::parse(&value).map_err(|e| SuiteError(e.to_string()))?;
    let first = manifest.vectors().next().cloned().unwrap_or_default();
    let base: PathBuf = dir
        .ancestors()
        .find(|a| a.join(&first).is_file())
        .ok_or_else(|| {
            SuiteError(format!(
                "{first}: not found under {} or any folder above it",
                dir.display()
            ))
        })?
        .to_path_buf();
    Ok(manifest
        .vectors()
        .map(|path| {
            let unreadable = |why: String| Line {
                id: path.clone(),
                expected: "?".into(),
                got: "reject".into(),
                why: vec![why],
            };
            let text = match std::fs::read_to_string(base.join(path)) {
                Ok(t) => t,
                Err(e) => return unreadable(e.to_string()),
            };
            let value = match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => return unreadable(format!("not JSON: {e}")),
            };
            match judge_value(&value) {
                Ok((vector, judgement)) => Line {
                    id: vector.id,
                    expected: vector.expected.as_str().into(),
                    got: judgement.verdict.as_str().into(),
                    why: judgement.failures,
                },
                Err(e) => Line {
                    id: e.id.clone().unwrap_or_else(|| path.clone()),
                    expected: value
                        .get("expected")
                        .and_then(|x| x.as_str())
                        .unwrap_or("?")
                        .into(),
                    got: "reject".into(),
                    why: vec![e.to_string()],
                },
            }
        })
        .collect())
}
