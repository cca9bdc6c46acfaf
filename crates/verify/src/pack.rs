//! `pack DIR`: a Countersign audit pack (`docs/audit-pack.md`), checked
//! offline. Every file the index names against its SHA-256; every
//! session's record by its protocol's own rules; every decision against
//! the record: an ApprovalReceipt's signature, its offer (a message of the
//! record), who signed it, as which role, under which threshold; an ANP/0.1
//! decision by the event the host appended for it in the verified log.
//! A changed byte fails at the record it is in.

use std::path::{Component, Path};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::report::{safe, Finding};
use crate::{verify_input, Input, Options};

/// The format this reads.
pub const FORMAT: &str = "countersign-audit-pack/1";

/// One decision, as the pack proves it.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionOutcome {
    /// The decision's id.
    pub decision_id: String,
    /// The session it was made in.
    pub session_id: String,
    /// `approve`, `decline` or `counter`.
    pub action: String,
    /// When it was made.
    pub at: String,
    /// `proven` or `not proven`.
    pub status: &'static str,
    /// What proves it (or why it is not proven).
    pub proof: String,
    /// Who made it: the signer the proof names (a did:key for a receipt,
    /// the approver's email for an ANP approval).
    pub by: Option<String>,
    /// As which role, as the proof says; for ANP/0.1 the host's record.
    pub role: Option<String>,
    /// Under which rule: the threshold the receipt says it crossed, or the
    /// rule the index names.
    pub rule: Option<String>,
}

/// The whole pack's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct PackReport {
    /// The folder.
    pub dir: String,
    /// `verified` (every file as indexed, every record verified and every
    /// decision proven), `unproven` (nothing fails, but a decision is not
    /// proven: an approval the host counted before an accept carried it),
    /// `failed`, or `unreadable`.
    pub status: &'static str,
    /// Sessions checked.
    pub sessions: usize,
    /// Each decision.
    pub decisions: Vec<DecisionOutcome>,
    /// Every failing check, each naming its file.
    pub failures: Vec<Finding>,
    /// Why the pack could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

impl PackReport {
    fn unreadable(dir: &str, why: impl Into<String>) -> PackReport {
        PackReport {
            dir: dir.to_owned(),
            status: "unreadable",
            sessions: 0,
            decisions: Vec::new(),
            failures: Vec::new(),
            unreadable: Some(why.into()),
        }
    }

    /// 0 verified, 1 failed or a decision not proven, 2 unreadable.
    pub fn exit_code(&self) -> i32 {
        match self.status {
            "verified" => 0,
            "failed" | "unproven" => 1,
            _ => 2,
        }
    }

    /// As people read it.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(why) = &self.unreadable {
            out.push_str(&format!("{}: unreadable: {}\n", safe(&self.dir), safe(why)));
            return out;
        }
        out.push_str(&format!(
            "{}: {} ({} sessions, {} decisions)\n",
            safe(&self.dir),
            self.status,
            self.sessions,
            self.decisions.len()
        ));
        for d in &self.decisions {
            out.push_str(&format!(
                "  {} {} {} at {}: {}{}{}{}\n    {}\n",
                safe(&d.decision_id),
                safe(&d.action),
                safe(&d.session_id),
                safe(&d.at),
                d.status,
                d.by.as_ref()
                    .map(|b| format!(", by {}", safe(b)))
                    .unwrap_or_default(),
                d.role
                    .as_ref()
                    .map(|r| format!(", as {}", safe(r)))
                    .unwrap_or_default(),
                d.rule
                    .as_ref()
                    .map(|r| format!(", under {}", safe(r)))
                    .unwrap_or_default(),
                safe(&d.proof),
            ));
        }
        for f in &self.failures {
            out.push_str(&format!(
                "  FAILED {}: {}: {}\n",
                safe(&f.at),
                safe(&f.check),
                safe(&f.detail)
            ));
        }
        out
    }
}

fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A path the index names, kept inside the pack: relative, no `..`.
fn inside(rel: &str) -> bool {
    let p = Path::new(rel);
    !rel.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

fn text(v: &Value, pointer: &str) -> Option<String> {
    match v.pointer(pointer)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// One session's folder, read and checked.
struct Session<'a> {
    root: &'a Path,
    dir: String,
    failures: Vec<Finding>,
}

impl Session<'_> {
    fn fail(&mut self, file: &str, check: &str, detail: impl Into<String>) {
        self.failures.push(Finding {
            at: format!("{}/{}", self.dir, file),
            check: check.into(),
            detail: detail.into(),
        });
    }

    /// A file of the session, when it is as indexed.
    fn read(&mut self, files: &serde_json::Map<String, Value>, name: &str) -> Option<Vec<u8>> {
        let Some(expected) = files.get(name).and_then(Value::as_str) else {
            self.fail(name, "index", "the index does not name this file");
            return None;
        };
        if !inside(name) {
            self.fail(name, "index", "a path outside the pack");
            return None;
        }
        let bytes = match std::fs::read(self.root.join(&self.dir).join(name)) {
            Ok(b) => b,
            Err(e) => {
                self.fail(name, "missing", format!("cannot read it: {e}"));
                return None;
            }
        };
        let found = sha256(&bytes);
        if found != expected {
            self.fail(
                name,
                "digest",
                format!("changed since the pack was made: the index says {expected}, the file is {found}"),
            );
        }
        Some(bytes)
    }
}

