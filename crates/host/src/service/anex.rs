//! ANEX over A2A's operations, between the A2A surface (and the approver
//! API) and the store: read the conversation, let `domain::anex` plan,
//! commit by compare-and-swap, and plan again when another request changed
//! the conversation meanwhile.

use anex::exchange::DataSet;
use anex::{AgentId, Policy};
use time::OffsetDateTime;

use super::{busy, ATTEMPTS};
use crate::domain::anex::{self as domain, Context, Doc, Outcome, Refusal};
use crate::domain::DomainError;
use crate::store::{AnexCommit, AnexConversationRow, AnexCounterpartyRow, CommitError, Org};
use crate::Host;

/// What a counterparty's request is answered with.
pub enum Answer {
    /// A bare A2A message carrying this ANEX message (nothing stored).
    Message {
        /// The ANEX message.
        message: anex::Message,
        /// The context it is in, if any.
        context_id: Option<String>,
        /// The task it concerns, if any.
        task_id: Option<String>,
    },
    /// A task of this stored conversation.
    Task {
        /// The conversation.
        row: AnexConversationRow,
        /// Its document (boxed: it is much larger than a bare message).
        doc: Box<Doc>,
        /// The task.
        task_id: String,
    },
}

/// Why a request fails at the A2A level.
pub enum Failure {
    /// An A2A refusal (JSON-RPC error).
    Refused(Refusal),
    /// `-32002`: the task is terminal.
    NotCancelable(String),
    /// The host failed.
    Internal(DomainError),
}

impl From<DomainError> for Failure {
    fn from(e: DomainError) -> Self {
        Failure::Internal(e)
    }
}

impl From<crate::store::StoreError> for Failure {
    fn from(e: crate::store::StoreError) -> Self {
        Failure::Internal(e.into())
    }
}

/// The org's policy and data set, as loaded (absent ones are `None`).
pub async fn files(
    host: &Host,
    org_handle: &str,
) -> Result<(Option<Policy>, Option<DataSet>), DomainError> {
    let (policy, data) = host.store().anex().anex_files(org_handle).await?;
    let policy = policy
        .map(|text| Policy::parse(&text))
        .transpose()
        .map_err(|e| DomainError::Internal(format!("the stored ANEX policy: {e}")))?;
    let data = data
        .map(|text| DataSet::parse(&text))
        .transpose()
        .map_err(|e| DomainError::Internal(format!("the stored ANEX data set: {}", e.0)))?;
    Ok((policy, data))
}

