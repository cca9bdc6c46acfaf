//! Who may call the host (agents, approvers, enrollment codes, nonces) and
//! the admin's records (orgs, policies, metadata), written once for both
//! stores: a key is registered by one insert under a unique key, a code is
//! spent by one conditional update, a nonce by one insert under its
//! primary key (on SQLite in the nonce file's own writer, so spending one
//! never waits for an append).

use async_trait::async_trait;

use super::negotiation::{
    agent_columns, agent_of, org_columns, org_of, session_columns, session_state,
};
use super::postgres::{pg_run, PgStore};
use super::sql::{u, Conn, Dialect, Row};
use super::sqlite::{lite_run, SqliteStore};
use super::*;

/// Spends a nonce and, only when it was fresh, counts the request in a
/// shared rate-limit window (PostgreSQL's `rate_windows`): one statement.
const SPEND_AND_COUNT: &str = "WITH spent AS (
         INSERT INTO nonces (principal, nonce, expires_at) VALUES (?1, ?2, ?3)
         ON CONFLICT DO NOTHING RETURNING 1),
     counted AS (
         INSERT INTO rate_windows (scope, key, window_start, count)
         SELECT CAST(?4 AS TEXT), CAST(?5 AS TEXT), CAST(?6 AS BIGINT), 1 WHERE EXISTS (SELECT 1 FROM spent)
         ON CONFLICT (scope, key, window_start) DO UPDATE SET count = rate_windows.count + 1
         RETURNING count)
     SELECT EXISTS (SELECT 1 FROM spent), (SELECT count FROM counted)";

/// The start of a statement spending a remembered agent's nonce
/// ([`SPEND_AND_COUNT`] for an agent `?1` whose copy holds the key `?7`):
/// `agent` is its row as it is now, `spent` the nonce (spent only while
/// the agent still holds that key and is not revoked), `counted` its count
/// in the window `?4` to `?6`, made only when the nonce was fresh.
macro_rules! spend_agent_nonce_with {
    () => {
        concat!(
            "WITH agent AS (SELECT ",
            agent_columns!(""),
            " FROM agents WHERE id = ?1),
     spent AS (
         INSERT INTO nonces (principal, nonce, expires_at)
         SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM agent WHERE public_key = ?7 AND status <> 'revoked')
         ON CONFLICT DO NOTHING RETURNING 1),
     counted AS (
         INSERT INTO rate_windows (scope, key, window_start, count)
         SELECT CAST(?4 AS TEXT), CAST(?5 AS TEXT), CAST(?6 AS BIGINT), 1
         WHERE CAST(?4 AS TEXT) IS NOT NULL AND EXISTS (SELECT 1 FROM spent)
         ON CONFLICT (scope, key, window_start) DO UPDATE SET count = rate_windows.count + 1
         RETURNING count)"
        )
    };
}

/// [`SPEND_AND_COUNT`] for a remembered agent: answers the spend and the
/// count, then the agent's row as it is now (none when it is gone).
const SPEND_AND_COUNT_AGENT: &str = concat!(
    spend_agent_nonce_with!(),
    "
     SELECT EXISTS (SELECT 1 FROM spent), (SELECT count FROM counted), agent.*
     FROM (SELECT 1) AS one LEFT JOIN agent ON TRUE"
);

