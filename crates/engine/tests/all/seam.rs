//! The protocol seam's rules, checked on the engine's own source: a
//! protocol crate is used only inside its `protocol/<name>/` folder (and
//! the approver API's current wire, still `anp`'s, only in `edge/`), and
//! the protocol is matched on in one place, `protocol/mod.rs`; the
//! workers are handed the context, not the `Engine` facade.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn engine_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect()
}

/// Lines of code (comments and doc comments left out) that name `what`.
fn uses(text: &str, what: &str) -> Vec<String> {
    text.lines()
        .map(str::trim_start)
        .filter(|line| !line.starts_with("//"))
        .filter(|line| {
            line.match_indices(what).any(|(at, _)| {
                // `anp::` as a path root, not `crate::protocol::anp::`.
                at == 0 || !matches!(line.as_bytes()[at - 1], b':' | b'_' | b'a'..=b'z')
            })
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn each_protocol_crate_is_used_only_inside_its_own_protocol_folder() {
    let rules: [(&str, &[&str]); 6] = [
        ("anp::", &["protocol/anp/", "edge/"]),
        ("concordia::", &["protocol/concordia/"]),
        ("oanp::", &["protocol/oanp/"]),
        ("anex::", &["protocol/anex/"]),
        ("plain::", &["protocol/plain/"]),
        (
            // The receipt every gate protocol signs; its carrier is shared
            // (protocol/gate_decision.rs).
            "approval_receipt::",
            &[
                "protocol/concordia/",
                "protocol/oanp/",
                "protocol/anex/",
                "protocol/plain/",
                "protocol/gate_decision.rs",
            ],
        ),
    ];
    let mut found = Vec::new();
    for (file, text) in engine_sources() {
        for (krate, allowed) in rules {
            if allowed.iter().any(|prefix| file.starts_with(prefix)) {
                continue;
            }
            for line in uses(&text, krate) {
                found.push(format!("{file}: {line}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a protocol crate used outside its protocol folder:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_host_client_is_used_only_at_the_edge_and_in_the_protocols_io() {
    let mut found = Vec::new();
    for (file, text) in engine_sources() {
        if file.starts_with("edge/") || file.starts_with("protocol/") {
            continue;
        }
        for line in uses(&text, "countersign_client::") {
            found.push(format!("{file}: {line}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_protocol_is_matched_on_in_one_place() {
    let mut found = Vec::new();
    for (file, text) in engine_sources() {
        if file == "protocol/mod.rs" {
            continue;
        }
        for line in uses(&text, "Protocol::")
            .into_iter()
            .filter(|l| !l.contains("Protocol::parse") && !l.contains("Protocol::ALL"))
        {
            found.push(format!("{file}: {line}"));
        }
    }
    assert!(
        found.is_empty(),
        "the protocol named outside protocol/mod.rs (dispatch through Protocol::seam):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_worker_reaches_back_into_the_engine_facade() {
    let found: Vec<String> = engine_sources()
        .into_iter()
        .filter(|(file, _)| file != "engine.rs" && file != "lib.rs")
        .flat_map(|(file, text)| {
            uses(&text, "crate::engine")
                .into_iter()
                .map(move |line| format!("{file}: {line}"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "workers are handed the Context, never the Engine:\n{}",
        found.join("\n")
    );
}
