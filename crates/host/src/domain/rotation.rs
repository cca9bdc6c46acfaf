//! An approver moving to a new key (docs/approver-api.md, "Moving to a new
//! key"): the old key consents, the new key proves possession, both over
//! one statement naming this host, the approver and both keys. The old
//! approver is retired at that moment (its approvals stand and verify with
//! its key, which the discovery documents keep with a `valid_to`), and a
//! new approver, the same person and organization, holds the new key.

use anp::keys;
use countersign_host_api::approver::RotateKeyRequest;
use countersign_host_api::signing::rotate_statement;
use time::OffsetDateTime;

use super::DomainError;
use crate::ids;
use crate::store::{ApproverRow, RotationRow};

/// Checks a rotation asked by `old` (authenticated with its key, for the
/// host `authority` its request was signed for) and answers the approver
/// and the record to store.
pub fn rotation(
    old: &ApproverRow,
    req: &RotateKeyRequest,
    authority: &str,
    now: OffsetDateTime,
) -> Result<(ApproverRow, RotationRow), DomainError> {
    let new_key = keys::parse_public_key(&req.new_public_key)
        .map_err(|e| DomainError::Invalid(format!("new_public_key: {e}.")))?;
    if req.new_public_key == old.public_key {
        return Err(DomainError::Invalid(
            "new_public_key is the key being retired: generate a new key to move to.".into(),
        ));
    }
    let at = anp::api::parse_timestamp(&req.at)
        .ok_or_else(|| DomainError::Invalid("at must be an RFC 3339 time.".into()))?;
    let window = time::Duration::seconds(anp::api::TIMESTAMP_WINDOW_SECS);
    if at > now + window || at < now - window {
        return Err(DomainError::Invalid(format!(
            "at is more than {} seconds from the host's time ({}): make the statement now.",
            anp::api::TIMESTAMP_WINDOW_SECS,
            anp::api::format_timestamp(now)
        )));
    }
    let old_key = keys::parse_public_key(&old.public_key)
        .map_err(|e| DomainError::Internal(format!("stored approver key: {e}")))?;
    let statement = rotate_statement(
        authority,
        &old.id,
        &old.public_key,
        &req.new_public_key,
        &req.at,
    );
    if !keys::verify_b64(&old_key, statement.as_bytes(), &req.consent) {
        return Err(DomainError::BadSignature(
            "consent is not the current key's signature of the rotation statement (countersign/rotate-approver-key/v1, this host's authority, your approver id, the current and the new public key, at).".into(),
        ));
    }
    if !keys::verify_b64(&new_key, statement.as_bytes(), &req.proof) {
        return Err(DomainError::BadProof(
            "proof is not new_public_key's signature of the rotation statement (countersign/rotate-approver-key/v1, this host's authority, your approver id, the current and the new public key, at).".into(),
        ));
    }
    let rotated_at = anp::api::format_timestamp(now);
    let new = ApproverRow {
        id: ids::uuid(),
        org_handle: old.org_handle.clone(),
        name: old.name.clone(),
        email: old.email.clone(),
        public_key: req.new_public_key.clone(),
        fingerprint: keys::fingerprint(&new_key),
        enrolled_at: rotated_at.clone(),
        revoked_at: None,
        retired_at: None,
    };
    let record = RotationRow {
        old_id: old.id.clone(),
        new_id: new.id.clone(),
        statement,
        consent: req.consent.clone(),
        proof: req.proof.clone(),
        rotated_at,
    };
    Ok((new, record))
}

