//! The contestant's kit on the command line: where a `tcp` seat waits, `kakehiki games` against
//! the README, and the seat-count errors.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

fn kakehiki() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kakehiki"))
}

/// `play` with a `tcp` seat says on stderr where it waits, and a client connecting there is
/// the seat: it gets the game's first message.
#[test]
fn a_tcp_seat_prints_the_address_it_waits_on() {
    let mut child = kakehiki()
        .args([
            "play",
            "geister",
            "--seat",
            "tcp",
            "--seat",
            "builtin:random",
            "--opt",
            "port0=0",
            "--opt",
            "linger_ms=200",
            "--seed",
            "5",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut addr = None;
    let mut seen = String::new();
    for _ in 0..20 {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
        if let Some(rest) = line
            .trim()
            .strip_prefix("seat 0 (tcp): waiting for a client to connect to ")
        {
            addr = Some(rest.to_string());
            break;
        }
    }
    let Some(addr) = addr else {
        let _ = child.kill();
        panic!("no address on stderr: {seen}");
    };
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut first = [0u8; 6];
    s.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"SET?\r\n");
    s.write_all(b"SET:ABCD\n").unwrap();
    drop(s);
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["winner"], 1, "{v}");
    // Gone after its placement: a disconnect, or a failed write if the next message came first.
    let kind = v["seats"][0]["errors"][0]["kind"].as_str().unwrap_or("");
    assert!(kind == "disconnect" || kind == "crash", "{v}");
}

/// The seat column of the README's games table agrees with `kakehiki games --json`.
#[test]
fn the_readme_and_games_agree_on_seat_counts() {
    let out = kakehiki().args(["games", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let games: Value = serde_json::from_slice(&out.stdout).unwrap();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let mut rows = std::collections::BTreeMap::new();
    for line in readme.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let name = cells[2].trim_matches('`');
        if name == "name" || name.starts_with("---") {
            continue;
        }
        assert!(
            rows.insert(name.to_string(), cells[3].to_string())
                .is_none(),
            "the README lists {name} twice"
        );
    }
    for g in games.as_array().unwrap() {
        let name = g["name"].as_str().unwrap();
        let (lo, hi) = (
            g["min_seats"].as_u64().unwrap(),
            g["max_seats"].as_u64().unwrap(),
        );
        let want = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        };
        let cell = rows
            .get(name)
            .unwrap_or_else(|| panic!("the README's table has no row for {name}"));
        assert!(
            cell == &want || cell.starts_with(&format!("{want} ")),
            "{name}: README says {cell:?}, kakehiki games says {want}"
        );
    }
    // And the text output says the same range.
    let out = kakehiki().arg("games").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("werewolf       3-18 seats"), "{text}");
}

/// A village of the wrong size is refused with one sentence naming the rule set, the range and
/// the count given.
#[test]
fn werewolf_seat_count_errors_read_as_one_sentence() {
    let out = kakehiki()
        .args([
            "play",
            "werewolf",
            "--seat",
            "builtin:random",
            "--seat",
            "builtin:random",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("werewolf needs 3 to 18 seats, got 2"), "{err}");
    let mut args = vec!["play", "werewolf", "--rules", "seed-2015"];
    for _ in 0..5 {
        args.extend(["--seat", "builtin:random"]);
    }
    let out = kakehiki().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(
        line.contains("werewolf (rule set seed-2015) needs exactly 15 seats, got 5"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}
