//! docs/adjudication-service.md's examples are real: each ```` ```json input ```` block fed to
//! `kakehiki diplomacy adjudicate` gives the ```` ```json output ```` block after it, byte for
//! byte.

use std::io::Write;
use std::process::Stdio;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use crate::support::kakehiki;

/// The fenced blocks of a Markdown text whose info string is `info`, in order.
fn blocks(text: &str, info: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(i))) => {
                current = Some((i.to_string(), String::new()))
            }
            Event::Text(t) => {
                if let Some((_, body)) = current.as_mut() {
                    body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((i, body)) = current.take() {
                    if i.starts_with(info) {
                        out.push((i, body));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn adjudicate(input: &str) -> String {
    let mut child = kakehiki()
        .args(["diplomacy", "adjudicate"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn kakehiki");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_documented_examples_are_the_services_real_answers() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/adjudication-service.md"),
    )
    .expect("docs/adjudication-service.md");
    let all = blocks(&doc, "json ");
    let kinds: Vec<&str> = all.iter().map(|(i, _)| i.as_str()).collect();
    assert!(all.len() >= 8, "four examples expected: {kinds:?}");
    for pair in all.chunks(2) {
        let [(i_in, input), (i_out, expected)] = pair else {
            panic!("an input block without its output: {kinds:?}")
        };
        assert_eq!(
            (i_in.as_str(), i_out.as_str()),
            ("json input", "json output")
        );
        let got = adjudicate(input);
        assert_eq!(got, *expected, "input:\n{input}");
        // One answer per line, each of them JSON.
        assert_eq!(got.lines().count(), input.lines().count());
        for line in got.lines() {
            serde_json::from_str::<serde_json::Value>(line).expect("JSON");
        }
    }
    // Every output key the service writes is documented in the output table.
    let out_keys = [
        "phase",
        "next_phase",
        "results",
        "units",
        "dislodged",
        "destroyed",
        "centers",
        "errors",
    ];
    let first: serde_json::Value = serde_json::from_str(all[1].1.lines().next().unwrap()).unwrap();
    let keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut sorted_doc = out_keys.to_vec();
    sorted_doc.sort_unstable();
    let mut sorted_real = keys.clone();
    sorted_real.sort_unstable();
    assert_eq!(sorted_real, sorted_doc);
    for k in out_keys
        .iter()
        .chain(&["units", "dislodged", "centers", "homes", "orders"])
    {
        assert!(doc.contains(&format!("| `{k}` |")), "{k} is not in a table");
    }
}
