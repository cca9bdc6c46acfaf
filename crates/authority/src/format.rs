//! The policy file: TOML, read into spanned raw values, then checked into a
//! [`Policy`]. Every refusal is a [`FormatError`] naming the line, the field
//! and the reason, so an admin fixes a file without guessing.
//!
//! Why TOML: an admin writes this file by hand and reads it in review. TOML
//! has comments (a policy wants its reasons beside its numbers), its tables
//! of arrays read as the ordered list of rules they are, and `toml::Spanned`
//! keeps where every value was written. JSON has no comments; YAML's
//! implicit typing reads `NO` as false and `010` as eight.
//!
//! Amounts are exact: a TOML integer or a decimal string (`"10000.50"`); a
//! TOML float is refused, since it was rounded before we saw it.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use rust_decimal::Decimal;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::policy::{
    Band, Chain, Conditions, Currency, Fallback, Holders, Need, Part, Person, Policy, Protocol,
    Rule, Step, MAX_COUNT,
};

/// The largest policy file read (a policy of a few hundred rules is a few
/// tens of KiB; more is a mistake or an attack on the parser).
pub const MAX_BYTES: usize = 256 * 1024;

/// The most rules a policy may have.
pub const MAX_RULES: usize = 500;

/// The most steps a chain may have.
pub const MAX_STEPS: usize = 10;

/// Why a policy file was refused: where, which field, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, {field}: {reason}")]
pub struct FormatError {
    /// 1-based line of the value (or table) at fault.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The field's path, array entries counted from 1 as the docs and the
    /// routing reasons count rules (`rule[3].step[2].role`); `(file)` when
    /// the fault is the file as a whole.
    pub field: String,
    /// What is wrong, and what would be right.
    pub reason: String,
}

/// Reads and checks a policy file.
pub fn parse(text: &str) -> Result<Policy, FormatError> {
    if text.len() > MAX_BYTES {
        return Err(FormatError {
            line: 1,
            column: 1,
            field: "(file)".into(),
            reason: format!(
                "the file is {} bytes; a policy of authority may be at most {MAX_BYTES}",
                text.len()
            ),
        });
    }
    let raw: RawPolicy = toml::from_str(text).map_err(|e| from_toml(text, &e))?;
    Checker { text }.policy(raw)
}

/// One place of the file: computes line and column from a byte span.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char(text, offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(before.chars().count(), |nl| {
        before[nl + 1..].chars().count()
    }) + 1;
    (line, column)
}

fn floor_char(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A refusal from the TOML reader itself (syntax, a missing or unknown
/// field, a wrong type): its span gives the line, the tables above it the
/// field's path.
fn from_toml(text: &str, e: &toml::de::Error) -> FormatError {
    let at = e.span().map_or(0, |s| s.start);
    let (line, column) = position(text, at);
    let table = table_path(text, at);
    let join = |path: String, key: String| {
        if path.is_empty() {
            key
        } else {
            format!("{path}.{key}")
        }
    };
    let mut field = match (key_on_line(text, at), missing_or_unknown(e.message())) {
        (Some(key), _) => join(table, key),
        // A missing field belongs to the table the reader was in (its
        // keys), which may be an outer one of the header the span is at.
        (None, Some(key)) => join(indexed(&table, &reader_keys(e)), key),
        (None, None) => table,
    };
    if field.is_empty() {
        field = "(file)".into();
    }
    FormatError {
        line,
        column,
        field,
        reason: e.message().trim().replace('\n', "; "),
    }
}

/// The path of the table a byte offset is in, from the `[table]` and
/// `[[array]]` headers above it, each array entry counted from 1.
fn table_path(text: &str, offset: usize) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut path = String::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if at > offset {
            break;
        }
        let start = at;
        at += line.len();
        let trimmed = line.trim();
        let header = if let Some(inner) = trimmed.strip_prefix("[[") {
            inner
                .split("]]")
                .next()
                .map(|n| (n.trim().to_owned(), true))
        } else if let Some(inner) = trimmed.strip_prefix('[') {
            inner
                .split(']')
                .next()
                .map(|n| (n.trim().to_owned(), false))
        } else {
            None
        };
        let Some((name, array)) = header else {
            continue;
        };
        if start > offset {
            break;
        }
        // Each dotted prefix that is an array of tables takes its current index.
        let mut built = String::new();
        let mut shown = String::new();
        let segments: Vec<&str> = name.split('.').map(str::trim).collect();
        for (i, seg) in segments.iter().enumerate() {
            if !built.is_empty() {
                built.push('.');
                shown.push('.');
            }
            built.push_str(seg);
            shown.push_str(seg);
            let last = i + 1 == segments.len();
            if last && array {
                let n = counts.entry(built.clone()).or_insert(0);
                *n += 1;
                // A new entry of an outer array resets the inner ones' counts.
                let prefix = format!("{built}.");
                counts.retain(|k, _| !k.starts_with(&prefix));
                shown.push_str(&format!("[{}]", counts[&built]));
            } else if let Some(n) = counts.get(&built) {
                shown.push_str(&format!("[{n}]"));
            }
        }
        path = shown;
    }
    path
}

