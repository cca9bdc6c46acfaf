//! The key in a real Secret Service: `gnome-keyring-daemon` on a private
//! D-Bus session of this test's own (`dbus-run-session`), and the
//! passphrase path where no secret store answers. One test, in order,
//! because the session bus's address is the process's environment.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use countersign_engine::*;

use crate::key::assert_seed_in_no_file;

/// A private session bus with an unlocked gnome-keyring on it (a login
/// password creates its default collection; with none it has none); stopped
/// (the whole process group) when dropped.
struct Keyring {
    child: Child,
    address: String,
    _home: tempfile::TempDir,
}

impl Keyring {
    fn start() -> Keyring {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new("dbus-run-session")
            .args([
                "--",
                "sh",
                "-c",
                "echo \"$DBUS_SESSION_BUS_ADDRESS\"; printf 'login password of this test keyring' | exec gnome-keyring-daemon --unlock --components=secrets --foreground",
            ])
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("XDG_RUNTIME_DIR", home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("dbus-run-session and gnome-keyring-daemon are installed by .ci/setup");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line.trim().to_owned();
        assert!(address.starts_with("unix:"), "no bus address: {line:?}");
        Keyring {
            child,
            address,
            _home: home,
        }
    }

    /// Waits until the keyring owns its name on the bus (the daemon takes
    /// a moment to start), by asking the bus, not by sleeping a fixed time.
    fn wait_ready(&self) {
        for _ in 0..200 {
            let names = Command::new("dbus-send")
                .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
                .args([
                    "--session",
                    "--dest=org.freedesktop.DBus",
                    "--type=method_call",
                    "--print-reply",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.ListNames",
                ])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&names.stdout).contains("org.freedesktop.secrets") {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("gnome-keyring-daemon never took org.freedesktop.secrets");
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

fn config(dir: &std::path::Path) -> EngineConfig {
    let mut config = EngineConfig::new(dir.to_owned());
    config.sandbox = SandboxMode::Off;
    config.key_store = KeyStoreChoice::Auto;
    config.key_passphrase = None;
    config
}

#[test]
fn the_key_lives_in_a_real_secret_service_and_in_a_sealed_file_where_none_answers() {
    // No session bus: the passphrase path, the key kept nowhere yet.
    std::env::remove_var("DBUS_SESSION_BUS_ADDRESS");
    let bare = tempfile::tempdir().unwrap();
    let engine = Engine::open(config(bare.path())).unwrap();
    let status = engine.key_status();
    assert_eq!(status.protection, KeyProtection::Unsaved);
    assert!(
        status
            .advice
            .unwrap()
            .contains("No desktop secret store answered"),
        "says why"
    );
    drop(engine);

    let keyring = Keyring::start();
    keyring.wait_ready();
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &keyring.address);

    // An earlier build's plain key moves into the Secret Service on the
    // first start, and the plain file is removed.
    let data = tempfile::tempdir().unwrap();
    let key = anp::keys::generate_signing_key();
    std::fs::write(
        data.path().join("approver-key.json"),
        anp::keys::encode_key_file(&key),
    )
    .unwrap();
    let engine = Engine::open(config(data.path())).unwrap();
    let status = engine.key_status();
    assert_eq!(
        status.protection,
        KeyProtection::SecretStore,
        "{:?}",
        status.advice
    );
    assert!(status.unlocked);
    assert!(status.notice.unwrap().contains("secret store"));
    assert!(
        status.location.contains("Secret Service"),
        "{}",
        status.location
    );
    assert!(!data.path().join("approver-key.json").exists());
    assert_eq!(
        engine.approver_public_key(),
        anp::keys::public_key_b64(&key.verifying_key())
    );
    drop(engine);
    assert_seed_in_no_file(data.path(), &key.to_bytes());

    // The next start reads it back from the store, unlocked; a lock and an
    // unlock ask the store again.
    let engine = Engine::open(config(data.path())).unwrap();
    assert_eq!(
        engine.approver_public_key(),
        anp::keys::public_key_b64(&key.verifying_key())
    );
    assert!(engine.key_status().unlocked);
    assert!(!engine.lock_key().unlocked);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let unlocked = runtime.block_on(engine.unlock_key(None)).unwrap();
    assert!(unlocked.unlocked);

    // Moving to a new key files it in the store and, with no host left
    // knowing the old one, deletes the old key's item.
    let old_fp = engine.key_status().fingerprint;
    let reference = data.path().join("approver-key.ref.json");
    let naming_old = std::fs::read_to_string(&reference).unwrap();
    let moved = runtime.block_on(engine.move_to_new_key(None)).unwrap();
    assert!(moved.finished && moved.hosts.is_empty(), "{moved:?}");
    let status = engine.key_status();
    assert_ne!(status.fingerprint, old_fp);
    assert_eq!(status.protection, KeyProtection::SecretStore);
    assert_eq!(status.moving_from, None);
    drop(engine);
    let engine = Engine::open(config(data.path())).unwrap();
    let reread = engine.key_status();
    assert_eq!(
        reread.fingerprint, status.fingerprint,
        "the new key is read back"
    );
    assert!(reread.unlocked);
    drop(engine);
    assert_seed_in_no_file(data.path(), &key.to_bytes());
    // The old key's item is gone: a reference naming it finds nothing.
    let naming_new = std::fs::read_to_string(&reference).unwrap();
    std::fs::write(&reference, &naming_old).unwrap();
    let engine = Engine::open(config(data.path())).unwrap();
    let status = engine.key_status();
    assert!(!status.loaded, "the retired key is still in the store");
    assert!(
        status.advice.unwrap().contains("no longer holds"),
        "says why"
    );
    drop(engine);
    std::fs::write(&reference, &naming_new).unwrap();
    let engine = Engine::open(config(data.path())).unwrap();
    drop(engine);

    // With the keyring gone, the key is not found in the clear anywhere:
    // the console says the store did not answer and signs nothing.
    drop(keyring);
    let engine = Engine::open(config(data.path())).unwrap();
    let status = engine.key_status();
    assert!(!status.loaded && !status.unlocked);
    assert!(
        status
            .advice
            .unwrap()
            .contains("secret store did not answer"),
        "says why"
    );
    std::env::remove_var("DBUS_SESSION_BUS_ADDRESS");
}
