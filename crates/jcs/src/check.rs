//! Recognizing JSON text that is already canonical, without parsing it into
//! a tree.
//!
//! Most signed JSON arrives in canonical form: hosts store what they hashed.
//! When it does, its canonical bytes are the text itself, and hashing the
//! text is all there is to do. [`is_canonical`] says when that holds. It is
//! conservative: `true` only when the canonical JSON of the value the text
//! denotes (as `serde_json` reads it, [`crate::to_string`] writes it) is
//! byte for byte the text; anything it does not prove canonical, including
//! text that is not valid JSON, is `false`, and the caller canonicalizes the
//! parsed value as usual.

use crate::number::format_f64;

/// Deeper than this, the text is left to the parser (serde_json refuses
/// nesting beyond 128, and canonical text must not pass where parsing fails).
const MAX_DEPTH: usize = 100;

/// True when `text` is exactly the canonical JSON of the value it denotes:
/// no whitespace, object keys in strictly ascending UTF-16 order, numbers as
/// ECMAScript prints them, strings escaped as `JSON.stringify` escapes them.
pub fn is_canonical(text: &str) -> bool {
    let mut scan = Scan {
        bytes: text.as_bytes(),
        at: 0,
    };
    scan.value(0) && scan.at == scan.bytes.len()
}

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        let end = self.at + word.len();
        if self.bytes.get(self.at..end) == Some(word) {
            self.at = end;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'{') => depth < MAX_DEPTH && self.object(depth + 1),
            Some(b'[') => depth < MAX_DEPTH && self.array(depth + 1),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        self.at += 1; // [
        if self.peek() == Some(b']') {
            self.at += 1;
            return true;
        }
        loop {
            if !self.value(depth) {
                return false;
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    fn object(&mut self, depth: usize) -> bool {
        self.at += 1; // {
        if self.peek() == Some(b'}') {
            self.at += 1;
            return true;
        }
        let mut previous: Option<&'a str> = None;
        loop {
            let Some(key) = self.string() else {
                return false;
            };
            // A key with escapes is left to the parser (rare, and it would
            // need decoding to be ordered).
            if key.contains('\\') {
                return false;
            }
            if let Some(previous) = previous {
                if !utf16_less(previous, key) {
                    return false;
                }
            }
            previous = Some(key);
            if self.peek() != Some(b':') {
                return false;
            }
            self.at += 1;
            if !self.value(depth) {
                return false;
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    /// A string in canonical form; returns its contents between the quotes
    /// (escapes left as written).
    fn string(&mut self) -> Option<&'a str> {
        if self.peek() != Some(b'"') {
            return None;
        }
        self.at += 1;
        let start = self.at;
        loop {
            match *self.bytes.get(self.at)? {
                b'"' => {
                    let inner = &self.bytes[start..self.at];
                    self.at += 1;
                    // The input is a &str, and quotes are ASCII: the slice is
                    // on character boundaries.
                    return std::str::from_utf8(inner).ok();
                }
                b'\\' => {
                    let escape = *self.bytes.get(self.at + 1)?;
                    match escape {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 2,
                        b'u' => {
                            // Only controls without a short form are written
                            // as \u00xx, in lowercase hex.
                            let hex = self.bytes.get(self.at + 2..self.at + 6)?;
                            let lower = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
                            if hex[0] != b'0' || hex[1] != b'0' || !lower(hex[2]) || !lower(hex[3])
                            {
                                return None;
                            }
                            let code = (hex_value(hex[2]) << 4) | hex_value(hex[3]);
                            if code >= 0x20 || matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                                return None;
                            }
                            self.at += 6;
                        }
                        _ => return None,
                    }
                }
                c if c < 0x20 => return None,
                _ => self.at += 1,
            }
        }
    }

    fn number(&mut self) -> bool {
        let start = self.at;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        let token = &self.bytes[start..self.at];
        let digits = token.strip_prefix(b"-").unwrap_or(token);
        // Short integers: canonical unless they have a leading zero or are -0.
        if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
            return if digits[0] == b'0' {
                token == b"0"
            } else {
                true
            };
        }
        // Anything else: canonical when ECMAScript prints the double it
        // denotes exactly as written (`str::parse` rounds correctly, as
        // serde_json's float_roundtrip reader does).
        let Ok(token) = std::str::from_utf8(token) else {
            return false;
        };
        match token.parse::<f64>() {
            Ok(value) if value.is_finite() && valid_json_number(token) => {
                format_f64(value) == token
            }
            _ => false,
        }
    }
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        _ => b - b'a' + 10,
    }
}

/// The JSON number grammar (RFC 8259 §6), which `str::parse` is looser than.
fn valid_json_number(token: &str) -> bool {
    let mut rest = token.strip_prefix('-').unwrap_or(token).as_bytes();
    let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if int_len == 0 || (int_len > 1 && rest[0] == b'0') {
        return false;
    }
    rest = &rest[int_len..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    if let Some(exp) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exp = exp
            .strip_prefix(b"+")
            .or_else(|| exp.strip_prefix(b"-"))
            .unwrap_or(exp);
        let n = exp.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &exp[n..];
    }
    rest.is_empty()
}

/// `a < b` in UTF-16 code unit order, as RFC 8785 sorts keys. UTF-8 byte
/// order is code point order, which differs from UTF-16 order only between
/// characters above U+FFFF (four UTF-8 bytes) and U+E000..=U+FFFF.
fn utf16_less(a: &str, b: &str) -> bool {
    let astral = |s: &str| s.bytes().any(|byte| byte >= 0xf0);
    if astral(a) || astral(b) {
        a.encode_utf16().lt(b.encode_utf16())
    } else {
        a.as_bytes() < b.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// What `is_canonical` promises, checked against the writer.
    fn agrees(text: &str) -> bool {
        let canonical = is_canonical(text);
        if canonical {
            let value: Value = serde_json::from_str(text).expect("canonical text parses");
            assert_eq!(crate::to_string(&value), text, "claimed canonical: {text}");
        }
        canonical
    }

    #[test]
    fn canonical_text_is_recognized() {
        for text in [
            r#"{"a":[true,null,false],"b":{"c":"d"}}"#,
            r#"{"currency":"USD","line_items":[{"quantity":10,"unit_price":1140.5}],"term_months":36}"#,
            "[]",
            "{}",
            "0",
            "-1",
            "1e+21",
            "1e-7",
            "0.1",
            "123456789012345680000",
            r#""tab\there\n\u001f\"\\""#,
            "\"\u{7f}\u{2028}é😀\"",
            r#"{"😀":2,"ﬁ":1}"#,
        ] {
            assert!(agrees(text), "{text}");
        }
    }

    #[test]
    fn anything_else_is_not_claimed() {
        for text in [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a": 1}"#,
            " 1",
            "[1 ]",
            r#"{"ﬁ":1,"😀":2}"#,
            "1.0",
            "1E+21",
            "1e21",
            "-0",
            "01",
            "1.50",
            "9007199254740993",
            "1e400",
            r#""\/""#,
            r#""\u0041""#,
            r#""\u001F""#,
            r#""\u000a""#,
            r#"{"\u0061":1}"#,
            r#""\ud800""#,
            "tru",
            "[1,]",
            "{\"a\":1,}",
            "",
            "\"unterminated",
            "1.",
            ".5",
            "+1",
            "--1",
            "0x10",
        ] {
            assert!(!agrees(text), "{text}");
        }
    }

    #[test]
    fn nesting_beyond_the_limit_is_left_to_the_parser() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(!is_canonical(&deep));
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(agrees(&fine));
    }
}
