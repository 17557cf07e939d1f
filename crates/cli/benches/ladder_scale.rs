//! The hosted ladder at scale (docs/ladder.md, "Scale"): a ladder of 1,000 bots with 100,000
//! rated matches on PostgreSQL, served by the real `kakehiki ladder serve` (the release binary
//! next to this bench, or each of `KAKEHIKI_BENCH_BINARIES` in turn), read by 16 and then 64
//! concurrent clients while 2 writers store new results that the server's matchmaker rates as
//! they come. Prints, per page, the requests made and their latency (p50, p95, p99, max), the
//! requests per second, and whether the targets hold (p50 within 10 ms at 16 readers, p99 within
//! 100 ms at 64); once with 1 reader and no writers (for reference), then under load; the
//! writers' rate; and checks that the ratings advanced.
//!
//! `KAKEHIKI_BENCH_DATABASE_URL=postgres://... cargo bench -p kakehiki --bench ladder_scale`
//! (else `KAKEHIKI_TEST_DATABASE_URL`; without either it prints "skipped" and succeeds). It works
//! in a fresh schema of that database, dropped at the end.
//! Options (environment): `KAKEHIKI_BENCH_BOTS` (default 1000), `KAKEHIKI_BENCH_MATCHES`
//! (default 100000), `KAKEHIKI_BENCH_SECONDS` (the loaded phase, default 20),
//! `KAKEHIKI_BENCH_READERS` (default 16), `KAKEHIKI_BENCH_WRITERS` (default 2),
//! `KAKEHIKI_BENCH_SERVE_ARGS` (more arguments for `ladder serve`, split on spaces),
//! `KAKEHIKI_BENCH_BINARIES` (`kakehiki` binaries to compare, separated by commas: each serves
//! the same store in turn, round after round), `KAKEHIKI_BENCH_ROUNDS` (default 1),
//! `KAKEHIKI_BENCH_WRITE_RATE` (results per second over all writers; default 0, as fast as they
//! can: they then take whatever CPU the pages leave, so a cheaper server shows as more writes).
//!
//! Population: accounts, bots, versions, the ladder's contest row and the rating rows through the
//! store's API; the matches in bulk SQL: one row per seat in `kk_ladder_match_seats`, one result
//! per match in `kk_results` (each a copy of one real geister match's report and compressed
//! replay, stored first with `put_result`), the ratings' games, wins and last μ/σ from those
//! seats, and the ladder's rated count equal to the contest's result count, as if the
//! matchmaker had rated them all.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kakehiki_store::{
    ladder_contest, version_entrant, ContestRow, LadderEntrant, LadderRole, NewBotVersion,
    NewLadderUser, NewResult, Store, VersionStatus, LADDER_FINGERPRINT,
};

const LADDER: &str = "g";
/// Writers store results from this index on: far above the matchmaker's own queue.
const FIRST_WRITTEN_INDEX: u64 = 1_000_000_000;
/// The targets: p50 within this many milliseconds at 16 readers ...
const TARGET_P50_MS: f64 = 10.0;
/// ... and p99 within this many at 64.
const TARGET_P99_MS: f64 = 100.0;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A small xorshift generator: the bench needs no statistical quality.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The `kakehiki` binary of this build: the bench runs from `target/PROFILE/deps`.
fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench's own path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the bench runs from target/PROFILE/deps");
    let bin = dir.join(format!("kakehiki{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: `cargo bench -p kakehiki` builds it",
        bin.display()
    );
    bin
}

/// A fresh schema of `url` and the URL that uses it.
fn fresh_schema(url: &str) -> (String, String) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let schema = format!(
        "bench_ladder_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000
    );
    let mut c = postgres::Client::connect(url, postgres::NoTls).expect("connect to PostgreSQL");
    c.batch_execute(&format!("CREATE SCHEMA {schema}"))
        .expect("create the bench's schema");
    let sep = if url.contains('?') { '&' } else { '?' };
    let schema_url = format!("{url}{sep}options=-c%20search_path%3D{schema}");
    (schema, schema_url)
}

