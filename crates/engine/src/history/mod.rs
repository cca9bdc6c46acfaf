//! History: the session list with search and filters, a session's timeline
//! and per-side offer series, and exports (the verifiable log document plus
//! the signed decisions as JSON; every term of every entry and decision as
//! CSV), and the agreed terms, whole. All from the store.

mod csv;
pub(crate) mod terms;

use std::path::Path;

use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::error::EngineError;
use crate::inbox::{protocol_of, verification_view};
use crate::protocol::{ExportParts, Lifecycle};
use crate::store::{SessionRecord, Store};
use crate::views::*;

pub(crate) fn row(store: &Store, s: &SessionRecord) -> Result<SessionRow, EngineError> {
    let pending = store
        .pending()?
        .iter()
        .filter(|p| p.host_id == s.host_id && p.session_id == s.session_id)
        .count() as u32;
    let state = match protocol_of(s)?.seam().lifecycle(&s.status) {
        Lifecycle::Open => SessionState::Open,
        Lifecycle::Agreed => SessionState::Agreed,
        Lifecycle::Closed => SessionState::Closed,
    };
    Ok(SessionRow {
        host_id: s.host_id.clone(),
        session_id: s.session_id.clone(),
        protocol: s.protocol.clone(),
        counterparty: s.counterparty.clone(),
        status: s.status.clone(),
        state,
        sandbox: s.sandbox,
        verification: s.verification,
        event_count: store.event_count(&s.host_id, &s.session_id)?,
        last_amount: match (&s.last_total, &s.currency) {
            (Some(value), Some(currency)) => Some(Amount {
                value: value.clone(),
                currency: currency.clone(),
            }),
            _ => None,
        },
        pending,
        breaches: store.breaches_found(&s.host_id, &s.session_id)?,
        updated_at: s.updated_at.clone(),
    })
}

fn parse_amount(text: &Option<String>, name: &str) -> Result<Option<Decimal>, EngineError> {
    match text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(t) => t.parse::<Decimal>().map(Some).map_err(|_| {
            EngineError::InvalidInput(format!(
                "{name} must be a decimal amount like 1200.50, not {t:?}."
            ))
        }),
    }
}

fn contains(hay: &str, needle: &str) -> bool {
    hay.to_lowercase().contains(&needle.to_lowercase())
}

/// The history list, filtered.
pub(crate) fn sessions(
    store: &Store,
    filter: &HistoryFilter,
) -> Result<Vec<SessionRow>, EngineError> {
    let min = parse_amount(&filter.min_total, "min_total")?;
    let max = parse_amount(&filter.max_total, "max_total")?;
    let mut rows = Vec::new();
    for s in store.sessions()? {
        let r = row(store, &s)?;
        let c = &r.counterparty;
        let organization = c.organization.as_deref().unwrap_or("");
        if let Some(text) = filter.text.as_deref().filter(|t| !t.is_empty()) {
            if !(contains(organization, text)
                || contains(&c.name, text)
                || contains(&r.session_id, text))
            {
                continue;
            }
        }
        if let Some(who) = filter.counterparty.as_deref().filter(|t| !t.is_empty()) {
            if !(contains(organization, who)
                || contains(&c.name, who)
                || contains(&c.fingerprint, who))
            {
                continue;
            }
        }
        if let Some(protocol) = filter.protocol.as_deref().filter(|t| !t.is_empty()) {
            if r.protocol != protocol {
                continue;
            }
        }
        let keep = match filter.state {
            None => true,
            Some(StateFilter::Disputed) => r.verification == Verification::Disputed,
            Some(StateFilter::Pending) => r.pending > 0,
            Some(StateFilter::Open) => r.state == SessionState::Open,
            Some(StateFilter::Closed) => r.state == SessionState::Closed,
            Some(StateFilter::Agreed) => r.state == SessionState::Agreed,
        };
        if !keep {
            continue;
        }
        if min.is_some() || max.is_some() {
            let Some(total) = r
                .last_amount
                .as_ref()
                .and_then(|a| a.value.parse::<Decimal>().ok())
            else {
                continue;
            };
            if min.is_some_and(|m| total < m) || max.is_some_and(|m| total > m) {
                continue;
            }
        }
        rows.push(r);
    }
    Ok(rows)
}

