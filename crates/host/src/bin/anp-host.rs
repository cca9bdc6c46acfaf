//! `anp-host`: the name `countersign-host` had while it served only ANP. Kept
//! for one release so that scripts keep working: the same program, with a
//! note on stderr (stdout, which scripts read, is unchanged).

#[path = "../main.rs"]
mod countersign_host_main;

fn main() -> std::process::ExitCode {
    eprintln!(
        "anp-host: this command is now `countersign-host`; the old name is an alias for this release only"
    );
    countersign_host_main::main()
}
