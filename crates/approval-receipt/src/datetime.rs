//! ISO 8601 instants read the way the reference SDK reads them: `Z` is
//! `+00:00`, then Python's `datetime.fromisoformat`; the instant must carry
//! an explicit offset (RUNNER_CONTRACT's date-time assertion). A naive time
//! is refused, never guessed to be UTC.

use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// Why a timestamp was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DateTimeError {
    /// Not an ISO 8601 date and time.
    #[error("{0:?} is not an ISO 8601 date-time")]
    Malformed(String),
    /// A date and time with no offset: which instant it names is unknown.
    #[error("{0:?} has no time zone offset (a naive time names no instant)")]
    Naive(String),
}

/// Parses an ISO 8601 date-time with an explicit offset (`Z`, `±HH:MM`,
/// `±HHMM`, `±HH`), date and time separated by `T`, `t` or a space, seconds
/// and a fraction optional, as Python 3.11's `fromisoformat` accepts them.
pub fn parse(text: &str) -> Result<OffsetDateTime, DateTimeError> {
    let malformed = || DateTimeError::Malformed(text.to_owned());
    let normalized = text.replace('Z', "+00:00");
    let s = normalized.as_str();
    if !s.is_ascii() || s.len() < 16 {
        return Err(malformed());
    }
    let (date_part, rest) = s.split_at(10);
    let date = parse_date(date_part).ok_or_else(malformed)?;
    let mut chars = rest.chars();
    match chars.next() {
        Some('T') | Some('t') | Some(' ') => {}
        _ => return Err(malformed()),
    }
    let rest = &rest[1..];
    let offset_at = rest.find(['+', '-']);
    let (time_part, offset_part) = match offset_at {
        Some(i) => (&rest[..i], Some(&rest[i..])),
        None => (rest, None),
    };
    let time = parse_time(time_part).ok_or_else(malformed)?;
    let Some(offset_part) = offset_part else {
        return Err(DateTimeError::Naive(text.to_owned()));
    };
    let offset = parse_offset(offset_part).ok_or_else(malformed)?;
    Ok(PrimitiveDateTime::new(date, time).assume_offset(offset))
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_date(s: &str) -> Option<Date> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = digits(&s[0..4])? as i32;
    let month = Month::try_from(digits(&s[5..7])? as u8).ok()?;
    let day = digits(&s[8..10])? as u8;
    Date::from_calendar_date(year, month, day).ok()
}

fn parse_time(s: &str) -> Option<Time> {
    let (hms, fraction) = match s.split_once(['.', ',']) {
        Some((hms, f)) => (hms, Some(f)),
        None => (s, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if parts.iter().any(|p| p.len() != 2) || parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let hour = digits(parts[0])? as u8;
    let minute = digits(parts.get(1)?)? as u8;
    let second = match parts.get(2) {
        Some(p) => digits(p)? as u8,
        None if fraction.is_some() => return None,
        None => 0,
    };
    let nanos = match fraction {
        None => 0,
        Some(f) if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) => {
            return None
        }
        Some(f) => {
            let micros = &f[..f.len().min(6)];
            digits(micros)? * 10u32.pow(6 - micros.len() as u32) * 1000
        }
    };
    Time::from_hms_nano(hour, minute, second, nanos).ok()
}

fn parse_offset(s: &str) -> Option<UtcOffset> {
    let sign: i8 = if s.starts_with('-') { -1 } else { 1 };
    let body = &s[1..];
    let (h, m, sec) = match body.len() {
        2 => (digits(body)?, 0, 0),
        4 => (digits(&body[..2])?, digits(&body[2..])?, 0),
        5 if body.as_bytes()[2] == b':' => (digits(&body[..2])?, digits(&body[3..])?, 0),
        8 if body.as_bytes()[2] == b':' && body.as_bytes()[5] == b':' => (
            digits(&body[..2])?,
            digits(&body[3..5])?,
            digits(&body[6..])?,
        ),
        _ => return None,
    };
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    UtcOffset::from_hms(sign * h as i8, sign * m as i8, sign * sec as i8).ok()
}

/// True when `text` is a date-time the schemas' `format: date-time` accepts.
pub fn is_valid(text: &str) -> bool {
    parse(text).is_ok()
}

/// RFC 3339 in UTC with whole seconds and `Z`, as the SDK writes timestamps.
pub fn format_utc(instant: OffsetDateTime) -> String {
    let t = instant.to_offset(UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_python_reads() {
        let z = parse("2026-05-10T14:22:08Z").unwrap();
        assert_eq!(parse("2026-05-10T16:22:08+02:00").unwrap(), z);
        assert_eq!(parse("2026-05-10 14:22:08+0000").unwrap(), z);
        assert_eq!(parse("2026-05-10T14:22:08.5Z").unwrap().millisecond(), 500);
        assert_eq!(parse("2026-05-10T14:22Z").unwrap().second(), 0);
        assert_eq!(format_utc(z), "2026-05-10T14:22:08Z");
    }

    #[test]
    fn refusals() {
        assert_eq!(
            parse("2026-05-10T14:22:08"),
            Err(DateTimeError::Naive("2026-05-10T14:22:08".into()))
        );
        for bad in [
            "2026-05-10",
            "2026-13-10T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "tomorrow",
            "2026-05-10T25:00:00Z",
            "2026-05-10T14:22:08+2:00",
            "",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
