//! The schema, as one list of migrations shared by both backends.
//!
//! Migration `n` (1-based) brings the schema from version `n - 1` to `n`. The only difference
//! between the backends is the binary column type, written `{blob}` here (`BLOB` in SQLite,
//! `BYTEA` in PostgreSQL). The applied version is kept in `kk_schema`.

use std::ops::RangeInclusive;

use crate::db::{args, Tx};
use crate::StoreError;

/// Every migration, in order. Never edit one that has shipped; append a new one.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: contests, the match queue, results with compressed replays.
    "CREATE TABLE kk_contests (
        name TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        definition TEXT NOT NULL
    );
    CREATE TABLE kk_matches (
        contest TEXT NOT NULL REFERENCES kk_contests(name),
        idx BIGINT NOT NULL,
        spec TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        worker TEXT,
        lease_until BIGINT,
        last_error TEXT,
        PRIMARY KEY (contest, idx)
    );
    CREATE INDEX kk_matches_by_state ON kk_matches (state, contest, idx);
    CREATE TABLE kk_results (
        contest TEXT NOT NULL REFERENCES kk_contests(name),
        idx BIGINT NOT NULL,
        entrants TEXT NOT NULL,
        report TEXT NOT NULL,
        replay {blob} NOT NULL,
        replay_bytes BIGINT NOT NULL,
        duration_ms BIGINT NOT NULL,
        worker TEXT NOT NULL,
        PRIMARY KEY (contest, idx)
    );",
    // 2: the program files of each contest's entrants, by content hash, so a bot changed under
    // the same command line is noticed instead of mixed into one contest.
    "CREATE TABLE kk_programs (
        contest TEXT NOT NULL REFERENCES kk_contests(name),
        entrant TEXT NOT NULL,
        path TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        PRIMARY KEY (contest, entrant, path)
    );",
    // 3: a per-contest count of stored results, bumped in the transaction that stores one,
    // and each result's place in that count (`seq`). Readers (the web UI) ask for the count,
    // one key lookup, and fetch only the results stored after the ones they hold. The count's
    // row is locked by the writer from the bump to the commit, so sequence numbers become
    // visible in order: a reader that sees count N sees every result numbered up to N.
    // Results stored before this migration are numbered in match-index order.
    "CREATE TABLE kk_result_counts (
        contest TEXT PRIMARY KEY REFERENCES kk_contests(name),
        results BIGINT NOT NULL
    );
    ALTER TABLE kk_results ADD COLUMN seq BIGINT;
    UPDATE kk_results SET seq = numbered.n
        FROM (SELECT contest, idx, ROW_NUMBER() OVER (PARTITION BY contest ORDER BY idx) AS n
              FROM kk_results) AS numbered
        WHERE kk_results.contest = numbered.contest AND kk_results.idx = numbered.idx;
    INSERT INTO kk_result_counts (contest, results)
        SELECT contest, COUNT(*) FROM kk_results GROUP BY contest;
    CREATE INDEX kk_results_by_seq ON kk_results (contest, seq);",
    // 4: the hosted ladder's accounts, bots and bot versions. Secrets are stored hashed: the
    // API token and the one-time sign-up code as SHA-256 (hex; they are long random strings),
    // the password as argon2 (PHC string, NULL until the contestant signs up).
    "CREATE TABLE kk_ladder_users (
        name TEXT PRIMARY KEY,
        role TEXT NOT NULL CHECK (role IN ('contestant', 'organiser')),
        password_hash TEXT,
        token_sha256 TEXT NOT NULL UNIQUE,
        signup_code_sha256 TEXT UNIQUE,
        created_at BIGINT NOT NULL
    );
    CREATE TABLE kk_ladder_bots (
        ladder TEXT NOT NULL,
        name TEXT NOT NULL,
        owner TEXT NOT NULL REFERENCES kk_ladder_users(name),
        created_at BIGINT NOT NULL,
        PRIMARY KEY (ladder, name)
    );
    CREATE TABLE kk_ladder_versions (
        ladder TEXT NOT NULL,
        bot TEXT NOT NULL,
        version BIGINT NOT NULL,
        language TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('building', 'active', 'build_failed', 'check_failed', 'refused')),
        log TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (ladder, bot, version),
        FOREIGN KEY (ladder, bot) REFERENCES kk_ladder_bots(ladder, name)
    );",
    // 5: the ladder's play, kept incrementally so no page recomputes anything: per ladder the
    // next match index to queue and how many of its stored results (by `seq` of its contest
    // row `ladder/NAME`) are applied to the ratings; one Weng-Lin rating per entrant (a bot
    // version `BOT@vN` or a built-in `builtin:NAME`), `active` while it is matched; one row per
    // seat of each rated match (a bot's matches, its rating over time); and web sessions
    // (the cookie's SHA-256, never the cookie).
    "CREATE TABLE kk_ladder_state (
        ladder TEXT PRIMARY KEY,
        next_match BIGINT NOT NULL,
        rated_seq BIGINT NOT NULL,
        frozen BIGINT NOT NULL DEFAULT 0
    );
    CREATE TABLE kk_ladder_ratings (
        ladder TEXT NOT NULL,
        entrant TEXT NOT NULL,
        bot TEXT NOT NULL,
        version BIGINT NOT NULL,
        owner TEXT NOT NULL,
        active BIGINT NOT NULL,
        mu DOUBLE PRECISION NOT NULL,
        sigma DOUBLE PRECISION NOT NULL,
        games BIGINT NOT NULL,
        wins BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        last_played BIGINT,
        PRIMARY KEY (ladder, entrant)
    );
    CREATE INDEX kk_ladder_ratings_active ON kk_ladder_ratings (ladder, active);
    CREATE TABLE kk_ladder_match_seats (
        ladder TEXT NOT NULL,
        idx BIGINT NOT NULL,
        seat BIGINT NOT NULL,
        entrant TEXT NOT NULL,
        bot TEXT NOT NULL,
        version BIGINT NOT NULL,
        score DOUBLE PRECISION NOT NULL,
        place BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        mu_after DOUBLE PRECISION NOT NULL,
        sigma_after DOUBLE PRECISION NOT NULL,
        played_at BIGINT NOT NULL,
        PRIMARY KEY (ladder, idx, seat)
    );
    CREATE INDEX kk_ladder_match_seats_by_bot ON kk_ladder_match_seats (ladder, bot, idx);
    CREATE TABLE kk_ladder_sessions (
        id_sha256 TEXT PRIMARY KEY,
        username TEXT NOT NULL REFERENCES kk_ladder_users(name),
        csrf_token TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
    );",
    // 6: the ladder's builds, so that any machine builds and any worker runs a bot: per version
    // its upload and build claim (holder, lease, attempts); per ladder its file's text (the
    // recipes and limits a builder needs); per version its built program folder as a gzipped
    // tar with the archive's SHA-256.
    "CREATE TABLE kk_ladder_builds (
        ladder TEXT NOT NULL,
        bot TEXT NOT NULL,
        version BIGINT NOT NULL,
        upload {blob} NOT NULL,
        worker TEXT,
        claimed_until BIGINT,
        attempts BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (ladder, bot, version)
    );
    CREATE TABLE kk_ladder_files (
        ladder TEXT PRIMARY KEY,
        text TEXT NOT NULL
    );
    CREATE TABLE kk_ladder_programs (
        ladder TEXT NOT NULL,
        bot TEXT NOT NULL,
        version BIGINT NOT NULL,
        sha256 TEXT NOT NULL,
        archive {blob} NOT NULL,
        PRIMARY KEY (ladder, bot, version)
    );",
    // 7: when each build was last claimed, so builds are claimed round-robin across accounts
    // (the account served longest ago first; crates/store/src/ladder_builds.rs).
    "ALTER TABLE kk_ladder_builds ADD COLUMN claimed_at BIGINT;",
    // 8: an organiser disables an account (it can no longer log in or use its token, and its
    // bot is matched no more) or retires a bot (matched no more); both keep their history.
    "ALTER TABLE kk_ladder_users ADD COLUMN disabled BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE kk_ladder_bots ADD COLUMN retired BIGINT NOT NULL DEFAULT 0;",
    // 9: built programs kept once by digest: a version points at its program's archive, and
    // the same program built again (the same upload, another account's copy of a starter) takes
    // no more room. Archives no version points at go with the next prune.
    "CREATE TABLE kk_ladder_archives (
        sha256 TEXT PRIMARY KEY,
        archive {blob} NOT NULL
    );
    INSERT INTO kk_ladder_archives (sha256, archive)
        SELECT sha256, archive FROM kk_ladder_programs WHERE true
        ON CONFLICT (sha256) DO NOTHING;
    ALTER TABLE kk_ladder_programs DROP COLUMN archive;
    CREATE INDEX kk_ladder_programs_by_sha256 ON kk_ladder_programs (sha256);",
];

