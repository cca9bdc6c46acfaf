//! Host configuration: limits, durability and clock. Everything a test needs
//! to make small (rate limits, body sizes) is a field here, not a constant.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;

/// One rate limit: at most `max` requests per `window` for one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Requests allowed in one window.
    pub max: u32,
    /// Length of the window.
    pub window: Duration,
}

impl Limit {
    /// `max` requests per minute.
    pub const fn per_minute(max: u32) -> Limit {
        Limit {
            max,
            window: Duration::from_secs(60),
        }
    }
}

/// Every rate and size limit the host enforces (SPEC §7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Any request, per client IP.
    pub per_ip: Limit,
    /// Signed requests, per agent or approver id.
    pub per_agent: Limit,
    /// Event submissions, per session.
    pub per_session: Limit,
    /// Registrations and enrollments, per client IP.
    pub registration: Limit,
    /// Largest request body accepted, in bytes (agent and approver APIs).
    pub max_body_bytes: usize,
    /// Largest request body the gate accepts (a whole transcript), in bytes.
    pub gate_max_body_bytes: usize,
    /// Most distinct keys the in-memory limiter tracks per scope; a new key
    /// beyond it evicts the one seen least recently (nobody is refused for it).
    pub max_tracked_keys: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            per_ip: Limit::per_minute(6000),
            per_agent: Limit::per_minute(3000),
            per_session: Limit::per_minute(1200),
            registration: Limit::per_minute(20),
            max_body_bytes: 512 * 1024,
            gate_max_body_bytes: 1024 * 1024,
            max_tracked_keys: 100_000,
        }
    }
}

/// Bounds on each HTTP connection, so that a slow or stalled client cannot
/// hold the host down (`serve` must not depend on a proxy in front for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connections {
    /// Time a client has to send a request's headers, counted from the
    /// moment the host waits for them (a new connection, or an idle
    /// kept-alive one): a connection that has not finished them by then is
    /// closed.
    pub header_read_timeout: Duration,
    /// Time a client has to send a request's whole body, counted from its
    /// headers: a body still arriving then is refused with 408 and nothing
    /// is stored.
    pub body_read_timeout: Duration,
    /// Most connections one process holds open at once. Beyond it the host
    /// stops accepting until one closes (the kernel queues the rest), so it
    /// never runs out of file descriptors; keep it below the process's
    /// open-file limit, with room for the database and log files.
    pub max_connections: usize,
}

impl Default for Connections {
    fn default() -> Connections {
        Connections {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 4096,
        }
    }
}

/// SQLite `synchronous` setting for the write-ahead log.
///
/// `Full` (the default) fsyncs each commit before a request is
/// acknowledged, so an acknowledged event survives power loss, as it does on
/// PostgreSQL with `synchronous_commit = on`. Appends waiting together share
/// one commit (group commit), so the fsync is paid per batch, not per
/// append. `Normal` commits into the WAL file without an fsync: an
/// acknowledged event survives the death of the process (`kill -9`), but an
/// operating-system crash or power loss can lose the last commits, and with
/// them events a counterparty already holds signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `PRAGMA synchronous=NORMAL`: survives process crashes.
    Normal,
    /// `PRAGMA synchronous=FULL`: survives power loss.
    #[default]
    Full,
}

impl Durability {
    /// The pragma value.
    pub fn pragma(self) -> &'static str {
        match self {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        }
    }
}

/// What `GET /.well-known/anp.json` serves. Discovery (RFC-003) is a draft,
/// optional for an ANP/0.1 host; the reference host serves nothing without
/// its draft flag and exactly RFC-003's document with it. These modes let
/// clients be tested against each shape a host may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiscoveryMode {
    /// No document: the path answers 404, as a plain ANP/0.1 host does.
    None,
    /// Exactly RFC-003's members: `protocol_versions`, `api_base` and
    /// `platform_keys` (public key, fingerprint, roles, validity window).
    Rfc003,
    /// RFC-003 plus our additions: `drafts`, and `approved_by` on each
    /// approver key (what the console relies on).
    #[default]
    Full,
}

impl DiscoveryMode {
    /// The mode named on the command line (`none`, `rfc003`, `full`).
    pub fn parse(name: &str) -> Option<DiscoveryMode> {
        match name {
            "none" => Some(DiscoveryMode::None),
            "rfc003" => Some(DiscoveryMode::Rfc003),
            "full" => Some(DiscoveryMode::Full),
            _ => None,
        }
    }
}

