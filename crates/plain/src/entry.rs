//! A plain-terms thread's log: entries the host writes and signs with its
//! platform key, each chained to the one before by its hash. An entry is
//! the terms an agent asked about (`plain.terms`) or what the agent reports
//! it then did (`plain.outcome`). Its hash is `sha256:` and the hex SHA-256
//! of the RFC 8785 bytes of the whole entry (signature included), as a
//! Concordia message's is, so an ApprovalReceipt's `offer_hash` names it
//! and the reference SDK's `compute_hash` agrees.

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde_json::{json, Value};

use crate::terms::{read_rationale, read_terms, TermsError};

/// The type of an entry asking about terms.
pub const TERMS: &str = "plain.terms";
/// The type of an entry reporting what the agent did.
pub const OUTCOME: &str = "plain.outcome";
/// The `prev_hash` of a thread's first entry.
pub const GENESIS_HASH: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// What an agent reports it did with the terms of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It committed the organization, on the terms it names.
    Executed,
    /// It did not, and will not.
    Abandoned,
}

impl Outcome {
    /// The wire word.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Executed => "executed",
            Outcome::Abandoned => "abandoned",
        }
    }

    /// The outcome a wire word names.
    pub fn parse(s: &str) -> Option<Outcome> {
        match s {
            "executed" => Some(Outcome::Executed),
            "abandoned" => Some(Outcome::Abandoned),
            _ => None,
        }
    }
}

/// Where a thread stands after its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Terms stand, or wait for the agent's report.
    Open,
    /// The agent reported executing.
    Executed,
    /// The agent reported abandoning it.
    Abandoned,
}

impl State {
    /// The state's word (a gate session's `state`).
    pub fn name(self) -> &'static str {
        match self {
            State::Open => "open",
            State::Executed => "executed",
            State::Abandoned => "abandoned",
        }
    }
}

/// The hash an entry is chained and approved by.
pub fn hash(entry: &Value) -> String {
    jcs::hash::value_hash_prefixed(entry)
}

fn unsigned(entry: &Value) -> Value {
    let mut e = entry.clone();
    if let Some(o) = e.as_object_mut() {
        o.remove("signature");
    }
    e
}

/// Signs an entry with the host's platform key: Ed25519 over the RFC 8785
/// bytes of the entry without `signature`, unpadded base64url.
pub fn sign(entry: &mut Value, key: &SigningKey) {
    let sig = key.sign(&jcs::to_vec(&unsigned(entry)));
    entry["signature"] = json!(jcs::b64url::encode(&sig.to_bytes()));
}

/// Where an entry goes in its thread.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The thread (the gate session's id: its first request's id).
    pub session_id: &'a str,
    /// 1 for the first entry.
    pub seq: u64,
    /// The hash of the entry before ([`GENESIS_HASH`] for the first).
    pub prev_hash: &'a str,
    /// When the host wrote it (RFC 3339).
    pub at: &'a str,
}

/// The agent an entry is attributed to.
#[derive(Debug, Clone, Copy)]
pub struct AgentRef<'a> {
    /// Its gate agent id.
    pub id: &'a str,
    /// Its enrolled name.
    pub name: &'a str,
}

/// An unsigned `plain.terms` entry: `terms` in normal form.
pub fn terms_entry(
    place: Place<'_>,
    agent: AgentRef<'_>,
    request_id: &str,
    revises: Option<&str>,
    terms: &Value,
    rationale: Option<&str>,
) -> Value {
    json!({
        "type": TERMS,
        "session_id": place.session_id,
        "seq": place.seq,
        "prev_hash": place.prev_hash,
        "at": place.at,
        "agent": {"id": agent.id, "name": agent.name},
        "request_id": request_id,
        "revises": revises,
        "terms": terms,
        "rationale": rationale,
    })
}

/// An unsigned `plain.outcome` entry: the terms executed in normal form
/// (`None` for an abandonment).
pub fn outcome_entry(
    place: Place<'_>,
    agent: AgentRef<'_>,
    request_id: &str,
    outcome: Outcome,
    terms: Option<&Value>,
) -> Value {
    json!({
        "type": OUTCOME,
        "session_id": place.session_id,
        "seq": place.seq,
        "prev_hash": place.prev_hash,
        "at": place.at,
        "agent": {"id": agent.id, "name": agent.name},
        "request_id": request_id,
        "outcome": outcome.name(),
        "terms": terms,
    })
}

