//! The poller: one summary request per host per cycle, conditional on the
//! last one applied (an unchanged host answers `304` and the cycle reads
//! nothing); only sessions whose head moved are fetched, and only their new
//! events (`log?after=`); each batch is verified against the pinned head
//! before it is stored. Errors back off per host with jitter and mark the
//! host unreachable without touching what is stored.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use serde::Serialize;

use crate::context::Context;
use crate::dispute::HostAnswer;
use crate::edge::wire::{RemoteSession, SummaryAnswer, SummaryError};
use crate::error::EngineError;
use crate::notify::{BreachNotice, DisputeNotice, PendingNotice};
use crate::protocol::{Checked, Dispute, Head, PendingProposal, Protocol, Trust};
use crate::store::{HostRecord, HostRequestRecord, PendingRecord, SessionRecord, StoredEvent};
use crate::views::{ChangeScope, Counterparty, DecideAction, Side, Verification};

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
pub(crate) const AUDIT_EVERY: u64 = 12;
/// The least pause of the loop when a reminder falls due sooner: a
/// reminder a second late is on time.
const REMINDER_SLACK: Duration = Duration::from_secs(1);
/// Longest backoff after errors.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The background loop: keeps one waiting request per host
/// ([`crate::watch`]) and polls every host that is not waited on each
/// interval, backing off per host.
pub(crate) async fn run(ctx: Arc<Context>) {
    let mut failures: HashMap<String, (u32, Instant)> = HashMap::new();
    let mut cycle: u64 = 0;
    // Dropped (its watchers stopped) when this loop is.
    let mut watchers = crate::watch::Watchers::default();
    loop {
        let hosts = ctx.store().and_then(|s| Ok(s.hosts()?)).unwrap_or_default();
        for host in hosts.iter().cloned() {
            if !ctx.polls(&host) {
                continue; // the embedded host is not running in this process
            }
            if ctx.waits_on(&host.host_id) {
                continue; // its waiting request hears of every change
            }
            if let Some((_, until)) = failures.get(&host.host_id) {
                if Instant::now() < *until {
                    continue;
                }
            }
            let result = {
                let _guard = ctx.poll_lock.lock().await;
                poll_host(&ctx, &host).await
            };
            match result {
                Ok(()) => {
                    failures.remove(&host.host_id);
                    if cycle % AUDIT_EVERY == AUDIT_EVERY - 1 {
                        audit_next(&ctx, &host, cycle / AUDIT_EVERY).await;
                    }
                }
                Err(_) => {
                    let entry = failures
                        .entry(host.host_id.clone())
                        .or_insert((0, Instant::now()));
                    entry.0 = entry.0.saturating_add(1);
                    entry.1 = Instant::now() + backoff(ctx.poll_interval(), entry.0);
                }
            }
        }
        // After the first cycle, so each watcher starts from its summary.
        watchers.keep(&ctx, &hosts);
        cycle += 1;
        // The next reminder falls due by the clock, not by a host's news:
        // the loop wakes for it even when every host is waited on.
        let next_reminder = crate::reminders::remind(&ctx);
        let pause = next_reminder.map_or(ctx.poll_interval(), |due| {
            due.clamp(REMINDER_SLACK, ctx.poll_interval().max(REMINDER_SLACK))
        });
        // A new interval takes effect at once, not after the old one ran out.
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = ctx.settings_changed.notified() => {}
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

pub(crate) async fn audit_next(ctx: &Context, host: &HostRecord, turn: u64) {
    let sessions = match ctx.store().and_then(|s| Ok(s.sessions_of(&host.host_id)?)) {
        Ok(s) if !s.is_empty() => s,
        _ => return,
    };
    let pick = &sessions[(turn as usize) % sessions.len()];
    let _ = audit(ctx, &host.host_id, &pick.session_id).await;
}

/// One cycle over every host now (manual refresh), ignoring backoff.
pub(crate) async fn poll_all(ctx: &Context) -> Result<(), EngineError> {
    let hosts = ctx.store()?.hosts()?;
    let _guard = ctx.poll_lock.lock().await;
    for host in hosts {
        if !ctx.polls(&host) {
            continue; // the embedded host is not running in this process
        }
        let _ = poll_host(ctx, &host).await;
    }
    crate::reminders::remind(ctx);
    Ok(())
}

/// Polls one host: the summary, then new entries of moved sessions.
pub(crate) async fn poll_host(ctx: &Context, host: &HostRecord) -> Result<(), EngineError> {
    let io = ctx.host_io(host)?;
    // Taken, not read: until this cycle has applied a summary in full, the
    // next one asks afresh.
    let known = take_summary_tag(ctx, &host.host_id);
    let answer = crate::edge::wire::summary(&io.client, known.as_deref()).await;
    apply_summary(ctx, host, &io, known, answer).await
}

/// Applies one summary answer of `host` asked with the tag `known` (taken
/// from [`Context::summary_tags`] by the caller): a timed poll's or a
/// waiting request's ([`crate::watch`]), the same way.
pub(crate) async fn apply_summary(
    ctx: &Context,
    host: &HostRecord,
    io: &crate::edge::transport::HostIo,
    known: Option<String>,
    answer: Result<SummaryAnswer, SummaryError>,
) -> Result<(), EngineError> {
    let (sessions, etag) = match answer {
        Ok(SummaryAnswer::Changed {
            sessions,
            etag,
            bytes,
        }) => {
            ctx.count(1, bytes);
            (sessions, etag)
        }
        Ok(SummaryAnswer::Unchanged | SummaryAnswer::AskLater(_)) => {
            if let Some(tag) = known {
                remember_summary_tag(ctx, &host.host_id, tag);
            }
            if let Ok(mut s) = ctx.stats.lock() {
                s.requests += 1;
                s.unchanged += 1;
            }
            return finish_cycle(ctx, host);
        }
        Err(SummaryError::Unreachable(message)) => {
            mark_unreachable(ctx, host, &message)?;
            return Err(EngineError::Unreachable {
                url: host.url.clone(),
                detail: message,
            });
        }
        Err(SummaryError::Protocol(message) | SummaryError::WaitRefused(message)) => {
            ctx.count(1, 0);
            ctx.store()?
                .set_host_poll(&host.host_id, false, Some(&message), None)?;
            ctx.emit(ChangeScope::Hosts, Some(&host.host_id), None);
            return Err(EngineError::Protocol(message));
        }
    };
    let mut host = host.clone();

    let mut applied_in_full = true;
    let pending_before = pending_bodies(ctx, &host.host_id)?;
    for session in &sessions {
        let stored = ctx.store()?.session(&host.host_id, &session.id)?;
        let record = match stored {
            Some(record) => record,
            None => match new_session(ctx, &host, session) {
                Ok(record) => record,
                Err(e) => {
                    // A protocol this console does not read: nothing stored.
                    tracing::warn!("session {}: {e}", session.id);
                    continue;
                }
            },
        };
        let moved = session.event_count != record.pin_seq || session.chain_head != record.pin_hash;
        // A gate request decided at another console, or expired, leaves the
        // pending set while the transcript stands still: the host's word on
        // it comes with the record, fetched after the pin (no new entries).
        let host_word_moved = !moved
            && record.verification != Verification::Disputed
            && Protocol::parse(&record.protocol).is_ok_and(|p| p.seam().host_keeps_requests())
            && pending_moved(&pending_before, session);
        if host_word_moved {
            if let Err(e) = fetch_new(ctx, io, &mut host, record, session).await {
                applied_in_full = false;
                tracing::warn!("session {}: {e}", session.id);
            }
            continue;
        }
        if !moved {
            // The host's word about the session and about who the
            // counterparty is (its names, whether an admin verified them),
            // which change without the record moving; its id and key stay
            // as pinned.
            let mut r = record.clone();
            r.status = session.status.clone();
            r.counterparty = Counterparty {
                id: record.counterparty.id.clone(),
                fingerprint: record.counterparty.fingerprint.clone(),
                ..session.counterparty.clone()
            };
            if r != record {
                ctx.store()?.upsert_session(&r)?;
                ctx.emit(
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
            ctx.store()?.upsert_session(&r)?;
            continue;
        }
        let result = if session.event_count > record.pin_seq {
            fetch_new(ctx, io, &mut host, record, session).await
        } else {
            // Shorter, or same length with another head: history changed.
            audit_record(ctx, io, &mut host, record, Some(session)).await
        };
        if let Err(e) = result {
            // Retried next cycle: the summary is asked for in full again.
            applied_in_full = false;
            tracing::warn!("session {}: {e}", session.id);
        }
    }

    update_pending(ctx, &host, &sessions)?;
    if let (true, Some(tag)) = (applied_in_full, etag) {
        remember_summary_tag(ctx, &host.host_id, tag);
    }
    finish_cycle(ctx, &host)
}

/// Records that `host` could not be reached (what Hosts shows), telling the
/// screen only when that is news.
pub(crate) fn mark_unreachable(
    ctx: &Context,
    host: &HostRecord,
    message: &str,
) -> Result<(), EngineError> {
    ctx.store()?
        .set_host_poll(&host.host_id, false, Some(message), None)?;
    if host.reachable || host.last_error.as_deref() != Some(message) {
        ctx.emit(ChangeScope::Hosts, Some(&host.host_id), None);
    }
    Ok(())
}

/// The stored pending set of a host, session → each record's body.
fn pending_bodies(
    ctx: &Context,
    host_id: &str,
) -> Result<HashMap<String, HashSet<String>>, EngineError> {
    let mut bodies: HashMap<String, HashSet<String>> = HashMap::new();
    for p in ctx.store()?.pending()? {
        if p.host_id == host_id {
            bodies.entry(p.session_id).or_default().insert(p.body);
        }
    }
    Ok(bodies)
}

/// True when the summary's pending decisions of `session` differ from the
/// stored ones (one left, one came, an approval was given).
fn pending_moved(before: &HashMap<String, HashSet<String>>, session: &RemoteSession) -> bool {
    let now: HashSet<String> = session
        .pending
        .iter()
        .map(|p| serde_json::to_string(p).unwrap_or_default())
        .collect();
    before
        .get(&session.id)
        .map_or(!now.is_empty(), |b| *b != now)
}

/// Records a successful cycle: the host is reachable, polled now. Every
/// cycle changes what Hosts shows (its last poll), so each one says so;
/// the shell gathers a burst into one event.
pub(crate) fn finish_cycle(ctx: &Context, host: &HostRecord) -> Result<(), EngineError> {
    ctx.store()?
        .set_host_poll(&host.host_id, true, None, Some(&ctx.now_text()))?;
    ctx.emit(ChangeScope::Hosts, Some(&host.host_id), None);
    if let Ok(mut s) = ctx.stats.lock() {
        s.cycles += 1;
    }
    Ok(())
}

pub(crate) fn take_summary_tag(ctx: &Context, host_id: &str) -> Option<String> {
    ctx.summary_tags.lock().ok()?.remove(host_id)
}

pub(crate) fn remember_summary_tag(ctx: &Context, host_id: &str, tag: String) {
    if let Ok(mut tags) = ctx.summary_tags.lock() {
        tags.insert(host_id.to_owned(), tag);
    }
}

fn new_session(
    ctx: &Context,
    host: &HostRecord,
    session: &RemoteSession,
) -> Result<SessionRecord, EngineError> {
    let genesis = Protocol::parse(&session.protocol)?.seam().genesis();
    Ok(SessionRecord {
        host_id: host.host_id.clone(),
        session_id: session.id.clone(),
        protocol: session.protocol.clone(),
        status: session.status.clone(),
        sandbox: session.sandbox,
        counterparty: session.counterparty.clone(),
        pin_seq: genesis.seq,
        pin_hash: genesis.hash,
        remote_count: session.event_count,
        remote_head: session.chain_head.clone(),
        verification: Verification::Verified,
        dispute_detail: None,
        failing_seq: None,
        failing_checks: Vec::new(),
        unproven: Vec::new(),
        last_total: None,
        currency: None,
        updated_at: ctx.now_text(),
        pinned_keys: "{}".to_owned(),
    })
}

fn pin_of(record: &SessionRecord) -> Head {
    Head {
        seq: record.pin_seq,
        hash: record.pin_hash.clone(),
    }
}

/// Fetches a session's record after `after` (all of it for `None`) through
/// its protocol, counting the requests and keeping the host's refreshed
/// approver keys.
async fn fetch(
    ctx: &Context,
    io: &crate::edge::transport::HostIo,
    host: &mut HostRecord,
    record: &SessionRecord,
    after: Option<u64>,
) -> Result<crate::protocol::Fetched, EngineError> {
    let seam = Protocol::parse(&record.protocol)?.seam();
    let fetched = seam
        .fetch_since(io, host, &record.session_id, after)
        .await?;
    ctx.count(fetched.requests, fetched.bytes.len() as u64);
    if let Some(keys) = &fetched.approver_keys {
        ctx.store()?.set_approver_keys(&host.host_id, keys)?;
        host.approver_keys = keys.clone();
    }
    if let Some(records) = &fetched.approval_records {
        ctx.store()?.set_session_approvals(
            &host.host_id,
            &record.session_id,
            records,
            &ctx.now_text(),
        )?;
    }
    Ok(fetched)
}

async fn fetch_new(
    ctx: &Context,
    io: &crate::edge::transport::HostIo,
    host: &mut HostRecord,
    mut record: SessionRecord,
    session: &RemoteSession,
) -> Result<(), EngineError> {
    // The record is checked against who this summary says the counterparty
    // is (its key's fingerprint), not the one a summary said before.
    record.counterparty = session.counterparty.clone();
    let fetched = fetch(ctx, io, host, &record, Some(record.pin_seq)).await?;
    let seam = Protocol::parse(&record.protocol)?.seam();
    let checked = seam.verify_since(
        &record.session_id,
        &pin_of(&record),
        &Trust::of(host, &record),
        &fetched.bytes,
    )?;
    if checked.unlinked {
        // The new entries do not link to the pin: find the exact seq.
        return audit_record(ctx, io, host, record, Some(session)).await;
    }
    let answer = HostAnswer {
        request: &fetched.request,
        bytes: &fetched.bytes,
    };
    let requests = host_requests(&record, &fetched.bytes);
    apply(
        ctx,
        host,
        record,
        Some(session),
        checked,
        Some(&answer),
        requests,
    )
}

/// What the host says about the session's requests in a fetched record,
/// when its protocol's record carries them; unreadable ones are left out
/// (what was kept stays) with a warning.
fn host_requests(
    record: &SessionRecord,
    bytes: &[u8],
) -> Option<Vec<crate::protocol::HostRequest>> {
    let seam = Protocol::parse(&record.protocol).ok()?.seam();
    match seam.host_requests(&record.session_id, bytes) {
        Ok(requests) => requests,
        Err(e) => {
            tracing::warn!("session {}: {e}", record.session_id);
            None
        }
    }
}

/// Re-fetches a whole record and compares it with the stored copy.
pub(crate) async fn audit(
    ctx: &Context,
    host_id: &str,
    session_id: &str,
) -> Result<(), EngineError> {
    let (mut host, record) = {
        let store = ctx.store()?;
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
    let io = ctx.host_io(&host)?;
    audit_record(ctx, &io, &mut host, record, None).await
}

async fn audit_record(
    ctx: &Context,
    io: &crate::edge::transport::HostIo,
    host: &mut HostRecord,
    record: SessionRecord,
    session: Option<&RemoteSession>,
) -> Result<(), EngineError> {
    let mut record = record;
    if let Some(s) = session {
        record.counterparty = s.counterparty.clone();
    }
    let fetched = fetch(ctx, io, host, &record, None).await?;
    let stored_copy = ctx.store()?.events(&host.host_id, &record.session_id)?;
    let seam = Protocol::parse(&record.protocol)?.seam();
    let checked = seam.verify_whole(
        &record.session_id,
        &pin_of(&record),
        &Trust::of(host, &record),
        &fetched.bytes,
        &stored_copy,
    )?;
    let answer = HostAnswer {
        request: &fetched.request,
        bytes: &fetched.bytes,
    };
    let requests = host_requests(&record, &fetched.bytes);
    apply(ctx, host, record, session, checked, Some(&answer), requests)
}

/// Stores verified events and the new pin, or marks the session disputed;
/// with them, what the host says about the session's requests (kept only
/// while the record verifies: a disputed host's word is not taken).
fn apply(
    ctx: &Context,
    host: &HostRecord,
    mut record: SessionRecord,
    session: Option<&RemoteSession>,
    checked: Checked,
    answer: Option<&HostAnswer<'_>>,
    requests: Option<Vec<crate::protocol::HostRequest>>,
) -> Result<(), EngineError> {
    if let Some(s) = session {
        record.status = s.status.clone();
        record.remote_count = s.event_count;
        record.remote_head = s.chain_head.clone();
        record.counterparty = s.counterparty.clone();
    }
    let mut dispute_notice = None;
    if let Some(d) = &checked.dispute {
        record.verification = Verification::Disputed;
        record.failing_seq = Some(d.seq);
        record.failing_checks = d.checks.clone();
        record.dispute_detail = Some(d.detail.clone());
        crate::dispute::record(
            &*ctx.store()?,
            &host.host_id,
            &record.session_id,
            d.seq,
            &d.checks,
            &d.detail,
            answer,
            &ctx.now_text(),
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
        record.pin_hash = checked.head.hash.clone();
        if let Some(last) = checked.events.last() {
            record.updated_at = last.at.clone();
        }
        if let Some(amount) = &checked.last_amount {
            record.last_total = Some(amount.value.clone());
            record.currency = Some(amount.currency.clone());
        }
        if let Some(keys) = &checked.pinned_keys {
            record.pinned_keys = keys.clone();
        }
    }
    let n = checked.events.len() as u64;
    let requests_kept;
    {
        let mut store = ctx.store()?;
        let events: &[StoredEvent] = &checked.events;
        requests_kept = requests.is_some();
        let requests: Option<Vec<HostRequestRecord>> =
            requests.filter(|_| checked.dispute.is_none()).map(|rs| {
                rs.iter()
                    .map(|r| HostRequestRecord {
                        request_id: r.request_id.clone(),
                        message_hash: r.message_hash.clone(),
                        body: serde_json::to_string(r).unwrap_or_default(),
                    })
                    .collect()
            });
        store.transaction(|s| {
            s.insert_events(&host.host_id, &record.session_id, events)?;
            if let Some(requests) = &requests {
                s.replace_host_requests(&host.host_id, &record.session_id, requests)?;
            }
            s.upsert_session(&record)
        })?;
    }
    if let Ok(mut s) = ctx.stats.lock() {
        s.events_stored += n;
    }
    ctx.emit(
        ChangeScope::Sessions,
        Some(&host.host_id),
        Some(&record.session_id),
    );
    if checked.dispute.is_none() && (n > 0 || requests_kept) {
        notify_breaches(ctx, host, &record)?;
    }
    if let Some(notice) = dispute_notice {
        let first = ctx.store()?.claim_notification(
            &host.host_id,
            &record.session_id,
            "disputed",
            &ctx.now_text(),
        )?;
        if first && ctx.settings().on(crate::settings::NOTIFY_DISPUTE) {
            ctx.notifier().disputed(&notice);
        }
        ctx.emit(
            ChangeScope::Inbox,
            Some(&host.host_id),
            Some(&record.session_id),
        );
    }
    Ok(())
}

/// Replaces the host's pending set; notifies each new one exactly once.
fn update_pending(
    ctx: &Context,
    host: &HostRecord,
    sessions: &[RemoteSession],
) -> Result<(), EngineError> {
    let mut records = Vec::new();
    let mut items: Vec<(&RemoteSession, &PendingProposal)> = Vec::new();
    for session in sessions {
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
    let before: HashSet<(String, String)> = ctx
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
        let stored = ctx.store()?.pending()?;
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
    ctx.store()?.replace_pending(&host.host_id, &records)?;
    ctx.emit(ChangeScope::Inbox, Some(&host.host_id), None);
    for (session, p) in items {
        let new = !before.contains(&(session.id.clone(), p.event_hash.clone()));
        // A decision routed along a chain of approvals finds this person
        // when it is their turn (once: the claim is kept), not before; any
        // other, when it arrives.
        let now_theirs = match &p.chain {
            Some(chain) => chain.you_may_approve,
            None => new,
        };
        if now_theirs {
            notify_pending(ctx, host, session, p)?;
        }
        if let Some((step, role)) = p.chain.as_ref().and_then(escalated_past_me) {
            notify_escalated(ctx, host, session, p, step, &role)?;
        }
    }
    Ok(())
}

/// The current step and its escalation role, when the step is past its
/// response time and this person may still act at it in the step's own
/// role (not as the escalation role): they are told it is overdue, once.
fn escalated_past_me(chain: &crate::views::ApprovalChain) -> Option<(u32, String)> {
    let n = chain.current_step?;
    let step = chain.steps.iter().find(|s| s.number == n)?;
    let role = step.escalate_to.clone()?;
    let mine = chain.you_may_approve && chain.your_role.as_deref() != Some(role.as_str());
    (step.escalated && mine).then_some((n, role))
}

/// Tells a holder of an overdue step's own role that it is now offered to
/// its escalation role too (once per step: the claim is kept).
fn notify_escalated(
    ctx: &Context,
    host: &HostRecord,
    session: &RemoteSession,
    p: &PendingProposal,
    step: u32,
    role: &str,
) -> Result<(), EngineError> {
    let subject = format!("escalated:{}:{step}", p.event_hash);
    if !ctx
        .store()?
        .claim_notification(&host.host_id, &session.id, &subject, &ctx.now_text())?
    {
        return Ok(());
    }
    if !ctx.settings().on(crate::settings::NOTIFY_NEW_PROPOSAL) {
        return Ok(());
    }
    let Some(record) = ctx.store()?.session(&host.host_id, &session.id)? else {
        return Ok(());
    };
    let tail = format!("is past its response time: offered to {role} too");
    let notice = pending_notice(ctx, &record, p, &tail)?;
    ctx.notifier().reminder(&notice);
    Ok(())
}

fn notify_pending(
    ctx: &Context,
    host: &HostRecord,
    session: &RemoteSession,
    p: &PendingProposal,
) -> Result<(), EngineError> {
    let first = ctx.store()?.claim_notification(
        &host.host_id,
        &session.id,
        &p.event_hash,
        &ctx.now_text(),
    )?;
    if !first {
        return Ok(());
    }
    let settings = ctx.settings();
    if !settings.on(crate::settings::NOTIFY_NEW_PROPOSAL) {
        return Ok(()); // claimed all the same: turning it back on replays nothing
    }
    let Some(record) = ctx.store()?.session(&host.host_id, &session.id)? else {
        return Ok(());
    };
    let notice = pending_notice(ctx, &record, p, "waits for you")?;
    // Already within the reminder's reach: this notice says when it
    // expires, so its reminder is spent (a second notice at once says nothing new).
    if crate::reminders::within_reach(ctx, &settings, &p.expires_at) {
        ctx.store()?.claim_notification(
            &host.host_id,
            &session.id,
            &crate::reminders::subject(&p.event_hash),
            &ctx.now_text(),
        )?;
    }
    ctx.notifier().pending(&notice);
    Ok(())
}

/// The notice about the pending decision `p` of the stored session
/// `record`, its title ending in `tail` ("waits for you", "expires soon"):
/// the amount and the expiry as a person writes them, and the decisions a
/// notification may open the app at.
pub(crate) fn pending_notice(
    ctx: &Context,
    record: &SessionRecord,
    p: &PendingProposal,
    tail: &str,
) -> Result<PendingNotice, EngineError> {
    let amount = crate::inbox::pending_amount(&*ctx.store()?, record, p);
    let has_amount = amount.is_some();
    let (total, currency) = amount.unwrap_or_else(|| ("?".to_owned(), String::new()));
    let counterparty_name = record.counterparty.display_name().to_owned();
    let seam = Protocol::parse(&record.protocol)?.seam();
    let what = seam.notice_lead(p);
    // Only what the person may do now: a chain of approvals that waits on
    // someone else offers neither.
    let actions = seam
        .capabilities(p)
        .actions
        .into_iter()
        .filter(|a| matches!(a, DecideAction::Approve | DecideAction::Decline))
        .filter(|a| p.chain.as_ref().is_none_or(|c| c.allows(*a)))
        .collect();
    let human = ctx.humanizer();
    Ok(PendingNotice {
        host_id: record.host_id.clone(),
        session_id: record.session_id.clone(),
        protocol: record.protocol.clone(),
        event_hash: p.event_hash.clone(),
        title: format!("{what} {counterparty_name} {tail}"),
        // A proposal without an amount (an ANEX ask) is not written as "?".
        body: if has_amount {
            human.amount_and_expiry(&total, &currency, &p.expires_at, ctx.human_now())
        } else {
            human.expiry(&p.expires_at, ctx.human_now())
        },
        counterparty_name,
        total,
        currency,
        expires_at: p.expires_at.clone(),
        burst_summary: ctx.settings().on(crate::settings::NOTIFY_BURST_SUMMARY),
        actions,
    })
}

/// Tells the person, once per proposal and never again after a restart,
/// that the org's own agent accepted it against their decision, or without
/// asking anyone where it had to ask: the rule
/// is [`crate::decided::what_became`]'s, read from the offer view itself,
/// so the notice and the view cannot disagree.
fn notify_breaches(
    ctx: &Context,
    host: &HostRecord,
    record: &SessionRecord,
) -> Result<(), EngineError> {
    let decided: std::collections::BTreeSet<String> = {
        let store = ctx.store()?;
        let mut hashes: std::collections::BTreeSet<String> = store
            .decisions(&host.host_id, &record.session_id)?
            .into_iter()
            .map(|d| d.in_response_to)
            .collect();
        hashes.extend(store.host_request_hashes(&host.host_id, &record.session_id)?);
        // Where the agent must ask first, a counterparty's proposal nobody
        // was asked about can be accepted too. Only the latest proposal can
        // be: each seam's answer on the log is the first one after a
        // proposal, and any newer proposal is one.
        let seam = Protocol::parse(&record.protocol)?.seam();
        if seam.host_keeps_requests() {
            let events = store.events(&host.host_id, &record.session_id)?;
            let latest = events
                .iter()
                .rev()
                .find(|e| seam.former(&events, &e.event_hash).is_some());
            if let Some(e) = latest.filter(|e| seam.side(record, &e.actor) == Side::Counterparty) {
                hashes.insert(e.event_hash.clone());
            }
        }
        hashes
    };
    // Read before the store is locked below: the profile reads the store.
    let approver = ctx.approver_profile();
    for hash in decided {
        let subject = format!("breach:{hash}");
        let view = {
            let store = ctx.store()?;
            if store.is_notified(&host.host_id, &record.session_id, &subject)? {
                continue;
            }
            crate::inbox::proposal_view(
                &store,
                &host.host_id,
                &record.session_id,
                &hash,
                &approver,
                ctx.now(),
            )
        };
        let Some(breach) = view.ok().and_then(|v| v.decision).and_then(|d| d.breach) else {
            continue;
        };
        let first = ctx.store()?.claim_notification(
            &host.host_id,
            &record.session_id,
            &subject,
            &ctx.now_text(),
        )?;
        if !first {
            continue;
        }
        // The history row counts it, told or not.
        ctx.emit(
            ChangeScope::Sessions,
            Some(&host.host_id),
            Some(&record.session_id),
        );
        if !ctx.settings().on(crate::settings::NOTIFY_BREACH) {
            continue; // claimed all the same: turning it back on replays nothing
        }
        ctx.notifier().breach(&BreachNotice {
            host_id: host.host_id.clone(),
            session_id: record.session_id.clone(),
            protocol: record.protocol.clone(),
            event_hash: hash.clone(),
            title: Protocol::parse(&record.protocol)
                .map(|p| p.seam().breach_title(record.counterparty.display_name()))
                .unwrap_or_else(|_| {
                    format!(
                        "Your agent acted against your decision with {}",
                        record.counterparty.display_name()
                    )
                }),
            body: breach,
        });
    }
    Ok(())
}

/// The dispute notice: which host and session, the seq and check, in words.
fn dispute_notice_for(host: &HostRecord, record: &SessionRecord, d: &Dispute) -> DisputeNotice {
    let short: String = record.session_id.chars().take(8).collect();
    let label = Protocol::parse(&record.protocol)
        .map(|p| p.seam().label())
        .unwrap_or("A");
    DisputeNotice {
        host_id: host.host_id.clone(),
        protocol: record.protocol.clone(),
        host_label: host.label.clone(),
        session_id: record.session_id.clone(),
        seq: d.seq,
        check: d.checks.join(", "),
        detail: d.detail.clone(),
        title: format!(
            "{label} session {short} on {} with {} is disputed",
            host.label,
            record.counterparty.display_name()
        ),
        body: format!(
            "The host's record no longer matches what this console verified (event {}, {}). {}",
            d.seq,
            d.checks.join(", "),
            d.detail
        ),
    }
}
