//! The NAC referee against real processes: the spec's worked example byte for byte, a zoo of
//! misbehaving bots, determinism and replay verification.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use kakehiki_core::replay::ReplayLog;
use kakehiki_core::{SeatErrorKind, SeatSpec};
use kakehiki_referee::verify::verify_replay;
use kakehiki_referee::{find_game, MatchRecord, MatchSpec, RefereeError};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn bot_path(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bots")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

static MARKER: AtomicUsize = AtomicUsize::new(0);

fn marker() -> String {
    format!(
        "kakehiki-zoo-{}-{}",
        std::process::id(),
        MARKER.fetch_add(1, Ordering::SeqCst)
    )
}

fn zoo(mode: &str, marker: &str) -> SeatSpec {
    SeatSpec::Cmd(vec![
        "python3".into(),
        bot_path("zoo.py"),
        mode.into(),
        marker.into(),
    ])
}

fn builtin(name: &str) -> SeatSpec {
    SeatSpec::Builtin(name.into())
}

async fn play(game: &str, seed: u64, seats: Vec<SeatSpec>) -> MatchRecord {
    let spec = MatchSpec::new(game, seed, seats);
    find_game(game)
        .unwrap()
        .play(&spec)
        .await
        .expect("the match runs")
}

/// Processes whose command line contains `marker` and that are not zombies.
fn live_with_marker(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let path = entry.path();
        let Ok(cmdline) = std::fs::read(path.join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !cmdline.contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("");
        if state != "Z" && state != "X" {
            out.push(format!("{}: {cmdline}", path.display()));
        }
    }
    out
}

fn events(record: &MatchRecord, kind: &str) -> Vec<Value> {
    record
        .replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == kind)
        .collect()
}

fn kinds(record: &MatchRecord, seat: usize) -> Vec<(u32, SeatErrorKind)> {
    record.report.seats[seat]
        .errors
        .iter()
        .map(|e| (e.turn, e.kind))
        .collect()
}

/// The seat record's exchange of `seat` at `at` (`ready`, `turn 3`).
fn exchange(record: &MatchRecord, at: &str, seat: usize) -> Value {
    events(record, "seat")
        .into_iter()
        .find(|e| e["at"] == at && e["seat"] == seat)
        .unwrap_or_else(|| panic!("no exchange of seat {seat} at {at}"))
}

/// How seat `seat`'s program ended, from the replay.
fn seat_end(record: &MatchRecord, seat: usize) -> Value {
    events(record, "seat_end")
        .into_iter()
        .find(|e| e["seat"] == seat)
        .unwrap_or_else(|| panic!("no seat_end of seat {seat}"))
}

fn move_of(record: &MatchRecord, turn: u64, seat: usize) -> Value {
    let turns = events(record, "turn");
    let t = turns
        .iter()
        .find(|t| t["turn"] == turn)
        .expect("turn event")
        .clone();
    t["moves"][seat].clone()
}

