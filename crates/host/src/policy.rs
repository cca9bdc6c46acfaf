//! An org's buyer policy: what its rule-based agent may propose, what its
//! screening protects, and how many people must approve. Loaded from a JSON
//! file by `countersign-host policy load`; money is written as decimal strings so
//! nothing is ever read through a float.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// Prices for one SKU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkuPolicy {
    /// The unit price the agent opens its counter-offers at.
    pub target_unit_price: Decimal,
    /// The highest unit price the agent will ever propose.
    pub walk_away_unit_price: Decimal,
}

/// Above `above_total` (exclusive), `approvers_required` distinct people
/// must approve before an offer is accepted; otherwise one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalPolicy {
    /// Offer total (annual, exact decimal) above which more approvers are needed.
    pub above_total: Decimal,
    /// How many distinct approvers then.
    pub approvers_required: u32,
}

/// A confidential value screening must keep out of every outbound payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretValue {
    /// What it is, for the reason a person reads ("budget ceiling").
    pub label: String,
    /// The value, as text or a decimal number.
    pub value: String,
}

/// The whole policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Most counter-offers the agent drafts in one session.
    pub max_rounds: u32,
    /// Share (0 to 1) of the gap between target and walk-away conceded per round.
    pub concession_per_round: Decimal,
    /// Prices per SKU; line items with other SKUs are left as offered.
    #[serde(default)]
    pub skus: BTreeMap<String, SkuPolicy>,
    /// The approval policy.
    pub approval: ApprovalPolicy,
    /// Topics the buyer's envelope may discuss.
    #[serde(default)]
    pub may_discuss: Vec<String>,
    /// What the buyer's envelope may disclose.
    #[serde(default)]
    pub may_disclose: Vec<String>,
    /// The envelope's `will_not_disclose`; screening blocks them too.
    #[serde(default)]
    pub will_not_disclose: Vec<String>,
    /// Values screening blocks (budget ceilings and the like). Walk-away
    /// prices of `skus` are added automatically.
    #[serde(default)]
    pub secret_values: Vec<SecretValue>,
    /// The envelope's human contact.
    #[serde(default)]
    pub human_contact: Option<String>,
}

/// A policy file that cannot be used, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// Not JSON of the policy's shape.
    #[error("policy file is not valid: {0}")]
    Parse(String),
    /// Well-formed, but inconsistent.
    #[error("policy: {0}")]
    Rule(String),
}

impl Policy {
    /// Reads and checks a policy file's text.
    pub fn from_json(text: &str) -> Result<Policy, PolicyError> {
        let policy: Policy =
            serde_json::from_str(text).map_err(|e| PolicyError::Parse(e.to_string()))?;
        policy.check()?;
        Ok(policy)
    }

    /// The rules a usable policy keeps.
    pub fn check(&self) -> Result<(), PolicyError> {
        let rule = |m: String| Err(PolicyError::Rule(m));
        if self.concession_per_round < Decimal::ZERO || self.concession_per_round > Decimal::ONE {
            return rule("concession_per_round must be between 0 and 1".into());
        }
        if self.may_discuss.is_empty() {
            return rule("may_discuss needs at least one topic (the envelope requires one)".into());
        }
        if self.max_rounds > 100 {
            return rule("max_rounds must be at most 100".into());
        }
        if self.approval.approvers_required == 0 || self.approval.approvers_required > 20 {
            return rule("approval.approvers_required must be between 1 and 20".into());
        }
        for (sku, p) in &self.skus {
            if p.target_unit_price < Decimal::ZERO {
                return rule(format!("skus.{sku}.target_unit_price must not be negative"));
            }
            if p.walk_away_unit_price < p.target_unit_price {
                return rule(format!(
                    "skus.{sku}.walk_away_unit_price must be at least target_unit_price"
                ));
            }
        }
        if let Err(e) =
            anp::payload::parse_payload(anp::EventKind::Envelope, &self.envelope("Buyer"))
        {
            return rule(format!("the buyer envelope it declares is invalid: {e}"));
        }
        for (i, s) in self.secret_values.iter().enumerate() {
            if s.value.trim().is_empty() {
                return rule(format!("secret_values[{i}].value must not be empty"));
            }
        }
        Ok(())
    }

    /// The scripted sandbox buyer's policy (Fabrikam Industries).
    pub fn sandbox() -> Policy {
        let d = |s: &str| s.parse::<Decimal>().unwrap_or_default();
        Policy {
            max_rounds: 3,
            concession_per_round: d("0.25"),
            skus: BTreeMap::from([(
                "CRM-ENT".to_owned(),
                SkuPolicy {
                    target_unit_price: d("1000"),
                    walk_away_unit_price: d("1150"),
                },
            )]),
            approval: ApprovalPolicy {
                above_total: d("250000"),
                approvers_required: 2,
            },
            may_discuss: vec![
                "renewal pricing".into(),
                "term length".into(),
                "payment terms".into(),
            ],
            may_disclose: vec!["negotiation positions grounded in market benchmarks".into()],
            will_not_disclose: vec![
                "internal budget ceilings".into(),
                "walk-away thresholds".into(),
                "competing quotes".into(),
            ],
            secret_values: vec![SecretValue {
                label: "budget ceiling".into(),
                value: "600000".into(),
            }],
            human_contact: Some("procurement@fabrikam.example".into()),
        }
    }

    /// What a newly created org starts with until a policy file is loaded:
    /// no prices (the agent drafts nothing), one approver for everything.
    pub fn initial() -> Policy {
        Policy {
            max_rounds: 0,
            concession_per_round: Decimal::ZERO,
            skus: BTreeMap::new(),
            approval: ApprovalPolicy {
                above_total: Decimal::ZERO,
                approvers_required: 1,
            },
            may_discuss: vec!["pricing".into(), "term length".into()],
            may_disclose: Vec::new(),
            will_not_disclose: vec![
                "internal budget ceilings".into(),
                "walk-away thresholds".into(),
            ],
            secret_values: Vec::new(),
            human_contact: None,
        }
    }

    /// The buyer mandate envelope this org declares at session open.
    pub fn envelope(&self, org_name: &str) -> serde_json::Value {
        let mut env = serde_json::json!({
            "party": org_name,
            "agent": { "name": format!("{org_name} Negotiation Agent"), "declared_ai": true },
            "may_discuss": self.may_discuss,
            "may_disclose": self.may_disclose,
            "will_not_disclose": self.will_not_disclose,
            "offer_authority": "bind_with_human_approval",
        });
        if let (Some(contact), Some(obj)) = (&self.human_contact, env.as_object_mut()) {
            obj.insert("human_contact".into(), contact.clone().into());
        }
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_policy_loads_and_a_bad_envelope_is_refused() {
        let example = include_str!("../examples/policy.json");
        let policy = Policy::from_json(example).unwrap();
        assert_eq!(policy.approval.approvers_required, 2);
        let mut long = policy.clone();
        long.may_discuss = vec!["x".repeat(121)];
        let err = long.check().unwrap_err().to_string();
        assert!(err.contains("may_discuss[0]"), "{err}");
        assert!(Policy::from_json(&example.replace("\"max_rounds\"", "\"rounds\"")).is_err());
    }
}
