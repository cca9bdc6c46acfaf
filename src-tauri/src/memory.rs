//! The app's share of glibc's allocator. The console is idle most of its
//! life, between bursts of work (a host delivering a thousand sessions, a
//! poll cycle parsing them): what a burst freed should go back to the system
//! rather than stay with the process. Elsewhere these are no-ops.

/// glibc gives each thread that allocates its own malloc arena and keeps the
/// memory freed in it: tokio's workers, the blocking pool that runs SQLite
/// and GTK's threads held about 6 MB more that way than with two arenas
/// (tests/perf.sh, 1,000 sessions). `MALLOC_ARENA_MAX`, when the person set
/// it, wins. Must run before any thread starts.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets an allocator tunable, and no other
        // thread exists yet to allocate concurrently.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// Hands the pages a burst of work freed back to the system (about 3 MB
/// after a thousand sessions arrive). Cheap: it walks the free lists once.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim is thread-safe; it only returns free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}
