//! The poller: one summary request per host per cycle, conditional on the
//! last one applied (an unchanged host answers `304` and the cycle reads
//! nothing); only sessions whose head moved are fetched, and only their new
//! events (`log?after=`); each batch is verified against the pinned head
//! before it is stored. Errors back off per host with jitter and mark the
//! host unreachable without touching what is stored.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use anp::api::DiscoveredKey;
use anp::{ChainHead, Event, EventKind, LogDocument};
use countersign_client::SummaryFetch;
use countersign_host_api::approver::{PendingDecision, SessionSummary, Summary};
use rand::Rng;
use serde::Serialize;

use crate::dispute::HostAnswer;
use crate::engine::{now_text, Engine};
use crate::error::EngineError;
use crate::notify::{DisputeNotice, PendingNotice};
use crate::protocol::anp as proto;
use crate::protocol::ANP_0_1;
use crate::store::{HostRecord, PendingRecord, SessionRecord, StoredEvent};
use crate::views::{ChangeScope, Vendor, Verification};

/// What the poller has done so far (read by the benchmark and tests).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PollStats {
    /// Completed poll cycles of single hosts.
    pub cycles: u64,
    /// HTTP requests sent by the poller.
    pub requests: u64,
    /// Bytes of JSON received (as re-serialized; headers not counted).
    pub bytes: u64,
    /// Summary requests the host answered `304 Not Modified`.
    pub unchanged: u64,
    /// Events verified and stored.
    pub events_stored: u64,
}

/// How often (in cycles) one session's whole log is re-audited.
const AUDIT_EVERY: u64 = 12;
/// Longest backoff after errors.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The background loop: polls every host each interval, backing off per host.
pub(crate) async fn run(engine: Engine) {
    let mut failures: HashMap<String, (u32, Instant)> = HashMap::new();
    let mut cycle: u64 = 0;
    loop {
        let hosts = engine
            .store()
            .and_then(|s| Ok(s.hosts()?))
            .unwrap_or_default();
        for host in hosts {
            if host.sandbox && engine.inner.sandbox.lock().await.is_none() {
                continue; // the embedded host is not running in this process
            }
            if let Some((_, until)) = failures.get(&host.host_id) {
                if Instant::now() < *until {
                    continue;
                }
            }
            let result = {
                let _guard = engine.inner.poll_lock.lock().await;
                poll_host(&engine, &host).await
            };
            match result {
                Ok(()) => {
                    failures.remove(&host.host_id);
                    if cycle % AUDIT_EVERY == AUDIT_EVERY - 1 {
                        audit_next(&engine, &host, cycle / AUDIT_EVERY).await;
                    }
                }
                Err(_) => {
                    let entry = failures
                        .entry(host.host_id.clone())
                        .or_insert((0, Instant::now()));
                    entry.0 = entry.0.saturating_add(1);
                    entry.1 = Instant::now() + backoff(engine.poll_interval(), entry.0);
                }
            }
        }
        cycle += 1;
        // A new interval takes effect at once, not after the old one ran out.
        tokio::select! {
            _ = tokio::time::sleep(engine.poll_interval()) => {}
            _ = engine.inner.settings_changed.notified() => {}
        }
    }
}

/// Exponential backoff from the poll interval, capped, with ±50 % jitter so
/// many consoles do not hammer a recovering host in step.
fn backoff(interval: Duration, failures: u32) -> Duration {
    let base = interval
        .saturating_mul(1u32 << failures.min(6))
        .min(MAX_BACKOFF);
    base.mul_f64(rand::thread_rng().gen_range(0.5..1.5))
}

async fn audit_next(engine: &Engine, host: &HostRecord, turn: u64) {
    let sessions = match engine
        .store()
        .and_then(|s| Ok(s.sessions_of(&host.host_id)?))
    {
        Ok(s) if !s.is_empty() => s,
        _ => return,
    };
    let pick = &sessions[(turn as usize) % sessions.len()];
    let _ = audit(engine, &host.host_id, &pick.session_id).await;
}

