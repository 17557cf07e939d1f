//! In-process games: 15 `sample` agents (aiwolf-0.6), and the wire encoding of a whole game.
//!
//! `cargo bench -p kakehiki-werewolf --bench games`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use kakehiki_werewolf::bots::{builtin, play_in_process, Agent};
use kakehiki_werewolf::wire::Histories;
use kakehiki_werewolf::{Pending, Settings, Werewolf};

fn names(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("sample{i}")).collect()
}

fn one_game(seed: u64) {
    let mut g =
        Werewolf::new(Settings::aiwolf(15).expect("15 players"), seed, names(15)).expect("game");
    let mut agents: Vec<Box<dyn Agent>> = (1..=15)
        .map(|a| builtin("sample", seed, a).expect("sample"))
        .collect();
    let w = play_in_process(&mut g, &mut agents);
    assert!(w.is_some());
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("werewolf");
    group.throughput(Throughput::Elements(1));
    let mut seed = 0u64;
    group.bench_function("game_15_sample_in_process", |b| {
        b.iter(|| {
            seed += 1;
            one_game(seed)
        })
    });
    // Every packet of a game encoded for its recipients (what the TCP server adds per game).
    group.bench_function("game_15_sample_with_all_packets", |b| {
        b.iter(|| {
            seed += 1;
            let mut g =
                Werewolf::new(Settings::aiwolf(15).expect("15"), seed, names(15)).expect("game");
            let mut agents: Vec<Box<dyn Agent>> = (1..=15)
                .map(|a| builtin("sample", seed, a).expect("sample"))
                .collect();
            let mut h = Histories::new(15);
            let mut bytes = 0usize;
            loop {
                match g.pending() {
                    Pending::Done => break,
                    Pending::Notify(req) => {
                        for a in 1..=15 {
                            bytes += h.packet(&g, a, req).len();
                        }
                        g.ack().expect("ack");
                    }
                    Pending::Ask { agent, request } => {
                        bytes += h.packet(&g, agent, request).len();
                        let info = kakehiki_werewolf::GameInfo::for_agent(&g, agent, false);
                        let r = agents[agent - 1].act(request, &info, g.settings());
                        g.reply(r).expect("reply");
                    }
                }
            }
            bytes
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
