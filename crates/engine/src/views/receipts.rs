//! Receipts a person files: the arbiter's receipt an OANP session leaves
//! behind (and its session log, when there is one), imported from a file
//! the interface read, kept byte for byte, verified each time it is shown
//! (so a changed setting applies at once). Neutral shapes; the protocol's
//! own view is tagged by [`ReceiptKind`] in [`ReceiptDetail`].

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ExportResult, OanpReceiptView};

/// The view shape of a receipt, by protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptKind {
    /// An OANP arbiter's receipt.
    OanpReceipt,
}

/// The argument of `import_receipt`: the bytes the webview read from the
/// files the person chose, exactly as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ImportReceipt {
    /// The receipt's protocol (`oanp`).
    pub protocol: String,
    /// The receipt file's name, as the person's system named it.
    pub file_name: String,
    /// The receipt file's bytes.
    pub bytes: Vec<u8>,
    /// The session log file's name, when one was chosen.
    #[serde(default)]
    pub log_file_name: Option<String>,
    /// The session log file's bytes, when one was chosen.
    #[serde(default)]
    pub log_bytes: Option<Vec<u8>>,
}

/// One filed receipt in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ReceiptRow {
    /// Its id in this console.
    pub receipt_id: String,
    /// Its protocol's wire name (`oanp`).
    pub protocol: String,
    /// The file it was imported from.
    pub file_name: String,
    /// Whether a session log was imported with it.
    pub has_log: bool,
    /// When it was imported.
    pub imported_at: String,
    /// Put there by the sandbox, not by the person.
    pub sandbox: bool,
    /// The signed session id, when there is one (counterparty text).
    pub session_id: Option<String>,
    /// Proof under this console's settings.
    pub proof: bool,
    /// What the signature says.
    pub status: String,
    /// Signed by a test-mode key.
    pub test_mode: bool,
    /// One sentence: proof or not, and why.
    pub headline: String,
}

/// A receipt's protocol-specific view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReceiptDetail {
    /// An OANP receipt.
    OanpReceipt(OanpReceiptView),
}

/// One filed receipt in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ReceiptView {
    /// As in the list.
    pub row: ReceiptRow,
    /// The log file's name, when one was imported.
    pub log_file_name: Option<String>,
    /// Lowercase hex SHA-256 of the receipt's bytes as imported.
    pub receipt_sha256: String,
    /// Lowercase hex SHA-256 of the log's bytes, when there is one.
    pub log_sha256: Option<String>,
    /// The receipt's size in bytes.
    pub receipt_bytes: u32,
    /// The log's size in bytes, when there is one.
    pub log_bytes: Option<u32>,
    /// The protocol's view.
    pub detail: ReceiptDetail,
    /// When no log was filed with the receipt and this console holds the
    /// session it signs (an OANP session its agent mirrored through the
    /// gate): that session, whose log the receipt was checked against.
    pub held_log: Option<HeldLog>,
    /// The same bytes were filed before: this is that filing (its name and
    /// time), not a second copy. Only an import says so.
    pub filed_before: bool,
    /// Settings in effect that loosen what counts as proof (OANP's test-mode
    /// receipts), one sentence each: shown on every receipt view while on.
    pub relaxed: Vec<String>,
}

/// The receipts screen: what is filed, what a person removed, and the
/// settings in effect that loosen what counts as proof.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ReceiptList {
    /// Every filed receipt, the latest first, verified now.
    pub receipts: Vec<ReceiptRow>,
    /// Every removal, the latest first: the record stays when the receipt goes.
    pub removed: Vec<ReceiptRemoval>,
    /// As [`ReceiptView::relaxed`].
    pub relaxed: Vec<String>,
}

/// The record a removal leaves: which receipt (its file and SHA-256), what
/// it said when it was removed, who removed it and when. The bytes are gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ReceiptRemoval {
    /// The id the receipt had.
    pub receipt_id: String,
    /// Its protocol's wire name.
    pub protocol: String,
    /// The file it was imported from.
    pub file_name: String,
    /// Lowercase hex SHA-256 of the receipt's bytes.
    pub receipt_sha256: String,
    /// The log file's name, when one was filed with it.
    pub log_file_name: Option<String>,
    /// Lowercase hex SHA-256 of the log's bytes, when there was one.
    pub log_sha256: Option<String>,
    /// Filed by the sandbox.
    pub sandbox: bool,
    /// When it was filed.
    pub imported_at: String,
    /// The signed session id it named (counterparty text).
    pub session_id: Option<String>,
    /// What it said when it was removed (proof or not, and why).
    pub headline: String,
    /// When it was removed.
    pub removed_at: String,
    /// Who removed it: the approver's name as this console had it.
    pub removed_by_name: String,
    /// And email.
    pub removed_by_email: String,
}

/// The session log this console holds, checked in place of a filed one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HeldLog {
    /// The host the session is on.
    pub host_id: String,
    /// The session, as the console names it (`oanp:<id>`).
    pub session_id: String,
    /// Its entries as stored.
    pub entries: u32,
}

/// Names one filed receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ReceiptRef {
    /// Its id.
    pub receipt_id: String,
}

/// What `export_receipt` wrote: the receipt and its log, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ReceiptExport {
    /// The receipt file.
    pub receipt: ExportResult,
    /// The log file, when there is one.
    pub log: Option<ExportResult>,
}
