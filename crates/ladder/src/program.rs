//! Built programs travel through the store, so a worker on any machine runs any bot version
//! without sharing a folder with the server or the builder.
//!
//! A build's program folder is [`pack`]ed into a gzipped tar (entries sorted, owners, times and
//! modes normalised, so the same folder always gives the same bytes) and kept with its SHA-256
//! ([`kakehiki_store::LadderBuilds::ladder_finish_build`]). A queued ladder match names each
//! bot's program by reference ([`program_ref`]); the worker that claims it [`materialize`]s the
//! program in its own folder, `ROOT/LADDER/BOT/vN-DIGEST`, unpacked once per machine and checked
//! against its digest, then runs the bot there read-only as before.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use kakehiki_store::{Program, Store, StoreError};
use sha2::{Digest, Sha256};

/// The prefix of a program reference in a match's seat folders.
pub const PROGRAM_REF: &str = "ladder-program:";

/// Why a program could not be packed or made ready.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error(
        "the build left {path:?}, a symbolic link: a program folder holds files and folders only"
    )]
    Link { path: String },
    #[error("the build left {path:?}, which is neither a file nor a folder")]
    Special { path: String },
    #[error("the build left {path:?} with its set-user-ID, set-group-ID or sticky bit: a program's files are plain")]
    Mode { path: String },
    #[error("the program folder is over {limit} bytes (reached at {path:?}): limits.program_mib of the ladder file")]
    TooLarge { path: String, limit: u64 },
    #[error("the program folder has over {limit} files and folders (reached at {path:?}): limits.program_entries of the ladder file")]
    TooManyEntries { path: String, limit: u64 },
    #[error("no program is stored for {bot} v{version} of ladder {ladder}")]
    Missing {
        ladder: String,
        bot: String,
        version: u64,
    },
    #[error("the stored program's digest is {found}, not {expected}")]
    Digest { expected: String, found: String },
    #[error("the stored program cannot be unpacked: {0}")]
    Corrupt(String),
    #[error("not a program reference: {0:?}")]
    BadRef(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// The seat folder of a ladder match that names a version's program.
pub fn program_ref(ladder: &str, bot: &str, version: u64) -> String {
    format!("{PROGRAM_REF}{ladder}/{bot}/v{version}")
}

/// `(ladder, bot, version)` of a [`program_ref`]; `None` for a plain folder.
pub fn parse_program_ref(s: &str) -> Option<Result<(String, String, u64), ProgramError>> {
    let rest = s.strip_prefix(PROGRAM_REF)?;
    let bad = || ProgramError::BadRef(s.to_string());
    let mut parts = rest.split('/');
    let parsed = (|| {
        let ladder = parts.next().filter(|p| plain(p))?;
        let bot = parts.next().filter(|p| plain(p))?;
        let version = parts.next()?.strip_prefix('v')?.parse().ok()?;
        parts
            .next()
            .is_none()
            .then(|| (ladder.to_string(), bot.to_string(), version))
    })();
    Some(parsed.ok_or_else(bad))
}

fn plain(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('\0')
}

fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// Pack the program folder `dir`, with no limit but the disk's ([`pack_within`]).
pub fn pack(dir: &Path) -> Result<Program, ProgramError> {
    pack_within(dir, u64::MAX, u64::MAX)
}

/// Pack the program folder `dir` if its files hold at most `max_bytes` and it has at most
/// `max_entries` files and folders (each checked as it is met, before anything is kept).
pub fn pack_within(dir: &Path, max_bytes: u64, max_entries: u64) -> Result<Program, ProgramError> {
    let (mut bytes, mut count) = (0u64, 0u64);
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let mut entries: Vec<_> = fs::read_dir(dir.join(&rel))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        // Folders are walked after this one's files, in name order.
        let mut folders = Vec::new();
        for name in entries {
            let rel = rel.join(&name);
            let path = dir.join(&rel);
            let meta = fs::symlink_metadata(&path)?;
            let shown = rel.display().to_string();
            count += 1;
            if count > max_entries {
                return Err(ProgramError::TooManyEntries {
                    path: shown,
                    limit: max_entries,
                });
            }
            if meta.permissions().mode() & 0o7000 != 0 && !meta.file_type().is_symlink() {
                return Err(ProgramError::Mode { path: shown });
            }
            let mut header = tar::Header::new_gnu();
            header.set_mtime(0);
            header.set_uid(0);
            header.set_gid(0);
            if meta.file_type().is_symlink() {
                return Err(ProgramError::Link { path: shown });
            } else if meta.is_dir() {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                tar.append_data(&mut header, &rel, io::empty())?;
                folders.push(rel);
            } else if meta.is_file() {
                bytes = bytes.saturating_add(meta.len());
                if bytes > max_bytes {
                    return Err(ProgramError::TooLarge {
                        path: shown,
                        limit: max_bytes,
                    });
                }
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(if meta.permissions().mode() & 0o111 != 0 {
                    0o755
                } else {
                    0o644
                });
                header.set_size(meta.len());
                tar.append_data(&mut header, &rel, fs::File::open(&path)?)?;
            } else {
                return Err(ProgramError::Special { path: shown });
            }
        }
        stack.extend(folders.into_iter().rev());
    }
    let archive = tar.into_inner()?.finish()?;
    Ok(Program {
        sha256: hex(&Sha256::digest(&archive)),
        archive,
    })
}

