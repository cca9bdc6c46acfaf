//! Counterparty text on a terminal: the command lines (`anp`,
//! `countersign-verify`) print names, reasons and failure details that came
//! from the other side, and an escape sequence in them could repaint the
//! screen or fake a verdict.

/// Counterparty text made safe for a terminal: control characters and the
/// bidirectional overrides and isolates (which can reorder what is shown)
/// are written as `\u{..}`; everything else is kept.
pub fn terminal_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    #[test]
    fn escapes_controls_and_direction_overrides_and_keeps_the_rest() {
        assert_eq!(
            terminal_safe("Contoso GmbH · 570,000 €"),
            "Contoso GmbH · 570,000 €"
        );
        assert_eq!(terminal_safe("ok\x1b[2Jvalid"), "ok\\u{1b}[2Jvalid");
        assert_eq!(terminal_safe("a\nb\tc"), "a\\u{a}b\\u{9}c");
        assert_eq!(terminal_safe("\u{202e}fdp.exe"), "\\u{202e}fdp.exe");
        assert_eq!(terminal_safe("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
    }
}