fn session_record(
    store: &Store,
    host_id: &str,
    session_id: &str,
) -> Result<SessionRecord, EngineError> {
    store
        .session(host_id, session_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        })
}

/// One session in full.
pub(crate) fn session_detail(
    store: &Store,
    human: &humanize::Humanizer,
    host_id: &str,
    session_id: &str,
) -> Result<SessionDetail, EngineError> {
    let s = session_record(store, host_id, session_id)?;
    let seam = protocol_of(&s)?.seam();
    let mut timeline = Vec::new();
    let mut series = Series::default();
    let mut roles = Vec::new();
    for stored in store.events(host_id, session_id)? {
        let Some(entry) = seam.timeline(&s, &stored, human) else {
            continue;
        };
        roles.push(entry.role);
        if let (Some(side), Some(amount)) = (entry.side, &entry.amount) {
            let points = match side {
                Side::Counterparty => &mut series.counterparty,
                Side::Ours => &mut series.ours,
            };
            points.push(SeriesPoint {
                round: points.len() as u32 + 1,
                seq: stored.seq,
                total: amount.value.clone(),
            });
        }
        timeline.push(TimelineEvent {
            seq: stored.seq,
            side: entry.side,
            actor: stored.actor.clone(),
            kind: stored.kind.clone(),
            at: stored.at.clone(),
            summary: entry.summary,
            payload: entry.payload,
            signer: entry.signer,
            signature: stored.signature_state.clone(),
        });
    }
    let decisions = store
        .decisions(host_id, session_id)?
        .into_iter()
        .map(|d| DecisionRow {
            receipt: serde_json::from_str::<Value>(&d.body)
                .ok()
                .and_then(|body| body.get("receipt").cloned()),
            decision_id: d.decision_id,
            action: d.action,
            in_response_to: d.in_response_to,
            chain: decision_chain(d.proposal.as_deref()),
            outcome: d.outcome,
            at: d.at,
            signed_with: d.key_fingerprint,
        })
        .collect();
    let row = row(store, &s)?;
    let steps: Vec<terms::Step<'_>> = timeline
        .iter()
        .zip(&roles)
        .map(|(t, role)| terms::Step {
            seq: t.seq,
            at: &t.at,
            side: t.side,
            summary: &t.summary,
            role,
        })
        .collect();
    let agreed = (row.state == SessionState::Agreed)
        .then(|| terms::agreement(&steps))
        .flatten();
    Ok(SessionDetail {
        row,
        timeline,
        series,
        decisions,
        host_approvals: host_approvals(store, &s)?,
        verification: verification_view(&s),
        agreed,
        dispute: crate::dispute::view(store, &s)?,
    })
}

/// The host's record of the session's approvals as last read.
pub(crate) fn host_approvals(
    store: &Store,
    s: &SessionRecord,
) -> Result<Vec<crate::views::HostApproval>, EngineError> {
    if let Some(body) = store.session_approvals(&s.host_id, &s.session_id)? {
        return Ok(crate::edge::wire::host_approvals(&body));
    }
    // A gate session: each approving receipt the host recorded names its
    // role and, made by a stand-in, whom it was for.
    let requests = store.host_requests(&s.host_id, &s.session_id)?;
    Ok(requests
        .iter()
        .flat_map(|r| crate::protocol::gate_request::approvals(&r.message_hash, &r.body))
        .collect())
}

