//! The SQLite backend.

mod common;

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
