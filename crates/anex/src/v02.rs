//! The v0.2 forms the draft points to, mapped one to one onto the v0.1
//! lists: access items as RFC 9396 `authorization_details`, promises as
//! W3C ODRL 2.2 obligations and prohibitions. The wire of this binding is
//! v0.1; these functions let the same terms be read and written in the
//! forms an OAuth server or an ODRL engine understands.
//!
//! One to one means nothing is lost either way: an `authorization_details`
//! entry carrying more than one ANEX item can express (locations,
//! privileges, an identifier) is refused, and only promises of the small
//! vocabulary below have an ODRL form; any other promise is refused with
//! the reason instead of being approximated.
//!
//! | promise (v0.1) | ODRL rule |
//! |---|---|
//! | `no data retention` | obligation `delete`, `delayPeriod eq P0D` |
//! | `no retention beyond N days` (`1 day`) | obligation `delete`, `delayPeriod lteq PND` |
//! | `no sharing with third parties` | prohibition `distribute` |
//! | `no resale` | prohibition `sell` |

use serde_json::{json, Map, Value};

use crate::limits::{MAX_ACCESS_ITEMS, MAX_PROMISES, MAX_TERMS_VALID_DAYS};
use crate::term::AccessItem;
use crate::text::{quote, ItemName, Promise};

/// The RFC 9396 `type` of an ANEX access item.
pub const ACCESS_TYPE: &str = "urn:countersign:anex:access:v1";

/// The ODRL 2.2 JSON-LD context.
pub const ODRL_CONTEXT: &str = "http://www.w3.org/ns/odrl.jsonld";

/// Why a v0.2 form could not be mapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct V02Error(pub String);

fn err(s: String) -> V02Error {
    V02Error(s)
}

/// Access items as RFC 9396 `authorization_details`: one entry per item,
/// `{"type": ACCESS_TYPE, "actions": ["read"], "datatypes": [name]}`, plus
/// `"required": true` for an item marked `(m)`.
pub fn to_authorization_details(items: &[AccessItem]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|i| {
                let mut m = Map::new();
                m.insert("type".into(), json!(ACCESS_TYPE));
                m.insert("actions".into(), json!(["read"]));
                m.insert("datatypes".into(), json!([i.name.as_str()]));
                if i.required {
                    m.insert("required".into(), json!(true));
                }
                Value::Object(m)
            })
            .collect(),
    )
}

/// Reads `authorization_details` written as [`to_authorization_details`]
/// writes them; a missing `required` means negotiable, as an unmarked v0.1
/// item does.
pub fn from_authorization_details(value: &Value) -> Result<Vec<AccessItem>, V02Error> {
    let Value::Array(entries) = value else {
        return Err(err("authorization_details is not an array".into()));
    };
    if entries.len() > MAX_ACCESS_ITEMS {
        return Err(err(format!(
            "authorization_details has more than {MAX_ACCESS_ITEMS} entries"
        )));
    }
    let mut items: Vec<AccessItem> = Vec::with_capacity(entries.len());
    for (n, entry) in entries.iter().enumerate() {
        let at = format!("authorization_details[{n}]");
        let Value::Object(m) = entry else {
            return Err(err(format!("{at} is not an object")));
        };
        if let Some(k) = m
            .keys()
            .find(|k| !["type", "actions", "datatypes", "required"].contains(&k.as_str()))
        {
            return Err(err(format!(
                "{at}.{}: an ANEX access item carries only type, actions, datatypes and required",
                quote(k)
            )));
        }
        if m.get("type") != Some(&json!(ACCESS_TYPE)) {
            return Err(err(format!("{at}.type is not {ACCESS_TYPE:?}")));
        }
        if m.get("actions") != Some(&json!(["read"])) {
            return Err(err(format!("{at}.actions is not [\"read\"]")));
        }
        let name = match m.get("datatypes") {
            Some(Value::Array(d)) if d.len() == 1 => d[0].as_str().unwrap_or_default(),
            _ => return Err(err(format!("{at}.datatypes must name exactly one item"))),
        };
        let name = ItemName::parse(name)
            .map_err(|why| err(format!("{at}.datatypes[0]: {} {why}", quote(name))))?;
        let required = match m.get("required") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(err(format!("{at}.required is not a boolean"))),
        };
        if items.iter().any(|i| i.name == name) {
            return Err(err(format!("{at} names {name} a second time")));
        }
        items.push(AccessItem::new(name, required));
    }
    Ok(items)
}

/// One promise of the vocabulary, as the ODRL rule it maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    Delete { within_days: Option<u32> },
    Prohibit(&'static str),
}

fn known(promise: &str) -> Option<Known> {
    match promise {
        "no data retention" => return Some(Known::Delete { within_days: None }),
        "no sharing with third parties" => return Some(Known::Prohibit("distribute")),
        "no resale" => return Some(Known::Prohibit("sell")),
        "no retention beyond 1 day" => {
            return Some(Known::Delete {
                within_days: Some(1),
            })
        }
        _ => {}
    }
    let days = promise
        .strip_prefix("no retention beyond ")?
        .strip_suffix(" days")?;
    if days.starts_with('0') || !days.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = days.parse().ok()?;
    (2..=MAX_TERMS_VALID_DAYS)
        .contains(&n)
        .then_some(Known::Delete {
            within_days: Some(n),
        })
}