/// The host's notion of "now". Real hosts use the system clock; tests can
/// move it forward to let an offer expire without waiting.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_nanos: Arc<AtomicI64>,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// Current time, plus any offset a test added.
    pub fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
            + time::Duration::nanoseconds(self.offset_nanos.load(Ordering::SeqCst))
    }

    /// Moves this clock (and every clone of it) forward, to the nanosecond
    /// (a test at the edge of a window needs fractions of a second).
    pub fn advance(&self, by: Duration) {
        let nanos = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX / 4);
        self.offset_nanos.fetch_add(nanos, Ordering::SeqCst);
    }
}

/// Everything that configures a host besides its database.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Rate and size limits.
    pub limits: Limits,
    /// SQLite durability.
    pub durability: Durability,
    /// PostgreSQL connections this process keeps (its pool). Commits waiting
    /// for their flush together share it: 16 by default; several processes
    /// on one database want about 24 in all (8 each for three).
    pub db_connections: usize,
    /// Where the platform signing key lives; default: beside the database,
    /// `<db>.platform-key.json`, created on first start with mode 0600.
    pub platform_key_path: Option<PathBuf>,
    /// The clock.
    pub clock: Clock,
    /// What discovery serves.
    pub discovery: DiscoveryMode,
    /// Load balancers whose `X-Forwarded-For` header names the client. A
    /// request from one of these addresses is counted, for the per-IP
    /// limits, against the last address in that header that is not itself a
    /// trusted proxy; from anywhere else the header is ignored. Behind nginx
    /// (`proxy_set_header X-Forwarded-For $remote_addr`), name nginx's address.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// How often the server marks gate requests whose time is up expired
    /// (and hints their agents). Reads never wait for it: a pending
    /// request past its time already reads as expired.
    pub gate_sweep: Duration,
    /// The origin counterparties reach this host at
    /// (`https://negotiate.example.com`, from [`public_origin`]): what the
    /// A2A Agent Cards and each org's ANEX identity name, which the terms
    /// an owner signs bind. Unset, they name the address the server is
    /// bound to (`http://127.0.0.1:8480`: right on loopback and for the
    /// embedded sandbox, wrong behind a proxy or on a public address), and
    /// a server bound to every address has none. Never a request header.
    pub public_url: Option<String>,
    /// Bounds on each HTTP connection: header and body deadlines, and how
    /// many connections one process holds.
    pub connections: Connections,
    /// Networks whose addresses gate agents may name as callbacks although
    /// they are not public (loopback, private, ...): none by default
    /// (crates/host/src/callback.rs says which URLs the host calls).
    pub callback_networks: Vec<crate::callback::Network>,
    /// Whether approvers and gate agents may still sign requests with
    /// ANP/0.1's request string (version 1, which covers neither the query,
    /// the caller's id nor the host) and enroll with the version 1 proof.
    /// On by default during the transition (every use is logged, naming the
    /// caller); `--accept-v1-signatures false` refuses them. Vendor agents
    /// are not concerned: the agent API's wire is ANP/0.1's.
    pub accept_v1_signatures: bool,
    /// Whether a console may wait for a change (`GET /summary?wait=`): on by
    /// default; off (`--wait-for-changes false`) for a proxy that cannot hold
    /// a request that long, which makes `wait` a 400, as a host from before
    /// waiting answers it, and consoles poll on their timer instead.
    pub wait_for_changes: bool,
}

/// Reads `--public-url`: an `http` or `https` origin, nothing after the
/// host and port. Answers it without a trailing slash, or why it is not one.
pub fn public_origin(text: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(text).map_err(|e| format!("{text:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{text:?} is not an http or https URL"));
    }
    if url.host_str().is_none() || !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{text:?} must name a host, and no user"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{text:?} must be an origin only (scheme, host, port): the host serves its paths under it"
        ));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            limits: Limits::default(),
            durability: Durability::default(),
            db_connections: crate::store::postgres::DEFAULT_CONNECTIONS,
            platform_key_path: None,
            clock: Clock::default(),
            discovery: DiscoveryMode::default(),
            trusted_proxies: Vec::new(),
            gate_sweep: Duration::from_secs(5),
            public_url: None,
            connections: Connections::default(),
            callback_networks: Vec::new(),
            accept_v1_signatures: true,
            wait_for_changes: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::public_origin;

    #[test]
    fn a_public_url_is_an_http_origin_and_nothing_more() {
        assert_eq!(
            public_origin("https://negotiate.example.com/").unwrap(),
            "https://negotiate.example.com"
        );
        assert_eq!(
            public_origin("http://127.0.0.1:8480").unwrap(),
            "http://127.0.0.1:8480"
        );
        for (bad, why) in [
            ("negotiate.example.com", "not a URL"),
            ("ftp://negotiate.example.com", "not an http or https URL"),
            ("https://negotiate.example.com/a2a", "origin only"),
            ("https://negotiate.example.com/?x=1", "origin only"),
            ("https://ann@negotiate.example.com", "no user"),
        ] {
            let err = public_origin(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
