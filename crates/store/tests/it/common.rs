//! Behaviour every backend must have; run against SQLite and PostgreSQL.

use std::time::Duration;

use kakehiki_store::{
    ladder_contest, version_entrant, ContestRow, LadderEntrant, LadderSeat, LadderState, NewResult,
    QueuedMatch, Store, StoreError, INITIAL_MU, INITIAL_SIGMA, LADDER_FINGERPRINT,
};

pub fn contest(name: &str, fingerprint: &str) -> ContestRow {
    ContestRow {
        name: name.into(),
        fingerprint: fingerprint.into(),
        definition: "{}".into(),
    }
}

pub fn result<'a>(
    contest: &'a str,
    index: u64,
    entrants: &'a [String],
    replay: &'a str,
) -> NewResult<'a> {
    NewResult {
        contest,
        index,
        entrants,
        report_json: "{\"game\":\"x\"}",
        replay,
        duration_ms: 5,
        worker: "test",
    }
}

/// Contestant accounts `names`, each with a token and sign-up code hash of its own (the name,
/// padded: nothing else in a test uses them).
pub fn contestants(store: &mut dyn Store, names: &[&str]) {
    for name in names {
        store
            .create_ladder_user(&kakehiki_store::NewLadderUser {
                name: (*name).into(),
                role: kakehiki_store::LadderRole::Contestant,
                token_sha256: format!("{name:t>64}"),
                signup_code_sha256: format!("{name:s>64}"),
            })
            .unwrap();
    }
}

pub fn registers_contests_and_refuses_changed_definitions(store: &mut dyn Store) {
    assert!(store.register_contest(&contest("c1", "aaa")).unwrap());
    assert!(!store.register_contest(&contest("c1", "aaa")).unwrap());
    let err = store.register_contest(&contest("c1", "bbb")).unwrap_err();
    assert!(matches!(err, StoreError::DefinitionChanged { .. }), "{err}");
    assert!(err.to_string().contains("different definition"), "{err}");
    assert_eq!(store.contest("c1").unwrap().unwrap().fingerprint, "aaa");
    assert!(store.contest("nope").unwrap().is_none());
    assert!(store.contest_names().unwrap().contains(&"c1".to_string()));
}

pub fn stores_each_match_once_with_its_replay(store: &mut dyn Store) {
    store.register_contest(&contest("c2", "f")).unwrap();
    let names = vec!["a".to_string(), "b".to_string()];
    let replay = "{\"event\":\"header\"}\n{\"event\":\"move\",\"n\":1}\n".repeat(20);
    assert!(store.put_result(&result("c2", 3, &names, &replay)).unwrap());
    assert!(store.put_result(&result("c2", 1, &names, "x\n")).unwrap());
    // A late duplicate is ignored and changes nothing.
    assert!(!store
        .put_result(&result("c2", 3, &names, "other\n"))
        .unwrap());
    assert_eq!(
        store
            .stored_indices("c2")
            .unwrap()
            .into_iter()
            .collect::<Vec<_>>(),
        vec![1, 3]
    );
    let results = store.results("c2").unwrap();
    assert_eq!(
        results.iter().map(|r| r.index).collect::<Vec<_>>(),
        vec![1, 3]
    );
    assert_eq!(results[0].entrants, names);
    assert_eq!(store.result("c2", 3).unwrap().as_ref(), Some(&results[1]));
    assert_eq!(store.result("c2", 2).unwrap(), None);
    assert_eq!(store.result("nope", 1).unwrap(), None);
    assert_eq!(store.replay("c2", 3).unwrap().unwrap(), replay);
    assert!(store.replay("c2", 2).unwrap().is_none());
}

pub fn failures_are_recorded_then_cleared_by_a_result(store: &mut dyn Store) {
    store.register_contest(&contest("c3", "f")).unwrap();
    store
        .record_failure("c3", 4, "{}", "cannot start bot")
        .unwrap();
    store
        .record_failure("c3", 4, "{}", "cannot start bot again")
        .unwrap();
    let f = store.failures("c3").unwrap();
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].index, f[0].attempts, f[0].error.as_str()),
        (4, 2, "cannot start bot again")
    );
    let names = vec!["a".to_string()];
    store.put_result(&result("c3", 4, &names, "r\n")).unwrap();
    assert!(store.failures("c3").unwrap().is_empty());
    // Recording a failure of a stored match changes nothing.
    store.record_failure("c3", 4, "{}", "late").unwrap();
    assert!(store.failures("c3").unwrap().is_empty());
}

/// Claims, leases, expiry, attempt caps, duplicates. The store must hold no other queued
/// matches (a fresh database or schema).
pub fn queue_claims_leases_and_caps(store: &mut dyn Store) {
    store.register_contest(&contest("q", "f")).unwrap();
    let matches: Vec<QueuedMatch> = (0..3)
        .map(|i| QueuedMatch {
            index: i,
            spec_json: format!("{{\"i\":{i}}}"),
        })
        .collect();
    assert_eq!(store.enqueue("q", &matches).unwrap(), 3);
    assert_eq!(
        store.enqueue("q", &matches).unwrap(),
        0,
        "queueing again adds nothing"
    );
    let lease = Duration::from_secs(60);
    let a = store.claim("w1", lease, 2).unwrap().unwrap();
    let b = store.claim("w2", lease, 2).unwrap().unwrap();
    assert_eq!((a.index, a.attempt, b.index), (0, 1, 1));
    assert!(store.heartbeat(&a, lease).unwrap());
    let counts = store.queue_counts("q").unwrap();
    assert_eq!((counts.queued, counts.running), (1, 2));
    assert_eq!(store.open_matches().unwrap(), 3);

    // a finishes; b fails and goes back to the queue.
    let names = vec!["x".to_string()];
    assert!(store.put_result(&result("q", 0, &names, "r\n")).unwrap());
    assert!(
        !store.heartbeat(&a, lease).unwrap(),
        "a finished claim has no lease"
    );
    store.release_failed(&b, "boom", 2).unwrap();
    let c = store.claim("w1", lease, 2).unwrap().unwrap();
    assert_eq!((c.index, c.attempt), (1, 2));
    // Its second attempt expires (lease 0): the cap of 2 attempts makes it failed.
    store.heartbeat(&c, Duration::ZERO).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let d = store.claim("w2", lease, 2).unwrap().unwrap();
    assert_eq!(d.index, 2);
    let counts = store.queue_counts("q").unwrap();
    assert_eq!(
        (counts.done, counts.failed, counts.running, counts.queued),
        (1, 1, 1, 0)
    );
    assert!(store.failures("q").unwrap()[0].error.contains("boom"));

    // d's lease expires on its first attempt: another worker takes it over; the late result
    // of the first worker is then ignored.
    store.heartbeat(&d, Duration::ZERO).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let e = store.claim("w3", lease, 2).unwrap().unwrap();
    assert_eq!((e.index, e.attempt), (2, 2));
    assert!(
        !store.heartbeat(&d, lease).unwrap(),
        "the expired claim is lost"
    );
    assert!(store
        .put_result(&result("q", 2, &names, "from w3\n"))
        .unwrap());
    assert!(!store
        .put_result(&result("q", 2, &names, "late from w2\n"))
        .unwrap());
    assert_eq!(store.replay("q", 2).unwrap().unwrap(), "from w3\n");
    assert!(store.claim("w1", lease, 2).unwrap().is_none());
    assert_eq!(store.open_matches().unwrap(), 0);

    // Queueing again requeues the failed match with fresh attempts, nothing else.
    assert_eq!(store.enqueue("q", &matches).unwrap(), 1);
    let f = store.claim("w1", lease, 2).unwrap().unwrap();
    assert_eq!((f.index, f.attempt), (1, 1));
}

