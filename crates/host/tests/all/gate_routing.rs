//! Concordia requests at the gate routed through the org's policy of
//! authority (docs/authority.md), over real HTTP on the suite's store, with
//! the Rust approver client signing the receipts: the chain in the summary,
//! each receipt naming the role it was signed as (checked by
//! `crates/concordia`'s verifier, as the agent and its counterparty check
//! it), a receipt with another role refused, and the agent's owner never
//! its request's only approval.

use concordia::approval_receipt::receipt::verify_receipt;
use countersign_client::{ApproverClient, GateDecisionInput};
use countersign_host_api::approver::{DecisionOutcome, PendingDecision};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::common::*;
use crate::gate_support::*;

const THREE_TIER: &str = include_str!("../../../../docs/examples/authority-three-tier.toml");

/// The reference SDK's `verify_approval_receipt` on `request`
/// (`crates/concordia/interop/verify_receipt.py`, in the .venv the suite's
/// interop tests use).
pub(crate) fn sdk_verify(request: &Value) -> Value {
    use std::io::Write;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../concordia/interop/verify_receipt.py");
    let mut child = std::process::Command::new(crate::gate_interop::python())
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the interop Python starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(request.to_string().as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("the script ends");
    assert!(
        out.status.success(),
        "verify_receipt.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the SDK's answer as JSON")
}

pub(crate) fn client(t: &TestHost, p: &Party) -> ApproverClient {
    ApproverClient::new(&t.running.base_url(), p.key.clone(), &p.id).unwrap()
}

pub(crate) struct Desk {
    pub t: TestHost,
    pub org: String,
    pub agent: Party,
    pub ann: Party,
    pub bob: Party,
    pub fay: Party,
}

/// Fabrikam with the three-tier policy, and its Concordia agent, whose
/// owner is Ann (a buyer).
pub(crate) async fn desk() -> Desk {
    let t = start(roomy_limits()).await;
    let org = t.host().create_org("Fabrikam").await.unwrap().org_handle;
    let ann = t.enroll(&org, "Ann", "ann@fabrikam.example").await;
    let bob = t.enroll(&org, "Bob", "bob@fabrikam.example").await;
    let fay = t.enroll(&org, "Fay", "fay@fabrikam.example").await;
    t.host()
        .load_authority(&org, THREE_TIER, "Ivy Admin")
        .await
        .unwrap();
    let code = countersign_host::admin::gate_enroll_code(
        t.host().store().as_ref(),
        &org,
        "Procurement Buyer",
        "concordia",
        Some("ann@fabrikam.example"),
        std::time::Duration::from_secs(3600),
        OffsetDateTime::now_utc(),
    )
    .await
    .unwrap()
    .code;
    let key = anp::keys::generate_signing_key();
    let (s, b) = t.gate_enroll(&code, &key, None).await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    let v: Value = serde_json::from_slice(&b).unwrap();
    let agent = Party {
        id: v["agent_id"].as_str().unwrap().to_owned(),
        key,
        email: String::new(),
    };
    Desk {
        t,
        org,
        agent,
        ann,
        bob,
        fay,
    }
}

impl Desk {
    /// A seller's offer at `price` USD and the agent's request `r1`.
    pub(crate) async fn asked(&self, session_id: &str, price: &str) -> Talk {
        let mut talk = Talk::opened(session_id);
        talk.say(SELLER, "negotiate.offer", Talk::offer(price, 3600));
        self.t.mirror(&self.agent, &talk).await;
        let (s, v) = self.t.ask(&self.agent, &talk, "r1", 2, None, 1800).await;
        assert_eq!(s, 201, "{v}");
        talk
    }

    /// The request as `who` sees it, and the awaited message.
    pub(crate) async fn pending(&self, who: &Party, session_id: &str) -> (PendingDecision, Value) {
        let c = client(&self.t, who);
        let id = format!("concordia:{session_id}");
        let summary = c.summary().await.unwrap();
        let pending = summary
            .sessions
            .iter()
            .find(|s| s.id == id)
            .unwrap()
            .pending[0]
            .clone();
        let log = c.gate_log(&id, None).await.unwrap();
        let message: Value =
            serde_json::from_str(log.messages[(pending.seq - 1) as usize].get()).unwrap();
        (pending, message)
    }

    /// `who` approves with the receipt its client builds from `pending`.
    pub(crate) async fn approve(
        &self,
        who: &Party,
        session_id: &str,
        pending: &PendingDecision,
        message: &Value,
    ) -> Result<countersign_host_api::approver::GateDecisionResponse, countersign_client::ClientError>
    {
        let c = client(&self.t, who);
        let input = GateDecisionInput {
            session_id,
            pending,
            offer_message: message,
        };
        let decision = c.approve_gate_request(&input).unwrap();
        c.decide_gate(&format!("concordia:{session_id}"), &decision)
            .await
    }
}

#[tokio::test]
async fn each_receipt_names_the_role_it_was_signed_as_and_the_chain_decides_who_signs() {
    let d = desk().await;
    let talk = d.asked("ses_tiers", "50000.00").await;
    let (pending, message) = d.pending(&d.fay, "ses_tiers").await;
    let route = pending
        .route
        .clone()
        .expect("a routed request carries its route");
    assert_eq!(route.reason, "Above 10,000 USD: rule 2");
    assert_eq!(route.policy_version, Some(1));
    assert_eq!(pending.threshold.as_deref(), Some("10000 USD"));
    assert_eq!(pending.approvals_required, 2);
    assert!(!route.you_may_act);

    // Finance first: refused, and nothing recorded.
    let e = d
        .approve(&d.fay, "ses_tiers", &pending, &message)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("policy"), "{e}");
    assert!(
        e.to_string()
            .contains("Step 1 waits on buyer; you hold none of those roles."),
        "{e}"
    );
    assert_eq!(d.t.count("gate_receipts").await, 0);

    // Ann, a buyer and the agent's owner: her approval is not the only one
    // the chain needs, so it counts, signed as buyer.
    let (pending, message) = d.pending(&d.ann, "ses_tiers").await;
    assert_eq!(
        pending.route.as_ref().unwrap().your_role.as_deref(),
        Some("buyer")
    );
    let answer = d
        .approve(&d.ann, "ses_tiers", &pending, &message)
        .await
        .unwrap();
    assert_eq!(answer.outcome, DecisionOutcome::AwaitingApprovals);
    assert_eq!(
        answer.detail,
        "Approved at step 1 as buyer; step 2 waits on finance (1 more)."
    );

    // A receipt that names no role (an old console) is refused at step 2.
    let (mut pending, message) = d.pending(&d.fay, "ses_tiers").await;
    assert_eq!(
        pending.route.as_ref().unwrap().your_role.as_deref(),
        Some("finance")
    );
    let routed = pending.route.take();
    let e = d
        .approve(&d.fay, "ses_tiers", &pending, &message)
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("approver.role is absent, but you decide at step 2 as finance"),
        "{e}"
    );
    pending.route = routed;
    let answer = d
        .approve(&d.fay, "ses_tiers", &pending, &message)
        .await
        .unwrap();
    assert_eq!(
        answer.outcome,
        DecisionOutcome::Appended,
        "{}",
        answer.detail
    );

    // What the agent reads: approved, two receipts, each signed with its
    // role and the threshold the amount crossed, verified as Concordia's
    // verifier checks them.
    let status = d.t.request_status(&d.agent, &talk, "r1").await;
    assert_eq!(status["status"], "approved");
    let receipts = status["receipts"].as_array().unwrap();
    let roles: Vec<&str> = receipts
        .iter()
        .map(|r| r["approver"]["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["buyer", "finance"]);
    for r in receipts {
        assert_eq!(r["scope"]["threshold_crossed"], "10000 USD");
        let report = verify_receipt(r, &talk.messages[2], None, OffsetDateTime::now_utc(), &[]);
        let failed: Vec<String> = report.failures().map(|f| f.detail.clone()).collect();
        assert!(failed.is_empty(), "{failed:?} {r}");
    }
    // The reference Concordia SDK accepts both, roles and all.
    let now = concordia::approval_receipt::datetime::format_utc(OffsetDateTime::now_utc());
    for r in receipts {
        let sdk = sdk_verify(&json!({ "receipt": r, "offer": talk.messages[2], "now": now }));
        assert_eq!(sdk["valid"], true, "{sdk}");
    }
    // The role is under the signature: changed, the receipt no longer verifies.
    let mut forged = receipts[1].clone();
    forged["approver"]["role"] = Value::from("cfo");
    let report = verify_receipt(
        &forged,
        &talk.messages[2],
        None,
        OffsetDateTime::now_utc(),
        &[],
    );
    assert!(report.failures().next().is_some());
    let _ = &d.bob;
    d.t.running.shutdown().await;
}

#[tokio::test]
async fn the_agents_owner_is_never_its_requests_only_approval() {
    let d = desk().await;
    let talk = d.asked("ses_small", "5000.00").await;
    let (pending, message) = d.pending(&d.ann, "ses_small").await;
    assert_eq!(
        pending.route.as_ref().unwrap().reason,
        "Up to 10,000 USD: rule 1"
    );
    // Ann owns the agent: the one buyer this rule needs must be someone else.
    assert!(!pending.route.as_ref().unwrap().you_may_act);
    let e = d
        .approve(&d.ann, "ses_small", &pending, &message)
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("You own the agent that made this request"),
        "{e}"
    );
    let (pending, message) = d.pending(&d.bob, "ses_small").await;
    assert_eq!(
        pending.route.as_ref().unwrap().steps[0].parts[0].may_act,
        ["bob@fabrikam.example"]
    );
    let answer = d
        .approve(&d.bob, "ses_small", &pending, &message)
        .await
        .unwrap();
    assert_eq!(
        answer.outcome,
        DecisionOutcome::Appended,
        "{}",
        answer.detail
    );
    let status = d.t.request_status(&d.agent, &talk, "r1").await;
    assert_eq!(status["receipts"][0]["approver"]["role"], "buyer");
    assert_eq!(status["receipts"][0]["scope"]["threshold_crossed"], "0 USD");
    d.t.running.shutdown().await;
}

