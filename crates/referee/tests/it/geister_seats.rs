//! Geister on the one seat layer: a bot that crashes is reported at the game's own label (`ply
//! N`, as the report's `plies` counts), with its exit code and stderr in the `seat_end` record and
//! the report, over pipes (`cmd:`) and TCP (`tcp-cmd:`); an `@1` replay upgrades to the current
//! format and verifies.

use kakehiki_core::replay::ReplayLog;
use kakehiki_core::{SeatErrorKind, SeatSpec};
use kakehiki_referee::verify::verify_replay;
use kakehiki_referee::{find_game, MatchRecord, MatchSpec};
use serde_json::Value;

use crate::support::events;

/// Places, then crashes (exit code 3, a line on stderr) at its first `MOV?`.
const PIPE_CRASHER: &str = r#"
import sys
for line in sys.stdin:
    if line.startswith("SET?"):
        sys.stdout.write("SET:ABCD\r\n"); sys.stdout.flush()
    elif line.startswith("MOV?"):
        sys.stderr.write("boom at my first move\n"); sys.exit(3)
"#;

/// The same over TCP, connecting to `{host} {port}`.
const TCP_CRASHER: &str = r#"
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
for line in s.makefile("rb"):
    if line.startswith(b"SET?"):
        s.sendall(b"SET:ABCD\r\n")
    elif line.startswith(b"MOV?"):
        sys.stderr.write("boom at my first move\n"); sys.exit(3)
"#;

async fn play(seats: Vec<SeatSpec>) -> MatchRecord {
    let mut spec = MatchSpec::new("geister", 3, seats);
    for (k, v) in [("pace_ms", "0"), ("linger_ms", "1000")] {
        spec.options.insert(k.into(), v.into());
    }
    find_game("geister")
        .unwrap()
        .play(&spec)
        .await
        .expect("the match runs")
}

/// The crasher in `seat` against `builtin:random`: its crash is at its first ply, labelled as
/// the report counts plies, with its exit code and stderr.
fn assert_crash_reported(r: &MatchRecord, seat: usize) {
    let plies = r.report.extra["plies"].as_u64().unwrap();
    assert_eq!(plies, seat as u64, "{:?}", r.report);
    assert_eq!(r.report.winner, Some(1 - seat));
    let errors = &r.report.seats[seat].errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].kind, SeatErrorKind::Crash, "{errors:?}");
    assert_eq!(errors[0].at, format!("ply {}", plies + 1), "{errors:?}");
    assert_eq!(errors[0].turn as u64, plies + 1, "{errors:?}");
    assert!(errors[0].detail.contains("exit code 3"), "{errors:?}");
    // The seat record: the failed request at its ply, and how the program ended.
    let failed: Vec<Value> = events(r, "seat")
        .into_iter()
        .filter(|e| e["seat"] == seat && e["outcome"] == "crash")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["at"], format!("ply {}", plies + 1));
    assert_eq!(failed[0]["kind"], "MOV?");
    let ends: Vec<Value> = events(r, "seat_end")
        .into_iter()
        .filter(|e| e["seat"] == seat)
        .collect();
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0]["exit_code"], 3, "{ends:?}");
    assert!(ends[0]["stderr"]
        .as_str()
        .unwrap()
        .contains("boom at my first move"));
    // The report says the same.
    let extra = &r.report.seats[seat].extra;
    assert!(
        extra["exit"].as_str().unwrap().contains("exit code 3"),
        "{extra:?}"
    );
    assert!(
        extra["stderr"]
            .as_str()
            .unwrap()
            .contains("boom at my first move"),
        "{extra:?}"
    );
    let again = verify_replay(&r.replay.to_text()).expect("the replay re-runs byte for byte");
    assert_eq!(again.report, r.report);
}

fn pipe_crasher() -> SeatSpec {
    SeatSpec::Cmd(vec!["python3".into(), "-c".into(), PIPE_CRASHER.into()])
}

fn tcp_crasher() -> SeatSpec {
    SeatSpec::TcpCmd(vec![
        "python3".into(),
        "-c".into(),
        TCP_CRASHER.into(),
        "{host}".into(),
        "{port}".into(),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipe_bot_crashing_on_its_first_move_is_reported_at_its_ply_with_exit_and_stderr() {
    let r = play(vec![pipe_crasher(), SeatSpec::Builtin("random".into())]).await;
    assert_crash_reported(&r, 0);
    let r = play(vec![SeatSpec::Builtin("random".into()), pipe_crasher()]).await;
    assert_crash_reported(&r, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_client_crashing_on_its_first_move_is_reported_at_its_ply_with_exit_and_stderr() {
    let r = play(vec![tcp_crasher(), SeatSpec::Builtin("random".into())]).await;
    assert_crash_reported(&r, 0);
    assert_eq!(r.report.seats[0].extra["transport"], "tcp");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_client_exiting_before_it_connects_is_seen_with_its_exit_and_stderr() {
    let quitter = SeatSpec::TcpCmd(vec![
        "python3".into(),
        "-c".into(),
        "import sys; sys.stderr.write('no server for me\\n'); sys.exit(2)".into(),
    ]);
    let started = std::time::Instant::now();
    let r = play(vec![quitter, SeatSpec::Builtin("random".into())]).await;
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    assert_eq!(r.report.winner, Some(1));
    let errors = &r.report.seats[0].errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].at, "set-up");
    assert!(errors[0].detail.contains("exit code 2"), "{errors:?}");
    let extra = &r.report.seats[0].extra;
    assert!(extra["exit"].as_str().unwrap().contains("exit code 2"));
    assert!(extra["stderr"]
        .as_str()
        .unwrap()
        .contains("no server for me"));
    verify_replay(&r.replay.to_text()).expect("the replay re-runs byte for byte");
}

#[test]
fn a_v1_replay_upgrades_to_the_current_format_and_verifies() {
    let text = include_str!("../data/geister-v1.jsonl");
    let old = ReplayLog::parse(text).unwrap();
    let driver = find_game("geister").unwrap();
    let new = driver.upgrade(&old).expect("the v1 replay upgrades");
    let new_text = new.to_text();
    assert!(new_text.contains("\"format\":\"kakehiki-geister/3\""));
    let again = verify_replay(&new_text).expect("the upgraded replay verifies");
    // The same game: the same moves, end and plies as the v1 replay recorded.
    let moves = |t: &str| -> Vec<String> {
        t.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["event"] == "turn")
            .map(|v| format!("{} {}", v["seat"], v["move"]))
            .collect()
    };
    assert_eq!(moves(text), moves(&new_text), "{new_text}");
    assert!(!moves(text).is_empty());
    let old_end: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"event\":\"end\""))
        .collect();
    let new_end: Vec<&str> = new_text
        .lines()
        .filter(|l| l.contains("\"event\":\"end\""))
        .collect();
    assert_eq!(old_end, new_end);
    assert_eq!(again.report.extra["plies"], 16);
    // Its stderr is kept as the seat's ending.
    assert!(new_text.contains("\"event\":\"seat_end\""));
    // A current replay has nothing to upgrade.
    assert!(driver
        .upgrade(&ReplayLog::parse(&new_text).unwrap())
        .is_err());
}
