//! The phases of §4.1 as a state machine over one conversation.
//!
//! The agent that sends the first message is the **requester** (it asks for
//! access and makes promises); the other is the **responder** (its owner's
//! data is asked for). Every message, received or about to be sent, goes
//! through [`Conversation::apply`]: it is either a legal next step, or a
//! [`SequenceError`] naming the message and the rule it breaks, and the
//! conversation is left as it was.
//!
//! ```text
//! Opening ──REQUEST(engage)──▶ EngagementAsked ──AGREE──▶ Engaged
//!    │                            │  └─PROPOSE(conditions)─▶ ConditionsAsked ──REQUEST──▶ …
//!    │                            └─REFUSE─▶ Closed
//!    └──────────CFP (from Opening or Engaged)──────────▶ Negotiating
//! Negotiating ──PROPOSE (the other side)──▶ Negotiating   (at most 8 proposals)
//!             ──ACCEPT-PROPOSAL──▶ Agreed   ──REJECT-PROPOSAL / REFUSE(CFP)──▶ Closed
//! any open phase ──CANCEL / INFORM(termination)──▶ Closed
//! ```
//!
//! Data `REQUEST`s and `QUERY-IF`s are questions: they may be asked in any
//! open phase and stay open until answered (a data request before terms are
//! agreed is answered `REFUSE`; only in `Agreed` may `INFORM` carry data,
//! and then exactly the accepted items asked for).

use std::collections::BTreeSet;
use std::fmt;

use crate::diff::diff;
use crate::limits::{MAX_MESSAGES, MAX_OPEN_QUESTIONS, MAX_PROPOSALS};
use crate::message::{CallForProposal, Content, Message, Query};
use crate::performative::Performative;
use crate::term::Terms;
use crate::text::{join_names, AgentId, Id, ItemName};

/// Which side of the conversation an agent is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Sent the first message; asks for access and makes promises.
    Requester,
    /// Its owner's data is asked for; grants, narrows or refuses.
    Responder,
}

impl Role {
    /// The other side.
    pub fn other(self) -> Self {
        match self {
            Self::Requester => Self::Responder,
            Self::Responder => Self::Requester,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Requester => "the requester",
            Self::Responder => "the responder",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a conversation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closure {
    /// `REFUSE` of the engagement or of the CFP.
    Refused,
    /// `REJECT-PROPOSAL`.
    Rejected,
    /// `CANCEL`.
    Cancelled,
    /// `INFORM` in ANEX-Termination.
    Terminated,
    /// The transport ended it (an A2A `CancelTask`), with no ANEX message.
    Withdrawn,
}

impl Closure {
    fn as_str(self) -> &'static str {
        match self {
            Self::Refused => "refused",
            Self::Rejected => "rejected",
            Self::Cancelled => "cancelled",
            Self::Terminated => "terminated",
            Self::Withdrawn => "withdrawn",
        }
    }
}

/// The proposal (or CFP) that awaits the other side's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// The message carrying it.
    pub id: Id,
    /// Who made it.
    pub by: Role,
    /// Whether it is the opening CFP (answered by PROPOSE or REFUSE, never accepted).
    pub is_cfp: bool,
    /// Its terms, with marks when the requester made it.
    pub terms: Terms,
}

/// Where a conversation is (§4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Phase 1: nothing but introductions so far.
    Opening,
    /// Phase 2: the requester asked to engage and awaits the answer.
    EngagementAsked {
        /// The engagement `REQUEST`.
        request: Id,
    },
    /// Phase 3: the responder asked for conditions before engaging.
    ConditionsAsked {
        /// The handshake `PROPOSE`.
        proposal: Id,
    },
    /// Phase 3 done: the responder agreed to engage.
    Engaged,
    /// Phase 4: a CFP or proposal stands, awaiting the other side.
    Negotiating {
        /// What awaits an answer.
        standing: Standing,
        /// The requester's latest ask (its CFP or own counter), with marks:
        /// what §4.4 holds a responder's counter to.
        ask: Terms,
        /// How many PROPOSE messages so far.
        proposals: usize,
    },
    /// Phase 5: terms accepted; data may be requested and shared.
    Agreed {
        /// The accepted terms (no marks).
        terms: Terms,
        /// The proposal that was accepted.
        proposal: Id,
        /// The `ACCEPT-PROPOSAL`.
        acceptance: Id,
    },
    /// Phase 6: over. Nothing more is accepted.
    Closed {
        /// Who ended it.
        by: Role,
        /// How.
        closure: Closure,
        /// The message that ended it (none when the transport did).
        message: Option<Id>,
    },
}

