//! The statements and round trips the host processes send PostgreSQL, per
//! append: counted by the store itself (`Storage::traffic`), never
//! assumed. Each host process (this binary re-run with `--traffic-dir`)
//! writes its store's counts to a file of its own in that directory every
//! few milliseconds; the load generator sums them before and after the
//! append phase.

use std::path::{Path, PathBuf};
use std::time::Duration;

use countersign_host::store::TrafficCount;
use countersign_host::Host;

/// How often a host process writes its counts.
const EVERY: Duration = Duration::from_millis(20);
/// How long the load generator waits for every process's counts to settle
/// (several writes) before it reads them.
const SETTLE: Duration = Duration::from_millis(150);

/// In a host process: writes the store's counts to `<dir>/<pid>.traffic`
/// (as `STATEMENTS ROUND_TRIPS`) every [`EVERY`] for as long as it serves.
/// A store that sends nothing to a server (SQLite) writes nothing.
pub fn report_forever(host: &Host, dir: PathBuf) {
    let store = host.store().clone();
    let pid = std::process::id();
    let (file, partial) = (
        dir.join(format!("{pid}.traffic")),
        dir.join(format!("{pid}.partial")),
    );
    tokio::spawn(async move {
        loop {
            if let Some(c) = store.traffic() {
                let text = format!("{} {}\n", c.statements, c.round_trips);
                // Written whole, then renamed: a reader never sees half.
                if std::fs::write(&partial, text).is_ok() {
                    let _ = std::fs::rename(&partial, &file);
                }
            }
            tokio::time::sleep(EVERY).await;
        }
    });
}

/// In the load generator: every host process's counts summed, once they
/// settled (no request is in flight when this is called).
pub async fn total(dir: &Path) -> Result<TrafficCount, String> {
    tokio::time::sleep(SETTLE).await;
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    let mut sum = TrafficCount::default();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("traffic") {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let mut numbers = text.split_whitespace().map(str::parse::<u64>);
        match (numbers.next(), numbers.next()) {
            (Some(Ok(statements)), Some(Ok(round_trips))) => {
                sum.statements += statements;
                sum.round_trips += round_trips;
            }
            _ => return Err(format!("{} does not hold two counts", path.display())),
        }
    }
    Ok(sum)
}

/// Statements and round trips per append between two totals.
pub fn per_append(before: TrafficCount, after: TrafficCount, appends: usize) -> (f64, f64) {
    if appends == 0 {
        return (0.0, 0.0);
    }
    let n = appends as f64;
    (
        after.statements.saturating_sub(before.statements) as f64 / n,
        after.round_trips.saturating_sub(before.round_trips) as f64 / n,
    )
}
