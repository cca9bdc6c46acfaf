//! Filed receipts: import (the bytes the interface read from files the
//! person chose, verified by their protocol before anything is stored), the
//! list and one receipt in full (verified again each time, under the
//! settings in effect), and the export (the receipt and its log byte for
//! byte), and a removal (the bytes go, the record of the removal stays).
//! Protocol-neutral: the protocol's jobs are behind
//! [`crate::protocol::receipt_seam`].

use std::path::Path;

use crate::config::EngineConfig;
use crate::error::EngineError;
use crate::protocol::{receipt_seam, receipt_seams, ReadReceipt, ReceiptSeam};
use crate::settings::Effective;
use crate::store::{ReceiptRecord, Store};
use crate::views::{
    ExportResult, HeldLog, ImportReceipt, ReceiptExport, ReceiptList, ReceiptRemoval, ReceiptRow,
    ReceiptView,
};

/// The longest file name kept (characters).
const MAX_FILE_NAME: usize = 255;

/// A file name as the person's system gave it, kept as data: the last path
/// component, control characters dropped, at most [`MAX_FILE_NAME`] characters.
fn file_name(name: &str, fallback: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let kept: String = last
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_FILE_NAME)
        .collect();
    if kept.trim().is_empty() {
        fallback.to_owned()
    } else {
        kept
    }
}

/// The id of a receipt filed with (or without) a log: the same bytes filed
/// twice are one receipt.
fn receipt_id(receipt: &[u8], log: Option<&[u8]>) -> String {
    let both = format!(
        "{}:{}",
        jcs::sha256_hex(receipt),
        log.map(jcs::sha256_hex).unwrap_or_default()
    );
    format!("rcpt_{}", &jcs::sha256_hex(both.as_bytes())[..24])
}

/// A receipt as read: verified with its filed log, or else with the log
/// of the session it signs when this console holds that session.
struct Read {
    receipt: ReadReceipt,
    held: Option<HeldLog>,
}

fn read(store: &Store, config: &EngineConfig, r: &ReceiptRecord) -> Result<Read, EngineError> {
    let settings = Effective::load(store, config)?;
    let seam = receipt_seam(&r.protocol)?;
    read_with(store, seam, &r.body, r.log.as_deref(), &settings)
}

fn read_with(
    store: &Store,
    seam: &dyn ReceiptSeam,
    body: &[u8],
    log: Option<&[u8]>,
    settings: &Effective,
) -> Result<Read, EngineError> {
    let receipt = seam.read(body, log, settings)?;
    if log.is_some() {
        return Ok(Read {
            receipt,
            held: None,
        });
    }
    let Some((held, log)) = held_log(store, seam, receipt.session_id.as_deref())? else {
        return Ok(Read {
            receipt,
            held: None,
        });
    };
    // The console's copy was verified as it arrived; one the protocol
    // cannot read as a log (larger than it reads, say) leaves the receipt
    // as read without one.
    Ok(match seam.read(body, Some(&log), settings) {
        Ok(receipt) => Read {
            receipt,
            held: Some(held),
        },
        Err(_) => Read {
            receipt,
            held: None,
        },
    })
}

/// The stored session a receipt signs, and its log as the seam reads one.
fn held_log(
    store: &Store,
    seam: &dyn ReceiptSeam,
    signed_session_id: Option<&str>,
) -> Result<Option<(HeldLog, Vec<u8>)>, EngineError> {
    let Some(wanted) = signed_session_id.and_then(|id| seam.held_session(id)) else {
        return Ok(None);
    };
    let Some(session) = store
        .sessions()?
        .into_iter()
        .find(|s| s.protocol == seam.name() && s.session_id == wanted)
    else {
        return Ok(None);
    };
    let events = store.events(&session.host_id, &session.session_id)?;
    if events.is_empty() {
        return Ok(None);
    }
    Ok(seam.held_log(&events).map(|log| {
        (
            HeldLog {
                host_id: session.host_id,
                session_id: session.session_id,
                entries: u32::try_from(events.len()).unwrap_or(u32::MAX),
            },
            log,
        )
    }))
}

fn row(r: &ReceiptRecord, read: &ReadReceipt) -> ReceiptRow {
    ReceiptRow {
        receipt_id: r.receipt_id.clone(),
        protocol: r.protocol.clone(),
        file_name: r.file_name.clone(),
        has_log: r.log.is_some(),
        imported_at: r.imported_at.clone(),
        sandbox: r.sandbox,
        session_id: read.session_id.clone(),
        proof: read.proof,
        status: read.status.clone(),
        test_mode: read.test_mode,
        headline: read.headline.clone(),
    }
}

/// The sentence of every protocol whose settings in effect loosen what
/// counts as proof.
fn relaxed(settings: &Effective) -> Vec<String> {
    receipt_seams()
        .filter_map(|s| s.relaxed(settings))
        .collect()
}

fn full(r: &ReceiptRecord, read: Read, filed_before: bool, settings: &Effective) -> ReceiptView {
    let Read {
        receipt: read,
        held,
    } = read;
    ReceiptView {
        row: row(r, &read),
        log_file_name: r.log_file_name.clone(),
        receipt_sha256: jcs::sha256_hex(&r.body),
        log_sha256: r.log.as_deref().map(jcs::sha256_hex),
        receipt_bytes: r.body.len() as u32,
        log_bytes: r.log.as_ref().map(|l| l.len() as u32),
        detail: read.detail,
        held_log: held,
        filed_before,
        relaxed: relaxed(settings),
    }
}