/// The newest schema version this program knows.
fn latest() -> i64 {
    MIGRATIONS.len() as i64
}

/// The versions still to apply to a database whose `MAX(version)` in `kk_schema` is `current`
/// (`None` for a new database), or [`StoreError::SchemaTooNew`] if it is newer than this
/// program.
pub(crate) fn pending(current: Option<i64>) -> Result<RangeInclusive<i64>, StoreError> {
    let current = current.unwrap_or(0);
    if current > latest() {
        return Err(StoreError::SchemaTooNew {
            found: current,
            supported: latest(),
        });
    }
    Ok(current + 1..=latest())
}

/// Migration `version` (1-based) for a backend's blob type.
pub(crate) fn migration(version: i64, blob: &str) -> String {
    MIGRATIONS[(version - 1) as usize].replace("{blob}", blob)
}

/// Bring the schema up to date in `tx` (a transaction that holds off other migrations), and
/// commit: the versions still pending are applied and recorded, with the backend's `blob` type.
pub(crate) fn migrate(mut tx: impl Tx, blob: &str) -> Result<(), StoreError> {
    tx.execute_batch(
        "creating the schema version table",
        "CREATE TABLE IF NOT EXISTS kk_schema (version BIGINT NOT NULL)",
    )?;
    let current = tx.query_one(
        "reading the schema version",
        "SELECT MAX(version) FROM kk_schema",
        args![],
        |r| r.get::<Option<i64>>(0),
    )?;
    for version in pending(current)? {
        tx.execute_batch("applying a schema migration", &migration(version, blob))?;
        tx.execute(
            "recording the schema version",
            "INSERT INTO kk_schema (version) VALUES ($1)",
            args![version],
        )?;
    }
    tx.commit("committing the schema migration")
}
