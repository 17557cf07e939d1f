//! Upload intake: a contestant's upload (one source file, or a zip or tar.gz archive) becomes a
//! folder of sources for the build.
//!
//! An archive is refused whole when any entry is an absolute path, has a `..` component, is a
//! symbolic or hard link, a device or a FIFO, when it has more entries than
//! [`Limits::archive_entries`], or unpacks to more bytes than [`Limits::unpacked_bytes`]. The
//! bytes are counted as they are decompressed, never taken from the archive's headers (a zip
//! bomb's headers lie). Everything is unpacked into a fresh temporary folder that is removed on
//! any refusal, so a refused upload writes nothing that stays. Files are written `0644` (`0755`
//! when the archive marks them executable) and folders `0755` whatever the archive says, so the
//! build's own user can read them.

use std::cell::Cell;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use crate::config::Limits;

/// Why an upload was refused (or could not be taken in).
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error("the upload is {bytes} bytes, over the ladder's limit of {limit}")]
    UploadTooLarge { bytes: u64, limit: u64 },
    #[error("the upload is empty")]
    Empty,
    #[error("archive entry {entry:?} is an absolute path")]
    AbsolutePath { entry: String },
    #[error("archive entry {entry:?} has a `..` component")]
    ParentDir { entry: String },
    #[error("archive entry {entry:?} is a symbolic link (links are refused)")]
    Symlink { entry: String },
    #[error("archive entry {entry:?} is a hard link (links are refused)")]
    Hardlink { entry: String },
    #[error("archive entry {entry:?} is a {kind} (only files and folders are accepted)")]
    Special { entry: String, kind: &'static str },
    #[error("the archive has more than {limit} entries (entry {entry:?} is one too many)")]
    TooManyEntries { entry: String, limit: u64 },
    #[error("the archive unpacks to more than {limit} bytes (reached at entry {entry:?})")]
    TooManyBytes { entry: String, limit: u64 },
    #[error(
        "archive entry {entry:?} is there twice (names that differ only in case count as the same)"
    )]
    Duplicate { entry: String },
    #[error("archive entry {entry:?} has a name over {limit} bytes (a part of it over 255, or the whole over {limit})")]
    LongName { entry: String, limit: usize },
    #[error("archive entry {entry:?} is more than {limit} folders deep")]
    TooDeep { entry: String, limit: usize },
    #[error("archive entry {entry:?} has an unusable name")]
    BadName { entry: String },
    #[error("the archive has no {main:?} at its top (the language's entry file)")]
    MissingMain { main: String },
    #[error("the {format} archive cannot be read: {message}")]
    Corrupt {
        format: &'static str,
        message: String,
    },
    /// The server could not write the sources (not the upload's fault).
    #[error("cannot store the upload: {0}")]
    Io(#[from] io::Error),
}

impl IntakeError {
    /// Whether the server, not the upload, is at fault.
    pub fn is_host_fault(&self) -> bool {
        matches!(self, IntakeError::Io(_))
    }
}

/// What an upload is, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadKind {
    /// One source file.
    Source,
    Zip,
    TarGz,
}

impl UploadKind {
    /// Zip (`PK\x03\x04`, or `PK\x05\x06` for an empty one) and gzip (`1f 8b`) by their magic
    /// numbers; anything else is a source file.
    pub fn detect(bytes: &[u8]) -> UploadKind {
        if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            UploadKind::Zip
        } else if bytes.starts_with(&[0x1f, 0x8b]) {
            UploadKind::TarGz
        } else {
            UploadKind::Source
        }
    }
}

/// The sources of one upload, in a temporary folder removed when this is dropped.
#[derive(Debug)]
pub struct Sources {
    dir: tempfile::TempDir,
    root: PathBuf,
    /// Files written.
    pub files: u64,
    /// Bytes written.
    pub bytes: u64,
}

impl Sources {
    /// The folder holding the sources: the archive's top, or its single top folder when it has
    /// nothing else (`bot/` holding `bot/bot.py`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The temporary folder itself.
    pub fn temp_dir(&self) -> &Path {
        self.dir.path()
    }
}