/// Whether a rotation that found the old key retired already is the same
/// one asked again (answered the same), or one to another key (refused).
pub fn already(successor: &ApproverRow, req: &RotateKeyRequest) -> Result<(), DomainError> {
    if successor.public_key == req.new_public_key {
        return Ok(());
    }
    Err(DomainError::KeyAlreadyRotated(format!(
        "This key was retired already in favour of another key (fingerprint {}); sign with that key, or ask the admin for a new enrollment code.",
        successor.fingerprint
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approver(key: &keys::SigningKey) -> ApproverRow {
        ApproverRow {
            id: "old".into(),
            org_handle: "acme".into(),
            name: "Ann".into(),
            email: "ann@acme.test".into(),
            public_key: keys::public_key_b64(&key.verifying_key()),
            fingerprint: keys::fingerprint(&key.verifying_key()),
            enrolled_at: "2026-01-01T00:00:00Z".into(),
            revoked_at: None,
            retired_at: None,
        }
    }

    fn request(
        old: &keys::SigningKey,
        new: &keys::SigningKey,
        authority: &str,
        approver_id: &str,
        at: &str,
    ) -> RotateKeyRequest {
        let new_public_key = keys::public_key_b64(&new.verifying_key());
        let statement = rotate_statement(
            authority,
            approver_id,
            &keys::public_key_b64(&old.verifying_key()),
            &new_public_key,
            at,
        );
        RotateKeyRequest {
            new_public_key,
            at: at.into(),
            consent: keys::sign_b64(old, statement.as_bytes()),
            proof: keys::sign_b64(new, statement.as_bytes()),
        }
    }

    const NOW: &str = "2026-12-07T10:00:00Z";

    fn now() -> OffsetDateTime {
        anp::api::parse_timestamp(NOW).unwrap()
    }

    #[test]
    fn a_statement_signed_by_both_keys_moves_the_approver() {
        let (old, new) = (keys::generate_signing_key(), keys::generate_signing_key());
        let req = request(&old, &new, "h:443", "old", NOW);
        let (row, record) = rotation(&approver(&old), &req, "h:443", now()).unwrap();
        assert_eq!(row.email, "ann@acme.test");
        assert_eq!(row.org_handle, "acme");
        assert_eq!(row.public_key, req.new_public_key);
        assert_ne!(row.id, "old");
        assert_eq!((record.old_id.as_str(), record.new_id), ("old", row.id));
        assert_eq!(record.rotated_at, anp::api::format_timestamp(now()));
    }

    #[test]
    fn each_part_of_the_statement_is_checked() {
        let (old, new) = (keys::generate_signing_key(), keys::generate_signing_key());
        let me = approver(&old);
        let refused = |req: RotateKeyRequest| rotation(&me, &req, "h:443", now()).unwrap_err();
        // Made for another host, or another approver: the consent fails.
        assert!(matches!(
            refused(request(&old, &new, "other:443", "old", NOW)),
            DomainError::BadSignature(_)
        ));
        assert!(matches!(
            refused(request(&old, &new, "h:443", "someone-else", NOW)),
            DomainError::BadSignature(_)
        ));
        // Consent by a key that is not the approver's.
        let stranger = keys::generate_signing_key();
        assert!(matches!(
            refused(request(&stranger, &new, "h:443", "old", NOW)),
            DomainError::BadSignature(_)
        ));
        // The new key's proof signed by another key.
        let mut req = request(&old, &new, "h:443", "old", NOW);
        req.proof = request(&old, &stranger, "h:443", "old", NOW).proof;
        assert!(matches!(refused(req), DomainError::BadProof(_)));
        // Stale, or from the future.
        for at in ["2026-12-07T09:50:00Z", "2026-12-07T10:10:00Z", "yesterday"] {
            let e = refused(request(&old, &new, "h:443", "old", at));
            assert!(
                matches!(&e, DomainError::Invalid(m) if m.starts_with("at ")),
                "{e:?}"
            );
        }
        // The same key again, and a key that is no key.
        let e = refused(request(&old, &old, "h:443", "old", NOW));
        assert!(matches!(&e, DomainError::Invalid(m) if m.contains("being retired")));
        let mut req = request(&old, &new, "h:443", "old", NOW);
        req.new_public_key = "not-a-key".into();
        assert!(matches!(refused(req), DomainError::Invalid(m) if m.starts_with("new_public_key")));
    }

    #[test]
    fn a_rotation_asked_again_is_the_same_only_for_the_same_key() {
        let (old, new) = (keys::generate_signing_key(), keys::generate_signing_key());
        let req = request(&old, &new, "h:443", "old", NOW);
        let (successor, _) = rotation(&approver(&old), &req, "h:443", now()).unwrap();
        assert!(already(&successor, &req).is_ok());
        let other = request(&old, &keys::generate_signing_key(), "h:443", "old", NOW);
        assert!(matches!(
            already(&successor, &other),
            Err(DomainError::KeyAlreadyRotated(_))
        ));
    }
}
