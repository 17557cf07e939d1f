//! Every relative link of every Markdown file in the repository (README.md, docs/**,
//! starters/README.md, ...) resolves to a file or folder inside the repository, and every
//! `#anchor` to a heading of the file it points into (GitHub's heading ids). Links are read
//! with pulldown-cmark, as a Markdown renderer reads them, so code spans and code blocks are
//! not links.

use crate::support::repo;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// Every `.md` file under `dir`, skipping build output and version control.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "target" | "node_modules") && !name.starts_with('.') {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// GitHub's id of a heading: lower case, punctuation other than `-` and `_` dropped, spaces
/// to `-`; a repeated id gets `-1`, `-2`, ...
fn slug(text: &str) -> String {
    text.trim()
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

struct Doc {
    /// (link target, line) in the order they appear.
    links: Vec<(String, usize)>,
    /// Markdown files named in code spans (`docs/sandbox.md`), with their line: a document
    /// named this way is a reference too and must be in the repository.
    named_docs: Vec<(String, usize)>,
    anchors: BTreeSet<String>,
}

fn read_doc(path: &Path) -> Doc {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let line_of = |offset: usize| text[..offset].bytes().filter(|&b| b == b'\n').count() + 1;
    let mut links = Vec::new();
    let mut named_docs = Vec::new();
    let mut anchors = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    // Inside a link a code span is its text, not a second reference.
    let mut in_link = 0u32;
    let opts = Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES | Options::ENABLE_STRIKETHROUGH;
    for (event, range) in Parser::new_ext(&text, opts).into_offset_iter() {
        match event {
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                links.push((dest_url.to_string(), line_of(range.start)));
                in_link += 1;
            }
            Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => in_link -= 1,
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                } else if in_link == 0 && t.ends_with(".md") && !t.contains(char::is_whitespace) {
                    named_docs.push((t.to_string(), line_of(range.start)));
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_insert(0);
                anchors.insert(if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                });
                *n += 1;
            }
            _ => {}
        }
    }
    Doc {
        links,
        named_docs,
        anchors,
    }
}

/// Why a link does not resolve inside the repository, if it does not.
fn check_link(root: &Path, file: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None; // a web address, not a file of the repository
    }
    let (path_part, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let path_part = path_part.split('?').next().unwrap_or("");
    let dest = if path_part.is_empty() {
        file.to_path_buf()
    } else if path_part.starts_with('/') {
        return Some("absolute path: write it relative to the file".into());
    } else {
        // Resolve `..` lexically first: a link may not leave the repository even through a
        // path that happens to exist outside it.
        let mut p = file.parent().unwrap().to_path_buf();
        for c in Path::new(path_part).components() {
            match c {
                Component::ParentDir => {
                    p.pop();
                }
                Component::Normal(n) => p.push(n),
                _ => {}
            }
        }
        p
    };
    if !dest.starts_with(root) {
        return Some("leaves the repository".into());
    }
    if !dest.exists() {
        return Some("no such file or folder".into());
    }
    if let (Some(a), true) = (anchor, dest.extension().is_some_and(|e| e == "md")) {
        if !a.is_empty() && !read_doc(&dest).anchors.contains(a) {
            return Some(format!("no heading with the id #{a}"));
        }
    }
    None
}

/// A document named in a code span: relative to the file's folder (`../x.md`, `nac.md`) or to
/// the repository root (`docs/sandbox.md`); never outside the repository.
fn check_named_doc(root: &Path, file: &Path, name: &str) -> Option<String> {
    let from_file = check_link(root, file, name);
    if from_file.is_none() || name.starts_with("../") || name.starts_with('/') {
        return from_file;
    }
    check_link(root, &root.join("README.md"), name)
        .map(|_| "no such file, relative to this file or to the repository root".into())
}

#[test]
fn every_markdown_link_resolves_inside_the_repository() {
    let root = repo();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    for must in ["README.md", "docs/adjudicator.md", "starters/README.md"] {
        assert!(files.contains(&root.join(must)), "{must} was not walked");
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        for (target, line) in read_doc(file).links {
            checked += 1;
            if let Some(why) = check_link(&root, file, &target) {
                let rel = file.strip_prefix(&root).unwrap().display().to_string();
                broken.push(format!("{rel}:{line}: ({target}): {why}"));
            }
        }
        for (name, line) in read_doc(file).named_docs {
            checked += 1;
            if let Some(why) = check_named_doc(&root, file, &name) {
                let rel = file.strip_prefix(&root).unwrap().display().to_string();
                broken.push(format!("{rel}:{line}: `{name}`: {why}"));
            }
        }
    }
    assert!(
        checked > 0,
        "no links found: the walk or the parser is wrong"
    );
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

/// The checker itself: links that leave the repository, missing files and missing anchors are
/// caught; code spans are not links.
#[test]
fn the_checker_catches_bad_links() {
    let root = repo();
    let dir = root.join("target").join("docs-links-selftest");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.md");
    std::fs::write(
        &file,
        "# A title: with `code`\n\n## A title: with code\n\n[ok](#a-title-with-code) [ok2](#a-title-with-code-1) \
         [bad](#nope) [out](../../../shared/specs/x.md) [gone](missing.md) `[not](a-link.md)` \
         [web](https://example.com/x) `../../../shared/specs/diplomacy.md` `docs/adjudicator.md`\n",
    )
    .unwrap();
    let doc = read_doc(&file);
    let bad: Vec<_> = doc
        .links
        .iter()
        .filter_map(|(t, _)| check_link(&root, &file, t).map(|w| (t.clone(), w)))
        .collect();
    let names: Vec<&str> = bad.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        names,
        ["#nope", "../../../shared/specs/x.md", "missing.md"],
        "{bad:?}"
    );
    assert!(bad[1].1.contains("leaves the repository"), "{bad:?}");
    let named: Vec<_> = doc
        .named_docs
        .iter()
        .map(|(t, _)| (t.as_str(), check_named_doc(&root, &file, t).is_none()))
        .collect();
    assert_eq!(
        named,
        [
            ("../../../shared/specs/diplomacy.md", false),
            ("docs/adjudicator.md", true)
        ]
    );
}
