//! The approver role on ANEX conversations (docs/approver-api.md, "ANEX"):
//! their log, and the person's decision signed as an ApprovalReceipt over
//! the terms record (docs/anex-binding.md, "The terms record"): `approve`
//! proposes the ask as asked, `counter` narrower terms, `decline` refuses.

use anex::record::Party;
use anex::{AgentId, Id, ItemName, Promise, TermsRecord, Text};
use anp::keys::SigningKey;
use approval_receipt::receipt::{build_receipt, sign_receipt, Decision, OnBehalfOf, ReceiptDraft};
use countersign_host_api::anex::{
    AnexDecisionRequest, AnexDecisionResponse, AnexLog, AnexPending, AnexTerms, NO_AMOUNT,
};
use countersign_host_api::approver::{DecisionAction, CONSOLE_API_BASE};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::agent::to_body;
use crate::approver::new_decision_id;
use crate::error::ClientError;
use crate::http::{gate_segment, path_segment, Idempotent, Request};
use crate::{ApproverClient, Result};

/// An ApprovalReceipt over an ANEX terms record, signed by `key` at
/// `issued_at`: `scope.offer_hash` the record's hash and `scope.terms` the
/// record, [`NO_AMOUNT`] for amount and threshold, approving
/// `urn:anex:conversation:<id>`, expiring with the terms, and with `role`
/// as `approver.role` where the org's policy of authority routed the ask
/// (the role the host says the signer decides as). The one builder the
/// approver client and the console both sign with, so the host's check of
/// it has one counterpart.
pub fn sign_anex_receipt(
    decision: Decision,
    record: &TermsRecord,
    key: &SigningKey,
    issued_at: OffsetDateTime,
    role: Option<&str>,
    on_behalf_of: Option<approval_receipt::receipt::OnBehalfOf>,
) -> Result<Value> {
    let zero = || NO_AMOUNT.parse().map_err(bad);
    let draft = ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at,
        expires_at: record.valid_until,
        decision,
        offer_message: record.to_json(),
        amount: zero()?,
        threshold_crossed: zero()?,
        session_id: record.conversation_id.as_str().to_owned(),
        role: role.map(str::to_owned),
        on_behalf_of,
    };
    let mut receipt = build_receipt(&draft, &key.verifying_key()).map_err(bad)?;
    receipt["scope"]["terms"] = record.to_json();
    receipt["references"] = json!([{
        "type": "negotiation_session",
        "id": format!("urn:anex:conversation:{}", record.conversation_id.as_str()),
        "relationship": "approves",
    }]);
    sign_receipt(receipt, key).map_err(bad)
}

fn bad(detail: impl std::fmt::Display) -> ClientError {
    ClientError::Receipt(detail.to_string())
}

/// The terms record of `terms` decided now in answer to the pending ask:
/// the fields the host named, the lists sorted, in force for the policy's
/// days from `now`.
pub fn anex_record(
    pending: &AnexPending,
    terms: &AnexTerms,
    now: OffsetDateTime,
) -> Result<TermsRecord> {
    let mut access = terms
        .access
        .iter()
        .map(|a| ItemName::parse(a).map_err(|e| bad(format!("access item {a:?}: {e}"))))
        .collect::<Result<Vec<_>>>()?;
    access.sort();
    let mut promise = terms
        .promise
        .iter()
        .map(|p| Promise::parse(p).map_err(|e| bad(format!("promise {p:?}: {e}"))))
        .collect::<Result<Vec<_>>>()?;
    promise.sort();
    let text = |what: &str, s: &str| Text::parse(s).map_err(|e| bad(format!("{what}: {e}")));
    let agent = |what: &str, s: &str| AgentId::parse(s).map_err(|e| bad(format!("{what}: {e}")));
    let valid_until = (now + time::Duration::days(i64::from(pending.terms_valid_days)))
        .replace_nanosecond(0)
        .map_err(bad)?;
    Ok(TermsRecord {
        conversation_id: Id::parse(&pending.conversation_id).map_err(bad)?,
        answers: Id::parse(&pending.answers).map_err(bad)?,
        requester: Party {
            identity: agent("requester.identity", &pending.requester.identity)?,
            owner: text("requester.owner", &pending.requester.owner)?,
            relation: pending
                .requester
                .relation
                .as_deref()
                .map(|r| text("requester.relation", r))
                .transpose()?,
        },
        responder: agent("responder", &pending.responder)?,
        request_type: text("request_type", &pending.request_type)?,
        access,
        promise,
        valid_until,
    })
}

