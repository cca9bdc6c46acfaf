//! ANEX conversations on the host (docs/anex-binding.md, "ANEX over A2A"):
//! the organization's agent is the responder. Pure of IO and of A2A's JSON:
//! given a conversation's stored document, the counterparty, the owner's
//! policy and data set and the time, each step answers what to send and
//! what to store. Every ANEX rule is `anex`'s; this module only decides
//! which task a message belongs to and what waits for the owner.

use anex::exchange::{answer_data_request, DataSet};
use anex::{
    Content, Conversation, Counterparty, Id, Message, Phase, Policy, Terms, TermsRecord, Text,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::store::AnexCounterpartyRow;

/// A task's state, as A2A names it (each dialect spells it its own way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Waiting for the counterparty or for the owner.
    InputRequired,
    /// Terms accepted, or a question answered.
    Completed,
    /// The host refused.
    Rejected,
    /// The counterparty rejected, cancelled or withdrew.
    Canceled,
    /// A data request could not be answered.
    Failed,
}

impl TaskState {
    /// Whether nothing more happens in the task.
    pub fn is_terminal(self) -> bool {
        self != TaskState::InputRequired
    }

    /// The v1.0 enum name.
    pub fn v1(self) -> &'static str {
        match self {
            TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            TaskState::Completed => "TASK_STATE_COMPLETED",
            TaskState::Rejected => "TASK_STATE_REJECTED",
            TaskState::Canceled => "TASK_STATE_CANCELED",
            TaskState::Failed => "TASK_STATE_FAILED",
        }
    }

    /// The v0.3 name.
    pub fn v03(self) -> &'static str {
        match self {
            TaskState::InputRequired => "input-required",
            TaskState::Completed => "completed",
            TaskState::Rejected => "rejected",
            TaskState::Canceled => "canceled",
            TaskState::Failed => "failed",
        }
    }
}

/// Who the task waits for (`Task.metadata[URI].awaiting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Awaiting {
    /// The owner (a person in the console).
    Owner,
    /// The counterparty.
    Counterparty,
    /// Nobody: the task is over.
    None,
}

/// One A2A task of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// `<context_id>-t<n>`.
    pub id: String,
    /// True for the negotiation task; false for a question's.
    pub negotiation: bool,
    /// Its state.
    pub state: TaskState,
    /// Who it waits for.
    pub awaiting: Awaiting,
    /// The message (index into the document's messages) its status carries.
    pub status_message: Option<usize>,
    /// The accepted terms record (`anex-terms` artifact), once completed.
    pub artifact: Option<Value>,
    /// The messages of the task (indexes), in order.
    pub history: Vec<usize>,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

/// The ask that waits for the owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAsk {
    /// The message decided on (the CFP or the requester's PROPOSE).
    pub answers: String,
    /// The negotiation task.
    pub task_id: String,
    /// When it started waiting.
    pub since: String,
    /// The chain of approvals the ask was routed to when it arrived, under
    /// the organization's policy of authority (a `StoredRoute`, JSON);
    /// absent for an ask from before routing, which one approver decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// The approvals given so far along that chain (the ask is answered
    /// once the last step is met).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<AskApproval>,
}

/// An approval given on the way along an ask's chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskApproval {
    /// The decision's id.
    pub decision_id: String,
    /// The approver's id.
    pub approver_id: String,
    /// Who, as the approval names them (the enrolled email).
    pub approved_by: String,
    /// When.
    pub at: String,
    /// The step it counted at, from 1.
    pub step: u32,
    /// The role it counted as.
    pub role: String,
    /// When a stand-in gave it: for whom (an email).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_person: Option<String>,
}

/// A receipt a person signed, kept in the conversation for its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signed {
    /// The decision's id.
    pub decision_id: String,
    /// The ApprovalReceipt.
    pub receipt: Value,
}

/// What the host stores for one conversation (one A2A context).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Doc {
    /// Every ANEX message, both sides, in order.
    pub messages: Vec<Value>,
    /// The A2A `messageId` of each.
    pub a2a_ids: Vec<String>,
    /// Its tasks, the negotiation task first.
    pub tasks: Vec<Task>,
    /// The ask awaiting the owner.
    pub pending: Option<PendingAsk>,
    /// The terms record of the host's standing PROPOSE (what an
    /// ACCEPT-PROPOSAL concludes).
    pub proposed: Option<Value>,
    /// The accepted terms record.
    pub agreed: Option<Value>,
    /// The receipts people signed.
    pub receipts: Vec<Signed>,
    /// True once the counterparty called `CancelTask` on the negotiation
    /// (the conversation is closed without an ANEX message).
    #[serde(default)]
    pub withdrawn: bool,
    /// The host's record of every approval given to an ask of this
    /// conversation (who, step, role, for whom, rule, policy version), kept
    /// once the ask is answered too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<countersign_host_api::approver::ApprovalRecord>,
}

