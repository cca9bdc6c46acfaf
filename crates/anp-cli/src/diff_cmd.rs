//! `anp diff`: two offers side by side as a person reads them (what was
//! added, removed, changed or moved, old → new with absolute and percent
//! change), or the exact `OfferDiff` as JSON.

use std::fmt::Write as _;
use std::path::Path;

use anp::diff::{diff_offers, LineItemDiff, LineStatus, OfferDiff, Scalar};
use anp::money::Money;
use anp::payload::{Offer, PayloadError};
use serde_json::Value;

use crate::input::{self, terminal_safe, InputError};

/// Why two files could not be diffed.
#[derive(Debug, thiserror::Error)]
pub enum DiffInputError {
    /// Unreadable file or not JSON.
    #[error(transparent)]
    Input(#[from] InputError),
    /// JSON, but not an offer: every violation with its path.
    #[error("{path}: not a valid offer:\n{}", list_violations(.source))]
    NotAnOffer {
        /// The file.
        path: String,
        /// Every broken rule, by path.
        source: PayloadError,
    },
}

fn list_violations(error: &PayloadError) -> String {
    let mut text: Vec<String> = error
        .violations
        .iter()
        .map(|v| format!("anp:   {}", terminal_safe(&v.to_string())))
        .collect();
    if error.omitted > 0 {
        text.push(format!("anp:   ... and {} more", error.omitted));
    }
    text.join("\n")
}

/// Reads one offer file, enforcing every rule of SPEC §5.2.
pub fn read_offer(path: &Path) -> Result<Offer, DiffInputError> {
    let value: Value = input::read_json(path, "not JSON")?;
    Offer::parse(&value).map_err(|source| DiffInputError::NotAnOffer {
        path: input::display(path),
        source,
    })
}

/// True when the diff holds no difference at all.
pub fn is_identical(diff: &OfferDiff) -> bool {
    diff.currency.is_none()
        && diff.term_months.is_none()
        && diff.expires_at.is_none()
        && diff.notes.is_none()
        && diff.conditions.added.is_empty()
        && diff.conditions.removed.is_empty()
        && diff
            .line_items
            .iter()
            .all(|row| row.status == LineStatus::Unchanged && !row.moved)
        && diff.total.absolute.is_zero()
        && !diff.total.currency_changed
        && diff.total.old.mismatch == diff.total.new.mismatch
}

/// Diffs two offer files.
pub fn diff_files(old: &Path, new: &Path) -> Result<(Offer, Offer, OfferDiff), DiffInputError> {
    let old = read_offer(old)?;
    let new = read_offer(new)?;
    let diff = diff_offers(&old, &new);
    Ok((old, new, diff))
}

/// The diff as text for a terminal. Counterparty text is shown escaped,
/// never interpreted.
pub fn render_text(old: &Offer, new: &Offer, diff: &OfferDiff) -> String {
    let mut out = String::new();
    if is_identical(diff) {
        out.push_str("offers are identical\n");
        return out;
    }
    scalar_line(&mut out, "currency", diff.currency.as_ref(), "");
    scalar_line(&mut out, "term", diff.term_months.as_ref(), " months");
    scalar_line(&mut out, "expires", diff.expires_at.as_ref(), "");
    if let Some(notes) = &diff.notes {
        let _ = writeln!(out, "notes");
        let _ = writeln!(out, "  - {}", quoted(notes.old.as_deref()));
        let _ = writeln!(out, "  + {}", quoted(notes.new.as_deref()));
    }
    if !diff.conditions.added.is_empty() || !diff.conditions.removed.is_empty() {
        let _ = writeln!(out, "conditions");
        for condition in &diff.conditions.removed {
            let _ = writeln!(out, "  - {}", quoted(Some(condition.as_str())));
        }
        for condition in &diff.conditions.added {
            let _ = writeln!(out, "  + {}", quoted(Some(condition.as_str())));
        }
    }
    render_lines(&mut out, diff);
    render_total(&mut out, old, new, diff);
    out
}

fn scalar_line(out: &mut String, label: &str, scalar: Option<&Scalar>, unit: &str) {
    if let Some(s) = scalar {
        let _ = writeln!(
            out,
            "{label:<10} {}{unit} → {}{unit}",
            shown(s.old.as_deref()),
            shown(s.new.as_deref())
        );
    }
}

fn render_lines(out: &mut String, diff: &OfferDiff) {
    let unchanged = diff
        .line_items
        .iter()
        .filter(|row| row.status == LineStatus::Unchanged && !row.moved)
        .count();
    let shown_rows: Vec<&LineItemDiff> = diff
        .line_items
        .iter()
        .filter(|row| row.status != LineStatus::Unchanged || row.moved)
        .collect();
    if shown_rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "line items ({unchanged} unchanged)");
    for row in shown_rows {
        let (mark, word) = match row.status {
            LineStatus::Added => ('+', "added"),
            LineStatus::Removed => ('-', "removed"),
            LineStatus::Changed => ('~', "changed"),
            LineStatus::Unchanged => ('=', "unchanged"),
        };
        let mut heading = format!("  {mark} {} ({word}", terminal_safe(&row.key));
        if row.moved {
            let _ = write!(
                heading,
                ", moved from line {} to {}",
                position(row.old_index),
                position(row.new_index)
            );
        }
        heading.push(')');
        let _ = writeln!(out, "{heading}");
        let item = row.new.as_ref().or(row.old.as_ref());
        if matches!(row.status, LineStatus::Added | LineStatus::Removed) {
            if let Some(item) = item {
                let _ = writeln!(
                    out,
                    "      {} × {} {} per {}: {}",
                    item.quantity,
                    item.unit_price,
                    terminal_safe(&item.currency),
                    terminal_safe(&item.unit),
                    quoted(Some(item.description.as_str()))
                );
            }
        }
        for field in &row.fields {
            let mut line = format!(
                "      {:<12} {} → {}",
                field.field,
                shown(field.old.as_deref()),
                shown(field.new.as_deref())
            );
            if let Some(absolute) = field.absolute {
                let _ = write!(line, "  {}", delta(absolute, field.percent.as_deref()));
            }
            let _ = writeln!(out, "{line}");
        }
    }
}