/// Take in an upload: a source file is stored as `main` (the language's entry file); an archive
/// is unpacked and must hold `main` at its top. `tmp_parent` is where the temporary folder is
/// made.
pub fn unpack(
    upload: &[u8],
    main: &str,
    limits: &Limits,
    tmp_parent: &Path,
) -> Result<Sources, IntakeError> {
    let len = upload.len() as u64;
    if len > limits.upload_bytes {
        return Err(IntakeError::UploadTooLarge {
            bytes: len,
            limit: limits.upload_bytes,
        });
    }
    if upload.is_empty() {
        return Err(IntakeError::Empty);
    }
    let dir = tempfile::Builder::new()
        .prefix("kakehiki-upload-")
        .tempdir_in(tmp_parent)?;
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755))?;
    let mut w = Writer {
        root: dir.path().to_path_buf(),
        limits,
        entries: 0,
        bytes: 0,
        files: 0,
        names: std::collections::HashSet::new(),
    };
    match UploadKind::detect(upload) {
        UploadKind::Source => {
            if len > limits.unpacked_bytes {
                return Err(IntakeError::TooManyBytes {
                    entry: main.to_string(),
                    limit: limits.unpacked_bytes,
                });
            }
            w.file(main, Path::new(main), &mut &upload[..], false)?;
        }
        UploadKind::Zip => unpack_zip(upload, &mut w)?,
        UploadKind::TarGz => unpack_tar_gz(upload, &mut w)?,
    }
    let mut root = dir.path().to_path_buf();
    if !root.join(main).is_file() {
        let top: Vec<fs::DirEntry> = fs::read_dir(&root)?.collect::<Result<_, _>>()?;
        match top.as_slice() {
            [only] if only.file_type()?.is_dir() && only.path().join(main).is_file() => {
                root = only.path();
            }
            _ => {
                return Err(IntakeError::MissingMain {
                    main: main.to_string(),
                })
            }
        }
    }
    Ok(Sources {
        root,
        files: w.files,
        bytes: w.bytes,
        dir,
    })
}

/// The longest entry name, in bytes.
pub const MAX_NAME_BYTES: usize = 1024;
/// The most folders an entry may be inside.
pub const MAX_DEPTH: usize = 32;

/// The checked relative path of an archive entry: no root, no `..`, no NUL, `.` dropped, not
/// over [`MAX_NAME_BYTES`] (nor a part over 255) nor [`MAX_DEPTH`] folders deep.
fn entry_path(entry: &str, raw: &[u8]) -> Result<PathBuf, IntakeError> {
    use std::os::unix::ffi::OsStrExt;
    let name = || entry.to_string();
    if raw.contains(&0) {
        return Err(IntakeError::BadName { entry: name() });
    }
    if raw.len() > MAX_NAME_BYTES || raw.split(|b| *b == b'/').any(|part| part.len() > 255) {
        return Err(IntakeError::LongName {
            entry: name(),
            limit: MAX_NAME_BYTES,
        });
    }
    if raw.split(|b| *b == b'/').filter(|p| !p.is_empty()).count() > MAX_DEPTH + 1 {
        return Err(IntakeError::TooDeep {
            entry: name(),
            limit: MAX_DEPTH,
        });
    }
    let path = Path::new(std::ffi::OsStr::from_bytes(raw));
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => {
                return Err(IntakeError::AbsolutePath { entry: name() })
            }
            Component::ParentDir => return Err(IntakeError::ParentDir { entry: name() }),
            Component::CurDir => {}
            Component::Normal(p) => out.push(p),
        }
    }
    Ok(out)
}

/// Writes entries under `root`, counting entries and bytes.
struct Writer<'a> {
    root: PathBuf,
    limits: &'a Limits,
    entries: u64,
    bytes: u64,
    files: u64,
    /// The files' paths in lower case: two that differ only in case are one on some systems
    /// and in an organiser's unzip, so the second is refused as a duplicate.
    names: std::collections::HashSet<String>,
}

