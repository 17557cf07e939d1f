//! The files a match leaves beside its replay (the logs the original contest servers wrote):
//! written privately (see `kakehiki_core::private_files`), their folders made first.

use std::path::{Path, PathBuf};

use kakehiki_core::private_files;

use crate::driver::RefereeError;

pub use kakehiki_core::{unix_ms, unix_now};

/// Write each `(path, text)`, making its folder; the paths written, in order.
pub fn write_files(
    files: impl IntoIterator<Item = (PathBuf, String)>,
) -> Result<Vec<PathBuf>, RefereeError> {
    let mut written = Vec::new();
    for (path, text) in files {
        private_files::create_parent(&path)?;
        private_files::write(&path, text)?;
        written.push(path);
    }
    Ok(written)
}

/// Replace the text of `path` (empty if it does not exist yet) with `update(text)`; one update at
/// a time in this process (for an index file that games played concurrently all add to).
pub fn update_file(path: &Path, update: impl FnOnce(&str) -> String) -> Result<(), RefereeError> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let existing = std::fs::read_to_string(path).unwrap_or_default();
    private_files::write(path, update(&existing))?;
    Ok(())
}

/// Write `text` privately to the first of `names` in `dir` (made first) that does not exist
/// yet, never replacing a file; best effort: the path written, or `None` when no name was free
/// or writing failed.
pub fn write_first_free(
    dir: &Path,
    names: impl IntoIterator<Item = String>,
    text: &str,
) -> Option<PathBuf> {
    private_files::create_dir_all(dir).ok()?;
    for name in names {
        let path = dir.join(name);
        match private_files::create_new(&path) {
            Ok(mut f) => {
                use std::io::Write;
                let _ = f.write_all(text.as_bytes());
                return Some(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}
