//! Whether a JSON object is an OANP receipt at all, before anyone files it:
//! a receipt comes in one of two forms, each with members no other file
//! has together. Verifying ([`crate::verify`]) judges a receipt; this only
//! says whether there is one to judge, and which member is missing when a
//! file comes close.

use serde_json::{Map, Value};

/// The members a signed receipt (a session that agreed) has: the detached
/// JWS, what it signs, and the keys to check it with.
pub const SIGNED_FORM: [&str; 3] = ["artifact", "signed_payload", "jwks"];

/// The members an unsigned receipt (a session that closed without
/// agreement) has.
pub const CLOSED_FORM: [&str; 3] = ["session_id", "state", "arbiter"];

/// Which form a receipt has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Signed: [`SIGNED_FORM`].
    Signed,
    /// A session's record without a signature: [`CLOSED_FORM`].
    Closed,
}

/// Why an object is not an OANP receipt; its sentence names what is missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAnOanpReceipt {
    /// None of either form's members.
    #[error(
        "not an OANP receipt, which has {} (or, for a session closed without agreement, {}), and it has none of them",
        and(&SIGNED_FORM),
        and(&CLOSED_FORM)
    )]
    Foreign,
    /// Some of a form's members, not all.
    #[error("not a whole OANP receipt: it lacks {}, which {} has", and(.missing), .form.noun())]
    Missing {
        /// The form it comes closest to.
        form: Form,
        /// That form's members it lacks, in the form's order.
        missing: Vec<&'static str>,
    },
}

impl Form {
    fn members(self) -> &'static [&'static str; 3] {
        match self {
            Form::Signed => &SIGNED_FORM,
            Form::Closed => &CLOSED_FORM,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Form::Signed => "a signed receipt",
            Form::Closed => "the receipt of a session closed without agreement",
        }
    }
}

fn and(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The form of `receipt`: a signed receipt when it has every member of
/// [`SIGNED_FORM`], else an unsigned one when it has every member of
/// [`CLOSED_FORM`]; otherwise which members of the closer form it lacks
/// (the signed form on a tie).
pub fn recognize(receipt: &Map<String, Value>) -> Result<Form, NotAnOanpReceipt> {
    let missing = |form: Form| -> Vec<&'static str> {
        form.members()
            .iter()
            .copied()
            .filter(|m| !receipt.contains_key(*m))
            .collect()
    };
    let (signed, closed) = (missing(Form::Signed), missing(Form::Closed));
    if signed.is_empty() {
        return Ok(Form::Signed);
    }
    if closed.is_empty() {
        return Ok(Form::Closed);
    }
    if signed.len() == SIGNED_FORM.len() && closed.len() == CLOSED_FORM.len() {
        return Err(NotAnOanpReceipt::Foreign);
    }
    Err(if signed.len() <= closed.len() {
        NotAnOanpReceipt::Missing {
            form: Form::Signed,
            missing: signed,
        }
    } else {
        NotAnOanpReceipt::Missing {
            form: Form::Closed,
            missing: closed,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(v: Value) -> Result<Form, NotAnOanpReceipt> {
        recognize(v.as_object().unwrap())
    }

    #[test]
    fn each_form_is_recognized_by_its_members_alone() {
        assert_eq!(
            of(json!({"artifact": null, "signed_payload": null, "jwks": 1})),
            Ok(Form::Signed)
        );
        assert_eq!(
            of(json!({"session_id": 1, "state": "closed", "arbiter": {}})),
            Ok(Form::Closed)
        );
    }

    #[test]
    fn an_object_of_neither_form_is_foreign_and_says_what_a_receipt_has() {
        let e = of(json!({"not": "a receipt"})).unwrap_err();
        assert_eq!(e, NotAnOanpReceipt::Foreign);
        assert_eq!(
            e.to_string(),
            "not an OANP receipt, which has `artifact`, `signed_payload` and `jwks` (or, for a session closed without agreement, `session_id`, `state` and `arbiter`), and it has none of them"
        );
    }

    #[test]
    fn a_near_miss_names_each_missing_member_of_the_closer_form() {
        let e = of(json!({"artifact": {}, "signed_payload": {}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not a whole OANP receipt: it lacks `jwks`, which a signed receipt has"
        );
        let e = of(json!({"state": "closed"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not a whole OANP receipt: it lacks `session_id` and `arbiter`, which the receipt of a session closed without agreement has"
        );
    }
}
