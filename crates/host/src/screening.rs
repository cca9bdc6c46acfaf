//! Outbound confidentiality screening (SPEC §7). Every payload the buyer
//! side sends, drafted by the agent or written by a person, passes through
//! [`Screen::check`] first. A leak blocks the payload with a reason a person
//! can read; a screen that cannot be built (an unreadable policy) holds
//! everything.
//!
//! What counts as a leak:
//! - any text mentioning a `will_not_disclose` item (case and spacing ignored);
//! - any text containing a configured secret value: decimal values are found
//!   however they are written (`600000`, `600,000`, `$600,000.00`), other
//!   values as phrases;
//! - a `unit_price` or `total_annual` equal to a secret decimal value (a
//!   counter-offer at exactly the walk-away price reveals it); in gate
//!   counter terms ([`Screen::check_terms`]), a term's numeric `value` too
//!   (a Concordia `price` at exactly the budget ceiling reveals it).

use std::str::FromStr as _;

use rust_decimal::Decimal;
use serde_json::Value;

use crate::policy::Policy;

/// A payload the screen blocked, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Leak {
    /// A sentence naming what leaked and where.
    pub reason: String,
}

/// The screen could not be built, so everything is held.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("outbound screening is unavailable ({0}); the payload is held, not sent")]
pub struct ScreenUnavailable(pub String);

/// The screening rules of one org.
#[derive(Debug, Clone)]
pub struct Screen {
    phrases: Vec<(String, String)>,
    values: Vec<(Decimal, String)>,
}

fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Reads a JSON number as an exact decimal (`anp::money`), never through
/// float arithmetic.
pub fn decimal_of_number(n: &serde_json::Number) -> Option<Decimal> {
    anp::money::json_number_to_decimal(n).ok()
}

/// Every number written in free text, separators removed.
fn numbers_in(text: &str) -> Vec<Decimal> {
    let mut found = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next_is_digit = chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if c.is_ascii_digit() {
            current.push(c);
        } else if !current.is_empty() && (c == ',' || c == '\'' || c == '_') && next_is_digit {
            // thousands separator
        } else if !current.is_empty() && c == '.' && next_is_digit && !current.contains('.') {
            current.push('.');
        } else if !current.is_empty() {
            found.extend(Decimal::from_str(&current).ok());
            current.clear();
        }
    }
    if !current.is_empty() {
        found.extend(Decimal::from_str(&current).ok());
    }
    found
}

impl Screen {
    /// The screen for an org's stored policy text (`None`: the sandbox's
    /// built-in policy). An unreadable policy means no screen.
    pub fn from_stored(policy: Option<&str>) -> Result<Screen, ScreenUnavailable> {
        let policy = match policy {
            None => Policy::sandbox(),
            Some(text) => Policy::from_json(text).map_err(|e| ScreenUnavailable(e.to_string()))?,
        };
        Ok(Screen::new(&policy))
    }

    /// The screen a policy defines.
    pub fn new(policy: &Policy) -> Screen {
        let mut phrases = Vec::new();
        let mut values = Vec::new();
        for item in &policy.will_not_disclose {
            let n = normalize(item);
            if !n.is_empty() {
                phrases.push((n, format!("\"{item}\", which the org will not disclose")));
            }
        }
        for secret in &policy.secret_values {
            match Decimal::from_str(secret.value.trim().trim_start_matches('$')) {
                Ok(d) => values.push((d.normalize(), format!("the {}", secret.label))),
                Err(_) => phrases.push((normalize(&secret.value), format!("the {}", secret.label))),
            }
        }
        for (sku, prices) in &policy.skus {
            values.push((
                prices.walk_away_unit_price.normalize(),
                format!("the walk-away price for {sku}"),
            ));
        }
        Screen { phrases, values }
    }

    /// Passes an ANP payload, or names the first leak found.
    pub fn check(&self, payload: &Value) -> Result<(), Leak> {
        self.walk(payload, "payload", None, &["unit_price", "total_annual"])
    }

