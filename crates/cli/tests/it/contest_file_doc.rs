//! docs/contest-file.md documents every key the contest-file parser accepts (the list comes
//! from the parser itself, so a new key without documentation fails here), and its full example
//! is a valid contest file that uses every entrant key.

use kakehiki_contest::arena::Arena;
use kakehiki_contest::config::{contest_keys, entrant_keys, ContestDef};
use kakehiki_contest::referee_arena::RefereeArena;
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

fn doc() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/contest-file.md"),
    )
    .expect("docs/contest-file.md")
}

/// The first column of every table row: `| `key` | ...` gives `key`.
fn documented_keys(doc: &str) -> Vec<String> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` |").map(|(k, _)| k.to_string()))
        .collect()
}

fn fenced_block(doc: &str, info: &str) -> String {
    let mut inside = false;
    let mut body = String::new();
    for event in Parser::new(doc) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(i))) if i.as_ref() == info => {
                inside = true
            }
            Event::Text(t) if inside => body.push_str(&t),
            Event::End(TagEnd::CodeBlock) if inside => return body,
            _ => {}
        }
    }
    panic!("no ```{info} block")
}

#[test]
fn every_key_the_parser_accepts_is_documented() {
    let doc = doc();
    let documented = documented_keys(&doc);
    let keys = contest_keys();
    for must in [
        "scoring",
        "jobs",
        "match_timeout_s",
        "bootstrap",
        "leagues",
        "cpus_per_bot",
    ] {
        assert!(
            keys.contains(&must),
            "the parser's list lacks {must}: {keys:?}"
        );
    }
    let missing: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| !documented.iter().any(|d| d == k))
        .collect();
    assert!(missing.is_empty(), "undocumented contest keys: {missing:?}");
    let missing: Vec<String> = entrant_keys()
        .iter()
        .map(|k| format!("entrants.{k}"))
        .filter(|k| !documented.contains(k))
        .collect();
    assert!(missing.is_empty(), "undocumented entrant keys: {missing:?}");
    // And nothing documented that the parser would refuse.
    for d in &documented {
        let known = match d.strip_prefix("entrants.") {
            Some(e) => entrant_keys().contains(&e),
            None => keys.contains(&d.as_str()),
        };
        assert!(known, "documented key {d} is not accepted by the parser");
    }
}

#[test]
fn the_full_example_is_a_valid_contest_file() {
    let text = fenced_block(&doc(), "toml contest-file");
    let arena = RefereeArena;
    let def = ContestDef::parse(&text, "docs/contest-file.md", &|g| arena.game_type(g))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(def.game, "geister");
    assert_eq!(def.entrants.len(), 4);
    assert_eq!(def.jobs, Some(2));
    assert_eq!(def.cpu_millis, Some(1000));
    // Every entrant key is shown in use.
    let raw: toml::Value = toml::from_str(&text).unwrap();
    let used: std::collections::BTreeSet<&str> = raw["entrants"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e.as_table().unwrap().keys().map(String::as_str))
        .collect();
    for k in entrant_keys() {
        assert!(
            used.contains(k),
            "the full example does not show entrants.{k}"
        );
    }
}
