//! A session as CSV, the same for every protocol: one row per term of
//! every stored entry (proposals, acceptances, every other entry once with
//! no term), then one row per field of every decision this console sent.
//! A spreadsheet filters it by `record`, `seq`, `kind` or `term`; the JSON
//! export is the verifiable copy.

use serde_json::Value;

use crate::protocol::{csv_field, EntryRole};
use crate::store::DecisionRecord;
use crate::views::{Side, TermRow};

use super::terms::flatten;

/// The header line.
pub(crate) const HEADER: &str =
    "record,seq,at,actor,side,kind,hash,summary,amount,currency,term,value\n";

/// One stored entry as the CSV sees it.
pub(crate) struct Row<'a> {
    /// Its seq.
    pub seq: u64,
    /// When.
    pub at: &'a str,
    /// Who, in the protocol's words.
    pub actor: &'a str,
    /// Which side.
    pub side: Option<Side>,
    /// Its kind.
    pub kind: &'a str,
    /// Its hash.
    pub hash: &'a str,
    /// Its summary.
    pub summary: &'a str,
    /// Its amount, when it is a proposal with one.
    pub amount: Option<(&'a str, &'a str)>,
    /// What it does to the terms.
    pub role: &'a EntryRole,
}

fn side_word(side: Option<Side>) -> &'static str {
    match side {
        Some(Side::Ours) => "ours",
        Some(Side::Counterparty) => "theirs",
        None => "",
    }
}

fn push(out: &mut String, fixed: &[&str], terms: &[TermRow]) {
    let mut line = |term: &str, value: &str| {
        let fields: Vec<String> = fixed
            .iter()
            .chain([&term, &value])
            .map(|f| csv_field(f))
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    };
    if terms.is_empty() {
        line("", "");
    }
    for t in terms {
        line(&t.name, &t.value);
    }
}

/// The whole CSV: entries in seq order, then decisions.
pub(crate) fn write(
    rows: &[Row<'_>],
    decisions: &[DecisionRecord],
    host_approvals: &[crate::views::HostApproval],
) -> String {
    let mut out = String::from(HEADER);
    for r in rows {
        let terms = match r.role {
            EntryRole::Proposal(terms) | EntryRole::Acceptance(Some(terms)) => flatten(terms),
            EntryRole::Acceptance(None) | EntryRole::Other => Vec::new(),
        };
        let seq = r.seq.to_string();
        let (amount, currency) = r.amount.unwrap_or(("", ""));
        push(
            &mut out,
            &[
                "entry",
                &seq,
                r.at,
                r.actor,
                side_word(r.side),
                r.kind,
                r.hash,
                r.summary,
                amount,
                currency,
            ],
            &terms,
        );
    }
    for d in decisions {
        let body = serde_json::from_str::<Value>(&d.body).unwrap_or(Value::String(d.body.clone()));
        let summary = format!("{} of {}: {}", d.action, d.in_response_to, d.outcome);
        push(
            &mut out,
            &[
                "decision",
                "",
                &d.at,
                "this console",
                "ours",
                &d.action,
                &d.decision_id,
                &summary,
                "",
                "",
            ],
            &with_chain(
                with_key(flatten(&body), d.key_fingerprint.as_deref()),
                super::decision_chain(d.proposal.as_deref()).as_ref(),
            ),
        );
    }
    // The host's record of every approval, made here or elsewhere.
    for a in host_approvals {
        let mut terms = Vec::new();
        let mut add = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                terms.push(TermRow {
                    name: name.into(),
                    value,
                });
            }
        };
        add("approval.step", a.step.map(|s| s.to_string()));
        add("approval.role", a.role.clone());
        add("approval.for", a.for_person.clone());
        add("approval.reason", a.reason.clone());
        add("approval.rule", a.rule.map(|r| r.to_string()));
        add(
            "approval.policy_version",
            a.policy_version.map(|v| v.to_string()),
        );
        let summary = format!("approved by {}", a.approved_by);
        push(
            &mut out,
            &[
                "host_approval",
                "",
                &a.at,
                &a.approved_by,
                "ours",
                "approval",
                &a.event_hash,
                &summary,
                "",
                "",
            ],
            &terms,
        );
    }
    out
}

/// A decision's terms and, after them, the chain it was made on: the rule
/// and policy version, and the step and role it was made at and as.
fn with_chain(
    mut terms: Vec<TermRow>,
    chain: Option<&crate::views::DecisionChain>,
) -> Vec<TermRow> {
    if let Some(c) = chain {
        let mut add = |name: &str, value: String| {
            terms.push(TermRow {
                name: name.into(),
                value,
            })
        };
        add("chain.reason", c.reason.clone());
        if let Some(v) = c.policy_version {
            add("chain.policy_version", v.to_string());
        }
        if let Some(step) = c.step {
            add("chain.step", step.to_string());
        }
        if let Some(role) = &c.role {
            add("chain.role", role.clone());
        }
        if let Some(s) = &c.stand_in {
            add("chain.for", s.for_person.clone());
            add("chain.delegation", s.delegation.clone());
        }
    }
    terms
}

/// A decision's terms and, last, the fingerprint of the key that signed it.
fn with_key(mut terms: Vec<TermRow>, fingerprint: Option<&str>) -> Vec<TermRow> {
    if let Some(fp) = fingerprint {
        terms.push(TermRow {
            name: "signed_with_key".into(),
            value: fp.to_owned(),
        });
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_entry_is_written_and_a_formula_in_a_term_is_neutralized() {
        let offer = EntryRole::Proposal(json!({"notes": "=HYPERLINK(\"x\")", "price": "40000"}));
        let accept = EntryRole::Acceptance(None);
        let row = |seq, kind, role| Row {
            seq,
            at: "2026-12-04T10:00:00Z",
            actor: "seller",
            side: Some(Side::Counterparty),
            kind,
            hash: "sha256:00",
            summary: "Offer: 40,000 USD",
            amount: Some(("40000", "USD")),
            role,
        };
        let text = write(
            &[row(1, "offer", &offer), row(2, "accept", &accept)],
            &[],
            &[],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 2 + 1, "{text}");
        assert!(
            lines[1].ends_with("\"notes\",\"'=HYPERLINK(\"\"x\"\")\""),
            "{text}"
        );
        assert!(lines[2].ends_with("\"price\",\"40000\""), "{text}");
        assert!(lines[3].contains("\"accept\""), "{text}");
        assert!(
            lines[3].ends_with(",\"\",\"\""),
            "no term on an accept: {text}"
        );
    }
}
