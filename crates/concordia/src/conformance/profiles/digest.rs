//! Digest and binding profiles: decision objects, offer bindings, closure
//! predicates, chain sessions and their transitions.

use serde_json::Value;

use super::super::checks::{self, Checks};
use super::super::vector::Vector;

pub fn decision_object(v: &Vector, c: &mut Checks) {
    let actual = checks::digest(&v.input);
    let expected = v
        .context
        .get("expected_decision_id")
        .and_then(Value::as_str);
    c.check(
        "digest",
        expected.is_some() && actual.as_deref() == expected,
        || {
            format!(
                "the decision object hashes to {}, not {}",
                actual.clone().unwrap_or_default(),
                expected.unwrap_or("(missing)")
            )
        },
    );
}

fn jcs_pointer_check(v: &Vector, c: &mut Checks, check: &Value, i: usize) {
    let src = check
        .get("source")
        .and_then(Value::as_str)
        .and_then(|s| checks::source(v, s));
    let tgt = check.get("target").and_then(|t| checks::target(v, t));
    match (src.and_then(checks::digest), tgt) {
        (Some(d), Some(t)) => {
            c.check("binding", t.as_str() == Some(d.as_str()), || {
                format!("check {i}: the source hashes to {d}, the target holds {t}")
            });
        }
        (None, _) => c.fail("binding", format!("check {i}: the source is missing")),
        (_, None) => c.fail(
            "binding",
            format!("check {i}: the target pointer resolves to nothing"),
        ),
    }
}

pub fn offer_binding(v: &Vector, c: &mut Checks) {
    let Some(list) = v
        .context
        .get("checks")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
    else {
        c.fail("binding", "context.checks is missing or empty");
        return;
    };
    for (i, check) in list.iter().enumerate() {
        match check.get("kind").and_then(Value::as_str) {
            Some("jcs-sha256") => {
                let src = check
                    .get("source")
                    .and_then(Value::as_str)
                    .and_then(|s| checks::source(v, s));
                let expected = check.get("expected").and_then(Value::as_str);
                let actual = src.and_then(checks::digest);
                c.check(
                    "digest",
                    expected.is_some() && actual.as_deref() == expected,
                    || {
                        format!(
                            "check {i}: the source hashes to {}, not {}",
                            actual.clone().unwrap_or_default(),
                            expected.unwrap_or("(missing)")
                        )
                    },
                );
            }
            Some("jcs-sha256-pointer") => jcs_pointer_check(v, c, check, i),
            Some("json-pointer-equal") => {
                let l = check.get("left").and_then(|t| checks::target(v, t));
                let r = check.get("right").and_then(|t| checks::target(v, t));
                c.check("binding", l.is_some() && l == r, || {
                    format!("check {i}: the two pointers do not hold equal values")
                });
            }
            other => c.fail(
                "binding",
                format!("check {i}: unknown check kind {other:?}"),
            ),
        }
    }
}

pub fn closure_predicate(v: &Vector, c: &mut Checks) {
    checks::schema(c, "closure_predicate", &v.input);
    let preimage = checks::canonical(c, &checks::without(&v.input, &["signature"]));
    checks::optional_digest(c, &v.context, preimage.as_deref());
    if let Some(list) = v.context.get("digest_checks") {
        let Some(list) = list.as_array() else {
            c.fail("binding", "context.digest_checks is not an array");
            return;
        };
        for (i, check) in list.iter().enumerate() {
            match check.get("kind").and_then(Value::as_str) {
                Some("jcs-sha256-pointer") => jcs_pointer_check(v, c, check, i),
                other => c.fail(
                    "binding",
                    format!("digest check {i}: unknown kind {other:?}"),
                ),
            }
        }
    }
}

pub fn chain_session(v: &Vector, c: &mut Checks) {
    checks::schema(c, "chain_session", &v.input);
    let whole = checks::canonical(c, &v.input);
    checks::optional_digest(c, &v.context, whole.as_deref());
}

pub fn chain_session_transition(v: &Vector, c: &mut Checks) {
    let Some(session) = v.input.get("initial_session") else {
        c.fail("schema", "input.initial_session is missing");
        return;
    };
    if !checks::schema(c, "chain_session", session) {
        return;
    }
    let state = session.get("state").and_then(Value::as_str).unwrap_or("");
    let Some(target) = v.input.get("attempt_transition").and_then(Value::as_str) else {
        c.fail("transition", "input.attempt_transition is missing");
        return;
    };
    let legal: &[&str] = match state {
        "PROPOSED" => &["OPEN"],
        "OPEN" => &["ACTIVATED", "DISSOLVED", "EXPIRED"],
        _ => &[],
    };
    if !c.check("transition", legal.contains(&target), || {
        format!("{state} → {target} is not a legal transition")
    }) {
        return;
    }
    let Some(now) = checks::instant(c, v.input.get("transition_now"), "input.transition_now")
    else {
        return;
    };
    let deadline = session
        .get("activation_deadline")
        .and_then(Value::as_str)
        .map(approval_receipt::datetime::parse);
    let present = |name: &str| session.get(name).is_some_and(|x| !x.is_null());
    let count = |name: &str| session.get(name).and_then(Value::as_array).map(Vec::len);
    match (state, target) {
        ("PROPOSED", "OPEN") => {
            c.check(
                "transition",
                count("commitments").is_some() && count("commitments") == count("participants"),
                || "PROPOSED → OPEN needs one commitment per participant".into(),
            );
        }
        ("OPEN", "ACTIVATED") => {
            c.check("transition", present("activation_proof_id"), || {
                "OPEN → ACTIVATED needs an activation_proof_id".into()
            });
            c.check(
                "transition",
                matches!(deadline, Some(Ok(d)) if now < d),
                || "OPEN → ACTIVATED needs transition_now before activation_deadline".into(),
            );
        }
        ("OPEN", "DISSOLVED") => {
            c.check("transition", present("unwind_record_id"), || {
                "OPEN → DISSOLVED needs an unwind_record_id".into()
            });
        }
        ("OPEN", "EXPIRED") => {
            c.check(
                "transition",
                matches!(deadline, Some(Ok(d)) if now >= d),
                || "OPEN → EXPIRED needs transition_now at or after activation_deadline".into(),
            );
            c.check("transition", !present("activation_proof_id"), || {
                "OPEN → EXPIRED needs no activation_proof_id".into()
            });
        }
        _ => {}
    }
}
