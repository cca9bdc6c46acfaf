//! Every string the protocol signs or hashes, each built in exactly one place.

use crate::canonical::sha256_hex;

/// The protocol version string that prefixes every ANP/0.1 signed string.
pub const PROTOCOL: &str = "ANP/0.1";
/// The prefix of the RFC-002 approval string (an ANP/0.2 draft).
pub const APPROVAL_PROTOCOL: &str = "ANP/0.2";
/// `prev_hash` of the first event.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// SPEC §2: what a registrant signs to prove it holds the key.
pub fn registration_proof_string(public_key_b64: &str) -> String {
    format!("{PROTOCOL}\nregister\n{public_key_b64}")
}

/// SPEC §3: what a signed request's `x-anp-signature` covers. `path` is the
/// URL path without query or host; `body` is the exact body bytes sent.
pub fn canonical_request_string(
    method: &str,
    path: &str,
    timestamp: &str,
    nonce: &str,
    body: &[u8],
) -> String {
    format!(
        "{PROTOCOL}\n{method}\n{path}\n{timestamp}\n{nonce}\n{}",
        sha256_hex(body)
    )
}

/// SPEC §4: the authorship string a submitter signs for one event.
pub fn authorship_string(kind: &str, payload_hash: &str) -> String {
    format!("{PROTOCOL}\n{kind}\n{payload_hash}")
}

/// SPEC §4: the preimage of `event_hash`.
pub fn event_hash_preimage(
    session_id: &str,
    seq: u64,
    actor: &str,
    kind: &str,
    payload_hash: &str,
    prev_hash: &str,
    at: &str,
) -> String {
    format!("{PROTOCOL}\n{session_id}\n{seq}\n{actor}\n{kind}\n{payload_hash}\n{prev_hash}\n{at}")
}

/// SPEC §4: `event_hash`, SHA-256 hex of its preimage.
pub fn event_hash(
    session_id: &str,
    seq: u64,
    actor: &str,
    kind: &str,
    payload_hash: &str,
    prev_hash: &str,
    at: &str,
) -> String {
    sha256_hex(
        event_hash_preimage(session_id, seq, actor, kind, payload_hash, prev_hash, at).as_bytes(),
    )
}

/// RFC-002: what an approver's key signs to attest a human approval.
pub fn approval_string(in_response_to: &str, approved_by: &str, at: &str) -> String {
    format!("{APPROVAL_PROTOCOL}\napproval\n{in_response_to}\n{approved_by}\n{at}")
}
