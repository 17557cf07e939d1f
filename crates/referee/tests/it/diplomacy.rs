//! Diplomacy through the referee: built-in games to the year limit, process bots that crash, stay
//! silent, send illegal orders or garbage, press privacy, and replays that re-run byte for byte.

use std::path::PathBuf;

use kakehiki_core::{SeatErrorKind, SeatSpec};
use kakehiki_referee::verify::verify_replay;
use kakehiki_referee::{find_game, MatchRecord, MatchSpec};
use serde_json::Value;

fn bot(mode: &str) -> SeatSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/diplomacy_bots/bot.py");
    SeatSpec::Cmd(vec![
        "python3".into(),
        path.display().to_string(),
        mode.into(),
    ])
}

fn builtin(name: &str) -> SeatSpec {
    SeatSpec::Builtin(name.into())
}

fn play(seats: Vec<SeatSpec>, opts: &[(&str, &str)]) -> MatchRecord {
    play_in(seats, opts, kakehiki_agent::SandboxLevel::Best)
}

fn play_in(
    seats: Vec<SeatSpec>,
    opts: &[(&str, &str)],
    level: kakehiki_agent::SandboxLevel,
) -> MatchRecord {
    let mut spec = MatchSpec::new("diplomacy", 42, seats);
    spec.sandbox.jail.level = level;
    for (k, v) in opts {
        spec.options.insert(k.to_string(), v.to_string());
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(find_game("diplomacy").unwrap().play(&spec))
        .expect("match runs")
}

fn events(rec: &MatchRecord) -> Vec<Value> {
    rec.replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const FAST: &[(&str, &str)] = &[
    ("max_year", "1901"),
    ("start_ms", "5000"),
    ("movement_ms", "1500"),
    ("retreat_ms", "1500"),
    ("adjustment_ms", "1500"),
    ("press_ms", "1500"),
];

#[test]
fn builtin_random_game_reaches_the_year_limit_and_replays() {
    let rec = play(
        (0..7).map(|_| builtin("random")).collect(),
        &[("max_year", "1904")],
    );
    let r = &rec.report;
    assert_eq!(r.game, "diplomacy");
    assert_eq!(r.seats.len(), 7);
    let v = serde_json::to_value(r).unwrap();
    for key in [
        "game",
        "rules",
        "seed",
        "scores",
        "scores_exact",
        "winner",
        "seats",
        "centers",
    ] {
        assert!(v.get(key).is_some(), "report lacks {key}: {v}");
    }
    let total: i64 = v["centers"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c.as_i64().unwrap())
        .sum();
    assert!((22..=34).contains(&total), "{total}");
    assert_eq!(v["seats"][2]["power"], "FRANCE");
    if r.winner.is_none() {
        assert_eq!(v["end"], "year_limit");
    }
    // Re-running the replay reproduces it byte for byte.
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
    // A tampered reply is detected.
    let text = rec.replay.to_text().replacen(
        "\"orders\\\":[\\\"",
        "\"orders\\\":[\\\"A XXX H\\\",\\\"",
        1,
    );
    assert!(verify_replay(&text).is_err());
}

#[test]
fn unknown_bots_options_and_seat_counts_are_setup_errors() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let d = find_game("diplomacy").unwrap();
    let mut spec = MatchSpec::new("diplomacy", 1, (0..7).map(|_| builtin("random")).collect());
    spec.seats[3] = builtin("nope");
    assert!(rt
        .block_on(d.play(&spec))
        .unwrap_err()
        .to_string()
        .contains("nope"));
    let spec = MatchSpec::new("diplomacy", 1, (0..6).map(|_| builtin("random")).collect());
    assert!(rt.block_on(d.play(&spec)).is_err());
    let mut spec = MatchSpec::new("diplomacy", 1, (0..7).map(|_| builtin("random")).collect());
    spec.options.insert("max_year".into(), "soon".into());
    assert!(rt
        .block_on(d.play(&spec))
        .unwrap_err()
        .to_string()
        .contains("max_year"));
}

#[test]
fn crashing_silent_illegal_and_garbage_bots_are_handled() {
    let seats = vec![
        bot("crash"),
        bot("silent"),
        bot("illegal"),
        bot("garbage"),
        bot("hold"),
        builtin("random"),
        builtin("hold"),
    ];
    let rec = play(seats, FAST);
    let r = &rec.report;
    let kinds = |i: usize| r.seats[i].errors.iter().map(|e| e.kind).collect::<Vec<_>>();
    assert!(
        kinds(0).contains(&SeatErrorKind::Crash),
        "{:?}",
        r.seats[0].errors
    );
    assert!(
        kinds(1).contains(&SeatErrorKind::Timeout),
        "{:?}",
        r.seats[1].errors
    );
    assert!(!kinds(1).contains(&SeatErrorKind::Crash));
    assert!(
        kinds(2).contains(&SeatErrorKind::IllegalAction),
        "{:?}",
        r.seats[2].errors
    );
    assert!(
        kinds(3).contains(&SeatErrorKind::InvalidReply),
        "{:?}",
        r.seats[3].errors
    );
    assert!(
        r.seats[4].errors.is_empty(),
        "the hold bot's stale reply is dropped silently: {:?}",
        r.seats[4].errors
    );
    // The game completed: Fall 1901 was adjudicated.
    let ev = events(&rec);
    assert!(ev.iter().any(|e| e["event"] == "end"));
    let phases: Vec<&str> = ev
        .iter()
        .filter(|e| e["event"] == "phase")
        .filter_map(|e| e["phase"].as_str())
        .collect();
    assert!(phases.contains(&"F1901M"), "{phases:?}");
    // Austria (crashed) is in civil disorder: it gets no message after its crash.
    let austria: Vec<&Value> = ev
        .iter()
        .filter(|e| e["event"] == "seat" && e["seat"] == 0)
        .collect();
    assert_eq!(austria.len(), 2, "{austria:?}");
    assert_eq!(austria[1]["at"], "S1901M");
    assert_eq!(austria[1]["outcome"], "crash");
    assert!(!ev
        .iter()
        .any(|e| e["event"] == "end_message" && e["power"] == "AUSTRIA"));
    // Its units held in Spring: they are all still there.
    verify_replay(&rec.replay.to_text()).expect("replay with process bots verifies");
}

#[test]
fn press_and_pending_orders_stay_private() {
    let seats = (0..7).map(|_| bot("press")).collect();
    let mut opts = FAST.to_vec();
    opts.push(("press_rounds", "2"));
    let rec = play(seats, &opts);
    let ev = events(&rec);
    let mut press_seen = 0;
    for e in &ev {
        let Some(xs) = e["sent"].as_object() else {
            continue;
        };
        for (to, sent) in xs {
            let (to, sent) = (to.as_str(), sent.as_str().unwrap());
            let msg: Value = serde_json::from_str(sent).unwrap();
            // Press: only the addressee ever sees a message.
            for m in sent.match_indices("PRESS-") {
                let rest = &sent[m.0 + 6..];
                let addressee = rest.split('-').nth(1).unwrap();
                assert_eq!(addressee, to, "press leaked: {sent}");
                press_seen += 1;
            }
            // Void orders are reported to their own power only.
            for p in [
                "AUSTRIA", "ENGLAND", "FRANCE", "GERMANY", "ITALY", "RUSSIA", "TURKEY",
            ] {
                if p != to {
                    assert!(
                        !sent.contains(&format!("SECRET{p}")),
                        "{p}'s void order leaked to {to}: {sent}"
                    );
                }
            }
            // No message carries orders of a phase not yet adjudicated.
            if msg["type"] == "phase" {
                let phase = msg["phase"].as_str().unwrap();
                for h in msg["history"].as_array().unwrap() {
                    assert_ne!(
                        h["phase"].as_str().unwrap(),
                        phase,
                        "pending orders leaked: {sent}"
                    );
                }
            }
        }
    }
    assert!(press_seen > 0, "press was delivered");
    // The press is recorded in the replay.
    assert!(ev
        .iter()
        .any(|e| e["event"] == "press" && !e["delivered"].as_array().unwrap().is_empty()));
    verify_replay(&rec.replay.to_text()).expect("press replay verifies");
}

#[test]
fn unanimous_draw_votes_end_the_game_only_when_enabled() {
    let seats: Vec<SeatSpec> = (0..7).map(|_| bot("draw")).collect();
    let mut opts = FAST.to_vec();
    opts.push(("draw_votes", "true"));
    let rec = play(seats.clone(), &opts);
    let v = serde_json::to_value(&rec.report).unwrap();
    assert_eq!(v["end"], "draw");
    assert_eq!(
        v["year"],
        Value::Null,
        "ended before any phase was adjudicated: {v}"
    );
    assert_eq!(rec.report.scores_exact, vec!["1/7"; 7]);
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
    // Without the option the votes are ignored and the game runs to its year limit.
    let rec = play(seats, FAST);
    let v = serde_json::to_value(&rec.report).unwrap();
    assert_eq!(v["end"], "year_limit");
}

fn tcp_cmd(mode: &str, end_file: Option<&std::path::Path>) -> SeatSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/diplomacy_bots/bot.py");
    let mut argv: Vec<String> = vec![
        "python3".into(),
        path.display().to_string(),
        mode.into(),
        "tcp".into(),
        "{host}".into(),
        "{port}".into(),
    ];
    if let Some(f) = end_file {
        argv.push(f.display().to_string());
    }
    SeatSpec::TcpCmd(argv)
}

