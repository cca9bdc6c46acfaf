//! A2A's JSON in its two dialects (docs/anex-binding.md, "ANEX over A2A"):
//! v1.0 (camelCase, `ROLE_USER`, `TASK_STATE_…`, a part's content by its
//! member) and v0.3 (`kind` discriminators, `user`, `input-required`).
//! Reading a counterparty's message, writing ours, writing a task.

use anex::A2A_EXTENSION_URI;
use serde_json::{json, Map, Value};

use crate::domain::anex::{phase_name, replay, Awaiting, Doc, Task};

/// Which A2A version a method name speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `SendMessage`, `GetTask`, `CancelTask`.
    V1,
    /// `message/send`, `tasks/get`, `tasks/cancel`.
    V03,
}

impl Dialect {
    /// The `A2A-Version` this dialect goes with.
    pub fn version(self) -> &'static str {
        match self {
            Dialect::V1 => "1.0",
            Dialect::V03 => "0.3",
        }
    }
}

/// A counterparty's A2A message, read: its ids and its one data part.
pub struct Incoming {
    /// `messageId`.
    pub message_id: String,
    /// `contextId`, if sent.
    pub context_id: Option<String>,
    /// `taskId`, if sent.
    pub task_id: Option<String>,
    /// The data part's `data`: one ANEX message, to be read by `anex`.
    pub data: Value,
}

fn id_member(message: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match message.get(name) {
        None => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 256 => Ok(Some(s.clone())),
        Some(_) => Err(format!(
            "message.{name} must be a non-empty string of at most 256 bytes"
        )),
    }
}

/// Reads `params.message` of a send, refusing (as invalid params, naming
/// the problem) anything but one data part from the user role.
pub fn read_message(dialect: Dialect, params: &Value) -> Result<Incoming, String> {
    let Some(message) = params.get("message").and_then(Value::as_object) else {
        return Err("params.message is required and must be an object".into());
    };
    if dialect == Dialect::V03 && message.get("kind").and_then(Value::as_str) != Some("message") {
        return Err("params.message.kind must be \"message\"".into());
    }
    let role = message.get("role").and_then(Value::as_str);
    let user = match dialect {
        Dialect::V1 => "ROLE_USER",
        Dialect::V03 => "user",
    };
    if role != Some(user) {
        return Err(format!("params.message.role must be {user:?}"));
    }
    let message_id = id_member(message, "messageId")?
        .ok_or_else(|| "params.message.messageId is required".to_owned())?;
    let context_id = id_member(message, "contextId")?;
    let task_id = id_member(message, "taskId")?;
    let parts = message
        .get("parts")
        .and_then(Value::as_array)
        .ok_or_else(|| "params.message.parts must be an array".to_owned())?;
    let [part] = parts.as_slice() else {
        return Err(format!(
            "params.message.parts holds {} parts: an ANEX message rides in exactly one data part",
            parts.len()
        ));
    };
    let part = part
        .as_object()
        .ok_or_else(|| "params.message.parts[0] must be an object".to_owned())?;
    if dialect == Dialect::V03 && part.get("kind").and_then(Value::as_str) != Some("data") {
        return Err("params.message.parts[0] is not a data part (kind must be \"data\")".into());
    }
    for other in ["text", "raw", "url", "file"] {
        if part.contains_key(other) {
            return Err(format!(
                "params.message.parts[0] is a {other} part: an ANEX message rides in a data part"
            ));
        }
    }
    if let Some(media) = part.get("mediaType") {
        if media.as_str() != Some("application/json") {
            return Err("params.message.parts[0].mediaType must be application/json".into());
        }
    }
    let data = part
        .get("data")
        .cloned()
        .ok_or_else(|| "params.message.parts[0] has no data".to_owned())?;
    Ok(Incoming {
        message_id,
        context_id,
        task_id,
        data,
    })
}

fn data_part(dialect: Dialect, data: Value) -> Value {
    match dialect {
        Dialect::V1 => json!({"data": data, "mediaType": "application/json"}),
        Dialect::V03 => json!({"kind": "data", "data": data}),
    }
}

/// One A2A message carrying one ANEX message.
pub fn message(
    dialect: Dialect,
    anex_message: &Value,
    message_id: &str,
    from_host: bool,
    context_id: Option<&str>,
    task_id: Option<&str>,
) -> Value {
    let role = match (dialect, from_host) {
        (Dialect::V1, true) => "ROLE_AGENT",
        (Dialect::V1, false) => "ROLE_USER",
        (Dialect::V03, true) => "agent",
        (Dialect::V03, false) => "user",
    };
    let mut m = json!({
        "messageId": message_id,
        "role": role,
        "parts": [data_part(dialect, anex_message.clone())],
        "extensions": [A2A_EXTENSION_URI],
    });
    if dialect == Dialect::V03 {
        m["kind"] = json!("message");
    }
    if let Some(c) = context_id {
        m["contextId"] = json!(c);
    }
    if let Some(t) = task_id {
        m["taskId"] = json!(t);
    }
    m
}

fn awaiting_name(a: Awaiting) -> &'static str {
    match a {
        Awaiting::Owner => "owner",
        Awaiting::Counterparty => "counterparty",
        Awaiting::None => "none",
    }
}

/// Whether message `i` of the document is the host's (sent by `me`).
fn from_host(doc: &Doc, i: usize, me: &str) -> bool {
    doc.messages[i].get("sender").and_then(Value::as_str) == Some(me)
}

/// One task of a conversation, with at most `history_length` messages of
/// history (the newest; `None`: all).
pub fn task(
    dialect: Dialect,
    context_id: &str,
    doc: &Doc,
    task: &Task,
    me: &str,
    history_length: Option<usize>,
) -> Value {
    let msg = |i: usize| {
        message(
            dialect,
            &doc.messages[i],
            &doc.a2a_ids[i],
            from_host(doc, i, me),
            Some(context_id),
            Some(&task.id),
        )
    };
    let state = match dialect {
        Dialect::V1 => task.state.v1(),
        Dialect::V03 => task.state.v03(),
    };
    let mut status = json!({"state": state, "timestamp": task.updated_at});
    if let Some(i) = task.status_message.filter(|i| *i < doc.messages.len()) {
        status["message"] = msg(i);
    }
    let skip = history_length.map_or(0, |n| task.history.len().saturating_sub(n));
    let history: Vec<Value> = task
        .history
        .iter()
        .skip(skip)
        .filter(|i| **i < doc.messages.len())
        .map(|i| msg(*i))
        .collect();
    let phase = replay(doc)
        .map(|c| phase_name(c.phase()))
        .unwrap_or("unknown");
    let conversation_id = doc
        .messages
        .first()
        .and_then(|m| m.get("conversation_id"))
        .cloned()
        .unwrap_or(Value::Null);
    let mut t = json!({
        "id": task.id,
        "contextId": context_id,
        "status": status,
        "history": history,
        "metadata": {A2A_EXTENSION_URI: {
            "conversation_id": conversation_id,
            "phase": phase,
            "awaiting": awaiting_name(task.awaiting),
        }},
    });
    if let Some(record) = &task.artifact {
        let hash = anex::TermsRecord::from_json(record)
            .map(|r| r.hash())
            .unwrap_or_default();
        t["artifacts"] = json!([{
            "artifactId": "anex-terms",
            "name": "accepted terms",
            "parts": [data_part(dialect, record.clone())],
            "metadata": {A2A_EXTENSION_URI: {"hash": hash}},
        }]);
    }
    if dialect == Dialect::V03 {
        t["kind"] = json!("task");
    }
    t
}
