//! Receipt verification exactly as RECEIPTS.md publishes it: the checks
//! `header`, `key`, `signature`, `signer`, `mode`, `terms`, `chain`, in that
//! order, the status and the verdict, equal to the publisher's
//! `valyzen.receipt.verify_receipt` check by check (`tests/all/publisher.rs`).
//!
//! Every check is always reported. Where the publisher leaves one out of its
//! list (it cannot run, or, for `mode`, the key is live), this reports it as
//! skipped with the reason, except `mode` for a pinned live key, which holds.
//! The crate README lists every case where the two verdicts differ, and why.

use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::canonical::canonical_bytes;
use crate::chain::verify_log;
use crate::equality::same;
use crate::keys::{Mode, PinnedKeys};
use crate::text::shown;

/// The seven checks, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckId {
    /// The protected header is an EdDSA detached JWS (`b64: false`, `crit: ["b64"]`) with a kid.
    Header,
    /// Exactly one embedded OKP Ed25519 key has that kid.
    Key,
    /// Ed25519 over the protected header text, `.`, and JCS of `signed_payload`.
    Signature,
    /// The kid is pinned and the embedded key is exactly the pinned one.
    Signer,
    /// A test-mode key is proof only when test receipts are allowed.
    Mode,
    /// `final_terms` and `session_id` equal what was signed.
    Terms,
    /// With the session log: every link, the head, the length, the signed head.
    Chain,
}

impl CheckId {
    /// Every check, in order.
    pub const ALL: [CheckId; 7] = [
        CheckId::Header,
        CheckId::Key,
        CheckId::Signature,
        CheckId::Signer,
        CheckId::Mode,
        CheckId::Terms,
        CheckId::Chain,
    ];

    /// The id as the publisher names it.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::Header => "header",
            CheckId::Key => "key",
            CheckId::Signature => "signature",
            CheckId::Signer => "signer",
            CheckId::Mode => "mode",
            CheckId::Terms => "terms",
            CheckId::Chain => "chain",
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Which check.
    pub id: CheckId,
    /// True when it ran and holds.
    pub ok: bool,
    /// True when it could not run (then `ok` is false and says nothing).
    pub skipped: bool,
    /// A sentence saying what was found.
    pub detail: String,
}

impl Check {
    fn pass(id: CheckId, detail: impl Into<String>) -> Self {
        Self {
            id,
            ok: true,
            skipped: false,
            detail: detail.into(),
        }
    }
    fn fail(id: CheckId, detail: impl Into<String>) -> Self {
        Self {
            id,
            ok: false,
            skipped: false,
            detail: detail.into(),
        }
    }
    fn skip(id: CheckId, detail: impl Into<String>) -> Self {
        Self {
            id,
            ok: false,
            skipped: true,
            detail: detail.into(),
        }
    }
    fn of(id: CheckId, ok: bool, detail: impl Into<String>) -> Self {
        Self {
            id,
            ok,
            skipped: false,
            detail: detail.into(),
        }
    }
}

/// The signer and mode checks when no signature could be verified.
fn no_signer(checks: &mut Vec<Check>, why: &str) {
    checks.push(Check::skip(CheckId::Signer, why));
    checks.push(Check::skip(
        CheckId::Mode,
        "There is no signer, so no mode to weigh.",
    ));
}

/// What the signature says, overall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The signature verifies (which alone is not proof: see [`Verification::proof`]).
    Valid,
    /// The signature does not verify.
    Invalid,
    /// There is no well-formed header or key to verify with, or an agreed
    /// session carries no signed artifact.
    Unverifiable,
    /// The session closed without agreement: nothing was signed.
    Unsigned,
}

impl Status {
    /// `valid`, `invalid`, `unverifiable` or `unsigned`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Valid => "valid",
            Status::Invalid => "invalid",
            Status::Unverifiable => "unverifiable",
            Status::Unsigned => "unsigned",
        }
    }
}

/// Who signed, by the pinned keys (never by what the receipt claims).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signer {
    /// A pinned arbiter key.
    Pinned {
        /// Its kid.
        kid: String,
        /// Whose it is.
        label: String,
        /// Live or test.
        mode: Mode,
    },
    /// Not a pinned key (or no key at all).
    Unknown,
}