/// One cycle over every host now (manual refresh), ignoring backoff.
pub(crate) async fn poll_all(engine: &Engine) -> Result<(), EngineError> {
    let hosts = engine.store()?.hosts()?;
    let _guard = engine.inner.poll_lock.lock().await;
    let sandbox_running = engine.inner.sandbox.lock().await.is_some();
    for host in hosts {
        if host.sandbox && !sandbox_running {
            continue; // the embedded host is not running in this process
        }
        let _ = poll_host(engine, &host).await;
    }
    Ok(())
}

fn count(engine: &Engine, requests: u64, value: &impl Serialize) {
    let bytes = serde_json::to_vec(value)
        .map(|v| v.len() as u64)
        .unwrap_or(0);
    if let Ok(mut s) = engine.inner.stats.lock() {
        s.requests += requests;
        s.bytes += bytes;
    }
}

/// Polls one host: the summary, then new events of moved sessions.
pub(crate) async fn poll_host(engine: &Engine, host: &HostRecord) -> Result<(), EngineError> {
    let client = engine.poll_client(host)?;
    // Taken, not read: until this cycle has applied a summary in full, the
    // next one asks afresh.
    let known = take_summary_tag(engine, &host.host_id);
    let (mut summary, etag) = match client.summary_since(known.as_deref()).await {
        Ok(SummaryFetch::Changed { summary, etag }) => (summary, etag),
        Ok(SummaryFetch::Unchanged) => {
            if let Some(tag) = known {
                remember_summary_tag(engine, &host.host_id, tag);
            }
            if let Ok(mut s) = engine.inner.stats.lock() {
                s.requests += 1;
                s.unchanged += 1;
            }
            return finish_cycle(engine, host);
        }
        Err(e) => {
            let message = e.to_string();
            engine
                .store()?
                .set_host_poll(&host.host_id, false, Some(&message), None)?;
            if host.reachable || host.last_error.as_deref() != Some(message.as_str()) {
                engine.emit(ChangeScope::Hosts, Some(&host.host_id), None);
            }
            return Err(EngineError::Unreachable {
                url: host.url.clone(),
                detail: message,
            });
        }
    };
    count(engine, 1, &summary);
    // Gate sessions (Concordia) are not yet the engine's: it follows the
    // ANP/0.1 sessions of the summary only.
    summary.sessions.retain(|s| s.protocol == anp::PROTOCOL);
    if summary.protocol != anp::PROTOCOL {
        let message = format!(
            "the host's summary speaks {:?}, not {}",
            summary.protocol,
            anp::PROTOCOL
        );
        engine
            .store()?
            .set_host_poll(&host.host_id, false, Some(&message), None)?;
        engine.emit(ChangeScope::Hosts, Some(&host.host_id), None);
        return Err(EngineError::Protocol(message));
    }
    let mut approver_keys: Vec<DiscoveredKey> =
        serde_json::from_str(&host.approver_keys).unwrap_or_default();

    let mut applied_in_full = true;
    for session in &summary.sessions {
        let stored = engine.store()?.session(&host.host_id, &session.id)?;
        let record = stored.unwrap_or_else(|| new_session(host, session));
        let moved = session.event_count != record.pin_seq || session.chain_head != record.pin_hash;
        if !moved {
            if record.status != session.status {
                let mut r = record.clone();
                r.status = session.status.clone();
                engine.store()?.upsert_session(&r)?;
                engine.emit(
                    ChangeScope::Sessions,
                    Some(&host.host_id),
                    Some(&session.id),
                );
            }
            continue;
        }
        if record.verification == Verification::Disputed {
            // Keep the stored copy as it is; just track what the host claims.
            let mut r = record.clone();
            r.remote_count = session.event_count;
            r.remote_head = session.chain_head.clone();
            r.status = session.status.clone();
            engine.store()?.upsert_session(&r)?;
            continue;
        }
        let result = if session.event_count > record.pin_seq {
            fetch_new(engine, &client, host, &mut approver_keys, record, session).await
        } else {
            // Shorter, or same length with another head: history changed.
            audit_record(
                engine,
                &client,
                host,
                &mut approver_keys,
                record,
                Some(session),
            )
            .await
        };
        if let Err(e) = result {
            // Retried next cycle: the summary is asked for in full again.
            applied_in_full = false;
            tracing::warn!("session {}: {e}", session.id);
        }
    }

    update_pending(engine, host, &summary)?;
    if let (true, Some(tag)) = (applied_in_full, etag) {
        remember_summary_tag(engine, &host.host_id, tag);
    }
    finish_cycle(engine, host)
}

