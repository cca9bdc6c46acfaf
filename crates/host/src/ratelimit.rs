//! Fixed-window rate limits per IP, agent, session and for registration
//! (SPEC §7), failing closed: when the limiter cannot decide (its lock is
//! poisoned, it tracks too many keys to admit another, or the shared
//! counters cannot be reached) it refuses.
//!
//! On SQLite the windows are counted in this process's memory (one process
//! serves one file). On PostgreSQL they are counted in the database
//! (`rate_windows`, an unlogged table), so a limit holds for the whole
//! deployment however a load balancer spreads the requests: N processes
//! together admit at most `max` requests per window for one key. Windows
//! are aligned to the wall clock (`unix_time / window`), the same in every
//! process.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::config::{Limit, Limits};
use crate::domain::DomainError;
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
}

/// The limiter shared by every request.
pub struct RateLimiter {
    limits: Limits,
    windows: Mutex<HashMap<(Scope, String), Window>>,
    shared: Option<Store>,
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
            windows: Mutex::new(HashMap::new()),
            shared: None,
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
        let Some(store) = &self.shared else {
            return self.check_local(scope, key);
        };
        let Some(counters) = store.shared_limits() else {
            return Err(unavailable());
        };
        let limit = self.limit(scope);
        let window = i64::try_from(limit.window.as_secs().max(1)).unwrap_or(i64::MAX);
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let start = now - now.rem_euclid(window);
        match counters.count(scope.name(), key, start, window).await {
            Ok(count) if count <= u64::from(limit.max) => Ok(()),
            Ok(_) => Err(over(scope, limit)),
            Err(e) => {
                tracing::warn!(error = %e, "shared rate-limit counters unavailable");
                Err(unavailable())
            }
        }
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
        let mut windows = self.windows.lock().map_err(|_| unavailable())?;
        let now = Instant::now();
        let entry_key = (scope, key.to_owned());
        if !windows.contains_key(&entry_key) && windows.len() >= self.limits.max_tracked_keys {
            windows.retain(|(s, _), w| now.duration_since(w.started) < self.limit(*s).window);
            if windows.len() >= self.limits.max_tracked_keys {
                return Err(unavailable());
            }
        }
        let window = windows.entry(entry_key).or_insert(Window {
            started: now,
            count: 0,
        });
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
    fn fails_closed_when_it_cannot_track_another_key() {
        let limiter = RateLimiter::new(limits(5, 2));
        assert!(limiter.check_local(Scope::Ip, "1").is_ok());
        assert!(limiter.check_local(Scope::Ip, "2").is_ok());
        let refused = limiter.check_local(Scope::Ip, "3").unwrap_err();
        assert!(refused.to_string().contains("unavailable"));
    }
}
