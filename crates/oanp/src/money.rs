//! Money as OANP writes it: integer minor units, read exactly; fractions
//! (fairness scores, bands, utilities) travel as decimal strings.
//!
//! Nothing here is ever a float. An amount that is a JSON float (`41900.0`),
//! a string, or an integer no IEEE double holds exactly (beyond ±(2^53 − 1),
//! which the publisher's canonical JSON refuses) is refused with a sentence.

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The largest magnitude of an amount: what canonical JSON carries exactly.
pub const MAX_MINOR_UNITS: i64 = jcs::MAX_SAFE_INTEGER as i64;

/// An amount in a currency's minor units (cents for USD, paise for INR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MinorUnits(i64);

impl MinorUnits {
    /// The amount, when its magnitude is at most [`MAX_MINOR_UNITS`].
    pub fn new(amount: i64) -> Option<Self> {
        (amount.unsigned_abs() <= MAX_MINOR_UNITS as u64).then_some(Self(amount))
    }

    /// The amount in minor units.
    pub fn get(self) -> i64 {
        self.0
    }

    /// `self + other`, or `None` beyond [`MAX_MINOR_UNITS`].
    pub fn checked_add(self, other: Self) -> Option<Self> {
        self.0.checked_add(other.0).and_then(Self::new)
    }

    /// `self − other`, or `None` beyond [`MAX_MINOR_UNITS`].
    pub fn checked_sub(self, other: Self) -> Option<Self> {
        self.0.checked_sub(other.0).and_then(Self::new)
    }
}

impl fmt::Display for MinorUnits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for MinorUnits {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.0)
    }
}

