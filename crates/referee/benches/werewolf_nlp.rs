//! Werewolf, natural-language division, over WebSocket on loopback: the server's own time per
//! request, 13 scripted agents answering at once. The game runs as a task on a two-worker
//! runtime, as `kakehiki serve` runs each game.
//!
//! Two figures:
//!
//! * `…_server_time_per_request_13` (the figure): for every answered request, the time
//!   from the previous answer read (from any agent) to this request written to its socket — the
//!   server's handling of an answer and of the next request, broadcasts in between included.
//!   Criterion's time per iteration is the median of those times over one game.
//! * `…_server_share_per_request_13`: a game's wall time minus the time spent waiting for answers
//!   (each from the request written to the answer read), divided by the number of requests that
//!   expect an answer: the mean, with the notifications (DAILY_INITIALIZE, DAILY_FINISH, FINISH
//!   to every agent) charged to the requests.
//!
//! `cargo bench -p kakehiki-referee --bench werewolf_nlp`

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use futures_util::{SinkExt, StreamExt};
use kakehiki_core::exchange::SeatRecord;
use kakehiki_core::replay::ReplayLog;
use kakehiki_referee::games::werewolf_nlp::{run_game, Game, Who};
use kakehiki_referee::seat::ws::{handshake, RequestClock};
use kakehiki_referee::seat::{Seat, Table};
use kakehiki_werewolf::nlp::NlpSettings;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio_tungstenite::tungstenite::Message;

/// Answers at once: Over for talk, the first other living agent for targets.
async fn scripted(port: u16, k: usize) {
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async_with_config(
        format!("ws://127.0.0.1:{port}/ws"),
        None,
        true,
    )
    .await
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

const N: usize = 13;

struct Bench {
    rt: Runtime,
    settings: Arc<NlpSettings>,
    seed: u64,
}

/// What one game measured.
struct Played {
    /// Median of the per-request times.
    median: Duration,
    /// (wall − waited) / answered requests.
    share: Duration,
}

impl Bench {
    fn new() -> Bench {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let mut settings = NlpSettings::defaults(N).expect("13 players");
        settings.timeout_action_ms = 5000;
        settings.timeout_response_ms = 5000;
        settings.timeout_acceptable_ms = 0;
        Bench {
            rt,
            settings: Arc::new(settings),
            seed: 0,
        }
    }

    /// 13 agents connected (not measured).
    fn seats(&self, clock: &Arc<Mutex<RequestClock>>) -> Vec<Seat> {
        self.rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let port = listener.local_addr().expect("addr").port();
            for k in 1..=N {
                tokio::spawn(scripted(port, k));
            }
            let mut seats = Vec::new();
            for _ in 0..N {
                let (s, _) = listener.accept().await.expect("accept");
                let _ = s.set_nodelay(true);
                let ws = handshake(s, Duration::from_secs(5), None).await;
                assert!(ws.gone().is_none(), "an agent did not connect");
                seats.push(Seat::Live(Box::new(ws.with_clock(clock.clone()))));
            }
            seats
        })
    }

    fn game(&mut self) -> Played {
        self.seed += 1;
        let clock = Arc::new(Mutex::new(RequestClock::default()));
        let seats = self.seats(&clock);
        let g = Game {
            settings: self.settings.clone(),
            seed: self.seed,
            who: vec![Who::Remote; N],
            bots: (0..N).map(|_| None).collect(),
            game_id: "01M88QRKVF0000000000000007".into(),
            json_log: false,
        };
        let (wall, log) = self
            .rt
            .block_on(async move {
                tokio::spawn(async move {
                    let start = Instant::now();
                    let mut ran = run_game(Table::new(seats, ReplayLog::new()), g).await;
                    let wall = start.elapsed();
                    let log = ran.seats.log().clone();
                    ran.seats.finish(Duration::ZERO).await;
                    (wall, log)
                })
                .await
            })
            .expect("the game task");
        // The game's wall time ends with the FINISH notifications, as before the seat layer.
        let text = log.to_text();
        let parsed = ReplayLog::parse(&format!(
            "{{\"event\":\"header\",\"format\":\"x\",\"engine\":\"0\",\"game\":\"werewolf-nlp\",\"rules\":\"\",\"seed\":0,\"seats\":[],\"params\":null}}\n{text}"
        ))
        .expect("the replay");
        let record = SeatRecord::of(&parsed).expect("the seat record");
        assert!(
            record.exchanges.iter().all(|e| e.outcome.is_reply()),
            "an agent dropped out"
        );
        let asks = record
            .exchanges
            .iter()
            .filter(|e| e.kind != "NAME")
            .count()
            .max(1);
        let waited: Duration = record
            .exchanges
            .iter()
            .filter(|e| e.kind != "NAME")
            .map(|e| Duration::from_micros(e.time_us.unwrap_or(0)))
            .sum();
        let mut gaps = std::mem::take(&mut clock.lock().expect("clock").gaps);
        assert!(!gaps.is_empty(), "no request was timed");
        gaps.sort_unstable();
        let median = gaps[gaps.len() / 2];
        Played {
            median,
            share: wall.saturating_sub(waited) / asks as u32,
        }
    }
}
fn bench(c: &mut Criterion) {
    let mut b = Bench::new();
    c.bench_function("werewolf_nlp_ws_server_time_per_request_13", |x| {
        x.iter_custom(|iters| (0..iters).map(|_| b.game().median).sum())
    });
    c.bench_function("werewolf_nlp_ws_server_share_per_request_13", |x| {
        x.iter_custom(|iters| (0..iters).map(|_| b.game().share).sum())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
