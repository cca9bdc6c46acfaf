//! Fixed-window rate limits per IP, agent, session and for registration
//! (SPEC §7).
//!
//! Addresses are counted by the network a client controls as a whole: an
//! IPv4 address alone, an IPv6 address by its /64 (one subscriber's
//! prefix, which it can fill with as many addresses as it likes), an
//! IPv4-mapped IPv6 address as its IPv4 address.
//!
//! On SQLite the windows are counted in this process's memory (one process
//! serves one file), at most `max_tracked_keys` keys per scope: a new key
//! beyond that evicts the key seen least recently, so an attacker with many
//! source addresses can at worst reset counts, never lock other clients
//! out. Each scope has its own table, so addresses an unauthenticated
//! caller picks cannot evict the counts of authenticated approvers and
//! agents (counted per principal id after authentication), nor the
//! reverse. The limiter refuses only when it cannot decide (its lock is
//! poisoned, or the shared counters cannot be reached).
//!
//! On PostgreSQL they are counted in the database (`rate_windows`, an
//! unlogged table, old windows purged every minute), so a limit holds for
//! the whole deployment however a load balancer spreads the requests: N
//! processes together admit at most `max` requests per window for one key.
//! That table has no key cap to lock anyone out; the same address
//! aggregation applies. Windows are aligned to the wall clock
//! (`unix_time / window`), the same in every process.
//!
//! A request counted by itself (an address's, a registration's, an MCP or
//! A2A caller's, whose bearer token spends no nonce) would cost
//! PostgreSQL a statement per request; instead a process counts a *lease*
//! of several requests at once in the shared window and admits that many
//! before asking again ([`Lease`]). The lease is counted before it is used,
//! so together the processes still never admit more than `max`; what a
//! process leased and did not use is lost for that window (another process
//! may refuse a few requests early, never let one more through). A lease
//! is a sixteenth of what the window has left, at most [`MOST_LEASED`]: a
//! small limit (or one nearly reached) is counted one request at a time,
//! exactly as before.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

use crate::config::{Limit, Limits};
use crate::domain::DomainError;
pub use crate::store::SharedWindow;
use crate::store::Store;

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Any request from one client IP.
    Ip,
    /// Signed requests from one agent or approver.
    Agent,
    /// Event submissions to one session.
    Session,
    /// Registrations and enrollments from one client IP.
    Registration,
}

impl Scope {
    /// The scope's name in the shared counters.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Ip => "ip",
            Scope::Agent => "agent",
            Scope::Session => "session",
            Scope::Registration => "registration",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Scope::Ip => "requests from this address",
            Scope::Agent => "requests from this agent",
            Scope::Session => "events submitted to this session",
            Scope::Registration => "registrations from this address",
        }
    }
}

struct Window {
    started: Instant,
    count: u32,
    /// When this key was last counted (the table's own clock).
    seen: u64,
}

/// One scope's windows, evicting the key seen least recently when full.
#[derive(Default)]
struct Table {
    windows: HashMap<String, Window>,
    /// `seen` to key, oldest first.
    by_seen: BTreeMap<u64, String>,
    clock: u64,
}

impl Table {
    /// The window of `key`, marked seen now; a new key beyond `capacity`
    /// evicts the least recently seen one.
    fn touch(&mut self, key: &str, capacity: usize, now: Instant) -> &mut Window {
        self.clock += 1;
        let seen = self.clock;
        if let Some(window) = self.windows.get_mut(key) {
            self.by_seen.remove(&window.seen);
            window.seen = seen;
        } else {
            while self.windows.len() >= capacity.max(1) {
                let Some((_, oldest)) = self.by_seen.pop_first() else {
                    break;
                };
                self.windows.remove(&oldest);
            }
            self.windows.insert(
                key.to_owned(),
                Window {
                    started: now,
                    count: 0,
                    seen,
                },
            );
        }
        self.by_seen.insert(seen, key.to_owned());
        self.windows
            .get_mut(key)
            .expect("the key was just inserted or found")
    }
}