impl Writer<'_> {
    fn count_entry(&mut self, entry: &str) -> Result<(), IntakeError> {
        self.entries += 1;
        if self.entries > self.limits.archive_entries {
            return Err(IntakeError::TooManyEntries {
                entry: entry.to_string(),
                limit: self.limits.archive_entries,
            });
        }
        Ok(())
    }

    fn dir(&mut self, entry: &str, rel: &Path) -> Result<(), IntakeError> {
        if rel.as_os_str().is_empty() {
            return Ok(());
        }
        let path = self.root.join(rel);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(IntakeError::Duplicate {
                    entry: entry.to_string(),
                })
            }
            Err(_) => {}
        }
        self.parents(entry, rel)?;
        fs::create_dir(&path)?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
        Ok(())
    }

    /// Create the folders above `rel` (an archive need not list them).
    fn parents(&mut self, entry: &str, rel: &Path) -> Result<(), IntakeError> {
        let mut p = self.root.clone();
        let parts: Vec<_> = rel.components().collect();
        for c in &parts[..parts.len().saturating_sub(1)] {
            p.push(c);
            match fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(IntakeError::Duplicate {
                        entry: entry.to_string(),
                    })
                }
                Err(_) => {
                    fs::create_dir(&p)?;
                    fs::set_permissions(&p, fs::Permissions::from_mode(0o755))?;
                }
            }
        }
        Ok(())
    }

    fn file(
        &mut self,
        entry: &str,
        rel: &Path,
        data: &mut dyn Read,
        executable: bool,
    ) -> Result<(), IntakeError> {
        if rel.as_os_str().is_empty() {
            return Err(IntakeError::BadName {
                entry: entry.to_string(),
            });
        }
        if !self.names.insert(rel.to_string_lossy().to_lowercase()) {
            return Err(IntakeError::Duplicate {
                entry: entry.to_string(),
            });
        }
        self.parents(entry, rel)?;
        let path = self.root.join(rel);
        let mut out = match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc_o_nofollow())
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(IntakeError::Duplicate {
                    entry: entry.to_string(),
                })
            }
            Err(e) => return Err(e.into()),
        };
        let left = self.limits.unpacked_bytes - self.bytes;
        // One byte more than is left tells a file that goes over from one that fills it exactly.
        let n = io::copy(&mut data.take(left + 1), &mut out).map_err(|e| {
            if is_over_limit(&e) {
                IntakeError::TooManyBytes {
                    entry: entry.to_string(),
                    limit: self.limits.unpacked_bytes,
                }
            } else {
                IntakeError::Corrupt {
                    format: "archive",
                    message: format!("entry {entry:?}: {e}"),
                }
            }
        })?;
        if n > left {
            return Err(IntakeError::TooManyBytes {
                entry: entry.to_string(),
                limit: self.limits.unpacked_bytes,
            });
        }
        out.flush()?;
        self.bytes += n;
        self.files += 1;
        let mode = if executable { 0o755 } else { 0o644 };
        fs::set_permissions(&path, fs::Permissions::from_mode(mode))?;
        Ok(())
    }
}

/// Nothing here is ever a link (none is created), but never follow one.
fn libc_o_nofollow() -> i32 {
    libc::O_NOFOLLOW
}

const S_IFMT: u32 = 0o170000;

/// The kind of a special file from its Unix mode, if it is one.
fn special_kind(mode: u32) -> Option<&'static str> {
    match mode & S_IFMT {
        0o020000 => Some("character device"),
        0o060000 => Some("block device"),
        0o010000 => Some("FIFO"),
        0o140000 => Some("socket"),
        _ => None,
    }
}