/// The ask as asked, without marks: what `approve` and `decline` decide.
pub fn as_asked(pending: &AnexPending) -> AnexTerms {
    AnexTerms {
        access: pending.items.iter().map(|i| i.item.clone()).collect(),
        promise: pending.promise.clone(),
    }
}

impl ApproverClient {
    /// An ANEX conversation's messages after position `after` (`id` is the
    /// summary's `anex:<context_id>`).
    pub async fn anex_log(&self, id: &str, after: Option<u64>) -> Result<AnexLog> {
        gate_segment("session id", id)?;
        let mut request = Request::get(format!("{CONSOLE_API_BASE}/sessions/{id}/log"));
        if let Some(after) = after {
            request.query = Some(("after", after.to_string()));
        }
        self.http
            .call(request, Some(&self.identity), Idempotent::Yes)
            .await
    }

    /// Submits a decision on an ANEX ask (`id` is `anex:<context_id>`).
    pub async fn decide_anex(
        &self,
        id: &str,
        request: &AnexDecisionRequest,
    ) -> Result<AnexDecisionResponse> {
        gate_segment("session id", id)?;
        path_segment("decision id", &request.decision_id)?;
        let body = to_body(request)?;
        self.http
            .call(
                Request::post(format!("{CONSOLE_API_BASE}/sessions/{id}/decisions"), &body),
                Some(&self.identity),
                Idempotent::Yes,
            )
            .await
    }

    /// An ApprovalReceipt over `record`, signed now by this approver's key
    /// as `role`, for the holder `on_behalf_of` names when standing in
    /// ([`sign_anex_receipt`]).
    pub fn anex_receipt(
        &self,
        decision: Decision,
        record: &TermsRecord,
        role: Option<&str>,
        on_behalf_of: Option<OnBehalfOf>,
    ) -> Result<Value> {
        sign_anex_receipt(
            decision,
            record,
            &self.identity.key,
            OffsetDateTime::now_utc(),
            role,
            on_behalf_of,
        )
    }

    fn anex_request(
        &self,
        action: DecisionAction,
        pending: &AnexPending,
        terms: &AnexTerms,
    ) -> Result<AnexDecisionRequest> {
        self.anex_request_as(action, pending, terms, None, None)
    }

    /// A decision on the pending ask, its receipt signed as `role`: the
    /// role the summary's `route.your_role` names where the org's policy of
    /// authority routed the ask (`None` under the old threshold), for the
    /// holder `on_behalf_of` names when the summary's `route.your_stand_in`
    /// says this approver stands in.
    pub fn anex_request_as(
        &self,
        action: DecisionAction,
        pending: &AnexPending,
        terms: &AnexTerms,
        role: Option<&str>,
        on_behalf_of: Option<OnBehalfOf>,
    ) -> Result<AnexDecisionRequest> {
        let record = anex_record(pending, terms, OffsetDateTime::now_utc())?;
        let decision = if action == DecisionAction::Decline {
            Decision::Deny
        } else {
            Decision::Approve
        };
        Ok(AnexDecisionRequest {
            decision_id: new_decision_id(),
            action,
            in_response_to: pending.answers.clone(),
            receipt: self.anex_receipt(decision, &record, role, on_behalf_of)?,
            reason: None,
            counter_terms: None,
        })
    }

    /// Proposes the ask as asked: an `approve` receipt over its record.
    pub fn approve_anex(&self, pending: &AnexPending) -> Result<AnexDecisionRequest> {
        self.anex_request(DecisionAction::Approve, pending, &as_asked(pending))
    }

    /// As [`ApproverClient::approve_anex`], the receipt signed as `role`
    /// (a step of the ask's chain of approvals).
    pub fn approve_anex_as(
        &self,
        pending: &AnexPending,
        role: Option<&str>,
    ) -> Result<AnexDecisionRequest> {
        self.anex_request_as(
            DecisionAction::Approve,
            pending,
            &as_asked(pending),
            role,
            None,
        )
    }

    /// Proposes narrower terms (optional items removed, promises added):
    /// an `approve` receipt over their record.
    pub fn counter_anex(
        &self,
        pending: &AnexPending,
        terms: AnexTerms,
    ) -> Result<AnexDecisionRequest> {
        let mut request = self.anex_request(DecisionAction::Counter, pending, &terms)?;
        request.counter_terms = Some(terms);
        Ok(request)
    }

    /// Refuses the ask with a reason: a `deny` receipt over its record.
    pub fn decline_anex(&self, pending: &AnexPending, reason: &str) -> Result<AnexDecisionRequest> {
        let mut request =
            self.anex_request(DecisionAction::Decline, pending, &as_asked(pending))?;
        request.reason = Some(reason.to_owned());
        Ok(request)
    }
}