/// Drops the bench's schema when dropped, also when the bench fails.
struct Schema {
    base_url: String,
    name: String,
}

impl Drop for Schema {
    fn drop(&mut self) {
        match postgres::Client::connect(&self.base_url, postgres::NoTls)
            .and_then(|mut c| c.batch_execute(&format!("DROP SCHEMA {} CASCADE", self.name)))
        {
            Ok(()) => {}
            Err(e) => eprintln!("ladder_scale: cannot drop schema {}: {e}", self.name),
        }
    }
}

/// One real geister match between built-ins: its report (JSON) and replay.
fn sample_match(bin: &Path, dir: &Path) -> (serde_json::Value, String) {
    let replay = dir.join("sample-replay.jsonl");
    let out = Command::new(bin)
        .args(["play", "geister", "--seat", "builtin:random"])
        .args(["--seat", "builtin:random", "--seed", "7", "--json"])
        .arg("--replay")
        .arg(&replay)
        .stderr(Stdio::inherit())
        .output()
        .expect("run kakehiki play");
    assert!(out.status.success(), "kakehiki play geister failed");
    let report = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    (
        report,
        std::fs::read_to_string(&replay).expect("the replay"),
    )
}

/// The report with seat `winner` winning 1-0.
fn report_won_by(sample: &serde_json::Value, winner: usize) -> String {
    let mut r = sample.clone();
    let scores: Vec<f64> = (0..2)
        .map(|s| if s == winner { 1.0 } else { 0.0 })
        .collect();
    r["scores"] = serde_json::json!(scores);
    r["scores_exact"] =
        serde_json::json!(scores.iter().map(|s| format!("{s}")).collect::<Vec<_>>());
    r["winner"] = serde_json::json!(winner);
    r.to_string()
}

fn bot_name(i: u64) -> String {
    format!("bot{i}")
}

