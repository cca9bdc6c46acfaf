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
    authorship_parts(kind, payload_hash).concat()
}

/// The authorship string in pieces, for hashing it without building it
/// (batch verification feeds them to SHA-512 one by one).
pub(crate) fn authorship_parts<'a>(kind: &'a str, payload_hash: &'a str) -> [&'a str; 5] {
    [PROTOCOL, "\n", kind, "\n", payload_hash]
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
    let seq = seq.to_string();
    event_hash_parts(session_id, &seq, actor, kind, payload_hash, prev_hash, at).concat()
}

/// The preimage of `event_hash` in pieces.
fn event_hash_parts<'a>(
    session_id: &'a str,
    seq: &'a str,
    actor: &'a str,
    kind: &'a str,
    payload_hash: &'a str,
    prev_hash: &'a str,
    at: &'a str,
) -> [&'a str; 15] {
    [
        PROTOCOL,
        "\n",
        session_id,
        "\n",
        seq,
        "\n",
        actor,
        "\n",
        kind,
        "\n",
        payload_hash,
        "\n",
        prev_hash,
        "\n",
        at,
    ]
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
    hex::encode(event_hash_digest(
        session_id,
        seq,
        actor,
        kind,
        payload_hash,
        prev_hash,
        at,
    ))
}

/// `event_hash` as its 32 bytes, hashed from the pieces of its preimage
/// without building it (what verification compares, once per event).
pub(crate) fn event_hash_digest(
    session_id: &str,
    seq: u64,
    actor: &str,
    kind: &str,
    payload_hash: &str,
    prev_hash: &str,
    at: &str,
) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut digits = [0u8; 20];
    let seq = decimal(seq, &mut digits);
    let mut hasher = Sha256::new();
    for part in event_hash_parts(session_id, seq, actor, kind, payload_hash, prev_hash, at) {
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

/// `n` in decimal, written into `buf` (u64 has at most 20 digits).
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

/// RFC-002: what an approver's key signs to attest a human approval.
pub fn approval_string(in_response_to: &str, approved_by: &str, at: &str) -> String {
    format!("{APPROVAL_PROTOCOL}\napproval\n{in_response_to}\n{approved_by}\n{at}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_hash_digest_is_the_hash_of_the_preimage() {
        for seq in [0, 1, 9, 10, 12345, u64::MAX] {
            let preimage = event_hash_preimage("s", seq, "buyer", "offer", "p", "q", "t");
            assert!(preimage.contains(&format!("\n{seq}\n")));
            assert_eq!(
                event_hash("s", seq, "buyer", "offer", "p", "q", "t"),
                sha256_hex(preimage.as_bytes())
            );
        }
        assert_eq!(authorship_string("offer", "ab"), "ANP/0.1\noffer\nab");
    }
}
