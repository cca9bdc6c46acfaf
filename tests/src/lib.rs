//! The end-to-end harness: launches the real `countersign` binary through
//! tauri-driver (WebKitWebDriver underneath) with a fresh data directory,
//! drives it like a person, takes screenshots into `artifacts/`, and reads
//! hosts over HTTP like an outsider. Used by `tests/e2e.rs`, run by
//! `tests/e2e.sh` inside its own X server and D-Bus session.

pub mod app;
pub mod outsider;
pub mod paths;
pub mod procs;
pub mod rewrite;

pub use app::App;

/// What can go wrong while driving the app, each naming what was awaited.
#[derive(Debug, thiserror::Error)]
pub enum E2eError {
    /// A file or process could not be used.
    #[error("{what}: {source}")]
    Io {
        /// What was attempted.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The WebDriver protocol failed.
    #[error("WebDriver: {0}")]
    WebDriver(#[from] thirtyfour::error::WebDriverError),
    /// An HTTP read of a host failed.
    #[error("HTTP: {0}")]
    Http(#[from] reqwest::Error),
    /// A condition did not hold within its deadline.
    #[error("gave up waiting for {0}")]
    Timeout(String),
    /// Something the test needs is missing from this machine.
    #[error("{0}")]
    Missing(String),
    /// The app or a host answered something unexpected.
    #[error("{0}")]
    Unexpected(String),
}

/// The harness's result type.
pub type Result<T> = std::result::Result<T, E2eError>;
