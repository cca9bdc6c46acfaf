//! The ApprovalReceipt (schema v0.5, SPEC §9.6.4b): build and sign one for a
//! person, verify any.
//!
//! Countersign's conventions (DESIGN.md): the approver is the `did:key` of
//! their key; `id` is `urn:countersign:receipt:<uuid>`; `scope.offer_hash`
//! is the hash of the whole signed message that carried the offer (so it
//! equals that message's chain hash); amounts are exact decimal strings with
//! their currency; `references` names the session with relationship
//! `approves`; `expires_at` is always set.

use std::fmt;
use std::str::FromStr;

use ed25519_dalek::{SigningKey, VerifyingKey};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{datetime, did_key, edges, keys, schema};

/// The person's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Go ahead with the offer.
    Approve,
    /// Do not; binding the same way an approval is.
    Deny,
}

impl Decision {
    /// The wire word (`approve` / `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Deny => "deny",
        }
    }
}

/// An exact amount with its ISO 4217 currency, written `"150000.00 USD"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    /// The value, exactly as decided (scale kept: `150000.00`).
    pub value: Decimal,
    /// Three upper-case letters.
    pub currency: String,
}

/// An amount text that is not `"<decimal> <CUR>"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an amount written as \"<decimal> <ISO 4217 code>\" (e.g. \"150000.00 USD\")")]
pub struct AmountError(pub String);

impl FromStr for Amount {
    type Err = AmountError;
    fn from_str(text: &str) -> Result<Amount, AmountError> {
        let err = || AmountError(text.to_owned());
        let (value, currency) = text.split_once(' ').ok_or_else(err)?;
        if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(err());
        }
        if value.is_empty()
            || !value
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
        {
            return Err(err());
        }
        let value = Decimal::from_str_exact(value).map_err(|_| err())?;
        Ok(Amount {
            value,
            currency: currency.to_owned(),
        })
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.value, self.currency)
    }
}

/// What a person decided, before it is signed.
#[derive(Debug, Clone)]
pub struct ReceiptDraft {
    /// Fresh per receipt: the `id` becomes `urn:countersign:receipt:<uuid>`.
    pub receipt_uuid: Uuid,
    /// When the person decided.
    pub issued_at: OffsetDateTime,
    /// When the receipt stops counting: the offer's `valid_until`, or the
    /// policy's window when earlier. Must be after `issued_at`.
    pub expires_at: OffsetDateTime,
    /// Approve or deny.
    pub decision: Decision,
    /// The whole signed message that carried the offer (signature included).
    pub offer_message: Value,
    /// The amount decided on.
    pub amount: Amount,
    /// The org policy's threshold the offer crossed, same currency.
    pub threshold_crossed: Amount,
    /// The negotiation session (`urn:concordia:session:<session_id>`).
    pub session_id: String,
    /// The approver's role label, if the org has one.
    pub role: Option<String>,
    /// When the approver decides as a stand-in: for whom, under which
    /// delegation (`approver.on_behalf_of`, which the schema's open
    /// `approver` object admits).
    pub on_behalf_of: Option<OnBehalfOf>,
}

/// A stand-in's decision, named in the receipt it signs: "Grace, for Ann
/// as Finance".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnBehalfOf {
    /// The holder decided for (their email, as the host knows them).
    pub person: String,
    /// The delegation (`urn:countersign:delegation:<id>`).
    pub delegation: String,
}

/// When a receipt should expire (DESIGN.md): the offer's own `valid_until`,
/// or the end of the policy's approval window when that is earlier.
pub fn receipt_expiry(
    offer_valid_until: Option<OffsetDateTime>,
    policy_until: OffsetDateTime,
) -> OffsetDateTime {
    match offer_valid_until {
        Some(v) if v < policy_until => v,
        _ => policy_until,
    }
}

