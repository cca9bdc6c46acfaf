//! One batch equation over `N` signatures of `LEN`-byte messages by two
//! keys, and nothing else, for counting instructions with callgrind (which
//! counts the same on a loaded machine): `WHICH` is `ours`, `dalek`
//! (ed25519-dalek's `verify_batch`), or `none` (only the signing, to
//! subtract).
//!
//! ```sh
//! cargo build --release -p countersign-ed25519-batch --example one_equation
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/one_equation ours 600 5000
//! ```

use ed25519_batch::{all_valid, Item};
use ed25519_dalek::{Signer, SigningKey};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [which, len, n] = args.as_slice() else {
        eprintln!("usage: one_equation ours|dalek|none LEN N");
        std::process::exit(2);
    };
    let (Ok(len), Ok(n)) = (len.parse::<usize>(), n.parse::<usize>()) else {
        eprintln!("LEN and N are numbers");
        std::process::exit(2);
    };
    let keys = [
        SigningKey::from_bytes(&[1; 32]),
        SigningKey::from_bytes(&[2; 32]),
    ];
    let messages: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut m = format!("{i:08}").into_bytes();
            m.resize(len, b'x');
            m
        })
        .collect();
    let items: Vec<Item<'_>> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| Item {
            message: m,
            signature: keys[i % 2].sign(m),
            key: keys[i % 2].verifying_key(),
        })
        .collect();
    let valid = match which.as_str() {
        "ours" => all_valid(&items),
        "dalek" => {
            let messages: Vec<&[u8]> = items.iter().map(|i| i.message).collect();
            let signatures: Vec<_> = items.iter().map(|i| i.signature).collect();
            let keys: Vec<_> = items.iter().map(|i| i.key).collect();
            ed25519_dalek::verify_batch(&messages, &signatures, &keys).is_ok()
        }
        _ => true,
    };
    assert!(valid, "the signatures verify");
}
