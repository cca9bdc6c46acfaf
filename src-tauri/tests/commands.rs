//! The shell's commands through Tauri's real IPC path (its mock runtime, no
//! display): names and argument objects as the console contract fixes them,
//! the app's real capabilities, and engine errors forwarded as CommandError.

use countersign_engine::{EngineConfig, SandboxMode};
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{App, Manager, WebviewWindow};

fn app(
    dir: &std::path::Path,
) -> (
    App<tauri::test::MockRuntime>,
    WebviewWindow<tauri::test::MockRuntime>,
) {
    let mut config = EngineConfig::new(dir.to_path_buf());
    config.sandbox = SandboxMode::Off;
    config.key_store = countersign_engine::KeyStoreChoice::Passphrase;
    config.key_passphrase = Some("a passphrase only the tests use".to_owned());
    let app = countersign_app::configure(mock_builder(), Ok(config))
        .build(tauri::generate_context!())
        .unwrap();
    // tauri.conf.json declares the main window, so building the app made it.
    let webview = match app.get_webview_window("main") {
        Some(webview) => webview,
        None => tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .unwrap(),
    };
    (app, webview)
}

fn invoke(
    webview: &WebviewWindow<tauri::test::MockRuntime>,
    cmd: &str,
    args: Value,
) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    get_ipc_response(webview, request).map(|body| body.deserialize::<Value>().unwrap())
}

#[test]
fn app_state_reports_the_data_dir_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    let state = invoke(&webview, "app_state", json!({})).unwrap();
    assert_eq!(state["data_dir"], json!(dir.path().display().to_string()));
    assert_eq!(state["unread"], json!(0));
    assert_eq!(state["waiting"], json!(0));
    assert!(state["hosts"].as_array().unwrap().is_empty());
}

#[test]
fn an_empty_console_has_an_empty_inbox_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    assert_eq!(
        invoke(&webview, "inbox", json!({})).unwrap(),
        json!({"items": [], "total": 0, "unread": 0, "waiting": 0, "expired": []})
    );
    assert_eq!(
        invoke(&webview, "inbox", json!({"query": {"limit": 100}})).unwrap(),
        json!({"items": [], "total": 0, "unread": 0, "waiting": 0, "expired": []})
    );
    assert_eq!(invoke(&webview, "hosts", json!({})).unwrap(), json!([]));
    assert_eq!(
        invoke(&webview, "sessions", json!({"filter": {}})).unwrap(),
        json!([])
    );
}

#[test]
fn snake_case_arguments_reach_the_engine_and_its_error_comes_back_readable() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    let error = invoke(
        &webview,
        "proposal_view",
        json!({"host_id": "nope", "session_id": "s", "event_hash": "e"}),
    )
    .unwrap_err();
    assert_eq!(error["code"], json!("not_found"), "{error}");
    assert!(error["message"].as_str().unwrap().ends_with('.'), "{error}");
}

#[test]
fn camel_case_arguments_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    let error = invoke(
        &webview,
        "proposal_view",
        json!({"hostId": "h", "sessionId": "s", "eventHash": "e"}),
    )
    .unwrap_err();
    assert!(error.to_string().contains("host_id"), "{error}");
}

#[test]
fn a_command_the_shell_does_not_have_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    assert!(invoke(
        &webview,
        "plugin:fs|read_file",
        json!({"path": "/etc/passwd"})
    )
    .is_err());
    assert!(invoke(&webview, "plugin:shell|execute", json!({"program": "sh"})).is_err());
    assert!(invoke(&webview, "delete_everything", json!({})).is_err());
}

#[test]
fn an_unusable_data_dir_is_explained_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let (_app, webview) = app(&file);
    let error = invoke(&webview, "app_state", json!({})).unwrap_err();
    assert_eq!(error["code"], json!("data_dir"), "{error}");
    let error = invoke(&webview, "inbox", json!({})).unwrap_err();
    assert_eq!(error["code"], json!("data_dir"), "{error}");
}

