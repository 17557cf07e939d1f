//! The SQLite backend.

use crate::common;

use kakehiki_store::{SqliteStore, Store, StoreError};

fn fresh() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("t.sqlite")).unwrap();
    (dir, store)
}

#[test]
fn registers_contests_and_refuses_changed_definitions() {
    let (_d, mut s) = fresh();
    common::registers_contests_and_refuses_changed_definitions(&mut s);
}

#[test]
fn stores_each_match_once_with_its_replay() {
    let (_d, mut s) = fresh();
    common::stores_each_match_once_with_its_replay(&mut s);
}

#[test]
fn failures_are_recorded_then_cleared_by_a_result() {
    let (_d, mut s) = fresh();
    common::failures_are_recorded_then_cleared_by_a_result(&mut s);
}

#[test]
fn queue_claims_leases_and_caps() {
    let (_d, mut s) = fresh();
    common::queue_claims_leases_and_caps(&mut s);
}

#[test]
fn results_range_reads_only_its_indices() {
    let (_d, mut s) = fresh();
    common::results_range_reads_only_its_indices(&mut s);
}

#[test]
fn results_are_numbered_in_storing_order() {
    let (_d, mut s) = fresh();
    common::results_are_numbered_in_storing_order(&mut s);
}

#[test]
fn a_schema_2_file_is_numbered_in_index_order_when_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    {
        let mut s = SqliteStore::open(&path).unwrap();
        s.register_contest(&common::contest("c", "f")).unwrap();
        let names = vec!["a".to_string(), "b".to_string()];
        for i in [4, 1, 7] {
            s.put_result(&common::result("c", i, &names, "r\n"))
                .unwrap();
        }
    }
    // Back to schema 2: no counts, no numbers.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP INDEX kk_results_by_seq; ALTER TABLE kk_results DROP COLUMN seq;
             DROP TABLE kk_result_counts; DROP TABLE kk_ladder_sessions;
             DROP TABLE kk_ladder_match_seats; DROP TABLE kk_ladder_ratings;
             DROP TABLE kk_ladder_state; DROP TABLE kk_ladder_versions;
             DROP TABLE kk_ladder_bots; DROP TABLE kk_ladder_users;
             DROP TABLE kk_ladder_builds; DROP TABLE kk_ladder_files;
             DROP TABLE kk_ladder_programs; DROP TABLE kk_ladder_archives;
             DELETE FROM kk_schema WHERE version >= 3;",
        )
        .unwrap();
    // Read-only, the old file is read as it is: counted, and read whole once.
    let mut ro = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(ro.result_count("c").unwrap(), 3);
    let all: Vec<_> = ro
        .results_since("c", 0)
        .unwrap()
        .into_iter()
        .map(|(s, r)| (s, r.index))
        .collect();
    assert_eq!(all, vec![(1, 1), (2, 4), (3, 7)]);
    let err = ro.results_since("c", 1).unwrap_err();
    assert!(err.to_string().contains("schema version 2"), "{err}");
    drop(ro);
    // Opened to write, it is upgraded: numbered by index, and new results follow.
    let mut s = SqliteStore::open(&path).unwrap();
    assert_eq!(s.result_count("c").unwrap(), 3);
    let names = vec!["a".to_string(), "b".to_string()];
    s.put_result(&common::result("c", 0, &names, "r\n"))
        .unwrap();
    let all: Vec<_> = s
        .results_since("c", 0)
        .unwrap()
        .into_iter()
        .map(|(s, r)| (s, r.index))
        .collect();
    assert_eq!(all, vec![(1, 1), (2, 4), (3, 7), (4, 0)]);
    assert_eq!(s.result_count("c").unwrap(), 4);
}

#[test]
fn reopening_keeps_data_and_migrations_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sqlite");
    {
        let mut s = SqliteStore::open(&path).unwrap();
        s.register_contest(&common::contest("keep", "f")).unwrap();
    }
    let mut s = SqliteStore::open(&path).unwrap();
    assert!(s.contest("keep").unwrap().is_some());
    let mode: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("INSERT INTO kk_schema (version) VALUES (99)", [])
        .unwrap();
    let err = SqliteStore::open(&path).err().expect("must refuse");
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err}"
    );
}

#[test]
fn unopenable_paths_and_garbage_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = SqliteStore::open(&dir.path().join("no/such/dir/t.sqlite"))
        .err()
        .expect("must fail");
    assert!(
        err.to_string().starts_with("cannot open sqlite database"),
        "{err}"
    );
    let garbage = dir.path().join("garbage.sqlite");
    std::fs::write(&garbage, vec![b'x'; 4096]).unwrap();
    let err = SqliteStore::open(&garbage).err().expect("must fail");
    assert!(err.to_string().contains("garbage.sqlite"), "{err}");
}