/// Fill the store: see the module's documentation.
fn populate(
    store: &mut dyn Store,
    pg: &mut postgres::Client,
    bots: u64,
    matches: u64,
    sample: &(serde_json::Value, String),
) {
    let contest = ladder_contest(LADDER);
    store
        .register_contest(&ContestRow {
            name: contest.clone(),
            fingerprint: LADDER_FINGERPRINT.into(),
            definition: "{}".into(),
        })
        .expect("register the ladder's contest row");
    store.ladder_state(LADDER).expect("the ladder's state");
    let start = Instant::now();
    for i in 0..bots {
        let name = bot_name(i);
        store
            .create_ladder_user(&NewLadderUser {
                name: name.clone(),
                role: LadderRole::Contestant,
                token_sha256: format!("{:064x}", 2 * i),
                signup_code_sha256: format!("{:064x}", 2 * i + 1),
            })
            .expect("create an account");
        let version = store
            .add_bot_version(&NewBotVersion {
                ladder: LADDER.into(),
                bot: name.clone(),
                owner: name.clone(),
                language: "python".into(),
                source_sha256: format!("{:064x}", i),
            })
            .expect("add a version");
        store
            .set_bot_version_status(LADDER, &name, version, VersionStatus::Active, "built\n")
            .expect("activate a version");
        store
            .ladder_enter(
                LADDER,
                &LadderEntrant {
                    entrant: version_entrant(&name, version),
                    bot: name.clone(),
                    version,
                    owner: name,
                },
            )
            .expect("enter a bot");
    }
    println!(
        "  {bots} accounts, bots, active versions and ratings through the store API: {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let start = Instant::now();
    // The first match through the store, with the real replay; the others copy its replay.
    let entrants = [version_entrant("bot0", 1), version_entrant("bot1", 1)];
    store
        .put_result(&NewResult {
            contest: &contest,
            index: 0,
            entrants: &entrants,
            report_json: &report_won_by(&sample.0, 0),
            replay: &sample.1,
            duration_ms: 900,
            worker: "bench",
        })
        .expect("store the first result");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let bots_i = bots as i64;
    let matches_i = matches as i64;
    // Each match: two distinct random bots, a random winner; μ drifts around a strength of the
    // bot, σ shrinks from 8.3 towards 1 over the ladder's history; one match every 10 s.
    pg.execute(
        "WITH p AS (SELECT $2::bigint AS now, $3::bigint AS bots, $4::bigint AS n)
         INSERT INTO kk_ladder_match_seats
             (ladder, idx, seat, entrant, bot, version, score, place, errors, mu_after,
              sigma_after, played_at)
         SELECT $1, m.i, s.seat, 'bot' || s.b || '@v1', 'bot' || s.b, 1,
                CASE WHEN s.won THEN 1.0 ELSE 0.0 END, CASE WHEN s.won THEN 1 ELSE 2 END, 0,
                15.0 + 20.0 * ((s.b * 7919) % p.bots)::float8 / p.bots + (random() - 0.5) * 2.0,
                1.0 + 7.33 * exp(-5.0 * m.i::float8 / p.n),
                p.now - 10 * (p.n - m.i)
         FROM p CROSS JOIN
              (SELECT i, floor(random() * p.bots)::bigint AS a,
                      floor(random() * (p.bots - 1))::bigint AS d, random() < 0.5 AS first
               FROM p, generate_series(0::bigint, p.n - 1) AS i) AS m
         CROSS JOIN LATERAL (VALUES (0::bigint, m.a, m.first),
                                    (1::bigint, (m.a + 1 + m.d) % p.bots, NOT m.first))
             AS s(seat, b, won)",
        &[&LADDER, &now, &bots_i, &matches_i],
    )
    .expect("insert the matches' seats");
    let won0 = report_won_by(&sample.0, 0);
    let won1 = report_won_by(&sample.0, 1);
    pg.execute(
        "INSERT INTO kk_results
             (contest, idx, entrants, report, replay, replay_bytes, duration_ms, worker, seq)
         SELECT $1, t.idx, t.entrants, CASE WHEN t.first THEN $2 ELSE $3 END,
                f.replay, f.replay_bytes, 900, 'bench', t.idx + 1
         FROM (SELECT idx, json_agg(entrant ORDER BY seat)::text AS entrants,
                      bool_or(seat = 0 AND place = 1) AS first
               FROM kk_ladder_match_seats WHERE ladder = $4 AND idx > 0 GROUP BY idx) AS t,
              (SELECT replay, replay_bytes FROM kk_results WHERE contest = $1 AND idx = 0) AS f",
        &[&contest, &won0, &won1, &LADDER],
    )
    .expect("insert the results");
    // Match 0's seats are bot0 against bot1 like its stored result.
    pg.execute(
        "UPDATE kk_ladder_match_seats
         SET bot = 'bot' || seat, entrant = 'bot' || seat || '@v1',
             place = seat + 1, score = 1 - seat
         WHERE ladder = $1 AND idx = 0",
        &[&LADDER],
    )
    .expect("match 0's seats");
    pg.execute(
        "UPDATE kk_result_counts SET results = $2 WHERE contest = $1",
        &[&contest, &matches_i],
    )
    .expect("the result count");
    pg.execute(
        "UPDATE kk_ladder_state SET rated_seq = $2, next_match = $2 WHERE ladder = $1",
        &[&LADDER, &matches_i],
    )
    .expect("the ladder's state");
    pg.execute(
        "UPDATE kk_ladder_ratings r
         SET games = a.games, wins = a.wins, mu = a.mu, sigma = a.sigma, last_played = a.last
         FROM (SELECT entrant, COUNT(*) AS games,
                      SUM(CASE WHEN place = 1 THEN 1 ELSE 0 END) AS wins,
                      (array_agg(mu_after ORDER BY idx DESC))[1] AS mu,
                      (array_agg(sigma_after ORDER BY idx DESC))[1] AS sigma,
                      MAX(played_at) AS last
               FROM kk_ladder_match_seats WHERE ladder = $1 GROUP BY entrant) AS a
         WHERE r.ladder = $1 AND r.entrant = a.entrant",
        &[&LADDER],
    )
    .expect("the ratings' records");
    // What autovacuum would soon do after such a load; the bench measures steady state.
    pg.batch_execute("ANALYZE").expect("analyze");
    println!(
        "  {matches} matches ({} seats, {matches} results) in bulk SQL: {:.1} s",
        2 * matches,
        start.elapsed().as_secs_f64()
    );
}

/// The server, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const PAGES: [&str; 5] = [
    "GET /leaderboard",
    "GET /bots/BOT",
    "GET /api/ladders/g/leaderboard",
    "GET /api/ladders/g/bots/BOT/matches",
    "GET /matches/N",
];

