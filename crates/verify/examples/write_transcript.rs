//! Writes a synthetic signed transcript (`{"messages", "keys"}`) to a file,
//! for timing `countersign-verify` by hand: `write_transcript FILE [N]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: write_transcript FILE [N]");
    let n = args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let (messages, _, keys) = concordia::testing::synthetic_transcript(n);
    std::fs::write(
        &path,
        serde_json::json!({"messages": messages, "keys": keys}).to_string(),
    )
    .expect("write");
}
