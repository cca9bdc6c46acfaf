//! The agents a host process has authenticated, kept so that the next
//! request of the same agent does not read its row first: on PostgreSQL
//! that read is a round trip of its own on every signed request. A copy is
//! never trusted alone: the statement that spends the request's nonce
//! reads the row again ([`super::PrincipalRepo::spend_agent_nonce`]), spends
//! nothing for an agent revoked or holding another key meanwhile, and
//! answers the row as it is now, which replaces the copy. So a revocation
//! made by any process holds from the next request on, as before.
//!
//! SQLite keeps no copies: its read costs no round trip, and its nonces
//! live in a file of their own that cannot read the agents.
//!
//! It also keeps the ANP logs it answered ([`LogCopies`]): an append is
//! answered with the session's whole log, and events never change once
//! appended, so a commit asks PostgreSQL only for the events after those
//! this process already holds, instead of the whole log on every append.

use std::collections::HashMap;
use std::sync::Mutex;

use super::AgentRow;

/// At most this many agents are kept; past it the copies start over.
const MOST_COPIES: usize = 4096;

/// This process's copies of agents' rows, by id.
#[derive(Debug, Default)]
pub(crate) struct AgentCopies(Mutex<HashMap<String, AgentRow>>);

impl AgentCopies {
    /// The copy of agent `id`, if one is kept.
    pub(crate) fn get(&self, id: &str) -> Option<AgentRow> {
        self.0.lock().ok()?.get(id).cloned()
    }

    /// Keeps `agent` as read just now (a revoked agent is forgotten).
    pub(crate) fn keep(&self, agent: &AgentRow) {
        let Ok(mut copies) = self.0.lock() else {
            return;
        };
        if agent.status == anp::api::AgentStatus::Revoked {
            copies.remove(&agent.id);
            return;
        }
        if copies.len() >= MOST_COPIES && !copies.contains_key(&agent.id) {
            copies.clear();
        }
        copies.insert(agent.id.clone(), agent.clone());
    }

    /// What the statement that spent a nonce for `copy` read of its agent
    /// (`now`), as the principal: the row when it still holds the copy's
    /// key and is not revoked, which then replaces the copy; else `None`,
    /// and the copy is forgotten.
    pub(crate) fn settle(&self, copy: &AgentRow, now: Option<AgentRow>) -> Option<AgentRow> {
        let now = now.filter(|a| {
            a.public_key == copy.public_key && a.status != anp::api::AgentStatus::Revoked
        });
        match &now {
            Some(a) => self.keep(a),
            None => self.forget(&copy.id),
        }
        now
    }

    /// Forgets agent `id`.
    pub(crate) fn forget(&self, id: &str) {
        if let Ok(mut copies) = self.0.lock() {
            copies.remove(id);
        }
    }
}

/// At most this many bytes of events are kept; past it the logs start
/// over.
const MOST_LOG_BYTES: usize = 32 << 20;

/// Sessions' logs as this process last answered them: each a prefix of
/// the session's events (seq 1 on), JSON text.
#[derive(Debug, Default)]
pub(crate) struct LogCopies(Mutex<Logs>);

#[derive(Debug, Default)]
struct Logs {
    by_session: HashMap<String, Vec<String>>,
    bytes: usize,
}

impl LogCopies {
    /// How many of the session's first events are kept.
    pub(crate) fn known(&self, session: &str) -> u64 {
        self.0
            .lock()
            .ok()
            .and_then(|logs| logs.by_session.get(session).map(Vec::len))
            .map_or(0, |n| n as u64)
    }

