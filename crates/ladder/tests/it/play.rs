//! The matchmaker over a real store and the referee: built-ins rated by play, versions entered
//! and retired, and what a queued match holds.

use std::time::Duration;

use kakehiki_contest::arena::Arena;
use kakehiki_contest::{MatchJob, RefereeArena};
use kakehiki_core::SeatSpec;
use kakehiki_ladder::play::Matchmaker;
use kakehiki_ladder::program::program_ref;
use kakehiki_ladder::LadderConfig;
use kakehiki_store::{
    ladder_contest, LadderPlay, LadderRole, NewBotVersion, NewLadderUser, NewResult, SqliteStore,
    Store, VersionStatus,
};

fn config(text: &str) -> LadderConfig {
    LadderConfig::parse(text, "ladder.toml", &|g| RefereeArena.game_type(g)).unwrap()
}

/// Claim and play every queued match of the store, storing each result.
fn play_queued(store: &mut dyn Store) -> u64 {
    let mut played = 0;
    while let Some(claim) = store.claim("test", Duration::from_secs(60), 3).unwrap() {
        let job: MatchJob = serde_json::from_str(&claim.spec_json).unwrap();
        let p = RefereeArena.play(&job).unwrap();
        let report = serde_json::to_string(&p.report).unwrap();
        assert!(store
            .put_result(&NewResult {
                contest: &claim.contest,
                index: claim.index,
                entrants: &job.entrants,
                report_json: &report,
                replay: &p.replay,
                duration_ms: 1,
                worker: "test",
            })
            .unwrap());
        played += 1;
    }
    played
}

/// The bar: `strong` ranks above `random` after at most 200 of its games (Geister).
/// Played until `strong` has ranked first in 20 consecutive ratings.
#[test]
fn strong_ranks_above_random_within_200_games() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("l.sqlite")).unwrap();
    let c = config("name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\", \"strong\"]\n");
    let mut mm = Matchmaker::new(c, 2, 1);
    let mut first_ahead = None;
    let ratings = loop {
        let step = mm.step(&mut store, 1, 1).unwrap();
        assert!(step.skipped == 0, "{step:?}");
        let ratings = store.ladder_ratings("g", true).unwrap();
        let games = ratings[0].games;
        if ratings[0].entrant == "builtin:strong" {
            first_ahead.get_or_insert(games);
        } else {
            first_ahead = None;
        }
        if first_ahead.is_some_and(|f| games >= f + 20) {
            break ratings;
        }
        assert!(
            games <= 220,
            "strong not ahead for 20 games by game 200: {ratings:?}"
        );
        play_queued(&mut store);
    };
    let ahead_since = first_ahead.unwrap();
    eprintln!(
        "strong ahead of random since its game {ahead_since}: {:?}",
        ratings
            .iter()
            .map(|r| (&r.entrant, r.mu, r.sigma, r.games, r.wins))
            .collect::<Vec<_>>()
    );
    assert!(ahead_since <= 200);
    // Every game rated once: both played every match.
    assert_eq!(ratings[0].games, ratings[1].games);
}

/// A contestant's account named `name`.
fn add_contestant(store: &mut dyn Store, name: &str) {
    store
        .create_ladder_user(&NewLadderUser {
            name: name.into(),
            role: LadderRole::Contestant,
            token_sha256: format!("{name:0>64}"),
            signup_code_sha256: format!("{name:1>64}"),
        })
        .unwrap();
}

fn add_active(store: &mut dyn Store, bot: &str) -> u64 {
    let v = store
        .add_bot_version(&NewBotVersion {
            ladder: "n".into(),
            bot: bot.into(),
            owner: bot.into(),
            language: "python".into(),
            source_sha256: "0".repeat(64),
        })
        .unwrap();
    store
        .set_bot_version_status("n", bot, v, VersionStatus::Active, "")
        .unwrap();
    v
}

