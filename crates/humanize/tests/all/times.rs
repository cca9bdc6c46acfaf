use humanize::{duration, Humanizer, Timestamp};

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn spans_read_in_two_units_rounded_down() {
    assert_eq!(duration(2 * 86_400 + 23 * 3_600 + 59 * 60 + 59), "2 d 23 h");
    assert_eq!(duration(3 * 86_400), "3 d");
    assert_eq!(duration(3 * 3_600 + 5 * 60 + 9), "3 h 5 min");
    assert_eq!(duration(12 * 60 + 4), "12 min 4 s");
    assert_eq!(duration(60), "1 min");
    assert_eq!(duration(45), "45 s");
    assert_eq!(duration(0), "0 s");
}

#[test]
fn relative_times_say_which_way() {
    let h = Humanizer::in_zone("C", "UTC");
    let now = at("2026-12-01T07:00:00Z");
    assert_eq!(
        h.relative(at("2026-12-04T06:53:48.735Z"), now),
        "in 2 d 23 h"
    );
    assert_eq!(h.relative(at("2026-12-01T06:57:00Z"), now), "3 min ago");
    assert_eq!(h.relative(now, now), "now");
    // The exact difference counts, not the whole seconds of each end: a day
    // less 100 ms is not yet "1 d".
    assert_eq!(
        h.relative(
            at("2026-12-02T07:00:00.000Z"),
            at("2026-12-01T07:00:00.100Z")
        ),
        "in 23 h 59 min"
    );
}

#[test]
fn the_issue_example_reads_as_written() {
    let h = Humanizer::in_zone("en_GB.UTF-8", "UTC");
    let now = at("2026-12-01T07:00:00Z");
    assert_eq!(
        h.amount_and_expiry("570000", "USD", "2026-12-04T06:53:48.735Z", now),
        "570,000 USD · expires in 2 d 23 h (Fri 4 Dec, 06:53)"
    );
}

#[test]
fn absolute_times_are_in_the_zone_across_a_day_boundary() {
    let now = at("2026-12-01T07:00:00Z");
    // 20:30 UTC on Thursday is already Friday in Tokyo (UTC+9) and still
    // Thursday afternoon in New York (UTC−5 in December).
    let late = at("2026-12-03T20:30:00Z");
    let zoned = |zone: &str| Humanizer::in_zone("C", zone).absolute(late, now);
    assert_eq!(zoned("UTC"), "Thu 3 Dec, 20:30");
    assert_eq!(zoned("Asia/Tokyo"), "Fri 4 Dec, 05:30");
    assert_eq!(zoned("America/New_York"), "Thu 3 Dec, 15:30");
    // Summer time is the zone's too: Berlin is UTC+2 in July, UTC+1 in December.
    let berlin = Humanizer::in_zone("C", "Europe/Berlin");
    let june = at("2026-06-01T00:00:00Z");
    assert_eq!(
        berlin.absolute(at("2026-07-01T12:00:00Z"), june),
        "Wed 1 Jul, 14:00"
    );
    assert_eq!(zoned("Europe/Berlin"), "Thu 3 Dec, 21:30");
}

#[test]
fn the_year_shows_only_outside_the_current_one() {
    let h = Humanizer::in_zone("C", "UTC");
    let now = at("2026-12-30T12:00:00Z");
    assert_eq!(
        h.absolute(at("2027-01-02T09:05:00Z"), now),
        "Sat 2 Jan 2027, 09:05"
    );
    // New Year's Eve in UTC is New Year's Day in Tokyo: the year is the zone's.
    let tokyo = Humanizer::in_zone("C", "Asia/Tokyo");
    assert_eq!(
        tokyo.absolute(at("2026-12-31T20:00:00Z"), now),
        "Fri 1 Jan 2027, 05:00"
    );
}

#[test]
fn each_locale_writes_its_own_date() {
    let now = at("2026-12-01T07:00:00Z");
    let t = at("2026-12-04T18:53:48Z");
    let in_utc = |l: &str| Humanizer::in_zone(l, "UTC").absolute(t, now);
    assert_eq!(in_utc("en_GB"), "Fri 4 Dec, 18:53");
    assert_eq!(in_utc("en_US"), "Fri, Dec 4, 06:53\u{202f}PM");
    assert_eq!(in_utc("de_DE"), "Fr., 4. Dez., 18:53");
    assert_eq!(in_utc("fr_FR"), "ven. 4 déc., 18:53");
    assert_eq!(in_utc("es_ES"), "vie, 4 dic, 18:53");
    assert_eq!(in_utc("nl_NL"), "vr 4 dec, 18:53");
    assert_eq!(
        Humanizer::in_zone("en_US", "UTC").absolute(at("2026-12-04T00:10:00Z"), now),
        "Fri, Dec 4, 12:10\u{202f}AM",
        "midnight is 12 AM"
    );
    assert_eq!(
        Humanizer::in_zone("de_DE", "UTC").absolute(at("2027-03-01T08:00:00Z"), now),
        "Mo., 1. März 2027, 08:00"
    );
}

#[test]
fn expiries_past_and_unreadable() {
    let h = Humanizer::in_zone("C", "UTC");
    let now = at("2026-12-01T07:00:00Z");
    assert_eq!(
        h.expiry("2026-12-01T06:57:00Z", now),
        "expired 3 min ago (Tue 1 Dec, 06:57)"
    );
    assert_eq!(h.expiry("next tuesday", now), "expires next tuesday");
}

#[test]
fn an_unknown_zone_is_utc() {
    let h = Humanizer::in_zone("C", "Mars/Olympus_Mons");
    assert_eq!(h.time_zone_name(), Some("UTC"));
    assert_eq!(
        Humanizer::in_zone("C", "Asia/Tokyo").time_zone_name(),
        Some("Asia/Tokyo")
    );
}
