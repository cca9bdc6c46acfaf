//! ANEX v0.1, the Agent Negotiation & Exchange draft, as pure functions and
//! types: no IO, no clock (time is passed in), no async. Two agents
//! negotiate which data about one owner the other may have (`access`, with
//! `(m)` for required) and what it promises about that data (`promise`);
//! terms beyond the owner's pre-set policy wait for the owner. The host, the
//! console and any client call this crate, so each rule lives in one place.
//! Every choice the draft leaves open is settled in docs/anex-binding.md.
//!
//! | module | what it owns |
//! |---|---|
//! | [`text`] | validated ids, agent ids, item names, free text, promises |
//! | [`term`] | access items (`(m)` → a required flag) and terms |
//! | [`performative`] | the draft's performatives and protocol (phase) names |
//! | [`message`] | the §4.2 message with threading; typed content per performative |
//! | [`mod@parse`] | strict, bounded reading; `NOT-UNDERSTOOD` for what cannot be read |
//! | [`json`] | the strict JSON reader (duplicate members refused) |
//! | [`conversation`] | the phases of §4.1 as a state machine; sequence rules |
//! | [`diff`] | what changed between two sets of terms |
//! | [`rules`] | §4.4 (a counter that drops a required item is rejected); the counter editor's check |
//! | [`policy`] | the owner's policy file; "within policy" or "needs the owner", per item |
//! | [`exchange`] | the data set, and answering a data `REQUEST` with only accepted items |
//! | [`record`] | the decided terms as a canonical record and its hash (what a receipt binds) |
//! | [`v02`] | RFC 9396 `authorization_details` and ODRL forms, one to one with v0.1 |
//! | [`limits`] | every size bound |
//!
//! A host answering a CFP, in order (the IO, storage and A2A around it are
//! the host's):
//!
//! ```
//! use anex::{Content, Conversation, Counterparty, Id, Policy, TermsRecord};
//!
//! let policy = Policy::parse(r#"{"anex_policy": 1, "terms_valid_days": 90,
//!     "rules": [{"items": ["legal_name", "tax_id"], "anyone": true,
//!                "promises": ["no sharing with third parties"]}]}"#)?;
//! let bytes = br#"{"performative": "CFP", "sender": "did:web:supplier.example",
//!     "receiver": "https://host.example/a2a/org1", "language": "JSON",
//!     "ontology": "ANEX-Ontology", "protocol": "ANEX-Negotiation",
//!     "conversation_id": "conv-1", "message_id": "m1",
//!     "content": {"request": {"identity": "did:web:supplier.example",
//!         "owner": "Northwind", "request_type": "supplier onboarding",
//!         "access": ["legal_name(m)", "tax_id(m)"], "promise": []}}}"#;
//!
//! // 1. Read it; an unreadable message gets `e.answer(...)`, a NOT-UNDERSTOOD.
//! let cfp = anex::parse(bytes)?;
//! // 2. Is it a legal next step? (a later message: `conversation.apply(&m)`)
//! let mut conversation = Conversation::open(&cfp)?;
//! // 3. What does the owner's policy say, item by item?
//! let who = Counterparty { identity: cfp.sender().clone(), relation: None };
//! let asked = cfp.content().terms().unwrap();
//! let verdict = policy.evaluate_request(&who, asked);
//! assert!(verdict.within_policy());
//! // 4. Within policy: answer at once, asking the promise the rule needs.
//! let terms = verdict.proposal(asked).unwrap();
//! assert_eq!(terms.promise[0].as_str(), "no sharing with third parties");
//! let answer = cfp.reply(Id::parse("h1")?, Content::Propose(terms.clone()))?;
//! conversation.apply(&answer)?;
//! // 5. The record of these terms, which a receipt (or the task's artifact) binds.
//! let now = time::macros::datetime!(2026-10-01 12:00 UTC);
//! let record = TermsRecord::new(&conversation, cfp.message_id(), &terms,
//!     policy.terms_valid_until(now))?;
//! assert!(record.hash().starts_with("sha256:"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod conversation;
pub mod diff;
pub mod exchange;
pub mod json;
pub mod limits;
pub mod message;
pub mod parse;
pub mod performative;
pub mod policy;
pub mod record;
pub mod rules;
pub mod term;
pub mod text;
pub mod v02;

pub use conversation::{Conversation, Phase, Role, Rule, SequenceError};
pub use diff::{diff, TermsDiff};
pub use message::{CallForProposal, Content, Envelope, Message};
pub use parse::{parse, parse_value, Unreadable};
pub use performative::{Performative, Protocol};
pub use policy::{
    decision_deadline, Counterparty, Evaluation, Policy, ProposalVerdict,
    DEFAULT_DECIDE_WITHIN_HOURS, MAX_DECIDE_WITHIN_HOURS,
};
pub use record::TermsRecord;
pub use term::{AccessItem, Terms};
pub use text::{AgentId, Id, ItemName, Promise, Text};

/// The A2A extension URI under which ANEX messages ride A2A
/// (docs/anex-binding.md, "ANEX over A2A"). The version is part of it.
pub const A2A_EXTENSION_URI: &str = "urn:countersign:anex:a2a:v1";
