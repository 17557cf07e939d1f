//! The results store of Kakehiki contests.
//!
//! One trait, [`Store`], with two backends sharing one schema and one list of migrations:
//!
//! * [`SqliteStore`]: an embedded SQLite file (the default), in WAL mode. One process at a time
//!   runs a contest against it; every stored match is one transaction, so a process killed at
//!   any moment leaves either the whole result or nothing.
//! * [`PgStore`]: PostgreSQL, for many workers on many machines. Workers claim queued matches
//!   with `FOR UPDATE SKIP LOCKED` under a lease that they extend by heartbeats; a lease that
//!   expires returns the match to the queue; attempts are capped; results are keyed by
//!   (contest, match index) so a late duplicate is ignored.
//!
//! Replays are kept in the store, compressed with zstd.
//!
//! Each query is written once, for both backends: the trait methods are implemented over one
//! small interface to a connection (`db.rs`), and `sqlite.rs` and `pg.rs` hold only opening the
//! database and the hooks where the two really differ (the clock, blob sizes, row locks).

mod db;
mod ladder_builds;
mod ladder_play;
mod pg;
mod queries;
mod schema;
mod sqlite;

use std::collections::BTreeSet;
use std::time::Duration;

pub use ladder_builds::{abandoned_log, BuildClaim, LadderBuilds, Program, Pruned, StorageUse};
pub use ladder_play::{
    entrant_bot, ladder_contest, version_entrant, LadderEntrant, LadderPlay, LadderRating,
    LadderSeat, LadderState, INITIAL_MU, INITIAL_SIGMA, LADDER_FINGERPRINT,
};
pub use pg::PgStore;
pub use sqlite::{run_lock_path, SqliteStore};

/// Open a store read-only: PostgreSQL when `database_url` is given, otherwise the existing
/// SQLite file `db_path`, opened read-only (it works in a read-only directory, creates no file
/// and a mistyped path is [`StoreError::NoDatabase`]). Writing methods fail.
pub fn open_store_read_only(
    db_path: &std::path::Path,
    database_url: Option<&str>,
) -> Result<Box<dyn Store>, StoreError> {
    match database_url {
        Some(url) => Ok(Box::new(PgStore::connect(url)?)),
        None => Ok(Box::new(SqliteStore::open_read_only(db_path)?)),
    }
}

/// zstd level used for replays: fast, and JSON lines compress well at any level.
const ZSTD_LEVEL: i32 = 3;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open sqlite database {path}: {source}")]
    OpenSqlite {
        path: String,
        source: rusqlite::Error,
    },
    #[error("cannot create sqlite database {path}: {source}")]
    Create {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid postgresql url {url}: {source}")]
    BadUrl {
        url: String,
        source: postgres::Error,
    },
    #[error("cannot connect to postgresql at {url}: {source}")]
    Connect {
        url: String,
        source: postgres::Error,
    },
    #[error("sqlite error while {context}: {source}")]
    Sqlite {
        context: &'static str,
        source: rusqlite::Error,
    },
    #[error("postgresql error while {context}: {source}")]
    Postgres {
        context: &'static str,
        source: postgres::Error,
    },
    #[error(
        "contest {name:?} is already in the store with a different definition ({}; stored \
         fingerprint {stored}, this definition {given}): results of one contest must come from one \
         definition; use a new contest name or another database",
        if changed.is_empty() { "the stored one cannot be compared".to_string() } else { format!("changed: {}", changed.join(", ")) }
    )]
    DefinitionChanged {
        name: String,
        stored: String,
        given: String,
        /// What differs, as paths into the definition (`seed`, `entrants[2].seat`), at most ten.
        changed: Vec<String>,
    },
    #[error("database schema version {found} is newer than this program supports (up to {supported}); upgrade kakehiki")]
    SchemaTooNew { found: i64, supported: i64 },
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("cannot compress replay: {0}")]
    Compress(std::io::Error),
    #[error("no sqlite database at {0}: check the path (--db); reading never creates a database")]
    NoDatabase(String),
    #[error(
        "another `kakehiki contest run` is using the sqlite database {path} ({holder}): one process runs \
         contests on a SQLite file at a time; wait for it to finish or stop it, or use PostgreSQL \
         (--database-url) and workers to play matches in parallel"
    )]
    RunInProgress { path: String, holder: String },
    #[error("a ladder account named {0:?} already exists")]
    UserExists(String),
    #[error("no ladder account named {0:?}")]
    NoSuchUser(String),
    #[error("the bot {bot:?} of ladder {ladder:?} belongs to another contestant")]
    BotOwnedByOther { ladder: String, bot: String },
    #[error("no bot {bot:?} with a version {version} on ladder {ladder:?}")]
    NoSuchVersion {
        ladder: String,
        bot: String,
        version: u64,
    },
    #[error("cannot lock the sqlite database {path} for a run: {source}")]
    RunLock {
        path: String,
        source: std::io::Error,
    },
}

