//! Drift test: the published JSON Schemas (`vendor/anp/schemas/`) drive
//! this test, not a copy of their rules. Every rule of every schema becomes an
//! instance that breaks exactly that rule, which the parser must reject with a
//! violation at the rule's path; and every boundary the rule allows must be
//! accepted. A keyword, a pattern or a format this test does not know fails
//! it, so a rule added to a schema cannot go unenforced silently.

use std::path::PathBuf;

use anp::payload::{Envelope, Offer, PayloadError};
use anp::{Actor, EventKind};
use serde_json::{json, Map, Value};

fn vendored_anp() -> PathBuf {
    // The published ANP/0.1 data, vendored unchanged (vendor/anp/PROVENANCE.md).
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vendor/anp")
}

fn schema(name: &str) -> Value {
    let path = vendored_anp().join("schemas").join(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("schema parses")
}

/// A valid offer holding every property the schema names.
fn offer_base() -> Value {
    json!({"currency": "USD", "term_months": 36, "expires_at": "2026-08-01T00:00:00Z",
        "line_items": [{"sku": "CRM-ENT", "description": "CRM Enterprise seats", "quantity": 500,
            "unit": "seat/year", "unit_price": 1140, "currency": "USD", "term_months": 36}],
        "total_annual": 570000,
        "conditions": ["Net 60 payment", "Price hold through the term"],
        "notes": "Includes premier support."})
}

/// A valid envelope holding every property the schema names.
fn envelope_base() -> Value {
    json!({"party": "Contoso GmbH",
        "agent": {"name": "Contoso Negotiation Agent", "declared_ai": true},
        "may_discuss": ["renewal pricing", "term length"],
        "may_disclose": ["benchmark-grounded positions"],
        "will_not_disclose": ["internal budget ceilings", "walk-away thresholds"],
        "offer_authority": "bind_with_human_approval",
        "human_contact": "procurement@contoso.example"})
}

type Parser = fn(&Value) -> Result<(), PayloadError>;

fn parse_offer(v: &Value) -> Result<(), PayloadError> {
    Offer::parse(v).map(drop)
}

fn parse_envelope(v: &Value) -> Result<(), PayloadError> {
    Envelope::parse(v).map(drop)
}

/// Known `pattern`s: (pattern, values breaking it, values matching it).
const PATTERNS: &[(&str, &[&str], &[&str])] = &[(
    "^[A-Z]{3}$",
    &["usd", "US", "USDX", "U$D", "ÜSD", "USD\n", ""],
    &["EUR"],
)];

/// Known `format`s: (format, values breaking it, values matching it).
const FORMATS: &[(&str, &[&str], &[&str])] = &[(
    "date-time",
    &[
        "tomorrow",
        "2026-08-01",
        "2026-13-01T00:00:00Z",
        "2026-08-01 00:00:00",
        "2026-08-01T00:00:00",
    ],
    &["2026-08-01T00:00:00.000+02:00", "2026-12-31T23:59:59Z"],
)];

/// Rules of ours that are stricter than the schema (one currency per offer).
const OUR_ADDITIONS: &[&str] = &["must equal the offer's currency"];

const ANNOTATIONS: &[&str] = &["$schema", "$id", "title", "description"];

struct Drift {
    base: Value,
    parse: Parser,
    /// What was checked, for the summary and for the coverage assertion.
    checked: Vec<String>,
}

impl Drift {
    fn with(&self, pointer: &str, value: Value) -> Value {
        let mut instance = self.base.clone();
        if pointer.is_empty() {
            return value;
        }
        *instance
            .pointer_mut(pointer)
            .unwrap_or_else(|| panic!("base has no {pointer}")) = value;
        instance
    }

    fn rejects(&mut self, what: &str, instance: &Value, path: &str, rule_mentions: Option<&str>) {
        let err = match (self.parse)(instance) {
            Ok(()) => {
                let shown: String = instance.to_string().chars().take(300).collect();
                panic!("{what}: accepted, but breaks the rule at {path:?}: {shown}")
            }
            Err(e) => e,
        };
        let at_path: Vec<_> = err.violations.iter().filter(|v| v.path == path).collect();
        assert!(
            !at_path.is_empty(),
            "{what}: no violation at {path:?}, got: {err}"
        );
        if let Some(text) = rule_mentions {
            assert!(
                at_path.iter().any(|v| v.rule.contains(text)),
                "{what}: violation at {path:?} does not mention {text:?}: {err}"
            );
        }
        self.checked.push(format!("rejects {what}"));
    }

    /// The value must pass, except for the rules this implementation adds
    /// where the schema is silent (documented in `anp::payload`).
    fn accepts(&mut self, what: &str, instance: &Value) {
        if let Err(e) = (self.parse)(instance) {
            let only_ours = e
                .violations
                .iter()
                .all(|v| OUR_ADDITIONS.iter().any(|ours| v.rule.contains(ours)));
            assert!(only_ours, "{what}: rejected a value the schema allows: {e}");
        }
        self.checked.push(format!("accepts {what}"));
    }

    fn walk(&mut self, node: &Value, pointer: &str, path: &str) {
        let Value::Object(rules) = node else {
            panic!("schema node at {path:?} is not an object");
        };
        let current = self
            .base
            .pointer(pointer)
            .cloned()
            .unwrap_or_else(|| panic!("base instance lacks {pointer:?} ({path}); add it"));
        for (keyword, rule) in rules {
            let what = format!("{path:?} {keyword} {rule}");
            match keyword.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "type" => self.check_type(&what, rule, pointer, path),
                "properties" => {
                    let props = rule.as_object().expect("properties is an object");
                    for (key, sub) in props {
                        self.walk(sub, &format!("{pointer}/{key}"), &field(path, key));
                    }
                }
                "items" => self.walk(rule, &format!("{pointer}/0"), &format!("{path}[0]")),
                "required" => {
                    for key in rule.as_array().expect("required is a list") {
                        let key = key.as_str().expect("required key is a string");
                        let mut instance = self.base.clone();
                        let object = instance
                            .pointer_mut(pointer)
                            .and_then(Value::as_object_mut)
                            .expect("required applies to an object");
                        assert!(object.remove(key).is_some(), "base lacks required {key}");
                        self.rejects(&what, &instance, &field(path, key), Some("required"));
                    }
                }
                "additionalProperties" => {
                    assert_eq!(rule, &json!(false), "{what}: only false is supported");
                    let mut object: Map<String, Value> =
                        current.as_object().expect("an object").clone();
                    object.insert("not_in_the_schema".into(), json!("x"));
                    let instance = self.with(pointer, Value::Object(object));
                    self.rejects(&what, &instance, &field(path, "not_in_the_schema"), None);
                }
                "minimum" | "maximum" | "exclusiveMinimum" => {
                    self.check_bound(&what, keyword, rule, rules, pointer, path)
                }
                "minLength" | "maxLength" => {
                    let n = rule.as_u64().expect("a length") as usize;
                    // Code points, as JSON Schema counts: each 😀 is one
                    // character, four UTF-8 bytes and two UTF-16 units.
                    let text = |len: usize| json!("😀".repeat(len));
                    if keyword == "minLength" {
                        if n > 0 {
                            self.rejects(&what, &self.with(pointer, text(n - 1)), path, None);
                        }
                        self.accepts(&what, &self.with(pointer, text(n)));
                    } else {
                        self.rejects(
                            &what,
                            &self.with(pointer, text(n + 1)),
                            path,
                            Some(&n.to_string()),
                        );
                        self.accepts(&what, &self.with(pointer, text(n)));
                    }
                }
                "minItems" | "maxItems" => {
                    let n = rule.as_u64().expect("a count") as usize;
                    let element = current
                        .as_array()
                        .and_then(|a| a.first())
                        .cloned()
                        .expect("base array has an element");
                    let list = |len: usize| Value::Array(vec![element.clone(); len]);
                    if keyword == "minItems" {
                        if n > 0 {
                            self.rejects(&what, &self.with(pointer, list(n - 1)), path, None);
                        }
                        self.accepts(&what, &self.with(pointer, list(n)));
                    } else {
                        self.rejects(
                            &what,
                            &self.with(pointer, list(n + 1)),
                            path,
                            Some(&n.to_string()),
                        );
                        self.accepts(&what, &self.with(pointer, list(n)));
                    }
                }
                "pattern" => {
                    let pattern = rule.as_str().expect("a pattern");
                    let (_, bad, good) = PATTERNS
                        .iter()
                        .find(|(p, _, _)| *p == pattern)
                        .unwrap_or_else(|| {
                            panic!("{what}: unknown pattern; enforce it and list it")
                        });
                    for value in *bad {
                        self.rejects(&what, &self.with(pointer, json!(value)), path, None);
                    }
                    for value in *good {
                        self.accepts(&what, &self.with(pointer, json!(value)));
                    }
                }
                "format" => {
                    let format = rule.as_str().expect("a format");
                    let (_, bad, good) = FORMATS
                        .iter()
                        .find(|(f, _, _)| *f == format)
                        .unwrap_or_else(|| {
                            panic!("{what}: unknown format; enforce it and list it")
                        });
                    for value in *bad {
                        self.rejects(&what, &self.with(pointer, json!(value)), path, None);
                    }
                    for value in *good {
                        self.accepts(&what, &self.with(pointer, json!(value)));
                    }
                }
                "enum" => {
                    let choices = rule.as_array().expect("enum is a list");
                    for choice in choices {
                        self.accepts(&what, &self.with(pointer, choice.clone()));
                    }
                    for outsider in [json!("not_a_choice"), json!(""), json!(1), Value::Null] {
                        if !choices.contains(&outsider) {
                            self.rejects(&what, &self.with(pointer, outsider), path, None);
                        }
                    }
                }
                "const" => {
                    self.accepts(&what, &self.with(pointer, rule.clone()));
                    let others = [
                        json!(false),
                        json!(true),
                        json!("true"),
                        json!(1),
                        Value::Null,
                    ];
                    for other in others.into_iter().filter(|o| o != rule) {
                        self.rejects(&what, &self.with(pointer, other), path, None);
                    }
                }
                other => panic!("{path:?}: schema keyword {other:?} is not enforced by this test"),
            }
        }
    }

    fn check_type(&mut self, what: &str, rule: &Value, pointer: &str, path: &str) {
        let allowed: Vec<&str> = match rule {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => panic!("{what}: unsupported type rule"),
        };
        let samples = [
            json!("text"),
            json!(1.5),
            json!(2),
            json!(true),
            json!({}),
            json!([]),
            Value::Null,
        ];
        for sample in samples {
            if !allowed.iter().any(|t| has_type(&sample, t)) {
                let instance = self.with(pointer, sample);
                self.rejects(what, &instance, path, None);
            }
        }
    }

    fn check_bound(
        &mut self,
        what: &str,
        keyword: &str,
        rule: &Value,
        rules: &Map<String, Value>,
        pointer: &str,
        path: &str,
    ) {
        let bound = rule.as_f64().expect("a numeric bound");
        let integer = rules.get("type") == Some(&json!("integer"));
        let step = if integer { 1.0 } else { 0.0001 };
        let number = |f: f64| {
            if integer {
                json!(f as i64)
            } else {
                json!(f)
            }
        };
        let shown = rule.to_string();
        match keyword {
            "minimum" => {
                self.rejects(
                    what,
                    &self.with(pointer, number(bound - 1.0)),
                    path,
                    Some(&shown),
                );
                self.accepts(what, &self.with(pointer, number(bound)));
            }
            "exclusiveMinimum" => {
                self.rejects(what, &self.with(pointer, number(bound)), path, Some(&shown));
                self.rejects(
                    what,
                    &self.with(pointer, number(bound - 1.0)),
                    path,
                    Some(&shown),
                );
                self.accepts(what, &self.with(pointer, number(bound + step)));
            }
            _ => {
                self.rejects(
                    what,
                    &self.with(pointer, number(bound + 1.0)),
                    path,
                    Some(&shown),
                );
                self.accepts(what, &self.with(pointer, number(bound)));
            }
        }
    }
}