/// Unpack `program` into the new folder `dest` (made whole or not at all: unpacked beside it,
/// then renamed). Files get `0644` or `0755`, folders `0755`; only relative paths of files and
/// folders are accepted.
pub fn unpack(program: &Program, dest: &Path) -> Result<(), ProgramError> {
    let found = hex(&Sha256::digest(&program.archive));
    if found != program.sha256 {
        return Err(ProgramError::Digest {
            expected: program.sha256.clone(),
            found,
        });
    }
    let parent = dest.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let tmp = tempfile::Builder::new()
        .prefix(".unpacking-")
        .tempdir_in(parent)?;
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755))?;
    let corrupt = |e: io::Error| ProgramError::Corrupt(e.to_string());
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(program.archive.as_slice()));
    for entry in tar.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        let rel = entry.path().map_err(corrupt)?.into_owned();
        if rel.as_os_str().is_empty()
            || !rel.components().all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(ProgramError::Corrupt(format!(
                "entry {rel:?} is not a plain path"
            )));
        }
        let to = tmp.path().join(&rel);
        match entry.header().entry_type() {
            tar::EntryType::Directory => {
                fs::create_dir_all(&to)?;
                fs::set_permissions(&to, fs::Permissions::from_mode(0o755))?;
            }
            tar::EntryType::Regular => {
                let mode = if entry.header().mode().map_err(corrupt)? & 0o111 != 0 {
                    0o755
                } else {
                    0o644
                };
                let mut out = fs::File::create(&to)?;
                let mut buf = Vec::new();
                entry.read_to_end(&mut buf).map_err(corrupt)?;
                out.write_all(&buf)?;
                out.set_permissions(fs::Permissions::from_mode(mode))?;
            }
            other => {
                return Err(ProgramError::Corrupt(format!(
                    "entry {rel:?} is of type {other:?}"
                )))
            }
        }
    }
    let tmp = tmp.keep();
    if let Err(e) = fs::rename(&tmp, dest) {
        let _ = fs::remove_dir_all(&tmp);
        // Another worker's thread made it first: theirs is the same program.
        if !dest.is_dir() {
            return Err(e.into());
        }
    }
    Ok(())
}

