//! The PostgreSQL backend, for many workers on many machines.

use std::collections::BTreeSet;
use std::time::Duration;

use postgres::{Client, Config, NoTls};

mod builds;
mod ladder;

use crate::schema;
use crate::{
    compress, decompress, entrants_to_json, from_db, lease_ms, now_secs, redact_url, to_db,
    BotVersion, Claim, ContestRow, FailedMatch, LadderRole, LadderSession, LadderUser,
    NewBotVersion, NewLadderUser, NewResult, Pick, ProgramFile, QueueCounts, QueuedMatch, Store,
    StoreError, StoredResult, VersionStatus,
};

/// Current time in milliseconds since the epoch, by the database's clock (one clock for all
/// workers, whatever their own clocks say).
const NOW_MS: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// Key of the advisory lock that serialises schema migrations of concurrent starters.
const MIGRATION_LOCK: i64 = 0x6b61_6b65_6869_6b69; // "kakehiki"

/// A results store in a PostgreSQL database.
pub struct PgStore {
    client: Client,
    /// Statements prepared on this connection, by their text (see [`PgStore::prepared`]).
    statements: std::collections::HashMap<String, postgres::Statement>,
}

/// Most statements a connection keeps prepared (more are prepared for each use).
const PREPARED_MAX: usize = 256;

fn err(context: &'static str) -> impl FnOnce(postgres::Error) -> StoreError {
    move |source| StoreError::Postgres { context, source }
}

/// Column `i` of `row`. A value of another type or an unexpected NULL (a database this version
/// did not write) is an error naming `context`, not a panic.
fn col<'a, T: postgres::types::FromSql<'a>>(
    row: &'a postgres::Row,
    i: usize,
    context: &'static str,
) -> Result<T, StoreError> {
    row.try_get(i).map_err(err(context))
}

/// The columns of a ladder account as [`ladder_user_from`] reads them (the first five).
const USER_COLUMNS: &str =
    "u.name, u.role, u.password_hash, u.signup_code_sha256 IS NOT NULL, u.created_at, u.disabled <> 0";

fn ladder_user_from(r: &postgres::Row, context: &'static str) -> Result<LadderUser, StoreError> {
    let role: String = col(r, 1, context)?;
    Ok(LadderUser {
        name: col(r, 0, context)?,
        role: LadderRole::parse(&role)?,
        password_hash: col(r, 2, context)?,
        signup_pending: col(r, 3, context)?,
        created_at: col(r, 4, context)?,
        disabled: col(r, 5, context)?,
    })
}

impl PgStore {
    /// Bot versions of `ladder` (`$1`) matching `condition` (with `$2` bound to `bot`).
    fn versions_where(
        &mut self,
        condition: &str,
        ladder: &str,
        // The condition's second parameter.
        param: &str,
    ) -> Result<Vec<BotVersion>, StoreError> {
        const CONTEXT: &str = "reading bot versions";
        let st = self.prepared(
            &format!(
                "SELECT v.ladder, v.bot, b.owner, v.version, v.language, v.source_sha256,
                        v.status, v.log, v.created_at
                 FROM kk_ladder_versions v
                 JOIN kk_ladder_bots b ON b.ladder = v.ladder AND b.name = v.bot
                 WHERE v.ladder = $1 AND {condition}"
            ),
            CONTEXT,
        )?;
        let rows = self
            .client
            .query(&st, &[&ladder, &param])
            .map_err(err(CONTEXT))?;
        rows.iter()
            .map(|r| {
                let status: String = col(r, 6, CONTEXT)?;
                Ok(BotVersion {
                    ladder: col(r, 0, CONTEXT)?,
                    bot: col(r, 1, CONTEXT)?,
                    owner: col(r, 2, CONTEXT)?,
                    version: col::<i64>(r, 3, CONTEXT)? as u64,
                    language: col(r, 4, CONTEXT)?,
                    source_sha256: col(r, 5, CONTEXT)?,
                    status: VersionStatus::parse(&status)
                        .ok_or_else(|| StoreError::Corrupt(format!("unknown status {status:?}")))?,
                    log: col(r, 7, CONTEXT)?,
                    created_at: col(r, 8, CONTEXT)?,
                })
            })
            .collect()
    }

