//! `anp vendor ...`: the vendor-side client commands. Placeholder until the
//! client engineer lands the real commands; it says so plainly and exits 2.

use std::process::ExitCode;

/// The vendor subcommands; the placeholder has one so the dispatch compiles.
#[derive(clap::Subcommand, Debug)]
pub enum VendorCommand {
    /// Not built yet.
    Status,
}

/// Runs a vendor subcommand. `vendor::run` owns its own async runtime.
pub fn run(cmd: VendorCommand, json: bool) -> ExitCode {
    let _ = (cmd, json);
    eprintln!("anp: `anp vendor` is not built yet");
    ExitCode::from(2)
}
