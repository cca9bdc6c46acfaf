//! `anp vendor ...`: a vendor agent on the command line. Keys live like
//! `anp keygen` writes them; the registration (host, agent id) and the chain
//! head verified last for each session live beside the key, so every later
//! command verifies the host's log against what was seen before (SPEC §8).
//! Exit codes: 0 ok, 1 refused by the host or chain broken, 2 bad input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anp::api::Target;
use anp::{ChainHead, Event, EventKind, LogDocument};
use countersign_client::{default_envelope, AgentClient, ClientError, KeyCheck};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::human;
use crate::input;
use crate::keygen;

/// Where the vendor's state lives and which host to talk to.
#[derive(clap::Args, Debug, Clone)]
pub struct Place {
    /// The key file [default: $ANP_HOME/key.json, ANP_HOME defaulting to ~/.config/anp].
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// The host's base URL [default: the one saved at registration].
    #[arg(long, value_name = "URL")]
    host: Option<String>,
}

/// The vendor subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum VendorCommand {
    /// Register this key with a host (creating the key if missing).
    Register {
        #[command(flatten)]
        place: Place,
        /// The agent's display name.
        #[arg(long)]
        agent_name: String,
        /// The vendor it speaks for.
        #[arg(long)]
        vendor_name: String,
        /// A human contact.
        #[arg(long)]
        email: String,
    },
    /// Open a session with the sandbox buyer or an org that invited you.
    Open {
        #[command(flatten)]
        place: Place,
        /// The sandbox buyer (Fabrikam Industries).
        #[arg(long, conflicts_with = "org", required_unless_present = "org")]
        sandbox: bool,
        /// An org handle (`anp_org_...`) a buyer gave you.
        #[arg(long, value_name = "HANDLE")]
        org: Option<String>,
        /// Your mandate envelope (JSON) [default: a sandbox-friendly one].
        #[arg(long, value_name = "FILE")]
        envelope: Option<PathBuf>,
    },
    /// Send an offer (JSON file, `-` for stdin).
    Offer {
        #[command(flatten)]
        place: Place,
        /// The session id.
        session: String,
        /// The offer JSON.
        file: PathBuf,
    },
    /// Send a counter-offer to the standing offer.
    Counter {
        #[command(flatten)]
        place: Place,
        /// The session id.
        session: String,
        /// The offer JSON.
        file: PathBuf,
    },
    /// Send a message.
    Message {
        #[command(flatten)]
        place: Place,
        /// The session id.
        session: String,
        /// The text.
        #[arg(long)]
        body: String,
        /// An optional subject.
        #[arg(long)]
        subject: Option<String>,
    },
    /// Decline the standing offer.
    Decline {
        #[command(flatten)]
        place: Place,
        /// The session id.
        session: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Close the session.
    Close {
        #[command(flatten)]
        place: Place,
        /// The session id.
        session: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Fetch, verify and print the session log.
    Log {
        #[command(flatten)]
        place: Place,
        /// The session id.
        session: String,
    },
    /// Print new events as they arrive, verifying each, until the session ends.
    Watch {
        #[command(flatten)]
        place: Place,
        /// The session id.
        session: String,
        /// Seconds between polls.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=3600))]
        interval: u64,
        /// Stop after this many polls even if the session is still open.
        #[arg(long, value_name = "N")]
        max_polls: Option<u64>,
    },
}

/// What the registration leaves beside the key: which host, which identity.
#[derive(Debug, Serialize, Deserialize)]
struct Registration {
    host: String,
    agent_id: String,
    fingerprint: String,
    /// Names used for the default envelope of `open`.
    #[serde(default)]
    agent_name: String,
    #[serde(default)]
    vendor_name: String,
    #[serde(default)]
    contact_email: String,
}

/// Why a command failed, and which exit code that means.
#[derive(Debug, thiserror::Error)]
enum VendorError {
    /// Bad input: files, arguments, missing registration. Exit 2.
    #[error("{0}")]
    Usage(String),
    /// The client refused or the host refused, or the chain broke.
    #[error("{0}")]
    Client(#[from] ClientError),
}

impl VendorError {
    fn exit_code(&self) -> u8 {
        match self {
            VendorError::Usage(_) => 2,
            VendorError::Client(
                ClientError::InvalidPayload { .. } | ClientError::InvalidInput { .. },
            ) => 2,
            VendorError::Client(_) => 1,
        }
    }
}

type Result<T> = std::result::Result<T, VendorError>;

fn usage(message: impl Into<String>) -> VendorError {
    VendorError::Usage(message.into())
}

/// Runs a vendor subcommand on its own async runtime.
pub fn run(cmd: VendorCommand, json: bool) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("anp: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(dispatch(cmd, json)) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("anp: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

async fn dispatch(cmd: VendorCommand, json: bool) -> Result<String> {
    match cmd {
        VendorCommand::Register {
            place,
            agent_name,
            vendor_name,
            email,
        } => register(&place, &agent_name, &vendor_name, &email, json).await,
        VendorCommand::Open {
            place,
            sandbox,
            org,
            envelope,
        } => open(&place, sandbox, org, envelope, json).await,
        VendorCommand::Offer {
            place,
            session,
            file,
        } => {
            let offer = read_json_file(&file, "an offer")?;
            submit(&place, &session, EventKind::Offer, offer, json).await
        }
        VendorCommand::Counter {
            place,
            session,
            file,
        } => {
            let offer = read_json_file(&file, "an offer")?;
            submit(&place, &session, EventKind::CounterOffer, offer, json).await
        }
        VendorCommand::Message {
            place,
            session,
            body,
            subject,
        } => {
            let mut payload = json!({ "body": body });
            if let Some(subject) = subject {
                payload["subject"] = json!(subject);
            }
            submit(&place, &session, EventKind::Message, payload, json).await
        }
        VendorCommand::Decline {
            place,
            session,
            reason,
        } => {
            submit(
                &place,
                &session,
                EventKind::Decline,
                reason_payload(reason),
                json,
            )
            .await
        }
        VendorCommand::Close {
            place,
            session,
            reason,
        } => {
            submit(
                &place,
                &session,
                EventKind::SessionClose,
                reason_payload(reason),
                json,
            )
            .await
        }
        VendorCommand::Log { place, session } => log(&place, &session, json).await,
        VendorCommand::Watch {
            place,
            session,
            interval,
            max_polls,
        } => {
            watch(
                &place,
                &session,
                Duration::from_secs(interval),
                max_polls,
                json,
            )
            .await
        }
    }
}

fn reason_payload(reason: Option<String>) -> Value {
    match reason {
        Some(reason) => json!({ "reason": reason }),
        None => json!({}),
    }
}

fn non_empty<'a>(text: &'a str, fallback: &'a str) -> &'a str {
    if text.trim().is_empty() {
        fallback
    } else {
        text
    }
}

fn read_json_file(path: &Path, what: &'static str) -> Result<Value> {
    input::read_json(path, what).map_err(|e| usage(e.to_string()))
}

// ---- state beside the key ------------------------------------------------

fn key_path(place: &Place) -> Result<PathBuf> {
    match &place.key {
        Some(path) => Ok(path.clone()),
        None => keygen::default_key_path().map_err(|e| usage(e.to_string())),
    }
}

fn beside(key: &Path, name: &str) -> PathBuf {
    key.with_file_name(name)
}

fn load_key(path: &Path) -> Result<anp::keys::SigningKey> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        usage(format!(
            "{}: cannot read the key ({e}); run `anp vendor register` or `anp keygen` first",
            input::display(path)
        ))
    })?;
    anp::keys::decode_key_file(&text).map_err(|e| usage(format!("{}: {e}", input::display(path))))
}

