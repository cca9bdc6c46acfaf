//! Version 2 of the host's own request signing and enrollment proofs
//! (docs/approver-api.md, "Signed requests" and "Enrollment"), over real
//! HTTP: each test sends what an attacker would, a request signed for
//! something else, and sees it refused; and the transition: version 1
//! accepted while `accept_v1_signatures` is on, refused when it is off.

use crate::common::{self, *};

use anp::api;
use anp::keys::{self, SigningKey};
use countersign_host::HostConfig;
use countersign_host_api::signing::{self, EnrollRole, RequestV2};
use serde_json::{json, Value};

/// A host with the transition switch as given.
async fn host_accepting_v1(accept: bool) -> TestHost {
    start_with(HostConfig {
        limits: roomy_limits(),
        accept_v1_signatures: accept,
        ..HostConfig::default()
    })
    .await
}

/// Version 2 headers by `party` for exactly these parts.
fn v2(
    t: &TestHost,
    party: &Party,
    method: &str,
    authority: &str,
    path_and_query: &str,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    let request = RequestV2 {
        method,
        authority,
        path_and_query,
        body,
    };
    let nonce = uuid::Uuid::new_v4().to_string();
    let h = signing::sign_request_v2(&party.key, &party.id, &request, &t.now(), &nonce);
    h.pairs().iter().map(|(k, v)| (*k, v.to_string())).collect()
}

/// Version 1 (ANP/0.1's string: the path without query) by `party`.
fn v1(
    t: &TestHost,
    party: &Party,
    method: &str,
    path: &str,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    let nonce = uuid::Uuid::new_v4().to_string();
    let h = api::sign_request(&party.key, &party.id, method, path, body, &t.now(), &nonce);
    h.pairs().iter().map(|(k, v)| (*k, v.to_string())).collect()
}

fn own_authority(t: &TestHost) -> String {
    authority_of(&t.running.base_url())
}

/// An approver of the sandbox enrolled with `key` (version 2 proof).
async fn approver_with(t: &TestHost, key: &SigningKey, name: &str) -> Party {
    let email = format!("{}@fabrikam.example", name.to_lowercase());
    let code = t
        .host()
        .enroll_code(countersign_host::SANDBOX_HANDLE, name, &email)
        .await
        .unwrap()
        .code;
    let (s, b) = enroll_v2(t, &code, key, name, &email, EnrollRole::Approver, None).await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    let v: Value = serde_json::from_slice(&b).unwrap();
    Party {
        id: v["approver_id"].as_str().unwrap().to_owned(),
        key: key.clone(),
        email,
    }
}

/// `POST /api/console/v1/enroll` with a version 2 proof made for `role`
/// (and for `authority`, this host's by default).
async fn enroll_v2(
    t: &TestHost,
    code: &str,
    key: &SigningKey,
    name: &str,
    email: &str,
    role: EnrollRole,
    authority: Option<&str>,
) -> (u16, Vec<u8>) {
    let authority = authority.map_or_else(|| own_authority(t), str::to_owned);
    let proof = signing::sign_enroll_proof_v2(key, role, &authority, code);
    let body = json!({"code": code, "name": name, "email": email,
        "public_key": keys::public_key_b64(&key.verifying_key()), "proof": proof,
        "proof_version": 2, "authority": authority});
    t.raw(
        "POST",
        "/api/console/v1/enroll",
        &[],
        serde_json::to_vec(&body).unwrap(),
    )
    .await
}

/// `POST /api/gate/v1/enroll` with a version 2 proof made for `role` and `for_code`.
async fn gate_enroll_v2(
    t: &TestHost,
    code: &str,
    for_code: &str,
    key: &SigningKey,
    role: EnrollRole,
) -> (u16, Vec<u8>) {
    let authority = own_authority(t);
    let proof = signing::sign_enroll_proof_v2(key, role, &authority, for_code);
    let body = json!({"code": code, "name": "Procurement Buyer",
        "public_key": keys::public_key_b64(&key.verifying_key()), "proof": proof,
        "proof_version": 2, "authority": authority});
    t.raw(
        "POST",
        "/api/gate/v1/enroll",
        &[],
        serde_json::to_vec(&body).unwrap(),
    )
    .await
}

