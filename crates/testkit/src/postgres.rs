//! A PostgreSQL cluster of the test's own: `initdb` into a temporary
//! directory, `postgres` on a free loopback port with its socket in that
//! directory, trust authentication for one superuser, `countersign`.
//! Durability is PostgreSQL's default (`fsync = on`,
//! `synchronous_commit = on`).
//!
//! Cleanup does not depend on `Drop` (a shared cluster lives in a static,
//! which is never dropped, and a killed test runs no destructor): a small
//! watchdog shell holds the read end of a pipe whose write end only this
//! process has; when this process exits for any reason the pipe closes, and
//! the watchdog stops postgres (immediate shutdown: the data is throwaway) and removes the directory.

use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What to do when the binaries are missing.
const SETUP_HINT: &str =
    "run `bash .ci/setup` (it installs PostgreSQL and nginx from Debian's packages)";

/// The directory holding Debian's `initdb`, `postgres` and `pg_isready`
/// (`/usr/lib/postgresql/<version>/bin`, the highest version found).
pub fn bin_dir() -> Result<PathBuf, String> {
    let root = Path::new("/usr/lib/postgresql");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            ["initdb", "postgres", "pg_isready"]
                .iter()
                .all(|b| bin.join(b).is_file())
                .then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        format!("PostgreSQL's binaries (initdb, postgres, pg_isready) are missing under /usr/lib/postgresql/*/bin: {SETUP_HINT}")
    })
}

/// postgres refuses to run as root: as root, its processes run as the
/// `postgres` user Debian's package creates.
fn run_as() -> Result<Option<(u32, u32)>, String> {
    // The effective user, as `id -u` reports it.
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| format!("running id -u: {e}"))?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Ok(None);
    }
    let passwd =
        std::fs::read_to_string("/etc/passwd").map_err(|e| format!("reading /etc/passwd: {e}"))?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"postgres") && fields.len() > 3)
                .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
                .flatten()
        })
        .map(Some)
        .ok_or_else(|| {
            format!("running as root, PostgreSQL needs the `postgres` user: {SETUP_HINT}")
        })
}

fn as_user(command: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        use std::os::unix::process::CommandExt as _;
        command.uid(uid).gid(gid);
    }
    command
}

/// A running cluster; stopped and removed when dropped or when this
/// process exits.
pub struct Cluster {
    port: u16,
    dir: PathBuf,
    bin: PathBuf,
    watchdog: Mutex<Option<(std::process::Child, ChildStdin)>>,
}

const WATCHDOG: &str = r#"
trap '' INT TERM HUP
cat >/dev/null
kill -QUIT "$1" 2>/dev/null
i=0
while kill -0 "$1" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i+1)); done
kill -KILL "$1" 2>/dev/null
rm -rf "$2"
"#;

impl Cluster {
    /// Initializes and starts a cluster (a second or two).
    pub fn start() -> Result<Cluster, String> {
        let bin = bin_dir()?;
        let user = run_as()?;
        let dir = tempfile::Builder::new()
            .prefix("countersign-pg-")
            .tempdir()
            .map_err(|e| format!("creating a temporary directory: {e}"))?
            .keep();
        let fail = |message: String| {
            let _ = std::fs::remove_dir_all(&dir);
            message
        };
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).map_err(|e| {
                fail(format!(
                    "handing {} to the postgres user: {e}",
                    dir.display()
                ))
            })?;
        }
        let data = dir.join("data");
        let out = as_user(&mut Command::new(bin.join("initdb")), user)
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "countersign",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .output()
            .map_err(|e| fail(format!("running initdb: {e}")))?;
        if !out.status.success() {
            return Err(fail(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let port = crate::process::free_port().map_err(fail)?;
        let log = std::fs::File::create(dir.join("postgres.log"))
            .map_err(|e| fail(format!("creating the server log: {e}")))?;
        use std::os::unix::process::CommandExt as _;
        let server = as_user(&mut Command::new(bin.join("postgres")), user)
            .process_group(0)
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(&dir)
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "max_connections=400",
                "-c",
                "synchronous_commit=on",
                "-c",
                "fsync=on",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| fail(format!("starting postgres: {e}")))?;
        let mut watchdog = Command::new("sh")
            .process_group(0)
            .args(["-c", WATCHDOG, "watchdog"])
            .arg(server.id().to_string())
            .arg(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| fail(format!("starting the cluster's watchdog: {e}")))?;
        let pipe = watchdog
            .stdin
            .take()
            .ok_or_else(|| "the watchdog has no stdin".to_owned())?;
        let cluster = Cluster {
            port,
            dir,
            bin,
            watchdog: Mutex::new(Some((watchdog, pipe))),
        };
        cluster.wait_ready(Duration::from_secs(30))?;
        Ok(cluster)
    }

    /// The cluster every test of this process shares (started on first use).
    pub fn shared() -> Result<&'static Cluster, String> {
        static SHARED: OnceLock<Result<Cluster, String>> = OnceLock::new();
        SHARED
            .get_or_init(Cluster::start)
            .as_ref()
            .map_err(Clone::clone)
    }

    fn wait_ready(&self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ready {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let log =
                    std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default();
                return Err(format!(
                    "postgres did not become ready in time; its log:\n{log}"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Its directory (data, socket, log), removed when it stops.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` in this cluster.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://countersign@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates a fresh, empty database and answers its URL.
    pub async fn fresh_database(&self) -> Result<String, String> {
        let name = format!("t_{}", uuid::Uuid::new_v4().simple());
        let (client, connection) =
            tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls)
                .await
                .map_err(|e| format!("connecting to the test cluster: {e}"))?;
        let task = tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .map_err(|e| format!("creating database {name}: {e}"))?;
        drop(client);
        let _ = task.await;
        Ok(self.url(&name))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.watchdog.lock() {
            if let Some((mut child, pipe)) = guard.take() {
                drop(pipe);
                let _ = child.wait();
            }
        }
    }
}