    /// The ladder account matching `condition` (one `$1` parameter).
    fn ladder_user_where(
        &mut self,
        condition: &str,
        value: &str,
    ) -> Result<Option<LadderUser>, StoreError> {
        const CONTEXT: &str = "reading a ladder account";
        let row = self
            .client
            .query_opt(
                &format!("SELECT {USER_COLUMNS} FROM kk_ladder_users u WHERE {condition}"),
                &[&value],
            )
            .map_err(err(CONTEXT))?;
        row.map(|r| ladder_user_from(&r, CONTEXT)).transpose()
    }

    /// Connect to `url` (`postgres://user:password@host:port/database` or the key=value form)
    /// and bring the schema up to date. Without a `connect_timeout` in the URL, connecting gives
    /// up after 10 seconds.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let shown = redact_url(url);
        let mut config: Config = url.parse().map_err(|source| StoreError::BadUrl {
            url: shown.clone(),
            source,
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("kakehiki");
        let client = config
            .connect(NoTls)
            .map_err(|source| StoreError::Connect { url: shown, source })?;
        let mut store = PgStore {
            client,
            statements: std::collections::HashMap::new(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// `sql` prepared on this connection, once: running it again skips PostgreSQL's parsing
    /// and planning and a round trip (what a page's few queries mostly cost).
    fn prepared(
        &mut self,
        sql: &str,
        context: &'static str,
    ) -> Result<postgres::Statement, StoreError> {
        if let Some(st) = self.statements.get(sql) {
            return Ok(st.clone());
        }
        let st = self.client.prepare(sql).map_err(err(context))?;
        if self.statements.len() < PREPARED_MAX {
            self.statements.insert(sql.to_string(), st.clone());
        }
        Ok(st)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let mut tx = self
            .client
            .transaction()
            .map_err(err("starting the schema migration"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(err("locking the schema for migration"))?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS kk_schema (version BIGINT NOT NULL)")
            .map_err(err("creating the schema version table"))?;
        let row = tx
            .query_one("SELECT MAX(version) FROM kk_schema", &[])
            .map_err(err("reading the schema version"))?;
        let current: Option<i64> = col(&row, 0, "reading the schema version")?;
        for version in schema::pending(current)? {
            tx.batch_execute(&schema::migration(version, "BYTEA"))
                .map_err(err("applying a schema migration"))?;
            tx.execute("INSERT INTO kk_schema (version) VALUES ($1)", &[&version])
                .map_err(err("recording the schema version"))?;
        }
        tx.commit().map_err(err("committing the schema migration"))
    }

    /// The stored results of a contest by match index: all of them, or the one of `index`.
    fn query_results(
        &mut self,
        contest: &str,
        pick: Pick,
    ) -> Result<Vec<StoredResult>, StoreError> {
        const CONTEXT: &str = "reading results";
        let (first, last) = pick.bounds();
        // One statement per case, so that one match or a range is found through the key.
        let sql = match pick {
            Pick::All => {
                "SELECT idx, entrants, report, duration_ms, worker FROM kk_results
                 WHERE contest = $1 AND $2::BIGINT <= $3::BIGINT ORDER BY idx"
            }
            Pick::One(_) => {
                "SELECT idx, entrants, report, duration_ms, worker FROM kk_results
                 WHERE contest = $1 AND idx = $2 AND idx = $3"
            }
            Pick::Range(..) => {
                "SELECT idx, entrants, report, duration_ms, worker FROM kk_results
                 WHERE contest = $1 AND idx >= $2 AND idx <= $3 ORDER BY idx"
            }
        };
        let st = self.prepared(sql, CONTEXT)?;
        let rows = self
            .client
            .query(&st, &[&contest, &first, &last])
            .map_err(err(CONTEXT))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            out.push(StoredResult::from_row(
                contest,
                col(&r, 0, CONTEXT)?,
                col(&r, 1, CONTEXT)?,
                col(&r, 2, CONTEXT)?,
                col(&r, 3, CONTEXT)?,
                col(&r, 4, CONTEXT)?,
            )?);
        }
        Ok(out)
    }
}

impl Store for PgStore {
    fn backend(&self) -> &'static str {
        "postgresql"
    }

    fn register_contest(&mut self, contest: &ContestRow) -> Result<bool, StoreError> {
        let mut tx = self
            .client
            .transaction()
            .map_err(err("registering a contest"))?;
        let inserted = tx
            .execute(
                "INSERT INTO kk_contests (name, fingerprint, definition) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO NOTHING",
                &[&contest.name, &contest.fingerprint, &contest.definition],
            )
            .map_err(err("registering a contest"))?;
        if inserted == 1 {
            tx.commit().map_err(err("registering a contest"))?;
            return Ok(true);
        }
        let row = tx
            .query_one(
                "SELECT fingerprint, definition FROM kk_contests WHERE name = $1",
                &[&contest.name],
            )
            .map_err(err("looking up a contest"))?;
        let stored: String = col(&row, 0, "looking up a contest")?;
        let definition: String = col(&row, 1, "looking up a contest")?;
        contest.already_registered(stored, &definition)
    }

    fn contest(&mut self, name: &str) -> Result<Option<ContestRow>, StoreError> {
        let row = self
            .client
            .query_opt(
                "SELECT name, fingerprint, definition FROM kk_contests WHERE name = $1",
                &[&name],
            )
            .map_err(err("reading a contest"))?;
        const CONTEXT: &str = "reading a contest";
        row.map(|r| {
            Ok(ContestRow {
                name: col(&r, 0, CONTEXT)?,
                fingerprint: col(&r, 1, CONTEXT)?,
                definition: col(&r, 2, CONTEXT)?,
            })
        })
        .transpose()
    }

    fn contest_names(&mut self) -> Result<Vec<String>, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT name FROM kk_contests WHERE fingerprint <> $1 ORDER BY name",
                &[&crate::LADDER_FINGERPRINT],
            )
            .map_err(err("listing contests"))?;
        rows.iter().map(|r| col(r, 0, "listing contests")).collect()
    }

    fn stored_indices(&mut self, contest: &str) -> Result<BTreeSet<u64>, StoreError> {
        let rows = self
            .client
            .query("SELECT idx FROM kk_results WHERE contest = $1", &[&contest])
            .map_err(err("listing stored matches"))?;
        rows.iter()
            .map(|r| col(r, 0, "listing stored matches").map(from_db))
            .collect()
    }

    fn result_count(&mut self, contest: &str) -> Result<u64, StoreError> {
        let row = self
            .client
            .query_one(
                "SELECT COALESCE(MAX(results), 0)::BIGINT FROM kk_result_counts WHERE contest = $1",
                &[&contest],
            )
            .map_err(err("counting stored matches"))?;
        col::<i64>(&row, 0, "counting stored matches").map(from_db)
    }

    fn results_since(
        &mut self,
        contest: &str,
        after: u64,
    ) -> Result<Vec<(u64, StoredResult)>, StoreError> {
        const CONTEXT: &str = "reading new results";
        let st = self.prepared(
            "SELECT seq, idx, entrants, report, duration_ms, worker FROM kk_results
             WHERE contest = $1 AND seq > $2 ORDER BY seq",
            CONTEXT,
        )?;
        let rows = self
            .client
            .query(&st, &[&contest, &to_db(after)])
            .map_err(err(CONTEXT))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            out.push((
                from_db(col(&r, 0, CONTEXT)?),
                StoredResult::from_row(
                    contest,
                    col(&r, 1, CONTEXT)?,
                    col(&r, 2, CONTEXT)?,
                    col(&r, 3, CONTEXT)?,
                    col(&r, 4, CONTEXT)?,
                    col(&r, 5, CONTEXT)?,
                )?,
            ));
        }
        Ok(out)
    }

    fn put_result(&mut self, r: &NewResult<'_>) -> Result<bool, StoreError> {
        let replay = compress(r.replay)?;
        let insert = self.prepared(
            "INSERT INTO kk_results (contest, idx, entrants, report, replay, replay_bytes, duration_ms, worker)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (contest, idx) DO NOTHING",
            "storing a result",
        )?;
        let count = self.prepared(
            "INSERT INTO kk_result_counts (contest, results) VALUES ($1, 1)
             ON CONFLICT (contest) DO UPDATE SET results = kk_result_counts.results + 1
             RETURNING results",
            "counting a stored result",
        )?;
        let number = self.prepared(
            "UPDATE kk_results SET seq = $3 WHERE contest = $1 AND idx = $2",
            "numbering a stored result",
        )?;
        let done = self.prepared(
            "UPDATE kk_matches SET state = 'done', worker = $3, lease_until = NULL WHERE contest = $1 AND idx = $2",
            "marking a match done",
        )?;
        let mut tx = self.client.transaction().map_err(err("storing a result"))?;
        let inserted = tx
            .execute(
                &insert,
                &[
                    &r.contest,
                    &to_db(r.index),
                    &entrants_to_json(r.entrants),
                    &r.report_json,
                    &replay,
                    &(r.replay.len() as i64),
                    &(r.duration_ms as i64),
                    &r.worker,
                ],
            )
            .map_err(err("storing a result"))?;
        if inserted == 1 {
            // Number the result: one more in its contest's count. The count's row stays locked
            // until this transaction commits, so numbers become visible in order.
            let row = tx
                .query_one(&count, &[&r.contest])
                .map_err(err("counting a stored result"))?;
            let seq: i64 = col(&row, 0, "counting a stored result")?;
            tx.execute(&number, &[&r.contest, &to_db(r.index), &seq])
                .map_err(err("numbering a stored result"))?;
            tx.execute(&done, &[&r.contest, &to_db(r.index), &r.worker])
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
        let st = self.prepared(
            "SELECT replay FROM kk_results WHERE contest = $1 AND idx = $2",
            "reading a replay",
        )?;
        let row = self
            .client
            .query_opt(&st, &[&contest, &to_db(index)])
            .map_err(err("reading a replay"))?;
        row.map(|r| decompress(contest, index, col(&r, 0, "reading a replay")?))
            .transpose()
    }

    fn record_failure(
        &mut self,
        contest: &str,
        index: u64,
        spec_json: &str,
        error: &str,
    ) -> Result<(), StoreError> {
        self.client
            .execute(
                "INSERT INTO kk_matches (contest, idx, spec, state, attempts, last_error)
                 SELECT $1, $2, $3, 'failed', 1, $4
                 WHERE NOT EXISTS (SELECT 1 FROM kk_results WHERE contest = $1 AND idx = $2)
                 ON CONFLICT (contest, idx) DO UPDATE SET state = 'failed', attempts = kk_matches.attempts + 1,
                     last_error = excluded.last_error, lease_until = NULL",
                &[&contest, &to_db(index), &spec_json, &error],
            )
            .map_err(err("recording a failed match"))?;
        Ok(())
    }

    fn failures(&mut self, contest: &str) -> Result<Vec<FailedMatch>, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT idx, attempts, COALESCE(last_error, '') FROM kk_matches
                 WHERE contest = $1 AND state = 'failed' ORDER BY idx",
                &[&contest],
            )
            .map_err(err("listing failed matches"))?;
        const CONTEXT: &str = "listing failed matches";
        rows.iter()
            .map(|r| {
                Ok(FailedMatch {
                    index: from_db(col(r, 0, CONTEXT)?),
                    attempts: col::<i32>(r, 1, CONTEXT)?.max(0) as u32,
                    error: col(r, 2, CONTEXT)?,
                })
            })
            .collect()
    }

