//! OANP receipts as a person meets them under History ("Arbiter receipts"):
//! the publisher's development receipt chosen through the real file input
//! (the webview reads the file, the engine verifies it) reads as NOT proof,
//! test-mode, with its failing and skipped checks in their own sentences;
//! once Settings allows test-mode receipts the same receipt reads as proof
//! for testing only; its export is the fixture byte for byte; a forgery
//! that borrows the live arbiter's kid is loudly not proof even then. And
//! the sandbox's own demo receipt is filed on first launch. Turning test
//! receipts on asks for a confirmation first, and while they count every
//! receipt view says so. A file that is no receipt is refused with what is
//! wrong and nothing is filed; a filed receipt is removed after a
//! confirmation and the record of its removal stays. What the test knows it
//! reads from the vendored fixtures, never from the app's screen.

use std::path::PathBuf;

use countersign_e2e::{paths, App, E2eError, Result};
use serde_json::Value;
use thirtyfour::prelude::*;

use super::person::{setting, text_of};

const ALLOW_TEST: &str = "oanp.allow_test_receipts";
const DEV_KID: &str = "ed25519-2f3286feb69fb953";
const LIVE_KID: &str = "ed25519-28860223a6941457";

/// The absolute path of a vendored OANP fixture, found at run time.
fn fixture(name: &str) -> Result<PathBuf> {
    let path = paths::workspace_root()
        .join("vendor/oanp/fixtures")
        .join(name);
    path.canonicalize().map_err(|source| E2eError::Io {
        what: format!("finding the fixture {}", path.display()),
        source,
    })
}

fn read(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| E2eError::Io {
        what: format!("reading {}", path.display()),
        source,
    })
}