/// A new version replaces the previous one in every match queued after it; NAC's four seats are
/// filled with the ladder's built-in; a queued match runs the version's program in its folder.
#[test]
fn a_new_version_replaces_the_old_in_new_matches_and_tables_are_filled() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("l.sqlite")).unwrap();
    for name in ["alice", "bob"] {
        add_contestant(&mut store, name);
    }
    let c =
        config("name = \"n\"\ngame = \"nac\"\nbuiltins = [\"random\"]\nlanguages = [\"python\"]\n");
    let mut mm = Matchmaker::new(c, 4, 2);
    add_active(&mut store, "alice");
    add_active(&mut store, "bob");
    let step = mm.step(&mut store, 3, 10).unwrap();
    assert_eq!((step.queued, step.open), (3, 3));
    // Claimed, as a worker would: the specs of the matches queued since the last claim.
    let jobs = |store: &mut SqliteStore| -> Vec<MatchJob> {
        let mut out = Vec::new();
        while let Some(c) = store.claim("test", Duration::from_secs(600), 3).unwrap() {
            assert_eq!(c.contest, ladder_contest("n"));
            out.push(serde_json::from_str(&c.spec_json).unwrap());
        }
        out
    };
    let first = jobs(&mut store);
    assert_eq!(first.len(), 3);
    for job in first {
        assert_eq!(job.entrants.len(), 4);
        let mut names = job.entrants.clone();
        names.sort();
        assert_eq!(
            names,
            ["alice@v1", "bob@v1", "builtin:random", "builtin:random"]
        );
        for (seat, name) in job.entrants.iter().enumerate() {
            if name.starts_with("builtin:") {
                assert_eq!(job.seats[seat], SeatSpec::Builtin("random".into()));
                assert_eq!(job.seat_dirs[seat], None);
            } else {
                let bot = name.split('@').next().unwrap();
                assert_eq!(job.seats[seat], "cmd:python3 bot.py".parse().unwrap());
                // The program by reference: the worker unpacks it from the store.
                assert_eq!(
                    job.seat_dirs[seat].as_deref(),
                    Some(program_ref("n", bot, 1).as_str())
                );
            }
        }
    }
    // Alice uploads again: matches queued from now on have her v2, never v1.
    assert_eq!(add_active(&mut store, "alice"), 2);
    // Steps read the entrants again once a second (`SYNC_EVERY`); a sync reads them now.
    mm.sync(&mut store).unwrap();
    let step = mm.step(&mut store, 6, 10).unwrap();
    assert_eq!(step.queued, 3);
    let second = jobs(&mut store);
    assert_eq!(second.len(), 3);
    for job in second {
        assert!(
            job.entrants.contains(&"alice@v2".to_string()),
            "{:?}",
            job.entrants
        );
        assert!(!job.entrants.contains(&"alice@v1".to_string()));
    }
    let all = store.ladder_ratings("n", false).unwrap();
    let v1 = all.iter().find(|r| r.entrant == "alice@v1").unwrap();
    assert!(!v1.active);
    // Frozen? Not yet: the ladder still queues.
    assert!(!store.ladder_state("n").unwrap().frozen);
}

/// The ladder file's per-match settings reach every match: the game's options (here Geister's
/// move limit), the match's wall-clock limit, the sandbox level and the CPU quota.
#[test]
fn the_ladder_files_match_settings_reach_the_matches() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("l.sqlite")).unwrap();
    let c = config(
        "name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\", \"strong\"]\nmatch_timeout_s = 90\n\
         sandbox = \"strict\"\ncpus_per_bot = 0.5\n[options]\nmax_plies = 10\n",
    );
    let mut mm = Matchmaker::new(c, 2, 3);
    assert_eq!(mm.step(&mut store, 1, 1).unwrap().queued, 1);
    let claim = store
        .claim("test", Duration::from_secs(60), 3)
        .unwrap()
        .unwrap();
    let job: MatchJob = serde_json::from_str(&claim.spec_json).unwrap();
    assert_eq!(job.options.get("max_plies").map(String::as_str), Some("10"));
    assert_eq!(job.timeout_s, 90);
    assert_eq!(job.sandbox.as_deref(), Some("strict"));
    assert_eq!(job.cpu_millis, Some(500));
    // Played: built-ins only, so the sandbox has nothing to confine; the move limit holds.
    let p = RefereeArena.play(&job).unwrap();
    let header: serde_json::Value = serde_json::from_str(p.replay.lines().next().unwrap()).unwrap();
    assert_eq!(header["params"]["rules"]["max_plies"], 10, "{header}");
}

