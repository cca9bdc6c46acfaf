//! Each desk list as CSV: one header row, every field quoted, counterparty
//! text neutralized where a spreadsheet would read a formula, money exact.

use super::{figures, Desk};
use crate::error::EngineError;
use crate::protocol::csv_field;
use crate::store::Store;
use crate::views::*;

fn line(fields: &[String]) -> String {
    let mut out = fields
        .iter()
        .map(|f| csv_field(f))
        .collect::<Vec<_>>()
        .join(",");
    out.push_str("\r\n");
    out
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

fn state(s: SessionState) -> String {
    match s {
        SessionState::Open => "open",
        SessionState::Agreed => "agreed",
        SessionState::Closed => "closed",
    }
    .into()
}

/// The list's file name part and its text.
pub(super) fn list(
    store: &Store,
    desk: &Desk,
    q: &DeskQuery,
    which: &DeskList,
) -> Result<(&'static str, String), EngineError> {
    let mut out = String::new();
    let name = match which {
        DeskList::Counterparties => {
            out += &line(
                &[
                    "counterparty_id",
                    "name",
                    "protocols",
                    "sessions",
                    "currency",
                    "agreed_sessions",
                    "agreed_total",
                    "opening_total",
                    "won",
                    "won_percent",
                    "median_wait_seconds",
                    "p90_wait_seconds",
                    "past_response_time",
                    "declines",
                    "counters",
                    "breaches",
                    "disputes",
                    "key_changes",
                ]
                .map(String::from),
            );
            for r in desk.overview(q)?.counterparties {
                // One row per currency (never summed across them); a
                // counterparty without money has one row with none.
                let money: Vec<Option<&CurrencyFigures>> = if r.money.is_empty() {
                    vec![None]
                } else {
                    r.money.iter().map(Some).collect()
                };
                for m in money {
                    out += &line(&[
                        r.id.clone(),
                        r.name.clone(),
                        r.protocols.join(" "),
                        r.sessions.to_string(),
                        m.map(|m| m.currency.clone()).unwrap_or_default(),
                        m.map(|m| m.agreed_sessions.to_string()).unwrap_or_default(),
                        m.map(|m| m.agreed_total.clone()).unwrap_or_default(),
                        m.map(|m| m.opening_total.clone()).unwrap_or_default(),
                        m.map(|m| m.won.clone()).unwrap_or_default(),
                        m.and_then(|m| m.won_percent.clone()).unwrap_or_default(),
                        opt(&r.waits.median_seconds),
                        opt(&r.waits.p90_seconds),
                        r.waits.past_response_time.to_string(),
                        r.declines.to_string(),
                        r.counters.to_string(),
                        r.breaches.to_string(),
                        r.disputes.to_string(),
                        r.key_changes.to_string(),
                    ]);
                }
            }
            "counterparties"
        }
        DeskList::Sessions { figure } => {
            out += &line(
                &[
                    "host_id",
                    "session_id",
                    "protocol",
                    "counterparty",
                    "state",
                    "status",
                    "verification",
                    "last_amount",
                    "currency",
                    "breaches",
                    "updated_at",
                ]
                .map(String::from),
            );
            for (host_id, session_id) in desk.sessions_behind(q, figure)? {
                let Some(s) = store.session(&host_id, &session_id)? else {
                    continue;
                };
                let r = crate::history::row(store, &s)?;
                out += &line(&[
                    r.host_id,
                    r.session_id,
                    r.protocol,
                    r.counterparty.display_name().to_owned(),
                    state(r.state),
                    r.status,
                    serde_json::to_value(r.verification)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    opt(&r.last_amount.as_ref().map(|a| a.value.clone())),
                    opt(&r.last_amount.as_ref().map(|a| a.currency.clone())),
                    r.breaches.to_string(),
                    r.updated_at,
                ]);
            }
            "sessions"
        }
        DeskList::Waits => {
            out += &line(
                &[
                    "host_id",
                    "session_id",
                    "protocol",
                    "counterparty",
                    "offer_at",
                    "decided_at",
                    "wait_seconds",
                    "respond_within_minutes",
                    "past_response_time",
                    "person",
                    "role",
                    "action",
                ]
                .map(String::from),
            );
            let inside = desk.sessions_behind(q, &DeskFigure::All)?;
            let facts = desk.facts().iter().filter(|f| {
                inside
                    .iter()
                    .any(|(h, s)| h == &f.host_id && s == &f.session_id)
            });
            for w in figures::waits(facts) {
                let past = w.past_response_time;
                out += &line(&[
                    w.session.host_id,
                    w.session.session_id,
                    w.protocol,
                    w.counterparty,
                    w.offer_at,
                    w.decided_at,
                    w.seconds.to_string(),
                    opt(&w.respond_within_minutes),
                    past.to_string(),
                    w.person,
                    opt(&w.role),
                    w.action,
                ]);
            }
            "waits"
        }
        DeskList::People => {
            out +=
                &line(&["person", "role", "approvals", "declines", "counters"].map(String::from));
            for p in desk.overview(q)?.people {
                out += &line(&[
                    p.person,
                    opt(&p.role),
                    p.approvals.to_string(),
                    p.declines.to_string(),
                    p.counters.to_string(),
                ]);
            }
            "people"
        }
        DeskList::CounterpartySessions { id } => {
            out += &line(
                &[
                    "host_id",
                    "session_id",
                    "protocol",
                    "state",
                    "opened_at",
                    "currency",
                    "opening",
                    "agreed",
                    "won",
                    "won_percent",
                ]
                .map(String::from),
            );
            for s in desk.counterparty(id, q)?.sessions {
                out += &line(&[
                    s.session.host_id,
                    s.session.session_id,
                    s.protocol,
                    state(s.state),
                    s.opened_at,
                    opt(&s.currency),
                    opt(&s.opening),
                    opt(&s.agreed),
                    opt(&s.won),
                    opt(&s.won_percent),
                ]);
            }
            "counterparty"
        }
    };
    Ok((name, out))
}