/// Records a successful cycle: the host is reachable, polled now.
fn finish_cycle(engine: &Engine, host: &HostRecord) -> Result<(), EngineError> {
    let was_down = !host.reachable;
    engine
        .store()?
        .set_host_poll(&host.host_id, true, None, Some(&now_text()))?;
    if was_down {
        engine.emit(ChangeScope::Hosts, Some(&host.host_id), None);
    }
    if let Ok(mut s) = engine.inner.stats.lock() {
        s.cycles += 1;
    }
    Ok(())
}

fn take_summary_tag(engine: &Engine, host_id: &str) -> Option<String> {
    engine.inner.summary_tags.lock().ok()?.remove(host_id)
}

fn remember_summary_tag(engine: &Engine, host_id: &str, tag: String) {
    if let Ok(mut tags) = engine.inner.summary_tags.lock() {
        tags.insert(host_id.to_owned(), tag);
    }
}

fn vendor_of(session: &SessionSummary) -> Vendor {
    match &session.vendor {
        Some(vendor) => Vendor {
            agent_id: vendor.agent_id.clone(),
            agent_name: vendor.agent_name.clone(),
            vendor_name: vendor.vendor_name.clone(),
            fingerprint: vendor.fingerprint.clone(),
            status: countersign_host::admin::status_text(vendor.status).to_owned(),
        },
        // A summary that names only the neutral counterparty.
        None => Vendor {
            agent_id: session.counterparty.id.clone(),
            agent_name: session.counterparty.name.clone().unwrap_or_default(),
            vendor_name: session
                .counterparty
                .organization
                .clone()
                .unwrap_or_default(),
            fingerprint: session.counterparty.fingerprint.clone(),
            status: session.counterparty.status.clone(),
        },
    }
}

fn new_session(host: &HostRecord, session: &SessionSummary) -> SessionRecord {
    let genesis = ChainHead::genesis();
    SessionRecord {
        host_id: host.host_id.clone(),
        session_id: session.id.clone(),
        protocol: ANP_0_1.to_owned(),
        status: session.status.clone(),
        sandbox: session.sandbox,
        vendor: vendor_of(session),
        pin_seq: genesis.seq,
        pin_hash: genesis.event_hash,
        remote_count: session.event_count,
        remote_head: session.chain_head.clone(),
        verification: Verification::Verified,
        dispute_detail: None,
        failing_seq: None,
        failing_checks: Vec::new(),
        unproven: Vec::new(),
        last_total: None,
        currency: None,
        updated_at: now_text(),
    }
}

async fn refresh_approver_keys(
    engine: &Engine,
    client: &countersign_client::ApproverClient,
    host: &HostRecord,
    keys: &mut Vec<DiscoveredKey>,
    events: &[Event],
) {
    if !events.iter().any(|e| e.kind == EventKind::Accept) {
        return;
    }
    if let Ok(doc) = client.well_known().await {
        count(engine, 1, &doc);
        let approvers: Vec<DiscoveredKey> = doc
            .platform_keys
            .into_iter()
            .filter(|k| k.roles.iter().any(|r| r == "approval") && k.approved_by.is_some())
            .collect();
        if let Ok(store) = engine.store() {
            let _ = store.set_approver_keys(
                &host.host_id,
                &serde_json::to_string(&approvers).unwrap_or_default(),
            );
        }
        *keys = approvers;
    }
}

