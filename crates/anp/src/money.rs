//! Exact decimal money (DESIGN "The ANP/0.1 wire": never add, compare or
//! subtract prices in floating point).
//!
//! Amounts arrive as JSON numbers. A JSON number means the IEEE double
//! JavaScript reads from it, and that double is what the hash chain commits
//! to, so its exact decimal value is taken from its ECMAScript text
//! ([`crate::canonical::format_number`], which may be scientific like `1e-7`)
//! and never from binary floating point arithmetic.
//!
//! The payload limits ([`crate::payload`]) keep every product and sum of a
//! parsed offer inside the 28 significant digits of [`Decimal`], so the
//! arithmetic here is exact for every offer `Offer::parse` accepts.

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Number;

use crate::canonical::format_number;
use crate::payload::Offer;

/// Why a number or a text is not an exact amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    /// The number is too large or too precise for 28 significant digits.
    #[error("{0} cannot be represented exactly as a decimal amount")]
    NotRepresentable(String),
    /// Text that is not a plain decimal (`570000`, `-12.5`).
    #[error("{0:?} is not a decimal amount (expected digits with an optional sign and point)")]
    NotDecimal(String),
    /// A decimal that no JSON number (IEEE double) denotes exactly.
    #[error("{0} has no exact JSON number form")]
    NoJsonForm(String),
}

/// An exact decimal amount, serialized as a decimal string (`"570000"`,
/// `"1140.5"`) so the console and the UI never do float arithmetic on prices.
/// The text has no exponent and no trailing zeros after the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(Decimal);

impl Money {
    /// Zero.
    pub const ZERO: Money = Money(Decimal::ZERO);

    /// Wraps an exact decimal.
    pub fn new(value: Decimal) -> Money {
        Money(value)
    }

    /// The exact value.
    pub fn decimal(self) -> Decimal {
        self.0
    }

    /// True for zero (of any scale).
    pub fn is_zero(self) -> bool {
        self.0.is_zero()
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_zero() {
            return f.write_str("0");
        }
        write!(f, "{}", self.0.normalize())
    }
}

impl FromStr for Money {
    type Err = MoneyError;

    /// Reads a plain decimal string; refuses exponents, spaces and anything
    /// that would need rounding.
    fn from_str(text: &str) -> Result<Money, MoneyError> {
        let plain = {
            let digits = text.strip_prefix('-').unwrap_or(text);
            let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
            !int.is_empty()
                && int.bytes().all(|b| b.is_ascii_digit())
                && (frac.is_empty() != digits.contains('.'))
                && frac.bytes().all(|b| b.is_ascii_digit())
        };
        if !plain {
            return Err(MoneyError::NotDecimal(text.to_owned()));
        }
        Decimal::from_str_exact(text)
            .map(Money)
            .map_err(|_| MoneyError::NotRepresentable(text.to_owned()))
    }
}

