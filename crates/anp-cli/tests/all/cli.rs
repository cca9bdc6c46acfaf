//! The real `anp` binary against the published example log and test vectors:
//! exit codes, what stdout carries, and what stderr says.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn vendored_anp() -> PathBuf {
    // The published ANP/0.1 data, vendored unchanged (vendor/anp/PROVENANCE.md).
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vendor/anp")
}

fn vectors() -> Value {
    let text = std::fs::read_to_string(vendored_anp().join("test-vectors.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn anp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anp"))
        .args(args)
        .env_remove("ANP_HOME")
        .output()
        .unwrap()
}

fn anp_path(args: &[&str], path: &Path) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.push(path.to_str().unwrap());
    anp(&all)
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

fn write_temp(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn example_log_verifies_with_exit_0() {
    let path = vendored_anp().join("examples/session-log.example.json");
    let out = anp_path(&["verify"], &path);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("verified: 4 events checked"));
    assert!(stderr(&out).is_empty());

    let out = anp_path(&["verify", "--json"], &path);
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["failing"], serde_json::json!([]));
    assert_eq!(report["head"]["seq"], 4);
}

#[test]
fn every_vector_log_gives_the_vectors_verdict_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let cases = vectors()["chain_verification"].as_array().unwrap().clone();
    let mut failing_cases = 0;
    for (i, case) in cases.iter().enumerate() {
        let name = case["name"].as_str().unwrap();
        let path = write_temp(&dir, &format!("case{i}.json"), &case["log"].to_string());
        let expect_ok = case["expect"]["ok"].as_bool().unwrap();
        let expected_failing = case["expect"]["failing"].as_array().unwrap();

        let out = anp_path(&["verify", "--json"], &path);
        assert_eq!(
            out.status.code(),
            Some(if expect_ok { 0 } else { 1 }),
            "{name}"
        );
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let got: Vec<Value> = report["failing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!({"seq": f["seq"], "checks": f["checks"]}))
            .collect();
        assert_eq!(&got, expected_failing, "{name}");

        let out = anp_path(&["verify"], &path);
        assert_eq!(
            out.status.code(),
            Some(if expect_ok { 0 } else { 1 }),
            "{name}"
        );
        let text = stdout(&out);
        for failure in expected_failing {
            let checks: Vec<&str> = failure["checks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            let line = format!("seq {}: {}", failure["seq"], checks.join(", "));
            assert!(
                text.lines().any(|l| l == line),
                "{name}: no line {line:?} in\n{text}"
            );
        }
        let seq_lines = text.lines().filter(|l| l.starts_with("seq ")).count();
        assert_eq!(seq_lines, expected_failing.len(), "{name}:\n{text}");
        if !expect_ok {
            failing_cases += 1;
            assert!(text.contains("FAILED"), "{name}");
        }
    }
    assert_eq!(failing_cases, 3);
}

#[test]
fn unreadable_and_garbage_inputs_exit_2_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let out = anp_path(&["verify"], &missing);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.starts_with("anp: ") && err.contains("missing.json: cannot read"),
        "{err}"
    );

    let garbage = write_temp(
        &dir,
        "garbage.json",
        "{\n  \"protocol\": \"ANP/0.1\",\n  oops\n}",
    );
    let out = anp_path(&["verify"], &garbage);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("garbage.json") && err.contains("line 3 column 3"),
        "{err}"
    );

    let wrong_shape = write_temp(&dir, "shape.json", "{\"protocol\": \"ANP/0.1\"}");
    let out = anp_path(&["verify"], &wrong_shape);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing field"), "{}", stderr(&out));

    let binary = dir.path().join("binary.json");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x01]).unwrap();
    let out = anp_path(&["verify"], &binary);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("anp: "));

    let mut other = vectors()["chain_verification"][0]["log"].clone();
    other["protocol"] = "ANP/9.9".into();
    let other = write_temp(&dir, "other.json", &other.to_string());
    let out = anp_path(&["verify"], &other);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ANP/9.9"));

    let mut bad_key = vectors()["chain_verification"][0]["log"].clone();
    bad_key["keys"]["buyer"]["public_key"] = "not-a-key".into();
    let bad_key = write_temp(&dir, "badkey.json", &bad_key.to_string());
    let out = anp_path(&["verify"], &bad_key);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("keys: public key"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn pin_on_the_log_extends_and_a_wrong_pin_is_a_rewrite() {
    let path = vendored_anp().join("examples/session-log.example.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let hash2 = doc["events"][1]["event_hash"].as_str().unwrap();

    let good_pin = format!("2:{hash2}");
    let out = anp(&[
        "verify",
        path.to_str().unwrap(),
        "--pin",
        &good_pin,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["events_checked"], 2);

    let wrong_pin = format!("2:{}", "ab".repeat(32));
    let out = anp(&["verify", path.to_str().unwrap(), "--pin", &wrong_pin]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("rewrite: the log does not extend the pinned head"),
        "{text}"
    );
    assert!(text.contains(hash2), "{text}");

    let out = anp(&[
        "verify",
        path.to_str().unwrap(),
        "--pin",
        &wrong_pin,
        "--json",
    ]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["rewrite"]["found"], hash2);

    let out = anp(&["verify", path.to_str().unwrap(), "--pin", "two:abc"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("SEQ:HASH"));
}

#[test]
fn unsigned_events_are_reported_as_unproven_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = vectors()["chain_verification"][0]["log"].clone();
    doc["events"][2]["signature"] = Value::Null;
    let path = write_temp(&dir, "unsigned.json", &doc.to_string());
    let out = anp_path(&["verify"], &path);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("seq 3: attribution unproven"),
        "{}",
        stdout(&out)
    );
    let out = anp_path(&["verify", "--json"], &path);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["unproven"], serde_json::json!([3]));
}

#[test]
fn hostile_text_cannot_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = vectors()["chain_verification"][0]["log"].clone();
    doc["events"][2]["signer"] = "\u{1b}[2J\u{1b}[31mOK".into();
    let path = write_temp(&dir, "hostile.json", &doc.to_string());
    let out = anp_path(&["verify"], &path);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(text.contains("seq 3: signature"), "{text}");
    assert!(text.contains("\\u{1b}[2J"), "{text}");
}

