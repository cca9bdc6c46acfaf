//! A vendor agent of the test's own, talking to a host over HTTP exactly as
//! any outside party would (countersign-client, signed requests), and the checks an
//! outsider can make on what the host publishes: the chain, and an
//! acceptance's human approval against the approver key the host discloses.

use anp::api::{Target, WellKnown, WELL_KNOWN_PATH};
use anp::keys;
use anp::{EventKind, LogDocument};
use countersign_client::AgentClient;
use serde_json::{json, Value};

use crate::{E2eError, Result};

/// A registered vendor agent on one host.
pub struct Vendor {
    /// The agent's client (signs every request).
    pub client: AgentClient,
    /// Its key, so a test can also play a host that rewrites history.
    pub key: keys::SigningKey,
    /// The id the host assigned (what its admin verifies).
    pub agent_id: String,
}

impl Vendor {
    /// Registers a fresh key as a vendor agent (status `sandbox` until a host
    /// admin verifies it, which is all the sandbox needs).
    pub async fn register(base_url: &str, vendor_name: &str, agent_name: &str) -> Result<Vendor> {
        let key = keys::generate_signing_key();
        let registered = AgentClient::register(
            base_url,
            &key,
            agent_name,
            vendor_name,
            "sales@vendor.example",
        )
        .await
        .map_err(client_error("registering a vendor agent"))?;
        let client = AgentClient::new(base_url, key.clone(), &registered.agent_id)
            .map_err(client_error("building the vendor client"))?;
        Ok(Vendor {
            client,
            key,
            agent_id: registered.agent_id,
        })
    }

    /// Opens a session with the host's sandbox buyer; returns its id.
    pub async fn open_sandbox_session(&self, vendor_name: &str) -> Result<String> {
        self.open_session(Target::Sandbox { sandbox: true }, vendor_name)
            .await
    }

    /// Opens a session with a buyer organization by its handle.
    pub async fn open_org_session(&self, org_handle: &str, vendor_name: &str) -> Result<String> {
        let target = Target::Org {
            org_handle: org_handle.to_owned(),
        };
        self.open_session(target, vendor_name).await
    }

    async fn open_session(&self, target: Target, vendor_name: &str) -> Result<String> {
        let envelope = countersign_client::default_envelope(
            vendor_name,
            "E2E Negotiation Agent",
            "sales@vendor.example",
        );
        let opened = self
            .client
            .open_session(target, envelope)
            .await
            .map_err(client_error("opening a session"))?;
        Ok(opened.session_id)
    }

    /// Submits a formal offer; returns the host's log after it.
    pub async fn offer(&self, session_id: &str, offer: Value) -> Result<LogDocument> {
        self.client
            .submit(session_id, EventKind::Offer, offer)
            .await
            .map_err(client_error("submitting an offer"))
    }

    /// Sends a free-text message.
    pub async fn message(&self, session_id: &str, body: &str) -> Result<LogDocument> {
        self.client
            .submit(session_id, EventKind::Message, json!({ "body": body }))
            .await
            .map_err(client_error("sending a message"))
    }

    /// The whole log of a session, as the vendor may read it.
    pub async fn log(&self, session_id: &str) -> Result<LogDocument> {
        self.client
            .log(session_id, None)
            .await
            .map_err(client_error("reading the session log"))
    }
}

fn client_error(what: &'static str) -> impl Fn(countersign_client::ClientError) -> E2eError {
    move |error| E2eError::Unexpected(format!("{what}: {error}"))
}

/// An offer with `lines` line items of the given unit price, expiring in a day.
pub fn offer(lines: usize, unit_price: u64, notes: &str, conditions: &[&str]) -> Value {
    let items: Vec<Value> = (0..lines)
        .map(|i| {
            json!({
                "sku": format!("SKU-{i:03}"),
                "description": format!("Item number {i}"),
                "quantity": 10 + i,
                "unit": "seat/year",
                "unit_price": unit_price,
                "currency": "USD",
            })
        })
        .collect();
    let expires = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    let expires = expires
        .replace_nanosecond(0)
        .unwrap_or(expires)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    json!({
        "currency": "USD",
        "term_months": 24,
        "expires_at": expires,
        "line_items": items,
        "conditions": conditions,
        "notes": notes,
    })
}

