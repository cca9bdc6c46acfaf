//! The public conformance suite, vendored in vendor/concordia: every vector
//! of its manifest judged as expected.

use std::path::{Path, PathBuf};

use concordia::conformance::{judge_value, Manifest, Verdict};
use serde_json::Value;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Reads a manifest and resolves each listed path against the nearest
/// ancestor of the manifest's folder that holds it.
pub fn load_suite(dir: &Path) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest.json");
    let manifest = Manifest::parse(&serde_json::from_str(&text).expect("JSON")).expect("manifest");
    let first = manifest.vectors().next().expect("a vector").clone();
    let base = dir
        .ancestors()
        .find(|a| a.join(&first).is_file())
        .expect("the manifest's paths resolve")
        .to_path_buf();
    manifest
        .vectors()
        .map(|p| {
            let text = std::fs::read_to_string(base.join(p)).expect("vector file");
            (p.clone(), serde_json::from_str(&text).expect("vector JSON"))
        })
        .collect()
}

#[test]
fn every_vendored_vector_is_judged_as_expected() {
    let vectors = load_suite(&repo_root().join("vendor/concordia/conformance/vectors"));
    assert_eq!(vectors.len(), 1546);
    let mut mismatches = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for (path, value) in &vectors {
        let (vector, judgement) = judge_value(value).unwrap_or_else(|e| panic!("{path}: {e}"));
        match judgement.verdict {
            Verdict::Accept => accepted += 1,
            Verdict::Reject => rejected += 1,
        }
        if judgement.verdict != vector.expected {
            mismatches.push(format!(
                "{} ({}): expected {} got {} {:?}",
                vector.id,
                vector.profile,
                vector.expected.as_str(),
                judgement.verdict.as_str(),
                judgement.failures
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // Not a runner that rejects everything (1456 of 1546 would pass then).
    assert_eq!(accepted, 90);
    assert_eq!(rejected, 1456);
}
