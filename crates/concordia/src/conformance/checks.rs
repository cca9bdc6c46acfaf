//! What every profile shares: a list of failed checks, keys, preimages,
//! digests, pointers and the raw-deal-term detectors.

use std::sync::OnceLock;

use ed25519_dalek::VerifyingKey;
use regex::Regex;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::schemas;
use super::vector::{Vector, Verdict};
use approval_receipt::{datetime, edges, keys};

/// A profile's verdict and every check that failed, each named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// Accept only when no check failed.
    pub verdict: Verdict,
    /// `check: what was found`, in the profile's order.
    pub failures: Vec<String>,
}

/// Collects failures while a profile runs.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    failures: Vec<String>,
}

impl Checks {
    /// Records a check; returns whether it passed.
    pub fn check(&mut self, name: &str, ok: bool, why: impl FnOnce() -> String) -> bool {
        if !ok {
            self.failures.push(format!("{name}: {}", why()));
        }
        ok
    }

    /// Records a failure.
    pub fn fail(&mut self, name: &str, why: impl Into<String>) {
        self.failures.push(format!("{name}: {}", why.into()));
    }

    /// The judgement.
    pub fn finish(self) -> Judgement {
        Judgement {
            verdict: if self.failures.is_empty() {
                Verdict::Accept
            } else {
                Verdict::Reject
            },
            failures: self.failures,
        }
    }
}

/// Validates `value` against the frozen schema `name`.
pub fn schema(c: &mut Checks, name: &str, value: &Value) -> bool {
    match schemas::get(name) {
        Some(s) => {
            let errors = s.errors(value);
            c.check("schema", errors.is_empty(), || {
                format!("{name}: {}", errors.join("; "))
            })
        }
        None => {
            c.fail(
                "schema",
                format!("the frozen schema {name} is not available"),
            );
            false
        }
    }
}

/// A base64url Ed25519 key from a context member.
pub fn key_at(c: &mut Checks, value: Option<&Value>, what: &str) -> Option<VerifyingKey> {
    match value.and_then(Value::as_str).map(keys::parse_public_key) {
        Some(Ok(k)) => Some(k),
        Some(Err(e)) => {
            c.fail("key", format!("{what}: {e}"));
            None
        }
        None => {
            c.fail("key", format!("no public key is given for {what}"));
            None
        }
    }
}

/// Canonical text under Concordia's rules, failing the check when there is none.
pub fn canonical(c: &mut Checks, value: &Value) -> Option<String> {
    match edges::canonical(value) {
        Ok(t) => Some(t),
        Err(e) => {
            c.fail("canonical", e.to_string());
            None
        }
    }
}

/// `value` without its top-level `member`.
pub fn without(value: &Value, members: &[&str]) -> Value {
    match value {
        Value::Object(map) => {
            let mut map = map.clone();
            for m in members {
                map.remove(*m);
            }
            Value::Object(map)
        }
        other => other.clone(),
    }
}

/// RUNNER_CONTRACT's `StripSignaturesRecursive`.
pub fn strip_signatures(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "signature")
                .map(|(k, v)| (k.clone(), strip_signatures(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_signatures).collect()),
        other => other.clone(),
    }
}

/// Verifies `signature` (a base64url text) over `preimage` under `key`
/// (both obtained through [`key_at`] and [`canonical`], which report their own failures).
pub fn signature(
    c: &mut Checks,
    key: Option<&VerifyingKey>,
    preimage: Option<&str>,
    signature: Option<&Value>,
    what: &str,
) -> bool {
    // A missing key or preimage was already reported by the check that
    // could not produce it.
    let (Some(key), Some(preimage)) = (key, preimage) else {
        return false;
    };
    let Some(text) = signature.and_then(Value::as_str) else {
        c.fail("signature", format!("{what}: no signature string"));
        return false;
    };
    let ok = keys::verify(key, preimage.as_bytes(), text);
    c.check("signature", ok, || {
        format!("{what}: the Ed25519 signature does not verify")
    })
}

/// Compares `context.canonical_sha256`, when present, to SHA-256 of `preimage`.
pub fn optional_digest(
    c: &mut Checks,
    context: &Map<String, Value>,
    preimage: Option<&str>,
) -> bool {
    let Some(expected) = context.get("canonical_sha256") else {
        return true;
    };
    let actual = preimage.map(|p| jcs::sha256_prefixed(p.as_bytes()));
    c.check(
        "digest",
        actual.is_some() && expected.as_str() == actual.as_deref(),
        || {
            format!(
                "canonical_sha256 is {expected}, the preimage hashes to {}",
                actual.unwrap_or_default()
            )
        },
    )
}

