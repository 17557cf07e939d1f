//! Referee overhead: a `nac` game of four trivial compiled process bots.
//!
//! Prints, besides criterion's time per match, the two figures the foundation issue asks for:
//! the referee's own time (everything but process start/stop and waiting for replies) as a share
//! of wall time, and its median per turn and seat. For scale it also times the same turns
//! exchanged with the same bots by two bare loops (blocking, and tokio) that do nothing else.
//! The bots run confined as the referee runs them by default (`KAKEHIKI_BENCH_SANDBOX=off` for
//! the referee before the sandbox); the bare loops start them unconfined.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use kakehiki_core::SeatSpec;
use kakehiki_nac::{State, Variant, NUM_SEATS};
use kakehiki_referee::games::nac::{Profile, TurnProfile, NAC};
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

/// Start the trivial bot for a floor loop.
fn floor_command(bot: &Path) -> Command {
    let mut cmd = Command::new(bot);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

/// Every block of a match in which every seat always picks target 0 (what the trivial bot does).
fn blocks_of(seed: u64) -> Vec<[String; NUM_SEATS]> {
    let mut state = State::new(Variant::Nac.params(), seed as u32);
    let mut blocks = Vec::new();
    while !state.is_over() {
        blocks.push(std::array::from_fn(|seat| {
            let mut text = String::new();
            state.write_message(seat, &mut text);
            text
        }));
        let zeros = vec![0u8; state.picks_needed()];
        state.apply([&zeros, &zeros, &zeros, &zeros]);
    }
    blocks
}

/// Floor 1: the same turns exchanged with the same bots by the least a program can do: blocking
/// writes, then blocking line reads, blocks built beforehand, replies neither parsed nor logged,
/// no deadlines. The wall time of the nine turns: the cost of talking to four processes here.
fn blocking_floor(bot: &Path, seed: u64) -> Duration {
    let blocks = blocks_of(seed);
    let mut children: Vec<_> = (0..NUM_SEATS)
        .map(|_| floor_command(bot).spawn().expect("spawn the trivial bot"))
        .collect();
    let mut stdins: Vec<_> = children.iter_mut().filter_map(|c| c.stdin.take()).collect();
    let mut stdouts: Vec<_> = children
        .iter_mut()
        .filter_map(|c| c.stdout.take().map(std::io::BufReader::new))
        .collect();
    let mut line = String::new();
    for out in &mut stdouts {
        line.clear();
        std::io::BufRead::read_line(out, &mut line).expect("READY");
        assert_eq!(line, "READY\n");
    }
    let start = Instant::now();
    for turn in &blocks {
        for (stdin, block) in stdins.iter_mut().zip(turn) {
            std::io::Write::write_all(stdin, block.as_bytes()).expect("write a block");
        }
        for out in &mut stdouts {
            line.clear();
            std::io::BufRead::read_line(out, &mut line).expect("read a reply");
            assert!(line.ends_with('\n'));
        }
    }
    let turns = start.elapsed();
    drop(stdins);
    for mut c in children {
        c.wait().expect("reap the bot");
    }
    turns
}

/// Floor 2: the same on the tokio runtime the referee uses: the four seats concurrently, each
/// writing its block and reading its reply line under a deadline, nothing else.
async fn async_floor(bot: &Path, seed: u64) -> Duration {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::process::{ChildStdin, ChildStdout};

    async fn exchange(stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>, block: &str) {
        stdin
            .write_all(block.as_bytes())
            .await
            .expect("write a block");
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(1), stdout.read_line(&mut line))
            .await
            .expect("a reply within 1 s")
            .expect("read a reply");
    }

    let blocks = blocks_of(seed);
    let mut children: Vec<_> = (0..NUM_SEATS)
        .map(|_| {
            tokio::process::Command::from(floor_command(bot))
                .spawn()
                .expect("spawn the trivial bot")
        })
        .collect();
    let mut stdins: Vec<_> = children.iter_mut().filter_map(|c| c.stdin.take()).collect();
    let mut stdouts: Vec<_> = children
        .iter_mut()
        .filter_map(|c| c.stdout.take().map(BufReader::new))
        .collect();
    for out in &mut stdouts {
        let mut line = String::new();
        out.read_line(&mut line).await.expect("READY");
    }
    let start = Instant::now();
    for turn in &blocks {
        let ([i0, i1, i2, i3], [o0, o1, o2, o3]) = (&mut stdins[..], &mut stdouts[..]) else {
            unreachable!("four seats");
        };
        tokio::join!(
            exchange(i0, o0, &turn[0]),
            exchange(i1, o1, &turn[1]),
            exchange(i2, o2, &turn[2]),
            exchange(i3, o3, &turn[3])
        );
    }
    let turns = start.elapsed();
    drop(stdins);
    for mut c in children {
        c.wait().await.expect("reap the bot");
    }
    turns
}

/// The sandbox level of the referee's bots: `KAKEHIKI_BENCH_SANDBOX` (`best` by default, the
/// referee's own default; `off` for the referee before the sandbox).
fn level() -> kakehiki_agent::SandboxLevel {
    match std::env::var("KAKEHIKI_BENCH_SANDBOX").as_deref() {
        Ok("off") => kakehiki_agent::SandboxLevel::Off,
        Ok("strict") => kakehiki_agent::SandboxLevel::Strict,
        _ => kakehiki_agent::SandboxLevel::Best,
    }
}

