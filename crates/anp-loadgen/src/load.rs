//! The load itself: agents register and open a sandbox session each, wait
//! for one another, then submit signed messages as fast as the host answers,
//! each append verified by the client against its pinned head.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anp::api::Target;
use anp::EventKind;
use countersign_client::{default_envelope, AgentClient, ClientConfig, RetryPolicy};
use countersign_host::{Durability, Host, HostConfig, Limit, Limits, RunningHost};
use serde_json::json;
use tokio::sync::Barrier;

/// What to run.
pub struct Plan {
    /// The host's base URL; with `spread`, agent `i` talks to
    /// `spread[i % spread.len()]` instead.
    pub base_url: String,
    /// Base URLs to spread the agents over (empty: all use `base_url`).
    pub spread: Vec<String>,
    /// Concurrent agents.
    pub agents: u32,
    /// Appends per agent.
    pub events: u32,
    /// Appends per session before a fresh session.
    pub per_session: u32,
    /// Longest append phase.
    pub budget: Duration,
}

/// What happened.
pub struct Outcome {
    /// One latency per acknowledged, verified append, sorted.
    pub latencies: Vec<Duration>,
    /// Appends that failed.
    pub errors: usize,
    /// The first failure, for the report.
    pub first_error: Option<String>,
    /// Wall time of the append phase.
    pub elapsed: Duration,
}

/// Spawns a host on 127.0.0.1:0 whose rate limits do not throttle the load
/// (every agent shares one IP), with the given durability.
pub async fn spawn_host(
    db: &Path,
    durability: Durability,
) -> Result<RunningHost, countersign_host::HostError> {
    let roomy = Limit {
        max: u32::MAX / 2,
        window: Duration::from_secs(60),
    };
    let config = HostConfig {
        limits: Limits {
            per_ip: roomy,
            per_agent: roomy,
            per_session: roomy,
            registration: roomy,
            ..Limits::default()
        },
        durability,
        ..HostConfig::default()
    };
    Host::open(db, config).await?.spawn("127.0.0.1:0").await
}

/// Runs the plan; fails only when no agent could start.
pub async fn run(plan: &Plan) -> Result<Outcome, String> {
    run_with(plan, async {}).await.map(|(outcome, ())| outcome)
}

/// Runs the plan, awaiting `at_start` once every agent is ready and before
/// any appends (no request is in flight then); answers what it answered.
pub async fn run_with<T>(
    plan: &Plan,
    at_start: impl std::future::Future<Output = T>,
) -> Result<(Outcome, T), String> {
    let ready = Arc::new(Barrier::new(plan.agents as usize + 1));
    let go = Arc::new(Barrier::new(plan.agents as usize + 1));
    let mut tasks = Vec::new();
    for index in 0..plan.agents {
        let (ready, go) = (ready.clone(), go.clone());
        let base_url = if plan.spread.is_empty() {
            plan.base_url.clone()
        } else {
            plan.spread[index as usize % plan.spread.len()].clone()
        };
        let (events, per_session, budget) = (plan.events, plan.per_session, plan.budget);
        tasks.push(tokio::spawn(async move {
            let prepared = prepare(&base_url, index).await;
            ready.wait().await;
            go.wait().await;
            let (client, session) = prepared?;
            Ok::<_, String>(append_many(&client, session, events, per_session, budget).await)
        }));
    }
    ready.wait().await;
    let at_start = at_start.await;
    go.wait().await;
    let started = Instant::now();
    let mut outcome = Outcome {
        latencies: Vec::new(),
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
    };
    let mut started_agents = 0;
    let mut setup_error = None;
    for task in tasks {
        match task.await {
            Ok(Ok(agent)) => {
                started_agents += 1;
                outcome.latencies.extend(agent.latencies);
                outcome.errors += agent.errors;
                if outcome.first_error.is_none() {
                    outcome.first_error = agent.first_error;
                }
            }
            Ok(Err(e)) => setup_error = Some(e),
            Err(e) => setup_error = Some(format!("an agent task failed: {e}")),
        }
    }
    outcome.elapsed = started.elapsed();
    outcome.latencies.sort();
    if started_agents == 0 {
        return Err(setup_error.unwrap_or_else(|| "no agents".to_owned()));
    }
    if let Some(e) = setup_error {
        outcome.errors += 1;
        outcome.first_error.get_or_insert(e);
    }
    Ok((outcome, at_start))
}

/// Registers a fresh agent and opens its first session.
async fn prepare(base_url: &str, index: u32) -> Result<(AgentClient, String), String> {
    let key = anp::keys::generate_signing_key();
    let name = format!("Load Agent {index}");
    let registered = AgentClient::register(
        base_url,
        &key,
        &name,
        "Loadgen Vendor",
        "load@vendor.example",
    )
    .await
    .map_err(|e| e.to_string())?;
    let config = ClientConfig {
        retry: RetryPolicy::none(),
        ..ClientConfig::default()
    };
    let client = AgentClient::with_config(base_url, key, &registered.agent_id, config)
        .map_err(|e| e.to_string())?;
    let session = open(&client, &name).await?;
    Ok((client, session))
}

async fn open(client: &AgentClient, name: &str) -> Result<String, String> {
    client
        .open_session(
            Target::Sandbox { sandbox: true },
            default_envelope("Loadgen Vendor", name, "load@vendor.example"),
        )
        .await
        .map(|opened| opened.session_id)
        .map_err(|e| e.to_string())
}

struct AgentOutcome {
    latencies: Vec<Duration>,
    errors: usize,
    first_error: Option<String>,
}

async fn append_many(
    client: &AgentClient,
    mut session: String,
    events: u32,
    per_session: u32,
    budget: Duration,
) -> AgentOutcome {
    let deadline = Instant::now() + budget;
    let mut out = AgentOutcome {
        latencies: Vec::with_capacity(events as usize),
        errors: 0,
        first_error: None,
    };
    let mut in_session = 0;
    for n in 0..events {
        if Instant::now() >= deadline {
            break;
        }
        if in_session == per_session {
            match open(client, "Load Agent").await {
                Ok(fresh) => session = fresh,
                Err(e) => {
                    out.errors += 1;
                    out.first_error.get_or_insert(e);
                    break;
                }
            }
            in_session = 0;
        }
        let payload =
            json!({ "subject": "load", "body": format!("message {n} from the load generator") });
        let sent = Instant::now();
        match client.submit(&session, EventKind::Message, payload).await {
            Ok(_) => out.latencies.push(sent.elapsed()),
            Err(e) => {
                out.errors += 1;
                out.first_error.get_or_insert(e.to_string());
            }
        }
        in_session += 1;
    }
    out
}
