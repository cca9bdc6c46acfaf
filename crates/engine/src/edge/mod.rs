//! The client-facing edge: the approver API as hosts speak it today. Its
//! wire shapes, request signing and the approver's key file are still
//! `anp`'s (`anp::api`, `anp::keys`); they move to a neutral crate on the
//! host's side, and when they do only this folder changes. Everything here
//! hands the rest of the engine neutral shapes (`crate::protocol`).

pub(crate) mod enroll;
pub(crate) mod keyfile;
pub(crate) mod transport;
pub(crate) mod wire;

/// The approver API's error codes the engine turns into typed refusals.
pub(crate) use anp::api::codes;

/// The protocol a host's approver API speaks (its requests are signed as
/// ANP/0.1 requests): what `hosts.protocol` records. Each session names its
/// own protocol.
pub(crate) const API_PROTOCOL: &str = anp::PROTOCOL;
