//! A whole deployment on one machine: a fresh database in a PostgreSQL
//! cluster, N host processes serving it, nginx in front, and an admin
//! handle (a `Host` opened on the same database, not serving) for what an
//! admin does with the CLI.
//!
//! Host processes are either the real `countersign-host` binary (the host's
//! own tests know its path) or the calling test binary itself, re-run on
//! one ignored test that calls [`serve_from_env`]: the same `Host::open` and
//! `serve` the binary runs, in a process of its own.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use countersign_host::{Host, HostConfig, Limit, Limits, Target};

use crate::nginx::Nginx;
use crate::postgres::Cluster;
use crate::process::{free_port, listening_addr, Guarded};

/// The database a re-run test binary serves.
pub const ENV_DB: &str = "COUNTERSIGN_TESTKIT_HOST_DB";
/// Its platform key file.
pub const ENV_KEY: &str = "COUNTERSIGN_TESTKIT_HOST_KEY";
/// The URL its clients reach it at (nginx's): its `--public-url`.
pub const ENV_PUBLIC_URL: &str = "COUNTERSIGN_TESTKIT_HOST_PUBLIC_URL";
/// `false` to refuse version 1 signatures (`--accept-v1-signatures false`).
pub const ENV_ACCEPT_V1: &str = "COUNTERSIGN_TESTKIT_HOST_ACCEPT_V1";
/// Its PostgreSQL connections (`--db-connections`).
pub const ENV_DB_CONNECTIONS: &str = "COUNTERSIGN_TESTKIT_HOST_DB_CONNECTIONS";

/// The connections each of `processes` host processes on one database
/// keeps, as the host's README deploys them: about 24 in all, 4 to 16 each
/// (16 for one, 8 each for three).
pub fn db_connections_each(processes: usize) -> usize {
    (24 / processes.max(1)).clamp(4, 16)
}

/// How host processes are started.
#[derive(Debug, Clone)]
pub enum Launch {
    /// The `countersign-host` binary at this path.
    Binary(PathBuf),
    /// This test binary, running only the named ignored test, which must
    /// call [`serve_from_env`].
    ThisTest(String),
    /// This binary with these arguments, which must make it call
    /// [`serve_from_env`] (the load generator's hidden host mode).
    ThisBinary(Vec<String>),
}

/// Rate limits high enough not to throttle a test's load (every client of
/// a deployment reaches the hosts from nginx's address).
pub fn roomy_limits() -> Limits {
    let roomy = Limit {
        max: 1_000_000_000,
        window: Duration::from_secs(60),
    };
    Limits {
        per_ip: roomy,
        per_agent: roomy,
        per_session: roomy,
        registration: roomy,
        ..Limits::default()
    }
}

