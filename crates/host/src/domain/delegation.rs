//! Stand-ins (docs/authority.md, "Stand-ins"): an approver lets another
//! approver of the organization act for them in some of their roles, for a
//! span of days in the delegator's own time zone. The delegator's key signs
//! a statement naming this host, the delegation and every value of it; the
//! host checks it, turns the days into a UTC window (the first moment of
//! the first day to the first moment after the last, in the zone), and
//! keeps the request and the statement whole. Either side may revoke it.

use std::collections::HashMap;

use anp::keys;
use authority::{Holders, Person, Policy, StandIn};
use countersign_host_api::approver::{DelegateRequest, Delegation, DelegationState};
use countersign_host_api::signing::delegation_statement;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use time::OffsetDateTime;

use super::DomainError;
use crate::store::{ApproverRow, DelegationRow};

/// The longest span one delegation may cover, in days.
pub const MAX_DAYS: i64 = 366;
/// The most roles one delegation may hand over.
pub const MAX_ROLES: usize = 20;

/// The roles `email` holds in `policy` (none under the old threshold,
/// whose one role every approver holds already).
pub fn roles_held(policy: &Policy, email: &str) -> Vec<String> {
    let me = Person::new(email);
    policy
        .roles
        .iter()
        .filter(|(_, holders)| matches!(holders, Holders::People(p) if p.contains(&me)))
        .map(|(role, _)| role.clone())
        .collect()
}

/// A day written `YYYY-MM-DD`, named `field` in a refusal.
fn day(text: &str, field: &str) -> Result<Date, DomainError> {
    let valid = text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-';
    valid
        .then(|| text.parse::<Date>().ok())
        .flatten()
        .ok_or_else(|| {
            DomainError::Invalid(format!(
                "{field} must be a day written YYYY-MM-DD, such as 2026-12-24; got {text:?}."
            ))
        })
}

/// The zone named `zone`, or why not.
fn zone_named(zone: &str) -> Result<TimeZone, DomainError> {
    if zone.is_empty() || zone.len() > 64 {
        return Err(DomainError::Invalid(
            "zone must name a time zone (an IANA name such as Europe/Berlin).".into(),
        ));
    }
    TimeZone::get(zone).map_err(|_| {
        DomainError::Invalid(format!(
            "zone {zone:?} is not a time zone this host knows (an IANA name such as Europe/Berlin or America/New_York)."
        ))
    })
}

/// The UTC window (unix seconds) of the days `from`..=`to` in `tz`: from
/// the first moment of `from` to the first moment of the day after `to`.
fn window(from: Date, to: Date, tz: &TimeZone) -> Result<(i64, i64), DomainError> {
    let start = from
        .to_zoned_datetime(tz.clone())
        .map_err(|e| DomainError::Invalid(format!("from_date: {e}.")))?;
    let after = to
        .tomorrow()
        .and_then(|d| d.to_zoned_datetime(tz.clone()))
        .map_err(|e| DomainError::Invalid(format!("to_date: {e}.")))?;
    Ok((start.timestamp().as_second(), after.timestamp().as_second()))
}

/// Today in `tz` at `now`.
fn today(tz: &TimeZone, now: OffsetDateTime) -> Result<Date, DomainError> {
    let ts = jiff::Timestamp::from_second(now.unix_timestamp())
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    Ok(ts.to_zoned_datetime(tz.clone()).date())
}