/// Werewolf-NLP's bound too: 5 agents under upstream's defaults, 6,877 s (the driver's unit
/// test works it out), above the default of an hour.
#[test]
fn a_werewolf_nlp_ladder_checks_its_match_timeout_and_its_default_follows_the_bound() {
    let base = "name = \"n\"\ngame = \"werewolf-nlp\"\nbuiltins = [\"sample\"]\n";
    let mut c = config(&format!("{base}match_timeout_s = 3600\n"));
    let e = c.check_match_settings(&RefereeArena).unwrap_err();
    assert_eq!(
        e,
        "match_timeout_s = 3600 is below the longest legal match of werewolf-nlp under these \
         limits, 6,877 s: raise match_timeout_s to at least 6877 or set 0 for no limit"
    );
    let mut c = config(base);
    c.check_match_settings(&RefereeArena).unwrap();
    assert_eq!(c.match_timeout_s, 6877);
}

/// A ladder file whose `match_timeout_s` is below the longest legal match under its options is
/// refused with both numbers; without the key, the default is raised to that bound.
#[test]
fn a_match_timeout_below_the_longest_legal_match_is_refused_and_the_default_follows_the_bound() {
    let base = "name = \"w\"\ngame = \"werewolf\"\nbuiltins = [\"random\"]\n";
    let mut c = config(&format!("{base}match_timeout_s = 600\n"));
    let e = c.check_match_settings(&RefereeArena).unwrap_err();
    // 15 agents under aiwolf-0.6's defaults: 6,902 s (the driver's own unit test works it out).
    assert_eq!(
        e,
        "match_timeout_s = 600 is below the longest legal match of werewolf under these limits, \
         6,902 s: raise match_timeout_s to at least 6902 or set 0 for no limit"
    );
    for ok in ["match_timeout_s = 0\n", "match_timeout_s = 6902\n"] {
        let mut c = config(&format!("{base}{ok}"));
        c.check_match_settings(&RefereeArena).unwrap();
    }
    let mut c = config(base);
    c.check_match_settings(&RefereeArena).unwrap();
    assert_eq!(c.match_timeout_s, 6902);
    // A game whose matches are short keeps the default.
    let mut c = config(
        "name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\"]\n\
                        [options]\nbank_ms = 1000\nper_move_ms = 100\n",
    );
    c.check_match_settings(&RefereeArena).unwrap();
    assert_eq!(
        c.match_timeout_s,
        kakehiki_ladder::config::DEFAULT_MATCH_TIMEOUT_S
    );
}

/// A bot holds at most its share of the open matches: a bot whose legal but slow moves make
/// every match last cannot take every worker. Three contestants and three open Geister matches:
/// each is in at most one (`worker_share`), and no match of built-ins alone is queued to wait
/// beside them.
#[test]
fn a_bot_is_never_in_more_than_its_share_of_the_open_matches() {
    let names = ["ann", "ben", "cat"];
    let c = config(
        "name = \"n\"\ngame = \"geister\"\nbuiltins = [\"random\"]\nlanguages = [\"python\"]\n",
    );
    assert_eq!(kakehiki_ladder::play::worker_share(3, 2, 3), 1);
    for seed in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("l.sqlite")).unwrap();
        for name in names {
            add_contestant(&mut store, name);
            add_active(&mut store, name);
        }
        let mut mm = Matchmaker::new(c.clone(), 2, seed);
        mm.step(&mut store, 3, 10).unwrap();
        let mut seen = std::collections::HashMap::new();
        let mut queued = 0;
        while let Some(claim) = store.claim("test", Duration::from_secs(600), 3).unwrap() {
            let job: MatchJob = serde_json::from_str(&claim.spec_json).unwrap();
            assert!(
                job.entrants.iter().any(|e| !e.starts_with("builtin:")),
                "a match of built-ins alone: {:?}",
                job.entrants
            );
            for e in job.entrants.iter().filter(|e| !e.starts_with("builtin:")) {
                *seen.entry(e.clone()).or_insert(0) += 1;
            }
            queued += 1;
        }
        assert!(queued >= 2, "seed {seed}: {queued} matches");
        assert!(seen.values().all(|&n| n <= 1), "seed {seed}: {seen:?}");
    }
}

