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
    read_canonical(text, &mut Check).is_some()
}

/// What a reader of canonical text builds as it recognizes it
/// ([`read_canonical`]): a caller that needs the tree of a text it hopes is
/// canonical gets both from one pass, and the rule of what is canonical
/// stays here.
pub trait Build<'a> {
    /// A value built.
    type Value;
    /// An array being built.
    type Array;
    /// An object being built.
    type Object;
    /// `null`.
    fn null(&mut self) -> Self::Value;
    /// `true` or `false`.
    fn bool(&mut self, value: bool) -> Self::Value;
    /// A number, as its canonical token (`None` refuses the text).
    fn number(&mut self, token: &'a str) -> Option<Self::Value>;
    /// A string, as the text between its quotes with its (canonical)
    /// escapes as written (`None` refuses the text).
    fn string(&mut self, raw: &'a str) -> Option<Self::Value>;
    /// An array starts.
    fn array(&mut self) -> Self::Array;
    /// Its next item.
    fn push(&mut self, array: &mut Self::Array, item: Self::Value);
    /// It ends.
    fn end_array(&mut self, array: Self::Array) -> Self::Value;
    /// An object starts, `depth` containers deep (1 for the outermost).
    fn object(&mut self, depth: usize) -> Self::Object;
    /// Its next member (keys of canonical text have no escapes).
    fn member(&mut self, object: &mut Self::Object, key: &'a str, value: Self::Value);
    /// It ends.
    fn end_object(&mut self, object: Self::Object) -> Self::Value;
}

/// Recognizes canonical text as [`is_canonical`] does and builds what
/// `build` makes of it in the same pass; `None` when the text is not
/// canonical (or `build` refuses it).
pub fn read_canonical<'a, B: Build<'a>>(text: &'a str, build: &mut B) -> Option<B::Value> {
    let mut scan = Scan {
        bytes: text.as_bytes(),
        text,
        at: 0,
        build,
    };
    let value = scan.value(0)?;
    (scan.at == scan.bytes.len()).then_some(value)
}

/// The builder that builds nothing: [`is_canonical`].
struct Check;

impl<'a> Build<'a> for Check {
    type Value = ();
    type Array = ();
    type Object = ();
    fn null(&mut self) {}
    fn bool(&mut self, _: bool) {}
    fn number(&mut self, _: &'a str) -> Option<()> {
        Some(())
    }
    fn string(&mut self, _: &'a str) -> Option<()> {
        Some(())
    }
    fn array(&mut self) {}
    fn push(&mut self, _: &mut (), _: ()) {}
    fn end_array(&mut self, _: ()) {}
    fn object(&mut self, _: usize) {}
    fn member(&mut self, _: &mut (), _: &'a str, _: ()) {}
    fn end_object(&mut self, _: ()) {}
}

struct Scan<'a, 'b, B> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
    build: &'b mut B,
}

impl<'a, B: Build<'a>> Scan<'a, '_, B> {
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

    fn value(&mut self, depth: usize) -> Option<B::Value> {
        match self.peek()? {
            b'{' if depth < MAX_DEPTH => self.object(depth + 1),
            b'[' if depth < MAX_DEPTH => self.array(depth + 1),
            b'"' => {
                let raw = self.string()?;
                self.build.string(raw)
            }
            b't' if self.literal(b"true") => Some(self.build.bool(true)),
            b'f' if self.literal(b"false") => Some(self.build.bool(false)),
            b'n' if self.literal(b"null") => Some(self.build.null()),
            b'-' | b'0'..=b'9' => {
                let token = self.number()?;
                self.build.number(token)
            }
            _ => None,
        }
    }

    fn array(&mut self, depth: usize) -> Option<B::Value> {
        self.at += 1; // [
        let mut array = self.build.array();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(self.build.end_array(array));
        }
        loop {
            let item = self.value(depth)?;
            self.build.push(&mut array, item);
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(self.build.end_array(array));
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<B::Value> {
        self.at += 1; // {
        let mut object = self.build.object(depth);
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Some(self.build.end_object(object));
        }
        let mut previous: Option<&'a str> = None;
        loop {
            let key = self.string()?;
            // A key with escapes is left to the parser (rare, and it would
            // need decoding to be ordered).
            if key.contains('\\') {
                return None;
            }
            if let Some(previous) = previous {
                if !utf16_less(previous, key) {
                    return None;
                }
            }
            previous = Some(key);
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            let value = self.value(depth)?;
            self.build.member(&mut object, key, value);
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(self.build.end_object(object));
                }
                _ => return None,
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
                    let end = self.at;
                    self.at += 1;
                    // The input is a &str, and quotes are ASCII: the slice is
                    // on character boundaries.
                    return self.text.get(start..end);
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

    /// A number in canonical form; returns its token.
    fn number(&mut self) -> Option<&'a str> {
        let start = self.at;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        let token = self.text.get(start..self.at)?;
        let digits = token.strip_prefix('-').unwrap_or(token).as_bytes();
        // Short integers: canonical unless they have a leading zero or are -0.
        if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
            return (digits[0] != b'0' || token == "0").then_some(token);
        }
        // Anything else: canonical when ECMAScript prints the double it
        // denotes exactly as written (`str::parse` rounds correctly, as
        // serde_json's float_roundtrip reader does).
        match token.parse::<f64>() {
            Ok(value) if value.is_finite() && valid_json_number(token) => {
                (format_f64(value) == token).then_some(token)
            }
            _ => None,
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