/// The limiter shared by every request.
pub struct RateLimiter {
    limits: Limits,
    tables: Mutex<HashMap<Scope, Table>>,
    shared: Option<Store>,
    /// Requests this process was granted in shared windows and has not
    /// admitted yet, per scope and key.
    leases: Mutex<HashMap<(Scope, String), Lease>>,
}

/// Requests of one key a process counted in a shared window ahead of time
/// and may still admit there without asking the store.
#[derive(Debug, Clone, Copy)]
struct Lease {
    /// The window they were counted in.
    window_start: i64,
    /// How many are left to admit.
    left: u64,
    /// The window's count when they were granted (what sizes the next).
    seen: u64,
}

/// The most requests one lease counts ahead.
pub const MOST_LEASED: u64 = 64;

/// How many requests to count ahead in a window that has `left` before
/// its limit: a sixteenth of it, at least 1 (a small limit is counted one
/// request at a time), at most [`MOST_LEASED`].
fn lease_size(left: u64) -> u64 {
    (left / 16).clamp(1, MOST_LEASED)
}

/// The key a request counts against in `scope`: for the per-address
/// scopes, an IPv6 address's /64 and an IPv4-mapped address's IPv4 form;
/// any other key as given.
pub fn bucket(scope: Scope, key: &str) -> String {
    if !matches!(scope, Scope::Ip | Scope::Registration) {
        return key.to_owned();
    }
    match key.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
        Ok(IpAddr::V4(v4)) => v4.to_string(),
        Err(_) => key.to_owned(),
    }
}

fn unavailable() -> DomainError {
    DomainError::RateLimited(
        "The rate limiter is unavailable, so the host refuses requests until it recovers.".into(),
    )
}

fn over(scope: Scope, limit: Limit) -> DomainError {
    DomainError::RateLimited(format!(
        "Too many {}: at most {} per {} seconds.",
        scope.describe(),
        limit.max,
        limit.window.as_secs()
    ))
}

impl RateLimiter {
    /// A limiter enforcing `limits` in this process's memory.
    pub fn new(limits: Limits) -> RateLimiter {
        RateLimiter {
            limits,
            tables: Mutex::new(HashMap::new()),
            shared: None,
            leases: Mutex::new(HashMap::new()),
        }
    }

    /// A limiter enforcing `limits` for the whole deployment when `store`
    /// has shared counters, else in memory.
    pub fn for_store(limits: Limits, store: &Store) -> RateLimiter {
        let shared = store.shared_limits().is_some().then(|| store.clone());
        RateLimiter {
            shared,
            ..RateLimiter::new(limits)
        }
    }

    /// Counts one request against `key` in `scope`; refuses when over the
    /// limit or when the limiter cannot decide.
    pub async fn check(&self, scope: Scope, key: &str) -> Result<(), DomainError> {
        let Some(window) = self.shared_window(scope, key) else {
            return self.check_local(scope, key);
        };
        let Some(counters) = self.shared.as_ref().and_then(|s| s.shared_limits()) else {
            return Err(unavailable());
        };
        let Some(ask) = self.leased(scope, &window)? else {
            return Ok(());
        };
        match counters
            .count(window.scope, &window.key, window.start, ask)
            .await
        {
            Ok(count) => self.granted(scope, &window, ask, count),
            Err(e) => {
                tracing::warn!(error = %e, "shared rate-limit counters unavailable");
                Err(unavailable())
            }
        }
    }

    /// Admits one request of a lease this process holds in `window`
    /// (`None`); else answers how many to count ahead in the store.
    fn leased(&self, scope: Scope, window: &SharedWindow) -> Result<Option<u64>, DomainError> {
        let mut leases = self.leases.lock().map_err(|_| unavailable())?;
        let max = u64::from(self.limit(scope).max);
        match leases.get_mut(&(scope, window.key.clone())) {
            Some(lease) if lease.window_start == window.start => {
                if lease.left > 0 {
                    lease.left -= 1;
                    return Ok(None);
                }
                Ok(Some(lease_size(max.saturating_sub(lease.seen))))
            }
            // A new window: nothing is known of it but the limit.
            _ => Ok(Some(lease_size(max))),
        }
    }

