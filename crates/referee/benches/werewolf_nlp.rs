//! Werewolf, natural-language division, over WebSocket on loopback: the server's own time per
//! request (everything but the agents' answer time), 13 scripted agents answering at once.
//!
//! Server time of a game = its wall time − the time spent waiting for answers (each measured
//! from the request handed to the socket to the answer read), divided by the number of requests
//! that expect an answer. Broadcast packets are in the server's share.
//!
//! `cargo bench -p kakehiki-referee --bench werewolf_nlp`

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use futures_util::{SinkExt, StreamExt};
use kakehiki_core::replay::ReplayLog;
use kakehiki_referee::games::werewolf_nlp::ws::{handshake, Timeouts};
use kakehiki_referee::games::werewolf_nlp::{LiveTable, Recorder, Seat};
use kakehiki_werewolf::nlp::{NlpGame, NlpSettings};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

/// Answers at once: Over for talk, the first other living agent for targets.
async fn scripted(port: u16, k: usize) {
    let Ok((mut ws, _)) =
        tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/ws")).await
    else {
        return;
    };
    while let Some(Ok(Message::Text(t))) = ws.next().await {
        let at = t.find("\"request\":\"").map_or(0, |i| i + 11);
        let req = &t[at..];
        let reply = if req.starts_with("NAME") {
            format!("bench{k}")
        } else if req.starts_with("TALK\"") || req.starts_with("WHISPER\"") {
            "Over".into()
        } else if ["VOTE", "DIVINE", "GUARD", "ATTACK"]
            .iter()
            .any(|r| req.starts_with(r))
        {
            // The first ALIVE name in status_map other than oneself.
            let me_at = t.find("\"agent\":\"").map(|i| i + 9).unwrap_or(0);
            let me = &t[me_at..me_at + t[me_at..].find('"').unwrap_or(0)];
            let sm = t.find("\"status_map\":{").map_or(t.len(), |i| i + 14);
            let mut pick = String::new();
            for part in t[sm..].split(',') {
                let mut kv = part.split(':');
                let (Some(name), Some(st)) = (kv.next(), kv.next()) else {
                    break;
                };
                let name = name.trim_matches(|c| c == '"' || c == '{' || c == '}');
                if st.contains("ALIVE") && name != me {
                    pick = name.to_string();
                    break;
                }
                if part.contains('}') {
                    break;
                }
            }
            pick
        } else {
            continue;
        };
        if ws.send(Message::Text(reply)).await.is_err() {
            return;
        }
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let n = 13;
    let settings = Arc::new(NlpSettings::defaults(n).expect("13 players"));
    let mut seats: Vec<Seat> = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        for k in 1..=n {
            tokio::spawn(scripted(port, k));
        }
        let mut seats = Vec::new();
        for _ in 0..n {
            let (s, _) = listener.accept().await.expect("accept");
            let _ = s.set_nodelay(true);
            seats.push(Seat::Ws(Some(
                handshake(s, Duration::from_secs(5), None)
                    .await
                    .expect("name"),
            )));
        }
        seats
    });
    let timeouts = Timeouts {
        action_ms: 5000,
        response_ms: 5000,
        acceptable_ms: 0,
    };
    let mut seed = 0u64;
    c.bench_function("werewolf_nlp_ws_server_time_per_request_13", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                seed += 1;
                let mut table = LiveTable {
                    seats: std::mem::take(&mut seats),
                    timeouts,
                    rec: Recorder {
                        log: ReplayLog::new(),
                        errors: vec![Vec::new(); n],
                    },
                };
                for s in &mut table.seats {
                    if let Seat::Ws(Some(a)) = s {
                        a.waited = Duration::ZERO;
                    }
                }
                let mut game = NlpGame::new(
                    settings.clone(),
                    seed,
                    (1..=n).map(|k| format!("bench{k}")).collect(),
                );
                let start = Instant::now();
                rt.block_on(game.run(&mut table));
                let wall = start.elapsed();
                let waited: Duration = table
                    .seats
                    .iter()
                    .map(|s| match s {
                        Seat::Ws(Some(a)) => a.waited,
                        _ => Duration::ZERO,
                    })
                    .sum();
                let asks = table
                    .rec
                    .log
                    .lines()
                    .iter()
                    .filter(|l| {
                        l.contains("\"event\":\"answer\"") || l.contains("\"event\":\"fail\"")
                    })
                    .count()
                    .max(1);
                assert!(
                    table.seats.iter().all(|s| matches!(s, Seat::Ws(Some(_)))),
                    "an agent dropped out"
                );
                total += wall.saturating_sub(waited) / asks as u32;
                seats = table.seats;
            }
            total
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
