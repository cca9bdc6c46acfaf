//! The offer and counter-offer payload (SPEC §5.2, `schemas/offer.schema.json`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::check::{field, Checker, NumberRule, PayloadError, Violation};
use super::limits::*;
use crate::money::Amount;

/// A formal offer. Serializes back to the JSON it was read from (quantities
/// and prices keep their JSON numbers; a term written `12.0` comes back as
/// `12`, the same canonical text), so its canonical hash is unchanged.
/// Deserializing runs every rule of [`Offer::parse`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct Offer {
    /// ISO 4217 code; every line item carries the same one.
    pub currency: String,
    /// Contract term, 1 to 120 months.
    pub term_months: u32,
    /// RFC 3339 time after which the offer stands no more.
    pub expires_at: String,
    /// 1 to 200 lines.
    pub line_items: Vec<LineItem>,
    /// The total as stated by the offer; when absent, the sum of the lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_annual: Option<Amount>,
    /// Up to 20 conditions (counterparty text: data, never instructions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<String>>,
    /// Free text up to 4000 characters (counterparty text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// One line of an offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
pub struct LineItem {
    /// The vendor's product code; lines are matched across offers by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    /// What is sold (counterparty text).
    pub description: String,
    /// How many, greater than 0 and at most 10^7.
    pub quantity: Amount,
    /// The unit, like `seat/year`.
    pub unit: String,
    /// Price per unit, 0 to 10^9.
    pub unit_price: Amount,
    /// ISO 4217 code, equal to the offer's.
    pub currency: String,
    /// A line-specific term, 1 to 120 months.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_months: Option<u32>,
}

impl Offer {
    /// Reads an offer payload, enforcing every rule; the error lists every
    /// violation with its path.
    pub fn parse(value: &Value) -> Result<Offer, PayloadError> {
        let mut c = Checker::new();
        let offer = read_offer(&mut c, "", value);
        c.finish()?;
        offer.ok_or_else(|| Checker::incomplete(""))
    }

    /// Reads a counter-offer a person writes: every rule of [`Offer::parse`],
    /// and an `expires_at` later than `now` (a counter that has already
    /// expired could only be refused; its own expiry is named, never the
    /// offer it answers). The error lists every violation with its path.
    pub fn parse_counter(value: &Value, now: OffsetDateTime) -> Result<Offer, PayloadError> {
        let parsed = Offer::parse(value);
        let expires = value
            .get("expires_at")
            .and_then(Value::as_str)
            .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok().map(|at| (t, at)));
        let passed = match expires {
            Some((text, at)) if at <= now => Some(Violation {
                path: "expires_at".to_owned(),
                rule: format!(
                    "the counter-offer's expiry {text} has passed: it must be later than now ({})",
                    now.format(&Rfc3339).unwrap_or_default()
                ),
            }),
            _ => None,
        };
        match (parsed, passed) {
            (Ok(offer), None) => Ok(offer),
            (Ok(_), Some(v)) => Err(PayloadError {
                violations: vec![v],
                omitted: 0,
            }),
            (Err(mut e), Some(v)) => {
                e.violations.push(v);
                Err(e)
            }
            (Err(e), None) => Err(e),
        }
    }

    /// `expires_at` as a time; `None` only for a hand-built offer whose text
    /// is not RFC 3339 (a parsed offer always has one).
    pub fn expires_at_utc(&self) -> Option<OffsetDateTime> {
        OffsetDateTime::parse(&self.expires_at, &Rfc3339).ok()
    }

    /// The offer as the JSON payload it travels as.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl TryFrom<Value> for Offer {
    type Error = PayloadError;

    fn try_from(value: Value) -> Result<Offer, PayloadError> {
        Offer::parse(&value)
    }
}

impl LineItem {
    /// Reads one line item on its own (without the offer's currency rule).
    pub fn parse(value: &Value) -> Result<LineItem, PayloadError> {
        let mut c = Checker::new();
        let item = read_line_item(&mut c, "", value);
        c.finish()?;
        item.ok_or_else(|| Checker::incomplete(""))
    }

    /// The key that matches this line across offers: its SKU, or its
    /// description when it has no (non-empty) SKU.
    pub fn match_key(&self) -> &str {
        match &self.sku {
            Some(sku) if !sku.is_empty() => sku,
            _ => &self.description,
        }
    }
}

impl TryFrom<Value> for LineItem {
    type Error = PayloadError;