impl From<Decimal> for Money {
    fn from(value: Decimal) -> Money {
        Money(value)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Money, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The exact decimal a JSON number denotes: the value of its ECMAScript text.
pub fn json_number_to_decimal(number: &Number) -> Result<Decimal, MoneyError> {
    let text = format_number(number);
    ecmascript_text_to_decimal(&text).ok_or(MoneyError::NotRepresentable(text))
}

/// Reads ECMAScript number text (`1140`, `0.1`, `1e-7`, `1.5e+21`) exactly.
fn ecmascript_text_to_decimal(text: &str) -> Option<Decimal> {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let negative = mantissa.starts_with('-');
    let unsigned = mantissa.trim_start_matches('-');
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits: String = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // value = digits × 10^(exponent − len(frac))
    let shift = exponent.checked_sub(i32::try_from(frac.len()).ok()?)?;
    let plain = if shift >= 0 {
        let zeros = usize::try_from(shift).ok()?;
        if zeros > 40 {
            return None;
        }
        format!("{digits}{}", "0".repeat(zeros))
    } else {
        let places = usize::try_from(-shift).ok()?;
        if places > 40 {
            return None;
        }
        let padded = format!("{digits:0>width$}", width = places + 1);
        let (i, f) = padded.split_at(padded.len() - places);
        format!("{i}.{f}")
    };
    let sign = if negative { "-" } else { "" };
    let value = Decimal::from_str_exact(&format!("{sign}{plain}")).ok()?;
    Some(value.normalize())
}

/// A JSON number together with its exact decimal value: how offers hold
/// quantities and prices, so they serialize back to the very number they came
/// from (the hash chain stays intact) while all arithmetic stays exact.
#[derive(Debug, Clone, PartialEq)]
pub struct Amount {
    number: Number,
    value: Decimal,
}

impl Amount {
    /// Reads a JSON number; fails when it is not exactly representable.
    pub fn from_json(number: &Number) -> Result<Amount, MoneyError> {
        Ok(Amount {
            value: json_number_to_decimal(number)?,
            number: number.clone(),
        })
    }

    /// The JSON number for an exact decimal, when one denotes it exactly
    /// (`1140.5` does; `0.1234567890123456789` does not). For building
    /// offers, such as a counter-offer edited as text in the console.
    pub fn from_decimal(value: Decimal) -> Result<Amount, MoneyError> {
        let normalized = value.normalize();
        let text = normalized.to_string();
        let number = if normalized.scale() == 0 {
            text.parse::<i64>()
                .ok()
                .filter(|i| i.unsigned_abs() <= 1 << 53)
                .map(Number::from)
        } else {
            None
        };
        let number = match number {
            Some(n) => n,
            None => text
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .ok_or_else(|| MoneyError::NoJsonForm(text.clone()))?,
        };
        let amount = Amount::from_json(&number)?;
        if amount.value == normalized {
            Ok(amount)
        } else {
            Err(MoneyError::NoJsonForm(text))
        }
    }

    /// The JSON number, exactly as received.
    pub fn number(&self) -> &Number {
        &self.number
    }

    /// The exact value.
    pub fn decimal(&self) -> Decimal {
        self.value
    }

    /// The exact value as a [`Money`] string for the console.
    pub fn money(&self) -> Money {
        Money(self.value)
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Money(self.value).fmt(f)
    }
}

impl Serialize for Amount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.number.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Amount, D::Error> {
        let number = Number::deserialize(deserializer)?;
        Amount::from_json(&number).map_err(serde::de::Error::custom)
    }
}

/// An offer's total as the console shows it (`Total` of the console contract).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Total {
    /// The total that counts: the stated `total_annual` when present, else
    /// the computed sum.
    pub amount: Money,
    /// Σ quantity × unit_price over the line items.
    pub computed: Money,
    /// `total_annual` as the offer states it, if it does.
    pub stated: Option<Money>,
    /// True when a stated total disagrees with the line items: reported, not
    /// silently trusted.
    pub mismatch: bool,
}

/// One line's `quantity × unit_price`, exactly.
///
/// Exact for every line `Offer::parse` accepts; a hand-built line beyond those
/// limits saturates at the largest decimal rather than panicking.
pub fn line_total(quantity: &Amount, unit_price: &Amount) -> Money {
    Money(
        quantity
            .decimal()
            .checked_mul(unit_price.decimal())
            .unwrap_or(Decimal::MAX),
    )
}

/// The total of an offer (SPEC §5.2: `total_annual`, or when it is absent the
/// sum of `quantity × unit_price`), with the computed sum beside it.
pub fn offer_total(offer: &Offer) -> Total {
    let computed = offer
        .line_items
        .iter()
        .map(|item| line_total(&item.quantity, &item.unit_price).decimal())
        .fold(Decimal::ZERO, |sum, line| {
            sum.checked_add(line).unwrap_or(Decimal::MAX)
        });
    let stated = offer.total_annual.as_ref().map(Amount::money);
    let computed = Money(computed);
    Total {
        amount: stated.unwrap_or(computed),
        computed,
        stated,
        mismatch: stated.is_some_and(|s| s != computed),
    }
}

/// An absolute and relative change (`Change` of the console contract).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// `new − old`, exactly.
    pub absolute: Money,
    /// See [`percent_change`].
    pub percent: Option<String>,
}

/// The change from `old` to `new`.
pub fn change(old: Money, new: Money) -> Change {
    Change {
        absolute: Money(new.0.checked_sub(old.0).unwrap_or(if new.0 < old.0 {
            Decimal::MIN
        } else {
            Decimal::MAX
        })),
        percent: percent_change(old, new),
    }
}

