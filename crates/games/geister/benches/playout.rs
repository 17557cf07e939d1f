//! Random playouts: whole games (random placements, uniformly random legal moves) per second.
//! Target (spec'd by the tracker): >= 100,000 games per second per core.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kakehiki_geister::engine::{Geister, PlayRules, RedSet};
use kakehiki_geister::Rules;
use rand::Rng;

fn playout(rules: PlayRules, placements: &[RedSet], rng: &mut kakehiki_core::SeedRng) -> u32 {
    let p0 = placements[rng.gen_range(0..placements.len())];
    let p1 = placements[rng.gen_range(0..placements.len())];
    let mut g = Geister::with_placements(rules, p0, p1);
    while !g.is_over() {
        let moves = g.legal_moves();
        let mv = moves[rng.gen_range(0..moves.len())];
        let _ = g.play(mv);
    }
    g.ply()
}

fn bench(c: &mut Criterion) {
    let placements: Vec<RedSet> = RedSet::all().collect();
    let mut group = c.benchmark_group("geister");
    group.throughput(Throughput::Elements(1));
    for (name, rules) in [("gpw", Rules::gpw()), ("seed", Rules::seed())] {
        let rules = PlayRules::from(&rules);
        let mut rng = kakehiki_core::seeded_rng(7, "bench");
        group.bench_function(format!("random_playout_{name}"), |b| {
            b.iter(|| criterion::black_box(playout(rules, &placements, &mut rng)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