/// Verifies the record in its protocol's own form.
fn record(s: &mut Session<'_>, bytes: &[u8], options: &Options) -> Option<Value> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            s.fail("record.json", "json", format!("not JSON: {e}"));
            return None;
        }
    };
    let protocol = value.get("protocol").and_then(Value::as_str).unwrap_or("");
    // The protocol the record names first: a plain-terms thread and an
    // OANP session are `{messages, …}` documents too, not Concordia
    // transcripts.
    if protocol == plain::PROTOCOL {
        let key = value
            .pointer("/keys/host")
            .and_then(Value::as_str)
            .and_then(|k| concordia::approval_receipt::keys::parse_public_key(k).ok());
        // The console names the session `plain:<thread>`; the entries
        // name their thread.
        let session_id = value
            .get("session_id")
            .and_then(Value::as_str)
            .map(|id| id.strip_prefix("plain:").unwrap_or(id))
            .unwrap_or("");
        let entries = value
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        match key {
            None => s.fail(
                "record.json",
                "keys",
                "the host's key is missing or unreadable",
            ),
            Some(key) => {
                if let Err(e) =
                    plain::entry::verify(&plain::entry::Thread::empty(), session_id, &entries, &key)
                {
                    s.fail(
                        "record.json",
                        e.check,
                        format!("entry {}: {}", e.index + 1, e.detail),
                    );
                }
            }
        }
    } else if protocol == "oanp" {
        let envelopes = value
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        // Each envelope links to the one before it (an OANP session's
        // record carries no signed head until its arbiter's receipt).
        for (index, pair) in envelopes.windows(2).enumerate() {
            let before = oanp::canonical::commit(&pair[0]).ok();
            let linked =
                before.is_some_and(|h| pair[1].get("prev_hash") == Some(&Value::String(h)));
            if !linked {
                s.fail(
                    "record.json",
                    "link",
                    format!("envelope {} does not link to the one before it", index + 2),
                );
                break;
            }
        }
    } else if let Some(input) = Some(Input::new(bytes)).filter(|i| i.kind().is_some()) {
        let outcome = verify_input("record.json", &input, options);
        for f in outcome.failures {
            let at = if f.at.is_empty() {
                String::new()
            } else {
                format!("{}: ", f.at)
            };
            s.fail("record.json", &f.check, format!("{at}{}", f.detail));
        }
        if outcome.status == "unreadable" {
            s.fail("record.json", "record", outcome.summary);
        }
    } else {
        // A record this tool has no rules for (ANEX's A2A messages): its
        // bytes are as indexed, and its decisions' receipts are checked.
    }
    Some(value)
}

/// The messages of a record, whatever its protocol calls them.
fn messages(record: &Value) -> Vec<&Value> {
    for member in ["messages", "events"] {
        if let Some(list) = record.get(member).and_then(Value::as_array) {
            return list.iter().collect();
        }
    }
    if let Some(list) = record.pointer("/log/events").and_then(Value::as_array) {
        return list.iter().collect();
    }
    Vec::new()
}

/// The keys the console signed with, as the index lists them.
struct Console {
    keys: Vec<ed25519_dalek::VerifyingKey>,
    dids: Vec<String>,
}

