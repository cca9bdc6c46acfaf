//! Which keys a vendor agent trusts, and verification against a pinned head.
//!
//! A log document names its own keys, but that block is the host's claim. The
//! client trusts only its own key and the platform keys the host publishes in
//! `/.well-known/anp.json` (fetched separately from any log), and refuses a log
//! whose `keys` block disagrees with them.
//!
//! Discovery is a draft (RFC-003), optional for an ANP/0.1 host. Without it
//! the client carries on under plain 0.1: buyer signatures are checked
//! against the buyer key the log names (the first one seen, which later logs
//! must keep naming), and [`TrustedKeys::not_cross_checked`] says so in words.

use std::collections::HashSet;

use anp::api::{self, DiscoveredKey, WellKnown};
use anp::keys::{self, VerifyingKey};
use anp::payload::AcceptPayload;
use anp::{
    verify_extension, verify_log_from_pin, ChainHead, Event, KeyRing, LogDocument, VerifyReport,
};
use anp::{Actor, EventKind};

use crate::error::ClientError;
use crate::Result;

/// The role a discovery key must carry to sign buyer events.
const EVENTS_ROLE: &str = "events";
/// The role of an approver's key (RFC-003).
const APPROVAL_ROLE: &str = "approval";

/// Where the buyer keys a client verifies with come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// The host's discovery document, fetched apart from any log.
    Discovery,
    /// The log's own `keys` block: the host serves no discovery document.
    Log,
}

/// The keys a client verifies event signatures with.
#[derive(Debug, Clone)]
pub struct TrustedKeys {
    ring: KeyRing,
    platform: HashSet<String>,
    own: Option<String>,
    published: Vec<DiscoveredKey>,
    source: KeySource,
}

/// What a client could cross-check about a host's keys, for people and
/// programs (`anp vendor` prints it in text and in `--json`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeyCheck {
    /// Where the buyer keys came from.
    pub buyer_keys_from: KeySource,
    /// True when nothing below was left unchecked.
    pub cross_checked: bool,
    /// One sentence per thing that could not be cross-checked.
    pub not_cross_checked: Vec<String>,
}

/// What a log-only client says about buyer signatures.
pub const LOG_ONLY_SIGNATURES: &str = "buyer signatures were checked against the log's own key, not cross-checked with the host's published keys: the host serves no /.well-known/anp.json (RFC-003 discovery)";
/// What a log-only client says about approvals.
pub const LOG_ONLY_APPROVALS: &str =
    "approvals in a buyer accept (RFC-002) were not verified: the host publishes no approval keys";
/// What a client says when approval keys name no approver.
pub const UNNAMED_APPROVAL_KEYS: &str = "approvals are verified against the host's published approval keys, but not matched to the person they name: its discovery document gives no approved_by";

impl TrustedKeys {
    /// The platform keys (role `events`) of a discovery document. A published
    /// key whose fingerprint does not match its key is refused.
    pub fn from_well_known(doc: &WellKnown) -> Result<TrustedKeys> {
        let mut ring = KeyRing::new();
        let mut platform = HashSet::new();
        for published in doc
            .platform_keys
            .iter()
            .filter(|k| has_role(k, EVENTS_ROLE))
        {
            let key = keys::parse_public_key(&published.public_key).map_err(|e| {
                ClientError::UntrustedKey(format!(
                    "the discovery document publishes a bad key: {e}"
                ))
            })?;
            let fingerprint = keys::fingerprint(&key);
            if fingerprint != published.fingerprint {
                return Err(ClientError::UntrustedKey(format!(
                    "the discovery document lists fingerprint {} for a key whose fingerprint is {fingerprint}",
                    published.fingerprint
                )));
            }
            ring.add(key);
            platform.insert(fingerprint);
        }
        if platform.is_empty() {
            return Err(ClientError::UntrustedKey(
                "the discovery document publishes no platform key with role \"events\"".to_owned(),
            ));
        }
        Ok(TrustedKeys {
            ring,
            platform,
            own: None,
            published: doc.platform_keys.clone(),
            source: KeySource::Discovery,
        })
    }

    /// The keys of a client whose host serves no discovery document: none
    /// yet; the buyer key is adopted from the first log (see
    /// [`TrustedKeys::adopt_log_buyer_key`]).
    pub fn without_discovery() -> TrustedKeys {
        TrustedKeys {
            ring: KeyRing::new(),
            platform: HashSet::new(),
            own: None,
            published: Vec::new(),
            source: KeySource::Log,
        }
    }