fn write_state(path: &Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| usage(e.to_string()))?;
    // A private temporary name per process: two commands may save at once.
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| usage(format!("{}: cannot write: {e}", path.display())))
}

fn load_pins(key: &Path) -> Result<BTreeMap<String, ChainHead>> {
    load_map(&beside(key, "pins.json"), "a pins file")
}

/// Each session's buyer org (whose approver keys the host publishes for
/// it), saved beside the pins.
fn load_orgs(key: &Path) -> Result<BTreeMap<String, String>> {
    load_map(&beside(key, "orgs.json"), "a session orgs file")
}

fn load_map<V: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
) -> Result<BTreeMap<String, V>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| usage(format!("{}: not {what}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(usage(format!("{}: {e}", path.display()))),
    }
}

/// The client for the saved registration, with every saved pin restored.
fn client(place: &Place) -> Result<(AgentClient, PathBuf)> {
    client_and_registration(place).map(|(client, key_file, _)| (client, key_file))
}

fn client_and_registration(place: &Place) -> Result<(AgentClient, PathBuf, Registration)> {
    let key_file = key_path(place)?;
    let key = load_key(&key_file)?;
    let reg_path = beside(&key_file, "agent.json");
    let text = std::fs::read_to_string(&reg_path).map_err(|_| {
        usage(format!(
            "{}: no registration; run `anp vendor register --host URL ...` first",
            reg_path.display()
        ))
    })?;
    let reg: Registration = serde_json::from_str(&text)
        .map_err(|e| usage(format!("{}: not a registration: {e}", reg_path.display())))?;
    if let Some(host) = &place.host {
        if host.trim_end_matches('/') != reg.host.trim_end_matches('/') {
            return Err(usage(format!(
                "this key is registered at {}, not {host}; run `anp vendor register --host {host}` first",
                reg.host
            )));
        }
    }
    let client = AgentClient::new(&reg.host, key, &reg.agent_id)?;
    for (session, head) in load_pins(&key_file)? {
        client.set_pin(&session, head);
    }
    for (session, org) in load_orgs(&key_file)? {
        client.set_session_org(&session, &org);
    }
    Ok((client, key_file, reg))
}

