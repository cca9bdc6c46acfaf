//! nginx in front of host processes: Debian's binary, a configuration of
//! the test's own in a temporary directory, listening on a loopback port,
//! round-robin over the upstreams, retrying the next one when a host
//! refuses the connection (a request that reached a host is never resent).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::process::{free_port, wait_for_port, Guarded};

/// Where Debian installs nginx.
pub fn binary() -> Result<PathBuf, String> {
    let path = PathBuf::from("/usr/sbin/nginx");
    if path.is_file() {
        Ok(path)
    } else {
        Err("nginx is missing (/usr/sbin/nginx): run `bash .ci/setup` (it installs PostgreSQL and nginx from Debian's packages)".into())
    }
}

/// The configuration: one server on `port`, proxying to `upstreams`.
pub fn config(dir: &Path, port: u16, upstreams: &[SocketAddr]) -> String {
    let d = dir.display();
    let servers: String = upstreams
        .iter()
        .map(|a| format!("        server {a} max_fails=1 fail_timeout=2s;\n"))
        .collect();
    format!(
        r#"worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    client_max_body_size 2m;
    client_body_buffer_size 2m;
    upstream countersign_hosts {{
{servers}        keepalive 64;
        # Shorter than the hosts' idle bound (--header-timeout-secs, 10 s),
        # so nginx drops an idle connection before a host closes it.
        keepalive_timeout 5s;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://countersign_hosts;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_next_upstream error timeout;
            proxy_connect_timeout 2s;
            proxy_buffering off;
            # Longer than a console's longest wait for a change (90 s).
            proxy_read_timeout 120s;
        }}
    }}
}}
"#
    )
}

/// nginx running in its own directory; killed when dropped.
pub struct Nginx {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Guarded>,
}

impl Nginx {
    /// Starts nginx on a free loopback port in front of `upstreams`.
    pub fn start(upstreams: &[SocketAddr]) -> Result<Nginx, String> {
        Nginx::start_on(free_port()?, upstreams)
    }

    /// Starts nginx on loopback `port` (chosen before the hosts start, so
    /// that they can be told the URL their clients use) in front of `upstreams`.
    pub fn start_on(port: u16, upstreams: &[SocketAddr]) -> Result<Nginx, String> {
        let dir = tempfile::Builder::new()
            .prefix("countersign-nginx-")
            .tempdir()
            .map_err(|e| format!("creating a temporary directory: {e}"))?;
        // Workers run as an unprivileged user when nginx starts as root.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let _ = std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755));
        }
        std::fs::write(
            dir.path().join("nginx.conf"),
            config(dir.path(), port, upstreams),
        )
        .map_err(|e| format!("writing nginx.conf: {e}"))?;
        let mut nginx = Nginx {
            dir,
            port,
            child: None,
        };
        nginx.restart()?;
        Ok(nginx)
    }

    /// Its directory (configuration, logs), removed when it stops.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Stops it, master and workers (the port is then free).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.stop(Duration::from_secs(5));
        }
    }

    /// Starts it again on the same port, with the same configuration.
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        let stderr = std::fs::File::create(self.dir.path().join("stderr.log"))
            .map_err(|e| format!("creating nginx's stderr log: {e}"))?;
        let child = Guarded::spawn(
            Command::new(binary()?)
                .arg("-p")
                .arg(self.dir.path())
                .arg("-c")
                .arg(self.dir.path().join("nginx.conf"))
                .args(["-g", "daemon off;"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr),
            Some(self.dir.path()),
        )?;
        if let Err(e) = wait_for_port(self.addr(), Duration::from_secs(10)) {
            let read = |name: &str| {
                std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
            };
            let log = format!("{}{}", read("stderr.log"), read("error.log"));
            return Err(format!("{e}; nginx's error log:\n{log}"));
        }
        self.child = Some(child);
        Ok(())
    }
}
