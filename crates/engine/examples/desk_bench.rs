//! Desk benchmark: fills a console store with SESSIONS sessions (default
//! 10,000) from COUNTERPARTIES counterparties (1,000), EVENTS events each
//! (10: 100,000 in all), most of them bargained to an agreement and
//! approved, then opens the desk and a counterparty's page as the console
//! does and prints the times and the process's memory (PSS).
//!
//! `cargo run --release -p countersign-engine --example desk_bench`
//!
//! `DESK_BENCH_DIR=DIR` fills DIR (new or empty) and keeps it, to open the
//! real app on it (`COUNTERSIGN_DATA_DIR=DIR`) and measure all its
//! processes.
//!
//! The first open reads every session's records once (what a console
//! upgraded onto an existing store does, once); every later open reads the
//! figures kept per session. A poll that changes a session forgets only
//! that session's figures.

use std::time::{Duration, Instant};

use countersign_engine::store::{DecisionRecord, HostRecord, SessionRecord, Store, StoredEvent};
use countersign_engine::{
    ApproverProfile, Counterparty, DeskFigure, DeskQuery, Engine, EngineConfig, KeyStoreChoice,
    SandboxMode, Verification, DATABASE_FILE,
};
use serde_json::json;
use time::OffsetDateTime;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Proportional set size of this process, MB (Linux: smaps_rollup).
fn pss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Pss:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

fn hex(text: &str) -> String {
    jcs::sha256_hex(text.as_bytes())
}

fn time_text(at: OffsetDateTime) -> String {
    countersign_engine::format_time(at)
}

fn offer(price: u64, expires: OffsetDateTime) -> serde_json::Value {
    json!({
        "currency": "USD", "term_months": 12,
        "expires_at": anp::api::format_timestamp(expires),
        "line_items": [{ "sku": "CRM-ENT", "description": "CRM seats", "quantity": 500,
                         "unit": "seat/year", "unit_price": price, "currency": "USD" }]
    })
}

/// One ANP event as the console stores it.
fn event(
    session: &str,
    seq: u64,
    actor: &str,
    kind: &str,
    payload: serde_json::Value,
    signer: &str,
    at: OffsetDateTime,
) -> StoredEvent {
    let hash = hex(&format!("{session}/{seq}"));
    let body = json!({
        "seq": seq, "actor": actor, "kind": kind, "payload": payload,
        "payload_hash": hex(&payload.to_string()),
        "prev_hash": if seq == 1 { "0".repeat(64) } else { hex(&format!("{session}/{}", seq - 1)) },
        "event_hash": hash, "signature": null, "signer": signer, "at": time_text(at),
    });
    StoredEvent {
        seq,
        event_hash: hash,
        actor: actor.to_owned(),
        kind: kind.to_owned(),
        at: time_text(at),
        body: body.to_string(),
        signature_state: "verified".to_owned(),
    }
}