/// The counterparty holding `token`, if it is live and its org is enabled.
pub async fn authenticate(
    host: &Host,
    token: &str,
) -> Result<Option<(AnexCounterpartyRow, Org)>, DomainError> {
    let hash = crate::ids::code_hash(token);
    let Some(row) = host
        .store()
        .anex()
        .anex_counterparty_by_token(&hash)
        .await?
    else {
        return Ok(None);
    };
    // The store looked it up by hash; compare again in constant time.
    if !constant_time_eq(row.token_hash.as_bytes(), hash.as_bytes()) || row.revoked_at.is_some() {
        return Ok(None);
    }
    match host.store().negotiations().org(&row.org_handle).await? {
        Some(org) if !org.disabled => {
            crate::changes::touch(&org.handle);
            Ok(Some((row, org)))
        }
        _ => Ok(None),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn doc_of(row: &AnexConversationRow) -> Result<Doc, DomainError> {
    serde_json::from_str(&row.doc)
        .map_err(|e| DomainError::Internal(format!("stored ANEX conversation unreadable: {e}")))
}

pub(crate) fn doc_text(doc: &Doc) -> Result<String, DomainError> {
    serde_json::to_string(doc).map_err(|e| DomainError::Internal(e.to_string()))
}

/// A conversation of this counterparty (anything else: not found).
async fn owned(
    host: &Host,
    cp: &AnexCounterpartyRow,
    context_id: &str,
) -> Result<Option<AnexConversationRow>, DomainError> {
    Ok(host
        .store()
        .anex()
        .anex_conversation(context_id)
        .await?
        .filter(|row| row.counterparty_id == cp.id && row.org_handle == cp.org_handle))
}

async fn try_commit(host: &Host, commit: &AnexCommit) -> Result<bool, DomainError> {
    match host.store().anex().anex_commit(commit).await {
        Ok(()) => Ok(true),
        Err(CommitError::Conflict) => {
            tokio::task::yield_now().await;
            Ok(false)
        }
        Err(CommitError::Store(e)) => Err(e.into()),
    }
}

/// The task `task_id` names: `<context_id>-t<n>`.
pub fn context_of(task_id: &str) -> Option<&str> {
    task_id.rsplit_once("-t").map(|(context, _)| context)
}

/// One ANEX message from the counterparty (already read from its data part).
#[allow(clippy::too_many_arguments)]
pub async fn send(
    host: &Host,
    cp: &AnexCounterpartyRow,
    org: &Org,
    me: &AgentId,
    context_id: Option<&str>,
    task_id: Option<&str>,
    message: &anex::Message,
    a2a_id: &str,
    now: OffsetDateTime,
) -> Result<Answer, Failure> {
    let (policy, data) = files(host, &org.handle).await?;
    let ctx = Context {
        counterparty: cp,
        me,
        org_name: &org.name,
        policy: policy.as_ref(),
        data: data.as_ref(),
        org,
        now,
    };
    // A task id names its context; an explicit contextId must agree.
    let context_id = match (context_id, task_id.and_then(context_of)) {
        (Some(c), Some(t)) if c != t => return Err(Failure::Refused(Refusal::TaskNotFound)),
        (Some(c), _) => Some(c.to_owned()),
        (None, Some(t)) => Some(t.to_owned()),
        (None, None) => None,
    };
    if task_id.is_some() && context_id.is_none() {
        return Err(Failure::Refused(Refusal::TaskNotFound));
    }
    for _ in 0..ATTEMPTS {
        let (row, used) = match &context_id {
            Some(id) => match owned(host, cp, id).await? {
                Some(row) => (Some(row), false),
                None if task_id.is_some() => return Err(Failure::Refused(Refusal::TaskNotFound)),
                None => {
                    return Err(Failure::Refused(Refusal::InvalidParams(format!(
                        "contextId {id:?} is not a conversation of yours: send the first message of a conversation without contextId"
                    ))))
                }
            },
            None => {
                let used = host
                    .store()
                    .anex()
                    .anex_conversation_used(
                        &cp.org_handle,
                        &cp.id,
                        message.conversation_id().as_str(),
                    )
                    .await?;
                (None, used)
            }
        };
        let stored = row.as_ref().map(doc_of).transpose()?;
        let new_context = || format!("ctx_{}", uuid::Uuid::new_v4().simple());
        let context = row
            .as_ref()
            .map_or_else(new_context, |r| r.context_id.clone());
        let outcome = domain::receive(
            &ctx,
            &context,
            stored.as_ref(),
            used,
            message,
            a2a_id,
            task_id,
        )
        .map_err(Failure::Refused)?;
        match outcome {
            Outcome::Bare { message, task_id } => {
                return Ok(Answer::Message {
                    message,
                    context_id: row.map(|r| r.context_id),
                    task_id,
                })
            }
            Outcome::Stored { doc, task_id } => {
                let text = now_text(now);
                let new_row = match &row {
                    Some(r) => AnexConversationRow {
                        doc: doc_text(&doc)?,
                        version: r.version + 1,
                        updated_at: text,
                        ..r.clone()
                    },
                    None => AnexConversationRow {
                        context_id: context.clone(),
                        org_handle: cp.org_handle.clone(),
                        counterparty_id: cp.id.clone(),
                        conversation_id: message.conversation_id().as_str().to_owned(),
                        doc: doc_text(&doc)?,
                        version: 1,
                        created_at: text.clone(),
                        updated_at: text,
                    },
                };
                let commit = AnexCommit {
                    conversation: new_row.clone(),
                    expected_version: row.as_ref().map(|r| r.version),
                    decision: None,
                };
                if try_commit(host, &commit).await? {
                    return Ok(Answer::Task {
                        row: new_row,
                        doc: Box::new(doc),
                        task_id,
                    });
                }
            }
        }
    }
    Err(Failure::Internal(busy()))
}

fn now_text(now: OffsetDateTime) -> String {
    anp::api::format_timestamp(now)
}

/// Refuses, for the owner, every ANEX ask past its decision deadline, so
/// the requester reads "no one decided in time" without asking first and
/// the ask leaves the approvers' summaries; what the host's sweep runs
/// beside the gate's. Answers how many it refused.
pub async fn expire_asks(host: &Host) -> Result<usize, DomainError> {
    let mut refused = 0;
    // Each org's ANEX policy, read once a sweep.
    let mut policies: std::collections::HashMap<String, Option<Policy>> = Default::default();
    for row in host.store().anex().anex_conversations_awaiting().await? {
        let mut doc = doc_of(&row)?;
        if doc.pending.is_none() {
            continue;
        }
        if !policies.contains_key(&row.org_handle) {
            let policy = files(host, &row.org_handle).await?.0;
            policies.insert(row.org_handle.clone(), policy);
        }
        let policy = policies.get(&row.org_handle).and_then(Option::as_ref);
        let now = host.clock().now();
        if domain::expire_if_due(&mut doc, policy, now)
            .map_err(DomainError::Internal)?
            .is_none()
        {
            continue;
        }
        let commit = AnexCommit {
            conversation: AnexConversationRow {
                doc: doc_text(&doc)?,
                version: row.version + 1,
                updated_at: now_text(now),
                ..row.clone()
            },
            expected_version: Some(row.version),
            decision: None,
        };
        // A conversation that moved meanwhile is looked at next sweep.
        if try_commit(host, &commit).await? {
            crate::changes::touch(&row.org_handle);
            refused += 1;
        }
    }
    Ok(refused)
}

/// `GetTask`: the task with its conversation. An ask past its decision
/// deadline is refused for the owner first, so the requester reads that no
/// one decided in time.
pub async fn task(
    host: &Host,
    cp: &AnexCounterpartyRow,
    task_id: &str,
) -> Result<(AnexConversationRow, Doc), Failure> {
    let context = context_of(task_id).ok_or(Failure::Refused(Refusal::TaskNotFound))?;
    let (policy, _) = files(host, &cp.org_handle).await?;
    for _ in 0..ATTEMPTS {
        let row = owned(host, cp, context)
            .await?
            .ok_or(Failure::Refused(Refusal::TaskNotFound))?;
        let mut doc = doc_of(&row)?;
        if !doc.tasks.iter().any(|t| t.id == task_id) {
            return Err(Failure::Refused(Refusal::TaskNotFound));
        }
        let now = host.clock().now();
        let expired = domain::expire_if_due(&mut doc, policy.as_ref(), now)
            .map_err(|e| Failure::Internal(DomainError::Internal(e)))?;
        if expired.is_none() {
            return Ok((row, doc));
        }
        let new_row = AnexConversationRow {
            doc: doc_text(&doc)?,
            version: row.version + 1,
            updated_at: now_text(now),
            ..row.clone()
        };
        let commit = AnexCommit {
            conversation: new_row.clone(),
            expected_version: Some(row.version),
            decision: None,
        };
        if try_commit(host, &commit).await? {
            crate::changes::touch(&cp.org_handle);
            return Ok((new_row, doc));
        }
    }
    Err(Failure::Internal(busy()))
}

/// `CancelTask`: withdraws from the negotiation (or the question).
pub async fn cancel(
    host: &Host,
    cp: &AnexCounterpartyRow,
    task_id: &str,
    now: OffsetDateTime,
) -> Result<(AnexConversationRow, Doc), Failure> {
    for _ in 0..ATTEMPTS {
        let (row, mut doc) = task(host, cp, task_id).await?;
        let state = doc
            .tasks
            .iter()
            .find(|t| t.id == task_id)
            .map(|t| t.state)
            .ok_or(Failure::Refused(Refusal::TaskNotFound))?;
        if state.is_terminal() {
            return Err(Failure::NotCancelable(format!(
                "task {task_id} is {} and cannot be canceled",
                state.v03()
            )));
        }
        domain::withdraw(&mut doc, task_id, now).map_err(Failure::Refused)?;
        let new_row = AnexConversationRow {
            doc: doc_text(&doc)?,
            version: row.version + 1,
            updated_at: now_text(now),
            ..row.clone()
        };
        let commit = AnexCommit {
            conversation: new_row.clone(),
            expected_version: Some(row.version),
            decision: None,
        };
        if try_commit(host, &commit).await? {
            return Ok((new_row, doc));
        }
    }
    Err(Failure::Internal(busy()))
}