/// The organization a sandbox session is opened with: its approver keys
/// are what `?org=` asks the discovery document for.
pub const SANDBOX_ORG: &str = countersign_host::SANDBOX_HANDLE;

/// The host's discovery document with `org`'s approver keys, fetched with
/// a plain GET as any vendor may (it names no person: RFC-003's members).
pub async fn well_known(base_url: &str, org: &str) -> Result<WellKnown> {
    let url = format!("{}{}?org={org}", origin(base_url), WELL_KNOWN_PATH);
    Ok(reqwest::get(url).await?.error_for_status()?.json().await?)
}

fn origin(base_url: &str) -> &str {
    let after_scheme = base_url.find("://").map(|i| i + 3).unwrap_or(0);
    match base_url[after_scheme..].find('/') {
        Some(slash) => &base_url[..after_scheme + slash],
        None => base_url,
    }
}

/// What an outsider established about one acceptance.
#[derive(Debug)]
pub struct VerifiedAccept {
    /// Who the approval names.
    pub approved_by: String,
    /// The accept event's seq.
    pub seq: u64,
    /// The fingerprint of the published key its approval verifies under.
    pub key_fingerprint: String,
}

/// Finds the `accept` of `offer_hash` in `log`, checks the whole chain with
/// the keys the log names, and checks the approval's signature with one of
/// the approval keys the organization's discovery document publishes (the
/// public document names no approver, so the key is found by its
/// signature; where a key does name its holder, it must be `approved_by`).
pub fn verify_accept(
    log: &LogDocument,
    discovery: &WellKnown,
    offer_hash: &str,
) -> Result<VerifiedAccept> {
    let report = anp::chain::verify_document(log)
        .map_err(|e| E2eError::Unexpected(format!("the log's keys are unusable: {e}")))?;
    if !report.ok {
        return Err(E2eError::Unexpected(format!(
            "the host's log does not verify: {report:?}"
        )));
    }
    let accept = log
        .events
        .iter()
        .find(|e| e.kind.as_str() == "accept" && e.payload["in_response_to"] == json!(offer_hash))
        .ok_or_else(|| E2eError::Unexpected(format!("no accept of {offer_hash} in the log")))?;
    let approval = &accept.payload["approval"];
    let field = |name: &str| {
        approval[name]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| E2eError::Unexpected(format!("approval.{name} is missing: {approval}")))
    };
    let (approved_by, at, signature) = (field("approved_by")?, field("at")?, field("signature")?);
    if approval["method"] != json!("human") {
        return Err(E2eError::Unexpected(format!(
            "approval.method is not human: {approval}"
        )));
    }
    let message = anp::signed::approval_string(offer_hash, &approved_by, &at);
    let approval_keys: Vec<_> = discovery
        .platform_keys
        .iter()
        .filter(|k| k.roles.iter().any(|r| r == "approval"))
        .filter(|k| k.approved_by.is_none() || k.approved_by.as_deref() == Some(&approved_by))
        .collect();
    if approval_keys.is_empty() {
        return Err(E2eError::Unexpected(format!(
            "the organization's discovery document publishes no approval key (for {approved_by})"
        )));
    }
    // The key must also have been valid when the approval was made: from
    // its `valid_from`, and before its `valid_to` when it was retired or
    // revoked since.
    let signed_at = anp::api::parse_timestamp(&at)
        .ok_or_else(|| E2eError::Unexpected(format!("approval.at is not a time: {at}")))?;
    let valid_then = |k: &&&anp::api::DiscoveredKey| {
        let from = anp::api::parse_timestamp(&k.valid_from);
        let to = k.valid_to.as_deref().map(anp::api::parse_timestamp);
        from.is_some_and(|from| from <= signed_at)
            && match to {
                None => true,
                Some(Some(to)) => signed_at < to,
                Some(None) => false,
            }
    };
    let verified = approval_keys.iter().filter(valid_then).find(|k| {
        keys::parse_public_key(&k.public_key)
            .map(|key| keys::verify_b64(&key, message.as_bytes(), &signature))
            .unwrap_or(false)
    });
    let Some(key) = verified else {
        return Err(E2eError::Unexpected(
            "the approval signature verifies under none of the organization's approval keys valid when it was made".into(),
        ));
    };
    Ok(VerifiedAccept {
        approved_by,
        seq: accept.seq,
        key_fingerprint: key.fingerprint.clone(),
    })
}
