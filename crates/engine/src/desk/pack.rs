//! The audit pack: one folder holding, for each session with a decision
//! the query selects, the session's record in its protocol's own form,
//! each selected decision exactly as it was signed and sent (with the
//! ApprovalReceipt and the message it approves, where the protocol has
//! one), the host's record of approvals beside them, and `index.json`
//! naming every file with its SHA-256 and every decision with who made it,
//! as which role, under which rule. `countersign-verify pack DIR` checks it
//! offline; `docs/audit-pack.md` is its format.

use std::path::{Path, PathBuf};

use rust_decimal::Decimal;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::facts::DecisionFact;
use super::Desk;
use crate::error::EngineError;
use crate::inbox::protocol_of;
use crate::store::{DecisionRecord, SessionRecord, Store};
use crate::views::{AuditPackQuery, AuditPackResult};

/// The pack format's name and version, first in the index.
pub const FORMAT: &str = "countersign-audit-pack/1";

/// The query, checked: days read, an amount with its currency.
struct Selection {
    from: Option<String>,
    to: Option<String>,
    action: Option<String>,
    min: Option<(Decimal, String)>,
    protocol: Option<String>,
    counterparty: Option<String>,
}

impl Selection {
    fn of(q: &AuditPackQuery) -> Result<Selection, EngineError> {
        let (from, to) = super::days(q.from.as_deref(), q.to.as_deref())?;
        let action = match q.action.as_deref().map(str::trim).filter(|a| !a.is_empty()) {
            None => None,
            Some(a @ ("approve" | "decline" | "counter")) => Some(a.to_owned()),
            Some(other) => {
                return Err(EngineError::InvalidInput(format!(
                    "action must be approve, decline or counter, not {other:?}."
                )))
            }
        };
        let min = match q
            .min_total
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            None => None,
            Some(text) => {
                let value = text.parse::<Decimal>().map_err(|_| {
                    EngineError::InvalidInput(format!(
                        "min_total must be a decimal amount like 100000, not {text:?}."
                    ))
                })?;
                let currency = q
                    .currency
                    .as_deref()
                    .map(str::trim)
                    .filter(|c| c.len() == 3 && c.chars().all(|ch| ch.is_ascii_uppercase()))
                    .ok_or_else(|| {
                        EngineError::InvalidInput(
                            "currency must be a three-letter code like USD when min_total is given (amounts are never compared across currencies).".into(),
                        )
                    })?;
                Some((value, currency.to_owned()))
            }
        };
        Ok(Selection {
            from,
            to,
            action,
            min,
            protocol: q.protocol.clone().filter(|p| !p.is_empty()),
            counterparty: q.counterparty.clone().filter(|c| !c.is_empty()),
        })
    }

    fn takes(&self, d: &DecisionFact) -> bool {
        let day: String = d.at.chars().take(10).collect();
        d.decision_id.is_some()
            && self.from.as_ref().is_none_or(|f| &day >= f)
            && self.to.as_ref().is_none_or(|t| &day <= t)
            && self.action.as_ref().is_none_or(|a| &d.action == a)
            && self.min.as_ref().is_none_or(|(min, currency)| {
                d.offer_total.as_ref().is_some_and(|t| {
                    &t.currency == currency && t.value.parse::<Decimal>().is_ok_and(|v| v >= *min)
                })
            })
    }
}

fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Only safe characters of a host-chosen id, for a file name.
fn safe(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(48)
        .collect()
}

fn pretty(value: &Value) -> Result<Vec<u8>, EngineError> {
    let mut text =
        serde_json::to_vec_pretty(value).map_err(|e| EngineError::Protocol(e.to_string()))?;
    text.push(b'\n');
    Ok(text)
}

/// Files of one session, written and hashed.
struct Written {
    dir: PathBuf,
    rel: String,
    files: serde_json::Map<String, Value>,
}

impl Written {
    fn put(&mut self, name: &str, bytes: &[u8]) -> Result<(), EngineError> {
        let path = self.dir.join(name);
        if let Some(parent) = path.parent() {
            crate::owner_only::create_dir(parent)?;
        }
        crate::owner_only::write(&path, bytes)?;
        self.files
            .insert(name.to_owned(), Value::String(sha256(bytes)));
        Ok(())
    }
}

/// One decision's file: what was signed and sent, the key, the receipt
/// and the message it approves where there is one, what the host appended.
fn decision_file(
    store: &Store,
    s: &SessionRecord,
    d: &DecisionRecord,
    keys: &[crate::store::SigningKeyRecord],
) -> Result<Value, EngineError> {
    let body: Value = serde_json::from_str(&d.body).unwrap_or(Value::Null);
    let receipt = body.get("receipt").cloned();
    // The message the receipt approves, from the stored record.
    let offer = match receipt
        .as_ref()
        .and_then(|r| r.pointer("/scope/offer_hash"))
        .and_then(Value::as_str)
    {
        Some(hash) => store
            .events(&s.host_id, &s.session_id)?
            .into_iter()
            .find(|e| e.event_hash == hash)
            .and_then(|e| serde_json::from_str::<Value>(&e.body).ok()),
        None => None,
    };
    let key = crate::history::signed_with_key(keys, d.key_fingerprint.as_deref());
    let mut file = json!({
        "decision_id": d.decision_id,
        "action": d.action,
        "at": d.at,
        "in_response_to": d.in_response_to,
        "outcome": d.outcome,
        "chain": crate::history::decision_chain(d.proposal.as_deref()),
        "signed_with_key": key,
        "request_body": d.body,
        "signed_headers": d.headers.as_deref().and_then(|h| serde_json::from_str::<Value>(h).ok()),
        "appended": d.appended.as_ref().map(|a| json!({"seq": a.seq, "event_hash": a.event_hash, "kind": a.kind})),
    });
    if let Some(receipt) = receipt {
        file["receipt"] = receipt;
        file["offer"] = offer.unwrap_or(Value::Null);
    }
    Ok(file)
}

