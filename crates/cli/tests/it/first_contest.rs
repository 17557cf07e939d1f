//! docs/first-contest.md, followed as a reader would, in an empty folder with the built binary
//! first on PATH: ```` ```toml file=NAME ```` blocks are saved, ```` ```sh first-contest ````
//! blocks run (stdout and stderr together), each ```` ```text output ```` block is matched against
//! the output of the command block before it, ```` ```sh first-contest-background ```` starts the
//! web server (on port 0 in place of 8080, the port read back from what it prints) and every `http://127.0.0.1:8080/...` address on
//! the page is fetched from it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use crate::support::{loopback_url, start_and_read, Says, Server};

fn fenced_blocks(doc: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for event in Parser::new(doc) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(i))) => {
                current = Some((i.to_string(), String::new()))
            }
            Event::Text(t) => {
                if let Some((_, body)) = current.as_mut() {
                    body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(current.take()),
            _ => {}
        }
    }
    out
}

/// The documented output matches the real one: its lines appear in order; `...` skips any
/// number of lines, and a line ending in ` ...` needs only to begin the same.
fn output_matches(expected: &str, actual: &str) -> Result<(), String> {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    let mut at = 0;
    let mut skipping = false;
    for want in expected.lines().map(str::trim_end) {
        if want == "..." {
            skipping = true;
            continue;
        }
        let fits = |line: &str| match want.strip_suffix(" ...") {
            Some(prefix) => line.starts_with(prefix),
            None => line == want,
        };
        let found = if skipping {
            actual[at..].iter().position(|l| fits(l)).map(|i| at + i)
        } else {
            (at < actual.len() && fits(actual[at])).then_some(at)
        };
        match found {
            Some(i) => at = i + 1,
            None => return Err(format!("no line {want:?} where expected")),
        }
        skipping = false;
    }
    if !skipping && at != actual.len() {
        return Err(format!(
            "unexpected lines after the last: {:?}",
            &actual[at..]
        ));
    }
    Ok(())
}

/// A plain HTTP/1.0 GET: (status line, body).
fn get(port: u16, path: &str) -> std::io::Result<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let status = text.lines().next().unwrap_or("").to_string();
    let body = text.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
    Ok((status, body.to_string()))
}

#[test]
fn the_first_contest_walkthrough_works_as_written() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/first-contest.md");
    let doc = std::fs::read_to_string(&doc_path).expect("docs/first-contest.md");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_kakehiki")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = tempfile::tempdir().unwrap();
    let mut last_output: Option<String> = None;
    let mut background: Option<(Server, u16)> = None;
    let (mut ran, mut checked) = (0, 0);
    for (info, body) in fenced_blocks(&doc) {
        if let Some(name) = info.strip_prefix("toml file=") {
            std::fs::write(dir.path().join(name), &body).unwrap();
        } else if info == "sh first-contest" {
            let out = Command::new("bash")
                .args(["-e", "-c", &format!("exec 2>&1\n{body}")])
                .current_dir(dir.path())
                .env("PATH", &path)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            assert!(out.status.success(), "{body}\nfailed:\n{text}");
            last_output = Some(text);
            ran += 1;
        } else if info == "text output" {
            let actual = last_output
                .take()
                .expect("an output block follows a command block");
            if let Err(e) = output_matches(&body, &actual) {
                panic!("{e}\ndocumented:\n{body}\nreal:\n{actual}");
            }
            checked += 1;
        } else if info == "sh first-contest-background" {
            // Port 0 in place of 8080: the server says where it listens.
            let mut cmd = Command::new("bash");
            cmd.args(["-c", &format!("exec {}", body.trim().replace("8080", "0"))])
                .current_dir(dir.path())
                .env("PATH", &path)
                .stderr(Stdio::null());
            let (server, url) = start_and_read(cmd, Says::Stdout, loopback_url);
            let port = url.rsplit(':').next().unwrap().parse().unwrap();
            background = Some((server, port));
            ran += 1;
        }
    }
    assert!(
        ran >= 5 && checked >= 4,
        "ran {ran} blocks, checked {checked}"
    );
    assert!(
        dir.path()
            .join("replays/first-contest/000000.jsonl.html")
            .exists(),
        "the replay page was not written"
    );

    // The addresses the page tells the reader to open.
    let prefix = "http://127.0.0.1:8080";
    let mut paths: Vec<&str> = doc
        .match_indices(prefix)
        .map(|(i, _)| {
            let rest = &doc[i + prefix.len()..];
            let end = rest
                .find(|c: char| c == '>' || c == ')' || c.is_whitespace())
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect();
    paths.sort_unstable();
    paths.dedup();
    assert!(paths.len() >= 3, "{paths:?}");
    let (server, port) = background.expect("the web server was not started");
    for p in paths {
        let (status, body) = get(port, p).unwrap();
        assert!(status.contains(" 200"), "{p}: {status}");
        assert!(body.contains("first-contest"), "{p}: {body}");
    }
    drop(server);
}

#[test]
fn the_output_matcher_matches_only_what_it_should() {
    let real = "a\nb 1 2\nc\nd\n";
    assert!(output_matches("a\nb ...\n...\n", real).is_ok());
    assert!(output_matches("a\n...\nd\n", real).is_ok());
    assert!(output_matches("a\nb 1 2\nc\nd\n", real).is_ok());
    assert!(output_matches("a\nc\n...\n", real).is_err());
    assert!(output_matches("a\nb 1 3\n...\n", real).is_err());
    assert!(output_matches("a\nb 1 2\n", real).is_err());
}
