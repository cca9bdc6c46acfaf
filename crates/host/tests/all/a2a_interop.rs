//! Interop with the A2A reference SDK (`a2a-sdk` 1.3.0, in .venv/ by
//! `bash .ci/setup`): a counterparty agent written with it
//! (`crates/host/interop/anex_requester.py`, from docs/anex-binding.md
//! alone) negotiates data-access terms with a real `countersign-host`
//! process on loopback, set up with the admin CLI. It resolves the card,
//! is refused without the extension and without a token, gets a CFP within
//! policy answered at once and accepts it (and again through the SDK's v0.3
//! compatibility layer: `message/send`, `tasks/get`, `tasks/cancel`), then
//! sends one beyond policy and
//! sees the task wait; a person decides through the approver API (the Rust
//! approver client, signing an ApprovalReceipt over the terms record); the
//! SDK sees our PROPOSE (or REFUSE), accepts, asks for exactly the accepted
//! items and is refused one it was not given.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use countersign_client::ApproverClient;
use countersign_host_api::anex::AnexTerms;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use crate::a2a::{DATA, POLICY};
use crate::common::*;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

use countersign_testkit::python::interop_python as python;

/// A real host process and the admin CLI on one database.
struct Process {
    child: std::process::Child,
    base: String,
    db: String,
    key: PathBuf,
    _dir: tempfile::TempDir,
}

impl Process {
    async fn start() -> Process {
        let dir = tempfile::tempdir().unwrap();
        let db = match fresh_target(dir.path()).await {
            countersign_host::Target::Sqlite(p) => p.display().to_string(),
            countersign_host::Target::Postgres(url) => url,
        };
        let key = dir.path().join("platform-key.json");
        let mut child = Command::new(env!("CARGO_BIN_EXE_countersign-host"))
            .arg("--db")
            .arg(&db)
            .args(["serve", "--listen", "127.0.0.1:0", "--platform-key"])
            .arg(&key)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the host did not start: {line:?}"))
            .to_owned();
        Process {
            child,
            base,
            db,
            key,
            _dir: dir,
        }
    }

    /// One admin command with `--json`; its JSON answer.
    fn admin(&self, args: &[&str]) -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_countersign-host"))
            .arg("--db")
            .arg(&self.db)
            .arg("--json")
            .args(args)
            .env("COUNTERSIGN_HOST_PLATFORM_KEY", &self.key)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self._dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Person {
    Counters,
    /// Declines, after a first reason that leaks a confidential value is
    /// refused by the org's outbound screening.
    Declines,
}

/// The org's negotiation policy for the decline case: what its screening
/// keeps from any counterparty.
const SCREENING: &str = r#"{
  "max_rounds": 0, "concession_per_round": "0", "skus": {},
  "approval": { "above_total": "100000", "approvers_required": 1 },
  "may_discuss": ["pricing"], "may_disclose": [],
  "will_not_disclose": ["internal budget ceilings"],
  "secret_values": [{ "label": "the budget ceiling", "value": "600000" }]
}"#;

/// What the leaking reasons would have told the requester.
const LEAKS: [&str; 3] = ["600,000", "600000", "budget ceilings"];

