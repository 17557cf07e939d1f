//! A stored contest's replays written out as files (`kakehiki contest replays`, the demo).

use std::path::{Path, PathBuf};

use kakehiki_store::{Store, StoreError};

use crate::runner::{stored_definition, RunError};

/// Why the replays could not all be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot create {}", .0.display())]
    Folder(PathBuf, #[source] std::io::Error),
    #[error("the replay of match {0} disappeared while exporting")]
    Gone(u64),
    #[error("cannot write {}", .0.display())]
    Write(PathBuf, #[source] std::io::Error),
}

/// Write every stored replay of contest `name` to `<out>/<contest>/<index>.jsonl` (the name
/// made a folder name: characters other than letters, digits, `-`, `_` and `.` become `_`),
/// privately; the paths written, by match index.
pub fn export_replays(
    store: &mut dyn Store,
    name: &str,
    out: &Path,
) -> Result<Vec<PathBuf>, ExportError> {
    let def = stored_definition(store, name)?;
    let dir = out.join(folder_name(&def.name));
    kakehiki_core::private_files::create_dir_all(&dir)
        .map_err(|e| ExportError::Folder(dir.clone(), e))?;
    let mut paths = Vec::new();
    for index in store.stored_indices(&def.name)? {
        let Some(text) = store.replay(&def.name, index)? else {
            return Err(ExportError::Gone(index));
        };
        let path = dir.join(format!("{index:06}.jsonl"));
        kakehiki_core::private_files::write(&path, text)
            .map_err(|e| ExportError::Write(path.clone(), e))?;
        paths.push(path);
    }
    Ok(paths)
}

/// A contest name as a folder name.
fn folder_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contest_name_becomes_one_folder_name() {
        assert_eq!(folder_name("demo-nac_2.0"), "demo-nac_2.0");
        assert_eq!(folder_name("../a b/c"), ".._a_b_c");
    }
}
