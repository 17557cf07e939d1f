//! The Geister referee against real clients: the Python example client (standard library only)
//! over TCP (`tcp-cmd:`, a `tcp` table with reconnects) and over pipes (`cmd:`), misbehaving
//! clients getting the spec's outcomes, and replays that re-run byte for byte.

use std::path::PathBuf;

use kakehiki_core::{SeatErrorKind, SeatSpec};
use kakehiki_geister::Rules;
use kakehiki_referee::games::geister::{play_on_table, Table, FORMAT};
use kakehiki_referee::verify::verify_replay;
use kakehiki_referee::{find_game, MatchRecord, MatchSpec};
use serde_json::Value;

use crate::support::events;

fn client_path() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/bots/python/geister_client.py")
        .to_string_lossy()
        .into_owned()
}

fn tcp_client(mode: &str) -> SeatSpec {
    SeatSpec::TcpCmd(vec![
        "python3".into(),
        client_path(),
        "{host}".into(),
        "{port}".into(),
        "--mode".into(),
        mode.into(),
        "--seed".into(),
        "7".into(),
    ])
}

fn stdio_client(mode: &str) -> SeatSpec {
    SeatSpec::Cmd(vec![
        "python3".into(),
        client_path(),
        "--stdio".into(),
        "--mode".into(),
        mode.into(),
        "--seed".into(),
        "7".into(),
    ])
}

fn builtin(name: &str) -> SeatSpec {
    SeatSpec::Builtin(name.into())
}

async fn play(rules: &str, seats: Vec<SeatSpec>, opts: &[(&str, &str)]) -> MatchRecord {
    let mut spec = MatchSpec::new("geister", 11, seats);
    spec.rules = Some(rules.into());
    for (k, v) in opts {
        spec.options.insert(k.to_string(), v.to_string());
    }
    find_game("geister")
        .unwrap()
        .play(&spec)
        .await
        .expect("the match runs")
}

fn extra<'a>(r: &'a MatchRecord, key: &str) -> &'a Value {
    r.report.extra.get(key).unwrap_or(&Value::Null)
}

fn kinds(r: &MatchRecord, seat: usize) -> Vec<SeatErrorKind> {
    r.report.seats[seat].errors.iter().map(|e| e.kind).collect()
}

/// The client's own report (its stderr/stdout is captured into the replay's `seat_end`).
fn client_text(r: &MatchRecord, seat: usize) -> String {
    events(r, "seat_end")
        .iter()
        .filter(|e| e["seat"] == seat)
        .map(|e| e["stderr"].as_str().unwrap_or("").to_string())
        .collect()
}

fn assert_verifies(r: &MatchRecord) {
    let text = r.replay.to_text();
    let again = verify_replay(&text).expect("replay re-runs byte for byte");
    assert_eq!(again.report, r.report);
}