/// Checks a delegation asked by `from` (authenticated with its key, for
/// the host `authority`) and answers the record to store. `held` are the
/// roles `from` holds now; `colleagues` the org's approvers enrolled now.
pub fn delegation(
    from: &ApproverRow,
    req: &DelegateRequest,
    authority: &str,
    held: &[String],
    colleagues: &[ApproverRow],
    now: OffsetDateTime,
) -> Result<DelegationRow, DomainError> {
    let id_ok = !req.delegation_id.is_empty()
        && req.delegation_id.len() <= 64
        && req
            .delegation_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !id_ok {
        return Err(DomainError::Invalid(
            "delegation_id must be 1 to 64 letters, digits or hyphens (a UUID, for example)."
                .into(),
        ));
    }
    let to = Person::new(&req.to);
    if to.as_str() == Person::new(&from.email).as_str() {
        return Err(DomainError::Invalid(
            "to is you: a stand-in is another approver of your organization.".into(),
        ));
    }
    if !colleagues
        .iter()
        .any(|c| Person::new(&c.email) == to && c.id != from.id)
    {
        return Err(DomainError::Invalid(format!(
            "to: {:?} is not an approver of your organization enrolled now; a stand-in must be one.",
            req.to
        )));
    }
    if held.is_empty() {
        return Err(DomainError::Invalid(
            "You hold no role of your organization's policy of authority (or it has none loaded): there is nothing to hand over.".into(),
        ));
    }
    if req.roles.is_empty() || req.roles.len() > MAX_ROLES {
        return Err(DomainError::Invalid(format!(
            "roles must name 1 to {MAX_ROLES} of the roles you hold ({}).",
            held.join(", ")
        )));
    }
    for (n, role) in req.roles.iter().enumerate() {
        if !held.contains(role) {
            return Err(DomainError::Invalid(format!(
                "roles[{n}]: you do not hold {role:?}; you hold {}.",
                held.join(", ")
            )));
        }
        if req.roles[..n].contains(role) {
            return Err(DomainError::Invalid(format!(
                "roles[{n}]: {role:?} is named twice."
            )));
        }
    }
    let tz = zone_named(&req.zone)?;
    let (from_date, to_date) = (
        day(&req.from_date, "from_date")?,
        day(&req.to_date, "to_date")?,
    );
    if to_date < from_date {
        return Err(DomainError::Invalid(format!(
            "to_date ({}) is before from_date ({}): the last day comes on or after the first.",
            req.to_date, req.from_date
        )));
    }
    let today = today(&tz, now)?;
    if from_date < today {
        return Err(DomainError::Invalid(format!(
            "from_date ({}) is before today in {} ({today}): a delegation starts today or later.",
            req.from_date, req.zone
        )));
    }
    let span = (to_date - from_date).get_days() as i64 + 1;
    if span > MAX_DAYS {
        return Err(DomainError::Invalid(format!(
            "from_date to to_date is {span} days; a delegation covers at most {MAX_DAYS}."
        )));
    }
    let at = anp::api::parse_timestamp(&req.at)
        .ok_or_else(|| DomainError::Invalid("at must be an RFC 3339 time.".into()))?;
    let window_secs = time::Duration::seconds(anp::api::TIMESTAMP_WINDOW_SECS);
    if at > now + window_secs || at < now - window_secs {
        return Err(DomainError::Invalid(format!(
            "at is more than {} seconds from the host's time ({}): make the statement now.",
            anp::api::TIMESTAMP_WINDOW_SECS,
            anp::api::format_timestamp(now)
        )));
    }
    let statement = delegation_statement(
        authority,
        &req.delegation_id,
        &from.id,
        to.as_str(),
        &req.roles,
        &req.from_date,
        &req.to_date,
        &req.zone,
        &req.at,
    );
    let key = keys::parse_public_key(&from.public_key)
        .map_err(|e| DomainError::Internal(format!("stored approver key: {e}")))?;
    if !keys::verify_b64(&key, statement.as_bytes(), &req.signature) {
        return Err(DomainError::BadSignature(
            "signature is not your key's signature of the delegation statement (countersign/delegate-roles/v1, this host's authority, delegation_id, your approver id, to, the roles joined by commas, from_date, to_date, zone, at).".into(),
        ));
    }
    let (starts_at, ends_at) = window(from_date, to_date, &tz)?;
    let request = serde_json::to_string(req).map_err(|e| DomainError::Internal(e.to_string()))?;
    Ok(DelegationRow {
        id: req.delegation_id.clone(),
        org_handle: from.org_handle.clone(),
        from_id: from.id.clone(),
        from_email: Person::new(&from.email).to_string(),
        to_email: to.to_string(),
        request,
        statement,
        starts_at,
        ends_at,
        created_at: anp::api::format_timestamp(now),
        revoked_at: None,
        revoked_by: None,
    })
}

/// Whether a delegation found under the same id is this one sent again
/// (answered the same) or another (refused).
pub fn same(stored: &DelegationRow, asked: &DelegationRow) -> Result<(), DomainError> {
    // The same values; when it was signed may differ (a console that sent
    // it again signed it again).
    let values = |row: &DelegationRow| {
        serde_json::from_str::<DelegateRequest>(&row.request)
            .ok()
            .map(|r| (r.to, r.roles, r.from_date, r.to_date, r.zone))
    };
    let same = stored.org_handle == asked.org_handle
        && stored.from_email == asked.from_email
        && values(stored).is_some()
        && values(stored) == values(asked);
    if same {
        return Ok(());
    }
    Err(DomainError::RequestConflict(format!(
        "delegation_id {} names another delegation already; choose a new id.",
        asked.id
    )))
}