/// Why a receipt could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// `expires_at` not after `issued_at`.
    #[error("the receipt would expire ({expires_at}) no later than it is issued ({issued_at})")]
    ExpiresBeforeIssued {
        /// As written.
        issued_at: String,
        /// As written.
        expires_at: String,
    },
    /// Amount and threshold in different currencies.
    #[error(
        "the amount is in {amount} but the threshold is in {threshold}: they must share a currency"
    )]
    CurrencyMismatch {
        /// The amount's currency.
        amount: String,
        /// The threshold's currency.
        threshold: String,
    },
    /// The offer message has no canonical form.
    #[error("the offer message cannot be canonicalized: {0}")]
    Canonical(#[from] jcs::JcsError),
    /// The session id is empty.
    #[error("the session id is empty")]
    EmptySession,
}

/// Builds the unsigned receipt for `draft`, approved by `approver`,
/// referencing the Concordia session `urn:concordia:session:<session_id>`.
pub fn build_receipt(draft: &ReceiptDraft, approver: &VerifyingKey) -> Result<Value, BuildError> {
    let session = format!("urn:concordia:session:{}", draft.session_id);
    build_receipt_referencing(draft, approver, &session)
}

/// As [`build_receipt`], referencing the negotiation session by `session`,
/// the URN of its own protocol (an OANP session is
/// `urn:oanp:session:<session_id>`).
pub fn build_receipt_referencing(
    draft: &ReceiptDraft,
    approver: &VerifyingKey,
    session: &str,
) -> Result<Value, BuildError> {
    if draft.expires_at <= draft.issued_at {
        return Err(BuildError::ExpiresBeforeIssued {
            issued_at: datetime::format_utc(draft.issued_at),
            expires_at: datetime::format_utc(draft.expires_at),
        });
    }
    if draft.amount.currency != draft.threshold_crossed.currency {
        return Err(BuildError::CurrencyMismatch {
            amount: draft.amount.currency.clone(),
            threshold: draft.threshold_crossed.currency.clone(),
        });
    }
    if draft.session_id.is_empty() {
        return Err(BuildError::EmptySession);
    }
    let mut approver_obj = json!({ "identity": did_key::encode(approver) });
    if let Some(role) = &draft.role {
        approver_obj["role"] = json!(role);
    }
    if let Some(stand_in) = &draft.on_behalf_of {
        approver_obj["on_behalf_of"] = json!({
            "person": stand_in.person,
            "delegation": stand_in.delegation,
        });
    }
    Ok(json!({
        "artifact_type": "ApprovalReceipt",
        "id": format!("urn:countersign:receipt:{}", draft.receipt_uuid),
        "issued_at": datetime::format_utc(draft.issued_at),
        "expires_at": datetime::format_utc(draft.expires_at),
        "approver": approver_obj,
        "scope": {
            "decision": draft.decision.as_str(),
            "offer_hash": edges::hash(&draft.offer_message)?,
            "amount": draft.amount.to_string(),
            "threshold_crossed": draft.threshold_crossed.to_string(),
        },
        "references": [{
            "type": "negotiation_session",
            "id": session,
            "relationship": "approves",
        }],
    }))
}

/// Signs a built receipt: Ed25519 over JCS of the receipt without
/// `signature`, padded base64url (what the reference SDK verifies).
pub fn sign_receipt(mut receipt: Value, key: &SigningKey) -> Result<Value, BuildError> {
    let preimage = edges::canonical(&edges::without_top_level(&receipt, "signature"))?;
    let value = keys::sign(key, preimage.as_bytes());
    receipt["signature"] = json!({ "alg": "Ed25519", "value": value });
    Ok(receipt)
}

/// One check of a receipt's verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptCheck {
    /// Valid against `approval_receipt.schema.json` (v0.5).
    Schema,
    /// A `references[]` entry with `relationship: approves` for a negotiation session.
    ApprovesReference,
    /// `signature.alg` is `Ed25519`.
    Algorithm,
    /// A `did:key` approver names the key that verifies the receipt.
    Identity,
    /// The signature verifies over the receipt without `signature`.
    Signature,
    /// `expires_at` is not before now.
    NotExpired,
    /// No revocation record given revokes the receipt or what it references.
    NotRevoked,
    /// `scope.offer_hash` is the hash of the offer presented.
    OfferHash,
}

