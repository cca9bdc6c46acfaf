//! Reputation attestations, their countersignatures, and counterparty cosigned receipts.

use std::collections::BTreeSet;

use serde_json::Value;

use super::super::checks::{self, Checks};
use super::super::vector::Vector;
use approval_receipt::keys;

fn is_signature_path(p: &str) -> bool {
    p.ends_with("/signature") || p.starts_with("/countersignatures/")
}

pub fn attestation(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    if v.context.get("forbid_raw_deal_terms") == Some(&Value::Bool(true)) {
        let hit = checks::scan_raw_terms(input, &mut String::new(), &is_signature_path);
        c.check("privacy", hit.is_none(), || {
            format!(
                "a raw deal term appears at {}",
                hit.clone().unwrap_or_default()
            )
        });
    }
    checks::schema(c, "attestation", input);
    let keys_map = v.context.get("public_keys_b64url");
    let parties = input
        .get("parties")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut verified = BTreeSet::new();
    for (i, party) in parties.iter().enumerate() {
        let Some(id) = party.get("agent_id").and_then(Value::as_str) else {
            c.fail("schema", format!("parties[{i}] has no agent_id"));
            continue;
        };
        let key = checks::key_at(c, keys_map.and_then(|k| k.get(id)), id);
        let preimage = checks::canonical(c, &checks::without(party, &["signature"]));
        if checks::signature(
            c,
            key.as_ref(),
            preimage.as_deref(),
            party.get("signature"),
            &format!("party {id}"),
        ) {
            verified.insert(id.to_owned());
        }
    }
    if let Some(expected) = v.context.get("expected_verified_parties") {
        let expected: Option<BTreeSet<String>> = expected.as_array().map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        });
        c.check("signature", expected.as_ref() == Some(&verified), || {
            "the verified parties are not the expected set".into()
        });
    }
}

pub fn countersign(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    checks::schema(c, "attestation", input);
    let preimage = checks::canonical(
        c,
        &checks::strip_signatures(&checks::without(input, &["countersignatures"])),
    );
    checks::optional_digest(c, &v.context, preimage.as_deref());
    let Some(signers) = v
        .context
        .get("countersigners")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
    else {
        c.fail("signature", "context.countersigners is missing or empty");
        return;
    };
    for signer in signers {
        let Some(id) = signer.as_str() else {
            c.fail("signature", "a countersigner is not a string");
            continue;
        };
        let key = checks::key_at(
            c,
            v.context.get("public_keys_b64url").and_then(|k| k.get(id)),
            id,
        );
        let sig = input.get("countersignatures").and_then(|m| m.get(id));
        checks::signature(
            c,
            key.as_ref(),
            preimage.as_deref(),
            sig,
            &format!("the countersignature of {id}"),
        );
    }
}

/// The cosign profile's `did:key` variant: `did:key:z` + unpadded base64url
/// of `0xed01 ‖ key` (the SDK's `cosign.py`; not the base58btc did:key
/// Countersign issues).
fn cosign_did(key: &[u8]) -> String {
    let mut bytes = vec![0xed, 0x01];
    bytes.extend_from_slice(key);
    format!("did:key:z{}", jcs::b64url::encode(&bytes))
}

pub fn cosign(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    let did = v.context.get("counterparty_did").and_then(Value::as_str);
    let key = checks::key_at(
        c,
        v.context.get("counterparty_public_key_b64url"),
        "the counterparty",
    );
    let decoded = did
        .and_then(|d| d.strip_prefix("did:key:z"))
        .and_then(|t| jcs::b64url::decode_padding_optional(t).ok())
        .filter(|b| b.len() == 34 && b[..2] == [0xed, 0x01]);
    c.check(
        "binding",
        decoded.is_some()
            && key.is_some_and(|k| {
                decoded.as_deref().map(|b| &b[2..]) == Some(k.as_bytes().as_slice())
            }),
        || "counterparty_did is not an Ed25519 did:key decoding to the counterparty key".into(),
    );
    if let Some(k) = &key {
        c.check(
            "binding",
            did == Some(cosign_did(k.as_bytes()).as_str()),
            || "counterparty_did is not the canonical did:key of the key".into(),
        );
    }
    let publisher = v.context.get("publisher_did").and_then(Value::as_str);
    c.check("binding", publisher.is_some() && publisher != did, || {
        "the publisher and the counterparty are the same DID".into()
    });
    let entries: Vec<&Value> = input
        .get("parties")
        .and_then(Value::as_array)
        .map(|p| {
            p.iter()
                .filter(|e| e.get("agent_id").and_then(Value::as_str) == did && did.is_some())
                .collect()
        })
        .unwrap_or_default();
    let sig = match entries.as_slice() {
        [one] => one
            .get("signature")
            .filter(|s| s.as_str().is_some_and(|t| !t.is_empty())),
        _ => None,
    };
    c.check("signature", sig.is_some(), || {
        "there is not exactly one counterparty party entry with a signature".into()
    });
    let preimage = checks::canonical(c, &checks::strip_signatures(input));
    checks::optional_digest(c, &v.context, preimage.as_deref());
    if let (Some(k), Some(p), Some(s)) = (&key, &preimage, sig.and_then(Value::as_str)) {
        c.check("signature", keys::verify(k, p.as_bytes(), s), || {
            "the counterparty signature does not verify".into()
        });
    }
}