pub fn a_host_fault_gives_the_match_back_without_an_attempt(store: &mut dyn Store) {
    store.register_contest(&contest("hf", "f")).unwrap();
    let m = QueuedMatch {
        index: 0,
        spec_json: "{}".into(),
    };
    store.enqueue("hf", &[m]).unwrap();
    let lease = Duration::from_secs(60);
    let claim = loop {
        let c = store.claim("w", lease, 1).unwrap().expect("a queued match");
        if c.contest == "hf" {
            break c;
        }
    };
    assert_eq!(claim.attempt, 1);
    store
        .release_host_fault(&claim, "host fault: no space")
        .unwrap();
    assert_eq!(store.queue_counts("hf").unwrap().queued, 1);
    // With one attempt allowed, the match can still be claimed: the host fault did not count.
    let again = loop {
        let c = store.claim("w2", lease, 1).unwrap().expect("queued again");
        if c.contest == "hf" {
            break c;
        }
    };
    assert_eq!((again.index, again.attempt), (0, 1));
}

pub fn program_files_keep_their_first_hash(store: &mut dyn Store) {
    use kakehiki_store::ProgramFile;
    store.register_contest(&contest("pf", "f")).unwrap();
    let file = |entrant: &str, path: &str, sha: &str| ProgramFile {
        entrant: entrant.into(),
        path: path.into(),
        sha256: sha.into(),
    };
    assert!(store.program_files("pf").unwrap().is_empty());
    store
        .record_program_files(
            "pf",
            &[file("b", "/x/b.py", "22"), file("a", "/x/a.py", "11")],
        )
        .unwrap();
    store
        .record_program_files(
            "pf",
            &[file("a", "/x/a.py", "99"), file("a", "/x/lib.py", "33")],
        )
        .unwrap();
    assert_eq!(
        store.program_files("pf").unwrap(),
        vec![
            file("a", "/x/a.py", "11"),
            file("a", "/x/lib.py", "33"),
            file("b", "/x/b.py", "22")
        ]
    );
}

/// Results are numbered in the order they are stored; a reader holding the first `n` gets
/// exactly the rest, and the count is the last number.
pub fn results_are_numbered_in_storing_order(store: &mut dyn Store) {
    store.register_contest(&contest("seq", "f")).unwrap();
    store.register_contest(&contest("other", "f")).unwrap();
    let names = vec!["a".to_string(), "b".to_string()];
    assert_eq!(store.result_count("seq").unwrap(), 0);
    assert!(store.results_since("seq", 0).unwrap().is_empty());
    for i in [5, 2, 9] {
        assert!(store.put_result(&result("seq", i, &names, "r\n")).unwrap());
    }
    assert!(store
        .put_result(&result("other", 1, &names, "r\n"))
        .unwrap());
    // A late duplicate neither counts nor gets a number.
    assert!(!store.put_result(&result("seq", 2, &names, "r\n")).unwrap());
    assert_eq!(store.result_count("seq").unwrap(), 3);
    assert_eq!(store.result_count("other").unwrap(), 1);
    assert_eq!(store.result_count("nope").unwrap(), 0);
    let got = |store: &mut dyn Store, after| {
        store
            .results_since("seq", after)
            .unwrap()
            .into_iter()
            .map(|(seq, r)| (seq, r.index))
            .collect::<Vec<_>>()
    };
    assert_eq!(got(store, 0), vec![(1, 5), (2, 2), (3, 9)]);
    assert_eq!(got(store, 2), vec![(3, 9)]);
    assert!(got(store, 3).is_empty());
    let (_, first) = &store.results_since("seq", 0).unwrap()[0];
    assert_eq!(first.entrants, names);
}

/// A range of match indices is read in one query: only the results stored in it, by index,
/// of that contest only.
pub fn results_range_reads_only_its_indices(store: &mut dyn Store) {
    store.register_contest(&contest("range", "f")).unwrap();
    store.register_contest(&contest("range2", "f")).unwrap();
    let names = vec!["a".to_string(), "b".to_string()];
    for i in [7, 3, 4, 10, 1] {
        assert!(store
            .put_result(&result("range", i, &names, "r\n"))
            .unwrap());
    }
    assert!(store
        .put_result(&result("range2", 5, &names, "r\n"))
        .unwrap());
    let got = |store: &mut dyn Store, a, b| {
        store
            .results_range("range", a, b)
            .unwrap()
            .into_iter()
            .map(|r| r.index)
            .collect::<Vec<_>>()
    };
    assert_eq!(got(store, 3, 7), vec![3, 4, 7]);
    assert_eq!(got(store, 0, 100), vec![1, 3, 4, 7, 10]);
    assert_eq!(got(store, 10, 10), vec![10]);
    assert!(got(store, 5, 6).is_empty());
    assert!(got(store, 8, 2).is_empty());
    let r = &store.results_range("range", 4, 4).unwrap()[0];
    assert_eq!(r.entrants, names);
    assert_eq!(r.report_json, "{\"game\":\"x\"}");
}

