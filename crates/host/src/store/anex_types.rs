//! The rows of ANEX over A2A (docs/anex-binding.md): counterparties and
//! their bearer tokens, each org's ANEX policy and data set, and one row per
//! conversation (an A2A context) holding its document.

/// A counterparty agent the admin registered for an org; it authenticates
/// with a bearer token of which only the SHA-256 is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnexCounterpartyRow {
    /// `anexcp_…`.
    pub id: String,
    /// The org it may talk to.
    pub org_handle: String,
    /// Its ANEX agent identity (every message's `sender` must be this).
    pub identity: String,
    /// Its display name.
    pub name: String,
    /// The relation the policy's `relations` match, as the admin registered it.
    pub relation: Option<String>,
    /// Hex SHA-256 of the token.
    pub token_hash: String,
    /// When it was registered.
    pub created_at: String,
    /// When its token was revoked.
    pub revoked_at: Option<String>,
}

/// One ANEX conversation (one A2A context) and its document (JSON text,
/// the host's own format: the messages, the tasks, what awaits whom).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnexConversationRow {
    /// The A2A `contextId` (`ctx_…`).
    pub context_id: String,
    /// The org it belongs to.
    pub org_handle: String,
    /// The counterparty (its registration id).
    pub counterparty_id: String,
    /// The ANEX `conversation_id` it carries.
    pub conversation_id: String,
    /// The document.
    pub doc: String,
    /// Compare-and-swap version: 1 when created, +1 per change.
    pub version: u64,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// A person's decision on an ANEX ask, kept so that repeating its id
/// changes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnexDecisionRow {
    /// The console's UUID.
    pub decision_id: String,
    /// Who decided.
    pub approver_id: String,
    /// The conversation it decided in.
    pub context_id: String,
    /// Hex SHA-256 of the request body (a different body under the same id is refused).
    pub body_sha256: String,
    /// `appended`.
    pub outcome: String,
    /// The sentence answered.
    pub detail: String,
    /// When it was received.
    pub received_at: String,
}

/// One change to one conversation, applied atomically or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnexCommit {
    /// The conversation as it is to be stored (its `version` the new one).
    pub conversation: AnexConversationRow,
    /// The version it was read at; `None` creates it (refused as a conflict
    /// when the context or its `conversation_id` exists already).
    pub expected_version: Option<u64>,
    /// A decision recorded with the change.
    pub decision: Option<AnexDecisionRow>,
}
