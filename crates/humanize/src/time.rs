//! Spans, relative and absolute times. Seconds are whole (rounded down), as
//! a countdown shows them; absolute times are in the given zone.

use jiff::civil::Weekday;
use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::locale::LocaleData;

const MINUTE: u64 = 60;
const HOUR: u64 = 60 * MINUTE;
const DAY: u64 = 24 * HOUR;

/// Two units at most, the second left out when it is zero.
pub(crate) fn duration(seconds: u64) -> String {
    let pair = |big: u64, big_unit: &str, small: u64, small_unit: &str| {
        if small == 0 {
            format!("{big} {big_unit}")
        } else {
            format!("{big} {big_unit} {small} {small_unit}")
        }
    };
    if seconds >= DAY {
        pair(seconds / DAY, "d", seconds % DAY / HOUR, "h")
    } else if seconds >= HOUR {
        pair(seconds / HOUR, "h", seconds % HOUR / MINUTE, "min")
    } else if seconds >= MINUTE {
        pair(seconds / MINUTE, "min", seconds % MINUTE, "s")
    } else {
        format!("{seconds} s")
    }
}

/// `"in 2 d 23 h"`, `"3 min ago"`, or `"now"` within a second. Whole
/// seconds of the exact difference (truncated), as a countdown shows them.
pub(crate) fn relative(at: Timestamp, now: Timestamp) -> String {
    let seconds = at.duration_since(now).as_secs();
    match seconds {
        0 => "now".to_owned(),
        s if s > 0 => format!("in {}", duration(s.unsigned_abs())),
        s => format!("{} ago", duration(s.unsigned_abs())),
    }
}

fn weekday_index(day: Weekday) -> usize {
    usize::from(day.to_monday_zero_offset().unsigned_abs())
}

/// `at` in `zone` by the locale's pattern; the year only when it differs
/// from `now`'s year in that zone.
pub(crate) fn absolute(
    at: Timestamp,
    now: Timestamp,
    zone: &TimeZone,
    locale: &LocaleData,
) -> String {
    let local = at.to_zoned_datetime(zone.clone());
    let this_year = now.to_zoned_datetime(zone.clone()).year();
    let time = if locale.twelve_hour {
        let hour = local.hour();
        let twelve = match hour % 12 {
            0 => 12,
            h => h,
        };
        let period = if hour < 12 { "AM" } else { "PM" };
        format!("{twelve:02}:{:02}\u{202f}{period}", local.minute())
    } else {
        format!("{:02}:{:02}", local.hour(), local.minute())
    };
    let pattern = if local.year() == this_year {
        locale.pattern
    } else {
        locale.pattern_with_year
    };
    let month = usize::from(local.month().unsigned_abs()).saturating_sub(1);
    pattern
        .replace("{w}", locale.weekdays[weekday_index(local.weekday())])
        .replace("{d}", &local.day().to_string())
        .replace("{m}", locale.months[month.min(11)])
        .replace("{y}", &local.year().to_string())
        .replace("{t}", &time)
}
