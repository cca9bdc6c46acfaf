//! Every bound the crate enforces, in one place, so the binding document and
//! the code cannot disagree (docs/anex-binding.md quotes these numbers).
//!
//! A counterparty's message is untrusted input: each size is capped before
//! anything is built from it, and the conversation itself is bounded so that
//! a peer cannot make a host keep an unbounded record.

/// Largest ANEX message, as JSON text, that the parser reads at all.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;

/// Deepest nesting of arrays and objects in a message (the envelope is
/// depth 1, `content` 2, a CFP's `request` 3, a data value up to this).
pub const MAX_DEPTH: usize = 10;

/// Longest conversation or message id, in characters.
pub const MAX_ID_CHARS: usize = 128;

/// Longest agent identifier (`sender`, `receiver`, `identity`), in characters.
pub const MAX_AGENT_ID_CHARS: usize = 256;

/// Longest free-text field (`owner`, `relation`, `request_type`, reasons), in characters.
pub const MAX_TEXT_CHARS: usize = 1000;

/// Longest promise, in characters.
pub const MAX_PROMISE_CHARS: usize = 200;

/// Longest access item name, in characters.
pub const MAX_ITEM_NAME_CHARS: usize = 64;

/// Most access items in one list.
pub const MAX_ACCESS_ITEMS: usize = 64;

/// Most promises in one list.
pub const MAX_PROMISES: usize = 32;

/// Most messages one conversation holds.
pub const MAX_MESSAGES: usize = 256;

/// Most `PROPOSE` messages in one negotiation (§8.2's "clear termination rules").
pub const MAX_PROPOSALS: usize = 8;

/// Most questions (data `REQUEST`, `QUERY-IF`) awaiting an answer at once.
pub const MAX_OPEN_QUESTIONS: usize = 8;

/// Largest owner's policy file, in bytes.
pub const MAX_POLICY_BYTES: usize = 256 * 1024;

/// Most rules in an owner's policy.
pub const MAX_POLICY_RULES: usize = 256;

/// Largest data set (the values an organization may share), in bytes.
pub const MAX_DATA_SET_BYTES: usize = 1024 * 1024;

/// Longest validity of accepted terms a policy may set, in days (ten years).
pub const MAX_TERMS_VALID_DAYS: u32 = 3650;