    /// Where the buyer keys come from.
    pub fn source(&self) -> KeySource {
        self.source
    }

    /// What could not be cross-checked, in sentences (empty: everything was).
    pub fn not_cross_checked(&self) -> Vec<String> {
        match self.source {
            KeySource::Log => vec![
                LOG_ONLY_SIGNATURES.to_owned(),
                LOG_ONLY_APPROVALS.to_owned(),
            ],
            KeySource::Discovery => {
                // Matched to people only when every approval key published
                // names its approver: a public document that names no one
                // (countersign-host's, per organization) leaves it unsaid.
                let mut approval = self
                    .published
                    .iter()
                    .filter(|k| has_role(k, APPROVAL_ROLE))
                    .peekable();
                let unnamed =
                    approval.peek().is_none() || approval.any(|k| k.approved_by.is_none());
                if unnamed {
                    vec![UNNAMED_APPROVAL_KEYS.to_owned()]
                } else {
                    Vec::new()
                }
            }
        }
    }

    /// [`TrustedKeys::not_cross_checked`] with the source, ready to print.
    pub fn check(&self) -> KeyCheck {
        let not_cross_checked = self.not_cross_checked();
        KeyCheck {
            buyer_keys_from: self.source,
            cross_checked: not_cross_checked.is_empty(),
            not_cross_checked,
        }
    }

    /// Without discovery, the buyer key a log names is the only one there is:
    /// the first log's is adopted, and every later log must name the same.
    /// Returns the extended keys when a key was adopted, `None` when nothing
    /// changed (or when keys come from discovery, where a log adds nothing).
    pub fn adopt_log_buyer_key(&self, doc: &LogDocument) -> Result<Option<TrustedKeys>> {
        let (KeySource::Log, Some(buyer)) = (self.source, &doc.keys.buyer) else {
            return Ok(None);
        };
        let key = keys::parse_public_key(&buyer.public_key).map_err(|e| {
            ClientError::UntrustedKey(format!("the log names a bad buyer key: {e}"))
        })?;
        let fingerprint = keys::fingerprint(&key);
        if self.platform.contains(&fingerprint) {
            return Ok(None);
        }
        if let Some(adopted) = self.platform.iter().next() {
            return Err(ClientError::UntrustedKey(format!(
                "the log names buyer key {fingerprint}, but this host's earlier log named {adopted}, and the host publishes no discovery document to say which is its own"
            )));
        }
        let mut adopted = self.clone();
        adopted.ring.add(key);
        adopted.platform.insert(fingerprint);
        Ok(Some(adopted))
    }

    /// Adds the client's own key, which signs the vendor's events.
    pub fn with_own_key(mut self, key: &VerifyingKey) -> TrustedKeys {
        self.ring.add(*key);
        self.own = Some(keys::fingerprint(key));
        self
    }

    /// The ring to verify with.
    pub fn ring(&self) -> &KeyRing {
        &self.ring
    }

    /// Refuses a log whose `keys` block names a buyer key the host does not
    /// publish, or a vendor key that is not ours.
    pub fn check_log_keys(&self, doc: &LogDocument) -> Result<()> {
        if let Some(buyer) = &doc.keys.buyer {
            if !self.platform.contains(&fingerprint_of(&buyer.public_key)?) {
                return Err(ClientError::UntrustedKey(format!(
                    "the log names buyer key {} but the host's discovery document does not publish it",
                    buyer.fingerprint
                )));
            }
        }
        if let (Some(vendor), Some(own)) = (&doc.keys.vendor_agent, &self.own) {
            if &fingerprint_of(&vendor.public_key)? != own {
                return Err(ClientError::UntrustedKey(format!(
                    "the log names vendor key {} but this agent's key is {own}",
                    vendor.fingerprint
                )));
            }
        }
        Ok(())
    }
}

