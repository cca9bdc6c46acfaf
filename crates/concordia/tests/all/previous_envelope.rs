//! The envelope reader as it was before messages were read in place
//! (`Message::from_value` and `Offer::parse` at the commit before), kept
//! word for word as the oracle the new reader is compared with.

#![allow(clippy::all)]

use concordia::approval_receipt::datetime;
use concordia::message::{Body, EnvelopeError, Message, MessageType, Party, Timing};
use concordia::offer::{Bundle, Condition, Offer, OfferError, OfferKind, TermValue, Terms};
use serde_json::{Map, Value};

fn invalid(member: &str, why: &str) -> EnvelopeError {
    EnvelopeError::Invalid {
        member: member.to_owned(),
        why: why.to_owned(),
    }
}

fn req_str<'a>(obj: &'a Map<String, Value>, name: &'static str) -> Result<&'a str, EnvelopeError> {
    match obj.get(name) {
        None => Err(EnvelopeError::Missing(name)),
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(Value::String(_)) => Err(invalid(name, "is empty")),
        Some(_) => Err(invalid(name, "is not a string")),
    }
}

fn opt_str(obj: &Map<String, Value>, name: &str) -> Result<Option<String>, EnvelopeError> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(name, "is not a string")),
    }
}

fn opt_obj(
    obj: &Map<String, Value>,
    name: &str,
) -> Result<Option<Map<String, Value>>, EnvelopeError> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m.clone())),
        Some(_) => Err(invalid(&format!("body/{name}"), "is not an object")),
    }
}

fn party(value: &Value, member: &str) -> Result<Party, EnvelopeError> {
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(member, "is not an object"))?;
    let agent_id = match obj.get("agent_id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => {
            return Err(invalid(
                &format!("{member}/agent_id"),
                "is missing or not a non-empty string",
            ))
        }
    };
    let principal_id = match obj.get("principal_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(invalid(
                &format!("{member}/principal_id"),
                "is not a string or null",
            ))
        }
    };
    Ok(Party {
        agent_id,
        principal_id,
    })
}

fn is_semver(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn timing(body: &Map<String, Value>) -> Result<Timing, EnvelopeError> {
    let mut t = Timing::default();
    let Some(value) = body.get("timing") else {
        return Ok(t);
    };
    let obj = value
        .as_object()
        .ok_or_else(|| invalid("body/timing", "is not an object"))?;
    for (name, slot) in [
        ("session_ttl", &mut t.session_ttl),
        ("offer_ttl", &mut t.offer_ttl),
        ("max_rounds", &mut t.max_rounds),
    ] {
        match obj.get(name) {
            None => {}
            Some(v) => {
                *slot = v.as_u64().ok_or_else(|| {
                    invalid(
                        &format!("body/timing/{name}"),
                        "is not a non-negative integer",
                    )
                })?
            }
        }
    }
    Ok(t)
}

fn body(kind: MessageType, body: &Map<String, Value>) -> Result<Body, EnvelopeError> {
    Ok(match kind {
        MessageType::Open => Body::Open {
            terms: opt_obj(body, "terms")?.ok_or(EnvelopeError::Missing("body/terms"))?,
            timing: timing(body)?,
        },
        MessageType::AcceptSession => Body::AcceptSession,
        MessageType::DeclineSession => Body::DeclineSession {
            reason: opt_str(body, "reason")?,
        },
        MessageType::Offer => Body::Offer(offer(body)?),
        MessageType::Counter => Body::Counter(offer(body)?),
        MessageType::Accept => Body::Accept {
            offer_id: opt_str(body, "offer_id")?,
            accepted_terms: opt_obj(body, "accepted_terms")?,
        },
        MessageType::Reject => Body::Reject {
            reason: opt_str(body, "reason")?,
        },
        MessageType::Inquire => Body::Inquire {
            term_ids: match body.get("term_ids") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| invalid("body/term_ids", "holds a non-string"))
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(invalid("body/term_ids", "is not an array")),
            },
        },
        MessageType::Constrain => Body::Constrain {
            constraints: opt_obj(body, "constraints")?.unwrap_or_default(),
        },
        MessageType::Signal => Body::Signal {
            signal: body.clone(),
        },
        MessageType::Withdraw => Body::Withdraw {
            reason: opt_str(body, "reason")?,
            reactivatable: match body.get("reactivatable") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(invalid("body/reactivatable", "is not a boolean")),
            },
        },
        MessageType::ProposeMediator => Body::ProposeMediator {
            mediator_id: opt_str(body, "mediator_id")?,
        },
        MessageType::Resolve => Body::Resolve {
            terms: opt_obj(body, "terms")?.unwrap_or_default(),
            mechanism: opt_str(body, "mechanism")?,
        },
        MessageType::Commit => Body::Commit,
    })
}

