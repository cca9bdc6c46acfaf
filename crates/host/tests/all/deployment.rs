//! Three real `countersign-host` processes on one PostgreSQL database (and
//! nginx in front where a test needs one): the promises that must hold
//! across processes. These run once per `cargo test` (on PostgreSQL only:
//! SQLite is one process's store).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anp::KeyRing;
use countersign_testkit::deployment::{Deployment, Launch};
use serde_json::{json, Value};

use crate::common::{offer, vendor_envelope, Party, RemoteHost, FAR_FUTURE};

fn binary() -> Launch {
    Launch::Binary(env!("CARGO_BIN_EXE_countersign-host").into())
}

async fn three() -> Deployment {
    match Deployment::start(binary(), 3).await {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    }
}

fn remotes(d: &Deployment) -> Vec<Arc<RemoteHost>> {
    d.hosts
        .iter()
        .map(|h| Arc::new(RemoteHost::new(h.url())))
        .collect()
}

fn message(tag: &str) -> Value {
    json!({ "body": tag })
}

fn events_path(session: &str) -> String {
    format!("/api/agent/v1/sessions/{session}/events")
}

fn submit_body(vendor: &Party, payload: &Value, kind: &str) -> Vec<u8> {
    serde_json::to_vec(
        &json!({ "kind": kind, "payload": payload, "signature": vendor.authorship(kind, payload) }),
    )
    .unwrap()
}

