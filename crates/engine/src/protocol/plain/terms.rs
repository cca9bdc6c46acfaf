//! Plain terms as the console reads them from the stored thread: the terms
//! a request awaits and the terms they revise, their exact totals and the
//! change between them, the line-by-line diff, counter terms checked, and
//! what the thread shows became of them (the agent's report). The reading
//! of terms is `crates/plain`'s.

use rust_decimal::Decimal;
use serde_json::Value;

use crate::protocol::{
    Amount, CounterAt, Located, LogAnswer, PendingProposal, Proposal, StoredRef,
};
use crate::store::StoredEvent;
use crate::views::{
    Change, CounterCheck, Effect, FieldError, LineStatus, PlainCounterparty, PlainLineDiff,
    PlainLineItem, PlainTerms, PlainTermsDiff, PreviousRef, ProposalDiff, Scalar,
};

/// A stored entry, read.
pub(crate) fn entry(e: &StoredEvent) -> Option<Value> {
    serde_json::from_str(&e.body).ok()
}

/// The terms a stored `plain.terms` entry carries, read strictly.
pub(crate) fn terms_of(e: &StoredEvent) -> Option<plain::Terms> {
    if e.kind != plain::TERMS {
        return None;
    }
    plain::read_terms(entry(e)?.get("terms")?).ok()
}

fn amount_of(t: &plain::Terms) -> Amount {
    Amount {
        value: plain::terms::money_text(t.total),
        currency: t.currency.clone(),
    }
}

/// The total of the terms a stored entry carries.
pub(crate) fn amount_in(e: &StoredEvent) -> Option<Amount> {
    terms_of(e).map(|t| amount_of(&t))
}

/// `"2550.00 USD"` as an amount.
pub(crate) fn parse_amount(text: &str) -> Option<Amount> {
    let (value, currency) = text.trim().split_once(' ')?;
    value.parse::<Decimal>().ok()?;
    Some(Amount {
        value: value.to_owned(),
        currency: currency.to_owned(),
    })
}

/// New minus old, exact, better or worse by `crates/plain`'s direction
/// rule (the organization buys: a lower total is better).
pub(crate) fn change(old: &Amount, new: &Amount) -> Option<Change> {
    crate::protocol::amount_change(old, new, |delta| {
        plain::terms::price_effect(delta).map(|better| {
            if better {
                Effect::Better
            } else {
                Effect::Worse
            }
        })
    })
}

/// The stored terms entry of `request_id`.
fn of_request<'a>(events: &'a [StoredEvent], request_id: &str) -> Option<&'a StoredEvent> {
    events.iter().find(|e| {
        e.kind == plain::TERMS
            && entry(e)
                .and_then(|v| {
                    v.get("request_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .as_deref()
                == Some(request_id)
    })
}

/// The entry the terms at `e` revise.
pub(crate) fn revised<'a>(events: &'a [StoredEvent], e: &StoredEvent) -> Option<&'a StoredEvent> {
    let revises = entry(e)?.get("revises")?.as_str()?.to_owned();
    of_request(events, &revises)
}

/// The awaited terms and the ones they revise.
pub(crate) fn locate(events: &[StoredEvent], pending: &PendingProposal) -> Option<Located> {
    let stored = events.iter().find(|e| e.event_hash == pending.event_hash)?;
    let terms = terms_of(stored)?;
    let amount = Some(amount_of(&terms));
    let previous = revised(events, stored);
    let previous_amount = previous.and_then(amount_in);
    let change = match (&previous_amount, &amount) {
        (Some(old), Some(new)) => change(old, new),
        _ => None,
    };
    Some(Located {
        proposal: Proposal {
            seq: stored.seq,
            actor: stored.actor.clone(),
            value: entry(stored)?,
            amount,
        },
        previous: previous.map(|e| Proposal {
            seq: e.seq,
            actor: e.actor.clone(),
            value: entry(e).unwrap_or(Value::Null),
            amount: previous_amount,
        }),
        change,
        gap: None,
    })
}

