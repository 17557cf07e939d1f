//! Adjudication speed on movement phases from random self-play (spec §7).
//!
//! `cargo bench -p kakehiki-diplomacy --bench adjudicate`
//! * `movement/typed`: typed orders in, outcome out (Resolver reused), per phase.
//! * `movement/parse`: order strings to typed orders, per phase.
//! * `service/line`: the adjudication service end to end (JSON line in, JSON line out), per phase.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use kakehiki_core::seeded_rng;
use kakehiki_diplomacy::bots::{format_order, random_orders};
use kakehiki_diplomacy::service::{request_line, Service};
use kakehiki_diplomacy::{
    adjudicate, parse_order, standard, Board, Order, PhaseKind, Power, Resolver,
};

struct Sample {
    board: Board,
    orders: Vec<(Power, Order)>,
    texts: Vec<(Power, String)>,
    line: String,
}

fn phases() -> Vec<Sample> {
    let map = standard();
    let mut out = Vec::new();
    let mut r = Resolver::new();
    for seed in 0..20u64 {
        let mut rng = seeded_rng(seed, "bench");
        let mut board = Board::standard_start();
        while board.phase.year <= 1912 {
            let mut orders = Vec::new();
            for p in Power::ALL {
                for o in random_orders(map, &board, p, &mut rng) {
                    orders.push((p, o));
                }
            }
            if board.phase.kind == PhaseKind::Movement {
                let texts: Vec<(Power, String)> = orders
                    .iter()
                    .map(|(p, o)| (*p, format_order(map, o)))
                    .collect();
                let mut per: Vec<(Power, Vec<String>)> = Vec::new();
                for p in Power::ALL {
                    let l: Vec<String> = texts
                        .iter()
                        .filter(|(q, _)| *q == p)
                        .map(|(_, t)| t.clone())
                        .collect();
                    if !l.is_empty() {
                        per.push((p, l));
                    }
                }
                let line = request_line(map, &board, &per);
                out.push(Sample {
                    board: board.clone(),
                    orders: orders.clone(),
                    texts,
                    line,
                });
            }
            adjudicate(&mut r, map, &mut board, &orders);
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let map = standard();
    let samples = phases();
    let n = samples.len() as u64;
    let avg = samples.iter().map(|s| s.orders.len()).sum::<usize>() as f64 / n as f64;
    eprintln!("{n} movement phases from random self-play, {avg:.1} orders per phase");
    let mut g = c.benchmark_group("movement");
    g.throughput(Throughput::Elements(n));
    let mut r = Resolver::new();
    g.bench_function("typed", |b| {
        let mut scratch = Board::standard_start();
        b.iter(|| {
            for s in &samples {
                scratch.clone_from(&s.board);
                black_box(adjudicate(&mut r, map, &mut scratch, &s.orders));
            }
        })
    });
    g.bench_function("parse", |b| {
        b.iter(|| {
            for s in &samples {
                for (_, t) in &s.texts {
                    black_box(parse_order(map, t).ok());
                }
            }
        })
    });
    g.finish();
    let mut g = c.benchmark_group("service");
    g.throughput(Throughput::Elements(n));
    let mut svc = Service::new();
    g.bench_function("line", |b| {
        b.iter(|| {
            for s in &samples {
                black_box(svc.line(&s.line));
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_secs(1)).measurement_time(std::time::Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