/// The outcome of verifying one receipt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verification {
    /// True only when the receipt is proof: every check that ran holds, the
    /// signature is valid and the signer pinned (and, for a test key, test
    /// receipts are allowed).
    pub proof: bool,
    /// What the signature says.
    pub status: Status,
    /// The protected header's kid, when it has a string one.
    pub kid: Option<String>,
    /// Who signed.
    pub signer: Signer,
    /// The seven checks, in order.
    pub checks: Vec<Check>,
    /// `signed_payload.final_terms` when it is an object and the receipt
    /// carries an artifact: the only terms to act on (when proof).
    pub signed_terms: Option<Value>,
    /// `signed_payload.session.session_id` when it is a string and the
    /// receipt carries an artifact.
    pub signed_session_id: Option<String>,
    /// Whether test receipts were allowed.
    pub allow_test: bool,
}

impl Verification {
    /// The outcome of one check (`verify` reports all seven).
    pub fn check(&self, id: CheckId) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// One sentence for a person: proof or not, and why.
    pub fn headline(&self) -> String {
        if self.proof {
            let unchecked = if self.check(CheckId::Chain).is_some_and(|c| c.skipped) {
                " The session log was not checked."
            } else {
                ""
            };
            let proof = match &self.signer {
                Signer::Pinned { label, mode: Mode::Test, .. } => format!(
                    "Proof for testing only: signed by {label}'s test-mode key, accepted because test receipts are allowed; it proves nothing to a third party."
                ),
                Signer::Pinned { label, .. } => {
                    format!("Proof: signed by {label}'s live key, and every check that ran holds.")
                }
                Signer::Unknown => "Proof.".to_owned(),
            };
            return proof + unchecked;
        }
        if self.status == Status::Unsigned {
            return "Not proof: the session closed without an agreement, so nothing was signed."
                .to_owned();
        }
        match self.checks.iter().find(|c| !c.ok && !c.skipped) {
            Some(failed) => format!(
                "NOT PROOF ({} check): {}",
                failed.id.as_str(),
                failed.detail
            ),
            None => "NOT PROOF: the signature is not verified under a pinned key.".to_owned(),
        }
    }
}

/// What the caller trusts: the pinned keys and whether test receipts count.
#[derive(Debug, Clone, Copy)]
pub struct Trust<'a> {
    /// The arbiter keys a signer must be.
    pub pins: &'a PinnedKeys,
    /// Whether a receipt signed by a pinned test-mode key may be proof.
    pub allow_test: bool,
}