/// A sandbox session with an offer, and an approver who sees it.
async fn session_with_approver(t: &TestHost) -> (String, Party) {
    let vendor = t.register("Contoso").await;
    let (session, _) = t.open_sandbox(&vendor).await;
    let (s, _) = t
        .submit(&vendor, &session, "offer", offer(1200, FAR_FUTURE))
        .await;
    assert_eq!(s, 200);
    let ada = approver_with(t, &keys::generate_signing_key(), "Ada").await;
    (session, ada)
}

#[tokio::test]
async fn a_query_string_added_to_a_version_2_request_is_refused() {
    let t = host_accepting_v1(true).await;
    let (session, ada) = session_with_approver(&t).await;
    let path = format!("/api/console/v1/sessions/{session}/log");
    let with_query = format!("{path}?after=2");
    let own = own_authority(&t);

    // Signed with the query: the log after seq 2 only.
    let h = v2(&t, &ada, "GET", &own, &with_query, b"");
    let (s, b) = t.raw("GET", &with_query, &h, vec![]).await;
    assert_eq!(s, 200, "{}", String::from_utf8_lossy(&b));
    let doc: Value = serde_json::from_slice(&b).unwrap();
    assert!(doc["events"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["seq"].as_u64() > Some(2)));

    // Signed without it, sent with it: refused.
    let h = v2(&t, &ada, "GET", &own, &path, b"");
    let (s, b) = t.raw("GET", &with_query, &h, vec![]).await;
    assert_eq!(s, 401, "{}", String::from_utf8_lossy(&b));
    // Signed with one value, sent with another: refused.
    let h = v2(&t, &ada, "GET", &own, &format!("{path}?after=1"), b"");
    assert_eq!(t.raw("GET", &with_query, &h, vec![]).await.0, 401);

    // Version 1 never covered the query: still accepted in the transition,
    // which is what version 2 ends.
    let h = v1(&t, &ada, "GET", &path, b"");
    assert_eq!(t.raw("GET", &with_query, &h, vec![]).await.0, 200);
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_request_signed_by_one_approver_is_refused_under_another_id_with_the_same_key() {
    let t = host_accepting_v1(true).await;
    let key = keys::generate_signing_key();
    let x = approver_with(&t, &key, "Xavier").await;
    let y = approver_with(&t, &key, "Yvonne").await;
    let path = "/api/console/v1/summary";
    let own = own_authority(&t);

    let h = v2(&t, &x, "GET", &own, path, b"");
    assert_eq!(t.raw("GET", path, &h, vec![]).await.0, 200, "as signed");
    // The same signature, sent as Y (whose key it also verifies under).
    let mut swapped = v2(&t, &x, "GET", &own, path, b"");
    for (name, value) in swapped.iter_mut() {
        if *name == api::HEADER_AGENT {
            *value = y.id.clone();
        }
    }
    let (s, b) = t.raw("GET", path, &swapped, vec![]).await;
    assert_eq!(s, 401, "{}", String::from_utf8_lossy(&b));
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_version_2_request_signed_for_another_host_is_refused_whatever_host_header_it_carries() {
    let t = host_accepting_v1(true).await;
    let (_, ada) = session_with_approver(&t).await;
    let path = "/api/console/v1/summary";

    for other in ["negotiate.other.example:443", "127.0.0.1:1"] {
        let h = v2(&t, &ada, "GET", other, path, b"");
        let (s, b) = t.raw("GET", path, &h, vec![]).await;
        assert_eq!(s, 401, "{other}: {}", String::from_utf8_lossy(&b));
        // The caller's Host header names the other host too: not this host's word.
        let mut spoofed = v2(&t, &ada, "GET", other, path, b"");
        spoofed.push(("host", other.to_owned()));
        assert_eq!(t.raw("GET", path, &spoofed, vec![]).await.0, 401, "{other}");
    }
    // The authority header says this host, the signature was for another.
    let mut lying = v2(&t, &ada, "GET", "negotiate.other.example:443", path, b"");
    for (name, value) in lying.iter_mut() {
        if *name == signing::HEADER_AUTHORITY {
            *value = own_authority(&t);
        }
    }
    assert_eq!(t.raw("GET", path, &lying, vec![]).await.0, 401);
    // An unknown version is refused, not read as another.
    let mut v3 = v2(&t, &ada, "GET", &own_authority(&t), path, b"");
    for (name, value) in v3.iter_mut() {
        if *name == signing::HEADER_SIG_VERSION {
            *value = "3".into();
        }
    }
    assert_eq!(t.raw("GET", path, &v3, vec![]).await.0, 401);
    // localhost names a host listening on loopback.
    let port = t.running.addr.port();
    let h = v2(&t, &ada, "GET", &format!("localhost:{port}"), path, b"");
    assert_eq!(t.raw("GET", path, &h, vec![]).await.0, 200);
    t.running.shutdown().await;
}

#[tokio::test]
async fn with_a_public_url_a_version_2_request_names_it() {
    let t = start_with(HostConfig {
        limits: roomy_limits(),
        public_url: Some("https://negotiate.fabrikam.example".into()),
        accept_v1_signatures: false,
        ..HostConfig::default()
    })
    .await;
    let (_, ada) = session_with_approver(&t).await;
    let path = "/api/console/v1/summary";
    let h = v2(&t, &ada, "GET", "negotiate.fabrikam.example:443", path, b"");
    assert_eq!(
        t.raw("GET", path, &h, vec![]).await.0,
        200,
        "the public URL"
    );
    let h = v2(&t, &ada, "GET", "negotiate.fabrikam.example:80", path, b"");
    assert_eq!(t.raw("GET", path, &h, vec![]).await.0, 401, "another port");
    let h = v2(&t, &ada, "GET", "negotiate.other.example:443", path, b"");
    assert_eq!(t.raw("GET", path, &h, vec![]).await.0, 401, "another host");
    t.running.shutdown().await;
}

#[tokio::test]
async fn version_1_is_accepted_in_the_transition_and_refused_after_it() {
    for accept in [true, false] {
        let t = host_accepting_v1(accept).await;
        let (session, ada) = session_with_approver(&t).await;
        let vendor = t.register("Northwind").await;
        let gate = t.gate_agent(countersign_host::SANDBOX_HANDLE, None).await;
        let summary = "/api/console/v1/summary";
        let want = if accept { 200 } else { 401 };

        let h = v1(&t, &ada, "GET", summary, b"");
        assert_eq!(
            t.raw("GET", summary, &h, vec![]).await.0,
            want,
            "approver v1, accept={accept}"
        );
        let talk = crate::gate_support::Talk::opened("ses_v1");
        let (s, v) = t
            .gate(&gate, "POST", "/sessions", &talk.create_body())
            .await;
        assert_eq!(s, 201, "{v}");
        let gate_path = "/api/gate/v1/sessions/ses_v1";
        let h = v1(&t, &gate, "GET", gate_path, b"");
        let (s, b) = t.raw("GET", gate_path, &h, vec![]).await;
        assert_eq!(
            s,
            want,
            "gate v1, accept={accept}: {}",
            String::from_utf8_lossy(&b)
        );
        // Version 2 either way.
        let h = v2(&t, &ada, "GET", &own_authority(&t), summary, b"");
        assert_eq!(t.raw("GET", summary, &h, vec![]).await.0, 200);
        // Vendor agents keep ANP/0.1's string either way: its wire is ANP's.
        let status = format!("/api/agent/v1/sessions/{session}");
        let (s, _) = t.signed(&vendor, "GET", &status, &Value::Null).await;
        assert_eq!(s, 401, "another vendor's session: the uniform refusal");
        let (own_session, _) = t.open_sandbox(&vendor).await;
        let (s, _) = t
            .signed(
                &vendor,
                "GET",
                &format!("/api/agent/v1/sessions/{own_session}"),
                &Value::Null,
            )
            .await;
        assert_eq!(s, 200, "vendor v1, accept={accept}");
        t.running.shutdown().await;
    }
}

#[tokio::test]
async fn a_version_2_gate_request_covers_its_query_caller_and_host() {
    let t = host_accepting_v1(false).await;
    let key = keys::generate_signing_key();
    let code = t
        .host()
        .gate_enroll_code(countersign_host::SANDBOX_HANDLE, "Buyer", "concordia")
        .await
        .unwrap()
        .code;
    let (s, b) = gate_enroll_v2(&t, &code, &code, &key, EnrollRole::GateAgent).await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
    let v: Value = serde_json::from_slice(&b).unwrap();
    let agent = Party {
        id: v["agent_id"].as_str().unwrap().to_owned(),
        key,
        email: String::new(),
    };
    let talk = crate::gate_support::Talk::opened("ses_v2");
    let (s, v) = t
        .gate(&agent, "POST", "/sessions", &talk.create_body())
        .await;
    assert_eq!(s, 201, "{v}");
    let path = "/api/gate/v1/sessions/ses_v2";
    let own = own_authority(&t);
    let h = v2(&t, &agent, "GET", &own, path, b"");
    assert_eq!(t.raw("GET", path, &h, vec![]).await.0, 200, "as signed");
    let h = v2(&t, &agent, "GET", &own, path, b"");
    assert_eq!(
        t.raw("GET", &format!("{path}?x=1"), &h, vec![]).await.0,
        401,
        "query added"
    );
    let h = v2(&t, &agent, "GET", "gate.other.example:443", path, b"");
    assert_eq!(t.raw("GET", path, &h, vec![]).await.0, 401, "another host");
    t.running.shutdown().await;
}

#[tokio::test]
async fn an_enrollment_proof_for_one_code_role_or_host_enrolls_nothing_else() {
    let t = host_accepting_v1(true).await;
    let key = keys::generate_signing_key();
    let code = |name: &'static str| {
        let host = t.host().clone();
        async move {
            host.enroll_code(
                countersign_host::SANDBOX_HANDLE,
                name,
                &format!("{}@fabrikam.example", name.to_lowercase()),
            )
            .await
            .unwrap()
            .code
        }
    };
    let (a, b) = (code("Ada").await, code("Bea").await);
    let pk = keys::public_key_b64(&key.verifying_key());
    let own = own_authority(&t);
    let send = |body: Value, route: &'static str| {
        let t = &t;
        async move {
            let (s, b) = t
                .raw("POST", route, &[], serde_json::to_vec(&body).unwrap())
                .await;
            (s, String::from_utf8_lossy(&b).into_owned())
        }
    };
    let approver_body = |code: &str, proof: &str, authority: &str| {
        json!({"code": code, "name": "Bea", "email": "bea@fabrikam.example", "public_key": pk,
            "proof": proof, "proof_version": 2, "authority": authority})
    };

    // A proof made for code A, sent with code B.
    let for_a = signing::sign_enroll_proof_v2(&key, EnrollRole::Approver, &own, &a);
    let (s, body) = send(approver_body(&b, &for_a, &own), "/api/console/v1/enroll").await;
    assert_eq!(s, 400, "{body}");
    assert!(body.contains("bad_proof"), "{body}");
    // A proof made for a gate agent, at the approver route.
    let as_gate = signing::sign_enroll_proof_v2(&key, EnrollRole::GateAgent, &own, &b);
    let (s, body) = send(approver_body(&b, &as_gate, &own), "/api/console/v1/enroll").await;
    assert_eq!((s, body.contains("bad_proof")), (400, true), "{body}");
    // A proof made for another host, naming it, or naming this one.
    let elsewhere = "negotiate.other.example:443";
    let for_other = signing::sign_enroll_proof_v2(&key, EnrollRole::Approver, elsewhere, &b);
    let (s, body) = send(
        approver_body(&b, &for_other, elsewhere),
        "/api/console/v1/enroll",
    )
    .await;
    assert_eq!((s, body.contains("not this one")), (400, true), "{body}");
    let (s, body) = send(
        approver_body(&b, &for_other, &own),
        "/api/console/v1/enroll",
    )
    .await;
    assert_eq!((s, body.contains("bad_proof")), (400, true), "{body}");
    // Nothing was enrolled, and code B still works with its own proof.
    assert!(t.host().list_approvers().await.unwrap().is_empty());
    let for_b = signing::sign_enroll_proof_v2(&key, EnrollRole::Approver, &own, &b);
    let (s, body) = send(approver_body(&b, &for_b, &own), "/api/console/v1/enroll").await;
    assert_eq!(s, 201, "{body}");

    // At the gate: an approver's proof, and a proof for another code.
    let gate_code = t
        .host()
        .gate_enroll_code(countersign_host::SANDBOX_HANDLE, "Buyer", "concordia")
        .await
        .unwrap()
        .code;
    let gkey = keys::generate_signing_key();
    let (s, body) = gate_enroll_v2(&t, &gate_code, &gate_code, &gkey, EnrollRole::Approver).await;
    assert_eq!(s, 400, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("bad_proof"));
    let (s, _) = gate_enroll_v2(&t, &gate_code, &a, &gkey, EnrollRole::GateAgent).await;
    assert_eq!(s, 400);
    assert!(t.host().list_gate_agents().await.unwrap().is_empty());
    let (s, body) = gate_enroll_v2(&t, &gate_code, &gate_code, &gkey, EnrollRole::GateAgent).await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&body));
    t.running.shutdown().await;
}