async fn fetch_new(
    engine: &Engine,
    client: &countersign_client::ApproverClient,
    host: &HostRecord,
    approver_keys: &mut Vec<DiscoveredKey>,
    record: SessionRecord,
    session: &SessionSummary,
) -> Result<(), EngineError> {
    let raw = fetch_log(
        engine,
        client,
        host,
        &record,
        Some(record.pin_seq),
        approver_keys,
    )
    .await?;
    let doc: &LogDocument = &raw.document;
    let ring = proto::key_ring(&host.platform_key, doc, &record.vendor.fingerprint);
    let pin = ChainHead {
        seq: record.pin_seq,
        event_hash: record.pin_hash.clone(),
    };
    let checked = proto::check_extension(&session.id, &pin, &doc.events, &ring, approver_keys);
    if checked
        .dispute
        .as_ref()
        .is_some_and(|d| d.checks == ["pin"])
    {
        // The new events do not link to the pin: find the exact seq.
        return audit_record(engine, client, host, approver_keys, record, Some(session)).await;
    }
    let answer = HostAnswer {
        request: &raw.request,
        bytes: &raw.bytes,
    };
    apply(engine, host, record, Some(session), checked, Some(&answer))
}

/// Fetches a session's log after `after` (all of it for `None`), keeping the
/// answer's bytes (evidence, should it contradict the stored copy); refuses
/// another protocol's or session's document; refreshes the approver keys
/// when it carries an accept.
async fn fetch_log(
    engine: &Engine,
    client: &countersign_client::ApproverClient,
    host: &HostRecord,
    record: &SessionRecord,
    after: Option<u64>,
    approver_keys: &mut Vec<DiscoveredKey>,
) -> Result<countersign_client::RawLog, EngineError> {
    let raw = client
        .log_raw(&record.session_id, after)
        .await
        .map_err(|e| EngineError::Unreachable {
            url: host.url.clone(),
            detail: e.to_string(),
        })?;
    count(engine, 1, &raw.document);
    check_document(&raw.document, &record.session_id)?;
    refresh_approver_keys(engine, client, host, approver_keys, &raw.document.events).await;
    Ok(raw)
}

/// Refuses a log document of another protocol or another session before
/// anything in it is looked at.
fn check_document(doc: &LogDocument, session_id: &str) -> Result<(), EngineError> {
    if !doc.is_anp_0_1() {
        return Err(EngineError::Protocol(format!(
            "the log of session {session_id} speaks {:?}, not {}",
            doc.protocol,
            anp::PROTOCOL
        )));
    }
    if doc.session.id != session_id {
        return Err(EngineError::Protocol(format!(
            "asked for the log of session {session_id}, got session {:?}",
            doc.session.id
        )));
    }
    Ok(())
}

/// Re-fetches a whole log and compares it with the stored copy.
pub(crate) async fn audit(
    engine: &Engine,
    host_id: &str,
    session_id: &str,
) -> Result<(), EngineError> {
    let (host, record) = {
        let store = engine.store()?;
        let host = store.host(host_id)?.ok_or_else(|| EngineError::NotFound {
            what: "host",
            id: host_id.to_owned(),
        })?;
        let record = store
            .session(host_id, session_id)?
            .ok_or_else(|| EngineError::NotFound {
                what: "session",
                id: session_id.to_owned(),
            })?;
        (host, record)
    };
    if record.verification == Verification::Disputed {
        return Ok(());
    }
    let client = engine.poll_client(&host)?;
    let mut keys: Vec<DiscoveredKey> =
        serde_json::from_str(&host.approver_keys).unwrap_or_default();
    audit_record(engine, &client, &host, &mut keys, record, None).await
}

