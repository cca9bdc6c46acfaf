//! Signed single artifacts: ApprovalReceipts, revocation records, cascade
//! decision records, fulfillment attestations and the CMPC primitives.

use ed25519_dalek::SigningKey;
use serde_json::Value;

use super::super::checks::{self, Checks};
use super::super::vector::Vector;
use approval_receipt::{keys, receipt, revocation};

pub fn receipt(v: &Vector, c: &mut Checks) {
    let key = checks::key_at(
        c,
        v.context
            .get("public_keys_b64url")
            .and_then(|k| k.get("issuer")),
        "the issuer",
    );
    let Some(now) = checks::instant(c, v.context.get("now"), "context.now") else {
        return;
    };
    let Some(offer) = v.context.get("offer") else {
        c.fail("binding", "context.offer is missing");
        return;
    };
    // The library's verifier, the same one a console uses.
    let report = receipt::verify_receipt(&v.input, offer, key.as_ref(), now, &[]);
    for failure in report.failures() {
        c.fail(failure.check.name(), failure.detail.clone());
    }
}

pub fn revocation(v: &Vector, c: &mut Checks) {
    let Some(key) = checks::key_at(
        c,
        v.context
            .get("public_keys_b64url")
            .and_then(|k| k.get("issuer")),
        "the issuer",
    ) else {
        return;
    };
    let report = revocation::verify_revocation_record(&v.input, &key);
    for (name, ok, why) in report.checks {
        c.check(name, ok, || why);
    }
}

pub fn cascade_decision(v: &Vector, c: &mut Checks) {
    checks::schema(c, "cascade_decision_record", &v.input);
    let closed = checks_schema_closed();
    c.check("schema", closed, || {
        "the schema does not reject unknown keys at the top and in ancestor_reads[]".into()
    });
    let preimage_value = checks::without(&v.input, &["decision_id", "signature"]);
    let preimage = checks::canonical(c, &preimage_value);
    let actual = preimage.as_deref().map(|p| jcs::sha256_hex(p.as_bytes()));
    let stored = v.input.get("decision_id").and_then(Value::as_str);
    c.check(
        "digest",
        stored.is_some() && actual.as_deref() == stored,
        || "decision_id is not the hash of the record without decision_id and signature".into(),
    );
    if let Some(expected) = v.context.get("expected_decision_id") {
        let ours = stored.map(|s| format!("sha256:{s}"));
        c.check("digest", expected.as_str() == ours.as_deref(), || {
            "decision_id differs from context.expected_decision_id".into()
        });
    }
    c.check(
        "signature",
        v.input.pointer("/signature/alg").and_then(Value::as_str) == Some("EdDSA"),
        || "signature.alg is not EdDSA".into(),
    );
    let key = checks::key_at(
        c,
        v.context
            .get("public_keys_b64url")
            .and_then(|k| k.get("issuer")),
        "the issuer",
    );
    checks::signature(
        c,
        key.as_ref(),
        preimage.as_deref(),
        v.input.pointer("/signature/value"),
        "the record",
    );
}

fn checks_schema_closed() -> bool {
    let Some(s) = super::super::schemas::raw("cascade_decision_record") else {
        return false;
    };
    s.get("additionalProperties") == Some(&Value::Bool(false))
        && s.pointer("/properties/ancestor_reads/items/additionalProperties")
            == Some(&Value::Bool(false))
}

pub fn fulfillment_attestation(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    checks::schema(c, "fulfillment_attestation", input);
    let agreement = input.get("agreement_attestation_id");
    let fulfills = input
        .get("references")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|r| {
                r.get("relationship").and_then(Value::as_str) == Some("fulfills")
                    && agreement.is_some()
                    && r.get("id") == agreement
            })
        });
    c.check("binding", fulfills, || {
        "no fulfills reference names agreement_attestation_id".into()
    });
    c.check(
        "signature",
        input.pointer("/signature/alg").and_then(Value::as_str) == Some("Ed25519"),
        || "signature.alg is not Ed25519".into(),
    );
    let key = checks::key_at(c, v.context.get("public_key_b64url"), "the signer");
    let preimage = checks::canonical(c, &checks::without(input, &["signature"]));
    checks::signature(
        c,
        key.as_ref(),
        preimage.as_deref(),
        input.pointer("/signature/value"),
        "the attestation",
    );
    checks::optional_digest(c, &v.context, preimage.as_deref());
    let seed = v
        .context
        .get("seed_ed25519_ascii")
        .map(|s| s.as_str().map(|t| t.as_bytes().to_vec()));
    let signing = match &seed {
        Some(Some(bytes)) if bytes.len() == 32 => {
            let mut array = [0u8; 32];
            array.copy_from_slice(bytes);
            let sk = SigningKey::from_bytes(&array);
            c.check("key", key == Some(sk.verifying_key()), || {
                "the public test seed does not derive public_key_b64url".into()
            });
            Some(sk)
        }
        Some(_) => {
            c.fail("key", "seed_ed25519_ascii is not exactly 32 UTF-8 bytes");
            None
        }
        None => None,
    };
    if let Some(expected) = v.context.get("signature_b64url") {
        match (&signing, &preimage) {
            (Some(sk), Some(p)) => {
                let ours = keys::sign(sk, p.as_bytes());
                let same = |t: Option<&str>| {
                    t.and_then(|t| keys::parse_signature(t).ok())
                        .map(|s| s.to_bytes())
                        == keys::parse_signature(&ours).ok().map(|s| s.to_bytes())
                };
                c.check("signature", same(expected.as_str()), || {
                    "re-signing with the test seed does not give context.signature_b64url".into()
                });
                c.check(
                    "signature",
                    same(input.pointer("/signature/value").and_then(Value::as_str)),
                    || "re-signing with the test seed does not give signature.value".into(),
                );
            }
            _ => c.fail(
                "signature",
                "signature_b64url is given without a usable test seed",
            ),
        }
    }
    if let Some(join) = v.context.get("join_keys") {
        for name in ["charge_ref", "action_ref"] {
            if let Some(expected) = join.get(name) {
                c.check("binding", input.get(name) == Some(expected), || {
                    format!("{name} differs from context.join_keys.{name}")
                });
            }
        }
    }
    if v.context.get("forbid_raw_deal_terms") == Some(&Value::Bool(true)) {
        let hit = checks::scan_raw_terms(input, &mut String::new(), &|p| p == "/signature/value");
        c.check("privacy", hit.is_none(), || {
            format!(
                "a raw deal term appears at {}",
                hit.clone().unwrap_or_default()
            )
        });
    }
}

/// ConditionalCommitment, AtomicActivationProof, UnwindRecord: schema,
/// `algorithm == "EdDSA"`, digest, signature over the record without `signature`.
pub fn signed_eddsa(v: &Vector, c: &mut Checks, schema: &str) {
    checks::schema(c, schema, &v.input);
    checks::eddsa_algorithm(c, &v.input);
    checks::signed_preimage(
        c,
        v,
        &["signature"],
        "signature",
        "public_key_b64url",
        "the record",
    );
}