/// The `end` messages recorded in the replay, by power.
fn end_messages(ev: &[Value]) -> Vec<(String, Value)> {
    ev.iter()
        .filter(|e| e["event"] == "end_message")
        .map(|e| {
            (
                e["power"].as_str().unwrap().to_string(),
                serde_json::from_str(e["sent"].as_str().unwrap()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn tcp_and_tcp_cmd_seats_play_a_full_game_and_get_the_recorded_end_message() {
    let dir = tempfile::tempdir().unwrap();
    let end_file = |i: usize| dir.path().join(format!("end-{i}.json"));
    // A `tcp` seat: a client we start ourselves, connecting to the port we give the referee.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/diplomacy_bots/bot.py");
    let mut own = std::process::Command::new("python3")
        .arg(&path)
        .args(["hold", "tcp", "127.0.0.1", &port.to_string()])
        .arg(end_file(1))
        .spawn()
        .unwrap();
    let seats = vec![
        tcp_cmd("hold", Some(&end_file(0))),
        SeatSpec::Tcp,
        tcp_cmd("illegal", None),
        builtin("random"),
        bot("hold"),
        builtin("random"),
        tcp_cmd("hold", Some(&end_file(6))),
    ];
    let mut opts = FAST.to_vec();
    opts.retain(|(k, _)| *k != "max_year");
    opts.push(("max_year", "1902"));
    let port_s = port.to_string();
    opts.push(("port", &port_s));
    // The test's clients write the end message they received to files the test reads: outside
    // the sandbox, whose clients can write only their own private /tmp.
    let rec = play_in(seats, &opts, kakehiki_agent::SandboxLevel::Off);
    let _ = own.wait();
    let r = &rec.report;
    for i in [0, 1, 4, 6] {
        assert!(
            r.seats[i].errors.is_empty(),
            "seat {i}: {:?}",
            r.seats[i].errors
        );
    }
    let kinds: Vec<SeatErrorKind> = r.seats[2].errors.iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&SeatErrorKind::IllegalAction), "{kinds:?}");
    let ev = events(&rec);
    // Every phase of both years was played with the TCP seats answering.
    let phases: Vec<&str> = ev
        .iter()
        .filter(|e| e["event"] == "phase")
        .filter_map(|e| e["phase"].as_str())
        .collect();
    assert!(phases.contains(&"F1902M"), "{phases:?}");
    for x in ev.iter().filter(|e| e["event"] == "seat") {
        if x["seat"] == 0 || x["seat"] == 1 {
            assert_eq!(x["outcome"], "reply", "{x}");
        }
    }
    // The final end message went to every seat and is in the replay; the TCP clients received
    // exactly what was recorded.
    let ends = end_messages(&ev);
    assert_eq!(ends.len(), 7, "{ends:?}");
    for (p, m) in &ends {
        assert_eq!(m["type"], "end", "{p}");
        assert_eq!(m["reason"], r.extra["end"], "{p}");
    }
    for (i, power) in [(0, "AUSTRIA"), (1, "ENGLAND"), (6, "TURKEY")] {
        let got: Value =
            serde_json::from_str(&std::fs::read_to_string(end_file(i)).unwrap()).unwrap();
        let recorded = &ends.iter().find(|(p, _)| p == power).unwrap().1;
        assert_eq!(&got, recorded, "{power}");
    }
    verify_replay(&rec.replay.to_text()).expect("replay with TCP seats verifies");
}

#[test]
fn a_tcp_cmd_client_that_never_connects_leaves_its_power_in_civil_disorder() {
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("hold")).collect();
    seats[5] = SeatSpec::TcpCmd(vec!["python3".into(), "-c".into(), "pass".into()]);
    let mut opts = FAST.to_vec();
    opts.push(("connect_ms", "3000"));
    let rec = play(seats, &opts);
    let e = &rec.report.seats[5].errors;
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].kind, SeatErrorKind::NotReady);
    assert!(e[0].detail.contains("cannot start the bot"), "{e:?}");
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}