impl ReceiptCheck {
    /// A stable name for reports and `--json`.
    pub fn name(self) -> &'static str {
        match self {
            ReceiptCheck::Schema => "schema",
            ReceiptCheck::ApprovesReference => "approves_reference",
            ReceiptCheck::Algorithm => "algorithm",
            ReceiptCheck::Identity => "identity",
            ReceiptCheck::Signature => "signature",
            ReceiptCheck::NotExpired => "not_expired",
            ReceiptCheck::NotRevoked => "not_revoked",
            ReceiptCheck::OfferHash => "offer_hash",
        }
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutcome {
    /// Which check.
    pub check: ReceiptCheck,
    /// Passed.
    pub ok: bool,
    /// A sentence saying what was found.
    pub detail: String,
}

/// Every check of a receipt, in order, each reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptReport {
    /// The receipt's `id`, when it has one.
    pub receipt_id: Option<String>,
    /// The decision it records, when readable.
    pub decision: Option<Decision>,
    /// Each check run.
    pub checks: Vec<CheckOutcome>,
}

impl ReceiptReport {
    /// True when every check passed.
    pub fn is_valid(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.ok)
    }

    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &CheckOutcome> {
        self.checks.iter().filter(|c| !c.ok)
    }

    fn push(&mut self, check: ReceiptCheck, ok: bool, detail: impl Into<String>) {
        self.checks.push(CheckOutcome {
            check,
            ok,
            detail: detail.into(),
        });
    }
}

/// True when `references` holds an `approves` entry for a negotiation session.
pub fn has_approves_reference(receipt: &Value) -> bool {
    receipt
        .get("references")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|r| {
                r.get("relationship").and_then(Value::as_str) == Some("approves")
                    && matches!(
                        r.get("type").and_then(Value::as_str),
                        Some("negotiation_session" | "a2cn:negotiation_session")
                    )
            })
        })
}

