//! How callers sign requests to the host's own APIs (the approver API and
//! the gate), version 2, and what an enrollment proves, version 2. Both
//! strings are built here and nowhere else: the clients sign them, the host
//! verifies them.
//!
//! Version 1 was ANP/0.1's request string (SPEC §3: method, path, timestamp,
//! nonce, body hash), which leaves out the query string, the caller's id
//! and the host: a request signed without `?after=2` verified with it, a
//! request signed by one approver verified under another id holding the
//! same key, and a request signed for one host verified at another. The
//! vendor agent API keeps ANP/0.1's string (that wire is ANP's, not ours);
//! only our own APIs move to version 2.
//!
//! ```text
//! countersign/request/v2
//! <METHOD>
//! <authority>          host:port the signer addressed, e.g. negotiate.example.com:443
//! <path?query>         exactly as sent, query included
//! <caller id>          the x-anp-agent value
//! <timestamp>
//! <nonce>
//! <hex SHA-256 of the body bytes>
//! ```
//!
//! A version 2 request carries the four `x-anp-*` headers plus
//! `x-countersign-sig: 2` and `x-countersign-authority: <authority>`. The
//! host accepts the authority only when it is its own (its configured
//! public URL; without one, the address it listens on), so a request made
//! for one host does not verify at another. See `docs/approver-api.md`,
//! "Signed requests".

use anp::api::{self, RequestAuthError, SignedHeaders};
use anp::canonical::sha256_hex;
use anp::keys::{self, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// Header: which request string the signature covers (`2`; absent: ANP/0.1's).
pub const HEADER_SIG_VERSION: &str = "x-countersign-sig";
/// Header: the authority (`host:port`) the signer addressed, covered by the signature.
pub const HEADER_AUTHORITY: &str = "x-countersign-authority";
/// The value of [`HEADER_SIG_VERSION`] this module signs.
pub const SIG_VERSION_2: &str = "2";
/// First line of a version 2 request string.
pub const REQUEST_V2: &str = "countersign/request/v2";
/// First line of a version 2 enrollment proof.
pub const ENROLL_V2: &str = "countersign/enroll/v2";
/// The `proof_version` of a version 2 enrollment.
pub const PROOF_VERSION_2: u32 = 2;

/// The canonical authority of a host: its lowercased name (an IPv6 address
/// in brackets, as URLs write it) and its port, always written, the
/// scheme's default included (`negotiate.example.com:443`), so that two
/// spellings of one URL sign the same string.
pub fn authority(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A request to sign or check, as version 2 covers it.
#[derive(Debug, Clone, Copy)]
pub struct RequestV2<'a> {
    /// HTTP method (`GET`, `POST`).
    pub method: &'a str,
    /// The authority the signer addressed ([`authority`]).
    pub authority: &'a str,
    /// The request target: path and, when there is one, `?query`, exactly as sent.
    pub path_and_query: &'a str,
    /// The exact body bytes.
    pub body: &'a [u8],
}

/// The version 2 request string for `caller` at `timestamp` with `nonce`.
pub fn request_string_v2(
    request: &RequestV2<'_>,
    caller: &str,
    timestamp: &str,
    nonce: &str,
) -> String {
    format!(
        "{REQUEST_V2}\n{}\n{}\n{}\n{caller}\n{timestamp}\n{nonce}\n{}",
        request.method,
        request.authority,
        request.path_and_query,
        sha256_hex(request.body)
    )
}

/// The headers of a version 2 signed request: ANP's four, the version and
/// the authority. Kept by the console beside each decision it sends, so
/// anyone with the approver's key can recheck it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedHeadersV2 {
    /// `x-anp-agent`, `x-anp-timestamp`, `x-anp-nonce`, `x-anp-signature`.
    #[serde(flatten)]
    pub anp: SignedHeaders,
    /// `x-countersign-sig` (`2`).
    pub sig_version: String,
    /// `x-countersign-authority`.
    pub authority: String,
}

