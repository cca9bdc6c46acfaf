//! Writes Countersign's own single-check vectors, in the suite's format, to
//! `crates/concordia/vectors/` (run from the repository root):
//!
//! ```sh
//! cargo run -p concordia --example make_vectors
//! ```
//!
//! Keys are generated afresh on every run and their private halves are
//! dropped when it ends: only public keys reach the files. Each mutation
//! vector breaks one check of a positive twin; its `breaks` member (our
//! addition, ignored by other runners) names the check classes it must fail.
//! Templates for mandates, attestations and revocation records are the
//! vendored suite's own positive inputs, re-signed with the new keys.

use std::path::Path;

use concordia::approval_receipt::receipt::{
    build_receipt, sign_receipt, Amount, Decision, ReceiptDraft,
};
use concordia::approval_receipt::{datetime, edges, keys};
use concordia::GENESIS_HASH;
use ed25519_dalek::SigningKey;
use serde_json::{json, Map, Value};
use time::{Duration, OffsetDateTime};

struct Out {
    positive: Vec<String>,
    mutation: Vec<String>,
}

fn key() -> SigningKey {
    SigningKey::generate(&mut rand_core::OsRng)
}

fn pk(k: &SigningKey) -> String {
    keys::public_key_text(&k.verifying_key())
}

fn preimage(v: &Value) -> String {
    edges::canonical(&edges::without_top_level(v, "signature")).expect("canonical")
}

/// A bare-string top-level signature.
fn sign_bare(mut v: Value, k: &SigningKey) -> Value {
    v["signature"] = json!(keys::sign(k, preimage(&v).as_bytes()));
    v
}

/// A `{"alg", "value"}` signature.
fn sign_dict(mut v: Value, k: &SigningKey, alg: &str) -> Value {
    v["signature"] = json!({"alg": alg, "value": keys::sign(k, preimage(&v).as_bytes())});
    v
}

fn template(id: &str) -> Value {
    let path = format!("vendor/concordia/conformance/vectors/positive/{id}.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run from the repository root)"));
    let v: Value = serde_json::from_str(&text).expect("JSON");
    v["input"].clone()
}

#[allow(clippy::too_many_arguments)]
fn write(
    out: &mut Out,
    dir: &Path,
    id: &str,
    title: &str,
    record_type: &str,
    profile: &str,
    input: Value,
    context: Value,
    breaks: &[&str],
    notes: &str,
) {
    let expected = if breaks.is_empty() {
        "accept"
    } else {
        "reject"
    };
    let mut v = Map::new();
    v.insert(
        "schema_version".into(),
        json!("concordia-conformance-vector/v1-draft"),
    );
    v.insert("id".into(), json!(id));
    v.insert("title".into(), json!(title));
    v.insert("source_fixture".into(), json!("countersign"));
    v.insert("record_type".into(), json!(record_type));
    v.insert("verification_profile".into(), json!(profile));
    v.insert("input".into(), input);
    v.insert("context".into(), context);
    v.insert("expected".into(), json!(expected));
    v.insert(
        "expected_reason_class".into(),
        breaks
            .first()
            .map_or(Value::Null, |b| json!(reason_class(b))),
    );
    v.insert("breaks".into(), json!(breaks));
    v.insert("notes".into(), json!(notes));
    let folder = if breaks.is_empty() {
        "positive"
    } else {
        "mutation"
    };
    let rel = format!("{folder}/{id}.json");
    std::fs::create_dir_all(dir.join(folder)).expect("mkdir");
    std::fs::write(
        dir.join(&rel),
        serde_json::to_string_pretty(&Value::Object(v)).expect("json") + "\n",
    )
    .expect("write");
    if breaks.is_empty() {
        out.positive.push(rel)
    } else {
        out.mutation.push(rel)
    }
}