/// Terms that left the pending set, as their pending record.
pub(crate) fn former(events: &[StoredEvent], event_hash: &str) -> Option<PendingProposal> {
    let stored = events.iter().find(|e| e.event_hash == event_hash)?;
    terms_of(stored)?;
    let request_id = entry(stored)?
        .get("request_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some(PendingProposal {
        seq: stored.seq,
        event_hash: stored.event_hash.clone(),
        kind: stored.kind.clone(),
        actor: stored.actor.clone(),
        expires_at: stored.at.clone(),
        approvals: Vec::new(),
        approvals_required: 1,
        draft: None,
        held_reason: None,
        request_id,
        action: None,
        amount: None,
        threshold: None,
        anex: None,
        chain: None,
    })
}

// ---- the contract's view shape ----

/// Normal-form terms in the contract's shape.
pub(crate) fn view(t: &plain::Terms) -> PlainTerms {
    let v = &t.value;
    let text = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    PlainTerms {
        counterparty: PlainCounterparty {
            name: text("/counterparty/name"),
            id: text("/counterparty/id"),
        },
        currency: t.currency.clone(),
        line_items: v
            .get("line_items")
            .and_then(Value::as_array)
            .map(|lines| lines.iter().map(line).collect())
            .unwrap_or_default(),
        term: v.get("term").and_then(Value::as_str).map(str::to_owned),
        conditions: v
            .get("conditions")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        total: plain::terms::money_text(t.total),
    }
}

fn line(v: &Value) -> PlainLineItem {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    PlainLineItem {
        description: text("description").unwrap_or_default(),
        sku: text("sku"),
        quantity: text("quantity").unwrap_or_default(),
        unit: text("unit"),
        unit_price: text("unit_price").unwrap_or_default(),
    }
}

fn key(l: &PlainLineItem) -> String {
    l.sku.clone().unwrap_or_else(|| l.description.clone())
}

fn scalar(old: Option<&str>, new: Option<&str>) -> Option<Scalar> {
    (old != new).then(|| Scalar {
        old: old.map(str::to_owned),
        new: new.map(str::to_owned),
    })
}

/// Two sets of terms compared: lines matched by SKU (else description).
pub(crate) fn diff(old: &plain::Terms, new: &plain::Terms) -> PlainTermsDiff {
    let (o, n) = (view(old), view(new));
    let mut rows = Vec::new();
    for nl in &n.line_items {
        match o.line_items.iter().find(|ol| key(ol) == key(nl)) {
            None => rows.push(PlainLineDiff {
                status: LineStatus::Added,
                key: key(nl),
                old: None,
                new: Some(nl.clone()),
                fields: Vec::new(),
            }),
            Some(ol) => {
                let mut fields = Vec::new();
                for (name, a, b) in [
                    ("description", Some(&ol.description), Some(&nl.description)),
                    ("sku", ol.sku.as_ref(), nl.sku.as_ref()),
                    ("quantity", Some(&ol.quantity), Some(&nl.quantity)),
                    ("unit", ol.unit.as_ref(), nl.unit.as_ref()),
                    ("unit_price", Some(&ol.unit_price), Some(&nl.unit_price)),
                ] {
                    if a != b {
                        fields.push(name.to_owned());
                    }
                }
                rows.push(PlainLineDiff {
                    status: if fields.is_empty() {
                        LineStatus::Unchanged
                    } else {
                        LineStatus::Changed
                    },
                    key: key(nl),
                    old: Some(ol.clone()),
                    new: Some(nl.clone()),
                    fields,
                });
            }
        }
    }
    for ol in &o.line_items {
        if !n.line_items.iter().any(|nl| key(nl) == key(ol)) {
            rows.push(PlainLineDiff {
                status: LineStatus::Removed,
                key: key(ol),
                old: Some(ol.clone()),
                new: None,
                fields: Vec::new(),
            });
        }
    }
    PlainTermsDiff {
        line_items: rows,
        conditions_added: n
            .conditions
            .iter()
            .filter(|c| !o.conditions.contains(c))
            .cloned()
            .collect(),
        conditions_removed: o
            .conditions
            .iter()
            .filter(|c| !n.conditions.contains(c))
            .cloned()
            .collect(),
        term: scalar(o.term.as_deref(), n.term.as_deref()),
        currency: scalar(Some(&o.currency), Some(&n.currency)),
        total: Scalar {
            old: Some(o.total.clone()),
            new: Some(n.total.clone()),
        },
        total_change: change(&amount_of(old), &amount_of(new)),
    }
}

