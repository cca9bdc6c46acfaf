//! Predicates, mandates and delegation chains.

use serde_json::{json, Value};

use super::super::checks::{self, Checks};
use super::super::vector::Vector;
use approval_receipt::{datetime, schema::Schema};

pub fn predicate(v: &Vector, c: &mut Checks) {
    let input = &v.input;
    checks::schema(c, "predicate", input);
    checks::eddsa_algorithm(c, input);
    checks::signed_preimage(
        c,
        v,
        &["signature"],
        "signature",
        "public_key_b64url",
        "the predicate",
    );
    c.check(
        "temporal",
        input.get("status").and_then(Value::as_str) == Some("active"),
        || "status is not active".into(),
    );
    let now = checks::instant(c, v.context.get("now"), "context.now");
    let expires = input
        .get("expires_at")
        .and_then(Value::as_str)
        .map(datetime::parse);
    c.check(
        "temporal",
        matches!((expires, now), (Some(Ok(e)), Some(n)) if e >= n),
        || "expires_at is missing, unreadable or before now".into(),
    );
}

/// The JSON Schema keywords that mark a scope restriction as a schema (the
/// SDK's `_JSON_SCHEMA_KEYWORDS`).
const SCHEMA_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "format",
];

/// A link's `scope_restriction` as a JSON Schema, as the SDK reads it: a
/// schema when it uses a schema keyword; `{"max_spend": n}` (the legacy
/// shorthand) as `max_spend ≤ n` when present; anything else refused.
fn restriction_schema(r: &Value) -> Result<Value, String> {
    let Some(m) = r.as_object().filter(|m| !m.is_empty()) else {
        return Err("is empty or not an object".into());
    };
    if m.keys().any(|k| SCHEMA_KEYWORDS.contains(&k.as_str())) {
        return Ok(r.clone());
    }
    match m.get("max_spend") {
        Some(n) if m.len() == 1 && n.is_number() => Ok(json!({
            "type": "object",
            "properties": {"max_spend": {"type": "number", "maximum": n}}
        })),
        _ => Err("is neither a JSON Schema nor the max_spend shorthand".into()),
    }
}

pub fn mandate(v: &Vector, c: &mut Checks, delegated: bool) {
    let input = &v.input;
    checks::schema(c, "mandate", input);
    checks::eddsa_algorithm(c, input);
    checks::signed_preimage(
        c,
        v,
        &["signature"],
        "signature",
        "issuer_public_key_b64url",
        "the mandate",
    );
    let status = input.get("status");
    c.check(
        "temporal",
        status.is_none() || status.and_then(Value::as_str) == Some("active"),
        || "status is present and not active".into(),
    );
    let now = checks::instant(c, v.context.get("now"), "context.now");
    let validity = input.get("validity");
    match validity.and_then(|x| x.get("mode")).and_then(Value::as_str) {
        Some("windowed") => {
            let at = |name: &str| {
                validity
                    .and_then(|x| x.get(name))
                    .and_then(Value::as_str)
                    .map(datetime::parse)
            };
            let ok = matches!((at("not_before"), at("not_after"), now), (Some(Ok(a)), Some(Ok(b)), Some(n)) if a <= n && n <= b);
            c.check("temporal", ok, || {
                "now is outside the mandate's window (not_before ≤ now ≤ not_after)".into()
            });
        }
        Some("sequence") => {
            let k = validity.and_then(|x| x.get("sequence_key"));
            c.check(
                "temporal",
                k.is_some() && v.context.get("sequence_key") == k,
                || "context.sequence_key is not the mandate's sequence_key".into(),
            );
        }
        Some("state_bound") => {
            c.check(
                "temporal",
                v.context.get("state_active") == Some(&Value::Bool(true)),
                || "the bound state is not active".into(),
            );
        }
        other => c.fail(
            "temporal",
            format!("validity mode {other:?} is not windowed, sequence or state_bound"),
        ),
    }
    let mut effective = vec![];
    match input.get("constraints").map(|s| Schema::compile(s, &[])) {
        Some(Ok(_)) => effective.push(input["constraints"].clone()),
        Some(Err(e)) => c.fail("schema", format!("constraints: {e}")),
        None => c.fail("schema", "the mandate has no constraints"),
    }
    if delegated {
        delegation(v, c, &mut effective);
    }
    if let Some(action) = v.context.get("action") {
        match Schema::compile(&json!({ "allOf": effective }), &[]) {
            Ok(s) => {
                let errors = s.errors(action);
                c.check("binding", errors.is_empty(), || {
                    format!(
                        "the action is outside the effective constraints: {}",
                        errors.join("; ")
                    )
                });
            }
            Err(e) => c.fail("schema", format!("the effective constraints: {e}")),
        }
    }
}

fn delegation(v: &Vector, c: &mut Checks, effective: &mut Vec<Value>) {
    let input = &v.input;
    let Some(chain) = input
        .get("delegation_chain")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
    else {
        c.fail("binding", "delegation_chain is missing or empty");
        return;
    };
    let field = |l: &Value, n: &str| l.get(n).cloned();
    c.check(
        "binding",
        field(&chain[0], "delegator").is_some()
            && field(&chain[0], "delegator") == input.get("issuer").cloned(),
        || "the first link's delegator is not the mandate's issuer".into(),
    );
    let last = &chain[chain.len() - 1];
    c.check(
        "binding",
        field(last, "delegate").is_some()
            && field(last, "delegate") == input.get("subject").cloned(),
        || "the last link's delegate is not the mandate's subject".into(),
    );
    for i in 1..chain.len() {
        c.check(
            "binding",
            field(&chain[i], "delegator").is_some()
                && field(&chain[i], "delegator") == field(&chain[i - 1], "delegate"),
            || format!("link {i}'s delegator is not link {}'s delegate", i - 1),
        );
    }
    let keys = v.context.get("delegation_public_keys_b64url");
    for (i, link) in chain.iter().enumerate() {
        c.check(
            "signature",
            link.get("algorithm").and_then(Value::as_str) == Some("EdDSA"),
            || format!("link {i}: algorithm is not EdDSA"),
        );
        let delegator = link.get("delegator").and_then(Value::as_str).unwrap_or("");
        let key = checks::key_at(
            c,
            keys.and_then(|k| k.get(delegator)),
            &format!("link {i}'s delegator"),
        );
        let preimage = checks::canonical(c, &checks::without(link, &["signature"]));
        checks::signature(
            c,
            key.as_ref(),
            preimage.as_deref(),
            link.get("signature"),
            &format!("link {i}"),
        );
        if let Some(r) = link.get("scope_restriction").filter(|r| !r.is_null()) {
            match restriction_schema(r).and_then(|schema| {
                Schema::compile(&schema, &[])
                    .map(|_| schema)
                    .map_err(|e| e.to_string())
            }) {
                Ok(schema) => effective.push(schema),
                Err(e) => c.fail("schema", format!("link {i}'s scope_restriction {e}")),
            }
        }
    }
}
