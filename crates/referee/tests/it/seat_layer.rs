//! The one seat layer on its own: every kind of seat answers a request with one typed outcome,
//! recorded in the same `seat` / `seat_end` lines, and a table of replayed seats reproduces the
//! recording byte for byte.

use std::time::Duration;

use kakehiki_agent::SandboxConfig;
use kakehiki_core::exchange::{ExchangeOutcome, SeatRecord};
use kakehiki_core::replay::ReplayLog;
use kakehiki_core::{SeatErrorKind, SeatSpec};
use kakehiki_referee::seat::{pipe, tcp, Ask, ReplyFilter, Seat, Table, Wait};
use tokio::time::Instant;

fn header() -> ReplayLog {
    let mut log = ReplayLog::new();
    log.push(
        &serde_json::json!({"event":"header","format":"test@1","engine":"0","game":"t",
        "rules":"t","seed":1,"seats":[],"params":null}),
    );
    log
}

fn cmd(line: &str) -> SeatSpec {
    format!("cmd:{line}").parse().unwrap()
}

/// The flow both the live and the replayed table go through.
async fn flow(table: &mut Table) {
    let asks = |turn: u32| {
        (0..4)
            .map(|s| {
                Ask::new(
                    s,
                    format!("turn {turn}"),
                    "move",
                    format!("hello {turn}\n").into_bytes(),
                    Duration::from_millis(1500),
                )
            })
            .collect::<Vec<_>>()
    };
    table.turn = 1;
    let a = table
        .ask(asks(1), |seat, ask| {
            format!("builtin {seat} {}", ask.at).into_bytes()
        })
        .await;
    table.record(&serde_json::json!({"event":"turn","n":1,"replies":a.iter().map(|x| x.text()).collect::<Vec<_>>()}));
    table.turn = 2;
    let b = table
        .ask(asks(2), |seat, ask| {
            format!("builtin {seat} {}", ask.at).into_bytes()
        })
        .await;
    table.record(&serde_json::json!({"event":"turn","n":2,"replies":b.iter().map(|x| x.text()).collect::<Vec<_>>()}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_seat_kind_gives_one_typed_outcome_and_replays_byte_for_byte() {
    let specs = vec![
        cmd("sh -c 'while read l; do echo \"got $l\"; done'"),
        cmd("sh -c 'read l; echo \"it broke at $l\" >&2; exit 3'"),
        "builtin:any".parse().unwrap(),
        "builtin:silent".parse().unwrap(),
    ];
    let seats = pipe::start_seats(&specs, &SandboxConfig::default(), "t").unwrap();
    let mut table = Table::new(seats, header());
    flow(&mut table).await;
    let done = table.finish(Duration::from_millis(500)).await;
    let text = done.log.to_text();
    let parsed = ReplayLog::parse(&text).unwrap();
    let rec = SeatRecord::of(&parsed).unwrap();

    let first: Vec<_> = rec.exchanges.iter().filter(|e| e.at == "turn 1").collect();
    assert_eq!(first.len(), 4, "{text}");
    assert_eq!(first[0].outcome, ExchangeOutcome::Reply);
    assert_eq!(first[0].raw.as_deref(), Some("got hello 1"));
    assert!(first[0].time_us.is_some() && first[0].limit_ms == Some(1500));
    assert_eq!(first[1].outcome, ExchangeOutcome::Crash, "{text}");
    assert!(
        first[1].detail.as_deref().unwrap().contains("exit code 3"),
        "{text}"
    );
    assert_eq!(first[2].raw.as_deref(), Some("builtin 2 turn 1"));
    assert_eq!(first[2].time_us, None);
    assert_eq!(first[3].outcome, ExchangeOutcome::Timeout);
    let second: Vec<_> = rec.exchanges.iter().filter(|e| e.at == "turn 2").collect();
    assert_eq!(second[1].outcome, ExchangeOutcome::NotRunning);

    // The crash is one error, at its turn, in the game's label; stderr and exit are kept.
    let errors = &done.errors[1];
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        (errors[0].kind, errors[0].at.as_str(), errors[0].turn),
        (SeatErrorKind::Crash, "turn 1", 1)
    );
    let end = rec.end_of(1).expect("seat 1 ran a program");
    assert_eq!(end.exit_code, Some(3));
    assert!(end.stderr.contains("it broke at hello 1"), "{end:?}");
    // The request it crashed on carries what it wrote; the next one never reached it.
    assert_eq!(
        first[1].stderr.as_deref(),
        Some("it broke at hello 1\n"),
        "{text}"
    );
    assert_eq!(
        (second[1].stderr.as_deref(), second[1].stderr_dropped),
        (None, 0)
    );
    assert!(rec
        .exchanges
        .iter()
        .all(|e| e.seat == 1 || e.stderr.is_none()));
    assert_eq!(
        done.errors[3].iter().map(|e| e.kind).collect::<Vec<_>>(),
        [SeatErrorKind::Timeout; 2]
    );
    assert!(
        done.errors[3][0].detail.contains("within 1500 ms"),
        "{:?}",
        done.errors[3]
    );
    assert!(rec.end_of(2).is_none() && rec.end_of(3).is_none());

    // Re-run: the same flow on replayed seats writes the same bytes.
    let mut again = Table::replayed(&parsed, 4, header()).unwrap();
    flow(&mut again).await;
    let rerun = again.finish(Duration::from_millis(10)).await;
    assert_eq!(rerun.log.to_text(), text);
    assert_eq!(rerun.errors, done.errors);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_client_that_exits_before_connecting_is_seen_within_a_second_with_its_exit_code() {
    let argv: Vec<String> = ["sh", "-c", "echo 'cannot find {host}:{port}' >&2; exit 7"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (mut client, mut queue) = tcp::launch(
        |addr| tcp::client_argv(&argv, addr),
        &SandboxConfig::default(),
        0,
        "seat 0",
    )
    .unwrap();
    let started = Instant::now();
    let r = tcp::wait_connection(
        &mut queue,
        Some(&mut client),
        started + Duration::from_secs(10),
    )
    .await
    .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.outcome, ExchangeOutcome::Crash);
    assert!(
        r.detail.as_deref().unwrap().contains("exit code 7"),
        "{r:?}"
    );
    let seat = tcp::TcpSeat {
        conn: None,
        client: Some(client),
        why_not: r.detail.clone().unwrap(),
    };
    use kakehiki_referee::seat::Transport;
    assert_eq!(seat.failed().unwrap().outcome, ExchangeOutcome::Disconnect);
    let ending = Box::new(seat).finish(Duration::from_millis(100)).await;
    assert_eq!(ending.exit_code, Some(7));
    assert!(
        ending.stderr.contains("cannot find 127.0.0.1:"),
        "{ending:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_seat_answers_lines_and_reports_a_disconnect_with_the_clients_exit() {
    let argv: Vec<String> = [
        "python3",
        "-c",
        "import socket,sys\ns=socket.create_connection((sys.argv[1],int(sys.argv[2])))\nf=s.makefile('rwb')\nl=f.readline()\nf.write(b'ok '+l)\nf.flush()\nf.readline()\nsys.stderr.write('bye\\n')\nsys.exit(5)",
        "{host}",
        "{port}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (mut client, mut queue) = tcp::launch(
        |addr| tcp::client_argv(&argv, addr),
        &SandboxConfig::default(),
        0,
        "seat 0",
    )
    .unwrap();
    let (stream, _) = tcp::wait_connection(
        &mut queue,
        Some(&mut client),
        Instant::now() + Duration::from_secs(10),
    )
    .await
    .unwrap();
    let seat = tcp::TcpSeat::connected(tcp::Conn::start(stream, tcp::MAX_LINE), Some(client));
    let mut table = Table::new(vec![Seat::Live(Box::new(seat))], header());
    let limit = Duration::from_secs(5);
    let a = table
        .ask_one(
            Ask::new(0, "ply 1", "move", b"MOV?\r\n".to_vec(), limit),
            |_, _| Vec::new(),
        )
        .await;
    assert_eq!(a.text().as_deref(), Some("ok MOV?"));
    let b = table
        .ask_one(
            Ask::new(0, "ply 2", "move", b"again\n".to_vec(), limit),
            |_, _| Vec::new(),
        )
        .await;
    assert_eq!(b.outcome, ExchangeOutcome::Crash, "{b:?}");
    assert!(
        b.detail.as_deref().unwrap().contains("exit code 5"),
        "{b:?}"
    );
    let done = table.finish(Duration::from_millis(200)).await;
    assert_eq!(done.ends[0].as_ref().unwrap().exit_code, Some(5));
    assert!(done.ends[0].as_ref().unwrap().stderr.contains("bye"));
    assert_eq!(done.errors[0][0].at, "ply 2");
    // A launched client's stderr goes with the request it answered (or crashed on).
    let rec = SeatRecord::of(&ReplayLog::parse(&done.log.to_text()).unwrap()).unwrap();
    let stderr: Vec<_> = rec.of_seat(0).map(|e| e.stderr.as_deref()).collect();
    assert_eq!(stderr, [None, Some("bye\n")], "{rec:?}");
}

fn wait(seat: usize, limit: Option<Duration>) -> Wait {
    Wait {
        seat,
        at: "ply 1".into(),
        kind: "MOV?".into(),
        limit,
        since: Instant::now(),
        timeout_not_ready: false,
        handshake: false,
    }
}

/// A silent seat's timeout is known in advance: when no live seat owes a reply, `first` gives it
/// at once, dated at its deadline; output a live seat has already sent comes before it, and a
/// live seat that owes a reply is still awaited first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_seats_timeout_comes_at_once_when_no_live_seat_owes_a_reply() {
    let long = Duration::from_secs(30);
    let specs = vec![
        cmd("sh -c 'sleep 20'"),
        "builtin:silent".parse().unwrap(),
        cmd("sh -c 'echo early; sleep 20'"),
        cmd("sh -c 'read l; sleep 0.2; echo \"late $l\"; sleep 20'"),
    ];
    let seats = pipe::start_seats(&specs, &SandboxConfig::default(), "t").unwrap();
    let mut table = Table::new(seats, header());
    let none = |_: usize, _: &Wait| Vec::new();

    // Seat 0 is only listened to: the silent seat's 30 s timeout comes now.
    let started = std::time::Instant::now();
    let (i, a) = table
        .first(&[wait(0, None), wait(1, Some(long))], none)
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((i, a.outcome), (1, ExchangeOutcome::Timeout));
    assert_eq!(a.time_us, Some(30_000_000));

    // What a listened-to seat already sent comes first.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (i, a) = table
        .first(&[wait(2, None), wait(1, Some(long))], none)
        .await
        .unwrap();
    assert_eq!((i, a.text().as_deref()), (0, Some("early")));

    // A live seat that owes a reply is awaited: its reply, 0.2 s later, beats the silent seat.
    let sent = table.tell(3, "ply 2", "MOV?", b"go\n".to_vec(), long).await;
    assert!(sent.is_none(), "{sent:?}");
    let (i, a) = table
        .first(&[wait(3, Some(long)), wait(1, Some(long))], none)
        .await
        .unwrap();
    assert_eq!((i, a.text().as_deref()), (0, Some("late go")));
    table.finish(Duration::from_millis(10)).await;
}

/// The flow of [`lines_that_answer_earlier_messages_are_taken_aside_and_replay`]: two messages
/// that ask for no reply, a request whose reply follows the seat's answers to them, and one
/// whose only line is no reply. What each step gave back.
async fn stray_flow(table: &mut Table, live: bool) -> Vec<String> {
    let limit = Duration::from_secs(5);
    let mut out = Vec::new();
    let told = table
        .tell_taking(0, "t1", "note", b"tell 1\n".to_vec(), limit)
        .await;
    out.push(format!("{told:?}"));
    if live {
        // The answer to `tell 1` arrives before the next message.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let told = table
        .tell_taking(0, "t2", "note", b"tell 2\n".to_vec(), limit)
        .await;
    out.push(format!("{told:?}"));
    let filtered = |msg: &str| {
        let mut ask = Ask::new(0, msg, "ask", format!("{msg}\n").into_bytes(), limit);
        ask.accept = Some(ReplyFilter::new(|b| b.starts_with(b"reply")));
        ask.patience = Some(Duration::from_millis(200));
        ask
    };
    let a = table.ask_one(filtered("ask 3"), |_, _| Vec::new()).await;
    out.push(format!("{:?} {:?}", a.text(), a.discarded));
    let started = Instant::now();
    let a = table.ask_one(filtered("junk 4"), |_, _| Vec::new()).await;
    if live {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
    out.push(format!("{:?} {:?} {:?}", a.outcome, a.text(), a.discarded));
    out
}

/// A seat that answers messages that ask for none: [`Table::tell_taking`] takes its answers out
/// of the way (recorded with the next message), a request with a filter sets them aside until
/// its reply comes, and a lone line that is no reply is the reply after the patience, not a
/// timeout. A replayed table gives back the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_that_answer_earlier_messages_are_taken_aside_and_replay() {
    let specs = vec![cmd(
        "sh -c 'while read l; do case \"$l\" in tell*) echo \"ack $l\";; ask*) echo \"ack $l\"; \
         echo \"reply $l\";; junk*) echo junk;; esac; done'",
    )];
    let seats = pipe::start_seats(&specs, &SandboxConfig::default(), "t").unwrap();
    let mut table = Table::new(seats, header());
    let live = stray_flow(&mut table, true).await;
    assert_eq!(
        live,
        [
            "Told { failed: None, discarded: [] }",
            "Told { failed: None, discarded: [\"ack tell 1\"] }",
            "Some(\"reply ask 3\") [\"ack tell 2\", \"ack ask 3\"]",
            "Reply Some(\"junk\") []",
        ]
    );
    let done = table.finish(Duration::from_millis(500)).await;
    assert!(done.errors[0].is_empty(), "{:?}", done.errors);
    let text = done.log.to_text();
    assert!(
        text.contains(r#"{"event":"seat","seat":0,"at":"t2","kind":"note","outcome":"sent","discarded":["ack tell 1"]}"#),
        "{text}"
    );
    let parsed = ReplayLog::parse(&text).unwrap();
    let mut again = Table::replayed(&parsed, 1, header()).unwrap();
    assert_eq!(stray_flow(&mut again, false).await, live);
    let rerun = again.finish(Duration::from_millis(10)).await;
    assert_eq!(rerun.log.to_text(), text);
}

/// Three requests to seat 0, each answered `ok`, one right after the other.
async fn three_turns(table: &mut Table) {
    for turn in 1..=3 {
        let ask = Ask::new(
            0,
            format!("turn {turn}"),
            "move",
            format!("turn {turn}\n").into_bytes(),
            Duration::from_secs(5),
        );
        let a = table.ask_one(ask, |_, _| Vec::new()).await;
        assert_eq!(a.text().as_deref(), Some("ok"), "{a:?}");
    }
}

/// A bot that writes to stderr as it starts, at every request before its reply, and after its
/// last reply: each exchange carries what it wrote from its request to the next (stderr comes
/// on its own pipe, but what was written before a reply is in that pipe when the next request
/// is sent, and is read there), within the cap over the whole match, and a re-run writes it
/// back byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_carries_the_stderr_written_until_the_next_one() {
    let bot = cmd(
        "python3 -c \"import sys\nsys.stderr.write('starting\\n'); sys.stderr.flush()\nfor l in sys.stdin:\n    sys.stderr.write('thinking about ' + l); sys.stderr.flush()\n    print('ok', flush=True)\nsys.stderr.write('bye\\n')\"",
    );
    for (cap, want) in [
        (
            64 << 10,
            [
                (Some("starting\nthinking about turn 1\n"), 0),
                (Some("thinking about turn 2\n"), 0),
                (Some("thinking about turn 3\nbye\n"), 0),
            ],
        ),
        // 40 bytes over the match: the first request's 31, then 9 of the second's 22.
        (
            40,
            [
                (Some("starting\nthinking about turn 1\n"), 0),
                (Some("thinking "), 13),
                (None, 26),
            ],
        ),
    ] {
        let cfg = SandboxConfig {
            stderr_cap: cap,
            ..SandboxConfig::default()
        };
        let seats = pipe::start_seats(std::slice::from_ref(&bot), &cfg, "t").unwrap();
        let mut table = Table::new(seats, header());
        three_turns(&mut table).await;
        let done = table.finish(Duration::from_secs(2)).await;
        let text = done.log.to_text();
        let parsed = ReplayLog::parse(&text).unwrap();
        let rec = SeatRecord::of(&parsed).unwrap();
        let got: Vec<_> = rec
            .of_seat(0)
            .map(|e| (e.stderr.as_deref(), e.stderr_dropped))
            .collect();
        assert_eq!(got, want, "cap {cap}: {text}");
        assert!(
            rec.end_of(0).unwrap().stderr.starts_with("starting\n"),
            "the tail stays as it was: {text}"
        );
        let mut again = Table::replayed(&parsed, 1, header()).unwrap();
        three_turns(&mut again).await;
        assert_eq!(again.finish(Duration::ZERO).await.log.to_text(), text);
    }
}
