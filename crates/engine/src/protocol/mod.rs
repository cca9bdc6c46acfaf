//! The protocol seam. Everything that knows ANP/0.1 wire details (how a log
//! is verified, what an offer looks like, how totals and diffs are computed)
//! lives in [`anp`] here; the rest of the engine works on stored rows and
//! contract shapes. A second protocol would add a sibling module and a
//! `protocol` value in the `hosts`/`sessions` rows (see the crate README).

pub(crate) mod anp;

/// The protocol name stored with every host and session.
pub(crate) const ANP_0_1: &str = "ANP/0.1";