/// The table path the TOML reader was in (its error keeps it, shown only
/// when the error has no input: so it is read from a copy without one).
fn reader_keys(e: &toml::de::Error) -> Vec<String> {
    let mut bare = e.clone();
    bare.set_input(None);
    bare.to_string()
        .lines()
        .find_map(|l| l.strip_prefix("in `").and_then(|r| r.strip_suffix('`')))
        .map(|path| path.split('.').map(str::to_owned).collect())
        .unwrap_or_default()
}

/// `keys` (plain names) with the array indices `table` gives the same
/// segments (`rule[2].step[1]` and `[rule]` give `rule[2]`).
fn indexed(table: &str, keys: &[String]) -> String {
    let shown: Vec<&str> = table.split('.').collect();
    keys.iter()
        .enumerate()
        .map(|(i, key)| match shown.get(i) {
            Some(s) if s.split('[').next() == Some(key.as_str()) => (*s).to_owned(),
            _ => key.clone(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The key a `key = value` line at `offset` assigns, if it is one.
fn key_on_line(text: &str, offset: usize) -> Option<String> {
    let offset = floor_char(text, offset.min(text.len()));
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or_default();
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    let bare = key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    (bare && !key.is_empty() && !key.starts_with('[')).then(|| key.to_owned())
}

/// The field a "missing field `x`" or "unknown field `x`" message names.
fn missing_or_unknown(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("missing field `")
        .or_else(|| message.strip_prefix("unknown field `"))?;
    rest.split('`').next().map(str::to_owned)
}

// ---- the raw file, as TOML gives it ----

/// `[roles]` as written: each name and each holder with its place.
type RawRoles = Spanned<BTreeMap<Spanned<String>, Spanned<Vec<Spanned<String>>>>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    roles: RawRoles,
    #[serde(default)]
    rule: Vec<Spanned<RawRule>>,
    unnamed_currency: Spanned<RawFallback>,
    no_rule: Spanned<RawFallback>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    name: Spanned<String>,
    #[serde(default)]
    protocol: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    counterparty: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    sku: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    category: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    data_item: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    amount: Option<Spanned<Vec<Spanned<RawBand>>>>,
    #[serde(default)]
    step: Vec<Spanned<RawStep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBand {
    currency: Spanned<String>,
    #[serde(default)]
    above: Option<Spanned<Amount>>,
    #[serde(default)]
    up_to: Option<Spanned<Amount>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(default)]
    role: Option<Spanned<String>>,
    #[serde(default)]
    count: Option<Spanned<Count>>,
    #[serde(default)]
    all_of: Option<Spanned<Vec<Spanned<RawPart>>>>,
    #[serde(default)]
    respond_within: Option<Spanned<String>>,
    #[serde(default)]
    escalate_to: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPart {
    role: Spanned<String>,
    #[serde(default)]
    count: Option<Spanned<Count>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFallback {
    reason: Spanned<String>,
    #[serde(default)]
    step: Vec<Spanned<RawStep>>,
}

/// An exact amount: a TOML integer or a decimal string, never a float.
struct Amount(Decimal);

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Amount;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an amount: an integer or a decimal string such as \"10000.50\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Amount, E> {
                Ok(Amount(Decimal::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Amount, E> {
                Ok(Amount(Decimal::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Amount, E> {
                Err(E::custom(format!(
                    "{v} is a TOML float, rounded before it could be read exactly; write the amount as a string (\"{v}\")"
                )))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Amount, E> {
                let plain = !v.is_empty()
                    && v.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && v.matches('.').count() <= 1
                    && !v.starts_with('.')
                    && !v.ends_with('.');
                match v.parse::<Decimal>() {
                    Ok(d) if plain => Ok(Amount(d)),
                    _ => Err(E::custom(format!(
                        "{v:?} is not an amount: write digits with at most one decimal point, no sign, no grouping (\"10000.50\")"
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A step's count as written: an integer, `"any"` or `"all"`.
enum Count {
    Number(i64),
    Any,
    All,
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a count: 1 to {MAX_COUNT}, \"any\" or \"all\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                Ok(Count::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                Ok(Count::Number(i64::try_from(v).unwrap_or(i64::MAX)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Count, E> {
                match v {
                    "any" => Ok(Count::Any),
                    "all" => Ok(Count::All),
                    _ => Err(E::custom(format!(
                        "{v:?} is not a count: write 1 to {MAX_COUNT}, \"any\" or \"all\""
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

// ---- checking ----

struct Checker<'t> {
    text: &'t str,
}

type Checked<T> = Result<T, FormatError>;

impl Checker<'_> {
    fn err(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> FormatError {
        let (line, column) = position(self.text, span.start);
        FormatError {
            line,
            column,
            field: field.into(),
            reason: reason.into(),
        }
    }

    fn policy(&self, raw: RawPolicy) -> Checked<Policy> {
        let roles = self.roles(&raw.roles)?;
        if raw.rule.len() > MAX_RULES {
            let span = raw.rule[MAX_RULES].span();
            return Err(self.err(
                span,
                format!("rule[{}]", MAX_RULES + 1),
                format!("a policy may have at most {MAX_RULES} rules"),
            ));
        }
        let mut rules = Vec::with_capacity(raw.rule.len());
        for (i, rule) in raw.rule.iter().enumerate() {
            rules.push(self.rule(&format!("rule[{}]", i + 1), rule, &roles)?);
        }
        let unnamed_currency = self.fallback("unnamed_currency", &raw.unnamed_currency, &roles)?;
        let no_rule = self.fallback("no_rule", &raw.no_rule, &roles)?;
        Ok(Policy {
            roles,
            rules,
            unnamed_currency,
            no_rule,
        })
    }

    fn roles(&self, raw: &RawRoles) -> Checked<BTreeMap<String, Holders>> {
        if raw.get_ref().is_empty() {
            return Err(self.err(
                raw.span(),
                "roles",
                "name at least one role and who holds it (buyer = [\"ann@example.com\"])",
            ));
        }
        let mut roles = BTreeMap::new();
        for (name, people) in raw.get_ref() {
            let field = format!("roles.{}", name.get_ref());
            self.name(name, &field, "role name")?;
            if people.get_ref().is_empty() {
                return Err(self.err(
                    people.span(),
                    field,
                    "a role needs at least one holder: the email an approver was enrolled with",
                ));
            }
            let mut holders: Vec<Person> = Vec::new();
            for (j, email) in people.get_ref().iter().enumerate() {
                let at = format!("{field}[{}]", j + 1);
                let text = email.get_ref().trim();
                if !plausible_email(text) {
                    return Err(self.err(email.span(), at, format!("{:?} is not an email: name each holder by the email their enrollment code was issued for", email.get_ref())));
                }
                let person = Person::new(text);
                if holders.contains(&person) {
                    return Err(self.err(
                        email.span(),
                        at,
                        format!("{person} is named twice in this role"),
                    ));
                }
                holders.push(person);
            }
            roles.insert(name.get_ref().clone(), Holders::People(holders));
        }
        Ok(roles)
    }

    fn name(&self, name: &Spanned<String>, field: &str, what: &str) -> Checked<()> {
        let text = name.get_ref();
        let ok = !text.is_empty()
            && text.len() <= 64
            && text
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if ok {
            Ok(())
        } else {
            Err(self.err(name.span(), field, format!("{text:?} is not a {what}: use 1 to 64 lower-case letters, digits, '_' or '-' (category_manager)")))
        }
    }

    fn rule(
        &self,
        field: &str,
        raw: &Spanned<RawRule>,
        roles: &BTreeMap<String, Holders>,
    ) -> Checked<Rule> {
        let r = raw.get_ref();
        let name = r.name.get_ref().trim();
        if name.is_empty() || name.len() > 200 {
            return Err(self.err(
                r.name.span(),
                format!("{field}.name"),
                "a rule needs a name of 1 to 200 characters, which every request it routes shows",
            ));
        }
        let mut when = Conditions::default();
        if let Some(list) = &r.protocol {
            for (j, p) in self
                .list(list, &format!("{field}.protocol"))?
                .iter()
                .enumerate()
            {
                let parsed = Protocol::parse(p.get_ref()).ok_or_else(|| {
                    self.err(
                        p.span(),
                        format!("{field}.protocol[{}]", j + 1),
                        format!(
                            "{:?} is not a protocol: write anp, concordia, oanp or anex",
                            p.get_ref()
                        ),
                    )
                })?;
                when.protocols.push(parsed);
            }
        }
        when.counterparties = self.strings(&r.counterparty, &format!("{field}.counterparty"))?;
        when.skus = self.strings(&r.sku, &format!("{field}.sku"))?;
        when.categories = self.strings(&r.category, &format!("{field}.category"))?;
        when.data_items = self.strings(&r.data_item, &format!("{field}.data_item"))?;
        if let Some(bands) = &r.amount {
            for (j, band) in self
                .list(bands, &format!("{field}.amount"))?
                .iter()
                .enumerate()
            {
                when.amounts
                    .push(self.band(&format!("{field}.amount[{}]", j + 1), band)?);
            }
        }
        let chain = self.chain(field, raw.span(), &r.step, roles)?;
        Ok(Rule {
            name: name.to_owned(),
            when,
            chain,
        })
    }

    fn list<'a, T>(&self, list: &'a Spanned<Vec<T>>, field: &str) -> Checked<&'a Vec<T>> {
        if list.get_ref().is_empty() {
            return Err(self.err(
                list.span(),
                field,
                "an empty list matches nothing: leave the field out to match anything",
            ));
        }
        Ok(list.get_ref())
    }

    fn strings(
        &self,
        list: &Option<Spanned<Vec<Spanned<String>>>>,
        field: &str,
    ) -> Checked<Vec<String>> {
        let Some(list) = list else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (j, s) in self.list(list, field)?.iter().enumerate() {
            let text = s.get_ref().trim();
            if text.is_empty() || text.len() > 200 {
                return Err(self.err(
                    s.span(),
                    format!("{field}[{}]", j + 1),
                    "each entry must be 1 to 200 characters",
                ));
            }
            out.push(text.to_owned());
        }
        Ok(out)
    }

    fn band(&self, field: &str, raw: &Spanned<RawBand>) -> Checked<Band> {
        let b = raw.get_ref();
        let code = b.currency.get_ref();
        if code.len() != 3 || !code.chars().all(|c| c.is_ascii_uppercase()) {
            return Err(self.err(
                b.currency.span(),
                format!("{field}.currency"),
                format!("{code:?} is not a currency: write its ISO 4217 code in capitals (USD)"),
            ));
        }
        let above = b.above.as_ref().map(|a| a.get_ref().0);
        let up_to = b.up_to.as_ref().map(|a| a.get_ref().0);
        if above.is_none() && up_to.is_none() {
            return Err(self.err(raw.span(), field, "a band needs `above` (exclusive), `up_to` (inclusive) or both; leave `amount` out to match any amount"));
        }
        if let (Some(a), Some(u), Some(at)) = (above, up_to, &b.up_to) {
            if u <= a {
                return Err(self.err(at.span(), format!("{field}.up_to"), format!("up_to ({u}) must be greater than above ({a}): the band would hold no amount")));
            }
        }
        Ok(Band {
            currency: Currency::Code(code.clone()),
            above,
            up_to,
        })
    }

    fn chain(
        &self,
        field: &str,
        span: Range<usize>,
        raw: &[Spanned<RawStep>],
        roles: &BTreeMap<String, Holders>,
    ) -> Checked<Chain> {
        if raw.is_empty() {
            return Err(self.err(
                span,
                format!("{field}.step"),
                "a chain needs at least one step ([[…step]] with a role)",
            ));
        }
        if raw.len() > MAX_STEPS {
            return Err(self.err(
                raw[MAX_STEPS].span(),
                format!("{field}.step[{}]", MAX_STEPS + 1),
                format!("a chain may have at most {MAX_STEPS} steps"),
            ));
        }
        let mut steps = Vec::new();
        for (i, step) in raw.iter().enumerate() {
            steps.push(self.step(&format!("{field}.step[{}]", i + 1), step, roles)?);
        }
        Ok(Chain { steps })
    }

    fn step(
        &self,
        field: &str,
        raw: &Spanned<RawStep>,
        roles: &BTreeMap<String, Holders>,
    ) -> Checked<Step> {
        let s = raw.get_ref();
        let parts = match (&s.role, &s.all_of) {
            (Some(role), None) => vec![self.part(field, role, s.count.as_ref(), roles)?],
            (None, Some(group)) => {
                if s.count.is_some() {
                    let span = s.count.as_ref().map_or(raw.span(), Spanned::span);
                    return Err(self.err(span, format!("{field}.count"), "a parallel group's count belongs in each of its parts ({ role = \"legal\", count = 2 })"));
                }
                let group = group.get_ref();
                if group.len() < 2 {
                    return Err(self.err(
                        raw.span(),
                        format!("{field}.all_of"),
                        "a parallel group needs at least two parts; write a single role as `role`",
                    ));
                }
                let mut parts: Vec<Part> = Vec::new();
                for (j, p) in group.iter().enumerate() {
                    let at = format!("{field}.all_of[{}]", j + 1);
                    let part =
                        self.part(&at, &p.get_ref().role, p.get_ref().count.as_ref(), roles)?;
                    if parts.iter().any(|q| q.role == part.role) {
                        return Err(self.err(p.span(), format!("{at}.role"), format!("{} appears twice in this group: give it one part with the count it needs", part.role)));
                    }
                    parts.push(part);
                }
                parts
            }
            (Some(_), Some(_)) => {
                return Err(self.err(
                    raw.span(),
                    field,
                    "a step is either one `role` or a parallel group `all_of`, not both",
                ))
            }
            (None, None) => {
                return Err(self.err(
                    raw.span(),
                    format!("{field}.role"),
                    "a step needs a `role` (or a parallel group `all_of`)",
                ))
            }
        };
        let respond_within_minutes = match &s.respond_within {
            Some(text) => Some(self.duration(text, &format!("{field}.respond_within"))?),
            None => None,
        };
        let escalate_to = match &s.escalate_to {
            Some(role) => {
                self.known_role(role, &format!("{field}.escalate_to"), roles)?;
                if respond_within_minutes.is_none() {
                    return Err(self.err(
                        role.span(),
                        format!("{field}.escalate_to"),
                        "escalation needs a `respond_within` (\"4h\") saying when it happens",
                    ));
                }
                Some(role.get_ref().clone())
            }
            None => None,
        };
        Ok(Step {
            parts,
            respond_within_minutes,
            escalate_to,
        })
    }

    fn known_role(
        &self,
        role: &Spanned<String>,
        field: &str,
        roles: &BTreeMap<String, Holders>,
    ) -> Checked<()> {
        if roles.contains_key(role.get_ref()) {
            return Ok(());
        }
        let known: Vec<&str> = roles.keys().map(String::as_str).collect();
        Err(self.err(
            role.span(),
            field,
            format!(
                "no role {:?} in [roles] (roles: {})",
                role.get_ref(),
                known.join(", ")
            ),
        ))
    }

    fn part(
        &self,
        field: &str,
        role: &Spanned<String>,
        count: Option<&Spanned<Count>>,
        roles: &BTreeMap<String, Holders>,
    ) -> Checked<Part> {
        self.known_role(role, &format!("{field}.role"), roles)?;
        let holders = match roles.get(role.get_ref()) {
            Some(Holders::People(p)) => p.len(),
            _ => usize::MAX,
        };
        let need = match count.map(Spanned::get_ref) {
            None | Some(Count::Any) => Need::One,
            Some(Count::All) => Need::All,
            Some(Count::Number(n)) => {
                let span = count.map_or(role.span(), Spanned::span);
                let at = format!("{field}.count");
                if *n < 1 || *n > i64::from(MAX_COUNT) {
                    return Err(self.err(
                        span,
                        at,
                        format!("{n} is not a count: write 1 to {MAX_COUNT}, \"any\" or \"all\""),
                    ));
                }
                let n = *n as u32;
                if n as usize > holders {
                    return Err(self.err(span, at, format!("the step needs {n} of {}, which has {holders} holder(s): it could never be met", role.get_ref())));
                }
                if n == 1 {
                    Need::One
                } else {
                    Need::Count(n)
                }
            }
        };
        Ok(Part {
            role: role.get_ref().clone(),
            need,
        })
    }

    /// `"90m"`, `"4h"` or `"2d"`: one number and one unit, at most 30 days.
    fn duration(&self, text: &Spanned<String>, field: &str) -> Checked<u32> {
        let t = text.get_ref().trim();
        let bad = || {
            self.err(text.span(), field, format!("{t:?} is not a response time: write minutes, hours or days as \"90m\", \"4h\" or \"2d\" (at most 30 days)"))
        };
        let (digits, unit) = t.split_at(t.len().saturating_sub(1));
        let n: u32 = digits.parse().map_err(|_| bad())?;
        let minutes = match unit {
            "m" => n,
            "h" => n.checked_mul(60).ok_or_else(bad)?,
            "d" => n.checked_mul(24 * 60).ok_or_else(bad)?,
            _ => return Err(bad()),
        };
        if minutes == 0 || minutes > 30 * 24 * 60 {
            return Err(bad());
        }
        Ok(minutes)
    }

    fn fallback(
        &self,
        field: &str,
        raw: &Spanned<RawFallback>,
        roles: &BTreeMap<String, Holders>,
    ) -> Checked<Fallback> {
        let f = raw.get_ref();
        let reason = f.reason.get_ref().trim();
        if reason.is_empty() || reason.len() > 300 {
            return Err(self.err(
                f.reason.span(),
                format!("{field}.reason"),
                "the reason is what the console shows beside the request: 1 to 300 characters",
            ));
        }
        Ok(Fallback {
            reason: reason.to_owned(),
            chain: self.chain(field, raw.span(), &f.step, roles)?,
        })
    }
}

/// One `@`, something before it, a dot after it, no spaces or controls,
/// at most 320 bytes: exactly the shape the host's enrollment accepts
/// (`countersign_host::admin::plausible_email`), so a typo is caught at
/// load and no email the host enrolls is refused here.
fn plausible_email(text: &str) -> bool {
    let parts: Vec<&str> = text.split('@').collect();
    parts.len() == 2
        && !parts[0].is_empty()
        && parts[1].contains('.')
        && text.len() <= 320
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}