impl Phase {
    fn name(&self) -> &'static str {
        match self {
            Self::Opening => "opening",
            Self::EngagementAsked { .. } => "engagement asked",
            Self::ConditionsAsked { .. } => "conditions asked",
            Self::Engaged => "engaged",
            Self::Negotiating { .. } => "negotiating",
            Self::Agreed { .. } => "agreed",
            Self::Closed { .. } => "closed",
        }
    }
}

/// A question awaiting its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// A data `REQUEST` for these items.
    Data(Vec<ItemName>),
    /// A `QUERY-IF`.
    Query(Query),
}

/// An open question: who asked what, in which message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenQuestion {
    /// The asking message.
    pub id: Id,
    /// Who asked.
    pub from: Role,
    /// What.
    pub question: Question,
}

/// The rule a message broke (docs/anex-binding.md, "Sequence rules").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// The message belongs to another conversation.
    WrongConversation {
        /// This conversation.
        expected: Id,
    },
    /// The sender is neither party.
    NotAParty {
        /// Who claimed to send it.
        sender: AgentId,
    },
    /// The receiver is not the other party.
    WrongReceiver {
        /// The other party.
        expected: AgentId,
    },
    /// An agent addressed itself.
    SelfAddressed,
    /// The message id was already used in this conversation.
    DuplicateMessageId,
    /// The first message is not an introduction, an engagement request or a CFP.
    Opener,
    /// `in_reply_to` names no earlier message of the other party.
    UnknownReplyTarget {
        /// The id named.
        in_reply_to: Id,
    },
    /// This performative answers a message, and `in_reply_to` is missing.
    ReplyRequired,
    /// This message cannot answer the one it names.
    CannotAnswer {
        /// What it answers.
        answered: Performative,
        /// What it may answer, in words.
        answers: &'static str,
    },
    /// Only one side sends this.
    WrongSide {
        /// The side that may.
        may: Role,
    },
    /// Not possible in the current phase.
    NotNow {
        /// The phase.
        phase: &'static str,
        /// What the phase allows instead, in words.
        instead: &'static str,
    },
    /// An answer to a proposal that is not the one standing.
    NotStanding {
        /// The standing proposal's id.
        standing: Id,
    },
    /// A CFP is answered with PROPOSE or REFUSE; it cannot be accepted or rejected.
    CfpNotAcceptable,
    /// `(m)` marks in a responder's proposal or an acceptance.
    MarksOutOfPlace,
    /// An acceptance that names other terms than the standing proposal.
    AcceptDiffers {
        /// How the acceptance differs, in words.
        diff: String,
    },
    /// Data shared before any terms were accepted.
    NoTerms,
    /// Data shared that the accepted terms do not cover.
    NotAccepted {
        /// The items.
        items: Vec<ItemName>,
    },
    /// Data shared that the request did not ask for.
    NotAsked {
        /// The items.
        items: Vec<ItemName>,
    },
    /// Data asked for and not shared (answer with REFUSE or FAILURE instead).
    Incomplete {
        /// The items.
        items: Vec<ItemName>,
    },
    /// More proposals than [`MAX_PROPOSALS`].
    ProposalLimit,
    /// More open questions than [`MAX_OPEN_QUESTIONS`].
    QuestionLimit,
    /// More messages than [`MAX_MESSAGES`].
    MessageLimit,
    /// The conversation is over.
    Closed {
        /// How it ended.
        closure: Closure,
    },
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongConversation { expected } => {
                write!(f, "it belongs to another conversation than {expected}")
            }
            Self::NotAParty { sender } => {
                write!(f, "its sender {sender} is not a party to this conversation")
            }
            Self::WrongReceiver { expected } => {
                write!(f, "it is addressed to someone other than the other party, {expected}")
            }
            Self::SelfAddressed => f.write_str("its sender and receiver are the same agent"),
            Self::DuplicateMessageId => {
                f.write_str("its message_id was already used in this conversation")
            }
            Self::Opener => f.write_str(
                "a conversation opens with an introduction (INFORM), an engagement REQUEST or a CFP (§4.3, §4.4)",
            ),
            Self::UnknownReplyTarget { in_reply_to } => write!(
                f,
                "in_reply_to {in_reply_to} names no earlier message of the other party"
            ),
            Self::ReplyRequired => {
                f.write_str("it answers a message, so it must name it in in_reply_to")
            }
            Self::CannotAnswer { answered, answers } => {
                write!(f, "it cannot answer a {answered}: it answers {answers}")
            }
            Self::WrongSide { may } => write!(f, "only {may} sends it"),
            Self::NotNow { phase, instead } => {
                write!(f, "it has no place while the conversation is {phase}: {instead}")
            }
            Self::NotStanding { standing } => write!(
                f,
                "it answers a proposal that no longer stands (the standing one is {standing})"
            ),
            Self::CfpNotAcceptable => f.write_str(
                "a CFP is answered with PROPOSE (as asked, or narrowed) or REFUSE, not accepted or rejected (§4.4)",
            ),
            Self::MarksOutOfPlace => f.write_str(
                "(m) marks are the requester's: a responder's proposal and an acceptance name items without them",
            ),
            Self::AcceptDiffers { diff } => write!(
                f,
                "ACCEPT-PROPOSAL must repeat the standing proposal's terms exactly; it differs ({diff})"
            ),
            Self::NoTerms => f.write_str("no terms are accepted, so no data may be shared (§4.5)"),
            Self::NotAccepted { items } => {
                write!(f, "the accepted terms do not cover {} (§4.5)", join_names(items))
            }
            Self::NotAsked { items } => {
                write!(f, "the request did not ask for {}", join_names(items))
            }
            Self::Incomplete { items } => write!(
                f,
                "it leaves out {} that the request asked for (refuse or fail instead of answering in part)",
                join_names(items)
            ),
            Self::ProposalLimit => write!(
                f,
                "the negotiation already has {MAX_PROPOSALS} proposals, the most one conversation holds (§8.2)"
            ),
            Self::QuestionLimit => write!(
                f,
                "{MAX_OPEN_QUESTIONS} questions already await an answer"
            ),
            Self::MessageLimit => write!(
                f,
                "the conversation already holds {MAX_MESSAGES} messages, the most it may"
            ),
            Self::Closed { closure } => {
                write!(f, "the conversation is over ({})", closure.as_str())
            }
        }
    }
}

