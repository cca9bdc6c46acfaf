//! The app's processes as the kernel sees them: the `countersign` process
//! and its WebKit children, and what memory they hold.

use std::fs;
use std::path::Path;

/// One process's memory, in kibibytes.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// Resident set size (shared pages counted in every process).
    pub rss_kib: u64,
    /// Proportional set size (shared pages split between their users).
    pub pss_kib: u64,
}

/// The pid of the process running `binary` inside process group `group`.
pub fn find_app(binary: &Path, group: u32) -> Option<u32> {
    let wanted = fs::canonicalize(binary).ok()?;
    pids().into_iter().find(|&pid| {
        let exe = fs::read_link(format!("/proc/{pid}/exe")).ok();
        exe.as_deref() == Some(wanted.as_path()) && stat_field(pid, 2) == Some(u64::from(group))
    })
}

/// `root` and every process descended from it.
pub fn tree(root: u32) -> Vec<u32> {
    let all: Vec<(u32, u32)> = pids()
        .into_iter()
        .filter_map(|pid| stat_field(pid, 1).map(|ppid| (pid, ppid as u32)))
        .collect();
    let mut found = vec![root];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            all.iter()
                .filter(|(_, ppid)| *ppid == parent)
                .map(|(pid, _)| *pid),
        );
        index += 1;
    }
    found
}

/// The process's name (`comm`).
pub fn name(pid: u32) -> String {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// RSS and PSS of one process (zero when it has gone).
pub fn memory(pid: u32) -> Memory {
    let rollup = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        rollup
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Memory {
        rss_kib: field("Rss:"),
        pss_kib: field("Pss:"),
    }
}

/// Seconds since boot when the process started.
pub fn started_after_boot(pid: u32) -> Option<f64> {
    let ticks = stat_field(pid, 19)?;
    Some(ticks as f64 / clock_ticks_per_second())
}

/// Seconds since boot now.
pub fn uptime() -> Option<f64> {
    fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn clock_ticks_per_second() -> f64 {
    // USER_HZ is 100 on every Linux architecture this runs on.
    100.0
}

fn pids() -> Vec<u32> {
    fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Field `index` of /proc/pid/stat after the command name (0 = state).
fn stat_field(pid: u32, index: usize) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    after_name.split_whitespace().nth(index)?.parse().ok()
}