/// The delegations in force among `rows`, as routing's progress reads
/// them (it checks the window against its own `now`).
pub fn stand_ins(rows: &[DelegationRow]) -> Vec<StandIn> {
    rows.iter()
        .filter(|r| r.revoked_at.is_none())
        .filter_map(|r| {
            let req: DelegateRequest = serde_json::from_str(&r.request).ok()?;
            Some(StandIn {
                id: r.id.clone(),
                from: Person::new(&r.from_email),
                to: Person::new(&r.to_email),
                roles: req.roles,
                starts_at: r.starts_at,
                ends_at: r.ends_at,
            })
        })
        .collect()
}

/// A stored delegation as the approver API shows it; `names` are the org's
/// approvers' names by lower-cased email.
pub fn view(
    row: &DelegationRow,
    names: &HashMap<String, String>,
    now: OffsetDateTime,
) -> Result<Delegation, DomainError> {
    let req: DelegateRequest =
        serde_json::from_str(&row.request).map_err(|e| DomainError::Internal(e.to_string()))?;
    let moment = |secs: i64| {
        OffsetDateTime::from_unix_timestamp(secs)
            .map(anp::api::format_timestamp)
            .map_err(|e| DomainError::Internal(e.to_string()))
    };
    let t = now.unix_timestamp();
    let state = if row.revoked_at.is_some() {
        DelegationState::Revoked
    } else if t < row.starts_at {
        DelegationState::Scheduled
    } else if t < row.ends_at {
        DelegationState::InForce
    } else {
        DelegationState::Ended
    };
    let name = |email: &str| {
        names
            .get(email)
            .cloned()
            .unwrap_or_else(|| email.to_owned())
    };
    Ok(Delegation {
        delegation_id: row.id.clone(),
        from: row.from_email.clone(),
        from_name: name(&row.from_email),
        to: row.to_email.clone(),
        to_name: name(&row.to_email),
        roles: req.roles,
        from_date: req.from_date,
        to_date: req.to_date,
        zone: req.zone,
        starts_at: moment(row.starts_at)?,
        ends_at: moment(row.ends_at)?,
        state,
        created_at: row.created_at.clone(),
        revoked_at: row.revoked_at.clone(),
        revoked_by: row.revoked_by.clone(),
        statement: row.statement.clone(),
        signature: req.signature,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approver(key: &keys::SigningKey, id: &str, email: &str) -> ApproverRow {
        ApproverRow {
            id: id.into(),
            org_handle: "acme".into(),
            name: email.into(),
            email: email.into(),
            public_key: keys::public_key_b64(&key.verifying_key()),
            fingerprint: keys::fingerprint(&key.verifying_key()),
            enrolled_at: "2026-01-01T00:00:00Z".into(),
            revoked_at: None,
            retired_at: None,
        }
    }

    const NOW: &str = "2026-12-07T10:00:00Z";

    fn now() -> OffsetDateTime {
        anp::api::parse_timestamp(NOW).unwrap()
    }

    fn request(
        key: &keys::SigningKey,
        from: &str,
        to: &str,
        to_date: &str,
        zone: &str,
    ) -> DelegateRequest {
        let roles = vec!["finance".to_owned()];
        let statement = delegation_statement(
            "h:443", "d-1", "ann-id", to, &roles, from, to_date, zone, NOW,
        );
        DelegateRequest {
            delegation_id: "d-1".into(),
            to: to.into(),
            roles,
            from_date: from.into(),
            to_date: to_date.into(),
            zone: zone.into(),
            at: NOW.into(),
            signature: keys::sign_b64(key, statement.as_bytes()),
        }
    }

    #[test]
    fn the_days_are_the_delegators_in_their_zone_and_stored_in_utc() {
        let key = keys::generate_signing_key();
        let ann = approver(&key, "ann-id", "ann@acme.test");
        let grace = approver(&keys::generate_signing_key(), "grace-id", "grace@acme.test");
        let held = vec!["finance".to_owned()];
        let colleagues = vec![ann.clone(), grace];
        let berlin = delegation(
            &ann,
            &request(
                &key,
                "2026-12-10",
                "grace@acme.test",
                "2026-12-11",
                "Europe/Berlin",
            ),
            "h:443",
            &held,
            &colleagues,
            now(),
        )
        .unwrap();
        // 2026-12-10T00:00 in Berlin (UTC+1) is 2026-12-09T23:00Z; the day
        // after the 11th begins at 2026-12-11T23:00Z.
        let unix = |t: &str| anp::api::parse_timestamp(t).unwrap().unix_timestamp();
        assert_eq!(berlin.starts_at, unix("2026-12-09T23:00:00Z"));
        assert_eq!(berlin.ends_at, unix("2026-12-11T23:00:00Z"));
        let ny = delegation(
            &ann,
            &request(
                &key,
                "2026-12-10",
                "grace@acme.test",
                "2026-12-11",
                "America/New_York",
            ),
            "h:443",
            &held,
            &colleagues,
            now(),
        )
        .unwrap();
        assert_eq!(ny.starts_at - berlin.starts_at, 6 * 3600);
    }

    #[test]
    fn each_part_is_checked_and_named() {
        let key = keys::generate_signing_key();
        let ann = approver(&key, "ann-id", "ann@acme.test");
        let grace = approver(&keys::generate_signing_key(), "grace-id", "grace@acme.test");
        let held = vec!["finance".to_owned()];
        let colleagues = vec![ann.clone(), grace];
        let refused = |req: DelegateRequest, held: &[String]| match delegation(
            &ann,
            &req,
            "h:443",
            held,
            &colleagues,
            now(),
        ) {
            Err(DomainError::Invalid(m)) | Err(DomainError::BadSignature(m)) => m,
            other => panic!("{other:?}"),
        };
        let ok = || {
            request(
                &key,
                "2026-12-10",
                "grace@acme.test",
                "2026-12-11",
                "Europe/Berlin",
            )
        };
        assert!(refused(
            DelegateRequest {
                to: "ann@acme.test".into(),
                ..ok()
            },
            &held
        )
        .starts_with("to is you"));
        assert!(refused(
            DelegateRequest {
                to: "nobody@acme.test".into(),
                ..ok()
            },
            &held
        )
        .starts_with("to: "));
        assert!(refused(ok(), &[]).starts_with("You hold no role"));
        assert!(refused(
            DelegateRequest {
                roles: vec!["cfo".into()],
                ..ok()
            },
            &held
        )
        .starts_with("roles[0]: you do not hold"));
        assert!(refused(
            DelegateRequest {
                roles: vec![],
                ..ok()
            },
            &held
        )
        .starts_with("roles must"));
        assert!(refused(
            DelegateRequest {
                zone: "Mars/Olympus".into(),
                ..ok()
            },
            &held
        )
        .starts_with("zone "));
        assert!(refused(
            DelegateRequest {
                from_date: "10.12.2026".into(),
                ..ok()
            },
            &held
        )
        .starts_with("from_date must"));
        assert!(refused(
            DelegateRequest {
                to_date: "2026-12-09".into(),
                ..ok()
            },
            &held
        )
        .starts_with("to_date (2026-12-09) is before"));
        assert!(refused(
            DelegateRequest {
                from_date: "2026-12-06".into(),
                ..ok()
            },
            &held
        )
        .starts_with("from_date (2026-12-06) is before today"));
        assert!(refused(
            DelegateRequest {
                to_date: "2028-01-01".into(),
                ..ok()
            },
            &held
        )
        .contains("at most 366"));
        assert!(refused(
            DelegateRequest {
                at: "2026-12-07T09:00:00Z".into(),
                ..ok()
            },
            &held
        )
        .starts_with("at is more"));
        assert!(refused(
            DelegateRequest {
                delegation_id: "a b".into(),
                ..ok()
            },
            &held
        )
        .starts_with("delegation_id"));
        // Any value changed after signing: the signature fails.
        assert!(refused(
            DelegateRequest {
                to_date: "2026-12-12".into(),
                ..ok()
            },
            &held
        )
        .starts_with("signature"));
        let stranger = keys::generate_signing_key();
        assert!(refused(
            request(
                &stranger,
                "2026-12-10",
                "grace@acme.test",
                "2026-12-11",
                "Europe/Berlin"
            ),
            &held
        )
        .starts_with("signature"));
        assert!(delegation(&ann, &ok(), "h:443", &held, &colleagues, now()).is_ok());
        assert!(delegation(&ann, &ok(), "other:443", &held, &colleagues, now()).is_err());
    }
}
