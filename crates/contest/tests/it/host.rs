//! The runner never blames a bot for the host: host faults stop the run and store nothing,
//! entrants are started before a contest is registered, changed program files are noticed, one
//! run at a time holds a SQLite file, idle workers wait for a staged contest's next stage.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use crate::common::{contest_text, parse, FakeArena};
use kakehiki_contest::{
    coordinate, run_local, run_worker, ContestDef, RefereeArena, RunError, RunOptions,
    WorkerOptions,
};
use kakehiki_store::{SqliteStore, Store, StoreError};

fn sqlite(path: &std::path::Path) -> Box<dyn Store> {
    Box::new(SqliteStore::open(path).unwrap())
}

#[test]
fn a_host_fault_stops_the_run_stores_nothing_for_the_match_and_a_rerun_plays_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let def = parse(&contest_text("h", "table", "round-robin", 6, ""));
    // The machine fails from match 10 on (a full disk, say).
    let broken = Arc::new(FakeArena::host_faulting(|j| j.index >= 10));
    let err = run_local(&def, sqlite(&db), broken, &RunOptions::default()).unwrap_err();
    match &err {
        RunError::HostFault { index, reason, .. } => {
            assert_eq!(*index, 10);
            assert!(reason.contains("No space left"), "{reason}");
        }
        other => panic!("expected a host fault, got {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("host fault") && msg.contains("run again"),
        "{msg}"
    );
    let mut store = sqlite(&db);
    let stored = store.stored_indices("h").unwrap();
    assert_eq!(stored.len(), 10, "only the matches before the fault");
    assert!(!stored.contains(&10));
    assert!(
        store.failures("h").unwrap().is_empty(),
        "a host fault is not the match's failure"
    );
    // On a working machine the rerun plays the rest, the faulted match included.
    let s = run_local(
        &def,
        sqlite(&db),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap();
    assert!(s.complete && s.failed.is_empty(), "{s:?}");
    assert_eq!((s.already_stored, s.played), (10, 50));
}

#[test]
fn a_host_fault_on_every_match_stores_nothing_and_is_not_complete() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("all.sqlite");
    let def = parse(&contest_text("all", "table", "round-robin", 6, ""));
    let opts = RunOptions {
        jobs: 4,
        ..RunOptions::default()
    };
    let err = run_local(
        &def,
        sqlite(&db),
        Arc::new(FakeArena::host_faulting(|_| true)),
        &opts,
    )
    .unwrap_err();
    assert!(matches!(err, RunError::HostFault { .. }), "{err}");
    let mut store = sqlite(&db);
    assert!(store.stored_indices("all").unwrap().is_empty());
    assert!(store.failures("all").unwrap().is_empty());
}

#[test]
fn a_second_run_on_one_sqlite_file_is_refused_while_the_first_plays() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("two.sqlite");
    let def = parse(&contest_text("two", "duel", "round-robin", 4, "games = 4"));
    // Slow enough that the first run still plays when the second has waited out the store's
    // patience with a busy lock (1 s).
    let slow = Arc::new(FakeArena {
        delay: Duration::from_millis(100),
        ..FakeArena::new()
    });
    std::thread::scope(|scope| {
        let first =
            scope.spawn(|| run_local(&def, sqlite(&db), slow.clone(), &RunOptions::default()));
        // Once the first run has stored a match it holds the lock.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while SqliteStore::open_read_only(&db)
            .and_then(|mut s| s.stored_indices("two"))
            .map(|s| s.is_empty())
            .unwrap_or(true)
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the first run stored nothing"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let err = run_local(
            &def,
            sqlite(&db),
            Arc::new(FakeArena::new()),
            &RunOptions::default(),
        )
        .unwrap_err();
        let RunError::Store(StoreError::RunInProgress { holder, .. }) = &err else {
            panic!("expected the second run to be refused, got {err}");
        };
        assert!(
            holder.contains(&format!("process {}", std::process::id())),
            "{holder}"
        );
        assert!(holder.contains("\"two\""), "{holder}");
        let s = first.join().unwrap().unwrap();
        assert_eq!(s.played, 24);
    });
    assert_eq!(
        slow.played.load(Ordering::SeqCst),
        24,
        "every match played once"
    );
    // Once the first run ended, a run may start again (and finds nothing to do).
    let s = run_local(
        &def,
        sqlite(&db),
        Arc::new(FakeArena::new()),
        &RunOptions::default(),
    )
    .unwrap();
    assert_eq!((s.played, s.already_stored), (0, 24));
}

