//! Page latency while a contest is being stored at full speed (issue 21).
//!
//! A SQLite store gets a NAC round robin of 8 entrants (28,000 matches) with 2,000 results (real match reports
//! and replays, recycled), then a writer thread keeps storing the remaining matches as fast as
//! it can (one transaction per result, as `contest run` does) while readers load every page:
//! the index, the contest page, an entrant page, a match page and the standings API. Printed:
//! the first request of each page after the web app starts (its time and status: 503 "being
//! read" when the contest's first read takes longer than the web UI waits for it) and when the
//! page first had the contest's data, then p50 / p99 / max of each page
//! over its requests (4 concurrent readers), and how many results the writer stored meanwhile.
//! The criterion figure is one contest page load under the same writes.
//!
//!     cargo bench -p kakehiki-web --bench live --profile test
//!
//! (`--profile test` reuses the test build; the figures of docs/design-contest-runner.md were
//! taken so.)

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use criterion::{criterion_group, criterion_main, Criterion};
use kakehiki_contest::ContestDef;
use kakehiki_core::SeatSpec;
use kakehiki_referee::{find_game, MatchSpec};
use kakehiki_store::{NewResult, SqliteStore, Store};
use tower::ServiceExt;

/// Results stored before the start (`KAKEHIKI_BENCH_STORED` to change it).
const PRESTORED: usize = 2_000;
const READERS: usize = 4;
const REQUESTS: usize = 200;

