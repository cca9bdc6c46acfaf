//! The desktop's secret store, through the keyring ecosystem's
//! `keyring-core` and the platform's store: the Secret Service (GNOME
//! Keyring, KWallet) over D-Bus on Linux, in pure Rust (zbus), so no
//! libdbus is needed; the Keychain on macOS; the Credential Manager on
//! Windows. The item holds the key's 32-byte seed; nothing else is in it.

use std::sync::Arc;

use keyring_core::{CredentialStore, Entry};
use zeroize::Zeroizing;

/// The service name every item of this console is filed under.
pub(crate) const SERVICE: &str = "countersign";

/// A connection to the desktop's secret store.
pub(crate) struct SecretStore {
    store: Arc<CredentialStore>,
    /// What people call it ("Secret Service").
    pub name: &'static str,
}

impl std::fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretStore")
            .field("name", &self.name)
            .finish()
    }
}

impl SecretStore {
    /// Connects to the platform's store; `Err` says why none answers
    /// (no D-Bus session, no Secret Service on it).
    pub(crate) fn connect() -> Result<SecretStore, String> {
        connect_platform()
    }

    fn entry(&self, account: &str) -> Result<Entry, String> {
        Entry::new_in_store(&self.store, SERVICE, account).map_err(|e| e.to_string())
    }

    /// Files `seed` under `account`, replacing what was there.
    pub(crate) fn put(&self, account: &str, seed: &[u8; 32]) -> Result<(), String> {
        self.entry(account)?
            .set_secret(seed)
            .map_err(|e| e.to_string())
    }

    /// Deletes the item under `account` (a retired key); none there is fine.
    pub(crate) fn delete(&self, account: &str) -> Result<(), String> {
        match self.entry(account)?.delete_credential() {
            Ok(()) | Err(keyring_core::Error::NoEntry) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The seed filed under `account`; `Ok(None)` when there is none.
    pub(crate) fn get(&self, account: &str) -> Result<Option<Zeroizing<[u8; 32]>>, String> {
        match self.entry(account)?.get_secret() {
            Ok(bytes) => {
                let bytes = Zeroizing::new(bytes);
                let seed: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
                    format!("the item holds {} bytes, not a 32-byte key", bytes.len())
                })?;
                Ok(Some(Zeroizing::new(seed)))
            }
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
fn connect_platform() -> Result<SecretStore, String> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return Err("there is no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)".into());
    }
    let store = zbus_secret_service_keyring_store::Store::new().map_err(|e| e.to_string())?;
    Ok(SecretStore {
        store,
        name: "the desktop's Secret Service",
    })
}

#[cfg(target_os = "macos")]
fn connect_platform() -> Result<SecretStore, String> {
    let store = apple_native_keyring_store::keychain::Store::new().map_err(|e| e.to_string())?;
    Ok(SecretStore {
        store,
        name: "the macOS Keychain",
    })
}

#[cfg(windows)]
fn connect_platform() -> Result<SecretStore, String> {
    let store = windows_native_keyring_store::Store::new().map_err(|e| e.to_string())?;
    Ok(SecretStore {
        store,
        name: "the Windows Credential Manager",
    })
}