/// Where the revised terms are.
pub(crate) fn previous_ref(located: &Located) -> Option<PreviousRef> {
    located.previous.as_ref().map(|p| PreviousRef {
        seq: p.seq,
        actor: p.actor.clone(),
    })
}

/// Counter terms read strictly, the problem at its field's path.
pub(crate) fn check_terms(counter: &Value) -> Result<plain::Terms, Vec<FieldError>> {
    plain::read_terms(counter).map_err(|_| {
        plain::problems(counter)
            .into_iter()
            .map(|e| FieldError {
                path: e.field,
                message: e.problem,
            })
            .collect()
    })
}

/// A counter checked against the terms `event_hash` (the diff whenever it
/// reads); `None` when that is not a stored terms entry. The counterparty
/// and currency are the request's: a counter changes what is bought and
/// for how much, not with whom.
pub(crate) fn check_counter(
    events: &[StoredEvent],
    event_hash: &str,
    counter: &Value,
    _at: &CounterAt<'_>,
) -> Option<CounterCheck> {
    let stored = events.iter().find(|e| e.event_hash == event_hash)?;
    let answered = terms_of(stored)?;
    Some(match check_terms(counter) {
        Ok(terms) => {
            let mut errors = Vec::new();
            if terms.value.get("counterparty") != answered.value.get("counterparty") {
                errors.push(FieldError {
                    path: "counterparty".into(),
                    message: "a counter keeps the counterparty the agent asked about".into(),
                });
            }
            if terms.currency != answered.currency {
                errors.push(FieldError {
                    path: "currency".into(),
                    message: format!("a counter keeps the currency ({})", answered.currency),
                });
            }
            if terms.value == answered.value {
                errors.push(FieldError {
                    path: "line_items".into(),
                    message: "these are the terms asked about: change something, or approve them"
                        .into(),
                });
            }
            CounterCheck {
                ok: errors.is_empty(),
                errors,
                diff: Some(ProposalDiff::PlainTerms(Box::new(diff(&answered, &terms)))),
            }
        }
        Err(errors) => CounterCheck {
            ok: false,
            errors,
            diff: None,
        },
    })
}

/// What the thread shows became of the terms at `seq`: the agent's report
/// (executed: accepted, with a breach when on other terms; abandoned:
/// declined), or later terms that revise them (replaced).
pub(crate) fn answer_on_log(events: &[StoredEvent], seq: u64) -> Option<LogAnswer> {
    let asked = events.iter().find(|e| e.seq == seq)?;
    let asked_value = entry(asked)?;
    let request_id = asked_value.get("request_id")?.as_str()?.to_owned();
    events.iter().filter(|e| e.seq > seq).find_map(|e| {
        let event = StoredRef::of(e);
        let v = entry(e)?;
        if e.kind == plain::TERMS {
            return Some(LogAnswer::Replaced { event });
        }
        if v.get("request_id").and_then(Value::as_str) != Some(request_id.as_str()) {
            return None;
        }
        match v.get("outcome").and_then(Value::as_str) {
            Some("executed") => Some(LogAnswer::Accepted {
                event,
                approved_by: Vec::new(),
            }),
            Some(_) => Some(LogAnswer::Answered {
                event,
                action: "decline",
            }),
            None => None,
        }
    })
}

/// When the agent executed the terms at `seq` on other terms than those,
/// why that breaks any approval of them.
pub(crate) fn executed_otherwise(events: &[StoredEvent], seq: u64) -> Option<String> {
    let asked = events.iter().find(|e| e.seq == seq)?;
    let asked_value = entry(asked)?;
    let request_id = asked_value.get("request_id")?.as_str()?;
    let report = events.iter().find(|e| {
        e.seq > seq
            && e.kind == plain::OUTCOME
            && entry(e)
                .and_then(|v| {
                    v.get("request_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .as_deref()
                == Some(request_id)
    })?;
    let report_value = entry(report)?;
    if report_value.get("outcome").and_then(Value::as_str) != Some("executed") {
        return None;
    }
    let executed = report_value.get("terms").cloned()?;
    (Some(&executed) != asked_value.get("terms")).then(|| {
        format!(
            "The org's agent reported at seq {} that it executed other terms than the ones asked about (and approved): it acted against the person's decision.",
            report.seq
        )
    })
}
