//! Performance figures of the real app, printed, never asserted (a loaded CI
//! machine must not fail a build over timing): launch to an interactive
//! inbox, resident memory of every app process idle with 1,000 sessions, and
//! the time to open an offer of 200 line items. Run through tests/perf.sh.

use std::time::{Duration, Instant};

use countersign_e2e::outsider::{self, Vendor};
use countersign_e2e::{paths, procs, App, E2eError, Result};
use serde_json::json;

const SESSIONS: usize = 1_000;
const OPEN_REPEATS: usize = 5;

#[tokio::test]
#[ignore = "performance: run through tests/perf.sh"]
async fn print_performance_figures() -> Result<()> {
    let binary = paths::app_binary()?;
    println!("binary: {}", binary.display());

    // 1. Launch to an interactive inbox.
    let requested = Instant::now();
    let app = App::launch().await?;
    let interactive = app
        .wait_for("the inbox to be rendered and loaded", async || {
            let ready: bool = app
                .script(
                    "const inbox = document.querySelector('[data-testid=inbox]');\
                     const empty = document.querySelector('[data-testid=inbox-empty]');\
                     return !!inbox && !(empty && empty.textContent.includes('Loading'));",
                    vec![],
                )
                .await?
                .as_bool()
                .unwrap_or(false);
            Ok(ready.then(Instant::now))
        })
        .await?;
    let pid = procs::find_app(&binary, app.process_group())
        .ok_or_else(|| E2eError::Missing("the countersign process was not found".into()))?;
    let since_process_start = match (procs::started_after_boot(pid), procs::uptime()) {
        (Some(start), Some(now)) => {
            let now_to_interactive = interactive.elapsed().as_secs_f64();
            Some(now - now_to_interactive - start)
        }
        _ => None,
    };
    println!(
        "launch → interactive inbox: {:.0} ms from the WebDriver session request; {} from the countersign process's start",
        interactive.duration_since(requested).as_secs_f64() * 1000.0,
        since_process_start
            .map(|s| format!("{:.0} ms", s * 1000.0))
            .unwrap_or_else(|| "unknown".into())
    );

    // 2. 1,000 sessions, each with a pending offer, then idle memory.
    let host_url = sandbox_url(&app).await?;
    let vendor = Vendor::register(&host_url, "Perf Vendor", "Perf Agent").await?;
    let started = Instant::now();
    for i in 0..SESSIONS {
        let session = vendor.open_sandbox_session("Perf Vendor").await?;
        vendor
            .offer(&session, outsider::offer(3, 100 + i as u64, "", &[]))
            .await?;
    }
    println!(
        "created {SESSIONS} sandbox sessions with one offer each in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let polled = Instant::now();
    app.wait_within(
        "the console to hold every session",
        Duration::from_secs(900),
        async || {
            let sessions = app.invoke("sessions", json!({"filter": {}})).await?;
            let count = sessions.as_array().map(Vec::len).unwrap_or(0);
            Ok((count >= SESSIONS).then_some(()))
        },
    )
    .await?;
    println!(
        "console verified and stored them {:.1} s after the last was created",
        polled.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(15)).await;
    let mut rss = 0;
    let mut pss = 0;
    for process in procs::tree(pid) {
        let memory = procs::memory(process);
        println!(
            "  {:>7} {:<22} RSS {:>7.1} MB  PSS {:>7.1} MB",
            process,
            procs::name(process),
            memory.rss_kib as f64 / 1024.0,
            memory.pss_kib as f64 / 1024.0
        );
        rss += memory.rss_kib;
        pss += memory.pss_kib;
    }
    println!(
        "idle memory with {SESSIONS}+ sessions, all app processes: RSS {:.1} MB, PSS {:.1} MB",
        rss as f64 / 1024.0,
        pss as f64 / 1024.0
    );

    // 3. Open an offer of 200 line items (answering another of 200: full diff).
    let big = Vendor::register(&host_url, "Perf Big Vendor", "Perf Agent").await?;
    let session = big.open_sandbox_session("Perf Big Vendor").await?;
    big.offer(
        &session,
        outsider::offer(200, 1000, "Two hundred lines.", &[]),
    )
    .await?;
    big.offer(
        &session,
        outsider::offer(200, 990, "Two hundred lines, revised.", &[]),
    )
    .await?;
    let mut times = Vec::new();
    for _ in 0..OPEN_REPEATS {
        app.click("nav-inbox").await?;
        let ms = app
            .wait_for("the 200-line offer to open", async || {
                let answer = app
                    .driver
                    .execute_async(
                        "const [vendor, done] = arguments;\
                         const row = [...document.querySelectorAll('[data-testid=inbox-row]')]\
                           .find(r => r.querySelector('[data-testid=inbox-vendor]')?.textContent === vendor);\
                         if (!row) { done(null); return; }\
                         const t0 = performance.now();\
                         row.click();\
                         const check = () => {\
                           const rows = document.querySelectorAll('[data-testid=diff-row]').length;\
                           if (rows >= 200 && document.querySelector('[data-testid=decide-panel]')) {\
                             requestAnimationFrame(() => done(performance.now() - t0));\
                           } else { requestAnimationFrame(check); }\
                         };\
                         check();",
                        vec![json!("Perf Big Vendor")],
                    )
                    .await?;
                Ok(answer.json().as_f64())
            })
            .await?;
        times.push(ms);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "open a 200-line offer (click → diff of 200 rows painted), {OPEN_REPEATS} runs: median {:.0} ms, min {:.0} ms, max {:.0} ms",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
    app.quit().await
}

async fn sandbox_url(app: &App) -> Result<String> {
    app.wait_for("the sandbox host", async || {
        let hosts = app.invoke("hosts", json!({})).await?;
        Ok(hosts
            .as_array()
            .and_then(|hosts| hosts.iter().find(|h| h["sandbox"] == json!(true)))
            .and_then(|h| h["url"].as_str())
            .map(str::to_owned))
    })
    .await
}
