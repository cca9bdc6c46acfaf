//! The vendor manager's desk: every counterparty across protocols and
//! hosts, what was won against opening asks and how fast offers were
//! decided, the sessions behind each figure, CSV of each list, and the
//! audit pack. It reads the protocols' records and never writes them; a
//! person's link between two identities is the person's own record.

mod csv;
pub(crate) mod facts;
mod figures;
mod groups;
pub(crate) mod pack;

use std::path::Path;

use time::macros::format_description;
use time::Date;

use crate::error::EngineError;
use crate::store::Store;
use crate::views::*;
use facts::Facts;
use groups::Group;

/// Reads the figures of every session that has none, a few sessions at a
/// time so the store is never held for long: the first desk a console
/// opens on a store it upgraded is then as quick as every later one.
pub(crate) fn warm(ctx: &crate::context::Context) {
    loop {
        let done = match ctx.store() {
            Ok(store) => facts::warm(&store, ctx.humanizer(), 50),
            Err(e) => Err(e),
        };
        match done {
            Ok(0) => return,
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
            Err(e) => {
                tracing::warn!(error = %e, "reading the desk's figures failed");
                return;
            }
        }
    }
}

/// A day as a person types it, named in the error when it is not one.
pub(crate) fn day(text: Option<&str>, name: &str) -> Result<Option<String>, EngineError> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    Date::parse(text, format_description!("[year]-[month]-[day]"))
        .map(|_| Some(text.to_owned()))
        .map_err(|_| {
            EngineError::InvalidInput(format!(
                "{name} must be a day like 2026-01-31, not {text:?}."
            ))
        })
}

/// A range of days as a person typed it, checked: each a day, the first
/// not after the last.
pub(crate) fn days(
    from: Option<&str>,
    to: Option<&str>,
) -> Result<(Option<String>, Option<String>), EngineError> {
    let (from, to) = (day(from, "from")?, day(to, "to")?);
    if let (Some(f), Some(t)) = (&from, &to) {
        if f > t {
            return Err(EngineError::InvalidInput(format!(
                "from ({f}) must not be after to ({t})."
            )));
        }
    }
    Ok((from, to))
}

/// The range of a query, checked.
struct Range {
    from: Option<String>,
    to: Option<String>,
    protocol: Option<String>,
}

impl Range {
    fn of(q: &DeskQuery) -> Result<Range, EngineError> {
        let (from, to) = days(q.from.as_deref(), q.to.as_deref())?;
        Ok(Range {
            from,
            to,
            protocol: q.protocol.clone().filter(|p| !p.is_empty()),
        })
    }

    fn holds(&self, f: &Facts) -> bool {
        let day: String = f.opened_at.chars().take(10).collect();
        self.from.as_ref().is_none_or(|from| &day >= from)
            && self.to.as_ref().is_none_or(|to| &day <= to)
            && self.protocol.as_ref().is_none_or(|p| &f.protocol == p)
    }
}

/// Everything the desk reads, grouped.
pub(crate) struct Desk {
    facts: Vec<Facts>,
    groups: Vec<Group>,
    links: Vec<crate::store::LinkRecord>,
    /// Each host's id and label, to show a protocol id with its host.
    hosts: Vec<(String, String)>,
}

impl Desk {
    /// Reads every session's figures and groups them.
    pub(crate) fn read(store: &Store, human: &humanize::Humanizer) -> Result<Desk, EngineError> {
        let facts = facts::all(store, human)?;
        let links = store.identity_links()?;
        let groups = groups::group(&facts, &links);
        let hosts = store
            .hosts()?
            .into_iter()
            .map(|h| (h.host_id, h.label))
            .collect();
        Ok(Desk {
            facts,
            groups,
            links,
            hosts,
        })
    }

    fn group(&self, id: &str) -> Result<&Group, EngineError> {
        self.groups
            .iter()
            .find(|g| g.id == id)
            .ok_or_else(|| EngineError::NotFound {
                what: "counterparty",
                id: id.to_owned(),
            })
    }

    fn row(&self, g: &Group, range: &Range) -> CounterpartyRow {
        let facts: Vec<&Facts> = g
            .sessions
            .iter()
            .map(|&i| &self.facts[i])
            .filter(|f| range.holds(f))
            .collect();
        let mut protocols: Vec<String> = facts.iter().map(|f| f.protocol.clone()).collect();
        protocols.sort();
        protocols.dedup();
        let waits = figures::waits(facts.iter().copied());
        let count = |action: &str| {
            facts
                .iter()
                .flat_map(|f| f.decisions.iter())
                .filter(|d| d.action == action)
                .count() as u32
        };
        CounterpartyRow {
            id: g.id.clone(),
            name: g.name.clone(),
            protocols,
            sessions: facts.len() as u32,
            money: figures::per_currency(facts.iter().copied()),
            waits: figures::wait_figures(&waits),
            declines: count("decline"),
            counters: count("counter"),
            breaches: facts.iter().map(|f| f.breaches).sum(),
            disputes: facts.iter().filter(|f| f.disputed).count() as u32,
            key_changes: self
                .identities(g)
                .iter()
                .filter(|i| i.replaces.is_some() || i.changed_mid_session)
                .count() as u32,
            maybe_same_as: g.maybe_same_as.clone(),
        }
    }

