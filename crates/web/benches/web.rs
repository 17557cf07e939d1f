//! Viewer and contest-page speed.
//!
//! - `view/werewolf-15` and `view/diplomacy-1920`: a 15-player Werewolf replay and a Diplomacy
//!   game played to 1920 turned into their viewer page (view model and HTML), as `kakehiki view`
//!   and the match page do. If chromium is installed, the time the browser takes to open and
//!   draw each page is printed too (the page records it in `data-render-ms`).
//! - `pages/index-16` and `pages/contest-16`: 16 concurrent readers each loading the index or a
//!   contest page of a store holding 100,000 matches; one iteration is one round of 16 requests
//!   (the slowest of the 16). The median latency of single requests in such rounds is printed.

use std::path::Path;
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

fn play(game: &str, seats: &[&str], options: &[(&str, &str)], seed: u64) -> (String, String) {
    let seats: Vec<SeatSpec> = seats.iter().map(|s| s.parse().unwrap()).collect();
    let mut spec = MatchSpec::new(game, seed, seats);
    for (k, v) in options {
        spec.options.insert(k.to_string(), v.to_string());
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let record = rt.block_on(find_game(game).unwrap().play(&spec)).unwrap();
    (
        record.replay.to_text(),
        serde_json::to_string(&record.report).unwrap(),
    )
}

fn browser_open_ms(page: &str) -> Option<f64> {
    let chrome = ["chromium", "chromium-browser"].into_iter().find(|c| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })?;
    let dir = tempfile::tempdir().ok()?;
    let file = dir.path().join("page.html");
    std::fs::write(&file, page).ok()?;
    let out = std::process::Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("p").display()
        ))
        .arg("--dump-dom")
        .arg(format!("file://{}#t=1000000", file.display()))
        .output()
        .ok()?;
    let dom = String::from_utf8_lossy(&out.stdout);
    let v = dom.split("data-render-ms=\"").nth(1)?.split('"').next()?;
    v.parse().ok()
}

fn viewer(c: &mut Criterion) {
    let wolves: Vec<&str> = vec!["builtin:sample"; 15];
    let (ww, _) = play("werewolf", &wolves, &[], 15);
    let powers = [
        "builtin:strong",
        "builtin:strong",
        "builtin:strong",
        "builtin:random",
        "builtin:random",
        "builtin:hold",
        "builtin:strong",
    ];
    let (dip, _) = play(
        "diplomacy",
        &powers,
        &[("max_year", "1920"), ("press_rounds", "1")],
        1901,
    );
    let mut g = c.benchmark_group("view");
    for (name, replay) in [("werewolf-15", &ww), ("diplomacy-1920", &dip)] {
        let page = kakehiki_web::standalone_page(replay, name).unwrap();
        match browser_open_ms(&page) {
            Some(ms) => println!(
                "{name}: {} replay lines, page {} KiB, chromium opened and drew its last step in {ms:.0} ms",
                replay.lines().count(),
                page.len() / 1024
            ),
            None => println!("{name}: no chromium, browser time not measured"),
        }
        g.bench_function(name, |b| {
            b.iter(|| kakehiki_web::standalone_page(replay, name).unwrap())
        });
    }
    g.finish();
}

const MATCHES: u64 = 100_000;

fn big_store(path: &Path) -> String {
    let toml = format!(
        "name = \"big\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 1\ngames = {MATCHES}\n\
         [[entrants]]\nname = \"a\"\nseat = \"builtin:strong\"\n[[entrants]]\nname = \"b\"\nseat = \"builtin:strong\"\n\
         [[entrants]]\nname = \"c\"\nseat = \"builtin:random\"\n[[entrants]]\nname = \"d\"\nseat = \"builtin:random\"\n"
    );
    let lookup = |g: &str| {
        find_game(g)
            .map(|d| d.game_type())
            .map_err(|e| e.to_string())
    };
    let def = ContestDef::parse(&toml, "big.toml", &lookup).unwrap();
    let mut store = SqliteStore::open(path).unwrap();
    kakehiki_contest::register(&mut store, &def).unwrap();
    let plan = kakehiki_contest::schedule(&def, &Default::default());
    let mut results = Vec::new();
    for seed in 0..16 {
        results.push(play(
            "nac",
            &[
                "builtin:strong",
                "builtin:strong",
                "builtin:random",
                "builtin:random",
            ],
            &[],
            seed,
        ));
    }
    for m in &plan.matches {
        let names: Vec<String> = m
            .entrants
            .iter()
            .map(|&e| def.entrants[e].name.clone())
            .collect();
        let (replay, report) = &results[(m.index % 16) as usize];
        store
            .put_result(&NewResult {
                contest: "big",
                index: m.index,
                entrants: &names,
                report_json: report,
                replay,
                duration_ms: 1,
                worker: "bench",
            })
            .unwrap();
    }
    def.name
}

fn pages(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("big.sqlite");
    let t = Instant::now();
    let name = big_store(&db);
    println!(
        "stored {MATCHES} matches in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let db2 = db.clone();
    let opener: kakehiki_web::StoreOpener =
        Arc::new(move || SqliteStore::open(&db2).map(|s| Box::new(s) as Box<dyn Store>));
    let app = kakehiki_web::app_with_opener(opener, 16).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let get = |uri: String| {
        let app = app.clone();
        async move {
            let t = Instant::now();
            let r = app
                .oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap())
                .await
                .unwrap();
            assert!(r.status().is_success(), "{}", r.status());
            axum::body::to_bytes(r.into_body(), usize::MAX)
                .await
                .unwrap();
            t.elapsed()
        }
    };
    let t = Instant::now();
    rt.block_on(get(format!("/contests/{name}")));
    println!(
        "first load (standings of {MATCHES} matches computed and cached): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let round = |uri: &str| -> Vec<Duration> {
        rt.block_on(async {
            let tasks: Vec<_> = (0..16)
                .map(|_| tokio::spawn(get(uri.to_string())))
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        })
    };
    let mut g = c.benchmark_group("pages");
    for (label, uri) in [
        ("index-16", "/".to_string()),
        ("contest-16", format!("/contests/{name}")),
    ] {
        let mut all: Vec<Duration> = (0..20).flat_map(|_| round(&uri)).collect();
        all.sort();
        println!(
            "{label}: median of {} requests with 16 concurrent readers: {:.2} ms (max {:.2} ms)",
            all.len(),
            all[all.len() / 2].as_secs_f64() * 1000.0,
            all[all.len() - 1].as_secs_f64() * 1000.0
        );
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    round(&uri);
                }
                t.elapsed()
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = viewer, pages
}
criterion_main!(benches);
