//! Fixed-window rate limits per IP, agent, session and for registration
//! (SPEC §7). In memory, and failing closed: when the limiter cannot decide
//! (its lock is poisoned, or it tracks too many keys to admit another) it
//! refuses.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::config::{Limit, Limits};
use crate::error::ApiError;

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
}

impl RateLimiter {
    /// A limiter enforcing `limits`.
    pub fn new(limits: Limits) -> RateLimiter {
        RateLimiter {
            limits,
            windows: Mutex::new(HashMap::new()),
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

    /// Counts one request against `key` in `scope`; refuses with a 429 when
    /// over the limit or when the limiter cannot decide.
    pub fn check(&self, scope: Scope, key: &str) -> Result<(), ApiError> {
        let limit = self.limit(scope);
        let unavailable = || {
            ApiError::RateLimited(
                "The rate limiter is unavailable, so the host refuses requests until it recovers."
                    .into(),
            )
        };
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
            return Err(ApiError::RateLimited(format!(
                "Too many {}: at most {} per {} seconds.",
                scope.describe(),
                limit.max,
                limit.window.as_secs()
            )));
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
            max_tracked_keys: tracked,
        }
    }

    #[test]
    fn refuses_after_max_and_keys_are_independent() {
        let limiter = RateLimiter::new(limits(2, 100));
        assert!(limiter.check(Scope::Agent, "a").is_ok());
        assert!(limiter.check(Scope::Agent, "a").is_ok());
        let refused = limiter.check(Scope::Agent, "a").unwrap_err();
        assert!(refused.to_string().contains("at most 2"));
        assert!(limiter.check(Scope::Agent, "b").is_ok());
        assert!(limiter.check(Scope::Session, "a").is_ok());
    }

    #[test]
    fn fails_closed_when_it_cannot_track_another_key() {
        let limiter = RateLimiter::new(limits(5, 2));
        assert!(limiter.check(Scope::Ip, "1").is_ok());
        assert!(limiter.check(Scope::Ip, "2").is_ok());
        let refused = limiter.check(Scope::Ip, "3").unwrap_err();
        assert!(refused.to_string().contains("unavailable"));
    }
}