#[tokio::test]
async fn worked_example_crosses_the_pipe_byte_for_byte() {
    // (game, seed, per-seat (bytes, sha256), exact totals, winner)
    let runs = [
        (
            "nac",
            2014,
            [
                (
                    654,
                    "72b7dfee594cfc9d08a3f7fd9ad4457a44757daf79c6a47673f0db29505f0596",
                ),
                (
                    657,
                    "36d55d316f2e1abca982c84bdc5758f4d334cff48322f45f324a8fd190234e49",
                ),
                (
                    654,
                    "2a8f92999db9554820af27f283f656d50581ce0dd55bd39d3cb0b28c0612d5a3",
                ),
                (
                    654,
                    "6960b8a3e8a38d45cc8fa111d9aa4c9c9cbe53b030d4d53ef3bde7bca0911feb",
                ),
            ],
            ["-6", "-6", "5", "7"],
            Some(3),
        ),
        (
            "religion-war",
            1108,
            [
                (
                    654,
                    "51da9d8839452c9f0dd136e97746401637d1d1fbeedee7f9ba02e0d90cc93ded",
                ),
                (
                    657,
                    "f90eb8e6331a2a6e67487534c2b980e51c1cea2f6e5bcdc916b6edba85565656",
                ),
                (
                    654,
                    "de58f6f685c8b638c19c1801e10fbc0732e15470c2f5d81992a7a3595cefbbb3",
                ),
                (
                    654,
                    "e777dde3cb54b551ca4634e6b32cfc209e48c231379e707efd60bfd920c14cce",
                ),
            ],
            ["-2", "-3/2", "3", "1/2"],
            Some(2),
        ),
    ];
    for (game, seed, streams, totals, winner) in runs {
        let seats = (0..4)
            .map(|s| {
                SeatSpec::Cmd(vec![
                    "python3".into(),
                    bot_path("worked_example.py"),
                    s.to_string(),
                ])
            })
            .collect();
        let record = play(game, seed, seats).await;
        assert_eq!(record.report.scores_exact, totals, "{game}");
        assert_eq!(record.report.winner, winner, "{game}");
        let result = &events(&record, "result")[0];
        for (seat, (bytes, sha)) in streams.iter().enumerate() {
            assert_eq!(
                result["streams"][seat]["bytes"], *bytes as u64,
                "{game} seat {seat}"
            );
            assert_eq!(
                result["streams"][seat]["sha256"], *sha,
                "{game} seat {seat}"
            );
            // What the bot itself read, reported on its stderr as hex lines.
            let stderr = seat_end(&record, seat);
            let mut received = Vec::new();
            for line in stderr["stderr"].as_str().unwrap().lines() {
                for i in (0..line.len()).step_by(2) {
                    received.push(u8::from_str_radix(&line[i..i + 2], 16).unwrap());
                }
            }
            assert_eq!(received.len(), *bytes, "{game} seat {seat}");
            assert_eq!(
                format!("{:x}", Sha256::digest(&received)),
                *sha,
                "{game} seat {seat}"
            );
        }
        // Seat 3's malformed first reply is applied as 5 5 0 0 0 and recorded.
        let m = move_of(&record, 1, 3);
        assert_eq!(exchange(&record, "turn 1", 3)["raw"], "5 5 9 x");
        assert_eq!(m["picks"], serde_json::json!([5, 5, 0, 0, 0]));
        let codes: Vec<&str> = m["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["out_of_range", "not_a_number", "missing_field"]);
        // One error for the reply, naming each deviation.
        assert_eq!(kinds(&record, 3), vec![(1, SeatErrorKind::InvalidReply)]);
        assert_eq!(
            record.report.seats[3].errors[0].detail,
            "reply \"5 5 9 x\": out_of_range in field 2 \"9\", target 0 used; not_a_number in field 3 \"x\", target 0 used; missing_field in field 4, target 0 used"
        );
        for seat in 0..3 {
            assert!(record.report.seats[seat].errors.is_empty());
        }
        verify_replay(&record.replay.to_text()).expect("the replay re-runs");
    }
}

#[tokio::test]
async fn start_up_failures_leave_the_seat_dead_from_the_start() {
    let m = marker();
    let record = play(
        "nac",
        1,
        vec![
            zoo("never_ready", &m),
            zoo("late_ready", &m),
            zoo("bad_ready", &m),
            SeatSpec::Cmd(vec!["/nonexistent/bot-binary".into()]),
        ],
    )
    .await;
    for seat in 0..4 {
        assert_eq!(
            kinds(&record, seat),
            vec![(0, SeatErrorKind::NotReady)],
            "seat {seat}"
        );
        for turn in 1..=9 {
            let mv = move_of(&record, turn, seat);
            assert_eq!(mv["status"], "dead");
            assert!(mv["picks"].as_array().unwrap().iter().all(|p| p == 0));
        }
    }
    let detail = |s: usize| record.report.seats[s].errors[0].detail.clone();
    assert!(detail(0).contains("timeout"), "{}", detail(0));
    assert!(detail(1).contains("timeout"), "{}", detail(1));
    assert!(
        detail(2).contains("bad_ready") && detail(2).contains("hello"),
        "{}",
        detail(2)
    );
    assert!(detail(3).contains("spawn_failed"), "{}", detail(3));
    // Dead seats still gain at target 0 and are scored: all four are identical, so a draw.
    assert_eq!(record.report.winner, None);
    assert!(
        live_with_marker(&m).is_empty(),
        "leaked: {:?}",
        live_with_marker(&m)
    );
    verify_replay(&record.replay.to_text()).unwrap();
}

#[tokio::test]
async fn deaths_mid_game_are_recorded_and_substituted() {
    let m = marker();
    let record = play(
        "nac",
        2,
        vec![
            zoo("exit_after_ready", &m),
            zoo("hang_turn3", &m),
            zoo("crash_turn2", &m),
            zoo("fork_child", &m),
        ],
    )
    .await;
    assert_eq!(kinds(&record, 0), vec![(1, SeatErrorKind::Crash)]);
    assert_eq!(kinds(&record, 1), vec![(3, SeatErrorKind::Timeout)]);
    assert_eq!(kinds(&record, 2), vec![(2, SeatErrorKind::Crash)]);
    assert!(
        record.report.seats[2].errors[0]
            .detail
            .contains("exit code 7"),
        "{:?}",
        record.report.seats[2]
    );
    // The forked child keeps stdout open after its parent exits. In a PID namespace the child
    // ends with the bot's first process, stdout closes: a crash. Without one: no EOF, a timeout.
    let namespaces = kakehiki_agent::SandboxReport::current(kakehiki_agent::SandboxLevel::Best)
        .layers
        .contains(&kakehiki_agent::Layer::Namespaces);
    let expected = if namespaces {
        SeatErrorKind::Crash
    } else {
        SeatErrorKind::Timeout
    };
    assert_eq!(kinds(&record, 3), vec![(2, expected)]);
    assert_eq!(move_of(&record, 2, 1)["status"], "ok");
    assert_eq!(move_of(&record, 3, 1)["status"], "timeout");
    assert_eq!(move_of(&record, 4, 1)["status"], "dead");
    assert_eq!(move_of(&record, 4, 1)["picks"], serde_json::json!([0, 0]));
    let deaths = events(&record, "death");
    assert_eq!(deaths.len(), 4);
    assert!(
        live_with_marker(&m).is_empty(),
        "leaked: {:?}",
        live_with_marker(&m)
    );
    verify_replay(&record.replay.to_text()).unwrap();
}

#[tokio::test]
async fn malformed_replies_map_to_target_zero() {
    let m = marker();
    let record = play(
        "nac",
        3,
        vec![
            zoo("garbage", &m),
            zoo("too_few", &m),
            zoo("too_many", &m),
            zoo("out_of_range", &m),
        ],
    )
    .await;
    for seat in 0..4 {
        assert!(record.report.seats[seat]
            .errors
            .iter()
            .all(|e| e.kind == SeatErrorKind::InvalidReply));
        assert!(!record.report.seats[seat].errors.is_empty());
        assert!(events(&record, "death").is_empty());
    }
    assert_eq!(
        move_of(&record, 1, 0)["picks"],
        serde_json::json!([0, 0, 0, 0, 0])
    );
    assert!(
        exchange(&record, "turn 1", 0)["raw_b64"].is_string(),
        "invalid UTF-8 is kept as base64"
    );
    assert_eq!(
        move_of(&record, 1, 1)["picks"],
        serde_json::json!([1, 0, 0, 0, 0])
    );
    assert_eq!(move_of(&record, 2, 1)["picks"], serde_json::json!([1, 0]));
    assert_eq!(
        move_of(&record, 1, 2)["picks"],
        serde_json::json!([1, 2, 3, 4, 5])
    );
    assert_eq!(move_of(&record, 1, 2)["errors"][0]["code"], "extra_fields");
    assert_eq!(
        move_of(&record, 1, 3)["picks"],
        serde_json::json!([0, 0, 0, 0, 5])
    );
    assert_eq!(move_of(&record, 2, 3)["picks"], serde_json::json!([0, 5]));
    assert!(live_with_marker(&m).is_empty());
    verify_replay(&record.replay.to_text()).unwrap();
}

#[tokio::test]
async fn awkward_but_valid_output_is_handled() {
    let m = marker();
    let record = play(
        "nac",
        4,
        vec![
            zoo("split_write", &m),
            zoo("no_newline", &m),
            zoo("unsolicited", &m),
            zoo("ready_no_newline", &m),
        ],
    )
    .await;
    // A reply written in two pieces is one line.
    assert!(
        record.report.seats[0].errors.is_empty(),
        "{:?}",
        record.report.seats[0]
    );
    assert_eq!(
        move_of(&record, 1, 0)["picks"],
        serde_json::json!([1, 2, 3, 4, 5])
    );
    assert_eq!(move_of(&record, 2, 0)["picks"], serde_json::json!([3, 4]));
    // Unterminated text at the deadline is the reply; the seat lives.
    assert_eq!(move_of(&record, 9, 1)["status"], "ok");
    assert_eq!(
        move_of(&record, 1, 1)["picks"],
        serde_json::json!([2, 2, 2, 2, 2])
    );
    assert_eq!(move_of(&record, 1, 1)["errors"][0]["code"], "no_newline");
    assert_eq!(exchange(&record, "turn 1", 1)["time_us"], 1_000_000);
    // Chatter outside the window is discarded and recorded, the replies still count.
    assert!(kinds(&record, 2)
        .iter()
        .all(|(_, k)| *k == SeatErrorKind::UnsolicitedOutput));
    assert_eq!(kinds(&record, 2).len(), 9, "{:?}", kinds(&record, 2));
    assert_eq!(
        move_of(&record, 5, 2)["picks"],
        serde_json::json!([1, 2, 3, 4, 5])
    );
    // READY without a newline is accepted at the deadline.
    assert!(kinds(&record, 3).is_empty(), "{:?}", record.report.seats[3]);
    let ready = exchange(&record, "ready", 3);
    assert!(
        ready["detail"]
            .as_str()
            .unwrap()
            .starts_with("no line terminator"),
        "{ready}"
    );
    assert_eq!(ready["outcome"], "reply");
    assert!(live_with_marker(&m).is_empty());
    verify_replay(&record.replay.to_text()).unwrap();
}

#[tokio::test]
async fn floods_are_capped() {
    let m = marker();
    let record = play(
        "nac",
        5,
        vec![
            zoo("flood_stdout", &m),
            zoo("flood_stderr", &m),
            builtin("random"),
            builtin("strong"),
        ],
    )
    .await;
    // The flood's lines answer each turn (its day line has extra fields at night); the rest is
    // discarded (capped) and recorded, until the output cap kills the bot. Either way the game
    // completes and the other seats are unharmed.
    let flood = kinds(&record, 0);
    assert!(!flood.is_empty());
    assert!(
        flood.iter().all(|(_, k)| matches!(
            k,
            SeatErrorKind::UnsolicitedOutput
                | SeatErrorKind::ResourceLimit
                | SeatErrorKind::InvalidReply
        )),
        "{flood:?}"
    );
    let discarded: usize = events(&record, "seat")
        .iter()
        .filter(|e| e["seat"] == 0)
        .map(|e| e["discarded"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(
        discarded <= 9 * 11,
        "discarded output must be capped, got {discarded} lines"
    );
    let unsolicited = flood
        .iter()
        .filter(|(_, k)| *k == SeatErrorKind::UnsolicitedOutput)
        .count();
    assert!(
        unsolicited <= 9,
        "one unsolicited-output error per turn at most: {flood:?}"
    );
    assert!(kinds(&record, 2).is_empty() && kinds(&record, 3).is_empty());
    assert!(kinds(&record, 1).is_empty(), "{:?}", record.report.seats[1]);
    let stderr = seat_end(&record, 1);
    let text = stderr["stderr"].as_str().unwrap();
    assert!(
        text.len() < 70_000,
        "stderr must be capped, got {} bytes",
        text.len()
    );
    assert!(text.contains("more bytes dropped"));
    assert!(live_with_marker(&m).is_empty());
    verify_replay(&record.replay.to_text()).unwrap();
}

#[tokio::test]
async fn same_seed_and_replies_give_the_same_replay() {
    let seats = || {
        vec![
            builtin("strong"),
            builtin("random"),
            builtin("random"),
            builtin("strong"),
        ]
    };
    let a = play("nac", 99, seats()).await;
    let b = play("nac", 99, seats()).await;
    assert_eq!(a.replay.to_text(), b.replay.to_text());
    let c = play("nac", 100, seats()).await;
    assert_ne!(a.replay.to_text(), c.replay.to_text());
    let rerun = verify_replay(&a.replay.to_text()).unwrap();
    assert_eq!(rerun.report, a.report);
}

#[tokio::test]
async fn process_replays_verify_and_tampering_is_caught() {
    let example = vec![
        "python3".to_string(),
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/bots/python/nac_bot.py")
            .to_string_lossy()
            .into_owned(),
    ];
    let record = play(
        "religion-war",
        6,
        vec![
            SeatSpec::Cmd(example.clone()),
            builtin("random"),
            SeatSpec::Cmd(example),
            builtin("strong"),
        ],
    )
    .await;
    let text = record.replay.to_text();
    verify_replay(&text).unwrap();

    // Change one recorded reply: the re-run's picks, blocks and scores change, first in the
    // turn's own event.
    let reply_line = text
        .lines()
        .position(|l| l.contains(r#""event":"seat","seat":1,"at":"turn 1""#))
        .unwrap();
    let turn_line = text
        .lines()
        .position(|l| l.contains("\"event\":\"turn\""))
        .unwrap();
    assert!(reply_line < turn_line);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let reply: Value = serde_json::from_str(&lines[reply_line]).unwrap();
    let raw = serde_json::to_string(&reply["raw"]).unwrap();
    assert_ne!(raw, "\"0 0 0 0 0\"");
    lines[reply_line] =
        lines[reply_line].replace(&format!("\"raw\":{raw}"), "\"raw\":\"0 0 0 0 0\"");
    let tampered = lines.join("\n") + "\n";
    match verify_replay(&tampered) {
        Err(RefereeError::ReplayMismatch { line, .. }) => assert_eq!(line, turn_line + 1),
        other => panic!("expected a mismatch, got {other:?}"),
    }

    // Broken files get specific errors, never a panic.
    assert!(matches!(verify_replay(""), Err(RefereeError::BadReplay(_))));
    assert!(matches!(
        verify_replay("{not json\n"),
        Err(RefereeError::BadReplay(_))
    ));
    let truncated: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert!(verify_replay(&truncated).is_err());
    let wrong_game = text.replacen("\"game\":\"religion-war\"", "\"game\":\"chess\"", 1);
    assert!(matches!(
        verify_replay(&wrong_game),
        Err(RefereeError::UnknownGame(..))
    ));
    assert!(ReplayLog::parse(&text).is_ok());
}

#[tokio::test]
async fn bad_match_specs_are_rejected_with_reasons() {
    let nac = find_game("nac").unwrap();
    let three = MatchSpec::new("nac", 1, vec![builtin("random"); 3]);
    assert!(matches!(
        nac.play(&three).await,
        Err(RefereeError::SeatCount { got: 3, .. })
    ));
    let unknown = MatchSpec::new(
        "nac",
        1,
        vec![
            builtin("random"),
            builtin("random"),
            builtin("random"),
            builtin("best"),
        ],
    );
    let err = nac.play(&unknown).await.unwrap_err();
    assert!(
        err.to_string().contains("best") && err.to_string().contains("random, strong"),
        "{err}"
    );
    let tcp = MatchSpec::new(
        "nac",
        1,
        vec![
            builtin("random"),
            SeatSpec::Tcp,
            builtin("random"),
            builtin("random"),
        ],
    );
    assert!(matches!(
        nac.play(&tcp).await,
        Err(RefereeError::UnsupportedSeat { seat: 1, .. })
    ));
    let mut opt = MatchSpec::new("nac", 1, vec![builtin("random"); 4]);
    opt.options.insert("turn_ms".into(), "soon".into());
    assert!(matches!(
        nac.play(&opt).await,
        Err(RefereeError::BadOption { .. })
    ));
    opt.options.clear();
    opt.options.insert("speed".into(), "1".into());
    assert!(matches!(
        nac.play(&opt).await,
        Err(RefereeError::UnknownOption { .. })
    ));
    let mut rules = MatchSpec::new("nac", 1, vec![builtin("random"); 4]);
    rules.rules = Some("religion-war".into());
    assert!(matches!(
        nac.play(&rules).await,
        Err(RefereeError::UnknownRules { .. })
    ));
    assert!(matches!(
        find_game("chess"),
        Err(RefereeError::UnknownGame(..))
    ));
}

/// A process bot that writes to stderr and exits with code 3 in the middle of the game: its
/// exit code and stderr are in the replay (`seat_end`) and in the report (`seats[i].exit`,
/// `seats[i].stderr`), and its error names the turn (`at`).
#[tokio::test]
async fn a_bot_that_exits_mid_game_has_its_exit_code_and_stderr_recorded() {
    // READY, answer turn 1 (settings + block: 11 lines), read block 2 (8 lines), then leave.
    let quitter = SeatSpec::Cmd(vec![
        "sh".into(),
        "-c".into(),
        "echo READY; i=0; while [ $i -lt 11 ]; do read -r l; i=$((i+1)); done; echo 1 2 3 4 5; \
         i=0; while [ $i -lt 8 ]; do read -r l; i=$((i+1)); done; \
         echo 'Traceback: giving up at turn 2' >&2; exit 3"
            .into(),
    ]);
    let record = play(
        "nac",
        11,
        vec![
            quitter,
            builtin("random"),
            builtin("strong"),
            builtin("random"),
        ],
    )
    .await;
    let end = seat_end(&record, 0);
    assert_eq!(end["exit_code"], 3, "{end}");
    assert!(
        end["stderr"]
            .as_str()
            .unwrap()
            .contains("giving up at turn 2"),
        "{end}"
    );
    let seat = &record.report.seats[0];
    assert_eq!(seat.extra["exit"], "exit code 3", "{seat:?}");
    assert!(seat.extra["stderr"]
        .as_str()
        .unwrap()
        .contains("giving up at turn 2"));
    assert_eq!(kinds(&record, 0), vec![(2, SeatErrorKind::Crash)]);
    assert_eq!(seat.errors[0].at, "turn 2", "{seat:?}");
    assert_eq!(exchange(&record, "turn 2", 0)["outcome"], "crash");
    assert_eq!(move_of(&record, 2, 0)["status"], "crash");
    assert_eq!(move_of(&record, 3, 0)["status"], "dead");
    // Built-in seats run no program: no seat_end for them.
    assert!(events(&record, "seat_end").iter().all(|e| e["seat"] == 0));
    verify_replay(&record.replay.to_text()).unwrap();
}

/// Replays of the old format (`nac-replay@1`, own ready/move/stderr events) are refused with
/// the way out, and `upgrade` turns them into the seat record that verifies, with the same
/// scores and the same streams.
#[test]
fn old_replays_upgrade_to_the_seat_record_and_verify() {
    for (game, file) in [
        ("nac", "nac-v1.jsonl"),
        ("religion-war", "religion-war-v1.jsonl"),
    ] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(file);
        let old = std::fs::read_to_string(path).unwrap();
        match verify_replay(&old) {
            Err(e @ RefereeError::OldReplayFormat { .. }) => {
                assert!(e.to_string().contains("--upgrade"), "{e}")
            }
            other => panic!("{game}: an @1 replay must be refused, got {other:?}"),
        }
        let parsed = ReplayLog::parse(&old).unwrap();
        let upgraded = find_game(game).unwrap().upgrade(&parsed).unwrap().to_text();
        assert!(upgraded.contains("nac-replay@2"), "{upgraded}");
        let record = verify_replay(&upgraded).expect("the upgraded replay verifies");
        // The game is the same game: the result line (scores, winner, streams) is unchanged.
        let result = |text: &str| {
            text.lines()
                .find(|l| l.contains(r#""event":"result""#))
                .unwrap()
                .to_string()
        };
        assert_eq!(result(&old), result(&upgraded), "{game}");
        let seats = events(&record, "seat");
        assert!(seats
            .iter()
            .any(|e| e["at"] == "ready" && e["kind"] == "READY"));
        assert!(seats.iter().any(|e| e["at"] == "turn 9"));
        if game == "nac" {
            // Seat 1 answered turn 1, printed to stderr and exited: turn 2 failed.
            assert_eq!(exchange(&record, "turn 2", 1)["outcome"], "crash");
            let end = seat_end(&record, 1);
            assert_eq!(end["stderr"], "oops: failing on purpose\n");
            assert_eq!(record.report.seats[1].errors[0].at, "turn 2");
        }
        // A replay that is already current has nothing to upgrade from.
        assert!(find_game(game)
            .unwrap()
            .upgrade(&ReplayLog::parse(&upgraded).unwrap())
            .is_err());
    }
}

/// A bot that says READY at once, before the referee has started all four seats and asked
/// for it, is ready: what it wrote first is its READY, not output outside its window. (On a
/// multi-threaded runtime, as `check` and `play` run, its reader takes the line in meanwhile.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_written_before_the_referee_asks_counts() {
    let fast = SeatSpec::Cmd(vec![
        "sh".into(),
        "-c".into(),
        "echo READY; while read -r l; do :; done".into(),
    ]);
    for seed in 0..3 {
        let mut spec = MatchSpec::new("nac", seed, vec![fast.clone(); 4]);
        spec.options.insert("turn_ms".into(), "50".into());
        let record = find_game("nac").unwrap().play(&spec).await.unwrap();
        for seat in 0..4 {
            // READY accepted; the seat then never answers and dies at turn 1.
            assert_eq!(
                kinds(&record, seat),
                vec![(1, SeatErrorKind::Timeout)],
                "seed {seed} seat {seat}: {:?}",
                record.report.seats[seat]
            );
            assert_eq!(exchange(&record, "ready", seat)["outcome"], "reply");
        }
        verify_replay(&record.replay.to_text()).unwrap();
    }
}