fn save_pin(client: &AgentClient, key_file: &Path, session: &str) -> Result<()> {
    let mut pins = load_pins(key_file)?;
    if let Some(head) = client.pin(session) {
        pins.insert(session.to_owned(), head);
    }
    write_state(&beside(key_file, "pins.json"), &pins)
}

// ---- commands -------------------------------------------------------------

async fn register(
    place: &Place,
    agent_name: &str,
    vendor_name: &str,
    email: &str,
    json: bool,
) -> Result<String> {
    let host = place
        .host
        .clone()
        .ok_or_else(|| usage("register needs --host URL"))?;
    let key_file = key_path(place)?;
    let created = if key_file.exists() {
        false
    } else {
        keygen::keygen(&key_file, false).map_err(|e| usage(e.to_string()))?;
        true
    };
    let key = load_key(&key_file)?;
    let answer = AgentClient::register(&host, &key, agent_name, vendor_name, email).await?;
    let registration = Registration {
        host: host.trim_end_matches('/').to_owned(),
        agent_id: answer.agent_id.clone(),
        fingerprint: answer.fingerprint.clone(),
        agent_name: agent_name.to_owned(),
        vendor_name: vendor_name.to_owned(),
        contact_email: email.to_owned(),
    };
    write_state(&beside(&key_file, "agent.json"), &registration)?;
    let status = serde_json::to_value(answer.status).unwrap_or(Value::Null);
    Ok(if json {
        line(&json!({
            "agent_id": answer.agent_id,
            "fingerprint": answer.fingerprint,
            "status": status,
            "host": registration.host,
            "key_file": key_file.display().to_string(),
            "key_created": created,
        }))
    } else {
        format!(
            "registered at {} as agent {} (status {})\nfingerprint  {}\nkey file     {}{}\n",
            registration.host,
            answer.agent_id,
            status.as_str().unwrap_or("?"),
            answer.fingerprint,
            input::terminal_safe(&key_file.display().to_string()),
            if created { " (created)" } else { "" }
        )
    })
}