async fn audit_record(
    engine: &Engine,
    client: &countersign_client::ApproverClient,
    host: &HostRecord,
    approver_keys: &mut Vec<DiscoveredKey>,
    record: SessionRecord,
    session: Option<&SessionSummary>,
) -> Result<(), EngineError> {
    let raw = fetch_log(engine, client, host, &record, None, approver_keys).await?;
    let doc: &LogDocument = &raw.document;
    let stored_copy = engine.store()?.events(&host.host_id, &record.session_id)?;
    let ring = proto::key_ring(&host.platform_key, doc, &record.vendor.fingerprint);
    let pin = ChainHead {
        seq: record.pin_seq,
        event_hash: record.pin_hash.clone(),
    };
    let checked = proto::check_whole(
        &record.session_id,
        &pin,
        &doc.events,
        &stored_copy,
        &ring,
        approver_keys,
    );
    let answer = HostAnswer {
        request: &raw.request,
        bytes: &raw.bytes,
    };
    apply(engine, host, record, session, checked, Some(&answer))
}

/// Stores verified events and the new pin, or marks the session disputed.
fn apply(
    engine: &Engine,
    host: &HostRecord,
    mut record: SessionRecord,
    session: Option<&SessionSummary>,
    checked: proto::Checked,
    answer: Option<&HostAnswer<'_>>,
) -> Result<(), EngineError> {
    if let Some(s) = session {
        record.status = s.status.clone();
        record.remote_count = s.event_count;
        record.remote_head = s.chain_head.clone();
        record.vendor = vendor_of(s);
    }
    let mut dispute_notice = None;
    if let Some(d) = &checked.dispute {
        record.verification = Verification::Disputed;
        record.failing_seq = Some(d.seq);
        record.failing_checks = d.checks.clone();
        record.dispute_detail = Some(d.detail.clone());
        crate::dispute::record(
            &*engine.store()?,
            &host.host_id,
            &record.session_id,
            d.seq,
            &d.checks,
            &d.detail,
            answer,
            &now_text(),
        )?;
        dispute_notice = Some(dispute_notice_for(host, &record, d));
    } else {
        for seq in &checked.unproven {
            if !record.unproven.contains(seq) {
                record.unproven.push(*seq);
            }
        }
        if !record.unproven.is_empty() {
            record.verification = Verification::Unproven;
            record.dispute_detail = Some(format!(
                "events {:?} declare a signer but carry no signature: their authorship is unproven",
                record.unproven
            ));
        }
        record.pin_seq = checked.head.seq;
        record.pin_hash = checked.head.event_hash.clone();
        if let Some(last) = checked.events.last() {
            record.updated_at = last.at.clone();
        }
        if let Some((total, currency)) = latest_offer_total(&checked.events) {
            record.last_total = Some(total);
            record.currency = Some(currency);
        }
    }
    let n = checked.events.len() as u64;
    {
        let mut store = engine.store()?;
        let events: &[StoredEvent] = &checked.events;
        store.transaction(|s| {
            s.insert_events(&host.host_id, &record.session_id, events)?;
            s.upsert_session(&record)
        })?;
    }
    if let Ok(mut s) = engine.inner.stats.lock() {
        s.events_stored += n;
    }
    engine.emit(
        ChangeScope::Sessions,
        Some(&host.host_id),
        Some(&record.session_id),
    );
    if let Some(notice) = dispute_notice {
        let first = engine.store()?.claim_notification(
            &host.host_id,
            &record.session_id,
            "disputed",
            &now_text(),
        )?;
        if first && engine.settings().on(crate::settings::NOTIFY_DISPUTE) {
            engine.notifier().disputed(&notice);
        }
        engine.emit(
            ChangeScope::Inbox,
            Some(&host.host_id),
            Some(&record.session_id),
        );
    }
    Ok(())
}

fn latest_offer_total(events: &[StoredEvent]) -> Option<(String, String)> {
    events.iter().rev().find_map(|e| {
        if e.kind != "offer" && e.kind != "counter_offer" {
            return None;
        }
        let event: Event = serde_json::from_str(&e.body).ok()?;
        let offer = proto::read_offer(&event.payload)?;
        Some((offer.total.to_string(), offer.offer.currency.clone()))
    })
}