/// Proves one decision.
fn decision(
    s: &mut Session<'_>,
    listed: &Value,
    file: &Value,
    record: Option<&Value>,
    host_approvals: &Value,
    session_id: &str,
    console: &Console,
) -> DecisionOutcome {
    let (console_dids, console_keys) = (&console.dids, &console.keys);
    let name = listed.get("file").and_then(Value::as_str).unwrap_or("");
    let mut out = DecisionOutcome {
        decision_id: text(listed, "/decision_id").unwrap_or_default(),
        session_id: session_id.to_owned(),
        action: text(listed, "/action").unwrap_or_default(),
        at: text(listed, "/at").unwrap_or_default(),
        status: "not proven",
        proof: String::new(),
        by: None,
        role: None,
        rule: text(listed, "/rule").map(|r| format!("rule {r}")),
    };
    if text(file, "/decision_id").as_deref() != Some(out.decision_id.as_str()) {
        s.fail(
            name,
            "index",
            "the file is of another decision than the index names",
        );
        out.proof = "the file is of another decision".into();
        return out;
    }
    if let Some(receipt) = file.get("receipt").filter(|r| r.is_object()) {
        // Judged when it was made: a receipt's own expiry is no finding
        // about an approval made before it.
        let now = concordia::approval_receipt::datetime::parse(&out.at)
            .unwrap_or_else(|_| time::OffsetDateTime::now_utc());
        let offer = file.get("offer").filter(|o| !o.is_null());
        let report = concordia::approval_receipt::receipt::verify_receipt(
            receipt,
            offer.unwrap_or(&Value::Null),
            None,
            now,
            &[],
        );
        let mut failed: Vec<String> = Vec::new();
        for f in report.failures() {
            if offer.is_none() && f.check.name() == "offer_hash" {
                continue;
            }
            failed.push(format!("{}: {}", f.check.name(), f.detail));
        }
        let in_record = offer.is_some_and(|o| record.is_some_and(|r| messages(r).contains(&o)));
        if offer.is_some() && !in_record {
            failed.push("offer: the message it approves is not in the session's record".into());
        }
        let did = text(receipt, "/approver/identity");
        // The signer, named by the pack's console keys when it is one.
        out.by = match (&did, text(listed, "/by")) {
            (Some(did), Some(email)) if console_dids.contains(did) => {
                Some(format!("{email} ({did})"))
            }
            (Some(did), _) => {
                failed.push(format!(
                    "approver: {did} is none of the console keys the index lists"
                ));
                Some(did.clone())
            }
            (None, _) => None,
        };
        out.role = text(receipt, "/approver/role");
        out.rule = text(receipt, "/scope/threshold_crossed")
            .map(|t| format!("above {t}"))
            .or(out.rule);
        if let (Some(claimed), Some(signed)) = (text(listed, "/role"), out.role.as_ref()) {
            if &claimed != signed {
                failed.push(format!(
                    "role: the index says {claimed:?}, the receipt signs {signed:?}"
                ));
            }
        }
        if failed.is_empty() {
            out.status = "proven";
            out.proof = match offer {
                Some(_) => "ApprovalReceipt signed by its approver, over a message of the record".into(),
                None => "ApprovalReceipt signed by its approver (the terms record it approves is not in the pack)".into(),
            };
        } else {
            for f in &failed {
                s.fail(name, "receipt", f.clone());
            }
            out.proof = failed.join("; ");
        }
        return out;
    }
    // ANP/0.1: the decision is an event of the verified log. An approval
    // is the one its accept carries (the event the host appended for it,
    // or a later accept when other approvals were awaited), signed by one
    // of the console's keys; a decline or a counter is the event the host
    // appended on this console's signed request.
    let claimed = text(listed, "/by");
    let offer = text(listed, "/offer_hash").unwrap_or_default();
    out.by = claimed.clone();
    out.role = host_approvals.as_array().and_then(|list| {
        list.iter()
            .find(|a| {
                text(a, "/event_hash").as_deref() == Some(offer.as_str())
                    && text(a, "/approved_by") == claimed
            })
            .and_then(|a| text(a, "/role"))
    });
    let events = record.map(messages).unwrap_or_default();
    let appended = text(file, "/appended/event_hash");
    if out.action != "approve" {
        match appended.as_ref().and_then(|h| {
            events
                .iter()
                .find(|e| text(e, "/event_hash").as_ref() == Some(h))
        }) {
            Some(event) => {
                out.status = "proven";
                out.proof = format!(
                    "{} event seq {} ({}) of the verified log, appended by the host on this console's signed request",
                    text(event, "/kind").unwrap_or_default(),
                    text(event, "/seq").unwrap_or_default(),
                    appended.unwrap_or_default()
                );
            }
            None => {
                let detail = match appended {
                    Some(h) => format!("the log holds no event {h}"),
                    None => "neither a receipt nor an appended event".into(),
                };
                s.fail(name, "appended", detail.clone());
                out.proof = detail;
            }
        }
        return out;
    }
    let approvals_of = |e: &Value| -> Vec<Value> {
        e.pointer("/payload/approval")
            .into_iter()
            .chain(
                e.pointer("/payload/approvals")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            )
            .cloned()
            .collect()
    };
    let accept = events.iter().find(|e| {
        text(e, "/kind").as_deref() == Some("accept")
            && text(e, "/payload/in_response_to").as_deref() == Some(offer.as_str())
            && approvals_of(e)
                .iter()
                .any(|a| text(a, "/approved_by") == claimed)
    });
    let Some(accept) = accept else {
        if appended.is_some() {
            let detail = format!(
                "no accept of {offer} in the log carries an approval by {}",
                claimed.unwrap_or_default()
            );
            s.fail(name, "approval", detail.clone());
            out.proof = detail;
        } else {
            // Not a fault of the pack: the offer still awaited other
            // approvals when the record was read.
            out.proof = "the host counted it while the offer awaited other approvals; no accept in the record carries it yet".into();
        }
        return out;
    };
    let approval = approvals_of(accept)
        .into_iter()
        .find(|a| text(a, "/approved_by") == claimed)
        .and_then(|a| anp::payload::Approval::parse(&a).ok());
    let signed_by = approval.as_ref().and_then(|a| {
        console_keys
            .iter()
            .find(|k| anp::approval::verify_approval(a, &offer, k).is_ok())
    });
    match signed_by {
        Some(key) => {
            out.status = "proven";
            out.proof = format!(
                "the approval in accept event seq {} of the verified log, signed by {} with the console's key {}{}",
                text(accept, "/seq").unwrap_or_default(),
                claimed.unwrap_or_default(),
                anp::keys::fingerprint(key),
                if out.role.is_some() { "; the role as the host recorded it" } else { "" }
            );
        }
        None => {
            let detail =
                "the approval's signature verifies under none of the console keys the index lists"
                    .to_owned();
            s.fail(name, "approval", detail.clone());
            out.proof = detail;
        }
    }
    out
}