/// The leaderboard and bot pages, and a match's page (its report and the game's viewer of its
/// replay).
const ALL_PAGES: [usize; 5] = [0, 1, 2, 3, 4];

/// Latencies of each page of [`PAGES`], and failed requests.
#[derive(Default)]
struct Samples {
    ms: [Vec<f64>; 5],
    failed: u64,
    first_failure: Option<String>,
}

fn read_loop(
    base: &str,
    pages: &[usize],
    (bots, matches): (u64, u64),
    seed: u64,
    stop: &AtomicBool,
) -> Samples {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build();
    let mut rng = Rng::new(seed);
    let mut out = Samples::default();
    while !stop.load(Ordering::Relaxed) {
        let bot = bot_name(rng.below(bots));
        let index = rng.below(matches);
        let paths = [
            "/leaderboard".to_string(),
            format!("/bots/{bot}"),
            format!("/api/ladders/{LADDER}/leaderboard"),
            format!("/api/ladders/{LADDER}/bots/{bot}/matches"),
            format!("/matches/{index}"),
        ];
        for &k in pages {
            let path = &paths[k];
            let start = Instant::now();
            let body = agent
                .get(&format!("{base}{path}"))
                .call()
                .map_err(|e| e.to_string())
                .and_then(|r| {
                    let mut s = Vec::new();
                    r.into_reader()
                        .read_to_end(&mut s)
                        .map_err(|e| e.to_string())?;
                    Ok(s)
                });
            let t = start.elapsed().as_secs_f64() * 1e3;
            match body {
                Ok(_) => out.ms[k].push(t),
                Err(e) => {
                    out.failed += 1;
                    out.first_failure.get_or_insert(format!("{path}: {e}"));
                }
            }
        }
    }
    out
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((q * sorted.len() as f64) as usize).min(sorted.len() - 1)]
}

/// What a measured phase must show: every page's p50, or p99, within so many milliseconds.
#[derive(Clone, Copy)]
enum Target {
    P50(f64),
    P99(f64),
}

