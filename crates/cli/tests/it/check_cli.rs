//! `kakehiki check` is game-generic: it reads every game's seat record and report the same way,
//! checks every rule set, plays `builtin:silent` as the opponent that times out, keeps a kind of
//! request whose replies all timed out in its timing table, condenses identical errors at the
//! game's own labels, and shows how a crashed or exited bot ended with its stderr.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::kakehiki;

/// `kakehiki check ARGS`: its exit code, stdout and stderr.
fn check(args: &[&str]) -> (Option<i32>, String, String) {
    let out = kakehiki().arg("check").args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `kakehiki check ARGS --json`: its exit code and report.
fn check_json(args: &[&str]) -> (Option<i32>, Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = check(&all);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, v)
}

fn matches(v: &Value) -> &Vec<Value> {
    v["matches"].as_array().unwrap()
}

fn timings(v: &Value) -> &Vec<Value> {
    v["timings"].as_array().unwrap()
}

/// A Geister bot on stdin/stdout that places at once and takes 0.3 s per move (a random legal
/// one).
const SLOW_GEISTER: &str = r#"
import random, sys, time
def legal(board):
    own = [(int(board[3*i]), int(board[3*i+1]), board[3*i+2]) for i in range(8)]
    busy = {(x, y) for (x, y, c) in own if c in "RB"}
    out = []
    for i, (x, y, c) in enumerate(own):
        if c not in "RB":
            continue
        for d, (dx, dy) in (("N", (0, -1)), ("E", (1, 0)), ("W", (-1, 0)), ("S", (0, 1))):
            nx, ny = x + dx, y + dy
            if 0 <= nx < 6 and 0 <= ny < 6 and (nx, ny) not in busy:
                out.append((i, d))
    return out
for line in sys.stdin:
    msg = line.strip()
    if msg.startswith("SET?"):
        print("SET:ABCD", flush=True)
    elif msg.startswith("MOV?"):
        time.sleep(0.3)
        i, d = random.choice(legal(msg[4:]))
        print("MOV:%s,%s" % ("ABCDEFGH"[i], d), flush=True)
"#;

/// The rule-set seam: a bot that takes 0.3 s per move passes `gpw` (a bank of 600 s on top of
/// each move's time) but times out on every move under `seed` (no bank). `check geister` used
/// to test the default rule set only and pass it; now it checks both, and `--rules` one.
#[test]
fn check_geister_checks_every_rule_set_and_fails_a_bot_too_slow_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("slow.py");
    std::fs::write(&bot, SLOW_GEISTER).unwrap();
    let seat = format!("cmd:python3 {}", bot.display());
    // A short move time and game keep it fast; the rule sets still differ by the bank.
    let common = [
        "--seat",
        seat.as_str(),
        "--seeds",
        "1",
        "--opt",
        "per_move_ms=200",
        "--opt",
        "max_plies=6",
        "--opt",
        "pace_ms=0",
        "--opt",
        "set_timeout_ms=3000",
    ];
    let mut args = vec!["geister"];
    args.extend(common);
    let (code, v) = check_json(&args);
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["rules"], serde_json::json!(["gpw", "seed"]), "{v}");
    let cases: Vec<(&str, &str)> = matches(&v)
        .iter()
        .map(|m| (m["rules"].as_str().unwrap(), m["case"].as_str().unwrap()))
        .collect();
    assert_eq!(
        cases,
        [
            ("gpw", "first seat"),
            ("gpw", "last seat"),
            ("gpw", "an opponent that times out"),
            ("seed", "first seat"),
            ("seed", "last seat"),
            ("seed", "an opponent that times out"),
        ],
        "{v}"
    );
    for m in matches(&v) {
        let errors = m["errors"].as_array().unwrap();
        if m["rules"] == "gpw" {
            assert!(errors.is_empty(), "the bank covers 0.3 s: {m}");
        } else if m["case"] != "an opponent that times out" {
            assert!(!errors.is_empty(), "no bank under seed: {m}");
            assert!(errors.iter().all(|e| e["kind"] == "timeout"), "{m}");
            assert!(
                errors
                    .iter()
                    .all(|e| e["at"].as_str().is_some_and(|a| !a.is_empty())),
                "every error at the game's label: {m}"
            );
        }
    }
    // The kind of request that timed out under seed stays in the table, its slowest beyond
    // the limit.
    let late = timings(&v)
        .iter()
        .find(|t| t["rules"] == "seed" && t["timeouts"].as_u64().unwrap() > 0)
        .unwrap_or_else(|| panic!("no timed-out kind under seed: {v}"));
    assert_eq!(late["slowest_timed_out"], true, "{v}");
    assert_eq!(late["limit_ms"], 200.0, "{v}");

    // One rule set, named: gpw alone passes, as `check geister` said before.
    let mut args = vec!["geister", "--rules", "gpw"];
    args.extend(common);
    let (code, v) = check_json(&args);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["rules"], serde_json::json!(["gpw"]));
    assert_eq!(matches(&v).len(), 3);

    // A rule set the game does not have is an error that names those it has.
    let (code, _, err) = check(&["geister", "--rules", "nope", "--seat", &seat]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--rules nope") && err.contains("gpw, seed"),
        "{err}"
    );
    // So is a built-in opponent it does not have.
    let (code, _, err) = check(&["geister", "--against", "nobody", "--seat", &seat]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--against nobody"), "{err}");
}