/// `Message::from_value` as it was.
pub fn from_value(value: &Value) -> Result<Message, EnvelopeError> {
    let obj = value.as_object().ok_or(EnvelopeError::NotObject)?;
    let concordia = req_str(obj, "concordia")?;
    if !is_semver(concordia) {
        return Err(invalid("concordia", "is not a semver version (like 0.1.0)"));
    }
    let type_name = req_str(obj, "type")?;
    let kind = MessageType::parse(type_name)
        .ok_or_else(|| EnvelopeError::UnknownType(type_name.to_owned()))?;
    let id = req_str(obj, "id")?.to_owned();
    let session_id = req_str(obj, "session_id")?.to_owned();
    let timestamp = datetime::parse(req_str(obj, "timestamp")?)
        .map_err(|e| invalid("timestamp", &e.to_string()))?;
    let from = party(
        obj.get("from").ok_or(EnvelopeError::Missing("from"))?,
        "from",
    )?;
    let to = match obj.get("to") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, p)| party(p, &format!("to/{i}")))
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err(invalid("to", "is not an array")),
    };
    let prev_hash = req_str(obj, "prev_hash")?.to_owned();
    let body_obj = match obj.get("body") {
        Some(Value::Object(m)) => m,
        Some(_) => return Err(invalid("body", "is not an object")),
        None => return Err(EnvelopeError::Missing("body")),
    };
    let body = body(kind, body_obj)?;
    let ttl = match obj.get("ttl") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| invalid("ttl", "is not a non-negative integer"))?,
        ),
    };
    Ok(Message {
        concordia: concordia.to_owned(),
        kind,
        id,
        session_id,
        timestamp,
        from,
        to,
        prev_hash,
        body,
        in_reply_to: opt_str(obj, "in_reply_to")?,
        thread: opt_str(obj, "thread")?,
        ttl,
        reasoning: opt_str(obj, "reasoning")?,
        signature: req_str(obj, "signature")?.to_owned(),
    })
}

fn offer_invalid(member: impl Into<String>, why: &str) -> OfferError {
    OfferError::Invalid {
        member: member.into(),
        why: why.to_owned(),
    }
}

fn parse_terms(value: Option<&Value>, member: &str) -> Result<Terms, OfferError> {
    match value {
        None | Some(Value::Null) => Ok(Terms::new()),
        Some(Value::Object(m)) => Ok(m
            .iter()
            .map(|(k, v)| (k.clone(), TermValue::parse(v)))
            .collect()),
        Some(_) => Err(offer_invalid(member, "is not an object")),
    }
}

fn offer(body: &Map<String, Value>) -> Result<Offer, OfferError> {
    let offer_id = match body.get("offer_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(offer_invalid("/offer_id", "is not a string")),
    };
    let valid_until = match body.get("valid_until") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(offer_invalid("/valid_until", "is not a string")),
    };
    let complete = match body.get("complete") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(offer_invalid("/complete", "is not a boolean")),
    };
    let kind = if let Some(bundles) = body.get("bundles") {
        let items = bundles
            .as_array()
            .ok_or_else(|| offer_invalid("/bundles", "is not an array"))?;
        let bundles = items
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let obj = b
                    .as_object()
                    .ok_or_else(|| offer_invalid(format!("/bundles/{i}"), "is not an object"))?;
                Ok(Bundle {
                    bundle_id: obj
                        .get("bundle_id")
                        .and_then(Value::as_str)
                        .ok_or_else(|| {
                            offer_invalid(
                                format!("/bundles/{i}/bundle_id"),
                                "is missing or not a string",
                            )
                        })?
                        .to_owned(),
                    label: obj.get("label").and_then(Value::as_str).map(str::to_owned),
                    terms: parse_terms(obj.get("terms"), &format!("/bundles/{i}/terms"))?,
                })
            })
            .collect::<Result<_, OfferError>>()?;
        OfferKind::Bundle {
            bundles,
            select: body
                .get("select")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    } else if let Some(conditions) = body.get("conditions") {
        let items = conditions
            .as_array()
            .ok_or_else(|| offer_invalid("/conditions", "is not an array"))?;
        let conditions = items
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let when = c
                    .get("if")
                    .and_then(Value::as_object)
                    .ok_or_else(|| {
                        offer_invalid(format!("/conditions/{i}/if"), "is missing or not an object")
                    })?
                    .clone();
                let then = parse_terms(c.get("then"), &format!("/conditions/{i}/then"))?;
                Ok(Condition { when, then })
            })
            .collect::<Result<_, OfferError>>()?;
        OfferKind::Conditional { conditions }
    } else if body.contains_key("terms") {
        let terms = parse_terms(body.get("terms"), "/terms")?;
        match body.get("open_terms") {
            Some(Value::Array(items)) => OfferKind::Partial {
                terms,
                open_terms: items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| offer_invalid("/open_terms", "holds a non-string"))
                    })
                    .collect::<Result<_, _>>()?,
            },
            Some(_) => return Err(offer_invalid("/open_terms", "is not an array")),
            None if complete == Some(false) => OfferKind::Partial {
                terms,
                open_terms: Vec::new(),
            },
            None => OfferKind::Basic { terms },
        }
    } else {
        return Err(OfferError::Empty);
    };
    Ok(Offer {
        offer_id,
        kind,
        valid_until,
        complete,
    })
}
