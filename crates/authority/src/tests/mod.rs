//! Each rule of the crate tested alone.

mod docs;
mod format;
mod legacy;
mod progress;
mod route;
mod standin;

use crate::{parse, Policy};

/// The three-tier example checked into the repository.
pub const THREE_TIER: &str = include_str!("../../../../docs/examples/authority-three-tier.toml");

pub fn three_tier() -> Policy {
    parse(THREE_TIER).expect("the three-tier example loads")
}

/// A minimal valid policy with `body` (rules) in front of the fallbacks.
pub fn with_rules(roles: &str, body: &str) -> String {
    format!(
        "[roles]\n{roles}\n{body}\n[unnamed_currency]\nreason = \"other currencies\"\n[[unnamed_currency.step]]\nrole = \"buyer\"\n\n[no_rule]\nreason = \"nothing matched\"\n[[no_rule.step]]\nrole = \"buyer\"\n"
    )
}
