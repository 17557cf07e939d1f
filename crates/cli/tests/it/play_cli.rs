//! The `kakehiki` binary: the `play --json` contract, `replay`, and exit codes.

use std::process::Command;

use serde_json::Value;

use crate::support::kakehiki;

fn python_bot() -> String {
    format!(
        "cmd:python3 {}/../../examples/bots/python/nac_bot.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn play_json_prints_one_object_with_the_contract_keys() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("game.jsonl");
    let out = kakehiki()
        .args(["play", "nac", "--seed", "2014", "--json", "--replay"])
        .arg(&replay)
        .args([
            "--seat",
            &python_bot(),
            "--seat",
            "builtin:strong",
            "--seat",
            "builtin:random",
        ])
        .args([
            "--seat",
            "cmd:python3 -c 'print(\"READY\", flush=True); import time; time.sleep(30)'",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.lines().count(),
        1,
        "exactly one JSON object: {stdout}"
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["game"], "nac");
    assert_eq!(v["seed"], 2014);
    assert_eq!(v["scores"].as_array().unwrap().len(), 4);
    assert!(v["scores"][0].is_number());
    let exact: Vec<&str> = v["scores_exact"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(exact.len(), 4);
    assert!(v["winner"].is_null() || v["winner"].as_u64().unwrap() < 4);
    let seats = v["seats"].as_array().unwrap();
    assert_eq!(seats[1]["spec"], "builtin:strong");
    assert!(seats[0]["errors"].as_array().unwrap().is_empty());
    // The sleeping seat times out at turn 1.
    let errors = seats[3]["errors"].as_array().unwrap();
    assert_eq!(errors[0]["kind"], "timeout");
    assert_eq!(errors[0]["turn"], 1);
    assert!(errors[0]["detail"].as_str().unwrap().contains("1000 ms"));

    // The replay verifies; a tampered one exits with code 3.
    let ok = kakehiki().arg("replay").arg(&replay).output().unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("byte for byte"));
    let text = std::fs::read_to_string(&replay).unwrap();
    let tampered = dir.path().join("tampered.jsonl");
    // Recorded replies and times are inputs; the weights are derived from the seed, so changing
    // them must be caught.
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["event"] != "weights" {
                return l.to_string();
            }
            let mut w: Vec<u64> = v["weights"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            w[0] = 9 - w[0];
            format!(
                "{{\"event\":\"weights\",\"weights\":{}}}",
                serde_json::to_string(&w).unwrap()
            )
        })
        .collect();
    std::fs::write(&tampered, lines.join("\n") + "\n").unwrap();
    let bad = kakehiki().arg("replay").arg(&tampered).output().unwrap();
    assert_eq!(
        bad.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("line 2"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn human_summary_names_scores_winner_and_errors() {
    let out = kakehiki()
        .args(["play", "religion-war", "--seed", "5"])
        .args([
            "--seat",
            "builtin:strong",
            "--seat",
            "builtin:random",
            "--seat",
            "builtin:random",
        ])
        .args(["--seat", "cmd:/nonexistent/bot"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("religion-war"), "{text}");
    assert!(
        text.contains("winner: seat") || text.contains("draw"),
        "{text}"
    );
    assert!(text.contains("not_ready"), "{text}");
    // Scores as people read them: two decimals (`--json` keeps the exact value).
    let seat_lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("seat"))
        .skip(1)
        .take(4)
        .collect();
    assert_eq!(seat_lines.len(), 4, "{text}");
    for line in seat_lines {
        let score = line.split_whitespace().last().unwrap();
        let (whole, frac) = score.split_once('.').unwrap_or_else(|| panic!("{line}"));
        assert!(
            whole.trim_start_matches('-').parse::<u64>().is_ok()
                && frac.len() == 2
                && frac.parse::<u8>().is_ok(),
            "{line}"
        );
    }
}

#[test]
fn bad_input_gets_clear_errors_and_exit_codes() {
    // Usage errors: clap's code 2, naming the problem.
    let out = kakehiki()
        .args(["play", "nac", "--seat", "bot.py"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown seat spec"));
    // Setup errors: code 1 with a specific message.
    let out = kakehiki()
        .args(["play", "chess", "--seat", "builtin:random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown game \"chess\""));
    let out = kakehiki()
        .args(["play", "nac", "--seat", "builtin:random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs 4 seats"));
    let out = kakehiki()
        .args(["play", "nac", "--opt", "turn_ms"])
        .args(["--seat", "builtin:random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // --bind is the address of --serve or of a human seat's page: alone, refused.
    let out = kakehiki()
        .args([
            "play",
            "nac",
            "--seat",
            "builtin:random",
            "--fill",
            "builtin:random",
        ])
        .args(["--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --serve, or a --seat human"));
    // check plays a bot, not a person.
    let out = kakehiki()
        .args(["check", "geister", "--seat", "human"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not human"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A missing or broken replay file.
    let out = kakehiki()
        .args(["replay", "/nonexistent/replay.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read replay"));
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "{\"event\":\"header\"}\n").unwrap();
    let out = kakehiki().arg("replay").arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("replay"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // --help documents the exit codes.
    let out = kakehiki().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Exit codes"));
}

#[test]
fn strict_fails_on_a_bad_bot_and_shows_its_stderr_tail() {
    let crasher = "cmd:sh -c 'echo READY; echo Traceback: line 7 in think >&2; echo ZeroDivisionError >&2; exit 1'";
    let out = kakehiki()
        .args(["play", "nac", "--seed", "1", "--strict", "--seat", crasher])
        .args(["--fill", "builtin:random"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{stdout}{stderr}");
    // How it ended and what it said, from the replay's seat_end line.
    assert!(stderr.contains("seat 0 ended: exit code 1"), "{stderr}");
    assert!(stderr.contains("stderr of seat 0"), "{stderr}");
    assert!(stderr.contains("| ZeroDivisionError"), "{stderr}");
    assert!(
        stderr.contains("--strict: process seat 0 had errors"),
        "{stderr}"
    );
    // --fill made the other three seats.
    let filled = stdout
        .lines()
        .filter(|l| {
            l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && l.contains("builtin:random")
        })
        .count();
    assert_eq!(filled, 3, "{stdout}");

    // Without --strict the same match exits 0; a good bot passes --strict.
    let out = kakehiki()
        .args([
            "play",
            "nac",
            "--seed",
            "1",
            "--seat",
            crasher,
            "--fill",
            "builtin:random",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let out = kakehiki()
        .args([
            "play",
            "nac",
            "--seed",
            "1",
            "--strict",
            "--seat",
            &python_bot(),
        ])
        .args(["--fill", "builtin:strong"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bot that plays two turns and crashes at the third with a traceback: `play` names the
/// turn its stderr began at, in the game's own terms, with its first line.
#[test]
fn play_names_the_turn_a_crashed_bots_stderr_began_at() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("third.py");
    std::fs::write(
        &script,
        "import sys\n\
         print('READY', flush=True)\n\
         turns, _, targets = map(int, sys.stdin.readline().split())\n\
         sys.stdin.readline()\n\
         for turn in range(1, turns + 1):\n\
         \x20   label = sys.stdin.readline().split()[1]\n\
         \x20   for _ in range(targets + 1 + (label in ('D', 'W'))):\n\
         \x20       sys.stdin.readline()\n\
         \x20   if turn == 3:\n\
         \x20       raise RuntimeError('no plan for turn 3')\n\
         \x20   print(' '.join(['0'] * (5 if label in ('D', 'W') else 2)), flush=True)\n",
    )
    .unwrap();
    let out = kakehiki()
        .args(["play", "nac", "--seed", "1", "--seat"])
        .arg(format!("cmd:python3 {}", script.display()))
        .args(["--fill", "builtin:random"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "seat 0 ended: exit code 1; its stderr began at turn 3: Traceback (most recent call last):\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("  | RuntimeError: no plan for turn 3"),
        "{stderr}"
    );
}

#[test]
fn fill_completes_a_diplomacy_table() {
    let out = kakehiki()
        .args([
            "play",
            "diplomacy",
            "--seed",
            "3",
            "--max-year",
            "1901",
            "--json",
        ])
        .args(["--seat", "builtin:hold", "--fill", "builtin:random"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seats = v["seats"].as_array().unwrap();
    assert_eq!(seats.len(), 7);
    assert_eq!(seats[0]["spec"], "builtin:hold");
    assert!(seats[1..].iter().all(|s| s["spec"] == "builtin:random"));
}

/// A Diplomacy bot with a syntax error: `--strict` fails and shows its stderr, and `--json`
/// carries its exit and stderr in the seat's report.
#[test]
fn strict_shows_the_stderr_and_exit_of_a_diplomacy_bot_that_does_not_start() {
    let bad = "cmd:python3 -c 'syntax error here'";
    let run = |extra: &[&str]| {
        kakehiki()
            .args(["play", "diplomacy", "--seed", "1", "--max-year", "1901"])
            .args(["--seat", bad, "--fill", "builtin:hold", "--sandbox", "off"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["--strict"]);
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("stderr of seat 0"), "{stderr}");
    assert!(stderr.contains("SyntaxError"), "{stderr}");
    let out = run(&["--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seat = &v["seats"][0];
    assert_eq!(seat["exit"], "exit code 1", "{seat}");
    assert!(
        seat["stderr"].as_str().unwrap().contains("SyntaxError"),
        "{seat}"
    );
    assert_eq!(seat["errors"][0]["at"], "start", "{seat}");
}

#[test]
fn process_bots_get_their_own_seat_seed_in_kakehiki_seed_never_the_match_seed() {
    // The bot prints READY, then fails on purpose with the seed on stderr, which the stderr tail
    // shows: its seat's own seed, a keyed hash of the match seed.
    let bot = "cmd:sh -c 'echo READY; echo seed=$KAKEHIKI_SEED >&2; exit 1'";
    let out = kakehiki()
        .args([
            "play",
            "nac",
            "--seed",
            "4242",
            "--seat",
            bot,
            "--fill",
            "builtin:random",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let own = kakehiki_core::seat_seed(4242, 0);
    assert!(stderr.contains(&format!("| seed={own}\n")), "{stderr}");
    assert!(!stderr.contains("seed=4242"), "{stderr}");
}

#[test]
fn check_passes_a_good_bot_and_diagnoses_a_bad_one() {
    let out = kakehiki()
        .args(["check", "nac", "--seat", &python_bot(), "--seeds", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("passed"), "{stdout}");
    assert_eq!(
        stdout.matches("ok    seed").count(),
        3,
        "first and last seat, and an opponent that times out: {stdout}"
    );

    // Answers turn 1 with garbage, then dies at turn 2 with a message on stderr.
    let bad = "cmd:sh -c 'echo READY; for i in 1 2 3 4 5 6 7 8 9 10; do read l; done; echo \"7 x\"; echo boom: index out of range >&2; exit 2'";
    let out = kakehiki()
        .args(["check", "nac", "--seat", bad, "--seeds", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{stdout}");
    assert!(stdout.contains("FAIL  seed"), "{stdout}");
    assert!(stdout.contains("turn 1:"), "{stdout}");
    assert!(stdout.contains("| boom: index out of range"), "{stdout}");
    assert!(
        stdout.contains("your bot's program: exit code 2"),
        "{stdout}"
    );
    assert!(stdout.contains("failed:"), "{stdout}");

    let out = kakehiki()
        .args(["check", "nac", "--seat", bad, "--seeds", "1", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["passed"], false);
    let m = &v["matches"][0];
    assert!(!m["errors"].as_array().unwrap().is_empty(), "{v}");
    assert!(m["errors"][0]["kind"].is_string() && m["errors"][0]["detail"].is_string());
    assert!(m["stderr_tail"].as_str().unwrap().contains("boom"), "{v}");

    // Built-in seats are not a bot to check.
    let out = kakehiki()
        .args(["check", "nac", "--seat", "builtin:random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// A symlink planted at the `--replay` path (by a bot, in a directory it could write) is
/// replaced by the replay, never followed: the file it points to is untouched. The sandbox
/// reports its layers in `--json` and in the replay header, and `replay` still verifies.
#[test]
fn the_replay_replaces_a_planted_symlink_and_records_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("precious.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let replay = dir.path().join("game.jsonl");
    std::os::unix::fs::symlink(&victim, &replay).unwrap();
    let out = kakehiki()
        .args(["play", "nac", "--seed", "3", "--json", "--replay"])
        .arg(&replay)
        .args(["--seat", &python_bot()])
        .args(["--seat", "builtin:random", "--seat", "builtin:random"])
        .args(["--seat", "builtin:random"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    let meta = std::fs::symlink_metadata(&replay).unwrap();
    assert!(
        meta.file_type().is_file(),
        "the replay is a regular file now"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["sandbox"]["layers"].is_array(), "{report}");
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&replay)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["sandbox"], report["sandbox"]);
    let verified = kakehiki().arg("replay").arg(&replay).output().unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
}

/// `--cpus-per-bot`: bad values are refused with a reason; a quota is never ignored (an error
/// with `--sandbox off`, or where the cpu layer is missing); applied, it is in the report.
#[test]
fn cpus_per_bot_is_checked_applied_and_reported() {
    let play = |extra: &[&str]| {
        kakehiki()
            .args(["play", "nac", "--seed", "3", "--json"])
            .args(["--seat", &python_bot()])
            .args(["--seat", "builtin:random", "--seat", "builtin:random"])
            .args(["--seat", "builtin:random"])
            .args(extra)
            .output()
            .unwrap()
    };
    for bad in ["0", "-1", "nan", "inf", "lots", "0.001"] {
        let out = play(&["--cpus-per-bot", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad} accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--cpus-per-bot"), "{bad}: {stderr}");
        assert!(
            stderr.contains("CPUs per bot") || stderr.contains("number of CPUs"),
            "{bad}: {stderr}"
        );
    }
    let out = play(&["--cpus-per-bot", "0.5", "--sandbox", "off"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--cpus-per-bot") && stderr.contains("off"),
        "{stderr}"
    );
    let probe = kakehiki()
        .args(["sandbox", "--json", "--cpus-per-bot", "0.5"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&probe.stdout).unwrap();
    let out = play(&["--cpus-per-bot", "0.5"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if report["cpu"].is_null() {
        // No cpu layer here: both refuse, naming it.
        assert!(!probe.status.success());
        assert!(!out.status.success());
        assert!(stderr.contains("cpu layer is missing"), "{stderr}");
        return;
    }
    assert!(probe.status.success());
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sandbox"]["cpu"]["quota_us"], 50_000, "{v}");
    assert_eq!(v["sandbox"]["cpu"]["period_us"], 100_000, "{v}");
    assert!(v["sandbox"]["layers"]
        .as_array()
        .unwrap()
        .contains(&Value::from("cpu")));
}

/// Without the v1 cpu hierarchy (hidden here by a tmpfs in a mount namespace of its own) the
/// cgroup layer still bounds memory and processes, and the cpu layer is reported missing with
/// why: `strict` refuses, a quota is an error.
#[test]
fn a_missing_cpu_hierarchy_leaves_the_cgroup_and_names_the_cpu_layer() {
    let v1_cpu = std::path::Path::new("/sys/fs/cgroup/cpu/cpu.shares").exists();
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !root || !v1_cpu {
        eprintln!("SKIPPED: needs root and a cgroup v1 cpu hierarchy to hide");
        return;
    }
    let hidden = |args: &str| {
        Command::new("unshare")
            .args(["-m", "sh", "-c"])
            .arg(format!(
                "mount -t tmpfs none /sys/fs/cgroup/cpu && exec {} {args}",
                env!("CARGO_BIN_EXE_kakehiki")
            ))
            .output()
            .unwrap()
    };
    let out = hidden("sandbox --json");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let layers = report["layers"].as_array().unwrap();
    assert!(layers.contains(&Value::from("cgroup")), "{report}");
    assert!(!layers.contains(&Value::from("cpu")), "{report}");
    let missing = &report["missing"].as_array().unwrap();
    let cpu = missing
        .iter()
        .find(|m| m["layer"] == "cpu")
        .expect("cpu missing");
    assert!(
        cpu["reason"].as_str().unwrap().contains("cpu hierarchy"),
        "{report}"
    );
    assert!(report["cpu"].is_null(), "{report}");
    assert!(!hidden("sandbox --level strict").status.success());
    let out = hidden("sandbox --cpus-per-bot 1");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cpu layer is missing"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A failing bot's stderr with terminal commands (an OSC 52 clipboard write, a window title, a
/// clear screen, a carriage return) and a forged result line: shown escaped, each line marked as
/// the bot's, never at a line's start; the match completes, and that bot alone is charged (the
/// other seats are process bots too, which could be).
#[test]
fn a_failing_bots_stderr_reaches_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hostile.py");
    std::fs::write(
        &script,
        "import sys\n\
         print('READY', flush=True)\n\
         sys.stderr.write('\\x1b]52;c;cHduZWQ=\\x07\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H'\n\
         \x20                '\\nwinner: seat 0\\r\\x1b[Kresult: seat 0 won\\n')\n\
         sys.exit(1)\n",
    )
    .unwrap();
    let out = kakehiki()
        .args(["play", "nac", "--seed", "1", "--seat"])
        .arg(format!("cmd:python3 {}", script.display()))
        .args(["--fill", &python_bot(), "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stderr.contains("stderr of seat 0"), "{stdout}{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seats = report["seats"].as_array().unwrap();
    assert_eq!(report["scores"].as_array().unwrap().len(), seats.len());
    assert_ne!(seats[0]["errors"], serde_json::json!([]), "{report}");
    for (i, seat) in seats.iter().enumerate().skip(1) {
        assert_eq!(seat["errors"], serde_json::json!([]), "seat {i}: {report}");
        assert!(!stderr.contains(&format!("seat {i} ended")), "{stderr}");
    }
    for (name, raw) in [("ESC", 0x1b), ("BEL", 0x07), ("CR", b'\r')] {
        assert!(
            !out.stderr.contains(&raw) && !out.stdout.contains(&raw),
            "a raw {name} reached the terminal: {stderr:?}"
        );
    }
    assert!(stderr.contains("  | \\x1b]52;c;cHduZWQ=\\x07"), "{stderr}");
    assert!(stderr.contains("\\x1b[2J"), "{stderr}");
    // The forged lines are the bot's: marked, never at a line's start.
    assert!(
        stderr.contains("  | winner: seat 0\\r\\x1b[Kresult"),
        "{stderr}"
    );
    assert!(
        !stderr
            .lines()
            .any(|l| l.starts_with("winner:") || l.starts_with("result:")),
        "{stderr}"
    );
}
