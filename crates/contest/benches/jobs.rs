//! Matches per second of `contest run` with CPU-bound built-in bots, `--jobs 1` against
//! `--jobs 2` (the real registry: NAC with its `strong` bot, results stored in SQLite).
//!
//!   cargo bench -p kakehiki-contest --bench jobs
//!
//! Each iteration plays one whole 40-match round robin into a fresh SQLite file; criterion's
//! throughput line gives matches per second. Target: jobs_2 >= 1.8 x jobs_1 on two idle cores.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kakehiki_contest::{run_local, Arena, ContestDef, RefereeArena, RunOptions};
use kakehiki_store::SqliteStore;

const CONTEST: &str = r#"
name = "bench"
game = "nac"
format = "round-robin"
seed = 1
games = 8
bootstrap = 0

[[entrants]]
name = "a"
seat = "builtin:strong"
[[entrants]]
name = "b"
seat = "builtin:strong"
[[entrants]]
name = "c"
seat = "builtin:strong"
[[entrants]]
name = "d"
seat = "builtin:strong"
[[entrants]]
name = "e"
seat = "builtin:strong"
"#;

fn bench_jobs(c: &mut Criterion) {
    let arena = RefereeArena;
    let def = ContestDef::parse(CONTEST, "bench", &|g| arena.game_type(g)).expect("contest");
    let matches = 5 * 8;
    let mut group = c.benchmark_group("contest_run");
    group.sample_size(10);
    group.throughput(Throughput::Elements(matches));
    for jobs in [1usize, 2] {
        group.bench_function(format!("jobs_{jobs}"), |b| {
            b.iter(|| {
                let dir = tempfile::tempdir().expect("temp dir");
                let store =
                    Box::new(SqliteStore::open(&dir.path().join("b.sqlite")).expect("store"));
                let opts = RunOptions {
                    jobs,
                    progress: false,
                    worker: "bench".into(),
                    ..RunOptions::default()
                };
                let s = run_local(&def, store, Arc::new(RefereeArena), &opts).expect("run");
                assert_eq!(s.played, matches);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_jobs);
criterion_main!(benches);
