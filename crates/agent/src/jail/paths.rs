//! Where a bot's own files appear inside its private root: at neutral paths, never at the
//! host's.
//!
//! A bot shown its files at their host paths learns those paths from `/proc/self/mountinfo`,
//! its command line and its working folder (the organiser's home folder, the ladder's storage
//! layout, a contestant's name). So the bot's own folder (`JailConfig::seat_dir`) is mounted at
//! `/bot`, and every other folder or file of its own (what its command line names, a build's
//! sources in `JailConfig::own_paths`) at `/bot2`, `/bot3`, … (a file keeps its name:
//! `/bot2/main.py`). Every mention of those host paths in the command line and the environment
//! is rewritten to match (`java -cp /home/me/bot:/home/me/lib.jar Main` becomes
//! `java -cp /bot:/bot2/lib.jar Main`).
//!
//! What the organiser names on purpose with `--ro-path` (a toolchain, a model, a virtual
//! environment whose scripts name their own path) keeps its path: the organiser chose to show
//! it there. Without a mount namespace nothing can be moved, and the bot sees host paths (the
//! sandbox report says so).

use std::path::{Path, PathBuf};

/// Host roots shown at neutral paths, and how mentions of them are rewritten.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PathMap {
    /// (host path, path inside the jail), outermost host paths only (none inside another).
    roots: Vec<(PathBuf, PathBuf)>,
}

impl PathMap {
    /// Map `seat_dir` (if any) to `/bot` and each of `others` (outermost paths, none inside the
    /// seat folder) to `/bot2`, `/bot3`, … in order; a file to `/botN/<its name>`.
    pub(crate) fn new(seat_dir: Option<&Path>, others: &[PathBuf]) -> PathMap {
        let mut roots = Vec::new();
        let mut n = 0usize;
        let mut next = || {
            n += 1;
            if n == 1 {
                PathBuf::from("/bot")
            } else {
                PathBuf::from(format!("/bot{n}"))
            }
        };
        // Without a seat folder the first of the others is `/bot`.
        if let Some(d) = seat_dir {
            roots.push((d.to_path_buf(), next()));
        }
        for p in others {
            let base = next();
            let jail = if p.is_dir() {
                base
            } else {
                match p.file_name() {
                    Some(name) => base.join(name),
                    None => base,
                }
            };
            roots.push((p.clone(), jail));
        }
        PathMap { roots }
    }

    /// (host path, path inside the jail) of every mapped root.
    pub(crate) fn roots(&self) -> &[(PathBuf, PathBuf)] {
        &self.roots
    }

    /// Where host path `p` appears inside the jail: moved if it is or lies inside a mapped
    /// root, else unchanged.
    pub(crate) fn to_jail(&self, p: &Path) -> PathBuf {
        for (host, jail) in &self.roots {
            if let Ok(rest) = p.strip_prefix(host) {
                return if rest.as_os_str().is_empty() {
                    jail.clone()
                } else {
                    jail.join(rest)
                };
            }
        }
        p.to_path_buf()
    }

    /// Whether host path `p` is or lies inside a mapped root.
    pub(crate) fn moves(&self, p: &Path) -> bool {
        self.roots.iter().any(|(host, _)| p.starts_with(host))
    }

    /// `text` with every mention of a mapped host path rewritten: a host root that starts the
    /// text or follows a separator (white space, `:`, `=`, `,`, a quote) and ends it or is
    /// followed by `/` or a separator. Longer roots are tried first, so `/a/bc` is never read
    /// as `/a/b` followed by `c`.
    pub(crate) fn rewrite(&self, text: &str) -> String {
        if self.roots.is_empty() {
            return text.to_string();
        }
        let mut roots: Vec<(String, String)> = self
            .roots
            .iter()
            .filter_map(|(h, j)| Some((h.to_str()?.to_string(), j.to_str()?.to_string())))
            .collect();
        roots.sort_by_key(|(h, _)| std::cmp::Reverse(h.len()));
        let is_sep = |c: char| c.is_whitespace() || matches!(c, ':' | '=' | ',' | '\'' | '"');
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        let bytes = text.as_bytes();
        'scan: while i < text.len() {
            let at_boundary = i == 0 || text[..i].chars().next_back().is_some_and(is_sep);
            if at_boundary && bytes[i] == b'/' {
                for (host, jail) in &roots {
                    if text[i..].starts_with(host.as_str()) {
                        let end = i + host.len();
                        let ends = end == text.len()
                            || text[end..]
                                .chars()
                                .next()
                                .is_some_and(|c| c == '/' || is_sep(c));
                        if ends {
                            out.push_str(jail);
                            i = end;
                            continue 'scan;
                        }
                    }
                }
            }
            let c = text[i..].chars().next().expect("i is inside the text");
            out.push(c);
            i += c.len_utf8();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(dir: &Path) -> PathMap {
        std::fs::create_dir_all(dir.join("seat")).unwrap();
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("main.py"), "").unwrap();
        PathMap::new(
            Some(&dir.join("seat")),
            &[dir.join("lib"), dir.join("main.py")],
        )
    }

    #[test]
    fn the_seat_folder_is_bot_and_the_others_follow_files_keeping_their_names() {
        let t = tempfile::tempdir().unwrap();
        let m = map(t.path());
        let jail: Vec<&Path> = m.roots().iter().map(|(_, j)| j.as_path()).collect();
        assert_eq!(
            jail,
            [
                Path::new("/bot"),
                Path::new("/bot2"),
                Path::new("/bot3/main.py")
            ]
        );
        assert_eq!(m.to_jail(&t.path().join("seat/a/b")), Path::new("/bot/a/b"));
        assert_eq!(
            m.to_jail(Path::new("/usr/bin/python3")),
            Path::new("/usr/bin/python3")
        );
        assert!(m.moves(&t.path().join("lib/x.jar")));
        assert!(!m.moves(&t.path().join("seatx")));
        let none = PathMap::new(None, &[t.path().join("lib")]);
        assert_eq!(none.roots()[0].1, Path::new("/bot"));
    }

    #[test]
    fn mentions_are_rewritten_only_at_path_boundaries() {
        let t = tempfile::tempdir().unwrap();
        let m = map(t.path());
        let d = t.path().display().to_string();
        assert_eq!(m.rewrite(&format!("{d}/seat")), "/bot");
        assert_eq!(m.rewrite(&format!("{d}/seat/x.py")), "/bot/x.py");
        assert_eq!(
            m.rewrite(&format!("{d}/seat:{d}/lib/a.jar")),
            "/bot:/bot2/a.jar"
        );
        assert_eq!(
            m.rewrite(&format!("cd '{d}/seat' && exec python3 {d}/main.py --x")),
            "cd '/bot' && exec python3 /bot3/main.py --x"
        );
        assert_eq!(m.rewrite(&format!("-Dhome={d}/lib")), "-Dhome=/bot2");
        // A longer name that merely starts like a root, or a root inside a word, stays.
        assert_eq!(m.rewrite(&format!("{d}/seatx")), format!("{d}/seatx"));
        assert_eq!(m.rewrite(&format!("x{d}/seat")), format!("x{d}/seat"));
        assert_eq!(
            m.rewrite("/usr/bin/env python3 é"),
            "/usr/bin/env python3 é"
        );
        assert_eq!(PathMap::default().rewrite("/a"), "/a");
    }
}
