//! Data exchange under accepted terms (§4.5, §5.1: "share only the agreed
//! access fields"), enforced here in code rather than left to an agent's
//! judgement (§6.1).
//!
//! [`DataSet`] is what an organization may share (the file the admin
//! loads); [`answer_data_request`] answers a data `REQUEST` with an
//! `INFORM` carrying exactly the asked items when the terms in force
//! accept every one of them, and a `REFUSE` (or `FAILURE`) otherwise:
//! never a partial answer, never an item the terms do not name.

use std::collections::BTreeMap;

use serde_json::Value;
use time::OffsetDateTime;

use crate::json::read_strict;
use crate::limits::{MAX_ACCESS_ITEMS, MAX_DATA_SET_BYTES, MAX_MESSAGE_BYTES};
use crate::message::{check_data_value, BuildError, Content, DataItems, Message, MAX_VALUE_DEPTH};
use crate::record::TermsRecord;
use crate::text::{join_names, quote, Id, ItemName, Text};

/// Why a data set was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the data set {0}")]
pub struct DataSetError(pub String);

/// The values an organization may share, by item name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataSet {
    items: BTreeMap<ItemName, Value>,
}

impl DataSet {
    /// Reads a data set: a JSON object from item names to values (see
    /// [`check_data_value`]), at most [`MAX_DATA_SET_BYTES`].
    pub fn parse(text: &str) -> Result<Self, DataSetError> {
        let value = read_strict(text.as_bytes(), MAX_DATA_SET_BYTES, MAX_VALUE_DEPTH + 1)
            .map_err(|e| DataSetError(e.to_string()))?;
        let Value::Object(map) = value else {
            return Err(DataSetError(
                "is not a JSON object of item names to values".into(),
            ));
        };
        let mut items = BTreeMap::new();
        for (key, value) in map {
            let name = ItemName::parse(&key)
                .map_err(|why| DataSetError(format!("names {}, which {why}", quote(&key))))?;
            check_data_value(&value).map_err(|why| DataSetError(format!("{name}: {why}")))?;
            items.insert(name, value);
        }
        Ok(Self { items })
    }

    /// The value of `name`, if the set holds one.
    pub fn get(&self, name: &ItemName) -> Option<&Value> {
        self.items.get(name)
    }

    /// The item names the set holds.
    pub fn names(&self) -> impl Iterator<Item = &ItemName> {
        self.items.keys()
    }
}

/// Why a data request could not be answered at all (a caller's mistake,
/// not the counterparty's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExchangeError {
    /// The message is not a data `REQUEST`.
    #[error("message {0} is not a data REQUEST")]
    NotADataRequest(String),
    /// The record belongs to another conversation.
    #[error("the terms record is for conversation {record}, the request for {request}")]
    OtherConversation {
        /// The record's conversation.
        record: String,
        /// The request's.
        request: String,
    },
    /// The answer could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// The answer to the data `REQUEST` `request` (with id `message_id`),
/// given the terms in force (`None` when none were accepted or they ended)
/// and the organization's data:
/// - `REFUSE` naming every asked item when no terms are in force, or they
///   expired before `now`;
/// - `REFUSE` naming the asked items the terms do not accept (nothing else
///   is sent);
/// - `FAILURE` when an accepted item has no value in `data`;
/// - otherwise `INFORM` with exactly the asked items.
pub fn answer_data_request(
    terms: Option<&TermsRecord>,
    request: &Message,
    data: &DataSet,
    now: OffsetDateTime,
    message_id: Id,
) -> Result<Message, ExchangeError> {
    let Content::DataRequest { access } = request.content() else {
        return Err(ExchangeError::NotADataRequest(
            request.message_id().to_string(),
        ));
    };
    let refuse = |why: String, items: Vec<ItemName>| {
        request.reply(
            message_id.clone(),
            Content::Refuse {
                response: Some(Text::lossy(&why)),
                items,
            },
        )
    };
    let Some(record) = terms else {
        return Ok(refuse(
            "no terms are accepted in this conversation, so no data is shared (negotiate them first with a CFP)".into(),
            access.clone(),
        )?);
    };
    if &record.conversation_id != request.conversation_id() {
        return Err(ExchangeError::OtherConversation {
            record: record.conversation_id.to_string(),
            request: request.conversation_id().to_string(),
        });
    }
    if !record.in_force(now) {
        return Ok(refuse(
            format!(
                "the accepted terms ended at {}, so no data is shared",
                record.valid_until_text()
            ),
            access.clone(),
        )?);
    }
    let not_accepted: Vec<ItemName> = access
        .iter()
        .filter(|n| !record.access.contains(n))
        .cloned()
        .collect();
    if !not_accepted.is_empty() {
        return Ok(refuse(
            format!(
                "the accepted terms do not include {}; nothing was sent",
                join_names(&not_accepted)
            ),
            not_accepted,
        )?);
    }
    let missing: Vec<&str> = access
        .iter()
        .filter(|n| data.get(n).is_none())
        .map(ItemName::as_str)
        .collect();
    if !missing.is_empty() {
        return Ok(request.reply(
            message_id,
            Content::Failure {
                error: Text::lossy(&format!(
                    "the owner holds no value for {}; nothing was sent",
                    missing.join(", ")
                )),
            },
        )?);
    }
    let items: DataItems = access
        .iter()
        .filter_map(|n| data.get(n).map(|v| (n.clone(), v.clone())))
        .collect();
    let answer = request.reply(message_id.clone(), Content::Data(items))?;
    let size = serde_json::to_string(&answer.to_json())
        .map(|s| s.len())
        .unwrap_or(usize::MAX);
    if size > MAX_MESSAGE_BYTES || access.len() > MAX_ACCESS_ITEMS {
        return Ok(request.reply(
            message_id,
            Content::Failure {
                error: Text::lossy(&format!(
                    "the asked items together are more than one message carries ({MAX_MESSAGE_BYTES} bytes); ask for fewer at a time"
                )),
            },
        )?);
    }
    Ok(answer)
}