/// Read `pages` (of [`PAGES`]) in turn with `readers` clients for `secs` seconds and print the
/// table; whether every page meets `target` and no request failed, and the requests per second.
fn measure(
    title: &str,
    base: &str,
    pages: &[usize],
    readers: u64,
    secs: u64,
    size: (u64, u64),
    target: Target,
) -> (bool, f64) {
    let stop = AtomicBool::new(false);
    let load_before = load();
    let start = Instant::now();
    let results: Vec<Samples> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..readers)
            .map(|r| {
                let stop = &stop;
                s.spawn(move || read_loop(base, pages, size, 1000 + r, stop))
            })
            .collect();
        std::thread::sleep(Duration::from_secs(secs));
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().expect("a reader"))
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let total: usize = results
        .iter()
        .map(|r| r.ms.iter().map(Vec::len).sum::<usize>())
        .sum();
    let rps = total as f64 / elapsed;
    println!(
        "{title}: {readers} reader(s), {elapsed:.1} s, {rps:.0} requests/s (load average before: {load_before}; after: {})",
        load()
    );
    let (label, limit) = match target {
        Target::P50(ms) => ("p50", ms),
        Target::P99(ms) => ("p99", ms),
    };
    println!(
        "  {:<38} {:>8} {:>8} {:>8} {:>8} {:>8}  {label} <= {limit} ms",
        "page", "requests", "p50 ms", "p95 ms", "p99 ms", "max ms"
    );
    let mut all_ok = true;
    for &k in pages {
        let page = PAGES[k];
        let mut ms: Vec<f64> = results.iter().flat_map(|r| r.ms[k].clone()).collect();
        ms.sort_by(f64::total_cmp);
        let p50 = percentile(&ms, 0.5);
        let p99 = percentile(&ms, 0.99);
        let ok = match target {
            Target::P50(limit) => p50 <= limit,
            Target::P99(limit) => p99 <= limit,
        };
        all_ok &= ok;
        println!(
            "  {page:<38} {:>8} {p50:>8.1} {:>8.1} {p99:>8.1} {:>8.1}  {}",
            ms.len(),
            percentile(&ms, 0.95),
            ms.last().copied().unwrap_or(f64::NAN),
            if ok { "yes" } else { "NO" }
        );
    }
    let failed: u64 = results.iter().map(|r| r.failed).sum();
    if failed > 0 {
        let first = results.iter().find_map(|r| r.first_failure.clone());
        println!(
            "  {failed} request(s) failed; the first: {}",
            first.unwrap_or_default()
        );
        all_ok = false;
    }
    (all_ok, rps)
}