/// The session id the fixture's own JSON names.
fn session_id_of(bytes: &[u8]) -> Result<String> {
    let receipt: Value = serde_json::from_slice(bytes)
        .map_err(|e| E2eError::Unexpected(format!("a fixture is not JSON: {e}")))?;
    receipt["session_id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| E2eError::Unexpected("a fixture names no session_id".into()))
}

/// Chooses `path` in the receipt's `<input type=file>` (WebDriver types the
/// path into it, as a file chooser would set it) and presses "Import and
/// verify"; waits for the receipt's screen.
async fn import(app: &App, path: &std::path::Path) -> Result<()> {
    app.click("nav-history").await?;
    app.testid("receipts-panel").await?;
    let input = app.testid("receipt-import-file").await?;
    input.send_keys(path.display().to_string()).await?;
    let submit = app.testid("receipt-import-submit").await?;
    app.wait_for("Import and verify to be enabled", async || {
        Ok(submit.is_enabled().await?.then_some(()))
    })
    .await?;
    submit.click().await?;
    app.wait_for("the imported receipt's screen", async || {
        if let Some(error) = app.all("receipt-import-error").await?.into_iter().next() {
            return Err(E2eError::Unexpected(format!(
                "the import was refused: {}",
                error.text().await?
            )));
        }
        Ok((!app.all("oanp-receipt").await?.is_empty()).then_some(()))
    })
    .await
}

/// The verdict panel's `data-proof` and text, once the receipt is read.
async fn verdict(app: &App) -> Result<(String, String)> {
    let panel = app.testid("receipt-proof").await?;
    let proof = panel.attr("data-proof").await?.unwrap_or_default();
    Ok((proof, panel.text().await?))
}

/// One check's `data-state` and sentence.
async fn check(app: &App, id: &str) -> Result<(String, String)> {
    let css = format!("[data-testid=receipt-check][data-check='{id}']");
    let row = app.driver.find(By::Css(css.as_str())).await?;
    let state = row.attr("data-state").await?.unwrap_or_default();
    let detail = row
        .find(By::Testid("receipt-check-detail"))
        .await?
        .text()
        .await?;
    Ok((state, detail))
}

/// The receipt's "N bytes, SHA-256 …" line as shown.
async fn filed_bytes_line(app: &App) -> Result<String> {
    let facts = app.testid("receipt-view").await?.text().await?;
    facts
        .lines()
        .find(|line| line.contains("SHA-256"))
        .map(str::to_owned)
        .ok_or_else(|| E2eError::Unexpected(format!("no SHA-256 line on the receipt:\n{facts}")))
}

/// The rows of the receipts panel, as (`data-proof`, text).
async fn receipt_rows(app: &App) -> Result<Vec<(String, String)>> {
    app.click("nav-history").await?;
    app.testid("receipts-panel").await?;
    app.wait_for("the receipts to be listed", async || {
        Ok((!app.all("receipt-row").await?.is_empty()).then_some(()))
    })
    .await?;
    let mut rows = Vec::new();
    for row in app.all("receipt-row").await? {
        rows.push((
            row.attr("data-proof").await?.unwrap_or_default(),
            row.text().await?,
        ));
    }
    Ok(rows)
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn the_development_receipt_imported_from_a_file_is_not_proof_until_test_receipts_are_allowed_and_a_forgery_never_is(
) -> Result<()> {
    let dev_path = fixture("dev-receipt.json")?;
    let dev = read(&dev_path)?;
    let app = App::launch().await?;
    app.testid("sandbox-banner").await?;

    import(&app, &dev_path).await?;
    // The bytes the webview read are the file's: the screen names their digest.
    let line = filed_bytes_line(&app).await?;
    assert!(
        line.contains(&format!(
            "{} bytes, SHA-256 {}",
            dev.len(),
            jcs::sha256_hex(&dev)
        )),
        "{line}"
    );
    let (proof, text) = verdict(&app).await?;
    assert_eq!(proof, "false", "test receipts are off by default");
    assert!(text.starts_with("NOT PROOF"), "{text}");
    assert!(
        text.contains("Do not act on these terms: nothing below is evidence of an agreement."),
        "{text}"
    );
    let headline = text_of(&app, "receipt-headline").await?;
    assert!(headline.starts_with("NOT PROOF (mode check)"), "{headline}");
    assert!(
        text_of(&app, "receipt-test-setting")
            .await?
            .contains("Settings → OANP receipts"),
        "the screen says where to allow test receipts"
    );
    // The signer and its mode.
    let signer = app.testid("oanp-signer").await?;
    assert_eq!(signer.attr("data-pinned").await?.as_deref(), Some("true"));
    assert_eq!(signer.attr("data-mode").await?.as_deref(), Some("test"));
    let signer_text = signer.text().await?;
    assert!(
        signer_text.contains("the Valyzen development arbiter"),
        "{signer_text}"
    );
    assert_eq!(text_of(&app, "oanp-signer-mode").await?, "test mode");
    assert_eq!(text_of(&app, "oanp-signer-kid").await?, DEV_KID);
    // The checks: the signature and signer hold; the mode fails; the chain is skipped.
    for id in ["header", "key", "signature", "signer", "terms"] {
        assert_eq!(check(&app, id).await?.0, "ok", "{id}");
    }
    assert_eq!(
        check(&app, "signer").await?.1,
        format!("The key is the Valyzen development arbiter's pinned test key {DEV_KID}.")
    );
    assert_eq!(
        check(&app, "mode").await?,
        (
            "fail".to_owned(),
            "A test-mode (sandbox) key: test keys are free to anyone, so this receipt is proof only when test receipts are allowed.".to_owned()
        )
    );
    let (chain, chain_detail) = check(&app, "chain").await?;
    assert_eq!(chain, "skip");
    assert!(
        chain_detail.starts_with("Not checked: no session log was given"),
        "{chain_detail}"
    );
    assert!(
        text_of(&app, "receipt-log")
            .await?
            .contains("none imported: the chain was not checked"),
        "the screen says no log was imported"
    );
    assert_eq!(
        text_of(&app, "oanp-signed-session").await?,
        session_id_of(&dev)?
    );
    assert_eq!(
        app.testid("oanp-signed")
            .await?
            .attr("data-genuine")
            .await?
            .as_deref(),
        Some("true"),
        "a genuine signature by a pinned key, only not proof"
    );
    app.screenshot("receipt-test-mode").await?;
    // The sandbox filed these very bytes already: the same bytes are one receipt.
    let rows = receipt_rows(&app).await?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "false");
    assert!(rows[0].1.contains("NOT PROOF"), "{:?}", rows[0]);
    assert!(rows[0].1.contains("test mode"), "{:?}", rows[0]);

    // Settings → allow test-mode receipts: asked first, saying what it changes.
    app.click("nav-settings").await?;
    let toggle = setting(&app, "setting-input", ALLOW_TEST).await?;
    assert_eq!(toggle.prop("checked").await?.as_deref(), Some("false"));
    toggle.click().await?;
    let asked = setting(&app, "setting-confirm", ALLOW_TEST)
        .await?
        .text()
        .await?;
    assert!(
        asked.contains("Count test-mode receipts as proof?"),
        "{asked}"
    );
    assert_eq!(
        toggle.prop("checked").await?.as_deref(),
        Some("false"),
        "off until confirmed"
    );
    app.screenshot("settings-test-receipts-confirm").await?;
    app.click("setting-confirm-yes").await?;
    setting(&app, "setting-saved", ALLOW_TEST).await?;

    // Reopened from History, the same receipt is proof, for testing only,
    // under a notice that test receipts count.
    let rows = receipt_rows(&app).await?;
    let notice = text_of(&app, "receipts-relaxed").await?;
    assert!(
        notice.starts_with("Test-mode receipts count as proof"),
        "{notice}"
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "true", "{rows:?}");
    assert!(rows[0].1.contains("proof"), "{:?}", rows[0]);
    assert!(!rows[0].1.contains("NOT PROOF"), "{:?}", rows[0]);
    app.click("receipt-row").await?;
    app.testid("oanp-receipt").await?;
    let (proof, text) = app
        .wait_for("the receipt to read as proof", async || {
            let (proof, text) = verdict(&app).await?;
            Ok((proof == "true").then_some((proof, text)))
        })
        .await?;
    assert_eq!(proof, "true");
    assert!(text.starts_with("Proof for testing only"), "{text}");
    assert_eq!(text_of(&app, "receipt-relaxed").await?, notice);
    assert!(!text.contains("NOT PROOF"), "{text}");
    assert!(!text.contains("Do not act on these terms"), "{text}");
    let headline = text_of(&app, "receipt-headline").await?;
    assert!(
        headline.starts_with(
            "Proof for testing only: signed by the Valyzen development arbiter's test-mode key"
        ),
        "{headline}"
    );
    assert!(
        headline.contains("it proves nothing to a third party"),
        "{headline}"
    );
    assert!(
        headline.ends_with("The session log was not checked."),
        "the headline says the chain was not checked: {headline}"
    );
    assert!(
        app.all("receipt-test-setting").await?.is_empty(),
        "no pointer to the setting once it is on"
    );
    assert_eq!(
        check(&app, "mode").await?,
        (
            "ok".to_owned(),
            "A test-mode (sandbox) key, accepted because test receipts are allowed; to a third party it proves nothing.".to_owned()
        )
    );
    assert_eq!(check(&app, "chain").await?.0, "skip");
    app.screenshot("receipt-test-allowed").await?;

    // Exported: the file is the fixture, byte for byte.
    app.click("export-receipt").await?;
    let exported = text_of(&app, "receipt-export-path").await?;
    let exported = PathBuf::from(exported.trim());
    assert!(
        exported.starts_with(app.data_dir().join("exports")),
        "{}",
        exported.display()
    );
    assert!(
        read(&exported)? == dev,
        "the export is the fixture byte for byte"
    );

    // A forgery under the live arbiter's kid, with test receipts still allowed.
    let forged_path = fixture("forged-kid-receipt.json")?;
    let forged = read(&forged_path)?;
    import(&app, &forged_path).await?;
    let line = filed_bytes_line(&app).await?;
    assert!(
        line.contains(&format!(
            "{} bytes, SHA-256 {}",
            forged.len(),
            jcs::sha256_hex(&forged)
        )),
        "{line}"
    );
    assert_eq!(
        text_of(&app, "receipt-file").await?,
        "forged-kid-receipt.json"
    );
    let (proof, text) = verdict(&app).await?;
    assert_eq!(proof, "false");
    assert!(text.starts_with("NOT PROOF"), "{text}");
    assert!(
        text.contains("Do not act on these terms: nothing below is evidence of an agreement."),
        "{text}"
    );
    let panel = app.testid("receipt-proof").await?;
    assert_eq!(panel.attr("role").await?.as_deref(), Some("alert"));
    let headline = text_of(&app, "receipt-headline").await?;
    assert!(
        headline.starts_with("NOT PROOF (signer check)"),
        "{headline}"
    );
    let signer = app.testid("oanp-signer").await?;
    assert_eq!(signer.attr("data-pinned").await?.as_deref(), Some("false"));
    assert!(
        signer.text().await?.contains("not a pinned arbiter key"),
        "{}",
        signer.text().await?
    );
    assert_eq!(text_of(&app, "oanp-signer-kid").await?, LIVE_KID);
    assert_eq!(
        check(&app, "signer").await?,
        (
            "fail".to_owned(),
            format!("The kid {LIVE_KID} is the Valyzen arbiter's, but the embedded key is not the pinned one: some other key signed under that kid.")
        )
    );
    assert_eq!(
        check(&app, "mode").await?,
        (
            "skip".to_owned(),
            "The signer is not pinned, so there is no mode to weigh.".to_owned()
        )
    );
    // Its signature holds (over its own key): a check alone proves nothing.
    assert_eq!(check(&app, "signature").await?.0, "ok");
    let signed = app.testid("oanp-signed").await?;
    assert_eq!(signed.attr("data-genuine").await?.as_deref(), Some("false"));
    assert!(
        signed
            .text()
            .await?
            .to_lowercase()
            .contains("not signed by a pinned arbiter key"),
        "{}",
        signed.text().await?
    );
    app.screenshot("receipt-forged").await?;

    let rows = receipt_rows(&app).await?;
    assert_eq!(rows.len(), 2, "{rows:?}");
    let forged_row = rows
        .iter()
        .find(|(_, text)| text.contains("forged-kid-receipt.json"))
        .ok_or_else(|| E2eError::Unexpected(format!("no row for the forgery: {rows:?}")))?;
    assert_eq!(forged_row.0, "false", "{forged_row:?}");
    assert!(forged_row.1.contains("NOT PROOF"), "{forged_row:?}");
    app.quit().await
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn the_sandbox_files_its_development_receipt_on_first_launch() -> Result<()> {
    let dev = read(&fixture("dev-receipt.json")?)?;
    let app = App::launch().await?;
    app.testid("sandbox-banner").await?;
    let rows = receipt_rows(&app).await?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (proof, text) = &rows[0];
    assert_eq!(proof, "false", "test receipts are off on a first launch");
    for said in [
        "NOT PROOF",
        "test mode",
        "sandbox demo",
        "sandbox-dev-receipt.json",
    ] {
        assert!(text.contains(said), "{said:?} in {text:?}");
    }
    assert!(text.contains(&session_id_of(&dev)?), "{text}");
    let row = app.testid("receipt-row").await?;
    assert_eq!(row.attr("data-protocol").await?.as_deref(), Some("oanp"));
    app.screenshot("receipts-sandbox").await?;

    row.click().await?;
    app.testid("oanp-receipt").await?;
    assert_eq!(text_of(&app, "receipt-sandbox").await?, "sandbox demo");
    assert_eq!(
        text_of(&app, "receipt-file").await?,
        "sandbox-dev-receipt.json"
    );
    let line = filed_bytes_line(&app).await?;
    assert!(
        line.contains(&format!(
            "{} bytes, SHA-256 {}",
            dev.len(),
            jcs::sha256_hex(&dev)
        )),
        "the publisher's bytes: {line}"
    );
    let (proof, text) = verdict(&app).await?;
    assert_eq!(proof, "false");
    assert!(text.starts_with("NOT PROOF"), "{text}");
    let signer = app.testid("oanp-signer").await?;
    assert_eq!(signer.attr("data-mode").await?.as_deref(), Some("test"));
    assert_eq!(check(&app, "mode").await?.0, "fail");
    app.quit().await
}

#[tokio::test]
#[ignore = "end-to-end: run through tests/e2e.sh"]
async fn json_that_is_no_receipt_is_refused_and_a_filed_receipt_is_removed_leaving_a_record(
) -> Result<()> {
    let app = App::launch().await?;
    app.testid("sandbox-banner").await?;
    let dir = tempfile::tempdir().map_err(|source| E2eError::Io {
        what: "making a folder for the file".into(),
        source,
    })?;
    let path = dir.path().join("not-a-receipt.json");
    std::fs::write(&path, br#"{"not":"a receipt"}"#).map_err(|source| E2eError::Io {
        what: format!("writing {}", path.display()),
        source,
    })?;

    app.click("nav-history").await?;
    app.testid("receipts-panel").await?;
    let input = app.testid("receipt-import-file").await?;
    input.send_keys(path.display().to_string()).await?;
    let submit = app.testid("receipt-import-submit").await?;
    app.wait_for("Import and verify to be enabled", async || {
        Ok(submit.is_enabled().await?.then_some(()))
    })
    .await?;
    submit.click().await?;
    let refused = app
        .wait_for("the refusal", async || {
            Ok(
                match app.all("receipt-import-error").await?.into_iter().next() {
                    Some(error) => Some(error.text().await?),
                    None => None,
                },
            )
        })
        .await?;
    assert_eq!(
        refused,
        "This file is not an OANP receipt, which has `artifact`, `signed_payload` and `jwks` (or, for a session closed without agreement, `session_id`, `state` and `arbiter`), and it has none of them. Nothing was filed."
    );
    app.screenshot("receipt-refused").await?;
    let rows = receipt_rows(&app).await?;
    assert_eq!(rows.len(), 1, "only the sandbox's demo: {rows:?}");
    assert!(rows[0].1.contains("sandbox-dev-receipt.json"), "{rows:?}");

    // Remove the demo: asked first; "Keep it" keeps it.
    app.click("receipt-row").await?;
    app.testid("oanp-receipt").await?;
    app.click("remove-receipt").await?;
    let asked = text_of(&app, "remove-receipt-confirm").await?;
    assert!(
        asked.contains("Remove sandbox-dev-receipt.json from this console?"),
        "{asked}"
    );
    app.screenshot("receipt-remove-confirm").await?;
    app.click("remove-receipt-no").await?;
    app.wait_for("the confirmation to close", async || {
        Ok(app
            .all("remove-receipt-confirm")
            .await?
            .is_empty()
            .then_some(()))
    })
    .await?;
    app.click("remove-receipt").await?;
    app.click("remove-receipt-yes").await?;

    // Back on the list: no receipt, and the record of the removal.
    app.testid("receipts-empty").await?;
    let removal = app.testid("receipt-removal").await?.text().await?;
    for said in [
        "sandbox-dev-receipt.json",
        "removed by",
        "NOT PROOF",
        &jcs::sha256_hex(&read(&fixture("dev-receipt.json")?)?),
    ] {
        assert!(removal.contains(said), "{said:?} in {removal:?}");
    }
    assert!(app.all("receipt-row").await?.is_empty());
    app.screenshot("receipt-removed").await?;
    app.quit().await
}
