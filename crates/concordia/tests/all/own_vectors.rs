//! Countersign's own single-check vectors (crates/concordia/vectors), in the
//! suite's format: each positive one verifies, and each mutation fails
//! exactly the checks its `breaks` member names and no other. A runner that
//! skipped expiry, offer_hash, the approves reference, mandate windows or
//! limits, message signatures or pins would fail here, though it passes the
//! public suite.

use std::collections::BTreeSet;

use concordia::conformance::{judge_value, Verdict};

use super::suite::{load_suite, repo_root};

fn check_name(failure: &str) -> String {
    let name = failure.split(':').next().unwrap_or("").to_owned();
    match name.as_str() {
        "not_expired" => "temporal".into(),
        "offer_hash" => "digest".into(),
        _ => name,
    }
}

#[test]
fn every_single_check_vector_fails_exactly_its_check() {
    let vectors = load_suite(&repo_root().join("crates/concordia/vectors"));
    assert!(vectors.len() >= 30, "{}", vectors.len());
    let mut profiles = BTreeSet::new();
    for (path, value) in &vectors {
        let (vector, judgement) = judge_value(value).unwrap_or_else(|e| panic!("{path}: {e}"));
        profiles.insert(vector.profile.clone());
        assert_eq!(
            judgement.verdict, vector.expected,
            "{}: {:?}",
            vector.id, judgement.failures
        );
        let breaks: BTreeSet<String> = value["breaks"]
            .as_array()
            .expect("breaks")
            .iter()
            .map(|b| b.as_str().expect("string").to_owned())
            .collect();
        let failed: BTreeSet<String> = judgement.failures.iter().map(|f| check_name(f)).collect();
        assert_eq!(failed, breaks, "{}: {:?}", vector.id, judgement.failures);
        if vector.expected == Verdict::Accept {
            assert!(path.starts_with("positive/"), "{path}");
        }
    }
    for p in [
        "receipt-v1",
        "message-chain-v1",
        "mandate-v1",
        "delegation-chain-v1",
        "attestation-v1",
        "attestation-countersign-v1",
        "revocation-v1",
    ] {
        assert!(profiles.contains(p), "no vector for {p}");
    }
}

#[test]
fn the_named_checks_each_have_a_vector() {
    let vectors = load_suite(&repo_root().join("crates/concordia/vectors"));
    let ids: BTreeSet<String> = vectors
        .iter()
        .map(|(_, v)| v["id"].as_str().unwrap_or("").to_owned())
        .collect();
    for id in [
        "cs-receipt-expired-by-one-second",
        "cs-pos-receipt-expires-at-now",
        "cs-receipt-naive-expires-at",
        "cs-receipt-offer-one-cent-off",
        "cs-receipt-without-approves-reference",
        "cs-chain-unpinned-resigned-splice",
        "cs-chain-pinned-resigned-splice",
        "cs-chain-swapped-sender",
        "cs-mandate-after-window-by-one-second",
        "cs-mandate-over-limit-by-one-cent",
    ] {
        assert!(ids.contains(id), "missing {id}");
    }
}