/// Ladder accounts: created once, found by token hash, signed up once with the one-time code;
/// bot versions numbered per bot, owned by their first uploader, with status and log.
pub fn ladder_accounts_and_bot_versions(store: &mut dyn Store) {
    use kakehiki_store::{LadderRole, NewBotVersion, NewLadderUser, VersionStatus};
    let alice = NewLadderUser {
        name: "alice".into(),
        role: LadderRole::Contestant,
        token_sha256: "a".repeat(64),
        signup_code_sha256: "c".repeat(64),
    };
    store.create_ladder_user(&alice).unwrap();
    match store.create_ladder_user(&NewLadderUser {
        token_sha256: "b".repeat(64),
        signup_code_sha256: "d".repeat(64),
        ..alice.clone()
    }) {
        Err(StoreError::UserExists(name)) => assert_eq!(name, "alice"),
        other => panic!("{other:?}"),
    }
    store
        .create_ladder_user(&NewLadderUser {
            name: "olga".into(),
            role: LadderRole::Organiser,
            token_sha256: "e".repeat(64),
            signup_code_sha256: "f".repeat(64),
        })
        .unwrap();
    let a = store
        .ladder_user_by_token(&"a".repeat(64))
        .unwrap()
        .unwrap();
    assert_eq!(a.name, "alice");
    assert_eq!(a.role, LadderRole::Contestant);
    assert!(a.signup_pending);
    assert_eq!(a.password_hash, None);
    assert!(store
        .ladder_user_by_token(&"b".repeat(64))
        .unwrap()
        .is_none());
    let o = store.ladder_user("olga").unwrap().unwrap();
    assert_eq!(o.role, LadderRole::Organiser);
    assert!(store.ladder_user("nobody").unwrap().is_none());
    // The one-time code is known until it is used, then works once.
    assert_eq!(
        store
            .ladder_signup_name(&"c".repeat(64))
            .unwrap()
            .as_deref(),
        Some("alice")
    );
    assert_eq!(store.ladder_signup_name(&"9".repeat(64)).unwrap(), None);
    assert_eq!(
        store
            .ladder_sign_up(&"c".repeat(64), "$argon2id$x")
            .unwrap(),
        Some("alice".to_string())
    );
    assert_eq!(
        store
            .ladder_sign_up(&"c".repeat(64), "$argon2id$y")
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .ladder_sign_up(&"9".repeat(64), "$argon2id$y")
            .unwrap(),
        None
    );
    assert_eq!(store.ladder_signup_name(&"c".repeat(64)).unwrap(), None);
    // A new API token: the old one is dead at once, the new one names the account.
    assert!(store.ladder_set_token("alice", &"d".repeat(64)).unwrap());
    assert!(!store.ladder_set_token("nobody", &"e".repeat(64)).unwrap());
    assert!(store
        .ladder_user_by_token(&"a".repeat(64))
        .unwrap()
        .is_none());
    assert_eq!(
        store
            .ladder_user_by_token(&"d".repeat(64))
            .unwrap()
            .map(|u| u.name)
            .as_deref(),
        Some("alice")
    );
    let a = store.ladder_user("alice").unwrap().unwrap();
    assert!(!a.signup_pending);
    assert_eq!(a.password_hash.as_deref(), Some("$argon2id$x"));

    let upload = |owner: &str, bot: &str| NewBotVersion {
        ladder: "g".into(),
        bot: bot.into(),
        owner: owner.into(),
        language: "python".into(),
        source_sha256: "5".repeat(64),
    };
    assert_eq!(store.add_bot_version(&upload("alice", "ab")).unwrap(), 1);
    assert_eq!(store.add_bot_version(&upload("alice", "ab")).unwrap(), 2);
    assert_eq!(store.add_bot_version(&upload("olga", "ob")).unwrap(), 1);
    match store.add_bot_version(&upload("olga", "ab")) {
        Err(StoreError::BotOwnedByOther { bot, .. }) => assert_eq!(bot, "ab"),
        other => panic!("{other:?}"),
    }
    store
        .set_bot_version_status("g", "ab", 1, VersionStatus::BuildFailed, "error: x")
        .unwrap();
    store
        .set_bot_version_status("g", "ab", 2, VersionStatus::Active, "built")
        .unwrap();
    assert!(matches!(
        store.set_bot_version_status("g", "ab", 3, VersionStatus::Active, ""),
        Err(StoreError::NoSuchVersion { version: 3, .. })
    ));
    let v = store.bot_versions("g", "ab").unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!((v[0].version, v[0].status), (1, VersionStatus::BuildFailed));
    assert_eq!(v[0].log, "error: x");
    assert_eq!((v[1].version, v[1].status), (2, VersionStatus::Active));
    assert_eq!(v[1].owner, "alice");
    assert_eq!(v[1].language, "python");
    let o = store.bot_versions("g", "ob").unwrap();
    assert_eq!(o[0].status, VersionStatus::Building);
    assert!(store.bot_versions("other", "ab").unwrap().is_empty());
    // The newest active version of each bot: ab's 2 (ob has none active); a third version of
    // ab that fails leaves 2 the active one.
    assert_eq!(store.add_bot_version(&upload("alice", "ab")).unwrap(), 3);
    store
        .set_bot_version_status("g", "ab", 3, VersionStatus::CheckFailed, "FAIL")
        .unwrap();
    let active: Vec<(String, u64)> = store
        .active_bot_versions("g")
        .unwrap()
        .into_iter()
        .map(|v| (v.bot, v.version))
        .collect();
    assert_eq!(active, vec![("ab".to_string(), 2)]);
    // What a restarted server builds again: the versions still building (ob's 1 only).
    let building: Vec<(String, u64)> = store
        .bot_versions_in("g", VersionStatus::Building)
        .unwrap()
        .into_iter()
        .map(|v| (v.bot, v.version))
        .collect();
    assert_eq!(building, vec![("ob".to_string(), 1)]);
    let failed = store
        .bot_versions_in("g", VersionStatus::CheckFailed)
        .unwrap();
    assert_eq!((failed.len(), failed[0].log.as_str()), (1, "FAIL"));
    assert!(store
        .bot_versions_in("other", VersionStatus::Building)
        .unwrap()
        .is_empty());
    store
        .set_bot_version_status("g", "ob", 1, VersionStatus::Active, "")
        .unwrap();
    assert_eq!(store.active_bot_versions("g").unwrap().len(), 2);
    assert!(store.active_bot_versions("other").unwrap().is_empty());
}

