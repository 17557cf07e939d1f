//! Every starter bot under `starters/<game>/<lang>/` is built (C++ with g++, Java with javac, Rust
//! with plain rustc; Python and JavaScript run as they are) and plays full matches through the `kakehiki` binary against built-in bots,
//! in the first and in the last seat; a match must finish with no error charged to the starter's
//! seat, the same seed must give the same replies (the starters seed from `KAKEHIKI_SEED`), and
//! `kakehiki check` must pass it. A missing compiler fails the test with the Debian
//! package to install: CI installs them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{kakehiki, repo};

fn starter_dir(game: &str, lang: &str) -> PathBuf {
    repo()
        .join("starters")
        .join(game)
        .join(lang)
        .canonicalize()
        .unwrap_or_else(|e| panic!("starters/{game}/{lang}: {e}"))
}

/// Fail (not skip) when a tool the starters need is missing.
fn require(tool: &str, package: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        found,
        "the starter bot tests need `{tool}` on PATH: install the Debian package `{package}` \
         (CI's .ci/run installs it)"
    );
}

fn run_ok(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A built starter: its program's command line (without the `cmd:`/`tcp-cmd:` prefix).
struct Built {
    _dir: tempfile::TempDir,
    command: String,
}

/// Build the starter of `game` in `lang` into a fresh temporary directory.
fn build(game: &str, lang: &str) -> Built {
    let src = starter_dir(game, lang);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let command = match lang {
        "python" => {
            require("python3", "python3");
            format!("python3 {}", src.join("bot.py").display())
        }
        "javascript" => {
            require("node", "nodejs");
            format!("node {}", src.join("bot.js").display())
        }
        "cpp" => {
            require("g++", "g++");
            let exe = dir.path().join("bot");
            run_ok(
                Command::new("g++")
                    .args(["-O2", "-std=c++17", "-Wall", "-Werror", "-o"])
                    .arg(&exe)
                    .arg(src.join("bot.cpp")),
                &format!("g++ starters/{game}/cpp/bot.cpp"),
            );
            exe.display().to_string()
        }
        "java" => {
            require("javac", "default-jdk-headless");
            require("java", "default-jdk-headless");
            run_ok(
                Command::new("javac")
                    .args(["-Xlint:all", "-Werror", "-d", &out])
                    .arg(src.join("Main.java")),
                &format!("javac starters/{game}/java/Main.java"),
            );
            format!("java -cp {out} Main")
        }
        "rust" => {
            require("rustc", "rustc");
            let exe = dir.path().join("bot");
            run_ok(
                Command::new("rustc")
                    .args(["-O", "--edition", "2021", "-D", "warnings", "-o"])
                    .arg(&exe)
                    .arg(src.join("main.rs")),
                &format!("rustc starters/{game}/rust/main.rs"),
            );
            exe.display().to_string()
        }
        other => panic!("unknown language {other}"),
    };
    Built { _dir: dir, command }
}

/// Play one match with `args` (seats, options) and return the `--json` result.
fn play(game: &str, seed: u64, args: &[String]) -> Value {
    let out = kakehiki()
        .args(["play", game, "--json", "--seed", &seed.to_string()])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kakehiki play {game} {args:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// `kakehiki check GAME --seat SPEC` passes (exit 0), as the README tells contestants.
fn check(game: &str, spec: &str) {
    let out = kakehiki()
        .args(["check", game, "--seat", spec])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kakehiki check {game} --seat '{spec}' failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every reply line a replay records (`raw`, `line`, `reply`), seat by seat (the seat of the
/// nearest enclosing object that names one), each seat's in order. Two seats that answer at the
/// same moment (a built-in bot and a process, Geister's placements) may be recorded in either
/// order: that interleaving is the machine's timing, not the seed's.
fn replies(replay: &Path) -> Vec<(Option<u64>, Value)> {
    fn walk(v: &Value, seat: Option<u64>, out: &mut Vec<(Option<u64>, Value)>) {
        match v {
            Value::Object(m) => {
                let seat = m.get("seat").and_then(Value::as_u64).or(seat);
                for (k, v) in m {
                    if matches!(k.as_str(), "raw" | "line" | "reply") {
                        out.push((seat, v.clone()));
                    } else {
                        walk(v, seat, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, seat, out)),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(replay).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        walk(&serde_json::from_str(line).unwrap(), None, &mut out);
    }
    // Stable: each seat's replies keep their order.
    out.sort_by_key(|(seat, _)| *seat);
    out
}

/// The starter takes its randomness from the match seed (`KAKEHIKI_SEED`): two matches with the
/// same seed record the same replies.
fn assert_reproducible(game: &str, seed: u64, args: &[String], what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<Vec<(Option<u64>, Value)>> = (0..2)
        .map(|i| {
            let replay = dir.path().join(format!("{i}.jsonl"));
            let mut a = args.to_vec();
            a.extend(["--replay".to_string(), replay.display().to_string()]);
            play(game, seed, &a);
            replies(&replay)
        })
        .collect();
    assert!(!runs[0].is_empty(), "{what}: no replies in the replay");
    assert_eq!(runs[0], runs[1], "{what}: the same seed gave other replies");
}

/// The starter's seat finished the match with no error recorded against it.
fn assert_clean(result: &Value, seat: usize, what: &str) {
    let seats = result["seats"].as_array().expect("seats");
    let errors = seats[seat]["errors"].as_array().expect("errors");
    assert!(
        errors.is_empty(),
        "{what}: errors charged to the starter's seat {seat}: {errors:#?}\nresult: {result}"
    );
    assert!(
        result["scores"]
            .as_array()
            .is_some_and(|s| s.len() == seats.len()),
        "{what}: no scores: {result}"
    );
}

fn seats(list: &[&str]) -> Vec<String> {
    list.iter()
        .flat_map(|s| ["--seat".to_string(), s.to_string()])
        .collect()
}

/// `nac` and `religion-war`: the starter in seat 0 and in seat 3 against the strong bot.
fn nac_family(game: &str, lang: &str) {
    let bot = build(game, lang);
    let me = format!("cmd:{}", bot.command);
    for (seed, seat) in [(2014, 0), (1108, 3)] {
        let mut list = vec!["builtin:strong", "builtin:random", "builtin:strong"];
        list.insert(seat, &me);
        let result = play(game, seed, &seats(&list));
        assert_clean(&result, seat, &format!("{game}/{lang} seed {seed}"));
    }
    let list = [
        me.as_str(),
        "builtin:random",
        "builtin:random",
        "builtin:random",
    ];
    assert_reproducible(game, 99, &seats(&list), &format!("{game}/{lang}"));
    check(game, &me);
}

/// `geister`: over TCP under `gpw` in seat 0 against the strong bot, over stdin/stdout under
/// `seed` in seat 1.
fn geister_game(game: &str, lang: &str) {
    let bot = build(game, lang);
    let tcp = format!("tcp-cmd:{} {{host}} {{port}}", bot.command);
    let stdio = format!("cmd:{}", bot.command);
    for (seed, rules, list, seat) in [
        (7, "gpw", [tcp.as_str(), "builtin:strong"], 0),
        (8, "seed", ["builtin:random", stdio.as_str()], 1),
    ] {
        let mut args = seats(&list);
        args.extend(["--rules".to_string(), rules.to_string()]);
        let result = play(game, seed, &args);
        assert_clean(&result, seat, &format!("{game}/{lang} {rules} seed {seed}"));
    }
    let list = [stdio.as_str(), "builtin:random"];
    assert_reproducible(game, 99, &seats(&list), &format!("{game}/{lang}"));
    check(game, &tcp);
}

/// `diplomacy`: AUSTRIA against six strong bots with a press round (its units are dislodged
/// and retreat), TURKEY against random bots.
fn diplomacy_game(game: &str, lang: &str) {
    let bot = build(game, lang);
    let me = format!("cmd:{}", bot.command);
    for (seed, seat, fill) in [(1, 0, "builtin:strong"), (2, 6, "builtin:random")] {
        let mut list = vec![fill; 6];
        list.insert(seat, &me);
        let mut args = seats(&list);
        args.extend(
            ["--max-year", "1906", "--opt", "press_rounds=1"]
                .iter()
                .map(|s| s.to_string()),
        );
        let result = play(game, seed, &args);
        assert_clean(&result, seat, &format!("{game}/{lang} seed {seed}"));
    }
    let mut list = vec!["builtin:random"; 6];
    list.insert(0, &me);
    let mut args = seats(&list);
    args.extend(
        ["--max-year", "1903", "--opt", "press_rounds=1"]
            .iter()
            .map(|s| s.to_string()),
    );
    assert_reproducible(game, 99, &args, &format!("{game}/{lang}"));
    check(game, &me);
    diplomacy_adjustments(&bot.command, &format!("{game}/{lang}"));
}

/// A holding bot never gains a centre in play, so its builds and removals are checked on
/// adjustment phase messages of the referee's shape written to it directly: the orders must be
/// legal (armies on distinct offered home centres; removals of its own units, as many as owed).
fn diplomacy_adjustments(command: &str, what: &str) {
    use std::io::Write;
    let powers = r#"["AUSTRIA","ENGLAND","FRANCE","GERMANY","ITALY","RUSSIA","TURKEY"]"#;
    let state = r#"{"centers":{"AUSTRIA":["BUD","GRE","SER","TRI","VIE"]},"civil_disorder":[],"dislodged":{},"units":{"AUSTRIA":["A GAL","A SER","F GRE"]}}"#;
    let input = [
        format!(
            r#"{{"limits":{{"adjustment_ms":2000,"movement_ms":5000,"press_chars":1000,"press_messages":6,"press_ms":2000,"retreat_ms":2000,"start_ms":10000}},"map":"standard","power":"AUSTRIA","powers":{powers},"rules":{{"draw_votes":false,"max_year":1920,"press_rounds":0,"solo_centers":18}},"seq":1,"type":"start"}}"#
        ),
        format!(
            r#"{{"builds":2,"deadline_ms":2000,"history":[],"inbox":[],"orderable":["BUD","TRI","VIE"],"phase":"W1901A","seq":2,"state":{state},"type":"phase"}}"#
        ),
        format!(
            r#"{{"deadline_ms":2000,"history":[],"inbox":[],"orderable":["A GAL","A SER","F GRE"],"phase":"W1902A","removals":1,"seq":3,"state":{state},"type":"phase"}}"#
        ),
        r#"{"centers":{"AUSTRIA":2},"draw":[],"reason":"solo","seq":4,"type":"end","winner":"TURKEY"}"#
            .to_string(),
    ];
    let argv: Vec<&str> = command.split_whitespace().collect();
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .env("KAKEHIKI_SEED", "3")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in &input {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: exit {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: {e}: {l}")))
        .collect();
    assert_eq!(
        replies.len(),
        3,
        "{what}: one reply per request: {replies:?}"
    );
    for (i, r) in replies.iter().enumerate() {
        assert_eq!(r["seq"], i as u64 + 1, "{what}: seq echoed: {r}");
    }
    assert_eq!(replies[0]["ready"], true, "{what}: {}", replies[0]);
    let orders = |r: &Value| -> Vec<String> {
        r["orders"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: no orders list: {r}"))
            .iter()
            .map(|o| o.as_str().unwrap().to_string())
            .collect()
    };
    let builds = orders(&replies[1]);
    assert_eq!(builds.len(), 2, "{what}: two builds owed: {builds:?}");
    for b in &builds {
        let site = b
            .strip_prefix("A ")
            .and_then(|b| b.strip_suffix(" B"))
            .unwrap_or_else(|| panic!("{what}: not an army build: {b}"));
        assert!(["BUD", "TRI", "VIE"].contains(&site), "{what}: {b}");
    }
    assert_ne!(builds[0], builds[1], "{what}: two builds on one site");
    let removals = orders(&replies[2]);
    assert_eq!(removals.len(), 1, "{what}: one removal owed: {removals:?}");
    let unit = removals[0].strip_suffix(" D").unwrap_or("");
    assert!(
        ["A GAL", "A SER", "F GRE"].contains(&unit),
        "{what}: not a removal of an own unit: {removals:?}"
    );
}

/// `werewolf`: a 15-player village of sample agents with the starter as the seer, a werewolf
/// (seat 0) and the bodyguard (seat 14), each role asked for with ROLE; then a `seed-2015` game.
fn werewolf_game(game: &str, lang: &str) {
    let bot = build(game, lang);
    for (seed, seat, role, rules) in [
        (4, 0, "SEER", "aiwolf-0.6"),
        (5, 0, "WEREWOLF", "aiwolf-0.6"),
        (6, 14, "BODYGUARD", "aiwolf-0.6"),
        (7, 14, "none", "seed-2015"),
    ] {
        let me = format!("tcp-cmd:{} {{host}} {{port}} starter {role}", bot.command);
        let mut list = vec!["builtin:sample"; 14];
        list.insert(seat, &me);
        let mut args = seats(&list);
        args.extend(["--rules".to_string(), rules.to_string()]);
        let result = play(game, seed, &args);
        let what = format!("{game}/{lang} {rules} seed {seed} as {role}");
        assert_clean(&result, seat, &what);
        let mine = &result["seats"][seat];
        assert_eq!(mine["name"], "starter", "{what}: not seated: {mine}");
        assert_eq!(mine["counts"]["silent_games"], 0, "{what}: {mine}");
        if role != "none" {
            assert_eq!(
                mine["role"], role,
                "{what}: the ROLE request was not honoured: {mine}"
            );
        }
    }
    werewolf_set(&bot.command, &format!("{game}/{lang}"));
    let me = format!("tcp-cmd:{} {{host}} {{port}}", bot.command);
    let mut list = vec!["builtin:sample"; 14];
    list.insert(0, &me);
    assert_reproducible(game, 99, &seats(&list), &format!("{game}/{lang}"));
    check(game, &me);
}

/// Five starter agents connect on their own to `kakehiki serve werewolf` and play a set of three
/// games on the same connections (as at the contest): every one plays every game without a
/// timeout, an invalid reply or a silent game.
fn werewolf_set(command: &str, what: &str) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let mut server = kakehiki()
        .args(["serve", "werewolf", "--host", "127.0.0.1", "--port", &port])
        .args(["--players", "5", "--games", "3", "--seed", "12", "--json"])
        .args(["--opt", "time_limit_ms=5000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let argv: Vec<&str> = command.split_whitespace().collect();
    let mut agents: Vec<std::process::Child> = (1..=5)
        .map(|i| {
            Command::new(argv[0])
                .args(&argv[1..])
                .args(["127.0.0.1", &port, &format!("agent{i}")])
                .env("KAKEHIKI_SEED", i.to_string())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    // The set ends on its own; a hang fails the test instead of blocking it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while server.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = server.kill();
            agents.iter_mut().for_each(|a| drop(a.kill()));
            panic!("{what}: the set of three games did not finish in 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = server.wait_with_output().unwrap();
    for mut a in agents {
        let _ = a.wait();
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: serve failed ({}): {stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let list = v["agents"].as_array().expect("agents");
    assert_eq!(list.len(), 5, "{what}: {v}");
    for a in list {
        assert_eq!(a["games"], 3, "{what}: {a}");
        for key in ["invalid", "silent_games", "timeouts"] {
            assert_eq!(a[key], 0, "{what}: {key}: {a}");
        }
    }
}

/// `werewolf-nlp`: the starter as a `ws-cmd:` seat (WebSocket, `{url}`) in villages of 5 and 9
/// mixed with the four built-in agents, in the first and the last seat, in seeds that make it
/// the seer, a werewolf (alone, and with a partner to whisper with), the bodyguard and the
/// medium: no error charged to it, every request of its role answered, every target a player's
/// name other than its own; then the same seed twice, and `kakehiki check`.
fn werewolf_nlp_game(game: &str, lang: &str) {
    let bot = build(game, lang);
    let me = format!("ws-cmd:{} {{url}}", bot.command);
    let builtins = [
        "builtin:sample",
        "builtin:random",
        "builtin:sample-en",
        "builtin:random-en",
    ];
    let village = |n: usize, seat: usize| -> Vec<String> {
        let list: Vec<&str> = (0..n)
            .map(|i| {
                if i == seat {
                    me.as_str()
                } else {
                    builtins[i % 4]
                }
            })
            .collect();
        seats(&list)
    };
    let dir = tempfile::tempdir().unwrap();
    for (seed, n, seat, role, requests) in [
        (5, 5, 0, "WEREWOLF", &["TALK", "VOTE", "ATTACK"][..]),
        (2, 5, 4, "SEER", &["TALK", "DIVINE", "VOTE"][..]),
        (
            3,
            9,
            0,
            "WEREWOLF",
            &["TALK", "WHISPER", "VOTE", "ATTACK"][..],
        ),
        (2, 9, 8, "BODYGUARD", &["TALK", "VOTE", "GUARD"][..]),
        (4, 9, 8, "MEDIUM", &["TALK", "VOTE"][..]),
    ] {
        let what = format!("{game}/{lang} seed {seed}, seat {seat} of {n}");
        let replay = dir.path().join(format!("{seed}-{n}-{seat}.jsonl"));
        let mut args = village(n, seat);
        args.extend(["--replay".to_string(), replay.display().to_string()]);
        let result = play(game, seed, &args);
        assert_clean(&result, seat, &what);
        let events: Vec<Value> = std::fs::read_to_string(&replay)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // The game log's status lines: `day,status,idx,ROLE,ALIVE|DEAD,name,Agent[NN]`.
        let end = events.last().expect("an end event");
        let status: Vec<Vec<String>> = end["game_log"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: no game log: {end}"))
            .iter()
            .map(|l| l.as_str().unwrap().split(',').map(String::from).collect())
            .filter(|f: &Vec<String>| f.len() == 7 && f[0] == "0" && f[1] == "status")
            .collect();
        assert_eq!(status.len(), n, "{what}: {status:?}");
        let mine = &status[seat];
        assert_eq!(mine[5], "starter", "{what}: not seated: {mine:?}");
        assert_eq!(
            mine[3], role,
            "{what}: the seed gives another role: {mine:?}"
        );
        let names: Vec<&str> = status.iter().map(|f| f[6].as_str()).collect();
        // The seat record: the starter's answers (its NAME at connection aside).
        let answers: Vec<&Value> = events
            .iter()
            .filter(|e| {
                e["event"] == "seat"
                    && e["seat"] == seat as u64
                    && e["outcome"] == "reply"
                    && e["at"] != "connect"
            })
            .collect();
        for r in requests {
            assert!(
                answers.iter().any(|a| a["kind"] == *r),
                "{what}: the starter as {role} never answered {r}: {answers:?}"
            );
        }
        for a in &answers {
            let text = a["raw"].as_str().unwrap_or("").trim_end_matches('\n');
            match a["kind"].as_str().unwrap_or("") {
                "VOTE" | "DIVINE" | "GUARD" | "ATTACK" => assert!(
                    names.contains(&text) && text != mine[6],
                    "{what}: not another player's name: {a}"
                ),
                _ => assert!(!text.is_empty(), "{what}: an empty answer: {a}"),
            }
        }
    }
    // The same seed, the same answers (the starter seeds from KAKEHIKI_SEED).
    let runs: Vec<Vec<Value>> = (0..2)
        .map(|i| {
            let replay = dir.path().join(format!("again-{i}.jsonl"));
            let mut args = village(5, 0);
            args.extend(["--replay".to_string(), replay.display().to_string()]);
            play(game, 99, &args);
            std::fs::read_to_string(&replay)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|e| e["event"] == "seat" && e["seat"] == 0 && e["at"] != "connect")
                // What was asked and answered (reply times differ from run to run).
                .map(|e| serde_json::json!([e["at"], e["kind"], e["outcome"], e["raw"]]))
                .collect()
        })
        .collect();
    assert!(
        !runs[0].is_empty(),
        "{game}/{lang}: no answers in the replay"
    );
    assert_eq!(
        runs[0], runs[1],
        "{game}/{lang}: the same seed gave other answers"
    );
    check(game, &me);
}

macro_rules! starter_tests {
    ($runner:ident, $game:literal: $($lang:ident),*) => {
        $(
            #[test]
            fn $lang() {
                $runner($game, stringify!($lang));
            }
        )*
    };
}

mod nac {
    use super::*;
    starter_tests!(nac_family, "nac": python, cpp, java, rust, javascript);
}

mod diplomacy {
    use super::*;
    starter_tests!(diplomacy_game, "diplomacy": python, cpp, java, rust, javascript);
}

mod geister {
    use super::*;
    starter_tests!(geister_game, "geister": python, cpp, java, rust, javascript);
}

mod religion_war {
    use super::*;
    starter_tests!(nac_family, "religion-war": python, cpp, java, rust, javascript);
}

mod werewolf {
    use super::*;
    starter_tests!(werewolf_game, "werewolf": python, cpp, java, rust, javascript);
}

mod werewolf_nlp {
    use super::*;
    starter_tests!(werewolf_nlp_game, "werewolf-nlp": python, java);
}