    fn enqueue(&mut self, contest: &str, matches: &[QueuedMatch]) -> Result<u64, StoreError> {
        let mut tx = self.client.transaction().map_err(err("queueing matches"))?;
        let stmt = tx
            .prepare(
                "INSERT INTO kk_matches (contest, idx, spec, state)
                 SELECT $1, $2, $3, 'queued'
                 WHERE NOT EXISTS (SELECT 1 FROM kk_results WHERE contest = $1 AND idx = $2)
                 ON CONFLICT (contest, idx) DO UPDATE SET state = 'queued', attempts = 0, lease_until = NULL,
                         spec = excluded.spec WHERE kk_matches.state = 'failed'",
            )
            .map_err(err("queueing matches"))?;
        let mut added = 0;
        for m in matches {
            added += tx
                .execute(&stmt, &[&contest, &to_db(m.index), &m.spec_json])
                .map_err(err("queueing matches"))?;
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
        let max_attempts = max_attempts.min(i32::MAX as u32) as i32;
        let lease_ms = lease_ms(lease);
        let mut tx = self.client.transaction().map_err(err("claiming a match"))?;
        tx.execute(
            &format!(
                "UPDATE kk_matches SET state = 'failed', lease_until = NULL,
                     last_error = COALESCE(last_error || '; ', '') || 'lease expired on the last allowed attempt'
                 WHERE state = 'running' AND lease_until < {NOW_MS} AND attempts >= $1"
            ),
            &[&max_attempts],
        )
        .map_err(err("failing matches out of attempts"))?;
        let row = tx
            .query_opt(
                &format!(
                    "UPDATE kk_matches m SET state = 'running', worker = $1, attempts = m.attempts + 1,
                         lease_until = {NOW_MS} + $2
                     FROM (SELECT contest, idx FROM kk_matches
                           WHERE (state = 'queued' OR (state = 'running' AND lease_until < {NOW_MS}))
                             AND attempts < $3
                           ORDER BY contest, idx LIMIT 1 FOR UPDATE SKIP LOCKED) c
                     WHERE m.contest = c.contest AND m.idx = c.idx
                     RETURNING m.contest, m.idx, m.spec, m.attempts"
                ),
                &[&worker, &lease_ms, &max_attempts],
            )
            .map_err(err("claiming a match"))?;
        tx.commit().map_err(err("claiming a match"))?;
        const CONTEXT: &str = "claiming a match";
        row.map(|r| {
            Ok(Claim {
                contest: col(&r, 0, CONTEXT)?,
                index: from_db(col(&r, 1, CONTEXT)?),
                spec_json: col(&r, 2, CONTEXT)?,
                attempt: col::<i32>(&r, 3, CONTEXT)?.max(0) as u32,
                worker: worker.to_string(),
            })
        })
        .transpose()
    }

    fn heartbeat(&mut self, claim: &Claim, lease: Duration) -> Result<bool, StoreError> {
        let lease_ms = lease_ms(lease);
        let n = self
            .client
            .execute(
                &format!(
                    "UPDATE kk_matches SET lease_until = {NOW_MS} + $5
                     WHERE contest = $1 AND idx = $2 AND worker = $3 AND attempts = $4 AND state = 'running'"
                ),
                &[&claim.contest, &to_db(claim.index), &claim.worker, &(claim.attempt as i32), &lease_ms],
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
        let max_attempts = max_attempts.min(i32::MAX as u32) as i32;
        self.client
            .execute(
                "UPDATE kk_matches SET state = CASE WHEN attempts >= $5 THEN 'failed' ELSE 'queued' END,
                     lease_until = NULL, last_error = $6
                 WHERE contest = $1 AND idx = $2 AND worker = $3 AND attempts = $4 AND state = 'running'",
                &[&claim.contest, &to_db(claim.index), &claim.worker, &(claim.attempt as i32), &max_attempts, &error],
            )
            .map_err(err("releasing a failed match"))?;
        Ok(())
    }

    fn queue_counts(&mut self, contest: &str) -> Result<QueueCounts, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT state, COUNT(*) FROM kk_matches WHERE contest = $1 GROUP BY state",
                &[&contest],
            )
            .map_err(err("counting queued matches"))?;
        let mut counts = QueueCounts::default();
        for r in rows {
            let state: String = col(&r, 0, "counting queued matches")?;
            counts.set_state(&state, col(&r, 1, "counting queued matches")?)?;
        }
        Ok(counts)
    }