impl SignedHeadersV2 {
    /// The six headers as (name, value) pairs, ready to send.
    pub fn pairs(&self) -> [(&'static str, &str); 6] {
        let [a, b, c, d] = self.anp.pairs();
        [
            a,
            b,
            c,
            d,
            (HEADER_SIG_VERSION, &self.sig_version),
            (HEADER_AUTHORITY, &self.authority),
        ]
    }
}

/// Signs `request` as `caller` (version 2). The caller supplies the clock
/// and the nonce.
pub fn sign_request_v2(
    key: &SigningKey,
    caller: &str,
    request: &RequestV2<'_>,
    timestamp: &str,
    nonce: &str,
) -> SignedHeadersV2 {
    let string = request_string_v2(request, caller, timestamp, nonce);
    SignedHeadersV2 {
        anp: SignedHeaders {
            agent: caller.to_owned(),
            timestamp: timestamp.to_owned(),
            nonce: nonce.to_owned(),
            signature: keys::sign_b64(key, string.as_bytes()),
        },
        sig_version: SIG_VERSION_2.to_owned(),
        authority: request.authority.to_owned(),
    }
}

/// Checks a version 2 signed request that needs no storage: the headers'
/// shape and time window (as ANP/0.1 checks them) and the signature over
/// the version 2 string, with the caller id taken from `headers.agent`.
/// Whether `request.authority` is this host's, the nonce and the caller's
/// status are the host's to check.
pub fn check_request_v2(
    headers: &SignedHeaders,
    key: &VerifyingKey,
    request: &RequestV2<'_>,
    now: OffsetDateTime,
) -> Result<(), RequestAuthError> {
    api::check_headers_and_window(headers, now)?;
    let string = request_string_v2(request, &headers.agent, &headers.timestamp, &headers.nonce);
    if keys::verify_b64(key, string.as_bytes(), &headers.signature) {
        Ok(())
    } else {
        Err(RequestAuthError::BadSignature)
    }
}

/// Who enrolls: the role is part of what a version 2 proof signs, so a
/// proof made to become an approver cannot enroll a gate agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnrollRole {
    /// `POST /api/console/v1/enroll`.
    Approver,
    /// `POST /api/gate/v1/enroll`.
    GateAgent,
}

impl EnrollRole {
    /// The role's name in the proof string.
    pub fn as_str(self) -> &'static str {
        match self {
            EnrollRole::Approver => "approver",
            EnrollRole::GateAgent => "gate-agent",
        }
    }
}

/// The version 2 enrollment proof string: the key's holder asks to be
/// enrolled as `role` at the host `authority` with this one-time `code`
/// (hashed, hex SHA-256 of its UTF-8 text). A proof captured from one
/// enrollment proves nothing for another code, role or host.
///
/// ```text
/// countersign/enroll/v2
/// <role>               approver | gate-agent
/// <authority>
/// <hex SHA-256 of the code>
/// <public key>
/// ```
pub fn enroll_proof_string_v2(
    role: EnrollRole,
    authority: &str,
    code: &str,
    public_key: &str,
) -> String {
    format!(
        "{ENROLL_V2}\n{}\n{authority}\n{}\n{public_key}",
        role.as_str(),
        sha256_hex(code.as_bytes())
    )
}

/// Signs a version 2 enrollment proof with the key being enrolled.
pub fn sign_enroll_proof_v2(
    key: &SigningKey,
    role: EnrollRole,
    authority: &str,
    code: &str,
) -> String {
    let public_key = keys::public_key_b64(&key.verifying_key());
    keys::sign_b64(
        key,
        enroll_proof_string_v2(role, authority, code, &public_key).as_bytes(),
    )
}

/// The first line of a delegation statement.
pub const DELEGATE_V1: &str = "countersign/delegate-roles/v1";

/// The statement a delegation is made of, which the delegator's key signs:
/// the host (`authority`), the delegation's id, the delegator as enrolled
/// (`approver_id`), the stand-in's email, the roles (comma-separated, in
/// the order given), the first and last day and the zone they are days in,
/// and when it was made (`at`, RFC 3339).
///
/// ```text
/// countersign/delegate-roles/v1
/// <authority>
/// <delegation id>
/// <approver id>
/// <to>
/// <role>,<role>
/// <from date>
/// <to date>
/// <zone>
/// <at>
/// ```
#[allow(clippy::too_many_arguments)]
pub fn delegation_statement(
    authority: &str,
    delegation_id: &str,
    approver_id: &str,
    to: &str,
    roles: &[String],
    from_date: &str,
    to_date: &str,
    zone: &str,
    at: &str,
) -> String {
    format!(
        "{DELEGATE_V1}\n{authority}\n{delegation_id}\n{approver_id}\n{to}\n{}\n{from_date}\n{to_date}\n{zone}\n{at}",
        roles.join(",")
    )
}