/// A message that is not a legal next step: which message, which rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message {message_id} ({performative}): {rule}")]
pub struct SequenceError {
    /// The message's id.
    pub message_id: Id,
    /// Its performative.
    pub performative: Performative,
    /// The rule it breaks.
    pub rule: Rule,
}

/// What a message seen earlier was, for checking what answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Introduce,
    Engage,
    Agree,
    Conditions,
    Cfp,
    Propose,
    Accept,
    Reject,
    Refuse,
    DataRequest,
    Data,
    QueryIf,
    Answer,
    Cancel,
    Terminate,
    Failure,
    NotUnderstood,
}

impl Kind {
    fn of(content: &Content) -> Self {
        match content {
            Content::Introduce { .. } => Self::Introduce,
            Content::Engage { .. } => Self::Engage,
            Content::Agree { .. } => Self::Agree,
            Content::Conditions { .. } => Self::Conditions,
            Content::Cfp(_) => Self::Cfp,
            Content::Propose(_) => Self::Propose,
            Content::Accept(_) => Self::Accept,
            Content::Reject { .. } => Self::Reject,
            Content::Refuse { .. } => Self::Refuse,
            Content::DataRequest { .. } => Self::DataRequest,
            Content::Data(_) => Self::Data,
            Content::QueryIf { .. } => Self::QueryIf,
            Content::Answer { .. } => Self::Answer,
            Content::Cancel { .. } => Self::Cancel,
            Content::Terminate { .. } => Self::Terminate,
            Content::Failure { .. } => Self::Failure,
            Content::NotUnderstood { .. } => Self::NotUnderstood,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    id: Id,
    from: Role,
    performative: Performative,
    kind: Kind,
}

/// What applying a message changes.
#[derive(Default)]
struct Effect {
    phase: Option<Phase>,
    ask: Option<OpenQuestion>,
    answered: Option<usize>,
}

/// One ANEX conversation between a requester and a responder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    id: Id,
    requester: AgentId,
    responder: AgentId,
    cfp: Option<(Id, CallForProposal)>,
    phase: Phase,
    seen: Vec<Seen>,
    open: Vec<OpenQuestion>,
}

impl Conversation {
    /// A conversation opened by `first`: its sender becomes the requester,
    /// its receiver the responder.
    pub fn open(first: &Message) -> Result<Self, SequenceError> {
        let err = |rule| SequenceError {
            message_id: first.message_id().clone(),
            performative: first.performative(),
            rule,
        };
        if first.sender() == first.receiver() {
            return Err(err(Rule::SelfAddressed));
        }
        let mut conversation = Self {
            id: first.conversation_id().clone(),
            requester: first.sender().clone(),
            responder: first.receiver().clone(),
            cfp: None,
            phase: Phase::Opening,
            seen: Vec::new(),
            open: Vec::new(),
        };
        conversation.apply(first)?;
        Ok(conversation)
    }

