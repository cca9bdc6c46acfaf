//! Whose terms the person signs: an ANEX terms record names the
//! organization's agent as its `responder`, and a receipt over it binds the
//! person to terms with that agent. The console signs only for the host it
//! enrolled with: the responder must be that host's own A2A agent of an
//! organization, `<the host's URL>/a2a/<org handle>`. A host that names
//! another (a misconfigured public URL, or a name a caller chose) is
//! refused before anything is signed.

/// Checks `responder` against `host_url` (the URL this console enrolled
/// with); the refusal is a sentence for the person.
pub(crate) fn check(host_url: &str, responder: &str) -> Result<(), String> {
    let base = format!("{}/a2a/", host_url.trim_end_matches('/'));
    let handle = responder
        .get(..base.len())
        .filter(|prefix| prefix.eq_ignore_ascii_case(&base))
        .and_then(|_| responder.get(base.len()..))
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
    match handle {
        Some(_) => Ok(()),
        None => Err(format!(
            "the terms name {responder:?} as the organization's agent, but you enrolled with {host_url}, whose agents are {base}<organization>: signing would bind you to terms with another party, so the console refuses. Ask the host's admin to start it with --public-url {host_url}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn only_the_enrolled_hosts_own_agents_are_signed_for() {
        let host = "https://negotiate.fabrikam.example";
        check(host, "https://negotiate.fabrikam.example/a2a/anp_org_1f").unwrap();
        check(
            "http://127.0.0.1:8480/",
            "http://127.0.0.1:8480/a2a/sandbox",
        )
        .unwrap();
        check(host, "https://Negotiate.Fabrikam.example/a2a/anp_org_1f").unwrap();
        for other in [
            "http://evil.example/a2a/anp_org_1f",
            "https://negotiate.fabrikam.example.evil.example/a2a/anp_org_1f",
            "https://negotiate.fabrikam.example/a2a/",
            "https://negotiate.fabrikam.example/a2a/anp_org_1f/x",
            "https://negotiate.fabrikam.example/a2a/anp_org_1f?x",
            "https://negotiate.fabrikam.example/other/anp_org_1f",
            "http://negotiate.fabrikam.example/a2a/anp_org_1f",
            "did:web:negotiate.fabrikam.example",
        ] {
            let err = check(host, other).unwrap_err();
            assert!(err.contains("you enrolled with"), "{other}: {err}");
        }
    }
}