impl<'de> Deserialize<'de> for MinorUnits {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Exact;
        impl Visitor<'_> for Exact {
            type Value = MinorUnits;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer amount in minor units within ±(2^53 − 1)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MinorUnits, E> {
                MinorUnits::new(v).ok_or_else(|| {
                    E::custom(format!(
                        "the amount {v} is beyond ±(2^53 − 1) minor units, which canonical JSON cannot carry"
                    ))
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MinorUnits, E> {
                i64::try_from(v)
                    .ok()
                    .and_then(MinorUnits::new)
                    .ok_or_else(|| {
                        E::custom(format!(
                            "the amount {v} is beyond 2^53 − 1 minor units, which canonical JSON cannot carry"
                        ))
                    })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<MinorUnits, E> {
                Err(E::custom(format!(
                    "the amount {v} is written as a float; OANP amounts are integers in minor units"
                )))
            }
        }
        deserializer.deserialize_any(Exact)
    }
}

/// An amount with its ISO 4217 currency code: `{amount_minor, currency}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Money {
    /// The amount in the currency's minor units.
    pub amount_minor: MinorUnits,
    /// The currency code as written (`USD`, `INR`).
    pub currency: String,
}

impl Money {
    /// The amount in major units for a person (`419.00 USD`), using the
    /// currency's ISO 4217 exponent; an unknown code shows minor units.
    pub fn display(&self) -> String {
        display_minor(self.amount_minor, &self.currency)
    }
}

/// `amount` minor units of `currency` for a person (`419.00 USD`,
/// `5270 JPY`, or `41900 minor units of XYZ` for a code not in ISO 4217's
/// common list).
pub fn display_minor(amount: MinorUnits, currency: &str) -> String {
    match exponent(currency) {
        Some(scale) => format!("{} {currency}", Decimal::new(amount.get(), scale)),
        None => format!("{amount} minor units of {currency}"),
    }
}

/// `amount` minor units of `currency` as an exact decimal in major units
/// (`41900` USD is `419.00`); `None` for a code whose exponent this crate
/// does not know, so nobody guesses where the point goes.
pub fn major_units(amount: MinorUnits, currency: &str) -> Option<Decimal> {
    exponent(currency).map(|scale| Decimal::new(amount.get(), scale))
}

/// ISO 4217 minor-unit exponents of the currencies a receipt is likely to
/// carry; `None` for a code this table does not know.
fn exponent(currency: &str) -> Option<u32> {
    const ZERO: &[&str] = &[
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "VND", "VUV",
        "XAF", "XOF", "XPF",
    ];
    const THREE: &[&str] = &["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];
    const TWO: &[&str] = &[
        "AED", "ARS", "AUD", "BRL", "CAD", "CHF", "CNY", "COP", "CZK", "DKK", "EGP", "EUR", "GBP",
        "HKD", "HUF", "IDR", "ILS", "INR", "MAD", "MXN", "MYR", "NGN", "NOK", "NZD", "PEN", "PHP",
        "PKR", "PLN", "QAR", "RON", "RUB", "SAR", "SEK", "SGD", "THB", "TRY", "TWD", "UAH", "USD",
        "ZAR",
    ];
    if ZERO.contains(&currency) {
        Some(0)
    } else if THREE.contains(&currency) {
        Some(3)
    } else if TWO.contains(&currency) {
        Some(2)
    } else {
        None
    }
}

/// A fraction as OANP writes it: a decimal string (`"1.0000"`, `"0.05"`),
/// kept as written and readable exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fraction(String);

impl Fraction {
    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The exact decimal value.
    pub fn value(&self) -> Decimal {
        // Checked when read: a plain decimal of at most 28 digits.
        Decimal::from_str(&self.0).unwrap_or_default()
    }
}

impl FromStr for Fraction {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let plain = !whole.is_empty()
            && whole.bytes().all(|b| b.is_ascii_digit())
            && fraction.bytes().all(|b| b.is_ascii_digit())
            && !digits.ends_with('.');
        if !plain {
            return Err(format!(
                "{text:?} is not a plain decimal number (like \"0.05\")"
            ));
        }
        // 28 digits always fit Decimal's 96-bit mantissa exactly; more might round.
        if whole.len() + fraction.len() > 28 {
            return Err(format!(
                "{text:?} has more than 28 digits, more than an exact decimal holds"
            ));
        }
        Ok(Self(text.to_owned()))
    }
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Fraction {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = Fraction;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a decimal fraction written as a string, like \"0.05\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Fraction, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Fraction, E> {
                Err(E::custom(format!(
                    "the fraction {v} is a JSON number; OANP fractions travel as strings"
                )))
            }
        }
        deserializer.deserialize_any(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn amount(v: serde_json::Value) -> Result<MinorUnits, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn amounts_are_exact_integers() {
        assert_eq!(amount(json!(41900)).unwrap().get(), 41900);
        assert_eq!(amount(json!(-5)).unwrap().get(), -5);
        assert_eq!(
            amount(json!(9007199254740991u64)).unwrap().get(),
            MAX_MINOR_UNITS
        );
        let float = amount(json!(41900.0)).unwrap_err();
        assert!(float.contains("written as a float"), "{float}");
        let wide = amount(json!(9007199254740992u64)).unwrap_err();
        assert!(wide.contains("beyond 2^53"), "{wide}");
        assert!(amount(json!(-9007199254740992i64)).is_err());
        assert!(amount(json!("41900")).is_err());
        assert!(amount(json!(null)).is_err());
    }

    #[test]
    fn major_units_place_the_point_by_the_currency_or_not_at_all() {
        let m = |n| MinorUnits::new(n).unwrap();
        assert_eq!(major_units(m(41900), "USD").unwrap().to_string(), "419.00");
        assert_eq!(major_units(m(5270), "JPY").unwrap().to_string(), "5270");
        assert_eq!(major_units(m(-1234), "KWD").unwrap().to_string(), "-1.234");
        assert_eq!(major_units(m(41900), "XYZ"), None);
    }

    #[test]
    fn arithmetic_stays_within_the_exact_range() {
        let max = MinorUnits::new(MAX_MINOR_UNITS).unwrap();
        let one = MinorUnits::new(1).unwrap();
        assert_eq!(max.checked_add(one), None);
        assert_eq!(
            max.checked_sub(one).map(MinorUnits::get),
            Some(MAX_MINOR_UNITS - 1)
        );
        assert_eq!(MinorUnits::new(i64::MIN), None);
    }

    #[test]
    fn display_uses_the_currency_exponent() {
        let m = |a, c: &str| display_minor(MinorUnits::new(a).unwrap(), c);
        assert_eq!(m(41900, "USD"), "419.00 USD");
        assert_eq!(m(527000, "INR"), "5270.00 INR");
        assert_eq!(m(5, "EUR"), "0.05 EUR");
        assert_eq!(m(-150, "GBP"), "-1.50 GBP");
        assert_eq!(m(5270, "JPY"), "5270 JPY");
        assert_eq!(m(1234, "KWD"), "1.234 KWD");
        assert_eq!(m(41900, "XYZ"), "41900 minor units of XYZ");
    }

    #[test]
    fn fractions_are_decimal_strings_kept_as_written() {
        let f: Fraction = serde_json::from_value(json!("1.0000")).unwrap();
        assert_eq!(f.as_str(), "1.0000");
        assert_eq!(f.value(), Decimal::new(1, 0));
        assert_eq!(serde_json::to_value(&f).unwrap(), json!("1.0000"));
        for bad in [
            "", "1.", ".5", "1e3", "+1", "0x1", "1.2.3", " 1", "NaN", "-",
        ] {
            assert!(bad.parse::<Fraction>().is_err(), "{bad:?}");
        }
        assert!("-0.05".parse::<Fraction>().is_ok());
        assert!("1".repeat(40).parse::<Fraction>().is_err());
        let number: Result<Fraction, _> = serde_json::from_value(json!(0.05));
        assert!(number
            .unwrap_err()
            .to_string()
            .contains("travel as strings"));
    }
}