fn seat(index: u64, seat: usize, entrant: &str, bot: &str, place: u64, mu: f64) -> LadderSeat {
    LadderSeat {
        index,
        seat,
        entrant: entrant.into(),
        bot: bot.into(),
        version: 1,
        score: if place == 1 { 1.0 } else { 0.0 },
        place,
        errors: u64::from(place != 1),
        mu_after: mu,
        sigma_after: 7.0,
        played_at: 1_700_000_000 + index as i64,
    }
}

pub fn ladder_play_queues_rates_and_lists(store: &mut dyn Store) {
    // The contest row the ladder's matches live under.
    store
        .register_contest(&ContestRow {
            name: ladder_contest("g"),
            fingerprint: LADDER_FINGERPRINT.into(),
            definition: "{\"ladder\":\"g\"}".into(),
        })
        .unwrap();
    assert_eq!(store.ladder_state("g").unwrap(), LadderState::default());
    // A ladder's row is not a contest.
    assert!(!store
        .contest_names()
        .unwrap()
        .contains(&ladder_contest("g")));
    let entrant = |bot: &str, version: u64| LadderEntrant {
        entrant: if version == 0 {
            bot.to_string()
        } else {
            version_entrant(bot, version)
        },
        bot: bot.into(),
        version,
        owner: if version == 0 { "builtin" } else { bot }.into(),
    };
    store.ladder_enter("g", &entrant("alice", 1)).unwrap();
    store
        .ladder_enter("g", &entrant("builtin:random", 0))
        .unwrap();
    let r = store.ladder_ratings("g", true).unwrap();
    assert_eq!(r.len(), 2);
    assert!(r
        .iter()
        .all(|r| r.mu == INITIAL_MU && r.sigma == INITIAL_SIGMA && r.games == 0 && r.active));
    // Ties in rating: by entrant name.
    assert_eq!(r[0].entrant, "alice@v1");

    // Queueing moves the next index; a stale index queues nothing.
    assert!(store.ladder_queue("g", 0, "{\"m\":0}").unwrap());
    assert!(!store.ladder_queue("g", 0, "{\"m\":0}").unwrap());
    assert!(store.ladder_queue("g", 1, "{\"m\":1}").unwrap());
    assert_eq!(store.ladder_state("g").unwrap().next_match, 2);
    assert_eq!(store.queue_counts(&ladder_contest("g")).unwrap().queued, 2);
    assert_eq!(store.ladder_open_matches("g").unwrap(), 2);
    assert_eq!(store.ladder_open_matches("h").unwrap(), 0);
    assert!(store.ladder_running("g").unwrap().is_empty());
    let claim = store
        .claim("w1", Duration::from_secs(60), 3)
        .unwrap()
        .unwrap();
    assert_eq!(claim.contest, ladder_contest("g"));
    assert_eq!(store.ladder_running("g").unwrap(), [(0, "w1".to_string())]);
    assert_eq!(store.ladder_open_matches("g").unwrap(), 2);
    assert_eq!(
        store.ladder_open_specs("g").unwrap(),
        [(0, "{\"m\":0}".to_string()), (1, "{\"m\":1}".to_string())]
    );
    assert!(store.ladder_open_specs("h").unwrap().is_empty());
    // Stopping: a queued match and a running one become failed with the reason; the running
    // one's worker loses its lease; a match not open is not stopped again.
    assert!(store.ladder_cancel("g", 1, "stopped: queued").unwrap());
    assert!(!store.ladder_cancel("g", 1, "again").unwrap());
    assert!(store.heartbeat(&claim, Duration::from_secs(60)).unwrap());
    assert!(store.ladder_cancel("g", 0, "stopped: running").unwrap());
    assert!(!store.heartbeat(&claim, Duration::from_secs(60)).unwrap());
    assert!(!store.ladder_cancel("h", 0, "no such ladder").unwrap());
    assert_eq!(store.ladder_open_matches("g").unwrap(), 0);
    let failed: Vec<(u64, String)> = store
        .failures(&ladder_contest("g"))
        .unwrap()
        .into_iter()
        .map(|f| (f.index, f.error))
        .collect();
    assert_eq!(
        failed,
        [
            (0, "stopped: running".to_string()),
            (1, "stopped: queued".to_string())
        ]
    );

    // Rating: only the next sequence number is applied, once.
    let seats = vec![
        seat(0, 0, "builtin:random", "builtin:random", 2, 20.0),
        seat(0, 1, "alice@v1", "alice", 1, 30.0),
    ];
    assert!(!store.ladder_rate("g", 2, &seats).unwrap());
    assert!(store.ladder_rate("g", 1, &seats).unwrap());
    assert!(!store.ladder_rate("g", 1, &seats).unwrap());
    assert_eq!(store.ladder_state("g").unwrap().rated_seq, 1);
    let r = store.ladder_ratings("g", true).unwrap();
    assert_eq!(r[0].entrant, "alice@v1");
    assert_eq!(
        (r[0].mu, r[0].games, r[0].wins, r[0].errors),
        (30.0, 1, 1, 0)
    );
    assert_eq!(
        (r[1].mu, r[1].games, r[1].wins, r[1].errors),
        (20.0, 1, 0, 1)
    );
    assert_eq!(r[0].last_played, Some(1_700_000_000));
    assert!(store.ladder_skip_rating("g", 2).unwrap());
    assert!(!store.ladder_skip_rating("g", 2).unwrap());

    // A new version replaces the old one on the leaderboard; the old one's history stays.
    store.ladder_enter("g", &entrant("alice", 2)).unwrap();
    let active = store.ladder_ratings("g", true).unwrap();
    assert_eq!(
        active
            .iter()
            .map(|r| r.entrant.as_str())
            .collect::<Vec<_>>(),
        ["alice@v2", "builtin:random"]
    );
    let all = store.ladder_ratings("g", false).unwrap();
    assert_eq!(all.len(), 3);
    // A page of the leaderboard: the active entrants' rows from an offset, and their count.
    let (page, total) = store.ladder_ratings_page("g", 1, 10).unwrap();
    assert_eq!(total, 2);
    assert_eq!(page, active[1..]);
    let (page, _) = store.ladder_ratings_page("g", 0, 1).unwrap();
    assert_eq!(page, active[..1]);
    assert_eq!(
        store.ladder_ratings_page("g", 5, u64::MAX).unwrap(),
        (Vec::new(), 2)
    );
    assert!(!all.iter().find(|r| r.entrant == "alice@v1").unwrap().active);
    let seats3 = vec![
        seat(1, 0, "alice@v2", "alice", 2, 24.0),
        seat(1, 1, "builtin:random", "builtin:random", 1, 21.0),
    ];
    assert!(store.ladder_rate("g", 3, &seats3).unwrap());
    store.ladder_retire("g", "builtin:random").unwrap();
    assert_eq!(store.ladder_ratings("g", true).unwrap().len(), 1);

    // A bot's seats over its versions, newest first, paged by index.
    let mine = store.ladder_bot_seats("g", "alice", None, 10).unwrap();
    assert_eq!(
        mine.iter()
            .map(|s| (s.index, s.version))
            .collect::<Vec<_>>(),
        [(1, 1), (0, 1)]
    );
    assert_eq!(mine[1].mu_after, 30.0);
    let older = store.ladder_bot_seats("g", "alice", Some(1), 10).unwrap();
    assert_eq!(older.len(), 1);
    assert_eq!(older[0].index, 0);
    assert_eq!(
        store.ladder_bot_seats("g", "alice", None, 1).unwrap().len(),
        1
    );
    assert!(store
        .ladder_bot_seats("g", "bob", None, 10)
        .unwrap()
        .is_empty());
    // A bot's tables: every seat of its matches, newest first.
    let tables = store.ladder_bot_tables("g", "alice", None, 10).unwrap();
    assert_eq!(
        tables.iter().map(|s| (s.index, s.seat)).collect::<Vec<_>>(),
        [(1, 0), (1, 1), (0, 0), (0, 1)]
    );
    assert_eq!(
        store
            .ladder_bot_tables("g", "alice", Some(1), 10)
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        store
            .ladder_bot_tables("g", "alice", None, 1)
            .unwrap()
            .len(),
        2
    );
    // Every version of the bot, newest first, active or not; a built-in is its own.
    let versions = store.ladder_bot_ratings("g", "alice").unwrap();
    assert_eq!(
        versions
            .iter()
            .map(|r| (r.entrant.as_str(), r.active))
            .collect::<Vec<_>>(),
        [("alice@v2", true), ("alice@v1", false)]
    );
    assert_eq!(versions[1].games, 1);
    assert_eq!(
        store
            .ladder_bot_ratings("g", "builtin:random")
            .unwrap()
            .len(),
        1
    );
    assert!(store.ladder_bot_ratings("g", "nobody").unwrap().is_empty());
    assert!(store.ladder_bot_ratings("h", "alice").unwrap().is_empty());
    // Its rating and rank (random is retired above: alice is alone and first).
    let (rank, r) = store.ladder_bot_rating("g", "alice").unwrap().unwrap();
    assert_eq!((rank, r.entrant.as_str()), (1, "alice@v2"));
    assert!(store
        .ladder_bot_rating("g", "builtin:random")
        .unwrap()
        .is_none());
    let m = store.ladder_match_seats("g", 0).unwrap();
    assert_eq!(m, seats);
    assert!(store.ladder_match_seats("g", 9).unwrap().is_empty());
    // The seats of the matches rated in a range of result numbers (results stored in the order
    // 1 then 0: numbers 1 and 2).
    let contest = ladder_contest("g");
    let names = vec!["a".to_string(), "b".to_string()];
    for index in [1, 0] {
        assert!(store
            .put_result(&result(&contest, index, &names, "r\n"))
            .unwrap());
    }
    let rated = |store: &mut dyn Store, after, upto| -> Vec<(u64, usize)> {
        store
            .ladder_seats_rated("g", after, upto)
            .unwrap()
            .iter()
            .map(|s| (s.index, s.seat))
            .collect()
    };
    assert_eq!(rated(store, 0, 1), [(1, 0), (1, 1)]);
    assert_eq!(rated(store, 1, 2), [(0, 0), (0, 1)]);
    assert_eq!(rated(store, 0, 2), [(0, 0), (0, 1), (1, 0), (1, 1)]);
    assert!(rated(store, 2, 9).is_empty());
    assert!(store.ladder_seats_rated("h", 0, 9).unwrap().is_empty());
    store.ladder_set_frozen("g", true).unwrap();
    assert!(store.ladder_state("g").unwrap().frozen);
    store.ladder_set_frozen("g", false).unwrap();
    assert!(!store.ladder_state("g").unwrap().frozen);
    // Another ladder's state is its own.
    assert_eq!(store.ladder_state("h").unwrap(), LadderState::default());
}