fn unpack_zip(upload: &[u8], w: &mut Writer<'_>) -> Result<(), IntakeError> {
    let corrupt = |e: zip::result::ZipError| IntakeError::Corrupt {
        format: "zip",
        message: e.to_string(),
    };
    let mut archive = zip::ZipArchive::new(io::Cursor::new(upload)).map_err(corrupt)?;
    // The zip crate keeps one entry per name (the last): a name the central directory lists
    // twice is found in the directory itself.
    let listed = central_names(upload, archive.central_directory_start());
    if listed.len() != archive.len() {
        let mut seen = std::collections::HashSet::new();
        for raw in &listed {
            if !seen.insert(*raw) {
                return Err(IntakeError::Duplicate {
                    entry: String::from_utf8_lossy(raw).into_owned(),
                });
            }
        }
        return Err(IntakeError::Corrupt {
            format: "zip",
            message: format!(
                "its central directory lists {} entries, its index {}",
                listed.len(),
                archive.len()
            ),
        });
    }
    // Every name and kind is checked before anything is unpacked.
    let mut plan = Vec::with_capacity(archive.len().min(1 << 16));
    for i in 0..archive.len() {
        let f = archive.by_index_raw(i).map_err(corrupt)?;
        let entry = String::from_utf8_lossy(f.name_raw()).into_owned();
        w.count_entry(&entry)?;
        let rel = entry_path(&entry, f.name_raw())?;
        let mode = f.unix_mode().unwrap_or(0);
        if f.is_symlink() {
            return Err(IntakeError::Symlink { entry });
        }
        if let Some(kind) = special_kind(mode) {
            return Err(IntakeError::Special { entry, kind });
        }
        plan.push((entry, rel, f.is_dir(), mode & 0o111 != 0));
    }
    for (i, (entry, rel, is_dir, exec)) in plan.into_iter().enumerate() {
        if is_dir {
            w.dir(&entry, &rel)?;
            continue;
        }
        let mut f = archive.by_index(i).map_err(corrupt)?;
        w.file(&entry, &rel, &mut f, exec)?;
    }
    Ok(())
}

/// The raw names in a zip's central directory from `start`, in order, duplicates included.
fn central_names(upload: &[u8], start: u64) -> Vec<&[u8]> {
    const HEADER: usize = 46;
    let u16_at = |h: &[u8], i: usize| usize::from(u16::from_le_bytes([h[i], h[i + 1]]));
    let mut names = Vec::new();
    let mut at = usize::try_from(start).unwrap_or(usize::MAX);
    while let Some(h) = at.checked_add(HEADER).and_then(|end| upload.get(at..end)) {
        if h[..4] != *b"PK\x01\x02" {
            break;
        }
        let (name, extra, comment) = (u16_at(h, 28), u16_at(h, 30), u16_at(h, 32));
        let Some(raw) = upload.get(at + HEADER..at + HEADER + name) else {
            break;
        };
        names.push(raw);
        at += HEADER + name + extra + comment;
    }
    names
}

/// The error a [`Capped`] reader returns past its cap.
#[derive(Debug)]
struct OverLimit;

impl std::fmt::Display for OverLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("decompressed stream over its limit")
    }
}

impl std::error::Error for OverLimit {}

fn is_over_limit(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<OverLimit>())
}

/// A reader that fails once more than `cap` bytes were read through it: the whole decompressed
/// tar stream (headers, long names and padding included) is bounded, not only the files' data.
struct Capped<R> {
    inner: R,
    read: Rc<Cell<u64>>,
    cap: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        if self.read.get() > self.cap {
            return Err(io::Error::other(OverLimit));
        }
        Ok(n)
    }
}