async fn open(
    place: &Place,
    sandbox: bool,
    org: Option<String>,
    envelope: Option<PathBuf>,
    json: bool,
) -> Result<String> {
    let (client, key_file, reg) = client_and_registration(place)?;
    let envelope = match envelope {
        Some(path) => read_json_file(&path, "a mandate envelope")?,
        None => default_envelope(
            non_empty(&reg.vendor_name, "Vendor"),
            non_empty(&reg.agent_name, "Vendor Agent"),
            non_empty(&reg.contact_email, "sales@vendor.example"),
        ),
    };
    let target = match (sandbox, org) {
        (_, Some(org_handle)) => Target::Org { org_handle },
        (true, None) => Target::Sandbox { sandbox: true },
        (false, None) => return Err(usage("open needs --sandbox or --org HANDLE")),
    };
    let opened = client.open_session(target, envelope).await?;
    save_pin(&client, &key_file, &opened.session_id)?;
    if let Some(org) = client.session_org(&opened.session_id) {
        let mut orgs = load_orgs(&key_file)?;
        orgs.insert(opened.session_id.clone(), org);
        write_state(&beside(&key_file, "orgs.json"), &orgs)?;
    }
    let head = client
        .pin(&opened.session_id)
        .unwrap_or_else(ChainHead::genesis);
    let trust = key_check(&client).await?;
    Ok(if json {
        line(&json!({
            "session_id": opened.session_id,
            "buyer_envelope": opened.buyer_envelope,
            "verified": true,
            "head": head,
            "events": opened.log.events,
            "trust": trust,
        }))
    } else {
        let buyer = opened.buyer_envelope["party"].as_str().unwrap_or("?");
        format!(
            "opened session {} with {}\n{}chain verified through event {}\n{}",
            opened.session_id,
            input::terminal_safe(buyer),
            render_events(&opened.log.events),
            head.seq,
            notes(&trust)
        )
    })
}

/// What the client could not cross-check about the host's keys (the host
/// may serve no discovery document, or one without our additions).
async fn key_check(client: &AgentClient) -> Result<KeyCheck> {
    Ok(client.trusted_keys().await?.check())
}

/// One `note:` line per thing that was not cross-checked.
fn notes(trust: &KeyCheck) -> String {
    trust
        .not_cross_checked
        .iter()
        .map(|sentence| format!("note: {sentence}\n"))
        .collect()
}

async fn submit(
    place: &Place,
    session: &str,
    kind: EventKind,
    payload: Value,
    json: bool,
) -> Result<String> {
    let (client, key_file) = client(place)?;
    let before = client.pin(session).map_or(0, |p| p.seq);
    let result = client.submit(session, kind, payload).await;
    // The pin moves only on a verified log; save whatever it is now.
    save_pin(&client, &key_file, session)?;
    let doc = result?;
    let trust = key_check(&client).await?;
    Ok(report(
        &client,
        session,
        &doc,
        before,
        &trust,
        json,
        &format!("sent {kind}"),
    ))
}

async fn log(place: &Place, session: &str, json: bool) -> Result<String> {
    let (client, key_file) = client(place)?;
    let doc = client.log(session, None).await?;
    save_pin(&client, &key_file, session)?;
    let trust = key_check(&client).await?;
    Ok(if json {
        // The log document as the host sent it (`anp verify` reads it), with
        // what this client could not cross-check beside its members.
        let mut value = serde_json::to_value(&doc).map_err(|e| usage(e.to_string()))?;
        value["trust"] = json!(trust);
        line(&value)
    } else {
        report(&client, session, &doc, 0, &trust, false, "log")
    })
}