/// Replaces the host's pending set; notifies each new one exactly once.
fn update_pending(
    engine: &Engine,
    host: &HostRecord,
    summary: &Summary,
) -> Result<(), EngineError> {
    let mut records = Vec::new();
    let mut items: Vec<(&SessionSummary, &PendingDecision)> = Vec::new();
    for session in &summary.sessions {
        for p in &session.pending {
            records.push(PendingRecord {
                host_id: host.host_id.clone(),
                session_id: session.id.clone(),
                event_hash: p.event_hash.clone(),
                body: serde_json::to_string(p).unwrap_or_default(),
                expires_at: p.expires_at.clone(),
            });
            items.push((session, p));
        }
    }
    let before: HashSet<(String, String)> = engine
        .store()?
        .pending_keys(&host.host_id)?
        .into_iter()
        .collect();
    let after: HashSet<(String, String)> = records
        .iter()
        .map(|r| (r.session_id.clone(), r.event_hash.clone()))
        .collect();
    let changed = before != after || {
        // approvals or held state may change without the set changing
        let stored = engine.store()?.pending()?;
        let stored: HashSet<String> = stored
            .into_iter()
            .filter(|p| p.host_id == host.host_id)
            .map(|p| p.body)
            .collect();
        records.iter().any(|r| !stored.contains(&r.body))
    };
    if !changed {
        return Ok(());
    }
    engine.store()?.replace_pending(&host.host_id, &records)?;
    engine.emit(ChangeScope::Inbox, Some(&host.host_id), None);
    for (session, p) in items {
        if before.contains(&(session.id.clone(), p.event_hash.clone())) {
            continue;
        }
        notify_pending(engine, host, session, p)?;
    }
    Ok(())
}

fn notify_pending(
    engine: &Engine,
    host: &HostRecord,
    session: &SessionSummary,
    p: &PendingDecision,
) -> Result<(), EngineError> {
    let first = engine.store()?.claim_notification(
        &host.host_id,
        &session.id,
        &p.event_hash,
        &now_text(),
    )?;
    if !first {
        return Ok(());
    }
    let settings = engine.settings();
    if !settings.on(crate::settings::NOTIFY_NEW_PROPOSAL) {
        return Ok(()); // claimed all the same: turning it back on replays nothing
    }
    let (total, currency) =
        crate::inbox::pending_offer_total(&*engine.store()?, &host.host_id, &session.id, p)
            .unwrap_or_else(|| ("?".to_owned(), String::new()));
    let vendor_name = vendor_of(session).vendor_name;
    let what = match (p.draft.is_some(), p.kind.as_str()) {
        (true, _) => "Draft counter-offer to",
        (false, "counter_offer") => "Counter-offer from",
        _ => "Offer from",
    };
    let human = engine.humanizer();
    let notice = PendingNotice {
        host_id: host.host_id.clone(),
        session_id: session.id.clone(),
        event_hash: p.event_hash.clone(),
        title: format!("{what} {vendor_name} waits for you"),
        body: human.amount_and_expiry(&total, &currency, &p.expires_at, humanize::Timestamp::now()),
        vendor_name,
        total,
        currency,
        expires_at: p.expires_at.clone(),
        burst_summary: settings.on(crate::settings::NOTIFY_BURST_SUMMARY),
    };
    engine.notifier().pending(&notice);
    Ok(())
}

/// The dispute notice: which host and session, the seq and check, in words.
fn dispute_notice_for(
    host: &HostRecord,
    record: &SessionRecord,
    d: &proto::Dispute,
) -> DisputeNotice {
    let short: String = record.session_id.chars().take(8).collect();
    DisputeNotice {
        host_id: host.host_id.clone(),
        host_label: host.label.clone(),
        session_id: record.session_id.clone(),
        seq: d.seq,
        check: d.checks.join(", "),
        detail: d.detail.clone(),
        title: format!(
            "Session {short} on {} with {} is disputed",
            host.label, record.vendor.vendor_name
        ),
        body: format!(
            "The host's record no longer matches what this console verified (event {}, {}). {}",
            d.seq,
            d.checks.join(", "),
            d.detail
        ),
    }
}
