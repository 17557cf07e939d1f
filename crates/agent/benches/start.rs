//! What confinement costs at start: the time from spawning a bot to its first line of output
//! (its end is not timed),
//! for a trivial bot (`/bin/echo READY`), at sandbox level `off` (process group, scrubbed
//! environment, temporary directory, rlimits: the referee before the sandbox) and at `best`
//! (every layer this machine offers: `kakehiki sandbox` lists them).
//!
//! `cargo bench -p kakehiki-agent --bench start`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use kakehiki_agent::{BotProcess, ReadOutcome, SandboxConfig, SandboxLevel, SandboxReport};
use tokio::time::Instant;

fn start(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let echo = if std::path::Path::new("/bin/echo").exists() {
        "/bin/echo"
    } else {
        "/usr/bin/echo"
    };
    let argv = vec![echo.to_string(), "READY".to_string()];
    eprintln!(
        "sandbox layers at level best: {:?}; missing: {}",
        SandboxReport::current(SandboxLevel::Best).layers,
        SandboxReport::current(SandboxLevel::Best).missing_text()
    );
    let mut group = c.benchmark_group("bot_start_to_first_line");
    for level in [SandboxLevel::Off, SandboxLevel::Best] {
        let mut cfg = SandboxConfig::default();
        cfg.jail.level = level;
        // Only the start is timed: spawn to the first line. Ending the bot (kill, reap, the
        // cgroup's removal) happens after the match and is not part of it.
        group.bench_function(level.to_string(), |b| {
            b.iter_custom(|iters| {
                let mut started = Duration::ZERO;
                for _ in 0..iters {
                    rt.block_on(async {
                        let t0 = std::time::Instant::now();
                        let mut bot = BotProcess::spawn(&argv, &cfg).unwrap();
                        let line = bot.read_line(Instant::now() + Duration::from_secs(5)).await;
                        started += t0.elapsed();
                        assert!(matches!(line, ReadOutcome::Line(_)), "{line:?}");
                        bot.finish(Duration::from_millis(100)).await;
                    })
                }
                started
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(5));
    targets = start
}
criterion_main!(benches);