/// [`SPEND_AND_COUNT_AGENT`] and, in the same statement, the state of the
/// session `?8` the request appends to, with one request counted in its
/// window (`?9` to `?11`) when the nonce was fresh, the agent within its
/// limit `?12` and the owner of the session. Answers the spend, the agent's
/// and the session's counts, the agent's row as it is now, then the
/// session's state (each none when absent).
const SPEND_AND_READ_SESSION: &str = concat!(
    spend_agent_nonce_with!(),
    ",
     session_counted AS (
         INSERT INTO rate_windows (scope, key, window_start, count)
         SELECT CAST(?9 AS TEXT), CAST(?10 AS TEXT), CAST(?11 AS BIGINT), 1
         WHERE (SELECT count FROM counted) <= ?12
           AND EXISTS (SELECT 1 FROM sessions WHERE id = ?8 AND agent_id = ?1)
         ON CONFLICT (scope, key, window_start) DO UPDATE SET count = rate_windows.count + 1
         RETURNING count)
     SELECT EXISTS (SELECT 1 FROM spent), (SELECT count FROM counted),
            (SELECT count FROM session_counted), agent.*, state.*
     FROM (SELECT 1) AS one LEFT JOIN agent ON TRUE
     LEFT JOIN (",
    session_state!("?8"),
    ") AS state ON TRUE"
);

/// The agent's columns in [`SPEND_AND_READ_SESSION`]'s answer (from 3).
const AGENT_COLUMNS: usize = 9;

macro_rules! approver_columns {
    () => {
        "a.id, a.org_handle, a.name, a.email, a.public_key, a.fingerprint, a.enrolled_at, a.revoked_at, a.retired_at"
    };
}

fn approver_of(r: &Row<'_, '_>) -> Result<ApproverRow, StoreError> {
    Ok(ApproverRow {
        id: r.get(0)?,
        org_handle: r.get(1)?,
        name: r.get(2)?,
        email: r.get(3)?,
        public_key: r.get(4)?,
        fingerprint: r.get(5)?,
        enrolled_at: r.get(6)?,
        revoked_at: r.get(7)?,
        retired_at: r.get(8)?,
    })
}

fn registration_of(r: &Row<'_, '_>) -> Result<RegistrationRow, StoreError> {
    Ok(RegistrationRow {
        ordinal: u32::try_from(r.get::<i64>(0)?).unwrap_or(u32::MAX),
        agent_name: r.get(1)?,
        vendor_name: r.get(2)?,
        contact_email: r.get(3)?,
        registered_at: r.get(4)?,
    })
}

fn code_of(r: &Row<'_, '_>) -> Result<CodeRow, StoreError> {
    Ok(CodeRow {
        org_handle: r.get(0)?,
        name: r.get(1)?,
        email: r.get(2)?,
        expires_at: r.get(3)?,
        used: r.get(4)?,
    })
}

fn listing_of(r: &Row<'_, '_>) -> Result<OrgListing, StoreError> {
    Ok(OrgListing {
        org: org_of(r)?,
        created_at: r.get(super::negotiation::ORG_COLUMNS)?,
    })
}

fn text_of(r: &Row<'_, '_>) -> Result<String, StoreError> {
    r.get(0)
}

/// The names an agent registered under last: (ordinal, agent, vendor, email).
type LastNames = (i64, String, String, String);

fn last_names_of(r: &Row<'_, '_>) -> Result<LastNames, StoreError> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
}

/// Registers `a` unless its key is registered, records its names when
/// they differ from the last recorded, and adopts them while no admin has
/// verified the agent's names; inside the dialect's transaction.
async fn register(db: &impl Conn, a: &AgentRow) -> Result<AgentRow, StoreError> {
    db.exec(
        "INSERT INTO agents (id, public_key, fingerprint, agent_name, vendor_name, contact_email, status, registered_at, names_verified)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, FALSE) ON CONFLICT (public_key) DO NOTHING",
        &[&a.id, &a.public_key, &a.fingerprint, &a.agent_name, &a.vendor_name, &a.contact_email, &status_text(a.status), &a.registered_at],
    )
    .await?;
    // Locked on PostgreSQL: two registrations of one key are recorded one
    // after the other (SQLite's one writer orders them already).
    let sql = match db.dialect() {
        Dialect::Sqlite => concat!(
            "SELECT ",
            agent_columns!(""),
            " FROM agents WHERE public_key = ?1"
        ),
        Dialect::Postgres => concat!(
            "SELECT ",
            agent_columns!(""),
            " FROM agents WHERE public_key = ?1 FOR UPDATE"
        ),
    };
    let stored = db
        .row(sql, &[&a.public_key], agent_of)
        .await?
        .ok_or_else(|| StoreError::Corrupt("a registered key vanished".into()))?;
    let last = db
        .row(
            "SELECT ordinal, agent_name, vendor_name, contact_email FROM agent_registrations
             WHERE agent_id = ?1 ORDER BY ordinal DESC LIMIT 1",
            &[&stored.id],
            last_names_of,
        )
        .await?;
    let same = last
        .as_ref()
        .is_some_and(|(_, agent_name, vendor_name, email)| {
            (agent_name, vendor_name, email) == (&a.agent_name, &a.vendor_name, &a.contact_email)
        });
    if same {
        return Ok(stored);
    }
    let ordinal = last.map_or(1, |(n, ..)| n + 1);
    db.exec(
        "INSERT INTO agent_registrations (agent_id, ordinal, agent_name, vendor_name, contact_email, registered_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        &[&stored.id, &ordinal, &a.agent_name, &a.vendor_name, &a.contact_email, &a.registered_at],
    )
    .await?;
    if stored.names_verified {
        return Ok(stored);
    }
    db.exec(
        "UPDATE agents SET agent_name = ?2, vendor_name = ?3, contact_email = ?4 WHERE id = ?1",
        &[&stored.id, &a.agent_name, &a.vendor_name, &a.contact_email],
    )
    .await?;
    Ok(AgentRow {
        agent_name: a.agent_name.clone(),
        vendor_name: a.vendor_name.clone(),
        contact_email: a.contact_email.clone(),
        ..stored
    })
}