fn play(seed: u64) -> (String, String) {
    let seats: Vec<SeatSpec> = [
        "builtin:strong",
        "builtin:strong",
        "builtin:random",
        "builtin:random",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    let spec = MatchSpec::new("nac", seed, seats);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let record = rt.block_on(find_game("nac").unwrap().play(&spec)).unwrap();
    (
        record.replay.to_text(),
        serde_json::to_string(&record.report).unwrap(),
    )
}

struct Fixture {
    def: ContestDef,
    samples: Vec<(String, String)>,
}

impl Fixture {
    fn new() -> Self {
        let mut toml =
            "name = \"live\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 1\ngames = 400\n"
                .to_string();
        for i in 0..8 {
            let bot = if i % 2 == 0 { "strong" } else { "random" };
            toml.push_str(&format!(
                "[[entrants]]\nname = \"e{i}\"\nseat = \"builtin:{bot}\"\n"
            ));
        }
        let lookup = |g: &str| {
            find_game(g)
                .map(|d| d.game_type())
                .map_err(|e| e.to_string())
        };
        let def = ContestDef::parse(&toml, "live.toml", &lookup).unwrap();
        Fixture {
            def,
            samples: (0..16).map(play).collect(),
        }
    }

    fn put(&self, store: &mut dyn Store, m: &kakehiki_contest::PlannedMatch) {
        let names: Vec<String> = m
            .entrants
            .iter()
            .map(|&e| self.def.entrants[e].name.clone())
            .collect();
        let (replay, report) = &self.samples[(m.index % 16) as usize];
        store
            .put_result(&NewResult {
                contest: &self.def.name,
                index: m.index,
                entrants: &names,
                report_json: report,
                replay,
                duration_ms: 1,
                worker: "bench",
            })
            .unwrap();
    }
}

fn app(db: &Path) -> axum::Router {
    let db = db.to_path_buf();
    let opener: kakehiki_web::StoreOpener =
        Arc::new(move || SqliteStore::open(&db).map(|s| Box::new(s) as Box<dyn Store>));
    kakehiki_web::app_with_opener(opener, 16).unwrap()
}

async fn get(app: axum::Router, uri: String) -> Duration {
    let (status, took) = get_status(app, uri.clone()).await;
    assert!(status.is_success(), "{uri}: {status}");
    took
}

/// A request's status and time (a first request may be answered 503 "being read").
async fn get_status(app: axum::Router, uri: String) -> (axum::http::StatusCode, Duration) {
    let t = Instant::now();
    let r = app
        .oneshot(Request::builder().uri(&uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = r.status();
    axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, t.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn live(c: &mut Criterion) {
    let fx = Arc::new(Fixture::new());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.sqlite");
    let plan = kakehiki_contest::schedule(&fx.def, &Default::default()).matches;
    let prestored: usize = std::env::var("KAKEHIKI_BENCH_STORED")
        .map(|v| {
            v.parse()
                .expect("KAKEHIKI_BENCH_STORED: a number of results")
        })
        .unwrap_or(PRESTORED)
        .min(plan.len());
    {
        let mut store = SqliteStore::open(&db).unwrap();
        kakehiki_contest::register(&mut store, &fx.def).unwrap();
        for m in &plan[..prestored] {
            fx.put(&mut store, m);
        }
    }
    // The writer: the rest of the contest, first at the pace of a `--jobs 2` NAC run (20 results
    // a second) while the first requests after a start are measured, then as fast as it goes.
    let stop = Arc::new(AtomicBool::new(false));
    let full_speed = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (fx, db, stop, written) = (fx.clone(), db.clone(), stop.clone(), written.clone());
        let full_speed = full_speed.clone();
        let rest: Vec<_> = plan[prestored..].to_vec();
        std::thread::spawn(move || {
            let mut store = SqliteStore::open(&db).unwrap();
            for m in &rest {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                fx.put(&mut store, m);
                written.fetch_add(1, Ordering::Relaxed);
                if !full_speed.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let pages = [
        ("index", "/".to_string()),
        ("contest", "/contests/live".to_string()),
        ("entrant", "/contests/live/entrants/e3".to_string()),
        ("match", "/contests/live/matches/17".to_string()),
        ("api standings", "/api/contests/live/standings".to_string()),
    ];
    println!(
        "{} matches scheduled, {prestored} stored before the start; a writer stores the rest meanwhile",
        plan.len()
    );
    for (label, uri) in &pages {
        let app = app(&db);
        let stored = prestored as u64 + written.load(Ordering::Relaxed);
        let start = Instant::now();
        let (status, first) = rt.block_on(get_status(app.clone(), uri.clone()));
        // Then as a browser would: again until the page has the contest's data.
        let mut tries = 1;
        let mut ok = status.is_success();
        while !ok {
            std::thread::sleep(Duration::from_millis(10));
            tries += 1;
            ok = rt
                .block_on(get_status(app.clone(), uri.clone()))
                .0
                .is_success();
        }
        println!(
            "first request after start, {label}: {:.1} ms, {} ({stored} results stored); \
             the contest's data served {:.0} ms after the start ({tries} requests)",
            ms(first),
            status,
            ms(start.elapsed()),
        );
        // Let that app's start-up reading end before the next one starts.
        std::thread::sleep(Duration::from_millis(300));
    }
    // The pages below are measured once the app has read the contest (its first requests are
    // the figures above).
    full_speed.store(true, Ordering::Relaxed);
    let app = app(&db);
    for (_, uri) in &pages {
        while !rt
            .block_on(get_status(app.clone(), uri.clone()))
            .0
            .is_success()
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let before = written.load(Ordering::Relaxed);
    let t0 = Instant::now();
    for (label, uri) in &pages {
        let mut all: Vec<Duration> = rt.block_on(async {
            let tasks: Vec<_> = (0..READERS)
                .map(|_| {
                    let (app, uri) = (app.clone(), uri.clone());
                    tokio::spawn(async move {
                        let mut out = Vec::new();
                        for _ in 0..REQUESTS / READERS {
                            out.push(get(app.clone(), uri.clone()).await);
                        }
                        out
                    })
                })
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                out.extend(t.await.unwrap());
            }
            out
        });
        all.sort();
        let q = |p: f64| ms(all[((all.len() - 1) as f64 * p).round() as usize]);
        println!(
            "{label:>13}: {} requests, {READERS} readers: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            all.len(),
            q(0.5),
            q(0.99),
            ms(*all.last().unwrap())
        );
    }
    let during = written.load(Ordering::Relaxed) - before;
    println!(
        "the writer stored {during} results during the measurement ({:.0} per second)",
        during as f64 / t0.elapsed().as_secs_f64()
    );
    let mut g = c.benchmark_group("live");
    g.bench_function("contest-page-while-writing", |b| {
        b.iter(|| rt.block_on(get(app.clone(), "/contests/live".into())))
    });
    g.finish();
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = live
}
criterion_main!(benches);
