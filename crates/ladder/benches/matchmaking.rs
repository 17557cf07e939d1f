//! One matchmaking decision on a ladder of 1,000 bots (the bar: ≤ 10 ms).
//!
//! - `choose/1000x2`, `choose/1000x7`: the pure decision (focus, opponents, seats) for a
//!   two-seat and a seven-seat game.
//! - `step/sqlite_1000`: a whole matchmaker step that queues one match on an SQLite store of
//!   1,000 active bots: reading the entrants and their ratings, deciding, and queueing the match
//!   in its transaction.
//!
//! `cargo bench -p kakehiki-ladder --bench matchmaking`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use kakehiki_contest::arena::Arena;
use kakehiki_contest::RefereeArena;
use kakehiki_ladder::matchmaking::{choose, Candidate};
use kakehiki_ladder::play::Matchmaker;
use kakehiki_ladder::LadderConfig;
use kakehiki_store::{
    LadderPlay, LadderRole, NewBotVersion, NewLadderUser, SqliteStore, Store, VersionStatus,
};
use rand::{Rng, SeedableRng};

fn candidates(n: usize) -> Vec<Candidate> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    (0..n)
        .map(|i| Candidate {
            entrant: format!("bot{i}@v1"),
            mu: rng.gen_range(0.0..50.0),
            sigma: rng.gen_range(0.8..8.3),
            games: rng.gen_range(0..2000),
            builtin: i < 2,
            pending: rng.gen_range(0..3),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let cands = candidates(1000);
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let mut g = c.benchmark_group("choose");
    g.bench_function("1000x2", |b| b.iter(|| choose(&cands, 2, &mut rng)));
    g.bench_function("1000x7", |b| b.iter(|| choose(&cands, 7, &mut rng)));
    g.finish();

    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("l.sqlite")).unwrap();
    for i in 0..1000 {
        let name = format!("bot{i}");
        store
            .create_ladder_user(&NewLadderUser {
                name: name.clone(),
                role: LadderRole::Contestant,
                token_sha256: format!("a{i:0>63}"),
                signup_code_sha256: format!("b{i:0>63}"),
            })
            .unwrap();
        let v = store
            .add_bot_version(&NewBotVersion {
                ladder: "g".into(),
                bot: name.clone(),
                owner: name.clone(),
                language: "python".into(),
                source_sha256: "0".repeat(64),
            })
            .unwrap();
        store
            .set_bot_version_status("g", &name, v, VersionStatus::Active, "")
            .unwrap();
    }
    let config = LadderConfig::parse(
        "name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\", \"strong\"]\nlanguages = [\"python\"]\n",
        "ladder.toml",
        &|g| RefereeArena.game_type(g),
    )
    .unwrap();
    let mut mm = Matchmaker::new(config, 2, 3);
    // The first step enters the 1,002 entrants.
    mm.step(&mut store, 0, 0).unwrap();
    let mut open = 0;
    let mut g = c.benchmark_group("step");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("sqlite_1000", |b| {
        b.iter_batched(
            || {
                open += 1;
                open
            },
            |want| {
                let s = mm.step(&mut store, want, 1).unwrap();
                assert_eq!(s.queued, 1);
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("read_versions_1000", |b| {
        b.iter(|| store.active_bot_versions("g").unwrap())
    });
    g.bench_function("read_ratings_1000", |b| {
        b.iter(|| store.ladder_ratings("g", true).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
