//! Agreement with the publisher's verifier: every case of `variants.rs` is
//! verified here and by `valyzen.receipt.verify_receipt` (valyzen 0.1.0, in
//! `.venv/`, installed by `bash .ci/setup`), and compared check by check
//! (`ok` and `skipped` per id), with the status, the verdict, the kid, the
//! signer and the signed terms; for cases without extra pins, the SDK's own
//! CLI exit code too. A case with a documented difference must differ
//! exactly as the crate README says. The canonical-JSON edges are compared
//! with `rfc8785` itself.

use std::path::PathBuf;
use std::process::Command;

use oanp::report::{exit_code, EXIT_UNREADABLE};
use oanp::{CheckId, Mode, Signer, Verification};
use serde_json::{json, Value};

use crate::support::root;
use crate::variants::{self, Case, Keys};

/// The interpreter of `.venv/` (or `COUNTERSIGN_PYTHON`), or a sentence
/// saying how to get it.
fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("COUNTERSIGN_PYTHON") {
        return PathBuf::from(path);
    }
    let venv = root().join(".venv/bin/python");
    assert!(
        venv.exists(),
        "the publisher's verifier is not installed: {} is missing. Run `bash .ci/setup` (it installs valyzen 0.1.0 from .ci/requirements.txt into .venv/), then run this test again.",
        venv.display()
    );
    venv
}

/// Inputs whose canonical bytes are compared with `rfc8785`'s.
const CANONICAL: &[&str] = &[
    "-0",
    "-0.0",
    "1.0",
    "1e21",
    "1e-7",
    "0.000001",
    "5e-324",
    "1.7976931348623157e308",
    "123456789012345680000.0",
    "9007199254740993.0",
    "1e23",
    "[1E2, 1e+2, 0.1, -1.5e-10, 2.5e-5, 333333333.33333333]",
    "9007199254740991",
    "-9007199254740991",
    "9007199254740992",
    "-9007199254740992",
    "18446744073709551615",
    r#""\u007f\u2028\u0001\u001f\b\f\n\r\t\"\\/\u00e9""#,
    r#"{"\ufb01":1,"\ud83d\ude00":2,"":0,"b":[],"a":{},"A":null}"#,
    r#"{"a":1,"a":2}"#,
    r#"{"price":{"currency":"USD","amount_minor":41900},"inclusions":[{"value":"included","kind":"warranty"}]}"#,
];

