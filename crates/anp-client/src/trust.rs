//! Which keys a vendor agent trusts, and verification against a pinned head.
//!
//! A log document names its own keys, but that block is the host's claim. The
//! client trusts only its own key and the platform keys the host publishes in
//! `/.well-known/anp.json` (fetched separately from any log), and refuses a log
//! whose `keys` block disagrees with them.

use std::collections::HashSet;

use anp::api::{self, DiscoveredKey, WellKnown};
use anp::chain::Rewrite;
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

/// The keys a client verifies event signatures with.
#[derive(Debug, Clone)]
pub struct TrustedKeys {
    ring: KeyRing,
    platform: HashSet<String>,
    own: Option<String>,
    published: Vec<DiscoveredKey>,
}

impl TrustedKeys {
    /// The platform keys (role `events`) of a discovery document. A published
    /// key whose fingerprint does not match its key is refused.
    pub fn from_well_known(doc: &WellKnown) -> Result<TrustedKeys> {
        let mut ring = KeyRing::new();
        let mut platform = HashSet::new();
        for published in doc
            .platform_keys
            .iter()
            .filter(|k| k.roles.iter().any(|r| r == EVENTS_ROLE))
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
        })
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

    /// RFC-002: every approval in a buyer `accept` must verify against the
    /// approval key the host publishes for that `approved_by`. Returns
    /// `Ok(false)` when an approver's key is not in this discovery document
    /// (it may be newer than our copy), `Err` when an approval is forged.
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
            for approval in payload.all_approvals() {
                let Some(published) = self.published.iter().find(|k| {
                    k.roles.iter().any(|r| r == APPROVAL_ROLE)
                        && k.approved_by.as_deref() == Some(approval.approved_by.as_str())
                }) else {
                    return Ok(false);
                };
                let key = keys::parse_public_key(&published.public_key).map_err(|e| {
                    ClientError::UntrustedKey(format!(
                        "approval key of {}: {e}",
                        approval.approved_by
                    ))
                })?;
                anp::approval::verify_approval(approval, &payload.in_response_to, &key).map_err(
                    |e| {
                        ClientError::UntrustedKey(format!(
                        "the accept (event {}) carries an approval by {} that does not verify: {e}",
                        event.seq, approval.approved_by
                    ))
                    },
                )?;
            }
        }
        Ok(true)
    }
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
        found => rewritten(
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

/// A report saying the host's answer contradicts the pinned head.
pub(crate) fn rewritten(pin: &ChainHead, found: Option<String>, detail: String) -> VerifyReport {
    VerifyReport {
        ok: false,
        failing: Vec::new(),
        unproven: Vec::new(),
        rewrite: Some(Rewrite {
            pinned: pin.clone(),
            found,
            detail,
        }),
        head: pin.clone(),
        events_checked: 0,
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
