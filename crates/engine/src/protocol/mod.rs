//! The protocol seam. Everything that knows ANP/0.1 wire details (how a log
//! is verified, what an offer looks like, how totals and diffs are computed)
//! lives in [`anp`] here; the rest of the engine works on stored rows and
//! contract shapes. A second protocol would add a sibling module and a
//! `protocol` value in the `hosts`/`sessions` rows (see the crate README).

pub(crate) mod anp;

/// The protocol name stored with every host and session.
pub(crate) const ANP_0_1: &str = "ANP/0.1";

/// Settings the protocols declare, shown beside the engine's on the same
/// screen (see `crate::settings`). ANP/0.1 needs none. OANP adds its "test-
/// mode receipts count" here, as one `SettingDef` (a toggle, default off)
/// that its receipt check then reads: no screen or command of its own.
pub(crate) fn settings() -> Vec<crate::settings::SettingDef> {
    Vec::new()
}
