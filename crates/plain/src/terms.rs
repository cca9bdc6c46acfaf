//! The terms of a plain-terms request, read strictly: every member known,
//! every text bounded and free of control characters, every amount an exact
//! decimal string (never a JSON number), the total computed here. What
//! reads is returned in one normal form, so two readings of the same terms
//! are byte-identical and "the approved terms" is one hash.

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

/// Most line items one request carries.
pub const MAX_LINE_ITEMS: usize = 100;
/// Most conditions.
pub const MAX_CONDITIONS: usize = 20;
/// Longest name, id, unit, SKU or term.
pub const MAX_SHORT: usize = 200;
/// Longest description or condition.
pub const MAX_LONG: usize = 500;
/// Longest rationale.
pub const MAX_RATIONALE: usize = 4000;

/// A field of the terms that does not read, and why: what a model or a
/// person corrects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct TermsError {
    /// The field's path (`line_items[2].unit_price`).
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

fn err(field: impl Into<String>, problem: impl Into<String>) -> TermsError {
    TermsError {
        field: field.into(),
        problem: problem.into(),
    }
}

/// Terms that read, in normal form, with their total.
#[derive(Debug, Clone, PartialEq)]
pub struct Terms {
    /// The normal form: the members in a fixed set, amounts as written
    /// canonically, the `total` added.
    pub value: Value,
    /// The sum of every line's quantity times unit price, exact.
    pub total: Decimal,
    /// The ISO 4217 code.
    pub currency: String,
    /// Every SKU the lines name (for the policy of authority's rules).
    pub skus: Vec<String>,
}

impl Terms {
    /// The total as an amount text: `"2500.00 USD"`.
    pub fn amount_text(&self) -> String {
        format!("{} {}", money_text(self.total), self.currency)
    }
}

/// Which way a change of a total goes for the organization, which buys
/// with plain terms: `Some(true)` better (lower), `Some(false)` worse,
/// `None` unchanged.
pub fn price_effect(delta: Decimal) -> Option<bool> {
    if delta.is_zero() {
        None
    } else {
        Some(delta.is_sign_negative())
    }
}

/// A decimal written with at least two places (`2500` → `2500.00`), the
/// exact value kept (`0.125` stays `0.125`).
pub fn money_text(d: Decimal) -> String {
    let mut d = d.normalize();
    if d.scale() < 2 {
        d.rescale(2);
    }
    d.to_string()
}

/// Reads a text member: present when `required`, 1 to `max` characters,
/// no control characters (a newline only where `lines`).
fn text(
    obj: &Map<String, Value>,
    key: &str,
    path: &str,
    max: usize,
    required: bool,
    lines: bool,
) -> Result<Option<String>, TermsError> {
    let field = if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    };
    match obj.get(key) {
        None | Some(Value::Null) if !required => Ok(None),
        None | Some(Value::Null) => Err(err(field, "is required")),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                return Err(err(field, "is empty"));
            }
            if s.chars().count() > max {
                return Err(err(field, format!("is longer than {max} characters")));
            }
            if s.chars().any(|c| c.is_control() && !(lines && c == '\n')) {
                return Err(err(field, "holds a control character"));
            }
            if s.chars().any(reorders) {
                return Err(err(
                    field,
                    "holds a character that reorders the text on screen (a bidirectional override or isolate)",
                ));
            }
            Ok(Some(s.to_owned()))
        }
        Some(other) => Err(err(field, format!("must be a string, not {}", kind(other)))),
    }
}

/// The invisible characters that make text read otherwise than it is
/// stored (`\u{202e}gnp.exe` shows as `exe.png`): refused in terms a person
/// approves.
fn reorders(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An exact decimal string: digits, at most one point, no sign, exponent,
/// spaces or leading zeros; at most 15 digits before the point and 6 after.
pub fn read_decimal(field: &str, v: Option<&Value>) -> Result<Decimal, TermsError> {
    let s = match v {
        None | Some(Value::Null) => return Err(err(field, "is required")),
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Number(n)) => {
            return Err(err(
                field,
                format!("must be an exact decimal string (\"{n}\"), not a JSON number"),
            ))
        }
        Some(other) => {
            return Err(err(
                field,
                format!("must be an exact decimal string, not {}", kind(other)),
            ))
        }
    };
    let (whole, fraction) = match s.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let ok = digits(whole)
        && whole.len() <= 15
        && (whole == "0" || !whole.starts_with('0'))
        && fraction.is_none_or(|f| digits(f) && f.len() <= 6);
    if !ok {
        return Err(err(
            field,
            format!("{s:?} is not an exact decimal (digits with at most one point, like \"1250.00\"; at most 15 digits before the point and 6 after)"),
        ));
    }
    s.parse::<Decimal>()
        .map_err(|e| err(field, format!("{s:?} does not read: {e}")))
}