/// RUNNER_CONTRACT's coarse class of one of our check names.
fn reason_class(check: &str) -> &'static str {
    match check {
        "schema" => "schema",
        "signature" | "key" => "signature",
        "digest" => "digest",
        "temporal" => "temporal",
        "privacy" => "privacy",
        "transition" => "transition",
        _ => "binding",
    }
}

/// The writer for one record type and profile.
fn family<'a>(
    dir: &'a Path,
    record_type: &'a str,
    profile: &'a str,
) -> impl Fn(&mut Out, &str, &str, Value, Value, &[&str], &str) + 'a {
    move |out, id, title, input, context, breaks, notes| {
        write(
            out,
            dir,
            id,
            title,
            record_type,
            profile,
            input,
            context,
            breaks,
            notes,
        )
    }
}

fn t(text: &str) -> OffsetDateTime {
    datetime::parse(text).expect("time")
}

fn main() {
    let dir = Path::new("crates/concordia/vectors");
    let mut out = Out {
        positive: vec![],
        mutation: vec![],
    };
    receipts(&mut out, dir);
    chains(&mut out, dir);
    mandates(&mut out, dir);
    attestations(&mut out, dir);
    revocations(&mut out, dir);
    let manifest = json!({
        "schema_version": "concordia-conformance-manifest/v1-draft",
        "suite_version": "countersign-single-check/1",
        "generated_by": "cargo run -p concordia --example make_vectors",
        "counts": {"positive": out.positive.len(), "mutation": out.mutation.len(), "canary": 0},
        "files": {"positive": out.positive, "mutation": out.mutation, "canary": []},
    });
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).expect("json") + "\n",
    )
    .expect("write");
    println!(
        "{} positive, {} mutation vectors in {}",
        out.positive.len(),
        out.mutation.len(),
        dir.display()
    );
}

fn offer_message(seller: &SigningKey, total: f64) -> Value {
    let m = json!({
        "concordia": "0.1.0",
        "type": "negotiate.offer",
        "id": "msg_cs_offer_0001",
        "session_id": "ses_cs_0001",
        "timestamp": "2026-05-10T14:00:00Z",
        "from": {"agent_id": "seller"},
        "to": [{"agent_id": "buyer"}],
        "prev_hash": "sha256:3c5d3ec6a0f2c1f2b8b1d0c4e6f8a9b7c5d3e1f0a2b4c6d8e0f1a3b5c7d9e1f3",
        "body": {"offer_id": "off_cs_0001", "terms": {"item": {"value": "SRV-RACK-42U x3"}, "price": {"value": total, "currency": "USD"}}, "complete": true},
    });
    sign_bare(m, seller)
}

