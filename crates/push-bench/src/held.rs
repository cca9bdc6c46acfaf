//! What consoles that wait cost one host process (issue 32, item 5): its
//! memory per waiting console, and its append throughput with none waiting,
//! with `N` waiting in another organization (the held connections alone)
//! and with `N` waiting in the organization the appends go to (each append
//! changes what every one of them sees, so each answers and asks again).
//!
//! One host process on SQLite, this binary re-run, at the host's default
//! connection bounds; the consoles are approver clients that each hold one
//! waiting summary request on a connection of its own, as a console does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anp::api::Target;
use anp::EventKind;
use countersign_client::{
    default_envelope, AgentClient, ApproverClient, ClientConfig, RetryPolicy, SummaryFetch,
};
use countersign_host::{Host, HostConfig};
use countersign_testkit::deployment::{roomy_limits, spawn_one, HostProcess, Launch};
use tokio::sync::Semaphore;

/// How long a console asks the host to hold its request (the console's own).
const WAIT: u64 = countersign_engine::WAIT_SECONDS;
/// How long consoles get to start waiting before the count is taken.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// One phase's figures.
pub struct Phase {
    /// What was waiting.
    pub name: String,
    /// Consoles that had an answer and hold a waiting request.
    pub holding: u64,
    /// Consoles asked to wait.
    pub asked: usize,
    /// The host process's resident memory after the load, KiB.
    pub rss_kib: u64,
    /// Appends per second.
    pub rate: f64,
    /// Failed appends.
    pub errors: usize,
    /// Append latency, ms.
    pub p50_ms: f64,
    /// Append latency, ms.
    pub p99_ms: f64,
    /// Answers the consoles received during the load.
    pub console_answers: u64,
}

/// What the held-connections part prints.
pub struct Held {
    /// The phases, none waiting first.
    pub phases: Vec<Phase>,
    /// The host's connection bound in force.
    pub note: String,
}

/// Runs the three phases against one fresh host process.
pub async fn run(waiting: usize, seconds: u64, agents: u32) -> Result<Held, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let db = dir.path().join("held.sqlite3");
    let key = dir.path().join("platform-key.json");
    // The admin opens first: it migrates and makes the key the process loads.
    let admin = Host::open(
        db.as_path(),
        HostConfig {
            platform_key_path: Some(key.clone()),
            limits: roomy_limits(),
            ..HostConfig::default()
        },
    )
    .await
    .map_err(|e| format!("opening the host's database: {e}"))?;
    let db_text = db
        .to_str()
        .ok_or("the temporary directory's path is not UTF-8")?;
    let process = spawn_one(
        &Launch::ThisBinary(vec!["--as-host-process".into()]),
        db_text,
        &key,
    )?;
    let url = process.url();
    let load = Load::prepare(&admin, &url, agents).await?;

    // Each phase's appends go to an organization of their own, so that no
    // phase inherits another's sessions (a console's summary lists every
    // session of its organization).
    let mut phases = Vec::new();
    // A first short load warms the process (allocator, statement caches).
    load.run(&org(&admin, "Warm-up").await?, Duration::from_secs(2))
        .await;
    let alone = org(&admin, "Northwind Buying").await?;
    phases.push(phase("none waiting", &process, &load, &alone, seconds, None).await?);

    let elsewhere = org(&admin, "Contoso Elsewhere").await?;
    let other = Consoles::start(&admin, &url, &elsewhere, waiting).await?;
    let beside = org(&admin, "Fabrikam Buying").await?;
    phases.push(
        phase(
            &format!("{waiting} waiting, another org"),
            &process,
            &load,
            &beside,
            seconds,
            Some(&other),
        )
        .await?,
    );
    other.stop().await;

    let watched = org(&admin, "Tailspin Buying").await?;
    let same = Consoles::start(&admin, &url, &watched, waiting).await?;
    phases.push(
        phase(
            &format!("{waiting} waiting, the same org"),
            &process,
            &load,
            &watched,
            seconds,
            Some(&same),
        )
        .await?,
    );
    same.stop().await;
    // The same load again with none waiting: how far the machine drifted
    // over the run (these machines are shared).
    let again = org(&admin, "Wingtip Buying").await?;
    phases.push(
        phase(
            "none waiting, again",
            &process,
            &load,
            &again,
            seconds,
            None,
        )
        .await?,
    );
    drop(process);
    Ok(Held {
        phases,
        note: format!(
            "one host process on SQLite at the default bounds (--max-connections {}, open-file limit raised to {})",
            countersign_host::Connections::default().max_connections,
            rlimit::getrlimit(rlimit::Resource::NOFILE)
                .map_or("unknown".into(), |(_, hard)| hard.to_string())
        ),
    })
}