#[test]
fn failed_orders_carry_their_reason_to_bots_and_into_the_replay() {
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("random")).collect();
    seats[2] = bot("hold");
    let mut opts = FAST.to_vec();
    opts.retain(|(k, _)| *k != "max_year");
    opts.push(("max_year", "1903"));
    let rec = play(seats, &opts);
    let ev = events(&rec);
    let mut failed = 0;
    for e in ev.iter().filter(|e| e["event"] == "phase") {
        for a in e["adjudicated"].as_array().unwrap() {
            let results = a["results"].as_object().unwrap();
            let failures = a["failures"].as_object().unwrap();
            for (unit, res) in results {
                assert_eq!(res == "fails", failures.contains_key(unit), "{unit}: {a}");
            }
            for (unit, why) in failures {
                assert_eq!(results[unit], "fails");
                assert!(
                    [
                        "bounced",
                        "no convoy",
                        "dislodged",
                        "cut",
                        "convoy paradox (Szykman rule)",
                        "allowance used up",
                        "already used by an earlier order"
                    ]
                    .contains(&why.as_str().unwrap()),
                    "{why}"
                );
                failed += 1;
            }
        }
    }
    assert!(failed > 0, "random games have failed orders");
    // France's bot receives the same reasons in its history.
    let mut seen = 0;
    for e in ev.iter().filter(|e| e["event"] == "phase") {
        if let Some(sent) = e["sent"]["FRANCE"].as_str() {
            let msg: Value = serde_json::from_str(sent).unwrap();
            for h in msg["history"].as_array().unwrap() {
                let adj = ev
                    .iter()
                    .filter(|e| e["event"] == "phase")
                    .flat_map(|e| e["adjudicated"].as_array().unwrap().iter())
                    .find(|a| a["phase"] == h["phase"])
                    .unwrap();
                assert_eq!(h["failures"], adj["failures"], "{h}");
                seen += h["failures"].as_object().unwrap().len();
            }
        }
    }
    assert!(seen > 0);
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}