/// A disabled account's bot and a retired bot leave the leaderboard and are matched no more;
/// their ratings stay in the store.
#[test]
fn disabled_accounts_and_retired_bots_are_matched_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("l.sqlite")).unwrap();
    for name in ["ann", "ben", "cat"] {
        add_contestant(&mut store, name);
        add_active(&mut store, name);
    }
    let c = config(
        "name = \"n\"\ngame = \"geister\"\nbuiltins = [\"random\"]\nlanguages = [\"python\"]\n",
    );
    let mut mm = Matchmaker::new(c, 2, 9);
    mm.sync(&mut store).unwrap();
    let on_board = |store: &mut SqliteStore| -> Vec<String> {
        store
            .ladder_ratings("n", true)
            .unwrap()
            .into_iter()
            .map(|r| r.entrant)
            .filter(|e| !e.starts_with("builtin:"))
            .collect()
    };
    assert_eq!(on_board(&mut store).len(), 3);
    assert!(store.ladder_set_disabled("ann", true).unwrap());
    assert!(store.ladder_set_retired("n", "ben", true).unwrap());
    mm.sync(&mut store).unwrap();
    assert_eq!(on_board(&mut store), ["cat@v1"]);
    mm.step(&mut store, 6, 6).unwrap();
    while let Some(claim) = store.claim("test", Duration::from_secs(600), 3).unwrap() {
        let job: MatchJob = serde_json::from_str(&claim.spec_json).unwrap();
        assert!(
            !job.entrants
                .iter()
                .any(|e| e.starts_with("ann@") || e.starts_with("ben@")),
            "{:?}",
            job.entrants
        );
    }
    // The ratings stay (inactive), and both come back.
    let all = store.ladder_ratings("n", false).unwrap();
    assert!(all.iter().any(|r| r.entrant == "ann@v1" && !r.active));
    assert!(store.ladder_set_disabled("ann", false).unwrap());
    assert!(store.ladder_set_retired("n", "ben", false).unwrap());
    mm.sync(&mut store).unwrap();
    let mut back = on_board(&mut store);
    back.sort();
    assert_eq!(back, ["ann@v1", "ben@v1", "cat@v1"]);
}

/// Disabling an account or retiring a bot stops its queued and running matches at the next
/// sync: each is recorded failed with the reason (never rated), the worker playing one loses
/// its lease at its next heartbeat; the other matches go on, and a bot's new version does not
/// stop the matches its previous version was queued in.
#[test]
fn a_disabled_account_or_retired_bot_has_its_open_matches_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("l.sqlite")).unwrap();
    for name in ["ann", "ben", "cat", "dan"] {
        add_contestant(&mut store, name);
        add_active(&mut store, name);
    }
    let c = config(
        "name = \"n\"\ngame = \"geister\"\nbuiltins = [\"random\"]\nlanguages = [\"python\"]\n",
    );
    let mut mm = Matchmaker::new(c, 2, 5);
    mm.step(&mut store, 8, 8).unwrap();
    let open = store.ladder_open_specs("n").unwrap();
    assert!(open.len() >= 3, "{open:?}");
    let with = |spec: &str, who: &str| {
        let job: MatchJob = serde_json::from_str(spec).unwrap();
        job.entrants
            .iter()
            .any(|e| e.starts_with(&format!("{who}@")))
    };
    // A worker is playing the first match with ann or ben in it.
    let lease = Duration::from_secs(600);
    let mut running = None;
    while let Some(claim) = store.claim("w1", lease, 3).unwrap() {
        if with(&claim.spec_json, "ann") || with(&claim.spec_json, "ben") {
            running = Some(claim);
            break;
        }
    }
    let running = running.expect("a match of ann or ben");
    assert!(store.heartbeat(&running, lease).unwrap());
    // dan uploads a new version: his old version's matches go on.
    add_active(&mut store, "dan");
    assert!(store.ladder_set_disabled("ann", true).unwrap());
    assert!(store.ladder_set_retired("n", "ben", true).unwrap());
    mm.sync(&mut store).unwrap();
    assert!(
        !store.heartbeat(&running, lease).unwrap(),
        "the running match is no longer the worker's"
    );
    let failures = store.failures(&ladder_contest("n")).unwrap();
    let stopped: Vec<_> = failures
        .iter()
        .filter(|f| f.error.starts_with("stopped unplayed: "))
        .collect();
    let expected = open
        .iter()
        .filter(|(_, s)| with(s, "ann") || with(s, "ben"))
        .count();
    assert!(expected >= 1);
    assert_eq!(stopped.len(), expected, "{failures:?}");
    assert!(
        stopped[0]
            .error
            .contains("no longer played (its bot retired, or its account disabled"),
        "{}",
        stopped[0].error
    );
    for (index, spec) in store.ladder_open_specs("n").unwrap() {
        assert!(!with(&spec, "ann") && !with(&spec, "ben"), "match {index}");
    }
    let dan_v1 = open.iter().filter(|(_, s)| with(s, "dan")).count();
    let dan_v1_open = store
        .ladder_open_specs("n")
        .unwrap()
        .iter()
        .filter(|(_, s)| with(s, "dan"))
        .count();
    assert!(dan_v1 >= 1);
    assert_eq!(dan_v1_open, dan_v1, "dan's matches are not stopped");
}

