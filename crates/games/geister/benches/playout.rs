//! Random playouts: whole games (random placements, uniformly random legal moves, every move
//! validated by `play`) per second. Target (tracker issue 3): >= 100,000 games per second per core.
//! The move chooser is an inline xorshift64* so that the generator does not dominate.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kakehiki_geister::engine::{Geister, PlayRules, RedSet};
use kakehiki_geister::Rules;

struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let r = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (((r >> 32) * n as u64) >> 32) as usize
    }
}

fn playout(rules: PlayRules, placements: &[RedSet], rng: &mut XorShift) -> u32 {
    let p0 = placements[rng.below(placements.len())];
    let p1 = placements[rng.below(placements.len())];
    let mut g = Geister::with_placements(rules, p0, p1);
    while !g.is_over() {
        let moves = g.legal_moves();
        let mv = moves[rng.below(moves.len())];
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
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        group.bench_function(format!("random_playout_{name}"), |b| {
            b.iter(|| criterion::black_box(playout(rules, &placements, &mut rng)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
