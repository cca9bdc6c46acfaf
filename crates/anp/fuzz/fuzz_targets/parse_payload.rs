//! Fuzz target: strict payload parsing (kind byte + JSON bytes).
#![no_main]

#[allow(dead_code)]
mod entry {
    include!("../entry.rs");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = entry::parse_payload(data);
});
