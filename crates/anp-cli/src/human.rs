//! Amounts and times in the text summaries `anp vendor` prints, as a person
//! writes them in this machine's locale and time zone (`crates/humanize`,
//! the same rules as the console's notifications): "total 570,000 USD",
//! "expires in 2 d 23 h (Fri 4 Dec, 06:53)". `--json` output is untouched:
//! programs get the protocol's exact values.

use std::sync::OnceLock;

use humanize::{Humanizer, Timestamp};

fn humanizer() -> &'static Humanizer {
    static HUMANIZER: OnceLock<Humanizer> = OnceLock::new();
    HUMANIZER.get_or_init(Humanizer::from_env)
}

/// An exact decimal with its currency: "570,000 USD".
pub fn money(amount: &str, currency: &str) -> String {
    humanizer().money(amount, currency)
}

/// An RFC 3339 expiry from now: "expires in 2 d 23 h (Fri 4 Dec, 06:53)".
pub fn expiry(rfc3339: &str) -> String {
    humanizer().expiry(rfc3339, Timestamp::now())
}
