//! `anp vendor ...` driven as a real binary against a real countersign-host on
//! loopback, with its state in a temporary ANP_HOME.

use std::path::Path;
use std::process::{Command, Output};

use countersign_host::{Host, HostConfig, Limit, Limits, RunningHost};
use serde_json::Value;

pub(crate) struct Fixture {
    pub(crate) running: RunningHost,
    pub(crate) home: tempfile::TempDir,
    _db: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    fixture_in(countersign_host::config::DiscoveryMode::Full).await
}

/// A host whose `/.well-known/anp.json` serves what `discovery` says.
pub(crate) async fn fixture_in(discovery: countersign_host::config::DiscoveryMode) -> Fixture {
    let db = tempfile::tempdir().unwrap();
    let roomy = Limit::per_minute(1_000_000);
    let config = HostConfig {
        limits: Limits {
            per_ip: roomy,
            per_agent: roomy,
            per_session: roomy,
            registration: roomy,
            ..Limits::default()
        },
        discovery,
        ..HostConfig::default()
    };
    let host = Host::open(&db.path().join("host.db"), config)
        .await
        .unwrap();
    Fixture {
        running: host.spawn("127.0.0.1:0").await.unwrap(),
        home: tempfile::tempdir().unwrap(),
        _db: db,
    }
}

pub(crate) async fn anp(home: &Path, args: &[&str]) -> Output {
    anp_in(home, args, &[]).await
}

/// `anp` with extra environment (a locale, a time zone).
async fn anp_in(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let home = home.to_owned();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_anp"))
            .env("ANP_HOME", &home)
            .envs(env)
            .args(&args)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

pub(crate) fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) fn offer_file(dir: &Path, unit_price: u32) -> String {
    let expires = time::OffsetDateTime::now_utc() + time::Duration::days(2);
    let offer = serde_json::json!({
        "currency": "USD", "term_months": 24,
        "expires_at": anp::api::format_timestamp(expires),
        "line_items": [{"sku": "CRM-ENT", "description": "CRM seats", "quantity": 100,
                        "unit": "seat/year", "unit_price": unit_price, "currency": "USD"}]
    });
    let path = dir.join(format!("offer-{unit_price}.json"));
    std::fs::write(&path, offer.to_string()).unwrap();
    path.display().to_string()
}