/// Verifies `receipt` (and its session log, when given) offline, exactly as
/// RECEIPTS.md describes, with every check reported.
pub fn verify(
    receipt: &Map<String, Value>,
    log: Option<&[Value]>,
    trust: Trust<'_>,
) -> Verification {
    let mut found = Found::default();
    let artifact = receipt.get("artifact").and_then(Value::as_object);
    let payload = receipt.get("signed_payload").and_then(Value::as_object);
    let mut checks: Vec<Check> = match (artifact, payload) {
        (Some(artifact), Some(payload)) => signed(receipt, artifact, payload, trust, &mut found),
        _ => unsigned(receipt, &mut found),
    };
    checks.push(chain(receipt, log, payload));

    let proof = checks.iter().all(|c| c.ok || c.skipped)
        && found.signature_ok
        && matches!(found.signer, Signer::Pinned { .. });
    // A payload without an artifact was never signed: it names nothing.
    let signed = payload.filter(|_| artifact.is_some());
    let signed_session_id = signed
        .and_then(|p| p.get("session"))
        .and_then(|s| s.get("session_id"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Verification {
        proof,
        status: found.status,
        kid: found.kid,
        signer: found.signer,
        checks,
        signed_terms: signed
            .and_then(|p| p.get("final_terms"))
            .filter(|t| t.is_object())
            .cloned(),
        signed_session_id,
        allow_test: trust.allow_test,
    }
}

struct Found {
    status: Status,
    kid: Option<String>,
    signature_ok: bool,
    signer: Signer,
}

impl Default for Found {
    fn default() -> Self {
        Self {
            status: Status::Unsigned,
            kid: None,
            signature_ok: false,
            signer: Signer::Unknown,
        }
    }
}

/// No signed artifact (or no signed payload): unsigned when the session
/// closed, unverifiable when the receipt says it agreed.
fn unsigned(receipt: &Map<String, Value>, found: &mut Found) -> Vec<Check> {
    let agreed = receipt.get("state").and_then(Value::as_str) == Some("agreed");
    let mut checks = Vec::with_capacity(7);
    if agreed {
        found.status = Status::Unverifiable;
        checks.push(Check::fail(
            CheckId::Header,
            "The receipt claims an agreement but holds no signed artifact with its payload.",
        ));
        checks.push(Check::skip(
            CheckId::Key,
            "There is no artifact, so no key to look up.",
        ));
        checks.push(Check::fail(
            CheckId::Signature,
            "There is no signature over the agreement, so nothing proves it.",
        ));
    } else {
        checks.push(Check::skip(
            CheckId::Header,
            "The session closed without an agreement, so nothing was signed.",
        ));
        checks.push(Check::skip(
            CheckId::Key,
            "There is no artifact, so no key to look up.",
        ));
        checks.push(Check::skip(
            CheckId::Signature,
            "Nothing was signed, so there is nothing to verify.",
        ));
    }
    no_signer(&mut checks, "There is no signature, so no signer.");
    checks.push(Check::skip(
        CheckId::Terms,
        "Nothing was signed, so there are no signed terms.",
    ));
    checks
}

fn signed(
    receipt: &Map<String, Value>,
    artifact: &Map<String, Value>,
    payload: &Map<String, Value>,
    trust: Trust<'_>,
    found: &mut Found,
) -> Vec<Check> {
    let mut checks = Vec::with_capacity(7);
    let protected = artifact.get("protected").and_then(Value::as_str);
    let header = protected.map(read_header);
    found.kid = match &header {
        Some(Ok(h)) => h.get("kid").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    let problems = match (&header, protected) {
        (Some(Ok(h)), _) => header_problems(h),
        (Some(Err(problem)), _) => vec![problem.clone()],
        (None, _) => vec!["there is no protected header (a string)".to_owned()],
    };
    match (problems.is_empty(), found.kid.clone(), protected) {
        (true, Some(kid), Some(protected)) => {
            checks.push(Check::pass(
                CheckId::Header,
                format!(
                    "EdDSA over a detached, unencoded payload (b64 false, crit [\"b64\"]), key id {}.",
                    shown(&kid)
                ),
            ));
            key_signature_signer_mode(
                receipt,
                artifact,
                payload,
                protected,
                &kid,
                trust,
                found,
                &mut checks,
            );
        }
        _ => {
            found.status = Status::Unverifiable;
            checks.push(Check::fail(
                CheckId::Header,
                format!(
                    "The protected header does not declare EdDSA over a detached, unencoded payload under a key id: {}.",
                    problems.join("; ")
                ),
            ));
            checks.push(Check::skip(
                CheckId::Key,
                "Without a well-formed header there is no kid to look up.",
            ));
            checks.push(Check::fail(
                CheckId::Signature,
                "No signature can be verified without a well-formed header.",
            ));
            no_signer(
                &mut checks,
                "Without a verifiable signature there is no signer.",
            );
        }
    }
    checks.push(terms(receipt, payload));
    checks
}

/// The header as a JSON object: RFC 7515's UTF-8 JSON under strict base64url.
fn read_header(protected: &str) -> Result<Map<String, Value>, String> {
    let bytes = jcs::b64url::decode(protected)
        .map_err(|_| "the protected header is not unpadded base64url".to_owned())?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(header)) => Ok(header),
        Ok(_) => Err("the protected header is not a JSON object".to_owned()),
        Err(_) => Err("the protected header is not UTF-8 JSON".to_owned()),
    }
}

fn header_problems(header: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    match header.get("alg") {
        Some(Value::String(alg)) if alg == "EdDSA" => {}
        Some(other) => problems.push(format!(
            "alg is {}, not \"EdDSA\"",
            shown(&other.to_string())
        )),
        None => problems.push("there is no alg".to_owned()),
    }
    match header.get("b64") {
        Some(Value::Bool(false)) => {}
        Some(other) => problems.push(format!(
            "b64 is {}, not false (an unencoded payload)",
            shown(&other.to_string())
        )),
        None => {
            problems.push("b64 is missing, so the payload would be base64url-encoded".to_owned())
        }
    }
    match header.get("crit") {
        Some(Value::Array(crit)) if crit.len() == 1 && crit[0] == "b64" => {}
        Some(other) => problems.push(format!(
            "crit is {}, not [\"b64\"]",
            shown(&other.to_string())
        )),
        None => problems.push("crit is missing; it must be [\"b64\"]".to_owned()),
    }
    match header.get("kid") {
        Some(Value::String(_)) => {}
        Some(other) => problems.push(format!(
            "kid is {}, not a string",
            shown(&other.to_string())
        )),
        None => problems.push("there is no kid".to_owned()),
    }
    problems
}

/// The embedded keys under `kid` (objects in `jwks.keys` whose kid is it).
fn embedded<'a>(receipt: &'a Map<String, Value>, kid: &str) -> Vec<&'a Map<String, Value>> {
    receipt
        .get("jwks")
        .and_then(Value::as_object)
        .and_then(|jwks| jwks.get("keys"))
        .and_then(Value::as_array)
        .map(|keys| {
            keys.iter()
                .filter_map(Value::as_object)
                .filter(|k| k.get("kid").and_then(Value::as_str) == Some(kid))
                .collect()
        })
        .unwrap_or_default()
}

