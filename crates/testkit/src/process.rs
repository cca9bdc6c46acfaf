//! Child processes that die with their owner, and loopback ports.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStdout};
use std::time::{Duration, Instant};

/// A child process killed (SIGKILL) and reaped when dropped, so a failing
/// test leaves nothing running.
pub struct KillOnDrop(pub Child);

impl KillOnDrop {
    /// The child's pid.
    pub fn id(&self) -> u32 {
        self.0.id()
    }

    /// Kills it now (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for KillOnDrop {
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
                        if let Some(addr) = line.trim().strip_prefix("listening on http://") {
                            sent = true;
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
