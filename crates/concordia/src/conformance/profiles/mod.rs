//! One function per profile; [`run`] is the only place that matches on the
//! profile id.

mod artifacts;
mod attestation;
mod chain;
mod digest;
mod longtail;
mod mandate;

use super::checks::{Checks, Judgement};
use super::vector::Vector;

/// Runs the vector's profile.
pub fn run(v: &Vector) -> Judgement {
    let mut c = Checks::default();
    match v.profile.as_str() {
        "decision-object-v1" => digest::decision_object(v, &mut c),
        "offer-binding-v1" => digest::offer_binding(v, &mut c),
        "closure-predicate-v1" => digest::closure_predicate(v, &mut c),
        "chain-session-v1" => digest::chain_session(v, &mut c),
        "chain-session-transition-v1" => digest::chain_session_transition(v, &mut c),
        "receipt-v1" => artifacts::receipt(v, &mut c),
        "revocation-v1" => artifacts::revocation(v, &mut c),
        "cascade-decision-v1" => artifacts::cascade_decision(v, &mut c),
        "fulfillment-attestation-v1" => artifacts::fulfillment_attestation(v, &mut c),
        "conditional-commitment-v1" => artifacts::signed_eddsa(v, &mut c, "conditional_commitment"),
        "atomic-activation-proof-v1" => {
            artifacts::signed_eddsa(v, &mut c, "atomic_activation_proof")
        }
        "unwind-record-v1" => artifacts::signed_eddsa(v, &mut c, "unwind_record"),
        "attestation-v1" => attestation::attestation(v, &mut c),
        "attestation-countersign-v1" => attestation::countersign(v, &mut c),
        "cosign-v1" => attestation::cosign(v, &mut c),
        "predicate-v1" => mandate::predicate(v, &mut c),
        "mandate-v1" => mandate::mandate(v, &mut c, false),
        "delegation-chain-v1" => mandate::mandate(v, &mut c, true),
        "agent-profile-v1" => longtail::agent_profile(v, &mut c),
        "competence-proof-v1" => longtail::competence_proof(v, &mut c),
        "receipt-bundle-v1" => longtail::receipt_bundle(v, &mut c),
        "message-chain-v1" => chain::message_chain(v, &mut c),
        other => c.fail("profile", format!("{other} is not implemented")),
    }
    c.finish()
}
