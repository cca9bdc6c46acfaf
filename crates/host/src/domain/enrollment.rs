//! `POST /enroll`: a one-time, unexpired code plus proof of possession
//! makes an approver of the code's org. The code is spent by the store in
//! the same step that stores the approver, so it works exactly once even
//! when two processes receive it at once.

use anp::api::EnrollRequest;
use anp::keys;
use anp::signed;
use time::OffsetDateTime;

use super::negotiation::plausible_email;
use super::DomainError;
use crate::ids;
use crate::store::{ApproverRow, CodeRow};

/// The refusal for an unknown, spent or expired code (one sentence for all).
pub fn bad_code() -> DomainError {
    DomainError::BadEnrollmentCode(
        "The enrollment code is unknown, already used or expired; ask the host's admin for a new one.".into(),
    )
}

/// Checks the proof of possession (before the code is even looked up).
pub fn check_proof(req: &EnrollRequest) -> Result<(), DomainError> {
    let key = keys::parse_public_key(&req.public_key)
        .map_err(|e| DomainError::Invalid(format!("public_key: {e}.")))?;
    if !keys::verify_b64(
        &key,
        signed::registration_proof_string(&req.public_key).as_bytes(),
        &req.proof,
    ) {
        return Err(DomainError::BadProof(
            "proof is not a valid signature by public_key over \"ANP/0.1\\nregister\\n<public_key>\".".into(),
        ));
    }
    Ok(())
}

/// Checks the request against the code found under its hash and answers
/// the approver to store when the code is spent.
pub fn approver(
    req: &EnrollRequest,
    code: Option<CodeRow>,
    now: OffsetDateTime,
) -> Result<ApproverRow, DomainError> {
    let key = keys::parse_public_key(&req.public_key)
        .map_err(|e| DomainError::Invalid(format!("public_key: {e}.")))?;
    let Some(code) = code else {
        return Err(bad_code());
    };
    if code.used || code.expires_at <= now.unix_timestamp() {
        return Err(bad_code());
    }
    if !plausible_email(&req.email) || !req.email.eq_ignore_ascii_case(&code.email) {
        return Err(DomainError::Invalid(format!(
            "email must be the address the code was issued for ({}).",
            code.email
        )));
    }
    if req.name.trim().is_empty() || req.name.chars().count() > 160 {
        return Err(DomainError::Invalid(
            "name must be 1 to 160 characters.".into(),
        ));
    }
    Ok(ApproverRow {
        id: ids::uuid(),
        org_handle: code.org_handle,
        name: req.name.trim().to_owned(),
        email: code.email,
        public_key: req.public_key.clone(),
        fingerprint: keys::fingerprint(&key),
        enrolled_at: anp::api::format_timestamp(now),
        revoked_at: None,
    })
}
