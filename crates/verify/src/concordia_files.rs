//! Concordia artifacts: transcripts (links, signatures, and the §5 state
//! machine), ApprovalReceipts, attestations and mandates.
//!
//! Attestations and mandates are judged by the conformance profiles
//! themselves (`attestation-v1` + `attestation-countersign-v1`, `mandate-v1`
//! / `delegation-chain-v1`, and `message-chain-v1` when the transcript comes
//! along): one implementation of each check.

use serde_json::Value;

use concordia::approval_receipt::{datetime, keys, receipt};
use concordia::document::{
    verify_document_bytes, verify_document_parts, DocumentError, DocumentParts, VerifyOptions,
};
use concordia::Head;

use crate::report::{Finding, Outcome};
use crate::{Options, TopLevel};

/// Verifies `{"messages": [...], "keys": {party: key}}` from its bytes
/// ([`concordia::document`]: messages read in place, every core): links,
/// signatures, and without a pin the §5 state machine over the whole
/// transcript; and the ApprovalReceipts it carries in `receipts`, if any,
/// each against the message it approves. `top` is the top level of `bytes`
/// and `parts` the document read from them, when the caller has read them
/// (they are then not read again).
pub fn transcript(
    file: &str,
    bytes: &[u8],
    top: Option<&TopLevel<'_>>,
    parts: Option<&DocumentParts<'_>>,
    options: &Options,
) -> Outcome {
    let kind = "Concordia transcript";
    let verify = VerifyOptions {
        pin: options.pin.clone(),
        threads: None,
    };
    let parsed;
    let top = match top {
        Some(top) => Some(top),
        None => {
            parsed = TopLevel::parse(bytes).ok();
            parsed.as_ref()
        }
    };
    let verdict = match parts {
        Some(parts) => verify_document_parts(bytes, parts, &verify),
        None => verify_document_bytes(bytes, &verify),
    };
    let verdict = match verdict {
        Ok(v) => v,
        Err(DocumentError::Truncated { messages, pinned }) => {
            return Outcome::judged(
                file,
                kind,
                format!("{messages} messages"),
                vec![Finding {
                    at: String::new(),
                    check: "pin".into(),
                    detail: format!("the transcript holds {messages} messages, fewer than the {pinned} pinned: history was truncated"),
                }],
            )
        }
        Err(e) => return Outcome::unreadable(file, e.to_string()),
    };
    let report = &verdict.report;
    let mut failures: Vec<Finding> = report
        .failures
        .iter()
        .map(|f| Finding {
            at: format!(
                "message {}{}",
                f.index,
                f.message_id
                    .as_ref()
                    .map(|i| format!(" ({i})"))
                    .unwrap_or_default()
            ),
            check: f.check.name().into(),
            detail: f.detail.clone(),
        })
        .collect();
    // The §5 state machine, over the whole transcript, when every envelope reads.
    let state = match &verdict.replay {
        Some(Ok(session)) => format!(", state {}", session.state().as_str()),
        Some(Err(e)) => {
            failures.push(Finding {
                at: format!("message {} ({})", e.index, e.id),
                check: "transition".into(),
                detail: e.rule.to_string(),
            });
            String::new()
        }
        None => String::new(),
    };
    let receipts = match top.map_or(Err(None), |top| carried_receipts(top, options)) {
        Ok((count, found)) => {
            failures.extend(found);
            format!(", {count} receipts checked")
        }
        Err(None) => String::new(),
        Err(Some(e)) => return Outcome::unreadable(file, e),
    };
    Outcome::judged(
        file,
        kind,
        format!(
            "{} messages checked, head {}:{}{state}{receipts}",
            report.checked, report.head.count, report.head.hash
        ),
        failures,
    )
}

/// The ApprovalReceipts a transcript document carries beside its messages
/// (`receipts`, as the Countersign console's session export writes them):
/// each verified check by check against the message its `scope.offer_hash`
/// names. A receipt is judged at the moment it was acted on, the timestamp
/// of the first later message from another party than the approved
/// message's author (an audit months later asks whether the agent acted in
/// time, not whether the approval is still open); one not acted on yet is
/// judged at `options.now`. `Err(None)` when there are none to check.
fn carried_receipts(
    top: &TopLevel<'_>,
    options: &Options,
) -> Result<(usize, Vec<Finding>), Option<String>> {
    let Some(raw) = top.get("receipts") else {
        return Err(None);
    };
    let receipts: Vec<Value> = serde_json::from_str(raw.get())
        .map_err(|e| Some(format!("receipts: not an array of receipts: {e}")))?;
    let messages: Vec<Value> = top
        .get("messages")
        .and_then(|m| serde_json::from_str(m.get()).ok())
        .unwrap_or_default();
    let mut failures = Vec::new();
    for (i, r) in receipts.iter().enumerate() {
        let at = format!(
            "receipt {i}{}",
            r.get("id")
                .and_then(Value::as_str)
                .map(|id| format!(" ({id})"))
                .unwrap_or_default()
        );
        let wanted = r.pointer("/scope/offer_hash").and_then(Value::as_str);
        let offer = messages
            .iter()
            .position(|m| wanted.is_some() && concordia::message_hash(m).ok().as_deref() == wanted);
        let Some(offer) = offer else {
            failures.push(Finding {
                at,
                check: "offer_hash".into(),
                detail: format!(
                    "no message of the transcript has the hash it approves ({})",
                    wanted.unwrap_or("none given")
                ),
            });
            continue;
        };
        let at_time = acted_on(&messages, offer).unwrap_or(options.now);
        let report = receipt::verify_receipt(r, &messages[offer], None, at_time, &[]);
        failures.extend(report.failures().map(|f| Finding {
            at: at.clone(),
            check: f.check.name().into(),
            detail: f.detail.clone(),
        }));
    }
    Ok((receipts.len(), failures))
}

