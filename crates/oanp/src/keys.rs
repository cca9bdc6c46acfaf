//! The arbiter keys a receipt's signer must be: the three Valyzen publishes,
//! pinned by kid *and* public key, and any a person adds.
//!
//! The key a receipt is checked with travels inside the receipt, so a forger
//! simply embeds their own, under any kid they like (Valyzen's too). What
//! makes a receipt the arbiter's is that the embedded key for its kid is,
//! as text, the `x` pinned here for that kid.

use std::collections::BTreeMap;

use serde::Serialize;

/// Whether a key signs real agreements or sandbox ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Real agreements.
    Live,
    /// Sandbox agreements: test keys are free to anyone, so these are proof
    /// only when a person allows test receipts.
    Test,
}

impl Mode {
    /// `live` or `test`, as the publisher writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Live => "live",
            Mode::Test => "test",
        }
    }
}

/// One pinned arbiter key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PinnedKey {
    /// The JWS `kid` it signs under.
    pub kid: String,
    /// Its Ed25519 public key, unpadded base64url, compared as text.
    pub x: String,
    /// Who holds it, for a person (`the Valyzen arbiter`).
    pub label: String,
    /// Live or test.
    pub mode: Mode,
}

/// The arbiter keys Valyzen publishes (RECEIPTS.md; the SDK's `ARBITER_KEYS`):
/// `(kid, x, label, mode)`.
pub const PUBLISHED: [(&str, &str, &str, Mode); 3] = [
    (
        "ed25519-28860223a6941457",
        "wd270_PgIwLChz_kk9_wHgG26cb70_muCjnbN8WrkeE",
        "the Valyzen arbiter",
        Mode::Live,
    ),
    (
        "ed25519-0190292b036517a6",
        "4xj3LRerKGkc3sRyYORRE3mJRiyNIEePDEp25XMfkjE",
        "the Valyzen arbiter",
        Mode::Test,
    ),
    (
        "ed25519-2f3286feb69fb953",
        "Er_WT_nxhGzA8212gQp8dCBwvQRC4TmT1s8n185Znyg",
        "the Valyzen development arbiter",
        Mode::Test,
    ),
];

/// Why a key could not be pinned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// The kid is already pinned (to this or another key): a pin never replaces one.
    #[error("the kid {kid:?} is already pinned, as {label}")]
    KidTaken {
        /// The kid.
        kid: String,
        /// Who the existing pin names.
        label: String,
    },
    /// The kid is empty.
    #[error("a pinned key needs a kid")]
    NoKid,
    /// `x` is not the unpadded base64url of 32 bytes encoding a point.
    #[error(
        "the key for {kid:?} is not an Ed25519 public key (a point, 32 bytes, unpadded base64url)"
    )]
    NotEd25519 {
        /// The kid.
        kid: String,
    },
    /// `x` is a point of small order, under which a signature verifies for
    /// any message (RFC 8032's check does not refuse it).
    #[error(
        "the key for {kid:?} is a small-order point: a signature under it verifies for any message"
    )]
    WeakKey {
        /// The kid.
        kid: String,
    },
    /// The label is empty: a person must be able to tell who signed.
    #[error("the key for {kid:?} needs a label saying whose it is")]
    NoLabel {
        /// The kid.
        kid: String,
    },
}

/// The keys a receipt's signer is checked against, by kid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedKeys {
    by_kid: BTreeMap<String, PinnedKey>,
}

impl PinnedKeys {
    /// Valyzen's three published keys.
    pub fn published() -> Self {
        let by_kid = PUBLISHED
            .iter()
            .map(|(kid, x, label, mode)| {
                let key = PinnedKey {
                    kid: (*kid).to_owned(),
                    x: (*x).to_owned(),
                    label: (*label).to_owned(),
                    mode: *mode,
                };
                (key.kid.clone(), key)
            })
            .collect();
        Self { by_kid }
    }

    /// No keys at all (a person who trusts only the keys they pin).
    pub fn none() -> Self {
        Self {
            by_kid: BTreeMap::new(),
        }
    }