/// A bot that never answers a turn: the kind of request stays in the timing table (no reply,
/// its slowest `>50 ms`).
#[test]
fn check_keeps_a_kind_whose_replies_all_timed_out() {
    let bot = "cmd:sh -c 'echo READY; while read -r l; do :; done'";
    let args = ["nac", "--seat", bot, "--seeds", "1", "--opt", "turn_ms=50"];
    let (code, v) = check_json(&args);
    assert_eq!(code, Some(4), "{v}");
    let late = timings(&v)
        .iter()
        .find(|t| t["replies"] == 0)
        .unwrap_or_else(|| panic!("the turns' kind dropped out: {v}"));
    assert_eq!(late["timeouts"], matches(&v).len(), "one per match: {v}");
    assert_eq!(late["slowest_timed_out"], true);
    assert_eq!(late["limit_ms"], 50.0);
    let kind = late["kind"].as_str().unwrap().to_string();

    let (code, text, err) = check(&args);
    assert_eq!(code, Some(4), "{text}{err}");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{kind} ")) && l.contains(" / "))
        .unwrap_or_else(|| panic!("no {kind} row: {text}"));
    assert!(
        row.contains(">50 ms /    >50 ms /     50 ms  (0 replies, 3 timeouts)"),
        "{row}"
    );
}

/// A bot that never answers a move, under rules that pass its turn: its identical timeouts are
/// one line and a count with the game's labels they span.
#[test]
fn check_condenses_identical_timeouts_with_their_labels() {
    let bot = format!(
        "cmd:python3 {}/../../examples/bots/python/geister_client.py --stdio --mode silent",
        env!("CARGO_MANIFEST_DIR")
    );
    let args = [
        "geister",
        "--rules",
        "seed",
        "--seat",
        bot.as_str(),
        "--seeds",
        "1",
        "--opt",
        "per_move_ms=50",
        "--opt",
        "max_plies=40",
        "--opt",
        "pace_ms=0",
        "--opt",
        "set_timeout_ms=3000",
    ];
    let (code, v) = check_json(&args);
    assert_eq!(code, Some(4), "{v}");
    let errors = matches(&v)[0]["errors"].as_array().unwrap();
    let n = errors.len();
    assert!(n > 2, "{v}");
    assert!(errors.iter().all(|e| e["kind"] == "timeout"), "{v}");
    let first_at = errors[0]["at"].as_str().unwrap().to_string();
    let last_at = errors[n - 1]["at"].as_str().unwrap().to_string();
    assert_ne!(first_at, last_at);

    let (code, text, err) = check(&args);
    assert_eq!(code, Some(4), "{text}{err}");
    let first = format!("      {first_at}: timeout: ");
    assert!(text.contains(&first), "{text}");
    let more = format!("      … and {} more timeouts like this, ", n - 1);
    let line = text
        .lines()
        .find(|l| l.starts_with(&more))
        .unwrap_or_else(|| panic!("no {more:?}: {text}"));
    // `plies 2–40` for `ply 2` … `ply 40`, else `A to B`.
    let (a, b) = (
        first_at.rsplit(' ').next().unwrap(),
        last_at.rsplit(' ').next().unwrap(),
    );
    assert!(
        line.ends_with(&format!(" {a}–{b}")) || line.ends_with(&format!("{first_at} to {last_at}")),
        "{line}"
    );
    assert_eq!(
        text.matches(": timeout: ").count(),
        matches(&v).len() - 1,
        "one line per match where the bot moves (seed rules: first and last seat): {text}"
    );
    // Three identical errors stop the bot's match: check goes on to the next.
    assert_eq!(n, 3, "{v}");
    assert_eq!(matches(&v)[0]["stopped_early"], true, "{v}");
    assert_eq!(
        text.matches("      check stopped your bot here after 3 identical errors (the rest of the match would repeat them) and went on to the next match\n").count(),
        matches(&v).len() - 1,
        "{text}"
    );
}

