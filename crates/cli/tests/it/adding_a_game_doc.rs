//! docs/adding-a-game.md stays true: every excerpt (a code block whose info says
//! `excerpt=PATH#ANCHOR`) is the text between `ANCHOR: name` and `ANCHOR_END: name` in that file,
//! the replay it shows is what the command it names writes, and its seat-record lines read as
//! the seat record.

use std::path::{Path, PathBuf};

use kakehiki_core::exchange::{SeatEnd, SeatExchange};
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use crate::support::kakehiki;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc() -> String {
    std::fs::read_to_string(root().join("docs/adding-a-game.md")).expect("docs/adding-a-game.md")
}

/// Every fenced block: (info string, body).
fn blocks(doc: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for event in Parser::new(doc) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                cur = Some((info.to_string(), String::new()))
            }
            Event::Text(t) => {
                if let Some((_, body)) = cur.as_mut() {
                    body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(cur.take()),
            _ => {}
        }
    }
    out
}

/// The lines between the anchor's markers, with their common indentation removed.
fn anchor(path: &str, name: &str) -> String {
    let text = std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lines: Vec<&str> = text.lines().collect();
    let is = |l: &str, mark: &str| l.trim().ends_with(&format!("{mark}: {name}"));
    let start = lines
        .iter()
        .position(|l| is(l, "ANCHOR"))
        .unwrap_or_else(|| panic!("{path} has no ANCHOR: {name}"));
    let end = start
        + lines[start..]
            .iter()
            .position(|l| is(l, "ANCHOR_END"))
            .unwrap_or_else(|| panic!("{path} has no ANCHOR_END: {name}"));
    let body = &lines[start + 1..end];
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for l in body {
        out.push_str(l.get(indent..).unwrap_or(""));
        out.push('\n');
    }
    out
}

#[test]
fn every_excerpt_is_the_code_it_quotes() {
    let mut seen = 0;
    for (info, body) in blocks(&doc()) {
        let Some(spec) = info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("excerpt="))
        else {
            continue;
        };
        let (path, name) = spec.split_once('#').expect("excerpt=PATH#ANCHOR");
        let want = anchor(path, name);
        assert_eq!(
            body, want,
            "docs/adding-a-game.md: the excerpt {spec} differs from the code; paste the new code"
        );
        seen += 1;
    }
    assert!(seen >= 8, "only {seen} excerpts found");
}

#[test]
fn the_replay_shown_is_what_the_command_writes() {
    let doc = doc();
    let args = [
        "play",
        "rps",
        "--seat",
        "builtin:rock",
        "--seat",
        "builtin:silent",
        "--seed",
        "7",
        "--opt",
        "rounds=2",
    ];
    assert!(
        doc.contains(&format!("kakehiki {} --replay r.jsonl", args.join(" "))),
        "the doc no longer names the command this test runs"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let out = kakehiki()
        .args(args)
        .arg("--replay")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written = std::fs::read_to_string(&path).unwrap();
    let shown = blocks(&doc)
        .into_iter()
        .find(|(info, _)| info.split_whitespace().any(|w| w == "rps-replay"))
        .expect("a ```jsonl rps-replay block")
        .1;
    assert_eq!(
        shown, written,
        "the replay in docs/adding-a-game.md is not what rps writes"
    );
}

#[test]
fn the_seat_record_lines_shown_read_as_the_seat_record() {
    let (_, body) = blocks(&doc())
        .into_iter()
        .find(|(info, _)| info.split_whitespace().any(|w| w == "seat-record-shape"))
        .expect("a ```json seat-record-shape block");
    let mut kinds = Vec::new();
    for line in body.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["event"].as_str() {
            Some("seat") => {
                serde_json::from_value::<SeatExchange>(v).unwrap();
            }
            Some("seat_end") => {
                serde_json::from_value::<SeatEnd>(v).unwrap();
            }
            other => panic!("not a seat-record line: {other:?}"),
        }
        kinds.push(line.to_string());
    }
    assert_eq!(kinds.len(), 2);
}
