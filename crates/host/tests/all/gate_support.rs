//! Helpers for the gate's tests: real signed Concordia transcripts (fresh
//! keys, signed with `crates/approval-receipt`'s keys and canonical JSON as
//! the protocol says), gate agents enrolled over HTTP, and counts read from
//! the store by hand to show that a refusal stored nothing.
#![allow(dead_code)]

use anp::keys;
use anp::keys::SigningKey;
use approval_receipt::{edges, keys as ckeys};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::common::{enroll_proof_v2, Party, TestHost};

/// Two Concordia parties and the transcript they are writing.
pub struct Talk {
    pub session_id: String,
    pub buyer: SigningKey,
    pub seller: SigningKey,
    pub messages: Vec<Value>,
    prev: String,
}

pub const BUYER: &str = "agent_buyer_42";
pub const SELLER: &str = "agent_seller_01";

pub fn now_text(offset_secs: i64) -> String {
    approval_receipt::datetime::format_utc(
        OffsetDateTime::now_utc() + time::Duration::seconds(offset_secs),
    )
}

impl Talk {
    /// A fresh session between our buyer and a seller.
    pub fn new(session_id: &str) -> Talk {
        Talk {
            session_id: session_id.to_owned(),
            buyer: keys::generate_signing_key(),
            seller: keys::generate_signing_key(),
            messages: Vec::new(),
            prev: concordia::GENESIS_HASH.to_owned(),
        }
    }

    /// Signs and appends one message from `from` (`BUYER` or `SELLER`).
    pub fn say(&mut self, from: &str, kind: &str, body: Value) -> Value {
        let to = if from == BUYER { SELLER } else { BUYER };
        let mut m = json!({
            "concordia": "0.1.0", "type": kind, "id": format!("msg_{:04}", self.messages.len()),
            "session_id": self.session_id, "timestamp": now_text(0),
            "from": {"agent_id": from}, "to": [{"agent_id": to}],
            "prev_hash": self.prev, "body": body,
            "reasoning": "Based on recent comparable deals.",
        });
        self.sign(&mut m, from);
        self.prev = edges::hash(&m).unwrap();
        self.messages.push(m.clone());
        m
    }

    /// (Re)signs `m` as `from`, over its current content.
    pub fn sign(&self, m: &mut Value, from: &str) {
        let key = if from == BUYER {
            &self.buyer
        } else {
            &self.seller
        };
        if let Some(obj) = m.as_object_mut() {
            obj.remove("signature");
        }
        let pre = edges::canonical(m).unwrap();
        m["signature"] = json!(ckeys::sign(key, pre.as_bytes()));
    }

    /// The seller opens, the buyer joins: two messages.
    pub fn opened(session_id: &str) -> Talk {
        let mut t = Talk::new(session_id);
        t.say(
            SELLER,
            "negotiate.open",
            json!({"terms": {"item": {"value": "Industrial sensors, 2,000 units"}, "price": {"value": 150000.00, "currency": "USD"}}}),
        );
        t.say(BUYER, "negotiate.accept_session", json!({}));
        t
    }

    /// An offer or counter body at `price` USD, valid for `valid_secs`.
    pub fn offer(price: &str, valid_secs: i64) -> Value {
        let price: Value = serde_json::from_str(price).unwrap();
        json!({
            "offer_id": format!("off_{}", uuid::Uuid::new_v4().simple()),
            "terms": {"price": {"value": price, "currency": "USD"}, "delivery": {"value": "2026-12-20"}},
            "complete": true,
            "valid_until": now_text(valid_secs),
        })
    }

    /// `{party: key}` as the gate takes it.
    pub fn keys(&self) -> Value {
        json!({
            BUYER: ckeys::public_key_text(&self.buyer.verifying_key()),
            SELLER: ckeys::public_key_text(&self.seller.verifying_key()),
        })
    }

    /// The create body for the messages so far.
    pub fn create_body(&self) -> Value {
        self.create_body_of(&self.messages)
    }

    /// The create body for `messages`.
    pub fn create_body_of(&self, messages: &[Value]) -> Value {
        json!({
            "protocol": "concordia",
            "session_id": self.session_id,
            "keys": self.keys(),
            "self": BUYER,
            "counterparty": {"id": SELLER, "name": "Contoso Sales Agent", "organization": "Contoso"},
            "messages": messages,
        })
    }

    /// The hash of message `i` (0-based).
    pub fn hash(&self, i: usize) -> String {
        concordia::message_hash(&self.messages[i]).unwrap()
    }

    /// The head after the first `n` messages.
    pub fn head(&self, n: usize) -> Value {
        json!({"count": n, "hash": self.hash(n - 1)})
    }
}

impl TestHost {
    /// Enrolls a gate agent of `org` for Concordia over HTTP.
    pub async fn gate_agent(&self, org: &str, callback_url: Option<&str>) -> Party {
        self.gate_agent_for(org, "concordia", callback_url).await
    }

