//! `anp`: the ANP/0.1 command line. Precise messages on stderr prefixed
//! `anp: `, nothing on stdout but the answer, and meaningful exit codes
//! (0 ok, 1 the answer is "no", 2 the input could not be used).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod vendor;

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
    /// Vendor-side client commands.
    Vendor {
        /// Print one JSON object instead of text.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        command: vendor::VendorCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Vendor { json, command } => vendor::run(command, json),
    }
}