    /// Adds a person's key; a kid already pinned is refused, never replaced.
    pub fn pin(&mut self, key: PinnedKey) -> Result<(), PinError> {
        if key.kid.is_empty() {
            return Err(PinError::NoKid);
        }
        if let Some(existing) = self.by_kid.get(&key.kid) {
            return Err(PinError::KidTaken {
                kid: key.kid,
                label: existing.label.clone(),
            });
        }
        let point = jcs::b64url::decode(&key.x)
            .ok()
            .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
            .and_then(|bytes| ed25519_dalek::VerifyingKey::from_bytes(&bytes).ok());
        match point {
            None => return Err(PinError::NotEd25519 { kid: key.kid }),
            Some(point) if point.is_weak() => return Err(PinError::WeakKey { kid: key.kid }),
            Some(_) => {}
        }
        if key.label.trim().is_empty() {
            return Err(PinError::NoLabel { kid: key.kid });
        }
        self.by_kid.insert(key.kid.clone(), key);
        Ok(())
    }

    /// The key pinned under `kid`.
    pub fn get(&self, kid: &str) -> Option<&PinnedKey> {
        self.by_kid.get(kid)
    }

    /// Every pinned key, by kid.
    pub fn iter(&self) -> impl Iterator<Item = &PinnedKey> {
        self.by_kid.values()
    }
}

impl Default for PinnedKeys {
    /// The published keys.
    fn default() -> Self {
        Self::published()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mine(kid: &str, x: &str, label: &str) -> PinnedKey {
        PinnedKey {
            kid: kid.to_owned(),
            x: x.to_owned(),
            label: label.to_owned(),
            mode: Mode::Live,
        }
    }

    /// RFC 8032 §7.1, test 1: a public key every Ed25519 reader knows.
    const X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";

    #[test]
    fn the_three_published_keys_with_their_modes() {
        let keys = PinnedKeys::published();
        assert_eq!(keys.iter().count(), 3);
        let live = keys.get("ed25519-28860223a6941457").unwrap();
        assert_eq!(
            (live.mode, live.label.as_str()),
            (Mode::Live, "the Valyzen arbiter")
        );
        assert_eq!(
            keys.get("ed25519-0190292b036517a6").unwrap().mode,
            Mode::Test
        );
        let dev = keys.get("ed25519-2f3286feb69fb953").unwrap();
        assert_eq!(dev.x, "Er_WT_nxhGzA8212gQp8dCBwvQRC4TmT1s8n185Znyg");
        assert_eq!(dev.mode, Mode::Test);
    }

    #[test]
    fn a_person_pins_more_but_never_replaces_a_pin() {
        let mut keys = PinnedKeys::published();
        keys.pin(mine("ed25519-staging", X, "our staging arbiter"))
            .unwrap();
        assert_eq!(
            keys.get("ed25519-staging").unwrap().label,
            "our staging arbiter"
        );
        let taken = keys
            .pin(mine("ed25519-28860223a6941457", X, "not Valyzen"))
            .unwrap_err();
        assert_eq!(
            taken.to_string(),
            "the kid \"ed25519-28860223a6941457\" is already pinned, as the Valyzen arbiter"
        );
        assert_eq!(
            keys.get("ed25519-28860223a6941457").unwrap().mode,
            Mode::Live
        );
    }

    #[test]
    fn a_pin_must_be_an_ed25519_key_with_a_kid_and_a_label() {
        let mut keys = PinnedKeys::none();
        assert_eq!(keys.pin(mine("", X, "l")), Err(PinError::NoKid));
        for bad in [
            "",
            "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHUR",
            "11qY+YKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
            "AAAA",
        ] {
            assert!(
                matches!(
                    keys.pin(mine("k", bad, "l")),
                    Err(PinError::NotEd25519 { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            keys.pin(mine("k", X, "  ")),
            Err(PinError::NoLabel { .. })
        ));
        // The identity point: a signature with R the identity and S zero
        // verifies under it for any message.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let weak = keys.pin(mine("k", &jcs::b64url::encode(&identity), "l"));
        assert!(matches!(weak, Err(PinError::WeakKey { .. })), "{weak:?}");
        assert_eq!(keys.iter().count(), 0);
    }
}