fn receipts(out: &mut Out, dir: &Path) {
    let approver = key();
    let seller = key();
    let offer = offer_message(&seller, 150000.0);
    let issued = t("2026-05-10T14:22:08Z");
    let expires = issued + Duration::hours(1);
    let draft = |decision| ReceiptDraft {
        receipt_uuid: uuid::Uuid::new_v4(),
        issued_at: issued,
        expires_at: expires,
        decision,
        offer_message: offer.clone(),
        amount: "150000.00 USD".parse::<Amount>().expect("amount"),
        threshold_crossed: "100000.00 USD".parse::<Amount>().expect("amount"),
        session_id: "ses_cs_0001".into(),
        role: Some("procurement_authority".into()),
        on_behalf_of: None,
    };
    let build = |d: Decision| {
        sign_receipt(
            build_receipt(&draft(d), &approver.verifying_key()).expect("built"),
            &approver,
        )
        .expect("signed")
    };
    let approve = build(Decision::Approve);
    let ctx = |now: OffsetDateTime, offer: &Value, key: &SigningKey| json!({"now": datetime::format_utc(now), "offer": offer, "public_keys_b64url": {"issuer": pk(key)}});
    let now = issued + Duration::minutes(10);
    let w = family(dir, "approval_receipt", "receipt-v1");
    w(
        out,
        "cs-pos-receipt-approve",
        "A Countersign approve receipt verifies against the whole signed offer message",
        approve.clone(),
        ctx(now, &offer, &approver),
        &[],
        "did:key approver, urn:countersign:receipt id, offer_hash over the whole signed message.",
    );
    w(
        out,
        "cs-pos-receipt-deny",
        "A deny receipt verifies the same way",
        build(Decision::Deny),
        ctx(now, &offer, &approver),
        &[],
        "",
    );
    w(
        out,
        "cs-pos-receipt-expires-at-now",
        "expires_at equal to now is still valid (expires_at >= now)",
        approve.clone(),
        ctx(expires, &offer, &approver),
        &[],
        "The boundary: RUNNER_CONTRACT receipt-v1 step 5 and the SDK both accept equality.",
    );
    w(
        out,
        "cs-receipt-expired-by-one-second",
        "A receipt one second past expires_at is refused",
        approve.clone(),
        ctx(expires + Duration::seconds(1), &offer, &approver),
        &["temporal"],
        "Only the clock moved.",
    );
    let mut cent = offer.clone();
    cent["body"]["terms"]["price"]["value"] = json!(150000.01);
    let cent = sign_bare(cent, &seller);
    w(
        out,
        "cs-receipt-offer-one-cent-off",
        "The offer presented is one cent off the one approved",
        approve.clone(),
        ctx(now, &cent, &approver),
        &["digest"],
        "The presented offer is validly signed by the seller; only its price differs, by 0.01.",
    );
    let mut naive = approve.clone();
    naive["expires_at"] = json!("2026-05-10T15:22:08");
    let naive = sign_dict(naive, &approver, "Ed25519");
    w(
        out,
        "cs-receipt-naive-expires-at",
        "A naive expires_at (no offset) is refused, never guessed to be UTC",
        naive,
        ctx(now, &offer, &approver),
        &["schema", "temporal"],
        "Re-signed; format date-time requires an explicit offset.",
    );
    let mut no_ref = approve.clone();
    no_ref["references"] = json!([{"type": "mandate", "id": "urn:countersign:mandate:m-1", "relationship": "fulfills"}]);
    let no_ref = sign_dict(no_ref, &approver, "Ed25519");
    w(
        out,
        "cs-receipt-without-approves-reference",
        "A receipt without its approves reference is refused",
        no_ref,
        ctx(now, &offer, &approver),
        &["schema", "approves_reference"],
        "Re-signed; the schema's contains and receipt-v1 step 2 both require it.",
    );
    let other = key();
    w(out, "cs-receipt-signed-by-another-key", "The receipt does not verify under the issuer key presented", approve.clone(), ctx(now, &offer, &other), &["signature", "identity"], "The approver's did:key also names another key than the one presented: Countersign's identity check (beyond receipt-v1) fails too.");
    let mut amount = approve.clone();
    amount["scope"]["amount"] = json!("150000.01 USD");
    w(
        out,
        "cs-receipt-amount-changed-after-signing",
        "An amount changed after signing breaks the signature",
        amount,
        ctx(now, &offer, &approver),
        &["signature"],
        "",
    );
}

fn message(kind: &str, n: u32, from: &str, to: &str, prev: &str, body: Value, at: &str) -> Value {
    json!({
        "concordia": "0.1.0",
        "type": kind,
        "id": format!("msg_cs_chain_{n:04}"),
        "session_id": "ses_cs_chain_0001",
        "timestamp": at,
        "from": {"agent_id": from},
        "to": [{"agent_id": to}],
        "prev_hash": prev,
        "body": body,
    })
}

fn chain_of(specs: &[(&str, &str, &str, Value)], a: &SigningKey, b: &SigningKey) -> Vec<Value> {
    let mut prev = GENESIS_HASH.to_owned();
    let mut out = Vec::new();
    for (i, (kind, from, to, body)) in specs.iter().enumerate() {
        let k = if *from == "buyer" { a } else { b };
        let m = sign_bare(
            message(
                kind,
                i as u32 + 1,
                from,
                to,
                &prev,
                body.clone(),
                &format!("2026-05-10T15:0{i}:00Z"),
            ),
            k,
        );
        prev = edges::hash(&m).expect("hash");
        out.push(m);
    }
    out
}

