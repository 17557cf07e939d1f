//! Geister's set-up with TCP seats whose clients connect at different times (issue 38): a seat
//! is sent `SET?` when its own client connects, and its placement is answered at once (`OK `,
//! as in the spec's worked example, §3.10), whether or not its opponent has connected; when the
//! opponent never connects, the seat gets `OK ` and then `WON:`, and the replay keeps its
//! placement. Loopback only, ports chosen by the system.

use std::net::SocketAddr;
use std::time::Duration;

use kakehiki_core::replay::ReplayLog;
use kakehiki_core::{SeatErrorKind, SeatSpec};
use kakehiki_referee::driver::ListenNotice;
use kakehiki_referee::games::geister::{FORMAT, FORMAT_V2};
use kakehiki_referee::verify::verify_replay;
use kakehiki_referee::{find_game, MatchRecord, MatchSpec, RefereeError};
use serde_json::Value;

use crate::support::events;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// A match of two `tcp` seats on free ports, started: the task and each seat's address.
async fn start(
    opts: &[(&str, &str)],
) -> (
    JoinHandle<Result<MatchRecord, RefereeError>>,
    [SocketAddr; 2],
) {
    let mut spec = MatchSpec::new("geister", 38, vec![SeatSpec::Tcp, SeatSpec::Tcp]);
    for (k, v) in [("port0", "0"), ("port1", "0"), ("pace_ms", "0")]
        .iter()
        .chain(opts)
    {
        spec.options.insert(k.to_string(), v.to_string());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    spec.on_listen = ListenNotice::new(move |seat, addr| {
        let _ = tx.send((seat, addr));
    });
    let game = tokio::spawn(async move { find_game("geister").unwrap().play(&spec).await });
    let addrs = tokio::task::spawn_blocking(move || {
        let mut addrs = [None; 2];
        for _ in 0..2 {
            let (seat, addr) = rx
                .recv_timeout(Duration::from_secs(10))
                .expect("both seat ports are bound");
            addrs[seat] = Some(addr);
        }
        addrs.map(Option::unwrap)
    })
    .await
    .unwrap();
    (game, addrs)
}

/// Read from `s` until `needle` has arrived (within `limit`): everything read so far.
async fn read_until(s: &mut TcpStream, got: &mut String, needle: &str, limit: Duration) {
    let mut buf = [0u8; 4096];
    let until = tokio::time::Instant::now() + limit;
    while !got.contains(needle) {
        match tokio::time::timeout_at(until, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.push_str(&String::from_utf8_lossy(&buf[..n])),
            other => panic!("waiting for {needle:?}: {other:?} after {got:?}"),
        }
    }
}

async fn finished(game: JoinHandle<Result<MatchRecord, RefereeError>>) -> MatchRecord {
    timeout(Duration::from_secs(60), game)
        .await
        .expect("the match ends in time")
        .unwrap()
        .expect("the match runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_placement_is_answered_at_once_while_the_opponent_has_not_connected() {
    // The opponent has 20 s to connect: an answer that waited for it would come far too late.
    let (game, [a0, a1]) = start(&[("connect_timeout_ms", "20000"), ("linger_ms", "500")]).await;
    let quick = Duration::from_secs(5);
    let mut c0 = TcpStream::connect(a0).await.unwrap();
    let mut got0 = String::new();
    read_until(&mut c0, &mut got0, "SET?\r\n", quick).await;
    c0.write_all(b"SET:ABCD\r\n").await.unwrap();
    read_until(&mut c0, &mut got0, "OK \r\n", quick).await;
    assert_eq!(got0, "SET?\r\nOK \r\n", "seat 1 has not connected");
    // A move now is out of turn (spec §3.6: waiting for the other placement).
    c0.write_all(b"MOV:A,N\r\n").await.unwrap();
    read_until(&mut c0, &mut got0, "NG \r\n", quick).await;
    // The opponent comes: its own SET?, then play starts once both have placed.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut c1 = TcpStream::connect(a1).await.unwrap();
    let mut got1 = String::new();
    read_until(&mut c1, &mut got1, "SET?\r\n", quick).await;
    c1.write_all(b"SET:EFGH\r\n").await.unwrap();
    read_until(&mut c1, &mut got1, "OK \r\n", quick).await;
    read_until(&mut c0, &mut got0, "MOV?", quick).await;
    assert_eq!(
        got0,
        "SET?\r\nOK \r\nNG \r\nMOV?14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u\r\n"
    );
    // An illegal move ends the game (gpw): LST: to seat 0, WON: to seat 1.
    c0.write_all(b"MOV:E,N\r\n").await.unwrap();
    read_until(&mut c0, &mut got0, "LST:", quick).await;
    read_until(&mut c1, &mut got1, "WON:", quick).await;
    drop((c0, c1));
    let r = finished(game).await;
    assert_eq!(r.report.winner, Some(1));
    assert_eq!(r.report.extra["reason"], "illegal_move");
    // The replay: seat 0 assigned, placed and answered before seat 1 was even assigned, each at
    // its own time since the start.
    let order: Vec<(String, u64, u64)> = r
        .replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "assign" || v["event"] == "set")
        .map(|v| {
            let e = v["event"].as_str().unwrap().to_string();
            (e, v["seat"].as_u64().unwrap(), v["t"].as_u64().unwrap())
        })
        .collect();
    let shape: Vec<(&str, u64)> = order.iter().map(|(e, s, _)| (e.as_str(), *s)).collect();
    assert_eq!(
        shape,
        [("assign", 0), ("set", 0), ("assign", 1), ("set", 1)],
        "{order:?}"
    );
    assert!(order[2].2 >= order[1].2 + 200, "{order:?}");
    let header = &r.replay.lines()[0];
    assert!(
        header.contains(&format!("\"format\":\"{FORMAT}\"")),
        "{header}"
    );
    let again = verify_replay(&r.replay.to_text()).expect("the replay re-runs byte for byte");
    assert_eq!(again.report, r.report);
}

/// Whichever seat connects alone: `SET?`, `OK ` to its placement, then `WON:` when its opponent's
/// connection times out; its placement is in the replay (event and seat record) and the replay
/// re-runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_whose_opponent_never_connects_is_answered_then_wins_with_its_placement_kept() {
    for me in [0usize, 1] {
        let (game, addrs) = start(&[("connect_timeout_ms", "3000"), ("linger_ms", "300")]).await;
        let mut c = TcpStream::connect(addrs[me]).await.unwrap();
        let mut got = String::new();
        read_until(&mut c, &mut got, "SET?\r\n", Duration::from_secs(5)).await;
        c.write_all(b"SET:ABCD\r\n").await.unwrap();
        // At once: well before the opponent's connection times out.
        read_until(&mut c, &mut got, "OK \r\n", Duration::from_secs(2)).await;
        read_until(&mut c, &mut got, "WON:", Duration::from_secs(10)).await;
        read_until(&mut c, &mut got, "\r\n", Duration::from_secs(5)).await;
        // Its own red ghosts upper case; the opponent, which never placed, all blue.
        assert_eq!(
            got, "SET?\r\nOK \r\nWON:14R24R34R44R15B25B35B45B41b31b21b11b40b30b20b10b\r\n",
            "seat {me}"
        );
        drop(c);
        let r = finished(game).await;
        let other = 1 - me;
        assert_eq!(r.report.winner, Some(me));
        assert_eq!(r.report.extra["reason"], "connect_timeout");
        assert!(r.report.seats[me].errors.is_empty(), "{:?}", r.report);
        let errors = &r.report.seats[other].errors;
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].kind, SeatErrorKind::NotReady, "{errors:?}");
        // The placement: the session's event and the seat record's answer to SET?.
        let set = events(&r, "set");
        assert_eq!(set.len(), 1, "{set:?}");
        assert_eq!(set[0]["seat"], me);
        assert_eq!(set[0]["accepted"], true);
        assert_eq!(set[0]["red"], "ABCD");
        let asked: Vec<Value> = events(&r, "seat")
            .into_iter()
            .filter(|e| e["seat"] == me && e["kind"] == "SET?")
            .collect();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0]["outcome"], "reply");
        assert!(r.replay.to_text().contains("SET:ABCD"));
        let end = events(&r, "end");
        assert_eq!(end[0]["winner"], me);
        let again = verify_replay(&r.replay.to_text()).expect("the replay re-runs byte for byte");
        assert_eq!(again.report, r.report);
    }
}