fn is_ed25519(jwk: &Map<String, Value>) -> bool {
    jwk.get("kty").and_then(Value::as_str) == Some("OKP")
        && jwk.get("crv").and_then(Value::as_str) == Some("Ed25519")
}

#[allow(clippy::too_many_arguments)]
fn key_signature_signer_mode(
    receipt: &Map<String, Value>,
    artifact: &Map<String, Value>,
    payload: &Map<String, Value>,
    protected: &str,
    kid: &str,
    trust: Trust<'_>,
    found: &mut Found,
    checks: &mut Vec<Check>,
) {
    let keys = embedded(receipt, kid);
    let k = shown(kid);
    let key_problem = match keys.as_slice() {
        [] => Some(format!("The receipt's jwks holds no key with the kid {k}.")),
        [jwk] if !is_ed25519(jwk) => Some(format!(
            "The key {k} is not an Ed25519 key: kty is {}, crv is {}.",
            jwk.get("kty")
                .map_or("missing".to_owned(), |v| shown(&v.to_string())),
            jwk.get("crv")
                .map_or("missing".to_owned(), |v| shown(&v.to_string()))
        )),
        [jwk] if !jwk.get("x").is_some_and(Value::is_string) => {
            Some(format!("The key {k} has no public point x (a string)."))
        }
        [_] => None,
        many => Some(format!(
            "The receipt's jwks holds {} keys with the kid {k}; it must hold exactly one.",
            many.len()
        )),
    };
    let (Some(jwk), None) = (keys.first(), &key_problem) else {
        found.status = Status::Unverifiable;
        checks.push(Check::fail(CheckId::Key, key_problem.unwrap_or_default()));
        checks.push(Check::fail(
            CheckId::Signature,
            "No signature can be verified without the key.",
        ));
        no_signer(checks, "Without a verifiable signature there is no signer.");
        return;
    };
    checks.push(Check::pass(
        CheckId::Key,
        format!("Exactly one Ed25519 key, {k}, is embedded under the header's kid."),
    ));

    let x = jwk.get("x").and_then(Value::as_str).unwrap_or_default();
    let signature = verify_signature(x, artifact.get("signature"), protected, payload);
    found.signature_ok = signature.is_ok();
    found.status = if found.signature_ok {
        Status::Valid
    } else {
        Status::Invalid
    };
    checks.push(match signature {
        Ok(()) => Check::pass(
            CheckId::Signature,
            "The Ed25519 signature holds over the protected header, a dot and the canonical signed payload.",
        ),
        Err(why) => Check::fail(CheckId::Signature, why),
    });

    let pinned = trust.pins.get(kid);
    match pinned {
        Some(pin) if pin.x == x => {
            found.signer = Signer::Pinned {
                kid: kid.to_owned(),
                label: pin.label.clone(),
                mode: pin.mode,
            };
            checks.push(Check::pass(
                CheckId::Signer,
                format!(
                    "The key is {}'s pinned {} key {k}.",
                    pin.label,
                    pin.mode.as_str()
                ),
            ));
            checks.push(match (pin.mode, trust.allow_test) {
                (Mode::Live, _) => Check::pass(CheckId::Mode, "A live key: the receipt is not a sandbox one."),
                (Mode::Test, true) => Check::pass(
                    CheckId::Mode,
                    "A test-mode (sandbox) key, accepted because test receipts are allowed; to a third party it proves nothing.",
                ),
                (Mode::Test, false) => Check::fail(
                    CheckId::Mode,
                    "A test-mode (sandbox) key: test keys are free to anyone, so this receipt is proof only when test receipts are allowed.",
                ),
            });
        }
        Some(pin) => {
            checks.push(Check::fail(
                CheckId::Signer,
                format!(
                    "The kid {k} is {}'s, but the embedded key is not the pinned one: some other key signed under that kid.",
                    pin.label
                ),
            ));
            checks.push(Check::skip(
                CheckId::Mode,
                "The signer is not pinned, so there is no mode to weigh.",
            ));
        }
        None => {
            checks.push(Check::fail(
                CheckId::Signer,
                format!(
                    "The key {k} is not a pinned arbiter key: any key can sign, so the signature says nothing about who made the receipt."
                ),
            ));
            checks.push(Check::skip(
                CheckId::Mode,
                "The signer is not pinned, so there is no mode to weigh.",
            ));
        }
    }
}