fn chains(out: &mut Out, dir: &Path) {
    let buyer = key();
    let seller = key();
    let specs = vec![
        (
            "negotiate.open",
            "buyer",
            "seller",
            json!({"terms": {"price": {"value": 2200, "currency": "USD"}}}),
        ),
        ("negotiate.accept_session", "seller", "buyer", json!({})),
        (
            "negotiate.counter",
            "seller",
            "buyer",
            json!({"offer_id": "off_cs_2", "terms": {"price": {"value": 2050, "currency": "USD"}}, "complete": true}),
        ),
        (
            "negotiate.accept",
            "buyer",
            "seller",
            json!({"offer_id": "off_cs_2"}),
        ),
    ];
    let chain = chain_of(&specs, &buyer, &seller);
    let keys = json!({"buyer": pk(&buyer), "seller": pk(&seller)});
    let hashes: Vec<Value> = chain
        .iter()
        .map(|m| json!(edges::hash(m).expect("hash")))
        .collect();
    let w = |out: &mut Out,
             id: &str,
             title: &str,
             messages: Vec<Value>,
             context: Value,
             breaks: &[&str],
             notes: &str| {
        family(dir, "message_chain", "message-chain-v1")(
            out,
            id,
            title,
            json!({"messages": messages}),
            context,
            breaks,
            notes,
        )
    };
    w(
        out,
        "cs-pos-chain",
        "A four-message transcript verifies: genesis, links, signatures",
        chain.clone(),
        json!({"public_keys_b64url": keys, "expected_message_count": 4, "expected_message_hashes": hashes}),
        &[],
        "",
    );
    // Delete accept_session and re-sign what follows: a self-consistent chain.
    let spliced = chain_of(
        &[specs[0].clone(), specs[2].clone(), specs[3].clone()],
        &buyer,
        &seller,
    );
    w(out, "cs-chain-unpinned-resigned-splice", "Unpinned, a re-signed deletion splice links and verifies (the contract's tolerated accept)", spliced.clone(), json!({"public_keys_b64url": keys}), &[], "Per-message signatures cannot show a deleted message; only a pin (count, hashes) or a receipt can. Countersign's own transcript replay also refuses it: a counter in PROPOSED breaks §5.2.");
    w(
        out,
        "cs-chain-pinned-resigned-splice",
        "Pinned to four messages, the same re-signed splice is refused",
        spliced.clone(),
        json!({"public_keys_b64url": keys, "expected_message_count": 4}),
        &["binding"],
        "",
    );
    w(
        out,
        "cs-chain-hash-pinned-resigned-splice",
        "Pinned to the message hashes, a same-length re-signed rewrite is refused",
        {
            let mut c = chain.clone();
            c[3]["body"]["offer_id"] = json!("off_cs_1");
            let mut v = c[..3].to_vec();
            v.push(sign_bare(c[3].clone(), &buyer));
            v
        },
        json!({"public_keys_b64url": keys, "expected_message_hashes": hashes}),
        &["binding"],
        "The last message is rewritten and validly re-signed; only the pinned hashes show it.",
    );
    let mut swapped = chain.clone();
    swapped[2]["from"]["agent_id"] = json!("buyer");
    let mut swapped_tail = swapped.clone();
    swapped_tail[3] = sign_bare(
        {
            let mut m = swapped[3].clone();
            m["prev_hash"] = json!(edges::hash(&swapped[2]).expect("hash"));
            m
        },
        &buyer,
    );
    w(out, "cs-chain-swapped-sender", "A message whose sender is swapped to the other party fails its signature", swapped_tail, json!({"public_keys_b64url": keys}), &["signature"], "The next message is re-linked and re-signed so only the swapped message's signature fails.");
    let mut wrong = chain.clone();
    wrong[3] = sign_bare(wrong[3].clone(), &seller);
    w(
        out,
        "cs-chain-signed-by-the-other-party",
        "The last message claims the buyer but is signed with the seller's key",
        wrong,
        json!({"public_keys_b64url": keys}),
        &["signature"],
        "",
    );
    let mut body = chain.clone();
    body[3]["body"]["offer_id"] = json!("off_cs_1");
    w(
        out,
        "cs-chain-last-body-tampered",
        "The last message's body changed after signing",
        body,
        json!({"public_keys_b64url": keys}),
        &["signature"],
        "",
    );
    let mut link = chain.clone();
    link[3]["prev_hash"] = hashes[1].clone();
    let link = {
        let mut l = link;
        l[3] = sign_bare(l[3].clone(), &buyer);
        l
    };
    w(
        out,
        "cs-chain-stale-link",
        "The last message links to an earlier message (re-signed)",
        link,
        json!({"public_keys_b64url": keys}),
        &["binding"],
        "",
    );
    let mut genesis = chain.clone();
    genesis[0]["prev_hash"] = json!(format!("sha256:{}", "1".repeat(64)));
    let genesis = {
        let mut g = genesis;
        g[0] = sign_bare(g[0].clone(), &buyer);
        g
    };
    let genesis: Vec<Value> = {
        let mut prev = edges::hash(&genesis[0]).expect("hash");
        let mut v = vec![genesis[0].clone()];
        for (i, m) in chain.iter().enumerate().skip(1) {
            let mut m = m.clone();
            m["prev_hash"] = json!(prev);
            let m = sign_bare(m, if i == 3 { &buyer } else { &seller });
            prev = edges::hash(&m).expect("hash");
            v.push(m);
        }
        v
    };
    w(
        out,
        "cs-chain-not-from-genesis",
        "The first message does not link to the genesis hash (all re-signed)",
        genesis,
        json!({"public_keys_b64url": keys}),
        &["binding"],
        "",
    );
    w(
        out,
        "cs-chain-unknown-sender",
        "No key is given for one sender",
        chain,
        json!({"public_keys_b64url": {"buyer": pk(&buyer)}}),
        &["key"],
        "",
    );
}