/// Store a result of the ladder `n` for match `index` with `entrants` in seat order and `report`,
/// as a worker would.
fn put_report(
    store: &mut dyn Store,
    index: u64,
    entrants: &[&str],
    report: &kakehiki_core::MatchReport,
) {
    let entrants: Vec<String> = entrants.iter().map(|e| e.to_string()).collect();
    assert!(store
        .put_result(&NewResult {
            contest: &ladder_contest("n"),
            index,
            entrants: &entrants,
            report_json: &serde_json::to_string(report).unwrap(),
            replay: "",
            duration_ms: 1,
            worker: "test",
        })
        .unwrap());
}

/// A Werewolf-like report: seat `i` scores `scores[i]`, and is on side `teams[i]` when given.
fn werewolf_report(scores: &[i64], teams: Option<&[&str]>) -> kakehiki_core::MatchReport {
    let outcome = kakehiki_core::Outcome {
        scores: scores
            .iter()
            .map(|&s| kakehiki_core::Score::from_integer(s))
            .collect(),
        winner: None,
    };
    let seats = scores
        .iter()
        .map(|_| ("builtin:sample".to_string(), Vec::new()))
        .collect();
    let mut report = kakehiki_core::MatchReport::new("werewolf", "aiwolf-0.6", 1, &outcome, seats);
    if let Some(teams) = teams {
        for (s, t) in report.seats.iter_mut().zip(teams) {
            s.extra.insert("team".into(), serde_json::json!(t));
        }
    }
    report
}

/// A built-in filling three seats of one match (here one on each side and one more in the
/// village) is one entrant: its rating moves once, every seat row of it records that one rating
/// after, the store's ratings and the matchmaker's own agree, and its games go up by one.
#[test]
fn an_entrant_in_three_seats_of_a_match_gets_one_update() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("l.sqlite")).unwrap();
    for name in ["alice", "bob"] {
        add_contestant(&mut store, name);
        add_active(&mut store, name);
    }
    let c = config(
        "name = \"n\"\ngame = \"werewolf\"\nbuiltins = [\"sample\"]\nlanguages = [\"python\"]\n",
    );
    let mut mm = Matchmaker::new(c, 5, 4);
    mm.sync(&mut store).unwrap();
    let sample = "builtin:sample";
    let entrants = ["alice@v1", sample, "bob@v1", sample, sample];
    for (index, teams) in [
        (0, None),
        (
            1,
            Some(&["VILLAGER", "VILLAGER", "WEREWOLF", "WEREWOLF", "VILLAGER"][..]),
        ),
    ] {
        let before = store
            .ladder_ratings("n", false)
            .unwrap()
            .into_iter()
            .find(|r| r.entrant == sample)
            .unwrap();
        put_report(
            &mut store,
            index,
            &entrants,
            &werewolf_report(&[1, 1, 0, 0, 1], teams),
        );
        assert_eq!(mm.rate(&mut store).unwrap(), (1, 0));
        let seats = store.ladder_match_seats("n", index).unwrap();
        let mine: Vec<_> = seats.iter().filter(|s| s.entrant == sample).collect();
        assert_eq!(mine.len(), 3);
        for s in &mine {
            assert_eq!(
                (s.mu_after, s.sigma_after),
                (mine[0].mu_after, mine[0].sigma_after),
                "match {index}: every seat row of {sample} records its one rating after: {seats:?}"
            );
        }
        let after = store
            .ladder_ratings("n", false)
            .unwrap()
            .into_iter()
            .find(|r| r.entrant == sample)
            .unwrap();
        assert_eq!(
            (after.mu, after.sigma),
            (mine[0].mu_after, mine[0].sigma_after)
        );
        assert_eq!(after.games, before.games + 1);
        assert!(after.sigma < before.sigma);
        // The matchmaker's own ratings are the store's.
        let cached = &mm.ratings()[sample];
        assert_eq!(
            (cached.mu, cached.sigma, cached.games),
            (after.mu, after.sigma, after.games)
        );
    }
}