fn only(obj: &Map<String, Value>, path: &str, known: &[&str]) -> Result<(), TermsError> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(err(
            if path.is_empty() {
                unknown.clone()
            } else {
                format!("{path}.{unknown}")
            },
            format!(
                "is not a member of plain terms (known: {})",
                known.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

fn object<'a>(v: Option<&'a Value>, field: &str) -> Result<&'a Map<String, Value>, TermsError> {
    match v {
        Some(Value::Object(o)) => Ok(o),
        None | Some(Value::Null) => Err(err(field, "is required")),
        Some(other) => Err(err(
            field,
            format!("must be an object, not {}", kind(other)),
        )),
    }
}

/// Reads terms strictly; answers their normal form and total, or the first
/// field that does not read.
pub fn read_terms(v: &Value) -> Result<Terms, TermsError> {
    let obj = object(Some(v), "terms")?;
    only(
        obj,
        "",
        &[
            "counterparty",
            "currency",
            "line_items",
            "term",
            "conditions",
            "total",
        ],
    )?;
    let cp = object(obj.get("counterparty"), "counterparty")?;
    only(cp, "counterparty", &["name", "id"])?;
    let cp_name = text(cp, "name", "counterparty", MAX_SHORT, true, false)?;
    let cp_id = text(cp, "id", "counterparty", MAX_SHORT, true, false)?;

    let currency = text(obj, "currency", "", 3, true, false)?.unwrap_or_default();
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(err(
            "currency",
            format!("{currency:?} is not an ISO 4217 code (three capital letters, like \"USD\")"),
        ));
    }

    let items = match obj.get("line_items") {
        Some(Value::Array(a)) => a,
        None | Some(Value::Null) => return Err(err("line_items", "is required")),
        Some(other) => {
            return Err(err(
                "line_items",
                format!("must be an array, not {}", kind(other)),
            ))
        }
    };
    if items.is_empty() || items.len() > MAX_LINE_ITEMS {
        return Err(err(
            "line_items",
            format!("must hold 1 to {MAX_LINE_ITEMS} lines"),
        ));
    }
    let mut total = Decimal::ZERO;
    let mut lines = Vec::with_capacity(items.len());
    let mut skus = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("line_items[{i}]");
        let o = object(Some(item), &path)?;
        only(
            o,
            &path,
            &["description", "sku", "quantity", "unit", "unit_price"],
        )?;
        let description = text(o, "description", &path, MAX_LONG, true, false)?;
        let sku = text(o, "sku", &path, MAX_SHORT, false, false)?;
        let unit = text(o, "unit", &path, MAX_SHORT, false, false)?;
        let quantity = read_decimal(&format!("{path}.quantity"), o.get("quantity"))?;
        if quantity.is_zero() {
            return Err(err(format!("{path}.quantity"), "must be more than zero"));
        }
        let unit_price = read_decimal(&format!("{path}.unit_price"), o.get("unit_price"))?;
        let line_total = quantity.checked_mul(unit_price).ok_or_else(|| {
            err(
                format!("{path}.unit_price"),
                "times the quantity is too large",
            )
        })?;
        total = total
            .checked_add(line_total)
            .ok_or_else(|| err("line_items", "the total is too large"))?;
        if let Some(s) = &sku {
            skus.push(s.clone());
        }
        let mut line = Map::new();
        line.insert("description".into(), json!(description));
        if let Some(s) = sku {
            line.insert("sku".into(), json!(s));
        }
        line.insert("quantity".into(), json!(quantity.normalize().to_string()));
        if let Some(u) = unit {
            line.insert("unit".into(), json!(u));
        }
        line.insert("unit_price".into(), json!(money_text(unit_price)));
        lines.push(Value::Object(line));
    }

    let term = text(obj, "term", "", MAX_SHORT, false, false)?;
    let conditions = match obj.get("conditions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => {
            if a.len() > MAX_CONDITIONS {
                return Err(err(
                    "conditions",
                    format!("holds more than {MAX_CONDITIONS} conditions"),
                ));
            }
            let mut out = Vec::with_capacity(a.len());
            for (i, c) in a.iter().enumerate() {
                let field = format!("conditions[{i}]");
                match c {
                    Value::String(s) => {
                        let mut holder = Map::new();
                        holder.insert("c".into(), Value::String(s.clone()));
                        let s = text(&holder, "c", "", MAX_LONG, true, false)
                            .map_err(|e| err(field.clone(), e.problem))?;
                        out.push(json!(s));
                    }
                    other => {
                        return Err(err(field, format!("must be a string, not {}", kind(other))))
                    }
                }
            }
            out
        }
        Some(other) => {
            return Err(err(
                "conditions",
                format!("must be an array of strings, not {}", kind(other)),
            ))
        }
    };
    if let Some(stated) = obj.get("total") {
        let stated = read_decimal("total", Some(stated))?;
        if stated != total {
            return Err(err(
                "total",
                format!(
                    "says {} but the lines add up to {}",
                    money_text(stated),
                    money_text(total)
                ),
            ));
        }
    }

    let mut value = Map::new();
    value.insert("counterparty".into(), json!({"name": cp_name, "id": cp_id}));
    value.insert("currency".into(), json!(currency));
    value.insert("line_items".into(), Value::Array(lines));
    if let Some(t) = term {
        value.insert("term".into(), json!(t));
    }
    value.insert("conditions".into(), Value::Array(conditions));
    value.insert("total".into(), json!(money_text(total)));
    Ok(Terms {
        value: Value::Object(value),
        total,
        currency,
        skus,
    })
}