    /// The events after `after`, given `fresh`, the session's events after
    /// `asked_after` (what was read from the store, up to `count`, all of
    /// its events): the kept ones between `after` and `asked_after` and
    /// then `fresh`. Keeps what is new. `None` when the kept log no longer
    /// reaches `asked_after` (it was dropped meanwhile), or the events do
    /// not add up to `count`: read the log instead.
    pub(crate) fn join(
        &self,
        session: &str,
        after: u64,
        asked_after: u64,
        fresh: Vec<String>,
        count: u64,
    ) -> Option<Vec<String>> {
        let (after, asked_after) = (
            usize::try_from(after).ok()?,
            usize::try_from(asked_after).ok()?,
        );
        if asked_after.checked_add(fresh.len())? as u64 != count {
            return None;
        }
        let mut logs = self.0.lock().ok()?;
        let logs = &mut *logs;
        if asked_after == after
            && after > 0
            && logs.by_session.get(session).map_or(0, Vec::len) < after
        {
            // Asked for the tail alone, holding less: nothing to keep.
            return Some(fresh);
        }
        let kept = logs.by_session.entry(session.to_owned()).or_default();
        if kept.len() < asked_after || after > asked_after {
            return None;
        }
        let mut out = kept[after..asked_after].to_vec();
        if kept.len() < asked_after + fresh.len() {
            let new = &fresh[kept.len() - asked_after..];
            logs.bytes += new.iter().map(String::len).sum::<usize>();
            kept.extend(new.iter().cloned());
        }
        out.extend(fresh);
        if logs.bytes > MOST_LOG_BYTES {
            logs.by_session.clear();
            logs.bytes = 0;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anp::api::AgentStatus;

    fn agent(id: &str, status: AgentStatus) -> AgentRow {
        AgentRow {
            id: id.into(),
            public_key: "k".into(),
            fingerprint: "f".into(),
            agent_name: "A".into(),
            vendor_name: "V".into(),
            contact_email: "a@v.example".into(),
            status,
            registered_at: "2026-12-07T00:00:00Z".into(),
            names_verified: false,
        }
    }

    fn events(from: u64, to: u64) -> Vec<String> {
        (from..=to).map(|n| format!("e{n}")).collect()
    }

    #[test]
    fn a_log_is_read_from_the_store_once_and_answered_whole_after() {
        let logs = LogCopies::default();
        assert_eq!(logs.known("s"), 0);
        assert_eq!(logs.join("s", 0, 0, events(1, 3), 3), Some(events(1, 3)));
        assert_eq!(logs.known("s"), 3);
        // The next commit asks for the events after the three kept.
        assert_eq!(logs.join("s", 0, 3, events(4, 5), 5), Some(events(1, 5)));
        assert_eq!(logs.join("s", 2, 5, events(6, 6), 6), Some(events(3, 6)));
        assert_eq!(logs.known("s"), 6);
        // Another request of this process extended it meanwhile.
        assert_eq!(logs.join("s", 0, 4, events(5, 7), 7), Some(events(1, 7)));
        assert_eq!(logs.known("s"), 7);
        // Events that do not add up to the session's count: read instead.
        assert_eq!(logs.join("s", 0, 7, events(8, 8), 9), None);
        // A tail asked for alone, holding nothing, is answered as read.
        assert_eq!(logs.join("t", 4, 4, events(5, 6), 6), Some(events(5, 6)));
        assert_eq!(logs.known("t"), 0);
    }

    #[test]
    fn a_revoked_agent_is_never_kept_and_the_copies_stay_bounded() {
        let copies = AgentCopies::default();
        copies.keep(&agent("a", AgentStatus::Sandbox));
        assert!(copies.get("a").is_some());
        copies.keep(&agent("a", AgentStatus::Revoked));
        assert!(copies.get("a").is_none(), "revoked: forgotten");
        for n in 0..MOST_COPIES + 1 {
            copies.keep(&agent(&format!("a{n}"), AgentStatus::Verified));
        }
        let kept = copies.0.lock().map(|c| c.len()).unwrap_or(usize::MAX);
        assert!(kept <= MOST_COPIES, "{kept}");
        copies.forget(&format!("a{MOST_COPIES}"));
        assert!(copies.get(&format!("a{MOST_COPIES}")).is_none());
    }
}