/// Requires `input.algorithm == "EdDSA"` (the bare-string signature form).
pub fn eddsa_algorithm(c: &mut Checks, input: &Value) -> bool {
    c.check(
        "signature",
        input.get("algorithm").and_then(Value::as_str) == Some("EdDSA"),
        || "algorithm is not EdDSA".into(),
    )
}

/// What most profiles end with: the preimage (JCS of the input without the
/// `excluded` members), `context.canonical_sha256` when present, and the
/// Ed25519 signature at `input[signature_member]` under the key at
/// `context[key_member]`. Returns the preimage.
pub fn signed_preimage(
    c: &mut Checks,
    vector: &Vector,
    excluded: &[&str],
    signature_member: &str,
    key_member: &str,
    what: &str,
) -> Option<String> {
    let preimage = canonical(c, &without(&vector.input, excluded));
    optional_digest(c, &vector.context, preimage.as_deref());
    let key = key_at(c, vector.context.get(key_member), key_member);
    signature(
        c,
        key.as_ref(),
        preimage.as_deref(),
        vector.input.get(signature_member),
        what,
    );
    preimage
}

/// `sha256:<hex>` of JCS of `value`.
pub fn digest(value: &Value) -> Option<String> {
    edges::hash(value).ok()
}

/// Resolves `input` or `context.<name>`.
pub fn source<'a>(vector: &'a Vector, name: &str) -> Option<&'a Value> {
    if name == "input" {
        Some(&vector.input)
    } else {
        name.strip_prefix("context.")
            .and_then(|n| vector.context.get(n))
    }
}

/// Resolves `{object, pointer}`.
pub fn target<'a>(vector: &'a Vector, spec: &Value) -> Option<&'a Value> {
    let object = source(vector, spec.get("object")?.as_str()?)?;
    let pointer = spec.get("pointer")?.as_str()?;
    if pointer.is_empty() {
        Some(object)
    } else if pointer.starts_with('/') {
        object.pointer(pointer)
    } else {
        None
    }
}

/// A context timestamp (`now`, …).
pub fn instant(c: &mut Checks, value: Option<&Value>, what: &str) -> Option<OffsetDateTime> {
    match value.and_then(Value::as_str).map(datetime::parse) {
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            c.fail("temporal", format!("{what}: {e}"));
            None
        }
        None => {
            c.fail("temporal", format!("{what} is missing"));
            None
        }
    }
}

fn detectors() -> &'static [Regex] {
    static CELL: OnceLock<Vec<Regex>> = OnceLock::new();
    CELL.get_or_init(|| {
        [
            r"(?i)[$€£¥]\s*\d",
            r"(?i)\b(?:USD|EUR|GBP|JPY|CAD|AUD|CHF|CNY|INR)\s*\d",
            r"(?i)\b\d+(?:[.,]\d+)?\s*(?:USD|EUR|GBP|JPY|CAD|AUD|CHF|CNY|INR)\b",
            r"(?i)\bprice\s*:",
            r"(?i)\b(?:qty|quantity)\s*[:=]?\s*\d+\b",
            r"(?i)\b\d+\s*(?:units?|items?|pcs|pieces)\b",
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    })
}

/// True when `text` matches one of SPEC §9.6.6's raw deal-term detectors.
pub fn raw_deal_term(text: &str) -> bool {
    detectors().iter().any(|r| r.is_match(text))
}

/// Scans every key and string value of `value`, skipping the values
/// `skip(path)` names; returns the JSON pointer of the first match.
pub fn scan_raw_terms(
    value: &Value,
    path: &mut String,
    skip: &dyn Fn(&str) -> bool,
) -> Option<String> {
    match value {
        Value::String(s) if !skip(path) && raw_deal_term(s) => Some(path.clone()),
        Value::Object(map) => {
            for (k, v) in map {
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                if raw_deal_term(k) {
                    return Some(path.clone());
                }
                if let Some(hit) = scan_raw_terms(v, path, skip) {
                    return Some(hit);
                }
                path.truncate(len);
            }
            None
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                if let Some(hit) = scan_raw_terms(v, path, skip) {
                    return Some(hit);
                }
                path.truncate(len);
            }
            None
        }
        _ => None,
    }
}
