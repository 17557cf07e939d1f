//! The PostgreSQL backend, against a real server: set KAKEHIKI_TEST_DATABASE_URL (CI runs
//! `.ci/postgres.sh`, which starts one and prints the URL). Each test works in a fresh schema.

use crate::common;

use kakehiki_store::{PgStore, Store, StoreError};

/// The test database URL, or a clear skip message.
fn database_url() -> Option<String> {
    kakehiki_store::test_database_url()
}

fn fresh(name: &str) -> Option<PgStore> {
    let url = database_url()?;
    Some(PgStore::connect(&kakehiki_store::fresh_test_schema(&url, name)).unwrap())
}

#[test]
fn registers_contests_and_refuses_changed_definitions() {
    let Some(mut s) = fresh("reg") else { return };
    common::registers_contests_and_refuses_changed_definitions(&mut s);
}

#[test]
fn stores_each_match_once_with_its_replay() {
    let Some(mut s) = fresh("once") else { return };
    common::stores_each_match_once_with_its_replay(&mut s);
}

#[test]
fn results_range_reads_only_its_indices() {
    let Some(mut s) = fresh("range") else { return };
    common::results_range_reads_only_its_indices(&mut s);
}

#[test]
fn results_are_numbered_in_storing_order() {
    let Some(mut s) = fresh("seq") else { return };
    common::results_are_numbered_in_storing_order(&mut s);
}

#[test]
fn failures_are_recorded_then_cleared_by_a_result() {
    let Some(mut s) = fresh("fail") else { return };
    common::failures_are_recorded_then_cleared_by_a_result(&mut s);
}

#[test]
fn queue_claims_leases_and_caps() {
    let Some(mut s) = fresh("queue") else { return };
    common::queue_claims_leases_and_caps(&mut s);
}

