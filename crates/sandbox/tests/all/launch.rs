//! An engine with the sandbox beside it, started and stopped in the order
//! the shell uses (`src-tauri`): the sandbox first, then the engine's poller.

use std::ops::Deref;
use std::time::Duration;

use countersign_engine::{Engine, EngineConfig};
use countersign_sandbox::Sandbox;

/// The passphrase the sandbox tests seal their approver keys with.
pub const TEST_PASSPHRASE: &str = "a passphrase only the tests use";

/// A config in `dir` whose approver key is sealed with [`TEST_PASSPHRASE`],
/// given up front: no test asks the machine's secret store, and none types.
pub fn config_in(dir: impl Into<std::path::PathBuf>) -> EngineConfig {
    let mut config = EngineConfig::new(dir.into());
    config.key_store = countersign_engine::KeyStoreChoice::Passphrase;
    config.key_passphrase = Some(TEST_PASSPHRASE.to_owned());
    config
}

/// An engine on `dir` with the default (auto) sandbox, polling quickly.
pub fn sandbox_engine(dir: &std::path::Path) -> Engine {
    let mut config = config_in(dir);
    config.poll_interval = Duration::from_millis(300);
    Engine::open(config).unwrap()
}

/// A started engine and the sandbox it wanted (if any); reads as the engine.
pub struct Launched {
    engine: Engine,
    sandbox: tokio::sync::Mutex<Option<Sandbox>>,
}

impl Deref for Launched {
    type Target = Engine;

    fn deref(&self) -> &Engine {
        &self.engine
    }
}

impl Launched {
    /// Stops the engine, then the sandbox, as the shell does on exit.
    pub async fn shutdown(&self) {
        self.engine.shutdown().await;
        if let Some(sandbox) = self.sandbox.lock().await.take() {
            sandbox.shutdown().await;
        }
    }
}

/// Starts the sandbox beside `engine` when it wants one, then the engine.
pub async fn launch(engine: Engine) -> Launched {
    let sandbox = countersign_sandbox::start(&engine).await.unwrap();
    engine.start().await.unwrap();
    Launched {
        engine,
        sandbox: tokio::sync::Mutex::new(sandbox),
    }
}

#[tokio::test]
async fn an_engine_whose_config_turns_the_sandbox_off_gets_none() {
    let data = tempfile::tempdir().unwrap();
    let mut config = config_in(data.path());
    config.sandbox = countersign_engine::SandboxMode::Off;
    let engine = Engine::open(config).unwrap();
    assert!(!engine.wants_sandbox().unwrap());
    let sandbox = countersign_sandbox::start(&engine).await.unwrap();
    assert!(sandbox.is_none());
    // Nothing was started or enrolled, and no sandbox folder was made.
    assert!(engine.hosts().await.unwrap().is_empty());
    assert!(engine.receipts().await.unwrap().receipts.is_empty());
    assert!(!data.path().join("sandbox").exists());
}