/// Every field of `v` that does not read, for a person correcting a
/// counter: the first problem [`read_terms`] finds, then each line's
/// quantity and unit price that is no exact decimal, each named once.
pub fn problems(v: &Value) -> Vec<TermsError> {
    let mut found: Vec<TermsError> = read_terms(v).err().into_iter().collect();
    let lines = v.get("line_items").and_then(Value::as_array);
    for (i, line) in lines.into_iter().flatten().enumerate() {
        for key in ["quantity", "unit_price"] {
            let field = format!("line_items[{i}].{key}");
            if found.iter().any(|e| e.field == field) {
                continue;
            }
            match read_decimal(&field, line.get(key)) {
                Err(e) => found.push(e),
                Ok(d) if key == "quantity" && d.is_zero() => {
                    found.push(err(field, "must be more than zero"))
                }
                Ok(_) => {}
            }
        }
    }
    found
}

/// Reads an agent's rationale: optional, at most [`MAX_RATIONALE`]
/// characters, lines allowed. It is shown to the person as the agent's
/// words, never read as an instruction.
pub fn read_rationale(v: Option<&Value>) -> Result<Option<String>, TermsError> {
    let mut holder = Map::new();
    if let Some(v) = v {
        holder.insert("rationale".into(), v.clone());
    }
    text(&holder, "rationale", "", MAX_RATIONALE, false, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Value {
        json!({
            "counterparty": {"name": "Contoso Ltd", "id": "contoso.example"},
            "currency": "USD",
            "line_items": [
                {"description": "Industrial sensor", "sku": "SEN-200", "quantity": "2000", "unit": "each", "unit_price": "1.25"},
                {"description": "Calibration", "quantity": "1", "unit_price": "150"}
            ],
            "term": "12 months",
            "conditions": ["Net 30"]
        })
    }

    #[test]
    fn good_terms_read_in_normal_form_with_their_exact_total() {
        let t = read_terms(&good()).unwrap();
        assert_eq!(t.amount_text(), "2650.00 USD");
        assert_eq!(t.value["line_items"][1]["unit_price"], "150.00");
        assert_eq!(t.value["total"], "2650.00");
        assert_eq!(t.skus, ["SEN-200"]);
        // The normal form reads as itself.
        assert_eq!(read_terms(&t.value).unwrap().value, t.value);
    }

    #[test]
    fn every_bad_amount_is_named_at_once() {
        let mut v = good();
        v["line_items"][0]["quantity"] = json!("-5");
        v["line_items"][0]["unit_price"] = json!("eleven");
        v["line_items"][1]["unit_price"] = json!("1e3");
        let fields: Vec<String> = problems(&v).into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            [
                "line_items[0].quantity",
                "line_items[0].unit_price",
                "line_items[1].unit_price"
            ]
        );
        assert!(problems(&good()).is_empty());
    }

    #[test]
    fn a_sub_cent_price_is_kept_exactly() {
        let mut v = good();
        v["line_items"][0]["unit_price"] = json!("0.125");
        v["line_items"][0]["quantity"] = json!("3");
        let t = read_terms(&v).unwrap();
        assert_eq!(t.value["line_items"][0]["unit_price"], "0.125");
        assert_eq!(t.amount_text(), "150.375 USD");
    }

    #[test]
    fn each_bad_field_is_named() {
        type Change = Box<dyn Fn(&mut Value)>;
        let cases: Vec<(&str, Change)> = vec![
            (
                "counterparty",
                Box::new(|v| {
                    v.as_object_mut().unwrap().remove("counterparty");
                }),
            ),
            (
                "counterparty.name",
                Box::new(|v| v["counterparty"]["name"] = json!("")),
            ),
            (
                "counterparty.id",
                Box::new(|v| v["counterparty"]["id"] = json!("a\u{7}b")),
            ),
            (
                "counterparty.role",
                Box::new(|v| v["counterparty"]["role"] = json!("x")),
            ),
            ("currency", Box::new(|v| v["currency"] = json!("usd"))),
            ("line_items", Box::new(|v| v["line_items"] = json!([]))),
            (
                "line_items[0].description",
                Box::new(|v| v["line_items"][0]["description"] = json!("x".repeat(501))),
            ),
            (
                "line_items[0].quantity",
                Box::new(|v| v["line_items"][0]["quantity"] = json!(2000)),
            ),
            (
                "line_items[0].quantity",
                Box::new(|v| v["line_items"][0]["quantity"] = json!("0")),
            ),
            (
                "line_items[0].quantity",
                Box::new(|v| v["line_items"][0]["quantity"] = json!("-1")),
            ),
            (
                "line_items[0].unit_price",
                Box::new(|v| v["line_items"][0]["unit_price"] = json!("1e3")),
            ),
            (
                "line_items[0].unit_price",
                Box::new(|v| v["line_items"][0]["unit_price"] = json!("01.25")),
            ),
            (
                "line_items[0].unit_price",
                Box::new(|v| v["line_items"][0]["unit_price"] = json!("1.2345678")),
            ),
            (
                "line_items[1].unit_price",
                Box::new(|v| {
                    v["line_items"][1]
                        .as_object_mut()
                        .unwrap()
                        .remove("unit_price");
                }),
            ),
            (
                "line_items[0].discount",
                Box::new(|v| v["line_items"][0]["discount"] = json!("5")),
            ),
            ("term", Box::new(|v| v["term"] = json!(12))),
            ("conditions[0]", Box::new(|v| v["conditions"] = json!([""]))),
            (
                "conditions",
                Box::new(|v| v["conditions"] = json!(vec!["c"; 21])),
            ),
            ("total", Box::new(|v| v["total"] = json!("1.00"))),
            ("approved", Box::new(|v| v["approved"] = json!(true))),
        ];
        for (field, change) in cases {
            let mut v = good();
            change(&mut v);
            let e = read_terms(&v).unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
    }

    #[test]
    fn a_rationale_may_have_lines_but_no_other_control_characters() {
        assert_eq!(
            read_rationale(Some(&json!("Cheaper than\nlast year")))
                .unwrap()
                .as_deref(),
            Some("Cheaper than\nlast year")
        );
        assert!(read_rationale(Some(&json!("a\u{1b}[31m"))).is_err());
        assert!(read_rationale(Some(&json!("x".repeat(4001)))).is_err());
        assert_eq!(read_rationale(None).unwrap(), None);
    }
}