/// Checks the audit pack in `dir`.
pub fn verify(dir: &str, options: &Options) -> PackReport {
    let root = Path::new(dir);
    let index_bytes = match std::fs::read(root.join("index.json")) {
        Ok(b) => b,
        Err(e) => return PackReport::unreadable(dir, format!("index.json: cannot read it: {e}")),
    };
    let index: Value = match serde_json::from_slice(&index_bytes) {
        Ok(v) => v,
        Err(e) => return PackReport::unreadable(dir, format!("index.json: not JSON: {e}")),
    };
    if index.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return PackReport::unreadable(dir, format!("index.json: not a {FORMAT} index"));
    }
    let Some(sessions) = index.get("sessions").and_then(Value::as_array) else {
        return PackReport::unreadable(dir, "index.json: no sessions list");
    };
    // Every key the console signed with, and its did:key.
    let console_keys: Vec<ed25519_dalek::VerifyingKey> = index
        .get("console_keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|k| text(k, "/public_key"))
        .filter_map(|k| anp::keys::parse_public_key(&k).ok())
        .collect();
    let console_dids: Vec<String> = index
        .get("console_keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|k| text(k, "/public_key"))
        .filter_map(|k| concordia::approval_receipt::keys::parse_public_key(&k).ok())
        .map(|k| concordia::approval_receipt::did_key::encode(&k))
        .collect();
    let console = Console {
        keys: console_keys,
        dids: console_dids,
    };
    let mut decisions = Vec::new();
    let mut failures = Vec::new();
    for entry in sessions {
        let rel = text(entry, "/dir").unwrap_or_default();
        if !inside(&rel) {
            failures.push(Finding {
                at: format!("index.json: {}", safe(&rel)),
                check: "index".into(),
                detail: "a session folder outside the pack".into(),
            });
            continue;
        }
        let session_id = text(entry, "/session_id").unwrap_or_default();
        let files = entry
            .get("files")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut s = Session {
            root,
            dir: rel,
            failures: Vec::new(),
        };
        let record_value = s
            .read(&files, "record.json")
            .and_then(|bytes| record(&mut s, &bytes, options));
        let host_approvals = s
            .read(&files, "host-approvals.json")
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .unwrap_or(Value::Null);
        for listed in entry
            .get("decisions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = text(listed, "/file").unwrap_or_default();
            let file = s
                .read(&files, &name)
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .unwrap_or(Value::Null);
            let outcome = decision(
                &mut s,
                listed,
                &file,
                record_value.as_ref(),
                &host_approvals,
                &session_id,
                &console,
            );
            decisions.push(outcome);
        }
        // A decision is proven only by a record that verifies.
        if !s.failures.is_empty() {
            for d in decisions.iter_mut().filter(|d| d.session_id == session_id) {
                if d.status == "proven" {
                    d.status = "not proven";
                    d.proof = format!("{} (but this session's files do not verify)", d.proof);
                }
            }
        }
        failures.extend(s.failures);
    }
    let status = if !failures.is_empty() {
        "failed"
    } else if decisions.iter().any(|d| d.status != "proven") {
        "unproven"
    } else {
        "verified"
    };
    PackReport {
        dir: dir.to_owned(),
        status,
        sessions: sessions.len(),
        decisions,
        failures,
        unreadable: None,
    }
}