/// Retires the old approver and stores the new one, inside the dialect's
/// transaction: the conditional update decides (on PostgreSQL it waits for
/// a concurrent rotation of the same approver, then finds it retired).
async fn rotate(db: &impl Conn, a: &ApproverRow, r: &RotationRow) -> Result<Rotated, StoreError> {
    let retired = db
        .exec(
            "UPDATE approvers SET retired_at = ?2 WHERE id = ?1 AND retired_at IS NULL AND revoked_at IS NULL",
            &[&r.old_id, &r.rotated_at],
        )
        .await?;
    if retired == 1 {
        db.exec(
            "INSERT INTO approvers (id, org_handle, name, email, public_key, fingerprint, enrolled_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[&a.id, &a.org_handle, &a.name, &a.email, &a.public_key, &a.fingerprint, &a.enrolled_at],
        )
        .await?;
        db.exec(
            "INSERT INTO approver_rotations (old_id, new_id, statement, consent, proof, rotated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            &[&r.old_id, &r.new_id, &r.statement, &r.consent, &r.proof, &r.rotated_at],
        )
        .await?;
        return Ok(Rotated::Now(a.clone()));
    }
    let successor = db
        .row(
            concat!(
                "SELECT ",
                approver_columns!(),
                " FROM approver_rotations r JOIN approvers a ON a.id = r.new_id
                 JOIN approvers old ON old.id = r.old_id
                 WHERE r.old_id = ?1 AND old.revoked_at IS NULL"
            ),
            &[&r.old_id],
            approver_of,
        )
        .await?;
    Ok(successor.map_or(Rotated::Refused, Rotated::Before))
}