fn render_total(out: &mut String, old: &Offer, new: &Offer, diff: &OfferDiff) {
    let t = &diff.total;
    let mut line = format!(
        "total      {} {} → {} {}",
        t.old.amount,
        terminal_safe(&old.currency),
        t.new.amount,
        terminal_safe(&new.currency)
    );
    if t.currency_changed {
        line.push_str("  (currency changed: no comparison)");
    } else {
        let _ = write!(line, "  {}", delta(t.absolute, t.percent.as_deref()));
    }
    let _ = writeln!(out, "{line}");
    for (which, total) in [("old", &t.old), ("new", &t.new)] {
        if total.mismatch {
            let _ = writeln!(
                out,
                "warning: the {which} offer states total_annual {} but its line items sum to {}",
                total.stated.map(|m| m.to_string()).unwrap_or_default(),
                total.computed
            );
        }
    }
}

/// `+30000 (+5.26%)`: signed absolute change and percent, when there is one.
fn delta(absolute: Money, percent: Option<&str>) -> String {
    let sign = if absolute.decimal().is_sign_positive() && !absolute.is_zero() {
        "+"
    } else {
        ""
    };
    match percent {
        Some(p) if p.starts_with('-') || p == "0.00" => format!("{sign}{absolute} ({p}%)"),
        Some(p) => format!("{sign}{absolute} (+{p}%)"),
        None => format!("{sign}{absolute}"),
    }
}

fn position(index: Option<usize>) -> String {
    index.map_or_else(|| "-".to_owned(), |i| (i + 1).to_string())
}

fn shown(value: Option<&str>) -> String {
    value.map_or_else(|| "(none)".to_owned(), terminal_safe)
}

fn quoted(value: Option<&str>) -> String {
    value.map_or_else(
        || "(none)".to_owned(),
        |v| format!("\"{}\"", terminal_safe(v)),
    )
}