/// The first line of a key rotation statement.
pub const ROTATE_V1: &str = "countersign/rotate-approver-key/v1";

/// The statement an approver's key rotation is made of, which both keys
/// sign: the old key's signature is its consent to be retired in favour of
/// the new one, the new key's proves the console holds it. It names the
/// host (`authority`), the approver as enrolled (`approver_id`) and both
/// keys, so a statement made for one host, approver or key proves nothing
/// for another; `at` (RFC 3339) dates it, and the host refuses one outside
/// its time window.
///
/// ```text
/// countersign/rotate-approver-key/v1
/// <authority>
/// <approver id>
/// <old public key>
/// <new public key>
/// <at>
/// ```
pub fn rotate_statement(
    authority: &str,
    approver_id: &str,
    old_public_key: &str,
    new_public_key: &str,
    at: &str,
) -> String {
    format!("{ROTATE_V1}\n{authority}\n{approver_id}\n{old_public_key}\n{new_public_key}\n{at}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_always_name_the_port_and_bracket_ipv6() {
        assert_eq!(
            authority("Negotiate.Example.com", 443),
            "negotiate.example.com:443"
        );
        assert_eq!(authority("127.0.0.1", 8480), "127.0.0.1:8480");
        assert_eq!(authority("[::1]", 8480), "[::1]:8480");
        assert_eq!(authority("::1", 8480), "[::1]:8480");
    }

    #[test]
    fn every_part_of_a_request_is_covered() {
        let key = keys::generate_signing_key();
        let vk = key.verifying_key();
        let ts = api::format_timestamp(OffsetDateTime::now_utc());
        let request = RequestV2 {
            method: "GET",
            authority: "host.example:443",
            path_and_query: "/api/console/v1/sessions/s/log?after=2",
            body: b"",
        };
        let h = sign_request_v2(&key, "apr_1", &request, &ts, "n1");
        let now = OffsetDateTime::now_utc();
        assert_eq!(check_request_v2(&h.anp, &vk, &request, now), Ok(()));
        let changed = [
            RequestV2 {
                method: "POST",
                ..request
            },
            RequestV2 {
                authority: "other.example:443",
                ..request
            },
            RequestV2 {
                path_and_query: "/api/console/v1/sessions/s/log",
                ..request
            },
            RequestV2 {
                body: b"{}",
                ..request
            },
        ];
        for other in changed {
            assert_eq!(
                check_request_v2(&h.anp, &vk, &other, now),
                Err(RequestAuthError::BadSignature),
                "{other:?}"
            );
        }
        let mut as_other = h.anp.clone();
        as_other.agent = "apr_2".into();
        assert_eq!(
            check_request_v2(&as_other, &vk, &request, now),
            Err(RequestAuthError::BadSignature)
        );
    }

    #[test]
    fn an_enrollment_proof_names_role_host_and_code() {
        let key = keys::generate_signing_key();
        let pk = keys::public_key_b64(&key.verifying_key());
        let proof = sign_enroll_proof_v2(&key, EnrollRole::Approver, "h.example:443", "CODE-A");
        let holds = |role, authority, code| {
            keys::verify_b64(
                &key.verifying_key(),
                enroll_proof_string_v2(role, authority, code, &pk).as_bytes(),
                &proof,
            )
        };
        assert!(holds(EnrollRole::Approver, "h.example:443", "CODE-A"));
        assert!(!holds(EnrollRole::GateAgent, "h.example:443", "CODE-A"));
        assert!(!holds(EnrollRole::Approver, "evil.example:443", "CODE-A"));
        assert!(!holds(EnrollRole::Approver, "h.example:443", "CODE-B"));
    }
}