    fn try_from(value: Value) -> Result<LineItem, PayloadError> {
        LineItem::parse(&value)
    }
}

const QUANTITY: NumberRule = NumberRule {
    min: None,
    exclusive_min: Some(0.0),
    max: Some(MAX_QUANTITY),
    max_places: MAX_QUANTITY_PLACES,
};

const UNIT_PRICE: NumberRule = NumberRule {
    min: Some(0.0),
    exclusive_min: None,
    max: Some(MAX_UNIT_PRICE),
    max_places: MAX_UNIT_PRICE_PLACES,
};

const TOTAL: NumberRule = NumberRule {
    min: Some(0.0),
    exclusive_min: None,
    max: Some(MAX_TOTAL),
    max_places: MAX_TOTAL_PLACES,
};

pub(crate) fn read_offer(c: &mut Checker, path: &str, value: &Value) -> Option<Offer> {
    let map = c.object(
        path,
        value,
        &["currency", "term_months", "expires_at", "line_items"],
        &["total_annual", "conditions", "notes"],
    )?;
    let at = |key: &str| field(path, key);
    let currency = map
        .get("currency")
        .and_then(|v| c.currency(&at("currency"), v));
    let term_months = map
        .get("term_months")
        .and_then(|v| c.integer(&at("term_months"), v, 1, MAX_TERM_MONTHS));
    let expires_at = map
        .get("expires_at")
        .and_then(|v| c.date_time(&at("expires_at"), v));
    let line_items = map.get("line_items").and_then(|v| {
        c.array(&at("line_items"), v, 1, MAX_LINE_ITEMS, |c, p, item| {
            read_line_item(c, p, item)
        })
    });
    let total_annual = map
        .get("total_annual")
        .map(|v| c.number(&at("total_annual"), v, TOTAL));
    let conditions = map.get("conditions").map(|v| {
        c.array(&at("conditions"), v, 0, MAX_CONDITIONS, |c, p, item| {
            c.string(p, item, 1, MAX_CONDITION_LEN)
        })
    });
    let notes = map
        .get("notes")
        .map(|v| c.string(&at("notes"), v, 0, MAX_NOTES_LEN));

    // Our rule (SPEC is silent): one currency per offer, or its total is a
    // sum of unlike amounts.
    if let (Some(currency), Some(items)) = (&currency, &line_items) {
        for (i, item) in items.iter().enumerate() {
            if &item.currency != currency {
                c.fail(
                    &format!("{}[{i}].currency", at("line_items")),
                    format!("must equal the offer's currency {currency}"),
                );
            }
        }
    }

    Some(Offer {
        currency: currency?,
        term_months: u32::try_from(term_months?).ok()?,
        expires_at: expires_at?,
        line_items: line_items?,
        total_annual: total_annual.map_or(Some(None), |t| t.map(Some))?,
        conditions: conditions.map_or(Some(None), |t| t.map(Some))?,
        notes: notes.map_or(Some(None), |t| t.map(Some))?,
    })
}

fn read_line_item(c: &mut Checker, path: &str, value: &Value) -> Option<LineItem> {
    let map = c.object(
        path,
        value,
        &["description", "quantity", "unit", "unit_price", "currency"],
        &["sku", "term_months"],
    )?;
    let at = |key: &str| field(path, key);
    let sku = map
        .get("sku")
        .map(|v| c.string(&at("sku"), v, 0, MAX_SKU_LEN));
    let description = map
        .get("description")
        .and_then(|v| c.string(&at("description"), v, 1, MAX_DESCRIPTION_LEN));
    let quantity = map
        .get("quantity")
        .and_then(|v| c.number(&at("quantity"), v, QUANTITY));
    let unit = map
        .get("unit")
        .and_then(|v| c.string(&at("unit"), v, 1, MAX_UNIT_LEN));
    let unit_price = map
        .get("unit_price")
        .and_then(|v| c.number(&at("unit_price"), v, UNIT_PRICE));
    let currency = map
        .get("currency")
        .and_then(|v| c.currency(&at("currency"), v));
    let term_months = map
        .get("term_months")
        .map(|v| c.integer(&at("term_months"), v, 1, MAX_TERM_MONTHS));
    Some(LineItem {
        sku: sku.map_or(Some(None), |t| t.map(Some))?,
        description: description?,
        quantity: quantity?,
        unit: unit?,
        unit_price: unit_price?,
        currency: currency?,
        term_months: match term_months {
            None => None,
            Some(t) => Some(u32::try_from(t?).ok()?),
        },
    })
}
