//! The client-facing edge: the approver API as hosts speak it. Its wire
//! shapes are `countersign-host-api`'s; request signing, the error shape and
//! the approver's key file are ANP/0.1's (`anp::api`, `anp::keys`), as the
//! API signs every request that way. Only this folder names either;
//! everything here hands the rest of the engine neutral shapes
//! (`crate::protocol`).

pub(crate) mod enroll;
pub(crate) mod keyfile;
pub(crate) mod stand_ins;
pub(crate) mod transport;
pub(crate) mod wire;

/// The approver API's error codes the engine turns into typed refusals.
pub(crate) use anp::api::codes;

/// The protocol a host's approver API speaks (its requests are signed as
/// ANP/0.1 requests): what `hosts.protocol` records. Each session names its
/// own protocol.
pub(crate) const API_PROTOCOL: &str = anp::PROTOCOL;
