//! What the host says about each request a gate agent made (Concordia and
//! OANP alike): the `requests` of a gate session's log (docs/approver-api.md,
//! `GET /sessions/:id/log?after=N`), each as the agent reads it at
//! `GET …/requests/:request_id` (docs/gate-api.md). The host is the one that
//! knows a request was decided at another console, by whom, why, or that it
//! expired: the transcript shows it only once the org's agent answers.
//! Read here once for both gate protocols; kept by the poller (the latest
//! request about each message is the one that counts: a new request may
//! follow an expired one); read by `crate::decided` when a proposal has
//! left the pending set.

use countersign_host_api::gate::RequestState;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::EngineError;

/// A person behind one receipt recorded for a request, as the host names
/// them (their words: data, shown as text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Decider {
    /// The approver's name.
    #[serde(default)]
    pub name: String,
    /// The approver's enrolled email.
    #[serde(default)]
    pub email: String,
    /// `approve` or `deny`.
    #[serde(default)]
    pub decision: String,
    /// When the host recorded it.
    #[serde(default)]
    pub at: String,
}

/// One request of a gate session, as the host says it stands. Read
/// leniently (a member the host adds later is ignored, one it leaves out
/// is empty); [`HostRequest::state`] reads the status with the host's own
/// vocabulary (`countersign-host-api`), an unknown word reading as none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HostRequest {
    /// The agent's id for it.
    pub request_id: String,
    /// The awaited message (the proposal's `event_hash`).
    pub message_hash: String,
    /// `pending`, `approved`, `denied`, `countered`, `expired`, `superseded`.
    pub status: String,
    /// The amount at stake (`"150000.00 USD"`).
    #[serde(default)]
    pub amount: Option<String>,
    /// When it stops (or stopped) waiting.
    #[serde(default)]
    pub expires_at: String,
    /// When the agent asked.
    #[serde(default)]
    pub created_at: String,
    /// Distinct approvals given so far.
    #[serde(default)]
    pub approvals_given: u32,
    /// Distinct approvals the policy needs.
    #[serde(default)]
    pub approvals_required: u32,
    /// The person behind each receipt recorded, in order.
    #[serde(default)]
    pub decided_by: Vec<Decider>,
    /// Why it was declined (denied, countered).
    #[serde(default)]
    pub reason: Option<String>,
    /// The terms to offer instead (countered).
    #[serde(default)]
    pub counter_terms: Option<Value>,
}

impl HostRequest {
    /// Where it stands, in the host's vocabulary; `None` for a word this
    /// build does not know (read as undecided, never as decided).
    pub(crate) fn state(&self) -> Option<RequestState> {
        RequestState::parse(&self.status)
    }
}

/// The approvals the host recorded for one request (its description as
/// kept, JSON): its record of them (`approvals`: step, role, for whom,
/// rule, policy version) where the host gives one; otherwise each approving
/// receipt with the person behind it, its role (`approver.role`) and whom a
/// stand-in made it for (`approver.on_behalf_of.person`). A description
/// that does not read gives none.
pub(crate) fn approvals(message_hash: &str, body: &str) -> Vec<crate::views::HostApproval> {
    #[derive(Deserialize)]
    struct Recorded {
        #[serde(default)]
        receipts: Vec<Value>,
        #[serde(default)]
        decided_by: Vec<Decider>,
        #[serde(default)]
        approvals: Vec<countersign_host_api::approver::ApprovalRecord>,
    }
    let Ok(r) = serde_json::from_str::<Recorded>(body) else {
        return Vec::new();
    };
    if !r.approvals.is_empty() {
        return r
            .approvals
            .into_iter()
            .map(crate::edge::wire::host_approval)
            .collect();
    }
    r.receipts
        .iter()
        .zip(&r.decided_by)
        .filter(|(_, who)| who.decision == "approve")
        .map(|(receipt, who)| crate::views::HostApproval {
            event_hash: message_hash.to_owned(),
            approved_by: who.email.clone(),
            at: who.at.clone(),
            step: None,
            role: receipt
                .pointer("/approver/role")
                .and_then(Value::as_str)
                .map(str::to_owned),
            for_person: receipt
                .pointer("/approver/on_behalf_of/person")
                .and_then(Value::as_str)
                .map(str::to_owned),
            reason: None,
            rule: None,
            policy_version: None,
        })
        .collect()
}

/// The requests member of a gate log document, whatever else it carries.
#[derive(Deserialize)]
struct Requests {
    #[serde(default)]
    requests: Vec<HostRequest>,
}

