//! One running Countersign: tauri-driver on free ports, a WebDriver session
//! whose application is the real binary, and a data directory of its own.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use thirtyfour::{By, Capabilities, WebDriver, WebElement};

use crate::paths::{app_binary, artifacts_dir};
use crate::{E2eError, Result};

/// How long any one awaited condition may take before the test fails. A
/// bound on failure, not a measurement: every wait polls for a state.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The app under test. Dropping it ends the session and every process it
/// started (tauri-driver's process group).
pub struct App {
    /// The WebDriver session (public so a test can do anything a person can).
    pub driver: WebDriver,
    driver_process: Child,
    data_dir: PathBuf,
    _data_guard: Option<tempfile::TempDir>,
}

impl App {
    /// Launches the app with a new, empty data directory.
    pub async fn launch() -> Result<App> {
        App::launch_with(&[]).await
    }

    /// Launches the app on `data_dir` (kept afterwards), with extra environment.
    pub async fn launch_in(
        data_dir: &Path,
        guard: Option<tempfile::TempDir>,
        env: &[(&str, &str)],
    ) -> Result<App> {
        App::launch_binary(&app_binary()?, data_dir, guard, env).await
    }

    /// Launches a fresh data directory with extra environment (a locale, a
    /// time zone, the desktop's settings).
    pub async fn launch_with(env: &[(&str, &str)]) -> Result<App> {
        let guard = fresh_data_dir()?;
        let dir = guard.path().to_path_buf();
        App::launch_in(&dir, Some(guard), env).await
    }

