//! Werewolf over TCP: the server's own time per reply-expecting request, excluding the agent's
//! think time, with 15 scripted agents (tokio tasks answering at once) on loopback.
//!
//! Server time of a game = its wall time − the sum of the recorded response times (each measured
//! from the request's last byte handed to the socket to the reply's line end), divided by the
//! number of reply-expecting requests. Broadcast packets are included in the server's share.
//!
//! `cargo bench -p kakehiki-referee --bench werewolf_tcp`

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use kakehiki_referee::games::werewolf::server::name_connection;
use kakehiki_referee::games::werewolf::{game_header, run_game, Config, Roster};
use kakehiki_referee::seat::tcp::{Conn, TcpSeat, MAX_LINE};
use kakehiki_referee::seat::{Seat, Table};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// Answers every request at once: Over for talk, a rotating target for the rest.
async fn scripted_agent(port: u16, k: usize) {
    let Ok(stream) = TcpStream::connect(("127.0.0.1", port)).await else {
        return;
    };
    let _ = stream.set_nodelay(true);
    let (rd, mut wr) = stream.into_split();
    let mut lines = BufReader::new(rd).lines();
    let mut turn = k;
    while let Ok(Some(line)) = lines.next_line().await {
        let Some(at) = line.find("\"request\":\"") else {
            continue;
        };
        let req = &line[at + 11..];
        let reply = if req.starts_with("NAME") {
            format!("bench{k:02}\n")
        } else if req.starts_with("ROLE") {
            "none\n".to_string()
        } else if req.starts_with("TALK") || req.starts_with("WHISPER") {
            "Over\n".to_string()
        } else if ["VOTE", "DIVINE", "GUARD", "ATTACK"]
            .iter()
            .any(|r| req.starts_with(r))
        {
            turn = turn % 15 + 1;
            format!("{{\"agentIdx\":{turn}}}\n")
        } else {
            continue;
        };
        if wr.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
    }
}

fn run(c: &mut Criterion, label: &str, rt: tokio::runtime::Runtime) {
    let cfg = Config::from_options(None, 15, &Default::default(), true).expect("config");
    let (mut table, mut roster) = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        for k in 1..=15 {
            tokio::spawn(scripted_agent(port, k));
        }
        let (mut seats, mut names) = (Vec::new(), Vec::new());
        for id in 1..=15u64 {
            let (stream, _) = listener.accept().await.expect("accept");
            let mut conn = Conn::start(stream, MAX_LINE);
            let name = name_connection(&mut conn, Duration::from_secs(5), id)
                .await
                .expect("name");
            seats.push(Seat::Live(Box::new(TcpSeat::connected(conn, None))));
            names.push(name);
        }
        let roster = Roster::new(vec!["tcp".into(); 15], names, &cfg);
        (Table::new(seats, Default::default()), roster)
    });
    let mut game = 0u32;
    c.bench_function(label, |b| {
        b.iter_custom(|iters| {
            let mut server = Duration::ZERO;
            let mut requests = 0u64;
            while requests < iters.max(1) {
                roster.ledger.timings.clear();
                roster.ledger.errors.clear();
                let start = Instant::now();
                *table.log() =
                    game_header("aiwolf-0.6", u64::from(game), &roster, &Default::default());
                rt.block_on(run_game(
                    game,
                    u64::from(game),
                    &cfg,
                    &mut table,
                    &mut roster,
                ))
                .expect("game");
                let wall = start.elapsed();
                game += 1;
                let waited: u64 = roster
                    .ledger
                    .timings
                    .iter()
                    .filter_map(|t| t.elapsed_us)
                    .sum();
                assert!(roster
                    .ledger
                    .timings
                    .iter()
                    .all(|t| t.outcome != "timeout" && t.outcome != "disconnect"));
                server += wall.saturating_sub(Duration::from_micros(waited));
                requests += roster.ledger.timings.len() as u64;
            }
            server.mul_f64(iters as f64 / requests as f64)
        })
    });
}

fn bench(c: &mut Criterion) {
    // The server and the scripted agents on one thread, then on the server's usual 2 workers.
    let one = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    run(
        c,
        "werewolf_tcp_server_time_per_request/current_thread",
        one,
    );
    let two = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    run(
        c,
        "werewolf_tcp_server_time_per_request/multi_thread_2",
        two,
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
