//! Geister server overhead per ply over loopback TCP (tracker issue 3: <= 50 us at the median).
//!
//! Two scripted clients (threads with blocking sockets, TCP_NODELAY) connect to a table on
//! ephemeral loopback ports and play the spec's V7 shuttle (both `SET:ABCD`, A north and south
//! alternately) to the 300-ply draw under `gpw` with `pace_ms` = 0; they reconnect for every game.
//! A ply's time therefore includes the loopback round trip and the client's (trivial) work: it is
//! an upper bound of the server's overhead. Besides criterion's time per game (throughput in
//! plies), the bench prints the median time per ply over separately timed games.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kakehiki_geister::Rules;
use kakehiki_referee::games::geister::{play_on_table, Table};

const PLIES: u32 = 300;

/// A scripted client: plays games on `addr` until the server goes away.
fn client(addr: SocketAddr) {
    loop {
        let Ok(stream) = TcpStream::connect(addr) else {
            return;
        };
        let _ = stream.set_nodelay(true);
        let mut writer = match stream.try_clone() {
            Ok(w) => w,
            Err(_) => return,
        };
        let mut reader = BufReader::new(stream);
        let mut line = Vec::with_capacity(64);
        let mut turn = 0u32;
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let reply: &[u8] = match &line[..4] {
                b"SET?" => b"SET:ABCD\r\n",
                b"MOV?" => {
                    turn += 1;
                    if turn % 2 == 1 {
                        b"MOV:A,N\r\n"
                    } else {
                        b"MOV:A,S\r\n"
                    }
                }
                b"WON:" | b"LST:" | b"DRW:" => break,
                _ => continue,
            };
            if writer.write_all(reply).is_err() {
                break;
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut table = rt.block_on(Table::bind("127.0.0.1", [0, 0])).unwrap();
    let [a0, a1] = table.local_addrs();
    for a in [a0, a1] {
        std::thread::Builder::new()
            .name("geister-client".into())
            .spawn(move || client(a))
            .unwrap();
    }
    let mut rules = Rules::gpw();
    rules.pace_ms = 0;
    rules.linger_ms = 1000;
    rules.max_plies = PLIES;
    // Sanity: the scripted game is the 300-ply draw.
    let first = rt
        .block_on(play_on_table(&mut table, rules.clone(), 0))
        .unwrap();
    assert_eq!(
        first.report.extra["reason"], "ply_limit_draw",
        "{:?}",
        first.report
    );

    let mut group = c.benchmark_group("geister_server");
    group.throughput(Throughput::Elements(PLIES as u64));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("tcp_game_300_plies", |b| {
        b.iter(|| {
            rt.block_on(play_on_table(&mut table, rules.clone(), 0))
                .unwrap()
        })
    });
    group.finish();

    let cpu0 = process_cpu_seconds();
    let server0 = server_cpu_seconds();
    let mut per_ply: Vec<f64> = (0..30)
        .map(|_| {
            let t = Instant::now();
            rt.block_on(play_on_table(&mut table, rules.clone(), 0))
                .unwrap();
            t.elapsed().as_secs_f64() * 1e6 / PLIES as f64
        })
        .collect();
    per_ply.sort_by(f64::total_cmp);
    println!(
        "geister server over loopback TCP: median {:.1} us per ply (min {:.1}, max {:.1}) over {} games of {PLIES} plies",
        per_ply[per_ply.len() / 2],
        per_ply[0],
        per_ply[per_ply.len() - 1],
        per_ply.len()
    );
    // The machine may be shared: CPU time is the steadier figure. It covers the whole process
    // (server, both scripted clients, kernel time of all their socket calls).
    if let (Some(a), Some(b)) = (cpu0, process_cpu_seconds()) {
        println!(
            "geister server + scripted clients: {:.1} us of CPU (user + system, all threads) per ply",
            (b - a) * 1e6 / (30.0 * PLIES as f64)
        );
    }
    if let (Some(a), Some(b)) = (server0, server_cpu_seconds()) {
        println!(
            "geister server alone (every thread but the scripted clients'): {:.1} us of CPU per ply",
            (b - a) * 1e6 / (30.0 * PLIES as f64)
        );
    }
}

/// User + system CPU seconds of every thread of this process except the scripted clients.
fn server_cpu_seconds() -> Option<f64> {
    let mut total = 0.0;
    for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
        let (head, rest) = stat.rsplit_once(')')?;
        if head.ends_with("(geister-client") {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let utime: f64 = fields.get(11)?.parse().ok()?;
        let stime: f64 = fields.get(12)?.parse().ok()?;
        total += (utime + stime) / 100.0;
    }
    Some(total)
}

/// User + system CPU seconds of this process, all threads (Linux `/proc/self/stat`).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit(')').next()?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state is field 3, utime field 14, stime field 15 (1-based in proc(5)).
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

criterion_group!(benches, bench);
criterion_main!(benches);