/// Why a message is refused at the A2A level (a JSON-RPC error), before
/// ANEX reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `-32602`, naming the problem.
    InvalidParams(String),
    /// `-32001`: no such task for this counterparty.
    TaskNotFound,
}

/// What a step answers.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Nothing stored; answer this ANEX message as a bare A2A message (a
    /// `NOT-UNDERSTOOD`), in the task when there is one.
    Bare {
        /// The answer.
        message: Message,
        /// The task it concerns, if any.
        task_id: Option<String>,
    },
    /// Store the document; answer with this task.
    Stored {
        /// The document to store.
        doc: Doc,
        /// The task to answer with.
        task_id: String,
    },
}

/// Everything a step is judged against.
pub struct Context<'a> {
    /// The authenticated counterparty.
    pub counterparty: &'a AnexCounterpartyRow,
    /// The organization's agent identity (`https://HOST/a2a/<org>`).
    pub me: &'a anex::AgentId,
    /// The organization's display name.
    pub org_name: &'a str,
    /// The owner's policy (`None`: none loaded, so everything needs the owner).
    pub policy: Option<&'a Policy>,
    /// The data set (`None`: none loaded).
    pub data: Option<&'a DataSet>,
    /// The organization (its policy of authority routes an ask that waits
    /// for the owner).
    pub org: &'a crate::store::Org,
    /// Now.
    pub now: OffsetDateTime,
}

fn text_time(t: OffsetDateTime) -> String {
    anp::api::format_timestamp(t)
}

/// The phase's name, as the log and the task metadata say it.
pub fn phase_name(phase: &Phase) -> &'static str {
    match phase {
        Phase::Opening => "opening",
        Phase::EngagementAsked { .. } => "engagement_asked",
        Phase::ConditionsAsked { .. } => "conditions_asked",
        Phase::Engaged => "engaged",
        Phase::Negotiating { .. } => "negotiating",
        Phase::Agreed { .. } => "agreed",
        Phase::Closed { .. } => "closed",
    }
}