pub(crate) async fn registered(f: &Fixture) {
    let url = f.running.base_url();
    let out = anp(
        f.home.path(),
        &[
            "vendor",
            "register",
            "--host",
            &url,
            "--agent-name",
            "Contoso Seller",
            "--vendor-name",
            "Contoso",
            "--email",
            "sales@contoso.example",
            "--json",
        ],
    )
    .await;
    let reg = json_of(&out);
    assert_eq!(reg["status"], "sandbox");
    assert_eq!(reg["key_created"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_open_offer_message_close_with_a_verified_chain() {
    let f = fixture().await;
    registered(&f).await;
    let home = f.home.path();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join("key.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("agent.json")).unwrap()).unwrap();
    assert_eq!(saved["host"], f.running.base_url());

    let opened = json_of(&anp(home, &["vendor", "open", "--sandbox", "--json"]).await);
    let sid = opened["session_id"].as_str().unwrap().to_owned();
    assert_eq!(opened["head"]["seq"], 2);
    assert_eq!(opened["buyer_envelope"]["party"], "Fabrikam Industries");
    // The default envelope speaks for the registered vendor.
    assert_eq!(
        opened["events"][0]["payload"]["envelope"]["party"],
        "Contoso"
    );

    let file = offer_file(home, 1400);
    let sent = json_of(&anp(home, &["vendor", "offer", &sid, &file, "--json"]).await);
    assert_eq!(sent["verified"], true);
    assert_eq!(sent["head"]["seq"], 3);
    assert_eq!(sent["events"][0]["kind"], "offer");

    // Text output says it verified, and shows counterparty text safely.
    let out = anp(
        home,
        &[
            "vendor",
            "message",
            &sid,
            "--body",
            "Hello\u{1b}[31m there",
            "--subject",
            "hi",
        ],
    )
    .await;
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("chain verified through event 4"), "{text}");
    assert!(
        text.contains("\\u{1b}[31m"),
        "escape sequences are shown, not played: {text}"
    );

    let log = json_of(&anp(home, &["vendor", "log", &sid, "--json"]).await);
    assert_eq!(log["events"].as_array().unwrap().len(), 4);
    // A person's summary writes the amount grouped and the expiry relative
    // and absolute, in the machine's locale and zone (British, Tokyo here);
    // --json kept the protocol's exact values above.
    let expires = log["events"][2]["payload"]["expires_at"].as_str().unwrap();
    let at = time::OffsetDateTime::parse(expires, &time::format_description::well_known::Rfc3339)
        .unwrap()
        .to_offset(time::UtcOffset::from_hms(9, 0, 0).unwrap());
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec",
    ];
    let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let when = format!(
        "{} {} {}, {:02}:{:02}",
        days[at.weekday().number_days_from_monday() as usize],
        at.day(),
        months[at.month() as usize - 1],
        at.hour(),
        at.minute()
    );
    let out = anp_in(
        home,
        &["vendor", "log", &sid],
        &[("LC_ALL", "en_GB.UTF-8"), ("TZ", "Asia/Tokyo")],
    )
    .await;
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!(
            "1 line item(s), total 140,000 USD, 24 months, expires in 1 d 23 h ({when})"
        )),
        "{text}"
    );

    let closed = json_of(
        &anp(
            home,
            &["vendor", "close", &sid, "--reason", "done", "--json"],
        )
        .await,
    );
    assert_eq!(closed["status"], "closed");

    // After close the host refuses; exit 1 with its words.
    let out = anp(home, &["vendor", "message", &sid, "--body", "late"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("session_closed"));

    // watch on an ended session prints nothing new and ends.
    let watched = anp(
        home,
        &[
            "vendor",
            "watch",
            &sid,
            "--interval",
            "1",
            "--max-polls",
            "3",
        ],
    )
    .await;
    assert!(watched.status.success());
    assert!(String::from_utf8_lossy(&watched.stdout).contains("is closed"));
    f.running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_exits_2_and_a_broken_pin_exits_1() {
    let f = fixture().await;
    let home = f.home.path();

    // Nothing registered yet.
    let out = anp(home, &["vendor", "open", "--sandbox"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `anp vendor register"));

    registered(&f).await;
    let opened = json_of(&anp(home, &["vendor", "open", "--sandbox", "--json"]).await);
    let sid = opened["session_id"].as_str().unwrap().to_owned();

    // An invalid offer is refused before sending, naming the rule.
    let bad = home.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"currency":"USD","term_months":0,"expires_at":"2999-01-01T00:00:00Z","line_items":[]}"#,
    )
    .unwrap();
    let out = anp(home, &["vendor", "offer", &sid, bad.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("term_months"), "{err}");
    let out = anp(home, &["vendor", "offer", &sid, "/nonexistent/offer.json"]).await;
    assert_eq!(out.status.code(), Some(2));

    // A pin the host's log does not extend: chain broken, exit 1.
    let pins_path = home.join("pins.json");
    let mut pins: Value =
        serde_json::from_str(&std::fs::read_to_string(&pins_path).unwrap()).unwrap();
    pins[&sid]["event_hash"] = Value::String("ab".repeat(32));
    std::fs::write(&pins_path, pins.to_string()).unwrap();
    let out = anp(home, &["vendor", "log", &sid]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not verify"));
    f.running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_prints_new_events_verified_until_the_session_ends() {
    let f = fixture().await;
    registered(&f).await;
    let home = f.home.path().to_owned();
    let opened = json_of(&anp(&home, &["vendor", "open", "--sandbox", "--json"]).await);
    let sid = opened["session_id"].as_str().unwrap().to_owned();

    // The watcher has its own copy of the state, pinned at event 2, so it
    // prints everything after that whenever it starts polling.
    let watch_home = tempfile::tempdir().unwrap();
    for file in ["key.json", "agent.json", "pins.json"] {
        std::fs::copy(home.join(file), watch_home.path().join(file)).unwrap();
    }
    let watcher = {
        let (home, sid) = (watch_home.path().to_owned(), sid.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_anp"))
                .env("ANP_HOME", &home)
                .args([
                    "vendor",
                    "watch",
                    &sid,
                    "--interval",
                    "1",
                    "--max-polls",
                    "60",
                    "--json",
                ])
                .output()
                .unwrap()
        })
    };
    json_of(
        &anp(
            &home,
            &[
                "vendor",
                "message",
                &sid,
                "--body",
                "are you there?",
                "--json",
            ],
        )
        .await,
    );
    json_of(&anp(&home, &["vendor", "close", &sid, "--json"]).await);

    let out = watcher.await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["event"]["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["message", "session_close"]);
    assert!(lines
        .iter()
        .filter(|l| l.get("event").is_some())
        .all(|l| l["verified"] == true));
    let last = lines.last().unwrap();
    assert_eq!(
        (last["status"].as_str(), last["ended"].as_bool()),
        (Some("closed"), Some(true))
    );
    f.running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_org_needs_verification_then_counter_and_decline_answer_the_buyer() {
    let f = fixture().await;
    registered(&f).await;
    let home = f.home.path();
    let org = f
        .running
        .host
        .create_org("Tailspin Toys")
        .await
        .unwrap()
        .org_handle;

    // Unverified agents cannot reach a live org: refused, exit 1.
    let out = anp(home, &["vendor", "open", "--org", &org]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not_verified"));
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("agent.json")).unwrap()).unwrap();
    f.running
        .host
        .verify_agent(saved["agent_id"].as_str().unwrap())
        .await
        .unwrap();
    let opened = json_of(&anp(home, &["vendor", "open", "--org", &org, "--json"]).await);
    assert_eq!(opened["buyer_envelope"]["party"], "Tailspin Toys");

    // In the sandbox, a person sends the buyer agent's counter; the vendor
    // counters back, and declines the buyer's next one.
    let opened = json_of(&anp(home, &["vendor", "open", "--sandbox", "--json"]).await);
    let sid = opened["session_id"].as_str().unwrap().to_owned();
    json_of(
        &anp(
            home,
            &["vendor", "offer", &sid, &offer_file(home, 1400), "--json"],
        )
        .await,
    );
    let ada = sandbox_approver(&f).await;
    let draft = pending_draft(&ada, &sid).await;
    ada.decide(
        &sid,
        &countersign_client::ApproverClient::send_draft_request(&draft),
    )
    .await
    .unwrap();

    let countered = json_of(
        &anp(
            home,
            &["vendor", "counter", &sid, &offer_file(home, 1300), "--json"],
        )
        .await,
    );
    let kinds: Vec<&str> = countered["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["counter_offer", "counter_offer"],
        "the buyer's, then ours"
    );
    assert_eq!(countered["events"][0]["actor"], "buyer");

    let draft = pending_draft(&ada, &sid).await;
    ada.decide(
        &sid,
        &countersign_client::ApproverClient::send_draft_request(&draft),
    )
    .await
    .unwrap();
    let declined = json_of(
        &anp(
            home,
            &[
                "vendor",
                "decline",
                &sid,
                "--reason",
                "below our floor",
                "--json",
            ],
        )
        .await,
    );
    let last = declined["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["kind"].as_str(), last["payload"]["reason"].as_str()),
        (Some("decline"), Some("below our floor"))
    );
    assert_eq!(declined["verified"], true);
    f.running.shutdown().await;
}

/// Ada, enrolled as an approver of the sandbox buyer (so its agent's drafts
/// can be sent and offers decided).
pub(crate) async fn sandbox_approver(f: &Fixture) -> countersign_client::ApproverClient {
    let url = f.running.base_url();
    let code = f
        .running
        .host
        .enroll_code(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await
        .unwrap()
        .code;
    let key = anp::keys::generate_signing_key();
    let enrolled = countersign_client::ApproverClient::enroll(
        &url,
        &code,
        "Ada",
        "ada@fabrikam.example",
        &key,
    )
    .await
    .unwrap();
    countersign_client::ApproverClient::new(&url, key, &enrolled.approver_id).unwrap()
}

/// The buyer agent's draft waiting in the approver's summary for `sid`.
pub(crate) async fn pending_draft(ada: &countersign_client::ApproverClient, sid: &str) -> String {
    let summary = ada.summary().await.unwrap();
    let session = summary.sessions.iter().find(|s| s.id == sid).unwrap();
    session
        .pending
        .iter()
        .find(|p| p.event_hash.starts_with("draft:"))
        .expect("the buyer agent drafted a counter-offer")
        .event_hash
        .clone()
}