#[test]
fn idle_workers_wait_for_the_next_stage_of_a_staged_contest() {
    // Workers that exit when idle must not exit between the leagues and the final of a Geister
    // seed contest, even with a coordinator slow to queue the next stage.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stages.sqlite");
    let def: ContestDef = parse(&contest_text("gs", "duel", "geister-seed", 8, ""));
    let db_c = db.clone();
    let def_c = def.clone();
    let (done_tx, done_rx) = mpsc::channel();
    // The coordinator in its own thread (a hang must fail the test, not block it).
    std::thread::spawn(move || {
        let connect = || Ok(Box::new(SqliteStore::open(&db_c)?) as Box<dyn Store>);
        let r = coordinate(
            &def_c,
            &connect,
            &RunOptions::default(),
            Duration::from_millis(400),
        );
        let _ = done_tx.send(r.map_err(|e| e.to_string()));
    });
    // Let the coordinator queue the first stage (one connection polls; a coordinator that ended
    // early says why).
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut poll = sqlite(&db);
    while poll.queue_counts("gs").map(|c| c.total()).unwrap_or(0) == 0 {
        if let Ok(r) = done_rx.try_recv() {
            panic!("the coordinator ended before queueing anything: {r:?}");
        }
        assert!(std::time::Instant::now() < deadline, "nothing was queued");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(poll);
    let arena = Arc::new(FakeArena::new());
    let stop = AtomicBool::new(false);
    let played: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let arena = arena.clone();
                let db = db.clone();
                let stop = &stop;
                scope.spawn(move || {
                    let opts = WorkerOptions {
                        jobs: 1,
                        poll: Duration::from_millis(5),
                        exit_when_idle: true,
                        name: format!("w{w}"),
                        ..WorkerOptions::default()
                    };
                    let connect = || Ok(Box::new(SqliteStore::open(&db)?) as Box<dyn Store>);
                    run_worker(&connect, arena, &opts, stop).unwrap().played
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    let summary = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the coordinator finished after the workers exited")
        .unwrap();
    assert!(summary.complete, "{summary:?}");
    let total = sqlite(&db).stored_indices("gs").unwrap().len() as u64;
    assert_eq!(
        played, total,
        "the workers played every match of every stage"
    );
    assert_eq!(arena.played.load(Ordering::SeqCst), total);
    assert!(total > 12, "leagues, rematches and the final: {total}");
}

fn repo_file(rel: &str) -> String {
    format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn nac_contest(name: &str, first_seat: &str) -> String {
    format!(
        "name = \"{name}\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 3\n\
         [[entrants]]\nname = \"mine\"\nseat = \"{first_seat}\"\n\
         [[entrants]]\nname = \"b1\"\nseat = \"builtin:random\"\n\
         [[entrants]]\nname = \"b2\"\nseat = \"builtin:random\"\n\
         [[entrants]]\nname = \"b3\"\nseat = \"builtin:strong\"\n"
    )
}

fn real(text: &str) -> ContestDef {
    use kakehiki_contest::Arena;
    ContestDef::parse(text, "t.toml", &|g| RefereeArena.game_type(g)).unwrap()
}

#[test]
fn a_typo_in_an_entrant_fails_at_once_and_registers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("typo.sqlite");
    let bot = repo_file("examples/bots/python/nac_bot.py");
    let typo = real(&nac_contest("typo", &format!("cmd:python3 {bot}x")));
    let err = run_local(
        &typo,
        sqlite(&db),
        Arc::new(RefereeArena),
        &RunOptions::default(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, RunError::Preflight(_)), "{msg}");
    assert!(msg.contains("entrant \"mine\""), "{msg}");
    assert!(msg.contains("nac_bot.pyx"), "{msg}");
    assert!(
        sqlite(&db).contest_names().unwrap().is_empty(),
        "nothing registered"
    );

    // A program that starts and dies at once is caught too, with its stderr.
    let dies = real(&nac_contest(
        "typo",
        "cmd:sh -c 'echo no such module >&2; exit 3'",
    ));
    let err = run_local(
        &dies,
        sqlite(&db),
        Arc::new(RefereeArena),
        &RunOptions::default(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("exit code 3") && msg.contains("no such module"),
        "{msg}"
    );

    // The corrected file is a fine new contest, not a "changed definition".
    let fixed = real(&nac_contest("typo", &format!("cmd:python3 {bot}")));
    let s = run_local(
        &fixed,
        sqlite(&db),
        Arc::new(RefereeArena),
        &RunOptions::default(),
    )
    .unwrap();
    assert!(s.complete && s.played == s.scheduled as u64, "{s:?}");
}

#[test]
fn a_changed_bot_program_is_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("changed.sqlite");
    let bot = dir.path().join("bot.py");
    std::fs::copy(repo_file("examples/bots/python/nac_bot.py"), &bot).unwrap();
    let def = real(&nac_contest(
        "ch",
        &format!("cmd:python3 {}", bot.display()),
    ));
    let s = run_local(
        &def,
        sqlite(&db),
        Arc::new(RefereeArena),
        &RunOptions::default(),
    )
    .unwrap();
    assert!(s.complete, "{s:?}");
    // Same command line, same file: fine.
    run_local(
        &def,
        sqlite(&db),
        Arc::new(RefereeArena),
        &RunOptions::default(),
    )
    .unwrap();
    let mut text = std::fs::read_to_string(&bot).unwrap();
    text.push_str("\n# a new version\n");
    std::fs::write(&bot, text).unwrap();
    let err = run_local(
        &def,
        sqlite(&db),
        Arc::new(RefereeArena),
        &RunOptions::default(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, RunError::ProgramChanged { .. }), "{msg}");
    assert!(
        msg.contains("entrant \"mine\"") && msg.contains("bot.py changed"),
        "{msg}"
    );
}

fn pg_url() -> Option<String> {
    kakehiki_store::test_database_url()
}

/// A loopback TCP proxy in front of the PostgreSQL server. `restart` does to its clients what a
/// server restart does: every connection is cut and new ones are refused for a while.
struct Proxy {
    port: u16,
    conns: Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
    down: Arc<AtomicBool>,
}

impl Proxy {
    fn start(upstream: std::net::SocketAddr) -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let conns: Arc<std::sync::Mutex<Vec<std::net::TcpStream>>> = Arc::default();
        let down = Arc::new(AtomicBool::new(false));
        let (c, d) = (conns.clone(), down.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if d.load(Ordering::SeqCst) {
                    // "Refused": close at once, as a server that is not up yet.
                    let _ = client.shutdown(std::net::Shutdown::Both);
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(upstream) else {
                    continue;
                };
                {
                    let mut list = c.lock().unwrap();
                    list.push(client.try_clone().unwrap());
                    list.push(server.try_clone().unwrap());
                }
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Proxy { port, conns, down }
    }

    fn restart(&self, down_for: Duration) {
        self.down.store(true, Ordering::SeqCst);
        for s in self.conns.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        std::thread::sleep(down_for);
        self.down.store(false, Ordering::SeqCst);
    }
}

#[test]
fn coordinator_and_workers_reconnect_when_postgresql_restarts() {
    use std::net::ToSocketAddrs;
    let Some(url) = pg_url() else { return };
    // A fresh schema, then the same URL through the proxy.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let schema = format!("t_restart_{}_{}", std::process::id(), nanos % 1_000_000_000);
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    let config: postgres::Config = url.parse().unwrap();
    let host = match &config.get_hosts()[0] {
        postgres::config::Host::Tcp(h) => h.clone(),
        other => panic!("a TCP host is needed for the proxy, got {other:?}"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let upstream = (host.as_str(), port)
        .to_socket_addrs()
        .unwrap()
        .next()
        .unwrap();
    let proxy = Proxy::start(upstream);
    let hostport = format!("{host}:{port}");
    assert!(
        url.contains(&hostport),
        "expected {hostport} in the test URL"
    );
    let sep = if url.contains('?') { '&' } else { '?' };
    let proxied = format!(
        "{}{sep}options=-c%20search_path%3D{schema}",
        url.replace(&hostport, &format!("127.0.0.1:{}", proxy.port))
    );

    let def = parse(&contest_text("pgr", "duel", "round-robin", 5, "games = 6"));
    let arena = Arc::new(FakeArena {
        delay: Duration::from_millis(30),
        ..FakeArena::new()
    });
    let stop = AtomicBool::new(false);
    let (summary, played) = std::thread::scope(|scope| {
        let coord = scope.spawn(|| {
            let connect = || {
                kakehiki_store::PgStore::connect(&proxied).map(|s| Box::new(s) as Box<dyn Store>)
            };
            coordinate(
                &def,
                &connect,
                &RunOptions::default(),
                Duration::from_millis(50),
            )
        });
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let arena = arena.clone();
                let proxied = proxied.clone();
                let stop = &stop;
                scope.spawn(move || {
                    let opts = WorkerOptions {
                        jobs: 1,
                        poll: Duration::from_millis(20),
                        lease: Duration::from_secs(5),
                        name: format!("r{w}"),
                        ..WorkerOptions::default()
                    };
                    let connect = || {
                        kakehiki_store::PgStore::connect(&proxied)
                            .map(|s| Box::new(s) as Box<dyn Store>)
                    };
                    run_worker(&connect, arena, &opts, stop)
                })
            })
            .collect();
        // Restart mid-run: once some matches are stored, twice.
        for _ in 0..2 {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            let start = arena.played.load(Ordering::SeqCst);
            while arena.played.load(Ordering::SeqCst) < start + 8 {
                assert!(std::time::Instant::now() < deadline, "no progress");
                std::thread::sleep(Duration::from_millis(10));
            }
            proxy.restart(Duration::from_millis(1500));
        }
        let summary = coord.join().unwrap();
        stop.store(true, Ordering::SeqCst);
        let mut played = 0;
        let mut reconnects = 0;
        for w in workers {
            let s = w.join().unwrap().expect("the worker survived the restarts");
            played += s.played;
            reconnects += s.reconnects;
        }
        assert!(reconnects >= 2, "workers reconnected ({reconnects})");
        (
            summary.expect("the coordinator survived the restarts"),
            played,
        )
    });
    assert!(summary.complete && summary.failed.is_empty(), "{summary:?}");
    let mut store = kakehiki_store::PgStore::connect(&proxied).unwrap();
    let stored = store.stored_indices("pgr").unwrap().len() as u64;
    assert_eq!(stored, 60);
    assert!(
        played <= 60 && played + 4 >= 60,
        "each match played about once: {played}"
    );
}

/// A contest whose `match_timeout_s` is below the longest legal match of its game under its
/// options is refused before anything is registered, with both numbers; 0 (no limit) and a
/// limit at the bound pass.
#[test]
fn a_match_timeout_below_the_longest_legal_match_is_refused_with_both_numbers() {
    let text = |timeout: u64| {
        let mut t = format!(
            "name = \"t\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 7\n\
             match_timeout_s = {timeout}\n[options]\nturn_ms = 2000\n"
        );
        for i in 0..4 {
            t.push_str(&format!(
                "\n[[entrants]]\nname = \"e{i}\"\nseat = \"builtin:random\"\n"
            ));
        }
        ContestDef::parse(&t, "t.toml", &|g| {
            use kakehiki_contest::Arena;
            RefereeArena.game_type(g)
        })
        .unwrap()
    };
    // ready 5 s + 9 turns × 2 s + 1 s grace = 24 s.
    let e = kakehiki_contest::runner::check_match_timeout(&RefereeArena, &text(20)).unwrap_err();
    assert!(matches!(e, RunError::MatchTimeout { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("match_timeout_s = 20 is below the longest legal match of nac")
            && msg.contains("24 s: raise match_timeout_s to at least 24 or set 0"),
        "{msg}"
    );
    let dir = tempfile::tempdir().unwrap();
    let e = run_local(
        &text(20),
        sqlite(&dir.path().join("c.sqlite")),
        Arc::new(RefereeArena),
        &RunOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, RunError::MatchTimeout { .. }), "{e}");
    for ok in [0, 24, 600] {
        kakehiki_contest::runner::check_match_timeout(&RefereeArena, &text(ok)).unwrap();
    }
}

/// Werewolf-NLP's bound is checked the same way: a village of 5 under a request time of 1 s +
/// 0.5 s, a response time of 2 s and 3 s to connect.
#[test]
fn a_werewolf_nlp_match_timeout_below_the_longest_legal_match_is_refused_with_both_numbers() {
    let text = |timeout: u64| {
        let mut t = format!(
            "name = \"wn\"\ngame = \"werewolf-nlp\"\nformat = \"aiwolf-game-set\"\nseed = 2024\n\
             seats = 5\ngames = 1\nsets = 1\nmatch_timeout_s = {timeout}\n[options]\n\
             action_ms = 1000\nacceptable_ms = 500\nresponse_ms = 2000\nconnect_timeout_ms = 3000\n"
        );
        for i in 0..5 {
            t.push_str(&format!(
                "\n[[entrants]]\nname = \"e{i}\"\nseat = \"builtin:sample\"\n"
            ));
        }
        ContestDef::parse(&t, "t.toml", &|g| {
            use kakehiki_contest::Arena;
            RefereeArena.game_type(g)
        })
        .unwrap()
    };
    // Seating 5 × (3 s + 2 × 2 s) = 35 s; the game's 85 requests (talk 4 a day for 5, 5, 4
    // and 3 agents, their votes, a divine and an attack vote a night; the driver's unit test
    // works them out) × 1.5 s = 127.5 s; 2 s to exit: 164.5 s, 165 s rounded up.
    for short in [164, 60] {
        let e =
            kakehiki_contest::runner::check_match_timeout(&RefereeArena, &text(short)).unwrap_err();
        assert!(matches!(e, RunError::MatchTimeout { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!(
                "match_timeout_s = {short} is below the longest legal match of werewolf-nlp under \
                 these limits, 165 s: raise match_timeout_s to at least 165 or set 0"
            )),
            "{msg}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let e = run_local(
        &text(60),
        sqlite(&dir.path().join("c.sqlite")),
        Arc::new(RefereeArena),
        &RunOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, RunError::MatchTimeout { .. }), "{e}");
    for ok in [0, 165, 600] {
        kakehiki_contest::runner::check_match_timeout(&RefereeArena, &text(ok)).unwrap();
    }
}

/// The real arena, except that it knows no bound on a match's length (as for a game whose driver
/// computed none): its `match_timeout_s` is then taken as given, and a bot within every
/// per-request limit can still outlast it.
struct NoBound;

impl kakehiki_contest::Arena for NoBound {
    fn game_type(&self, game: &str) -> Result<&'static kakehiki_core::GameType, String> {
        RefereeArena.game_type(game)
    }
    fn play(
        &self,
        job: &kakehiki_contest::MatchJob,
    ) -> Result<kakehiki_contest::Played, kakehiki_contest::PlayError> {
        RefereeArena.play(job)
    }
    fn check_job(&self, job: &kakehiki_contest::MatchJob) -> Result<(), String> {
        RefereeArena.check_job(job)
    }
    fn preflight(
        &self,
        game: &str,
        entrants: &[kakehiki_contest::Entrant],
    ) -> Vec<kakehiki_contest::PreflightProblem> {
        RefereeArena.preflight(game, entrants)
    }
}

/// The example NAC bot, made to answer every turn legally but slowly (0.7 s of its 1 s), written
/// into `dir`.
fn slow_nac_bot(dir: &std::path::Path) -> std::path::PathBuf {
    let bot = dir.join("slow_bot.py");
    let slow = "import sys, time\n\
                class Slow:\n    \
                    def __init__(self, f):\n        self.f = f\n    \
                    def write(self, t):\n        \
                        if not t.startswith('READY'):\n            time.sleep(0.7)\n        \
                        return self.f.write(t)\n    \
                    def __getattr__(self, a):\n        return getattr(self.f, a)\n\
                sys.stdout = Slow(sys.stdout)\n";
    let source = std::fs::read_to_string(repo_file("examples/bots/python/nac_bot.py")).unwrap();
    std::fs::write(&bot, format!("{slow}{source}")).unwrap();
    bot
}

/// A match stopped at `match_timeout_s` is stored as played, not discarded: the seat that used
/// the most thinking time (a slow bot answering every turn legally, 0.7 s of its 1 s) is
/// charged a loss with a timeout error naming the limit and its time; the built-in seats win.
#[test]
fn a_match_past_its_time_limit_is_stored_scored_with_the_slowest_seat_charged() {
    use kakehiki_contest::Arena;
    let dir = tempfile::tempdir().unwrap();
    let bot = slow_nac_bot(dir.path());
    let text = format!(
        "name = \"slow\"\ngame = \"nac\"\nformat = \"random-tables\"\nmin_games = 1\nseed = 3\n\
         match_timeout_s = 2\n\
         [[entrants]]\nname = \"slow\"\nseat = \"cmd:python3 {}\"\n\
         [[entrants]]\nname = \"b1\"\nseat = \"builtin:random\"\n\
         [[entrants]]\nname = \"b2\"\nseat = \"builtin:random\"\n\
         [[entrants]]\nname = \"b3\"\nseat = \"builtin:strong\"\n",
        bot.display()
    );
    let def = ContestDef::parse(&text, "t.toml", &|g| RefereeArena.game_type(g)).unwrap();
    let db = dir.path().join("slow.sqlite");
    let s = run_local(&def, sqlite(&db), Arc::new(NoBound), &RunOptions::default()).unwrap();
    assert!(s.complete && s.failed.is_empty(), "{s:?}");
    assert_eq!((s.scheduled, s.played), (1, 1), "{s:?}");
    let mut store = sqlite(&db);
    assert!(store.failures("slow").unwrap().is_empty());
    let results = store.results("slow").unwrap();
    assert_eq!(results.len(), 1);
    let r: kakehiki_core::MatchReport = serde_json::from_str(&results[0].report_json).unwrap();
    let slow_seat = results[0]
        .entrants
        .iter()
        .position(|e| e == "slow")
        .unwrap();
    for (seat, sr) in r.seats.iter().enumerate() {
        if seat == slow_seat {
            assert_eq!(r.scores[seat], 0.0, "{r:?}");
            let e = &sr.errors.last().unwrap();
            assert_eq!(e.kind, kakehiki_core::SeatErrorKind::Timeout, "{e:?}");
            assert!(
                e.detail
                    .starts_with("the match exceeded match_timeout_s = 2 s; this seat used ")
                    && e.detail.ends_with(" s of it, the most of any seat"),
                "{}",
                e.detail
            );
        } else {
            assert_eq!(r.scores[seat], 1.0, "{r:?}");
            assert!(sr.errors.is_empty(), "{:?}", sr.errors);
        }
    }
    let results = kakehiki_contest::standings::seat_results(&r);
    assert_eq!(
        results[slow_seat],
        kakehiki_contest::standings::SeatResult::Loss
    );
}

/// A ladder's thinking budget (`thinking_s`): a bot answering every turn legally but slowly
/// (0.7 s of its 1 s) passes its 1 s share of the match after two turns; the match is stopped
/// there, long before the game would end, the slow seat charged with the budget named, and the
/// built-in seats, never charged, win.
#[test]
fn a_seat_past_its_thinking_budget_stops_the_match_and_only_it_is_charged() {
    use kakehiki_contest::Arena;
    let dir = tempfile::tempdir().unwrap();
    let bot = slow_nac_bot(dir.path());
    let mut job =
        kakehiki_contest::MatchJob::probe("t".into(), "nac", None, 4, Default::default(), 0);
    job.seats = vec![
        kakehiki_core::SeatSpec::Builtin("random".into()),
        kakehiki_core::SeatSpec::Cmd(vec!["python3".into(), bot.display().to_string()]),
        kakehiki_core::SeatSpec::Builtin("random".into()),
        kakehiki_core::SeatSpec::Builtin("strong".into()),
    ];
    job.thinking_s = 1;
    let played = RefereeArena.play(&job).unwrap();
    let r = &played.report;
    assert_eq!(r.scores, vec![1.0, 0.0, 1.0, 1.0], "{r:?}");
    let e = r.seats[1].errors.last().unwrap();
    assert_eq!(e.kind, kakehiki_core::SeatErrorKind::Timeout, "{e:?}");
    assert!(
        e.detail.contains("past its share thinking_seconds = 1 s"),
        "{}",
        e.detail
    );
    for seat in [0, 2, 3] {
        assert!(r.seats[seat].errors.is_empty(), "{:?}", r.seats[seat]);
    }
    assert_eq!(r.extra["overtime"]["charged"], serde_json::json!([1]));
    // Stopped at the budget, not at the game's end (a whole game of its turns is minutes).
    let used = r.extra["overtime"]["thinking_us"][1].as_u64().unwrap();
    assert!((1_000_000..10_000_000).contains(&used), "{used} µs");
    assert!(played
        .replay
        .contains(kakehiki_referee::overtime::OVERTIME_FORMAT));
}

/// A match taken away while it is played (`play_until`'s flag) ends at once with
/// `PlayError::Stopped`, its bots stopped with it, and no record.
#[test]
fn a_match_taken_away_is_stopped_midway() {
    use kakehiki_contest::Arena;
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("sleeper.sh");
    std::fs::write(&bot, "#!/bin/sh\nexec sleep 600\n").unwrap();
    let mut job =
        kakehiki_contest::MatchJob::probe("t".into(), "nac", None, 4, Default::default(), 0);
    job.seats[0] = kakehiki_core::SeatSpec::Cmd(vec!["sh".into(), bot.display().to_string()]);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let r = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(300));
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        RefereeArena.play_until(&job, &stop)
    });
    assert_eq!(r.unwrap_err(), kakehiki_contest::PlayError::Stopped);
}
