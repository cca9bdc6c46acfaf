//! Every command the shell registers is reachable from the webview, and
//! nothing else: Tauri's access control denies a command that `build.rs`
//! does not declare or `capabilities/default.json` does not grant, and the
//! app then fails only at the person's click (as `dismiss_proposal` once
//! did: the button showed, and nothing happened). The three lists and the
//! contract's table must name the same commands.

use std::collections::BTreeSet;
use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The commands in `tauri::generate_handler![...]` of src/lib.rs.
fn registered() -> BTreeSet<String> {
    let lib = read("src/lib.rs");
    let start = lib.find("generate_handler![").expect("the invoke handler") + 18;
    let end = start + lib[start..].find(']').expect("its closing bracket");
    lib[start..end]
        .split(',')
        .map(|c| c.trim().trim_start_matches("commands::").to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The quoted names in build.rs's `COMMANDS`.
fn declared() -> BTreeSet<String> {
    let build = read("build.rs");
    let start = build.find("const COMMANDS").expect("COMMANDS");
    let end = start + build[start..].find("];").expect("its end");
    build[start..end]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The app commands the default capability grants (`allow-x-y` is `x_y`).
fn granted() -> BTreeSet<String> {
    let capability: serde_json::Value =
        serde_json::from_str(&read("capabilities/default.json")).expect("JSON");
    capability["permissions"]
        .as_array()
        .expect("permissions")
        .iter()
        .filter_map(|p| p.as_str())
        .filter(|p| !p.contains(':'))
        .map(|p| p.trim_start_matches("allow-").replace('-', "_"))
        .collect()
}

/// The commands docs/console-contract.md's table names (`| \`name\` |`).
fn documented() -> BTreeSet<String> {
    read("../docs/console-contract.md")
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_registered_command_is_declared_granted_and_documented() {
    let registered = registered();
    assert!(registered.len() > 10, "{registered:?}");
    assert_eq!(
        declared(),
        registered,
        "build.rs COMMANDS vs generate_handler!"
    );
    assert_eq!(
        granted(),
        registered,
        "capabilities/default.json vs generate_handler!"
    );
    let documented = documented();
    let undocumented: Vec<_> = registered.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "not in docs/console-contract.md: {undocumented:?}"
    );
}