/// Verifies any ApprovalReceipt against the offer presented with it, at `now`.
///
/// `issuer` is the signer's key when known out of band; otherwise the
/// approver's `did:key` supplies it (a `did:web` approver then fails the
/// signature check, naming why). `revocations` are RevocationRecords the
/// caller holds (already verified): one naming the receipt or a referenced
/// artifact, effective at or before `now`, revokes it.
pub fn verify_receipt(
    receipt: &Value,
    offer: &Value,
    issuer: Option<&VerifyingKey>,
    now: OffsetDateTime,
    revocations: &[Value],
) -> ReceiptReport {
    let mut report = ReceiptReport {
        receipt_id: receipt.get("id").and_then(Value::as_str).map(str::to_owned),
        decision: match receipt.pointer("/scope/decision").and_then(Value::as_str) {
            Some("approve") => Some(Decision::Approve),
            Some("deny") => Some(Decision::Deny),
            _ => None,
        },
        checks: Vec::new(),
    };

    let schema_errors = match schema::approval_receipt() {
        Some(s) => s.errors(receipt),
        None => vec!["the vendored approval_receipt schema could not be compiled".to_owned()],
    };
    report.push(
        ReceiptCheck::Schema,
        schema_errors.is_empty(),
        if schema_errors.is_empty() {
            "valid against approval_receipt.schema.json v0.5".to_owned()
        } else {
            format!(
                "not a valid v0.5 ApprovalReceipt: {}",
                schema_errors.join("; ")
            )
        },
    );

    let approves = has_approves_reference(receipt);
    report.push(
        ReceiptCheck::ApprovesReference,
        approves,
        if approves {
            "references the negotiation session it approves"
        } else {
            "no references[] entry with relationship \"approves\" and type negotiation_session"
        },
    );

    let alg = receipt.pointer("/signature/alg").and_then(Value::as_str);
    report.push(
        ReceiptCheck::Algorithm,
        alg == Some("Ed25519"),
        match alg {
            Some("Ed25519") => "signature.alg is Ed25519".to_owned(),
            Some(other) => format!("signature.alg is {other:?}, not Ed25519"),
            None => "no signature.alg".to_owned(),
        },
    );

    let identity = receipt
        .pointer("/approver/identity")
        .and_then(Value::as_str);
    let did_key = identity
        .filter(|i| i.starts_with("did:key:"))
        .map(did_key::decode);
    let key: Option<VerifyingKey> = match (issuer, &did_key) {
        (Some(k), _) => Some(*k),
        (None, Some(Ok(k))) => Some(*k),
        _ => None,
    };
    match (&did_key, issuer) {
        (Some(Err(e)), _) => report.push(
            ReceiptCheck::Identity,
            false,
            format!("approver.identity: {e}"),
        ),
        (Some(Ok(named)), Some(given)) if named != given => report.push(
            ReceiptCheck::Identity,
            false,
            "approver.identity is the did:key of another key than the one given for the issuer",
        ),
        (Some(Ok(_)), _) => report.push(
            ReceiptCheck::Identity,
            true,
            "approver.identity is the signing key's did:key",
        ),
        (None, Some(_)) => report.push(
            ReceiptCheck::Identity,
            true,
            "the issuer's key was given out of band",
        ),
        (None, None) => report.push(
            ReceiptCheck::Identity,
            false,
            "no key to verify with: approver.identity is not a did:key and no issuer key was given",
        ),
    }

    let signature = receipt.pointer("/signature/value").and_then(Value::as_str);
    let preimage = edges::canonical(&edges::without_top_level(receipt, "signature"));
    let sig_ok = match (&key, signature, &preimage) {
        (Some(k), Some(s), Ok(p)) => keys::verify(k, p.as_bytes(), s),
        _ => false,
    };
    report.push(
        ReceiptCheck::Signature,
        sig_ok,
        match (&key, signature, &preimage) {
            (_, _, Err(e)) => format!("the receipt has no canonical form: {e}"),
            (_, None, _) => "no signature.value".to_owned(),
            (None, _, _) => "no key to verify the signature with".to_owned(),
            _ if sig_ok => "the Ed25519 signature verifies".to_owned(),
            _ => "the Ed25519 signature does not verify over the receipt without its signature"
                .to_owned(),
        },
    );

    match receipt
        .get("expires_at")
        .and_then(Value::as_str)
        .map(datetime::parse)
    {
        Some(Ok(expires)) => report.push(
            ReceiptCheck::NotExpired,
            expires >= now,
            if expires >= now {
                format!("valid until {}", datetime::format_utc(expires))
            } else {
                format!(
                    "expired at {}, before {}",
                    datetime::format_utc(expires),
                    datetime::format_utc(now)
                )
            },
        ),
        Some(Err(e)) => report.push(ReceiptCheck::NotExpired, false, format!("expires_at: {e}")),
        None => report.push(
            ReceiptCheck::NotExpired,
            false,
            "no expires_at: a receipt without an end is refused",
        ),
    }

    if !revocations.is_empty() {
        let revoked = crate::revocation::find_revocation(receipt, revocations, now);
        report.push(
            ReceiptCheck::NotRevoked,
            revoked.is_none(),
            match revoked {
                Some(id) => format!("revoked by {id}"),
                None => format!(
                    "none of the {} revocation records given applies",
                    revocations.len()
                ),
            },
        );
    }

    let claimed = receipt.pointer("/scope/offer_hash").and_then(Value::as_str);
    match edges::hash(offer) {
        Ok(actual) => report.push(
            ReceiptCheck::OfferHash,
            claimed == Some(actual.as_str()),
            if claimed == Some(actual.as_str()) {
                "scope.offer_hash is the hash of the offer presented".to_owned()
            } else {
                format!(
                    "scope.offer_hash {} is not the hash of the offer presented ({actual})",
                    claimed.unwrap_or("(missing)")
                )
            },
        ),
        Err(e) => report.push(
            ReceiptCheck::OfferHash,
            false,
            format!("the offer has no canonical form: {e}"),
        ),
    }
    report
}
