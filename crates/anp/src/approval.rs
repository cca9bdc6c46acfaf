//! RFC-002 human approval attestations: made by the approver's own key in the
//! console, checked by the host and by anyone auditing the log. The signed
//! string is built only by [`crate::signed::approval_string`].

use ed25519_dalek::{SigningKey, VerifyingKey};

use crate::keys::{self, KeyError};
use crate::payload::{Approval, METHOD_HUMAN};
use crate::signed::approval_string;

/// Why an approval does not attest what it claims.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// `method` is not `human`, the only method of 0.2.
    #[error("approval method must be \"human\", got {0:?}")]
    NotHuman(String),
    /// The signature text is not a base64url Ed25519 signature.
    #[error("approval signature is malformed: {0}")]
    MalformedSignature(KeyError),
    /// The signature does not verify: another key, another offer, another
    /// approver or another time than the one signed.
    #[error("approval signature does not verify for this offer, approver, time and key")]
    BadSignature,
}

/// Signs a human approval of the offer event `in_response_to` (its
/// `event_hash`) as `approved_by` (the approver's enrolled email) at `at`
/// (RFC 3339, as `api::format_timestamp` writes it).
pub fn sign_approval(
    key: &SigningKey,
    in_response_to: &str,
    approved_by: &str,
    at: &str,
) -> Approval {
    let message = approval_string(in_response_to, approved_by, at);
    Approval {
        approved_by: approved_by.to_owned(),
        at: at.to_owned(),
        method: METHOD_HUMAN.to_owned(),
        signature: keys::sign_b64(key, message.as_bytes()),
    }
}

/// Checks that `approval` is a human approval of `in_response_to`, signed by
/// `key` (strict Ed25519 verification). Which key may approve for whom is
/// the caller's policy (the well-known document names each approver's key).
pub fn verify_approval(
    approval: &Approval,
    in_response_to: &str,
    key: &VerifyingKey,
) -> Result<(), ApprovalError> {
    if approval.method != METHOD_HUMAN {
        return Err(ApprovalError::NotHuman(approval.method.clone()));
    }
    keys::parse_signature(&approval.signature).map_err(ApprovalError::MalformedSignature)?;
    let message = approval_string(in_response_to, &approval.approved_by, &approval.at);
    if keys::verify_b64(key, message.as_bytes(), &approval.signature) {
        Ok(())
    } else {
        Err(ApprovalError::BadSignature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::generate_signing_key;

    const OFFER: &str = "74c509ce62d05f538f6d8634f42cdca61bbcb2eec3daf231f15b909e451170f8";
    const OTHER: &str = "1325320eedb628abdaf29557c78e7822c9ec56dec452c54adba1d9d8b0bd2ee8";
    const AT: &str = "2026-08-01T12:00:00.000Z";

    #[test]
    fn a_signed_approval_verifies_and_carries_the_approver() {
        let key = generate_signing_key();
        let approval = sign_approval(&key, OFFER, "procurement@fabrikam.example", AT);
        assert_eq!(approval.method, "human");
        assert_eq!(approval.approved_by, "procurement@fabrikam.example");
        assert_eq!(approval.at, AT);
        assert_eq!(
            verify_approval(&approval, OFFER, &key.verifying_key()),
            Ok(())
        );
    }

    #[test]
    fn the_signature_is_over_the_rfc_002_string() {
        let key = generate_signing_key();
        let approval = sign_approval(&key, OFFER, "a@b.example", AT);
        let expected = format!("ANP/0.2\napproval\n{OFFER}\na@b.example\n{AT}");
        assert!(keys::verify_b64(
            &key.verifying_key(),
            expected.as_bytes(),
            &approval.signature
        ));
    }

    #[test]
    fn any_change_or_another_key_fails() {
        let key = generate_signing_key();
        let vk = key.verifying_key();
        let approval = sign_approval(&key, OFFER, "a@b.example", AT);
        assert_eq!(
            verify_approval(&approval, OTHER, &vk),
            Err(ApprovalError::BadSignature)
        );
        let mut other_person = approval.clone();
        other_person.approved_by = "c@b.example".into();
        assert_eq!(
            verify_approval(&other_person, OFFER, &vk),
            Err(ApprovalError::BadSignature)
        );
        let mut other_time = approval.clone();
        other_time.at = "2026-08-01T12:00:01.000Z".into();
        assert_eq!(
            verify_approval(&other_time, OFFER, &vk),
            Err(ApprovalError::BadSignature)
        );
        assert_eq!(
            verify_approval(&approval, OFFER, &generate_signing_key().verifying_key()),
            Err(ApprovalError::BadSignature)
        );
        let mut automated = approval.clone();
        automated.method = "automated".into();
        assert_eq!(
            verify_approval(&automated, OFFER, &vk),
            Err(ApprovalError::NotHuman("automated".into()))
        );
        let mut garbled = approval;
        garbled.signature = "not a signature".into();
        assert!(matches!(
            verify_approval(&garbled, OFFER, &vk),
            Err(ApprovalError::MalformedSignature(_))
        ));
    }
}