#[test]
fn settings_round_trip_through_the_ipc_and_a_wrong_value_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    let view = invoke(&webview, "settings", json!({})).unwrap();
    assert_eq!(view["data_dir"], json!(dir.path().display().to_string()));
    assert_eq!(
        view["approver"]["key_fingerprint"].as_str().map(str::len),
        Some(64)
    );
    let poll = |view: &Value| {
        view["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == json!("poll.interval_seconds"))
            .cloned()
            .unwrap()
    };
    assert_eq!(poll(&view)["kind"], json!("number"));
    assert_eq!(poll(&view)["min"], json!(2));
    let saved = invoke(
        &webview,
        "set_setting",
        json!({"id": "poll.interval_seconds", "value": 45}),
    )
    .unwrap();
    assert_eq!(poll(&saved)["value"], json!(45));
    let error = invoke(
        &webview,
        "set_setting",
        json!({"id": "poll.interval_seconds", "value": 0}),
    )
    .unwrap_err();
    assert_eq!(error["code"], json!("invalid_input"), "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("from 2 to 3600"),
        "{error}"
    );
}

#[test]
fn dispute_commands_refuse_a_session_this_console_does_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    let args = json!({"host_id": "h", "session_id": "s"});
    let error = invoke(&webview, "export_dispute", args).unwrap_err();
    assert_eq!(error["code"], json!("not_found"), "{error}");
    let error = invoke(
        &webview,
        "acknowledge_dispute",
        json!({"host_id": "h", "session_id": "s", "note": "checked"}),
    )
    .unwrap_err();
    assert_eq!(error["code"], json!("not_found"), "{error}");
}

#[test]
fn a_receipt_read_by_the_webview_is_filed_shown_and_exported_through_the_ipc() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    let bytes = include_bytes!("../../vendor/oanp/fixtures/dev-receipt.json");
    // What the webview sends: File.arrayBuffer() as a plain array of bytes.
    let request = json!({"request": {"protocol": "oanp", "file_name": "dev-receipt.json",
                                     "bytes": bytes.to_vec(), "log_file_name": null, "log_bytes": null}});
    let view = invoke(&webview, "import_receipt", request).unwrap();
    assert_eq!(
        view["row"]["proof"],
        json!(false),
        "test receipts are off by default"
    );
    assert_eq!(view["row"]["test_mode"], json!(true));
    assert_eq!(view["detail"]["kind"], json!("oanp_receipt"));
    assert_eq!(view["detail"]["checks"].as_array().map(Vec::len), Some(7));
    let id = view["row"]["receipt_id"].clone();

    let list = invoke(&webview, "receipts", json!({})).unwrap();
    assert_eq!(list["receipts"].as_array().map(Vec::len), Some(1));
    assert_eq!(list["removed"], json!([]));
    let again = invoke(&webview, "receipt_view", json!({"receipt_id": id})).unwrap();
    assert_eq!(again["receipt_sha256"], view["receipt_sha256"]);
    let export = invoke(&webview, "export_receipt", json!({"receipt_id": id})).unwrap();
    let path = export["receipt"]["path"].as_str().unwrap();
    assert_eq!(std::fs::read(path).unwrap(), bytes.to_vec());
    assert_eq!(export["log"], json!(null));

    let refused = invoke(
        &webview,
        "import_receipt",
        json!({"request": {"protocol": "oanp", "file_name": "x", "bytes": b"nope".to_vec()}}),
    )
    .unwrap_err();
    assert_eq!(refused["code"], json!("invalid_input"), "{refused}");
    assert!(refused["message"]
        .as_str()
        .unwrap()
        .contains("Nothing was filed"));

    let removal = invoke(&webview, "remove_receipt", json!({"receipt_id": id})).unwrap();
    assert_eq!(removal["receipt_id"], id);
    assert_eq!(removal["file_name"], json!("dev-receipt.json"));
    let list = invoke(&webview, "receipts", json!({})).unwrap();
    assert_eq!(list["receipts"], json!([]));
    assert_eq!(list["removed"].as_array().map(Vec::len), Some(1));
    let gone = invoke(&webview, "remove_receipt", json!({"receipt_id": id})).unwrap_err();
    assert_eq!(gone["code"], json!("not_found"), "{gone}");
}

#[test]
fn dismissing_a_proposal_reaches_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, webview) = app(dir.path());
    // The engine's own answer (no such proposal), not the access control's refusal.
    let error = invoke(
        &webview,
        "dismiss_proposal",
        json!({"host_id": "h", "session_id": "s", "event_hash": "e"}),
    )
    .unwrap_err();
    assert!(error["code"].is_string(), "{error}");
    assert!(error["message"].is_string(), "{error}");
}
