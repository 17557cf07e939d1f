//! The test-only example game `rps` (docs/adding-a-game.md) through the same commands as every
//! game, with no rps-specific code outside its rules crate, its driver and its registry line:
//! `play`, `replay` (verify, old formats, `--upgrade`), `check`, `view` (the generic viewer and
//! per-seat panels from the seat record) and `contest run`. It is played here because this test
//! binary of `kakehiki` is built with the referee's `example-game` feature (the cli crate's
//! dev-dependency); `kakehiki games` never lists it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{described, kakehiki};

/// A process bot: paper, except `X` in round 2 and `rock` in round 3 (both invalid); says
/// goodbye on stderr at `END`.
const BOT: &str = r#"while read -r cmd n total mine theirs; do
  if [ "$cmd" = END ]; then echo "bye: won $n, lost $total" >&2; exit 0; fi
  case $n in 2) echo X;; 3) echo rock;; *) echo P;; esac
done
"#;

/// A bot that plays every round well.
const GOOD_BOT: &str = r#"while read -r cmd rest; do [ "$cmd" = END ] && exit 0; echo S; done
"#;

fn write_bot(dir: &Path, name: &str, script: &str) -> String {
    std::fs::write(dir.join(name), script).unwrap();
    format!("cmd:sh {}", dir.join(name).display())
}

/// Play one rps match and return its replay's path.
fn play(dir: &Path, seats: &[&str], extra: &[&str]) -> PathBuf {
    let replay = dir.join("rps.jsonl");
    let mut cmd = kakehiki();
    cmd.args(["play", "rps", "--seed", "5", "--replay"])
        .arg(&replay);
    for s in seats {
        cmd.args(["--seat", s]);
    }
    let out = cmd.args(extra).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    replay
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn rps_is_playable_in_tests_but_never_listed() {
    let out = kakehiki().args(["games", "--json"]).output().unwrap();
    let games: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        games.as_array().unwrap().iter().all(|g| g["name"] != "rps"),
        "{games}"
    );
    let out = kakehiki().arg("games").output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("rps"));
    // ... and yet this binary plays it: the dev-dependency's feature reached it.
    let dir = tempfile::tempdir().unwrap();
    play(dir.path(), &["builtin:rock", "builtin:random"], &[]);
}