/// Prints the table.
pub fn print(held: &Held) {
    println!();
    println!("held connections: {}", held.note);
    println!(
        "{:<30} {:>15} {:>9} {:>12} {:>10} {:>7} {:>8} {:>8} {:>7} {:>16}",
        "consoles",
        "holding/asked",
        "RSS MiB",
        "KiB/console",
        "appends/s",
        "ratio",
        "p50 ms",
        "p99 ms",
        "errors",
        "console answers"
    );
    let base = held.phases.first().map(|p| (p.rss_kib, p.rate));
    for p in &held.phases {
        let per_console = match base {
            Some((rss, _)) if p.holding > 0 => {
                format!("{:.1}", (p.rss_kib as f64 - rss as f64) / p.holding as f64)
            }
            _ => "-".into(),
        };
        let ratio = base.map_or(f64::NAN, |(_, rate)| p.rate / rate);
        println!(
            "{:<30} {:>15} {:>9.1} {:>12} {:>10.0} {:>7.2} {:>8.1} {:>8.1} {:>7} {:>16}",
            p.name,
            format!("{}/{}", p.holding, p.asked),
            p.rss_kib as f64 / 1024.0,
            per_console,
            p.rate,
            ratio,
            p.p50_ms,
            p.p99_ms,
            p.errors,
            p.console_answers
        );
    }
    println!(
        "ratio: appends/s beside none waiting, same run; KiB/console: the host's resident memory over the baseline, per console holding a request"
    );
}

async fn org(admin: &Host, name: &str) -> Result<String, String> {
    Ok(admin
        .create_org(name)
        .await
        .map_err(|e| format!("creating {name}: {e}"))?
        .org_handle)
}

/// Runs one load with `consoles` (if any) waiting.
async fn phase(
    name: &str,
    process: &HostProcess,
    load: &Load,
    org_handle: &str,
    seconds: u64,
    consoles: Option<&Consoles>,
) -> Result<Phase, String> {
    let before = consoles.map_or(0, |c| c.answers.load(Ordering::Relaxed));
    let ran = load.run(org_handle, Duration::from_secs(seconds)).await;
    let after = consoles.map_or(0, |c| c.answers.load(Ordering::Relaxed));
    // Read after the load, as for the baseline: what the consoles add to a
    // process that has served the same appends.
    let rss_kib = rss_kib(process.child.id())?;
    let in_ms: Vec<f64> = ran
        .latencies
        .iter()
        .map(|d| d.as_secs_f64() * 1000.0)
        .collect();
    let (p50_ms, p99_ms, _) = crate::percentiles(&in_ms);
    Ok(Phase {
        name: name.to_owned(),
        holding: consoles.map_or(0, |c| c.holding.load(Ordering::Relaxed)),
        asked: consoles.map_or(0, |c| c.tasks.len()),
        rss_kib,
        rate: ran.latencies.len() as f64 / ran.elapsed.as_secs_f64(),
        errors: ran.errors,
        p50_ms,
        p99_ms,
        console_answers: after.saturating_sub(before),
    })
}

/// Verified vendor agents.
struct Load {
    agents: Vec<(Arc<AgentClient>, String)>,
}

/// Messages an agent appends to one session before it opens another (a
/// vendor's append is answered with the session's whole log, so a session
/// that grew without bound would measure its own length).
const PER_SESSION: u64 = 50;

/// One load's outcome.
struct Ran {
    latencies: Vec<Duration>,
    errors: usize,
    elapsed: Duration,
}

impl Load {
    async fn prepare(admin: &Host, url: &str, agents: u32) -> Result<Load, String> {
        let mut prepared = Vec::new();
        for index in 0..agents {
            let key = anp::keys::generate_signing_key();
            let name = format!("Load Agent {index}");
            let registered =
                AgentClient::register(url, &key, &name, "Northwind", "sales@northwind.example")
                    .await
                    .map_err(|e| format!("registering a vendor agent: {e}"))?;
            // A person at the host verified it: live targets need that.
            admin
                .verify_agent(&registered.agent_id)
                .await
                .map_err(|e| format!("verifying a vendor agent: {e}"))?;
            let client = AgentClient::with_config(
                url,
                key,
                &registered.agent_id,
                ClientConfig {
                    retry: RetryPolicy::none(),
                    ..ClientConfig::default()
                },
            )
            .map_err(|e| e.to_string())?;
            prepared.push((Arc::new(client), name));
        }
        Ok(Load { agents: prepared })
    }

