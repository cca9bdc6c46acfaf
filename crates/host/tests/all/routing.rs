//! ANP offers routed through the org's policy of authority
//! (docs/authority.md), over real HTTP on the suite's store: the rule that
//! fired and why in the summary, step by step, each approval recorded with
//! its step and role, refusals naming the step and the roles it waits on,
//! a decline deciding at any step, and a request keeping the version it
//! was routed under when a new one is loaded.

use serde_json::{json, Value};

use crate::common::{self, offer, roomy_limits, Party, TestHost, FAR_FUTURE};

const THREE_TIER: &str = include_str!("../../../../docs/examples/authority-three-tier.toml");

/// The worked example's people, enrolled.
pub(crate) struct Fabrikam {
    pub t: TestHost,
    pub org: String,
    pub vendor: Party,
    pub ann: Party,
    pub bob: Party,
    pub fay: Party,
    pub carol: Party,
}

pub(crate) async fn fabrikam() -> Fabrikam {
    let t = common::start(roomy_limits()).await;
    let org = t.host().create_org("Fabrikam").await.unwrap().org_handle;
    let ann = t.enroll(&org, "Ann", "ann@fabrikam.example").await;
    let bob = t.enroll(&org, "Bob", "Bob@Fabrikam.example").await;
    let fay = t.enroll(&org, "Fay", "fay@fabrikam.example").await;
    let carol = t.enroll(&org, "Carol", "carol@fabrikam.example").await;
    t.host()
        .load_authority(&org, THREE_TIER, "Ivy Admin")
        .await
        .unwrap();
    let vendor = t.register("Contoso").await;
    t.host().verify_agent(&vendor.id).await.unwrap();
    Fabrikam {
        t,
        org,
        vendor,
        ann,
        bob,
        fay,
        carol,
    }
}

impl Fabrikam {
    /// Opens a session and makes `payload` its offer; answers the session
    /// and the offer's pending decision as the summary shows it to `who`.
    pub(crate) async fn offered(&self, payload: Value, who: &Party) -> (String, Value) {
        let session = self.t.open_org(&self.vendor, &self.org).await;
        let (s, r) = self
            .t
            .submit(&self.vendor, &session, "offer", payload)
            .await;
        assert_eq!(s, 200, "{r}");
        let pending = self.pending(&session, who).await;
        (session, pending)
    }

    /// The vendor's open offer in `session`, as `who` sees it.
    pub(crate) async fn pending(&self, session: &str, who: &Party) -> Value {
        self.pending_where(session, who, |p| p["seq"] != 0).await
    }