#[cfg(unix)]
#[test]
fn keygen_writes_a_private_key_file_and_refuses_to_overwrite() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("nested/dir/key.json");
    let out = anp_path(&["keygen", "--json", "--out"], &key);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let made: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mode = std::fs::metadata(&key).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let signing = anp::keys::decode_key_file(&std::fs::read_to_string(&key).unwrap()).unwrap();
    let public = signing.verifying_key();
    assert_eq!(made["public_key"], anp::keys::public_key_b64(&public));
    assert_eq!(made["fingerprint"], anp::keys::fingerprint(&public));

    let before = std::fs::read(&key).unwrap();
    let out = anp_path(&["keygen", "--out"], &key);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("already exists; pass --force"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read(&key).unwrap(), before);

    let out = anp_path(&["keygen", "--force", "--out"], &key);
    assert_eq!(out.status.code(), Some(0));
    assert_ne!(std::fs::read(&key).unwrap(), before);
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let text = stdout(&out);
    assert!(
        text.contains("fingerprint  ") && text.contains("public key   "),
        "{text}"
    );

    let out = anp_path(&["keygen", "--force", "--out"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
}

#[test]
fn keygen_defaults_to_anp_home() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_anp"))
        .args(["keygen", "--json"])
        .env("ANP_HOME", dir.path().join("home"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let key = dir.path().join("home/key.json");
    assert!(anp::keys::decode_key_file(&std::fs::read_to_string(key).unwrap()).is_ok());
}

#[test]
fn canonical_prints_the_vectors_bytes_and_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let cases = vectors()["canonical_json"].as_array().unwrap().clone();
    assert!(!cases.is_empty());
    for (i, case) in cases.iter().enumerate() {
        // Pretty-printed input, so the tool must really re-serialize.
        let text = serde_json::to_string_pretty(&case["input"]).unwrap();
        let path = write_temp(&dir, &format!("c{i}.json"), &text);
        let out = anp_path(&["canonical"], &path);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(stdout(&out), case["canonical"].as_str().unwrap());
        let out = anp_path(&["canonical", "--hash"], &path);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            stdout(&out).trim_end(),
            case["sha256_hex"].as_str().unwrap()
        );
    }
    let bad = write_temp(&dir, "bad.json", "[1, 2,]");
    let out = anp_path(&["canonical"], &bad);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.json: not JSON") && stderr(&out).contains("line 1"));
}

