//! Files the referee writes that hold what bots and other users must not read (replays with
//! every seat's stderr, viewer pages, logs, results): created `0600`, in directories created
//! `0700`. A directory that already exists (the current one, one the organiser made) keeps its
//! mode.

use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Mode of the files.
pub const FILE_MODE: u32 = 0o600;
/// Mode of the directories created for them.
pub const DIR_MODE: u32 = 0o700;

/// Create `dir` and its missing ancestors, each new one `0700`.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
}

/// Create the missing directories above `path` (`0700`).
pub fn create_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(p) => create_dir_all(p),
        None => Ok(()),
    }
}

/// Open `path` for writing, `0600` (an existing file is made `0600` too: its new content is
/// ours). `append`: add to it, else truncate.
pub fn open(path: &Path, append: bool) -> io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).mode(FILE_MODE);
    if append {
        o.append(true);
    } else {
        o.truncate(true);
    }
    let f = o.open(path)?;
    let mode = f.metadata()?.permissions().mode() & 0o7777;
    if mode != FILE_MODE {
        f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    }
    Ok(f)
}

/// Create a new file at `path` (`0600`); `AlreadyExists` when there is one.
pub fn create_new(path: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
}

/// `std::fs::write`, `0600`.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    open(path, false)?.write_all(bytes.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_0600_and_new_directories_0700_existing_ones_untouched() {
        let dir = tempfile_dir();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = dir.join("a/b/c.txt");
        create_parent(&file).unwrap();
        write(&file, "x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&dir.join("a")), 0o700);
        assert_eq!(mode(&dir.join("a/b")), 0o700);
        assert_eq!(mode(&dir), 0o755);
        // An existing file written again becomes 0600.
        let old = dir.join("old.txt");
        std::fs::write(&old, "y").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        write(&old, "z").unwrap();
        assert_eq!(mode(&old), 0o600);
        assert!(create_new(&old).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "kakehiki-private-files-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        d
    }
}
