//! The referee cannot be exhausted by its clients (issue 18, item 4): floods of idle
//! connections to a seat port and to a `serve werewolf` listener are closed at once and counted
//! while the match or set completes; WebSocket fragment floods and oversized messages close the
//! connection with a reason and leave the server's memory bounded; an overlong line on a TCP seat
//! is a typed fault.
//!
//! Loopback only; every loop is bounded in count and time. The tests count this process's open
//! descriptors and resident memory, so they run one at a time (a lock).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use kakehiki_agent::{ClientProcess, SandboxConfig};
use kakehiki_core::{SeatErrorKind, SeatSpec};
use kakehiki_referee::driver::ListenNotice;
use kakehiki_referee::games::werewolf::server::{serve_set, SetConfig};
use kakehiki_referee::verify::verify_replay;
use kakehiki_referee::{find_game, MatchSpec};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const FLOOD: usize = 1500;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// `n` connections to `addr`, held open and silent.
async fn flood(addr: std::net::SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        match timeout(Duration::from_secs(10), TcpStream::connect(addr)).await {
            Ok(Ok(s)) => held.push(s),
            other => panic!("flood connection {i} failed: {other:?}"),
        }
    }
    held
}

fn python() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Read from `s` until `needle` has arrived (bounded by `limit`).
async fn read_until(s: &mut TcpStream, needle: &str, limit: Duration) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let until = tokio::time::Instant::now() + limit;
    while !String::from_utf8_lossy(&got).contains(needle) {
        match tokio::time::timeout_at(until, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            other => panic!(
                "waiting for {needle:?}: {other:?} after {:?}",
                String::from_utf8_lossy(&got)
            ),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_idle_connections_to_a_geister_seat_port_is_closed_counted_and_the_match_completes(
) {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut spec = MatchSpec::new(
        "geister",
        3,
        vec![SeatSpec::Tcp, SeatSpec::Builtin("random".into())],
    );
    for (k, v) in [
        ("port0", "0"),
        ("pace_ms", "0"),
        ("linger_ms", "500"),
        ("set_timeout_ms", "20000"),
        ("per_move_ms", "20000"),
        ("bank_ms", "0"),
    ] {
        spec.options.insert(k.into(), v.into());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    spec.on_listen = ListenNotice::new(move |_, addr| {
        let _ = tx.send(addr);
    });
    let game = tokio::spawn(async move { find_game("geister").unwrap().play(&spec).await });
    let addr = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(10)))
        .await
        .unwrap()
        .expect("the seat port is bound");
    // The player connects first and is seated (it is asked for its placement).
    let mut me = TcpStream::connect(addr).await.unwrap();
    read_until(&mut me, "SET?", Duration::from_secs(10)).await;
    let before = open_fds();
    let held = flood(addr, FLOOD).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = open_fds();
    eprintln!("geister: descriptors {before} before the flood, {during} during it");
    // Our own FLOOD client ends are open; the referee may hold at most the queue's cap more.
    assert!(
        during < before + FLOOD + 64,
        "descriptors: {before} before the flood, {during} during it: the referee holds the flood"
    );
    // Play on: a placement, then a garbage move (the game ends at once: illegal move).
    me.write_all(b"SET:ABCD\r\n").await.unwrap();
    read_until(&mut me, "MOV?", Duration::from_secs(20)).await;
    me.write_all(b"HELLO WORLD\r\n").await.unwrap();
    let record = timeout(Duration::from_secs(60), game)
        .await
        .expect("the match ends in time")
        .unwrap()
        .expect("the match runs");
    drop(held);
    assert_eq!(record.report.extra["reason"], "illegal_move");
    let excess: Vec<_> = record.report.seats[0]
        .errors
        .iter()
        .filter(|e| e.kind == SeatErrorKind::ExcessConnections)
        .collect();
    assert_eq!(excess.len(), 1, "{:?}", record.report.seats[0].errors);
    // 16 wait in the (never read again) queue, the rest were closed at once.
    assert!(
        excess[0]
            .detail
            .starts_with(&format!("{} connections", FLOOD - 16)),
        "{}",
        excess[0].detail
    );
    assert!(record.report.seats[1].errors.is_empty());
    // Serialised like every seat error, recorded in the replay, and the replay re-runs.
    let json = serde_json::to_value(&record.report).unwrap();
    assert!(
        json["seats"][0]["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "excess_connections"),
        "{json}"
    );
    assert!(record
        .replay
        .lines()
        .iter()
        .any(|l| l.contains("\"event\":\"connections\"")
            && l.contains(&format!("\"excess\":{}", FLOOD - 16))));
    let again = verify_replay(&record.replay.to_text()).expect("the replay re-runs");
    assert_eq!(again.report, record.report);
}

fn aiwolf_clients(port: u16, n: usize) -> Vec<ClientProcess> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/bots/python/aiwolf_client.py");
    (0..n)
        .map(|i| {
            let argv: Vec<String> = vec![
                "python3".into(),
                script.display().to_string(),
                "127.0.0.1".into(),
                port.to_string(),
                "--name".into(),
                format!("normal{i:02}"),
                "--mode".into(),
                "normal".into(),
            ];
            let mut cfg = SandboxConfig::default();
            cfg.jail.tcp_connect = vec![port];
            ClientProcess::spawn(&argv, &cfg).unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_idle_connections_to_serve_werewolf_is_closed_counted_and_the_set_completes() {
    if !python() {
        eprintln!("python3 not found: skipping");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let set = SetConfig {
        players: 5,
        games: 2,
        run_seed: 7,
        rules: None,
        // NAME must come within its own limit: the flood's slots are free again after it.
        options: BTreeMap::from([
            ("time_limit_ms".to_string(), "2000".to_string()),
            ("name_timeout_ms".to_string(), "2000".to_string()),
        ]),
        out_dir: Some(dir.path().to_path_buf()),
        numbers: BTreeMap::new(),
    };
    let server = tokio::spawn(async move { serve_set(listener, &set).await });
    let before = open_fds();
    let held = flood(addr, FLOOD).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let during = open_fds();
    eprintln!("serve werewolf: descriptors {before} before the flood, {during} during it");
    assert!(
        during < before + FLOOD + 64 + 64,
        "descriptors: {before} before the flood, {during} during it: the server holds the flood"
    );
    // The idle ones that got a slot time out on NAME; then real agents are seated.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let clients = aiwolf_clients(addr.port(), 5);
    let result = timeout(Duration::from_secs(120), server)
        .await
        .expect("the set ends in time")
        .unwrap()
        .expect("the set runs");
    drop(held);
    drop(clients);
    assert_eq!(result.standings.games, 2);
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    let excess = results["excess_connections"].as_u64().expect("counted");
    eprintln!("serve werewolf: {excess} of {FLOOD} closed at once");
    assert!(
        (1000..=(FLOOD as u64 - 64)).contains(&excess),
        "{excess} of {FLOOD} closed at once"
    );
    assert_eq!(excess, result.excess_connections);
    assert!(dir.path().join("results_agents.csv").exists());
}

/// A WebSocket client frame (masked, as clients must): `fin`, `opcode`, `len` bytes of payload
/// announced (the payload itself is written separately).
fn frame_header(fin: bool, opcode: u8, len: u64) -> Vec<u8> {
    let mut h = vec![(u8::from(fin) << 7) | opcode];
    if len < 126 {
        h.push(0x80 | len as u8);
    } else if len <= 0xffff {
        h.push(0x80 | 126);
        h.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        h.push(0x80 | 127);
        h.extend_from_slice(&len.to_be_bytes());
    }
    h.extend_from_slice(&[0, 0, 0, 0]); // a zero mask: the payload goes as is
    h
}

/// Connect to the NLP server and complete the WebSocket handshake (the NAME request follows).
async fn ws_connect(addr: std::net::SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    read_until(&mut s, "NAME", Duration::from_secs(10)).await;
    s
}

/// Write `header` then up to `budget` payload bytes (continuation frames of 16 KiB after it if
/// `fragments`), reading what the server sends meanwhile; returns (bytes written, bytes read)
/// once the server has closed or the budget is spent.
async fn push(mut s: TcpStream, fragments: bool, budget: usize) -> (usize, Vec<u8>) {
    let (mut rd, mut wr) = s.split();
    let reader = async {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(Ok(n)) = timeout(Duration::from_secs(15), rd.read(&mut buf)).await {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        got
    };
    let writer = async {
        let chunk = vec![b'x'; 16 << 10];
        let mut sent = 0usize;
        let first = if fragments {
            frame_header(false, 1, chunk.len() as u64)
        } else {
            frame_header(true, 1, budget as u64)
        };
        if wr.write_all(&first).await.is_err() {
            return 0;
        }
        while sent < budget {
            if fragments
                && sent > 0
                && wr
                    .write_all(&frame_header(false, 0, chunk.len() as u64))
                    .await
                    .is_err()
            {
                break;
            }
            match timeout(Duration::from_secs(5), wr.write_all(&chunk)).await {
                Ok(Ok(())) => sent += chunk.len(),
                _ => break,
            }
        }
        sent
    };
    let (sent, got) = tokio::join!(writer, reader);
    (sent, got)
}

/// The close frame the server sent, if any: (code, reason).
fn close_frame(got: &[u8]) -> Option<(u16, String)> {
    let mut i = 0;
    while i + 2 <= got.len() {
        let op = got[i] & 0x0f;
        let mut len = u64::from(got[i + 1] & 0x7f);
        let mut p = i + 2;
        if len == 126 {
            len = u64::from(u16::from_be_bytes([got[p], got[p + 1]]));
            p += 2;
        } else if len == 127 {
            len = u64::from_be_bytes(got[p..p + 8].try_into().ok()?);
            p += 8;
        }
        let end = p + len as usize;
        if end > got.len() {
            return None;
        }
        if op == 8 && len >= 2 {
            let code = u16::from_be_bytes([got[p], got[p + 1]]);
            return Some((code, String::from_utf8_lossy(&got[p + 2..end]).into_owned()));
        }
        i = end;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_fragment_floods_and_oversized_messages_are_closed_with_a_reason() {
    use kakehiki_referee::games::werewolf_nlp::{server, Config};
    let _one = ONE_AT_A_TIME.lock().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let cfg = server::ServeConfig {
        config: Config::for_players(5),
        games: 1,
        seed: 1,
        out: None,
    };
    let server = tokio::spawn(server::serve(listener, cfg));
    // Eight agents at once each send a text message in 16 KiB fragments without FIN, up to
    // 16 MiB each: 128 MiB the server would have to hold without a message cap.
    let rss_before = rss_kib();
    let mut floods = Vec::new();
    for _ in 0..8 {
        let s = ws_connect(addr).await;
        floods.push(tokio::spawn(push(s, true, 16 << 20)));
    }
    let mut peak = 0;
    let mut results = Vec::new();
    for f in floods {
        while !f.is_finished() {
            peak = peak.max(rss_kib());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        results.push(f.await.unwrap());
    }
    eprintln!(
        "nlp: RSS {rss_before} KiB before, peak {peak} KiB; sent {:?} bytes",
        results.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    for (sent, got) in &results {
        assert!(
            *sent < 16 << 20,
            "the server kept reading a fragmented message ({sent} bytes)"
        );
        let (code, reason) = close_frame(got).expect("a close frame");
        assert_eq!(code, 1009, "message too big");
        assert_eq!(reason, "message over 65536 bytes");
    }
    let grown = peak.saturating_sub(rss_before);
    assert!(
        grown < 32 << 10,
        "resident memory grew by {grown} KiB during the flood"
    );
    // One frame announcing 1 GiB: refused on its header.
    let s = ws_connect(addr).await;
    let (sent, got) = push(s, false, 1 << 30).await;
    assert!(sent < 64 << 20, "{sent} bytes of an oversized frame read");
    let (code, reason) = close_frame(&got).expect("a close frame");
    assert_eq!((code, reason.as_str()), (1009, "message over 65536 bytes"));
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overlong_line_on_a_diplomacy_tcp_seat_is_a_typed_fault() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut seats = vec![SeatSpec::Tcp];
    seats.extend((0..6).map(|_| SeatSpec::Builtin("hold".into())));
    let mut spec = MatchSpec::new("diplomacy", 5, seats);
    for (k, v) in [
        ("port", "0"),
        ("max_year", "1901"),
        ("movement_ms", "500"),
        ("retreat_ms", "500"),
        ("adjustment_ms", "500"),
    ] {
        spec.options.insert(k.into(), v.into());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    spec.on_listen = ListenNotice::new(move |_, addr| {
        let _ = tx.send(addr);
    });
    let game = tokio::spawn(async move { find_game("diplomacy").unwrap().play(&spec).await });
    let addr = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(10)))
        .await
        .unwrap()
        .expect("the seat port is bound");
    let mut me = TcpStream::connect(addr).await.unwrap();
    // Ready at the start, then 8 MiB without a newline as the reply to the first phase; the
    // rest of the game is answered with nothing (timeouts are fine).
    read_until(&mut me, "\n", Duration::from_secs(10)).await;
    me.write_all(b"{\"ready\":true}\n").await.unwrap();
    read_until(&mut me, "\"phase\"", Duration::from_secs(10)).await;
    let rss_before = rss_kib();
    let chunk = vec![b'{'; 64 << 10];
    for _ in 0..128 {
        if timeout(Duration::from_secs(5), me.write_all(&chunk))
            .await
            .map_or(true, |r| r.is_err())
        {
            break;
        }
    }
    let _ = me.write_all(b"\n").await;
    let record = timeout(Duration::from_secs(120), game)
        .await
        .expect("the match ends in time")
        .unwrap()
        .expect("the match runs");
    let grown = rss_kib().saturating_sub(rss_before);
    let errors = &record.report.seats[0].errors;
    eprintln!("diplomacy: RSS grew {grown} KiB; errors {errors:?}");
    let fault = errors
        .iter()
        .find(|e| e.kind == SeatErrorKind::InvalidReply)
        .unwrap_or_else(|| panic!("{errors:?}"));
    assert!(
        fault.detail.contains("longer than 1048576 bytes"),
        "{}",
        fault.detail
    );
    assert!(grown < 32 << 10, "resident memory grew by {grown} KiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_geister_counts_a_flood_on_a_port_against_that_seat_in_the_game_it_hits() {
    use kakehiki_referee::games::geister::serve::{serve, ServeConfig};
    use kakehiki_referee::games::geister::Table;
    let _one = ONE_AT_A_TIME.lock().await;
    let mut table = Table::bind("127.0.0.1", [0, 0]).await.unwrap();
    let [a0, a1] = table.local_addrs();
    let mut rules = kakehiki_geister::Rules::gpw();
    rules.pace_ms = 0;
    rules.linger_ms = 500;
    let cfg = ServeConfig {
        rules,
        seed: 1,
        games: Some(1),
        keep_connections: false,
        log_dir: None,
    };
    let clients = tokio::spawn(async move {
        let mut c0 = TcpStream::connect(a0).await.unwrap();
        let mut c1 = TcpStream::connect(a1).await.unwrap();
        read_until(&mut c0, "SET?", Duration::from_secs(10)).await;
        read_until(&mut c1, "SET?", Duration::from_secs(10)).await;
        // Both seated: 200 more on seat 1's port.
        let held = flood(a1, 200).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        c0.write_all(b"SET:ABCD\r\n").await.unwrap();
        c1.write_all(b"SET:ABCD\r\n").await.unwrap();
        read_until(&mut c0, "MOV?", Duration::from_secs(20)).await;
        c0.write_all(b"HELLO WORLD\r\n").await.unwrap();
        (c0, c1, held)
    });
    let mut records = Vec::new();
    let played = timeout(
        Duration::from_secs(60),
        serve(&mut table, &cfg, |_, r| records.push(r.clone())),
    )
    .await
    .expect("the game ends in time");
    drop(clients.await.unwrap());
    assert_eq!(played, 1);
    let r = &records[0];
    assert!(r.report.seats[0]
        .errors
        .iter()
        .all(|e| e.kind != SeatErrorKind::ExcessConnections));
    let e: Vec<_> = r.report.seats[1]
        .errors
        .iter()
        .filter(|e| e.kind == SeatErrorKind::ExcessConnections)
        .collect();
    assert_eq!(e.len(), 1, "{:?}", r.report.seats[1].errors);
    assert!(
        e[0].detail.starts_with("184 connections"),
        "{}",
        e[0].detail
    );
    let again = verify_replay(&r.replay.to_text()).expect("the replay re-runs");
    assert_eq!(again.report, r.report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_lines_flooding_a_diplomacy_seat_are_recorded_up_to_a_cap() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut seats = vec![SeatSpec::Tcp];
    seats.extend((0..6).map(|_| SeatSpec::Builtin("hold".into())));
    let mut spec = MatchSpec::new("diplomacy", 5, seats);
    for (k, v) in [
        ("port", "0"),
        ("max_year", "1901"),
        ("movement_ms", "3000"),
        ("retreat_ms", "500"),
        ("adjustment_ms", "500"),
    ] {
        spec.options.insert(k.into(), v.into());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    spec.on_listen = ListenNotice::new(move |_, addr| {
        let _ = tx.send(addr);
    });
    let game = tokio::spawn(async move { find_game("diplomacy").unwrap().play(&spec).await });
    let addr = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(10)))
        .await
        .unwrap()
        .expect("the seat port is bound");
    let mut me = TcpStream::connect(addr).await.unwrap();
    read_until(&mut me, "\n", Duration::from_secs(10)).await;
    me.write_all(b"{\"ready\":true}\n").await.unwrap();
    read_until(&mut me, "\"phase\"", Duration::from_secs(10)).await;
    // 5,000 replies to no request (seq 0), 8 KiB each: 40 MB the referee would keep.
    let line = format!("{{\"seq\":0,\"orders\":[\"{}\"]}}\n", "x".repeat(8 << 10));
    let mut batch = String::new();
    for _ in 0..50 {
        batch.push_str(&line);
    }
    for _ in 0..100 {
        if timeout(Duration::from_secs(5), me.write_all(batch.as_bytes()))
            .await
            .map_or(true, |r| r.is_err())
        {
            break;
        }
    }
    let record = timeout(Duration::from_secs(120), game)
        .await
        .expect("the match ends in time")
        .unwrap()
        .expect("the match runs");
    let lists: Vec<Vec<Value>> = record
        .replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "seat")
        .filter_map(|ex| ex["discarded"].as_array().cloned())
        .collect();
    let most = lists.iter().map(Vec::len).max().unwrap_or(0);
    eprintln!("diplomacy: at most {most} discarded lines recorded in an exchange");
    // Ten lines, then a count of the rest.
    assert_eq!(most, 11, "the flood is recorded up to the cap: {lists:?}");
    let longest = lists.iter().find(|l| l.len() == most).unwrap();
    assert!(
        longest[10]
            .as_str()
            .unwrap()
            .ends_with("more lines discarded]"),
        "{longest:?}"
    );
    assert!(lists
        .iter()
        .flatten()
        .all(|l| l.as_str().is_some_and(|s| s.len() <= 4096)));
}