/// The folder under `root` holding the program of `bot` v`version` of `ladder`, unpacked from
/// the store the first time this machine needs it.
pub fn materialize(
    store: &mut dyn Store,
    root: &Path,
    ladder: &str,
    bot: &str,
    version: u64,
) -> Result<PathBuf, ProgramError> {
    let missing = || ProgramError::Missing {
        ladder: ladder.to_string(),
        bot: bot.to_string(),
        version,
    };
    let sha = store
        .ladder_program_sha256(ladder, bot, version)?
        .ok_or_else(missing)?;
    let short = sha.get(..16).unwrap_or(&sha);
    let dest = root
        .join(ladder)
        .join(bot)
        .join(format!("v{version}-{short}"));
    if dest.is_dir() {
        // Used now: [`prune_unused`] keeps it.
        touch(&dest);
        return Ok(dest);
    }
    let program = store
        .ladder_program(ladder, bot, version)?
        .ok_or_else(missing)?;
    unpack(&program, &dest)?;
    Ok(dest)
}

/// Mark a program folder as used now (its modification time).
fn touch(dir: &Path) {
    if let Ok(f) = fs::File::open(dir) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// How long a worker keeps an unpacked program no match has used.
pub const KEEP_UNUSED: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Remove the program folders under `root` (`LADDER/BOT/vN-DIGEST`, as [`materialize`] makes
/// them) that no match has used for `unused_for`; returns how many went. A folder whose time
/// cannot be read is kept.
pub fn prune_unused(root: &Path, unused_for: std::time::Duration) -> io::Result<u64> {
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    let dirs = |p: &Path| -> io::Result<Vec<PathBuf>> {
        match fs::read_dir(p) {
            Ok(rd) => Ok(rd
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    };
    for ladder in dirs(root)? {
        for bot in dirs(&ladder)? {
            for program in dirs(&bot)? {
                let name = program.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if !name.starts_with('v') || !name.contains('-') {
                    continue;
                }
                let old = fs::metadata(&program)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|age| age > unused_for);
                if old {
                    fs::remove_dir_all(&program)?;
                    removed += 1;
                }
            }
        }
    }
    Ok(removed)
}

/// Replace every [`program_ref`] among a match's seat folders by the folder [`materialize`]
/// makes under `root`.
pub fn materialize_refs(
    store: &mut dyn Store,
    root: &Path,
    seat_dirs: &mut [Option<String>],
) -> Result<(), ProgramError> {
    for dir in seat_dirs.iter_mut().flatten() {
        if let Some(parsed) = parse_program_ref(dir) {
            let (ladder, bot, version) = parsed?;
            let path = materialize(store, root, &ladder, &bot, version)?;
            *dir = path.to_string_lossy().into_owned();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("bot"), b"#!/bin/sh\necho hi\n").unwrap();
        fs::set_permissions(d.path().join("bot"), fs::Permissions::from_mode(0o700)).unwrap();
        fs::create_dir_all(d.path().join("lib/sub")).unwrap();
        fs::write(d.path().join("lib/a.txt"), b"a").unwrap();
        fs::write(d.path().join("lib/sub/b.txt"), b"bb").unwrap();
        d
    }

    #[test]
    fn a_folder_packs_to_the_same_bytes_and_unpacks_whole() {
        let d = folder();
        let p = pack(d.path()).unwrap();
        assert_eq!(pack(d.path()).unwrap(), p);
        let out = tempfile::tempdir().unwrap();
        let dest = out.path().join("x/v1");
        unpack(&p, &dest).unwrap();
        assert_eq!(fs::read(dest.join("lib/sub/b.txt")).unwrap(), b"bb");
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dest.join("bot")), 0o755);
        assert_eq!(mode(&dest.join("lib/a.txt")), 0o644);
        assert_eq!(mode(&dest.join("lib")), 0o755);
        // Nothing is left beside it.
        assert_eq!(fs::read_dir(out.path().join("x")).unwrap().count(), 1);
    }

    #[test]
    fn links_are_refused_and_a_wrong_digest_unpacks_nothing() {
        let d = folder();
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("lib/pw")).unwrap();
        match pack(d.path()) {
            Err(ProgramError::Link { path }) => assert_eq!(path, "lib/pw"),
            other => panic!("{other:?}"),
        }
        fs::remove_file(d.path().join("lib/pw")).unwrap();
        let mut p = pack(d.path()).unwrap();
        p.archive.push(0);
        let out = tempfile::tempdir().unwrap();
        assert!(matches!(
            unpack(&p, &out.path().join("v1")),
            Err(ProgramError::Digest { .. })
        ));
        assert_eq!(fs::read_dir(out.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_folder_over_its_limits_or_with_special_bits_is_refused_naming_the_path() {
        let d = folder();
        let total: u64 = ["bot", "lib/a.txt", "lib/sub/b.txt"]
            .iter()
            .map(|f| fs::metadata(d.path().join(f)).unwrap().len())
            .sum();
        assert!(pack_within(d.path(), total, 100).is_ok());
        match pack_within(d.path(), total - 1, 100) {
            Err(ProgramError::TooLarge { limit, .. }) => assert_eq!(limit, total - 1),
            other => panic!("{other:?}"),
        }
        match pack_within(d.path(), u64::MAX, 2) {
            Err(ProgramError::TooManyEntries { limit: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
        fs::set_permissions(
            d.path().join("lib/a.txt"),
            fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
        match pack(d.path()) {
            Err(ProgramError::Mode { path }) => assert_eq!(path, "lib/a.txt"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn programs_no_match_used_for_a_while_are_pruned() {
        let root = tempfile::tempdir().unwrap();
        let old = root.path().join("g/bob/v1-0123456789abcdef");
        let new = root.path().join("g/bob/v2-fedcba9876543210");
        for d in [&old, &new] {
            fs::create_dir_all(d).unwrap();
            fs::write(d.join("bot.py"), b"x").unwrap();
        }
        let week_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(8 * 86400);
        fs::File::open(&old)
            .unwrap()
            .set_modified(week_ago)
            .unwrap();
        assert_eq!(prune_unused(root.path(), KEEP_UNUSED).unwrap(), 1);
        assert!(!old.exists() && new.is_dir());
        // Used again, a folder is kept: its time is now.
        fs::File::open(&new)
            .unwrap()
            .set_modified(week_ago)
            .unwrap();
        touch(&new);
        assert_eq!(prune_unused(root.path(), KEEP_UNUSED).unwrap(), 0);
        assert_eq!(
            prune_unused(&root.path().join("missing"), KEEP_UNUSED).unwrap(),
            0
        );
    }

    #[test]
    fn an_archive_with_a_parent_path_is_refused() {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        let mut h = tar::Header::new_gnu();
        h.set_size(1);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        // `append_data` refuses `..`; write the name into the header directly.
        h.as_gnu_mut().unwrap().name[..5].copy_from_slice(b"../x\0");
        h.set_cksum();
        tar.append(&h, &b"x"[..]).unwrap();
        let archive = tar.into_inner().unwrap().finish().unwrap();
        let p = Program {
            sha256: hex(&Sha256::digest(&archive)),
            archive,
        };
        let out = tempfile::tempdir().unwrap();
        assert!(matches!(
            unpack(&p, &out.path().join("d/v1")),
            Err(ProgramError::Corrupt(_))
        ));
        assert!(!out.path().join("x").exists());
        assert!(!out.path().join("d/v1").exists());
    }

    #[test]
    fn references_parse_back() {
        let r = program_ref("g", "alice", 3);
        assert_eq!(
            parse_program_ref(&r).unwrap().unwrap(),
            ("g".into(), "alice".into(), 3)
        );
        assert!(parse_program_ref("/data/g/alice/v3").is_none());
        for bad in [
            "ladder-program:g/alice",
            "ladder-program:g/../v1",
            "ladder-program:g/a/v1/x",
        ] {
            assert!(parse_program_ref(bad).unwrap().is_err(), "{bad}");
        }
    }
}