fn delete_rule(within_days: Option<u32>) -> Value {
    let (operator, duration) = match within_days {
        None => ("eq", "P0D".to_owned()),
        Some(n) => ("lteq", format!("P{n}D")),
    };
    json!({
        "action": "delete",
        "constraint": [{
            "leftOperand": "delayPeriod",
            "operator": operator,
            "rightOperand": { "@value": duration, "@type": "xsd:duration" }
        }]
    })
}

/// The days of a delete duty's `delayPeriod` (`None` for `eq P0D`), if
/// `rule` is shaped like one.
fn delete_days(rule: &Value) -> Option<Option<u32>> {
    let constraint = rule.get("constraint")?.get(0)?;
    let operator = constraint.get("operator")?.as_str()?;
    let duration = constraint.get("rightOperand")?.get("@value")?.as_str()?;
    let days = duration.strip_prefix('P')?.strip_suffix('D')?;
    if days.is_empty() || !days.bytes().all(|b| b.is_ascii_digit()) || days.len() > 4 {
        return None;
    }
    let n: u32 = days.parse().ok()?;
    match (operator, n) {
        ("eq", 0) => Some(None),
        ("lteq", 1..=MAX_TERMS_VALID_DAYS) => Some(Some(n)),
        _ => None,
    }
}

/// Promises as an ODRL 2.2 `Set` policy with identifier `uid`, whose rules
/// apply to `target` (an IRI naming the shared data): each promise of the
/// vocabulary becomes one obligation or one prohibition.
pub fn to_odrl(promises: &[Promise], uid: &str, target: &str) -> Result<Value, V02Error> {
    let mut obligation = Vec::new();
    let mut prohibition = Vec::new();
    for p in promises {
        match known(p.as_str()) {
            Some(Known::Delete { within_days }) => obligation.push(delete_rule(within_days)),
            Some(Known::Prohibit(action)) => prohibition.push(json!({ "action": action })),
            None => {
                return Err(err(format!(
                    "the promise {} has no ODRL form (only the vocabulary of docs/anex-binding.md maps one to one)",
                    quote(p.as_str())
                )))
            }
        }
    }
    Ok(json!({
        "@context": ODRL_CONTEXT,
        "@type": "Set",
        "uid": uid,
        "target": target,
        "obligation": obligation,
        "prohibition": prohibition,
    }))
}

/// Reads an ODRL policy written as [`to_odrl`] writes it back into
/// promises (obligations first, then prohibitions, each in order).
pub fn from_odrl(value: &Value) -> Result<Vec<Promise>, V02Error> {
    let Value::Object(m) = value else {
        return Err(err("the ODRL policy is not an object".into()));
    };
    let allowed = [
        "@context",
        "@type",
        "uid",
        "target",
        "obligation",
        "prohibition",
    ];
    if let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(err(format!(
            "the ODRL policy's member {} has no ANEX promise form",
            quote(k)
        )));
    }
    if m.get("@context") != Some(&json!(ODRL_CONTEXT)) {
        return Err(err(format!("@context is not {ODRL_CONTEXT:?}")));
    }
    if m.get("@type") != Some(&json!("Set")) {
        return Err(err("@type is not \"Set\"".into()));
    }
    for key in ["uid", "target"] {
        if !m.get(key).is_some_and(Value::is_string) {
            return Err(err(format!("{key} is missing or not a string")));
        }
    }
    let rules = |key: &str| -> Result<&Vec<Value>, V02Error> {
        match m.get(key) {
            Some(Value::Array(r)) => Ok(r),
            _ => Err(err(format!("{key} is missing or not an array"))),
        }
    };
    let (obligations, prohibitions) = (rules("obligation")?, rules("prohibition")?);
    if obligations.len() + prohibitions.len() > MAX_PROMISES {
        return Err(err(format!("more than {MAX_PROMISES} rules")));
    }
    let mut out: Vec<Promise> = Vec::new();
    let mut push = |text: String, at: &str| -> Result<(), V02Error> {
        let p = Promise::parse(&text).map_err(|why| err(format!("{at}: {why}")))?;
        if out.contains(&p) {
            return Err(err(format!("{at} repeats {}", quote(&text))));
        }
        out.push(p);
        Ok(())
    };
    for (n, rule) in obligations.iter().enumerate() {
        let at = format!("obligation[{n}]");
        let not_vocabulary = || {
            err(format!(
                "{at} is not a delete duty with a delayPeriod of the vocabulary"
            ))
        };
        let within_days = delete_days(rule).ok_or_else(not_vocabulary)?;
        // Compare with the one form this crate writes, so that nothing
        // beyond what the promise says can ride along.
        if *rule != delete_rule(within_days) {
            return Err(not_vocabulary());
        }
        let text = match within_days {
            None => "no data retention".to_owned(),
            Some(1) => "no retention beyond 1 day".to_owned(),
            Some(n) => format!("no retention beyond {n} days"),
        };
        push(text, &at)?;
    }
    for (n, rule) in prohibitions.iter().enumerate() {
        let at = format!("prohibition[{n}]");
        let text = if *rule == json!({"action": "distribute"}) {
            "no sharing with third parties"
        } else if *rule == json!({"action": "sell"}) {
            "no resale"
        } else {
            return Err(err(format!(
                "{at} is not a prohibition of the vocabulary (distribute, sell)"
            )));
        };
        push(text.to_owned(), &at)?;
    }
    Ok(out)
}
