//! The TypeScript contract the interface reads is generated from the
//! engine's Rust types: this test fails when `ui/src/lib/backend/contract.ts`
//! is stale (and rewrites it with `COUNTERSIGN_WRITE_CONTRACT=1`), and when a
//! declared type refers to one the contract does not declare.

use std::collections::BTreeSet;
use std::path::Path;

use countersign_engine::views::contract::{declarations, typescript};

fn contract_file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/lib/backend/contract.ts")
}

#[test]
fn the_generated_typescript_is_current() {
    let generated = typescript();
    let path = contract_file();
    if std::env::var_os("COUNTERSIGN_WRITE_CONTRACT").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: the engine's contract types changed. Regenerate it with\n  \
         COUNTERSIGN_WRITE_CONTRACT=1 cargo test -p countersign-engine --test all contract\n\
         and commit it with the change.",
        path.display()
    );
}

#[test]
fn every_type_the_contract_refers_to_is_declared_in_it() {
    let all = declarations();
    let declared: BTreeSet<&str> = all.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(declared.len(), all.len(), "a type is declared twice");
    let missing: Vec<String> = all
        .iter()
        .flat_map(|d| {
            d.uses
                .iter()
                .filter(|u| !declared.contains(u.as_str()))
                .map(move |u| format!("{} uses {u}", d.name))
        })
        .collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn money_is_text_in_the_contract_never_a_number() {
    let ts = typescript();
    assert!(ts.contains("export type Money = string;"), "{ts}");
    for line in ts.lines() {
        let line = line.trim();
        for field in [
            "value",
            "absolute",
            "amount",
            "computed",
            "stated",
            "min_total",
            "max_total",
        ] {
            assert!(
                !line.contains(&format!("{field}: number")),
                "money as a number: {line}"
            );
        }
    }
}