/// Writers storing results as fast as they can, as workers would, until stopped.
struct Writers {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Writers {
    fn start(
        writers: u64,
        rate: f64,
        url: &str,
        bots: u64,
        next: &Arc<AtomicU64>,
        sample: &(serde_json::Value, String),
    ) -> Writers {
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let won = [report_won_by(&sample.0, 0), report_won_by(&sample.0, 1)];
        let threads = (0..writers)
            .map(|w| {
                let (stop, next, written) = (stop.clone(), next.clone(), written.clone());
                let (url, replay, won) = (url.to_string(), sample.1.clone(), won.clone());
                std::thread::spawn(move || {
                    let mut store = kakehiki_store::open_store(Path::new(""), Some(&url))
                        .expect("open the store");
                    let contest = ladder_contest(LADDER);
                    let mut rng = Rng::new(77 + w + next.load(Ordering::Relaxed));
                    // Each writer's share of the rate, paced from its start.
                    let every =
                        (rate > 0.0).then(|| Duration::from_secs_f64(writers as f64 / rate));
                    let began = Instant::now();
                    let mut n = 0u32;
                    while !stop.load(Ordering::Relaxed) {
                        if let Some(every) = every {
                            let due = began + every * n;
                            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                                std::thread::sleep(wait);
                            }
                            n += 1;
                        }
                        let a = rng.below(bots);
                        let b = (a + 1 + rng.below(bots - 1)) % bots;
                        let entrants = [
                            version_entrant(&bot_name(a), 1),
                            version_entrant(&bot_name(b), 1),
                        ];
                        let stored = store
                            .put_result(&NewResult {
                                contest: &contest,
                                index: next.fetch_add(1, Ordering::Relaxed),
                                entrants: &entrants,
                                report_json: &won[rng.below(2) as usize],
                                replay: &replay,
                                duration_ms: 900,
                                worker: "bench-writer",
                            })
                            .expect("store a result");
                        if stored {
                            written.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        Writers {
            stop,
            written,
            threads,
        }
    }

    /// Stop them; how many results they stored.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().expect("a writer");
        }
        self.written.load(Ordering::Relaxed)
    }
}

fn rated_count(pg: &mut postgres::Client) -> i64 {
    pg.query_one(
        "SELECT rated_seq FROM kk_ladder_state WHERE ladder = $1",
        &[&LADDER],
    )
    .and_then(|r| r.try_get(0))
    .expect("the rated count")
}

/// What one binary's run showed.
struct Run {
    bin: String,
    ok16: bool,
    rps16: f64,
    ok64: bool,
    rps64: f64,
}

/// Serve the store at `url` with `bin` and measure: alone, then 16 and 64 readers under the
/// writers' load; check that the server rated what the writers stored.
#[allow(clippy::too_many_arguments)]
fn serve_and_measure(
    bin: &Path,
    url: &str,
    dir: &Path,
    size: (u64, u64),
    (secs, readers, writers, rate): (u64, u64, u64, f64),
    next: &Arc<AtomicU64>,
    sample: &(serde_json::Value, String),
    pg: &mut postgres::Client,
) -> Run {
    let config = dir.join("ladder.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"{LADDER}\"\ngame = \"geister\"\nbuiltins = []\nlanguages = [\"python\"]\n"
        ),
    )
    .expect("write the ladder file");
    let log = dir.join("server.log");
    let extra: Vec<String> = std::env::var("KAKEHIKI_BENCH_SERVE_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    println!("\nserved by {}", bin.display());
    let server = Server(
        Command::new(bin)
            .args(["ladder", "serve", "--config"])
            .arg(&config)
            .args(["--database-url", url, "--workers", "0"])
            // Every reader is on the one loopback address: let 64 of them in at once.
            // A port of the system's choosing: the server says which on its first line.
            .args(["--max-client-connections", "256", "--bind", "127.0.0.1:0"])
            .arg("--data")
            .arg(dir.join("data"))
            .args(&extra)
            .stderr(std::fs::File::create(&log).expect("server log"))
            .spawn()
            .expect("start kakehiki ladder serve"),
    );
    let up = Instant::now();
    // `ladder g (geister) on http://127.0.0.1:PORT`, once it listens.
    let base = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(url) = text
            .lines()
            .find_map(|l| l.split_once(" on http://").map(|(_, a)| a.trim()))
        {
            break format!("http://{url}");
        }
        assert!(
            up.elapsed() < Duration::from_secs(60),
            "the server did not say where it listens within 60 s: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    loop {
        if ureq::get(&format!("{base}/api/ladders/{LADDER}/leaderboard"))
            .call()
            .is_ok()
        {
            break;
        }
        assert!(
            up.elapsed() < Duration::from_secs(60),
            "the server did not answer within 60 s: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The matchmaker's first sync (reading and entering the 1,000 bots) before measuring.
    std::thread::sleep(Duration::from_secs(2));
    measure(
        "reference: 1 reader, no writers",
        &base,
        &ALL_PAGES,
        1,
        (secs / 4).max(3),
        size,
        Target::P50(TARGET_P50_MS),
    );
    let rated_before = rated_count(pg);
    let w = Writers::start(writers, rate, url, size.0, next, sample);
    let writing = Instant::now();
    let (ok16, rps16) = measure(
        &format!("{readers} readers, {writers} writers storing results"),
        &base,
        &ALL_PAGES,
        readers,
        secs,
        size,
        Target::P50(TARGET_P50_MS),
    );
    let (ok64, rps64) = measure(
        &format!("64 readers, {writers} writers storing results"),
        &base,
        &ALL_PAGES,
        64,
        secs,
        size,
        Target::P99(TARGET_P99_MS),
    );
    let wrote = w.stop();
    let write_secs = writing.elapsed().as_secs_f64();
    // The matchmaker rates every 200 ms: give it time to catch up with the last results.
    let target = rated_before + wrote as i64;
    let mut rated_after = rated_before;
    let waited = Instant::now();
    while waited.elapsed() < Duration::from_secs(30) {
        rated_after = rated_count(pg);
        if rated_after >= target {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    println!(
        "writers: {wrote} results in {write_secs:.1} s ({:.0} results/s); the server's matchmaker rated {} of them ({:.1} s after the writers stopped)",
        wrote as f64 / write_secs,
        rated_after - rated_before,
        waited.elapsed().as_secs_f64()
    );
    drop(server);
    assert!(
        writers == 0 || (wrote > 0 && rated_after >= target),
        "the ratings did not advance with the written results ({rated_before} -> {rated_after}, {wrote} written)"
    );
    Run {
        bin: bin.display().to_string(),
        ok16,
        rps16,
        ok64,
        rps64,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not used.
    let Some(base_url) = std::env::var("KAKEHIKI_BENCH_DATABASE_URL")
        .ok()
        .or_else(|| std::env::var("KAKEHIKI_TEST_DATABASE_URL").ok())
        .filter(|u| !u.is_empty())
    else {
        println!(
            "ladder_scale: skipped: set KAKEHIKI_BENCH_DATABASE_URL (or KAKEHIKI_TEST_DATABASE_URL) to a PostgreSQL database"
        );
        return;
    };
    let bots: u64 = env_or("KAKEHIKI_BENCH_BOTS", 1000).max(2);
    let matches: u64 = env_or("KAKEHIKI_BENCH_MATCHES", 100_000).max(1);
    let secs: u64 = env_or("KAKEHIKI_BENCH_SECONDS", 20).max(1);
    let readers: u64 = env_or("KAKEHIKI_BENCH_READERS", 16).max(1);
    let writers: u64 = env_or("KAKEHIKI_BENCH_WRITERS", 2);
    let rounds: u64 = env_or("KAKEHIKI_BENCH_ROUNDS", 1).max(1);
    let rate: f64 = env_or("KAKEHIKI_BENCH_WRITE_RATE", 0.0f64).max(0.0);
    let bins: Vec<PathBuf> = match std::env::var("KAKEHIKI_BENCH_BINARIES") {
        Ok(list) if !list.trim().is_empty() => list.split(',').map(PathBuf::from).collect(),
        _ => vec![binary()],
    };
    for b in &bins {
        assert!(b.is_file(), "{} is not a file", b.display());
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let sample = sample_match(&bins[0], dir.path());
    let (schema, url) = fresh_schema(&base_url);
    let schema = Schema {
        base_url: base_url.clone(),
        name: schema,
    };
    println!(
        "ladder_scale: {bots} bots, {matches} matches, PostgreSQL schema {}; {} CPUs, load average {}",
        schema.name,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load()
    );
    let start = Instant::now();
    let mut store = kakehiki_store::open_store(Path::new(""), Some(&url)).expect("open the store");
    let mut pg = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    populate(store.as_mut(), &mut pg, bots, matches, &sample);
    println!(
        "  population: {:.1} s in all",
        start.elapsed().as_secs_f64()
    );
    let next = Arc::new(AtomicU64::new(FIRST_WRITTEN_INDEX));
    let mut runs = Vec::new();
    for round in 0..rounds {
        for bin in &bins {
            println!("\nround {} of {rounds}", round + 1);
            runs.push(serve_and_measure(
                bin,
                &url,
                dir.path(),
                (bots, matches),
                (secs, readers, writers, rate),
                &next,
                &sample,
                &mut pg,
            ));
        }
    }
    drop(store);
    drop(pg);
    drop(schema);
    let yes = |b: bool| if b { "yes" } else { "NO" };
    println!("\nsummary (every page, the match page included):");
    for r in &runs {
        println!(
            "  {}: {readers} readers {:.0} requests/s, p50 <= {TARGET_P50_MS} ms {}; 64 readers {:.0} requests/s, p99 <= {TARGET_P99_MS} ms {}",
            r.bin,
            r.rps16,
            yes(r.ok16),
            r.rps64,
            yes(r.ok64)
        );
    }
}