    fn open_matches(&mut self) -> Result<u64, StoreError> {
        let row = self
            .client
            .query_one(
                "SELECT COUNT(*) FROM kk_matches WHERE state IN ('queued', 'running')",
                &[],
            )
            .map_err(err("counting open matches"))?;
        let n: i64 = col(&row, 0, "counting open matches")?;
        Ok(n.max(0) as u64)
    }

    fn release_host_fault(&mut self, claim: &Claim, error: &str) -> Result<(), StoreError> {
        self.client
            .execute(
                "UPDATE kk_matches SET state = 'queued', attempts = GREATEST(attempts - 1, 0),
                     lease_until = NULL, last_error = $5
                 WHERE contest = $1 AND idx = $2 AND worker = $3 AND attempts = $4 AND state = 'running'",
                &[&claim.contest, &to_db(claim.index), &claim.worker, &(claim.attempt as i32), &error],
            )
            .map_err(err("giving back a match after a host fault"))?;
        Ok(())
    }

    fn program_files(&mut self, contest: &str) -> Result<Vec<ProgramFile>, StoreError> {
        const CONTEXT: &str = "reading program files";
        let rows = self
            .client
            .query(
                "SELECT entrant, path, sha256 FROM kk_programs WHERE contest = $1
                 ORDER BY entrant, path",
                &[&contest],
            )
            .map_err(err(CONTEXT))?;
        rows.iter()
            .map(|r| {
                Ok(ProgramFile {
                    entrant: col(r, 0, CONTEXT)?,
                    path: col(r, 1, CONTEXT)?,
                    sha256: col(r, 2, CONTEXT)?,
                })
            })
            .collect()
    }