    /// Rebuilds a conversation from its messages in order (as stored, or as
    /// a console re-reads them), failing at the first one that breaks a rule.
    pub fn from_messages(messages: &[Message]) -> Result<Option<Self>, SequenceError> {
        let Some((first, rest)) = messages.split_first() else {
            return Ok(None);
        };
        let mut conversation = Self::open(first)?;
        for m in rest {
            conversation.apply(m)?;
        }
        Ok(Some(conversation))
    }

    /// Checks that `m` is a legal next step, without applying it: the same
    /// rule [`Self::apply`] enforces, for a message about to be sent.
    pub fn check(&self, m: &Message) -> Result<(), SequenceError> {
        self.step(m).map(|_| ()).map_err(|rule| SequenceError {
            message_id: m.message_id().clone(),
            performative: m.performative(),
            rule,
        })
    }

    /// Applies `m` if it is a legal next step; otherwise names the rule it
    /// breaks and leaves the conversation unchanged.
    pub fn apply(&mut self, m: &Message) -> Result<(), SequenceError> {
        let effect = self.step(m).map_err(|rule| SequenceError {
            message_id: m.message_id().clone(),
            performative: m.performative(),
            rule,
        })?;
        let from = self.role_of(m.sender()).unwrap_or(Role::Requester);
        if let Content::Cfp(cfp) = m.content() {
            self.cfp = Some((m.message_id().clone(), cfp.clone()));
        }
        self.seen.push(Seen {
            id: m.message_id().clone(),
            from,
            performative: m.performative(),
            kind: Kind::of(m.content()),
        });
        if let Some(i) = effect.answered {
            self.open.remove(i);
        }
        if let Some(q) = effect.ask {
            self.open.push(q);
        }
        if let Some(phase) = effect.phase {
            if matches!(phase, Phase::Closed { .. }) {
                self.open.clear();
            }
            self.phase = phase;
        }
        Ok(())
    }

    /// Ends the conversation without an ANEX message, because the transport
    /// did (an A2A `CancelTask` from `by`). Accepted terms end with it.
    pub fn withdraw(&mut self, by: Role) {
        if !matches!(self.phase, Phase::Closed { .. }) {
            self.phase = Phase::Closed {
                by,
                closure: Closure::Withdrawn,
                message: None,
            };
            self.open.clear();
        }
    }

    /// The conversation id.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// The requester's agent id.
    pub fn requester(&self) -> &AgentId {
        &self.requester
    }

    /// The responder's agent id.
    pub fn responder(&self) -> &AgentId {
        &self.responder
    }

    /// The side `agent` is on, if it is a party.
    pub fn role_of(&self, agent: &AgentId) -> Option<Role> {
        if *agent == self.requester {
            Some(Role::Requester)
        } else if *agent == self.responder {
            Some(Role::Responder)
        } else {
            None
        }
    }

    /// The current phase.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The CFP that opened the negotiation, with its message id.
    pub fn cfp(&self) -> Option<(&Id, &CallForProposal)> {
        self.cfp.as_ref().map(|(id, cfp)| (id, cfp))
    }

    /// The proposal awaiting an answer, if negotiating.
    pub fn standing(&self) -> Option<&Standing> {
        match &self.phase {
            Phase::Negotiating { standing, .. } => Some(standing),
            _ => None,
        }
    }

    /// The requester's latest ask (with marks), if negotiating.
    pub fn ask(&self) -> Option<&Terms> {
        match &self.phase {
            Phase::Negotiating { ask, .. } => Some(ask),
            _ => None,
        }
    }