/// `(new − old) / |old| × 100` as a decimal string with exactly two places
/// (`"-12.00"`, `"3.33"`), rounded half away from zero from the exact
/// quotient (no intermediate rounding). `None` when `old` is zero, where a
/// percentage means nothing.
pub fn percent_change(old: Money, new: Money) -> Option<String> {
    if old.0.is_zero() {
        return None;
    }
    let delta = new.0.checked_sub(old.0)?;
    let scale = delta.scale().max(old.0.scale());
    let numerator = mantissa_at_scale(delta, scale)?.checked_mul(10_000)?;
    let denominator = mantissa_at_scale(old.0, scale)?.checked_abs()?;
    let quotient = numerator / denominator;
    let remainder = (numerator % denominator).checked_abs()?;
    let rounded = if remainder.checked_mul(2)? >= denominator {
        quotient + numerator.signum()
    } else {
        quotient
    };
    let value = Decimal::try_from_i128_with_scale(rounded, 2).ok()?;
    if rounded == 0 {
        return Some("0.00".to_owned());
    }
    Some(value.to_string())
}

/// The integer `value × 10^scale` (`scale` ≥ the value's own scale).
fn mantissa_at_scale(value: Decimal, scale: u32) -> Option<i128> {
    let extra = scale.checked_sub(value.scale())?;
    10i128
        .checked_pow(extra)
        .and_then(|factor| value.mantissa().checked_mul(factor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn number(value: serde_json::Value) -> Number {
        match value {
            serde_json::Value::Number(n) => n,
            other => panic!("not a number: {other}"),
        }
    }

    fn money(text: &str) -> Money {
        text.parse().unwrap()
    }

    #[test]
    fn json_numbers_convert_through_their_ecmascript_text() {
        let cases = [
            (json!(1140), "1140"),
            (json!(0.1), "0.1"),
            (json!(1e-7), "0.0000001"),
            (json!(1.5e-7), "0.00000015"),
            (json!(1e21), "1000000000000000000000"),
            (json!(-0.0), "0"),
            (json!(1140.5), "1140.5"),
            (json!(0.30000000000000004), "0.30000000000000004"),
        ];
        for (value, expected) in cases {
            let decimal = json_number_to_decimal(&number(value.clone())).unwrap();
            assert_eq!(Money(decimal).to_string(), expected, "{value}");
        }
    }

    #[test]
    fn numbers_beyond_28_digits_are_refused_not_rounded() {
        let huge = number(json!(1e300));
        assert!(matches!(
            json_number_to_decimal(&huge),
            Err(MoneyError::NotRepresentable(_))
        ));
        let tiny = number(json!(1e-40));
        assert!(json_number_to_decimal(&tiny).is_err());
    }

    #[test]
    fn amount_keeps_its_json_number() {
        let amount = Amount::from_json(&number(json!(1200))).unwrap();
        assert_eq!(serde_json::to_value(&amount).unwrap(), json!(1200));
        let back = Amount::from_decimal(money("1140.5").decimal()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), json!(1140.5));
        assert!(Amount::from_decimal(money("0.12345678901234567891").decimal()).is_err());
    }

    #[test]
    fn money_text_is_plain_and_strict() {
        assert_eq!(money("1140.50").to_string(), "1140.5");
        assert_eq!(money("-0.00").to_string(), "0");
        for bad in ["1e5", "", ".5", "5.", "1,000", " 1", "+1", "NaN"] {
            assert!(bad.parse::<Money>().is_err(), "{bad:?}");
        }
        assert_eq!(
            serde_json::to_value(money("570000")).unwrap(),
            json!("570000")
        );
    }

    #[test]
    fn percent_rounds_half_away_from_zero_to_two_places() {
        let p = |old: &str, new: &str| percent_change(money(old), money(new));
        assert_eq!(p("1200", "1056").as_deref(), Some("-12.00"));
        assert_eq!(p("3", "4").as_deref(), Some("33.33"));
        assert_eq!(p("3", "5").as_deref(), Some("66.67"));
        assert_eq!(p("200", "200.01").as_deref(), Some("0.01"));
        assert_eq!(p("200", "199.99").as_deref(), Some("-0.01"));
        assert_eq!(p("8", "8.0001").as_deref(), Some("0.00"));
        assert_eq!(p("0.1", "0.3").as_deref(), Some("200.00"));
        assert_eq!(p("0", "5"), None);
        assert_eq!(p("1000", "1000").as_deref(), Some("0.00"));
    }

    #[test]
    fn change_is_exact() {
        let c = change(money("0.1"), money("0.3"));
        assert_eq!(c.absolute.to_string(), "0.2");
    }
}