const FAST: &[(&str, &str)] = &[("pace_ms", "0"), ("linger_ms", "2000")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_cmd_client_plays_whole_games_in_both_seats() {
    for (seats, me) in [
        (vec![tcp_client("normal"), builtin("random")], 0usize),
        (vec![builtin("rush"), tcp_client("normal")], 1),
    ] {
        let r = play("gpw", seats, &[("linger_ms", "2000")]).await;
        assert!(
            r.report.seats[me].errors.is_empty(),
            "{:?}",
            r.report.seats[me].errors
        );
        let reason = extra(&r, "reason").as_str().unwrap().to_string();
        assert!(
            [
                "escape",
                "captured_all_blue",
                "lost_all_red",
                "ply_limit_draw"
            ]
            .contains(&reason.as_str()),
            "{reason}"
        );
        let text = client_text(&r, me);
        assert!(text.contains("result "), "client said: {text}");
        assert!(!text.contains("violation"), "client said: {text}");
        // The client saw the result the referee recorded.
        let want = match r.report.winner {
            Some(w) if w == me => "result WON",
            Some(_) => "result LST",
            None => "result DRW",
        };
        assert!(text.contains(want), "{want} not in {text}");
        assert_eq!(r.report.seats[me].extra["transport"], "tcp");
        assert_verifies(&r);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_client_plays_and_compatible_log_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let dir_s = dir.path().to_string_lossy().into_owned();
    let r = play(
        "seed",
        vec![stdio_client("lf"), builtin("random")],
        &[("linger_ms", "2000"), ("log_dir", &dir_s)],
    )
    .await;
    assert!(
        r.report.seats[0].errors.is_empty(),
        "{:?}",
        r.report.seats[0].errors
    );
    assert!(
        client_text(&r, 0).contains("result "),
        "{}",
        client_text(&r, 0)
    );
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("log-")
            && name.ends_with(".txt")
            && name.len() == "log-2026-01-01-00-00-00-000.txt".len(),
        "{name}"
    );
    let log = std::fs::read_to_string(&files[0]).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines[0].starts_with("player=0,SET:") || lines[0].starts_with("player=1,SET:"));
    assert!(lines.last().unwrap().starts_with("winner="));
    let plies = extra(&r, "plies").as_u64().unwrap() as usize;
    assert_eq!(lines.len(), 2 + plies + 1);
    assert_verifies(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_accepts_clients_reconnecting_for_the_next_game() {
    let mut table = Table::bind("127.0.0.1", [0, 0]).await.unwrap();
    let [a0, a1] = table.local_addrs();
    let spawn = |port: u16, seed: &str| {
        tokio::process::Command::new("python3")
            .args([
                client_path(),
                "127.0.0.1".into(),
                port.to_string(),
                "--games".into(),
                "2".into(),
                "--seed".into(),
                seed.into(),
            ])
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    };
    let c0 = spawn(a0.port(), "1");
    let c1 = spawn(a1.port(), "2");
    let mut rules = Rules::gpw();
    rules.pace_ms = 0;
    rules.linger_ms = 2000;
    let g1 = play_on_table(&mut table, rules.clone(), 1).await.unwrap();
    let g2 = play_on_table(&mut table, rules, 2).await.unwrap();
    for g in [&g1, &g2] {
        assert!(
            g.report.seats.iter().all(|s| s.errors.is_empty()),
            "{:?}",
            g.report.seats
        );
        assert!(extra(g, "reason")
            .as_str()
            .is_some_and(|r| r != "disconnect"));
        assert_verifies(g);
    }
    let o0 = c0.wait_with_output().await.unwrap();
    let o1 = c1.wait_with_output().await.unwrap();
    let t0 = String::from_utf8_lossy(&o0.stdout).into_owned();
    let t1 = String::from_utf8_lossy(&o1.stdout).into_owned();
    assert_eq!(t0.matches("result ").count(), 2, "{t0}");
    assert_eq!(t1.matches("result ").count(), 2, "{t1}");
    assert!(o0.status.success() && o1.status.success());
}

/// A misbehaving mode, its rules, the expected winner and end reason, and an error kind seat 0 must
/// have.
type Case = (
    &'static str,
    &'static str,
    Option<usize>,
    &'static str,
    Option<SeatErrorKind>,
);

/// Expected outcomes of misbehaving clients in seat 0 against `builtin:random`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_clients_get_the_spec_outcomes() {
    let opts: &[(&str, &str)] = &[
        ("pace_ms", "0"),
        ("linger_ms", "1000"),
        ("set_timeout_ms", "1500"),
        ("per_move_ms", "800"),
        ("bank_ms", "0"),
    ];
    // (mode, rules, expected winner, expected reason, an error kind seat 0 must have)
    let cases: &[Case] = &[
        (
            "noset",
            "gpw",
            Some(1),
            "set_timeout",
            Some(SeatErrorKind::NotReady),
        ),
        (
            "illegal",
            "gpw",
            Some(1),
            "illegal_move",
            Some(SeatErrorKind::IllegalAction),
        ),
        (
            "garbage",
            "gpw",
            Some(1),
            "illegal_move",
            Some(SeatErrorKind::InvalidReply),
        ),
        (
            "silent",
            "gpw",
            Some(1),
            "timeout",
            Some(SeatErrorKind::Timeout),
        ),
        // The client closes its connection and exits (code 0): the seat layer reports a
        // disconnect of a client that has exited as a crash with its exit.
        (
            "disconnect",
            "gpw",
            Some(1),
            "disconnect",
            Some(SeatErrorKind::Crash),
        ),
    ];
    for &(mode, rules, winner, reason, kind) in cases {
        let r = play(rules, vec![tcp_client(mode), builtin("random")], opts).await;
        assert_eq!(r.report.winner, winner, "{mode}: {:?}", r.report);
        assert!(!r.report.everyone_lost, "{mode}");
        assert_eq!(extra(&r, "reason"), reason, "{mode}");
        if let Some(k) = kind {
            assert!(
                kinds(&r, 0).contains(&k),
                "{mode}: {:?}",
                r.report.seats[0].errors
            );
        }
        assert!(
            r.report.seats[1].errors.is_empty(),
            "{mode}: {:?}",
            r.report.seats[1].errors
        );
        assert_verifies(&r);
    }
    // Both players fail (neither connects in time): a double forfeit, which both lose and nobody
    // draws (spec §2.2).
    let never_connects = SeatSpec::TcpCmd(vec!["sleep".into(), "30".into()]);
    let r = play(
        "gpw",
        vec![never_connects.clone(), never_connects],
        &[("connect_timeout_ms", "500"), ("linger_ms", "100")],
    )
    .await;
    assert_eq!(r.report.winner, None, "{:?}", r.report);
    assert_eq!(extra(&r, "reason"), "double_forfeit");
    assert!(r.report.everyone_lost, "{:?}", r.report);
    assert_eq!(r.report.scores_exact, ["0", "0"]);
    assert_verifies(&r);
    // Refused placement then a good one; a move out of turn; LF-only lines; two commands in one
    // write; one message per read: the game is played to a rules ending.
    for mode in ["badset", "outofturn", "lf", "pipelined", "oneperread"] {
        let pace = if mode == "oneperread" { "20" } else { "0" };
        // The client sits in seat 0, except `outofturn`: as seat 1 its early MOV: is out of turn.
        let me = usize::from(mode == "outofturn");
        let seats = if me == 0 {
            vec![tcp_client(mode), builtin("random")]
        } else {
            vec![builtin("random"), tcp_client(mode)]
        };
        let r = play("gpw", seats, &[("pace_ms", pace), ("linger_ms", "1000")]).await;
        let reason = extra(&r, "reason").as_str().unwrap().to_string();
        assert!(
            [
                "escape",
                "captured_all_blue",
                "lost_all_red",
                "ply_limit_draw"
            ]
            .contains(&reason.as_str()),
            "{mode}: {reason} {:?}",
            r.report.seats[me].errors
        );
        let errs = kinds(&r, me);
        match mode {
            "badset" => assert_eq!(errs, vec![SeatErrorKind::InvalidReply]),
            "outofturn" | "pipelined" => {
                assert!(
                    !errs.is_empty() && errs.iter().all(|k| *k == SeatErrorKind::ProtocolError),
                    "{mode}: {errs:?}"
                )
            }
            _ => assert!(errs.is_empty(), "{mode}: {errs:?}"),
        }
        assert!(
            !client_text(&r, me).contains("violation"),
            "{mode}: {}",
            client_text(&r, me)
        );
        assert!(
            client_text(&r, me).contains("result "),
            "{mode}: {}",
            client_text(&r, me)
        );
        assert_verifies(&r);
    }
    // Under `seed`, garbage and an illegal move are passes, not losses.
    for mode in ["garbage", "illegal"] {
        let r = play(
            "seed",
            vec![tcp_client(mode), builtin("random")],
            &[("pace_ms", "0"), ("linger_ms", "1000")],
        )
        .await;
        assert!(
            extra(&r, "reason")
                .as_str()
                .is_some_and(|x| x != "illegal_move"),
            "{mode}"
        );
        let passes = events(&r, "turn")
            .iter()
            .filter(|t| t["outcome"] != "move")
            .count();
        assert_eq!(passes, 1, "{mode}");
        assert_verifies(&r);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_options_bots_and_rules_are_errors() {
    let find = find_game("geister").unwrap();
    let mut spec = MatchSpec::new("geister", 1, vec![builtin("random"), builtin("strong")]);
    spec.options.insert("colour".into(), "1".into());
    assert!(find.play(&spec).await.is_err());
    let mut spec = MatchSpec::new("geister", 1, vec![builtin("random"), builtin("nope")]);
    assert!(find.play(&spec).await.is_err());
    spec.seats[1] = builtin("rush");
    spec.rules = Some("chess".into());
    assert!(find.play(&spec).await.is_err());
    spec.rules = Some("seed".into());
    spec.options.insert("max_plies".into(), "abc".into());
    assert!(find.play(&spec).await.is_err());
    spec.options.insert("max_plies".into(), "40".into());
    let r = find.play(&spec).await.unwrap();
    assert!(extra(&r, "plies").as_u64().unwrap() <= 40);
    assert_verifies(&r);
    // A bot that cannot start loses at once.
    let spec = MatchSpec::new(
        "geister",
        1,
        vec![
            SeatSpec::Cmd(vec!["/nonexistent/bot".into()]),
            builtin("random"),
        ],
    );
    let r = find.play(&spec).await.unwrap();
    assert_eq!(r.report.winner, Some(1));
    assert_eq!(kinds(&r, 0), vec![SeatErrorKind::Crash]);
    let _ = FAST;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtin_games_are_reproducible_and_tampering_is_detected() {
    let moves = |r: &MatchRecord| -> Vec<String> {
        events(r, "turn")
            .iter()
            .map(|t| t["move"].as_str().unwrap_or("-").to_string())
            .collect()
    };
    let a = play("seed", vec![builtin("strong"), builtin("rush")], FAST).await;
    let b = play("seed", vec![builtin("strong"), builtin("rush")], FAST).await;
    assert_eq!(moves(&a), moves(&b));
    assert_eq!(a.report.winner, b.report.winner);
    assert_verifies(&a);
    // Change one recorded reply: the re-run no longer matches the record.
    let text = a.replay.to_text();
    let first_turn = text
        .lines()
        .position(|l| l.contains("\"event\":\"turn\""))
        .unwrap();
    let tampered: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let l = if i == first_turn {
                let v: Value = serde_json::from_str(l).unwrap();
                let raw = v["raw"].as_str().unwrap().to_string();
                let other = if raw == "MOV:A,N" {
                    "MOV:B,N"
                } else {
                    "MOV:A,N"
                };
                l.replace(
                    &format!("\"raw\":\"{raw}\""),
                    &format!("\"raw\":\"{other}\""),
                )
            } else {
                l.to_string()
            };
            format!("{l}\n")
        })
        .collect();
    assert_ne!(tampered, text);
    assert!(verify_replay(&tampered).is_err());
    // A replay that is not JSON, or of another format, is a clear error.
    assert!(verify_replay("not json\n").is_err());
    let other_format = text.replacen(FORMAT, "kakehiki-geister/9", 1);
    assert_ne!(other_format, text);
    let err = verify_replay(&other_format).unwrap_err().to_string();
    assert!(err.contains("format"), "{err}");
}

/// Spec V11 (scaled down): clients that handle only the first message of every read complete
/// several games in a row against each other thanks to pacing, reconnecting for each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_message_per_read_clients_complete_games_with_pacing() {
    let mut table = Table::bind("127.0.0.1", [0, 0]).await.unwrap();
    let [a0, a1] = table.local_addrs();
    let spawn = |port: u16, seed: &str| {
        tokio::process::Command::new("python3")
            .args([
                client_path(),
                "127.0.0.1".into(),
                port.to_string(),
                "--games".into(),
                "3".into(),
                "--mode".into(),
                "oneperread".into(),
                "--seed".into(),
                seed.into(),
            ])
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    };
    let c0 = spawn(a0.port(), "5");
    let c1 = spawn(a1.port(), "6");
    let mut rules = Rules::gpw();
    // Pacing must outlast a client's scheduling delay: with 20 ms a client descheduled on a
    // loaded 2-core machine read two messages at once, dropped the second and waited forever.
    rules.pace_ms = 80;
    rules.linger_ms = 2000;
    rules.max_plies = 40;
    for game in 0..3 {
        let g = play_on_table(&mut table, rules.clone(), game)
            .await
            .unwrap();
        assert!(
            g.report.seats.iter().all(|s| s.errors.is_empty()),
            "game {game}: {:?}",
            g.report.seats
        );
        let reason = extra(&g, "reason").as_str().unwrap().to_string();
        assert!(
            [
                "escape",
                "captured_all_blue",
                "lost_all_red",
                "ply_limit_draw"
            ]
            .contains(&reason.as_str()),
            "{reason}"
        );
        assert_verifies(&g);
    }
    for c in [c0, c1] {
        let o = c.wait_with_output().await.unwrap();
        let t = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(t.matches("result ").count(), 3, "{t}");
        assert!(!t.contains("violation") && !t.contains("CLOSED"), "{t}");
    }
}
