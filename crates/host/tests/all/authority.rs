//! The policy of authority's admin commands (docs/authority.md), run as the
//! real binary against each store: every load a new version with who and
//! when, `show` the current one or any earlier one, a broken file refused
//! with its line, field and reason and nothing stored.

use std::process::{Command, Output};

use serde_json::Value;

use crate::cli::db_arg;
use crate::common;

const THREE_TIER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../docs/examples/authority-three-tier.toml"
);

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
    serde_json::from_slice(&out.stdout).unwrap()
}

fn new_org(db: &str) -> String {
    let org = json_of(&run(db, &["org", "create", "--name", "Fabrikam", "--json"]));
    org["org_handle"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn each_load_is_a_new_version_kept_with_who_and_when_and_show_reads_any() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_arg(&common::fresh_target(dir.path()).await);
    let db = db.as_str();
    let org = new_org(db);
    // No holder has enrolled yet: the load says so for each of the five.
    let first = json_of(&run(
        db,
        &[
            "authority",
            "load",
            "--org",
            &org,
            "--by",
            "Ivy Admin",
            THREE_TIER,
            "--json",
        ],
    ));
    assert_eq!(first["version"], 1);
    assert_eq!(first["loaded"], true);
    assert_eq!(first["loaded_by"], "Ivy Admin");
    assert_eq!(
        first["roles"]["cfo"],
        serde_json::json!(["carol@fabrikam.example"])
    );
    let rules: Vec<(i64, &str, Vec<&str>)> = first["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["number"].as_i64().unwrap(),
                r["name"].as_str().unwrap(),
                r["chain"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            (1, "Up to 10,000 USD", vec!["buyer"]),
            (2, "Above 10,000 USD", vec!["buyer", "finance"]),
            (3, "Above 100,000 USD", vec!["buyer", "finance", "cfo"]),
        ]
    );
    assert_eq!(first["not_enrolled"].as_array().unwrap().len(), 5);

    let second = json_of(&run(
        db,
        &[
            "authority",
            "load",
            "--org",
            &org,
            "--by",
            "Ivy Admin",
            THREE_TIER,
            "--json",
        ],
    ));
    assert_eq!(second["version"], 2);

    let shown = json_of(&run(db, &["authority", "show", "--org", &org, "--json"]));
    assert_eq!(shown["version"], 2);
    assert_eq!(shown["text"], std::fs::read_to_string(THREE_TIER).unwrap());
    let earlier = json_of(&run(
        db,
        &[
            "authority",
            "show",
            "--org",
            &org,
            "--version",
            "1",
            "--json",
        ],
    ));
    assert_eq!(earlier["version"], 1);
    assert_eq!(earlier["loaded_by"], "Ivy Admin");
    assert!(earlier["loaded_at"].as_str().unwrap().ends_with('Z'));

    let text = run(db, &["authority", "show", "--org", &org]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("rule 3: Above 100,000 USD: buyer, then finance, then cfo"),
        "{text}"
    );

    let missing = run(db, &["authority", "show", "--org", &org, "--version", "3"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("has no policy of authority version 3")
    );
}

#[tokio::test]
async fn a_broken_file_is_refused_with_its_line_field_and_reason_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_arg(&common::fresh_target(dir.path()).await);
    let db = db.as_str();
    let org = new_org(db);
    json_of(&run(
        db,
        &["authority", "load", "--org", &org, THREE_TIER, "--json"],
    ));

    let good = std::fs::read_to_string(THREE_TIER).unwrap();
    let cases = [
        (good.replace("role = \"cfo\"", "role = \"ceo\""), "line 35, rule[3].step[3].role: no role \"ceo\" in [roles] (roles: buyer, cfo, finance)"),
        (good.replace("up_to = \"10000\" }", "up_to = 10000.0 }"), "line 13, rule[1].amount: 10000 is a TOML float"),
        (good.replace("[no_rule]", "[no_rules]"), "no_rule.reason: missing field `reason`"),
        (good.replace("escalate_to = \"cfo\"", "escalate_to = \"cfo\"\nrespond_in = \"4h\""), "line 26, rule[2].step[2].respond_in: unknown field `respond_in`"),
    ];
    for (i, (text, said)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("broken-{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let out = run(
            db,
            &[
                "authority",
                "load",
                "--org",
                &org,
                path.to_str().unwrap(),
                "--json",
            ],
        );
        assert_eq!(out.status.code(), Some(1), "case {i}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("policy of authority refused: "),
            "case {i}: {stderr}"
        );
        assert!(stderr.contains(said), "case {i}: {stderr}");
        assert!(out.stdout.is_empty(), "case {i}");
    }
    let shown = json_of(&run(db, &["authority", "show", "--org", &org, "--json"]));
    assert_eq!(shown["version"], 1, "no refused file became a version");

    let unknown = run(
        db,
        &["authority", "load", "--org", "anp_org_nope", THREE_TIER],
    );
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no org with handle \"anp_org_nope\"")
    );
    let usage = run(db, &["authority", "load", THREE_TIER]);
    assert_eq!(usage.status.code(), Some(2), "--org is required");
}

#[tokio::test]
async fn an_org_without_one_shows_the_old_threshold_it_decides_by() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_arg(&common::fresh_target(dir.path()).await);
    let db = db.as_str();
    let shown = json_of(&run(
        db,
        &["authority", "show", "--org", "sandbox", "--json"],
    ));
    assert_eq!(shown["version"], Value::Null);
    assert_eq!(shown["legacy"]["above_total"], "250000");
    assert_eq!(shown["legacy"]["approvers_required"], 2);
    let text =
        String::from_utf8(run(db, &["authority", "show", "--org", "sandbox"]).stdout).unwrap();
    assert!(text.contains("sandbox has no policy of authority: its buyer policy decides (up to 250000 one approver; above it 2 distinct approvers; ANEX asks one)"), "{text}");
}

#[tokio::test]
async fn a_gate_agent_enrolled_with_an_owner_keeps_it_and_a_bad_owner_is_refused() {
    let t = common::start(common::roomy_limits()).await;
    let db = db_arg(t.host().target());
    let db = db.as_str();
    let bad = run(
        db,
        &[
            "agent",
            "enroll",
            "--org",
            "sandbox",
            "--name",
            "Buyer",
            "--protocol",
            "concordia",
            "--owner",
            "ann",
        ],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--owner \"ann\" is not an email"));

    let code = json_of(&run(
        db,
        &[
            "agent",
            "enroll",
            "--org",
            "sandbox",
            "--name",
            "Buyer",
            "--protocol",
            "concordia",
            "--owner",
            "Ann@Fabrikam.example",
            "--json",
        ],
    ));
    assert_eq!(code["owner"], "ann@fabrikam.example");
    let key = anp::keys::generate_signing_key();
    let (s, b) = t
        .gate_enroll(code["code"].as_str().unwrap(), &key, None)
        .await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    let unowned = json_of(&run(
        db,
        &[
            "agent",
            "enroll",
            "--org",
            "sandbox",
            "--name",
            "Other",
            "--protocol",
            "concordia",
            "--json",
        ],
    ));
    assert_eq!(unowned["owner"], Value::Null);

    let listed = json_of(&run(db, &["agent", "list", "--json"]));
    assert_eq!(listed["gate_agents"][0]["owner"], "ann@fabrikam.example");
}