fn fill(store: &mut Store, sessions: usize, counterparties: usize, events: usize) {
    let start = OffsetDateTime::now_utc() - time::Duration::days(365);
    let expires = OffsetDateTime::now_utc() + time::Duration::days(30);
    let host = HostRecord {
        host_id: "host-bench".into(),
        protocol: anp::PROTOCOL.into(),
        url: "https://host.bench.example".into(),
        label: "Bench host".into(),
        sandbox: false,
        approver_id: "apr_bench".into(),
        approver_email: "ann@fabrikam.example".into(),
        platform_key: "platform".into(),
        platform_fingerprint: hex("platform"),
        approver_keys: "[]".into(),
        reachable: true,
        last_error: None,
        last_poll_at: None,
        plain_http_allowed_at: None,
        key_fingerprint: None,
    };
    store
        .transaction(|s| {
            s.insert_host(&host, &time_text(start))?;
            for i in 0..sessions {
                let c = i % counterparties;
                let session_id = format!("ses_{i:06}");
                let vendor_key = hex(&format!("vendor key {c}"));
                let opened = start + time::Duration::minutes(50 * i as i64);
                let agreed = i % 5 != 0;
                let mut list = Vec::with_capacity(events);
                let mut price = 1200 + (i % 7) as u64 * 10;
                let mut last_offer = String::new();
                let mut last_total = 0;
                for seq in 1..=events as u64 {
                    let at = opened + time::Duration::minutes(seq as i64 * 7);
                    let last = seq == events as u64;
                    let e = if last && agreed {
                        event(
                            &session_id,
                            seq,
                            "buyer",
                            "accept",
                            json!({"in_response_to": last_offer}),
                            &host.platform_fingerprint,
                            at,
                        )
                    } else if seq % 2 == 1 {
                        price -= 10;
                        last_total = price * 500;
                        let e = event(
                            &session_id,
                            seq,
                            "vendor_agent",
                            "offer",
                            offer(price, expires),
                            &vendor_key,
                            at,
                        );
                        last_offer = e.event_hash.clone();
                        e
                    } else {
                        event(
                            &session_id,
                            seq,
                            "buyer",
                            "counter_offer",
                            offer(price - 40, expires),
                            &host.platform_fingerprint,
                            at,
                        )
                    };
                    list.push(e);
                }
                let head = list
                    .last()
                    .map(|e| e.event_hash.clone())
                    .unwrap_or_default();
                s.upsert_session(&SessionRecord {
                    host_id: host.host_id.clone(),
                    session_id: session_id.clone(),
                    protocol: anp::PROTOCOL.into(),
                    status: if agreed { "accepted" } else { "open" }.into(),
                    sandbox: false,
                    counterparty: Counterparty {
                        id: format!("agt_{c:04}"),
                        name: format!("Vendor {c} Agent"),
                        organization: Some(format!("Vendor {c}")),
                        fingerprint: vendor_key.clone(),
                        status: "verified".into(),
                        verified: Some(true),
                    },
                    pin_seq: events as u64,
                    pin_hash: head.clone(),
                    remote_count: events as u64,
                    remote_head: head,
                    verification: Verification::Verified,
                    dispute_detail: None,
                    failing_seq: None,
                    failing_checks: Vec::new(),
                    unproven: Vec::new(),
                    last_total: Some(last_total.to_string()),
                    currency: Some("USD".into()),
                    updated_at: time_text(opened),
                    pinned_keys: "{}".into(),
                })?;
                s.insert_events(&host.host_id, &session_id, &list)?;
                if agreed {
                    let answered = &list[list.len() - 2];
                    s.insert_decision(&DecisionRecord {
                        decision_id: format!("dec_{i:06}"),
                        host_id: host.host_id.clone(),
                        session_id: session_id.clone(),
                        in_response_to: last_offer.clone(),
                        action: "approve".into(),
                        body: "{}".into(),
                        headers: None,
                        outcome: "appended".into(),
                        detail: String::new(),
                        at: time_text(
                            OffsetDateTime::parse(
                                &answered.at,
                                &time::format_description::well_known::Rfc3339,
                            )
                            .unwrap_or(opened)
                                + time::Duration::seconds(60 + (i % 3600) as i64),
                        ),
                        proposal: None,
                        appended: None,
                        key_fingerprint: None,
                    })?;
                }
            }
            Ok(())
        })
        .expect("filling the store");
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sessions = env("SESSIONS", 10_000);
    let counterparties = env("COUNTERPARTIES", 1_000).clamp(1, sessions.max(1));
    let events = env("EVENTS", 10).max(3);
    let temp = tempfile::tempdir()?;
    let dir = match std::env::var_os("DESK_BENCH_DIR") {
        Some(kept) => {
            let kept = std::path::PathBuf::from(kept);
            std::fs::create_dir_all(&kept)?;
            if std::fs::read_dir(&kept)?.next().is_some() {
                return Err(format!("DESK_BENCH_DIR {} is not empty", kept.display()).into());
            }
            kept
        }
        None => temp.path().to_path_buf(),
    };
    let started = Instant::now();
    {
        let mut store = Store::open(&dir.join(DATABASE_FILE))?;
        fill(&mut store, sessions, counterparties, events);
    }
    println!(
        "store: {sessions} sessions, {counterparties} counterparties, {} events, filled in {:.1} s",
        sessions * events,
        started.elapsed().as_secs_f64()
    );

    let mut config = EngineConfig::new(dir.clone());
    config.sandbox = SandboxMode::Off;
    config.poll_interval = Duration::from_secs(3600);
    config.key_store = KeyStoreChoice::Passphrase;
    config.key_passphrase = Some("the desk benchmark's passphrase".into());
    config.approver = ApproverProfile {
        name: "Ann".into(),
        email: "ann@fabrikam.example".into(),
    };
    let engine = Engine::open(config)?;
    let pss_before = pss_mb();

    let t = Instant::now();
    let desk = engine.desk(DeskQuery::default()).await?;
    let first = t.elapsed();
    let mut desk_times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        engine.desk(DeskQuery::default()).await?;
        desk_times.push(t.elapsed());
    }
    let id = desk.counterparties[0].id.clone();
    let mut page_times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        engine.counterparty(&id, DeskQuery::default()).await?;
        page_times.push(t.elapsed());
    }
    let mut figure_times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        engine
            .desk_sessions(
                DeskQuery::default(),
                DeskFigure::Counterparty { id: id.clone() },
            )
            .await?;
        figure_times.push(t.elapsed());
    }
    let pss_after = pss_mb();
    println!(
        "desk: {} counterparties, {} sessions, {} decisions",
        desk.counterparties.len(),
        desk.sessions,
        desk.waits.decisions
    );
    println!(
        "desk, first open (reads every record once): {:.0} ms",
        first.as_secs_f64() * 1e3
    );
    println!(
        "desk, open (median of 7):                   {:.0} ms",
        median(desk_times).as_secs_f64() * 1e3
    );
    println!(
        "counterparty page (median of 7):           {:.0} ms",
        median(page_times).as_secs_f64() * 1e3
    );
    println!(
        "a figure's sessions (median of 7):         {:.0} ms",
        median(figure_times).as_secs_f64() * 1e3
    );
    println!("engine process PSS: {pss_before:.0} MB open, {pss_after:.0} MB after the desk");
    Ok(())
}
