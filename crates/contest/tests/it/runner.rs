//! The runner with a fake arena: resume, failures, staged formats, standings, workers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{contest_text, parse, FakeArena};
use kakehiki_contest::{
    compute_standings, coordinate, load_results, run_local, run_worker, OutputFormat, RunError,
    RunOptions, WorkerOptions,
};
use kakehiki_store::{LadderPlay, PgStore, SqliteStore, Store, StoreError};

fn sqlite(dir: &tempfile::TempDir, name: &str) -> Box<dyn Store> {
    Box::new(SqliteStore::open(&dir.path().join(name)).unwrap())
}

fn standings_json(def: &kakehiki_contest::ContestDef, store: &mut dyn Store) -> String {
    let results = load_results(store, def).unwrap();
    compute_standings(def, &results).render(OutputFormat::Json)
}

#[test]
fn a_run_stores_every_match_once_and_a_rerun_plays_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let def = parse(&contest_text("rr", "table", "round-robin", 6, ""));
    let arena = Arc::new(FakeArena::new());
    let opts = RunOptions {
        jobs: 3,
        ..RunOptions::default()
    };
    let s = run_local(&def, sqlite(&dir, "a.sqlite"), arena.clone(), &opts).unwrap();
    assert_eq!(
        (s.scheduled, s.already_stored, s.played, s.complete),
        (60, 0, 60, true)
    );
    assert!(s.failed.is_empty());
    let s = run_local(&def, sqlite(&dir, "a.sqlite"), arena.clone(), &opts).unwrap();
    assert_eq!((s.already_stored, s.played, s.complete), (60, 0, true));
    assert_eq!(arena.played.load(Ordering::SeqCst), 60);
    let mut store = sqlite(&dir, "a.sqlite");
    assert_eq!(store.stored_indices("rr").unwrap().len(), 60);
    assert!(store
        .replay("rr", 59)
        .unwrap()
        .unwrap()
        .contains("\"index\":59"));
}

#[test]
fn parallelism_and_interruptions_do_not_change_the_standings() {
    let dir = tempfile::tempdir().unwrap();
    let def = parse(&contest_text(
        "p",
        "table",
        "round-robin",
        7,
        "bootstrap = 50",
    ));
    run_local(
        &def,
        sqlite(&dir, "one.sqlite"),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap();
    let reference = standings_json(&def, sqlite(&dir, "one.sqlite").as_mut());

    // Four at a time, interrupted: the first run fails every third match, the second completes.
    let flaky = Arc::new(FakeArena::failing(|j| j.index % 3 == 1));
    let opts = RunOptions {
        jobs: 4,
        ..RunOptions::default()
    };
    let s = run_local(&def, sqlite(&dir, "two.sqlite"), flaky, &opts).unwrap();
    assert!(!s.failed.is_empty() && !s.complete);
    assert!(s
        .failed
        .iter()
        .all(|(i, e)| i % 3 == 1 && e.contains("cannot start")));
    let mut store = sqlite(&dir, "two.sqlite");
    assert_eq!(store.failures("p").unwrap().len(), s.failed.len());
    let s = run_local(
        &def,
        sqlite(&dir, "two.sqlite"),
        Arc::new(FakeArena::new()),
        &opts,
    )
    .unwrap();
    assert!(s.complete && s.failed.is_empty());
    assert!(store.failures("p").unwrap().is_empty());
    assert_eq!(standings_json(&def, store.as_mut()), reference);
}

#[test]
fn a_changed_definition_is_refused_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let def = parse(&contest_text("c", "duel", "round-robin", 3, ""));
    run_local(
        &def,
        sqlite(&dir, "c.sqlite"),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap();
    let changed = parse(&contest_text("c", "duel", "round-robin", 3, "games = 4"));
    let err = run_local(
        &changed,
        sqlite(&dir, "c.sqlite"),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, RunError::Store(StoreError::DefinitionChanged { .. })),
        "{err}"
    );
    assert_eq!(
        sqlite(&dir, "c.sqlite").stored_indices("c").unwrap().len(),
        6
    );
}