/// Why an entry does not verify: its 0-based position, the check, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("entry {index}: {check}: {detail}")]
pub struct EntryError {
    /// Its position in the whole thread.
    pub index: u64,
    /// `frame`, `session`, `seq`, `link`, `signature`, `terms` or `state`.
    pub check: &'static str,
    /// In words.
    pub detail: String,
}

/// A thread verified so far: its head and state, and each request's
/// entry, for the state machine.
#[derive(Debug, Clone)]
pub struct Thread {
    /// Entries verified.
    pub count: u64,
    /// The last entry's hash ([`GENESIS_HASH`] for none).
    pub head: String,
    /// Where it stands.
    pub state: State,
    /// Request ids, in order, of the `plain.terms` entries.
    pub requests: Vec<String>,
    /// False when the thread was picked up after a pin, its earlier
    /// entries not at hand: until its next `plain.terms` entry, which
    /// request it revises cannot be checked, only that it revises one.
    pub history_known: bool,
}

impl Thread {
    /// A thread with nothing in it.
    pub fn empty() -> Thread {
        Thread {
            count: 0,
            head: GENESIS_HASH.to_owned(),
            state: State::Open,
            requests: Vec::new(),
            history_known: true,
        }
    }

    /// A thread verified up to a pin (`count` entries, the last hashing to
    /// `head`) whose entries are not at hand: what a console that stored
    /// them checks a fetch after its pin against.
    pub fn after_pin(count: u64, head: &str) -> Thread {
        Thread {
            count,
            head: head.to_owned(),
            state: State::Open,
            requests: Vec::new(),
            history_known: count == 0,
        }
    }
}

fn frame_err(index: u64, detail: impl Into<String>) -> EntryError {
    EntryError {
        index,
        check: "frame",
        detail: detail.into(),
    }
}

