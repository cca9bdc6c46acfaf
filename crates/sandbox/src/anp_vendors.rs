//! The sandbox's scripted ANP vendor agents: they register with the
//! embedded host, open sessions, make real offers over HTTP, and answer the
//! person's decisions (a lower offer after a decline, acceptance of a fair
//! counter).

use std::path::Path;
use std::time::Duration;

use anp::api::Target;
use anp::keys::SigningKey;
use anp::{Event, EventKind};
use countersign_client::AgentClient;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::SandboxError;

fn sandbox_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Failed(e.to_string())
}

/// How a scripted vendor behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Temper {
    /// Makes a lower offer after a decline, accepts a counter at or above its floor.
    Reactive,
    /// Makes one offer that expires in minutes.
    Hurried,
    /// Makes one offer and never answers again.
    Quiet,
    /// Revises its own offer once, then reacts.
    Reviser,
}

struct Script {
    vendor: &'static str,
    agent: &'static str,
    sku: &'static str,
    description: &'static str,
    quantity: u64,
    unit_price: u64,
    floor: u64,
    expires_in: Duration,
    temper: Temper,
}

const SCRIPTS: [Script; 4] = [
    Script {
        vendor: "Northwind Software",
        agent: "Northwind Renewal Agent",
        sku: "CRM-ENT",
        description: "CRM Enterprise seats",
        quantity: 500,
        unit_price: 1140,
        floor: 1050,
        expires_in: Duration::from_secs(3 * 24 * 3600),
        temper: Temper::Reactive,
    },
    Script {
        vendor: "Tailspin Analytics",
        agent: "Tailspin Deal Desk Agent",
        sku: "BI-PRO",
        description: "Analytics Pro licences",
        quantity: 120,
        unit_price: 600,
        floor: 560,
        expires_in: Duration::from_secs(10 * 60),
        temper: Temper::Hurried,
    },
    Script {
        vendor: "Litware Security",
        agent: "Litware Sales Agent",
        sku: "EDR-STD",
        description: "Endpoint protection, standard",
        quantity: 2000,
        unit_price: 42,
        floor: 40,
        expires_in: Duration::from_secs(2 * 24 * 3600),
        temper: Temper::Quiet,
    },
    Script {
        vendor: "Adatum Cloud Storage",
        agent: "Adatum Pricing Agent",
        sku: "STO-TB",
        description: "Object storage, per TB-year",
        quantity: 300,
        unit_price: 250,
        floor: 215,
        expires_in: Duration::from_secs(5 * 24 * 3600),
        temper: Temper::Reviser,
    },
];

/// What the demo remembers across restarts: which session each vendor has.
#[derive(Debug, Default, Serialize, Deserialize)]
struct DemoState {
    sessions: Vec<(usize, String)>,
}

fn offer(script: &Script, unit_price: u64) -> Value {
    let expires = OffsetDateTime::now_utc() + script.expires_in;
    json!({
        "currency": "USD",
        "term_months": 12,
        "expires_at": anp::api::format_timestamp(expires),
        "line_items": [{
            "sku": script.sku,
            "description": script.description,
            "quantity": script.quantity,
            "unit": "unit/year",
            "unit_price": unit_price,
            "currency": "USD"
        }],
        "conditions": ["Net 30 payment"],
        "notes": format!("Sandbox offer from {} (a scripted demo vendor).", script.vendor)
    })
}

fn load_key(path: &Path) -> Result<SigningKey, SandboxError> {
    match std::fs::read_to_string(path) {
        Ok(text) => anp::keys::decode_key_file(&text).map_err(sandbox_error),
        Err(_) => {
            let key = anp::keys::generate_signing_key();
            countersign_engine::owner_only::write(
                path,
                anp::keys::encode_key_file(&key).as_bytes(),
            )?;
            Ok(key)
        }
    }
}

