//! Stand-ins at each connected host (docs/authority.md, "Stand-ins"): the
//! person lets a colleague act for them in some of their roles for a span
//! of days in this computer's zone, signed with their approver key; or
//! takes one back; or sees who may act for them and for whom they may act.
//! The host checks and keeps every delegation; the console only asks.

use crate::context::Context;
use crate::edge::stand_ins as wire;
use crate::error::EngineError;
use crate::store::HostRecord;
use crate::views::{GiveStandIn, HostStandIns, StandInView, StandInsView};

/// The hosts the person has stand-ins at: one per host and approver (a host
/// enrolled once serves every protocol it speaks).
fn distinct_hosts(hosts: Vec<HostRecord>) -> Vec<HostRecord> {
    let mut out: Vec<HostRecord> = Vec::new();
    for h in hosts {
        let seen = out.iter().any(|o| {
            o.url.trim_end_matches('/') == h.url.trim_end_matches('/')
                && o.approver_id == h.approver_id
        });
        if !seen {
            out.push(h);
        }
    }
    out
}

/// This computer's zone's name and today in it.
fn zone_and_today(ctx: &Context) -> (String, String) {
    let humanizer = ctx.humanizer();
    let zone = humanizer.time_zone_name().unwrap_or("UTC").to_owned();
    let today = humanize::Timestamp::from_second(ctx.now().unix_timestamp())
        .map(|t| {
            t.to_zoned_datetime(humanizer.time_zone().clone())
                .date()
                .to_string()
        })
        .unwrap_or_default();
    (zone, today)
}

/// Every connected host's stand-ins for this person; a host that cannot be
/// asked says why in its entry.
pub(crate) async fn list(ctx: &Context) -> Result<StandInsView, EngineError> {
    let hosts = distinct_hosts(ctx.store()?.hosts()?);
    let mut out = Vec::new();
    for host in hosts {
        let mut entry = HostStandIns {
            host_id: host.host_id.clone(),
            host_label: host.label.clone(),
            me: host.approver_email.clone(),
            given: Vec::new(),
            received: Vec::new(),
            my_roles: Vec::new(),
            colleagues: Vec::new(),
            error: None,
        };
        let answer = match ctx.host_io(&host) {
            Ok(io) => wire::list(&io.client, &host).await,
            Err(e) => Err(e),
        };
        match answer {
            Ok(list) => {
                entry.given = list.given;
                entry.received = list.received;
                entry.my_roles = list.my_roles;
                entry.colleagues = list.colleagues;
            }
            // A locked key locks every host alike: the person unlocks it.
            Err(e @ EngineError::Locked(_)) => return Err(e),
            Err(e) => entry.error = Some(e.to_string()),
        }
        out.push(entry);
    }
    let (zone, today) = zone_and_today(ctx);
    Ok(StandInsView {
        hosts: out,
        zone,
        today,
    })
}

/// A day as the host reads it, or the sentence saying what is wrong.
fn check_day(text: &str, field: &str) -> Result<(), EngineError> {
    let shaped = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    if shaped {
        Ok(())
    } else {
        Err(EngineError::InvalidInput(format!(
            "{field} must be a day such as 2026-12-24; got {text:?}."
        )))
    }
}

/// Gives a stand-in at one host, signed with the person's key; answers it
/// as the host keeps it.
pub(crate) async fn give(ctx: &Context, request: &GiveStandIn) -> Result<StandInView, EngineError> {
    let host = ctx
        .store()?
        .host(&request.host_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "host",
            id: request.host_id.clone(),
        })?;
    if request.to.trim().is_empty() {
        return Err(EngineError::InvalidInput(
            "Choose who stands in for you.".into(),
        ));
    }
    if request.roles.is_empty() {
        return Err(EngineError::InvalidInput(
            "Choose at least one of your roles to hand over.".into(),
        ));
    }
    check_day(&request.from_date, "From")?;
    check_day(&request.to_date, "Until")?;
    if request.to_date < request.from_date {
        return Err(EngineError::InvalidInput(format!(
            "Until ({}) is before From ({}): the last day comes on or after the first.",
            request.to_date, request.from_date
        )));
    }
    let (zone, _) = zone_and_today(ctx);
    let io = ctx.host_io(&host)?;
    let id = uuid::Uuid::new_v4().to_string();
    let made = wire::give(
        &io.client,
        &host,
        &id,
        &request.to,
        &request.roles,
        &request.from_date,
        &request.to_date,
        &zone,
        ctx.now(),
    )
    .await?;
    ctx.emit(crate::views::ChangeScope::Inbox, Some(&host.host_id), None);
    Ok(made)
}

/// Takes back (or gives up) a stand-in at one host.
pub(crate) async fn revoke(
    ctx: &Context,
    host_id: &str,
    delegation_id: &str,
) -> Result<StandInView, EngineError> {
    let host = ctx
        .store()?
        .host(host_id)?
        .ok_or_else(|| EngineError::NotFound {
            what: "host",
            id: host_id.to_owned(),
        })?;
    let io = ctx.host_io(&host)?;
    let revoked = wire::revoke(&io.client, &host, delegation_id).await?;
    ctx.emit(crate::views::ChangeScope::Inbox, Some(host_id), None);
    Ok(revoked)
}
