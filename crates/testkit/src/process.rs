//! Child processes that die with their owner (even a killed one), and
//! loopback ports.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process in a process group of its own, killed with its whole
/// group (SIGKILL) when dropped, so a failing test leaves nothing running.
/// A watchdog shell also holds a pipe only this process writes to: if this
/// process dies without dropping it (`kill -9`, an abort), the pipe closes
/// and the watchdog stops the child (SIGTERM, then SIGKILL: nginx's master
/// takes its workers down on SIGTERM) and removes `cleanup`, if given.
pub struct Guarded {
    child: Child,
    watchdog: Option<(Child, ChildStdin)>,
}

const WATCHDOG: &str = r#"
trap '' INT TERM HUP
cat >/dev/null
kill -TERM "$1" 2>/dev/null
sleep 0.5
kill -KILL "$1" 2>/dev/null
if [ -n "$2" ]; then rm -rf "$2"; fi
"#;

fn signal_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

impl Guarded {
    /// Spawns `command` in its own process group, with its watchdog.
    pub fn spawn(command: &mut Command, cleanup: Option<&Path>) -> Result<Guarded, String> {
        use std::os::unix::process::CommandExt as _;
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command
            .process_group(0)
            .spawn()
            .map_err(|e| format!("starting {program}: {e}"))?;
        let mut watchdog = Command::new("sh")
            .process_group(0)
            .args(["-c", WATCHDOG, "watchdog"])
            .arg(child.id().to_string())
            .arg(
                cleanup
                    .map(|p| p.as_os_str().to_owned())
                    .unwrap_or_default(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting the watchdog of {program}: {e}"))?;
        let pipe = watchdog
            .stdin
            .take()
            .ok_or_else(|| "the watchdog has no stdin".to_owned())?;
        Ok(Guarded {
            child,
            watchdog: Some((watchdog, pipe)),
        })
    }

    /// The child's pid (also its process group's id).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The child, to take its stdout.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Asks the group to stop (SIGTERM), waits up to `grace` for the child,
    /// then kills whatever is left (SIGKILL).
    pub fn stop(&mut self, grace: Duration) {
        self.disarm();
        signal_group(self.id(), "-TERM");
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
    }

    /// Kills the group now (SIGKILL), as a crash would, and reaps the child.
    pub fn kill(&mut self) {
        self.disarm();
        signal_group(self.id(), "-KILL");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Ends the watchdog first, so it can never signal a reused group id.
    fn disarm(&mut self) {
        if let Some((mut watchdog, pipe)) = self.watchdog.take() {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
            drop(pipe);
        }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("binding a loopback port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Reads the child's stdout until a line `listening on http://ADDR` (what
/// `countersign-host serve` prints first), within `timeout`; the rest of
/// its output is drained in the background so the child never blocks.
pub fn listening_addr(stdout: ChildStdout, timeout: Duration) -> Result<SocketAddr, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut sent = false;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if !sent {
                        // A test binary prints its own words first on the line.
                        if let Some((_, rest)) = line.split_once("listening on http://") {
                            sent = true;
                            let addr = rest.split_whitespace().next().unwrap_or_default();
                            let _ = tx.send(addr.to_owned());
                        }
                    }
                }
            }
        }
    });
    let deadline = Instant::now() + timeout;
    let addr = rx
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .map_err(|_| {
            "the host process did not print `listening on http://ADDR` in time".to_owned()
        })?;
    addr.parse()
        .map_err(|e| format!("the host process printed an unreadable address {addr:?}: {e}"))
}

/// Waits until something accepts TCP connections at `addr`.
pub fn wait_for_port(addr: SocketAddr, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("nothing accepted connections at {addr} in time"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