impl StoreError {
    /// Whether the error is a lost or refused connection to the database server (it may come
    /// back: reconnect and retry), as opposed to a bad query, bad data or a bad URL.
    pub fn is_connection(&self) -> bool {
        match self {
            StoreError::Connect { .. } => true,
            StoreError::Postgres { source, .. } => {
                source.is_closed()
                    || source.code().is_some_and(|c| {
                        // Class 08 (connection exception), 57P01-57P03 (admin shutdown, crash
                        // shutdown, cannot connect now).
                        c.code().starts_with("08")
                            || matches!(c.code(), "57P01" | "57P02" | "57P03")
                    })
                    || std::error::Error::source(source)
                        .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some())
            }
            _ => false,
        }
    }
}

/// What a ladder account may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LadderRole {
    /// Uploads bots and sees their own sources, build logs and stderr.
    Contestant,
    /// Sees everything.
    Organiser,
}

impl LadderRole {
    pub fn as_str(self) -> &'static str {
        match self {
            LadderRole::Contestant => "contestant",
            LadderRole::Organiser => "organiser",
        }
    }

    pub(crate) fn parse(s: &str) -> Result<LadderRole, StoreError> {
        match s {
            "contestant" => Ok(LadderRole::Contestant),
            "organiser" => Ok(LadderRole::Organiser),
            other => Err(StoreError::Corrupt(format!(
                "unknown ladder role {other:?}"
            ))),
        }
    }
}

/// A ladder account to create: secrets already hashed by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLadderUser {
    pub name: String,
    pub role: LadderRole,
    /// SHA-256 of the API token, lowercase hex.
    pub token_sha256: String,
    /// SHA-256 of the one-time sign-up code, lowercase hex.
    pub signup_code_sha256: String,
}

/// A stored ladder account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LadderUser {
    pub name: String,
    pub role: LadderRole,
    /// The argon2 hash of the password (PHC string), once the contestant has signed up.
    pub password_hash: Option<String>,
    /// Whether the sign-up code is still unused.
    pub signup_pending: bool,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
    /// Disabled by an organiser: it can neither log in nor use its token, and its bot is not
    /// matched.
    pub disabled: bool,
}

/// A web session of a ladder account, found by the SHA-256 of its cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LadderSession {
    /// The account signed in.
    pub user: LadderUser,
    /// The session's CSRF token: every form posted in this session must carry it.
    pub csrf_token: String,
    /// Seconds since the Unix epoch after which the session is over.
    pub expires_at: i64,
}

/// Where a bot version stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionStatus {
    Building,
    Active,
    BuildFailed,
    CheckFailed,
    Refused,
}

impl VersionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            VersionStatus::Building => "building",
            VersionStatus::Active => "active",
            VersionStatus::BuildFailed => "build_failed",
            VersionStatus::CheckFailed => "check_failed",
            VersionStatus::Refused => "refused",
        }
    }

    pub fn parse(s: &str) -> Option<VersionStatus> {
        Some(match s {
            "building" => VersionStatus::Building,
            "active" => VersionStatus::Active,
            "build_failed" => VersionStatus::BuildFailed,
            "check_failed" => VersionStatus::CheckFailed,
            "refused" => VersionStatus::Refused,
            _ => return None,
        })
    }
}

