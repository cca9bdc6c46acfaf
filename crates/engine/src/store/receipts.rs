//! Filed receipts: the bytes of a receipt and of its session log exactly as
//! imported, and where they came from. Nothing here reads them; the
//! protocol verifies them each time they are shown. A removal deletes the
//! bytes and keeps a record of it in the same transaction.

use rusqlite::{params, OptionalExtension, Row};

use super::Store;
use crate::views::ReceiptRemoval;

/// One filed receipt, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptRecord {
    /// Its id (derived from the bytes: the same files filed twice are one).
    pub receipt_id: String,
    /// Its protocol's wire name.
    pub protocol: String,
    /// The receipt file's name.
    pub file_name: String,
    /// The receipt's bytes, as imported.
    pub body: Vec<u8>,
    /// The log file's name, when there is one.
    pub log_file_name: Option<String>,
    /// The log's bytes, as imported.
    pub log: Option<Vec<u8>>,
    /// Filed by the sandbox.
    pub sandbox: bool,
    /// When.
    pub imported_at: String,
}

fn receipt_from_row(r: &Row<'_>) -> rusqlite::Result<ReceiptRecord> {
    Ok(ReceiptRecord {
        receipt_id: r.get("receipt_id")?,
        protocol: r.get("protocol")?,
        file_name: r.get("file_name")?,
        body: r.get("body")?,
        log_file_name: r.get("log_file_name")?,
        log: r.get("log")?,
        sandbox: r.get("sandbox")?,
        imported_at: r.get("imported_at")?,
    })
}

impl Store {
    /// Files a receipt; one already filed under the same id is kept as it
    /// was (true when this one was stored).
    pub fn insert_receipt(&self, r: &ReceiptRecord) -> rusqlite::Result<bool> {
        let n = self.conn.execute(
            "INSERT OR IGNORE INTO receipts
               (receipt_id, protocol, file_name, body, log_file_name, log, sandbox, imported_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                r.receipt_id,
                r.protocol,
                r.file_name,
                r.body,
                r.log_file_name,
                r.log,
                r.sandbox,
                r.imported_at
            ],
        )?;
        Ok(n == 1)
    }

    /// Every filed receipt, the latest first.
    pub fn receipts(&self) -> rusqlite::Result<Vec<ReceiptRecord>> {
        let mut st = self
            .conn
            .prepare("SELECT * FROM receipts ORDER BY imported_at DESC, receipt_id")?;
        let rows = st.query_map([], receipt_from_row)?;
        rows.collect()
    }

    /// One filed receipt.
    pub fn receipt(&self, receipt_id: &str) -> rusqlite::Result<Option<ReceiptRecord>> {
        self.conn
            .query_row(
                "SELECT * FROM receipts WHERE receipt_id = ?1",
                params![receipt_id],
                receipt_from_row,
            )
            .optional()
    }

    /// Deletes a filed receipt and stores the record of its removal, both
    /// or neither; false (and nothing stored) when no such receipt is filed.
    pub fn remove_receipt(&self, removal: &ReceiptRemoval) -> rusqlite::Result<bool> {
        let tx = self.conn.unchecked_transaction()?;
        let n = tx.execute(
            "DELETE FROM receipts WHERE receipt_id = ?1",
            params![removal.receipt_id],
        )?;
        if n == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO receipt_removals
               (receipt_id, protocol, file_name, receipt_sha256, log_file_name, log_sha256,
                sandbox, imported_at, session_id, headline, removed_at, removed_by_name,
                removed_by_email)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                removal.receipt_id,
                removal.protocol,
                removal.file_name,
                removal.receipt_sha256,
                removal.log_file_name,
                removal.log_sha256,
                removal.sandbox,
                removal.imported_at,
                removal.session_id,
                removal.headline,
                removal.removed_at,
                removal.removed_by_name,
                removal.removed_by_email
            ],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// Every removal, the latest first.
    pub fn receipt_removals(&self) -> rusqlite::Result<Vec<ReceiptRemoval>> {
        let mut st = self
            .conn
            .prepare("SELECT * FROM receipt_removals ORDER BY removed_at DESC, removal_id DESC")?;
        let rows = st.query_map([], |r| {
            Ok(ReceiptRemoval {
                receipt_id: r.get("receipt_id")?,
                protocol: r.get("protocol")?,
                file_name: r.get("file_name")?,
                receipt_sha256: r.get("receipt_sha256")?,
                log_file_name: r.get("log_file_name")?,
                log_sha256: r.get("log_sha256")?,
                sandbox: r.get("sandbox")?,
                imported_at: r.get("imported_at")?,
                session_id: r.get("session_id")?,
                headline: r.get("headline")?,
                removed_at: r.get("removed_at")?,
                removed_by_name: r.get("removed_by_name")?,
                removed_by_email: r.get("removed_by_email")?,
            })
        })?;
        rows.collect()
    }

    /// True when a receipt with this id was ever removed.
    pub fn receipt_was_removed(&self, receipt_id: &str) -> rusqlite::Result<bool> {
        self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM receipt_removals WHERE receipt_id = ?1)",
            params![receipt_id],
            |r| r.get(0),
        )
    }
}