    /// Launches `binary` (another build, or the installed package's) on
    /// `data_dir`, with extra environment.
    pub async fn launch_binary(
        binary: &Path,
        data_dir: &Path,
        guard: Option<tempfile::TempDir>,
        env: &[(&str, &str)],
    ) -> Result<App> {
        let binary = binary.to_path_buf();
        // Each app starts with no notifications on screen (the test's dunst
        // keeps them until clicked); without a dunst this does nothing.
        let _ = Command::new("dunstctl").arg("close-all").output();
        let port = free_port()?;
        let native_port = free_port()?;
        let log_path = artifacts_dir().join(format!("app-{port}.log"));
        let log = std::fs::File::create(&log_path).map_err(|source| E2eError::Io {
            what: format!("creating {}", log_path.display()),
            source,
        })?;
        let log_err = log.try_clone().map_err(|source| E2eError::Io {
            what: "sharing the app log".into(),
            source,
        })?;
        let mut command = Command::new(tauri_driver()?);
        command
            .args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ])
            .env("COUNTERSIGN_DATA_DIR", data_dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err);
        for (key, value) in env {
            command.env(key, value);
        }
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let driver_process = command.spawn().map_err(|source| E2eError::Io {
            what: "starting tauri-driver".into(),
            source,
        })?;
        let mut app = PartialApp {
            process: Some(driver_process),
        };
        // tauri-driver answers at once but forwards the session request to
        // WebKitWebDriver, which it starts beside itself; on a loaded machine
        // that one can still be starting ("Connection refused" in the log).
        wait_for_port(port, "tauri-driver").await?;
        wait_for_port(
            native_port,
            "WebKitWebDriver (tauri-driver's native driver)",
        )
        .await?;
        let mut caps = Capabilities::new();
        caps.set("browserName", "wry")?;
        caps.set(
            "tauri:options",
            json!({ "application": binary.display().to_string() }),
        )?;
        let driver = WebDriver::new(format!("http://127.0.0.1:{port}"), caps).await?;
        Ok(App {
            driver,
            driver_process: app.take(),
            data_dir: data_dir.to_path_buf(),
            _data_guard: guard,
        })
    }

    /// The process group of tauri-driver and everything under it.
    pub fn process_group(&self) -> u32 {
        self.driver_process.id()
    }

    /// The data directory this app was given.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Polls `check` until it returns `Some`, failing after [`PATIENCE`].
    pub async fn wait_for<T>(
        &self,
        what: &str,
        check: impl AsyncFnMut() -> Result<Option<T>>,
    ) -> Result<T> {
        self.wait_within(what, PATIENCE, check).await
    }

    /// Polls `check` until it returns `Some`, failing after `patience`.
    pub async fn wait_within<T>(
        &self,
        what: &str,
        patience: Duration,
        mut check: impl AsyncFnMut() -> Result<Option<T>>,
    ) -> Result<T> {
        let deadline = Instant::now() + patience;
        let mut last_error = None;
        loop {
            match check().await {
                Ok(Some(value)) => return Ok(value),
                Ok(None) => {}
                Err(error) => last_error = Some(error.to_string()),
            }
            if Instant::now() > deadline {
                let because = last_error
                    .map(|e| format!(" (last error: {e})"))
                    .unwrap_or_default();
                return Err(E2eError::Timeout(format!("{what}{because}")));
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// The first element with `data-testid="id"`, once it is displayed.
    pub async fn testid(&self, id: &str) -> Result<WebElement> {
        self.wait_for(&format!("[data-testid={id}] to be displayed"), async || {
            for element in self.driver.find_all(By::Testid(id)).await? {
                if element.is_displayed().await? {
                    return Ok(Some(element));
                }
            }
            Ok(None)
        })
        .await
    }

    /// Types `keys` into whatever has keyboard focus, as a person at the
    /// keyboard would (the app listens for shortcuts on the window).
    pub async fn press(&self, keys: impl Into<thirtyfour::prelude::TypingData>) -> Result<()> {
        self.driver.active_element().await?.send_keys(keys).await?;
        Ok(())
    }

    /// The `data-testid` of the element that has keyboard focus, if any.
    pub async fn focused(&self) -> Result<Option<String>> {
        Ok(self
            .driver
            .active_element()
            .await?
            .attr("data-testid")
            .await?)
    }

    /// Every element with `data-testid="id"` now (possibly none).
    pub async fn all(&self, id: &str) -> Result<Vec<WebElement>> {
        Ok(self.driver.find_all(By::Testid(id)).await?)
    }

    /// Waits until the page's visible text contains `text`.
    pub async fn wait_text(&self, text: &str) -> Result<()> {
        self.wait_for(&format!("the text {text:?} to appear"), async || {
            let body = self.driver.find(By::Tag("body")).await?.text().await?;
            Ok(body.contains(text).then_some(()))
        })
        .await
    }

    /// Clicks the element with `data-testid="id"`, once it is displayed.
    pub async fn click(&self, id: &str) -> Result<()> {
        self.testid(id).await?.click().await?;
        Ok(())
    }

    /// Runs a script in the page and returns its JSON value.
    pub async fn script(&self, source: &str, args: Vec<Value>) -> Result<Value> {
        Ok(self.driver.execute(source, args).await?.json().clone())
    }

    /// Calls one of the shell's commands the way the UI's backend module does
    /// (used only to learn facts the test then checks elsewhere, such as the
    /// sandbox host's URL).
    pub async fn invoke(&self, command: &str, args: Value) -> Result<Value> {
        let answer = self
            .driver
            .execute_async(
                "const [cmd, args, done] = arguments;\
                 window.__TAURI_INTERNALS__.invoke(cmd, args)\
                   .then(v => done({ok: v}), e => done({err: e}));",
                vec![json!(command), args],
            )
            .await?
            .json()
            .clone();
        match answer.get("ok") {
            Some(value) => Ok(value.clone()),
            None => Err(E2eError::Unexpected(format!("{command} failed: {answer}"))),
        }
    }

    /// Saves what the display shows as `artifacts/<name>.png`, taken from
    /// the X server (imagemagick's `import`), not through WebDriver: it is
    /// what a person would see, and WebKit's own snapshot hangs on some pages
    /// with the non-GPU renderer the app uses.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        let path = artifacts_dir().join(format!("{name}.png"));
        // Let the last change be painted first.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let output = tokio::process::Command::new("import")
            .args(["-window", "root"])
            .arg(&path)
            .output()
            .await
            .map_err(|source| E2eError::Io {
                what: "running imagemagick's import for a screenshot".into(),
                source,
            })?;
        if !output.status.success() {
            return Err(E2eError::Unexpected(format!(
                "import could not take a screenshot: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        Ok(path)
    }

    /// Ends the session (the app exits) and tauri-driver.
    pub async fn quit(mut self) -> Result<()> {
        let driver = self.driver.clone();
        let result = driver.quit().await;
        stop_group(&mut self.driver_process);
        result.map_err(E2eError::from)
    }
}

impl Drop for App {
    fn drop(&mut self) {
        stop_group(&mut self.driver_process);
    }
}

/// A new, empty data directory, removed when the guard drops.
pub fn fresh_data_dir() -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("countersign-e2e-")
        .tempdir()
        .map_err(|source| E2eError::Io {
            what: "creating a data directory".into(),
            source,
        })
}

/// tauri-driver until the session exists, so a failed start cleans up too.
struct PartialApp {
    process: Option<Child>,
}

impl PartialApp {
    fn take(&mut self) -> Child {
        match self.process.take() {
            Some(child) => child,
            None => unreachable!("taken once"),
        }
    }
}

impl Drop for PartialApp {
    fn drop(&mut self) {
        if let Some(child) = self.process.as_mut() {
            stop_group(child);
        }
    }
}

/// Ends the process group this harness started (tauri-driver,
/// WebKitWebDriver and the app under them), by its id.
fn stop_group(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    let group = format!("-{}", child.id());
    let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
    for _ in 0..50 {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    let _ = child.wait();
}

fn tauri_driver() -> Result<PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/bin")));
    for dir in candidates {
        let path = dir.join("tauri-driver");
        if path.is_file() {
            return Ok(path);
        }
    }
    Err(E2eError::Missing(
        "tauri-driver is not installed: run .ci/setup (cargo install tauri-driver --version 2.1.0 --locked)".into(),
    ))
}

fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|source| E2eError::Io {
        what: "finding a free port".into(),
        source,
    })?;
    let port = listener
        .local_addr()
        .map_err(|source| E2eError::Io {
            what: "finding a free port".into(),
            source,
        })?
        .port();
    Ok(port)
}

async fn wait_for_port(port: u16, who: &str) -> Result<()> {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(E2eError::Timeout(format!("{who} to listen on port {port}")))
}