/// A new upload of a bot: its version is the bot's next number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBotVersion {
    pub ladder: String,
    pub bot: String,
    /// The uploading account; a bot belongs to the account that first uploaded it.
    pub owner: String,
    pub language: String,
    /// SHA-256 of the upload, lowercase hex.
    pub source_sha256: String,
}

/// A stored bot version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotVersion {
    pub ladder: String,
    pub bot: String,
    pub owner: String,
    pub version: u64,
    pub language: String,
    pub source_sha256: String,
    pub status: VersionStatus,
    /// Refusal, build output and `check` diagnosis.
    pub log: String,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
}

/// Seconds since the Unix epoch.
fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// A program file of a contest entrant and the SHA-256 of its content when it was recorded.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ProgramFile {
    pub entrant: String,
    pub path: String,
    pub sha256: String,
}

/// A contest as the store keeps it: its name, the fingerprint of its definition and the
/// definition itself (so standings need only the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContestRow {
    pub name: String,
    pub fingerprint: String,
    pub definition: String,
}

impl ContestRow {
    /// What registering this contest returns when the store already has a contest of its name
    /// with fingerprint `stored`: `false` (not new) for the same definition, otherwise
    /// [`StoreError::DefinitionChanged`].
    /// `stored_definition` is the stored row's definition, to name what changed.
    pub(crate) fn already_registered(
        &self,
        stored: String,
        stored_definition: &str,
    ) -> Result<bool, StoreError> {
        if stored == self.fingerprint {
            Ok(false)
        } else {
            Err(StoreError::DefinitionChanged {
                name: self.name.clone(),
                stored,
                given: self.fingerprint.clone(),
                changed: changed_paths(stored_definition, &self.definition),
            })
        }
    }
}

/// Where two JSON definitions differ, as paths (`seed`, `options.turn_ms`, `entrants[2].seat`,
/// `entrants` when a list's length changed), at most ten; empty when either is not JSON.
pub fn changed_paths(old: &str, new: &str) -> Vec<String> {
    fn walk(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
        use serde_json::Value;
        if out.len() >= 10 || a == b {
            return;
        }
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let null = Value::Null;
                    walk(
                        &join(k),
                        x.get(k).unwrap_or(&null),
                        y.get(k).unwrap_or(&null),
                        out,
                    );
                }
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    walk(&format!("{path}[{i}]"), p, q, out);
                }
            }
            _ => out.push(if path.is_empty() {
                "the whole definition".into()
            } else {
                path.to_string()
            }),
        }
    }
    let (Ok(a), Ok(b)) = (
        serde_json::from_str::<serde_json::Value>(old),
        serde_json::from_str::<serde_json::Value>(new),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk("", &a, &b, &mut out);
    out
}

/// A finished match to store.
#[derive(Debug, Clone, Copy)]
pub struct NewResult<'a> {
    pub contest: &'a str,
    pub index: u64,
    /// Entrant names in seat order.
    pub entrants: &'a [String],
    /// The match report as JSON.
    pub report_json: &'a str,
    /// The replay, JSON lines; stored compressed.
    pub replay: &'a str,
    /// Wall-clock time the match took.
    pub duration_ms: u64,
    /// Who played it (host and process of a worker, `local` for `contest run`).
    pub worker: &'a str,
}

/// A stored result, without its replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResult {
    pub index: u64,
    pub entrants: Vec<String>,
    pub report_json: String,
    pub duration_ms: u64,
    pub worker: String,
}

impl StoredResult {
    /// A result from the columns `idx, entrants, report, duration_ms, worker` of a `kk_results`
    /// row of `contest`.
    pub(crate) fn from_row(
        contest: &str,
        idx: i64,
        entrants: &str,
        report_json: String,
        duration_ms: i64,
        worker: String,
    ) -> Result<Self, StoreError> {
        let index = from_db(idx);
        Ok(StoredResult {
            index,
            entrants: entrants_from_json(contest, index, entrants)?,
            report_json,
            duration_ms: duration_ms.max(0) as u64,
            worker,
        })
    }
}