/// Verifies `entries` as the continuation of `thread`: each entry's frame,
/// session, seq, link, the host's signature, its terms as the strict
/// reading gives them, and the thread's order (an outcome reports on the
/// latest terms; nothing follows an outcome; a request id is used once).
pub fn verify(
    thread: &Thread,
    session_id: &str,
    entries: &[Value],
    host_key: &VerifyingKey,
) -> Result<Thread, EntryError> {
    let mut t = thread.clone();
    for entry in entries {
        let index = t.count;
        let kind = entry.get("type").and_then(Value::as_str).unwrap_or("");
        let known: &[&str] = match kind {
            TERMS => &[
                "type",
                "session_id",
                "seq",
                "prev_hash",
                "at",
                "agent",
                "request_id",
                "revises",
                "terms",
                "rationale",
                "signature",
            ],
            OUTCOME => &[
                "type",
                "session_id",
                "seq",
                "prev_hash",
                "at",
                "agent",
                "request_id",
                "outcome",
                "terms",
                "signature",
            ],
            other => return Err(frame_err(index, format!("unknown entry type {other:?}"))),
        };
        let Some(obj) = entry.as_object() else {
            return Err(frame_err(index, "not an object"));
        };
        if let Some(unknown) = obj.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(frame_err(index, format!("unknown member {unknown:?}")));
        }
        if entry.get("session_id").and_then(Value::as_str) != Some(session_id) {
            return Err(EntryError {
                index,
                check: "session",
                detail: format!("not of thread {session_id:?}"),
            });
        }
        if entry.get("seq").and_then(Value::as_u64) != Some(index + 1) {
            return Err(EntryError {
                index,
                check: "seq",
                detail: format!("seq must be {}", index + 1),
            });
        }
        if entry.get("prev_hash").and_then(Value::as_str) != Some(t.head.as_str()) {
            return Err(EntryError {
                index,
                check: "link",
                detail: "prev_hash is not the hash of the entry before".into(),
            });
        }
        let signature = entry
            .get("signature")
            .and_then(Value::as_str)
            .and_then(|s| jcs::b64url::decode(s).ok())
            .and_then(|b| Signature::from_slice(&b).ok());
        let signed = signature.is_some_and(|sig| {
            host_key
                .verify(&jcs::to_vec(&unsigned(entry)), &sig)
                .is_ok()
        });
        if !signed {
            return Err(EntryError {
                index,
                check: "signature",
                detail: "not signed by the host's platform key".into(),
            });
        }
        let request_id = entry
            .get("request_id")
            .and_then(Value::as_str)
            .ok_or_else(|| frame_err(index, "no request_id"))?;
        let terms_err = |e: TermsError| EntryError {
            index,
            check: "terms",
            detail: e.to_string(),
        };
        let state_err = |detail: String| EntryError {
            index,
            check: "state",
            detail,
        };
        if t.state != State::Open {
            return Err(state_err(format!(
                "the thread was already {}",
                t.state.name()
            )));
        }
        match kind {
            TERMS => {
                let terms = entry.get("terms").cloned().unwrap_or(Value::Null);
                let read = read_terms(&terms).map_err(terms_err)?;
                if read.value != terms {
                    return Err(terms_err(TermsError {
                        field: "terms".into(),
                        problem: "not in normal form".into(),
                    }));
                }
                read_rationale(entry.get("rationale")).map_err(terms_err)?;
                if t.requests.iter().any(|r| r == request_id) {
                    return Err(state_err(format!(
                        "request {request_id:?} was asked before"
                    )));
                }
                let revises = entry.get("revises").and_then(Value::as_str);
                let linked = if t.history_known {
                    revises == t.requests.last().map(String::as_str)
                } else {
                    revises.is_some()
                };
                if !linked {
                    return Err(state_err(
                        "revises must name the thread's previous request (none for the first)"
                            .into(),
                    ));
                }
                t.requests.push(request_id.to_owned());
                t.history_known = true;
            }
            _ => {
                if t.history_known && t.requests.last().map(String::as_str) != Some(request_id) {
                    return Err(state_err(format!(
                        "an outcome reports on the thread's latest request, not {request_id:?}"
                    )));
                }
                let outcome = entry
                    .get("outcome")
                    .and_then(Value::as_str)
                    .and_then(Outcome::parse)
                    .ok_or_else(|| frame_err(index, "outcome must be executed or abandoned"))?;
                match (outcome, entry.get("terms")) {
                    (Outcome::Executed, Some(terms)) if !terms.is_null() => {
                        let read = read_terms(terms).map_err(terms_err)?;
                        if &read.value != terms {
                            return Err(terms_err(TermsError {
                                field: "terms".into(),
                                problem: "not in normal form".into(),
                            }));
                        }
                        t.state = State::Executed;
                    }
                    (Outcome::Executed, _) => {
                        return Err(frame_err(index, "an execution names the terms executed"))
                    }
                    (Outcome::Abandoned, None | Some(Value::Null)) => t.state = State::Abandoned,
                    (Outcome::Abandoned, _) => {
                        return Err(frame_err(index, "an abandonment names no terms"))
                    }
                }
            }
        }
        t.count += 1;
        t.head = hash(entry);
    }
    Ok(t)
}

