//! One member of a JSON object, read into its type without failing the rest.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// What a member of a receipt holds: a receipt comes from a counterparty, so
/// one malformed member is shown as such (with what it held) instead of
/// making the whole receipt unreadable.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", content = "value", rename_all = "snake_case")]
pub enum Member<T> {
    /// The member is not there.
    Absent,
    /// The member is `null`.
    Null,
    /// The member, read.
    Read(T),
    /// The member is there but is not of its type.
    Unreadable {
        /// What it held, as data (never trusted, never rendered as markup).
        raw: Value,
        /// Why it could not be read, as a sentence.
        reason: String,
    },
}

impl<T> Member<T> {
    /// The value, when read.
    pub fn get(&self) -> Option<&T> {
        match self {
            Member::Read(value) => Some(value),
            _ => None,
        }
    }

    /// Reads `name` of `object` with `read`.
    pub fn read_with(
        object: &Map<String, Value>,
        name: &str,
        read: impl FnOnce(&Value) -> Result<T, String>,
    ) -> Self {
        match object.get(name) {
            None => Member::Absent,
            Some(raw) => Self::of(raw, read),
        }
    }

    /// One JSON value read with `read`: `null` is [`Member::Null`].
    pub fn of(raw: &Value, read: impl FnOnce(&Value) -> Result<T, String>) -> Self {
        match raw {
            Value::Null => Member::Null,
            raw => match read(raw) {
                Ok(value) => Member::Read(value),
                Err(reason) => Member::Unreadable {
                    raw: raw.clone(),
                    reason,
                },
            },
        }
    }
}

impl<T: DeserializeOwned> Member<T> {
    /// Reads `name` of `object` into `T`.
    pub fn read(object: &Map<String, Value>, name: &str) -> Self {
        Self::read_with(object, name, deserialize)
    }
}

/// `raw` as `T`, or why not.
pub(crate) fn deserialize<T: DeserializeOwned>(raw: &Value) -> Result<T, String> {
    T::deserialize(raw).map_err(|e| e.to_string())
}

/// One JSON value read into `T`: `null` is [`Member::Null`].
pub(crate) fn member_of<T: DeserializeOwned>(item: &Value) -> Member<T> {
    Member::of(item, deserialize)
}

/// `raw` as a list, each item read on its own.
pub(crate) fn each<T: DeserializeOwned>(raw: &Value) -> Result<Vec<Member<T>>, String> {
    let items = raw.as_array().ok_or("not a list")?;
    Ok(items.iter().map(member_of).collect())
}

/// `raw` as an object, or why not.
pub(crate) fn object(raw: &Value) -> Result<&Map<String, Value>, String> {
    raw.as_object().ok_or_else(|| "not an object".to_owned())
}

/// The members of `object` not named in `known`: kept, never trusted.
pub(crate) fn rest(
    object: &Map<String, Value>,
    known: &[&str],
) -> std::collections::BTreeMap<String, Value> {
    object
        .iter()
        .filter(|(name, _)| !known.contains(&name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}