/// Hardware goes to finance; everything else to a buyer.
const BY_CATEGORY: &str = r#"
[roles]
buyer = ["ann@fabrikam.example", "bob@fabrikam.example"]
finance = ["fay@fabrikam.example"]

[[rule]]
name = "Hardware"
category = ["hardware"]
[[rule.step]]
role = "finance"

[[rule]]
name = "The SKU RACK-42"
sku = ["RACK-42"]
[[rule.step]]
role = "finance"
[[rule.step]]
role = "buyer"

[unnamed_currency]
reason = "other currencies go to finance"
[[unnamed_currency.step]]
role = "finance"

[no_rule]
reason = "everything else: a buyer"
[[no_rule.step]]
role = "buyer"
"#;

#[tokio::test]
async fn a_concordia_offer_is_routed_by_the_category_and_sku_its_terms_name() {
    let d = desk().await;
    let org =
        d.t.host()
            .list_orgs()
            .await
            .unwrap()
            .into_iter()
            .find(|o| o.name == "Fabrikam")
            .unwrap()
            .org_handle;
    d.t.host()
        .load_authority(&org, BY_CATEGORY, "Ivy Admin")
        .await
        .unwrap();
    let reason = |session: &'static str, extra: Value| {
        let d = &d;
        async move {
            let mut talk = Talk::opened(session);
            let mut body = Talk::offer("60000", 3600);
            for (k, v) in extra.as_object().unwrap() {
                body["terms"][k] = v.clone();
            }
            talk.say(SELLER, "negotiate.offer", body);
            d.t.mirror(&d.agent, &talk).await;
            let (s, v) = d.t.ask(&d.agent, &talk, "r1", 2, None, 1800).await;
            assert_eq!(s, 201, "{v}");
            let (pending, _) = d.pending(&d.fay, session).await;
            pending.route.unwrap().reason
        }
    };
    assert_eq!(
        reason("s-cat-1", json!({"category": {"value": "hardware"}})).await,
        "Hardware: rule 1"
    );
    assert_eq!(
        reason(
            "s-cat-2",
            json!({"category": {"value": ["software", "hardware"]}})
        )
        .await,
        "Hardware: rule 1"
    );
    assert_eq!(
        reason("s-cat-3", json!({"sku": {"value": "RACK-42"}})).await,
        "The SKU RACK-42: rule 2"
    );
    // No rule names software (and none names USD in a band).
    assert_eq!(
        reason("s-cat-4", json!({"category": {"value": "software"}})).await,
        "USD is named by no rule: fallback (other currencies go to finance)"
    );
    d.t.running.shutdown().await;
}
