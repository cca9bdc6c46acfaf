//! `anp`: the ANP/0.1 command line. Precise messages on stderr prefixed
//! `anp: `, nothing on stdout but the answer, and meaningful exit codes
//! (0 ok, 1 the answer is "no", 2 the input could not be used).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anp::ChainHead;
use clap::{Parser, Subcommand};

mod canonical_cmd;
mod diff_cmd;
mod human;
mod input;
mod keygen;
mod vendor;
mod verify;

/// The command line as clap parses it.
#[derive(Parser, Debug)]
#[command(
    name = "anp",
    version,
    about = "ANP/0.1 keys, log verification, canonical JSON and offer diffs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Every top-level subcommand.
#[derive(Subcommand, Debug)]
enum Command {
    /// Generate an Ed25519 identity and write it to a key file (mode 0600).
    Keygen {
        /// Where to write the key [default: $ANP_HOME/key.json, ANP_HOME
        /// defaulting to ~/.config/anp].
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace an existing key file (its identity is lost).
        #[arg(long)]
        force: bool,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Verify a session log document: exit 0 verified, 1 failed, 2 unreadable.
    Verify {
        /// The log document (`-` for stdin).
        #[arg(value_name = "LOG.json")]
        log: PathBuf,
        /// Check only the events after this trusted head; a log that does not
        /// hold it is reported as a rewrite.
        #[arg(long, value_name = "SEQ:HASH", value_parser = parse_pin)]
        pin: Option<ChainHead>,
        /// Print one machine-readable report object.
        #[arg(long)]
        json: bool,
    },
    /// Print the canonical JSON of a file (exact bytes, no trailing newline).
    Canonical {
        /// The JSON file (`-` for stdin).
        file: PathBuf,
        /// Print the SHA-256 hex of the canonical JSON instead.
        #[arg(long)]
        hash: bool,
    },
    /// Compare two offers: exit 0 identical, 1 different, 2 not valid offers.
    Diff {
        /// The earlier offer (offer JSON, as in an event's payload).
        #[arg(value_name = "OLD.json")]
        old: PathBuf,
        /// The later offer.
        #[arg(value_name = "NEW.json")]
        new: PathBuf,
        /// Print the OfferDiff object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Vendor-side client commands.
    Vendor {
        /// Print one JSON object instead of text.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        command: vendor::VendorCommand,
    },
}

fn parse_pin(text: &str) -> Result<ChainHead, String> {
    ChainHead::parse_pin(text).ok_or_else(|| {
        "expected SEQ:HASH, a number, a colon and 64 lowercase hex digits".to_owned()
    })
}

/// The process outcome of a command: what to print where, and the exit code.
struct Outcome {
    stdout: String,
    code: u8,
}

/// Exit code when the answer is yes.
const OK: u8 = 0;
/// Exit code when the answer is no (the log does not verify, the offers differ).
const NO: u8 = 1;
/// Exit code when the input could not be used.
const UNUSABLE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Vendor { json, command } => return vendor::run(command, json),
        Command::Keygen { out, force, json } => run_keygen(out, force, json),
        Command::Verify { log, pin, json } => run_verify(log, pin, json),
        Command::Canonical { file, hash } => canonical_cmd::canonical(&file, hash)
            .map(|text| Outcome {
                stdout: if hash { text + "\n" } else { text },
                code: OK,
            })
            .map_err(|e| e.to_string()),
        Command::Diff { old, new, json } => run_diff(old, new, json),
    };
    match result {
        Ok(outcome) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`anp ... | head`) is not an error worth a message.
            let _ = stdout.write_all(outcome.stdout.as_bytes());
            let _ = stdout.flush();
            ExitCode::from(outcome.code)
        }
        Err(message) => {
            eprintln!("anp: {message}");
            ExitCode::from(UNUSABLE)
        }
    }
}

fn run_keygen(out: Option<PathBuf>, force: bool, json: bool) -> Result<Outcome, String> {
    let path = match out {
        Some(path) => path,
        None => keygen::default_key_path().map_err(|e| e.to_string())?,
    };
    let made = keygen::keygen(&path, force).map_err(|e| e.to_string())?;
    let stdout = if json {
        to_json_line(&made)
    } else {
        format!(
            "public key   {}\nfingerprint  {}\nkey file     {}\n",
            made.public_key,
            made.fingerprint,
            input::terminal_safe(&made.key_file)
        )
    };
    Ok(Outcome { stdout, code: OK })
}

fn run_verify(log: PathBuf, pin: Option<ChainHead>, json: bool) -> Result<Outcome, String> {
    let out = verify::verify_file(&log, pin.as_ref()).map_err(|e| e.to_string())?;
    let code = if out.report.ok { OK } else { NO };
    let stdout = if json {
        to_json_line(&out)
    } else {
        verify::render_text(&out)
    };
    Ok(Outcome { stdout, code })
}

fn run_diff(old: PathBuf, new: PathBuf, json: bool) -> Result<Outcome, String> {
    let (old, new, diff) = diff_cmd::diff_files(&old, &new).map_err(|e| e.to_string())?;
    let code = if diff_cmd::is_identical(&diff) {
        OK
    } else {
        NO
    };
    let stdout = if json {
        to_json_line(&diff)
    } else {
        diff_cmd::render_text(&old, &new, &diff)
    };
    Ok(Outcome { stdout, code })
}

fn to_json_line<T: serde::Serialize>(value: &T) -> String {
    // Serializing these plain structs cannot fail; an empty object is never
    // printed in practice but keeps the path total.
    let mut text = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}
