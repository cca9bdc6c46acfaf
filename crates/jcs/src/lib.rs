//! One canonical JSON for every protocol Countersign speaks.
//!
//! ANP, Concordia, OANP and ANEX all hash and sign the RFC 8785 (JCS) bytes
//! of a JSON value. This crate is the one implementation: the bytes are
//! identical to ECMAScript `JSON.stringify` of the value with object keys
//! sorted by UTF-16 code unit at every depth, numbers printed as
//! `Number.prototype.toString` prints the IEEE double they denote.
//!
//! The specs differ only on edges valid JSON text can reach, so each
//! protocol chooses its rule at its own call site:
//! - [`to_string`] is total, as `JSON.stringify` is: an integer beyond 2^53
//!   rounds to the double JavaScript would read, and `-0` prints as `0`.
//! - [`to_string_strict`] refuses what RFC 8785 §3.2.2.3 leaves to I-JSON
//!   (integers outside ±(2^53 − 1)), naming the path, for protocols whose
//!   reference implementation refuses them.
//!
//! - [`to_string_with`] takes the [`Rules`] a protocol states at its own
//!   call site (Concordia prints integers exactly and refuses `-0.0`, as its
//!   reference SDK does).
//!
//! Lone surrogates cannot reach either: a Rust `String` is valid UTF-8, and
//! `serde_json` refuses a `\ud800` escape without its pair when it parses.
//!
//! [`is_canonical`] recognizes text that already is its canonical form, and
//! [`member_span`] finds one top-level member in such text, so signed JSON
//! that arrives canonical is hashed and cut as it stands, without a tree.
//!
//! [`hash`] holds SHA-256 over those bytes (`hex` and `sha256:<hex>` forms),
//! [`b64url`] the unpadded base64url every protocol uses for keys and
//! signatures, and [`parse`] reads JSON text refusing integer literals wider
//! than 64 bits, which `serde_json` would otherwise round to a double.

#![warn(missing_docs)]

pub mod b64url;
mod check;
pub mod hash;
mod number;
pub mod parse;
mod span;
mod write;

pub use check::{is_canonical, read_canonical, Build};
pub use hash::{sha256, sha256_hex, sha256_prefixed, value_hash_hex, value_hash_prefixed};
pub use number::{format_f64, format_number, number_as_f64, MAX_SAFE_INTEGER};
pub use parse::{parse, ParseError};
pub use span::member_span;
pub use write::{
    to_string, to_string_marking, to_string_strict, to_string_with, to_vec, BigIntegers, JcsError,
    Rules,
};