    /// The first open pending decision in `session` that `which` picks, as
    /// `who` sees it (`Null` when none).
    async fn pending_where(
        &self,
        session: &str,
        who: &Party,
        which: impl Fn(&Value) -> bool,
    ) -> Value {
        let summary = self.t.summary(who).await;
        summary["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == session)
            .unwrap()["pending"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| which(p))
            .cloned()
            .unwrap_or(Value::Null)
    }

    pub(crate) async fn approve(&self, who: &Party, session: &str, hash: &str) -> (u16, Value) {
        let body = json!({
            "decision_id": uuid::Uuid::new_v4(),
            "action": "approve",
            "in_response_to": hash,
            "approval": who.approval(hash, &self.t.now()),
        });
        self.t.decide(who, session, body).await
    }
}

pub(crate) fn hash_of(pending: &Value) -> String {
    pending["event_hash"].as_str().unwrap().to_owned()
}

pub(crate) fn usd_offer(total: u64) -> Value {
    // 500 seats: the unit price is a 500th of the total.
    offer(total / 500, FAR_FUTURE)
}

#[tokio::test]
async fn an_offer_moves_along_its_chain_one_step_at_a_time_each_approval_with_its_role() {
    let f = fabrikam().await;
    let (session, p) = f.offered(usd_offer(50_000), &f.fay).await;
    let route = &p["route"];
    assert_eq!(route["reason"], "Above 10,000 USD: rule 2", "{p}");
    assert_eq!(route["rule"], 2);
    assert_eq!(route["policy_version"], 1);
    assert_eq!(route["threshold"], "10000 USD");
    assert_eq!(route["current_step"], 1);
    assert_eq!(p["approvals_required"], 2);
    let roles: Vec<&str> = route["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["parts"][0]["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["buyer", "finance"]);
    assert_eq!(route["steps"][1]["respond_within_minutes"], 480);
    assert_eq!(route["steps"][1]["escalate_to"], "cfo");
    // Fay holds finance: step 1 is not hers yet.
    assert_eq!(route["you_may_act"], false);
    assert_eq!(
        route["steps"][0]["parts"][0]["may_act"],
        json!(["ann@fabrikam.example", "bob@fabrikam.example"])
    );
    let hash = hash_of(&p);

    // Finance first: refused, naming the step and the role it waits on.
    let (s, r) = f.approve(&f.fay, &session, &hash).await;
    assert_eq!(
        (s, r["error"]["code"].as_str()),
        (409, Some("policy")),
        "{r}"
    );
    assert_eq!(
        r["error"]["message"],
        "Step 1 waits on buyer; you hold none of those roles."
    );
    // The CFO holds no role on this chain at all.
    let (s, _) = f.approve(&f.carol, &session, &hash).await;
    assert_eq!(s, 409);

    // Ann, a buyer: step 1 met, awaiting finance.
    let (s, r) = f.approve(&f.ann, &session, &hash).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["outcome"], "awaiting_approvals");
    assert_eq!(
        r["detail"],
        "Approved at step 1 as buyer; step 2 waits on finance (1 more)."
    );
    let p = f.pending(&session, &f.fay).await;
    assert_eq!(p["route"]["current_step"], 2);
    assert_eq!(p["route"]["you_may_act"], true);
    assert_eq!(
        p["route"]["steps"][0]["parts"][0]["approved_by"],
        json!(["ann@fabrikam.example"])
    );
    assert_eq!(p["approvals"][0]["step"], 1);
    assert_eq!(p["approvals"][0]["role"], "buyer");

    // Bob, the other buyer, cannot approve step 2 (it waits on finance),
    // and Ann cannot count twice.
    let (s, r) = f.approve(&f.bob, &session, &hash).await;
    assert_eq!(s, 409);
    assert_eq!(
        r["error"]["message"],
        "Step 2 waits on finance; you hold none of those roles."
    );
    let (s, _) = f.approve(&f.ann, &session, &hash).await;
    assert_eq!(s, 409);

    // Fay, finance: the chain is complete and the offer accepted, the
    // accept carrying both signed approvals in order.
    let (s, r) = f.approve(&f.fay, &session, &hash).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["outcome"], "appended", "{r}");
    let accept = r["log"]["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(accept["kind"], "accept");
    assert_eq!(
        accept["payload"]["approval"]["approved_by"],
        "ann@fabrikam.example"
    );
    assert_eq!(
        accept["payload"]["approvals"][0]["approved_by"],
        "fay@fabrikam.example"
    );
    let row =
        f.t.sql_row(
            "SELECT step, role FROM approvals WHERE session_id = $1 ORDER BY ordinal LIMIT 1",
            &[&session],
        )
        .await;
    assert_eq!(
        row,
        vec![
            common::SqlValue::Int(1),
            common::SqlValue::Text("buyer".into())
        ]
    );
    f.t.running.shutdown().await;
}

