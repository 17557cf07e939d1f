//! The embedded SQLite backend (the default).

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

mod builds;
mod ladder;

use crate::schema;
use crate::{
    compress, decompress, entrants_to_json, from_db, lease_ms, now_secs, to_db, BotVersion, Claim,
    ContestRow, FailedMatch, LadderRole, LadderSession, LadderUser, NewBotVersion, NewLadderUser,
    NewResult, Pick, ProgramFile, QueueCounts, QueuedMatch, Store, StoreError, StoredResult,
    VersionStatus,
};

/// The columns of a ladder account as [`ladder_user_from`] reads them.
const USER_COLUMNS: &str =
    "u.name, u.role, u.password_hash, u.signup_code_sha256 IS NOT NULL, u.created_at, u.disabled <> 0";

type UserRow = (String, String, Option<String>, bool, i64, bool);

fn user_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<UserRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
    ))
}

fn ladder_user_from(
    (name, role, password_hash, signup_pending, created_at, disabled): UserRow,
) -> Result<LadderUser, StoreError> {
    Ok(LadderUser {
        name,
        role: LadderRole::parse(&role)?,
        password_hash,
        signup_pending,
        created_at,
        disabled,
    })
}

/// Current time in milliseconds since the epoch, computed by the database.
const NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// A results store in one SQLite file.
pub struct SqliteStore {
    conn: Connection,
    /// The database file (`None` in memory).
    path: Option<PathBuf>,
    /// The run lock on `<file>.lock`, held while this store runs contests.
    run_lock: Option<File>,
    /// The schema version of the database (older than the latest only when opened read-only).
    schema: i64,
}