/// The repositories, once; instantiated below for each store with its
/// `run!`.
macro_rules! principal_repos {
    ($store:ty, $run:ident) => {
        #[async_trait]
        impl PrincipalRepo for $store {
            async fn agent(&self, id: &str) -> Result<Option<AgentRow>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!("SELECT ", agent_columns!(""), " FROM agents WHERE id = ?1"),
                        &[&id],
                        agent_of,
                    )
                    .await
                })
            }

            async fn register_agent(&self, agent: &AgentRow) -> Result<AgentRow, StoreError> {
                let a = agent.clone();
                $run!(self, tx, |db| register(db, &a).await)
            }

            async fn agent_registrations(&self, id: &str) -> Result<Vec<RegistrationRow>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| {
                    db.rows(
                        "SELECT ordinal, agent_name, vendor_name, contact_email, registered_at
                         FROM agent_registrations WHERE agent_id = ?1 ORDER BY ordinal",
                        &[&id],
                        registration_of,
                    )
                    .await
                })
            }

            async fn enrolled_emails(&self, org_handle: &str) -> Result<Vec<String>, StoreError> {
                let org = org_handle.to_owned();
                $run!(self, read, |db| {
                    db.rows(
                        "SELECT DISTINCT email FROM approvers WHERE org_handle = ?1 AND revoked_at IS NULL AND retired_at IS NULL ORDER BY email",
                        &[&org],
                        text_of,
                    )
                    .await
                })
            }

            async fn revoked_approver(
                &self,
                id: &str,
            ) -> Result<Option<(String, String)>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        "SELECT public_key, revoked_at FROM approvers
                         WHERE id = ?1 AND revoked_at IS NOT NULL",
                        &[&id],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .await
                })
            }

            async fn active_approver(&self, id: &str) -> Result<Option<ApproverRow>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!(
                            "SELECT ",
                            approver_columns!(),
                            " FROM approvers a JOIN orgs o ON o.handle = a.org_handle
                             WHERE a.id = ?1 AND a.revoked_at IS NULL AND a.retired_at IS NULL AND NOT o.disabled"
                        ),
                        &[&id],
                        approver_of,
                    )
                    .await
                })
            }

            async fn enrollment_code(&self, code_hash: &str) -> Result<Option<CodeRow>, StoreError> {
                let hash = code_hash.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        "SELECT org_handle, name, email, expires_at, used_at IS NOT NULL FROM enrollment_codes WHERE code_hash = ?1",
                        &[&hash],
                        code_of,
                    )
                    .await
                })
            }

            async fn enroll(
                &self,
                code_hash: &str,
                a: &ApproverRow,
                now_unix: i64,
            ) -> Result<bool, StoreError> {
                let (hash, a) = (code_hash.to_owned(), a.clone());
                $run!(self, tx, |db| {
                    let spent = db
                        .exec(
                            "UPDATE enrollment_codes SET used_at = ?2 WHERE code_hash = ?1 AND used_at IS NULL AND expires_at > ?3",
                            &[&hash, &a.enrolled_at, &now_unix],
                        )
                        .await?;
                    if spent == 0 {
                        return Ok(false);
                    }
                    db.exec(
                        "INSERT INTO approvers (id, org_handle, name, email, public_key, fingerprint, enrolled_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                        &[&a.id, &a.org_handle, &a.name, &a.email, &a.public_key, &a.fingerprint, &a.enrolled_at],
                    )
                    .await?;
                    Ok(true)
                })
            }

            async fn spend_nonce(
                &self,
                principal: &str,
                nonce: &str,
                expires_at: i64,
                counting: Option<&SharedWindow>,
            ) -> Result<NonceSpent, StoreError> {
                let (principal, nonce) = (principal.to_owned(), nonce.to_owned());
                let counting = counting.cloned();
                $run!(self, nonces, |db| {
                    match &counting {
                        None => Ok(NonceSpent {
                            fresh: db
                                .exec(
                                    "INSERT INTO nonces (principal, nonce, expires_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                                    &[&principal, &nonce, &expires_at],
                                )
                                .await?
                                == 1,
                            counted: None,
                        }),
                        Some(w) => db
                            .row(
                                SPEND_AND_COUNT,
                                &[&principal, &nonce, &expires_at, &w.scope, &w.key, &w.start],
                                |r| {
                                    Ok(NonceSpent {
                                        fresh: r.get(0)?,
                                        counted: r.get::<Option<i64>>(1)?.map(u),
                                    })
                                },
                            )
                            .await?
                            .ok_or_else(|| StoreError::Corrupt("spending a nonce answered no row".into())),
                    }
                })
            }

            fn remembered_agent(&self, id: &str) -> Option<AgentRow> {
                self.agent_copies()?.get(id)
            }

            fn remember_agent(&self, agent: &AgentRow) {
                if let Some(copies) = self.agent_copies() {
                    copies.keep(agent);
                }
            }

            async fn spend_agent_nonce(
                &self,
                agent: &AgentRow,
                nonce: &str,
                expires_at: i64,
                counting: Option<&SharedWindow>,
            ) -> Result<(NonceSpent, Option<AgentRow>), StoreError> {
                let Some(copies) = self.agent_copies() else {
                    // No copies (SQLite): the row is read by itself, after.
                    let spent = self.spend_nonce(&agent.id, nonce, expires_at, counting).await?;
                    return Ok((spent, self.agent(&agent.id).await?));
                };
                let (id, key, nonce) = (agent.id.clone(), agent.public_key.clone(), nonce.to_owned());
                let (scope, window_key, start) = match counting {
                    Some(w) => (Some(w.scope.to_owned()), Some(w.key.clone()), Some(w.start)),
                    None => (None, None, None),
                };
                let (spent, now) = $run!(self, nonces, |db| {
                    db.row(
                        SPEND_AND_COUNT_AGENT,
                        &[&id, &nonce, &expires_at, &scope, &window_key, &start, &key],
                        |r| {
                            let spent = NonceSpent {
                                fresh: r.get(0)?,
                                counted: r.get::<Option<i64>>(1)?.map(u),
                            };
                            let now = match r.get::<Option<String>>(2)? {
                                Some(_) => Some(super::negotiation::agent_from(r, 2)?),
                                None => None,
                            };
                            Ok((spent, now))
                        },
                    )
                    .await?
                    .ok_or_else(|| StoreError::Corrupt("spending a nonce answered no row".into()))
                })?;
                Ok((spent, copies.settle(agent, now)))
            }

            async fn spend_and_read_session(
                &self,
                agent: &AgentRow,
                nonce: &str,
                expires_at: i64,
                counting: &SharedWindow,
                agent_limit: u64,
                session_id: &str,
                session_counting: &SharedWindow,
            ) -> Result<Option<AppendStart>, StoreError> {
                let Some(copies) = self.agent_copies() else {
                    return Ok(None);
                };
                let (id, key, nonce) = (agent.id.clone(), agent.public_key.clone(), nonce.to_owned());
                let (w, sw, session) = (counting.clone(), session_counting.clone(), session_id.to_owned());
                let limit = super::sql::i(agent_limit);
                let start = $run!(self, nonces, |db| {
                    db.row(
                        SPEND_AND_READ_SESSION,
                        &[
                            &id, &nonce, &expires_at, &w.scope, &w.key, &w.start, &key,
                            &session, &sw.scope, &sw.key, &sw.start, &limit,
                        ],
                        |r| {
                            let spent = NonceSpent {
                                fresh: r.get(0)?,
                                counted: r.get::<Option<i64>>(1)?.map(u),
                            };
                            let session_counted = r.get::<Option<i64>>(2)?.map(u);
                            let now = match r.get::<Option<String>>(3)? {
                                Some(_) => Some(super::negotiation::agent_from(r, 3)?),
                                None => None,
                            };
                            let at = 3 + AGENT_COLUMNS;
                            let state = match r.get::<Option<String>>(at)? {
                                Some(_) => Some((super::negotiation::session_row_from(r, at)?, session_counted)),
                                None => None,
                            };
                            Ok(AppendStart { spent, agent: now, session: state })
                        },
                    )
                    .await?
                    .ok_or_else(|| StoreError::Corrupt("spending a nonce answered no row".into()))
                })?;
                let mut start = start;
                start.agent = copies.settle(agent, start.agent.take());
                Ok(Some(start))
            }

            async fn purge_nonces(&self, now_unix: i64) -> Result<u64, StoreError> {
                $run!(self, nonces, |db| {
                    if db.dialect() == Dialect::Postgres {
                        // Old rate-limit windows go with them (the longest
                        // window is a day); only PostgreSQL shares them.
                        db.exec(
                            "DELETE FROM rate_windows WHERE window_start < ?1",
                            &[&(now_unix - 86_400)],
                        )
                        .await?;
                    }
                    db.exec("DELETE FROM nonces WHERE expires_at < ?1", &[&now_unix])
                        .await
                })
            }

            async fn rotatable_approver(&self, id: &str) -> Result<Option<ApproverRow>, StoreError> {
                let id = id.to_owned();
                $run!(self, read, |db| {
                    db.row(
                        concat!(
                            "SELECT ",
                            approver_columns!(),
                            " FROM approvers a JOIN orgs o ON o.handle = a.org_handle
                             WHERE a.id = ?1 AND a.revoked_at IS NULL AND NOT o.disabled"
                        ),
                        &[&id],
                        approver_of,
                    )
                    .await
                })
            }

            async fn rotate_approver(
                &self,
                new: &ApproverRow,
                rotation: &RotationRow,
            ) -> Result<Rotated, StoreError> {
                let (a, r) = (new.clone(), rotation.clone());
                $run!(self, tx, |db| rotate(db, &a, &r).await)
            }

            async fn approver_keys(&self) -> Result<Vec<ApproverRow>, StoreError> {
                $run!(self, read, |db| {
                    db.rows(
                        concat!("SELECT ", approver_columns!(), " FROM approvers a ORDER BY a.enrolled_at, a.id"),
                        &[],
                        approver_of,
                    )
                    .await
                })
            }
        }

        #[async_trait]
        impl AdminRepo for $store {
            async fn insert_org(&self, org: &Org, created_at: &str) -> Result<(), StoreError> {
                let (o, at) = (org.clone(), created_at.to_owned());
                $run!(self, write, |db| {
                    db.exec(
                        "INSERT INTO orgs (handle, name, sandbox, disabled, policy, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        &[&o.handle, &o.name, &o.sandbox, &o.disabled, &o.policy, &at],
                    )
                    .await?;
                    Ok(())
                })
            }

            async fn orgs(&self) -> Result<Vec<OrgListing>, StoreError> {
                $run!(self, read, |db| {
                    db.rows(
                        concat!("SELECT ", org_columns!(), ", o.created_at FROM orgs o ORDER BY o.sandbox DESC, o.created_at, o.handle"),
                        &[],
                        listing_of,
                    )
                    .await
                })
            }

            async fn disable_org(&self, handle: &str) -> Result<bool, StoreError> {
                let handle = handle.to_owned();
                $run!(self, write, |db| {
                    Ok(db
                        .exec("UPDATE orgs SET disabled = TRUE WHERE handle = ?1", &[&handle])
                        .await?
                        == 1)
                })
            }

            async fn set_policy(&self, handle: &str, policy_json: &str) -> Result<bool, StoreError> {
                let (handle, policy) = (handle.to_owned(), policy_json.to_owned());
                $run!(self, write, |db| {
                    Ok(db
                        .exec("UPDATE orgs SET policy = ?2 WHERE handle = ?1", &[&handle, &policy])
                        .await?
                        == 1)
                })
            }

            async fn agents(&self) -> Result<Vec<AgentRow>, StoreError> {
                $run!(self, read, |db| {
                    db.rows(
                        concat!("SELECT ", agent_columns!(""), " FROM agents ORDER BY registered_at, id"),
                        &[],
                        agent_of,
                    )
                    .await
                })
            }

            async fn set_agent_status(&self, id: &str, status: &str) -> Result<bool, StoreError> {
                let (id, status) = (id.to_owned(), status.to_owned());
                $run!(self, write, |db| {
                    Ok(db
                        .exec(
                            "UPDATE agents SET status = ?2,
                                 names_verified = CASE WHEN ?2 = 'verified' THEN TRUE ELSE names_verified END
                             WHERE id = ?1",
                            &[&id, &status],
                        )
                        .await?
                        == 1)
                })
            }

            async fn insert_code(&self, code_hash: &str, code: &CodeRow) -> Result<(), StoreError> {
                let (hash, k) = (code_hash.to_owned(), code.clone());
                $run!(self, write, |db| {
                    db.exec(
                        "INSERT INTO enrollment_codes (code_hash, org_handle, name, email, expires_at, used_at) VALUES (?1, ?2, ?3, ?4, ?5, NULL)",
                        &[&hash, &k.org_handle, &k.name, &k.email, &k.expires_at],
                    )
                    .await?;
                    Ok(())
                })
            }

            async fn approvers(&self) -> Result<Vec<ApproverRow>, StoreError> {
                self.approver_keys().await
            }

            async fn revoke_approver(&self, id: &str, at: &str) -> Result<bool, StoreError> {
                let (id, at) = (id.to_owned(), at.to_owned());
                $run!(self, write, |db| {
                    Ok(db
                        .exec(
                            "UPDATE approvers SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                            &[&id, &at],
                        )
                        .await?
                        == 1)
                })
            }

            async fn meta_init(&self, key: &str, value: &str) -> Result<String, StoreError> {
                let (key, value) = (key.to_owned(), value.to_owned());
                $run!(self, write, |db| {
                    db.exec(
                        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
                        &[&key, &value],
                    )
                    .await?;
                    db.row("SELECT value FROM meta WHERE key = ?1", &[&key], text_of)
                        .await?
                        .ok_or_else(|| StoreError::Corrupt(format!("meta {key} vanished")))
                })
            }

            async fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
                let key = key.to_owned();
                $run!(self, read, |db| {
                    db.row("SELECT value FROM meta WHERE key = ?1", &[&key], text_of).await
                })
            }
        }
    };
}

impl SqliteStore {
    /// SQLite keeps no copies of agents (`copies.rs`).
    fn agent_copies(&self) -> Option<&super::copies::AgentCopies> {
        None
    }
}

impl PgStore {
    /// The agents this process authenticated (`copies.rs`).
    fn agent_copies(&self) -> Option<&super::copies::AgentCopies> {
        Some(&self.agents)
    }
}

principal_repos!(SqliteStore, lite_run);
principal_repos!(PgStore, pg_run);
