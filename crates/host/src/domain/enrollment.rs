//! `POST /enroll`: a one-time, unexpired code plus proof of possession
//! makes an approver of the code's org. The code is spent by the store in
//! the same step that stores the approver, so it works exactly once even
//! when two processes receive it at once.

use anp::keys;
use anp::signed;
use countersign_host_api::approver::EnrollRequest;
use countersign_host_api::gate::GateEnrollRequest;
use countersign_host_api::signing::{self, EnrollRole};
use time::OffsetDateTime;

use super::negotiation::plausible_email;
use super::DomainError;
use crate::ids;
use crate::store::{ApproverRow, CodeRow, GateAgentRow, GateCodeRow};

/// The refusal for an unknown, spent or expired code (one sentence for all).
pub fn bad_code() -> DomainError {
    DomainError::BadEnrollmentCode(
        "The enrollment code is unknown, already used or expired; ask the host's admin for a new one.".into(),
    )
}

/// What an enrollment proof claims: who enrolls, with which code and key,
/// and, for version 2, at which host.
pub struct Claim<'a> {
    /// Approver or gate agent (which route was called).
    pub role: EnrollRole,
    /// The one-time code sent.
    pub code: &'a str,
    /// The key to enroll.
    pub public_key: &'a str,
    /// Its signature.
    pub proof: &'a str,
    /// `Some(2)` for a version 2 proof, `None` for version 1.
    pub proof_version: Option<u32>,
    /// The authority a version 2 proof names.
    pub authority: Option<&'a str>,
}

impl<'a> Claim<'a> {
    /// An approver's enrollment.
    pub fn approver(req: &'a EnrollRequest) -> Claim<'a> {
        Claim {
            role: EnrollRole::Approver,
            code: &req.code,
            public_key: &req.public_key,
            proof: &req.proof,
            proof_version: req.proof_version,
            authority: req.authority.as_deref(),
        }
    }

    /// A gate agent's enrollment.
    pub fn gate_agent(req: &'a GateEnrollRequest) -> Claim<'a> {
        Claim {
            role: EnrollRole::GateAgent,
            code: &req.code,
            public_key: &req.public_key,
            proof: &req.proof,
            proof_version: req.proof_version,
            authority: req.authority.as_deref(),
        }
    }
}

/// Checks the proof of possession (before the code is even looked up).
/// Version 2 binds it to the role, this host (`authority`, one of
/// `own_authorities`) and the code, so a proof captured from one
/// enrollment enrolls nothing else; version 1 (ANP/0.1's registration
/// string, the same for every code, role and host) only while
/// `accept_v1` holds, and each use is logged.
pub fn check_proof(
    claim: &Claim<'_>,
    own_authorities: &[String],
    accept_v1: bool,
) -> Result<(), DomainError> {
    let key = keys::parse_public_key(claim.public_key)
        .map_err(|e| DomainError::Invalid(format!("public_key: {e}.")))?;
    match claim.proof_version {
        None if accept_v1 => {
            check_possession(claim.public_key, claim.proof)?;
            tracing::warn!(
                role = claim.role.as_str(),
                "accepted a version 1 enrollment proof (transition; --accept-v1-signatures false refuses it)"
            );
            Ok(())
        }
        None => Err(DomainError::BadProof(
            "this host no longer accepts version 1 proofs: send proof_version 2, a signature over \"countersign/enroll/v2\\n<role>\\n<host:port>\\n<sha256 of code>\\n<public_key>\" (docs/approver-api.md).".into(),
        )),
        Some(signing::PROOF_VERSION_2) => {
            let authority = claim.authority.unwrap_or_default();
            if !own_authorities.iter().any(|own| own == authority) {
                return Err(DomainError::BadProof(format!(
                    "the proof is for host {authority:?}, not this one ({}).",
                    own_authorities.join(", ")
                )));
            }
            let string = signing::enroll_proof_string_v2(
                claim.role,
                authority,
                claim.code,
                claim.public_key,
            );
            if keys::verify_b64(&key, string.as_bytes(), claim.proof) {
                Ok(())
            } else {
                Err(DomainError::BadProof(format!(
                    "proof is not a valid signature by public_key over the version 2 enrollment string for role {}, host {authority}, and this code.",
                    claim.role.as_str()
                )))
            }
        }
        Some(other) => Err(DomainError::Invalid(format!(
            "proof_version {other} is unknown; this host reads 2 (or none, version 1)."
        ))),
    }
}

/// `proof` must be `public_key`'s signature of `ANP/0.1\nregister\n<public_key>`.
pub fn check_possession(public_key: &str, proof: &str) -> Result<(), DomainError> {
    let key = keys::parse_public_key(public_key)
        .map_err(|e| DomainError::Invalid(format!("public_key: {e}.")))?;
    if !keys::verify_b64(
        &key,
        signed::registration_proof_string(public_key).as_bytes(),
        proof,
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
        retired_at: None,
    })
}

/// Checks a gate agent's enrollment against the code found under its hash
/// and answers the agent to store when the code is spent.
pub fn gate_agent(
    req: &GateEnrollRequest,
    code: Option<GateCodeRow>,
    now: OffsetDateTime,
) -> Result<GateAgentRow, DomainError> {
    let key = keys::parse_public_key(&req.public_key)
        .map_err(|e| DomainError::Invalid(format!("public_key: {e}.")))?;
    let Some(code) = code else {
        return Err(bad_code());
    };
    if code.used || code.expires_at <= now.unix_timestamp() {
        return Err(bad_code());
    }
    let name = req.name.trim();
    if name.is_empty() || name.chars().count() > 160 || name.chars().any(char::is_control) {
        return Err(DomainError::Invalid(
            "name must be 1 to 160 characters without control characters.".into(),
        ));
    }
    let callback_url = req
        .callback_url
        .as_deref()
        .map(|url| {
            crate::callback::check_url(url)
                .map(|_| url.to_owned())
                .map_err(|e| DomainError::Invalid(format!("{e}.")))
        })
        .transpose()?;
    Ok(GateAgentRow {
        id: ids::gate_agent_id(),
        org_handle: code.org_handle,
        protocol: code.protocol,
        name: name.to_owned(),
        public_key: req.public_key.clone(),
        fingerprint: keys::fingerprint(&key),
        callback_url,
        enrolled_at: anp::api::format_timestamp(now),
        revoked_at: None,
        owner_email: code.owner_email,
    })
}
