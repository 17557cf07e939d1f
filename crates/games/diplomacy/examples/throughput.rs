//! Adjudication throughput per CPU second (user + system time of this process, from
//! `/proc/self/stat`), a check on the criterion figures when the machine is shared and wall-clock
//! time overstates the cost.
//!
//! `cargo run --release -p kakehiki-diplomacy --example throughput -- [seconds per workload]`

use std::hint::black_box;

use kakehiki_core::seeded_rng;
use kakehiki_diplomacy::bots::{format_order, random_orders};
use kakehiki_diplomacy::service::{request_line, Service};
use kakehiki_diplomacy::{
    adjudicate, parse_order, standard, Board, Order, PhaseKind, Power, Resolver,
};

/// A movement phase: position, typed orders, order texts, service line.
type Sample = (Board, Vec<(Power, Order)>, Vec<String>, String);

/// CPU seconds used by this process so far.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|s| s.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

fn measure(name: &str, per_iter: usize, secs: f64, mut f: impl FnMut()) {
    let start = cpu_seconds();
    let mut iters = 0u64;
    while cpu_seconds() - start < secs {
        for _ in 0..10 {
            f();
        }
        iters += 10;
    }
    let used = cpu_seconds() - start;
    println!(
        "{name:<16} {:>10.0} phases per CPU second",
        (iters as f64 * per_iter as f64) / used
    );
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let map = standard();
    let mut samples: Vec<Sample> = Vec::new();
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
                let texts: Vec<String> = orders.iter().map(|(_, o)| format_order(map, o)).collect();
                let per: Vec<(Power, Vec<String>)> = Power::ALL
                    .iter()
                    .map(|&p| {
                        (
                            p,
                            orders
                                .iter()
                                .filter(|(q, _)| *q == p)
                                .map(|(_, o)| format_order(map, o))
                                .collect(),
                        )
                    })
                    .filter(|(_, l): &(Power, Vec<String>)| !l.is_empty())
                    .collect();
                let line = request_line(map, &board, &per);
                samples.push((board.clone(), orders.clone(), texts, line));
            }
            adjudicate(&mut r, map, &mut board, &orders);
        }
    }
    let n = samples.len();
    let avg = samples.iter().map(|s| s.1.len()).sum::<usize>() as f64 / n as f64;
    println!("{n} movement phases from random self-play, {avg:.1} orders per phase");
    let mut scratch = Board::standard_start();
    measure("movement/typed", n, secs, || {
        for s in &samples {
            scratch.clone_from(&s.0);
            black_box(adjudicate(&mut r, map, &mut scratch, &s.1));
        }
    });
    measure("movement/parse", n, secs, || {
        for s in &samples {
            for t in &s.2 {
                black_box(parse_order(map, t).ok());
            }
        }
    });
    let mut svc = Service::new();
    measure("service/line", n, secs, || {
        for s in &samples {
            black_box(svc.line(&s.3));
        }
    });
}
