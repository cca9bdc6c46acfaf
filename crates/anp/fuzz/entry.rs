// The two entry points every untrusted byte reaches, shared verbatim by the
// cargo-fuzz targets (`fuzz_targets/`) and the plain `cargo test` in
// `crates/anp/tests/all/no_panic.rs` (both `include!` this file), so the fuzzer
// and CI exercise exactly the same code.

/// Payload parsing: the first byte picks the event kind, the rest is JSON
/// bytes. Whatever parses must serialize back to the same canonical hash
/// (the hash chain depends on it), and an offer must diff and total cleanly.
pub fn parse_payload(data: &[u8]) -> Option<anp::payload::Payload> {
    let (first, json) = data.split_first()?;
    let kind = anp::EventKind::ALL[usize::from(*first) % anp::EventKind::ALL.len()];
    let value: serde_json::Value = serde_json::from_slice(json).ok()?;
    let payload = anp::payload::parse_payload(kind, &value).ok()?;
    assert_eq!(payload.kind(), kind);
    assert_eq!(
        anp::canonical::canonical_hash(&payload.to_value()),
        anp::canonical::canonical_hash(&value),
        "a parsed payload must serialize to the value it came from"
    );
    if let Some(offer) = payload.as_offer() {
        let _ = anp::money::offer_total(offer);
        let same = anp::diff::diff_offers(offer, offer);
        assert!(same.conditions.added.is_empty() && same.conditions.removed.is_empty());
        assert!(same.total.absolute.is_zero());
    }
    Some(payload)
}

/// Log verification: a log document's bytes, verified whole with its own
/// keys, then from the head it claims and from its second event as pins.
/// The whole-document fast path (`anp::verify_document_bytes`, what
/// `anp verify` runs) must give the same verdict, or refuse what the
/// ordinary reader refuses.
pub fn verify_log(data: &[u8]) -> Option<anp::VerifyReport> {
    let fast = anp::verify_document_bytes(data);
    let Ok(doc) = serde_json::from_slice::<anp::LogDocument>(data) else {
        assert!(fast.is_err(), "the fast path took a document the reader refuses");
        return None;
    };
    let Ok(ring) = anp::KeyRing::from_log_keys(&doc) else {
        assert!(fast.is_err(), "the fast path took a document with a bad key");
        return None;
    };
    let whole = anp::verify_log(&doc.session.id, &doc.events, &ring);
    match fast {
        Ok(verdict) => {
            assert!(doc.is_anp_0_1(), "the fast path took another protocol");
            assert_eq!(verdict.report, whole, "the fast path's verdict differs");
        }
        Err(anp::DocumentError::Protocol(_)) => assert!(!doc.is_anp_0_1()),
        Err(e) => panic!("the fast path refused a readable document: {e}"),
    }
    let claimed = anp::ChainHead {
        seq: doc.session.event_count,
        event_hash: doc.session.chain_head.clone(),
    };
    let _ = anp::verify_log_from_pin(&doc.session.id, &claimed, &doc.events, &ring);
    let _ = anp::verify_extension(&doc.session.id, &claimed, &doc.events, &ring);
    if let Some(second) = doc.events.get(1) {
        let pin = anp::ChainHead {
            seq: second.seq,
            event_hash: second.event_hash.clone(),
        };
        let _ = anp::verify_log_from_pin(&doc.session.id, &pin, &doc.events, &ring);
    }
    for event in &doc.events {
        let _ = anp::payload::parse_payload(event.kind, &event.payload);
    }
    Some(whole)
}
