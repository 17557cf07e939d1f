//! What a match's readers cost (issue 37): a 15-player Werewolf match (the longest replay of
//! the games) published line by line as the referee publishes it, read at the same time through
//! the real event stream (`kakehiki_web::live::live_events`: the public reader, stderr hidden,
//! SSE framing) by 0, 1 and 100 readers, each draining its stream as a browser would.
//!
//! Printed for each number of readers: the heap the match holds once everything is published
//! and every reader has caught up (counted by this program's allocator: the replay's lines are
//! kept once, whatever the readers), the heap each reader adds over the match without readers
//! (its position, the secret lines it holds back as pointers, its stream), the time the publishing side
//! spends in `extend` (the referee's cost per line), and the time until the last reader has
//! read the last line. Run:
//!
//!     cargo bench -p kakehiki-web --bench live_readers --profile test

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use kakehiki_core::live::LiveMatch;
use kakehiki_core::SeatSpec;
use kakehiki_referee::{find_game, MatchSpec};

/// The system allocator, counting the bytes in use.
struct Counting;

static IN_USE: AtomicI64 = AtomicI64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        IN_USE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: a pointer this allocator gave out, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn in_use() -> i64 {
    IN_USE.load(Ordering::Relaxed)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _runtime = rt.enter();
    let driver = find_game("werewolf").unwrap();
    let spec = MatchSpec::new("werewolf", 15, vec![SeatSpec::Builtin("sample".into()); 15]);
    let record = rt.block_on(driver.play(&spec)).unwrap();
    let lines: Vec<String> = record.replay.lines().to_vec();
    let bytes: usize = lines.iter().map(String::len).sum();
    println!(
        "replay: werewolf, 15 seats, {} lines, {} bytes",
        lines.len(),
        bytes
    );
    println!("readers | heap held after all caught up | per reader | publishing (extend) | last line read");
    let mut alone = 0i64;
    for readers in [0usize, 1, 100] {
        let before = in_use();
        let live = LiveMatch::new(
            kakehiki_core::live::LiveInfo {
                contest: "bench".into(),
                index: 0,
                game: "werewolf".into(),
                entrants: vec![String::new(); 15],
                started_unix_ms: 0,
            },
            driver.public_live(),
        );
        let public = lines.iter().filter(|l| (driver.public_live())(l)).count();
        let caught_up = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..readers {
            let response = kakehiki_web::live::live_events(
                &live,
                vec![false; 15],
                kakehiki_web::live::Resume::After(0),
            );
            let caught_up = caught_up.clone();
            tasks.push(rt.spawn(async move {
                let mut body = response.into_body();
                let mut seen = 0usize;
                let mut done = false;
                while let Some(Ok(frame)) = body.frame().await {
                    if let Ok(data) = frame.into_data() {
                        seen += data.windows(4).filter(|w| w == b"id: ").count();
                        if !done && seen >= public {
                            done = true;
                            caught_up.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
            }));
        }
        let started = Instant::now();
        let mut publishing = Duration::ZERO;
        // As the table publishes: a settled prefix at a time, 20 lines a step.
        let mut at = 0;
        while at < lines.len() {
            at = (at + 20).min(lines.len());
            let t = Instant::now();
            live.extend(&lines[..at]);
            publishing += t.elapsed();
            rt.block_on(tokio::task::yield_now());
        }
        while caught_up.load(Ordering::SeqCst) < readers {
            std::thread::sleep(Duration::from_millis(1));
        }
        let all_read = started.elapsed();
        let held = in_use() - before;
        if readers == 0 {
            alone = held;
        }
        println!(
            "{readers:>7} | {:>10} bytes ({:.2} × the replay) | {:>6} bytes | {:>8.3} ms ({:.2} µs a line) | {:>8.1} ms",
            held,
            held as f64 / bytes as f64,
            if readers == 0 { 0 } else { (held - alone) / readers as i64 },
            publishing.as_secs_f64() * 1e3,
            publishing.as_secs_f64() * 1e6 / lines.len() as f64,
            all_read.as_secs_f64() * 1e3,
        );
        live.finish(&lines);
        live.close();
        for t in tasks {
            rt.block_on(t).unwrap();
        }
    }
}
