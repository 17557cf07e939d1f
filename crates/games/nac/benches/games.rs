//! In-process games with four `random` bots: games per second on one core.
//!
//! `cargo bench -p kakehiki-nac --bench games` (criterion prints the throughput in games/s as
//! `elem/s`). Two measurements of the same games:
//!
//! * `random_games`: wall-clock time, criterion's default;
//! * `random_games_cpu`: CPU time of the benchmark thread (`CLOCK_THREAD_CPUTIME_ID`), i.e.
//!   games per second per core even while other processes share the core.
//!
//! Each group runs two paths that play identical games (checked by `tests/it/in_process.rs`):
//! `fast` (`RandomBot` directly, `bots::play_to_end`, no allocation per turn) and `make_bot`
//! (boxed bots from `make_bot`, a `Vec` per pick, as a driver using `pick` would).

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use kakehiki_nac::bots::{make_bot, play_to_end, NacBot, RandomBot};
use kakehiki_nac::{Params, State, NUM_SEATS};

/// One game through the public API exactly as a driver would use it: `make_bot` for every seat,
/// each seat's `View`, `pick` returning a `Vec`.
fn game_via_make_bot(params: Params, seed: u64) -> [i64; NUM_SEATS] {
    let mut bots: Vec<Box<dyn NacBot>> = (0..NUM_SEATS)
        .map(|s| make_bot("random", s, seed).expect("random is a built-in bot"))
        .collect();
    let mut state = State::new(params, seed as u32);
    while !state.is_over() {
        let picks: Vec<Vec<u8>> = (0..NUM_SEATS)
            .map(|s| bots[s].pick(&state.view(s)))
            .collect();
        state.apply([&picks[0], &picks[1], &picks[2], &picks[3]]);
    }
    state.total24()
}

/// The same game through the non-allocating fast path: `RandomBot` directly, `play_to_end`.
fn game_fast(params: Params, seed: u64) -> [i64; NUM_SEATS] {
    let mut bots: [RandomBot; NUM_SEATS] = std::array::from_fn(|s| RandomBot::new(s, seed));
    let mut state = State::new(params, seed as u32);
    play_to_end(&mut state, &mut bots);
    state.total24()
}

fn bench_paths<M: Measurement>(group: &mut BenchmarkGroup<'_, M>) {
    group.throughput(Throughput::Elements(1));
    for params in [Params::NAC, Params::RELIGION_WAR] {
        let name = if params == Params::NAC {
            "nac"
        } else {
            "religion-war"
        };
        let mut seed = 0u64;
        group.bench_function(format!("{name}/fast"), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                black_box(game_fast(params, black_box(seed)))
            })
        });
        group.bench_function(format!("{name}/make_bot"), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                black_box(game_via_make_bot(params, black_box(seed)))
            })
        });
    }
}

fn wall_clock(c: &mut Criterion) {
    let mut group = c.benchmark_group("random_games");
    bench_paths(&mut group);
    group.finish();
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
struct ThreadCpuTime;

fn thread_cpu_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .expect("CLOCK_THREAD_CPUTIME_ID is needed for the CPU-time group");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

static WALL: WallTime = WallTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = Duration;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }

    fn end(&self, start: u64) -> Duration {
        Duration::from_nanos(thread_cpu_ns().saturating_sub(start))
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        // Values are nanoseconds, as for wall-clock time.
        WALL.formatter()
    }
}

fn cpu_time(c: &mut Criterion<ThreadCpuTime>) {
    let mut group = c.benchmark_group("random_games_cpu");
    bench_paths(&mut group);
    group.finish();
}

criterion_group!(wall, wall_clock);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = cpu_time
}
criterion_main!(wall, cpu);
