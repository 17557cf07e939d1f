//! The ladder at work, end to end: `kakehiki ladder serve --workers 2` on SQLite with a ladder
//! of 100 bots that have played a while (settled ratings), each the Python Geister starter built
//! once by `kakehiki ladder build` and kept in the store as every bot's program. Measures:
//!
//! - **workers busy**: over a window of matches, the time the two workers spent playing (the
//!   stored matches' durations) over the window's wall-clock time × 2. Bar: ≥ 90%.
//! - **a new bot's first 10 matches**: a new contestant's version made active on the running
//!   ladder; seconds until it has 10 rated games on the leaderboard. Bar: ≤ 60 s.
//!
//! `cargo bench -p kakehiki --bench ladder_play` (about two minutes). `KAKEHIKI_BENCH_WINDOW`
//! (seconds of the busy window, default 40).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kakehiki_store::{
    LadderBuilds, LadderPlay, LadderRole, NewBotVersion, NewLadderUser, Program, SqliteStore,
    Store, VersionStatus,
};

const BOTS: usize = 100;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_kakehiki")
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn leaderboard(url: &str) -> serde_json::Value {
    let r = ureq::get(&format!("{url}/api/ladders/g/leaderboard"))
        .call()
        .expect("leaderboard");
    serde_json::from_str(&r.into_string().expect("body")).expect("JSON")
}

fn games_of(board: &serde_json::Value, bot: &str) -> u64 {
    board["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["bot"] == bot))
        .and_then(|r| r["games"].as_u64())
        .unwrap_or(0)
}

fn add_bot(store: &mut SqliteStore, program: &Program, name: &str, i: usize) {
    store
        .create_ladder_user(&NewLadderUser {
            name: name.into(),
            role: LadderRole::Contestant,
            token_sha256: format!("a{i:0>63}"),
            signup_code_sha256: format!("b{i:0>63}"),
        })
        .expect("account");
    let v = store
        .add_bot_version(&NewBotVersion {
            ladder: "g".into(),
            bot: name.into(),
            owner: name.into(),
            language: "python".into(),
            source_sha256: "0".repeat(64),
        })
        .expect("version");
    // The built program, kept in the store as a builder keeps it.
    store
        .ladder_put_program("g", name, v, program)
        .expect("program");
    store
        .set_bot_version_status("g", name, v, VersionStatus::Active, "built by the bench")
        .expect("active");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let window: u64 = std::env::var("KAKEHIKI_BENCH_WINDOW")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let config = dir.path().join("ladder.toml");
    std::fs::write(
        &config,
        "name = \"g\"\ngame = \"geister\"\nlanguages = [\"python\"]\nmatches_per_hour = 1000000\n",
    )
    .expect("ladder file");
    // The bot, built and checked once as the ladder builds an upload.
    let built: PathBuf = dir.path().join("built");
    let out = Command::new(bin())
        .args(["ladder", "build", "--config"])
        .arg(&config)
        .args(["--language", "python", "--out"])
        .arg(&built)
        .arg(root.join("starters/geister/python/bot.py"))
        .output()
        .expect("ladder build");
    assert!(out.status.success(), "ladder build: {out:?}");
    let program = kakehiki_ladder::program::pack(&built).expect("pack the built bot");
    let db = dir.path().join("ladder.sqlite");
    let data = dir.path().join("data");
    {
        let mut store = SqliteStore::open(&db).expect("store");
        for i in 0..BOTS {
            add_bot(&mut store, &program, &format!("bot{i:03}"), i);
        }
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let _server = Server(
        Command::new(bin())
            .args(["ladder", "serve", "--config"])
            .arg(&config)
            .arg("--db")
            .arg(&db)
            .arg("--data")
            .arg(&data)
            .args(["--bind", &format!("127.0.0.1:{port}"), "--workers", "2"])
            .args(["--seed", "1"])
            .stderr(Stdio::null())
            .spawn()
            .expect("ladder serve"),
    );
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "no server");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Settle the ratings as on a ladder that has played for a while (σ 1.5, 200 games, μ
    // spread), once the matchmaker has entered the bots.
    while leaderboard(&url)["rows"].as_array().map_or(0, Vec::len) < BOTS {
        std::thread::sleep(Duration::from_millis(100));
    }
    {
        let conn = rusqlite::Connection::open(&db).expect("sqlite");
        conn.busy_timeout(Duration::from_secs(30)).expect("busy");
        conn.execute(
            "UPDATE kk_ladder_ratings SET sigma = 1.5, games = 200, wins = 100,
                 mu = 15.0 + (CAST(SUBSTR(bot, 4) AS INTEGER) % 20)",
            [],
        )
        .expect("settle");
    }
    println!(
        "ladder of {BOTS} bots (Python Geister starter), 2 workers, SQLite; window {window} s"
    );

    // Workers busy: matches stored during the window, their durations over 2 × the window.
    let mut store = SqliteStore::open(&db).expect("store");
    let contest = kakehiki_store::ladder_contest("g");
    std::thread::sleep(Duration::from_secs(3));
    let first = store.result_count(&contest).expect("count");
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(window));
    let wall = t0.elapsed();
    let results = store.results_since(&contest, first).expect("results");
    let played: u64 = results.iter().map(|(_, r)| r.duration_ms).sum();
    let busy = played as f64 / (wall.as_millis() as f64 * 2.0);
    println!(
        "workers busy: {:.1}% ({} matches in {:.1} s, {:.0} ms each on average)   bar ≥ 90%: {}",
        busy * 100.0,
        results.len(),
        wall.as_secs_f64(),
        played as f64 / results.len().max(1) as f64,
        if busy >= 0.9 { "met" } else { "NOT met" }
    );

    // A new bot: its first 10 matches.
    add_bot(&mut store, &program, "newcomer", BOTS + 1);
    let t0 = Instant::now();
    let mut last = 0;
    let took = loop {
        let g = games_of(&leaderboard(&url), "newcomer");
        if g != last {
            last = g;
        }
        if g >= 10 {
            break Some(t0.elapsed());
        }
        if t0.elapsed() > Duration::from_secs(300) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    match took {
        Some(t) => println!(
            "a new bot's first 10 matches: {:.1} s   bar ≤ 60 s: {}",
            t.as_secs_f64(),
            if t <= Duration::from_secs(60) {
                "met"
            } else {
                "NOT met"
            }
        ),
        None => println!(
            "a new bot's first 10 matches: not within 300 s ({last} played)   bar ≤ 60 s: NOT met"
        ),
    }
    let state = store.ladder_state("g").expect("state");
    println!(
        "matches queued {}, rated {}",
        state.next_match, state.rated_seq
    );
}