/// Reads the stored messages back and replays them.
pub fn replay(doc: &Doc) -> Result<Conversation, String> {
    let messages = doc
        .messages
        .iter()
        .map(|v| anex::parse_value(v).map_err(|e| format!("a stored message: {}", e.reason)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut conversation = Conversation::from_messages(&messages)
        .map_err(|e| format!("the stored conversation: {e}"))?
        .ok_or_else(|| "a stored conversation holds no message".to_owned())?;
    if doc.withdrawn {
        conversation.withdraw(anex::Role::Requester);
    }
    Ok(conversation)
}

fn not_understood(
    ctx: &Context<'_>,
    to: &Message,
    reason: &str,
    conversation: Option<&Conversation>,
) -> Message {
    let id = fresh_id(conversation, "h");
    let unreadable = anex::Unreadable {
        reason: reason.to_owned(),
        performative: Some(to.performative()),
        sender: Some(to.sender().clone()),
        protocol: Some(to.protocol()),
        conversation_id: Some(to.conversation_id().clone()),
        message_id: Some(to.message_id().clone()),
    };
    unreadable.answer(
        ctx.me.clone(),
        counterparty_id(ctx),
        id,
        fresh_conversation(),
    )
}

fn counterparty_id(ctx: &Context<'_>) -> anex::AgentId {
    anex::AgentId::parse(&ctx.counterparty.identity).unwrap_or_else(|_| ctx.me.clone())
}

fn fresh_conversation() -> Id {
    Id::parse(&format!("host-{}", uuid::Uuid::new_v4().simple()))
        .unwrap_or_else(|_| unreachable_id())
}

fn unreachable_id() -> Id {
    // "h" is a valid id under every rule of the alphabet.
    Id::parse("h").unwrap_or_else(|_| unreachable!("\"h\" is a valid ANEX id"))
}

/// The next id of ours not used in the conversation: `h1`, `h2`, ….
fn fresh_id(conversation: Option<&Conversation>, prefix: &str) -> Id {
    for n in 1.. {
        let Ok(id) = Id::parse(&format!("{prefix}{n}")) else {
            break;
        };
        if !conversation.is_some_and(|c| c.contains(&id)) {
            return id;
        }
    }
    unreachable_id()
}

/// An unreadable ANEX message in a data part: the `NOT-UNDERSTOOD` to
/// answer with (`None`: an unreadable `NOT-UNDERSTOOD`, not answered).
pub fn unreadable(ctx: &Context<'_>, e: &anex::Unreadable) -> Option<Message> {
    e.should_answer().then(|| {
        e.answer(
            ctx.me.clone(),
            counterparty_id(ctx),
            unreachable_id_or("h1"),
            fresh_conversation(),
        )
    })
}

fn unreachable_id_or(s: &str) -> Id {
    Id::parse(s).unwrap_or_else(|_| unreachable_id())
}

fn is_question(m: &Message) -> bool {
    matches!(
        m.content(),
        Content::DataRequest { .. } | Content::QueryIf { .. }
    )
}

/// One message from the counterparty, in the conversation `stored` (with
/// its context id) or opening a new one (`context_id` fresh, `used`: the
/// counterparty already used its `conversation_id` with this org).
pub fn receive(
    ctx: &Context<'_>,
    context_id: &str,
    stored: Option<&Doc>,
    used: bool,
    m: &Message,
    a2a_id: &str,
    task_id: Option<&str>,
) -> Result<Outcome, Refusal> {
    let bare = |message: Message, task: Option<&str>| {
        Ok(Outcome::Bare {
            message,
            task_id: task.map(str::to_owned),
        })
    };
    let conversation = match stored {
        Some(doc) => Some(replay(doc).map_err(Refusal::InvalidParams)?),
        None => None,
    };
    // The task the message names must be this counterparty's, in this context.
    let task_index = match (task_id, stored) {
        (None, _) => None,
        (Some(_), None) => return Err(Refusal::TaskNotFound),
        (Some(id), Some(doc)) => Some(
            doc.tasks
                .iter()
                .position(|t| t.id == id)
                .ok_or(Refusal::TaskNotFound)?,
        ),
    };
    if let (Some(i), Some(doc)) = (task_index, stored) {
        let task = &doc.tasks[i];
        if task.state.is_terminal() {
            return Err(Refusal::InvalidParams(format!(
                "task {} is {}: it takes no more messages",
                task.id,
                task.state.v03()
            )));
        }
    }
    if m.sender().as_str() != ctx.counterparty.identity {
        let reason = format!(
            "sender: {:?} is not the agent this credential was issued to ({})",
            m.sender().as_str(),
            ctx.counterparty.identity
        );
        return bare(
            not_understood(ctx, m, &reason, conversation.as_ref()),
            task_id,
        );
    }
    if m.receiver() != ctx.me {
        let reason = format!(
            "receiver: {:?} is not this organization's agent ({})",
            m.receiver().as_str(),
            ctx.me.as_str()
        );
        return bare(
            not_understood(ctx, m, &reason, conversation.as_ref()),
            task_id,
        );
    }
    let mut conversation = match conversation {
        Some(c) => {
            if c.id() != m.conversation_id() {
                let reason = format!(
                    "conversation_id: {:?} does not belong to this context, which carries {:?}",
                    m.conversation_id().as_str(),
                    c.id().as_str()
                );
                return bare(not_understood(ctx, m, &reason, Some(&c)), task_id);
            }
            c
        }
        None => {
            if used {
                let reason = format!(
                    "conversation_id: {:?} was already used with this organization; open a new conversation with a new id",
                    m.conversation_id().as_str()
                );
                return bare(not_understood(ctx, m, &reason, None), None);
            }
            match Conversation::open(m) {
                Ok(c) => c,
                Err(e) => return bare(not_understood(ctx, m, &e.to_string(), None), None),
            }
        }
    };
    let mut doc = stored.cloned().unwrap_or_default();
    let negotiation_task = doc.tasks.iter().position(|t| t.negotiation);
    // Which task the message belongs to.
    // A CANCEL or termination sent without taskId (the way to end terms
    // already accepted, whose negotiation task is completed) is its own task.
    let closing = matches!(
        m.content(),
        Content::Cancel { .. } | Content::Terminate { .. }
    );
    let own_task = is_question(m) || (closing && task_id.is_none() && stored.is_some());
    if is_question(m) && task_id.is_some() {
        return Err(Refusal::InvalidParams(
            "a data REQUEST or QUERY-IF is sent in the context without taskId: each creates its own task".into(),
        ));
    }
    if !own_task && stored.is_some() {
        match (task_index, negotiation_task) {
            (Some(i), Some(n)) if i == n => {}
            (None, Some(n)) => {
                return Err(Refusal::InvalidParams(format!(
                    "a negotiation message is sent with the negotiation's taskId ({})",
                    doc.tasks[n].id
                )))
            }
            _ => {
                return Err(Refusal::InvalidParams(
                    "this task is a question's: negotiation messages go to the negotiation task"
                        .into(),
                ))
            }
        }
    }
    if doc.pending.is_some() && !matches!(m.content(), Content::Cancel { .. }) && !own_task {
        let reason = "the owner's answer is awaited: poll the task, or CANCEL";
        return bare(not_understood(ctx, m, reason, Some(&conversation)), task_id);
    }
    if stored.is_some() {
        if let Err(e) = conversation.apply(m) {
            return bare(
                not_understood(ctx, m, &e.to_string(), Some(&conversation)),
                task_id,
            );
        }
    }
    let now = text_time(ctx.now);
    let index = doc.messages.len();
    doc.messages.push(m.to_json());
    doc.a2a_ids.push(a2a_id.to_owned());
    let task = if own_task || negotiation_task.is_none() {
        doc.tasks.push(Task {
            id: format!("{context_id}-t{}", doc.tasks.len() + 1),
            negotiation: !own_task,
            state: TaskState::InputRequired,
            awaiting: Awaiting::Counterparty,
            status_message: None,
            artifact: None,
            history: Vec::new(),
            updated_at: now.clone(),
        });
        doc.tasks.len() - 1
    } else {
        negotiation_task.unwrap_or_default()
    };
    doc.tasks[task].history.push(index);
    doc.tasks[task].updated_at = now.clone();
    let answer = respond(ctx, &mut doc, task, &conversation, m).map_err(Refusal::InvalidParams)?;
    if let Some(answer) = answer {
        conversation
            .apply(&answer)
            .map_err(|e| Refusal::InvalidParams(format!("our own answer breaks a rule: {e}")))?;
        let i = doc.messages.len();
        doc.messages.push(answer.to_json());
        doc.a2a_ids.push(answer.message_id().as_str().to_owned());
        doc.tasks[task].history.push(i);
        doc.tasks[task].status_message = Some(i);
    }
    let task_id = doc.tasks[task].id.clone();
    Ok(Outcome::Stored { doc, task_id })
}

/// Routes an ask for the owner through the organization's policy of
/// authority: an ANEX ask names no amount, its data items and the
/// counterparty as the admin registered it. The stored route's text.
fn route_ask(ctx: &Context<'_>, asked: &Terms) -> Result<String, String> {
    let mut facts = ::authority::Facts::new(::authority::Protocol::Anex, None);
    facts.counterparty = Some(ctx.counterparty.name.clone());
    facts.data_items = asked
        .access
        .iter()
        .map(|i| i.name.as_str().to_owned())
        .collect();
    super::authority::route(ctx.org, &facts)
        .and_then(|r| r.to_text())
        .map_err(|e| e.to_string())
}

fn set(doc: &mut Doc, task: usize, state: TaskState, awaiting: Awaiting) {
    doc.tasks[task].state = state;
    doc.tasks[task].awaiting = awaiting;
}

/// What the host answers `m` (already applied), setting the task's state
/// (and clearing its status message when nothing answers it).
fn respond(
    ctx: &Context<'_>,
    doc: &mut Doc,
    task: usize,
    conversation: &Conversation,
    m: &Message,
) -> Result<Option<Message>, String> {
    let id = fresh_id(Some(conversation), "h");
    let build = |content: Content| m.reply(id.clone(), content).map_err(|e| e.to_string());
    match m.content() {
        Content::Introduce { .. } => {
            set(doc, task, TaskState::InputRequired, Awaiting::Counterparty);
            let intro = Content::Introduce {
                message: Text::lossy(&format!(
                    "This agent answers for {} on data-access terms (ANEX v0.1 over A2A).",
                    ctx.org_name
                )),
                owner: Some(Text::lossy(ctx.org_name)),
            };
            Ok(Some(build(intro)?))
        }
        Content::Engage { .. } => {
            set(doc, task, TaskState::InputRequired, Awaiting::Counterparty);
            Ok(Some(build(Content::Agree { response: None })?))
        }
        Content::Cfp(_) | Content::Propose(_) => {
            let Some(asked) = m.content().terms() else {
                return Err("a CFP or PROPOSE without terms".into());
            };
            let who = Counterparty {
                identity: m.sender().clone(),
                relation: ctx.counterparty.relation.as_deref().map(Text::lossy),
            };
            let proposal = ctx
                .policy
                .and_then(|p| p.evaluate_request(&who, asked).proposal(asked));
            match (proposal, ctx.policy) {
                (Some(terms), Some(policy)) => {
                    let answer = build(Content::Propose(terms.clone()))?;
                    let mut with_answer = conversation.clone();
                    with_answer.apply(&answer).map_err(|e| e.to_string())?;
                    let record = TermsRecord::new(
                        &with_answer,
                        m.message_id(),
                        &terms,
                        policy.terms_valid_until(ctx.now),
                    )
                    .map_err(|e| e.to_string())?;
                    doc.proposed = Some(record.to_json());
                    set(doc, task, TaskState::InputRequired, Awaiting::Counterparty);
                    Ok(Some(answer))
                }
                _ => {
                    let route = route_ask(ctx, asked)?;
                    doc.pending = Some(PendingAsk {
                        answers: m.message_id().as_str().to_owned(),
                        task_id: doc.tasks[task].id.clone(),
                        since: text_time(ctx.now),
                        route: Some(route),
                        approvals: Vec::new(),
                    });
                    set(doc, task, TaskState::InputRequired, Awaiting::Owner);
                    doc.tasks[task].status_message = None;
                    Ok(None)
                }
            }
        }
        Content::Accept(_) => {
            set(doc, task, TaskState::Completed, Awaiting::None);
            doc.agreed = doc.proposed.take();
            doc.tasks[task].artifact = doc.agreed.clone();
            doc.tasks[task].status_message = None;
            Ok(None)
        }
        Content::Reject { .. } | Content::Cancel { .. } | Content::Terminate { .. } => {
            doc.pending = None;
            doc.proposed = None;
            doc.agreed = None;
            for t in doc.tasks.iter_mut().filter(|t| !t.state.is_terminal()) {
                t.state = TaskState::Canceled;
                t.awaiting = Awaiting::None;
                t.status_message = None;
            }
            set(doc, task, TaskState::Canceled, Awaiting::None);
            doc.tasks[task].status_message = None;
            Ok(None)
        }
        Content::DataRequest { .. } => {
            let record = match &doc.agreed {
                Some(v) if conversation.agreed().is_some() => {
                    Some(TermsRecord::from_json(v).map_err(|e| e.to_string())?)
                }
                _ => None,
            };
            let empty = DataSet::parse("{}").map_err(|e| e.0)?;
            let answer = answer_data_request(
                record.as_ref(),
                m,
                ctx.data.unwrap_or(&empty),
                ctx.now,
                id.clone(),
            )
            .map_err(|e| e.to_string())?;
            let state = match answer.content() {
                Content::Data(_) => TaskState::Completed,
                Content::Refuse { .. } => TaskState::Rejected,
                _ => TaskState::Failed,
            };
            set(doc, task, state, Awaiting::None);
            Ok(Some(answer))
        }
        Content::QueryIf { query } => {
            let in_force = conversation.agreed().is_some()
                && doc
                    .agreed
                    .as_ref()
                    .and_then(|v| TermsRecord::from_json(v).ok())
                    .is_some_and(|r| r.in_force(ctx.now));
            set(doc, task, TaskState::Completed, Awaiting::None);
            Ok(Some(build(Content::Answer {
                query: *query,
                answer: in_force,
            })?))
        }
        // What else the requester may legally send (answers to nothing we
        // asked, its own errors) is kept; the task stays as it was.
        _ => Ok(None),
    }
}

/// The asked terms awaiting the owner, with the conversation.
pub fn awaiting_owner(doc: &Doc) -> Option<(Conversation, &PendingAsk)> {
    let pending = doc.pending.as_ref()?;
    let conversation = replay(doc).ok()?;
    Some((conversation, pending))
}

/// The terms the owner decides on: the requester's latest ask (with marks).
pub fn asked(conversation: &Conversation) -> Option<&Terms> {
    conversation.ask()
}

/// Records the owner's answer (our PROPOSE of `terms` with `record`, or our
/// REFUSE with `reason`) to the pending ask; answers the message sent.
pub fn owner_answers(
    doc: &mut Doc,
    decision: OwnerAnswer<'_>,
    now: OffsetDateTime,
) -> Result<Message, String> {
    let (mut conversation, pending) = awaiting_owner(doc)
        .map(|(c, p)| (c, p.clone()))
        .ok_or_else(|| "nothing awaits the owner in this conversation".to_owned())?;
    let asked_message = doc
        .messages
        .iter()
        .find(|v| v.get("message_id").and_then(Value::as_str) == Some(pending.answers.as_str()))
        .ok_or_else(|| "the awaited message is not stored".to_owned())
        .and_then(|v| anex::parse_value(v).map_err(|e| e.reason))?;
    let id = fresh_id(Some(&conversation), "h");
    let (content, state, awaiting) = match &decision {
        OwnerAnswer::Propose { terms, .. } => (
            Content::Propose((*terms).clone()),
            TaskState::InputRequired,
            Awaiting::Counterparty,
        ),
        OwnerAnswer::Refuse { reason } => (
            Content::Refuse {
                response: Some(Text::lossy(reason)),
                items: Vec::new(),
            },
            TaskState::Rejected,
            Awaiting::None,
        ),
    };
    let answer = asked_message
        .reply(id, content)
        .map_err(|e| e.to_string())?;
    conversation.apply(&answer).map_err(|e| e.to_string())?;
    let task = doc
        .tasks
        .iter()
        .position(|t| t.id == pending.task_id)
        .ok_or_else(|| "the pending task is not stored".to_owned())?;
    let i = doc.messages.len();
    doc.messages.push(answer.to_json());
    doc.a2a_ids.push(answer.message_id().as_str().to_owned());
    doc.tasks[task].history.push(i);
    doc.tasks[task].status_message = Some(i);
    doc.tasks[task].updated_at = text_time(now);
    set(doc, task, state, awaiting);
    if let OwnerAnswer::Propose { record, .. } = decision {
        doc.proposed = Some(record.to_json());
    }
    doc.pending = None;
    Ok(answer)
}

/// When the ask pending in `doc` stops waiting for the owner (its
/// decision deadline under `policy`), if one is pending.
pub fn decision_deadline(doc: &Doc, policy: Option<&anex::Policy>) -> Option<OffsetDateTime> {
    let pending = doc.pending.as_ref()?;
    let since = anp::api::parse_timestamp(&pending.since)?;
    Some(anex::decision_deadline(policy, since))
}

/// Past its decision deadline, the pending ask is answered for the owner:
/// the requester is sent a REFUSE saying no one decided in time, and the
/// ask no longer waits. Answers the deadline when it did so.
pub fn expire_if_due(
    doc: &mut Doc,
    policy: Option<&anex::Policy>,
    now: OffsetDateTime,
) -> Result<Option<OffsetDateTime>, String> {
    let Some(deadline) = decision_deadline(doc, policy) else {
        return Ok(None);
    };
    if now < deadline {
        return Ok(None);
    }
    let reason = format!(
        "No one decided on this ask by its deadline ({}); ask again if you still need it.",
        text_time(deadline)
    );
    owner_answers(doc, OwnerAnswer::Refuse { reason: &reason }, now)?;
    Ok(Some(deadline))
}

/// The owner's answer to a pending ask.
pub enum OwnerAnswer<'a> {
    /// Propose these terms (as asked or countered), recorded so.
    Propose {
        /// The terms (no marks).
        terms: &'a Terms,
        /// Their record, which the person's receipt signs.
        record: &'a TermsRecord,
    },
    /// Refuse, saying why.
    Refuse {
        /// The person's reason.
        reason: &'a str,
    },
}

/// `CancelTask` on the negotiation task: the conversation is withdrawn.
pub fn withdraw(doc: &mut Doc, task_id: &str, now: OffsetDateTime) -> Result<(), Refusal> {
    let i = doc
        .tasks
        .iter()
        .position(|t| t.id == task_id)
        .ok_or(Refusal::TaskNotFound)?;
    doc.tasks[i].state = TaskState::Canceled;
    doc.tasks[i].awaiting = Awaiting::None;
    doc.tasks[i].status_message = None;
    doc.tasks[i].updated_at = text_time(now);
    if doc.tasks[i].negotiation {
        doc.withdrawn = true;
        doc.pending = None;
        doc.proposed = None;
        doc.agreed = None;
        doc.tasks.iter_mut().for_each(|t| {
            if !t.state.is_terminal() {
                t.state = TaskState::Canceled;
                t.awaiting = Awaiting::None;
            }
        });
    }
    Ok(())
}
