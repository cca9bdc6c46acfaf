//! Which keys a vendor agent trusts, and verification against a pinned head.
//!
//! A log document names its own keys, but that block is the host's claim. The
//! client trusts only its own key and the platform keys the host publishes in
//! `/.well-known/anp.json` (fetched separately from any log), and refuses a log
//! whose `keys` block disagrees with them.

use std::collections::HashSet;

use anp::api::WellKnown;
use anp::chain::Rewrite;
use anp::keys::{self, VerifyingKey};
use anp::{
    verify_extension, verify_log_from_pin, ChainHead, Event, KeyRing, LogDocument, VerifyReport,
};

use crate::error::ClientError;
use crate::Result;

/// The role a discovery key must carry to sign buyer events.
const EVENTS_ROLE: &str = "events";

/// The keys a client verifies event signatures with.
#[derive(Debug, Clone)]
pub struct TrustedKeys {
    ring: KeyRing,
    platform: HashSet<String>,
    own: Option<String>,
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