/// When the message at `offer` was answered: the timestamp of the first
/// later message whose author is not the offer's (the transcript's
/// signatures, checked before, vouch for it). `None` when nobody answered
/// yet, or a timestamp does not read.
fn acted_on(messages: &[Value], offer: usize) -> Option<time::OffsetDateTime> {
    let author = |m: &Value| {
        m.pointer("/from/agent_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let offered_by = author(&messages[offer])?;
    let answer = messages[offer + 1..]
        .iter()
        .find(|m| author(m).is_some_and(|a| a != offered_by))?;
    datetime::parse(answer.get("timestamp")?.as_str()?).ok()
}

/// Verifies a receipt, bare or `{"receipt", "offer", "issuer_public_key"?, "revocations"?}`.
pub fn receipt(file: &str, value: &Value, options: &Options) -> Outcome {
    let kind = "Concordia ApprovalReceipt";
    let (r, offer) = if value.get("receipt").is_some() {
        (
            &value["receipt"],
            value.get("offer").or(options.offer.as_ref()),
        )
    } else {
        (value, options.offer.as_ref())
    };
    let issuer = match value
        .get("issuer_public_key")
        .and_then(Value::as_str)
        .map(keys::parse_public_key)
    {
        Some(Ok(k)) => Some(k),
        Some(Err(e)) => return Outcome::unreadable(file, format!("issuer_public_key: {e}")),
        None => None,
    };
    let revocations = value
        .get("revocations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(offer) = offer else {
        return Outcome::judged(
            file,
            kind,
            "no offer presented".into(),
            vec![Finding {
                at: String::new(),
                check: "offer_hash".into(),
                detail: "a receipt is verified against the offer it approves: give it with --offer FILE or as {\"receipt\", \"offer\"}".into(),
            }],
        );
    };
    let report = receipt::verify_receipt(r, offer, issuer.as_ref(), options.now, &revocations);
    let failures = report
        .failures()
        .map(|f| Finding {
            at: String::new(),
            check: f.check.name().into(),
            detail: f.detail.clone(),
        })
        .collect();
    Outcome::judged(
        file,
        kind,
        format!(
            "{} {} at {}",
            report.receipt_id.as_deref().unwrap_or("(no id)"),
            report.decision.map_or("(no decision)", |d| d.as_str()),
            datetime::format_utc(options.now)
        ),
        failures,
    )
}

fn findings(failures: Vec<String>) -> Vec<Finding> {
    failures
        .into_iter()
        .map(|f| {
            let (check, detail) = f.split_once(": ").unwrap_or(("check", f.as_str()));
            Finding {
                at: String::new(),
                check: check.to_owned(),
                detail: detail.to_owned(),
            }
        })
        .collect()
}

/// Verifies `{"attestation", "keys", "messages"?}`: schema, every party's
/// signature, every party's countersignature, and, with the transcript,
/// the receipt set-binding (message count and chain head).
/// Verifies `{"attestation", "keys", "messages"?}` (see
/// [`concordia::artifacts::verify_attestation`]).
pub fn attestation(file: &str, value: &Value) -> Outcome {
    let att = &value["attestation"];
    let failures =
        concordia::artifacts::verify_attestation(att, &value["keys"], value.get("messages"));
    let summary = format!(
        "{} ({} parties{})",
        att.get("attestation_id")
            .and_then(Value::as_str)
            .unwrap_or("(no attestation_id)"),
        att.get("parties")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
        if value.get("messages").is_some() {
            ", bound to the transcript given"
        } else {
            ""
        }
    );
    Outcome::judged(file, "Concordia attestation", summary, findings(failures))
}

/// Verifies `{"mandate", "issuer_public_key", "action"?, "delegation_public_keys"?}` at now.
pub fn mandate(file: &str, value: &Value, options: &Options) -> Outcome {
    let m = &value["mandate"];
    let failures = concordia::artifacts::verify_mandate(
        m,
        &value["issuer_public_key"],
        options.now,
        value.get("action"),
        value.get("delegation_public_keys"),
    );
    let summary = format!(
        "{} from {} to {}",
        m.get("mandate_id")
            .and_then(Value::as_str)
            .unwrap_or("(no mandate_id)"),
        m.get("issuer").and_then(Value::as_str).unwrap_or("?"),
        m.get("subject").and_then(Value::as_str).unwrap_or("?")
    );
    Outcome::judged(file, "Concordia mandate", summary, findings(failures))
}
/// Reads `COUNT:HASH` (`12:sha256:ab…`).
pub fn parse_pin(text: &str) -> Result<Head, String> {
    let (count, hash) = text
        .split_once(':')
        .ok_or("a pin is COUNT:HASH, like 12:sha256:…")?;
    let count: u64 = count
        .parse()
        .map_err(|_| format!("{count:?} is not a message count"))?;
    let hex = hash
        .strip_prefix("sha256:")
        .ok_or("the pinned hash must be sha256:<64 hex>")?;
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("the pinned hash must be sha256:<64 hex>".into());
    }
    Ok(Head {
        count,
        hash: hash.to_owned(),
    })
}