#[test]
fn a_corrupt_replay_is_reported_not_panicked() {
    let (dir, mut s) = fresh();
    s.register_contest(&common::contest("c", "f")).unwrap();
    let names = vec!["a".to_string()];
    s.put_result(&common::result("c", 0, &names, "r\n"))
        .unwrap();
    rusqlite::Connection::open(dir.path().join("t.sqlite"))
        .unwrap()
        .execute("UPDATE kk_results SET replay = X'00010203'", [])
        .unwrap();
    let err = s.replay("c", 0).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
}

#[test]
fn a_host_fault_gives_the_match_back_without_an_attempt() {
    let (_d, mut s) = fresh();
    common::a_host_fault_gives_the_match_back_without_an_attempt(&mut s);
}

#[test]
fn program_files_keep_their_first_hash() {
    let (_d, mut s) = fresh();
    common::program_files_keep_their_first_hash(&mut s);
}

#[test]
fn one_run_at_a_time_holds_a_sqlite_file() {
    let (dir, mut first) = fresh();
    first.lock_run("pid 1 running contest a").unwrap();
    first.lock_run("again").unwrap(); // re-locking one's own lock is fine
    let mut second = SqliteStore::open(&dir.path().join("t.sqlite")).unwrap();
    let err = second.lock_run("pid 2").unwrap_err();
    assert!(matches!(err, StoreError::RunInProgress { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("pid 1 running contest a"), "{msg}");
    assert!(msg.contains("t.sqlite"), "{msg}");
    // Readers are not locked out.
    assert!(second.contest_names().unwrap().is_empty());
    drop(first);
    second.lock_run("pid 2").unwrap();
    // Another file is another lock.
    let mut other = SqliteStore::open(&dir.path().join("u.sqlite")).unwrap();
    other.lock_run("pid 3").unwrap();
    assert!(kakehiki_store::run_lock_path(&dir.path().join("t.sqlite")).exists());
}

#[test]
fn read_only_opening_creates_nothing_and_refuses_a_mistyped_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("kakehki.sqlite");
    let err = SqliteStore::open_read_only(&missing)
        .err()
        .expect("no such file");
    assert!(matches!(err, StoreError::NoDatabase(_)), "{err}");
    assert!(err.to_string().contains("kakehki.sqlite"), "{err}");
    assert!(!missing.exists(), "a read never creates a database");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    let path = dir.path().join("t.sqlite");
    {
        let mut s = SqliteStore::open(&path).unwrap();
        common::stores_each_match_once_with_its_replay(&mut s);
    }
    let mut ro = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(ro.stored_indices("c2").unwrap().len(), 2);
    assert!(ro.replay("c2", 3).unwrap().is_some());
    // Writes fail instead of changing the file.
    let err = ro
        .register_contest(&common::contest("new", "f"))
        .unwrap_err();
    assert!(
        err.to_string().contains("readonly")
            || err.to_string().contains("read-only")
            || err.to_string().contains("read only"),
        "{err}"
    );

    let garbage = dir.path().join("garbage.sqlite");
    std::fs::write(&garbage, vec![b'x'; 4096]).unwrap();
    let err = SqliteStore::open_read_only(&garbage)
        .err()
        .expect("not a database");
    assert!(err.to_string().contains("garbage.sqlite"), "{err}");
}

#[test]
fn read_only_opening_works_in_a_directory_nobody_may_write() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("published");
    std::fs::create_dir(&sub).unwrap();
    let path = sub.join("t.sqlite");
    {
        let mut s = SqliteStore::open(&path).unwrap();
        common::stores_each_match_once_with_its_replay(&mut s);
    }
    let before: Vec<_> = std::fs::read_dir(&sub)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root may write anyway; the directory is then still read-only for SQLite's purposes only
    // if the open does not try to create files, which the listing below checks either way.
    let r = SqliteStore::open_read_only(&path).and_then(|mut ro| ro.stored_indices("c2"));
    let after: Vec<_> = std::fs::read_dir(&sub)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(r.unwrap().len(), 2);
    let created: Vec<_> = after.iter().filter(|f| !before.contains(f)).collect();
    assert!(
        created.iter().all(|f| f.to_string_lossy().ends_with("-shm") || f.to_string_lossy().ends_with("-wal")),
        "only SQLite's own WAL files may appear, and only where the directory is writable: {created:?}"
    );
}