fn unpack_tar_gz(upload: &[u8], w: &mut Writer<'_>) -> Result<(), IntakeError> {
    let read = Rc::new(Cell::new(0));
    // Headers and padding: at most 2 KiB per entry (a header and a long name's), and the end.
    let cap = w
        .limits
        .unpacked_bytes
        .saturating_add(w.limits.archive_entries.saturating_mul(2048))
        .saturating_add(1 << 20);
    let stream = Capped {
        inner: flate2::read::GzDecoder::new(upload),
        read: read.clone(),
        cap,
    };
    let mut archive = tar::Archive::new(stream);
    let mut last_entry = String::new();
    let limit = w.limits.unpacked_bytes;
    let corrupt = |e: io::Error, last: &str| {
        if is_over_limit(&e) {
            IntakeError::TooManyBytes {
                entry: last.to_string(),
                limit,
            }
        } else {
            IntakeError::Corrupt {
                format: "tar.gz",
                message: e.to_string(),
            }
        }
    };
    let entries = archive.entries().map_err(|e| corrupt(e, ""))?;
    for item in entries {
        let mut e = item.map_err(|e| corrupt(e, &last_entry))?;
        let raw = e.path_bytes().into_owned();
        let entry = String::from_utf8_lossy(&raw).into_owned();
        last_entry = entry.clone();
        w.count_entry(&entry)?;
        let rel = entry_path(&entry, &raw)?;
        let kind = e.header().entry_type();
        use tar::EntryType as T;
        match kind {
            T::Symlink => return Err(IntakeError::Symlink { entry }),
            T::Link => return Err(IntakeError::Hardlink { entry }),
            T::Char => {
                return Err(IntakeError::Special {
                    entry,
                    kind: "character device",
                })
            }
            T::Block => {
                return Err(IntakeError::Special {
                    entry,
                    kind: "block device",
                })
            }
            T::Fifo => {
                return Err(IntakeError::Special {
                    entry,
                    kind: "FIFO",
                })
            }
            T::Directory => w.dir(&entry, &rel)?,
            T::Regular | T::Continuous => {
                let exec = e.header().mode().map(|m| m & 0o111 != 0).unwrap_or(false);
                w.file(&entry, &rel, &mut e, exec)?;
            }
            T::XGlobalHeader => {}
            other => {
                return Err(IntakeError::Special {
                    entry,
                    kind: tar_kind_name(other),
                })
            }
        }
    }
    Ok(())
}

