//! The negotiation state machine of SPEC §5: six states, the transition
//! rules of §5.2 and the timing defaults of §5.3. Time is passed in.
//!
//! Where the spec leaves a point open this follows the reference SDK's
//! transition table (`concordia/session.py`): `negotiate.open` keeps the
//! session PROPOSED; `resolve`, `propose_mediator` and `commit` are ACTIVE
//! messages (commit agrees); a DORMANT session is reactivated by an offer.
//! Stricter than the SDK, and named in each error: the responder (not the
//! initiator) accepts or declines the session; an accept needs a standing
//! offer (the open's terms or the last offer/counter) that someone else made,
//! answered within `offer_ttl` and its `valid_until`; no message arrives after
//! `session_ttl`; no more than `max_rounds` offers and counters.

use std::collections::BTreeSet;

use time::{Duration, OffsetDateTime};

use crate::message::{Body, Checked, Message, MessageType, Timing};
use approval_receipt::datetime;

/// The six states of §5.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// `negotiate.open` sent, not yet accepted.
    Proposed,
    /// Both parties negotiate.
    Active,
    /// Agreed: terminal and immutable.
    Agreed,
    /// Rejected, declined or withdrawn.
    Rejected,
    /// The session's time ran out.
    Expired,
    /// Rejected or expired, flagged reactivatable.
    Dormant,
}

impl State {
    /// The SDK's lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Proposed => "proposed",
            State::Active => "active",
            State::Agreed => "agreed",
            State::Rejected => "rejected",
            State::Expired => "expired",
            State::Dormant => "dormant",
        }
    }
}

/// The rule a message broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rule {
    /// The first message must be `negotiate.open`, and only the first.
    #[error("a session starts with negotiate.open, and only its first message is one")]
    OpenFirst,
    /// §5.2 has no transition for this type in this state.
    #[error("§5.2 allows no {kind} in state {state}")]
    NoTransition {
        /// The message type.
        kind: &'static str,
        /// The state it arrived in.
        state: &'static str,
    },
    /// accept_session / decline_session sent by the initiator.
    #[error("only the responder may answer negotiate.open (§5.2), not the initiator {0:?}")]
    ResponderOnly(String),
    /// Accept with no standing offer, or of one's own offer.
    #[error("{0}")]
    NothingToAccept(String),
    /// The session's `session_ttl` has elapsed.
    #[error("the session's session_ttl ({ttl} s from {opened}) elapsed before this message")]
    SessionExpired {
        /// Seconds.
        ttl: u64,
        /// The open's timestamp.
        opened: String,
    },
    /// The offer accepted was older than `offer_ttl` or past its `valid_until`.
    #[error("the offer accepted had expired: {0}")]
    OfferExpired(String),
    /// More offers and counters than `max_rounds`.
    #[error("max_rounds ({0}) offers and counters were already made")]
    MaxRounds(u64),
    /// A message older than the one before it.
    #[error("the timestamp is earlier than the previous message's")]
    TimeBackwards,
    /// The session is terminal.
    #[error("the session is {0}; nothing more can happen in it")]
    Terminal(&'static str),
}

/// A transition refused: which message, and which rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message {index} ({id}): {rule}")]
pub struct TransitionError {
    /// The message's index in the transcript.
    pub index: u64,
    /// Its id.
    pub id: String,
    /// The rule broken.
    pub rule: Rule,
}

/// What the state machine reads of a message: a small copy, so a long
/// transcript's typed messages need not all be kept to replay it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The message id.
    pub id: String,
    /// Its type.
    pub kind: MessageType,
    /// The sender's agent id.
    pub from: String,
    /// The recipients' agent ids.
    pub to: Vec<String>,
    /// Its timestamp.
    pub at: OffsetDateTime,
    /// The timing an open sets.
    pub timing: Option<Timing>,
    /// An offer's `valid_until`, as sent.
    pub valid_until: Option<String>,
    /// A withdraw flagged reactivatable.
    pub reactivatable: bool,
}

impl From<&Message> for Step {
    fn from(m: &Message) -> Step {
        Step {
            id: m.id.clone(),
            kind: m.kind,
            from: m.from.agent_id.clone(),
            to: m.to.iter().flatten().map(|p| p.agent_id.clone()).collect(),
            at: m.timestamp,
            timing: match &m.body {
                Body::Open { timing, .. } => Some(*timing),
                _ => None,
            },
            valid_until: m.offer().and_then(|o| o.valid_until.clone()),
            reactivatable: matches!(
                m.body,
                Body::Withdraw {
                    reactivatable: true,
                    ..
                }
            ),
        }
    }
}