fn spec(bot: &Path, seed: u64) -> MatchSpec {
    let seat = SeatSpec::Cmd(vec![bot.to_string_lossy().into_owned()]);
    let mut spec = MatchSpec::new(
        "nac",
        seed,
        vec![seat.clone(), seat.clone(), seat.clone(), seat],
    );
    spec.sandbox.jail.level = level();
    spec
}

/// The referee's own time in a match: everything but process start and stop and waiting for
/// the slowest seat's reply in each turn.
fn overhead(p: &Profile) -> Duration {
    let turns: Duration = p.turns.iter().map(|t| t.wall).sum();
    let waiting: Duration = p.turns.iter().map(|t| t.waited).sum();
    let outside = p.wall.saturating_sub(p.startup + p.shutdown + turns);
    outside + turns.saturating_sub(waiting)
}

/// Per-turn overhead divided by the number of seats, one value per turn.
fn per_turn_per_seat(p: &Profile) -> Vec<Duration> {
    let per = |t: &TurnProfile| t.wall.saturating_sub(t.waited) / NUM_SEATS as u32;
    p.turns.iter().map(per).collect()
}

fn bench(c: &mut Criterion) {
    let bot = trivial_bot();
    let report = kakehiki_agent::SandboxReport::current(level());
    println!(
        "bots confined at sandbox level {}: layers {:?}",
        report.level,
        report.layers.iter().map(|l| l.name()).collect::<Vec<_>>()
    );
    // One thread, as the contest arena runs matches: no cross-thread wake-ups per reply.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    // The figures: 200 profiled matches.
    let mut wall = Duration::ZERO;
    let mut overhead_sum = Duration::ZERO;
    let mut per_turn_seat: Vec<Duration> = Vec::new();
    let (mut startup, mut shutdown, mut turns, mut waiting, mut cpu) = (
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
    );
    // The floors run between the referee's matches, so machine noise hits all three alike.
    let (mut floor, mut async_floor_turns) = (Duration::ZERO, Duration::ZERO);
    let mut referee_turns = Duration::ZERO;
    let mut profiles = Vec::with_capacity(200);
    for seed in 0..200 {
        floor += blocking_floor(&bot, seed);
        async_floor_turns += runtime.block_on(async_floor(&bot, seed));
        let mut profile = Profile::default();
        let record = runtime
            .block_on(NAC.play_profiled(&spec(&bot, seed), Some(&mut profile)))
            .unwrap();
        assert!(
            record.report.seats.iter().all(|s| s.errors.is_empty()),
            "{:?}",
            record.report
        );
        wall += profile.wall;
        startup += profile.startup;
        shutdown += profile.shutdown;
        turns += profile.turns.iter().map(|t| t.wall).sum::<Duration>();
        waiting += profile.turns.iter().map(|t| t.waited).sum::<Duration>();
        cpu += profile.turn_cpu;
        referee_turns += profile.wall - profile.startup - profile.shutdown;
        overhead_sum += overhead(&profile);
        per_turn_seat.extend(per_turn_per_seat(&profile));
        profiles.push(profile);
    }
    println!("breakdown: startup {startup:?}, turns {turns:?} (waiting {waiting:?}), shutdown {shutdown:?}");
    println!(
        "referee CPU time in the turns: {:.2}% of wall time ({cpu:?}); per turn and seat {:?} on average",
        100.0 * cpu.as_secs_f64() / wall.as_secs_f64(),
        cpu / (200 * 9 * 4)
    );
    let share = |d: f64| 100.0 * d / wall.as_secs_f64();
    println!(
        "the same nine turns exchanged by a bare blocking loop: {floor:?}; by a bare tokio loop: {async_floor_turns:?}; \
         the referee from the last READY to stopping the bots: {referee_turns:?}"
    );
    println!(
        "the referee's time beyond the blocking loop: {:.2}% of its wall time; beyond the tokio loop: {:.2}%",
        share(referee_turns.as_secs_f64() - floor.as_secs_f64()),
        share(referee_turns.as_secs_f64() - async_floor_turns.as_secs_f64())
    );
    let mut before: Vec<Duration> = Vec::new();
    let mut after: Vec<Duration> = Vec::new();
    for p in &profiles {
        before.extend(p.turns.iter().map(|t| t.before));
        after.extend(p.turns.iter().map(|t| t.after));
    }
    before.sort();
    after.sort();
    println!(
        "in the turns, before the first block is written: {:?} (median per turn {:?}); after the last reply: {:?} (median {:?})",
        before.iter().sum::<Duration>(),
        before[before.len() / 2],
        after.iter().sum::<Duration>(),
        after[after.len() / 2]
    );
    per_turn_seat.sort();
    let median = per_turn_seat[per_turn_seat.len() / 2];
    let p90 = per_turn_seat[per_turn_seat.len() * 9 / 10];
    println!(
        "referee overhead over 200 matches: {:.2}% of wall time ({:?} of {:?}); per turn and seat: median {:?}, p90 {:?}",
        100.0 * overhead_sum.as_secs_f64() / wall.as_secs_f64(),
        overhead_sum,
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
            let mut profile = Profile::default();
            runtime
                .block_on(NAC.play_profiled(&spec(&bot, seed), Some(&mut profile)))
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