    fn record_program_files(
        &mut self,
        contest: &str,
        files: &[ProgramFile],
    ) -> Result<(), StoreError> {
        const CONTEXT: &str = "recording program files";
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        let stmt = tx
            .prepare(
                "INSERT INTO kk_programs (contest, entrant, path, sha256) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (contest, entrant, path) DO NOTHING",
            )
            .map_err(err(CONTEXT))?;
        for f in files {
            tx.execute(&stmt, &[&contest, &f.entrant, &f.path, &f.sha256])
                .map_err(err(CONTEXT))?;
        }
        tx.commit().map_err(err(CONTEXT))
    }

    fn lock_run(&mut self, _holder: &str) -> Result<(), StoreError> {
        // The queue hands each match to one runner; any number of coordinators may share it.
        Ok(())
    }

    fn create_ladder_user(&mut self, user: &NewLadderUser) -> Result<(), StoreError> {
        const CONTEXT: &str = "creating a ladder account";
        let n = self
            .client
            .execute(
                "INSERT INTO kk_ladder_users
                     (name, role, password_hash, token_sha256, signup_code_sha256, created_at)
                 VALUES ($1, $2, NULL, $3, $4, $5) ON CONFLICT (name) DO NOTHING",
                &[
                    &user.name,
                    &user.role.as_str(),
                    &user.token_sha256,
                    &user.signup_code_sha256,
                    &now_secs(),
                ],
            )
            .map_err(err(CONTEXT))?;
        if n == 0 {
            return Err(StoreError::UserExists(user.name.clone()));
        }
        Ok(())
    }

