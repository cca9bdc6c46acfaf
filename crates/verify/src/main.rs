//! `countersign-verify FILE… [--json] [--offer FILE] [--pin COUNT:HASH] [--now TIME] [--log LOG] [--allow-test]`
//! `countersign-verify vectors DIR [--json]`
//! `countersign-verify pack DIR [--json]`
//!
//! Exit codes: 0 every file verifies (every vector as expected), 1 something
//! does not, 2 something could not be read (or the command line is wrong).

use std::path::Path;
use std::process::ExitCode;

use countersign_verify::{
    concordia_files, oanp_receipt, report::safe, suite, verify_input, Input, Kind, Options, Outcome,
};
use time::OffsetDateTime;

/// mimalloc: a transcript's JSON tree is many small nodes, allocated at once.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str =
    "usage: countersign-verify FILE... [--json] [--offer FILE] [--pin COUNT:HASH] [--now TIME]
                          [--log LOG.json] [--allow-test]
       countersign-verify vectors DIR [--json]
       countersign-verify pack DIR [--json]

Verifies ANP/0.1 log documents (bare, or a Countersign session export's), Concordia transcripts ({\"messages\", \"keys\"}),
ApprovalReceipts, attestations ({\"attestation\", \"keys\"}) and mandates
({\"mandate\", \"issuer_public_key\"}), and OANP arbitrated receipts (with the session's
envelopes from --log; a test-mode arbiter's receipt counts as proof only with --allow-test).
`pack DIR` checks a Countersign audit pack: every file against its index, every record, and
per decision whether it is proven, by whom, as which role, under which rule.
Exit 0 when all verify (an OANP receipt: when it is proof), 1 when not, 2 when unreadable.";

fn read_json(path: &str) -> Result<serde_json::Value, String> {
    let bytes = read_bytes(path)?;
    serde_json::from_slice(&bytes).map_err(|e| format!("not JSON: {e}"))
}

fn read_bytes(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))
}

/// A file's bytes: mapped when it is large (a 10,000-message transcript is
/// 6 MB, and copying it into fresh memory was a twentieth of the run),
/// read otherwise.
enum FileBytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Read(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

/// Files at least this large are mapped.
const MAP_FROM: u64 = 1 << 20;

fn file_bytes(path: &str) -> Result<FileBytes, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let large = file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() >= MAP_FROM);
    if large {
        // SAFETY: the map is read-only and lives until this file's outcome
        // is printed. Were another process to truncate the file meanwhile,
        // reading past the new end would fault (as for ripgrep, which maps
        // files the same way); a verifier is given files at rest.
        if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
            return Ok(FileBytes::Mapped(map));
        }
    }
    read_bytes(path).map(FileBytes::Read)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut json = false;
    let mut files = Vec::new();
    let mut options = Options {
        now: OffsetDateTime::now_utc(),
        offer: None,
        pin: None,
    };
    let mut log: Option<(String, Vec<u8>)> = None;
    let mut allow_test = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| -> Result<String, String> {
            it.next().cloned().ok_or(format!("{flag} needs a value"))
        };
        let result: Result<(), String> = match arg.as_str() {
            "--json" => {
                json = true;
                Ok(())
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "--allow-test" => {
                allow_test = true;
                Ok(())
            }
            "--log" => value("--log").and_then(|p| {
                read_bytes(&p)
                    .map_err(|e| format!("--log {p}: {e}"))
                    .map(|bytes| log = Some((p, bytes)))
            }),
            "--offer" => value("--offer")
                .and_then(|p| read_json(&p).map_err(|e| format!("--offer {p}: {e}")))
                .map(|v| options.offer = Some(v)),
            "--pin" => value("--pin")
                .and_then(|p| concordia_files::parse_pin(&p))
                .map(|p| options.pin = Some(p)),
            "--now" => value("--now")
                .and_then(|t| {
                    concordia::approval_receipt::datetime::parse(&t)
                        .map_err(|e| format!("--now: {e}"))
                })
                .map(|t| options.now = t),
            flag if flag.starts_with("--") => Err(format!("unknown option {flag}")),
            file => {
                files.push(file.to_owned());
                Ok(())
            }
        };
        if let Err(e) = result {
            eprintln!("countersign-verify: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    if files.first().map(String::as_str) == Some("vectors") {
        return vectors(&files[1..], json);
    }
    if files.first().map(String::as_str) == Some("pack") {
        let [_, dir] = files.as_slice() else {
            eprintln!("countersign-verify: pack takes one audit pack folder (holding index.json)\n{USAGE}");
            return ExitCode::from(2);
        };
        let report = countersign_verify::pack::verify(dir, &options);
        if json {
            println!("{}", serde_json::to_string(&report).unwrap_or_default());
        } else if report.status == "unreadable" {
            eprint!("countersign-verify: {}", report.to_text());
        } else {
            print!("{}", report.to_text());
        }
        return ExitCode::from(report.exit_code() as u8);
    }
    if files.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let mut code = 0;
    let mut oanp_seen = false;
    for file in &files {
        let outcome = match file_bytes(file) {
            Err(e) => Outcome::unreadable(file, e),
            Ok(bytes) => {
                let input = Input::new(&bytes);
                if input.kind() == Some(Kind::OanpReceipt) {
                    oanp_seen = true;
                    let log = log.as_ref().map(|(p, b)| (p.as_str(), b.as_slice()));
                    let printed = oanp_receipt::verify(file, &bytes, log, allow_test, json);
                    print!("{}", printed.stdout);
                    eprint!("{}", printed.stderr);
                    code = code.max(printed.exit_code);
                    continue;
                }
                verify_input(file, &input, &options)
            }
        };
        code = code.max(outcome.exit_code());
        if json {
            println!("{}", serde_json::to_string(&outcome).unwrap_or_default());
        } else if outcome.status == "unreadable" {
            eprint!("countersign-verify: {}", outcome.to_text());
        } else {
            print!("{}", outcome.to_text());
        }
    }
    if log.is_some() && !oanp_seen {
        eprintln!("countersign-verify: --log is the session log of an OANP receipt, and no file given is one");
        return ExitCode::from(2);
    }
    ExitCode::from(code as u8)
}

fn vectors(args: &[String], json: bool) -> ExitCode {
    let [dir] = args else {
        eprintln!(
            "countersign-verify: vectors takes one suite folder (holding manifest.json)\n{USAGE}"
        );
        return ExitCode::from(2);
    };
    let lines = match suite::run(Path::new(dir)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("countersign-verify: {}", e.0);
            return ExitCode::from(2);
        }
    };
    let passed = lines.iter().filter(|l| l.ok()).count();
    let failed = lines.len() - passed;
    for l in &lines {
        if json {
            let v = serde_json::json!({"id": l.id, "expected": l.expected, "got": l.got, "ok": l.ok(), "failures": l.why});
            println!("{v}");
        } else {
            println!(
                "{} expected={} got={} {}",
                safe(&l.id),
                l.expected,
                l.got,
                if l.ok() { "ok" } else { "MISMATCH" }
            );
            if !l.ok() {
                for why in &l.why {
                    println!("  {}", safe(why));
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