#[tokio::test]
async fn amounts_pick_their_band_and_an_unnamed_currency_its_fallback() {
    let f = fabrikam().await;
    let (_, small) = f.offered(usd_offer(10_000), &f.ann).await;
    assert_eq!(small["route"]["reason"], "Up to 10,000 USD: rule 1");
    assert_eq!(small["approvals_required"], 1);
    let (_, large) = f.offered(usd_offer(250_000), &f.ann).await;
    assert_eq!(large["route"]["reason"], "Above 100,000 USD: rule 3");
    assert_eq!(large["approvals_required"], 3);
    let mut eur = usd_offer(5_000);
    eur["currency"] = json!("EUR");
    eur["line_items"][0]["currency"] = json!("EUR");
    let (session, euros) = f.offered(eur, &f.ann).await;
    assert_eq!(
        euros["route"]["reason"],
        "EUR is named by no rule: fallback (amounts in other currencies are never converted: finance, then the CFO, decide)"
    );
    assert!(euros["route"].get("rule").is_none());
    // A one-buyer offer: Bob's approval alone accepts it (his email
    // enrolled in another case is the same person).
    let (small_session, small) = f.offered(usd_offer(5_000), &f.bob).await;
    assert_eq!(small["route"]["you_may_act"], true);
    let (s, r) = f.approve(&f.bob, &small_session, &hash_of(&small)).await;
    assert_eq!((s, r["outcome"].as_str()), (200, Some("appended")), "{r}");
    // The euro offer waits on finance first: Ann, a buyer, may not.
    let (s, r) = f.approve(&f.ann, &session, &hash_of(&euros)).await;
    assert_eq!(s, 409, "{r}");
    f.t.running.shutdown().await;
}