    /// Enrolls a gate agent of `org` for `protocol` over HTTP.
    pub async fn gate_agent_for(
        &self,
        org: &str,
        protocol: &str,
        callback_url: Option<&str>,
    ) -> Party {
        let code = self
            .host()
            .gate_enroll_code(org, "Procurement Buyer", protocol)
            .await
            .unwrap()
            .code;
        let key = keys::generate_signing_key();
        let (s, b) = self.gate_enroll(&code, &key, callback_url).await;
        assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
        let v: Value = serde_json::from_slice(&b).unwrap();
        Party {
            id: v["agent_id"].as_str().unwrap().to_owned(),
            key,
            email: String::new(),
        }
    }

    /// `POST /api/gate/v1/enroll` with `code`, proving possession of `key`.
    pub async fn gate_enroll(
        &self,
        code: &str,
        key: &SigningKey,
        callback_url: Option<&str>,
    ) -> (u16, Vec<u8>) {
        let pk = keys::public_key_b64(&key.verifying_key());
        let (proof, authority) = enroll_proof_v2(
            &self.running.base_url(),
            countersign_host_api::signing::EnrollRole::GateAgent,
            code,
            key,
        );
        let mut body = json!({"code": code, "name": "Procurement Buyer", "public_key": pk,
            "proof": proof, "proof_version": 2, "authority": authority});
        if let Some(url) = callback_url {
            body["callback_url"] = json!(url);
        }
        self.raw(
            "POST",
            "/api/gate/v1/enroll",
            &[("content-type", "application/json".into())],
            serde_json::to_vec(&body).unwrap(),
        )
        .await
    }

    /// A signed gate request; status and the parsed body.
    pub async fn gate(
        &self,
        agent: &Party,
        method: &str,
        path: &str,
        body: &Value,
    ) -> (u16, Value) {
        let (s, b) = self
            .signed(agent, method, &format!("/api/gate/v1{path}"), body)
            .await;
        (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
    }

    /// Creates a session from the talk so far, expecting 201.
    pub async fn mirror(&self, agent: &Party, talk: &Talk) -> Value {
        let (s, v) = self
            .gate(agent, "POST", "/sessions", &talk.create_body())
            .await;
        assert_eq!(s, 201, "{v}");
        v
    }

    /// Mirrors the messages after `from` (0-based count already mirrored).
    pub async fn mirror_more(&self, agent: &Party, talk: &Talk, from: usize) -> (u16, Value) {
        self.gate(
            agent,
            "POST",
            &format!("/sessions/{}/messages", talk.session_id),
            &json!({"after": talk.head(from), "messages": talk.messages[from..]}),
        )
        .await
    }

    /// Asks for a decision on message `index` of the talk.
    pub async fn ask(
        &self,
        agent: &Party,
        talk: &Talk,
        request_id: &str,
        index: usize,
        amount: Option<&str>,
        expires_in_secs: i64,
    ) -> (u16, Value) {
        let body = request_body(talk, request_id, index, amount, expires_in_secs);
        self.ask_body(agent, talk, &body).await
    }

    /// Sends a request body as it is (a retry sends the same bytes again).
    pub async fn ask_body(&self, agent: &Party, talk: &Talk, body: &Value) -> (u16, Value) {
        self.gate(
            agent,
            "POST",
            &format!("/sessions/{}/requests", talk.session_id),
            body,
        )
        .await
    }

    /// The request as the agent reads it.
    pub async fn request_status(&self, agent: &Party, talk: &Talk, request_id: &str) -> Value {
        let (s, v) = self
            .gate(
                agent,
                "GET",
                &format!("/sessions/{}/requests/{request_id}", talk.session_id),
                &Value::Null,
            )
            .await;
        assert_eq!(s, 200, "{v}");
        v
    }

    /// How many rows `table` holds (read by hand from the store).
    pub async fn count(&self, table: &str) -> i64 {
        match self
            .sql_row(&format!("SELECT count(*) FROM {table}"), &[])
            .await[0]
        {
            crate::common::SqlValue::Int(n) => n,
            ref other => panic!("count of {table}: {other:?}"),
        }
    }

    /// Every gate table's row count, for "nothing was stored" checks.
    pub async fn gate_counts(&self) -> [i64; 5] {
        [
            self.count("gate_sessions").await,
            self.count("gate_messages").await,
            self.count("gate_requests").await,
            self.count("gate_receipts").await,
            self.count("gate_decisions").await,
        ]
    }
}

/// A request for a decision on message `index`, expiring `expires_in_secs`
/// from now.
pub fn request_body(
    talk: &Talk,
    request_id: &str,
    index: usize,
    amount: Option<&str>,
    expires_in_secs: i64,
) -> Value {
    let mut body = json!({
        "request_id": request_id,
        "message_hash": talk.hash(index),
        "action": "accept",
        "expires_at": now_text(expires_in_secs),
    });
    if let Some(a) = amount {
        body["amount"] = json!(a);
    }
    body
}