/// Which results a query reads.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pick {
    All,
    One(u64),
    /// Match indices `first..=last`.
    Range(u64, u64),
}

impl Pick {
    /// The lowest and highest match index to read (bind parameters of the range statement).
    pub(crate) fn bounds(self) -> (i64, i64) {
        match self {
            Pick::All => (i64::MIN, i64::MAX),
            Pick::One(i) => (to_db(i), to_db(i)),
            Pick::Range(a, b) => (to_db(a), to_db(b)),
        }
    }
}

/// A match to put in the queue: its index and everything a worker needs to play it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedMatch {
    pub index: u64,
    pub spec_json: String,
}

/// A match claimed by a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub contest: String,
    pub index: u64,
    pub spec_json: String,
    /// 1 for the first attempt.
    pub attempt: u32,
    pub worker: String,
}

/// How many matches of a contest are in each state of the queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounts {
    pub queued: u64,
    pub running: u64,
    pub done: u64,
    pub failed: u64,
}

impl QueueCounts {
    pub fn total(&self) -> u64 {
        self.queued + self.running + self.done + self.failed
    }

    /// Record `count` matches in queue state `state` (a `kk_matches.state` value, as read by
    /// `SELECT state, COUNT(*) ... GROUP BY state`).
    pub(crate) fn set_state(&mut self, state: &str, count: i64) -> Result<(), StoreError> {
        let n = count.max(0) as u64;
        match state {
            "queued" => self.queued = n,
            "running" => self.running = n,
            "done" => self.done = n,
            "failed" => self.failed = n,
            other => {
                return Err(StoreError::Corrupt(format!(
                    "unknown match state {other:?}"
                )))
            }
        }
        Ok(())
    }
}

/// A match that could not be played, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedMatch {
    pub index: u64,
    pub attempts: u32,
    pub error: String,
}

/// The results store. Both backends implement every method with the same meaning.
pub trait Store: LadderPlay + LadderBuilds + Send {
    /// `sqlite` or `postgresql`.
    fn backend(&self) -> &'static str;

    /// Record a contest. Returns `true` if it was new. A contest already stored under the same
    /// name with another fingerprint is an error ([`StoreError::DefinitionChanged`]).
    fn register_contest(&mut self, contest: &ContestRow) -> Result<bool, StoreError>;

    /// A stored contest by name.
    fn contest(&mut self, name: &str) -> Result<Option<ContestRow>, StoreError>;

    /// Names of all stored contests (not the contest rows of ladders, whose matches their
    /// matchmaker queues).
    fn contest_names(&mut self) -> Result<Vec<String>, StoreError>;

    /// Indices of the matches of `contest` whose result is stored.
    fn stored_indices(&mut self, contest: &str) -> Result<BTreeSet<u64>, StoreError>;

    /// How many results of `contest` are stored; also the sequence number of the last one
    /// stored (results are numbered 1, 2, ... in the order they were stored). One key lookup:
    /// the web UI asks it on every request and reads only what is new.
    fn result_count(&mut self, contest: &str) -> Result<u64, StoreError>;

    /// The results of `contest` stored after sequence number `after` (0: all of them), in
    /// storing order, each with its sequence number. A reader holding every result up to `n`
    /// gets exactly the ones it lacks.
    fn results_since(
        &mut self,
        contest: &str,
        after: u64,
    ) -> Result<Vec<(u64, StoredResult)>, StoreError>;