/// Neither client connects: both fail at the same deadline, a double forfeit (spec §2.2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_client_connecting_is_a_double_forfeit() {
    let (game, _) = start(&[("connect_timeout_ms", "300"), ("linger_ms", "100")]).await;
    let r = finished(game).await;
    assert_eq!(r.report.winner, None);
    assert_eq!(r.report.extra["reason"], "double_forfeit");
    for seat in 0..2 {
        let errors = &r.report.seats[seat].errors;
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].kind, SeatErrorKind::NotReady, "{errors:?}");
    }
    verify_replay(&r.replay.to_text()).expect("the replay re-runs byte for byte");
}

/// A `kakehiki-geister/2` replay is to be upgraded, and upgrades: a game of built-in bots is the
/// same game in both formats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v2_replay_asks_for_an_upgrade_and_upgrades() {
    let mut spec = MatchSpec::new(
        "geister",
        5,
        vec![
            SeatSpec::Builtin("random".into()),
            SeatSpec::Builtin("rush".into()),
        ],
    );
    spec.options.insert("pace_ms".into(), "0".into());
    let driver = find_game("geister").unwrap();
    let r = driver.play(&spec).await.unwrap();
    let text = r.replay.to_text();
    let old = text.replacen(FORMAT, FORMAT_V2, 1);
    assert_ne!(old, text);
    let err = verify_replay(&old).unwrap_err();
    assert!(matches!(err, RefereeError::OldReplayFormat { .. }), "{err}");
    let new = driver.upgrade(&ReplayLog::parse(&old).unwrap()).unwrap();
    assert_eq!(new.to_text(), text);
    verify_replay(&new.to_text()).expect("the upgraded replay verifies");
}