async fn negotiate(person: Person) -> (Vec<Value>, Value) {
    let host = Process::start().await;
    let org = host.admin(&["org", "create", "--name", "Fabrikam Industries"])["org_handle"]
        .as_str()
        .unwrap()
        .to_owned();
    let policy = host.file("anex-policy.json", POLICY);
    let data = host.file("anex-data.json", DATA);
    host.admin(&["anex", "policy", "--org", &org, &policy]);
    host.admin(&["anex", "data", "--org", &org, &data]);
    if person == Person::Declines {
        let screening = host.file("policy.json", SCREENING);
        host.admin(&["policy", "load", "--org", &org, &screening]);
    }
    let issued = host.admin(&[
        "anex",
        "counterparty",
        "add",
        "--org",
        &org,
        "--identity",
        crate::a2a::SUPPLIER,
        "--name",
        "Northwind onboarding",
        "--relation",
        "supplier",
    ]);
    let token = issued["token"].as_str().unwrap().to_owned();
    let code = host.admin(&[
        "approver",
        "enroll",
        "--org",
        &org,
        "--name",
        "Ann",
        "--email",
        "ann@fabrikam.example",
    ])["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let key = anp::keys::generate_signing_key();
    let enrolled = ApproverClient::enroll(&host.base, &code, "Ann", "ann@fabrikam.example", &key)
        .await
        .unwrap();
    let approver = ApproverClient::new(&host.base, key, &enrolled.approver_id).unwrap();

    let mut child = tokio::process::Command::new(python())
        .arg(repo_root().join("crates/host/interop/anex_requester.py"))
        .args([
            "--host", &host.base, "--org", &org, "--token", &token, "--wait", "30",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the interop Python starts");
    let mut stderr = child.stderr.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut steps = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        let step: Value = serde_json::from_str(&line).unwrap();
        let waiting = step["step"] == "waiting";
        steps.push(step);
        if !waiting {
            continue;
        }
        // The person decides in the console (through the approver API).
        let summary = approver.summary().await.unwrap();
        let session = summary
            .sessions
            .iter()
            .find(|s| s.protocol == "anex" && !s.pending.is_empty())
            .expect("the ask beyond policy is pending in the summary");
        assert_eq!(
            session.id,
            format!(
                "anex:{}",
                steps.last().unwrap()["context_id"].as_str().unwrap()
            )
        );
        let pending = session.pending[0].anex.clone().unwrap();
        let request = match person {
            Person::Counters => approver
                .counter_anex(
                    &pending,
                    AnexTerms {
                        access: vec!["legal_name".into(), "tax_id".into(), "bank_details".into()],
                        promise: vec![
                            "no retention beyond 90 days".into(),
                            "no sharing with third parties".into(),
                        ],
                    },
                )
                .unwrap(),
            Person::Declines => {
                for leaky in [
                    "our cap is 600,000 so no",
                    "that would exceed our internal budget ceilings",
                ] {
                    let leak = approver.decline_anex(&pending, leaky).unwrap();
                    let err = approver
                        .decide_anex(&session.id, &leak)
                        .await
                        .unwrap_err()
                        .to_string();
                    assert!(err.contains("outbound screening"), "{err}");
                }
                approver
                    .decline_anex(&pending, "bank details only after a signed contract")
                    .unwrap()
            }
        };
        approver.decide_anex(&session.id, &request).await.unwrap();
    }
    let status = child.wait().await.unwrap();
    let mut err = String::new();
    stderr.read_to_string(&mut err).await.unwrap();
    assert!(status.success(), "the SDK agent failed: {steps:?} {err}");
    let log = {
        let summary = approver.summary().await.unwrap();
        let mut logs = Vec::new();
        for s in summary.sessions.iter().filter(|s| s.protocol == "anex") {
            logs.push(serde_json::to_value(approver.anex_log(&s.id, None).await.unwrap()).unwrap());
        }
        json!(logs)
    };
    (steps, log)
}

fn step<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no {name} step in {steps:?}"))
}

#[tokio::test]
async fn the_a2a_sdk_negotiates_terms_the_owner_counters_and_gets_exactly_the_accepted_data() {
    let (steps, logs) = negotiate(Person::Counters).await;
    let checks = step(&steps, "checks");
    assert_eq!(checks["extension_uri"], crate::a2a::URI);
    assert_eq!(checks["required"], true);
    assert_eq!(
        checks["without_extension"], "ExtensionSupportRequiredError",
        "{checks}"
    );
    assert!(
        checks["without_token"].as_str().unwrap().contains("401"),
        "{checks}"
    );

    let within = step(&steps, "within");
    assert_eq!(within["state"], "TASK_STATE_INPUT_REQUIRED", "{within}");
    assert_eq!(within["awaiting"], "counterparty");
    assert_eq!(within["answer"]["performative"], "PROPOSE");
    assert_eq!(
        within["answer"]["content"]["response"],
        json!({"access": ["legal_name", "ap_contact"], "promise": ["no retention beyond 90 days"]})
    );
    assert_eq!(within["accepted_state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        within["artifact"]["access"],
        json!(["ap_contact", "legal_name"])
    );

    let v03 = step(&steps, "v03");
    assert_eq!(v03["transport"], "CompatJsonRpcTransport", "{v03}");
    assert_eq!(v03["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(v03["answer"], "PROPOSE");
    assert_eq!(v03["get_state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(v03["cancel_state"], "TASK_STATE_CANCELED");

    let waiting = step(&steps, "waiting");
    assert_eq!(waiting["state"], "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    assert_eq!(waiting["awaiting"], "owner");
    assert_eq!(waiting["has_status_message"], false);

    let done = step(&steps, "done");
    assert_eq!(done["answer"]["performative"], "PROPOSE", "{done}");
    assert_eq!(
        done["answer"]["content"]["response"],
        json!({"access": ["legal_name", "tax_id", "bank_details"],
               "promise": ["no retention beyond 90 days", "no sharing with third parties"]})
    );
    assert_eq!(done["accepted_state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        done["artifact"]["access"],
        json!(["bank_details", "legal_name", "tax_id"])
    );
    assert_eq!(done["data_state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        done["data"]["content"]["data"],
        json!({
            "legal_name": "Fabrikam Industries Inc.",
            "tax_id": "US-12-3456789",
            "bank_details": {"iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX"},
        })
    );
    assert_eq!(done["refused_state"], "TASK_STATE_REJECTED");
    assert_eq!(done["refused"]["performative"], "REFUSE");
    assert_eq!(done["refused"]["content"]["items"], json!(["ap_contact"]));
    assert!(done["refused"]["content"].get("data").is_none());

    // The person's receipt binds the record the SDK holds as its artifact.
    let beyond = logs
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["conversation_id"] == "conv-beyond")
        .unwrap();
    assert_eq!(
        beyond["receipts"][0]["scope"]["terms"], done["artifact"],
        "{beyond}"
    );
    assert_eq!(beyond["phase"], "agreed");
}

#[tokio::test]
async fn the_a2a_sdk_sees_the_owners_refusal_and_never_a_reason_the_screening_refused() {
    let (steps, _) = negotiate(Person::Declines).await;
    let done = step(&steps, "done");
    assert_eq!(done["state"], "TASK_STATE_REJECTED", "{done}");
    assert_eq!(done["awaiting"], "none");
    assert_eq!(done["answer"]["performative"], "REFUSE");
    assert_eq!(
        done["answer"]["content"]["response"],
        "bank details only after a signed contract"
    );
    assert!(
        done.get("data").is_none(),
        "nothing was shared after a refusal"
    );
    // The reasons the screening refused never reached the SDK.
    let seen = serde_json::to_string(&steps).unwrap();
    for leak in LEAKS {
        assert!(!seen.contains(leak), "the requester read {leak:?}: {seen}");
    }
}