impl TrustedKeys {
    /// RFC-003 validity windows: a buyer event must be signed by a platform
    /// key that was valid at the event's `at` (a key retired before it, or
    /// published only after it, does not vouch for it).
    pub fn check_key_windows(&self, events: &[anp::Event]) -> Result<()> {
        for event in events.iter().filter(|e| e.actor == Actor::Buyer) {
            let Some(signer) = event.signer.as_deref() else {
                continue;
            };
            let Some(key) = self.published.iter().find(|k| k.fingerprint == signer) else {
                continue; // an unknown signer already fails verification
            };
            let at = api::parse_timestamp(&event.at);
            let from = api::parse_timestamp(&key.valid_from);
            let to = key.valid_to.as_deref().and_then(api::parse_timestamp);
            let before = matches!((at, from), (Some(at), Some(from)) if at < from);
            let after = matches!((at, to), (Some(at), Some(to)) if at > to);
            if before || after {
                return Err(ClientError::UntrustedKey(format!(
                    "event {} was signed at {} by platform key {signer}, which is valid from {} to {}",
                    event.seq,
                    event.at,
                    key.valid_from,
                    key.valid_to.as_deref().unwrap_or("now")
                )));
            }
        }
        Ok(())
    }

    /// RFC-002: every approval in a buyer `accept` must verify against an
    /// approval key the host publishes: the one published for that
    /// `approved_by` (our addition), or, as RFC-003 alone allows, one that
    /// names no approver. Returns `Ok(false)` when no published key verifies
    /// it and none is published for that approver (the key may be newer than
    /// our copy), `Err` when the approver's published key does not verify it.
    /// Without discovery there is nothing to verify against: approvals pass
    /// unverified, and [`TrustedKeys::not_cross_checked`] says so.
    pub fn check_approvals(&self, events: &[anp::Event]) -> Result<bool> {
        for event in events
            .iter()
            .filter(|e| e.actor == Actor::Buyer && e.kind == EventKind::Accept)
        {
            let payload =
                AcceptPayload::parse(&event.payload).map_err(|e| ClientError::InvalidPayload {
                    kind: "accept".to_owned(),
                    detail: format!("the buyer's accept (event {}) is malformed: {e}", event.seq),
                    violations: e.violations,
                })?;
            if self.source == KeySource::Log {
                continue;
            }
            for approval in payload.all_approvals() {
                let named = |k: &&DiscoveredKey| {
                    k.approved_by.as_deref() == Some(approval.approved_by.as_str())
                };
                let candidates: Vec<&DiscoveredKey> = self
                    .published
                    .iter()
                    .filter(|k| has_role(k, APPROVAL_ROLE))
                    .filter(|k| k.approved_by.is_none() || named(k))
                    .collect();
                let mut last_error = None;
                let mut verified = false;
                for published in &candidates {
                    let key = keys::parse_public_key(&published.public_key).map_err(|e| {
                        ClientError::UntrustedKey(format!(
                            "approval key {}: {e}",
                            published.fingerprint
                        ))
                    })?;
                    match anp::approval::verify_approval(approval, &payload.in_response_to, &key) {
                        Ok(()) => {
                            verified = true;
                            break;
                        }
                        Err(e) => last_error = Some(e),
                    }
                }
                if verified {
                    continue;
                }
                if let (true, Some(e)) = (candidates.iter().any(named), last_error) {
                    return Err(ClientError::UntrustedKey(format!(
                        "the accept (event {}) carries an approval by {} that does not verify: {e}",
                        event.seq, approval.approved_by
                    )));
                }
                return Ok(false);
            }
        }
        Ok(true)
    }
}

fn has_role(key: &DiscoveredKey, role: &str) -> bool {
    key.roles.iter().any(|r| r == role)
}

fn fingerprint_of(public_key: &str) -> Result<String> {
    keys::parse_public_key(public_key)
        .map(|k| keys::fingerprint(&k))
        .map_err(|e| ClientError::UntrustedKey(format!("the log names a bad key: {e}")))
}

