//! Random playouts per second of CPU time (the machine may be shared: criterion's wall-clock
//! figure then overstates the cost). Reads this thread's CPU time from /proc (Linux).
//!
//! `cargo run --release -p kakehiki-geister --example playout_rate [games]`
use kakehiki_geister::engine::{Geister, PlayRules, RedSet};
use kakehiki_geister::Rules;

fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// xorshift64*: the playout's move choice, cheap enough not to dominate the measurement.
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

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let all: Vec<RedSet> = RedSet::all().collect();
    for (name, rules) in [("gpw", Rules::gpw()), ("seed", Rules::seed())] {
        let rules = PlayRules::from(&rules);
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut plies = 0u64;
        let wall = std::time::Instant::now();
        let cpu0 = cpu_ns();
        for _ in 0..n {
            let mut g = Geister::with_placements(rules, all[rng.below(70)], all[rng.below(70)]);
            while !g.is_over() {
                let m = g.legal_moves();
                let mv = m[rng.below(m.len())];
                let _ = g.play(mv);
            }
            plies += g.ply() as u64;
        }
        let wall = wall.elapsed().as_secs_f64();
        let cpu = cpu_ns().zip(cpu0).map(|(b, a)| (b - a) as f64 / 1e9);
        println!(
            "{name}: {n} games, {:.1} plies/game, wall {:.0} games/s, cpu {}",
            plies as f64 / n as f64,
            n as f64 / wall,
            cpu.map(|c| format!("{:.0} games/s", n as f64 / c))
                .unwrap_or_else(|| "n/a".into())
        );
    }
}
