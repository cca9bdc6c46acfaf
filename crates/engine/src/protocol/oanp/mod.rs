//! OANP behind the engine's seams: gate sessions (`session`, the `Seam`:
//! a person decides before the org's agent sends `offer.accept`), and the
//! arbiter's receipt a person files
//! (with its session log, when there is one), read and verified with
//! `crates/oanp` exactly as the publisher's verifier does, against the three
//! published arbiter keys; test-mode receipts count only when the person's
//! setting `oanp.allow_test_receipts` allows them.

pub(crate) mod session;
mod view;

use oanp::report::{read_receipt, verify_bytes, ReadError};
use oanp::{Mode, PinnedKeys, Signer, Trust};

use crate::error::EngineError;
use crate::protocol::{ReadReceipt, ReceiptSeam};
use crate::settings::{Effective, SettingDef, SettingKind};
use crate::views::ReceiptDetail;

/// The setting: receipts signed by a pinned test-mode arbiter key are proof.
pub const ALLOW_TEST_RECEIPTS: &str = "oanp.allow_test_receipts";

/// OANP's receipt jobs.
pub(crate) struct Oanp;

impl ReceiptSeam for Oanp {
    fn name(&self) -> &'static str {
        oanp::report::PROTOCOL
    }

    fn settings(&self) -> Vec<SettingDef> {
        vec![SettingDef {
            id: ALLOW_TEST_RECEIPTS,
            group: "OANP receipts",
            label: "Test-mode receipts count as proof",
            help: "Whether a receipt signed by an arbiter's test-mode key (free to anyone with a test account) counts as proof here. Keep it off except to try things out: such a receipt proves nothing to anyone else.",
            kind: SettingKind::Toggle,
            default: serde_json::Value::Bool(false),
            confirm_on: Some(
                "Count test-mode receipts as proof? Every receipt signed by an arbiter's test-mode key (anyone with a free test account can make one) will then show as proof, marked for testing only, on every receipt in this console until you turn this off. It proves nothing to anyone else.",
            ),
        }]
    }

    fn admit(&self, receipt: &[u8]) -> Result<(), EngineError> {
        let object = read_receipt(receipt).map_err(refused)?;
        oanp::receipt::recognize(&object).map_err(|e| {
            EngineError::InvalidInput(format!("This file is {e}. Nothing was filed."))
        })?;
        Ok(())
    }

    fn relaxed(&self, settings: &Effective) -> Option<String> {
        settings.toggle(ALLOW_TEST_RECEIPTS).then(|| {
            "Test-mode receipts count as proof (Settings, OANP receipts): a receipt signed by an arbiter's test-mode key shows as proof here, for testing only; it proves nothing to anyone else.".to_owned()
        })
    }

    fn read(
        &self,
        receipt: &[u8],
        log: Option<&[u8]>,
        settings: &Effective,
    ) -> Result<ReadReceipt, EngineError> {
        read(receipt, log, settings.toggle(ALLOW_TEST_RECEIPTS))
    }

    /// OANP gate sessions are stored as `oanp:<the OANP session id>`.
    fn held_session(&self, signed_session_id: &str) -> Option<String> {
        Some(format!("{}:{signed_session_id}", self.name()))
    }

    /// The envelopes as stored (each one's JSON text as the agent mirrored
    /// it), in order, as the JSON array the publisher's verifier reads.
    fn held_log(&self, events: &[crate::store::StoredEvent]) -> Option<Vec<u8>> {
        let mut log = b"[".to_vec();
        for (i, e) in events.iter().enumerate() {
            if i > 0 {
                log.push(b',');
            }
            log.extend_from_slice(e.body.as_bytes());
        }
        log.push(b']');
        Some(log)
    }
}

/// Reads and verifies `receipt` (and `log`) with test receipts allowed or not.
pub(crate) fn read(
    receipt: &[u8],
    log: Option<&[u8]>,
    allow_test: bool,
) -> Result<ReadReceipt, EngineError> {
    let pins = PinnedKeys::published();
    let trust = Trust {
        pins: &pins,
        allow_test,
    };
    let verification = verify_bytes(receipt, log, trust).map_err(refused)?;
    // Read once more as the same exact JSON reader did: verify_bytes read it.
    let value = serde_json::Value::Object(read_receipt(receipt).map_err(refused)?);
    let shown = oanp::ReceiptView::build(&value, &verification).map_err(|_| {
        EngineError::InvalidInput("The receipt is not a JSON object. Nothing was filed.".into())
    })?;
    let test_mode = matches!(
        verification.signer,
        Signer::Pinned {
            mode: Mode::Test,
            ..
        }
    );
    Ok(ReadReceipt {
        proof: verification.proof,
        status: verification.status.as_str().to_owned(),
        headline: verification.headline(),
        session_id: verification.signed_session_id.clone(),
        test_mode,
        detail: ReceiptDetail::OanpReceipt(view::view(&shown, &verification)),
    })
}

/// An input `crates/oanp` cannot read, as the sentence a person reads.
fn refused(e: ReadError) -> EngineError {
    let mut text = e.to_string();
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + &text[1..];
    }
    EngineError::InvalidInput(format!("{text}. Nothing was filed."))
}

#[cfg(test)]
mod tests;