    /// The desk for a range.
    pub(crate) fn overview(&self, q: &DeskQuery) -> Result<DeskOverview, EngineError> {
        let range = Range::of(q)?;
        let inside = || self.facts.iter().filter(|f| range.holds(f));
        let waits = figures::waits(inside());
        let mut counterparties: Vec<CounterpartyRow> = self
            .groups
            .iter()
            .map(|g| self.row(g, &range))
            .filter(|r| r.sessions > 0)
            .collect();
        counterparties.sort_by(|a, b| b.sessions.cmp(&a.sessions).then(a.name.cmp(&b.name)));
        Ok(DeskOverview {
            query: q.clone(),
            sessions: inside().count() as u32,
            money: figures::per_currency(inside()),
            months: figures::per_month(inside()),
            waits: figures::wait_figures(&waits),
            slowest: waits.iter().take(10).cloned().collect(),
            people: figures::people(inside()),
            breaches: inside().map(|f| f.breaches).sum(),
            disputes: inside().filter(|f| f.disputed).count() as u32,
            counterparties,
        })
    }

    /// One counterparty's page.
    pub(crate) fn counterparty(
        &self,
        id: &str,
        q: &DeskQuery,
    ) -> Result<CounterpartyPage, EngineError> {
        let range = Range::of(q)?;
        let g = self.group(id)?;
        let facts: Vec<&Facts> = g
            .sessions
            .iter()
            .map(|&i| &self.facts[i])
            .filter(|f| range.holds(f))
            .collect();
        let mut by_state: Vec<StateCount> = Vec::new();
        for f in &facts {
            match by_state
                .iter_mut()
                .find(|c| c.protocol == f.protocol && c.state == f.state)
            {
                Some(c) => c.count += 1,
                None => by_state.push(StateCount {
                    protocol: f.protocol.clone(),
                    state: f.state,
                    count: 1,
                }),
            }
        }
        let mut sessions: Vec<SessionWin> = facts.iter().map(|f| figures::session_win(f)).collect();
        sessions.sort_by(|a, b| a.opened_at.cmp(&b.opened_at));
        Ok(CounterpartyPage {
            row: self.row(g, &range),
            identities: self.identities(g),
            links: self
                .links
                .iter()
                .filter(|l| l.unlinked_at.is_none() && g.identities.contains(&l.a))
                .map(|l| LinkView {
                    link_id: l.link_id,
                    a: l.a.clone(),
                    b: l.b.clone(),
                    linked_by: l.linked_by.clone(),
                    linked_at: l.linked_at.clone(),
                })
                .collect(),
            by_state,
            sessions,
            waits: figures::waits(facts.iter().copied()),
        })
    }

    /// Every identity of a counterparty, with when it was seen (over all
    /// its sessions, whatever the range: an identity's history is whole),
    /// and each key that took over from another.
    fn identities(&self, g: &Group) -> Vec<IdentityView> {
        let sessions: Vec<&Facts> = g.sessions.iter().map(|&i| &self.facts[i]).collect();
        let mut views: Vec<IdentityView> = g
            .identities
            .iter()
            .map(|identity| {
                let mut first = String::new();
                let mut last = String::new();
                let mut count = 0;
                let mut changed = false;
                for f in sessions.iter().filter(|f| f.identities.contains(identity)) {
                    count += 1;
                    let key = f.keys.iter().find(|k| &k.identity == identity);
                    let (a, b) = key
                        .map(|k| (k.first_at.as_str(), k.last_at.as_str()))
                        .unwrap_or((f.opened_at.as_str(), f.last_at.as_str()));
                    if first.is_empty() || a < first.as_str() {
                        first = a.to_owned();
                    }
                    if b > last.as_str() {
                        last = b.to_owned();
                    }
                    changed |= key.is_some_and(|k| k.changed_mid_session);
                }
                IdentityView {
                    kind: if identity.starts_with("key:") {
                        "key"
                    } else if identity.starts_with("did:") {
                        "did"
                    } else {
                        "id"
                    }
                    .into(),
                    label: self.label(identity),
                    identity: identity.clone(),
                    first_seen: first,
                    last_seen: last,
                    sessions: count,
                    changed_mid_session: changed,
                    replaces: None,
                }
            })
            .collect();
        // A key replaces the latest key first used before it by a session
        // under one of the same protocol ids.
        let ids_of = |key: &str| -> Vec<&String> {
            sessions
                .iter()
                .filter(|f| f.keys.iter().any(|k| k.identity == key))
                .flat_map(|f| f.identities.iter().filter(|i| !i.starts_with("key:")))
                .collect()
        };
        let keys: Vec<(String, String)> = views
            .iter()
            .filter(|v| v.kind == "key")
            .map(|v| (v.identity.clone(), v.first_seen.clone()))
            .collect();
        for v in views.iter_mut().filter(|v| v.kind == "key") {
            let mine = ids_of(&v.identity);
            v.replaces = keys
                .iter()
                .filter(|(other, first)| {
                    other != &v.identity
                        && first < &v.first_seen
                        && ids_of(other).iter().any(|i| mine.contains(i))
                })
                .max_by(|a, b| a.1.cmp(&b.1))
                .map(|(other, _)| other.clone());
        }
        views
    }