/// Checks one session's whole log: seq 1..=n without a gap, the chain and
/// every signature valid, and every acknowledged body present exactly once.
fn check_log(doc: &anp::LogDocument, session: &str, acked: &[String]) {
    let seqs: Vec<u64> = doc.events.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=doc.events.len() as u64).collect::<Vec<_>>(),
        "contiguous seq"
    );
    let report = anp::verify_log(session, &doc.events, &KeyRing::from_log_keys(doc).unwrap());
    assert!(report.ok, "{report:?}");
    for body in acked {
        let n = doc
            .events
            .iter()
            .filter(|e| e.payload["body"] == body.as_str())
            .count();
        assert_eq!(n, 1, "{body} is in the log exactly once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_agents_spread_over_three_processes_keep_every_session_contiguous_and_verifying()
{
    let d = three().await;
    let hosts = remotes(&d);
    let mut agents = Vec::new();
    for i in 0..32 {
        let at = &hosts[i % 3];
        let vendor = Arc::new(at.register().await);
        let session = at.open(&vendor).await;
        agents.push((vendor, session));
    }
    // Each agent appends from two tasks at once, every request to the next
    // process in turn: one session sees concurrent appends from different
    // processes, and every process serves every session.
    let mut tasks = Vec::new();
    for (a, (vendor, session)) in agents.iter().enumerate() {
        for lane in 0..2 {
            let (hosts, vendor, session) = (hosts.clone(), vendor.clone(), session.clone());
            tasks.push(tokio::spawn(async move {
                let mut acked = Vec::new();
                for n in 0..6 {
                    let body = format!("agent {a} lane {lane} message {n}");
                    let host = &hosts[(a + lane + n) % 3];
                    let status = host.submit(&vendor, &session, message(&body)).await;
                    assert_eq!(status, 200, "append through {}", host.base);
                    acked.push(body);
                }
                (a, acked)
            }));
        }
    }
    let mut acked: Vec<Vec<String>> = vec![Vec::new(); 32];
    for task in tasks {
        let (a, bodies) = task.await.unwrap();
        acked[a].extend(bodies);
    }
    for (a, (vendor, session)) in agents.iter().enumerate() {
        let doc = hosts[(a + 1) % 3].log(vendor, session).await;
        assert_eq!(doc.events.len(), 2 + 12);
        check_log(&doc, session, &acked[a]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_replayed_at_another_process_is_refused() {
    let d = three().await;
    let hosts = remotes(&d);
    let vendor = hosts[0].register().await;
    let session = hosts[0].open(&vendor).await;

    // A read, replayed byte for byte at the other two processes.
    let path = format!("/api/agent/v1/sessions/{session}");
    let now = anp::api::format_timestamp(time::OffsetDateTime::now_utc());
    let read = anp::api::sign_request(
        &vendor.key,
        &vendor.id,
        "GET",
        &path,
        b"",
        &now,
        "nonce-read",
    );
    assert_eq!(hosts[0].send_with(&read, "GET", &path).await, 200);
    assert_eq!(hosts[1].send_with(&read, "GET", &path).await, 401);
    assert_eq!(hosts[2].send_with(&read, "GET", &path).await, 401);

    // An append, replayed: refused, and stored once.
    let payload = message("only once");
    let body = submit_body(&vendor, &payload, "message");
    let events = events_path(&session);
    let append = anp::api::sign_request(
        &vendor.key,
        &vendor.id,
        "POST",
        &events,
        &body,
        &now,
        "nonce-append",
    );
    let post = |host: &RemoteHost| {
        let mut req = host
            .http
            .post(format!("{}{events}", host.base))
            .body(body.clone());
        for (k, v) in append.pairs() {
            req = req.header(k, v);
        }
        req.send()
    };
    assert_eq!(post(&hosts[1]).await.unwrap().status().as_u16(), 200);
    assert_eq!(post(&hosts[2]).await.unwrap().status().as_u16(), 401);
    assert_eq!(post(&hosts[0]).await.unwrap().status().as_u16(), 401);
    let doc = hosts[2].log(&vendor, &session).await;
    check_log(&doc, &session, &["only once".to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_one_process_under_load_loses_no_acknowledged_event_and_the_others_keep_answering(
) {
    let mut d = three().await;
    let front = Arc::new(RemoteHost::new(d.url()));
    let mut agents = Vec::new();
    for _ in 0..16 {
        let vendor = Arc::new(front.register().await);
        let session = front.open(&vendor).await;
        agents.push((vendor, session));
    }
    let stop_at = Instant::now() + Duration::from_millis(2500);
    let mut tasks = Vec::new();
    for (vendor, session) in agents.clone() {
        let front = front.clone();
        tasks.push(tokio::spawn(async move {
            let (mut acked, mut failed, mut n) = (Vec::new(), 0, 0);
            while Instant::now() < stop_at {
                let body = format!("{} message {n}", vendor.id);
                n += 1;
                if front.submit(&vendor, &session, message(&body)).await == 200 {
                    acked.push((Instant::now(), body));
                } else {
                    failed += 1;
                }
            }
            (acked, failed)
        }));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    d.kill_9(1);
    let killed_at = Instant::now();
    let mut acked_after_kill = 0;
    let mut failures = 0;
    let mut per_agent = Vec::new();
    for task in tasks {
        let (acked, failed) = task.await.unwrap();
        // Requests in flight at the killed process may fail (nginx never
        // resends a request a host received); nothing acknowledged may be lost.
        failures += failed;
        acked_after_kill += acked
            .iter()
            .filter(|(at, _)| *at > killed_at + Duration::from_millis(200))
            .count();
        per_agent.push(acked.into_iter().map(|(_, b)| b).collect::<Vec<_>>());
    }
    assert!(
        acked_after_kill > 100,
        "the others keep answering: {acked_after_kill} appends acknowledged after the kill"
    );
    // At most the requests in flight there, plus one per idle connection
    // nginx kept to it (nginx resends neither: each may have reached it).
    assert!(
        failures <= 16 + 64,
        "only requests that reached the killed process fail: {failures}"
    );
    let survivor = RemoteHost::new(d.hosts[2].url());
    for ((vendor, session), acked) in agents.iter().zip(&per_agent) {
        let doc = survivor.log(vendor, session).await;
        check_log(&doc, session, acked);
        // and every session still takes appends
        assert_eq!(
            front
                .submit(vendor, session, message("after the crash"))
                .await,
            200
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_approver_decision_made_through_two_processes_appends_one_accept() {
    let d = three().await;
    let hosts = remotes(&d);
    let admin = &d.admin;
    let org = admin.create_org("Fabrikam").await.unwrap().org_handle;
    let policy = json!({
        "max_rounds": 0, "concession_per_round": "0", "skus": {},
        "approval": { "above_total": "100000", "approvers_required": 2 },
        "may_discuss": ["pricing"], "may_disclose": [], "will_not_disclose": [],
        "secret_values": []
    });
    admin.load_policy(&org, &policy.to_string()).await.unwrap();
    let ada_code = admin
        .enroll_code(&org, "Ada", "ada@fabrikam.example")
        .await
        .unwrap()
        .code;
    let grace_code = admin
        .enroll_code(&org, "Grace", "grace@fabrikam.example")
        .await
        .unwrap()
        .code;
    let ada = hosts[0]
        .enroll(&ada_code, "Ada", "ada@fabrikam.example")
        .await;
    let grace = hosts[1]
        .enroll(&grace_code, "Grace", "grace@fabrikam.example")
        .await;
    let vendor = hosts[2].register().await;
    admin.verify_agent(&vendor.id).await.unwrap();

    // Five offers; each time both approvers decide at the same moment, Ada
    // through one process and Grace through another.
    for round in 0..5 {
        let (s, opened) = hosts[2]
            .json(
                &vendor,
                "POST",
                "/api/agent/v1/sessions",
                &json!({ "target": { "org_handle": org }, "envelope": vendor_envelope() }),
            )
            .await;
        assert_eq!(s, 201, "{opened}");
        let session = opened["session_id"].as_str().unwrap().to_owned();
        let offered = offer(1200, FAR_FUTURE);
        let (s, _) = hosts[2]
            .json(&vendor, "POST", &events_path(&session), &json!({ "kind": "offer", "payload": offered, "signature": vendor.authorship("offer", &offered) }))
            .await;
        assert_eq!(s, 200);
        let (_, summary) = hosts[0]
            .json(&ada, "GET", "/api/console/v1/summary", &Value::Null)
            .await;
        let hash = summary["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == session.as_str())
            .unwrap()["pending"][0]["event_hash"]
            .as_str()
            .unwrap()
            .to_owned();
        let now = anp::api::format_timestamp(time::OffsetDateTime::now_utc());
        let decision = |who: &Party| json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": who.approval(&hash, &now) });
        let (ada_body, grace_body) = (decision(&ada), decision(&grace));
        let path = format!("/api/console/v1/sessions/{session}/decisions");
        let ((sa, ra), (sg, rg)) = tokio::join!(
            hosts[0].json(&ada, "POST", &path, &ada_body),
            hosts[1].json(&grace, "POST", &path, &grace_body),
        );
        assert_eq!((sa, sg), (200, 200), "{ra} {rg}");
        let mut outcomes = [
            ra["outcome"].as_str().unwrap(),
            rg["outcome"].as_str().unwrap(),
        ];
        outcomes.sort();
        assert_eq!(
            outcomes,
            ["appended", "awaiting_approvals"],
            "round {round}: {ra} {rg}"
        );
        // The same decision again, through the third process: the first
        // outcome again, nothing appended.
        let (s, again) = hosts[2].json(&grace, "POST", &path, &grace_body).await;
        assert_eq!(s, 200);
        assert_eq!(again["outcome"], rg["outcome"]);
        let doc = hosts[2].log(&vendor, &session).await;
        let accepts: Vec<&anp::Event> = doc
            .events
            .iter()
            .filter(|e| e.kind == anp::EventKind::Accept)
            .collect();
        assert_eq!(accepts.len(), 1, "round {round}: exactly one accept");
        let approvals = 1 + accepts[0].payload["approvals"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(approvals, 2, "both approvals in the accept");
        check_log(&doc, &session, &[]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_holds_for_the_whole_deployment() {
    let d = match Deployment::start_with(binary(), 3, &[("--limit-agent", "10")]).await {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    let hosts = remotes(&d);
    let vendor = hosts[0].register().await;
    let path = "/api/agent/v1/sessions/no-such-session";
    // The shared counters are fixed windows aligned to the minute
    // (docs: "rate limits hold for the whole deployment"): start well
    // inside one, so that all 15 requests count in the same window. (Near
    // a minute's end they straddled two, and none was limited.)
    let into = time::OffsetDateTime::now_utc()
        .unix_timestamp()
        .rem_euclid(60);
    if into > 40 {
        tokio::time::sleep(std::time::Duration::from_secs((61 - into) as u64)).await;
    }
    let mut statuses = Vec::new();
    for n in 0..15 {
        let (s, _) = hosts[n % 3].send(&vendor, "GET", path, Vec::new()).await;
        statuses.push(s);
    }
    // 10 signed requests pass the limit (and get the uniform refusal for the
    // unknown session); the next five are limited, whichever process they reach.
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        10,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        5,
        "{statuses:?}"
    );
    let other = hosts[1].register().await;
    assert_eq!(
        hosts[2].send(&other, "GET", path, Vec::new()).await.0,
        401,
        "another agent is not limited"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_process_signs_with_the_one_platform_key() {
    let d = three().await;
    let mut fingerprints = Vec::new();
    for host in &d.hosts {
        let wk: anp::api::WellKnown = reqwest::get(format!("{}/.well-known/anp.json", host.url()))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        fingerprints.push(wk.platform_keys[0].fingerprint.clone());
    }
    assert_eq!(
        fingerprints,
        vec![d.admin.platform_fingerprint().to_owned(); 3]
    );

    // A copy of the key readable by others is refused, naming the fix.
    let copy = d.key_path.with_file_name("copy.json");
    std::fs::copy(&d.key_path, &copy).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .args([
            "--db",
            &d.db_url,
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--platform-key",
        ])
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("chmod 600"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without a key file, PostgreSQL refuses to guess one.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_countersign-host"))
        .env_remove("COUNTERSIGN_HOST_PLATFORM_KEY")
        .args(["--db", &d.db_url, "serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("platform key file must be named"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn register_from(client: &reqwest::Client, base: &str, forwarded_for: Option<&str>) -> u16 {
    let key = anp::keys::generate_signing_key();
    let pk = anp::keys::public_key_b64(&key.verifying_key());
    let proof = anp::keys::sign_b64(&key, anp::signed::registration_proof_string(&pk).as_bytes());
    let body = json!({ "agent_name": "A", "vendor_name": "V", "contact_email": "a@v.example", "public_key": pk, "proof": proof });
    let mut req = client
        .post(format!("{base}/api/agent/v1/register"))
        .json(&body);
    if let Some(xff) = forwarded_for {
        req = req.header("x-forwarded-for", xff);
    }
    req.send().await.unwrap().status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_nginx_the_per_ip_limits_count_each_client_not_nginx() {
    let d = match Deployment::start_with(
        binary(),
        3,
        &[
            ("--limit-registration", "2"),
            ("--trusted-proxy", "127.0.0.1"),
        ],
    )
    .await
    {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    // Two clients on two loopback addresses, both through nginx.
    let from = |ip: [u8; 4]| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from(ip))
            .build()
            .unwrap()
    };
    let (a, b) = (from([127, 0, 0, 2]), from([127, 0, 0, 3]));
    let front = d.url();
    let mut seen = Vec::new();
    for client in [&a, &b] {
        for _ in 0..3 {
            seen.push(register_from(client, &front, None).await);
        }
    }
    assert_eq!(
        seen,
        [201, 201, 429, 201, 201, 429],
        "two registrations per client per minute"
    );
    // nginx sets the header itself: a client cannot pick its own address.
    assert_eq!(register_from(&a, &front, Some("10.9.9.9")).await, 429);
    // A host ignores the header from anyone but the trusted proxy.
    let direct = d.hosts[0].url();
    assert_eq!(register_from(&a, &direct, Some("10.1.1.1")).await, 429);
    let c = from([127, 0, 0, 4]);
    assert_eq!(
        register_from(&c, &direct, Some("127.0.0.2")).await,
        201,
        "counted as 127.0.0.4"
    );
}

/// A vendor with a sandbox session and Ada, an approver of the sandbox,
/// enrolled through process 0; her summary's tag now.
async fn waiting_setup(
    d: &Deployment,
    hosts: &[Arc<RemoteHost>],
) -> (Party, String, Party, String) {
    let vendor = hosts[2].register().await;
    d.admin.verify_agent(&vendor.id).await.unwrap();
    let session = hosts[2].open(&vendor).await;
    let code = d
        .admin
        .enroll_code(
            countersign_host::SANDBOX_HANDLE,
            "Ada",
            "ada@fabrikam.example",
        )
        .await
        .unwrap()
        .code;
    let ada = hosts[0].enroll(&code, "Ada", "ada@fabrikam.example").await;
    let (status, tag, _) = hosts[0].summary_tagged(&ada).await;
    assert_eq!(status, 200);
    (vendor, session, ada, tag)
}

/// Appends an offer to `session` through `host`.
async fn offer_through(host: &RemoteHost, vendor: &Party, session: &str, total: u64) {
    let offered = offer(total, FAR_FUTURE);
    let (s, body) = host
        .json(
            vendor,
            "POST",
            &events_path(session),
            &json!({ "kind": "offer", "payload": offered, "signature": vendor.authorship("offer", &offered) }),
        )
        .await;
    assert_eq!(s, 200, "{body}");
}

/// What a waiting summary answered: it must be the new summary, carrying
/// the offer of `session` (a `304` is the wait running out unwoken).
fn assert_woken(answer: &(u16, Option<String>, Vec<u8>), tag: &str, session: &str, who: &str) {
    let (status, moved, body) = answer;
    assert_eq!(
        *status, 200,
        "{who}: the offer did not wake the console waiting there"
    );
    assert_ne!(moved.as_deref(), Some(tag), "{who}");
    let summary: Value = serde_json::from_slice(body).unwrap();
    let pending = summary["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session)
        .map(|s| s["pending"].as_array().unwrap().len());
    assert_eq!(pending, Some(1), "{who}: the answer carries the offer");
}

/// Settles before the write a waiting request must be woken by: the host
/// processes are other processes, whose waiters a test cannot count. A
/// request not yet waiting when the write lands sees it at once all the
/// same; only the wake-up's absence turns the answer into a `304`.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(400)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_waiting_on_one_process_hears_of_an_offer_appended_through_another() {
    let d = three().await;
    let hosts = remotes(&d);
    let (vendor, session, ada, tag) = waiting_setup(&d, &hosts).await;
    let front = RemoteHost::new(d.url());
    // Ada waits at each process and through nginx; the offer is appended
    // through process 1 only. Without LISTEN/NOTIFY only process 1's
    // waiter would hear of it; the others would sit out their 30 s: 304.
    let ((a, b, c, through_nginx), ()) = tokio::join!(
        async {
            tokio::join!(
                hosts[0].summary_waiting(&ada, &tag, 30),
                hosts[1].summary_waiting(&ada, &tag, 30),
                hosts[2].summary_waiting(&ada, &tag, 30),
                front.summary_waiting(&ada, &tag, 30),
            )
        },
        async {
            settle().await;
            offer_through(&hosts[1], &vendor, &session, 100).await;
        }
    );
    assert_woken(&a, &tag, &session, "process 0");
    assert_woken(&b, &tag, &session, "process 1 (the appending one)");
    assert_woken(&c, &tag, &session, "process 2");
    assert_woken(&through_nginx, &tag, &session, "through nginx");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_whose_listening_connection_dropped_listens_again_and_misses_nothing() {
    let d = three().await;
    let hosts = remotes(&d);
    let (vendor, session, ada, tag) = waiting_setup(&d, &hosts).await;
    let (db, connection) = tokio_postgres::connect(&d.db_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    // Every process's listening connection is ended by the server while Ada
    // waits at process 0, and the offer is appended through process 1 before
    // any could listen again: its announcement reaches no one. Process 0
    // hears of it only because it wakes its waiters once it listens again.
    let (waited, ()) = tokio::join!(hosts[0].summary_waiting(&ada, &tag, 30), async {
        settle().await;
        let ended = db
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE datname = current_database() AND query = 'LISTEN countersign_changes'",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(ended.len(), 3, "one listening connection per process");
        offer_through(&hosts[1], &vendor, &session, 100).await;
    });
    assert_woken(
        &waited,
        &tag,
        &session,
        "process 0, after its listener dropped",
    );
    // And it listens again: the next offer, through process 2, reaches a
    // console waiting at process 0 by its announcement.
    let (_, now_tag, _) = hosts[0].summary_tagged(&ada).await;
    let second = hosts[2].open(&vendor).await;
    let (_, newer, _) = hosts[0].summary_tagged(&ada).await;
    assert_ne!(now_tag, newer, "a new session moves the summary");
    let (waited, ()) = tokio::join!(hosts[0].summary_waiting(&ada, &newer, 30), async {
        settle().await;
        offer_through(&hosts[2], &vendor, &second, 200).await;
    });
    assert_woken(&waited, &newer, &second, "process 0, listening again");
}