    /// The accepted terms, while they are in force (phase `Agreed`).
    pub fn agreed(&self) -> Option<&Terms> {
        match &self.phase {
            Phase::Agreed { terms, .. } => Some(terms),
            _ => None,
        }
    }

    /// The questions awaiting an answer.
    pub fn open_questions(&self) -> &[OpenQuestion] {
        &self.open
    }

    /// Whether message `id` is part of the conversation.
    pub fn contains(&self, id: &Id) -> bool {
        self.seen.iter().any(|s| &s.id == id)
    }

    /// How many messages the conversation holds.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether it holds no message (never true for an opened conversation).
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    fn step(&self, m: &Message) -> Result<Effect, Rule> {
        if m.conversation_id() != &self.id {
            return Err(Rule::WrongConversation {
                expected: self.id.clone(),
            });
        }
        let Some(from) = self.role_of(m.sender()) else {
            return Err(Rule::NotAParty {
                sender: m.sender().clone(),
            });
        };
        let other_id = match from {
            Role::Requester => &self.responder,
            Role::Responder => &self.requester,
        };
        if m.receiver() != other_id {
            return Err(Rule::WrongReceiver {
                expected: other_id.clone(),
            });
        }
        if self.seen.iter().any(|s| &s.id == m.message_id()) {
            return Err(Rule::DuplicateMessageId);
        }
        if self.seen.len() >= MAX_MESSAGES {
            return Err(Rule::MessageLimit);
        }
        if let Phase::Closed { closure, .. } = self.phase {
            return Err(Rule::Closed { closure });
        }
        let target = match m.in_reply_to() {
            None => None,
            Some(id) => Some(
                self.seen
                    .iter()
                    .find(|s| &s.id == id && s.from == from.other())
                    .ok_or_else(|| Rule::UnknownReplyTarget {
                        in_reply_to: id.clone(),
                    })?,
            ),
        };
        if self.seen.is_empty() {
            let opener = matches!(
                m.content(),
                Content::Introduce { .. } | Content::Engage { .. } | Content::Cfp(_)
            );
            if !opener {
                return Err(Rule::Opener);
            }
        }
        let side = |may: Role| {
            if from == may {
                Ok(())
            } else {
                Err(Rule::WrongSide { may })
            }
        };
        let replied = || target.ok_or(Rule::ReplyRequired);
        let cannot = |t: &Seen, answers: &'static str| Rule::CannotAnswer {
            answered: t.performative,
            answers,
        };
        let phase_name = self.phase.name();
        let not_now = |instead: &'static str| Rule::NotNow {
            phase: phase_name,
            instead,
        };
        let mut effect = Effect::default();
        match m.content() {
            Content::Introduce { .. } => {
                if let Some(t) = target {
                    if !matches!(t.kind, Kind::Introduce | Kind::Conditions) {
                        return Err(cannot(t, "an introduction or a request for conditions"));
                    }
                }
                if !matches!(
                    self.phase,
                    Phase::Opening
                        | Phase::EngagementAsked { .. }
                        | Phase::ConditionsAsked { .. }
                        | Phase::Engaged
                ) {
                    return Err(not_now(
                        "introductions come before the negotiation (§4.3 step 1)",
                    ));
                }
            }
            Content::Engage { .. } => {
                side(Role::Requester)?;
                if let Some(t) = target {
                    if !matches!(t.kind, Kind::Introduce | Kind::Conditions) {
                        return Err(cannot(t, "an introduction or a request for conditions"));
                    }
                }
                match self.phase {
                    Phase::Opening | Phase::ConditionsAsked { .. } => {
                        effect.phase = Some(Phase::EngagementAsked {
                            request: m.message_id().clone(),
                        });
                    }
                    _ => {
                        return Err(not_now(
                            "engagement is asked once, before the CFP, or again after conditions were asked (§4.3 step 2)",
                        ))
                    }
                }
            }
            Content::Agree { .. } | Content::Conditions { .. } => {
                side(Role::Responder)?;
                let t = replied()?;
                if t.kind != Kind::Engage {
                    return Err(cannot(t, "an engagement REQUEST"));
                }
                match &self.phase {
                    Phase::EngagementAsked { request } if *request == t.id => {
                        effect.phase = Some(match m.content() {
                            Content::Agree { .. } => Phase::Engaged,
                            _ => Phase::ConditionsAsked {
                                proposal: m.message_id().clone(),
                            },
                        });
                    }
                    _ => {
                        return Err(not_now(
                            "only the engagement REQUEST awaiting an answer may be answered (§4.3 step 3)",
                        ))
                    }
                }
            }
            Content::Cfp(cfp) => {
                side(Role::Requester)?;
                if let Some(t) = target {
                    if !matches!(t.kind, Kind::Agree | Kind::Introduce) {
                        return Err(cannot(t, "an AGREE or an introduction"));
                    }
                }
                match self.phase {
                    Phase::Opening | Phase::Engaged => {
                        effect.phase = Some(Phase::Negotiating {
                            standing: Standing {
                                id: m.message_id().clone(),
                                by: Role::Requester,
                                is_cfp: true,
                                terms: cfp.terms.clone(),
                            },
                            ask: cfp.terms.clone(),
                            proposals: 0,
                        });
                    }
                    _ => {
                        return Err(not_now(
                            "a CFP opens the negotiation once, after the handshake if there is one (§4.4)",
                        ))
                    }
                }
            }
            Content::Propose(terms) => {
                let Phase::Negotiating {
                    standing,
                    ask,
                    proposals,
                } = &self.phase
                else {
                    return Err(not_now(
                        "a proposal answers a CFP or a proposal of the other side (§4.4)",
                    ));
                };
                let t = replied()?;
                if !matches!(t.kind, Kind::Cfp | Kind::Propose) {
                    return Err(cannot(t, "a CFP or a PROPOSE"));
                }
                if standing.by == from {
                    return Err(not_now("the other side's answer is awaited"));
                }
                if t.id != standing.id {
                    return Err(Rule::NotStanding {
                        standing: standing.id.clone(),
                    });
                }
                if *proposals >= MAX_PROPOSALS {
                    return Err(Rule::ProposalLimit);
                }
                if from == Role::Responder && terms.has_marks() {
                    return Err(Rule::MarksOutOfPlace);
                }
                effect.phase = Some(Phase::Negotiating {
                    standing: Standing {
                        id: m.message_id().clone(),
                        by: from,
                        is_cfp: false,
                        terms: terms.clone(),
                    },
                    ask: if from == Role::Requester {
                        terms.clone()
                    } else {
                        ask.clone()
                    },
                    proposals: proposals + 1,
                });
            }
            Content::Accept(_) | Content::Reject { .. } => {
                let Phase::Negotiating { standing, .. } = &self.phase else {
                    return Err(not_now(
                        "ACCEPT-PROPOSAL and REJECT-PROPOSAL answer the standing proposal of a negotiation (§4.4)",
                    ));
                };
                let t = replied()?;
                if !matches!(t.kind, Kind::Cfp | Kind::Propose) {
                    return Err(cannot(t, "a PROPOSE"));
                }
                if t.id != standing.id {
                    return Err(Rule::NotStanding {
                        standing: standing.id.clone(),
                    });
                }
                if standing.is_cfp {
                    return Err(Rule::CfpNotAcceptable);
                }
                if standing.by == from {
                    return Err(not_now("a side does not answer its own proposal"));
                }
                effect.phase = Some(match m.content() {
                    Content::Accept(terms) => {
                        if terms.has_marks() {
                            return Err(Rule::MarksOutOfPlace);
                        }
                        let proposed = standing.terms.unmarked();
                        if !terms.same_as(&proposed) {
                            return Err(Rule::AcceptDiffers {
                                diff: diff(&proposed, terms).to_string(),
                            });
                        }
                        Phase::Agreed {
                            terms: proposed,
                            proposal: standing.id.clone(),
                            acceptance: m.message_id().clone(),
                        }
                    }
                    _ => Phase::Closed {
                        by: from,
                        closure: Closure::Rejected,
                        message: Some(m.message_id().clone()),
                    },
                });
            }
            Content::Refuse { .. } => {
                side(Role::Responder).or_else(|e| {
                    // Either side may refuse a QUERY-IF; only the responder
                    // refuses engagements, CFPs and data requests.
                    match target {
                        Some(t) if t.kind == Kind::QueryIf => Ok(()),
                        _ => Err(e),
                    }
                })?;
                let t = replied()?;
                match t.kind {
                    Kind::Engage | Kind::Cfp => {
                        let awaited = match &self.phase {
                            Phase::EngagementAsked { request } => *request == t.id,
                            Phase::Negotiating { standing, .. } => {
                                standing.is_cfp && standing.id == t.id
                            }
                            _ => false,
                        };
                        if !awaited {
                            return Err(not_now(
                                "only the engagement REQUEST or CFP awaiting an answer may be refused",
                            ));
                        }
                        effect.phase = Some(Phase::Closed {
                            by: from,
                            closure: Closure::Refused,
                            message: Some(m.message_id().clone()),
                        });
                    }
                    Kind::DataRequest | Kind::QueryIf => {
                        effect.answered = Some(self.open_question(&t.id, from)?);
                    }
                    _ => {
                        return Err(cannot(
                            t,
                            "an engagement REQUEST, a CFP, a data REQUEST or a QUERY-IF",
                        ))
                    }
                }
            }
            Content::DataRequest { access } => {
                side(Role::Requester)?;
                if self.open.len() >= MAX_OPEN_QUESTIONS {
                    return Err(Rule::QuestionLimit);
                }
                effect.ask = Some(OpenQuestion {
                    id: m.message_id().clone(),
                    from,
                    question: Question::Data(access.clone()),
                });
            }
            Content::Data(items) => {
                side(Role::Responder)?;
                let t = replied()?;
                if t.kind != Kind::DataRequest {
                    return Err(cannot(t, "a data REQUEST"));
                }
                let index = self.open_question(&t.id, from)?;
                let Phase::Agreed { terms, .. } = &self.phase else {
                    return Err(Rule::NoTerms);
                };
                let shared: BTreeSet<&ItemName> = items.keys().collect();
                let not_accepted: Vec<ItemName> = shared
                    .iter()
                    .filter(|n| !terms.has_item(n))
                    .map(|n| (*n).clone())
                    .collect();
                if !not_accepted.is_empty() {
                    return Err(Rule::NotAccepted {
                        items: not_accepted,
                    });
                }
                let Question::Data(asked) = &self.open[index].question else {
                    return Err(cannot(t, "a data REQUEST"));
                };
                let asked_set: BTreeSet<&ItemName> = asked.iter().collect();
                let not_asked: Vec<ItemName> = shared
                    .difference(&asked_set)
                    .map(|n| (*n).clone())
                    .collect();
                if !not_asked.is_empty() {
                    return Err(Rule::NotAsked { items: not_asked });
                }
                let missing: Vec<ItemName> = asked_set
                    .difference(&shared)
                    .map(|n| (*n).clone())
                    .collect();
                if !missing.is_empty() {
                    return Err(Rule::Incomplete { items: missing });
                }
                effect.answered = Some(index);
            }
            Content::QueryIf { query } => {
                if self.open.len() >= MAX_OPEN_QUESTIONS {
                    return Err(Rule::QuestionLimit);
                }
                effect.ask = Some(OpenQuestion {
                    id: m.message_id().clone(),
                    from,
                    question: Question::Query(*query),
                });
            }
            Content::Answer { query, .. } => {
                let t = replied()?;
                if t.kind != Kind::QueryIf {
                    return Err(cannot(t, "a QUERY-IF"));
                }
                let index = self.open_question(&t.id, from)?;
                if self.open[index].question != Question::Query(*query) {
                    return Err(cannot(t, "the QUERY-IF whose query it repeats"));
                }
                effect.answered = Some(index);
            }
            Content::Cancel { .. } | Content::Terminate { .. } => {
                effect.phase = Some(Phase::Closed {
                    by: from,
                    closure: if matches!(m.content(), Content::Cancel { .. }) {
                        Closure::Cancelled
                    } else {
                        Closure::Terminated
                    },
                    message: Some(m.message_id().clone()),
                });
            }
            Content::Failure { .. } | Content::NotUnderstood { .. } => {
                if let Content::Failure { .. } = m.content() {
                    replied()?;
                }
                if let Some(t) = target {
                    if matches!(t.kind, Kind::NotUnderstood) {
                        return Err(cannot(t, "any message but a NOT-UNDERSTOOD"));
                    }
                    effect.answered = self
                        .open
                        .iter()
                        .position(|q| q.id == t.id && q.from != from);
                }
            }
        }
        Ok(effect)
    }

    /// The index of the open question `id`, asked by the other side of `from`.
    fn open_question(&self, id: &Id, from: Role) -> Result<usize, Rule> {
        self.open
            .iter()
            .position(|q| &q.id == id && q.from != from)
            .ok_or(Rule::NotNow {
                phase: self.phase.name(),
                instead: "that question was already answered",
            })
    }
}