/// The `seat_end` line of a seat.
fn seat_end(ev: &[Value], seat: usize) -> Value {
    ev.iter()
        .find(|e| e["event"] == "seat_end" && e["seat"] == seat)
        .cloned()
        .unwrap_or_else(|| panic!("no seat_end line for seat {seat}"))
}

#[test]
fn a_bot_with_a_syntax_error_is_reported_with_its_exit_code_and_stderr() {
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("hold")).collect();
    seats[3] = SeatSpec::Cmd(vec![
        "python3".into(),
        "-c".into(),
        "syntax error here".into(),
    ]);
    let rec = play(seats, FAST);
    let s = &rec.report.seats[3];
    let v = serde_json::to_value(s).unwrap();
    assert_eq!(v["exit"], "exit code 1", "{v}");
    assert!(v["stderr"].as_str().unwrap().contains("SyntaxError"), "{v}");
    assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
    assert_eq!(s.errors[0].kind, SeatErrorKind::NotReady);
    assert_eq!(s.errors[0].at, "start");
    assert!(s.errors[0].detail.contains("exit code 1"), "{:?}", s.errors);
    let end = seat_end(&events(&rec), 3);
    assert_eq!(end["exit_code"], 1, "{end}");
    assert!(
        end["stderr"].as_str().unwrap().contains("SyntaxError"),
        "{end}"
    );
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}