    /// Passes what a gate decision sends back to the org's agent (a reason,
    /// counter terms in a protocol's own form), or names the first leak:
    /// also a term's numeric `value` equal to a secret value.
    pub fn check_terms(&self, outbound: &Value) -> Result<(), Leak> {
        self.walk(
            outbound,
            "payload",
            None,
            &["unit_price", "total_annual", "value"],
        )
    }

    fn walk(
        &self,
        value: &Value,
        path: &str,
        key: Option<&str>,
        amounts: &[&str],
    ) -> Result<(), Leak> {
        match value {
            Value::String(text) => self.check_text(text, path),
            Value::Number(n) => {
                if key.is_some_and(|k| amounts.contains(&k)) {
                    if let Some(d) = decimal_of_number(n) {
                        if let Some((_, label)) =
                            self.values.iter().find(|(v, _)| *v == d.normalize())
                        {
                            return Err(Leak {
                                reason: format!("{path} equals {label}, which is confidential"),
                            });
                        }
                    }
                }
                Ok(())
            }
            Value::Array(items) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| self.walk(v, &format!("{path}[{i}]"), None, amounts)),
            Value::Object(map) => map
                .iter()
                .try_for_each(|(k, v)| self.walk(v, &format!("{path}.{k}"), Some(k), amounts)),
            Value::Null | Value::Bool(_) => Ok(()),
        }
    }

    fn check_text(&self, text: &str, path: &str) -> Result<(), Leak> {
        let normalized = normalize(text);
        if let Some((_, label)) = self
            .phrases
            .iter()
            .find(|(p, _)| normalized.contains(p.as_str()))
        {
            return Err(Leak {
                reason: format!("{path} mentions {label}"),
            });
        }
        for number in numbers_in(text) {
            if let Some((_, label)) = self.values.iter().find(|(v, _)| *v == number.normalize()) {
                return Err(Leak {
                    reason: format!("{path} reveals {label}"),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_secret_numbers_however_written_and_phrases() {
        let screen = Screen::new(&Policy::sandbox());
        for text in [
            "our ceiling is 600000",
            "we have $600,000.00",
            "600'000 max",
        ] {
            let leak = screen.check(&json!({ "body": text })).unwrap_err();
            assert!(
                leak.reason.contains("budget ceiling"),
                "{text}: {}",
                leak.reason
            );
        }
        let leak = screen
            .check(&json!({ "notes": "Beyond our Walk-Away   thresholds." }))
            .unwrap_err();
        assert!(leak.reason.contains("payload.notes"));
        assert!(screen
            .check(&json!({ "body": "We propose 1,000 per seat for 6000 seats." }))
            .is_ok());
    }

    #[test]
    fn blocks_a_unit_price_at_the_walk_away_price() {
        let screen = Screen::new(&Policy::sandbox());
        let offer =
            json!({ "line_items": [{ "sku": "CRM-ENT", "unit_price": 1150, "quantity": 1150 }] });
        let leak = screen.check(&offer).unwrap_err();
        assert!(leak.reason.contains("line_items[0].unit_price"));
        assert!(leak.reason.contains("walk-away price for CRM-ENT"));
    }

    #[test]
    fn gate_counter_terms_are_screened_by_their_values_too() {
        let screen = Screen::new(&Policy::sandbox());
        let terms = json!({ "counter_terms": { "price": { "value": 600000, "currency": "USD" } } });
        let leak = screen.check_terms(&terms).unwrap_err();
        assert!(
            leak.reason.contains("counter_terms.price.value"),
            "{}",
            leak.reason
        );
        assert!(leak.reason.contains("budget ceiling"), "{}", leak.reason);
        // The same number elsewhere in an ANP payload is a quantity, not a price.
        assert!(screen.check(&terms).is_ok());
        let fair = json!({ "counter_terms": { "price": { "value": 550000, "currency": "USD" } } });
        assert!(screen.check_terms(&fair).is_ok());
    }

    #[test]
    fn an_unreadable_policy_means_no_screen() {
        assert!(Screen::from_stored(Some("{not json")).is_err());
    }
}
