//! The desk's arithmetic over sessions' figures: money per currency (never
//! summed across currencies), what was won against opening asks, waits as
//! nearest-rank percentiles. Pure over [`Facts`].

use std::collections::BTreeMap;

use rust_decimal::{Decimal, RoundingStrategy};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::facts::{DecisionFact, Facts};
use crate::views::{
    CurrencyFigures, MonthFigures, PersonFigures, SessionRef, SessionWin, WaitFigures, WaitRow,
};

fn dec(text: &str) -> Option<Decimal> {
    text.parse().ok()
}

fn money(d: Decimal) -> String {
    d.normalize().to_string()
}

/// `part` of `whole` in percent, half-even to two places; none from zero.
fn percent(part: Decimal, whole: Decimal) -> Option<String> {
    (!whole.is_zero()).then(|| {
        let p = (part / whole * Decimal::ONE_HUNDRED)
            .round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven);
        format!("{p:.2}")
    })
}

/// Opening ask and agreed total of one session, when both are in one
/// currency: (currency, opening, agreed).
fn opening_and_agreed(f: &Facts) -> Option<(&str, Decimal, Decimal)> {
    let (o, a) = (f.opening.as_ref()?, f.agreed.as_ref()?);
    (o.currency == a.currency).then_some(())?;
    Some((a.currency.as_str(), dec(&o.value)?, dec(&a.value)?))
}

/// One session with what was won in it.
pub(crate) fn session_win(f: &Facts) -> SessionWin {
    let both = opening_and_agreed(f);
    SessionWin {
        session: SessionRef {
            host_id: f.host_id.clone(),
            session_id: f.session_id.clone(),
        },
        protocol: f.protocol.clone(),
        state: f.state,
        opened_at: f.opened_at.clone(),
        currency: f
            .agreed
            .as_ref()
            .or(f.opening.as_ref())
            .map(|a| a.currency.clone()),
        opening: f.opening.as_ref().map(|a| a.value.clone()),
        agreed: f.agreed.as_ref().map(|a| a.value.clone()),
        won: both.map(|(_, o, a)| money(o - a)),
        won_percent: both.and_then(|(_, o, a)| percent(o - a, o)),
    }
}

/// The currency a session's money is in.
pub(crate) fn currency_of(f: &Facts) -> Option<&str> {
    f.agreed
        .as_ref()
        .or(f.opening.as_ref())
        .map(|a| a.currency.as_str())
}

/// Money per currency, in currency order.
pub(crate) fn per_currency<'a>(facts: impl Iterator<Item = &'a Facts>) -> Vec<CurrencyFigures> {
    #[derive(Default)]
    struct Sum {
        sessions: u32,
        agreed_sessions: u32,
        agreed: Decimal,
        opening: Decimal,
        won: Decimal,
    }
    let mut sums: BTreeMap<String, Sum> = BTreeMap::new();
    for f in facts {
        let Some(currency) = currency_of(f) else {
            continue;
        };
        let sum = sums.entry(currency.to_owned()).or_default();
        sum.sessions += 1;
        if let Some(agreed) = f.agreed.as_ref().and_then(|a| dec(&a.value)) {
            sum.agreed_sessions += 1;
            sum.agreed += agreed;
        }
        if let Some((_, o, a)) = opening_and_agreed(f) {
            sum.opening += o;
            sum.won += o - a;
        }
    }
    sums.into_iter()
        .map(|(currency, s)| CurrencyFigures {
            currency,
            sessions: s.sessions,
            agreed_sessions: s.agreed_sessions,
            agreed_total: money(s.agreed),
            opening_total: money(s.opening),
            won: money(s.won),
            won_percent: percent(s.won, s.opening),
        })
        .collect()
}

/// Agreed money and wins per month (of the session's first entry) and
/// currency, oldest first.
pub(crate) fn per_month<'a>(facts: impl Iterator<Item = &'a Facts>) -> Vec<MonthFigures> {
    let mut sums: BTreeMap<(String, String), (Decimal, Decimal)> = BTreeMap::new();
    for f in facts {
        let Some(agreed) = f.agreed.as_ref() else {
            continue;
        };
        let Some(value) = dec(&agreed.value) else {
            continue;
        };
        let month: String = f.opened_at.chars().take(7).collect();
        let sum = sums.entry((month, agreed.currency.clone())).or_default();
        sum.0 += value;
        if let Some((_, o, a)) = opening_and_agreed(f) {
            sum.1 += o - a;
        }
    }
    sums.into_iter()
        .map(|((month, currency), (agreed, won))| MonthFigures {
            month,
            currency,
            agreed_total: money(agreed),
            won: money(won),
        })
        .collect()
}