#[tokio::test]
async fn a_decline_at_any_step_decides_and_only_a_holder_of_the_step_may_send_it() {
    let f = fabrikam().await;
    let (session, p) = f.offered(usd_offer(50_000), &f.ann).await;
    let hash = hash_of(&p);
    let (s, _) = f.approve(&f.ann, &session, &hash).await;
    assert_eq!(s, 200);
    // Bob (buyer) may not decline at step 2: it waits on finance.
    let body = json!({ "decision_id": uuid::Uuid::new_v4(), "action": "decline", "in_response_to": hash, "reason": "Over budget." });
    let (s, r) = f.t.decide(&f.bob, &session, body).await;
    assert_eq!(s, 409, "{r}");
    assert_eq!(
        r["error"]["message"],
        "Step 2 waits on finance; you hold none of those roles."
    );
    // Fay (finance) declines: the offer is declined, Ann's approval kept.
    let body = json!({ "decision_id": uuid::Uuid::new_v4(), "action": "decline", "in_response_to": hash, "reason": "Over budget." });
    let (s, r) = f.t.decide(&f.fay, &session, body).await;
    assert_eq!(s, 200, "{r}");
    let last = r["log"]["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["kind"], "decline");
    let kept =
        f.t.sql_row(
            "SELECT COUNT(*) FROM approvals WHERE session_id = $1",
            &[&session],
        )
        .await;
    assert_eq!(kept, vec![common::SqlValue::Int(1)]);
    f.t.running.shutdown().await;
}

#[tokio::test]
async fn a_request_keeps_the_version_it_was_routed_under_when_a_new_one_is_loaded() {
    let f = fabrikam().await;
    let (session, p) = f.offered(usd_offer(50_000), &f.ann).await;
    assert_eq!(p["route"]["policy_version"], 1);
    // Version 2 makes Ann finance's only holder and drops the buyer step.
    let v2 = THREE_TIER
        .replace(
            "finance = [\"fay@fabrikam.example\", \"frank@fabrikam.example\"]",
            "finance = [\"ann@fabrikam.example\"]",
        )
        .replace(
            "[[rule.step]]\nrole = \"buyer\"\n[[rule.step]]\nrole = \"finance\"\nrespond_within",
            "[[rule.step]]\nrole = \"finance\"\nrespond_within",
        );
    assert_ne!(v2, THREE_TIER);
    let loaded =
        f.t.host()
            .load_authority(&f.org, &v2, "Ivy Admin")
            .await
            .unwrap();
    assert_eq!(loaded.version, 2);
    // The open offer still waits on a buyer, then Fay's finance.
    let p = f.pending(&session, &f.ann).await;
    assert_eq!(p["route"]["policy_version"], 1);
    assert_eq!(p["route"]["steps"].as_array().unwrap().len(), 2);
    let hash = hash_of(&p);
    let (s, r) = f.approve(&f.ann, &session, &hash).await;
    assert_eq!(
        (s, r["outcome"].as_str()),
        (200, Some("awaiting_approvals")),
        "{r}"
    );
    let (s, r) = f.approve(&f.fay, &session, &hash).await;
    assert_eq!((s, r["outcome"].as_str()), (200, Some("appended")), "{r}");
    // A new offer is routed under version 2: Ann alone, as finance.
    let (session2, p2) = f.offered(usd_offer(50_000), &f.ann).await;
    assert_eq!(p2["route"]["policy_version"], 2);
    let (s, r) = f.approve(&f.ann, &session2, &hash_of(&p2)).await;
    assert_eq!((s, r["outcome"].as_str()), (200, Some("appended")), "{r}");
    f.t.running.shutdown().await;
}

#[tokio::test]
async fn an_org_without_a_policy_keeps_its_threshold_and_shows_it_as_its_route() {
    let t = common::start(roomy_limits()).await;
    let org = t.host().create_org("Tailspin").await.unwrap().org_handle;
    let policy = r#"{ "max_rounds": 0, "concession_per_round": "0", "skus": {},
        "approval": { "above_total": "250000", "approvers_required": 2 },
        "may_discuss": ["pricing"] }"#;
    t.host().load_policy(&org, policy).await.unwrap();
    let ada = t.enroll(&org, "Ada", "ada@tailspin.example").await;
    let vendor = t.register("Contoso").await;
    t.host().verify_agent(&vendor.id).await.unwrap();
    let session = t.open_org(&vendor, &org).await;
    // The old policy: above 250,000, two approvers; this offer is 600,000.
    t.submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    let summary = t.summary(&ada).await;
    let p = summary["sessions"][0]["pending"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["seq"] != 0)
        .unwrap()
        .clone();
    assert_eq!(p["approvals_required"], 2);
    assert!(p["route"].get("policy_version").is_none(), "{p}");
    assert_eq!(
        p["route"]["reason"],
        "Above 250000 (legacy approval.above_total): rule 3"
    );
    assert_eq!(p["route"]["steps"][0]["parts"][0]["role"], "approver");
    assert_eq!(p["route"]["steps"][0]["parts"][0]["required"], 2);
    let hash = p["event_hash"].as_str().unwrap().to_owned();
    let body = json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": hash, "approval": ada.approval(&hash, &t.now()) });
    let (_, r) = t.decide(&ada, &session, body).await;
    assert_eq!(
        r["detail"],
        "Approval 1 of 2 recorded; 1 more distinct approver(s) needed."
    );
    t.running.shutdown().await;
}

