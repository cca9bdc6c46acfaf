//! The data directory is its owner's alone: it holds every record the
//! console verified, the hosts it knows, the approver's key, the sandbox
//! host's database and the demo parties' keys. Every directory the engine
//! creates there is 0700 and every file 0600, whatever the process umask,
//! and [`restrict_tree`] brings an existing install (made before this rule)
//! to the same modes on start. One rule, here; nothing else in the engine
//! creates a file or directory in the data directory without it, and the
//! sandbox crate, which keeps its files there too, calls these same
//! functions (public for that reason).
//!
//! SQLite creates a database's `-wal` and `-shm` files itself, copying the
//! database file's mode: so the database file is made before SQLite opens
//! it ([`prepare_database`]), and its companions follow.
//!
//! Elsewhere than Unix these are plain creations: the per-user application
//! data directory is already the user's own.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// The mode of every directory in the data directory.
pub(crate) const DIR_MODE: u32 = 0o700;
/// The mode of every file in the data directory.
pub(crate) const FILE_MODE: u32 = 0o600;

/// Creates `path` and any missing parents as owner-only directories, and
/// makes `path` itself owner-only if it existed.
pub fn create_dir(path: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(DIR_MODE);
    }
    builder.create(path)?;
    set_mode(path, DIR_MODE)
}

/// Writes `bytes` to `path` (replacing what was there) as an owner-only file.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = open_owner_only(path, true)?;
    // `mode` applies only when the file is created: an older file keeps its
    // mode unless it is set here.
    set_mode(path, FILE_MODE)?;
    file.write_all(bytes)
}

/// Makes sure the SQLite database at `path` exists as an owner-only file
/// before SQLite opens it (an empty file is an empty database), so the
/// `-wal` and `-shm` files SQLite creates beside it are owner-only too.
pub fn prepare_database(path: &Path) -> io::Result<()> {
    open_owner_only(path, false)?;
    set_mode(path, FILE_MODE)
}

/// Walks `dir` and everything below it and makes each directory 0700 and
/// each file 0600. Symbolic links are neither followed nor changed: what
/// they point to is not the data directory's.
pub fn restrict_tree(dir: &Path) -> io::Result<()> {
    let kind = fs::symlink_metadata(dir)?.file_type();
    if kind.is_dir() {
        set_mode(dir, DIR_MODE)?;
        for entry in fs::read_dir(dir)? {
            // A file another engine on this directory removes meanwhile
            // (SQLite's journal, a key file being replaced) needs nothing.
            match restrict_tree(&entry?.path()) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
    } else if kind.is_file() {
        set_mode(dir, FILE_MODE)?;
    }
    Ok(())
}

fn open_owner_only(path: &Path, truncate: bool) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(truncate);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options.open(path)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if fs::metadata(path)?.permissions().mode() & 0o7777 == mode {
        return Ok(());
    }
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_rewritten_file_that_others_could_read_becomes_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        fs::write(&path, b"old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(mode(&path), FILE_MODE);
        assert_eq!(fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn new_directories_and_files_are_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        create_dir(&nested).unwrap();
        assert_eq!(mode(&dir.path().join("a")), DIR_MODE);
        assert_eq!(mode(&nested), DIR_MODE);
        let db = nested.join("x.sqlite3");
        prepare_database(&db).unwrap();
        assert_eq!(mode(&db), FILE_MODE);
        assert_eq!(fs::metadata(&db).unwrap().len(), 0);
    }

    #[test]
    fn preparing_a_database_keeps_its_contents() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.sqlite3");
        fs::write(&db, b"SQLite format 3\0").unwrap();
        fs::set_permissions(&db, fs::Permissions::from_mode(0o644)).unwrap();
        prepare_database(&db).unwrap();
        assert_eq!(mode(&db), FILE_MODE);
        assert_eq!(fs::read(&db).unwrap(), b"SQLite format 3\0");
    }

    #[test]
    fn the_walk_fixes_every_mode_and_leaves_what_a_link_points_to() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("elsewhere.txt");
        fs::write(&target, b"not ours").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        fs::write(sub.join("f"), b"").unwrap();
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(sub.join("f"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("link")).unwrap();
        restrict_tree(dir.path()).unwrap();
        assert_eq!(mode(dir.path()), DIR_MODE);
        assert_eq!(mode(&sub), DIR_MODE);
        assert_eq!(mode(&sub.join("f")), FILE_MODE);
        assert_eq!(mode(&target), 0o644);
    }
}
