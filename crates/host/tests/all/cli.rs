//! The admin CLI, run as the real binary against a database file.

use std::process::{Command, Output};

use serde_json::Value;

use crate::common;

/// `--db` for a target: the SQLite path or the PostgreSQL URL.
pub fn db_arg(target: &countersign_host::Target) -> String {
    match target {
        countersign_host::Target::Sqlite(path) => path.display().to_string(),
        countersign_host::Target::Postgres(url) => url.clone(),
    }
}

fn run(db: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn json_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.trim().lines().count(), 1, "one JSON object: {text}");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn admin_commands_print_one_json_object_and_exit_codes_mean_something() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_arg(&common::fresh_target(dir.path()).await);
    let db = db.as_str();

    let org = json_of(&run(
        db,
        &["org", "create", "--name", "Tailspin Toys", "--json"],
    ));
    let handle = org["org_handle"].as_str().unwrap().to_owned();
    assert!(handle.starts_with("anp_org_"));
    assert_eq!(handle.len(), "anp_org_".len() + 32, "128 random bits, hex");

    let list = json_of(&run(db, &["org", "list", "--json"]));
    let handles: Vec<&str> = list["orgs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["org_handle"].as_str().unwrap())
        .collect();
    assert_eq!(handles, ["sandbox", handle.as_str()]);

    let code = json_of(&run(
        db,
        &[
            "approver",
            "enroll",
            "--org",
            &handle,
            "--name",
            "Ada",
            "--email",
            "ada@tailspin.example",
            "--json",
        ],
    ));
    assert!(code["code"].as_str().unwrap().starts_with("anp_enroll_"));

    let policy = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/policy.json");
    let loaded = json_of(&run(
        db,
        &["policy", "load", "--org", &handle, policy, "--json"],
    ));
    assert_eq!(loaded["loaded"], true);

    let bad_policy = dir.path().join("bad.json");
    std::fs::write(&bad_policy, r#"{"max_rounds": 1, "concession_per_round": "2", "approval": {"above_total": "1", "approvers_required": 1}, "may_discuss": ["x"]}"#).unwrap();
    let out = run(
        db,
        &[
            "policy",
            "load",
            "--org",
            &handle,
            bad_policy.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("concession_per_round must be between 0 and 1"));

    let out = run(db, &["agent", "verify", "no-such-agent"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no agent with id \"no-such-agent\""));

    let out = run(db, &["org", "disable", "sandbox"]);
    assert_eq!(out.status.code(), Some(1));
    let disabled = json_of(&run(db, &["org", "disable", &handle, "--json"]));
    assert_eq!(disabled["disabled"], true);

    let out = run(db, &["org", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .args(["org", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--db is required");
}

#[tokio::test]
async fn admin_commands_work_on_the_database_of_a_running_server() {
    let t = common::start(common::roomy_limits()).await;
    let db = db_arg(t.host().target());
    let db = db.as_str();
    let vendor = t.register("Contoso").await;
    let org = json_of(&run(db, &["org", "create", "--name", "Tailspin", "--json"]))["org_handle"]
        .as_str()
        .unwrap()
        .to_owned();
    let agents = json_of(&run(db, &["agent", "list", "--json"]));
    assert_eq!(agents["agents"][0]["agent_id"], vendor.id.as_str());
    assert_eq!(agents["agents"][0]["status"], "sandbox");
    json_of(&run(db, &["agent", "verify", &vendor.id, "--json"]));
    let body = serde_json::json!({ "target": { "org_handle": org }, "envelope": common::vendor_envelope() });
    let (s, b) = t
        .signed(&vendor, "POST", "/api/agent/v1/sessions", &body)
        .await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    json_of(&run(db, &["agent", "revoke", &vendor.id, "--json"]));
    let (s, _) = t
        .signed(&vendor, "POST", "/api/agent/v1/sessions", &body)
        .await;
    assert_eq!(s, 401, "revoked by the CLI while serving");
}

#[tokio::test]
async fn agent_enroll_issues_a_gate_code_and_agent_list_shows_gate_agents() {
    let t = common::start(common::roomy_limits()).await;
    let db = db_arg(t.host().target());
    let db = db.as_str();
    let code = json_of(&run(
        db,
        &[
            "agent",
            "enroll",
            "--org",
            "sandbox",
            "--name",
            "Procurement Buyer",
            "--protocol",
            "concordia",
            "--json",
        ],
    ));
    assert_eq!(code["org"], "sandbox");
    assert_eq!(code["protocol"], "concordia");
    let key = anp::keys::generate_signing_key();
    let (s, b) = t
        .gate_enroll(code["code"].as_str().unwrap(), &key, None)
        .await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    let agent_id = serde_json::from_slice::<Value>(&b).unwrap()["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = json_of(&run(db, &["agent", "list", "--json"]));
    assert_eq!(listed["gate_agents"][0]["agent_id"], agent_id.as_str());
    assert_eq!(listed["gate_agents"][0]["protocol"], "concordia");
    assert_eq!(listed["gate_agents"][0]["name"], "Procurement Buyer");
    let text = String::from_utf8(run(db, &["agent", "list"]).stdout).unwrap();
    assert!(
        text.contains(&format!(
            "{agent_id}\tactive\tconcordia gate agent of sandbox"
        )),
        "{text}"
    );
    // A protocol the gate does not speak, or an unknown org: refused, exit 1.
    for args in [
        [
            "agent",
            "enroll",
            "--org",
            "sandbox",
            "--name",
            "X",
            "--protocol",
            "a2a",
        ],
        [
            "agent",
            "enroll",
            "--org",
            "anp_org_00",
            "--name",
            "X",
            "--protocol",
            "concordia",
        ],
    ] {
        let out = run(db, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
    }
    let out = run(db, &["agent", "verify", &agent_id]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs no verification"));
    json_of(&run(db, &["agent", "revoke", &agent_id, "--json"]));
    let party = common::Party {
        id: agent_id,
        key,
        email: String::new(),
    };
    let (s, _) = t
        .signed(&party, "GET", "/api/gate/v1/sessions/ses_x", &Value::Null)
        .await;
    assert_eq!(s, 401, "revoked by the CLI while serving");
    let listed = json_of(&run(db, &["agent", "list", "--json"]));
    assert!(listed["gate_agents"][0]["revoked_at"].is_string());
}

#[tokio::test]
async fn the_old_name_anp_host_runs_the_same_program_and_says_it_is_an_alias() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_arg(&common::fresh_target(dir.path()).await);
    let out = Command::new(env!("CARGO_BIN_EXE_anp-host"))
        .arg("--db")
        .arg(&db)
        .args(["org", "create", "--name", "Tailspin Toys", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("now `countersign-host`"),
        "stderr: {stderr}"
    );
    let org = json_of(&out);
    let handle = org["org_handle"].as_str().unwrap();
    // The same database answers through the new name.
    let listed = json_of(&run(&db, &["org", "list", "--json"]));
    assert!(listed.to_string().contains(handle), "{listed}");
}

/// Starts `serve --discovery MODE` on a free port; the first stdout line names it.
fn serve_with_discovery(
    db: &str,
    key: &std::path::Path,
    mode: &str,
) -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .arg("--db")
        .arg(db)
        .args(["serve", "--listen", "127.0.0.1:0", "--discovery", mode])
        .arg("--platform-key")
        .arg(key)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    (child, base)
}

#[tokio::test]
async fn serve_discovery_flag_chooses_what_the_well_known_path_serves() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_arg(&common::fresh_target(dir.path()).await);
    let key = dir.path().join("platform-key.json");
    let http = reqwest::Client::new();
    for (mode, status, drafts) in [
        ("none", 404, false),
        ("rfc003", 200, false),
        ("full", 200, true),
    ] {
        let (mut child, base) = serve_with_discovery(&db, &key, mode);
        let resp = http
            .get(format!("{base}/.well-known/anp.json"))
            .send()
            .await
            .unwrap();
        let got = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(got, status, "--discovery {mode}: {body}");
        assert_eq!(
            body.get("drafts").is_some(),
            drafts,
            "--discovery {mode}: {body}"
        );
    }
    let out = run(&db, &["serve", "--discovery", "everything"]);
    assert_eq!(out.status.code(), Some(2), "an unknown mode is bad usage");
    assert!(String::from_utf8_lossy(&out.stderr).contains("none"));
}

#[test]
fn serve_refuses_a_public_url_that_is_not_an_origin_as_bad_usage() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("host.db").display().to_string();
    for bad in [
        "https://negotiate.example.com/a2a",
        "ftp://negotiate.example.com",
    ] {
        let out = run(
            &db,
            &["serve", "--listen", "127.0.0.1:0", "--public-url", bad],
        );
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("--public-url") && said.contains(bad),
            "{said}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .args(["--db", &db, "serve", "--listen", "127.0.0.1:0"])
        .env("COUNTERSIGN_HOST_PUBLIC_URL", "negotiate.example.com")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("COUNTERSIGN_HOST_PUBLIC_URL"));
    assert!(!dir.path().join("host.db").exists(), "nothing was created");
}

#[tokio::test]
async fn countersign_host_db_names_the_database_when_db_is_not_given() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_arg(&common::fresh_target(dir.path()).await);
    let out = Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .env("COUNTERSIGN_HOST_DB", &db)
        .args(["org", "create", "--name", "Tailspin Toys", "--json"])
        .output()
        .unwrap();
    let handle = json_of(&out)["org_handle"].as_str().unwrap().to_owned();
    let listed = json_of(&run(&db, &["org", "list", "--json"]));
    assert!(listed.to_string().contains(&handle), "{listed}");
}

#[test]
fn a_postgres_url_that_cannot_be_reached_is_named_without_its_password() {
    let out = run(
        "postgres://countersign:secret@127.0.0.1:1/nowhere",
        &["org", "list"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot connect to postgres://countersign:***@127.0.0.1:1/nowhere"),
        "{stderr}"
    );
    assert!(!stderr.contains("secret"), "{stderr}");
}

/// Registers `key` with the names given, as anyone holding its proof can
/// (ANP/0.1's proof signs only the key); answers the status and agent id.
async fn register_as(
    t: &common::TestHost,
    public_key: &str,
    proof: &str,
    vendor_name: &str,
    agent_name: &str,
    email: &str,
) -> (u16, String) {
    let body = serde_json::json!({
        "agent_name": agent_name, "vendor_name": vendor_name, "contact_email": email,
        "public_key": public_key, "proof": proof,
    });
    let (status, bytes) = t
        .raw(
            "POST",
            "/api/agent/v1/register",
            &[("content-type", "application/json".into())],
            serde_json::to_vec(&body).unwrap(),
        )
        .await;
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    (
        status,
        answer["agent_id"].as_str().unwrap_or_default().to_owned(),
    )
}

/// The vendor as the approver's summary names it: (name, organization,
/// verified).
async fn named_in_summary(t: &common::TestHost, approver: &common::Party) -> (Value, Value, Value) {
    let summary = t.summary(approver).await;
    let who = &summary["sessions"][0]["counterparty"];
    (
        who["name"].clone(),
        who["organization"].clone(),
        who["verified"].clone(),
    )
}

/// An attacker who saw a vendor's registration proof registers the key
/// first under names of its own; the real vendor's later registration
/// replaces them, approvers see the names marked unverified, the history
/// keeps both, and `agent verify` marks them verified, after which a
/// replay of the attacker's names is recorded but changes nothing shown.
#[tokio::test]
async fn a_replayed_registration_proof_never_names_a_vendor_as_verified() {
    let t = common::start(common::roomy_limits()).await;
    let db = db_arg(t.host().target());
    let db = db.as_str();
    let key = anp::keys::generate_signing_key();
    let public_key = anp::keys::public_key_b64(&key.verifying_key());
    let proof = anp::keys::sign_b64(
        &key,
        anp::signed::registration_proof_string(&public_key).as_bytes(),
    );
    let (status, first) = register_as(
        &t,
        &public_key,
        &proof,
        "Evil Corp",
        "Evil Agent",
        "attacker@evil.example",
    )
    .await;
    assert_eq!(status, 201);
    let (status, id) = register_as(
        &t,
        &public_key,
        &proof,
        "Contoso",
        "Contoso Seller",
        "sales@contoso.example",
    )
    .await;
    assert_eq!(status, 200, "the key's agent already exists");
    assert_eq!(id, first, "one key, one agent");
    let vendor = common::Party {
        id: id.clone(),
        key,
        email: String::new(),
    };
    t.open_sandbox(&vendor).await;
    let ann = t
        .enroll(
            countersign_host::SANDBOX_HANDLE,
            "Ann",
            "ann@fabrikam.example",
        )
        .await;
    assert_eq!(
        named_in_summary(&t, &ann).await,
        (
            Value::from("Contoso Seller"),
            Value::from("Contoso"),
            Value::from(false)
        ),
        "the later registration's names, unverified"
    );
    let history = json_of(&run(db, &["agent", "history", &id, "--json"]));
    let declared: Vec<(&str, &str)> = history["registrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["vendor_name"].as_str().unwrap(),
                r["contact_email"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        declared,
        [
            ("Evil Corp", "attacker@evil.example"),
            ("Contoso", "sales@contoso.example")
        ]
    );
    let listed = json_of(&run(db, &["agent", "list", "--json"]));
    assert_eq!(listed["agents"][0]["names_verified"], false);

    json_of(&run(db, &["agent", "verify", &id, "--json"]));
    assert_eq!(
        named_in_summary(&t, &ann).await,
        (
            Value::from("Contoso Seller"),
            Value::from("Contoso"),
            Value::from(true)
        )
    );
    // The attacker replays the proof with its names: recorded, not shown.
    let (status, _) = register_as(
        &t,
        &public_key,
        &proof,
        "Evil Corp",
        "Evil Agent",
        "attacker@evil.example",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        named_in_summary(&t, &ann).await,
        (
            Value::from("Contoso Seller"),
            Value::from("Contoso"),
            Value::from(true)
        )
    );
    let history = json_of(&run(db, &["agent", "history", &id, "--json"]));
    assert_eq!(history["registrations"].as_array().unwrap().len(), 3);
    // A registration repeating the last names adds nothing.
    register_as(
        &t,
        &public_key,
        &proof,
        "Evil Corp",
        "Evil Agent",
        "attacker@evil.example",
    )
    .await;
    let history = json_of(&run(db, &["agent", "history", &id, "--json"]));
    assert_eq!(history["registrations"].as_array().unwrap().len(), 3);
    let out = run(db, &["agent", "history", "no-such-agent"]);
    assert_eq!(out.status.code(), Some(1));
}