#[test]
fn ladder_accounts_and_bot_versions() {
    let (_d, mut s) = fresh();
    common::ladder_accounts_and_bot_versions(&mut s);
}

#[test]
fn ladder_play_queues_rates_and_lists() {
    let (_d, mut s) = fresh();
    common::ladder_play_queues_rates_and_lists(&mut s);
}

#[test]
fn ladder_sessions_and_the_account_list() {
    let (_d, mut s) = fresh();
    common::ladder_sessions_and_the_account_list(&mut s);
}

#[test]
fn ladder_builds_are_claimed_once_taken_over_and_stored_with_their_program() {
    let (_d, mut s) = fresh();
    common::ladder_builds_are_claimed_once_taken_over_and_stored_with_their_program(&mut s);
}

#[test]
fn ladder_builds_are_claimed_round_robin_across_accounts() {
    let (_d, mut s) = fresh();
    common::ladder_builds_are_claimed_round_robin_across_accounts(&mut s);
}

#[test]
fn ladder_accounts_are_disabled_and_bots_retired() {
    let (_d, mut s) = fresh();
    common::ladder_accounts_are_disabled_and_bots_retired(&mut s);
}

#[test]
fn ladder_old_uploads_and_programs_are_pruned_and_measured() {
    let (_d, mut s) = fresh();
    common::ladder_old_uploads_and_programs_are_pruned_and_measured(&mut s);
}

#[test]
fn ladder_programs_are_kept_once_by_digest() {
    let (_d, mut s) = fresh();
    common::ladder_programs_are_kept_once_by_digest(&mut s);
}

/// A schema 8 file's built programs (kept in each version's row) are moved into the archives
/// kept once by digest when it is opened to write: two versions with one program, one archive.
#[test]
fn a_schema_8_files_programs_are_kept_once_by_digest_when_upgraded() {
    use kakehiki_store::LadderBuilds;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    // Back to schema 8: programs with their archive in the version's row.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE kk_ladder_programs; DROP TABLE kk_ladder_archives;
             CREATE TABLE kk_ladder_programs (
                 ladder TEXT NOT NULL, bot TEXT NOT NULL, version BIGINT NOT NULL,
                 sha256 TEXT NOT NULL, archive BLOB NOT NULL,
                 PRIMARY KEY (ladder, bot, version));
             INSERT INTO kk_ladder_programs VALUES ('g', 'pat', 1, 'dd', x'0102');
             INSERT INTO kk_ladder_programs VALUES ('g', 'pat', 2, 'dd', x'0102');
             INSERT INTO kk_ladder_programs VALUES ('g', 'quin', 1, 'ee', x'03');
             DELETE FROM kk_schema WHERE version >= 9;",
        )
        .unwrap();
    let mut s = SqliteStore::open(&path).unwrap();
    for (bot, v, archive) in [
        ("pat", 1, vec![1u8, 2]),
        ("pat", 2, vec![1, 2]),
        ("quin", 1, vec![3]),
    ] {
        assert_eq!(
            s.ladder_program("g", bot, v).unwrap().unwrap().archive,
            archive
        );
    }
    let programs = s.ladder_storage("g").unwrap();
    let row = programs.iter().find(|r| r.kind == "programs").unwrap();
    assert_eq!((row.rows, row.bytes), (2, 3));
}

/// A store opened read-only checks a contest already registered (same definition: not new;
/// another: the changed definition), reading only.
#[test]
fn a_read_only_store_checks_a_registered_contest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sqlite");
    {
        let mut s = SqliteStore::open(&path).unwrap();
        assert!(s.register_contest(&common::contest("c", "f")).unwrap());
    }
    let mut ro = SqliteStore::open_read_only(&path).unwrap();
    assert!(!ro.register_contest(&common::contest("c", "f")).unwrap());
    let err = ro.register_contest(&common::contest("c", "g")).unwrap_err();
    assert!(matches!(err, StoreError::DefinitionChanged { .. }), "{err}");
}

/// Two connections opening one new file at once (a contest's coordinator and its first worker):
/// both open, neither is told the database is locked while the other switches it to WAL.
#[test]
fn two_stores_opening_one_new_file_at_once_both_open() {
    for _ in 0..40 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.sqlite");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let opens: Vec<_> = (0..2)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    SqliteStore::open(&path)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        for o in opens {
            o.join().unwrap().unwrap();
        }
    }
}