    /// Store a finished match (report and compressed replay) in one transaction, and mark its
    /// queue entry done if it has one. Returns `false`, storing nothing, if a result for this
    /// (contest, index) is already stored: a late duplicate is ignored.
    fn put_result(&mut self, result: &NewResult<'_>) -> Result<bool, StoreError>;

    /// All stored results of a contest, by match index.
    fn results(&mut self, contest: &str) -> Result<Vec<StoredResult>, StoreError>;

    /// The stored results of `contest` whose match index is in `first..=last`, by index: one
    /// page of a match list is one range query, not a read of every result.
    fn results_range(
        &mut self,
        contest: &str,
        first: u64,
        last: u64,
    ) -> Result<Vec<StoredResult>, StoreError>;

    /// The stored result of one match, if there is one.
    fn result(&mut self, contest: &str, index: u64) -> Result<Option<StoredResult>, StoreError>;

    /// The replay of one stored match, decompressed.
    fn replay(&mut self, contest: &str, index: u64) -> Result<Option<String>, StoreError>;

    /// Record that a match could not be played (setup error, crash of the player). A later
    /// run retries it. Ignored if its result is already stored.
    fn record_failure(
        &mut self,
        contest: &str,
        index: u64,
        spec_json: &str,
        error: &str,
    ) -> Result<(), StoreError>;

    /// Matches of a contest marked failed, by index.
    fn failures(&mut self, contest: &str) -> Result<Vec<FailedMatch>, StoreError>;

    /// Put matches in the queue. Matches already queued, running or done are left as they are;
    /// failed ones are queued again with their attempts reset. Returns how many were (re)queued.
    fn enqueue(&mut self, contest: &str, matches: &[QueuedMatch]) -> Result<u64, StoreError>;

    /// Claim the next queued match (or a running one whose lease expired) for `worker`, with a
    /// lease of `lease`. Matches that have had `max_attempts` attempts are not claimed; if their
    /// lease expired they are marked failed.
    fn claim(
        &mut self,
        worker: &str,
        lease: Duration,
        max_attempts: u32,
    ) -> Result<Option<Claim>, StoreError>;

    /// Extend the lease of a claim. Returns `false` if the claim was lost (its lease expired and
    /// the match went to another worker, or it was finished by someone else).
    fn heartbeat(&mut self, claim: &Claim, lease: Duration) -> Result<bool, StoreError>;

    /// Give a claimed match back after a failure: queued again, or failed once it has had
    /// `max_attempts` attempts.
    fn release_failed(
        &mut self,
        claim: &Claim,
        error: &str,
        max_attempts: u32,
    ) -> Result<(), StoreError>;

    /// Queue state of a contest.
    fn queue_counts(&mut self, contest: &str) -> Result<QueueCounts, StoreError>;

    /// Matches of any contest queued or running (a worker with nothing to claim and nothing
    /// open may stop).
    fn open_matches(&mut self) -> Result<u64, StoreError>;

    /// Give a claimed match back after a host fault (the machine, not the match, failed): queued
    /// again without counting the attempt.
    fn release_host_fault(&mut self, claim: &Claim, error: &str) -> Result<(), StoreError>;

    /// The program files recorded for the entrants of `contest`, ordered.
    fn program_files(&mut self, contest: &str) -> Result<Vec<ProgramFile>, StoreError>;

    /// Record program files of `contest`'s entrants; files already recorded (same entrant and
    /// path) keep their first hash.
    fn record_program_files(
        &mut self,
        contest: &str,
        files: &[ProgramFile],
    ) -> Result<(), StoreError>;

    /// Make this store the only one running contests on its database until it is dropped. A
    /// SQLite file is locked (an OS lock on `<file>.lock`, released even when the process is
    /// killed), so a second `contest run` on it fails with [`StoreError::RunInProgress`] instead
    /// of playing every match again (after a second of patience: a process being started may
    /// briefly hold a copy of a finished run's lock); `holder` describes this run for that
    /// message. PostgreSQL
    /// needs no lock: its queue hands each match to one runner.
    fn lock_run(&mut self, holder: &str) -> Result<(), StoreError>;

    /// Create a ladder account ([`StoreError::UserExists`] if the name is taken).
    fn create_ladder_user(&mut self, user: &NewLadderUser) -> Result<(), StoreError>;

    /// The ladder account named `name`.
    fn ladder_user(&mut self, name: &str) -> Result<Option<LadderUser>, StoreError>;

    /// The ladder account whose API token hashes to `token_sha256`.
    fn ladder_user_by_token(
        &mut self,
        token_sha256: &str,
    ) -> Result<Option<LadderUser>, StoreError>;

    /// The account an unused sign-up code (its hash `code_sha256`) signs up: shown on the
    /// sign-up form, and checked before a password is hashed for it. `None` for an unknown or
    /// already used code.
    fn ladder_signup_name(&mut self, code_sha256: &str) -> Result<Option<String>, StoreError>;

    /// Give account `name` a new API token (its hash): the old token stops working at once.
    /// Returns whether the account exists.
    fn ladder_set_token(&mut self, name: &str, token_sha256: &str) -> Result<bool, StoreError>;

    /// Use a one-time sign-up code: the account whose unused code hashes to `code_sha256` gets
    /// `password_hash` and the code is spent. Returns the account's name, or `None` for an
    /// unknown or already used code.
    fn ladder_sign_up(
        &mut self,
        code_sha256: &str,
        password_hash: &str,
    ) -> Result<Option<String>, StoreError>;

    /// Every ladder account, by name.
    fn ladder_users(&mut self) -> Result<Vec<LadderUser>, StoreError>;

    /// Disable or enable the account `name`; disabling ends its sessions. `false` if there is
    /// no such account.
    fn ladder_set_disabled(&mut self, name: &str, disabled: bool) -> Result<bool, StoreError>;

    /// Retire bot `bot` of `ladder` (its versions are matched no more) or bring it back.
    /// `false` if there is no such bot.
    fn ladder_set_retired(
        &mut self,
        ladder: &str,
        bot: &str,
        retired: bool,
    ) -> Result<bool, StoreError>;

    /// Start a web session of account `username`: the store keeps `id_sha256` (the SHA-256 of
    /// the session cookie, never the cookie), the session's CSRF token and when it expires
    /// (seconds since the Unix epoch). Sessions already expired are deleted on the way.
    fn create_ladder_session(
        &mut self,
        id_sha256: &str,
        username: &str,
        csrf_token: &str,
        expires_at: i64,
    ) -> Result<(), StoreError>;

    /// The session whose cookie hashes to `id_sha256`, with its account; `None` when there is
    /// none or it expired at or before `now` (seconds since the Unix epoch).
    fn ladder_session(
        &mut self,
        id_sha256: &str,
        now: i64,
    ) -> Result<Option<LadderSession>, StoreError>;

    /// End the session whose cookie hashes to `id_sha256` (logging out); no error if there is
    /// none.
    fn delete_ladder_session(&mut self, id_sha256: &str) -> Result<(), StoreError>;

    /// Invite an existing account again (a lost password, a leaked token): it gets a new API
    /// token and a new one-time sign-up code (their hashes), its password is cleared until the
    /// code is used, and every session of it ends. `false` when there is no such account.
    fn ladder_reinvite(
        &mut self,
        name: &str,
        token_sha256: &str,
        signup_code_sha256: &str,
    ) -> Result<bool, StoreError>;

    /// Change an account's password hash, in one transaction with the end of every session of
    /// it but `keep_session` (the session that changed it).
    fn ladder_set_password(
        &mut self,
        name: &str,
        password_hash: &str,
        keep_session: &str,
    ) -> Result<(), StoreError>;

    /// Store a new version of a bot (the bot is created on its first upload, owned by the
    /// uploader; [`StoreError::BotOwnedByOther`] when another account owns it), with status
    /// `building` and an empty log. Returns its version number (1, 2, ...).
    fn add_bot_version(&mut self, v: &NewBotVersion) -> Result<u64, StoreError>;

    /// Set a version's status and log ([`StoreError::NoSuchVersion`] if there is none).
    fn set_bot_version_status(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
        status: VersionStatus,
        log: &str,
    ) -> Result<(), StoreError>;

    /// The owner of a bot (`None` for a bot that does not exist).
    fn bot_owner(&mut self, ladder: &str, bot: &str) -> Result<Option<String>, StoreError>;

    /// Every version of a bot, oldest first.
    fn bot_versions(&mut self, ladder: &str, bot: &str) -> Result<Vec<BotVersion>, StoreError>;

    /// The newest active version of each bot of `ladder`, by bot name.
    fn active_bot_versions(&mut self, ladder: &str) -> Result<Vec<BotVersion>, StoreError>;

    /// Every version of `ladder` in `status`, by bot and version (a restarted server finds the
    /// versions still `building`).
    fn bot_versions_in(
        &mut self,
        ladder: &str,
        status: VersionStatus,
    ) -> Result<Vec<BotVersion>, StoreError>;
}

/// Open a store: PostgreSQL when `database_url` is given, otherwise the SQLite file `db_path`.
pub fn open_store(
    db_path: &std::path::Path,
    database_url: Option<&str>,
) -> Result<Box<dyn Store>, StoreError> {
    match database_url {
        Some(url) => Ok(Box::new(PgStore::connect(url)?)),
        None => Ok(Box::new(SqliteStore::open(db_path)?)),
    }
}

pub(crate) fn compress(text: &str) -> Result<Vec<u8>, StoreError> {
    zstd::encode_all(text.as_bytes(), ZSTD_LEVEL).map_err(StoreError::Compress)
}

pub(crate) fn decompress(contest: &str, index: u64, bytes: &[u8]) -> Result<String, StoreError> {
    let raw = zstd::decode_all(bytes).map_err(|e| {
        StoreError::Corrupt(format!(
            "replay of {contest} match {index} does not decompress: {e}"
        ))
    })?;
    String::from_utf8(raw).map_err(|e| {
        StoreError::Corrupt(format!(
            "replay of {contest} match {index} is not utf-8: {e}"
        ))
    })
}

pub(crate) fn entrants_to_json(entrants: &[String]) -> String {
    serde_json::to_string(entrants).unwrap_or_else(|_| "[]".to_string())
}

fn entrants_from_json(contest: &str, index: u64, text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::Corrupt(format!(
            "entrants of {contest} match {index} are not a JSON list: {e}"
        ))
    })
}

