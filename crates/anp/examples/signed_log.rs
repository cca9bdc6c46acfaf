//! Writes a validly signed synthetic ANP/0.1 log document to stdout, for
//! timing whole `anp verify` runs against other verifiers on the same file:
//!
//! ```sh
//! cargo run --release -p anp --example signed_log -- 10000 > log-10k.json
//! ```
//!
//! Fresh keys every run; the mix of events is `benches/support/synthetic.rs`'s.

use std::io::Write;

#[path = "../benches/support/synthetic.rs"]
mod synthetic;

fn main() -> std::process::ExitCode {
    let arg = std::env::args().nth(1);
    let events = match arg.as_deref().map(str::parse::<usize>) {
        None => 10_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: signed_log [EVENTS]  (a positive count, default 10000)");
            return std::process::ExitCode::from(2);
        }
    };
    let vendor = anp::keys::generate_signing_key();
    let buyer = anp::keys::generate_signing_key();
    let log = synthetic::build_log(events, &vendor, &buyer);
    let doc = synthetic::document(log, &vendor, &buyer);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = serde_json::to_writer(&mut out, &doc)
        .map_err(std::io::Error::from)
        .and_then(|()| out.flush());
    match written {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("signed_log: cannot write: {e}");
            std::process::ExitCode::from(1)
        }
    }
}