/// One host process.
pub struct HostProcess {
    /// The process (killed when dropped).
    pub child: Guarded,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl HostProcess {
    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// A running deployment; everything stops when it is dropped.
pub struct Deployment {
    /// The database every process serves.
    pub db_url: String,
    /// The platform key file every process loads (mode 0600).
    pub key_path: PathBuf,
    /// A `Host` on the same database, not serving: the admin's handle.
    pub admin: Host,
    /// The host processes, in the order nginx lists them.
    pub hosts: Vec<HostProcess>,
    /// nginx in front of them.
    pub nginx: Nginx,
    launch: Launch,
    serve_flags: Vec<(String, String)>,
    serving: Serving,
    _dir: tempfile::TempDir,
}

/// What every host process of a deployment is told besides its database.
#[derive(Debug, Clone)]
struct Serving {
    /// nginx's URL, the one clients sign version 2 requests for.
    public_url: String,
    /// Whether version 1 signatures are still accepted.
    accept_v1: bool,
    /// `--db-connections`.
    db_connections: usize,
}

impl Deployment {
    /// Starts `processes` host processes on a fresh database of the shared
    /// cluster, and nginx in front of them.
    pub async fn start(launch: Launch, processes: usize) -> Result<Deployment, String> {
        Deployment::start_with(launch, processes, &[]).await
    }

    /// As [`Deployment::start`], with hosts that refuse version 1 signatures
    /// and enrollment proofs (`--accept-v1-signatures false`): what proves a
    /// client or console speaks version 2 through nginx.
    pub async fn start_refusing_v1(launch: Launch, processes: usize) -> Result<Deployment, String> {
        Deployment::start_with(launch, processes, &[("--accept-v1-signatures", "false")]).await
    }

    /// As [`Deployment::start`], on a fresh database of `cluster`.
    pub async fn start_on(
        cluster: &Cluster,
        launch: Launch,
        processes: usize,
    ) -> Result<Deployment, String> {
        let db_url = cluster.fresh_database().await?;
        Deployment::assemble(db_url, launch, processes, &[]).await
    }

    /// As [`Deployment::start`], with some `serve` flags of the binary set
    /// (for example `("--limit-agent", "10")`); the others stay roomy.
    pub async fn start_with(
        launch: Launch,
        processes: usize,
        flags: &[(&str, &str)],
    ) -> Result<Deployment, String> {
        let cluster = tokio::task::spawn_blocking(|| Cluster::shared().map(|_| ()))
            .await
            .map_err(|e| e.to_string())?;
        cluster?;
        let db_url = Cluster::shared()?.fresh_database().await?;
        Deployment::assemble(db_url, launch, processes, flags).await
    }

    async fn assemble(
        db_url: String,
        launch: Launch,
        processes: usize,
        flags: &[(&str, &str)],
    ) -> Result<Deployment, String> {
        let dir =
            tempfile::tempdir().map_err(|e| format!("creating a temporary directory: {e}"))?;
        let key_path = dir.path().join("platform-key.json");
        // The admin opens first: it migrates and creates the key file, which
        // every process then loads.
        let admin = Host::open(
            Target::Postgres(db_url.clone()),
            HostConfig {
                platform_key_path: Some(key_path.clone()),
                limits: roomy_limits(),
                ..HostConfig::default()
            },
        )
        .await
        .map_err(|e| format!("opening the admin's host: {e}"))?;
        let mut hosts = Vec::with_capacity(processes);
        let mut serve_flags: Vec<(String, String)> = [
            "--limit-ip",
            "--limit-agent",
            "--limit-session",
            "--limit-registration",
        ]
        .iter()
        .map(|f| (f.to_string(), "1000000000".to_string()))
        .collect();
        for (flag, value) in flags {
            serve_flags.retain(|(f, _)| f != flag);
            serve_flags.push((flag.to_string(), value.to_string()));
        }
        // nginx's port first: every host is told the URL clients reach it
        // at (`--public-url`), the authority version 2 signatures name.
        let port = free_port()?;
        let serving = Serving {
            public_url: format!("http://127.0.0.1:{port}"),
            accept_v1: !flags
                .iter()
                .any(|(f, v)| *f == "--accept-v1-signatures" && *v == "false"),
            db_connections: flags
                .iter()
                .find(|(f, _)| *f == "--db-connections")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or_else(|| db_connections_each(processes)),
        };
        serve_flags.retain(|(f, _)| f != "--accept-v1-signatures" && f != "--db-connections");
        for _ in 0..processes {
            hosts.push(spawn_host(
                &launch,
                &db_url,
                &key_path,
                &serve_flags,
                &serving,
            )?);
        }
        let addrs: Vec<SocketAddr> = hosts.iter().map(|h| h.addr).collect();
        let nginx = Nginx::start_on(port, &addrs)?;
        Ok(Deployment {
            db_url,
            key_path,
            admin,
            hosts,
            nginx,
            launch,
            serve_flags,
            serving,
            _dir: dir,
        })
    }

    /// The URL clients use (nginx).
    pub fn url(&self) -> String {
        self.nginx.url()
    }

    /// Kills host process `index` with SIGKILL, as a crash would.
    pub fn kill_9(&mut self, index: usize) {
        self.hosts[index].child.kill();
    }

    /// Starts a fresh host process in place of `index` (on a new port; nginx
    /// keeps its old address, so this is for direct use).
    pub fn respawn(&mut self, index: usize) -> Result<(), String> {
        self.hosts[index] = spawn_host(
            &self.launch,
            &self.db_url,
            &self.key_path,
            &self.serve_flags,
            &self.serving,
        )?;
        Ok(())
    }
}

/// One host process serving `db` (a SQLite path or a PostgreSQL URL) with
/// the platform key at `key`, on its own with no proxy in front (no public
/// URL): what a benchmark reads one process's memory from.
pub fn spawn_one(launch: &Launch, db: &str, key: &std::path::Path) -> Result<HostProcess, String> {
    spawn_host(
        launch,
        db,
        key,
        &[],
        &Serving {
            public_url: String::new(),
            accept_v1: true,
            db_connections: db_connections_each(1),
        },
    )
}

fn spawn_host(
    launch: &Launch,
    db_url: &str,
    key: &std::path::Path,
    flags: &[(String, String)],
    serving: &Serving,
) -> Result<HostProcess, String> {
    let mut command = match launch {
        Launch::Binary(path) => {
            let mut c = Command::new(path);
            c.args(["--db", db_url, "serve", "--listen", "127.0.0.1:0"])
                .arg("--platform-key")
                .arg(key)
                .args(["--accept-v1-signatures", &serving.accept_v1.to_string()])
                .args(["--db-connections", &serving.db_connections.to_string()]);
            if !serving.public_url.is_empty() {
                c.args(["--public-url", &serving.public_url]);
            }
            for (flag, value) in flags {
                c.args([flag, value]);
            }
            c
        }
        Launch::ThisBinary(args) => {
            let exe = std::env::current_exe().map_err(|e| format!("finding this binary: {e}"))?;
            let mut c = Command::new(exe);
            c.args(args).env(ENV_DB, db_url).env(ENV_KEY, key);
            c
        }
        Launch::ThisTest(test) => {
            let exe =
                std::env::current_exe().map_err(|e| format!("finding this test binary: {e}"))?;
            let mut c = Command::new(exe);
            c.args([
                test.as_str(),
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(ENV_DB, db_url)
            .env(ENV_KEY, key);
            c
        }
    };
    command
        .env(ENV_PUBLIC_URL, &serving.public_url)
        .env(ENV_ACCEPT_V1, serving.accept_v1.to_string())
        .env(ENV_DB_CONNECTIONS, serving.db_connections.to_string());
    let mut child = Guarded::spawn(
        command
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
        None,
    )?;
    let stdout = child
        .child_mut()
        .stdout
        .take()
        .ok_or_else(|| "the host process has no stdout".to_owned())?;
    let addr = listening_addr(stdout, Duration::from_secs(60))?;
    Ok(HostProcess { child, addr })
}

/// The body of the ignored test a re-run test binary runs as a host
/// process: opens the database named by [`ENV_DB`] with the key file named
/// by [`ENV_KEY`] (with the public URL of [`ENV_PUBLIC_URL`] and the
/// switch of [`ENV_ACCEPT_V1`]), prints `listening on http://ADDR` and
/// serves until killed. Does nothing when the variables are not set.
pub async fn serve_from_env() {
    serve_from_env_with(|_| {}).await
}

/// As [`serve_from_env`], calling `opened` with the host once it is open
/// and before it serves (the load generator starts its traffic reporter
/// there).
pub async fn serve_from_env_with(opened: impl FnOnce(&Host)) {
    let (Ok(db), Ok(key)) = (std::env::var(ENV_DB), std::env::var(ENV_KEY)) else {
        return;
    };
    let public_url = match std::env::var(ENV_PUBLIC_URL).ok().filter(|u| !u.is_empty()) {
        Some(url) => match countersign_host::config::public_origin(&url) {
            Ok(origin) => Some(origin),
            Err(e) => panic!("{ENV_PUBLIC_URL}: {e}"),
        },
        None => None,
    };
    let config = HostConfig {
        platform_key_path: Some(key.into()),
        limits: roomy_limits(),
        public_url,
        accept_v1_signatures: std::env::var(ENV_ACCEPT_V1).as_deref() != Ok("false"),
        db_connections: std::env::var(ENV_DB_CONNECTIONS)
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(countersign_host::store::postgres::DEFAULT_CONNECTIONS),
        // Test agents (the reference SDK's among them) listen for the gate's
        // hints on loopback, which a host calls only where an admin allowed it.
        callback_networks: loopback_callbacks(),
        ..HostConfig::default()
    };
    let host = match Host::open(Target::parse(&db), config).await {
        Ok(host) => host,
        Err(e) => panic!("the host process could not open its database: {e}"),
    };
    opened(&host);
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => panic!("the host process could not listen: {e}"),
    };
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    println!("listening on http://{addr}");
    if let Err(e) = host.serve(listener).await {
        panic!("the host process stopped serving: {e}");
    }
}

/// Runs this test binary again with `var=value`, skipping the tests named
/// in `skip` (substring filters, as `--skip` takes them): how one
/// `cargo test` runs a whole suite a second time against another store or
/// a deployment. Answers the inner run's report when it failed.
pub fn rerun_this_binary(var: &str, value: &str, skip: &[&str]) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding this test binary: {e}"))?;
    let mut command = Command::new(exe);
    command.env(var, value);
    for name in skip {
        command.args(["--skip", name]);
    }
    let out = command
        .output()
        .map_err(|e| format!("running the suite again: {e}"))?;
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(format!("the suite with {var}={value} failed:\n{report}"));
    }
    let passed = report
        .split("test result: ok. ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(0);
    if passed == 0 {
        return Err(format!(
            "the suite with {var}={value} ran no test:\n{report}"
        ));
    }
    Ok(())
}

/// The value a rerun sets to run a suite through a deployment.
pub const THROUGH_NGINX_POSTGRES: &str = "nginx-postgres";

/// Whether `var` asks this run to go through a deployment (`nginx-postgres`);
/// unset or empty means no. Any other value is a mistake worth stopping for.
pub fn selected(var: &str) -> bool {
    match std::env::var(var).as_deref() {
        Ok(THROUGH_NGINX_POSTGRES) => true,
        Ok("") | Err(_) => false,
        Ok(other) => panic!("{var}={other:?}: expected {THROUGH_NGINX_POSTGRES} or nothing"),
    }
}

/// The loopback network test agents receive callback hints on
/// (`--allow-callback-network 127.0.0.1/32`).
fn loopback_callbacks() -> Vec<countersign_host::callback::Network> {
    countersign_host::callback::Network::parse("127.0.0.1/32")
        .into_iter()
        .collect()
}
