//! Counterparty text made safe to put in a sentence.

/// Counterparty text inside a sentence: at most 80 characters, with control
/// and bidirectional-override characters escaped, so a hostile kid cannot
/// drive a terminal or reorder what a person reads.
pub fn shown(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 80 {
            out.push('…');
            break;
        }
        let hostile = c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if hostile {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}
