//! Declares the app's own commands to Tauri's access control, so that no
//! command is reachable from the webview unless `capabilities/` grants it, and
//! refuses to build without the compiled interface (it is embedded).

/// Every command the shell exposes, exactly as `docs/console-contract.md` names them.
const COMMANDS: &[&str] = &[
    "app_state",
    "inbox",
    "proposal_view",
    "decide",
    "validate_counter",
    "sessions",
    "session_detail",
    "export_session",
    "desk",
    "counterparty",
    "desk_sessions",
    "link_identities",
    "unlink_identities",
    "export_desk_csv",
    "export_audit_pack",
    "connect_host",
    "hosts",
    "refresh",
    "mark_seen",
    "dismiss_proposal",
    "settings",
    "set_setting",
    "export_dispute",
    "acknowledge_dispute",
    "import_receipt",
    "receipts",
    "remove_receipt",
    "receipt_view",
    "export_receipt",
    "unlock_key",
    "lock_key",
    "set_key_passphrase",
    "move_to_new_key",
    "extend_deadline",
    "stand_ins",
    "give_stand_in",
    "revoke_stand_in",
];

fn main() {
    let dist = std::path::Path::new("../ui/dist/index.html");
    println!("cargo:rerun-if-changed=../ui/dist");
    if !dist.exists() {
        panic!(
            "\n\nui/dist/index.html is missing: run `npm ci && npm run build` in ui/ first.\n\
             The interface is compiled into the app; .ci/test and .ci/start do this for you.\n"
        );
    }
    let manifest = tauri_build::AppManifest::new().commands(COMMANDS);
    let attributes = tauri_build::Attributes::new().app_manifest(manifest);
    if let Err(error) = tauri_build::try_build(attributes) {
        panic!("the Tauri build step failed: {error:#}");
    }
}
