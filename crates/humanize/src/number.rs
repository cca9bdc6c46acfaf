//! Exact decimal strings regrouped for people, digit by digit: no float.

use crate::locale::LocaleData;

/// True for `[+-]?digits[.digits]`: the only text regrouped.
fn is_plain_decimal(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && fraction.is_none_or(digits)
}

/// `"-1140000.50"` → `"−1,140,000.50"` in English: the integer part in groups
/// of three, the locale's marks, a true minus sign. Anything that is not a
/// plain decimal comes back unchanged.
pub(crate) fn group(text: &str, locale: &LocaleData) -> String {
    let text = text.trim();
    if !is_plain_decimal(text) {
        return text.to_owned();
    }
    let negative = text.starts_with('-');
    let unsigned = text.trim_start_matches(['+', '-']);
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (unsigned, None),
    };
    let mut out = String::with_capacity(text.len() + whole.len() / 3 * 3 + 3);
    if negative && unsigned.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        out.push('\u{2212}');
    }
    // Spanish leaves a four-digit number ungrouped (CLDR's minimum grouping).
    let grouped = whole.len() > 3 + (locale.min_grouping - 1);
    for (index, digit) in whole.chars().enumerate() {
        let left = whole.len() - index;
        if grouped && index > 0 && left % 3 == 0 {
            out.push_str(locale.group);
        }
        out.push(digit);
    }
    if let Some(fraction) = fraction {
        out.push_str(locale.decimal);
        out.push_str(fraction);
    }
    out
}