/// Indices are stored as signed 64-bit integers (PostgreSQL has no unsigned type).
/// A lease in whole milliseconds for the database, capped at `i64::MAX` (a plain cast would wrap
/// a huge lease into a negative one, already expired).
pub(crate) fn lease_ms(lease: Duration) -> i64 {
    lease.as_millis().min(i64::MAX as u128) as i64
}

pub(crate) fn to_db(n: u64) -> i64 {
    n as i64
}

pub(crate) fn from_db(n: i64) -> u64 {
    n as u64
}

/// For tests: the PostgreSQL server of `KAKEHIKI_TEST_DATABASE_URL` (`.ci/postgres.sh` starts
/// one and prints it). Without it a test skips, saying so, except under `KAKEHIKI_CI`, where a
/// skipped PostgreSQL test would pass without testing anything: there it fails.
pub fn test_database_url() -> Option<String> {
    match std::env::var("KAKEHIKI_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("KAKEHIKI_CI").is_some() => panic!(
            "KAKEHIKI_CI is set but KAKEHIKI_TEST_DATABASE_URL is not: CI must run the PostgreSQL \
             tests (.ci/run starts a server with .ci/postgres.sh)"
        ),
        _ => {
            eprintln!(
                "SKIPPED: this PostgreSQL test needs KAKEHIKI_TEST_DATABASE_URL \
                 (run `eval \"$(.ci/postgres.sh)\"` to start a local server)"
            );
            None
        }
    }
}