#[tokio::test]
async fn sending_the_buyer_agents_draft_is_a_counter_only_a_holder_of_the_current_step_may_send() {
    let f = fabrikam().await;
    // The buyer agent drafts a counter at 90 a seat for an offer at 100.
    let policy = r#"{ "max_rounds": 2, "concession_per_round": "0.5",
        "skus": { "CRM-ENT": { "target_unit_price": "90", "walk_away_unit_price": "95" } },
        "approval": { "above_total": "1000000", "approvers_required": 1 },
        "may_discuss": ["pricing"] }"#;
    f.t.host().load_policy(&f.org, policy).await.unwrap();
    let (session, _) = f.offered(usd_offer(50_000), &f.ann).await;
    let draft = f.pending_where(&session, &f.fay, |p| p["seq"] == 0).await;
    assert!(draft.is_object(), "the buyer agent's draft");
    assert!(
        draft.get("route").is_none(),
        "a draft carries no route of its own"
    );
    // Sending a draft is an approve of its reference, with no attestation.
    let send = || json!({ "decision_id": uuid::Uuid::new_v4(), "action": "approve", "in_response_to": draft["event_hash"] });
    // Fay (finance) may not send it while step 1 waits on a buyer.
    let (s, r) = f.t.decide(&f.fay, &session, send()).await;
    assert_eq!(s, 409, "{r}");
    assert_eq!(
        r["error"]["message"],
        "Step 1 waits on buyer; you hold none of those roles."
    );
    // Ann (buyer) may: the counter-offer goes to the vendor.
    let (s, r) = f.t.decide(&f.ann, &session, send()).await;
    assert_eq!(s, 200, "{r}");
    let last = r["log"]["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["kind"], "counter_offer");
    assert_eq!(last["payload"]["line_items"][0]["unit_price"], 90);
    f.t.running.shutdown().await;
}

#[tokio::test]
async fn a_step_past_its_response_time_is_offered_to_its_escalation_role_and_not_a_second_before() {
    let f = fabrikam().await;
    let (session, p) = f.offered(usd_offer(50_000), &f.carol).await;
    let hash = hash_of(&p);
    let (s, r) = f.approve(&f.ann, &session, &hash).await;
    assert_eq!(
        (s, r["outcome"].as_str()),
        (200, Some("awaiting_approvals")),
        "{r}"
    );
    // Step 2 (finance, 8 hours, then the CFO) opened with Ann's approval.
    let p = f.pending(&session, &f.carol).await;
    let step = &p["route"]["steps"][1];
    let due = anp::api::parse_timestamp(step["due_at"].as_str().expect("due_at")).unwrap();
    let opened = anp::api::parse_timestamp(p["approvals"][0]["at"].as_str().unwrap()).unwrap();
    assert_eq!(due.unix_timestamp() - opened.unix_timestamp(), 8 * 3600);
    assert_eq!(step["escalated"], Value::Null, "not yet: {step}");
    assert_eq!(p["route"]["you_may_act"], false);
    let (s, r) = f.approve(&f.carol, &session, &hash).await;
    assert_eq!(s, 409, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Step 2 waits on finance"),
        "{r}"
    );

    // One second before it is due: still finance's alone.
    let clock = f.t.host().clock();
    let left = due - anp::api::parse_timestamp(&f.t.now()).unwrap();
    clock.advance((left - time::Duration::seconds(1)).try_into().unwrap());
    let p = f.pending(&session, &f.carol).await;
    assert_eq!(p["route"]["you_may_act"], false, "{p}");
    // Due: offered to the CFO too (finance still may), and the CFO's
    // approval, as cfo, accepts the offer.
    clock.advance(std::time::Duration::from_secs(2));
    let p = f.pending(&session, &f.carol).await;
    let route = &p["route"];
    assert_eq!(route["steps"][1]["escalated"], true, "{route}");
    assert_eq!(route["you_may_act"], true);
    assert_eq!(route["your_role"], "cfo");
    assert_eq!(
        route["steps"][1]["parts"][0]["may_act"],
        json!(["fay@fabrikam.example", "carol@fabrikam.example"])
    );
    let (s, r) = f.approve(&f.carol, &session, &hash).await;
    assert_eq!((s, r["outcome"].as_str()), (200, Some("appended")), "{r}");
    let (recorded, _) = (
        f.t.host()
            .store()
            .negotiations()
            .approvals(&session, &hash)
            .await
            .unwrap(),
        (),
    );
    let roles: Vec<(Option<u32>, Option<String>)> =
        recorded.iter().map(|a| (a.step, a.role.clone())).collect();
    assert_eq!(
        roles,
        [
            (Some(1), Some("buyer".into())),
            (Some(2), Some("cfo".into()))
        ]
    );
    f.t.running.shutdown().await;
}
