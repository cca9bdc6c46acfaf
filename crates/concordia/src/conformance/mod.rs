//! The public conformance suite (RUNNER_CONTRACT v1-draft), as a verifier.
//!
//! [`Vector::parse`] refuses a malformed vector before anything else;
//! [`judge`] dispatches only on the vector's `verification_profile` and the
//! fields inside it (never on a file name, never on `diag/`), and runs every
//! check the profile lists, reporting each failure. [`Manifest`] reads a
//! suite's `manifest.json` and lists the vector files it pins.
//!
//! The profiles call the same library code a console uses where there is one
//! (ApprovalReceipts, revocation records, transcripts), so the suite tests
//! that code, not a second copy of it.

mod checks;
mod manifest;
mod profiles;
pub mod schemas;
mod vector;

pub use checks::Judgement;
pub use manifest::{Manifest, ManifestError};
pub use vector::{MalformedVector, Vector, Verdict, PROFILES, RECORD_TYPES};

/// Judges a well-formed vector: accept only when every check of its profile passes.
pub fn judge(vector: &Vector) -> Judgement {
    profiles::run(vector)
}

/// Parses and judges one vector's JSON: a malformed vector is rejected
/// (with why) without running any profile.
pub fn judge_value(value: &serde_json::Value) -> Result<(Vector, Judgement), MalformedVector> {
    let vector = Vector::parse(value)?;
    let judgement = judge(&vector);
    Ok((vector, judgement))
}