    /// Judges a request that counted `ask` in `window` and saw `count`
    /// there (theirs included): admitted when its own place (the first of
    /// those asked) is within the limit; the rest of the lease that is
    /// also within it is kept for the next requests.
    fn granted(
        &self,
        scope: Scope,
        window: &SharedWindow,
        ask: u64,
        count: u64,
    ) -> Result<(), DomainError> {
        let max = u64::from(self.limit(scope).max);
        let first = count.saturating_sub(ask) + 1;
        let admitted = self.judge(scope, first);
        let within = if admitted.is_ok() {
            max.saturating_sub(first).min(ask - 1)
        } else {
            0
        };
        let mut leases = self.leases.lock().map_err(|_| unavailable())?;
        let cap = self.limits.max_tracked_keys.max(1);
        let key = (scope, window.key.clone());
        if leases.len() >= cap && !leases.contains_key(&key) {
            // Forget leases of windows that ended; when every one is
            // current, this key keeps none (it asks for one at a time).
            leases.retain(|_, l| l.window_start >= window.start);
            if leases.len() >= cap {
                return admitted;
            }
        }
        match leases.get_mut(&key) {
            // Granted beside another request's lease of the same window:
            // both are kept.
            Some(lease) if lease.window_start == window.start => {
                lease.left += within;
                lease.seen = lease.seen.max(count);
            }
            _ => {
                leases.insert(
                    key,
                    Lease {
                        window_start: window.start,
                        left: within,
                        seen: count,
                    },
                );
            }
        }
        admitted
    }

    /// The shared window one request against `key` in `scope` counts in
    /// now, when the counters are shared (PostgreSQL): what a store counts
    /// together with the statement a request makes anyway (the nonce, the
    /// session's state), saving a round trip. `None` when limits are
    /// counted in this process's memory.
    pub fn shared_window(&self, scope: Scope, key: &str) -> Option<SharedWindow> {
        self.shared.as_ref()?;
        let limit = self.limit(scope);
        let secs = i64::try_from(limit.window.as_secs().max(1)).unwrap_or(i64::MAX);
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        Some(SharedWindow {
            scope: scope.name(),
            key: bucket(scope, key),
            start: now - now.rem_euclid(secs),
            secs,
        })
    }

    /// Applies the limit of `scope` to a request: `counted` is the count a
    /// store made in [`RateLimiter::shared_window`] with another statement;
    /// `None` (nothing counted yet) counts it now, as [`RateLimiter::check`].
    pub async fn check_counted(
        &self,
        scope: Scope,
        key: &str,
        counted: Option<u64>,
    ) -> Result<(), DomainError> {
        match counted {
            Some(count) => self.judge(scope, count),
            None => self.check(scope, key).await,
        }
    }

    /// Refuses when `count` (this request included) is over the limit.
    fn judge(&self, scope: Scope, count: u64) -> Result<(), DomainError> {
        let limit = self.limit(scope);
        if count <= u64::from(limit.max) {
            Ok(())
        } else {
            Err(over(scope, limit))
        }
    }

    /// The most requests `scope` admits per window.
    pub fn max(&self, scope: Scope) -> u64 {
        u64::from(self.limit(scope).max)
    }

    fn limit(&self, scope: Scope) -> Limit {
        match scope {
            Scope::Ip => self.limits.per_ip,
            Scope::Agent => self.limits.per_agent,
            Scope::Session => self.limits.per_session,
            Scope::Registration => self.limits.registration,
        }
    }