async fn watch(
    place: &Place,
    session: &str,
    interval: Duration,
    max_polls: Option<u64>,
    json: bool,
) -> Result<String> {
    let (client, key_file) = client(place)?;
    let mut polls = 0u64;
    // The session's state as the last log said it. A status answer need not
    // carry it (the reference host's has only id, event_count, chain_head);
    // a session changes state only by appending an event, so the log
    // fetched for new events always has it fresh.
    let mut state: Option<String> = None;
    let mut noted = false;
    loop {
        let seen = client.pin(session).map_or(0, |p| p.seq);
        let status = client.status(session).await?;
        let news = status.session.event_count > seen;
        if news || (status.session.status.is_none() && state.is_none()) {
            let doc = client.log(session, Some(seen)).await?;
            save_pin(&client, &key_file, session)?;
            state = Some(doc.session.status.clone());
            let head = client.pin(session).unwrap_or_else(ChainHead::genesis);
            let trust = key_check(&client).await?;
            if !json && !noted {
                print!("{}", notes(&trust));
                noted = true;
            }
            for event in &doc.events {
                if json {
                    print!(
                        "{}",
                        line(
                            &json!({ "event": event, "verified": true, "head": head, "trust": trust })
                        )
                    );
                } else {
                    print!("{}", render_events(std::slice::from_ref(event)));
                }
            }
            if !json && !doc.events.is_empty() {
                println!("chain verified through event {}", head.seq);
            }
        }
        polls += 1;
        let current = status
            .session
            .status
            .clone()
            .or_else(|| state.clone())
            .unwrap_or_else(|| "open".to_owned());
        let ended = current != "open";
        if ended || max_polls.is_some_and(|max| polls >= max) {
            let trust = key_check(&client).await?;
            return Ok(if json {
                line(
                    &json!({ "session_id": session, "status": current, "ended": ended, "trust": trust }),
                )
            } else if ended {
                format!("session {session} is {}\n", input::terminal_safe(&current))
            } else {
                format!("stopped after {polls} polls; session {session} is still open\n")
            });
        }
        tokio::time::sleep(interval).await;
    }
}

// ---- output ---------------------------------------------------------------

fn report(
    client: &AgentClient,
    session: &str,
    doc: &LogDocument,
    after: u64,
    trust: &KeyCheck,
    json: bool,
    what: &str,
) -> String {
    let head = client.pin(session).unwrap_or_else(ChainHead::genesis);
    let new: Vec<&Event> = doc.events.iter().filter(|e| e.seq > after).collect();
    if json {
        return line(&json!({
            "session_id": session,
            "status": doc.session.status,
            "event_count": doc.session.event_count,
            "verified": true,
            "head": head,
            "events": new,
            "trust": trust,
        }));
    }
    let owned: Vec<Event> = new.into_iter().cloned().collect();
    format!(
        "{what}: session {session} ({})\n{}chain verified through event {} ({})\n{}",
        input::terminal_safe(&doc.session.status),
        render_events(&owned),
        head.seq,
        head.event_hash,
        notes(trust)
    )
}

/// One line per event; counterparty text goes through `terminal_safe`.
fn render_events(events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        let summary = summarize(e);
        out.push_str(&format!(
            "  #{} {} {}{}{}\n",
            e.seq,
            e.actor,
            e.kind,
            if summary.is_empty() { "" } else { ": " },
            input::terminal_safe(&summary)
        ));
    }
    out
}

/// A short plain-text account of a payload (at most 200 characters).
fn summarize(e: &Event) -> String {
    let p = &e.payload;
    let text = |key: &str| p[key].as_str().unwrap_or_default().to_owned();
    let summary = match e.kind {
        EventKind::Message => match p["subject"].as_str() {
            Some(subject) => format!("[{subject}] {}", text("body")),
            None => text("body"),
        },
        EventKind::Offer | EventKind::CounterOffer => match anp::payload::Offer::parse(p) {
            Ok(offer) => {
                let total = anp::money::offer_total(&offer);
                format!(
                    "{} line item(s), total {}{}, {} months, {}",
                    offer.line_items.len(),
                    human::money(&total.amount.to_string(), &offer.currency),
                    if total.mismatch {
                        format!(
                            " (line items add up to {})",
                            human::money(&total.computed.to_string(), &offer.currency)
                        )
                    } else {
                        String::new()
                    },
                    offer.term_months,
                    human::expiry(&offer.expires_at)
                )
            }
            Err(e) => format!("an offer that does not parse: {e}"),
        },
        EventKind::Decline | EventKind::SessionClose => text("reason"),
        EventKind::Accept => format!("accepts {}", text("in_response_to")),
        EventKind::SessionOpen | EventKind::Envelope => String::new(),
    };
    summary.chars().take(200).collect()
}

fn line<T: Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}
