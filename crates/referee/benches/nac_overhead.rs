//! Referee overhead: a `nac` game of four trivial compiled process bots.
//!
//! Prints, besides criterion's time per match, the two figures the foundation issue asks for:
//! the referee's own time (everything but process start/stop and waiting for replies) as a share
//! of wall time, and its median per turn and seat.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use kakehiki_core::SeatSpec;
use kakehiki_referee::games::nac::NAC;
use kakehiki_referee::MatchSpec;

fn trivial_bot() -> PathBuf {
    let exe = std::env::current_exe().expect("bench executable");
    // target/<profile>/deps/<bench> -> target/<profile>/
    let profile_dir = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .to_path_buf();
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("release")
        .to_string();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "kakehiki-example-bots",
        "--bin",
        "nac-trivial-bot",
    ]);
    if profile == "release" {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("run cargo build for the trivial bot");
    assert!(status.success(), "building nac-trivial-bot failed");
    profile_dir.join("nac-trivial-bot")
}

fn spec(bot: &Path, seed: u64) -> MatchSpec {
    let seat = SeatSpec::Cmd(vec![bot.to_string_lossy().into_owned()]);
    MatchSpec::new(
        "nac",
        seed,
        vec![seat.clone(), seat.clone(), seat.clone(), seat],
    )
}

fn bench(c: &mut Criterion) {
    let bot = trivial_bot();
    // One thread, as the contest arena runs matches: no cross-thread wake-ups per reply.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    // The figures: 200 profiled matches.
    let mut wall = Duration::ZERO;
    let mut overhead = Duration::ZERO;
    let mut per_turn_seat: Vec<Duration> = Vec::new();
    let (mut startup, mut shutdown, mut turns, mut waiting, mut cpu) = (
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
    );
    for seed in 0..200 {
        let (record, profile) = runtime
            .block_on(NAC.play_profiled(&spec(&bot, seed)))
            .unwrap();
        assert!(
            record.report.seats.iter().all(|s| s.errors.is_empty()),
            "{:?}",
            record.report
        );
        wall += profile.wall;
        startup += profile.startup;
        shutdown += profile.shutdown;
        turns += profile.turns.iter().map(|t| t.0).sum::<Duration>();
        waiting += profile.turns.iter().map(|t| t.1).sum::<Duration>();
        cpu += profile.turn_cpu;
        overhead += profile.overhead();
        per_turn_seat.extend(profile.per_turn_per_seat());
    }
    println!("breakdown: startup {startup:?}, turns {turns:?} (waiting {waiting:?}), shutdown {shutdown:?}");
    println!(
        "referee CPU time in the turns: {:.2}% of wall time ({cpu:?}); per turn and seat {:?} on average",
        100.0 * cpu.as_secs_f64() / wall.as_secs_f64(),
        cpu / (200 * 9 * 4)
    );
    per_turn_seat.sort();
    let median = per_turn_seat[per_turn_seat.len() / 2];
    let p90 = per_turn_seat[per_turn_seat.len() * 9 / 10];
    println!(
        "referee overhead over 200 matches: {:.2}% of wall time ({:?} of {:?}); per turn and seat: median {:?}, p90 {:?}",
        100.0 * overhead.as_secs_f64() / wall.as_secs_f64(),
        overhead,
        wall,
        median,
        p90
    );

    let mut group = c.benchmark_group("nac_referee");
    group.sample_size(20);
    let mut seed = 0;
    group.bench_function("match_of_4_trivial_process_bots", |b| {
        b.iter(|| {
            seed += 1;
            runtime
                .block_on(NAC.play_profiled(&spec(&bot, seed)))
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
