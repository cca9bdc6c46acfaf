//! The old one-number policy (`approval.above_total`, `approvers_required`
//! in the host's buyer policy) read as a policy of authority, so an org
//! that never loads one is routed exactly as before:
//!
//! 1. ANEX asks: one approver (an ANEX ask has no amount and always took one);
//! 2. an amount up to `above_total` (inclusive), in whatever currency the
//!    request is in (the old threshold never named one): one approver;
//! 3. above it: `approvers_required` distinct approvers;
//!
//! and a request with no amount the host could read gets the strictest
//! rule, `approvers_required`, as the gate always gave it. Every enrolled
//! approver of the org holds the one role, `approver`.

use std::collections::BTreeMap;

use rust_decimal::Decimal;

use crate::policy::{
    Band, Chain, Conditions, Currency, Fallback, Holders, Need, Part, Policy, Protocol, Rule, Step,
};

/// The one role of the legacy reading.
pub const LEGACY_ROLE: &str = "approver";

fn chain(count: u32) -> Chain {
    let need = if count <= 1 {
        Need::One
    } else {
        Need::Count(count)
    };
    Chain {
        steps: vec![Step {
            parts: vec![Part {
                role: LEGACY_ROLE.to_owned(),
                need,
            }],
            respond_within_minutes: None,
            escalate_to: None,
        }],
    }
}

/// The legacy policy as a policy of authority.
pub fn legacy(above_total: Decimal, approvers_required: u32) -> Policy {
    let band = |above, up_to| Conditions {
        amounts: vec![Band {
            currency: Currency::Any,
            above,
            up_to,
        }],
        ..Conditions::default()
    };
    let strictest = Fallback {
        reason: format!(
            "no amount could be read, so the legacy policy's strictest rule applies: {approvers_required} approver(s)"
        ),
        chain: chain(approvers_required),
    };
    Policy {
        roles: BTreeMap::from([(LEGACY_ROLE.to_owned(), Holders::EveryApprover)]),
        rules: vec![
            Rule {
                name: "ANEX asks (legacy policy)".into(),
                when: Conditions {
                    protocols: vec![Protocol::Anex],
                    ..Conditions::default()
                },
                chain: chain(1),
            },
            Rule {
                name: format!("Up to {above_total} (legacy approval.above_total)"),
                when: band(None, Some(above_total)),
                chain: chain(1),
            },
            Rule {
                name: format!("Above {above_total} (legacy approval.above_total)"),
                when: band(Some(above_total), None),
                chain: chain(approvers_required),
            },
        ],
        unnamed_currency: strictest.clone(),
        no_rule: strictest,
    }
}
