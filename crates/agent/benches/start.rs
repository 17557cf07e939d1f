//! What confinement costs at start: the time from spawning a bot to its first line of output
//! (its end is not timed),
//! for a trivial bot (`/bin/echo READY`, and `sh bot.sh` of its own files), at sandbox level `off` (process group, scrubbed
//! environment, temporary directory, rlimits: the referee before the sandbox) and at `best`
//! (every layer this machine offers: `kakehiki sandbox` lists them).
//!
//! The second group times a launched TCP client from spawn to its connection accepted on its
//! seat's listener (at `best`, inside a network namespace of its own).
//!
//! `cargo bench -p kakehiki-agent --bench start`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use kakehiki_agent::{
    BotProcess, ClientProcess, ReadOutcome, SandboxConfig, SandboxLevel, SandboxReport,
};
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
    // A bot of its own files: a script in its seat folder (`sh bot.sh`), which the sandbox
    // shows at `/bot` through an overlay, and a script named by path (`sh /x/bot.sh`), shown
    // as a copy at `/bot/bot.sh` (`jail::paths`).
    let dir = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let script = dir.path().join("bot.sh");
        std::fs::write(&script, "echo READY\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let sh = if std::path::Path::new("/bin/sh").exists() {
        "/bin/sh"
    } else {
        "/usr/bin/sh"
    };
    let by_path = vec![
        sh.to_string(),
        dir.path().join("bot.sh").display().to_string(),
    ];
    let in_folder = vec![sh.to_string(), "bot.sh".to_string()];
    for level in [SandboxLevel::Off, SandboxLevel::Best] {
        for (what, argv, seat_dir) in [
            ("script-by-path", &by_path, None),
            (
                "script-in-seat-folder",
                &in_folder,
                Some(dir.path().to_path_buf()),
            ),
        ] {
            let mut cfg = SandboxConfig::default();
            cfg.jail.level = level;
            cfg.jail.seat_dir = seat_dir;
            group.bench_function(format!("{level}/{what}"), |b| {
                b.iter_custom(|iters| {
                    let mut started = Duration::ZERO;
                    for _ in 0..iters {
                        rt.block_on(async {
                            let t0 = std::time::Instant::now();
                            let mut bot = BotProcess::spawn(argv, &cfg).unwrap();
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
    }
    group.finish();

    // A launched TCP client: spawn to its connection accepted on the seat's listener (at `best`,
    // a network namespace of its own holding only that listener).
    let bash = ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(bash) = bash else {
        eprintln!("no bash: the TCP client start is not measured");
        return;
    };
    let mut group = c.benchmark_group("tcp_client_start_to_connection");
    for level in [SandboxLevel::Off, SandboxLevel::Best] {
        let mut cfg = SandboxConfig::default();
        cfg.jail.level = level;
        group.bench_function(level.to_string(), |b| {
            b.iter_custom(|iters| {
                let mut started = Duration::ZERO;
                for _ in 0..iters {
                    let _rt = rt.enter();
                    let t0 = std::time::Instant::now();
                    let (client, seat) = ClientProcess::spawn_seat(
                        |addr| {
                            vec![
                                bash.to_string(),
                                "-c".to_string(),
                                format!("exec 3<>/dev/tcp/{}/{}", addr.ip(), addr.port()),
                            ]
                        },
                        &cfg,
                        10000,
                    )
                    .unwrap();
                    seat.listener.set_nonblocking(false).unwrap();
                    let conn = seat.listener.accept();
                    started += t0.elapsed();
                    assert!(conn.is_ok(), "{conn:?}");
                    rt.block_on(client.finish(Duration::from_millis(100)));
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
