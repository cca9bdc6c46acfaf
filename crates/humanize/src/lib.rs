//! Numbers and times as a person writes them, on the Rust side of the
//! console: desktop notifications, the tray, the window title and the `anp`
//! command line's summaries say "570,000 USD · expires in 2 d 23 h (Fri 4 Dec,
//! 06:53)", never "570000 USD, expires 2026-12-04T06:53:48.735Z".
//!
//! - Amounts stay the exact decimal strings the protocol gave (`"1140.50"`):
//!   they are regrouped and signed, never parsed into a float.
//! - Grouping, decimal marks, weekday and month names and the order of a date
//!   follow the machine's locale (`LC_ALL`, `LC_TIME`, `LANG`), absolute times
//!   its time zone (`TZ`, else `/etc/localtime`). The words around them
//!   ("expires in", "ago") are the console's English.
//! - The interface (`ui/src/lib/model/format.ts`) writes the same forms with
//!   the webview's `Intl`, from the locale tag and zone this crate resolves
//!   (the engine hands them over in `app_state`), so both sides agree.
//!
//! Locales with their own forms here: English (British forms, also for the
//! C/POSIX locale; American for `en_US`), German, French, Spanish, Dutch.
//! Any other locale is written with the British English forms on this side
//! (the interface still uses that locale in full).

#![warn(missing_docs)]

mod locale;
mod number;
mod terminal;
mod time;

pub use jiff::tz::TimeZone;
pub use jiff::Timestamp;
pub use terminal::terminal_safe;

use locale::LocaleData;

/// Writes numbers and times for one locale and time zone.
#[derive(Debug, Clone)]
pub struct Humanizer {
    tag: String,
    data: &'static LocaleData,
    zone: TimeZone,
}

impl Humanizer {
    /// The machine's locale (`LC_ALL`, then `LC_TIME`, then `LANG`) and time
    /// zone (`TZ`, then `/etc/localtime`; UTC when neither can be read).
    pub fn from_env() -> Humanizer {
        let name = ["LC_ALL", "LC_TIME", "LANG"]
            .iter()
            .filter_map(|var| std::env::var(var).ok())
            .find(|value| !value.trim().is_empty())
            .unwrap_or_default();
        Humanizer::new(&name, TimeZone::system())
    }

    /// A locale by name (`en_GB.UTF-8`, `de-DE`, `C`) and a time zone.
    pub fn new(locale: &str, zone: TimeZone) -> Humanizer {
        let (tag, data) = locale::resolve(locale);
        Humanizer { tag, data, zone }
    }

    /// A locale by name in a zone named as the tz database names it
    /// (`Europe/Berlin`); an unknown zone is UTC.
    pub fn in_zone(locale: &str, zone: &str) -> Humanizer {
        Humanizer::new(locale, TimeZone::get(zone).unwrap_or(TimeZone::UTC))
    }

    /// The locale as a BCP 47 tag (`en-GB`), what the interface's `Intl`
    /// is given. The C/POSIX locale is `en-GB`.
    pub fn locale_tag(&self) -> &str {
        &self.tag
    }

    /// The zone times are shown in (days of delegations are read in it).
    pub fn time_zone(&self) -> &TimeZone {
        &self.zone
    }

    /// The time zone's tz database name (`Europe/Berlin`), when it has one.
    pub fn time_zone_name(&self) -> Option<&str> {
        self.zone.iana_name()
    }

    /// An exact decimal regrouped: `"1140000.50"` → `"1,140,000.50"` (en),
    /// `"1.140.000,50"` (de). Text that is not a plain decimal is returned
    /// as it is.
    pub fn amount(&self, decimal: &str) -> String {
        number::group(decimal, self.data)
    }

    /// An amount with its currency code: `"570,000 USD"`.
    pub fn money(&self, decimal: &str, currency: &str) -> String {
        let amount = self.amount(decimal);
        match currency.trim() {
            "" => amount,
            code => format!("{amount} {code}"),
        }
    }

    /// A count: `1234` → `"1,234"`.
    pub fn count(&self, n: u64) -> String {
        self.amount(&n.to_string())
    }

    /// How far `at` lies from `now`: `"in 2 d 23 h"`, `"3 min ago"`, `"now"`.
    pub fn relative(&self, at: Timestamp, now: Timestamp) -> String {
        time::relative(at, now)
    }

    /// `at` in this zone as a person writes it: `"Fri 4 Dec, 06:53"`, with
    /// the year when it is not `now`'s (`"Fri 4 Dec 2027, 06:53"`), the same shape.
    pub fn absolute(&self, at: Timestamp, now: Timestamp) -> String {
        time::absolute(at, now, &self.zone, self.data)
    }

    /// An expiry given as RFC 3339 text: `"expires in 2 d 23 h (Fri 4 Dec,
    /// 06:53)"`, or `"expired 3 min ago (…)"`. Text that is not a time is
    /// shown as given: `"expires <text>"`.
    pub fn expiry(&self, rfc3339: &str, now: Timestamp) -> String {
        match rfc3339.trim().parse::<Timestamp>() {
            Ok(at) if at > now => format!(
                "expires {} ({})",
                self.relative(at, now),
                self.absolute(at, now)
            ),
            Ok(at) => format!(
                "expired {} ({})",
                self.relative(at, now),
                self.absolute(at, now)
            ),
            Err(_) => format!("expires {rfc3339}"),
        }
    }

    /// A proposal's amount and expiry in one line, as a notification reads:
    /// `"570,000 USD · expires in 2 d 23 h (Fri 4 Dec, 06:53)"`.
    pub fn amount_and_expiry(
        &self,
        decimal: &str,
        currency: &str,
        expires_at: &str,
        now: Timestamp,
    ) -> String {
        format!(
            "{} · {}",
            self.money(decimal, currency),
            self.expiry(expires_at, now)
        )
    }
}

/// A span of seconds as people write it, two units at most, rounded down:
/// `"2 d 23 h"`, `"3 h 5 min"`, `"12 min 4 s"`, `"45 s"`.
pub fn duration(seconds: u64) -> String {
    time::duration(seconds)
}