/// Web sessions: found by the cookie's hash with their account and CSRF token until they expire,
/// gone once deleted; an unknown account has none; the accounts listed by name.
pub fn ladder_sessions_and_the_account_list(store: &mut dyn Store) {
    use kakehiki_store::{LadderRole, NewLadderUser};
    assert!(store.ladder_users().unwrap().is_empty());
    for (name, role, t) in [
        ("zoe", LadderRole::Contestant, "1"),
        ("olga", LadderRole::Organiser, "2"),
        ("alice", LadderRole::Contestant, "3"),
    ] {
        store
            .create_ladder_user(&NewLadderUser {
                name: name.into(),
                role,
                token_sha256: t.repeat(64),
                signup_code_sha256: t.repeat(32),
            })
            .unwrap();
    }
    store
        .ladder_sign_up(&"2".repeat(32), "$argon2id$o")
        .unwrap();
    let users = store.ladder_users().unwrap();
    let names: Vec<&str> = users.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["alice", "olga", "zoe"]);
    assert_eq!(users[1].role, LadderRole::Organiser);
    assert!(!users[1].signup_pending);
    assert!(users[0].signup_pending);

    let now = 1_000_000_000_000;
    store
        .create_ladder_session(&"s".repeat(64), "alice", "csrf-a", now + 100)
        .unwrap();
    store
        .create_ladder_session(&"t".repeat(64), "olga", "csrf-o", now + 100)
        .unwrap();
    let s = store
        .ladder_session(&"s".repeat(64), now)
        .unwrap()
        .expect("a live session");
    assert_eq!(s.user.name, "alice");
    assert_eq!(s.user.role, LadderRole::Contestant);
    assert_eq!(s.csrf_token, "csrf-a");
    assert_eq!(s.expires_at, now + 100);
    let o = store.ladder_session(&"t".repeat(64), now).unwrap().unwrap();
    assert_eq!(
        (o.user.name.as_str(), o.user.role),
        ("olga", LadderRole::Organiser)
    );
    // Expired at its expiry time; unknown hashes find nothing.
    assert!(store
        .ladder_session(&"s".repeat(64), now + 100)
        .unwrap()
        .is_none());
    assert!(store
        .ladder_session(&"u".repeat(64), now)
        .unwrap()
        .is_none());
    // Logging out ends one session only; deleting it again is no error.
    store.delete_ladder_session(&"s".repeat(64)).unwrap();
    store.delete_ladder_session(&"s".repeat(64)).unwrap();
    assert!(store
        .ladder_session(&"s".repeat(64), now)
        .unwrap()
        .is_none());
    assert!(store
        .ladder_session(&"t".repeat(64), now)
        .unwrap()
        .is_some());
    match store.create_ladder_session(&"v".repeat(64), "nobody", "c", now + 100) {
        Err(StoreError::NoSuchUser(name)) => assert_eq!(name, "nobody"),
        other => panic!("{other:?}"),
    }
    // Starting a session deletes the ones already expired (by the clock: these expired in 1970).
    store
        .create_ladder_session(&"w".repeat(64), "zoe", "c", 5)
        .unwrap();
    store
        .create_ladder_session(&"x".repeat(64), "zoe", "c", now + 100)
        .unwrap();
    assert!(store.ladder_session(&"w".repeat(64), 0).unwrap().is_none());
    assert!(store.ladder_session(&"x".repeat(64), 0).unwrap().is_some());

    // A password change ends every other session of the account.
    for id in ["a", "b"] {
        store
            .create_ladder_session(&id.repeat(64), "olga", "c", now + 100)
            .unwrap();
    }
    store
        .ladder_set_password("olga", "$argon2id$new", &"a".repeat(64))
        .unwrap();
    let olga = store.ladder_user("olga").unwrap().unwrap();
    assert_eq!(olga.password_hash.as_deref(), Some("$argon2id$new"));
    assert!(store
        .ladder_session(&"a".repeat(64), now)
        .unwrap()
        .is_some());
    for id in ["b", "t"] {
        assert!(store.ladder_session(&id.repeat(64), now).unwrap().is_none());
    }
    // Invited again: a new token and sign-up code, no password, no session; the old token and
    // the old code are dead.
    assert!(store
        .ladder_reinvite("olga", &"9".repeat(64), &"8".repeat(32))
        .unwrap());
    assert!(!store
        .ladder_reinvite("nobody", &"7".repeat(64), &"6".repeat(32))
        .unwrap());
    let olga = store.ladder_user("olga").unwrap().unwrap();
    assert!(olga.signup_pending && olga.password_hash.is_none());
    assert!(store
        .ladder_session(&"a".repeat(64), now)
        .unwrap()
        .is_none());
    assert!(store
        .ladder_user_by_token(&"2".repeat(64))
        .unwrap()
        .is_none());
    assert_eq!(
        store
            .ladder_user_by_token(&"9".repeat(64))
            .unwrap()
            .map(|u| u.name),
        Some("olga".to_string())
    );
    assert_eq!(
        store
            .ladder_sign_up(&"8".repeat(32), "$argon2id$3")
            .unwrap(),
        Some("olga".to_string())
    );
}