fn time(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &Rfc3339).ok()
}

/// The wait before one decision, when the offer's arrival is known.
pub(crate) fn wait(f: &Facts, d: &DecisionFact) -> Option<WaitRow> {
    let offered = time(d.offer_at.as_deref()?)?;
    let decided = time(&d.at)?;
    let seconds = (decided - offered).whole_seconds().max(0) as u64;
    let mut row = WaitRow {
        session: SessionRef {
            host_id: f.host_id.clone(),
            session_id: f.session_id.clone(),
        },
        protocol: f.protocol.clone(),
        counterparty: f.name.clone(),
        offer_at: d.offer_at.clone().unwrap_or_default(),
        decided_at: d.at.clone(),
        seconds,
        respond_within_minutes: d.respond_within_minutes,
        due_at: d.due_at.clone(),
        past_response_time: false,
        person: d.person.clone(),
        role: d.role.clone(),
        action: d.action.clone(),
    };
    row.past_response_time = past_response_time(&row);
    Some(row)
}

/// True when a decision came after its step was due: from the moment the
/// step opened when the host said when that was, else from the offer's
/// arrival (a first step opens when the offer arrives).
fn past_response_time(w: &WaitRow) -> bool {
    match (w.due_at.as_deref().and_then(time), time(&w.decided_at)) {
        (Some(due), Some(decided)) => decided > due,
        _ => w
            .respond_within_minutes
            .is_some_and(|m| w.seconds > u64::from(m) * 60),
    }
}

/// Every wait of these sessions, slowest first.
pub(crate) fn waits<'a>(facts: impl Iterator<Item = &'a Facts>) -> Vec<WaitRow> {
    let mut rows: Vec<WaitRow> = facts
        .flat_map(|f| f.decisions.iter().filter_map(move |d| wait(f, d)))
        .collect();
    rows.sort_by(|a, b| {
        b.seconds
            .cmp(&a.seconds)
            .then_with(|| a.decided_at.cmp(&b.decided_at))
    });
    rows
}

/// The `p`th percentile by nearest rank of ascending `sorted`.
fn nearest_rank(sorted: &[u64], p: u64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len() as u64;
    let rank = (p * n).div_ceil(100).max(1);
    sorted.get(rank as usize - 1).copied()
}

/// Median, 90th percentile and how many went past their response time.
pub(crate) fn wait_figures(rows: &[WaitRow]) -> WaitFigures {
    let mut seconds: Vec<u64> = rows.iter().map(|w| w.seconds).collect();
    seconds.sort_unstable();
    WaitFigures {
        decisions: rows.len() as u32,
        median_seconds: nearest_rank(&seconds, 50),
        p90_seconds: nearest_rank(&seconds, 90),
        past_response_time: rows.iter().filter(|w| w.past_response_time).count() as u32,
    }
}

/// Decisions by person and role.
pub(crate) fn people<'a>(facts: impl Iterator<Item = &'a Facts>) -> Vec<PersonFigures> {
    let mut by: BTreeMap<(String, Option<String>), (u32, u32, u32)> = BTreeMap::new();
    for d in facts.flat_map(|f| f.decisions.iter()) {
        let counts = by.entry((d.person.clone(), d.role.clone())).or_default();
        match d.action.as_str() {
            "approve" => counts.0 += 1,
            "decline" => counts.1 += 1,
            "counter" => counts.2 += 1,
            _ => {}
        }
    }
    by.into_iter()
        .map(
            |((person, role), (approvals, declines, counters))| PersonFigures {
                person,
                role,
                approvals,
                declines,
                counters,
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        assert_eq!(nearest_rank(&[], 50), None);
        assert_eq!(nearest_rank(&[7], 90), Some(7));
        assert_eq!(nearest_rank(&[1, 2, 3, 4], 50), Some(2));
        assert_eq!(nearest_rank(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90), Some(9));
        assert_eq!(
            nearest_rank(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 90),
            Some(10)
        );
    }

    #[test]
    fn percent_is_half_even_and_none_from_zero() {
        assert_eq!(
            percent(Decimal::from(1), Decimal::from(3)),
            Some("33.33".into())
        );
        assert_eq!(
            percent(Decimal::from(1), Decimal::from(8)),
            Some("12.50".into())
        );
        assert_eq!(percent(Decimal::from(1), Decimal::ZERO), None);
    }
}