/// The file whose OS lock says a process is running contests on the database at `path`.
pub fn run_lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// `path` as an SQLite URI with `immutable=1` (percent-encoding what a URI path may not hold).
fn immutable_uri(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for b in abs.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(b as char)
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Create an empty database file `0600` (a missing directory is left for SQLite to report).
fn create_private(path: &Path) -> std::io::Result<()> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotFound
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn err(context: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |source| StoreError::Sqlite { context, source }
}

impl SqliteStore {
    /// Bot versions of `ladder` (`?1`) matching `condition` (with `?2` bound to `bot`).
    fn versions_where(
        &mut self,
        condition: &str,
        ladder: &str,
        // The condition's second parameter.
        param: &str,
    ) -> Result<Vec<BotVersion>, StoreError> {
        const CONTEXT: &str = "reading bot versions";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT v.ladder, v.bot, b.owner, v.version, v.language, v.source_sha256,
                        v.status, v.log, v.created_at
                 FROM kk_ladder_versions v
                 JOIN kk_ladder_bots b ON b.ladder = v.ladder AND b.name = v.bot
                 WHERE v.ladder = ?1 AND {condition}"
            ))
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map(params![ladder, param], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, i64>(8)?,
                ))
            })
            .map_err(err(CONTEXT))?;
        let mut out = Vec::new();
        for row in rows {
            let (ladder, bot, owner, version, language, source_sha256, status, log, created_at) =
                row.map_err(err(CONTEXT))?;
            out.push(BotVersion {
                ladder,
                bot,
                owner,
                version: version as u64,
                language,
                source_sha256,
                status: VersionStatus::parse(&status)
                    .ok_or_else(|| StoreError::Corrupt(format!("unknown status {status:?}")))?,
                log,
                created_at,
            });
        }
        Ok(out)
    }

    /// The ladder account matching `condition` (one `?1` parameter).
    fn ladder_user_where(
        &mut self,
        condition: &str,
        value: &str,
    ) -> Result<Option<LadderUser>, StoreError> {
        const CONTEXT: &str = "reading a ladder account";
        let row: Option<UserRow> = self
            .conn
            .query_row(
                &format!("SELECT {USER_COLUMNS} FROM kk_ladder_users u WHERE {condition}"),
                params![value],
                user_row,
            )
            .optional()
            .map_err(err(CONTEXT))?;
        row.map(ladder_user_from).transpose()
    }

    /// Open (creating if needed) the database at `path`, switch it to WAL mode and bring its
    /// schema up to date.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::OpenSqlite {
            path: path.display().to_string(),
            source,
        };
        // A new database is private (0600): SQLite gives its -wal and -shm files the mode of the
        // database file.
        if !path.exists() {
            create_private(path).map_err(|e| StoreError::Create {
                path: path.display().to_string(),
                source: e,
            })?;
        }
        let conn = Connection::open(path).map_err(open_err)?;
        let mut store = Self::init(conn).map_err(|e| match e {
            StoreError::Sqlite { source, .. } => open_err(source),
            other => other,
        })?;
        store.path = Some(path.to_path_buf());
        Ok(store)
    }

    /// Open the existing database at `path` read-only, for standings, replays and the web view:
    /// no file is created (a mistyped path is [`StoreError::NoDatabase`]), nothing is migrated,
    /// and it works in a directory the reader may not write (where SQLite cannot create the WAL
    /// index, the file is read as immutable).
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        if !path.is_file() {
            return Err(StoreError::NoDatabase(shown));
        }
        let open_err = |source| StoreError::OpenSqlite {
            path: shown.clone(),
            source,
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(open_err)?;
        let conn = match Self::schema_version(&conn) {
            Ok(_) => conn,
            // A WAL database whose directory we cannot write (no -shm to create): read the
            // file as it is.
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly
                ) =>
            {
                drop(conn);
                Connection::open_with_flags(immutable_uri(path), flags).map_err(open_err)?
            }
            Err(source) => return Err(open_err(source)),
        };
        let version = Self::schema_version(&conn).map_err(open_err)?;
        crate::schema::pending(version)?;
        Ok(SqliteStore {
            conn,
            path: Some(path.to_path_buf()),
            run_lock: None,
            schema: version.unwrap_or(0),
        })
    }

    fn schema_version(conn: &Connection) -> Result<Option<i64>, rusqlite::Error> {
        conn.query_row("SELECT MAX(version) FROM kk_schema", [], |r| r.get(0))
    }

    /// An in-memory database (tests).
    pub fn in_memory() -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory().map_err(|source| StoreError::OpenSqlite {
            path: ":memory:".into(),
            source,
        })?;
        Self::init(conn)
    }

    fn init(conn: Connection) -> Result<Self, StoreError> {
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(err("setting the busy timeout"))?;
        // WAL: readers (standings, the web view) never block the runner. synchronous=NORMAL in
        // WAL mode loses nothing when the process is killed; only a power loss may drop the
        // last transactions, never corrupt the file.
        let _mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(err("switching to WAL mode"))?;
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(err("setting pragmas"))?;
        let mut store = SqliteStore {
            conn,
            path: None,
            run_lock: None,
            schema: 0,
        };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        // An up-to-date database is only read: a reader opened while a contest is being stored
        // must not queue for the write lock (the migration below takes it).
        if let Ok(current) = Self::schema_version(&self.conn) {
            if schema::pending(current)?.is_empty() {
                self.schema = current.unwrap_or(0);
                return Ok(());
            }
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("starting the schema migration"))?;
        tx.execute_batch("CREATE TABLE IF NOT EXISTS kk_schema (version BIGINT NOT NULL)")
            .map_err(err("creating the schema version table"))?;
        let current: Option<i64> = tx
            .query_row("SELECT MAX(version) FROM kk_schema", [], |r| r.get(0))
            .map_err(err("reading the schema version"))?;
        for version in schema::pending(current)? {
            tx.execute_batch(&schema::migration(version, "BLOB"))
                .map_err(err("applying a schema migration"))?;
            tx.execute(
                "INSERT INTO kk_schema (version) VALUES (?1)",
                params![version],
            )
            .map_err(err("recording the schema version"))?;
        }
        tx.commit()
            .map_err(err("committing the schema migration"))?;
        self.schema = schema::MIGRATIONS.len() as i64;
        Ok(())
    }

    /// Whether the database has result sequence numbers (schema 3; an older file opened
    /// read-only has not).
    fn has_seq(&self) -> bool {
        self.schema >= 3
    }

    /// The stored results of a contest by match index: all of them, or the one of `index`.
    fn query_results(
        &mut self,
        contest: &str,
        pick: Pick,
    ) -> Result<Vec<StoredResult>, StoreError> {
        // One statement per case, so that one match or a range is found through the key
        // rather than by a scan (`?2 IS NULL OR idx = ?2` keeps SQLite from using the index).
        let (first, last) = pick.bounds();
        let mut stmt = self
            .conn
            .prepare_cached(match pick {
                Pick::All => {
                    "SELECT idx, entrants, report, duration_ms, worker FROM kk_results
                     WHERE contest = ?1 AND ?2 <= ?3 ORDER BY idx"
                }
                Pick::One(_) => {
                    "SELECT idx, entrants, report, duration_ms, worker FROM kk_results
                     WHERE contest = ?1 AND idx = ?2 AND idx = ?3"
                }
                Pick::Range(..) => {
                    "SELECT idx, entrants, report, duration_ms, worker FROM kk_results
                     WHERE contest = ?1 AND idx >= ?2 AND idx <= ?3 ORDER BY idx"
                }
            })
            .map_err(err("reading results"))?;
        let rows = stmt
            .query_map(params![contest, first, last], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get(2)?,
                    r.get::<_, i64>(3)?,
                    r.get(4)?,
                ))
            })
            .map_err(err("reading results"))?;
        let mut out = Vec::new();
        for row in rows {
            let (idx, entrants, report_json, duration_ms, worker) =
                row.map_err(err("reading results"))?;
            out.push(StoredResult::from_row(
                contest,
                idx,
                &entrants,
                report_json,
                duration_ms,
                worker,
            )?);
        }
        Ok(out)
    }
}

impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn register_contest(&mut self, contest: &ContestRow) -> Result<bool, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("registering a contest"))?;
        let stored: Option<(String, String)> = tx
            .query_row(
                "SELECT fingerprint, definition FROM kk_contests WHERE name = ?1",
                params![contest.name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(err("looking up a contest"))?;
        match stored {
            Some((stored, definition)) => contest.already_registered(stored, &definition),
            None => {
                tx.execute(
                    "INSERT INTO kk_contests (name, fingerprint, definition) VALUES (?1, ?2, ?3)",
                    params![contest.name, contest.fingerprint, contest.definition],
                )
                .map_err(err("registering a contest"))?;
                tx.commit().map_err(err("registering a contest"))?;
                Ok(true)
            }
        }
    }

    fn contest(&mut self, name: &str) -> Result<Option<ContestRow>, StoreError> {
        self.conn
            .query_row(
                "SELECT name, fingerprint, definition FROM kk_contests WHERE name = ?1",
                params![name],
                |r| {
                    Ok(ContestRow {
                        name: r.get(0)?,
                        fingerprint: r.get(1)?,
                        definition: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(err("reading a contest"))
    }

    fn contest_names(&mut self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name FROM kk_contests WHERE fingerprint <> ?1 ORDER BY name")
            .map_err(err("listing contests"))?;
        let rows = stmt
            .query_map(params![crate::LADDER_FINGERPRINT], |r| r.get(0))
            .map_err(err("listing contests"))?;
        rows.collect::<Result<Vec<String>, _>>()
            .map_err(err("listing contests"))
    }

    fn stored_indices(&mut self, contest: &str) -> Result<BTreeSet<u64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT idx FROM kk_results WHERE contest = ?1")
            .map_err(err("listing stored matches"))?;
        let rows = stmt
            .query_map(params![contest], |r| r.get::<_, i64>(0))
            .map_err(err("listing stored matches"))?;
        rows.map(|r| r.map(from_db))
            .collect::<Result<_, _>>()
            .map_err(err("listing stored matches"))
    }

    fn result_count(&mut self, contest: &str) -> Result<u64, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(if self.has_seq() {
                "SELECT COALESCE(MAX(results), 0) FROM kk_result_counts WHERE contest = ?1"
            } else {
                "SELECT COUNT(*) FROM kk_results WHERE contest = ?1"
            })
            .map_err(err("counting stored matches"))?;
        stmt.query_row(params![contest], |r| r.get::<_, i64>(0))
            .map(from_db)
            .map_err(err("counting stored matches"))
    }

    fn results_since(
        &mut self,
        contest: &str,
        after: u64,
    ) -> Result<Vec<(u64, StoredResult)>, StoreError> {
        if !self.has_seq() {
            // A file of an older schema opened read-only: its results have no numbers yet;
            // all of them are numbered in index order, and only a first read can be answered.
            if after > 0 {
                return Err(StoreError::Corrupt(format!(
                    "the database has schema version {} without result sequence numbers: open \
                     it once with a writing command (kakehiki web or contest run) to upgrade it",
                    self.schema
                )));
            }
            return Ok((1..).zip(self.query_results(contest, Pick::All)?).collect());
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, idx, entrants, report, duration_ms, worker FROM kk_results
                 WHERE contest = ?1 AND seq > ?2 ORDER BY seq",
            )
            .map_err(err("reading new results"))?;
        let rows = stmt
            .query_map(params![contest, to_db(after)], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get(3)?,
                    r.get::<_, i64>(4)?,
                    r.get(5)?,
                ))
            })
            .map_err(err("reading new results"))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, idx, entrants, report_json, duration_ms, worker) =
                row.map_err(err("reading new results"))?;
            out.push((
                from_db(seq),
                StoredResult::from_row(contest, idx, &entrants, report_json, duration_ms, worker)?,
            ));
        }
        Ok(out)
    }

    fn put_result(&mut self, r: &NewResult<'_>) -> Result<bool, StoreError> {
        let replay = compress(r.replay)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("storing a result"))?;
        let inserted = {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO kk_results (contest, idx, entrants, report, replay, replay_bytes, duration_ms, worker)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (contest, idx) DO NOTHING",
                )
                .map_err(err("storing a result"))?;
            stmt.execute(params![
                r.contest,
                to_db(r.index),
                entrants_to_json(r.entrants),
                r.report_json,
                replay,
                r.replay.len() as i64,
                r.duration_ms as i64,
                r.worker
            ])
            .map_err(err("storing a result"))?
        };
        if inserted == 1 {
            // Number the result: one more in its contest's count.
            let seq: i64 = tx
                .prepare_cached(
                    "INSERT INTO kk_result_counts (contest, results) VALUES (?1, 1)
                     ON CONFLICT (contest) DO UPDATE SET results = kk_result_counts.results + 1
                     RETURNING results",
                )
                .and_then(|mut stmt| stmt.query_row(params![r.contest], |row| row.get(0)))
                .map_err(err("counting a stored result"))?;
            tx.prepare_cached("UPDATE kk_results SET seq = ?3 WHERE contest = ?1 AND idx = ?2")
                .and_then(|mut stmt| stmt.execute(params![r.contest, to_db(r.index), seq]))
                .map_err(err("numbering a stored result"))?;
            let mut stmt = tx
                .prepare_cached(
                    "UPDATE kk_matches SET state = 'done', worker = ?3, lease_until = NULL
                     WHERE contest = ?1 AND idx = ?2",
                )
                .map_err(err("marking a match done"))?;
            stmt.execute(params![r.contest, to_db(r.index), r.worker])
                .map_err(err("marking a match done"))?;
        }
        tx.commit().map_err(err("committing a result"))?;
        Ok(inserted == 1)
    }

    fn results(&mut self, contest: &str) -> Result<Vec<StoredResult>, StoreError> {
        self.query_results(contest, Pick::All)
    }

    fn results_range(
        &mut self,
        contest: &str,
        first: u64,
        last: u64,
    ) -> Result<Vec<StoredResult>, StoreError> {
        self.query_results(contest, Pick::Range(first, last))
    }

    fn result(&mut self, contest: &str, index: u64) -> Result<Option<StoredResult>, StoreError> {
        Ok(self.query_results(contest, Pick::One(index))?.pop())
    }

    fn replay(&mut self, contest: &str, index: u64) -> Result<Option<String>, StoreError> {
        let bytes: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT replay FROM kk_results WHERE contest = ?1 AND idx = ?2",
                params![contest, to_db(index)],
                |r| r.get(0),
            )
            .optional()
            .map_err(err("reading a replay"))?;
        bytes.map(|b| decompress(contest, index, &b)).transpose()
    }

    fn record_failure(
        &mut self,
        contest: &str,
        index: u64,
        spec_json: &str,
        error: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO kk_matches (contest, idx, spec, state, attempts, last_error)
                 SELECT ?1, ?2, ?3, 'failed', 1, ?4
                 WHERE NOT EXISTS (SELECT 1 FROM kk_results WHERE contest = ?1 AND idx = ?2)
                 ON CONFLICT (contest, idx) DO UPDATE SET state = 'failed', attempts = kk_matches.attempts + 1,
                     last_error = excluded.last_error, lease_until = NULL",
                params![contest, to_db(index), spec_json, error],
            )
            .map_err(err("recording a failed match"))?;
        Ok(())
    }

    fn failures(&mut self, contest: &str) -> Result<Vec<FailedMatch>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT idx, attempts, COALESCE(last_error, '') FROM kk_matches
                 WHERE contest = ?1 AND state = 'failed' ORDER BY idx",
            )
            .map_err(err("listing failed matches"))?;
        let rows = stmt
            .query_map(params![contest], |r| {
                Ok(FailedMatch {
                    index: from_db(r.get(0)?),
                    attempts: r.get::<_, i64>(1)?.max(0) as u32,
                    error: r.get(2)?,
                })
            })
            .map_err(err("listing failed matches"))?;
        rows.collect::<Result<_, _>>()
            .map_err(err("listing failed matches"))
    }

    fn enqueue(&mut self, contest: &str, matches: &[QueuedMatch]) -> Result<u64, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("queueing matches"))?;
        let mut added = 0;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO kk_matches (contest, idx, spec, state)
                     SELECT ?1, ?2, ?3, 'queued'
                     WHERE NOT EXISTS (SELECT 1 FROM kk_results WHERE contest = ?1 AND idx = ?2)
                     ON CONFLICT (contest, idx) DO UPDATE SET state = 'queued', attempts = 0, lease_until = NULL,
                         spec = excluded.spec WHERE kk_matches.state = 'failed'",
                )
                .map_err(err("queueing matches"))?;
            for m in matches {
                added += stmt
                    .execute(params![contest, to_db(m.index), m.spec_json])
                    .map_err(err("queueing matches"))? as u64;
            }
        }
        tx.commit().map_err(err("queueing matches"))?;
        Ok(added)
    }

    fn claim(
        &mut self,
        worker: &str,
        lease: Duration,
        max_attempts: u32,
    ) -> Result<Option<Claim>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("claiming a match"))?;
        tx.execute(
            &format!(
                "UPDATE kk_matches SET state = 'failed', lease_until = NULL,
                     last_error = COALESCE(last_error || '; ', '') || 'lease expired on the last allowed attempt'
                 WHERE state = 'running' AND lease_until < {NOW_MS} AND attempts >= ?1"
            ),
            params![max_attempts],
        )
        .map_err(err("failing matches out of attempts"))?;
        let claim = tx
            .query_row(
                &format!(
                    "UPDATE kk_matches SET state = 'running', worker = ?1, attempts = attempts + 1,
                         lease_until = {NOW_MS} + ?2
                     WHERE rowid = (SELECT rowid FROM kk_matches
                                    WHERE (state = 'queued' OR (state = 'running' AND lease_until < {NOW_MS}))
                                      AND attempts < ?3
                                    ORDER BY contest, idx LIMIT 1)
                     RETURNING contest, idx, spec, attempts"
                ),
                params![worker, lease_ms(lease), max_attempts],
                |r| {
                    Ok(Claim {
                        contest: r.get(0)?,
                        index: from_db(r.get(1)?),
                        spec_json: r.get(2)?,
                        attempt: r.get::<_, i64>(3)?.max(0) as u32,
                        worker: worker.to_string(),
                    })
                },
            )
            .optional()
            .map_err(err("claiming a match"))?;
        tx.commit().map_err(err("claiming a match"))?;
        Ok(claim)
    }

    fn heartbeat(&mut self, claim: &Claim, lease: Duration) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                &format!(
                    "UPDATE kk_matches SET lease_until = {NOW_MS} + ?5
                     WHERE contest = ?1 AND idx = ?2 AND worker = ?3 AND attempts = ?4 AND state = 'running'"
                ),
                params![claim.contest, to_db(claim.index), claim.worker, claim.attempt, lease_ms(lease)],
            )
            .map_err(err("extending a lease"))?;
        Ok(n == 1)
    }

    fn release_failed(
        &mut self,
        claim: &Claim,
        error: &str,
        max_attempts: u32,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE kk_matches SET state = CASE WHEN attempts >= ?5 THEN 'failed' ELSE 'queued' END,
                     lease_until = NULL, last_error = ?6
                 WHERE contest = ?1 AND idx = ?2 AND worker = ?3 AND attempts = ?4 AND state = 'running'",
                params![claim.contest, to_db(claim.index), claim.worker, claim.attempt, max_attempts, error],
            )
            .map_err(err("releasing a failed match"))?;
        Ok(())
    }

    fn queue_counts(&mut self, contest: &str) -> Result<QueueCounts, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT state, COUNT(*) FROM kk_matches WHERE contest = ?1 GROUP BY state",
            )
            .map_err(err("counting queued matches"))?;
        let rows = stmt
            .query_map(params![contest], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })
            .map_err(err("counting queued matches"))?;
        let mut counts = QueueCounts::default();
        for row in rows {
            let (state, n) = row.map_err(err("counting queued matches"))?;
            counts.set_state(&state, n)?;
        }
        Ok(counts)
    }

    fn open_matches(&mut self) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM kk_matches WHERE state IN ('queued', 'running')",
                [],
                |r| r.get(0),
            )
            .map_err(err("counting open matches"))?;
        Ok(n.max(0) as u64)
    }

    fn release_host_fault(&mut self, claim: &Claim, error: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE kk_matches SET state = 'queued', attempts = MAX(attempts - 1, 0),
                     lease_until = NULL, last_error = ?5
                 WHERE contest = ?1 AND idx = ?2 AND worker = ?3 AND attempts = ?4 AND state = 'running'",
                params![claim.contest, to_db(claim.index), claim.worker, claim.attempt, error],
            )
            .map_err(err("giving back a match after a host fault"))?;
        Ok(())
    }

    fn program_files(&mut self, contest: &str) -> Result<Vec<ProgramFile>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT entrant, path, sha256 FROM kk_programs WHERE contest = ?1
                 ORDER BY entrant, path",
            )
            .map_err(err("reading program files"))?;
        let rows = stmt
            .query_map(params![contest], |r| {
                Ok(ProgramFile {
                    entrant: r.get(0)?,
                    path: r.get(1)?,
                    sha256: r.get(2)?,
                })
            })
            .map_err(err("reading program files"))?;
        rows.collect::<Result<_, _>>()
            .map_err(err("reading program files"))
    }

    fn record_program_files(
        &mut self,
        contest: &str,
        files: &[ProgramFile],
    ) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("recording program files"))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO kk_programs (contest, entrant, path, sha256) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (contest, entrant, path) DO NOTHING",
                )
                .map_err(err("recording program files"))?;
            for f in files {
                stmt.execute(params![contest, f.entrant, f.path, f.sha256])
                    .map_err(err("recording program files"))?;
            }
        }
        tx.commit().map_err(err("recording program files"))
    }

    fn lock_run(&mut self, holder: &str) -> Result<(), StoreError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if self.run_lock.is_some() {
            return Ok(());
        }
        let lock_path = run_lock_path(path);
        let lock_err = |source| StoreError::RunLock {
            path: path.display().to_string(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path)
            .map_err(lock_err)?;
        // A process being started at this moment (a bot, between its fork and its exec) may
        // still hold a copy of a descriptor a run that just ended had locked: a busy lock is
        // tried again for a moment before it is taken as another run's.
        let patience = std::time::Instant::now() + std::time::Duration::from_secs(1);
        let mut attempt = file.try_lock();
        while matches!(attempt, Err(TryLockError::WouldBlock))
            && std::time::Instant::now() < patience
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
            attempt = file.try_lock();
        }
        match attempt {
            Ok(()) => {
                // Who holds it, for the message of a second run (best effort).
                let _ = file.set_len(0).and_then(|_| {
                    file.rewind()?;
                    file.write_all(holder.as_bytes())
                });
                self.run_lock = Some(file);
                Ok(())
            }
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let text = text.trim();
                Err(StoreError::RunInProgress {
                    path: path.display().to_string(),
                    holder: if text.is_empty() {
                        "a process that has not said who it is".into()
                    } else {
                        text.to_string()
                    },
                })
            }
            Err(TryLockError::Error(e)) => Err(lock_err(e)),
        }
    }

    fn create_ladder_user(&mut self, user: &NewLadderUser) -> Result<(), StoreError> {
        const CONTEXT: &str = "creating a ladder account";
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        let taken: Option<i64> = tx
            .query_row(
                "SELECT 1 FROM kk_ladder_users WHERE name = ?1",
                params![user.name],
                |r| r.get(0),
            )
            .optional()
            .map_err(err(CONTEXT))?;
        if taken.is_some() {
            return Err(StoreError::UserExists(user.name.clone()));
        }
        tx.execute(
            "INSERT INTO kk_ladder_users
                 (name, role, password_hash, token_sha256, signup_code_sha256, created_at)
             VALUES (?1, ?2, NULL, ?3, ?4, ?5)",
            params![
                user.name,
                user.role.as_str(),
                user.token_sha256,
                user.signup_code_sha256,
                now_secs()
            ],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))
    }

    fn ladder_user(&mut self, name: &str) -> Result<Option<LadderUser>, StoreError> {
        self.ladder_user_where("u.name = ?1", name)
    }

    fn ladder_user_by_token(
        &mut self,
        token_sha256: &str,
    ) -> Result<Option<LadderUser>, StoreError> {
        self.ladder_user_where("u.token_sha256 = ?1", token_sha256)
    }

    fn ladder_signup_code_known(&mut self, code_sha256: &str) -> Result<bool, StoreError> {
        const CONTEXT: &str = "checking a sign-up code";
        self.conn
            .query_row(
                "SELECT 1 FROM kk_ladder_users WHERE signup_code_sha256 = ?1",
                params![code_sha256],
                |_| Ok(()),
            )
            .optional()
            .map(|row| row.is_some())
            .map_err(err(CONTEXT))
    }

    fn ladder_sign_up(
        &mut self,
        code_sha256: &str,
        password_hash: &str,
    ) -> Result<Option<String>, StoreError> {
        const CONTEXT: &str = "signing up";
        self.conn
            .query_row(
                "UPDATE kk_ladder_users SET password_hash = ?2, signup_code_sha256 = NULL
                 WHERE signup_code_sha256 = ?1 RETURNING name",
                params![code_sha256, password_hash],
                |r| r.get(0),
            )
            .optional()
            .map_err(err(CONTEXT))
    }

    fn ladder_users(&mut self) -> Result<Vec<LadderUser>, StoreError> {
        const CONTEXT: &str = "listing the ladder accounts";
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {USER_COLUMNS} FROM kk_ladder_users u ORDER BY u.name"
            ))
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map([], user_row)
            .map_err(err(CONTEXT))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(err(CONTEXT))?;
        rows.into_iter().map(ladder_user_from).collect()
    }

    fn ladder_set_disabled(&mut self, name: &str, disabled: bool) -> Result<bool, StoreError> {
        const CONTEXT: &str = "disabling an account";
        let tx = self.conn.transaction().map_err(err(CONTEXT))?;
        let n = tx
            .execute(
                "UPDATE kk_ladder_users SET disabled = ?2 WHERE name = ?1",
                params![name, i64::from(disabled)],
            )
            .map_err(err(CONTEXT))?;
        if disabled {
            tx.execute(
                "DELETE FROM kk_ladder_sessions WHERE username = ?1",
                params![name],
            )
            .map_err(err(CONTEXT))?;
        }
        tx.commit().map_err(err(CONTEXT))?;
        Ok(n > 0)
    }

    fn ladder_set_retired(
        &mut self,
        ladder: &str,
        bot: &str,
        retired: bool,
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "retiring a bot";
        let n = self
            .conn
            .execute(
                "UPDATE kk_ladder_bots SET retired = ?3 WHERE ladder = ?1 AND name = ?2",
                params![ladder, bot, i64::from(retired)],
            )
            .map_err(err(CONTEXT))?;
        Ok(n > 0)
    }

    fn create_ladder_session(
        &mut self,
        id_sha256: &str,
        username: &str,
        csrf_token: &str,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        const CONTEXT: &str = "starting a web session";
        let now = now_secs();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        tx.execute(
            "DELETE FROM kk_ladder_sessions WHERE expires_at <= ?1",
            params![now],
        )
        .map_err(err(CONTEXT))?;
        let n = tx
            .execute(
                "INSERT INTO kk_ladder_sessions
                     (id_sha256, username, csrf_token, created_at, expires_at)
                 SELECT ?1, name, ?3, ?4, ?5 FROM kk_ladder_users WHERE name = ?2",
                params![id_sha256, username, csrf_token, now, expires_at],
            )
            .map_err(err(CONTEXT))?;
        if n == 0 {
            return Err(StoreError::NoSuchUser(username.to_string()));
        }
        tx.commit().map_err(err(CONTEXT))
    }

    fn ladder_session(
        &mut self,
        id_sha256: &str,
        now: i64,
    ) -> Result<Option<LadderSession>, StoreError> {
        const CONTEXT: &str = "reading a web session";
        let row: Option<(UserRow, String, i64)> = self
            .conn
            .query_row(
                &format!(
                    "SELECT {USER_COLUMNS}, s.csrf_token, s.expires_at
                     FROM kk_ladder_sessions s JOIN kk_ladder_users u ON u.name = s.username
                     WHERE s.id_sha256 = ?1 AND s.expires_at > ?2"
                ),
                params![id_sha256, now],
                |r| Ok((user_row(r)?, r.get(6)?, r.get(7)?)),
            )
            .optional()
            .map_err(err(CONTEXT))?;
        row.map(|(user, csrf_token, expires_at)| {
            Ok(LadderSession {
                user: ladder_user_from(user)?,
                csrf_token,
                expires_at,
            })
        })
        .transpose()
    }

    fn delete_ladder_session(&mut self, id_sha256: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "DELETE FROM kk_ladder_sessions WHERE id_sha256 = ?1",
                params![id_sha256],
            )
            .map_err(err("ending a web session"))?;
        Ok(())
    }

    fn ladder_reinvite(
        &mut self,
        name: &str,
        token_sha256: &str,
        signup_code_sha256: &str,
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "inviting an account again";
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        let n = tx
            .execute(
                "UPDATE kk_ladder_users SET token_sha256 = ?2, signup_code_sha256 = ?3,
                     password_hash = NULL WHERE name = ?1",
                params![name, token_sha256, signup_code_sha256],
            )
            .map_err(err(CONTEXT))?;
        tx.execute(
            "DELETE FROM kk_ladder_sessions WHERE username = ?1",
            params![name],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
        Ok(n == 1)
    }

    fn ladder_set_password(
        &mut self,
        name: &str,
        password_hash: &str,
        keep_session: &str,
    ) -> Result<(), StoreError> {
        const CONTEXT: &str = "changing a password";
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        tx.execute(
            "UPDATE kk_ladder_users SET password_hash = ?2 WHERE name = ?1",
            params![name, password_hash],
        )
        .map_err(err(CONTEXT))?;
        tx.execute(
            "DELETE FROM kk_ladder_sessions WHERE username = ?1 AND id_sha256 <> ?2",
            params![name, keep_session],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
        Ok(())
    }

    fn add_bot_version(&mut self, v: &NewBotVersion) -> Result<u64, StoreError> {
        const CONTEXT: &str = "storing a bot version";
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        let now = now_secs();
        let owner: Option<String> = tx
            .query_row(
                "SELECT owner FROM kk_ladder_bots WHERE ladder = ?1 AND name = ?2",
                params![v.ladder, v.bot],
                |r| r.get(0),
            )
            .optional()
            .map_err(err(CONTEXT))?;
        match owner {
            Some(o) if o != v.owner => {
                return Err(StoreError::BotOwnedByOther {
                    ladder: v.ladder.clone(),
                    bot: v.bot.clone(),
                })
            }
            Some(_) => {}
            None => {
                tx.execute(
                    "INSERT INTO kk_ladder_bots (ladder, name, owner, created_at)
                     VALUES (?1, ?2, ?3, ?4)",
                    params![v.ladder, v.bot, v.owner, now],
                )
                .map_err(err(CONTEXT))?;
            }
        }
        let version: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(version), 0) + 1 FROM kk_ladder_versions
                 WHERE ladder = ?1 AND bot = ?2",
                params![v.ladder, v.bot],
                |r| r.get(0),
            )
            .map_err(err(CONTEXT))?;
        tx.execute(
            "INSERT INTO kk_ladder_versions
                 (ladder, bot, version, language, source_sha256, status, log, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'building', '', ?6)",
            params![v.ladder, v.bot, version, v.language, v.source_sha256, now],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
        Ok(version as u64)
    }

    fn set_bot_version_status(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
        status: VersionStatus,
        log: &str,
    ) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE kk_ladder_versions SET status = ?4, log = ?5
                 WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
                params![ladder, bot, version as i64, status.as_str(), log],
            )
            .map_err(err("setting a bot version's status"))?;
        if n == 0 {
            return Err(StoreError::NoSuchVersion {
                ladder: ladder.to_string(),
                bot: bot.to_string(),
                version,
            });
        }
        Ok(())
    }

    fn bot_owner(&mut self, ladder: &str, bot: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT owner FROM kk_ladder_bots WHERE ladder = ?1 AND name = ?2",
                params![ladder, bot],
                |r| r.get(0),
            )
            .optional()
            .map_err(err("reading a bot's owner"))
    }

    fn bot_versions(&mut self, ladder: &str, bot: &str) -> Result<Vec<BotVersion>, StoreError> {
        self.versions_where("v.bot = ?2 ORDER BY v.version", ladder, bot)
    }

    fn active_bot_versions(&mut self, ladder: &str) -> Result<Vec<BotVersion>, StoreError> {
        self.versions_where(
            &crate::ladder_builds::active_versions("?2"),
            ladder,
            VersionStatus::Active.as_str(),
        )
    }

    fn bot_versions_in(
        &mut self,
        ladder: &str,
        status: VersionStatus,
    ) -> Result<Vec<BotVersion>, StoreError> {
        self.versions_where(
            "v.status = ?2 ORDER BY v.bot, v.version",
            ladder,
            status.as_str(),
        )
    }
}