fn offer_json(lines: &[(&str, u64, f64)], currency: &str, conditions: &[&str]) -> String {
    let line_items: Vec<Value> = lines
        .iter()
        .map(|(sku, quantity, price)| {
            serde_json::json!({"sku": sku, "description": format!("{sku} seats"),
                "quantity": quantity, "unit": "seat/year", "unit_price": price,
                "currency": currency})
        })
        .collect();
    serde_json::json!({"currency": currency, "term_months": 36,
        "expires_at": "2026-08-01T00:00:00Z", "line_items": line_items,
        "conditions": conditions})
    .to_string()
}

#[test]
fn diff_shows_changed_added_removed_and_moved_rows_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_temp(
        &dir,
        "old.json",
        &offer_json(
            &[
                ("CRM-ENT", 500, 1140.0),
                ("SUP", 1, 50000.0),
                ("LEGACY", 10, 20.0),
            ],
            "USD",
            &["Net 60 payment"],
        ),
    );
    let new = write_temp(
        &dir,
        "new.json",
        &offer_json(
            &[
                ("ADD", 5, 99.5),
                ("SUP", 1, 50000.0),
                ("CRM-ENT", 600, 1100.0),
            ],
            "USD",
            &["Net 30 payment"],
        ),
    );
    let out = anp(&["diff", old.to_str().unwrap(), new.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    for expected in [
        "  + ADD (added)",
        "  - LEGACY (removed)",
        "  ~ CRM-ENT (changed, moved from line 1 to 3)",
        "      quantity     500 → 600  +100 (+20.00%)",
        "      unit_price   1140 → 1100  -40 (-3.51%)",
        "  - \"Net 60 payment\"",
        "  + \"Net 30 payment\"",
        "total      620200 USD → 710497.5 USD  +90297.5 (+14.56%)",
    ] {
        assert!(
            text.lines().any(|l| l == expected),
            "no line {expected:?} in\n{text}"
        );
    }

    let out = anp(&[
        "diff",
        "--json",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let diff: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(diff["total"]["absolute"], "90297.5");
    assert_eq!(diff["total"]["percent"], "14.56");
    assert_eq!(
        diff["conditions"]["added"],
        serde_json::json!(["Net 30 payment"])
    );
    let statuses: Vec<(&str, &str)> = diff["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert!(statuses.contains(&("ADD", "added")));
    assert!(statuses.contains(&("LEGACY", "removed")));
    assert!(statuses.contains(&("CRM-ENT", "changed")));
    assert!(statuses.contains(&("SUP", "unchanged")));
}

#[test]
fn diff_of_identical_offers_exits_0_and_a_currency_change_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let usd = write_temp(&dir, "usd.json", &offer_json(&[("A", 1, 10.0)], "USD", &[]));
    let eur = write_temp(&dir, "eur.json", &offer_json(&[("A", 1, 10.0)], "EUR", &[]));
    let out = anp(&["diff", usd.to_str().unwrap(), usd.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "offers are identical\n");

    let out = anp(&["diff", usd.to_str().unwrap(), eur.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("currency   USD → EUR"), "{text}");
    assert!(text.contains("(currency changed: no comparison)"), "{text}");
}

#[test]
fn diff_of_an_invalid_offer_exits_2_naming_every_violation_path() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_temp(
        &dir,
        "good.json",
        &offer_json(&[("A", 1, 10.0)], "USD", &[]),
    );
    let mut bad: Value = serde_json::from_str(&offer_json(&[("A", 1, 10.0)], "USD", &[])).unwrap();
    bad["line_items"][0]["unit_price"] = serde_json::json!(2_000_000_000u64);
    bad["surprise"] = serde_json::json!(true);
    let bad = write_temp(&dir, "bad.json", &bad.to_string());
    let out = anp(&["diff", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.starts_with("anp: ") && err.contains("bad.json: not a valid offer"),
        "{err}"
    );
    assert!(
        err.contains("line_items[0].unit_price: must be at most 1000000000"),
        "{err}"
    );
    assert!(err.contains("surprise"), "{err}");

    let not_json = write_temp(&dir, "nj.json", "offer?");
    let out = anp(&["diff", not_json.to_str().unwrap(), good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nj.json: not JSON"));
}
