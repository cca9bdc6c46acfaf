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
pub use policy::{Counterparty, Evaluation, Policy, ProposalVerdict};
pub use record::TermsRecord;
pub use term::{AccessItem, Terms};
pub use text::{AgentId, Id, ItemName, Promise, Text};