/// `play` records the seat record (one `seat` line per request, the program's `seat_end` with
/// its exit and stderr), the report carries the codec's faults with the game's labels, and
/// `replay` re-runs the same driver code on the recorded seats byte for byte.
#[test]
fn play_and_replay_verify_with_the_seat_record() {
    let dir = tempfile::tempdir().unwrap();
    let bot = write_bot(dir.path(), "bot.sh", BOT);
    let replay = dir.path().join("rps.jsonl");
    let out = kakehiki()
        .args(["play", "rps", "--seed", "5", "--json", "--replay"])
        .arg(&replay)
        .args(["--seat", &bot, "--seat", "builtin:random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = &report["seats"][0]["errors"];
    assert_eq!(errors[0]["at"], "round 2", "{report}");
    assert_eq!(errors[0]["kind"], "invalid_reply", "{report}");
    assert_eq!(errors[1]["at"], "round 3", "{report}");
    assert_eq!(report["seats"][0]["exit"], "exit code 0", "{report}");
    assert_eq!(report["seats"][0]["stderr"], "bye: won 0, lost 3\n");
    let events = lines(&replay);
    let seat0: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "seat" && e["seat"] == 0)
        .collect();
    assert_eq!(seat0.len(), 5);
    assert_eq!(seat0[1]["at"], "round 2");
    assert_eq!(seat0[1]["raw"], "X");
    assert_eq!(seat0[1]["limit_ms"], 1000);
    assert!(seat0[1]["time_us"].is_u64(), "a process's reply is timed");
    let end = events.iter().find(|e| e["event"] == "seat_end").unwrap();
    assert_eq!(end["exit_code"], 0);
    assert_eq!(end["stderr"], "bye: won 0, lost 3\n");

    let out = kakehiki().arg("replay").arg(&replay).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    assert!(
        described(&out).contains("byte for byte"),
        "{}",
        described(&out)
    );

    // A changed reply is found: the re-run parses the recorded bytes again.
    let tampered = std::fs::read_to_string(&replay)
        .unwrap()
        .replace(r#""raw":"rock""#, r#""raw":"R""#);
    let t = dir.path().join("tampered.jsonl");
    std::fs::write(&t, tampered).unwrap();
    let out = kakehiki().arg("replay").arg(&t).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", described(&out));
}

/// A replay whose format is older than the driver's is refused before the re-run with a pointer
/// to `--upgrade`; `--upgrade` says what it can and cannot do, naming the formats.
#[test]
fn old_and_unknown_formats_get_specific_errors() {
    let dir = tempfile::tempdir().unwrap();
    let replay = play(
        dir.path(),
        &["builtin:rock", "builtin:random"],
        &["--opt", "rounds=2"],
    );
    let current = std::fs::read_to_string(&replay).unwrap();
    let old = dir.path().join("old.jsonl");
    std::fs::write(&old, current.replace("rps-replay@1", "rps-replay@0")).unwrap();
    let out = kakehiki().arg("replay").arg(&old).output().unwrap();
    let t = described(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("replay format kakehiki/rps-replay@0 is older than this kakehiki's kakehiki/rps-replay@1: convert it with `kakehiki replay --upgrade"),
        "{t}"
    );
    // rps never had another format: the driver's default says so.
    let out = kakehiki()
        .args(["replay", "--upgrade"])
        .arg(&old)
        .output()
        .unwrap();
    let t = described(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("rps has no older replay format to upgrade from \"kakehiki/rps-replay@0\""),
        "{t}"
    );
    // Already current: nothing to do.
    let out = kakehiki()
        .args(["replay", "--upgrade"])
        .arg(&replay)
        .output()
        .unwrap();
    let t = described(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("is already in the current format (kakehiki/rps-replay@1): nothing to upgrade"),
        "{t}"
    );
    // A newer version and another name.
    for (format, says) in [
        ("kakehiki/rps-replay@9", "is newer than this kakehiki's"),
        ("kakehiki/chess-replay@1", "unknown replay format"),
    ] {
        let f = dir.path().join("other.jsonl");
        std::fs::write(&f, current.replace("kakehiki/rps-replay@1", format)).unwrap();
        let out = kakehiki().arg("replay").arg(&f).output().unwrap();
        let t = described(&out);
        assert_eq!(out.status.code(), Some(1), "{t}");
        assert!(t.contains(says), "{format}: {t}");
    }
    // -o needs --upgrade.
    let out = kakehiki()
        .arg("replay")
        .arg(&replay)
        .args(["-o", "x.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", described(&out));
}

/// `check` plays a contestant's rps bot like any game's: a good bot passes, a bad one fails
/// with the codec's fault and the game's label.
#[test]
fn check_plays_an_rps_bot() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_bot(dir.path(), "good.sh", GOOD_BOT);
    let out = kakehiki()
        .args(["check", "rps", "--seat", &good, "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["passed"], true, "{r}");
    // The bot in the first and in the last seat.
    let seats: Vec<u64> = r["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seat"].as_u64().unwrap())
        .collect();
    assert!(seats.contains(&0) && seats.contains(&1), "{r}");

    let bad = write_bot(dir.path(), "bad.sh", BOT);
    let out = kakehiki()
        .args(["check", "rps", "--seat", &bad, "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", described(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["passed"], false, "{r}");
    let e = &r["matches"][0]["errors"][0];
    assert_eq!(e["at"], "round 2", "{r}");
    assert_eq!(e["kind"], "invalid_reply", "{r}");
    assert!(e["detail"].as_str().unwrap().contains("got \"X\""), "{r}");
}

/// The view model embedded in a page written by `kakehiki view`.
fn page_model(page: &str) -> Value {
    let start = page.find("id=\"kv-model\"").expect("model script");
    let start = start + page[start..].find('>').unwrap() + 1;
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

/// `view` shows rps with the generic viewer (rps has no board viewer): one step per label of
/// the seat record, per-seat panels with every request, errors linked by the game's label,
/// the program's exit and stderr.
#[test]
fn view_shows_rps_with_the_generic_viewer_and_seat_panels() {
    let dir = tempfile::tempdir().unwrap();
    let bot = write_bot(dir.path(), "bot.sh", BOT);
    let replay = play(
        dir.path(),
        &[&bot, "builtin:silent"],
        &["--opt", "move_ms=50"],
    );
    let page_path = dir.path().join("rps.html");
    let out = kakehiki()
        .arg("view")
        .arg(&replay)
        .arg("-o")
        .arg(&page_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    let page = std::fs::read_to_string(&page_path).unwrap();
    let m = page_model(&page);
    assert_eq!(m["extra"]["generic"], true, "{m}");
    let steps = m["steps"].as_array().unwrap();
    let titles: Vec<&str> = steps.iter().map(|s| s["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        ["start", "round 1", "round 2", "round 3", "round 4", "round 5"]
    );
    assert_eq!(steps[2]["exchanges"][0]["raw"], "X", "{m}");
    assert_eq!(steps[2]["events"][0]["event"], "round", "{m}");
    assert_eq!(m["result"]["event"], "result", "{m}");
    let p0 = &m["seats"][0];
    assert_eq!(p0["exchanges"].as_array().unwrap().len(), 5, "{p0}");
    assert_eq!(p0["exchanges"][2]["raw"], "rock", "{p0}");
    assert_eq!(p0["exit"], "exit code 0", "{p0}");
    assert!(p0["stderr"].as_str().unwrap().contains("bye: won"), "{p0}");
    assert_eq!(p0["moves"], 5, "{p0}");
    // The silent seat: every round a timeout, linked to its round by the game's label.
    let p1 = &m["seats"][1];
    let errs = p1["errors"].as_array().unwrap();
    assert_eq!(errs.len(), 5, "{p1}");
    assert_eq!(errs[2]["at"], "round 3", "{p1}");
    assert_eq!(errs[2]["step"], 3, "{p1}");
    assert_eq!(errs[2]["kind"], "timeout", "{p1}");
    assert_eq!(errs[2]["detail"], "no reply to throw within 50 ms", "{p1}");
    // The page's script knows the generic viewer and labels its links with `at`.
    assert!(page.contains("function generic(s)"));
    assert!(page.contains("e.at ||"));
}

/// `contest run` plays an rps round robin with a process entrant and gives standings, with no
/// rps-specific code in the contest layer.
#[test]
fn a_contest_of_rps_runs_and_gives_standings() {
    let dir = tempfile::tempdir().unwrap();
    let bot = write_bot(dir.path(), "good.sh", GOOD_BOT);
    let file = dir.path().join("rps.toml");
    std::fs::write(
        &file,
        format!(
            r#"name = "rps-cup"
game = "rps"
format = "round-robin"
seed = 19
games = 2
bootstrap = 20

[options]
rounds = 3

[[entrants]]
name = "rock"
seat = "builtin:rock"

[[entrants]]
name = "random"
seat = "builtin:random"

[[entrants]]
name = "scissors"
seat = {bot:?}
"#
        ),
    )
    .unwrap();
    let db = dir.path().join("rps.sqlite");
    let out = kakehiki()
        .args(["contest", "run"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .args(["--quiet", "--no-standings"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    let out = kakehiki()
        .args([
            "contest",
            "standings",
            "rps-cup",
            "--format",
            "json",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["complete"], true, "{s}");
    assert_eq!(s["matches_stored"], 6, "{s}");
    let names: Vec<&str> = s["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("{s}"))
        .iter()
        .map(|r| r["entrant"].as_str().unwrap_or(""))
        .collect();
    for n in ["rock", "random", "scissors"] {
        assert!(names.contains(&n), "{s}");
    }
    // Its replays verify like any game's.
    let rdir = dir.path().join("replays");
    let out = kakehiki()
        .args(["contest", "replays", "rps-cup", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&rdir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    let mut verified = 0;
    for f in std::fs::read_dir(rdir.join("rps-cup")).unwrap() {
        let f = f.unwrap().path();
        if f.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let out = kakehiki().arg("replay").arg(&f).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            f.display(),
            described(&out)
        );
        verified += 1;
    }
    assert_eq!(verified, 6);
}