/// The verifiable document of the stored copy plus every decision exactly as
/// it was sent.
fn export_json(store: &Store, s: &SessionRecord) -> Result<Value, EngineError> {
    let events = store.events(&s.host_id, &s.session_id)?;
    let host = store.host(&s.host_id)?;
    let doc = protocol_of(s)?
        .seam()
        .export_record(host.as_ref(), s, &events);
    let keys = store.signing_keys()?;
    let decisions: Vec<Value> = store
        .decisions(&s.host_id, &s.session_id)?
        .into_iter()
        .map(|d| {
            json!({
                "signed_with_key": signed_with_key(&keys, d.key_fingerprint.as_deref()),
                "chain": decision_chain(d.proposal.as_deref()),
                "decision_id": d.decision_id,
                "action": d.action,
                "in_response_to": d.in_response_to,
                "outcome": d.outcome,
                "at": d.at,
                "request_body": d.body,
                "signed_headers": d.headers.and_then(|h| serde_json::from_str::<Value>(&h).ok()),
            })
        })
        .collect();
    let host_approvals = host_approvals(store, s)?;
    let parts = ExportParts {
        host_approvals: serde_json::to_value(&host_approvals).unwrap_or(Value::Null),
        approver: json!(
            host.map(|h| json!({"email": h.approver_email, "approver_id": h.approver_id}))
        ),
        decisions,
        verification: json!(verification_view(s)),
    };
    Ok(protocol_of(s)?.seam().export_document(doc, parts))
}

/// The key that signed a decision, whole: an export verifies offline even
/// after this console moved to another key.
pub(crate) fn signed_with_key(
    keys: &[crate::store::SigningKeyRecord],
    fingerprint: Option<&str>,
) -> Option<Value> {
    let fp = fingerprint?;
    let public = keys.iter().find(|k| k.fingerprint == fp);
    Some(json!({
        "fingerprint": fp,
        "public_key": public.map(|k| k.public_key.clone()),
        "retired_at": public.and_then(|k| k.retired_at.clone()),
    }))
}

/// The chain a decision was made on, from the pending record it answered
/// (kept with the decision): as the host said when it was made.
pub(crate) fn decision_chain(proposal: Option<&str>) -> Option<crate::views::DecisionChain> {
    let pending: crate::protocol::PendingProposal = serde_json::from_str(proposal?).ok()?;
    let chain = pending.chain?;
    Some(crate::views::DecisionChain {
        reason: chain.reason,
        rule: chain.rule,
        policy_version: chain.policy_version,
        step: chain.current_step,
        role: chain.your_role,
        stand_in: chain.your_stand_in,
        steps: chain.steps,
    })
}

fn export_csv(
    store: &Store,
    human: &humanize::Humanizer,
    s: &SessionRecord,
) -> Result<String, EngineError> {
    let events = store.events(&s.host_id, &s.session_id)?;
    let seam = protocol_of(s)?.seam();
    let entries: Vec<_> = events
        .iter()
        .filter_map(|e| seam.timeline(s, e, human).map(|t| (e, t)))
        .collect();
    let rows: Vec<csv::Row<'_>> = entries
        .iter()
        .map(|(e, t)| csv::Row {
            seq: e.seq,
            at: &e.at,
            actor: &e.actor,
            side: t.side,
            kind: &e.kind,
            hash: &e.event_hash,
            summary: &t.summary,
            amount: t
                .amount
                .as_ref()
                .map(|a| (a.value.as_str(), a.currency.as_str())),
            role: &t.role,
        })
        .collect();
    let decisions = store.decisions(&s.host_id, &s.session_id)?;
    Ok(csv::write(&rows, &decisions, &host_approvals(store, s)?))
}

/// Writes an export file and says where.
pub(crate) fn export(
    store: &Store,
    human: &humanize::Humanizer,
    dir: &Path,
    host_id: &str,
    session_id: &str,
    format: ExportFormat,
) -> Result<ExportResult, EngineError> {
    let s = session_record(store, host_id, session_id)?;
    let (text, ext) = match format {
        ExportFormat::Json => (
            serde_json::to_string_pretty(&export_json(store, &s)?)
                .map_err(|e| EngineError::Protocol(e.to_string()))?,
            "json",
        ),
        ExportFormat::Csv => (export_csv(store, human, &s)?, "csv"),
    };
    crate::owner_only::create_dir(dir)?;
    // The session id is a host-chosen string: keep only safe characters.
    let safe: String = session_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(64)
        .collect();
    let path = dir.join(format!("session-{safe}.{ext}"));
    crate::owner_only::write(&path, text.as_bytes())?;
    Ok(ExportResult {
        path: path.display().to_string(),
        bytes: text.len() as u64,
    })
}