pub fn ladder_builds_are_claimed_once_taken_over_and_stored_with_their_program(
    store: &mut dyn Store,
) {
    use kakehiki_store::{
        abandoned_log, LadderRole, NewBotVersion, NewLadderUser, Program, VersionStatus,
    };
    store
        .create_ladder_user(&NewLadderUser {
            name: "bob".into(),
            role: LadderRole::Contestant,
            token_sha256: "1".repeat(64),
            signup_code_sha256: "2".repeat(64),
        })
        .unwrap();
    let add = |store: &mut dyn Store| {
        store
            .add_bot_version(&NewBotVersion {
                ladder: "g".into(),
                bot: "bob".into(),
                owner: "bob".into(),
                language: "python".into(),
                source_sha256: "0".repeat(64),
            })
            .unwrap()
    };
    // The ladder file is kept, and replaced.
    assert_eq!(store.ladder_file("g").unwrap(), None);
    store.ladder_set_file("g", "name = \"g\"").unwrap();
    store.ladder_set_file("g", "name = \"g\"\n# 2").unwrap();
    assert_eq!(
        store.ladder_file("g").unwrap().as_deref(),
        Some("name = \"g\"\n# 2")
    );

    // A version without its upload is listed, and not claimed.
    let v1 = add(store);
    assert_eq!(store.bot_owner("g", "bob").unwrap().as_deref(), Some("bob"));
    assert_eq!(store.bot_owner("g", "nobody").unwrap(), None);
    assert_eq!(store.bot_owner("h", "bob").unwrap(), None);
    assert_eq!(
        store.ladder_builds_without_upload("g").unwrap(),
        [("bob".to_string(), v1)]
    );
    let lease = Duration::from_secs(600);
    assert!(store.ladder_claim_build("w1", lease, 3).unwrap().is_none());
    store
        .ladder_put_upload("g", "bob", v1, b"print(1)")
        .unwrap();
    assert!(store.ladder_builds_without_upload("g").unwrap().is_empty());
    assert_eq!(
        store.ladder_upload("g", "bob", v1).unwrap().as_deref(),
        Some(&b"print(1)"[..])
    );
    assert_eq!(store.ladder_upload("g", "bob", v1 + 9).unwrap(), None);

    // Claimed once: a second claimant finds nothing while the lease holds.
    let c = store.ladder_claim_build("w1", lease, 3).unwrap().unwrap();
    assert_eq!(
        (
            c.ladder.as_str(),
            c.bot.as_str(),
            c.version,
            c.language.as_str()
        ),
        ("g", "bob", v1, "python")
    );
    assert_eq!((c.upload.as_slice(), c.attempt), (&b"print(1)"[..], 1));
    assert!(store.ladder_claim_build("w2", lease, 3).unwrap().is_none());
    assert!(store.ladder_extend_build(&c, lease).unwrap());

    // A lease that ran out (a killed worker) is taken over; the first holder can neither extend
    // nor store its outcome any more.
    // (The first holder's lease is made to run out now.)
    assert!(store.ladder_extend_build(&c, Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(1100));
    let c2 = store.ladder_claim_build("w2", lease, 3).unwrap().unwrap();
    assert_eq!((c2.version, c2.attempt, c2.worker.as_str()), (v1, 2, "w2"));
    assert!(!store.ladder_extend_build(&c, lease).unwrap());
    let program = Program {
        sha256: "ab".repeat(32),
        archive: vec![1, 2, 3],
    };
    assert!(!store
        .ladder_finish_build(&c, VersionStatus::Active, "late", Some(&program))
        .unwrap());
    assert_eq!(store.ladder_program_sha256("g", "bob", v1).unwrap(), None);
    // The holder stores outcome and program together, once.
    assert!(store
        .ladder_finish_build(&c2, VersionStatus::Active, "built", Some(&program))
        .unwrap());
    assert!(!store
        .ladder_finish_build(&c2, VersionStatus::BuildFailed, "again", None)
        .unwrap());
    let v = store.bot_versions("g", "bob").unwrap();
    assert_eq!(
        (v[0].status, v[0].log.as_str()),
        (VersionStatus::Active, "built")
    );
    assert_eq!(
        store.ladder_program_sha256("g", "bob", v1).unwrap(),
        Some("ab".repeat(32))
    );
    assert_eq!(store.ladder_program("g", "bob", v1).unwrap(), Some(program));
    assert!(store.ladder_claim_build("w3", lease, 3).unwrap().is_none());

    // A version whose builds never finish is failed after its attempts.
    let v2 = add(store);
    store.ladder_put_upload("g", "bob", v2, b"x").unwrap();
    for attempt in 1..=2 {
        let c = store
            .ladder_claim_build("w", Duration::ZERO, 2)
            .unwrap()
            .unwrap();
        assert_eq!((c.version, c.attempt), (v2, attempt));
        std::thread::sleep(Duration::from_millis(1100));
    }
    assert!(store
        .ladder_claim_build("w", Duration::ZERO, 2)
        .unwrap()
        .is_none());
    let v = store.bot_versions("g", "bob").unwrap();
    assert_eq!(
        (v[1].status, v[1].log.clone()),
        (VersionStatus::BuildFailed, abandoned_log(2))
    );
    // A program kept directly (a bench's) is read back.
    let p = Program {
        sha256: "cd".repeat(32),
        archive: vec![9; 10],
    };
    store.ladder_put_program("g", "bob", v2, &p).unwrap();
    assert_eq!(store.ladder_program("g", "bob", v2).unwrap(), Some(p));
}

/// Builds are claimed round-robin across accounts: one account's queue of builds waits behind
/// every other account's first.
pub fn ladder_builds_are_claimed_round_robin_across_accounts(store: &mut dyn Store) {
    use kakehiki_store::{NewBotVersion, VersionStatus};
    contestants(store, &["ann", "ben", "cat"]);
    let upload = |store: &mut dyn Store, bot: &str| {
        let v = store
            .add_bot_version(&NewBotVersion {
                ladder: "g".into(),
                bot: bot.into(),
                owner: bot.into(),
                language: "python".into(),
                source_sha256: "0".repeat(64),
            })
            .unwrap();
        store.ladder_put_upload("g", bot, v, b"x").unwrap();
        v
    };
    // Ann queues three builds, then Ben one, then Cat one.
    let ann: Vec<u64> = (0..3).map(|_| upload(store, "ann")).collect();
    let ben = upload(store, "ben");
    let cat = upload(store, "cat");
    let lease = Duration::from_secs(600);
    let mut order = Vec::new();
    while let Some(c) = store.ladder_claim_build("w", lease, 3).unwrap() {
        order.push((c.bot.clone(), c.version));
        // Each build finishes before the next is claimed, as with one builder.
        assert!(store
            .ladder_finish_build(&c, VersionStatus::BuildFailed, "x", None)
            .unwrap());
    }
    let order: Vec<(&str, u64)> = order.iter().map(|(b, v)| (b.as_str(), *v)).collect();
    // Ann's first was first in line; her second waits behind Ben's and Cat's first.
    assert_eq!(
        order,
        [
            ("ann", ann[0]),
            ("ben", ben),
            ("cat", cat),
            ("ann", ann[1]),
            ("ann", ann[2]),
        ]
    );
}

/// An organiser disables an account (its sessions end, and its bot's versions are no longer
/// played) or retires a bot; both come back, and nothing of their history goes.
pub fn ladder_accounts_are_disabled_and_bots_retired(store: &mut dyn Store) {
    use kakehiki_store::{LadderRole, NewBotVersion, NewLadderUser, VersionStatus};
    for (i, name) in ["dan", "eve"].iter().enumerate() {
        store
            .create_ladder_user(&NewLadderUser {
                name: (*name).into(),
                role: LadderRole::Contestant,
                token_sha256: (i + 1).to_string().repeat(64),
                signup_code_sha256: (i + 3).to_string().repeat(64),
            })
            .unwrap();
        let v = store
            .add_bot_version(&NewBotVersion {
                ladder: "g".into(),
                bot: (*name).into(),
                owner: (*name).into(),
                language: "python".into(),
                source_sha256: "0".repeat(64),
            })
            .unwrap();
        store
            .set_bot_version_status("g", name, v, VersionStatus::Active, "")
            .unwrap();
    }
    let played = |store: &mut dyn Store| -> Vec<String> {
        store
            .active_bot_versions("g")
            .unwrap()
            .into_iter()
            .map(|v| v.bot)
            .collect()
    };
    assert_eq!(played(store), ["dan", "eve"]);
    store
        .create_ladder_session(&"a".repeat(64), "dan", "csrf", i64::MAX / 2)
        .unwrap();
    assert!(!store.ladder_user("dan").unwrap().unwrap().disabled);

    assert!(store.ladder_set_disabled("dan", true).unwrap());
    assert!(store.ladder_user("dan").unwrap().unwrap().disabled);
    assert!(
        store
            .ladder_user_by_token(&"1".repeat(64))
            .unwrap()
            .unwrap()
            .disabled
    );
    assert_eq!(store.ladder_session(&"a".repeat(64), 0).unwrap(), None);
    assert_eq!(played(store), ["eve"]);
    assert_eq!(
        store.bot_versions("g", "dan").unwrap().len(),
        1,
        "history stays"
    );
    assert!(store.ladder_set_disabled("dan", false).unwrap());
    assert_eq!(played(store), ["dan", "eve"]);
    assert!(!store.ladder_set_disabled("nobody", true).unwrap());

    assert!(store.ladder_set_retired("g", "eve", true).unwrap());
    assert_eq!(played(store), ["dan"]);
    assert_eq!(store.ladder_retired_bots("g").unwrap(), ["eve"]);
    assert!(store.ladder_retired_bots("h").unwrap().is_empty());
    assert!(store.ladder_set_retired("g", "eve", false).unwrap());
    assert!(store.ladder_retired_bots("g").unwrap().is_empty());
    assert_eq!(played(store), ["dan", "eve"]);
    assert!(!store.ladder_set_retired("g", "nobody", true).unwrap());
    assert!(!store.ladder_set_retired("h", "eve", true).unwrap());
}

/// Old uploads and programs are pruned, never a version being built, a bot's newest active one
/// or its newest few; the store's use is measured by kind.
pub fn ladder_old_uploads_and_programs_are_pruned_and_measured(store: &mut dyn Store) {
    use kakehiki_store::{NewBotVersion, Program, VersionStatus};
    contestants(store, &["pat"]);
    let statuses = [
        VersionStatus::Refused,
        VersionStatus::Active,
        VersionStatus::CheckFailed,
        VersionStatus::Active,
        VersionStatus::Building,
    ];
    let mut versions = Vec::new();
    for (i, status) in statuses.iter().enumerate() {
        let v = store
            .add_bot_version(&NewBotVersion {
                ladder: "g".into(),
                bot: "pat".into(),
                owner: "pat".into(),
                language: "python".into(),
                source_sha256: "0".repeat(64),
            })
            .unwrap();
        store
            .ladder_put_upload("g", "pat", v, &vec![b'x'; 100 * (i + 1)])
            .unwrap();
        if *status != VersionStatus::Building {
            store
                .set_bot_version_status("g", "pat", v, *status, "")
                .unwrap();
        }
        if *status == VersionStatus::Active {
            store
                .ladder_put_program(
                    "g",
                    "pat",
                    v,
                    &Program {
                        sha256: format!("{v:0>64}"),
                        archive: vec![1; 1000],
                    },
                )
                .unwrap();
        }
        versions.push(v);
    }
    let use_of = |store: &mut dyn Store, kind: &str| {
        let u = store.ladder_storage("g").unwrap();
        let row = u.iter().find(|r| r.kind == kind).unwrap();
        (row.rows, row.bytes)
    };
    assert_eq!(use_of(store, "uploads"), (5, 1500));
    assert_eq!(use_of(store, "programs"), (2, 2000));
    assert_eq!(use_of(store, "replays"), (0, 0));
    assert_eq!(store.ladder_bot_storage("g", "pat").unwrap(), 3500);
    assert_eq!(store.ladder_bot_storage("g", "nobody").unwrap(), 0);
    // Nothing is older than the epoch.
    let none = store.ladder_prune("g", 1, 0).unwrap();
    assert_eq!((none.uploads, none.programs), (0, 0));
    // Everything is older than the far future: all but the newest active (v4), the one being
    // built (v5) and the newest one (v5 again) go.
    let far = i64::MAX / 4;
    let pruned = store.ladder_prune("g", 1, far).unwrap();
    assert_eq!((pruned.uploads, pruned.programs), (3, 1));
    for (i, v) in versions.iter().enumerate() {
        let kept = store.ladder_upload("g", "pat", *v).unwrap().is_some();
        assert_eq!(kept, i >= 3, "v{v}");
    }
    assert_eq!(
        store
            .ladder_program_sha256("g", "pat", versions[3])
            .unwrap(),
        Some(format!("{:0>64}", versions[3]))
    );
    assert_eq!(
        store
            .ladder_program_sha256("g", "pat", versions[1])
            .unwrap(),
        None
    );
    // The versions and their statuses stay.
    assert_eq!(store.bot_versions("g", "pat").unwrap().len(), 5);
    assert_eq!(use_of(store, "uploads"), (2, 900));
    assert_eq!(store.ladder_bot_storage("g", "pat").unwrap(), 1900);
    // Another ladder is untouched.
    let other = store.ladder_prune("h", 0, far).unwrap();
    assert_eq!((other.uploads, other.programs), (0, 0));
}

/// A program built again (another version of the same bot, another bot's copy) is kept once by
/// its digest: the store's use and each bot's count it once; a version's program reads back
/// whole; a prune removes a version's pointer and the archive only when no version points at it.
pub fn ladder_programs_are_kept_once_by_digest(store: &mut dyn Store) {
    use kakehiki_store::{NewBotVersion, Program, VersionStatus};
    contestants(store, &["pat", "quin"]);
    let program = Program {
        sha256: "d".repeat(64),
        archive: vec![7; 1000],
    };
    let mut made = Vec::new();
    for bot in ["pat", "pat", "quin"] {
        let v = store
            .add_bot_version(&NewBotVersion {
                ladder: "g".into(),
                bot: bot.into(),
                owner: bot.into(),
                language: "python".into(),
                source_sha256: "0".repeat(64),
            })
            .unwrap();
        store
            .set_bot_version_status("g", bot, v, VersionStatus::Active, "")
            .unwrap();
        store.ladder_put_program("g", bot, v, &program).unwrap();
        made.push((bot, v));
    }
    let programs = |store: &mut dyn Store| {
        let u = store.ladder_storage("g").unwrap();
        let row = u.iter().find(|r| r.kind == "programs").unwrap();
        (row.rows, row.bytes)
    };
    assert_eq!(programs(store), (1, 1000), "one archive for three versions");
    assert_eq!(store.ladder_bot_storage("g", "pat").unwrap(), 1000);
    assert_eq!(store.ladder_bot_storage("g", "quin").unwrap(), 1000);
    for (bot, v) in &made {
        assert_eq!(
            store.ladder_program("g", bot, *v).unwrap().as_ref(),
            Some(&program)
        );
    }
    // pat's first version is pruned (not its newest active one): quin's copy keeps the archive.
    let far = i64::MAX / 4;
    let pruned = store.ladder_prune("g", 1, far).unwrap();
    assert_eq!(pruned.programs, 1);
    assert_eq!(store.ladder_program("g", "pat", made[0].1).unwrap(), None);
    assert_eq!(
        store
            .ladder_program("g", "quin", made[2].1)
            .unwrap()
            .as_ref(),
        Some(&program)
    );
    assert_eq!(programs(store), (1, 1000));
    // A version rebuilt with another program: the old archive goes with the next prune once no
    // version points at it.
    let other = Program {
        sha256: "e".repeat(64),
        archive: vec![8; 10],
    };
    for (bot, v) in &made[1..] {
        store.ladder_put_program("g", bot, *v, &other).unwrap();
    }
    store.ladder_prune("g", 1, far).unwrap();
    assert_eq!(programs(store), (1, 10));
}
