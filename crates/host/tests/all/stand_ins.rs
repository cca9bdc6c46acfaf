//! Stand-ins (docs/authority.md, "Stand-ins") over real HTTP on the suite's
//! store: a delegation signed by the delegator, its days read in the
//! delegator's zone (two zones, each edge to the second under the host's
//! clock), honoured only inside them, revocable by either side; an ANP
//! approval by a stand-in recorded with whom it was for; a Concordia
//! receipt by a stand-in naming the holder and the delegation under its
//! signature, which `crates/concordia`'s verifier and the reference SDK
//! both accept.

use anp::keys;
use concordia::approval_receipt::receipt::verify_receipt;
use countersign_host_api::approver::{DecisionOutcome, DelegationState};
use countersign_host_api::signing;
use serde_json::{json, Value};
use time::{Date, Duration, OffsetDateTime};

use crate::common::{authority_of, Party, TestHost};
use crate::gate_routing::{client, desk, sdk_verify};
use crate::routing::{fabrikam, hash_of, usd_offer};

/// `from` delegates `roles` to `to` for `from_date..=to_date` in `zone`,
/// signed now by the host's clock; the answer's status and body.
#[allow(clippy::too_many_arguments)]
async fn delegate(
    t: &TestHost,
    from: &Party,
    id: &str,
    to: &str,
    roles: &[&str],
    from_date: &str,
    to_date: &str,
    zone: &str,
) -> (u16, Value) {
    let roles: Vec<String> = roles.iter().map(|r| (*r).to_owned()).collect();
    let at = t.now();
    let statement = signing::delegation_statement(
        &authority_of(&t.running.base_url()),
        id,
        &from.id,
        to,
        &roles,
        from_date,
        to_date,
        zone,
        &at,
    );
    let body = json!({
        "delegation_id": id,
        "to": to,
        "roles": roles,
        "from_date": from_date,
        "to_date": to_date,
        "zone": zone,
        "at": at,
        "signature": keys::sign_b64(&from.key, statement.as_bytes()),
    });
    let (s, b) = t
        .signed(from, "POST", "/api/console/v1/delegations", &body)
        .await;
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

async fn list(t: &TestHost, who: &Party) -> Value {
    let (s, b) = t
        .signed(who, "GET", "/api/console/v1/delegations", &Value::Null)
        .await;
    assert_eq!(s, 200, "{}", String::from_utf8_lossy(&b));
    serde_json::from_slice(&b).unwrap()
}

async fn revoke(t: &TestHost, who: &Party, id: &str) -> (u16, Value) {
    let (s, b) = t
        .signed(
            who,
            "POST",
            &format!("/api/console/v1/delegations/{id}/revoke"),
            &json!({}),
        )
        .await;
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

/// The state of delegation `id` in a list.
fn state_of(list: &Value, id: &str) -> String {
    list.as_array()
        .unwrap()
        .iter()
        .find(|d| d["delegation_id"] == id)
        .map(|d| d["state"].as_str().unwrap().to_owned())
        .unwrap_or_default()
}

fn host_now(t: &TestHost) -> OffsetDateTime {
    anp::api::parse_timestamp(&t.now()).unwrap()
}

fn day(d: Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

fn at(text: &Value) -> OffsetDateTime {
    anp::api::parse_timestamp(text.as_str().expect("a time")).unwrap()
}

/// Moves the host's clock to `moment` (which is after its now).
fn move_to(t: &TestHost, moment: OffsetDateTime) {
    let by = moment - host_now(t);
    t.host().clock().advance(by.try_into().expect("forward"));
}

#[tokio::test]
async fn a_stand_in_acts_only_inside_its_days_in_the_delegators_zone_and_either_side_may_revoke_it()
{
    let f = fabrikam().await;
    let grace = f.t.enroll(&f.org, "Grace", "grace@fabrikam.example").await;
    let today = host_now(&f.t).date();
    let (first, last) = (
        day(today + Duration::days(2)),
        day(today + Duration::days(3)),
    );

    // In Tokyo (UTC+9, no summer time) the days run from 15:00 UTC the day
    // before; in New York (UTC-5 in winter) from 05:00 UTC.
    let (s, tokyo) = delegate(
        &f.t,
        &f.fay,
        "d-tokyo",
        "grace@fabrikam.example",
        &["finance"],
        &first,
        &last,
        "Asia/Tokyo",
    )
    .await;
    assert_eq!(s, 201, "{tokyo}");
    let midnight = |d: Date, offset_h: i64| d.midnight().assume_utc() - Duration::hours(offset_h);
    assert_eq!(
        at(&tokyo["starts_at"]),
        midnight(today + Duration::days(2), 9)
    );
    assert_eq!(
        at(&tokyo["ends_at"]),
        midnight(today + Duration::days(4), 9)
    );
    assert_eq!(tokyo["state"], "scheduled");
    assert_eq!(tokyo["from_name"], "Fay");
    assert_eq!(tokyo["to_name"], "Grace");
    let (s, ny) = delegate(
        &f.t,
        &f.fay,
        "d-ny",
        "grace@fabrikam.example",
        &["finance"],
        &first,
        &last,
        "America/New_York",
    )
    .await;
    assert_eq!(s, 201, "{ny}");
    assert_eq!(
        at(&ny["starts_at"]),
        midnight(today + Duration::days(2), -5)
    );
    // The same delegation sent again is answered the same; another under
    // its id is refused, and nothing changes.
    let (s, again) = delegate(
        &f.t,
        &f.fay,
        "d-tokyo",
        "grace@fabrikam.example",
        &["finance"],
        &first,
        &last,
        "Asia/Tokyo",
    )
    .await;
    assert_eq!(
        (s, &again["starts_at"]),
        (200, &tokyo["starts_at"]),
        "{again}"
    );
    let (s, other) = delegate(
        &f.t,
        &f.fay,
        "d-tokyo",
        "grace@fabrikam.example",
        &["finance"],
        &first,
        &first,
        "Asia/Tokyo",
    )
    .await;
    assert_eq!(
        (s, other["error"]["code"].as_str()),
        (409, Some("request_conflict")),
        "{other}"
    );
    // A role Fay does not hold, and a stand-in who is no approver here.
    let (s, bad) = delegate(
        &f.t,
        &f.fay,
        "d-x",
        "grace@fabrikam.example",
        &["cfo"],
        &first,
        &last,
        "Asia/Tokyo",
    )
    .await;
    assert_eq!(s, 400, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("roles[0]: you do not hold \"cfo\""),
        "{bad}"
    );
    let (s, bad) = delegate(
        &f.t,
        &f.fay,
        "d-y",
        "mallory@elsewhere.example",
        &["finance"],
        &first,
        &last,
        "Asia/Tokyo",
    )
    .await;
    assert_eq!(s, 400, "{bad}");
    // A statement signed with other values than those sent.
    let mut forged_to =
        delegate_body_signed_for(&f.t, &f.fay, "d-z", "grace@fabrikam.example", &first, &last);
    forged_to["to_date"] = Value::from(day(today + Duration::days(30)));
    let (s, b) =
        f.t.signed(&f.fay, "POST", "/api/console/v1/delegations", &forged_to)
            .await;
    let b: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (400, Some("bad_signature")),
        "{b}"
    );

    // Either side sees it; only they may revoke it. Grace revokes New York's.
    assert_eq!(
        list(&f.t, &f.fay).await["given"].as_array().unwrap().len(),
        2
    );
    let graces = list(&f.t, &grace).await;
    assert_eq!(graces["received"].as_array().unwrap().len(), 2);
    assert_eq!(graces["my_roles"], json!([]));
    let (s, r) = revoke(&f.t, &f.bob, "d-ny").await;
    assert_eq!(s, 404, "{r}");
    let (s, r) = revoke(&f.t, &grace, "d-ny").await;
    assert_eq!(
        (s, &r["state"], &r["revoked_by"]),
        (200, &json!("revoked"), &json!("grace@fabrikam.example")),
        "{r}"
    );
    let (s, again) = revoke(&f.t, &f.fay, "d-ny").await;
    assert_eq!(
        (s, &again["revoked_at"]),
        (200, &r["revoked_at"]),
        "{again}"
    );

    // A 50,000 USD offer: a buyer, then finance. Ann meets step 1.
    let (session, p) = f.offered(usd_offer(50_000), &grace).await;
    let hash = hash_of(&p);
    let (s, r) = f.approve(&f.ann, &session, &hash).await;
    assert_eq!(
        (s, r["outcome"].as_str()),
        (200, Some("awaiting_approvals")),
        "{r}"
    );
    // A second offer, for the delegation's last second.
    let (later, p2) = f.offered(usd_offer(60_000), &grace).await;
    let hash2 = hash_of(&p2);
    let (s, r) = f.approve(&f.bob, &later, &hash2).await;
    assert_eq!(s, 200, "{r}");

    // One second before the first Tokyo midnight: not Grace's.
    move_to(&f.t, at(&tokyo["starts_at"]) - Duration::seconds(1));
    let p = f.pending(&session, &grace).await;
    assert_eq!(p["route"]["you_may_act"], false, "{p}");
    let (s, r) = f.approve(&grace, &session, &hash).await;
    assert_eq!(s, 409, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Step 2 waits on finance"),
        "{r}"
    );
    // At it: Grace may act, for Fay, and is listed among who may.
    move_to(&f.t, at(&tokyo["starts_at"]));
    let p = f.pending(&session, &grace).await;
    assert_eq!(p["route"]["you_may_act"], true, "{p}");
    assert_eq!(p["route"]["your_role"], "finance");
    assert_eq!(
        p["route"]["your_stand_in"],
        json!({ "person": "fay@fabrikam.example", "delegation": "urn:countersign:delegation:d-tokyo" })
    );
    assert!(p["route"]["steps"][1]["parts"][0]["may_act"]
        .as_array()
        .unwrap()
        .contains(&json!("grace@fabrikam.example")));
    assert_eq!(
        state_of(&list(&f.t, &f.fay).await["given"], "d-tokyo"),
        "in_force"
    );
    let (s, r) = f.approve(&grace, &session, &hash).await;
    assert_eq!((s, r["outcome"].as_str()), (200, Some("appended")), "{r}");
    let recorded =
        f.t.host()
            .store()
            .negotiations()
            .approvals(&session, &hash)
            .await
            .unwrap();
    let by: Vec<(Option<String>, Option<String>)> = recorded
        .iter()
        .map(|a| (a.role.clone(), a.for_email.clone()))
        .collect();
    assert_eq!(
        by,
        [
            (Some("buyer".into()), None),
            (Some("finance".into()), Some("fay@fabrikam.example".into()))
        ]
    );
    // The host's record says it to any approver of the org: who, as what,
    // for whom, under which rule; and to no one else.
    let path = format!("/api/console/v1/sessions/{session}/approvals");
    let (s, b) = f.t.signed(&f.bob, "GET", &path, &Value::Null).await;
    assert_eq!(s, 200, "{}", String::from_utf8_lossy(&b));
    let record: Value = serde_json::from_slice(&b).unwrap();
    let steps: Vec<(Value, Value, Value, Value)> = record["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["approved_by"].clone(),
                a["step"].clone(),
                a["role"].clone(),
                a["for"].clone(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (
                json!("ann@fabrikam.example"),
                json!(1),
                json!("buyer"),
                Value::Null
            ),
            (
                json!("grace@fabrikam.example"),
                json!(2),
                json!("finance"),
                json!("fay@fabrikam.example")
            ),
        ]
    );
    assert_eq!(record["approvals"][1]["reason"], "Above 10,000 USD: rule 2");
    assert_eq!(record["approvals"][1]["policy_version"], 1);
    assert_eq!(record["approvals"][1]["event_hash"], hash.as_str());
    let other_org = f.t.host().create_org("Elsewhere").await.unwrap().org_handle;
    let stranger = f.t.enroll(&other_org, "Sam", "sam@elsewhere.example").await;
    let (s, _) = f.t.signed(&stranger, "GET", &path, &Value::Null).await;
    assert!(s == 401 || s == 404, "{s}");

    // The last second of the last day in Tokyo: still; at its end: no more.
    move_to(&f.t, at(&tokyo["ends_at"]) - Duration::seconds(1));
    assert_eq!(
        f.pending(&later, &grace).await["route"]["you_may_act"],
        true
    );
    move_to(&f.t, at(&tokyo["ends_at"]));
    assert_eq!(
        f.pending(&later, &grace).await["route"]["you_may_act"],
        false
    );
    let (s, r) = f.approve(&grace, &later, &hash2).await;
    assert_eq!(s, 409, "{r}");
    assert_eq!(
        state_of(&list(&f.t, &grace).await["received"], "d-tokyo"),
        "ended"
    );
    f.t.running.shutdown().await;
}

/// A delegation body by `from` to `to`, signed over exactly its values.
fn delegate_body_signed_for(
    t: &TestHost,
    from: &Party,
    id: &str,
    to: &str,
    first: &str,
    last: &str,
) -> Value {
    let roles = vec!["finance".to_owned()];
    let at = t.now();
    let statement = signing::delegation_statement(
        &authority_of(&t.running.base_url()),
        id,
        &from.id,
        to,
        &roles,
        first,
        last,
        "UTC",
        &at,
    );
    json!({
        "delegation_id": id, "to": to, "roles": roles, "from_date": first, "to_date": last,
        "zone": "UTC", "at": at, "signature": keys::sign_b64(&from.key, statement.as_bytes()),
    })
}

#[tokio::test]
async fn a_revoked_stand_in_acts_no_more() {
    let f = fabrikam().await;
    let grace = f.t.enroll(&f.org, "Grace", "grace@fabrikam.example").await;
    let today = day(host_now(&f.t).date());
    let (s, d) = delegate(
        &f.t,
        &f.fay,
        "d-now",
        "grace@fabrikam.example",
        &["finance"],
        &today,
        &today,
        "UTC",
    )
    .await;
    assert_eq!(s, 201, "{d}");
    let (session, p) = f.offered(usd_offer(50_000), &grace).await;
    let hash = hash_of(&p);
    let (s, _) = f.approve(&f.ann, &session, &hash).await;
    assert_eq!(s, 200);
    assert_eq!(
        f.pending(&session, &grace).await["route"]["you_may_act"],
        true
    );
    // Fay takes it back: Grace may no longer act, and says so.
    let (s, r) = revoke(&f.t, &f.fay, "d-now").await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(
        f.pending(&session, &grace).await["route"]["you_may_act"],
        false
    );
    let (s, r) = f.approve(&grace, &session, &hash).await;
    assert_eq!(s, 409, "{r}");
    f.t.running.shutdown().await;
}

#[tokio::test]
async fn a_stand_ins_concordia_receipt_names_whom_it_is_for_under_its_signature() {
    let d = desk().await;
    let grace = d.t.enroll(&d.org, "Grace", "grace@fabrikam.example").await;
    let today = day(OffsetDateTime::now_utc().date());
    // Fay lets Grace decide as finance today.
    let fay = client(&d.t, &d.fay);
    let delegation = fay
        .delegate(
            "d-gate",
            "Grace@Fabrikam.example",
            &["finance".into()],
            &today,
            &today,
            "UTC",
            OffsetDateTime::now_utc(),
        )
        .await
        .unwrap();
    assert_eq!(delegation.state, DelegationState::InForce);
    let talk = d.asked("ses_stand_in", "50000.00").await;
    let (pending, message) = d.pending(&d.bob, "ses_stand_in").await;
    let answer = d
        .approve(&d.bob, "ses_stand_in", &pending, &message)
        .await
        .unwrap();
    assert_eq!(answer.outcome, DecisionOutcome::AwaitingApprovals);

    let (mut pending, message) = d.pending(&grace, "ses_stand_in").await;
    let route = pending.route.clone().unwrap();
    let stand_in = route
        .your_stand_in
        .clone()
        .expect("Grace stands in for Fay");
    assert_eq!(stand_in.person, "fay@fabrikam.example");
    assert_eq!(stand_in.delegation, "urn:countersign:delegation:d-gate");
    // A receipt that does not say it is made for Fay is refused.
    pending.route.as_mut().unwrap().your_stand_in = None;
    let e = d
        .approve(&grace, "ses_stand_in", &pending, &message)
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("approver.on_behalf_of is absent"),
        "{e}"
    );
    pending.route = Some(route);
    let answer = d
        .approve(&grace, "ses_stand_in", &pending, &message)
        .await
        .unwrap();
    assert_eq!(
        answer.outcome,
        DecisionOutcome::Appended,
        "{}",
        answer.detail
    );
    assert!(
        answer
            .detail
            .contains("as finance for fay@fabrikam.example"),
        "{}",
        answer.detail
    );

    let status = d.t.request_status(&d.agent, &talk, "r1").await;
    assert_eq!(status["status"], "approved");
    assert!(
        status.get("approvals").is_none(),
        "the host's record is for approvers: {status}"
    );
    // The approvers' log carries the host's record of both approvals.
    let log = client(&d.t, &d.fay)
        .gate_log("concordia:ses_stand_in", None)
        .await
        .unwrap();
    let record = &log.requests[0].approvals;
    assert_eq!(record.len(), 2, "{record:?}");
    assert_eq!(
        (
            record[0].approved_by.as_str(),
            record[0].step,
            record[0].role.as_deref(),
            record[0].for_person.as_deref()
        ),
        ("bob@fabrikam.example", Some(1), Some("buyer"), None)
    );
    assert_eq!(
        (
            record[1].approved_by.as_str(),
            record[1].step,
            record[1].role.as_deref(),
            record[1].for_person.as_deref()
        ),
        (
            "grace@fabrikam.example",
            Some(2),
            Some("finance"),
            Some("fay@fabrikam.example")
        )
    );
    assert_eq!(
        record[1].reason.as_deref(),
        Some("Above 10,000 USD: rule 2")
    );
    assert_eq!(record[1].policy_version, Some(1));
    let receipt = &status["receipts"][1];
    assert_eq!(receipt["approver"]["role"], "finance");
    assert_eq!(
        receipt["approver"]["on_behalf_of"],
        json!({ "person": "fay@fabrikam.example", "delegation": "urn:countersign:delegation:d-gate" })
    );
    let report = verify_receipt(
        receipt,
        &talk.messages[2],
        None,
        OffsetDateTime::now_utc(),
        &[],
    );
    assert!(report.failures().next().is_none(), "{receipt}");
    let now = concordia::approval_receipt::datetime::format_utc(OffsetDateTime::now_utc());
    let sdk = sdk_verify(&json!({ "receipt": receipt, "offer": talk.messages[2], "now": now }));
    assert_eq!(sdk["valid"], true, "{sdk}");
    // Whom it was for is under the signature.
    let mut forged = receipt.clone();
    forged["approver"]["on_behalf_of"]["person"] = Value::from("carol@fabrikam.example");
    let report = verify_receipt(
        &forged,
        &talk.messages[2],
        None,
        OffsetDateTime::now_utc(),
        &[],
    );
    assert!(report.failures().next().is_some());
    d.t.running.shutdown().await;
}