    fn ladder_user(&mut self, name: &str) -> Result<Option<LadderUser>, StoreError> {
        self.ladder_user_where("u.name = $1", name)
    }

    fn ladder_user_by_token(
        &mut self,
        token_sha256: &str,
    ) -> Result<Option<LadderUser>, StoreError> {
        self.ladder_user_where("u.token_sha256 = $1", token_sha256)
    }

    fn ladder_signup_code_known(&mut self, code_sha256: &str) -> Result<bool, StoreError> {
        const CONTEXT: &str = "checking a sign-up code";
        let row = self
            .client
            .query_opt(
                "SELECT 1 FROM kk_ladder_users WHERE signup_code_sha256 = $1",
                &[&code_sha256],
            )
            .map_err(err(CONTEXT))?;
        Ok(row.is_some())
    }

    fn ladder_sign_up(
        &mut self,
        code_sha256: &str,
        password_hash: &str,
    ) -> Result<Option<String>, StoreError> {
        const CONTEXT: &str = "signing up";
        let row = self
            .client
            .query_opt(
                "UPDATE kk_ladder_users SET password_hash = $2, signup_code_sha256 = NULL
                 WHERE signup_code_sha256 = $1 RETURNING name",
                &[&code_sha256, &password_hash],
            )
            .map_err(err(CONTEXT))?;
        row.map(|r| col(&r, 0, CONTEXT)).transpose()
    }