/// The position of the terms a request may await now: the latest
/// `plain.terms` entry, when no outcome follows it.
pub fn standing(entries: &[Value]) -> Option<usize> {
    let last = entries.len().checked_sub(1)?;
    (entries[last].get("type").and_then(Value::as_str) == Some(TERMS)).then_some(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::OsRng;

    fn terms(price: &str) -> Value {
        read_terms(&json!({
            "counterparty": {"name": "Contoso", "id": "contoso.example"},
            "currency": "USD",
            "line_items": [{"description": "Sensor", "quantity": "10", "unit_price": price}],
        }))
        .unwrap()
        .value
    }

    fn thread(key: &SigningKey) -> Vec<Value> {
        let agent = AgentRef {
            id: "gate_1",
            name: "Buyer",
        };
        let mut first = terms_entry(
            Place {
                session_id: "po-1",
                seq: 1,
                prev_hash: GENESIS_HASH,
                at: "2026-12-07T10:00:00Z",
            },
            agent,
            "po-1",
            None,
            &terms("12.00"),
            Some("Cheapest of three quotes."),
        );
        sign(&mut first, key);
        let h1 = hash(&first);
        let mut second = terms_entry(
            Place {
                session_id: "po-1",
                seq: 2,
                prev_hash: &h1,
                at: "2026-12-07T11:00:00Z",
            },
            agent,
            "po-2",
            Some("po-1"),
            &terms("11.50"),
            None,
        );
        sign(&mut second, key);
        let h2 = hash(&second);
        let mut done = outcome_entry(
            Place {
                session_id: "po-1",
                seq: 3,
                prev_hash: &h2,
                at: "2026-12-07T12:00:00Z",
            },
            agent,
            "po-2",
            Outcome::Executed,
            Some(&terms("11.50")),
        );
        sign(&mut done, key);
        vec![first, second, done]
    }

    #[test]
    fn a_signed_thread_verifies_and_ends_executed() {
        let key = SigningKey::generate(&mut OsRng);
        let entries = thread(&key);
        let t = verify(&Thread::empty(), "po-1", &entries, &key.verifying_key()).unwrap();
        assert_eq!(t.state, State::Executed);
        assert_eq!(t.count, 3);
        assert_eq!(t.head, hash(&entries[2]));
        assert_eq!(standing(&entries[..2]), Some(1));
        assert_eq!(standing(&entries), None);
    }

    #[test]
    fn each_check_fails_alone() {
        let key = SigningKey::generate(&mut OsRng);
        let other = SigningKey::generate(&mut OsRng);
        type Change<'a> = Box<dyn Fn(&mut Vec<Value>) + 'a>;
        let cases: Vec<(&str, usize, Change)> = vec![
            (
                "signature",
                1,
                Box::new(|e| e[1]["terms"]["line_items"][0]["unit_price"] = json!("1.00")),
            ),
            ("signature", 0, Box::new(|e| sign(&mut e[0], &other))),
            (
                "link",
                1,
                Box::new(|e| {
                    e[1]["prev_hash"] = json!(GENESIS_HASH);
                    sign(&mut e[1], &key)
                }),
            ),
            (
                "seq",
                1,
                Box::new(|e| {
                    e[1]["seq"] = json!(5);
                    sign(&mut e[1], &key)
                }),
            ),
            (
                "session",
                0,
                Box::new(|e| {
                    e[0]["session_id"] = json!("po-9");
                    sign(&mut e[0], &key)
                }),
            ),
            (
                "frame",
                0,
                Box::new(|e| {
                    e[0]["type"] = json!("plain.approval");
                    sign(&mut e[0], &key)
                }),
            ),
            (
                "frame",
                0,
                Box::new(|e| {
                    e[0]["approved"] = json!(true);
                    sign(&mut e[0], &key)
                }),
            ),
            (
                "terms",
                0,
                Box::new(|e| {
                    e[0]["terms"]["total"] = json!("1.00");
                    sign(&mut e[0], &key)
                }),
            ),
            (
                "state",
                1,
                Box::new(|e| {
                    e[1]["revises"] = json!(null);
                    sign(&mut e[1], &key)
                }),
            ),
        ];
        for (check, index, change) in cases {
            let mut entries = thread(&key);
            change(&mut entries);
            // Relink what follows, so only the one check fails.
            for i in index + 1..entries.len() {
                let prev = hash(&entries[i - 1]);
                entries[i]["prev_hash"] = json!(prev);
                sign(&mut entries[i], &key);
            }
            let e = verify(&Thread::empty(), "po-1", &entries, &key.verifying_key()).unwrap_err();
            assert_eq!((e.check, e.index), (check, index as u64), "{e}");
        }
    }

    #[test]
    fn a_fetch_after_a_pin_verifies_against_the_pin_alone() {
        let key = SigningKey::generate(&mut OsRng);
        let entries = thread(&key);
        let pin = Thread::after_pin(1, &hash(&entries[0]));
        let t = verify(&pin, "po-1", &entries[1..], &key.verifying_key()).unwrap();
        assert_eq!((t.count, t.state), (3, State::Executed));
        // A revision that names no earlier request after a pin fails.
        let mut bad = entries[1].clone();
        bad["revises"] = json!(null);
        sign(&mut bad, &key);
        let e = verify(&pin, "po-1", &[bad], &key.verifying_key()).unwrap_err();
        assert_eq!(e.check, "state");
    }

    #[test]
    fn nothing_follows_an_outcome() {
        let key = SigningKey::generate(&mut OsRng);
        let mut entries = thread(&key);
        let mut more = entries[1].clone();
        more["seq"] = json!(4);
        more["request_id"] = json!("po-3");
        more["revises"] = json!("po-2");
        more["prev_hash"] = json!(hash(&entries[2]));
        sign(&mut more, &key);
        entries.push(more);
        let e = verify(&Thread::empty(), "po-1", &entries, &key.verifying_key()).unwrap_err();
        assert_eq!((e.check, e.index), ("state", 3));
    }
}
