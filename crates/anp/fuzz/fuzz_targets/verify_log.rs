//! Fuzz target: log document parsing and whole and pinned verification.
#![no_main]

#[allow(dead_code)]
mod entry {
    include!("../entry.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = entry::verify_log(data);
});