#[test]
fn concurrent_claims_never_hand_out_a_match_twice() {
    let Some(url) = database_url() else { return };
    let url = kakehiki_store::fresh_test_schema(&url, "skip");
    let mut s = PgStore::connect(&url).unwrap();
    s.register_contest(&common::contest("many", "f")).unwrap();
    let matches: Vec<_> = (0..200)
        .map(|i| kakehiki_store::QueuedMatch {
            index: i,
            spec_json: "{}".into(),
        })
        .collect();
    s.enqueue("many", &matches).unwrap();
    let claimed: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|w| {
                let url = url.clone();
                scope.spawn(move || {
                    let mut s = PgStore::connect(&url).unwrap();
                    let mut mine = Vec::new();
                    while let Some(c) = s
                        .claim(&format!("w{w}"), std::time::Duration::from_secs(60), 3)
                        .unwrap()
                    {
                        mine.push(c.index);
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut sorted = claimed.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), claimed.len(), "a match was claimed twice");
    assert_eq!(sorted, (0..200).collect::<Vec<_>>());
}

#[test]
fn unreachable_and_malformed_urls_are_clear_errors() {
    // Nothing listens on port 1; connecting must fail quickly with the redacted URL.
    let err = PgStore::connect("postgres://u:secret@127.0.0.1:1/db?connect_timeout=3")
        .err()
        .expect("must fail");
    let text = err.to_string();
    assert!(matches!(err, StoreError::Connect { .. }), "{text}");
    assert!(
        text.contains("cannot connect to postgresql at postgres://u:***@127.0.0.1:1/db"),
        "{text}"
    );
    assert!(!text.contains("secret"), "{text}");
    let err = PgStore::connect("postgres://h:notaport/db")
        .err()
        .expect("must fail");
    assert!(matches!(err, StoreError::BadUrl { .. }), "{err}");
}

/// A database whose columns are not what this version wrote (an unexpected NULL, another type)
/// gives errors naming what was being read, never a panic.
#[test]
fn columns_of_an_unexpected_type_are_errors_not_panics() {
    let Some(url) = database_url() else { return };
    let url = kakehiki_store::fresh_test_schema(&url, "cols");
    let mut s = PgStore::connect(&url).unwrap();
    s.register_contest(&common::contest("odd", "f")).unwrap();
    let names = vec!["a".to_string()];
    s.put_result(&common::result("odd", 0, &names, "{}"))
        .unwrap();
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "ALTER TABLE kk_contests ALTER COLUMN definition DROP NOT NULL;
             UPDATE kk_contests SET definition = NULL;
             ALTER TABLE kk_results ALTER COLUMN duration_ms TYPE TEXT;",
        )
        .unwrap();
    for (err, context) in [
        (s.contest("odd").unwrap_err(), "reading a contest"),
        (s.results("odd").unwrap_err(), "reading results"),
    ] {
        assert!(
            matches!(&err, StoreError::Postgres { context: c, .. } if *c == context),
            "{err}"
        );
    }
}

#[test]
fn a_host_fault_gives_the_match_back_without_an_attempt() {
    let Some(mut s) = fresh("hostfault") else {
        return;
    };
    common::a_host_fault_gives_the_match_back_without_an_attempt(&mut s);
}

#[test]
fn program_files_keep_their_first_hash() {
    let Some(mut s) = fresh("programs") else {
        return;
    };
    common::program_files_keep_their_first_hash(&mut s);
}

#[test]
fn ladder_accounts_and_bot_versions() {
    let Some(mut s) = fresh("ladder") else { return };
    common::ladder_accounts_and_bot_versions(&mut s);
}

#[test]
fn ladder_play_queues_rates_and_lists() {
    let Some(mut s) = fresh("ladder_play") else {
        return;
    };
    common::ladder_play_queues_rates_and_lists(&mut s);
}

#[test]
fn ladder_sessions_and_the_account_list() {
    let Some(mut s) = fresh("sessions") else {
        return;
    };
    common::ladder_sessions_and_the_account_list(&mut s);
}

#[test]
fn ladder_builds_are_claimed_once_taken_over_and_stored_with_their_program() {
    let Some(mut s) = fresh("builds") else {
        return;
    };
    common::ladder_builds_are_claimed_once_taken_over_and_stored_with_their_program(&mut s);
}

#[test]
fn ladder_builds_are_claimed_round_robin_across_accounts() {
    let Some(mut s) = fresh("roundrobin") else {
        return;
    };
    common::ladder_builds_are_claimed_round_robin_across_accounts(&mut s);
}

#[test]
fn ladder_accounts_are_disabled_and_bots_retired() {
    let Some(mut s) = fresh("disable") else {
        return;
    };
    common::ladder_accounts_are_disabled_and_bots_retired(&mut s);
}

#[test]
fn ladder_old_uploads_and_programs_are_pruned_and_measured() {
    let Some(mut s) = fresh("prune") else {
        return;
    };
    common::ladder_old_uploads_and_programs_are_pruned_and_measured(&mut s);
}

#[test]
fn ladder_programs_are_kept_once_by_digest() {
    let Some(mut s) = fresh("dedup") else {
        return;
    };
    common::ladder_programs_are_kept_once_by_digest(&mut s);
}

/// Workers registering one contest at once: it is new for exactly one of them, and the same
/// contest for the others (none fails on the key another just inserted).
#[test]
fn concurrent_registrations_store_a_contest_once() {
    let Some(url) = database_url() else { return };
    let url = kakehiki_store::fresh_test_schema(&url, "concreg");
    drop(PgStore::connect(&url).unwrap());
    for round in 0..5 {
        let name = format!("c{round}");
        let new: Vec<bool> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let (url, name) = (url.clone(), name.clone());
                    scope.spawn(move || {
                        let mut s = PgStore::connect(&url).unwrap();
                        s.register_contest(&common::contest(&name, "f")).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(new.iter().filter(|n| **n).count(), 1, "{new:?}");
    }
    let mut s = PgStore::connect(&url).unwrap();
    let err = s.register_contest(&common::contest("c0", "g")).unwrap_err();
    assert!(matches!(err, StoreError::DefinitionChanged { .. }), "{err}");
}

#[test]
fn a_corrupt_replay_is_reported_not_panicked() {
    let Some(url) = database_url() else { return };
    let url = kakehiki_store::fresh_test_schema(&url, "corrupt");
    let mut s = PgStore::connect(&url).unwrap();
    s.register_contest(&common::contest("c", "f")).unwrap();
    let names = vec!["a".to_string()];
    s.put_result(&common::result("c", 0, &names, "r\n"))
        .unwrap();
    postgres::Client::connect(&url, postgres::NoTls)
        .unwrap()
        .batch_execute("UPDATE kk_results SET replay = '\\x00010203'::BYTEA")
        .unwrap();
    let err = s.replay("c", 0).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
}
