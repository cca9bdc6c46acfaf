//! Every TOML example in docs/authority.md loads (or, where the doc shows
//! a refusal, is refused with the very message the doc prints), so the
//! document cannot rot.

use crate::parse;

const DOC: &str = include_str!("../../../../docs/authority.md");

/// Each fenced block of `lang`, with the line of the doc it starts on.
fn blocks(lang: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in DOC.lines().enumerate() {
        if current.is_some() && line.trim() == "```" {
            out.extend(current.take());
            continue;
        }
        match &mut current {
            None if line.trim() == format!("```{lang}") => current = Some((i + 1, String::new())),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    out
}

#[test]
fn every_policy_in_the_doc_loads() {
    let policies = blocks("toml");
    assert!(
        policies.len() >= 2,
        "the doc shows its examples as ```toml blocks"
    );
    for (line, text) in policies {
        if let Err(e) = parse(&text) {
            panic!("docs/authority.md line {line}: {e}");
        }
    }
}

#[test]
fn every_refusal_the_doc_shows_is_the_one_given() {
    // A ```text block that follows a "broken" ```toml-broken block is its refusal.
    let broken = blocks("toml-broken");
    assert!(
        !broken.is_empty(),
        "the doc shows at least one refused file"
    );
    let said = blocks("text");
    for (line, text) in broken {
        let e = parse(&text).expect_err("a broken example is refused");
        let shown = said
            .iter()
            .find(|(at, _)| *at > line)
            .map(|(_, t)| t.trim().to_owned())
            .unwrap_or_default();
        assert!(
            shown.contains(&e.to_string()),
            "docs/authority.md line {line}: the doc shows {shown:?}, the crate says {e}"
        );
    }
}

#[test]
fn the_checked_in_three_tier_file_is_the_one_the_doc_shows() {
    assert!(
        DOC.contains(super::THREE_TIER.trim()),
        "docs/authority.md quotes docs/examples/authority-three-tier.toml whole"
    );
}