    /// An identity as a person reads it: a protocol id's host by its label.
    fn label(&self, identity: &str) -> String {
        for (id, label) in &self.hosts {
            if let Some(head) = identity.strip_suffix(&format!(" at {id}")) {
                return format!("{head} at {label}");
            }
        }
        identity.to_owned()
    }

    /// Whether a session is behind a figure.
    fn behind(&self, figure: &DeskFigure, f: &Facts, group_of: &dyn Fn(&Facts) -> bool) -> bool {
        match figure {
            DeskFigure::All => true,
            DeskFigure::Currency { currency } => figures::currency_of(f) == Some(currency.as_str()),
            DeskFigure::Agreed { currency } => {
                f.agreed.as_ref().is_some_and(|a| &a.currency == currency)
            }
            DeskFigure::PastResponseTime => f
                .decisions
                .iter()
                .filter_map(|d| figures::wait(f, d))
                .any(|w| w.past_response_time),
            DeskFigure::Person { person, role } => f
                .decisions
                .iter()
                .any(|d| &d.person == person && &d.role == role),
            DeskFigure::Breaches => f.breaches > 0,
            DeskFigure::Disputes => f.disputed,
            DeskFigure::Counterparty { .. } => group_of(f),
        }
    }

    /// The sessions behind a figure, as (host, session), newest first.
    pub(crate) fn sessions_behind(
        &self,
        q: &DeskQuery,
        figure: &DeskFigure,
    ) -> Result<Vec<(String, String)>, EngineError> {
        let range = Range::of(q)?;
        let members: Vec<usize> = match figure {
            DeskFigure::Counterparty { id } => self.group(id)?.sessions.clone(),
            _ => Vec::new(),
        };
        let group_of = |f: &Facts| {
            members.iter().any(|&i| {
                self.facts[i].host_id == f.host_id && self.facts[i].session_id == f.session_id
            })
        };
        let mut out: Vec<&Facts> = self
            .facts
            .iter()
            .filter(|f| range.holds(f) && self.behind(figure, f, &group_of))
            .collect();
        out.sort_by(|a, b| b.opened_at.cmp(&a.opened_at));
        Ok(out
            .into_iter()
            .map(|f| (f.host_id.clone(), f.session_id.clone()))
            .collect())
    }

    /// Checks a link a person asks for: two known identities of two
    /// counterparties not already one.
    pub(crate) fn check_link(&self, a: &str, b: &str) -> Result<(), EngineError> {
        let of = |identity: &str| {
            self.groups
                .iter()
                .find(|g| g.identities.iter().any(|i| i == identity))
                .ok_or_else(|| {
                    EngineError::InvalidInput(format!(
                        "{identity:?} is no identity of any counterparty here."
                    ))
                })
        };
        let (ga, gb) = (of(a)?, of(b)?);
        if ga.id == gb.id {
            return Err(EngineError::InvalidInput(format!(
                "{a:?} and {b:?} are already one counterparty ({}).",
                ga.name
            )));
        }
        Ok(())
    }

    /// The facts of every session, for the pack.
    pub(crate) fn facts(&self) -> &[Facts] {
        &self.facts
    }

    /// The counterparty id of a session.
    pub(crate) fn group_of(&self, host_id: &str, session_id: &str) -> Option<&Group> {
        self.groups.iter().find(|g| {
            g.sessions.iter().any(|&i| {
                self.facts[i].host_id == host_id && self.facts[i].session_id == session_id
            })
        })
    }
}

/// Writes a desk list as CSV into `dir`.
pub(crate) fn export_csv(
    store: &Store,
    desk: &Desk,
    dir: &Path,
    q: &DeskQuery,
    list: &DeskList,
    stamp: &str,
) -> Result<ExportResult, EngineError> {
    let (name, text) = csv::list(store, desk, q, list)?;
    crate::owner_only::create_dir(dir)?;
    let path = dir.join(format!("desk-{name}-{stamp}.csv"));
    crate::owner_only::write(&path, text.as_bytes())?;
    Ok(ExportResult {
        path: path.display().to_string(),
        bytes: text.len() as u64,
    })
}