    fn ladder_users(&mut self) -> Result<Vec<LadderUser>, StoreError> {
        const CONTEXT: &str = "listing the ladder accounts";
        let rows = self
            .client
            .query(
                &format!("SELECT {USER_COLUMNS} FROM kk_ladder_users u ORDER BY u.name"),
                &[],
            )
            .map_err(err(CONTEXT))?;
        rows.iter().map(|r| ladder_user_from(r, CONTEXT)).collect()
    }

    fn ladder_set_disabled(&mut self, name: &str, disabled: bool) -> Result<bool, StoreError> {
        const CONTEXT: &str = "disabling an account";
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        let n = tx
            .execute(
                "UPDATE kk_ladder_users SET disabled = $2 WHERE name = $1",
                &[&name, &i64::from(disabled)],
            )
            .map_err(err(CONTEXT))?;
        if disabled {
            tx.execute(
                "DELETE FROM kk_ladder_sessions WHERE username = $1",
                &[&name],
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
            .client
            .execute(
                "UPDATE kk_ladder_bots SET retired = $3 WHERE ladder = $1 AND name = $2",
                &[&ladder, &bot, &i64::from(retired)],
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
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        tx.execute(
            "DELETE FROM kk_ladder_sessions WHERE expires_at <= $1",
            &[&now],
        )
        .map_err(err(CONTEXT))?;
        let n = tx
            .execute(
                "INSERT INTO kk_ladder_sessions
                     (id_sha256, username, csrf_token, created_at, expires_at)
                 SELECT $1, name, $3, $4, $5 FROM kk_ladder_users WHERE name = $2",
                &[&id_sha256, &username, &csrf_token, &now, &expires_at],
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
        let row = self
            .client
            .query_opt(
                &format!(
                    "SELECT {USER_COLUMNS}, s.csrf_token, s.expires_at
                     FROM kk_ladder_sessions s JOIN kk_ladder_users u ON u.name = s.username
                     WHERE s.id_sha256 = $1 AND s.expires_at > $2"
                ),
                &[&id_sha256, &now],
            )
            .map_err(err(CONTEXT))?;
        row.map(|r| {
            Ok(LadderSession {
                user: ladder_user_from(&r, CONTEXT)?,
                csrf_token: col(&r, 6, CONTEXT)?,
                expires_at: col(&r, 7, CONTEXT)?,
            })
        })
        .transpose()
    }

    fn delete_ladder_session(&mut self, id_sha256: &str) -> Result<(), StoreError> {
        self.client
            .execute(
                "DELETE FROM kk_ladder_sessions WHERE id_sha256 = $1",
                &[&id_sha256],
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
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        let n = tx
            .execute(
                "UPDATE kk_ladder_users SET token_sha256 = $2, signup_code_sha256 = $3,
                     password_hash = NULL WHERE name = $1",
                &[&name, &token_sha256, &signup_code_sha256],
            )
            .map_err(err(CONTEXT))?;
        tx.execute(
            "DELETE FROM kk_ladder_sessions WHERE username = $1",
            &[&name],
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
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        tx.execute(
            "UPDATE kk_ladder_users SET password_hash = $2 WHERE name = $1",
            &[&name, &password_hash],
        )
        .map_err(err(CONTEXT))?;
        tx.execute(
            "DELETE FROM kk_ladder_sessions WHERE username = $1 AND id_sha256 <> $2",
            &[&name, &keep_session],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
        Ok(())
    }

    fn add_bot_version(&mut self, v: &NewBotVersion) -> Result<u64, StoreError> {
        const CONTEXT: &str = "storing a bot version";
        let now = now_secs();
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        tx.execute(
            "INSERT INTO kk_ladder_bots (ladder, name, owner, created_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (ladder, name) DO NOTHING",
            &[&v.ladder, &v.bot, &v.owner, &now],
        )
        .map_err(err(CONTEXT))?;
        // The bot's row, locked: uploads of one bot get their numbers one at a time.
        let row = tx
            .query_one(
                "SELECT owner FROM kk_ladder_bots WHERE ladder = $1 AND name = $2 FOR UPDATE",
                &[&v.ladder, &v.bot],
            )
            .map_err(err(CONTEXT))?;
        let owner: String = col(&row, 0, CONTEXT)?;
        if owner != v.owner {
            return Err(StoreError::BotOwnedByOther {
                ladder: v.ladder.clone(),
                bot: v.bot.clone(),
            });
        }
        let row = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0) + 1 FROM kk_ladder_versions
                 WHERE ladder = $1 AND bot = $2",
                &[&v.ladder, &v.bot],
            )
            .map_err(err(CONTEXT))?;
        let version: i64 = col(&row, 0, CONTEXT)?;
        tx.execute(
            "INSERT INTO kk_ladder_versions
                 (ladder, bot, version, language, source_sha256, status, log, created_at)
             VALUES ($1, $2, $3, $4, $5, 'building', '', $6)",
            &[
                &v.ladder,
                &v.bot,
                &version,
                &v.language,
                &v.source_sha256,
                &now,
            ],
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
            .client
            .execute(
                "UPDATE kk_ladder_versions SET status = $4, log = $5
                 WHERE ladder = $1 AND bot = $2 AND version = $3",
                &[&ladder, &bot, &(version as i64), &status.as_str(), &log],
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
        const CONTEXT: &str = "reading a bot's owner";
        const READ: &str = "SELECT owner FROM kk_ladder_bots WHERE ladder = $1 AND name = $2";
        let read = self.prepared(READ, CONTEXT)?;
        let row = self
            .client
            .query_opt(&read, &[&ladder, &bot])
            .map_err(err(CONTEXT))?;
        row.map(|r| col(&r, 0, CONTEXT)).transpose()
    }

    fn bot_versions(&mut self, ladder: &str, bot: &str) -> Result<Vec<BotVersion>, StoreError> {
        self.versions_where("v.bot = $2 ORDER BY v.version", ladder, bot)
    }

    fn active_bot_versions(&mut self, ladder: &str) -> Result<Vec<BotVersion>, StoreError> {
        self.versions_where(
            &crate::ladder_builds::active_versions("$2"),
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
            "v.status = $2 ORDER BY v.bot, v.version",
            ladder,
            status.as_str(),
        )
    }
}