#[test]
fn a_bot_that_crashes_mid_game_is_reported_with_its_phase_exit_code_and_stderr() {
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("hold")).collect();
    seats[2] = bot("late-crash");
    let mut opts = FAST.to_vec();
    opts.retain(|(k, _)| *k != "max_year");
    opts.push(("max_year", "1902"));
    let rec = play(seats, &opts);
    let s = &rec.report.seats[2];
    let v = serde_json::to_value(s).unwrap();
    assert_eq!(v["exit"], "exit code 1", "{v}");
    assert!(
        v["stderr"]
            .as_str()
            .unwrap()
            .contains("bot.py: giving up at S1902M"),
        "{v}"
    );
    assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
    assert_eq!(s.errors[0].kind, SeatErrorKind::Crash);
    assert_eq!(s.errors[0].at, "S1902M");
    assert!(s.errors[0].detail.contains("exit code 1"), "{:?}", s.errors);
    let ev = events(&rec);
    let end = seat_end(&ev, 2);
    assert_eq!(end["exit_code"], 1, "{end}");
    assert!(
        end["stderr"].as_str().unwrap().contains("giving up"),
        "{end}"
    );
    // France is in civil disorder from then on.
    let last = ev.iter().rev().find(|e| e["event"] == "end").unwrap();
    assert!(
        last["state"]["civil_disorder"]
            .as_array()
            .unwrap()
            .contains(&"FRANCE".into()),
        "{last}"
    );
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}

#[test]
fn a_timeout_names_its_phase_and_its_limit() {
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("hold")).collect();
    seats[4] = bot("silent");
    let rec = play(seats, FAST);
    let e = &rec.report.seats[4].errors;
    assert!(!e.is_empty());
    assert_eq!(e[0].kind, SeatErrorKind::Timeout);
    assert_eq!(e[0].at, "S1901M");
    assert_eq!(
        e[0].detail,
        format!(
            "no reply to orders within 1500 ms{}",
            kakehiki_referee::seat::NOTHING_ARRIVED
        )
    );
    let ev = events(&rec);
    let x = ev
        .iter()
        .find(|x| x["event"] == "seat" && x["seat"] == 4 && x["outcome"] == "timeout")
        .unwrap();
    assert_eq!(x["at"], "S1901M");
    assert_eq!(x["kind"], "orders");
    assert_eq!(x["limit_ms"], 1500);
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}

#[test]
fn a_v1_replay_upgrades_to_one_that_verifies() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/diplomacy-v1.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let old = kakehiki_core::replay::ReplayLog::parse(&text).unwrap();
    let d = find_game("diplomacy").unwrap();
    // The @1 replay no longer re-runs as it is, and says how to convert it.
    let err = verify_replay(&text).unwrap_err().to_string();
    assert!(err.contains("--upgrade"), "{err}");
    let new = d.upgrade(&old).expect("the @1 replay upgrades").to_text();
    assert!(new.starts_with(r#"{"event":"header","format":"kakehiki/diplomacy-replay@2""#));
    let rec = verify_replay(&new).expect("the upgraded replay verifies");
    // The same match: the crashed seat and the press bot's void orders are still there.
    let kinds = |i: usize| {
        rec.report.seats[i]
            .errors
            .iter()
            .map(|e| (e.kind, e.at.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(1), vec![(SeatErrorKind::Crash, "S1901M".to_string())]);
    assert_eq!(
        kinds(0),
        vec![
            (SeatErrorKind::IllegalAction, "S1901M".to_string()),
            (SeatErrorKind::IllegalAction, "F1901M".to_string())
        ]
    );
    // An @2 replay has nothing to upgrade.
    let again = kakehiki_core::replay::ReplayLog::parse(&new).unwrap();
    assert!(d.upgrade(&again).is_err());
}