/// A bot that crashes: how its program ended (its exit code) and its stderr are shown.
#[test]
fn check_shows_the_exit_code_and_stderr_of_a_crashed_bot() {
    let bot = "cmd:sh -c 'echo READY; read -r l; echo Traceback: boom >&2; exit 3'";
    let (code, text, err) = check(&["nac", "--seat", bot, "--seeds", "1"]);
    assert_eq!(code, Some(4), "{text}{err}");
    assert!(text.contains("your bot's program: exit code 3"), "{text}");
    assert!(text.contains("      | Traceback: boom"), "{text}");
    let (_, v) = check_json(&["nac", "--seat", bot, "--seeds", "1"]);
    let m = &matches(&v)[0];
    assert_eq!(m["exit"], "exit code 3", "{v}");
    assert!(m["stderr_tail"].as_str().unwrap().contains("boom"), "{v}");
    assert!(
        m["errors"][0]["at"].as_str().is_some_and(|a| !a.is_empty()),
        "{v}"
    );
}

/// A TCP client that prints to stderr and exits without connecting is recognised within a
/// second (not after the connect timeout), with its exit code and stderr, in every game with a
/// TCP protocol.
#[test]
fn check_recognises_a_tcp_client_that_exited_at_once() {
    let bot = "tcp-cmd:sh -c 'echo no server at {host} {port} >&2; exit 5'";
    for (game, rules) in [("geister", "gpw"), ("werewolf", "aiwolf-0.6")] {
        let start = Instant::now();
        let (code, v) = check_json(&[game, "--rules", rules, "--seat", bot, "--seeds", "1"]);
        let took = start.elapsed();
        assert_eq!(code, Some(4), "{game}: {v}");
        let planned = matches(&v).len() as u32;
        assert!(
            took < Duration::from_secs(3) * planned,
            "{game}: {took:?} for {planned} matches: {v}"
        );
        for m in matches(&v) {
            assert_eq!(m["exit"], "exit code 5", "{game}: {m}");
            assert!(
                m["stderr_tail"].as_str().unwrap().contains("no server at"),
                "{game}: {m}"
            );
            assert!(!m["errors"].as_array().unwrap().is_empty(), "{game}: {m}");
        }
    }
}

/// Werewolf-NLP, like every game: a timing table, and an opponent that times out.
#[test]
fn check_werewolf_nlp_times_the_replies_and_plays_a_silent_opponent() {
    let bot = format!(
        "ws-cmd:python3 {}/../../starters/werewolf-nlp/python/bot.py {{url}}",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, v) = check_json(&["werewolf-nlp", "--seat", &bot, "--seeds", "1"]);
    assert_eq!(code, Some(0), "{v}");
    assert!(!timings(&v).is_empty(), "{v}");
    assert!(
        timings(&v)
            .iter()
            .all(|t| t["limit_ms"].as_f64().is_some_and(|l| l > 0.0)),
        "{v}"
    );
    assert!(
        matches(&v)
            .iter()
            .any(|m| m["case"] == "an opponent that times out"),
        "{v}"
    );
}