/// Verifies the receipt and files it (nothing is stored when its protocol
/// says the bytes are not one of its receipts, see [`ReceiptSeam::admit`]);
/// the receipt as shown. `sandbox` marks one the sandbox filed.
pub(crate) fn import(
    store: &Store,
    config: &EngineConfig,
    request: &ImportReceipt,
    sandbox: bool,
    now: &str,
) -> Result<ReceiptView, EngineError> {
    let seam = receipt_seam(&request.protocol)?;
    let log = request.log_bytes.as_deref();
    if log.is_some() != request.log_file_name.is_some() {
        return Err(EngineError::InvalidInput(
            "A session log needs both its name and its bytes. Nothing was filed.".into(),
        ));
    }
    seam.admit(&request.bytes)?;
    let settings = Effective::load(store, config)?;
    let read = read_with(store, seam, &request.bytes, log, &settings)?;
    let record = ReceiptRecord {
        receipt_id: receipt_id(&request.bytes, log),
        protocol: seam.name().to_owned(),
        file_name: file_name(&request.file_name, "receipt.json"),
        body: request.bytes.clone(),
        log_file_name: request
            .log_file_name
            .as_deref()
            .map(|n| file_name(n, "log.json")),
        log: request.log_bytes.clone(),
        sandbox,
        imported_at: now.to_owned(),
    };
    let filed_before = !store.insert_receipt(&record)?;
    // Filed before (same bytes): the record as it was first filed.
    let kept = store.receipt(&record.receipt_id)?.unwrap_or(record);
    Ok(full(&kept, read, filed_before, &settings))
}

/// Every filed receipt, the latest first, each verified now; every removal.
pub(crate) fn list(store: &Store, config: &EngineConfig) -> Result<ReceiptList, EngineError> {
    let settings = Effective::load(store, config)?;
    let receipts = store
        .receipts()?
        .iter()
        .map(|r| Ok(row(r, &read(store, config, r)?.receipt)))
        .collect::<Result<_, EngineError>>()?;
    Ok(ReceiptList {
        receipts,
        removed: store.receipt_removals()?,
        relaxed: relaxed(&settings),
    })
}

/// Removes a filed receipt: its bytes are deleted and the record of the
/// removal (which file, its SHA-256, what it said, who and when) is kept.
pub(crate) fn remove(
    store: &Store,
    config: &EngineConfig,
    receipt_id: &str,
    now: &str,
) -> Result<ReceiptRemoval, EngineError> {
    let r = record(store, receipt_id)?;
    let settings = Effective::load(store, config)?;
    // What it said as it went; bytes its protocol no longer reads still go.
    let (session_id, headline) = match read(store, config, &r) {
        Ok(read) => (read.receipt.session_id, read.receipt.headline),
        Err(e) => (None, e.to_string()),
    };
    let by = settings.approver(config);
    let removal = ReceiptRemoval {
        receipt_id: r.receipt_id.clone(),
        protocol: r.protocol.clone(),
        file_name: r.file_name.clone(),
        receipt_sha256: jcs::sha256_hex(&r.body),
        log_file_name: r.log_file_name.clone(),
        log_sha256: r.log.as_deref().map(jcs::sha256_hex),
        sandbox: r.sandbox,
        imported_at: r.imported_at.clone(),
        session_id,
        headline,
        removed_at: now.to_owned(),
        removed_by_name: by.name,
        removed_by_email: by.email,
    };
    if !store.remove_receipt(&removal)? {
        return Err(EngineError::NotFound {
            what: "receipt",
            id: receipt_id.to_owned(),
        });
    }
    Ok(removal)
}

fn record(store: &Store, receipt_id: &str) -> Result<ReceiptRecord, EngineError> {
    store
        .receipt(receipt_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "receipt",
            id: receipt_id.to_owned(),
        })
}

/// One filed receipt in full, verified now.
pub(crate) fn view(
    store: &Store,
    config: &EngineConfig,
    receipt_id: &str,
) -> Result<ReceiptView, EngineError> {
    let r = record(store, receipt_id)?;
    let settings = Effective::load(store, config)?;
    let read = read(store, config, &r)?;
    Ok(full(&r, read, false, &settings))
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<ExportResult, EngineError> {
    crate::owner_only::create_dir(dir)?;
    let path = dir.join(name);
    crate::owner_only::write(&path, bytes)?;
    Ok(ExportResult {
        path: path.display().to_string(),
        bytes: bytes.len() as u64,
    })
}

/// Writes the receipt and its log into `dir`, byte for byte as filed.
pub(crate) fn export(
    store: &Store,
    dir: &Path,
    receipt_id: &str,
) -> Result<ReceiptExport, EngineError> {
    let r = record(store, receipt_id)?;
    let (receipt_name, log_name) = receipt_seam(&r.protocol)?.export_names(&r.receipt_id);
    Ok(ReceiptExport {
        receipt: write(dir, &receipt_name, &r.body)?,
        log: r
            .log
            .as_deref()
            .map(|log| write(dir, &log_name, log))
            .transpose()?,
    })
}

/// Files a protocol's demo receipt, marked as the sandbox's (once: the
/// same bytes are one receipt; never again once the person removed it).
pub(crate) fn file_sandbox_receipt(
    store: &Store,
    config: &EngineConfig,
    protocol: &str,
    file_name: &str,
    bytes: &[u8],
    now: &str,
) -> Result<(), EngineError> {
    if store.receipt_was_removed(&receipt_id(bytes, None))? {
        return Ok(());
    }
    let request = ImportReceipt {
        protocol: protocol.to_owned(),
        file_name: file_name.to_owned(),
        bytes: bytes.to_vec(),
        log_file_name: None,
        log_bytes: None,
    };
    import(store, config, &request, true, now)?;
    Ok(())
}