/// Ed25519 (RFC 8032) over `protected`, `.`, JCS of `payload` (RFC 7797).
fn verify_signature(
    x: &str,
    signature: Option<&Value>,
    protected: &str,
    payload: &Map<String, Value>,
) -> Result<(), String> {
    let point: [u8; 32] = jcs::b64url::decode(x)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or(
            "The signature does not verify: the key's x is not the unpadded base64url of 32 bytes.",
        )?;
    let key = VerifyingKey::from_bytes(&point)
        .map_err(|_| "The signature does not verify: the key's x is not a point on Ed25519.")?;
    let signature: [u8; 64] = signature
        .and_then(Value::as_str)
        .and_then(|s| jcs::b64url::decode(s).ok())
        .and_then(|b| b.try_into().ok())
        .ok_or("The signature does not verify: it is not the unpadded base64url of 64 bytes.")?;
    let payload = canonical_bytes(&Value::Object(payload.clone())).map_err(|_| {
        "The signature does not verify: the signed payload holds an integer beyond ±(2^53 − 1), which canonical JSON refuses."
    })?;
    let mut input = Vec::with_capacity(protected.len() + 1 + payload.len());
    input.extend_from_slice(protected.as_bytes());
    input.push(b'.');
    input.extend_from_slice(&payload);
    key.verify(&input, &Signature::from_bytes(&signature)).map_err(|_| {
        "The signature does not verify: the payload, the signature or the key has changed since signing.".to_owned()
    })
}

fn terms(receipt: &Map<String, Value>, payload: &Map<String, Value>) -> Check {
    let canonical = |v: Option<&Value>| canonical_bytes(v.unwrap_or(&Value::Null)).ok();
    let stated = canonical(receipt.get("final_terms"));
    let signed = canonical(payload.get("final_terms"));
    let terms_ok = stated.is_some() && stated == signed;
    let session = payload.get("session").filter(|s| s.is_object());
    let id_ok = same(
        session.and_then(|s| s.get("session_id")),
        receipt.get("session_id"),
    );
    match (terms_ok, id_ok) {
        (true, true) => Check::pass(CheckId::Terms, "The receipt's final_terms and session_id equal the signed ones."),
        (false, true) => Check::fail(
            CheckId::Terms,
            "The receipt's final_terms are not the signed ones: act only on signed_payload.final_terms.",
        ),
        (true, false) => Check::fail(CheckId::Terms, "The receipt names another session than the one signed."),
        (false, false) => Check::fail(
            CheckId::Terms,
            "Neither the receipt's final_terms nor its session_id are the signed ones.",
        ),
    }
}

fn chain(
    receipt: &Map<String, Value>,
    log: Option<&[Value]>,
    payload: Option<&Map<String, Value>>,
) -> Check {
    let claim = receipt.get("chain").and_then(Value::as_object);
    let Some(log) = log else {
        let named = claim.and_then(|c| {
            let head = c.get("head")?.as_str()?;
            let length = c.get("length").map_or("?".to_owned(), Value::to_string);
            let head: String = head.chars().take(23).collect();
            Some(format!(
                " (the receipt names head {}… and {} envelopes)",
                shown(&head),
                shown(&length)
            ))
        });
        return Check::skip(
            CheckId::Chain,
            format!(
                "Not checked: no session log was given{}.",
                named.unwrap_or_default()
            ),
        );
    };
    // As the publisher reads it: an empty signed payload names no session.
    let session = payload
        .filter(|p| !p.is_empty())
        .and_then(|p| p.get("session"))
        .and_then(Value::as_object);
    match verify_log(log, claim, session) {
        Ok(n) => {
            let named = claim.is_some_and(|c| !c.is_empty());
            Check::of(
                CheckId::Chain,
                true,
                if named {
                    format!("{n} envelopes, each linked to the one before; the last is the head the receipt names, and the signed head is the envelope before session.agree.")
                } else {
                    format!("{n} envelopes, each linked to the one before, and the signed head is the envelope before session.agree; the receipt names no head or length to compare.")
                },
            )
        }
        Err(failure) => {
            let mut sentence = failure.to_string();
            if let Some(first) = sentence.get(..1) {
                sentence = first.to_uppercase() + &sentence[1..];
            }
            Check::fail(CheckId::Chain, format!("{sentence}."))
        }
    }
}
