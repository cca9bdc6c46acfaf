//! The whole process beside the reference SDK's own verification of the
//! same file, in one run: a 10,000-message signed transcript is written to a
//! temporary file, then `countersign-verify FILE` and the SDK
//! (`crates/concordia/interop/verify_transcript.py`: `validate_chain` plus
//! `verify_signature` for every message; and with `--replay`,
//! `Session.apply_message` for every message, as an SDK agent takes in a
//! peer's messages) each verify it, three times, alternating. Prints the
//! wall times and the ratios.
//!
//! ```sh
//! cargo build --release -p countersign-verify --bins --examples
//! target/release/examples/vs_sdk            # from the repository root; needs .venv (bash .ci/setup)
//! ```

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

fn main() {
    let n: usize = std::env::var("MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    // The transcript (~100 MB of values while it is made) is made and
    // written by a child process: a parent that had held it, even freed,
    // made every process it started measurably slower (0.075–0.08 s
    // against 0.068 s for the same verifier run).
    if let Some(path) = std::env::var_os("COUNTERSIGN_VS_SDK_WRITE") {
        let (messages, _, keys) = concordia::testing::synthetic_transcript(n);
        std::fs::write(
            path,
            serde_json::json!({"messages": messages, "keys": keys}).to_string(),
        )
        .expect("write");
        return;
    }
    let dir = std::env::temp_dir().join(format!("countersign-vs-sdk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("transcript.json");
    let made = Command::new(std::env::current_exe().expect("exe"))
        .env("COUNTERSIGN_VS_SDK_WRITE", &file)
        .status()
        .expect("the transcript is made");
    assert!(made.success(), "making the transcript failed");
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    let exe = std::env::current_exe().expect("exe");
    let verifier: PathBuf = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .join("countersign-verify");
    let python = std::env::var_os("COUNTERSIGN_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".venv/bin/python"));
    let script = "crates/concordia/interop/verify_transcript.py";
    println!(
        "{n} messages, {:.1} MB; verifier {}",
        size as f64 / 1e6,
        verifier.display()
    );
    let (mut ours, mut sdk, mut sdk_inner, mut replay) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let t = Instant::now();
        let out = Command::new(&verifier)
            .arg(&file)
            .output()
            .expect("countersign-verify runs");
        ours.push(t.elapsed().as_secs_f64());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let t = Instant::now();
        let out = Command::new(&python)
            .arg(script)
            .arg(&file)
            .output()
            .expect("the SDK runs (bash .ci/setup)");
        sdk.push(t.elapsed().as_secs_f64());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("SDK JSON");
        assert_eq!(report["links"], true);
        assert_eq!(report["signatures_failed"], 0);
        sdk_inner.push(report["seconds"].as_f64().unwrap_or(0.0));
        let t = Instant::now();
        let out = Command::new(&python)
            .arg(script)
            .arg(&file)
            .arg("--replay")
            .output()
            .expect("the SDK runs");
        replay.push(t.elapsed().as_secs_f64());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let best = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
    println!(
        "countersign-verify (whole process): {:?} s, best {:.3} s",
        ours.iter()
            .map(|x| (x * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>(),
        best(&ours)
    );
    println!(
        "SDK (whole process):                {:?} s, best {:.3} s",
        sdk.iter()
            .map(|x| (x * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>(),
        best(&sdk)
    );
    println!(
        "SDK (inside Python, after imports): best {:.3} s",
        best(&sdk_inner)
    );
    println!(
        "SDK Session.apply_message replay:   {:?} s, best {:.3} s",
        replay
            .iter()
            .map(|x| (x * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>(),
        best(&replay)
    );
    println!(
        "ratio, whole process: {:.1}x (replay: {:.1}x); against the SDK's in-process time: {:.1}x",
        best(&sdk) / best(&ours),
        best(&replay) / best(&ours),
        best(&sdk_inner) / best(&ours)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