/// For tests: `url` (a [`test_database_url`]) with its connections working in a new, empty
/// schema named after `tag`, the process and the clock, so tests share one server without
/// seeing each other's tables. Panics when the server cannot be reached (a test's setup).
pub fn fresh_test_schema(url: &str, tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let schema = format!("t_{tag}_{}_{}", std::process::id(), nanos % 1_000_000_000);
    let mut client = postgres::Client::connect(url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", redact_url(url)));
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .unwrap_or_else(|e| panic!("cannot create schema {schema}: {e}"));
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// A database URL with its password replaced by `***`, for messages.
pub fn redact_url(url: &str) -> String {
    // postgres://user:password@host/db  ->  postgres://user:***@host/db
    if let Some(scheme_end) = url.find("://") {
        let rest = &url[scheme_end + 3..];
        if let Some(at) = rest.rfind('@') {
            let userinfo = &rest[..at];
            if let Some(colon) = userinfo.find(':') {
                return format!(
                    "{}{}:***{}",
                    &url[..scheme_end + 3],
                    &userinfo[..colon],
                    &rest[at..]
                );
            }
        }
    }
    // key=value form: password=secret
    let mut out = Vec::new();
    for part in url.split(' ') {
        if part.starts_with("password=") {
            out.push("password=***".to_string());
        } else {
            out.push(part.to_string());
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_are_whole_milliseconds_capped_not_wrapped() {
        assert_eq!(lease_ms(Duration::from_micros(1_500_999)), 1500);
        assert_eq!(lease_ms(Duration::MAX), i64::MAX);
    }

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            redact_url("postgres://u:secret@localhost:5432/db"),
            "postgres://u:***@localhost:5432/db"
        );
        assert_eq!(
            redact_url("postgres://u@localhost/db"),
            "postgres://u@localhost/db"
        );
        assert_eq!(
            redact_url("host=x password=secret dbname=d"),
            "host=x password=*** dbname=d"
        );
    }

    #[test]
    fn a_stored_contest_is_the_same_or_a_changed_definition() {
        let c = ContestRow {
            name: "c".into(),
            fingerprint: "new".into(),
            definition: r#"{"seed": 2, "options": {"turn_ms": "500"}, "entrants": [{"seat": "a"}, {"seat": "c"}]}"#.into(),
        };
        assert!(!c.already_registered("new".into(), "{}").unwrap());
        let old = r#"{"seed": 1, "options": {"turn_ms": "500"}, "entrants": [{"seat": "a"}, {"seat": "b"}]}"#;
        let err = c.already_registered("old".into(), old).unwrap_err();
        assert!(
            matches!(&err, StoreError::DefinitionChanged { name, stored, given, changed }
                if name == "c" && stored == "old" && given == "new"
                    && changed == &["entrants[1].seat", "seed"]),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("(changed: entrants[1].seat, seed;"),
            "{err}"
        );
        // A list that grew is named whole; an unreadable stored definition is said so.
        assert_eq!(
            changed_paths(r#"{"entrants": [1]}"#, r#"{"entrants": [1, 2]}"#),
            ["entrants"]
        );
        let err = c.already_registered("old".into(), "not json").unwrap_err();
        assert!(
            err.to_string()
                .contains("the stored one cannot be compared"),
            "{err}"
        );
    }

    #[test]
    fn queue_states_fill_their_count() {
        let mut counts = QueueCounts::default();
        for (state, n) in [("queued", 1), ("running", 2), ("done", 3), ("failed", -4)] {
            counts.set_state(state, n).unwrap();
        }
        assert_eq!(
            counts,
            QueueCounts {
                queued: 1,
                running: 2,
                done: 3,
                failed: 0
            }
        );
        let err = counts.set_state("lost", 1).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
        assert_eq!(
            err.to_string(),
            "stored data is corrupt: unknown match state \"lost\""
        );
    }

    #[test]
    fn result_rows_decode_or_report_corrupt_entrants() {
        let r = StoredResult::from_row("c", 7, "[\"a\",\"b\"]", "{}".into(), -1, "w".into());
        assert_eq!(
            r.unwrap(),
            StoredResult {
                index: 7,
                entrants: vec!["a".into(), "b".into()],
                report_json: "{}".into(),
                duration_ms: 0,
                worker: "w".into(),
            }
        );
        let err = StoredResult::from_row("c", 7, "a,b", "{}".into(), 5, "w".into()).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
        assert!(
            err.to_string()
                .contains("entrants of c match 7 are not a JSON list"),
            "{err}"
        );
    }

    #[test]
    fn compression_round_trips() {
        let text = "{\"event\":\"header\"}\n".repeat(100);
        let packed = compress(&text).unwrap();
        assert!(packed.len() < text.len());
        assert_eq!(decompress("c", 1, &packed).unwrap(), text);
        assert!(matches!(
            decompress("c", 1, b"not zstd"),
            Err(StoreError::Corrupt(_))
        ));
    }
}