/// Reads the requests of a gate session's log answer (its bytes, as
/// fetched). A log whose requests cannot be read is refused with why; the
/// poller then keeps what it had.
pub(crate) fn read(bytes: &[u8], session: &str) -> Result<Vec<HostRequest>, EngineError> {
    serde_json::from_slice::<Requests>(bytes)
        .map(|r| r.requests)
        .map_err(|e| {
            EngineError::Protocol(format!(
                "the requests in the record of session {session} cannot be read: {e}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_requests_of_a_gate_log_are_read_as_the_host_writes_them() {
        let doc = json!({
            "protocol": "oanp", "session_id": "s", "messages": [],
            "requests": [
                {"request_id": "r1", "status": "expired", "message_hash": "sha256:aa", "action": "accept",
                 "amount": "419.00 USD", "threshold": "0 USD", "expires_at": "2026-12-01T09:00:00Z",
                 "created_at": "2026-12-01T08:00:00Z", "approvals_given": 0, "approvals_required": 1,
                 "receipt": null, "receipts": [], "decided_by": [], "reason": null, "counter_terms": null},
                {"request_id": "r2", "status": "denied", "message_hash": "sha256:aa", "action": "accept",
                 "expires_at": "2026-12-02T09:00:00Z", "created_at": "2026-12-01T10:00:00Z",
                 "approvals_given": 0, "approvals_required": 1, "receipts": [{}],
                 "decided_by": [{"name": "Grace", "email": "grace@fabrikam.example", "identity": "did:key:z6Mk",
                                 "decision": "deny", "at": "2026-12-01T10:05:00Z"}],
                 "reason": "<b>Too high</b>", "counter_terms": null, "a_member_added_later": 1}
            ]
        });
        let requests = read(&serde_json::to_vec(&doc).unwrap(), "oanp:s").unwrap();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].state(), Some(RequestState::Expired));
        assert_eq!(requests[0].amount.as_deref(), Some("419.00 USD"));
        let denied = &requests[1];
        assert_eq!(denied.state(), Some(RequestState::Denied));
        assert_eq!(denied.decided_by[0].email, "grace@fabrikam.example");
        assert_eq!(denied.decided_by[0].decision, "deny");
        assert_eq!(
            denied.reason.as_deref(),
            Some("<b>Too high</b>"),
            "as written"
        );
    }

    #[test]
    fn each_approving_receipt_names_its_person_role_and_whom_a_stand_in_made_it_for() {
        let body = json!({
            "request_id": "r1", "message_hash": "sha256:aa", "status": "approved",
            "receipts": [
                {"approver": {"identity": "did:key:z6Mk1", "role": "buyer"}},
                {"approver": {"identity": "did:key:z6Mk2", "role": "finance",
                              "on_behalf_of": {"person": "fay@fabrikam.example", "delegation": "urn:countersign:delegation:d"}}},
                {"approver": {"identity": "did:key:z6Mk3", "role": "legal"}}
            ],
            "decided_by": [
                {"name": "Ann", "email": "ann@fabrikam.example", "decision": "approve", "at": "2026-12-01T10:00:00Z"},
                {"name": "Grace", "email": "grace@fabrikam.example", "decision": "approve", "at": "2026-12-01T11:00:00Z"},
                {"name": "Lee", "email": "lee@fabrikam.example", "decision": "deny", "at": "2026-12-01T12:00:00Z"}
            ]
        })
        .to_string();
        let got = approvals("sha256:aa", &body);
        let read: Vec<(&str, Option<&str>, Option<&str>)> = got
            .iter()
            .map(|a| {
                (
                    a.approved_by.as_str(),
                    a.role.as_deref(),
                    a.for_person.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                ("ann@fabrikam.example", Some("buyer"), None),
                (
                    "grace@fabrikam.example",
                    Some("finance"),
                    Some("fay@fabrikam.example")
                ),
            ],
            "a deny is no approval"
        );
        assert_eq!(got[1].at, "2026-12-01T11:00:00Z");
        assert!(approvals("sha256:aa", "not json").is_empty());
    }

    #[test]
    fn a_log_without_requests_has_none_and_unreadable_requests_are_refused() {
        assert!(read(br#"{"events": []}"#, "x").unwrap().is_empty());
        let err = read(br#"{"requests": [{"request_id": 7}]}"#, "concordia:ses_1").unwrap_err();
        assert!(err.to_string().contains("session concordia:ses_1"), "{err}");
        let unknown: HostRequest = serde_json::from_value(json!({
            "request_id": "r", "message_hash": "h", "status": "reconsidered"
        }))
        .unwrap();
        assert_eq!(unknown.state(), None, "an unknown word is no decision");
    }
}