fn cosign_did(k: &SigningKey) -> String {
    let mut bytes = vec![0xed, 0x01];
    bytes.extend_from_slice(k.verifying_key().as_bytes());
    format!("did:key:z{}", jcs::b64url::encode(&bytes))
}

fn mandates(out: &mut Out, dir: &Path) {
    let issuer = key();
    let mut m = template("pos-synthetic-mandate");
    m["issuer"] = json!(cosign_did(&issuer));
    m["mandate_id"] = json!("urn:concordia:mandate:countersign-0001");
    let good = sign_bare(m.clone(), &issuer);
    let ctx = |now: &str, spend: Value| json!({"issuer_public_key_b64url": pk(&issuer), "now": now, "action": {"category": "software", "max_spend": spend}});
    let w = family(dir, "mandate", "mandate-v1");
    w(
        out,
        "cs-pos-mandate",
        "A windowed mandate verifies inside its window and limit",
        good.clone(),
        ctx("2026-05-10T14:25:00Z", json!(500)),
        &[],
        "",
    );
    w(
        out,
        "cs-pos-mandate-at-window-end",
        "now equal to not_after is inside the window",
        good.clone(),
        ctx("2026-06-01T00:00:00Z", json!(500)),
        &[],
        "",
    );
    w(
        out,
        "cs-pos-mandate-at-limit",
        "An action exactly at the limit is within it",
        good.clone(),
        ctx("2026-05-10T14:25:00Z", json!(1000)),
        &[],
        "",
    );
    w(
        out,
        "cs-mandate-after-window-by-one-second",
        "One second after not_after the mandate is outside its window",
        good.clone(),
        ctx("2026-06-01T00:00:01Z", json!(500)),
        &["temporal"],
        "",
    );
    w(
        out,
        "cs-mandate-before-window",
        "One second before not_before the mandate is outside its window",
        good.clone(),
        ctx("2026-04-30T23:59:59Z", json!(500)),
        &["temporal"],
        "",
    );
    w(
        out,
        "cs-mandate-over-limit-by-one-cent",
        "An action one cent over max_spend is refused",
        good.clone(),
        ctx("2026-05-10T14:25:00Z", json!(1000.01)),
        &["binding"],
        "",
    );
    let mut revoked = m.clone();
    revoked["status"] = json!("revoked");
    w(
        out,
        "cs-mandate-revoked",
        "A mandate whose status is revoked is refused",
        sign_bare(revoked, &issuer),
        ctx("2026-05-10T14:25:00Z", json!(500)),
        &["temporal"],
        "Re-signed; status must be absent or active.",
    );

    let root = key();
    let middle = key();
    let mut d = template("pos-synthetic-delegation-chain");
    d["issuer"] = json!(cosign_did(&root));
    d["mandate_id"] = json!("urn:concordia:mandate:countersign-delegated-0001");
    let chain = d["delegation_chain"].as_array_mut().expect("chain");
    chain[0]["delegator"] = json!(cosign_did(&root));
    chain[0]["delegate"] = json!(cosign_did(&middle));
    chain[1]["delegator"] = json!(cosign_did(&middle));
    let signed_links = |d: &mut Value| {
        let links = d["delegation_chain"].as_array_mut().expect("chain");
        links[0] = sign_bare(links[0].clone(), &root);
        links[1] = sign_bare(links[1].clone(), &middle);
    };
    signed_links(&mut d);
    let good = sign_bare(d.clone(), &root);
    let dctx = |spend: Value| {
        json!({
            "issuer_public_key_b64url": pk(&root), "now": "2026-05-10T14:25:00Z",
            "action": {"category": "software", "max_spend": spend},
            "delegation_public_keys_b64url": {cosign_did(&root): pk(&root), cosign_did(&middle): pk(&middle)},
        })
    };
    let wd = family(dir, "mandate", "delegation-chain-v1");
    wd(
        out,
        "cs-pos-delegation",
        "A two-link delegation chain verifies within the narrowest restriction",
        good.clone(),
        dctx(json!(750)),
        &[],
        "The mandate allows 1000, link 2 narrows it to 750.",
    );
    wd(
        out,
        "cs-delegation-over-narrowed-limit",
        "An action within the mandate but over a link's narrowed limit is refused",
        good.clone(),
        dctx(json!(751)),
        &["binding"],
        "",
    );
    let mut broken = d.clone();
    broken["delegation_chain"][1]["delegator"] = json!(cosign_did(&root));
    let links = broken["delegation_chain"].as_array_mut().expect("chain");
    links[1] = sign_bare(links[1].clone(), &root);
    wd(
        out,
        "cs-delegation-link-does-not-continue",
        "The second link is not delegated by the first link's delegate",
        sign_bare(broken, &root),
        dctx(json!(500)),
        &["binding"],
        "Every link re-signed by its stated delegator.",
    );
}