fn tar_kind_name(t: tar::EntryType) -> &'static str {
    match t {
        tar::EntryType::GNUSparse => "sparse file",
        _ => "tar entry of an unsupported type",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            upload_bytes: 4 << 20,
            archive_entries: 10,
            unpacked_bytes: 1 << 20,
            ..Limits::default()
        }
    }

    /// A zip of `(name, data)` files.
    fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in files {
            w.start_file(*name, opts).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    /// A tar.gz built by `f` on a raw tar builder (headers written by hand, as an attacker would).
    fn tar_gz(f: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        f(&mut b);
        let tar = b.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    /// A header of `kind` whose name is written raw (the builder's own path checks refuse `..`
    /// and absolute paths: an attacker's tool does not).
    fn header(name: &str, kind: tar::EntryType, size: u64) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        let bytes = name.as_bytes();
        h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(0o644);
        h.set_cksum();
        h
    }

    fn add(b: &mut tar::Builder<Vec<u8>>, name: &str, kind: tar::EntryType, data: &[u8]) {
        let h = header(name, kind, data.len() as u64);
        b.append(&h, data).unwrap();
    }

    fn add_link(b: &mut tar::Builder<Vec<u8>>, name: &str, kind: tar::EntryType, target: &str) {
        let mut h = header(name, kind, 0);
        h.set_link_name(target).unwrap();
        h.set_cksum();
        b.append(&h, &[][..]).unwrap();
    }

    /// Unpack under a fresh parent; on refusal, assert nothing was left there.
    fn refuse(upload: &[u8]) -> IntakeError {
        let parent = tempfile::tempdir().unwrap();
        match unpack(upload, "bot.py", &limits(), parent.path()) {
            Ok(s) => panic!("accepted: {:?}", s.root()),
            Err(e) => {
                let left: Vec<_> = fs::read_dir(parent.path()).unwrap().collect();
                assert!(left.is_empty(), "a refused upload left {left:?}");
                e
            }
        }
    }

    #[test]
    fn a_single_source_file_is_stored_as_the_entry_file() {
        let parent = tempfile::tempdir().unwrap();
        let s = unpack(b"print(1)\n", "bot.py", &limits(), parent.path()).unwrap();
        assert_eq!(fs::read(s.root().join("bot.py")).unwrap(), b"print(1)\n");
        let mode = fs::metadata(s.root().join("bot.py"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
        assert_eq!((s.files, s.bytes), (1, 9));
        let tmp = s.temp_dir().to_path_buf();
        drop(s);
        assert!(!tmp.exists(), "removed when dropped");
    }

    #[test]
    fn good_archives_are_unpacked() {
        let parent = tempfile::tempdir().unwrap();
        let z = zip_of(&[("bot.py", b"import lib\n"), ("pkg/lib.py", b"X = 1\n")]);
        let s = unpack(&z, "bot.py", &limits(), parent.path()).unwrap();
        assert_eq!(fs::read(s.root().join("pkg/lib.py")).unwrap(), b"X = 1\n");
        assert_eq!(fs::read(s.root().join("bot.py")).unwrap(), b"import lib\n");
        let t = tar_gz(|b| {
            add(b, "mybot/", tar::EntryType::Directory, b"");
            add(b, "mybot/bot.py", tar::EntryType::Regular, b"print(2)\n");
            add(b, "mybot/./data/w.txt", tar::EntryType::Regular, b"w");
        });
        let s = unpack(&t, "bot.py", &limits(), parent.path()).unwrap();
        assert!(s.root().ends_with("mybot"), "one top folder is the root");
        assert_eq!(fs::read(s.root().join("bot.py")).unwrap(), b"print(2)\n");
        assert_eq!(fs::read(s.root().join("data/w.txt")).unwrap(), b"w");
        assert_eq!(s.files, 2);
        let mode = fs::metadata(s.root().join("data"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    #[test]
    fn an_archive_of_exactly_the_limit_is_accepted() {
        let parent = tempfile::tempdir().unwrap();
        let big = vec![b'#'; 1 << 20];
        let z = zip_of(&[("bot.py", &big)]);
        let s = unpack(&z, "bot.py", &limits(), parent.path()).unwrap();
        assert_eq!(s.bytes, 1 << 20);
    }

    #[test]
    fn a_zip_bomb_is_refused() {
        // 8 MiB of zeros deflate to a few KiB; the limit is 1 MiB.
        let zeros = vec![0u8; 8 << 20];
        let z = zip_of(&[("bot.py", b"x"), ("big.bin", &zeros)]);
        assert!(z.len() < 64 << 10, "the bomb is small: {}", z.len());
        match refuse(&z) {
            IntakeError::TooManyBytes { entry, limit } => {
                assert_eq!(entry, "big.bin");
                assert_eq!(limit, 1 << 20);
            }
            e => panic!("{e}"),
        }
        // The same spread over several files, each under the limit.
        let half = vec![0u8; 600 << 10];
        let z = zip_of(&[("bot.py", b"x"), ("a", &half), ("b", &half)]);
        assert!(matches!(refuse(&z), IntakeError::TooManyBytes { entry, .. } if entry == "b"));
        let t = tar_gz(|b| {
            add(b, "bot.py", tar::EntryType::Regular, b"x");
            add(b, "big.bin", tar::EntryType::Regular, &zeros);
        });
        assert!(
            matches!(refuse(&t), IntakeError::TooManyBytes { entry, .. } if entry == "big.bin")
        );
    }

    #[test]
    fn a_zip_whose_header_lies_about_its_size_is_refused() {
        // A stored entry whose central directory claims 10 bytes while 2 MiB follow: the bytes
        // read, not the header, decide.
        let data = vec![b'a'; 2 << 20];
        let mut z = zip_of(&[("bot.py", &data)]);
        let declared = (data.len() as u32).to_le_bytes();
        // Patch every "uncompressed size" field equal to the real size (local header at 22,
        // central directory at 24) to 10.
        let mut i = 0;
        while i + 4 <= z.len() {
            if z[i..i + 4] == declared {
                z[i..i + 4].copy_from_slice(&10u32.to_le_bytes());
            }
            i += 1;
        }
        let parent = tempfile::tempdir().unwrap();
        let r = unpack(&z, "bot.py", &limits(), parent.path());
        match r {
            Err(IntakeError::TooManyBytes { .. }) | Err(IntakeError::Corrupt { .. }) => {}
            Ok(s) => assert!(
                s.bytes <= 1 << 20,
                "more unpacked than allowed: {}",
                s.bytes
            ),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn an_absolute_path_is_refused() {
        let z = zip_of(&[("bot.py", b"x"), ("/etc/evil", b"x")]);
        assert!(matches!(refuse(&z), IntakeError::AbsolutePath { entry } if entry == "/etc/evil"));
        let t = tar_gz(|b| {
            add(b, "bot.py", tar::EntryType::Regular, b"x");
            add(b, "/tmp/evil", tar::EntryType::Regular, b"x");
        });
        let e = refuse(&t);
        assert!(
            matches!(&e, IntakeError::AbsolutePath { entry } if entry == "/tmp/evil"),
            "{e}"
        );
        assert!(e.to_string().contains("/tmp/evil"));
    }

    #[test]
    fn a_parent_component_is_refused() {
        let z = zip_of(&[("bot.py", b"x"), ("a/../../evil", b"x")]);
        let e = refuse(&z);
        assert!(
            matches!(&e, IntakeError::ParentDir { entry } if entry == "a/../../evil"),
            "{e}"
        );
        let t = tar_gz(|b| {
            add(b, "bot.py", tar::EntryType::Regular, b"x");
            add(b, "../evil", tar::EntryType::Regular, b"x");
        });
        assert!(matches!(refuse(&t), IntakeError::ParentDir { entry } if entry == "../evil"));
    }

    #[test]
    fn links_are_refused() {
        let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default();
        w.start_file("bot.py", opts).unwrap();
        w.write_all(b"x").unwrap();
        w.add_symlink("passwd", "/etc/passwd", opts).unwrap();
        let z = w.finish().unwrap().into_inner();
        assert!(matches!(refuse(&z), IntakeError::Symlink { entry } if entry == "passwd"));
        let t = tar_gz(|b| {
            add(b, "bot.py", tar::EntryType::Regular, b"x");
            add_link(b, "up", tar::EntryType::Symlink, "..");
        });
        assert!(matches!(refuse(&t), IntakeError::Symlink { entry } if entry == "up"));
        let t = tar_gz(|b| {
            add(b, "bot.py", tar::EntryType::Regular, b"x");
            add_link(b, "shadow", tar::EntryType::Link, "/etc/shadow");
        });
        let e = refuse(&t);
        assert!(
            matches!(&e, IntakeError::Hardlink { entry } if entry == "shadow"),
            "{e}"
        );
        assert!(e.to_string().contains("shadow"));
    }

    #[test]
    fn devices_and_fifos_are_refused() {
        for (kind, name) in [
            (tar::EntryType::Char, "character device"),
            (tar::EntryType::Block, "block device"),
            (tar::EntryType::Fifo, "FIFO"),
        ] {
            let t = tar_gz(|b| {
                add(b, "bot.py", tar::EntryType::Regular, b"x");
                add(b, "dev", kind, b"");
            });
            match refuse(&t) {
                IntakeError::Special { entry, kind } => {
                    assert_eq!(entry, "dev");
                    assert_eq!(kind, name);
                }
                e => panic!("{e}"),
            }
        }
    }

    #[test]
    fn too_many_entries_are_refused() {
        let names: Vec<String> = (0..11).map(|i| format!("f{i}")).collect();
        let mut files: Vec<(&str, &[u8])> = vec![("bot.py", b"x")];
        files.extend(names.iter().map(|n| (n.as_str(), &b"y"[..])));
        let e = refuse(&zip_of(&files));
        assert!(
            matches!(&e, IntakeError::TooManyEntries { entry, limit: 10 } if entry == "f9"),
            "{e}"
        );
        let t = tar_gz(|b| {
            add(b, "bot.py", tar::EntryType::Regular, b"x");
            for n in &names {
                add(b, n, tar::EntryType::Regular, b"y");
            }
        });
        assert!(matches!(refuse(&t), IntakeError::TooManyEntries { .. }));
    }

    #[test]
    fn other_refusals() {
        let parent = tempfile::tempdir().unwrap();
        let small = Limits {
            upload_bytes: 4,
            ..limits()
        };
        assert!(matches!(
            unpack(b"12345", "bot.py", &small, parent.path()),
            Err(IntakeError::UploadTooLarge { bytes: 5, limit: 4 })
        ));
        assert!(matches!(refuse(b""), IntakeError::Empty));
        let z = zip_of(&[("main.py", b"x")]);
        assert!(matches!(refuse(&z), IntakeError::MissingMain { main } if main == "bot.py"));
        let z = zip_of(&[("bot.py", b"x"), ("./bot.py", b"y")]);
        assert!(matches!(refuse(&z), IntakeError::Duplicate { .. }));
        let mut broken = zip_of(&[("bot.py", b"x")]);
        broken.truncate(20);
        assert!(matches!(
            refuse(&broken),
            IntakeError::Corrupt { format: "zip", .. }
        ));
        let gz = [0x1f, 0x8b, 0, 1, 2, 3];
        assert!(matches!(
            refuse(&gz),
            IntakeError::Corrupt {
                format: "tar.gz",
                ..
            }
        ));
    }

    #[test]
    fn a_name_listed_twice_is_refused_whatever_its_case() {
        // The zip crate's writer refuses a repeated name: write two of the same length, then
        // give the second the first's name in its local header and the central directory.
        let mut z = zip_of(&[("bot.py", b"print(1)"), ("bot.pz", b"print(2)")]);
        let at: Vec<usize> = z
            .windows(6)
            .enumerate()
            .filter(|(_, w)| *w == b"bot.pz")
            .map(|(i, _)| i)
            .collect();
        assert_eq!(at.len(), 2, "a local header and a central directory entry");
        for i in at {
            z[i..i + 6].copy_from_slice(b"bot.py");
        }
        assert!(
            matches!(refuse(&z), IntakeError::Duplicate { ref entry } if entry == "bot.py"),
            "{:?}",
            refuse(&z)
        );
        let z = zip_of(&[("bot.py", b"x"), ("lib/A.py", b"y"), ("lib/a.PY", b"z")]);
        assert!(matches!(refuse(&z), IntakeError::Duplicate { ref entry } if entry == "lib/a.PY"));
        let t = tar_gz(|b| {
            add(b, "bot.py", tar::EntryType::Regular, b"x");
            add(b, "Bot.py", tar::EntryType::Regular, b"y");
        });
        assert!(matches!(refuse(&t), IntakeError::Duplicate { ref entry } if entry == "Bot.py"));
    }

    #[test]
    fn names_too_long_or_too_deep_are_the_uploads_fault() {
        let long = format!("{}.py", "a".repeat(300));
        let z = zip_of(&[("bot.py", b"x"), (long.as_str(), b"y")]);
        let e = refuse(&z);
        assert!(matches!(e, IntakeError::LongName { .. }), "{e:?}");
        assert!(!e.is_host_fault());
        let deep = format!("{}x.py", "d/".repeat(MAX_DEPTH + 1));
        let z = zip_of(&[("bot.py", b"x"), (deep.as_str(), b"y")]);
        let e = refuse(&z);
        assert!(matches!(e, IntakeError::TooDeep { .. }), "{e:?}");
        // At the limits it is taken.
        let ok = format!("{}x.py", "d/".repeat(MAX_DEPTH));
        let z = zip_of(&[("bot.py", b"x"), (ok.as_str(), b"y")]);
        let parent = tempfile::tempdir().unwrap();
        assert!(unpack(&z, "bot.py", &limits(), parent.path()).is_ok());
    }
}