/// `--players N` checks at tables of N seats (a ladder of five AIWolf seats checks at five);
/// a number the game is not played by is refused before any match.
#[test]
fn check_plays_the_tables_players_asks_for() {
    let bot = format!(
        "tcp-cmd:python3 {}/../../starters/werewolf/python/bot.py {{host}} {{port}}",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, v) = check_json(&[
        "werewolf",
        "--seat",
        &bot,
        "--seeds",
        "1",
        "--players",
        "5",
        "--rules",
        "aiwolf-0.6",
    ]);
    assert_eq!(code, Some(0), "{v}");
    let seats: Vec<u64> = matches(&v)
        .iter()
        .map(|m| m["seats"].as_u64().unwrap())
        .collect();
    assert!(!seats.is_empty() && seats.iter().all(|&n| n == 5), "{v}");
    let (code, _, err) = check(&["werewolf", "--seat", &bot, "--players", "2"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("2 seats: werewolf is played by 3 to 18 players"),
        "{err}"
    );
}

/// A check has a time limit of its own (the ladder's `limits.check_seconds`): a bot legal but
/// slow (0.3 s a move under a bank of 600 s) would hold the check for many minutes; with
/// `--time-limit-secs 2` the check stops and fails, naming the match it was in. `--seed` moves
/// every match's seed (the ladder draws a fresh one, so a bot cannot recognise the check).
#[test]
fn check_stops_at_its_time_limit_and_starts_from_its_seed() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("slow.py");
    std::fs::write(&bot, SLOW_GEISTER).unwrap();
    let seat = format!("cmd:python3 {}", bot.display());
    let t = Instant::now();
    let (code, v) = check_json(&[
        "geister",
        "--rules",
        "gpw",
        "--seat",
        &seat,
        "--opt",
        "pace_ms=0",
        "--seed",
        "5000",
        "--time-limit-secs",
        "2",
    ]);
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["passed"], false, "{v}");
    let stopped = v["stopped"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        stopped.contains("time limit of 2 s") && stopped.contains("seed 5000"),
        "{stopped}"
    );
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    // The text says so too.
    let (code, out, _) = check(&[
        "geister",
        "--rules",
        "gpw",
        "--seat",
        &seat,
        "--opt",
        "pace_ms=0",
        "--seed",
        "7",
        "--time-limit-secs",
        "1",
    ]);
    assert_eq!(code, Some(4), "{out}");
    assert!(
        out.contains(
            "STOP  the check's time limit of 1 s ran out in the match of rules gpw, seed 7"
        ),
        "{out}"
    );
    assert!(
        out.contains("failed: the check did not finish in its time"),
        "{out}"
    );
}

/// The beginner's reply without a newline, over pipes and over TCP: the timeout's first line
/// names what arrived and the fix, in `check`'s text (the seat record carries it, so `play`,
/// the viewers and the ladder say the same).
#[test]
fn check_names_a_reply_without_a_newline_over_pipes_and_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("pipe.py");
    std::fs::write(
        &pipe,
        "import sys\nsys.stdin.readline()\nsys.stdout.write('SET:ABCD')\nsys.stdout.flush()\nsys.stdin.read()\n",
    )
    .unwrap();
    let tcp = dir.path().join("tcp.py");
    std::fs::write(
        &tcp,
        "import socket, sys\ns = socket.create_connection((sys.argv[1], int(sys.argv[2])))\n\
         s.recv(100)\ns.sendall(b'SET:ABCD')\nwhile s.recv(100):\n    pass\n",
    )
    .unwrap();
    for seat in [
        format!("cmd:python3 {}", pipe.display()),
        format!("tcp-cmd:python3 {} {{host}} {{port}}", tcp.display()),
    ] {
        let (code, out, err) = check(&[
            "geister",
            "--rules",
            "gpw",
            "--seat",
            &seat,
            "--seeds",
            "1",
            "--opt",
            "set_timeout_ms=300",
        ]);
        assert_eq!(code, Some(4), "{seat}: {out}{err}");
        assert!(
            out.contains(
                "set-up: not_ready: SET?: timeout: no reply to SET? within 300 ms: your bot wrote \"SET:ABCD\" but no newline after it; end each reply with \"\\n\" and flush"
            ),
            "{seat}: {out}"
        );
        // The same start-up failure twice: the rule set's other matches are not played.
        assert_eq!(out.matches("FAIL  ").count(), 2, "{seat}: {out}");
        assert!(
            out.contains("SKIP  your bot failed its start-up the same way twice under rules gpw: check did not play the other 1 planned match of these rules (fix the start-up first)\n"),
            "{seat}: {out}"
        );
    }
}