#[tokio::test]
async fn a_version_1_enrollment_proof_is_accepted_in_the_transition_and_refused_after_it() {
    for accept in [true, false] {
        let t = host_accepting_v1(accept).await;
        let key = keys::generate_signing_key();
        let pk = keys::public_key_b64(&key.verifying_key());
        let proof = keys::sign_b64(&key, anp::signed::registration_proof_string(&pk).as_bytes());
        let code = t
            .host()
            .enroll_code(
                countersign_host::SANDBOX_HANDLE,
                "Ada",
                "ada@fabrikam.example",
            )
            .await
            .unwrap()
            .code;
        let body = json!({"code": code, "name": "Ada", "email": "ada@fabrikam.example",
            "public_key": pk, "proof": proof});
        let (s, b) = t
            .raw(
                "POST",
                "/api/console/v1/enroll",
                &[],
                serde_json::to_vec(&body).unwrap(),
            )
            .await;
        let text = String::from_utf8_lossy(&b);
        if accept {
            assert_eq!(s, 201, "{text}");
        } else {
            assert_eq!(s, 400, "{text}");
            assert!(text.contains("version 1"), "{text}");
        }
        let gate_code = t
            .host()
            .gate_enroll_code(countersign_host::SANDBOX_HANDLE, "Buyer", "concordia")
            .await
            .unwrap()
            .code;
        let body = json!({"code": gate_code, "name": "Buyer", "public_key": pk, "proof": proof});
        let (s, b) = t
            .raw(
                "POST",
                "/api/gate/v1/enroll",
                &[],
                serde_json::to_vec(&body).unwrap(),
            )
            .await;
        assert_eq!(
            s,
            if accept { 201 } else { 400 },
            "{}",
            String::from_utf8_lossy(&b)
        );
        t.running.shutdown().await;
    }
}

/// The helpers every other test of this suite signs with send version 2
/// to the approver API and the gate: the whole suite runs on it.
#[test]
fn the_suites_own_helpers_sign_version_2_on_our_apis_and_anp_on_the_agent_api() {
    let party = Party {
        id: "apr_1".into(),
        key: keys::generate_signing_key(),
        email: String::new(),
    };
    let ts = api::format_timestamp(time::OffsetDateTime::now_utc());
    let names = |path: &str| -> Vec<&'static str> {
        common::sign_for("http://127.0.0.1:9", &party, "GET", path, b"", &ts)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    };
    assert!(names("/api/console/v1/summary").contains(&signing::HEADER_SIG_VERSION));
    assert!(names("/api/gate/v1/sessions").contains(&signing::HEADER_SIG_VERSION));
    assert!(!names("/api/agent/v1/sessions").contains(&signing::HEADER_SIG_VERSION));
}