/// Writes the pack for `q` into a new folder under `dir`.
pub(crate) fn write(
    store: &Store,
    desk: &Desk,
    dir: &Path,
    q: &AuditPackQuery,
    made_by: &crate::config::ApproverProfile,
    now: &str,
) -> Result<AuditPackResult, EngineError> {
    let selection = Selection::of(q)?;
    let stamp: String = now
        .chars()
        .filter(|c| c.is_ascii_digit())
        .take(14)
        .collect();
    let root = dir.join(format!("audit-pack-{stamp}"));
    let root = (1..)
        .map(|n| {
            if n == 1 {
                root.clone()
            } else {
                PathBuf::from(format!("{}-{n}", root.display()))
            }
        })
        .find(|p| !p.exists())
        .unwrap_or(root);
    crate::owner_only::create_dir(&root)?;

    let keys = store.signing_keys()?;
    let mut sessions = Vec::new();
    let mut decision_count = 0u32;
    let mut chosen: Vec<&super::facts::Facts> = desk
        .facts()
        .iter()
        .filter(|f| selection.protocol.as_ref().is_none_or(|p| &f.protocol == p))
        .filter(|f| {
            selection.counterparty.as_ref().is_none_or(|c| {
                desk.group_of(&f.host_id, &f.session_id)
                    .is_some_and(|g| &g.id == c)
            })
        })
        .filter(|f| f.decisions.iter().any(|d| selection.takes(d)))
        .collect();
    chosen.sort_by(|a, b| {
        a.opened_at
            .cmp(&b.opened_at)
            .then(a.session_id.cmp(&b.session_id))
    });

    for (n, f) in chosen.iter().enumerate() {
        let Some(s) = store.session(&f.host_id, &f.session_id)? else {
            continue;
        };
        let seam = protocol_of(&s)?.seam();
        let host = store.host(&s.host_id)?;
        let rel = format!(
            "sessions/{:04}-{}-{}",
            n + 1,
            safe(seam.label()).to_lowercase(),
            safe(&s.session_id)
        );
        let mut w = Written {
            dir: root.join(&rel),
            rel: rel.clone(),
            files: serde_json::Map::new(),
        };
        let events = store.events(&s.host_id, &s.session_id)?;
        w.put(
            "record.json",
            &pretty(&seam.export_record(host.as_ref(), &s, &events))?,
        )?;
        let approvals = crate::history::host_approvals(store, &s)?;
        w.put(
            "host-approvals.json",
            &pretty(&serde_json::to_value(&approvals).unwrap_or(Value::Null))?,
        )?;
        let mut listed = Vec::new();
        let records = store.decisions(&s.host_id, &s.session_id)?;
        for fact in f.decisions.iter().filter(|d| selection.takes(d)) {
            let Some(d) = records
                .iter()
                .find(|r| Some(&r.decision_id) == fact.decision_id.as_ref())
            else {
                continue;
            };
            let name = format!("decisions/{}.json", safe(&d.decision_id));
            w.put(&name, &pretty(&decision_file(store, &s, d, &keys)?)?)?;
            let chain = crate::history::decision_chain(d.proposal.as_deref());
            listed.push(json!({
                "file": name,
                "decision_id": d.decision_id,
                "action": d.action,
                "at": d.at,
                "by": fact.person,
                "role": fact.role,
                "rule": fact.rule,
                "reason": chain.as_ref().map(|c| c.reason.clone()),
                "policy_version": chain.as_ref().and_then(|c| c.policy_version),
                "offer_hash": d.in_response_to,
                "offer_total": fact.offer_total,
                "signed_with": d.key_fingerprint,
            }));
            decision_count += 1;
        }
        sessions.push(json!({
            "dir": w.rel,
            "protocol": s.protocol,
            "host": host.as_ref().map(|h| json!({"label": h.label, "url": h.url, "platform_key": h.platform_key})),
            "session_id": s.session_id,
            "counterparty": {
                "id": desk.group_of(&s.host_id, &s.session_id).map(|g| g.id.clone()),
                "name": s.counterparty.display_name(),
                "identities": f.identities,
            },
            "verification": s.verification,
            "files": Value::Object(w.files),
            "decisions": listed,
        }));
    }
    let session_count = sessions.len() as u32;
    let index = json!({
        "format": FORMAT,
        "made_at": now,
        "made_by": {"name": made_by.name, "email": made_by.email},
        "query": q,
        "console_keys": keys.iter().map(|k| json!({
            "fingerprint": k.fingerprint,
            "public_key": k.public_key,
            "since": k.since,
            "retired_at": k.retired_at,
        })).collect::<Vec<_>>(),
        "sessions": sessions,
    });
    crate::owner_only::write(&root.join("index.json"), &pretty(&index)?)?;
    crate::owner_only::write(&root.join("README.txt"), README.as_bytes())?;
    Ok(AuditPackResult {
        path: root.display().to_string(),
        sessions: session_count,
        decisions: decision_count,
    })
}

const README: &str = "A Countersign audit pack.

index.json names every session in this folder, every file with its SHA-256,
and every decision with who made it, as which role, under which rule.
Each session's folder holds its record in its protocol's own form
(record.json), each decision as it was signed and sent (decisions/), and
the host's record of approvals beside them (host-approvals.json).

Verify it offline:

    countersign-verify pack THIS-FOLDER

It checks every file against the index, every record's signatures and
chain, and each decision's signature against the record, and prints per
decision whether it is proven, by whom, as which role, under which rule.
";