fn has_type(value: &Value, t: &str) -> bool {
    match t {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        other => panic!("unknown JSON type {other}"),
    }
}

fn field(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

fn drift(schema_file: &str, base: Value, parse: Parser) -> Vec<String> {
    let schema = schema(schema_file);
    let mut drift = Drift {
        base,
        parse,
        checked: Vec::new(),
    };
    drift.accepts("the base instance", &drift.base.clone());
    drift.walk(&schema, "", "");
    drift.checked
}

#[test]
fn offer_schema_and_parser_agree_on_every_rule() {
    let checked = drift("offer.schema.json", offer_base(), parse_offer);
    // 4 required + 5 required per line, and every limit: a floor, not a count
    // to keep in step, so a walker that silently stops visiting fails here.
    assert!(checked.len() > 100, "only {} checks ran", checked.len());
    for must in [
        "\"line_items[0].unit_price\" maximum",
        "\"line_items[0].quantity\" exclusiveMinimum",
        "\"conditions[0]\" maxLength",
        "\"line_items\" maxItems",
        "\"expires_at\" format",
        "\"line_items[0]\" additionalProperties",
    ] {
        assert!(
            checked.iter().any(|c| c.contains(must)),
            "never checked {must}"
        );
    }
}

#[test]
fn envelope_schema_and_parser_agree_on_every_rule() {
    let checked = drift("envelope.schema.json", envelope_base(), parse_envelope);
    assert!(checked.len() > 40, "only {} checks ran", checked.len());
    for must in [
        "\"agent.declared_ai\" const",
        "\"offer_authority\" enum",
        "\"human_contact\" maxLength",
        "\"agent\" additionalProperties",
    ] {
        assert!(
            checked.iter().any(|c| c.contains(must)),
            "never checked {must}"
        );
    }
}

#[test]
fn event_schema_names_the_kinds_and_actors_we_speak() {
    // Events are read by `anp::Event` and checked by `anp::verify_log`; what
    // the payload layer owns is that every kind the schema lists has a
    // parser, and that the only kind we add is the RFC-001 `accept`.
    let schema = schema("event.schema.json");
    let kinds: Vec<&str> = schema["properties"]["kind"]["enum"]
        .as_array()
        .expect("kind enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let ours: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
    for kind in &kinds {
        assert!(ours.contains(kind), "schema kind {kind} has no EventKind");
    }
    let extra: Vec<&&str> = ours.iter().filter(|k| !kinds.contains(k)).collect();
    assert_eq!(extra, vec![&"accept"]);
    let actors: Vec<&str> = schema["properties"]["actor"]["enum"]
        .as_array()
        .expect("actor enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        actors,
        vec![Actor::VendorAgent.as_str(), Actor::Buyer.as_str()]
    );
}
