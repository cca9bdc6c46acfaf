//! `countersign-verify`: one verifier for every protocol Countersign speaks.
//!
//! | module | what it owns |
//! |---|---|
//! | [`detect`](mod@detect) | the one table that says what a file is |
//! | [`anp_log`] | ANP/0.1 log documents, through `crates/anp`'s public API |
//! | [`concordia_files`] | Concordia transcripts, receipts, attestations and mandates |
//! | [`oanp_receipt`] | OANP arbitrated receipts (and their session logs), in OANP's own report |
//! | [`pack`] | a Countersign audit pack: every file, record and decision in it |
//! | [`suite`] | `vectors DIR`: a conformance suite with a RUNNER_CONTRACT manifest |
//! | [`report`] | the outcome of one file, as text for people and JSON for machines |
//!
//! IO lives here, at the edge; every rule is the protocol crates'.

#![warn(missing_docs)]

pub mod anp_log;
pub mod concordia_files;
pub mod detect;
pub mod oanp_receipt;
pub mod pack;
pub mod report;
pub mod suite;

pub use detect::{detect, Kind, Members, TopLevel};
pub use report::{Finding, Outcome};

/// What the verifier needs besides the file: the time, and optional
/// material a bare artifact does not carry.
#[derive(Debug, Clone)]
pub struct Options {
    /// The verification moment (expiry, mandate windows). The binary passes the clock.
    pub now: time::OffsetDateTime,
    /// The offer a receipt is presented with (`--offer FILE`).
    pub offer: Option<serde_json::Value>,
    /// A transcript pin (`--pin COUNT:HASH`): verify only what follows it.
    pub pin: Option<concordia::Head>,
}

/// A file's bytes, with its top level read once (see [`TopLevel`]).
pub struct Input<'a> {
    bytes: &'a [u8],
    top: Option<TopLevel<'a>>,
    /// A large file read as a Concordia transcript document, when it reads so.
    transcript: Option<concordia::document::DocumentParts<'a>>,
}

/// From this size a file is also read as a Concordia transcript document
/// while its top level is read (below it, a second thread costs more than
/// it saves).
const READ_AHEAD_FROM: usize = 1 << 20;

impl<'a> Input<'a> {
    /// Reads the top level of `bytes`, when they are one JSON object. A
    /// large file is meanwhile read on a second core as a Concordia
    /// transcript document, the one large artifact whose reading is not
    /// its protocol's own (the two reads are independent, about as long
    /// each; the second is dropped when the file is something else).
    pub fn new(bytes: &'a [u8]) -> Input<'a> {
        if bytes.len() < READ_AHEAD_FROM
            || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2
        {
            return Input {
                bytes,
                top: TopLevel::parse(bytes).ok(),
                transcript: None,
            };
        }
        let (top, transcript) = std::thread::scope(|scope| {
            let ahead = scope.spawn(|| concordia::document::DocumentParts::read(bytes));
            let top = TopLevel::parse(bytes).ok();
            (top, ahead.join().ok().flatten())
        });
        Input {
            bytes,
            top,
            transcript,
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Its top level, when the bytes are one JSON object.
    pub fn top(&self) -> Option<&TopLevel<'a>> {
        self.top.as_ref()
    }

    /// What the file is, when its text is one JSON object the table knows.
    pub fn kind(&self) -> Option<Kind> {
        self.top.as_ref().and_then(|top| detect(top))
    }
}

/// Verifies one file from its bytes: the large artifacts (ANP logs,
/// Concordia transcripts) go to their protocol as bytes, everything else is
/// parsed and goes through [`verify_value`]. Text that is not JSON is
/// unreadable.
pub fn verify_input(file: &str, input: &Input<'_>, options: &Options) -> Outcome {
    match input.kind() {
        Some(Kind::AnpLog) => {
            let outcome = anp_log::verify(file, input.bytes);
            // The top level read, but the text is not JSON all through (a
            // lone surrogate in a string, say): say so as for any other file.
            if outcome.status == "unreadable" {
                if let Err(e) = serde_json::from_slice::<serde_json::Value>(input.bytes) {
                    return Outcome::unreadable(file, format!("not JSON: {e}"));
                }
            }
            outcome
        }
        Some(Kind::AnpExport) => match input.top().and_then(|top| top.get("log")) {
            Some(log) => {
                let decisions = input
                    .top()
                    .and_then(|top| top.get("decisions"))
                    .and_then(|d| {
                        serde_json::from_str::<Vec<&serde_json::value::RawValue>>(d.get()).ok()
                    });
                anp_log::export(file, log.get().as_bytes(), decisions.map(|d| d.len()))
            }
            None => Outcome::unreadable(file, "an ANP session export without its log"),
        },
        Some(Kind::ConcordiaTranscript) => concordia_files::transcript(
            file,
            input.bytes,
            input.top(),
            input.transcript.as_ref(),
            options,
        ),
        _ => match serde_json::from_slice::<serde_json::Value>(input.bytes) {
            Ok(value) => verify_value(file, &value, options),
            Err(e) => Outcome::unreadable(file, format!("not JSON: {e}")),
        },
    }
}

/// Verifies one parsed document: detect it, then hand it to its protocol.
pub fn verify_value(file: &str, value: &serde_json::Value, options: &Options) -> Outcome {
    match detect(value) {
        Some(Kind::AnpLog) => match serde_json::to_vec(value) {
            Ok(bytes) => anp_log::verify(file, &bytes),
            Err(e) => Outcome::unreadable(file, format!("not JSON: {e}")),
        },
        Some(Kind::AnpExport) => match serde_json::to_vec(&value["log"]) {
            Ok(bytes) => anp_log::export(file, &bytes, value["decisions"].as_array().map(Vec::len)),
            Err(e) => Outcome::unreadable(file, format!("not JSON: {e}")),
        },
        Some(Kind::ConcordiaTranscript) => match serde_json::to_vec(value) {
            Ok(bytes) => concordia_files::transcript(file, &bytes, None, None, options),
            Err(e) => Outcome::unreadable(file, format!("not JSON: {e}")),
        },
        Some(Kind::ConcordiaReceipt) => concordia_files::receipt(file, value, options),
        Some(Kind::ConcordiaAttestation) => concordia_files::attestation(file, value),
        Some(Kind::ConcordiaMandate) => concordia_files::mandate(file, value, options),
        // Read from its bytes by the OANP crate (see `oanp_receipt`); the
        // binary sends it there before this point.
        Some(Kind::OanpReceipt) => Outcome::unreadable(
            file,
            "an OANP receipt is verified from its bytes: use countersign_verify::oanp_receipt::verify",
        ),
        None if value.get("concordia_attestation").is_some() && value.get("parties").is_some() => Outcome::unreadable(
            file,
            "a bare Concordia attestation: give it with its parties' keys as {\"attestation\": …, \"keys\": {agent id: base64url key}} (and \"messages\" to check its set-binding)",
        ),
        None if value.get("mandate_id").is_some() && value.get("validity").is_some() => Outcome::unreadable(
            file,
            "a bare Concordia mandate: give it with its issuer's key as {\"mandate\": …, \"issuer_public_key\": base64url}",
        ),
        None => Outcome::unreadable(
            file,
            "not an artifact this tool knows: an ANP log document (or a Countersign export of one), a Concordia transcript {\"messages\", \"keys\"}, an ApprovalReceipt, an attestation {\"attestation\", \"keys\"} or a mandate {\"mandate\", \"issuer_public_key\"}",
        ),
    }
}