/// Runs the demo vendors against the sandbox host, keeping their keys and
/// sessions in its directory, for as long as the sandbox runs.
pub(crate) async fn run(sandbox: &crate::DemoHost) -> Result<(), SandboxError> {
    let (url, dir) = (sandbox.url.as_str(), sandbox.dir.as_path());
    let state_path = dir.join("demo.json");
    let mut state: DemoState = std::fs::read_to_string(&state_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let mut agents = Vec::new();
    for (index, script) in SCRIPTS.iter().enumerate() {
        let key = load_key(&dir.join(format!("vendor-{index}.key.json")))?;
        let contact = format!(
            "sales@{}.example",
            script
                .vendor
                .split(' ')
                .next()
                .unwrap_or("vendor")
                .to_lowercase()
        );
        let registered = AgentClient::register(url, &key, script.agent, script.vendor, &contact)
            .await
            .map_err(sandbox_error)?;
        // The sandbox's admin is this console, and these vendors are its own
        // scripts: it verifies the names they registered, as a host's admin
        // would (`agent verify`), so the inbox does not call them unverified.
        sandbox
            .host
            .verify_agent(&registered.agent_id)
            .await
            .map_err(sandbox_error)?;
        let client = AgentClient::new(url, key, &registered.agent_id).map_err(sandbox_error)?;
        if !state.sessions.iter().any(|(i, _)| *i == index) {
            let envelope =
                countersign_client::default_envelope(script.vendor, script.agent, &contact);
            let opened = client
                .open_session(Target::Sandbox { sandbox: true }, envelope)
                .await
                .map_err(sandbox_error)?;
            client
                .submit(
                    &opened.session_id,
                    EventKind::Offer,
                    offer(script, script.unit_price),
                )
                .await
                .map_err(sandbox_error)?;
            if script.temper == Temper::Reviser {
                let revised = script.unit_price - (script.unit_price - script.floor) / 3;
                client
                    .submit(&opened.session_id, EventKind::Offer, offer(script, revised))
                    .await
                    .map_err(sandbox_error)?;
            }
            state.sessions.push((index, opened.session_id));
            let _ = countersign_engine::owner_only::write(
                &state_path,
                serde_json::to_string(&state).unwrap_or_default().as_bytes(),
            );
        }
        agents.push(client);
    }
    // React to the person's decisions, for as long as the sandbox runs.
    loop {
        for (index, session_id) in &state.sessions {
            let script = &SCRIPTS[*index];
            if matches!(script.temper, Temper::Quiet | Temper::Hurried) {
                continue;
            }
            if let Err(e) = react(&agents[*index], script, session_id).await {
                tracing::debug!("demo vendor {}: {e}", script.vendor);
            }
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

fn unit_price_of(payload: &Value) -> Option<u64> {
    let price = payload.pointer("/line_items/0/unit_price")?;
    price
        .as_u64()
        .or_else(|| price.as_f64().map(|p| p.round() as u64))
}

/// Answers the buyer's latest move, if it is the buyer's turn that just ended.
async fn react(agent: &AgentClient, script: &Script, session_id: &str) -> Result<(), SandboxError> {
    let doc = agent.log(session_id, None).await.map_err(sandbox_error)?;
    if doc.session.status != "open" {
        return Ok(());
    }
    let Some(last) = doc.events.last() else {
        return Ok(());
    };
    if last.actor != anp::Actor::Buyer {
        return Ok(());
    }
    let our_offers: Vec<&Event> = doc
        .events
        .iter()
        .filter(|e| e.actor == anp::Actor::VendorAgent && e.kind.is_offer())
        .collect();
    let our_last = our_offers
        .last()
        .and_then(|e| unit_price_of(&e.payload))
        .unwrap_or(script.unit_price);
    match last.kind {
        EventKind::CounterOffer => {
            let theirs = unit_price_of(&last.payload).unwrap_or(0);
            if theirs >= script.floor {
                agent
                    .submit(
                        session_id,
                        EventKind::Accept,
                        json!({ "in_response_to": last.event_hash }),
                    )
                    .await
                    .map_err(sandbox_error)?;
            } else if our_offers.len() >= 4 || our_last <= script.floor {
                agent
                    .submit(
                        session_id,
                        EventKind::SessionClose,
                        json!({ "reason": "We cannot go lower than our last offer." }),
                    )
                    .await
                    .map_err(sandbox_error)?;
            } else {
                let meet = (our_last + theirs.max(script.floor)) / 2;
                agent
                    .submit(
                        session_id,
                        EventKind::CounterOffer,
                        offer(script, meet.max(script.floor)),
                    )
                    .await
                    .map_err(sandbox_error)?;
            }
        }
        EventKind::Decline => {
            let next = our_last
                .saturating_sub((our_last - script.floor.min(our_last)) / 2 + 1)
                .max(script.floor);
            if next >= our_last || our_offers.len() >= 4 {
                agent
                    .submit(
                        session_id,
                        EventKind::SessionClose,
                        json!({ "reason": "That was our best offer." }),
                    )
                    .await
                    .map_err(sandbox_error)?;
            } else {
                // A decline leaves no standing offer: the answer is a new offer.
                agent
                    .submit(session_id, EventKind::Offer, offer(script, next))
                    .await
                    .map_err(sandbox_error)?;
            }
        }
        EventKind::Accept => {
            agent
                .submit(
                    session_id,
                    EventKind::Message,
                    json!({ "body": "Thank you, we will send the paperwork." }),
                )
                .await
                .map_err(sandbox_error)?;
        }
        _ => {}
    }
    Ok(())
}
