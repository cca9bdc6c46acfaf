//! Unguessable identifiers from the operating system's random generator.

use rand_core::{OsRng, RngCore as _};

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    OsRng.fill_bytes(&mut buf);
    hex::encode(buf)
}

/// `anp_org_` plus 128 random bits: an address a vendor cannot guess.
pub fn org_handle() -> String {
    format!("anp_org_{}", random_hex(16))
}

/// A one-time approver enrollment code (160 random bits).
pub fn enrollment_code() -> String {
    format!("anp_enroll_{}", random_hex(20))
}

/// A gate agent's id: `gate_` plus 128 random bits.
pub fn gate_agent_id() -> String {
    format!("gate_{}", random_hex(16))
}

/// A one-time gate enrollment code (160 random bits).
pub fn gate_code() -> String {
    format!("gate_enroll_{}", random_hex(20))
}

/// How codes are stored: only their SHA-256, so a database copy enrolls no one.
pub fn code_hash(code: &str) -> String {
    anp::canonical::sha256_hex(code.as_bytes())
}

/// A fresh UUID v4 (agent, approver, session and draft ids).
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}