#[test]
fn geister_seed_runs_leagues_then_rematches_then_the_final() {
    let dir = tempfile::tempdir().unwrap();
    let def = parse(&contest_text("gs", "duel", "geister-seed", 8, ""));
    let s = run_local(
        &def,
        sqlite(&dir, "g.sqlite"),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap();
    assert!(s.complete, "{s:?}");
    let mut store = sqlite(&dir, "g.sqlite");
    let results = load_results(store.as_mut(), &def).unwrap();
    let st = compute_standings(&def, &results);
    assert!(st.complete);
    assert_eq!(st.stages.len(), 3, "two leagues and the final");
    let fin = st.stages.iter().find(|s| s.name == "final").unwrap();
    assert!(fin.games <= 6, "at most four finalists");
    let qualified: usize = st
        .stages
        .iter()
        .filter(|s| s.name != "final")
        .map(|s| s.rows.iter().filter(|r| r.qualified).count())
        .sum();
    assert_eq!(fin.rows.len(), qualified, "the final is the qualifiers");
    assert!(qualified <= 4);
    // The standings' first rows are the finalists in final order.
    for (row, frow) in st.rows.iter().zip(&fin.rows) {
        assert_eq!(row.rank, frow.rank);
    }
    // Resuming a complete staged contest plays nothing.
    let again = run_local(
        &def,
        sqlite(&dir, "g.sqlite"),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap();
    assert_eq!(again.played, 0);
}

#[test]
fn werewolf_standings_per_role_and_team_and_gpw_points() {
    let dir = tempfile::tempdir().unwrap();
    let def = parse(&contest_text(
        "w",
        "wolf",
        "aiwolf-qualifier",
        7,
        "min_games = 5\nbootstrap = 20",
    ));
    run_local(
        &def,
        sqlite(&dir, "w.sqlite"),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap();
    let mut store = sqlite(&dir, "w.sqlite");
    let results = load_results(store.as_mut(), &def).unwrap();
    let st = compute_standings(&def, &results);
    assert_eq!(st.ranked_by, "mean points per game");
    let games: u64 = st.teams.iter().map(|t| t.games_won).sum();
    assert_eq!(games as usize, results.len(), "every game won by one team");
    assert!(
        st.roles.iter().any(|r| r.role == "WEREWOLF") && st.roles.iter().any(|r| r.role == "SEER")
    );
    for row in &st.rows {
        let role_games: u64 = st
            .roles
            .iter()
            .filter(|r| r.entrant == row.entrant)
            .map(|r| r.games)
            .sum();
        assert_eq!(role_games, row.games);
        assert!(row.games >= 5);
        assert!((row.mean_points - row.wins as f64 / row.games as f64).abs() < 1e-9);
    }
    let means: Vec<f64> = st.rows.iter().map(|r| r.mean_points).collect();
    assert!(
        means.windows(2).all(|w| w[0] >= w[1]),
        "ranked by mean: {means:?}"
    );
    for f in [OutputFormat::Table, OutputFormat::Csv, OutputFormat::Json] {
        assert!(st.render(f).contains("e0"));
    }

    let def = parse(&contest_text("g", "duel", "geister-gpw", 4, ""));
    run_local(
        &def,
        sqlite(&dir, "w.sqlite"),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap();
    let results = load_results(store.as_mut(), &def).unwrap();
    let st = compute_standings(&def, &results);
    for row in &st.rows {
        assert_eq!(row.points_value, (3 * row.wins + row.draws) as f64);
        assert_eq!(row.games, 6);
    }
}

fn pg_url() -> Option<String> {
    kakehiki_store::test_database_url()
}

#[test]
fn postgres_coordinator_and_workers_finish_every_match_once() {
    let Some(url) = pg_url() else { return };
    let url = kakehiki_store::fresh_test_schema(&url, "coord");
    let def = parse(&contest_text(
        "pg",
        "table",
        "round-robin",
        6,
        "bootstrap = 20",
    ));
    let stop = AtomicBool::new(false);
    let arena = Arc::new(FakeArena::failing(|j| j.index == 5));
    let summary = std::thread::scope(|scope| {
        let coord = scope.spawn(|| {
            let connect = || PgStore::connect(&url).map(|s| Box::new(s) as Box<dyn Store>);
            coordinate(
                &def,
                &connect,
                &RunOptions::default(),
                Duration::from_millis(50),
            )
            .unwrap()
        });
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let url = url.clone();
                let arena = arena.clone();
                let stop = &stop;
                scope.spawn(move || {
                    let opts = WorkerOptions {
                        jobs: 2,
                        poll: Duration::from_millis(20),
                        max_attempts: 2,
                        name: format!("w{w}"),
                        ..WorkerOptions::default()
                    };
                    let connect = || PgStore::connect(&url).map(|s| Box::new(s) as Box<dyn Store>);
                    run_worker(&connect, arena, &opts, stop).unwrap()
                })
            })
            .collect();
        let summary = coord.join().unwrap();
        stop.store(true, Ordering::SeqCst);
        let played: u64 = workers.into_iter().map(|w| w.join().unwrap().played).sum();
        assert_eq!(played, 59);
        summary
    });
    assert_eq!(summary.failed.len(), 1, "{summary:?}");
    assert_eq!(summary.failed[0].0, 5);
    let mut store = PgStore::connect(&url).unwrap();
    assert_eq!(store.stored_indices("pg").unwrap().len(), 59);
    let f = store.failures("pg").unwrap();
    assert_eq!((f[0].index, f[0].attempts), (5, 2));
}

/// An arena whose match lasts until it is stopped (or a minute, then fails the test's match).
struct UntilStopped {
    stopped: AtomicBool,
}

impl kakehiki_contest::Arena for UntilStopped {
    fn game_type(&self, game: &str) -> Result<&'static kakehiki_core::GameType, String> {
        FakeArena::new().game_type(game)
    }
    fn play(
        &self,
        job: &kakehiki_contest::MatchJob,
    ) -> Result<kakehiki_contest::Played, kakehiki_contest::PlayError> {
        self.play_until(job, &AtomicBool::new(false))
    }
    fn play_until(
        &self,
        _: &kakehiki_contest::MatchJob,
        stop: &AtomicBool,
    ) -> Result<kakehiki_contest::Played, kakehiki_contest::PlayError> {
        for _ in 0..6000 {
            if stop.load(Ordering::SeqCst) {
                self.stopped.store(true, Ordering::SeqCst);
                return Err(kakehiki_contest::PlayError::Stopped);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(kakehiki_contest::PlayError::Failed("never stopped".into()))
    }
}

/// A match taken away from the worker playing it (an organiser stopped it: its queue row is no
/// longer running) is stopped by the worker at its next heartbeat and left as the organiser
/// recorded it: no result, no other failure, no retry.
#[test]
fn a_worker_stops_a_match_taken_away_at_its_next_heartbeat() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.sqlite");
    let mut store = SqliteStore::open(&path).unwrap();
    let contest = kakehiki_store::ladder_contest("x");
    store
        .register_contest(&kakehiki_store::ContestRow {
            name: contest.clone(),
            fingerprint: "f".into(),
            definition: "{}".into(),
        })
        .unwrap();
    let job =
        kakehiki_contest::MatchJob::probe(contest.clone(), "rps", None, 2, Default::default(), 0);
    store
        .enqueue(
            &contest,
            &[kakehiki_store::QueuedMatch {
                index: 0,
                spec_json: job.to_json(),
            }],
        )
        .unwrap();
    let arena = Arc::new(UntilStopped {
        stopped: AtomicBool::new(false),
    });
    let stop = AtomicBool::new(false);
    let summary = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let opts = WorkerOptions {
                jobs: 1,
                lease: Duration::from_millis(300),
                poll: Duration::from_millis(20),
                name: "w".into(),
                ..WorkerOptions::default()
            };
            let connect = || SqliteStore::open(&path).map(|s| Box::new(s) as Box<dyn Store>);
            run_worker(&connect, arena.clone(), &opts, &stop).unwrap()
        });
        while store.ladder_running("x").unwrap().is_empty() {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(store.ladder_cancel("x", 0, "stopped by the test").unwrap());
        while !arena.stopped.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
        stop.store(true, Ordering::SeqCst);
        worker.join().unwrap()
    });
    assert_eq!((summary.stopped, summary.played, summary.failed), (1, 0, 0));
    assert!(store.stored_indices(&contest).unwrap().is_empty());
    let f = store.failures(&contest).unwrap();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].error, "stopped by the test");
}