fn attestations(out: &mut Out, dir: &Path) {
    let a = key();
    let b = key();
    let ids = [
        "did:concordia:agent:synthetic-initiator",
        "did:concordia:agent:synthetic-responder",
    ];
    let mut att = template("pos-synthetic-attestation-v05-required-validity");
    let sign_parties = |att: &mut Value, ka: &SigningKey, kb: &SigningKey| {
        let parties = att["parties"].as_array_mut().expect("parties");
        parties[0] = sign_bare(parties[0].clone(), ka);
        parties[1] = sign_bare(parties[1].clone(), kb);
    };
    let countersign = |att: &mut Value| {
        let mut stripped = att.clone();
        stripped
            .as_object_mut()
            .expect("object")
            .remove("countersignatures");
        fn strip(v: &Value) -> Value {
            match v {
                Value::Object(m) => Value::Object(
                    m.iter()
                        .filter(|(k, _)| *k != "signature")
                        .map(|(k, v)| (k.clone(), strip(v)))
                        .collect(),
                ),
                Value::Array(x) => Value::Array(x.iter().map(strip).collect()),
                o => o.clone(),
            }
        }
        let text = edges::canonical(&strip(&stripped)).expect("canonical");
        att["countersignatures"] = json!({ids[0]: keys::sign(&a, text.as_bytes()), ids[1]: keys::sign(&b, text.as_bytes())});
    };
    sign_parties(&mut att, &a, &b);
    countersign(&mut att);
    let keys_map = json!({ids[0]: pk(&a), ids[1]: pk(&b)});
    let ctx = json!({"public_keys_b64url": keys_map, "expected_verified_parties": ids, "forbid_raw_deal_terms": true});
    let w = family(dir, "attestation", "attestation-v1");
    w(
        out,
        "cs-pos-attestation",
        "A v0.5 attestation verifies: schema, both parties' signatures, no raw deal terms",
        att.clone(),
        ctx.clone(),
        &[],
        "",
    );
    let mut price = att.clone();
    price["summary"] = json!("Agreed at price: 2050 after four rounds.");
    w(
        out,
        "cs-attestation-raw-price-in-summary",
        "A raw price in the summary is refused (SPEC 9.6.6)",
        price,
        ctx.clone(),
        &["privacy"],
        "The summary lies outside the party signatures; only the privacy scan sees it.",
    );
    let mut wrong = att.clone();
    sign_parties(&mut wrong, &a, &a);
    w(
        out,
        "cs-attestation-party-signed-by-the-other",
        "The responder's party object is signed with the initiator's key",
        wrong,
        ctx.clone(),
        &["signature"],
        "",
    );
    let cctx = json!({"public_keys_b64url": keys_map, "countersigners": ids});
    let wc = family(dir, "attestation", "attestation-countersign-v1");
    wc(
        out,
        "cs-pos-attestation-countersign",
        "Both parties countersign the outcome",
        att.clone(),
        cctx.clone(),
        &[],
        "",
    );
    let mut missing = att.clone();
    missing["countersignatures"]
        .as_object_mut()
        .expect("map")
        .remove(ids[1]);
    wc(
        out,
        "cs-attestation-countersignature-missing",
        "One party's countersignature is missing",
        missing,
        cctx.clone(),
        &["signature"],
        "",
    );
    let mut outcome = att.clone();
    outcome["outcome"]["rounds"] = json!(5);
    sign_parties(&mut outcome, &a, &b);
    wc(
        out,
        "cs-attestation-outcome-changed-after-countersigning",
        "The outcome changed after countersigning (party signatures redone)",
        outcome,
        cctx,
        &["signature"],
        "",
    );
}

fn revocations(out: &mut Out, dir: &Path) {
    let issuer = key();
    let r = template("pos-1404-revocation-record");
    let good = sign_dict(r.clone(), &issuer, "EdDSA");
    let ctx = json!({"public_keys_b64url": {"issuer": pk(&issuer)}});
    let w = family(dir, "revocation_record", "revocation-v1");
    w(
        out,
        "cs-pos-revocation",
        "A revocation record verifies",
        good,
        ctx.clone(),
        &[],
        "",
    );
    let mut target = r.clone();
    target["references"][0]["id"] = json!("urn:concordia:receipt:another");
    w(
        out,
        "cs-revocation-revokes-another-artifact",
        "The revokes reference names another artifact than revoked_artifact_id",
        sign_dict(target, &issuer, "EdDSA"),
        ctx,
        &["revokes_reference"],
        "Re-signed.",
    );
}
