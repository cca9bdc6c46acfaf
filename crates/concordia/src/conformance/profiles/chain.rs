//! The session message chain, and the 0.3.0 receipt's set-binding.

use serde_json::Value;

use super::super::checks::{self, Checks};
use super::super::vector::Vector;
use crate::message::GENESIS_HASH;
use crate::transcript::message_hash;

fn semver_at_least(text: &str, major: u64, minor: u64) -> bool {
    let mut parts = text.split('.');
    let (Some(a), Some(b)) = (
        parts.next().and_then(|p| p.parse::<u64>().ok()),
        parts.next().and_then(|p| p.parse::<u64>().ok()),
    ) else {
        return false;
    };
    (a, b) >= (major, minor)
}

pub fn message_chain(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    let Some(obj) = input.as_object() else { return };
    if let Some(k) = obj.keys().find(|k| *k != "messages" && *k != "receipt") {
        c.fail(
            "schema",
            format!("the input holds {k:?} besides messages and receipt"),
        );
    }
    let Some(messages) = input
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
    else {
        c.fail("schema", "input.messages is missing or empty");
        return;
    };
    if let Some(n) = v.context.get("expected_message_count") {
        c.check("binding", n.as_u64() == Some(messages.len() as u64), || {
            format!("{} messages, expected {n}", messages.len())
        });
    }
    let hashes: Vec<Option<String>> = messages.iter().map(|m| message_hash(m).ok()).collect();
    c.check(
        "binding",
        messages[0].get("prev_hash").and_then(Value::as_str) == Some(GENESIS_HASH),
        || "message 0 does not link to the genesis hash".into(),
    );
    for i in 1..messages.len() {
        let link = messages[i].get("prev_hash").and_then(Value::as_str);
        c.check(
            "binding",
            link.is_some() && link == hashes[i - 1].as_deref(),
            || {
                format!(
                    "message {i}'s prev_hash is not the hash of message {}",
                    i - 1
                )
            },
        );
    }
    let keys = v.context.get("public_keys_b64url");
    for (i, m) in messages.iter().enumerate() {
        let sender = m
            .pointer("/from/agent_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        let key = checks::key_at(
            c,
            keys.and_then(|k| k.get(sender)),
            &format!("message {i}'s sender"),
        );
        let preimage = checks::canonical(c, &checks::without(m, &["signature"]));
        checks::signature(
            c,
            key.as_ref(),
            preimage.as_deref(),
            m.get("signature"),
            &format!("message {i}"),
        );
    }
    if let Some(expected) = v.context.get("expected_message_hashes") {
        let ours: Vec<Value> = hashes
            .iter()
            .map(|h| h.clone().map(Value::String).unwrap_or(Value::Null))
            .collect();
        c.check("binding", expected.as_array() == Some(&ours), || {
            "the message hashes are not the expected ones".into()
        });
    }
    let Some(receipt) = input.get("receipt") else {
        return;
    };
    checks::schema(c, "attestation", receipt);
    let version = receipt
        .get("concordia_attestation")
        .and_then(Value::as_str)
        .unwrap_or("");
    c.check("binding", semver_at_least(version, 0, 3), || {
        format!("concordia_attestation {version:?} is below 0.3.0 (legacy_set_unbound)")
    });
    let head = receipt
        .get("chain_head")
        .and_then(Value::as_str)
        .unwrap_or("");
    let head_ok = head.len() == 71
        && head.starts_with("sha256:")
        && head[7..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    c.check("schema", head_ok, || {
        "chain_head is not sha256:<64 lowercase hex>".into()
    });
    let count = receipt.get("message_count").and_then(Value::as_u64);
    c.check("schema", count.is_some_and(|n| n >= 1), || {
        "message_count is not an integer ≥ 1".into()
    });
    let cosign = checks::canonical(
        c,
        &checks::strip_signatures(&checks::without(receipt, &["countersignatures"])),
    );
    for (i, party) in receipt
        .get("parties")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let id = party.get("agent_id").and_then(Value::as_str).unwrap_or("");
        let key = checks::key_at(
            c,
            keys.and_then(|k| k.get(id)),
            &format!("receipt party {i}"),
        );
        let preimage = checks::canonical(c, &checks::without(party, &["signature"]));
        checks::signature(
            c,
            key.as_ref(),
            preimage.as_deref(),
            party.get("signature"),
            &format!("receipt party {id}"),
        );
        let counter = receipt.get("countersignatures").and_then(|m| m.get(id));
        checks::signature(
            c,
            key.as_ref(),
            cosign.as_deref(),
            counter,
            &format!("the countersignature of {id}"),
        );
    }
    c.check("binding", count == Some(messages.len() as u64), || {
        format!(
            "message_count is not the {} messages presented",
            messages.len()
        )
    });
    c.check(
        "binding",
        Some(head) == hashes.last().and_then(|h| h.as_deref()),
        || "chain_head is not the hash of the last message".into(),
    );
}
