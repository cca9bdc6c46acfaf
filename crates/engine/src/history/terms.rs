//! A session's terms, whole: every term of a proposal flattened to
//! `name = value` rows (what the session page lists and the CSV carries),
//! and which proposal a session agreed, read from its timeline.

use serde_json::Value;

use crate::protocol::EntryRole;
use crate::views::{AgreedTerms, Side, TermRow};

/// Every leaf of `terms` as a row, named by its path
/// (`line_items[0].unit_price`); objects in key order, arrays in order.
/// A null is written as an empty value; an empty object or array as `{}` / `[]`
/// so that no term disappears.
pub(crate) fn flatten(terms: &Value) -> Vec<TermRow> {
    let mut out = Vec::new();
    walk(terms, String::new(), &mut out);
    out
}

fn walk(value: &Value, path: String, out: &mut Vec<TermRow>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, inner) in map {
                let name = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                walk(inner, name, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, inner) in items.iter().enumerate() {
                walk(inner, format!("{path}[{i}]"), out);
            }
        }
        leaf => out.push(TermRow {
            name: path,
            value: match leaf {
                Value::Null => String::new(),
                Value::String(text) => text.clone(),
                // The number as canonical JSON writes it (what was signed):
                // `2000.00` on the wire is the number 2000, never `2000.0`.
                Value::Number(n) => jcs::format_number(n),
                other => other.to_string(),
            },
        }),
    }
}

/// One timeline entry as the agreement reader needs it.
pub(crate) struct Step<'a> {
    /// Its seq.
    pub seq: u64,
    /// When.
    pub at: &'a str,
    /// Its side.
    pub side: Option<Side>,
    /// Its summary.
    pub summary: &'a str,
    /// What it does to the terms.
    pub role: &'a EntryRole,
}

/// The agreed terms: the last acceptance and the other side's latest
/// proposal before it (a party accepts what the other side put on the
/// table), or the terms the acceptance restates. None without an acceptance.
pub(crate) fn agreement(steps: &[Step<'_>]) -> Option<AgreedTerms> {
    let (at, accept) = steps
        .iter()
        .enumerate()
        .rev()
        .find(|(_, s)| matches!(s.role, EntryRole::Acceptance(_)))?;
    let proposal = steps[..at].iter().rev().find(|s| {
        matches!(s.role, EntryRole::Proposal(_))
            && (accept.side.is_none() || s.side.is_none() || s.side != accept.side)
    });
    let restated = match accept.role {
        EntryRole::Acceptance(Some(terms)) => Some(terms),
        _ => None,
    };
    let terms = match (restated, proposal.map(|p| p.role)) {
        (Some(terms), _) => terms,
        (None, Some(EntryRole::Proposal(terms))) => terms,
        _ => return None,
    };
    Some(AgreedTerms {
        proposal_seq: proposal.map(|p| p.seq),
        accept_seq: accept.seq,
        accepted_at: accept.at.to_owned(),
        accepted_by: accept.side,
        summary: proposal
            .map(|p| p.summary)
            .unwrap_or(accept.summary)
            .to_owned(),
        terms: flatten(terms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_leaf_is_a_row_named_by_its_path() {
        let rows = flatten(&json!({
            "currency": "USD",
            "line_items": [{"sku": "A-1", "quantity": 2}],
            "payment_terms": "Net 45",
            "notes": null,
            "tags": []
        }));
        // Members sorted, or as written when a crate of the build turns on
        // serde_json's `preserve_order`: compared as a set.
        let mut pairs: Vec<(&str, &str)> = rows
            .iter()
            .map(|t| (t.name.as_str(), t.value.as_str()))
            .collect();
        pairs.sort();
        assert_eq!(
            pairs,
            [
                ("currency", "USD"),
                ("line_items[0].quantity", "2"),
                ("line_items[0].sku", "A-1"),
                ("notes", ""),
                ("payment_terms", "Net 45"),
                ("tags", "[]"),
            ]
        );
    }

    #[test]
    fn a_number_reads_as_signed_never_as_a_float_prints_it() {
        let wire: Value =
            serde_json::from_str(r#"{"price": 2000.00, "rate": 0.1, "qty": 3}"#).unwrap();
        let mut values: Vec<String> = flatten(&wire).into_iter().map(|t| t.value).collect();
        values.sort();
        assert_eq!(values, ["0.1", "2000", "3"]);
    }

    fn step<'a>(seq: u64, side: Side, role: &'a EntryRole) -> Step<'a> {
        Step {
            seq,
            at: "2026-12-04T10:00:00Z",
            side: Some(side),
            summary: "s",
            role,
        }
    }

    #[test]
    fn the_accepted_proposal_is_the_other_sides_latest() {
        let theirs = EntryRole::Proposal(json!({"price": "536000"}));
        let ours = EntryRole::Proposal(json!({"price": "500000"}));
        let accept = EntryRole::Acceptance(None);
        let steps = [
            step(1, Side::Counterparty, &theirs),
            step(2, Side::Ours, &ours),
            step(3, Side::Counterparty, &accept),
        ];
        let agreed = agreement(&steps).unwrap();
        assert_eq!(agreed.proposal_seq, Some(2));
        assert_eq!(agreed.accept_seq, 3);
        assert_eq!(agreed.terms[0].value, "500000");
    }

    #[test]
    fn restated_terms_are_the_agreed_terms_and_no_acceptance_is_no_agreement() {
        let ask = EntryRole::Proposal(json!({"data": {"tax_id": "required"}}));
        let accept = EntryRole::Acceptance(Some(json!({"data": {"legal_name": "required"}})));
        let steps = [
            step(1, Side::Counterparty, &ask),
            step(2, Side::Ours, &accept),
        ];
        let agreed = agreement(&steps).unwrap();
        assert_eq!(agreed.terms[0].name, "data.legal_name");
        assert!(agreement(&steps[..1]).is_none());
    }
}
