//! The engine's clock, injected: every "now" the engine reads (expiry
//! checks, the time a decision is signed, what a notification says) comes
//! from [`EngineConfig::clock`](crate::EngineConfig::clock), so a test can
//! put the engine at any moment, as the host's tests do with theirs.

use std::fmt::Debug;
use std::sync::Mutex;

use time::OffsetDateTime;

/// Where the engine reads the time.
pub trait Clock: Debug + Send + Sync {
    /// The current instant.
    fn now(&self) -> OffsetDateTime;
}

/// The machine's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// A clock that reads what it was last set to, moved by hand (tests).
#[derive(Debug)]
pub struct ManualClock(Mutex<OffsetDateTime>);

impl ManualClock {
    /// A clock standing at `at`.
    pub fn at(at: OffsetDateTime) -> ManualClock {
        ManualClock(Mutex::new(at))
    }

    /// Moves the clock to `at`.
    pub fn set(&self, at: OffsetDateTime) {
        match self.0.lock() {
            Ok(mut now) => *now = at,
            Err(poisoned) => *poisoned.into_inner() = at,
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        match self.0.lock() {
            Ok(now) => *now,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }
}

/// A time as the engine stores and sends it: RFC 3339 UTC with
/// milliseconds (`2026-12-01T09:53:00.000Z`), the form every protocol here
/// reads.
pub fn format_time(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

/// Reads an RFC 3339 time; `None` when it is not one.
pub fn parse_time(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

/// The same instant as `humanize` reads it (for what people read).
pub fn human_time(at: OffsetDateTime) -> humanize::Timestamp {
    humanize::Timestamp::from_nanosecond(at.unix_timestamp_nanos())
        .unwrap_or(humanize::Timestamp::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_the_protocols_read_them_and_read_back() {
        let at = time::macros::datetime!(2026-12-01 09:53:07.250 +01:00);
        let text = format_time(at);
        assert_eq!(text, "2026-12-01T08:53:07.250Z");
        assert_eq!(parse_time(&text), Some(at));
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(human_time(at).to_string(), "2026-12-01T08:53:07.25Z");
    }

    #[test]
    fn a_manual_clock_stays_where_it_is_put() {
        let clock = ManualClock::at(time::macros::datetime!(2026-01-01 00:00 UTC));
        assert_eq!(clock.now(), time::macros::datetime!(2026-01-01 00:00 UTC));
        clock.set(time::macros::datetime!(2027-01-01 00:00 UTC));
        assert_eq!(clock.now(), time::macros::datetime!(2027-01-01 00:00 UTC));
    }
}
