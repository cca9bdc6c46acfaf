//! Unpadded base64url (RFC 4648 §5), the encoding of keys and signatures in
//! every protocol here. Decoding is strict: padding, the standard alphabet
//! and non-canonical trailing bits are refused, so one value has one text.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

/// The text was not unpadded, canonical base64url.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not unpadded base64url")]
pub struct NotBase64Url;

/// Unpadded base64url of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Decodes unpadded base64url, refusing anything else.
pub fn decode(text: &str) -> Result<Vec<u8>, NotBase64Url> {
    URL_SAFE_NO_PAD
        .decode(text.as_bytes())
        .map_err(|_| NotBase64Url)
}

/// Decodes base64url with or without `=` padding (Concordia's suite and SDK
/// write keys and signatures padded), refusing the standard alphabet.
pub fn decode_padding_optional(text: &str) -> Result<Vec<u8>, NotBase64Url> {
    let trimmed = text
        .strip_suffix("==")
        .or_else(|| text.strip_suffix('='))
        .unwrap_or(text);
    if trimmed.contains('=') || (text.len() != trimmed.len() && !text.len().is_multiple_of(4)) {
        return Err(NotBase64Url);
    }
    decode(trimmed)
}

/// Padded base64url (Python's `base64.urlsafe_b64encode`), what Concordia's
/// reference SDK writes and requires of signatures.
pub fn encode_padded(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_strictness() {
        assert_eq!(encode(&[0xfb, 0xff]), "-_8");
        assert_eq!(decode("-_8").unwrap(), vec![0xfb, 0xff]);
        assert!(decode("-_8=").is_err(), "padding");
        assert!(decode("+/8").is_err(), "standard alphabet");
        assert!(decode("-_9").is_err(), "non-canonical trailing bits");
    }

    #[test]
    fn padding_optional() {
        assert_eq!(decode_padding_optional("-_8=").unwrap(), vec![0xfb, 0xff]);
        assert_eq!(decode_padding_optional("-_8").unwrap(), vec![0xfb, 0xff]);
        assert_eq!(encode_padded(&[0xfb, 0xff]), "-_8=");
        assert!(
            decode_padding_optional("-_8==").is_err(),
            "wrong padding length"
        );
        assert!(decode_padding_optional("-=_8").is_err(), "padding inside");
        assert!(
            decode_padding_optional("+/8=").is_err(),
            "standard alphabet"
        );
    }
}