fn run_publisher(cases: &[Case]) -> Value {
    let input = json!({
        "cases": cases.iter().map(|c| json!({
            "name": c.name,
            "receipt": c.receipt,
            "log": c.log,
            "allow_test": c.allow_test,
            "pins": c.pins.iter().map(|p| json!({"kid": p.kid, "x": p.x, "label": p.label, "mode": p.mode.as_str()})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "canonical": CANONICAL,
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cases.json");
    std::fs::write(&path, serde_json::to_vec(&input).unwrap()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/publisher/verify.py");
    let python = python();
    let output = Command::new(&python)
        .arg(&script)
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{} cannot run ({e}): run `bash .ci/setup`",
                python.display()
            )
        });
    assert!(
        output.status.success(),
        "the publisher's verifier failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn ours(case: &Case) -> Option<Verification> {
    case.verify().ok()
}

/// Where our answer and the publisher's differ, one line each.
fn compare(ours: &Verification, theirs: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn differ(out: &mut Vec<String>, what: &str, a: String, b: String) {
        if a != b {
            out.push(format!("{what}: ours {a}, theirs {b}"));
        }
    }
    differ(
        &mut out,
        "ok",
        ours.proof.to_string(),
        theirs["ok"].to_string(),
    );
    differ(
        &mut out,
        "status",
        json!(ours.status.as_str()).to_string(),
        theirs["status"].to_string(),
    );
    differ(
        &mut out,
        "kid",
        json!(ours.kid).to_string(),
        theirs["kid"].to_string(),
    );
    let signer = match &ours.signer {
        Signer::Pinned { label, mode, .. } => {
            json!({"kind": "arbiter", "label": label, "mode": mode.as_str()})
        }
        Signer::Unknown => json!({"kind": "unknown", "label": null, "mode": null}),
    };
    differ(
        &mut out,
        "signer",
        signer.to_string(),
        theirs["signer"].to_string(),
    );
    differ(
        &mut out,
        "signed terms",
        json!(ours.signed_terms).to_string(),
        theirs["signed_terms"].to_string(),
    );

    let theirs_checks = theirs["checks"].as_array().unwrap();
    let mut position = 0;
    for check in theirs_checks {
        let id = check["id"].as_str().unwrap();
        let Some(index) = CheckId::ALL.iter().position(|c| c.as_str() == id) else {
            out.push(format!("the publisher reports a check {id} we do not know"));
            continue;
        };
        if index < position {
            out.push(format!("the publisher reports {id} out of order"));
        }
        position = index + 1;
        let mine = &ours.checks[index];
        differ(
            &mut out,
            &format!("{id} ok"),
            mine.ok.to_string(),
            check["ok"].to_string(),
        );
        differ(
            &mut out,
            &format!("{id} skipped"),
            mine.skipped.to_string(),
            check["skipped"].to_string(),
        );
    }
    // A check the publisher leaves out: ours is skipped, except `mode` for a
    // pinned live key, which holds.
    for id in CheckId::ALL {
        if theirs_checks.iter().any(|c| c["id"] == id.as_str()) {
            continue;
        }
        let mine = ours.check(id).unwrap();
        let live = matches!(
            ours.signer,
            Signer::Pinned {
                mode: Mode::Live,
                ..
            }
        );
        let expected = if id == CheckId::Mode && live {
            (true, false)
        } else {
            (false, true)
        };
        differ(
            &mut out,
            &format!("{} (left out by the publisher) ok/skipped", id.as_str()),
            format!("{:?}", (mine.ok, mine.skipped)),
            format!("{expected:?}"),
        );
    }
    out
}

#[test]
fn our_verdict_equals_the_publishers_check_by_check() {
    let keys = Keys::generate();
    let cases = variants::all(&keys);
    let report = run_publisher(&cases);
    let theirs = report["cases"].as_array().unwrap();
    assert_eq!(theirs.len(), cases.len());

    let mut disagreements = Vec::new();
    let (mut agreed, mut documented, mut cli_compared) = (0, 0, 0);
    for (case, theirs) in cases.iter().zip(theirs) {
        assert_eq!(theirs["name"], case.name.as_str());
        let mine = ours(case);
        match (&case.difference, &mine) {
            (None, Some(mine)) => {
                let found = compare(mine, theirs);
                if let Some(cli) = theirs["cli_exit"].as_i64() {
                    cli_compared += 1;
                    if cli != i64::from(exit_code(mine)) {
                        disagreements.push(format!(
                            "{}: exit ours {}, the SDK's CLI {cli}",
                            case.name,
                            exit_code(mine)
                        ));
                    }
                }
                if found.is_empty() {
                    agreed += 1;
                } else {
                    disagreements.push(format!("{}: {}", case.name, found.join("; ")));
                }
            }
            (None, None) => disagreements.push(format!(
                "{}: we cannot read it; the publisher answers {}",
                case.name, theirs["status"]
            )),
            (Some(d), _) => {
                // The publisher answers exactly what the README says, and we
                // answer what the case expects (asserted in checks.rs).
                let expected = (d.status, d.proof);
                let found = (
                    theirs["status"].as_str().unwrap(),
                    theirs["ok"].as_bool().unwrap(),
                );
                if found != expected {
                    disagreements.push(format!(
                        "{} ({}): the publisher answers {found:?}, the README says {expected:?}",
                        case.name, d.id
                    ));
                }
                let ours_answer = mine.as_ref().map(|v| (v.status.as_str(), v.proof));
                if ours_answer == Some(found) {
                    disagreements.push(format!(
                        "{} ({}): documented as a difference, but both answer {found:?}",
                        case.name, d.id
                    ));
                }
                if mine.is_none() && theirs["cli_exit"].as_i64() == Some(i64::from(EXIT_UNREADABLE))
                {
                    disagreements.push(format!(
                        "{}: the SDK's CLI cannot read it either",
                        case.name
                    ));
                }
                documented += 1;
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements with valyzen {}:\n{}",
        disagreements.len(),
        report["versions"]["valyzen"],
        disagreements.join("\n")
    );
    assert!(agreed >= 30 + 6, "{agreed} cases agreed");
    assert!(cli_compared >= 30, "{cli_compared} CLI exit codes compared");
    assert!(documented >= 5, "{documented} documented differences");
}

#[test]
fn our_canonical_bytes_equal_rfc8785s() {
    let report = run_publisher(&[]);
    for result in report["canonical"].as_array().unwrap() {
        let input = result["input"].as_str().unwrap();
        let value = oanp::canonical::read_json(input.as_bytes()).unwrap();
        let mine = oanp::canonical::canonical_bytes(&value)
            .ok()
            .map(|b| String::from_utf8(b).unwrap());
        assert_eq!(json!(mine), result["output"], "{input}");
    }
}

/// The console refuses to file what is not a receipt (`receipt::recognize`,
/// by the members a receipt has): it must never refuse one the publisher's
/// own verifier reads, whatever that verifier then concludes about it.
#[test]
fn every_receipt_the_publisher_reads_is_recognized_as_one() {
    let keys = Keys::generate();
    let cases = variants::all(&keys);
    let report = run_publisher(&cases);
    let theirs = report["cases"].as_array().unwrap();
    let mut refused = Vec::new();
    let mut read = 0;
    for (case, theirs) in cases.iter().zip(theirs) {
        if theirs["status"] == "unreadable" {
            continue;
        }
        let Ok(Value::Object(receipt)) = serde_json::from_str::<Value>(&case.receipt) else {
            continue;
        };
        read += 1;
        if let Err(e) = oanp::receipt::recognize(&receipt) {
            refused.push(format!(
                "{} (the publisher: {}): {e}",
                case.name, theirs["status"]
            ));
        }
    }
    assert!(read > 10, "only {read} cases were read by the publisher");
    assert!(
        refused.is_empty(),
        "refused as no receipt:\n{}",
        refused.join("\n")
    );
}
