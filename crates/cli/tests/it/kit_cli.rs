//! The contestant's kit on the command line: where a `tcp` seat waits, `kakehiki games` against
//! the README, and the seat-count errors.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::kakehiki;

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

/// A Geister client written for the tests: places ABCD red and moves the first own ghost that
/// has a free square next to it (always legal). Plays `games` games, on one connection when
/// `keep` (spec §3.8's extension), reconnecting for each game otherwise. Returns per game its
/// local address and the end message's first four bytes.
fn geister_client(addr: &str, games: usize, keep: bool) -> Vec<(String, String)> {
    geister_client_with(addr, games, keep, false)
}

/// [`geister_client`]; when `patient`, a port not listening yet or a connection reset before
/// its game starts (a table between two games) is retried, as contest clients must.
fn geister_client_with(
    addr: &str,
    games: usize,
    keep: bool,
    patient: bool,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut conn: Option<(TcpStream, Vec<u8>, bool)> = None;
    let mut tries = 0;
    while out.len() < games {
        if conn.is_none() {
            match TcpStream::connect(addr) {
                Ok(s) => {
                    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                    conn = Some((s, Vec::new(), false));
                }
                Err(e) => {
                    tries += 1;
                    assert!(patient && tries < 600, "cannot connect to {addr}: {e}");
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            }
        }
        let Some((s, buf, started)) = conn.as_mut() else {
            continue;
        };
        let mut gone = false;
        let msg = loop {
            if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                let m = String::from_utf8_lossy(&buf[..i]).into_owned();
                buf.drain(..i + 2);
                break m;
            }
            let mut chunk = [0u8; 512];
            match s.read(&mut chunk) {
                Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                r => {
                    assert!(patient && !*started, "the server is gone mid-game: {r:?}");
                    gone = true;
                    break String::new();
                }
            }
        };
        if gone {
            conn = None;
            tries += 1;
            assert!(tries < 600, "no game on {addr}");
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        *started = true;
        if msg == "SET?" {
            s.write_all(b"SET:ABCD\n").unwrap();
        } else if let Some(board) = msg.strip_prefix("MOV?") {
            let b = board.as_bytes();
            let own: Vec<(i32, i32)> = (0..8)
                .map(|i| ((b[3 * i] - b'0') as i32, (b[3 * i + 1] - b'0') as i32))
                .collect();
            let free = |x: i32, y: i32| {
                (0..6).contains(&x) && (0..6).contains(&y) && !own.contains(&(x, y))
            };
            let mv = own
                .iter()
                .enumerate()
                .filter(|(_, &(x, y))| x < 6 && y < 6)
                .flat_map(|(i, &(x, y))| {
                    [("N", 0, -1), ("E", 1, 0), ("W", -1, 0), ("S", 0, 1)]
                        .into_iter()
                        .filter(move |&(_, dx, dy)| free(x + dx, y + dy))
                        .map(move |(d, _, _)| format!("MOV:{},{d}\n", (b'A' + i as u8) as char))
                })
                .next()
                .expect("a ghost can move");
            s.write_all(mv.as_bytes()).unwrap();
        } else if ["WON:", "LST:", "DRW:"].iter().any(|p| msg.starts_with(p)) {
            out.push((s.local_addr().unwrap().to_string(), msg[..4].to_string()));
            if !keep {
                conn = None;
            }
        }
    }
    out
}

/// Starts `kakehiki serve geister` on two free ports; returns the child and the two addresses.
fn serve_geister(extra: &[&str], out: &std::path::Path) -> (std::process::Child, String, String) {
    let mut child = kakehiki()
        .args(["serve", "geister", "--port", "0"])
        .args([
            "--opt",
            "pace_ms=0",
            "--opt",
            "linger_ms=2000",
            "--opt",
            "max_plies=40",
        ])
        .arg("--out")
        .arg(out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    // "geister: listening on A (seat 0) and B (seat 1), ..."
    let rest = line
        .strip_prefix("geister: listening on ")
        .unwrap_or_else(|| panic!("{line}"));
    let (a0, rest) = rest.split_once(" (seat 0) and ").unwrap();
    let (a1, _) = rest.split_once(" (seat 1)").unwrap();
    (child, a0.to_string(), a1.to_string())
}

fn replay_verifies(path: &std::path::Path) {
    let out = kakehiki().arg("replay").arg(path).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The standing table plays game after game with clients that reconnect for each (the contest
/// server's way): a summary line, a replay and a compatible log per game.
#[test]
fn serve_geister_plays_game_after_game_with_reconnecting_clients() {
    let dir = tempfile::tempdir().unwrap();
    let (child, a0, a1) = serve_geister(&["--games", "3", "--seed", "70"], dir.path());
    let t0 = std::thread::spawn(move || geister_client(&a0, 3, false));
    let t1 = std::thread::spawn(move || geister_client(&a1, 3, false));
    let r0 = t0.join().unwrap();
    let r1 = t1.join().unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for (k, line) in lines.iter().enumerate() {
        let n = k + 1;
        assert!(
            line.starts_with(&format!("game {n} seed {}: seat 0 ", 70 + n)),
            "{line}"
        );
        // Each game on fresh connections: seat 0 is the client on the first port.
        assert!(
            line.contains(&format!("seat 0 {} vs seat 1 {}", r0[k].0, r1[k].0)),
            "{line}"
        );
        assert!(!line.contains("; seat"), "no seat errors: {line}");
        let replay = dir.path().join(format!("game-{n:06}.jsonl"));
        assert!(
            line.ends_with(&format!("replay {}", replay.display())),
            "{line}"
        );
        replay_verifies(&replay);
        // The two clients saw opposite ends.
        let pair = (r0[k].1.as_str(), r1[k].1.as_str());
        assert!(
            matches!(pair, ("WON:", "LST:") | ("LST:", "WON:") | ("DRW:", "DRW:")),
            "{pair:?}"
        );
    }
    let logs = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            let name = e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .into_owned();
            name.starts_with("log-") && name.ends_with(".txt")
        })
        .count();
    assert_eq!(logs, 3, "a compatible log per game");
}

/// Several games per connection (spec §3.8's extension): the next game starts with a new SET?
/// on the same connection, the clients swap seats, and a client that leaves after its last end
/// message is not assigned another game: a newcomer on the free port takes its place.
#[test]
fn serve_geister_keeps_connections_for_several_games() {
    let dir = tempfile::tempdir().unwrap();
    let (child, a0, a1) = serve_geister(
        &["--games", "4", "--keep-connections", "--json"],
        dir.path(),
    );
    let a1_later = a1.clone();
    let ta = std::thread::spawn(move || geister_client(&a0, 4, true));
    let tb = std::thread::spawn(move || geister_client(&a1, 2, true));
    let rb = tb.join().unwrap();
    // B left after two games; C connects to seat 1's port and plays the other two.
    let tc = std::thread::spawn(move || geister_client(&a1_later, 2, true));
    let ra = ta.join().unwrap();
    let rc = tc.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let games: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(games.len(), 4);
    // One connection each for the whole run.
    assert!(ra.iter().all(|(a, _)| *a == ra[0].0), "{ra:?}");
    assert!(rb.iter().all(|(a, _)| *a == rb[0].0), "{rb:?}");
    assert!(rc.iter().all(|(a, _)| *a == rc[0].0), "{rc:?}");
    for (k, g) in games.iter().enumerate() {
        assert_eq!(g["game_number"], k as u64 + 1);
        for seat in g["seats"].as_array().unwrap() {
            assert!(seat["errors"].as_array().unwrap().is_empty(), "{g}");
        }
        let replay = std::path::PathBuf::from(g["replay"].as_str().unwrap());
        replay_verifies(&replay);
        let text = std::fs::read_to_string(&replay).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let peers: Vec<&str> = header["params"]["seats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["peer"].as_str().unwrap())
            .collect();
        // A's seat alternates: 0, 1, 0, 1; its partner is B for two games, then C.
        let partner = if k < 2 { &rb[k].0 } else { &rc[k - 2].0 };
        let expect = if k % 2 == 0 {
            [ra[k].0.as_str(), partner.as_str()]
        } else {
            [partner.as_str(), ra[k].0.as_str()]
        };
        assert_eq!(peers, expect, "game {}", k + 1);
    }
}

/// `serve geister` on two free ports with its stderr read line by line on a thread: the child,
/// the two addresses and the stderr lines that follow the first.
fn serve_geister_watched(
    extra: &[&str],
    out: &std::path::Path,
) -> (
    std::process::Child,
    String,
    String,
    std::sync::mpsc::Receiver<String>,
) {
    let mut child = kakehiki()
        .args(["serve", "geister", "--port", "0", "--opt", "pace_ms=0"])
        .args(["--opt", "max_plies=40", "--out"])
        .arg(out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let rest = line
        .strip_prefix("geister: listening on ")
        .unwrap_or_else(|| panic!("{line}"));
    let (a0, rest) = rest.split_once(" (seat 0) and ").unwrap();
    let (a1, _) = rest.split_once(" (seat 1)").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in err.lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    (child, a0.to_string(), a1.to_string(), rx)
}

/// Waits for `child` to exit within `secs`; kills it and fails otherwise.
fn exits_within(child: &mut std::process::Child, secs: u64, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: the server did not finish within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `--keep-connections` with one client keeping its connection and the other reconnecting for
/// each game (as the real Geister clients do): after game 1 the kept client is in seat 1, and
/// the reconnecting client, back on seat 1's port, takes the free seat 0 instead of waiting
/// for seat 1 forever. Three games, seats alternating.
#[test]
fn serve_geister_keep_connections_with_a_reconnecting_client() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, a0, a1, _err) = serve_geister_watched(
        &["--games", "3", "--keep-connections", "--json"],
        dir.path(),
    );
    let ta = std::thread::spawn(move || geister_client(&a0, 3, true));
    let tb = std::thread::spawn(move || geister_client_with(&a1, 3, false, true));
    exits_within(&mut child, 90, "a kept and a reconnecting client");
    let ra = ta.join().unwrap();
    let rb = tb.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let games: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(games.len(), 3);
    assert!(ra.iter().all(|(a, _)| *a == ra[0].0), "A kept one: {ra:?}");
    assert!(
        rb[0].0 != rb[1].0 && rb[1].0 != rb[2].0,
        "B reconnected: {rb:?}"
    );
    for (k, g) in games.iter().enumerate() {
        for seat in g["seats"].as_array().unwrap() {
            assert!(seat["errors"].as_array().unwrap().is_empty(), "{g}");
        }
        let text = std::fs::read_to_string(g["replay"].as_str().unwrap()).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let peers: Vec<&str> = header["params"]["seats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["peer"].as_str().unwrap())
            .collect();
        let expect = if k % 2 == 0 {
            [ra[k].0.as_str(), rb[k].0.as_str()]
        } else {
            [rb[k].0.as_str(), ra[k].0.as_str()]
        };
        assert_eq!(peers, expect, "game {}", k + 1);
    }
}

/// A client holding a seat waits for an opponent at most `connect_timeout_ms`: then the table
/// closes its connection, says so on stderr, and waits afresh (a new pair still plays).
#[test]
fn serve_geister_bounds_the_wait_for_an_opponent() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, a0, a1, err) = serve_geister_watched(
        &[
            "--games",
            "1",
            "--keep-connections",
            "--opt",
            "connect_timeout_ms=600",
        ],
        dir.path(),
    );
    let mut alone = TcpStream::connect(&a0).unwrap();
    alone
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    let r = alone.read_to_end(&mut rest);
    assert!(
        r.is_ok() && rest.is_empty(),
        "closed without a game: {r:?} {rest:?}"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(500) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    let line = err
        .recv_timeout(Duration::from_secs(10))
        .expect("a line on stderr");
    assert!(
        line.contains("no opponent within 600 ms")
            && line.contains("connect_timeout_ms")
            && line.contains("seat 0"),
        "{line}"
    );
    // The table still serves.
    let ta = std::thread::spawn(move || geister_client(&a0, 1, true));
    let tb = std::thread::spawn(move || geister_client(&a1, 1, true));
    exits_within(&mut child, 60, "a pair after a lone client");
    assert_eq!(ta.join().unwrap().len(), 1);
    assert_eq!(tb.join().unwrap().len(), 1);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn serve_refuses_what_it_cannot_serve() {
    let out = kakehiki()
        .args(["serve", "nac", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no server mode"));
    let dir = tempfile::tempdir().unwrap();
    let out = kakehiki()
        .args([
            "serve",
            "geister",
            "--port",
            "0",
            "--opt",
            "nonsense=1",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown option \"nonsense\""), "{err}");
}

fn example(path: &str) -> String {
    format!(
        "{}/../../examples/bots/python/{path}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Runs `kakehiki check` with `--json` and returns its exit code and report.
fn check_json(args: &[&str]) -> (Option<i32>, Value) {
    let out = kakehiki()
        .arg("check")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

fn kinds(v: &Value) -> Vec<String> {
    v["timings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap().to_string())
        .collect()
}

fn all_errors(v: &Value) -> Vec<Value> {
    v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["errors"].as_array().unwrap().clone())
        .collect()
}

/// A good Geister client passes every case (first and last seat, an opponent that never places)
/// with its reply times per request against the limit; one that sends a malformed move fails
/// with the message it sent and what was expected.
#[test]
fn check_geister_passes_a_good_client_and_names_a_bad_move() {
    let good = format!(
        "tcp-cmd:python3 {} {{host}} {{port}}",
        example("geister_client.py")
    );
    let (code, v) = check_json(&["geister", "--seat", &good, "--seeds", "1"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["passed"], true);
    // Every rule set: first and last seat, and an opponent that never answers.
    let cases: Vec<(&str, &str)> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["rules"].as_str().unwrap(), m["case"].as_str().unwrap()))
        .collect();
    let planned = ["first seat", "last seat", "an opponent that times out"];
    let want: Vec<(&str, &str)> = ["gpw", "seed"]
        .iter()
        .flat_map(|r| planned.iter().map(move |c| (*r, *c)))
        .collect();
    assert_eq!(cases, want, "{v}");
    assert_eq!(v["matches"][1]["seat"], 1);
    // Three kinds per rule set, in the game's words: the client's connection, the placement,
    // then the moves.
    let gpw: Vec<&Value> = v["timings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["rules"] == "gpw")
        .collect();
    let gpw_kinds: Vec<&str> = gpw.iter().map(|t| t["kind"].as_str().unwrap()).collect();
    assert_eq!(gpw_kinds, ["connect", "SET?", "MOV?"], "{v}");
    assert_eq!(kinds(&v).len(), 6, "{v}");
    let set = gpw[1];
    assert_eq!(set["replies"], 3, "one placement per match: {v}");
    assert_eq!(set["limit_ms"], 30000.0);
    assert!(set["slowest_ms"].as_f64().unwrap() >= set["median_ms"].as_f64().unwrap());

    let bad = "cmd:sh -c 'read l; echo SET:ABCD; while read l; do case \"$l\" in MOV*) echo MOV:Z,N;; esac; done'";
    let out = kakehiki()
        .args(["check", "geister", "--seat", bad, "--seeds", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(
        text.contains("FAIL  rules gpw, seed 1000, seat 0 of 2 (first seat): 1 error\n"),
        "{text}"
    );
    assert!(
        text.contains("invalid_reply: malformed command \"MOV:Z,N\"")
            && text.contains("expected MOV:<ghost A-H>"),
        "{text}"
    );
    assert!(
        text.contains("reply times (median / slowest / limit):"),
        "{text}"
    );
    assert!(text.contains("failed:"), "{text}");
}

/// A READY without a newline is accepted at the deadline and named, with what it costs; the
/// opponent that times out is played; a bot that never answers a turn fails with its timeouts
/// and the reply times show the limit.
#[test]
fn check_nac_names_a_ready_without_newline_and_its_cost() {
    let (code, v) = check_json(&[
        "nac",
        "--seat",
        "cmd:sh -c 'printf READY; while read -r l; do :; done'",
        "--seeds",
        "1",
        "--opt",
        "ready_ms=300",
        "--opt",
        "turn_ms=50",
    ]);
    assert_eq!(code, Some(4), "{v}");
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("without a newline: the referee accepts it only at the deadline, so each one costs you 0.3 s")),
        "{v}"
    );
    assert!(all_errors(&v).iter().any(|e| e["kind"] == "timeout"), "{v}");
    let ready = v["timings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["limit_ms"] == 300.0)
        .unwrap_or_else(|| panic!("no READY timing: {v}"));
    assert!(ready["slowest_ms"].as_f64().unwrap() >= 300.0, "{v}");
    assert_eq!(
        v["matches"].as_array().unwrap().last().unwrap()["case"],
        "an opponent that times out"
    );
}

/// Diplomacy: the example bot passes (with every kind of request it met timed); a bot that
/// answers with something that is not JSON fails with what it sent.
#[test]
fn check_diplomacy_passes_the_example_and_fails_a_bad_reply() {
    let good = format!("cmd:python3 {}", example("diplomacy_bot.py"));
    let (code, v) = check_json(&["diplomacy", "--seat", &good, "--seeds", "1"]);
    assert_eq!(code, Some(0), "{v}");
    // The third match: an opponent that is ready, then never orders.
    let cases: Vec<&str> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["case"].as_str())
        .collect();
    assert!(cases.contains(&"an opponent that times out"), "{v}");
    // The start-up handshake and the movement phases, at least, are timed.
    let k = kinds(&v);
    assert!(k.len() >= 2, "{k:?}");
    // Requests the game asked other powers that the bot never met are named, not hidden.
    for c in v["coverage"].as_array().unwrap() {
        if c["replies"] == 0 {
            let kind = c["kind"].as_str().unwrap();
            assert!(v["warnings"].to_string().contains(kind), "{v}");
        }
    }

    let bad = "cmd:sh -c 'while read l; do echo this is not json; done'";
    let (code, v) = check_json(&["diplomacy", "--seat", bad, "--seeds", "1"]);
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["passed"], false);
    // The same start-up failure twice: the third planned match is skipped, and no extra
    // matches follow a failure.
    assert_eq!(v["matches"].as_array().unwrap().len(), 2, "{v}");
    assert!(
        v["skipped"][0]
            .as_str()
            .unwrap()
            .contains("check did not play the other 1 planned match"),
        "{v}"
    );
    assert!(!all_errors(&v).is_empty());
    // A line that is not JSON at all is named as the debug output it most often is.
    assert!(
        all_errors(&v).iter().any(|e| e["detail"]
            .as_str()
            .unwrap()
            .contains("reply is not valid JSON (expected ident at line 1 column 2): this is not json; a line that is not JSON is most often debug output: write it to stderr (stdout carries only replies)")),
        "{v}"
    );
}

/// Werewolf over TCP: the example agent passes and its replies are timed per request; one that
/// sends garbage fails with the request, its reply and what the server settled it as.
#[test]
fn check_werewolf_passes_the_example_and_fails_garbage() {
    let good = format!(
        "tcp-cmd:python3 {} {{host}} {{port}}",
        example("aiwolf_client.py")
    );
    let (code, v) = check_json(&["werewolf", "--seat", &good, "--seeds", "1"]);
    assert_eq!(code, Some(0), "{v}");
    let k = kinds(&v);
    for want in ["TALK", "VOTE"] {
        assert!(k.iter().any(|x| x == want), "{k:?}");
    }
    let talk = v["timings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == "TALK")
        .unwrap();
    assert_eq!(talk["limit_ms"], 1000.0);
    // One match against an agent that gives its name and then never answers.
    let sleeper = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["case"] == "an opponent that times out")
        .unwrap_or_else(|| panic!("no timing-out opponent: {v}"));
    assert_eq!(sleeper["errors"].as_array().map(Vec::len), Some(0), "{v}");

    let bad = format!("{good} --mode garbage");
    let (code, v) = check_json(&["werewolf", "--seat", &bad, "--seeds", "1"]);
    assert_eq!(code, Some(4), "{v}");
    let errors = all_errors(&v);
    assert!(
        errors
            .iter()
            .any(|e| e["kind"] == "invalid_reply" && e["detail"].as_str().unwrap().contains("TALK")),
        "{v}"
    );
}

fn geister_contest(entrants: &str) -> String {
    format!(
        "name = \"remote-gpw\"\ngame = \"geister\"\nformat = \"geister-gpw\"\nseed = 9\ngames = 2\n\n[options]\npace_ms = 0\nlinger_ms = 2000\nmax_plies = 40\n\n{entrants}"
    )
}

/// A Geister `tcp` entrant in a contest file: a client that connects on its own to its own
/// port for each of its games, in whichever seat; the contest plays its matches one at a time
/// (even with --jobs 2) and stores them like any other.
#[test]
fn a_geister_contest_plays_a_tcp_entrant_on_its_own_port() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let file = dir.path().join("c.toml");
    std::fs::write(
        &file,
        geister_contest(&format!(
            "[[entrants]]\nname = \"remote\"\nseat = \"tcp\"\nport = {port}\n\n[[entrants]]\nname = \"random\"\nseat = \"builtin:random\"\n"
        )),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{port}");
    // The client retries until a match's table listens on its port, and when a connection
    // made between two matches is reset.
    let client = std::thread::spawn(move || geister_client_with(&addr, 2, false, true));
    let db = dir.path().join("k.sqlite");
    let out = kakehiki()
        .args(["contest", "run"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .args(["--jobs", "2", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let results = client.join().unwrap();
    assert_eq!(results.len(), 2);
    let out = kakehiki()
        .args(["contest", "replays", "remote-gpw", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(dir.path().join("replays"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut seats_played = Vec::new();
    for e in std::fs::read_dir(dir.path().join("replays").join("remote-gpw")).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let seats: Vec<&str> = header["seats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        let seat = seats.iter().position(|s| *s == "tcp").unwrap();
        assert!(
            header["params"]["seats"][seat]["peer"].is_string(),
            "{header}"
        );
        seats_played.push(seat);
        assert!(
            !text.contains("\"connect_timeout\""),
            "the client was there: {text}"
        );
    }
    seats_played.sort();
    assert_eq!(
        seats_played,
        [0, 1],
        "the entrant played both seats on its one port"
    );
}

/// A tcp entrant needs its own port, only Geister has them, and only a tcp seat has a port.
#[test]
fn tcp_entrants_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let run = |text: String| {
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let out = kakehiki()
            .args(["contest", "run"])
            .arg(&file)
            .arg("--db")
            .arg(dir.path().join("k.sqlite"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let rnd = "[[entrants]]\nname = \"random\"\nseat = \"builtin:random\"\n";
    let err = run(geister_contest(&format!(
        "[[entrants]]\nname = \"r\"\nseat = \"tcp\"\n\n{rnd}"
    )));
    assert!(
        err.contains("entrants[0].seat") && err.contains("give it one with `port = N`"),
        "{err}"
    );
    let err = run(geister_contest(&format!(
        "[[entrants]]\nname = \"r\"\nseat = \"builtin:rush\"\nport = 12000\n\n{rnd}"
    )));
    assert!(
        err.contains("entrants[0].port") && err.contains("only a tcp seat has a port"),
        "{err}"
    );
    let err = run(geister_contest(&format!(
        "[[entrants]]\nname = \"a\"\nseat = \"tcp\"\nport = 12000\n\n[[entrants]]\nname = \"b\"\nseat = \"tcp\"\nport = 12000\n\n{rnd}"
    )));
    assert!(
        err.contains("entrants[1].port") && err.contains("already \"a\"'s"),
        "{err}"
    );
    let nac = "name = \"n\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 1\n\n[[entrants]]\nname = \"r\"\nseat = \"tcp\"\nport = 12000\n";
    let mut text = nac.to_string();
    for i in 0..4 {
        text.push_str(&format!(
            "\n[[entrants]]\nname = \"b{i}\"\nseat = \"builtin:random\"\n"
        ));
    }
    let err = run(text);
    assert!(err.contains("nac has no tcp entrants"), "{err}");
}
