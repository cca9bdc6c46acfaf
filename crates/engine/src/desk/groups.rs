//! Counterparties across protocols and hosts: sessions that share an
//! identity (a key, a DID, a protocol's id at its host) are one
//! counterparty, and so are identities a person linked. A display name
//! alone never joins two; two counterparties with the same declared name
//! are only said to be possibly the same.

use std::collections::{BTreeMap, HashMap};

use sha2::{Digest, Sha256};

use super::facts::Facts;
use crate::store::LinkRecord;

/// Union-find over identity strings.
#[derive(Default)]
struct Sets {
    index: HashMap<String, usize>,
    parent: Vec<usize>,
}

impl Sets {
    fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.parent.len();
        self.parent.push(i);
        self.index.insert(name.to_owned(), i);
        i
    }

    fn root(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn join(&mut self, a: &str, b: &str) {
        let (a, b) = (self.id(a), self.id(b));
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }
}

/// One counterparty: its id, its sessions (indexes into the facts), every
/// identity it is known by.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub id: String,
    pub name: String,
    pub sessions: Vec<usize>,
    pub identities: Vec<String>,
    pub maybe_same_as: Vec<String>,
}

/// The counterparty id of a set of identities: stable while the set's
/// least identity stays its least.
fn group_id(identities: &[String]) -> String {
    let least = identities.iter().min().map(String::as_str).unwrap_or("");
    let digest = Sha256::digest(least.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("cp_{hex}")
}

/// A declared name as compared for "may be the same": case and spacing
/// ignored.
fn name_key(name: &str) -> String {
    name.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Groups sessions into counterparties.
pub(crate) fn group(facts: &[Facts], links: &[LinkRecord]) -> Vec<Group> {
    let mut sets = Sets::default();
    // A session with no identity at all is its own counterparty.
    let own = |f: &Facts| format!("session {} at {}", f.session_id, f.host_id);
    for f in facts {
        let first = f.identities.first().cloned().unwrap_or_else(|| own(f));
        sets.id(&first);
        for other in f.identities.iter().skip(1) {
            sets.join(&first, other);
        }
    }
    for link in links.iter().filter(|l| l.unlinked_at.is_none()) {
        sets.join(&link.a, &link.b);
    }
    let mut by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, f) in facts.iter().enumerate() {
        let first = f.identities.first().cloned().unwrap_or_else(|| own(f));
        let i_id = sets.id(&first);
        let root = sets.root(i_id);
        by_root.entry(root).or_default().push(i);
    }
    let mut groups: Vec<Group> = by_root
        .into_values()
        .map(|sessions| {
            let mut identities: Vec<String> = sessions
                .iter()
                .flat_map(|&i| facts[i].identities.iter().cloned())
                .collect();
            identities.sort();
            identities.dedup();
            if identities.is_empty() {
                identities.push(own(&facts[sessions[0]]));
            }
            // The name of its latest session.
            let latest = sessions
                .iter()
                .max_by(|&&a, &&b| facts[a].last_at.cmp(&facts[b].last_at))
                .copied()
                .unwrap_or(sessions[0]);
            Group {
                id: group_id(&identities),
                name: facts[latest].name.clone(),
                sessions,
                identities,
                maybe_same_as: Vec::new(),
            }
        })
        .collect();
    // Same declared name, other identities: possibly the same.
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    for (gi, g) in groups.iter().enumerate() {
        let mut names: Vec<String> = g
            .sessions
            .iter()
            .map(|&i| name_key(&facts[i].name))
            .filter(|n| !n.is_empty())
            .collect();
        names.sort();
        names.dedup();
        for n in names {
            by_name.entry(n).or_default().push(gi);
        }
    }
    let ids: Vec<String> = groups.iter().map(|g| g.id.clone()).collect();
    for members in by_name.values().filter(|m| m.len() > 1) {
        for &gi in members {
            for &other in members.iter().filter(|&&o| o != gi) {
                if !groups[gi].maybe_same_as.contains(&ids[other]) {
                    groups[gi].maybe_same_as.push(ids[other].clone());
                }
            }
        }
    }
    for g in &mut groups {
        g.maybe_same_as.sort();
    }
    groups
}