/// Verifies `events` (a whole log, or a tail of one) against `pin`: the part
/// at or before the pin must hold the pinned hash, everything after it is
/// checked in full.
pub(crate) fn verify_against_pin(
    session_id: &str,
    pin: &ChainHead,
    events: &[Event],
    ring: &KeyRing,
) -> VerifyReport {
    let first = match events.first() {
        Some(first) => first.seq,
        None => return verify_extension(session_id, pin, events, ring),
    };
    if first == 1 {
        return verify_log_from_pin(session_id, pin, events, ring);
    }
    if first > pin.seq {
        return verify_extension(session_id, pin, events, ring);
    }
    let index = usize::try_from(pin.seq - first).unwrap_or(usize::MAX);
    match events.get(index) {
        Some(at_pin) if at_pin.seq == pin.seq && at_pin.event_hash == pin.event_hash => {
            verify_extension(session_id, pin, &events[index + 1..], ring)
        }
        found => VerifyReport::rewritten(
            pin,
            found.map(|e| e.event_hash.clone()),
            format!(
                "seq {} was pinned as {}, but the log now holds {}",
                pin.seq,
                pin.event_hash,
                found.map_or("nothing".to_owned(), |e| e.event_hash.clone())
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anp::keys::generate_signing_key;
    use serde_json::json;

    const OFFER: &str = "74c509ce62d05f538f6d8634f42cdca61bbcb2eec3daf231f15b909e451170f8";

    fn published(
        key: &anp::keys::SigningKey,
        roles: &[&str],
        approved_by: Option<&str>,
        valid_to: Option<&str>,
    ) -> DiscoveredKey {
        let public = key.verifying_key();
        DiscoveredKey {
            public_key: keys::public_key_b64(&public),
            fingerprint: keys::fingerprint(&public),
            roles: roles.iter().map(|r| r.to_string()).collect(),
            valid_from: "2026-01-01T00:00:00.000Z".into(),
            valid_to: valid_to.map(str::to_owned),
            approved_by: approved_by.map(str::to_owned),
        }
    }

    fn trusted(keys: Vec<DiscoveredKey>) -> TrustedKeys {
        TrustedKeys::from_well_known(&WellKnown {
            protocol_versions: vec!["ANP/0.1".into()],
            api_base: "/api/agent/v1".into(),
            drafts: vec![],
            platform_keys: keys,
        })
        .unwrap()
    }

    fn buyer_event(
        kind: EventKind,
        payload: serde_json::Value,
        signer: &str,
        at: &str,
    ) -> anp::Event {
        anp::Event {
            seq: 4,
            actor: Actor::Buyer,
            kind,
            payload,
            payload_hash: String::new(),
            prev_hash: String::new(),
            event_hash: String::new(),
            signature: None,
            signer: Some(signer.to_owned()),
            at: at.to_owned(),
        }
    }

    #[test]
    fn approvals_verify_only_with_the_published_approver_key() {
        let platform = generate_signing_key();
        let ada = generate_signing_key();
        let mallory = generate_signing_key();
        let keys = trusted(vec![
            published(&platform, &["events"], None, None),
            published(&ada, &["approval"], Some("ada@fabrikam.example"), None),
        ]);
        let fp = keys::fingerprint(&platform.verifying_key());
        let accept = |signer: &anp::keys::SigningKey, who: &str| {
            let approval =
                anp::approval::sign_approval(signer, OFFER, who, "2026-08-01T12:00:00.000Z");
            buyer_event(
                EventKind::Accept,
                json!({ "in_response_to": OFFER, "approval": approval }),
                &fp,
                "2026-08-01T12:00:01.000Z",
            )
        };
        assert!(keys
            .check_approvals(&[accept(&ada, "ada@fabrikam.example")])
            .unwrap());
        let forged = keys.check_approvals(&[accept(&mallory, "ada@fabrikam.example")]);
        assert!(
            matches!(forged, Err(ClientError::UntrustedKey(ref m)) if m.contains("does not verify")),
            "{forged:?}"
        );
        assert!(!keys
            .check_approvals(&[accept(&mallory, "bob@fabrikam.example")])
            .unwrap());
    }

    #[test]
    fn approval_keys_that_name_no_approver_verify_but_do_not_attribute() {
        // RFC-003 alone: one key for events and approvals, no approved_by
        // (the reference host's draft document).
        let platform = generate_signing_key();
        let mallory = generate_signing_key();
        let keys = trusted(vec![published(
            &platform,
            &["events", "approval"],
            None,
            None,
        )]);
        assert_eq!(keys.not_cross_checked(), [UNNAMED_APPROVAL_KEYS]);
        let fp = keys::fingerprint(&platform.verifying_key());
        let accept = |signer: &anp::keys::SigningKey| {
            let approval = anp::approval::sign_approval(
                signer,
                OFFER,
                "procurement@fabrikam.example",
                "2026-08-01T12:00:00.000Z",
            );
            buyer_event(
                EventKind::Accept,
                json!({ "in_response_to": OFFER, "approval": approval }),
                &fp,
                "2026-08-01T12:00:01.000Z",
            )
        };
        assert!(keys.check_approvals(&[accept(&platform)]).unwrap());
        // Signed by a key nobody publishes: not verified (and no key is
        // published for that person, so the caller refetches discovery).
        assert!(!keys.check_approvals(&[accept(&mallory)]).unwrap());
    }

    #[test]
    fn without_discovery_approvals_pass_unverified_and_the_gap_is_named() {
        let keys = TrustedKeys::without_discovery();
        assert_eq!(keys.source(), KeySource::Log);
        let check = keys.check();
        assert!(!check.cross_checked);
        assert_eq!(
            check.not_cross_checked,
            [LOG_ONLY_SIGNATURES, LOG_ONLY_APPROVALS]
        );
        let forged = anp::approval::sign_approval(
            &generate_signing_key(),
            OFFER,
            "ada@fabrikam.example",
            "2026-08-01T12:00:00.000Z",
        );
        let event =
            |payload| buyer_event(EventKind::Accept, payload, "x", "2026-08-01T12:00:01.000Z");
        assert!(keys
            .check_approvals(&[event(
                json!({ "in_response_to": OFFER, "approval": forged })
            )])
            .unwrap());
        // A malformed accept is still refused.
        let malformed = keys.check_approvals(&[event(json!({ "in_response_to": 7 }))]);
        assert!(
            matches!(malformed, Err(ClientError::InvalidPayload { .. })),
            "{malformed:?}"
        );
    }

    #[test]
    fn without_discovery_the_first_logs_buyer_key_is_adopted_and_kept() {
        let doc_naming = |key: &anp::keys::SigningKey| -> LogDocument {
            let public = key.verifying_key();
            serde_json::from_value(json!({
                "protocol": "ANP/0.1",
                "session": { "id": "s", "status": "open", "opened_at": "2026-08-01T00:00:00Z",
                             "event_count": 0, "chain_head": anp::signed::GENESIS_HASH },
                "chain": { "verified": true, "head": anp::signed::GENESIS_HASH },
                "keys": { "buyer": { "public_key": keys::public_key_b64(&public),
                                     "fingerprint": keys::fingerprint(&public) } },
                "events": []
            }))
            .unwrap()
        };
        let host = generate_signing_key();
        let other = generate_signing_key();
        let keys = TrustedKeys::without_discovery();
        let adopted = keys
            .adopt_log_buyer_key(&doc_naming(&host))
            .unwrap()
            .unwrap();
        assert!(adopted
            .ring()
            .contains(&keys::fingerprint(&host.verifying_key())));
        assert!(adopted
            .adopt_log_buyer_key(&doc_naming(&host))
            .unwrap()
            .is_none());
        let changed = adopted.adopt_log_buyer_key(&doc_naming(&other));
        assert!(
            matches!(changed, Err(ClientError::UntrustedKey(ref m)) if m.contains("earlier log named")),
            "{changed:?}"
        );
        // With discovery, a log's keys block adds nothing to trust.
        let published = trusted(vec![published(&host, &["events"], None, None)]);
        assert!(published
            .adopt_log_buyer_key(&doc_naming(&other))
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_retired_platform_key_does_not_vouch_for_later_events() {
        let platform = generate_signing_key();
        let keys = trusted(vec![published(
            &platform,
            &["events"],
            None,
            Some("2026-06-01T00:00:00.000Z"),
        )]);
        let fp = keys::fingerprint(&platform.verifying_key());
        let message = |at: &str| buyer_event(EventKind::Message, json!({ "body": "hi" }), &fp, at);
        assert!(keys
            .check_key_windows(&[message("2026-05-01T00:00:00.000Z")])
            .is_ok());
        let late = keys.check_key_windows(&[message("2026-07-01T00:00:00.000Z")]);
        assert!(
            matches!(late, Err(ClientError::UntrustedKey(_))),
            "{late:?}"
        );
        let early = keys.check_key_windows(&[message("2025-07-01T00:00:00.000Z")]);
        assert!(
            matches!(early, Err(ClientError::UntrustedKey(_))),
            "{early:?}"
        );
    }
}