    /// Counts one request in this process's memory.
    pub fn check_local(&self, scope: Scope, key: &str) -> Result<(), DomainError> {
        let limit = self.limit(scope);
        let key = bucket(scope, key);
        let mut tables = self.tables.lock().map_err(|_| unavailable())?;
        let now = Instant::now();
        let window =
            tables
                .entry(scope)
                .or_default()
                .touch(&key, self.limits.max_tracked_keys, now);
        if now.duration_since(window.started) >= limit.window {
            window.started = now;
            window.count = 0;
        }
        if window.count >= limit.max {
            return Err(over(scope, limit));
        }
        window.count += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits(max: u32, tracked: usize) -> Limits {
        let l = Limit {
            max,
            window: Duration::from_secs(3600),
        };
        Limits {
            per_ip: l,
            per_agent: l,
            per_session: l,
            registration: l,
            max_body_bytes: 1024,
            gate_max_body_bytes: 1024,
            max_tracked_keys: tracked,
        }
    }

    /// A window counted as the shared `rate_windows` table would, by
    /// several processes' limiters.
    fn shared_count(
        limiter: &RateLimiter,
        table: &mut u64,
        scope: Scope,
        window: &SharedWindow,
    ) -> Result<(), DomainError> {
        match limiter.leased(scope, window)? {
            None => Ok(()),
            Some(ask) => {
                *table += ask;
                limiter.granted(scope, window, ask, *table)
            }
        }
    }

    #[test]
    fn leases_never_let_processes_together_past_the_limit() {
        let window = SharedWindow {
            scope: "ip",
            key: "192.0.2.1".into(),
            start: 0,
            secs: 3600,
        };
        for max in [1, 10, 100, 6000] {
            let processes: Vec<RateLimiter> =
                (0..3).map(|_| RateLimiter::new(limits(max, 100))).collect();
            let mut table = 0;
            let mut admitted = 0;
            let mut asked = 0;
            for n in 0..(max as usize * 2 + 10) {
                let before = table;
                if shared_count(&processes[n % 3], &mut table, Scope::Ip, &window).is_ok() {
                    admitted += 1;
                }
                if table != before && n < max as usize {
                    asked += 1;
                }
            }
            assert!(admitted <= max, "max {max}: {admitted} admitted");
            // Unused leases cost at most a few early refusals.
            assert!(
                admitted + 3 * MOST_LEASED as u32 >= max,
                "max {max}: only {admitted}"
            );
            if max <= 16 {
                assert_eq!(admitted, max, "a small limit is counted exactly");
            } else if max >= 6000 {
                // While the window fills, most requests ask the store nothing.
                assert!(asked * 4 < max, "max {max}: asked the store {asked} times");
            }
        }
    }

    #[test]
    fn a_new_window_leases_afresh() {
        let limiter = RateLimiter::new(limits(6000, 100));
        let mut table = 0;
        let window = |start| SharedWindow {
            scope: "ip",
            key: "192.0.2.1".into(),
            start,
            secs: 60,
        };
        shared_count(&limiter, &mut table, Scope::Ip, &window(0)).unwrap();
        assert_eq!(table, MOST_LEASED, "the first request leases ahead");
        let mut next = 0;
        assert!(shared_count(&limiter, &mut next, Scope::Ip, &window(60)).is_ok());
        assert_eq!(
            next, MOST_LEASED,
            "an old window's lease is not used in a new one"
        );
    }

    #[test]
    fn refuses_after_max_and_keys_are_independent() {
        let limiter = RateLimiter::new(limits(2, 100));
        assert!(limiter.check_local(Scope::Agent, "a").is_ok());
        assert!(limiter.check_local(Scope::Agent, "a").is_ok());
        let refused = limiter.check_local(Scope::Agent, "a").unwrap_err();
        assert!(refused.to_string().contains("at most 2"));
        assert!(limiter.check_local(Scope::Agent, "b").is_ok());
        assert!(limiter.check_local(Scope::Session, "a").is_ok());
    }

    #[test]
    fn a_full_table_evicts_the_least_recently_seen_key_and_refuses_no_one() {
        let limiter = RateLimiter::new(limits(2, 3));
        for ip in ["10.0.0.1", "10.0.0.2", "10.0.0.3"] {
            assert!(limiter.check_local(Scope::Ip, ip).is_ok());
        }
        // 10.0.0.1 is seen again, so 10.0.0.2 is now the least recent.
        assert!(limiter.check_local(Scope::Ip, "10.0.0.1").is_ok());
        assert!(
            limiter.check_local(Scope::Ip, "10.0.0.1").is_err(),
            "over its 2"
        );
        // A thousand new addresses: each is let through.
        for n in 0..1000u32 {
            let ip = std::net::Ipv4Addr::from(0x0b00_0000 + n).to_string();
            assert!(limiter.check_local(Scope::Ip, &ip).is_ok(), "{ip}");
        }
        // And so is another new one.
        assert!(limiter.check_local(Scope::Ip, "192.0.2.77").is_ok());
    }

    #[test]
    fn least_recently_seen_goes_first() {
        let limiter = RateLimiter::new(limits(1, 2));
        assert!(limiter.check_local(Scope::Ip, "a").is_ok());
        assert!(limiter.check_local(Scope::Ip, "b").is_ok());
        // a is seen again (refused, but seen): b is the least recent.
        assert!(limiter.check_local(Scope::Ip, "a").is_err());
        assert!(limiter.check_local(Scope::Ip, "c").is_ok());
        // b was evicted (a fresh window), a was kept (still over).
        assert!(limiter.check_local(Scope::Ip, "a").is_err());
        assert!(limiter.check_local(Scope::Ip, "b").is_ok());
    }

    #[test]
    fn addresses_filling_the_table_never_touch_an_approvers_count() {
        let limiter = RateLimiter::new(limits(2, 4));
        assert!(limiter.check_local(Scope::Agent, "appr_known").is_ok());
        for n in 0..100u32 {
            let ip = std::net::Ipv4Addr::from(0x0b00_0000 + n).to_string();
            assert!(limiter.check_local(Scope::Ip, &ip).is_ok());
        }
        // Still counted, not evicted and not locked out: one more allowed,
        // then its own limit.
        assert!(limiter.check_local(Scope::Agent, "appr_known").is_ok());
        assert!(limiter.check_local(Scope::Agent, "appr_known").is_err());
    }

    #[test]
    fn ipv6_addresses_in_one_64_share_a_bucket() {
        let limiter = RateLimiter::new(limits(2, 100));
        assert!(limiter.check_local(Scope::Ip, "2001:db8:1:2::1").is_ok());
        assert!(limiter
            .check_local(Scope::Ip, "2001:db8:1:2:ffff::9")
            .is_ok());
        let refused = limiter
            .check_local(Scope::Ip, "2001:db8:1:2:abcd:1:2:3")
            .unwrap_err();
        assert!(refused.to_string().contains("at most 2"), "{refused}");
        // Another /64 is another bucket.
        assert!(limiter.check_local(Scope::Ip, "2001:db8:1:3::1").is_ok());
        assert!(limiter
            .check_local(Scope::Registration, "2001:db8:1:2::5")
            .is_ok());
    }

    #[test]
    fn buckets_name_the_network_for_addresses_only() {
        assert_eq!(
            bucket(Scope::Ip, "2001:db8:a:b:c:d:e:f"),
            "2001:db8:a:b::/64"
        );
        assert_eq!(
            bucket(Scope::Registration, "2001:db8:a:b::1"),
            "2001:db8:a:b::/64"
        );
        assert_eq!(bucket(Scope::Ip, "::ffff:192.0.2.1"), "192.0.2.1");
        assert_eq!(bucket(Scope::Ip, "192.0.2.1"), "192.0.2.1");
        // Principal ids and sessions are never rewritten.
        assert_eq!(bucket(Scope::Agent, "2001:db8::1"), "2001:db8::1");
        assert_eq!(bucket(Scope::Session, "ses_1"), "ses_1");
    }
}
