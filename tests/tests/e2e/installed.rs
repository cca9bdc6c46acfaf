//! The installed package, once: the `.deb` Tauri's bundler made, installed
//! with `apt-get install ./….deb`, puts `countersign` on the PATH with a
//! desktop entry and an icon, and the app it installed starts under Xvfb and
//! shows its inbox. Run by `.ci/test` after it installs the package
//! (`COUNTERSIGN_E2E_INSTALLED=1`); tests/e2e.sh skips it otherwise.

use std::path::{Path, PathBuf};

use countersign_e2e::{app::fresh_data_dir, App, E2eError, Result};

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| E2eError::Io {
        what: format!("reading {}", path.display()),
        source,
    })
}

/// Where `name` is found on the PATH, as a shell would find it.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

#[tokio::test]
#[ignore = "end-to-end against the installed .deb: .ci/test runs it after installing the package"]
async fn the_installed_package_puts_the_app_on_the_path_and_it_shows_its_inbox() -> Result<()> {
    let binary = on_path("countersign").ok_or_else(|| {
        E2eError::Missing(
            "countersign is not on the PATH: build the .deb and install it first (README, \"Install it\")"
                .into(),
        )
    })?;
    assert_eq!(binary, PathBuf::from("/usr/bin/countersign"));
    let owner = std::process::Command::new("dpkg")
        .args(["-S", "/usr/bin/countersign"])
        .output()
        .map_err(|source| E2eError::Io {
            what: "asking dpkg who installed /usr/bin/countersign".into(),
            source,
        })?;
    assert_eq!(
        String::from_utf8_lossy(&owner.stdout).trim(),
        "countersign: /usr/bin/countersign",
        "the package owns the binary"
    );

    // The desktop entry a launcher lists, and the icon it names.
    let entry = read(Path::new("/usr/share/applications/Countersign.desktop"))?;
    for line in [
        "[Desktop Entry]",
        "Type=Application",
        "Name=Countersign",
        "Exec=countersign",
        "Icon=countersign",
        "Terminal=false",
    ] {
        assert!(entry.lines().any(|l| l == line), "{line:?} in:\n{entry}");
    }
    for size in ["32x32", "128x128", "256x256", "512x512"] {
        let icon = format!("/usr/share/icons/hicolor/{size}/apps/countersign.png");
        let bytes = std::fs::read(&icon).map_err(|source| E2eError::Io {
            what: format!("reading {icon}"),
            source,
        })?;
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{icon} is a PNG");
    }

    // The installed app itself, on a fresh data directory.
    let data = fresh_data_dir()?;
    let dir = data.path().to_path_buf();
    let app = App::launch_binary(&binary, &dir, Some(data), &[]).await?;
    app.testid("sandbox-banner").await?;
    app.testid("inbox").await?;
    app.wait_for("the installed app's first offers", async || {
        Ok((!app.all("inbox-row").await?.is_empty()).then_some(()))
    })
    .await?;
    app.screenshot("installed").await?;
    app.quit().await
}
