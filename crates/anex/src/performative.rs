//! The draft's performatives (Appendix A) and the `protocol` values that
//! name its phases (§4.3–§4.6), spelled exactly as the draft spells them.

use std::fmt;

/// A message's intent, from the draft's Appendix A (FIPA ACL vocabulary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Performative {
    /// The requester's acceptance of the proposal standing before it (or the
    /// responder's, of a requester's counter).
    AcceptProposal,
    /// Willingness to engage (answers an engagement `REQUEST`).
    Agree,
    /// Withdrawal from the conversation; accepted terms are revoked from then on.
    Cancel,
    /// Call for proposal: the requester's access asked and promises offered.
    Cfp,
    /// A message was understood but could not be acted on.
    Failure,
    /// A statement: an introduction, shared data, an answer, or the end.
    Inform,
    /// A message could not be read or breaks the conversation's rules.
    NotUnderstood,
    /// Terms offered (negotiation), or conditions asked (handshake).
    Propose,
    /// A yes/no question about the conversation.
    QueryIf,
    /// A refusal to engage, to answer a CFP, or to share asked data.
    Refuse,
    /// Rejection of the proposal standing before the sender; ends the negotiation.
    RejectProposal,
    /// A request to engage (handshake) or for data (data exchange).
    Request,
}

impl Performative {
    /// Every performative, in the draft's Appendix A order.
    pub const ALL: [Performative; 12] = [
        Self::AcceptProposal,
        Self::Agree,
        Self::Cancel,
        Self::Cfp,
        Self::Failure,
        Self::Inform,
        Self::NotUnderstood,
        Self::Propose,
        Self::QueryIf,
        Self::Refuse,
        Self::RejectProposal,
        Self::Request,
    ];

    /// The wire spelling (`ACCEPT-PROPOSAL`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AcceptProposal => "ACCEPT-PROPOSAL",
            Self::Agree => "AGREE",
            Self::Cancel => "CANCEL",
            Self::Cfp => "CFP",
            Self::Failure => "FAILURE",
            Self::Inform => "INFORM",
            Self::NotUnderstood => "NOT-UNDERSTOOD",
            Self::Propose => "PROPOSE",
            Self::QueryIf => "QUERY-IF",
            Self::Refuse => "REFUSE",
            Self::RejectProposal => "REJECT-PROPOSAL",
            Self::Request => "REQUEST",
        }
    }

    /// Reads the exact wire spelling (case and hyphens as the draft writes them).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

impl fmt::Display for Performative {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `protocol` field: which of the draft's interaction protocols a
/// message belongs to, which is also the phase group of §4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// §4.3: self-identification, engagement, the answer to it (phases 1–3).
    Handshaking,
    /// §4.4: CFP, proposals, acceptance or rejection (phase 4).
    Negotiation,
    /// §4.5: data requested and shared under accepted terms (phase 5).
    DataExchange,
    /// §4.6: the end of the conversation (phase 6).
    Termination,
}

impl Protocol {
    /// Every protocol value.
    pub const ALL: [Protocol; 4] = [
        Self::Handshaking,
        Self::Negotiation,
        Self::DataExchange,
        Self::Termination,
    ];

    /// The wire spelling (`ANEX-Negotiation`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Handshaking => "ANEX-Handshaking",
            Self::Negotiation => "ANEX-Negotiation",
            Self::DataExchange => "ANEX-Data-Exchange",
            Self::Termination => "ANEX-Termination",
        }
    }

    /// Reads the exact wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip_and_nothing_else_parses() {
        for p in Performative::ALL {
            assert_eq!(Performative::parse(p.as_str()), Some(p));
            assert_eq!(Performative::parse(&p.as_str().to_lowercase()), None);
        }
        assert_eq!(Performative::parse("ACCEPT_PROPOSAL"), None);
        assert_eq!(Performative::parse("CALL-FOR-PROPOSAL"), None);
        for p in Protocol::ALL {
            assert_eq!(Protocol::parse(p.as_str()), Some(p));
        }
        assert_eq!(Protocol::parse("ANEX-DataExchange"), None);
    }
}