impl Step {
    /// The step of a message whose envelope passed every rule, read without
    /// building the typed [`Message`] (what [`Step::from`] gives for it).
    pub(crate) fn from_checked<O: ?Sized>(m: &Checked<'_, O>) -> Step {
        Step {
            id: m.id.to_owned(),
            kind: m.kind,
            from: m.from.agent_id.to_owned(),
            to: m
                .to
                .iter()
                .flatten()
                .map(|p| p.agent_id.to_owned())
                .collect(),
            at: m.timestamp,
            timing: m.facts.timing.filter(|_| m.kind == MessageType::Open),
            valid_until: m.facts.valid_until.map(str::to_owned),
            reactivatable: m.facts.reactivatable,
        }
    }
}

#[derive(Debug, Clone)]
struct Standing {
    author: String,
    at: OffsetDateTime,
    valid_until: Option<OffsetDateTime>,
    accepted_by: BTreeSet<String>,
}

/// A session being replayed message by message.
#[derive(Debug, Clone)]
pub struct Session {
    state: State,
    timing: Timing,
    initiator: Option<String>,
    parties: BTreeSet<String>,
    opened_at: Option<OffsetDateTime>,
    last_at: Option<OffsetDateTime>,
    rounds: u64,
    standing: Option<Standing>,
    applied: u64,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    /// A session before its first message.
    pub fn new() -> Session {
        Session {
            state: State::Proposed,
            timing: Timing::default(),
            initiator: None,
            parties: BTreeSet::new(),
            opened_at: None,
            last_at: None,
            rounds: 0,
            standing: None,
            applied: 0,
        }
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// The timing agreed in `negotiate.open` (defaults filled in).
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Offers and counters made so far.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// How many messages were applied.
    pub fn len(&self) -> u64 {
        self.applied
    }

    /// True before the first message.
    pub fn is_empty(&self) -> bool {
        self.applied == 0
    }

    /// Expires a PROPOSED or ACTIVE session whose `session_ttl` has elapsed
    /// at `now` (the System transition of §5.2). Returns the state.
    pub fn tick(&mut self, now: OffsetDateTime) -> State {
        if let Some(opened) = self.opened_at {
            if matches!(self.state, State::Proposed | State::Active)
                && now >= opened + Duration::seconds(self.timing.session_ttl as i64)
            {
                self.state = State::Expired;
            }
        }
        self.state
    }

    /// Flags a REJECTED or EXPIRED session reactivatable (→ DORMANT).
    pub fn make_dormant(&mut self) -> Result<State, Rule> {
        match self.state {
            State::Rejected | State::Expired => {
                self.state = State::Dormant;
                Ok(self.state)
            }
            other => Err(Rule::NoTransition {
                kind: "reactivatable",
                state: other.as_str(),
            }),
        }
    }

    /// Applies the next message (already verified), returning the new state.
    pub fn apply(&mut self, message: &Message) -> Result<State, TransitionError> {
        self.apply_step(&Step::from(message))
    }

    /// Applies the next message's [`Step`], returning the new state.
    pub fn apply_step(&mut self, message: &Step) -> Result<State, TransitionError> {
        let index = self.applied;
        let err = |rule| TransitionError {
            index,
            id: message.id.clone(),
            rule,
        };
        let sender = message.from.clone();
        let at = message.at;
        if (index == 0) != (message.kind == MessageType::Open) {
            return Err(err(Rule::OpenFirst));
        }
        if self.state == State::Agreed {
            return Err(err(Rule::Terminal("agreed")));
        }
        if let Some(last) = self.last_at {
            if at < last {
                return Err(err(Rule::TimeBackwards));
            }
        }
        if let Some(opened) = self.opened_at {
            if matches!(self.state, State::Proposed | State::Active)
                && at >= opened + Duration::seconds(self.timing.session_ttl as i64)
            {
                self.state = State::Expired;
                return Err(err(Rule::SessionExpired {
                    ttl: self.timing.session_ttl,
                    opened: datetime::format_utc(opened),
                }));
            }
        }
        use MessageType as T;
        use State as S;
        let next = match (self.state, message.kind) {
            (S::Proposed, T::Open) => S::Proposed,
            (S::Proposed, T::AcceptSession) => S::Active,
            (S::Proposed, T::DeclineSession) => S::Rejected,
            (S::Active, T::Offer | T::Counter | T::Signal | T::Inquire | T::Constrain)
            | (S::Active, T::ProposeMediator | T::Resolve) => S::Active,
            (S::Active, T::Accept | T::Commit) => S::Agreed,
            (S::Active, T::Reject | T::Withdraw) => S::Rejected,
            (S::Dormant, T::Offer) => S::Active,
            (state, kind) => {
                return Err(err(Rule::NoTransition {
                    kind: kind.as_str(),
                    state: state.as_str(),
                }))
            }
        };
        match message.kind {
            T::Open => {
                self.timing = message.timing.unwrap_or_default();
                self.initiator = Some(sender.clone());
                self.opened_at = Some(at);
                self.standing = Some(Standing {
                    author: sender.clone(),
                    at,
                    valid_until: None,
                    accepted_by: BTreeSet::new(),
                });
                for p in &message.to {
                    self.parties.insert(p.clone());
                }
            }
            T::AcceptSession | T::DeclineSession
                if self.initiator.as_deref() == Some(sender.as_str()) =>
            {
                return Err(err(Rule::ResponderOnly(sender)));
            }
            T::Offer | T::Counter => {
                if self.rounds >= self.timing.max_rounds {
                    return Err(err(Rule::MaxRounds(self.timing.max_rounds)));
                }
                self.rounds += 1;
                let valid_until = match &message.valid_until {
                    Some(text) => Some(datetime::parse(text).map_err(|e| {
                        err(Rule::OfferExpired(format!(
                            "its valid_until is unreadable: {e}"
                        )))
                    })?),
                    None => None,
                };
                self.standing = Some(Standing {
                    author: sender.clone(),
                    at,
                    valid_until,
                    accepted_by: BTreeSet::new(),
                });
            }
            T::Accept => {
                let Some(standing) = self.standing.as_mut() else {
                    return Err(err(Rule::NothingToAccept(
                        "there is no offer standing to accept".into(),
                    )));
                };
                if standing.author == sender {
                    return Err(err(Rule::NothingToAccept(format!(
                        "{sender:?} cannot accept its own offer"
                    ))));
                }
                if at > standing.at + Duration::seconds(self.timing.offer_ttl as i64) {
                    return Err(err(Rule::OfferExpired(format!(
                        "offer_ttl is {} s and the offer was made at {}",
                        self.timing.offer_ttl,
                        datetime::format_utc(standing.at)
                    ))));
                }
                if let Some(until) = standing.valid_until {
                    if at > until {
                        return Err(err(Rule::OfferExpired(format!(
                            "it was valid until {}",
                            datetime::format_utc(until)
                        ))));
                    }
                }
                standing.accepted_by.insert(sender.clone());
                // §5.2: AGREED once every party other than the offer's author accepted.
                let author = standing.author.clone();
                let others: BTreeSet<&String> =
                    self.parties.iter().filter(|p| **p != author).collect();
                let all = others.iter().all(|p| standing.accepted_by.contains(*p));
                if !all {
                    self.parties.insert(sender.clone());
                    self.applied += 1;
                    self.last_at = Some(at);
                    return Ok(self.state);
                }
            }
            _ => {}
        }
        self.parties.insert(sender);
        self.state = next;
        if message.reactivatable && next == S::Rejected {
            self.state = S::Dormant;
        }
        self.applied += 1;
        self.last_at = Some(at);
        Ok(self.state)
    }

    /// Replays a whole transcript of steps.
    pub fn replay_steps<'a>(
        steps: impl IntoIterator<Item = &'a Step>,
    ) -> Result<Session, TransitionError> {
        let mut session = Session::new();
        for s in steps {
            session.apply_step(s)?;
        }
        Ok(session)
    }

    /// Replays a whole transcript of typed messages.
    pub fn replay<'a>(
        messages: impl IntoIterator<Item = &'a Message>,
    ) -> Result<Session, TransitionError> {
        let mut session = Session::new();
        for m in messages {
            session.apply(m)?;
        }
        Ok(session)
    }
}