    /// Every agent appends messages to sessions with `org_handle` as fast
    /// as the host answers, for `for_`, a fresh session every
    /// [`PER_SESSION`] (opening one is not timed).
    async fn run(&self, org_handle: &str, for_: Duration) -> Ran {
        let started = Instant::now();
        let deadline = started + for_;
        let mut tasks = Vec::new();
        for (client, name) in &self.agents {
            let (client, name, org_handle) =
                (Arc::clone(client), name.clone(), org_handle.to_owned());
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0;
                let mut n = 0u64;
                let mut session = None;
                while Instant::now() < deadline {
                    if n.is_multiple_of(PER_SESSION) {
                        let opened = client
                            .open_session(
                                Target::Org {
                                    org_handle: org_handle.clone(),
                                },
                                default_envelope("Northwind", &name, "sales@northwind.example"),
                            )
                            .await;
                        match opened {
                            Ok(opened) => session = Some(opened.session_id),
                            Err(_) => {
                                errors += 1;
                                continue;
                            }
                        }
                    }
                    n += 1;
                    let Some(session) = session.as_deref() else {
                        break;
                    };
                    let body =
                        serde_json::json!({ "subject": "held", "body": format!("message {n}") });
                    let sent = Instant::now();
                    match client.submit(session, EventKind::Message, body).await {
                        Ok(_) => latencies.push(sent.elapsed()),
                        Err(_) => errors += 1,
                    }
                }
                (latencies, errors)
            }));
        }
        let mut ran = Ran {
            latencies: Vec::new(),
            errors: 0,
            elapsed: Duration::ZERO,
        };
        for task in tasks {
            if let Ok((latencies, errors)) = task.await {
                ran.latencies.extend(latencies);
                ran.errors += errors;
            } else {
                ran.errors += 1;
            }
        }
        ran.elapsed = started.elapsed();
        ran.latencies.sort();
        ran
    }
}

/// Approvers of one org, each holding a waiting summary request.
struct Consoles {
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Consoles that had their first answer and now wait.
    holding: Arc<AtomicU64>,
    /// Answers to waiting requests (a change, or the wait's end).
    answers: Arc<AtomicU64>,
}

impl Consoles {
    /// Enrolls `n` approvers of `org_handle` and starts each waiting; returns
    /// once all hold a request or [`READY_WITHIN`] passed.
    async fn start(
        admin: &Host,
        url: &str,
        org_handle: &str,
        n: usize,
    ) -> Result<Consoles, String> {
        let holding = Arc::new(AtomicU64::new(0));
        let answers = Arc::new(AtomicU64::new(0));
        let enrolling = Arc::new(Semaphore::new(16));
        let mut tasks = Vec::with_capacity(n);
        for i in 0..n {
            let email = format!("approver{i}@{org_handle}.example");
            let code = admin
                .enroll_code(org_handle, &format!("Approver {i}"), &email)
                .await
                .map_err(|e| format!("an enrollment code: {e}"))?
                .code;
            let (url, holding, answers, enrolling) = (
                url.to_owned(),
                Arc::clone(&holding),
                Arc::clone(&answers),
                Arc::clone(&enrolling),
            );
            tasks.push(tokio::spawn(async move {
                let key = anp::keys::generate_signing_key();
                let enrolled = {
                    let _turn = enrolling.acquire().await;
                    ApproverClient::enroll(&url, &code, "Approver", &email, &key).await
                };
                let Ok(enrolled) = enrolled else { return };
                let config = ClientConfig {
                    retry: RetryPolicy::none(),
                    timeout: Duration::from_secs(30),
                    ..ClientConfig::default()
                };
                let Ok(client) =
                    ApproverClient::with_config(&url, key, &enrolled.approver_id, config)
                else {
                    return;
                };
                let mut tag = match client.summary_since(None).await {
                    Ok(SummaryFetch::Changed {
                        etag: Some(etag), ..
                    }) => etag,
                    _ => return,
                };
                holding.fetch_add(1, Ordering::Relaxed);
                loop {
                    match client.summary_waiting(&tag, WAIT).await {
                        Ok(SummaryFetch::Changed {
                            etag: Some(etag), ..
                        }) => tag = etag,
                        Ok(_) => {}
                        Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
                    }
                    answers.fetch_add(1, Ordering::Relaxed);
                }
            }));
        }
        let started = Instant::now();
        while (holding.load(Ordering::Relaxed) as usize) < n && started.elapsed() < READY_WITHIN {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The last ones' waiting requests are on their way.
        tokio::time::sleep(Duration::from_secs(2)).await;
        Ok(Consoles {
            tasks,
            holding,
            answers,
        })
    }

    /// Stops every console (its connection closes with its client).
    async fn stop(self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A process's resident memory, KiB (Linux).
fn rss_kib(pid: u32) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("reading the host process's memory: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| "the host process's status has no VmRSS".to_owned())
}
