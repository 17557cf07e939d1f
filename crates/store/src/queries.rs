//! [`Store`] implemented once, for both backends ([`Db`]): contests, results, the match queue,
//! ladder accounts and bot versions.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::db::{args, attempts_db, Conn, Db, Row, Tx};
use crate::{
    compress, decompress, entrants_to_json, from_db, lease_ms, now_secs, to_db, BotVersion, Claim,
    ContestRow, FailedMatch, LadderRole, LadderSession, LadderUser, NewBotVersion, NewLadderUser,
    NewResult, Pick, ProgramFile, QueueCounts, QueuedMatch, Store, StoreError, StoredResult,
    VersionStatus,
};

/// The columns of a ladder account as [`ladder_user_from`] reads them (the first six).
const USER_COLUMNS: &str =
    "u.name, u.role, u.password_hash, u.signup_code_sha256 IS NOT NULL, u.created_at, u.disabled <> 0";

fn ladder_user_from(r: &Row<'_>) -> Result<LadderUser, StoreError> {
    Ok(LadderUser {
        name: r.get(0)?,
        role: LadderRole::parse(&r.get::<String>(1)?)?,
        password_hash: r.get(2)?,
        signup_pending: r.get(3)?,
        created_at: r.get(4)?,
        disabled: r.get(5)?,
    })
}

/// The ladder account matching `condition` (one `$1` parameter).
fn ladder_user_where(
    db: &mut impl Conn,
    condition: &str,
    value: &str,
) -> Result<Option<LadderUser>, StoreError> {
    db.query_opt(
        "reading a ladder account",
        &format!("SELECT {USER_COLUMNS} FROM kk_ladder_users u WHERE {condition}"),
        args![value],
        ladder_user_from,
    )
}

/// Bot versions of `ladder` (`$1`) matching `condition` (with `$2` bound to `param`).
fn versions_where(
    db: &mut impl Conn,
    condition: &str,
    ladder: &str,
    param: &str,
) -> Result<Vec<BotVersion>, StoreError> {
    db.query(
        "reading bot versions",
        &format!(
            "SELECT v.ladder, v.bot, b.owner, v.version, v.language, v.source_sha256,
                    v.status, v.log, v.created_at
             FROM kk_ladder_versions v
             JOIN kk_ladder_bots b ON b.ladder = v.ladder AND b.name = v.bot
             WHERE v.ladder = $1 AND {condition}"
        ),
        args![ladder, param],
        |r| {
            let status: String = r.get(6)?;
            Ok(BotVersion {
                ladder: r.get(0)?,
                bot: r.get(1)?,
                owner: r.get(2)?,
                version: r.get::<i64>(3)? as u64,
                language: r.get(4)?,
                source_sha256: r.get(5)?,
                status: VersionStatus::parse(&status)
                    .ok_or_else(|| StoreError::Corrupt(format!("unknown status {status:?}")))?,
                log: r.get(7)?,
                created_at: r.get(8)?,
            })
        },
    )
}

/// The columns of a result as [`result_from`] reads them, from column `at`.
const RESULT_COLUMNS: &str = "idx, entrants, report, duration_ms, worker";

fn result_from(contest: &str, r: &Row<'_>, at: usize) -> Result<StoredResult, StoreError> {
    StoredResult::from_row(
        contest,
        r.get(at)?,
        &r.get::<String>(at + 1)?,
        r.get(at + 2)?,
        r.get(at + 3)?,
        r.get(at + 4)?,
    )
}

/// The stored results of a contest by match index: all of them, one, or a range.
fn query_results(
    db: &mut impl Conn,
    contest: &str,
    pick: Pick,
) -> Result<Vec<StoredResult>, StoreError> {
    // One statement per case, so that one match or a range is found through the key rather
    // than by a scan (`$2 IS NULL OR idx = $2` keeps SQLite from using the index).
    let (first, last) = pick.bounds();
    let condition = match pick {
        Pick::All => "CAST($2 AS BIGINT) <= CAST($3 AS BIGINT) ORDER BY idx",
        Pick::One(_) => "idx = $2 AND idx = $3",
        Pick::Range(..) => "idx >= $2 AND idx <= $3 ORDER BY idx",
    };
    db.query(
        "reading results",
        &format!("SELECT {RESULT_COLUMNS} FROM kk_results WHERE contest = $1 AND {condition}"),
        args![contest, first, last],
        |r| result_from(contest, r, 0),
    )
}

impl<D: Db> Store for D {
    fn backend(&self) -> &'static str {
        D::BACKEND
    }

    fn register_contest(&mut self, contest: &ContestRow) -> Result<bool, StoreError> {
        const CONTEXT: &str = "registering a contest";
        let mut tx = self.begin(CONTEXT)?;
        let stored = |tx: &mut D::Tx<'_>| {
            tx.query_opt(
                "looking up a contest",
                "SELECT fingerprint, definition FROM kk_contests WHERE name = $1",
                args![&contest.name],
                |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
            )
        };
        // A stored contest is only read (a store opened read-only may check one).
        if let Some((fingerprint, definition)) = stored(&mut tx)? {
            return contest.already_registered(fingerprint, &definition);
        }
        let inserted = tx.execute(
            CONTEXT,
            "INSERT INTO kk_contests (name, fingerprint, definition) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO NOTHING",
            args![&contest.name, &contest.fingerprint, &contest.definition],
        )?;
        if inserted == 1 {
            tx.commit(CONTEXT)?;
            return Ok(true);
        }
        // Registered meanwhile by another process (PostgreSQL's transactions see rows committed
        // after they began).
        match stored(&mut tx)? {
            Some((fingerprint, definition)) => contest.already_registered(fingerprint, &definition),
            None => Err(StoreError::Corrupt(format!(
                "contest {:?} is neither stored nor storable",
                contest.name
            ))),
        }
    }

    fn contest(&mut self, name: &str) -> Result<Option<ContestRow>, StoreError> {
        self.query_opt(
            "reading a contest",
            "SELECT name, fingerprint, definition FROM kk_contests WHERE name = $1",
            args![name],
            |r| {
                Ok(ContestRow {
                    name: r.get(0)?,
                    fingerprint: r.get(1)?,
                    definition: r.get(2)?,
                })
            },
        )
    }

    fn contest_names(&mut self) -> Result<Vec<String>, StoreError> {
        self.query(
            "listing contests",
            "SELECT name FROM kk_contests WHERE fingerprint <> $1 ORDER BY name",
            args![crate::LADDER_FINGERPRINT],
            |r| r.get(0),
        )
    }

    fn stored_indices(&mut self, contest: &str) -> Result<BTreeSet<u64>, StoreError> {
        let indices = self.query(
            "listing stored matches",
            "SELECT idx FROM kk_results WHERE contest = $1",
            args![contest],
            |r| r.get(0).map(from_db),
        )?;
        Ok(indices.into_iter().collect())
    }

    fn result_count(&mut self, contest: &str) -> Result<u64, StoreError> {
        let sql = if self.schema_version() >= 3 {
            "SELECT COALESCE(MAX(results), 0) FROM kk_result_counts WHERE contest = $1"
        } else {
            // A file of an older schema opened read-only: no counts yet.
            "SELECT COUNT(*) FROM kk_results WHERE contest = $1"
        };
        self.query_one("counting stored matches", sql, args![contest], |r| {
            r.get(0).map(from_db)
        })
    }

    fn results_since(
        &mut self,
        contest: &str,
        after: u64,
    ) -> Result<Vec<(u64, StoredResult)>, StoreError> {
        let schema = self.schema_version();
        if schema < 3 {
            // A file of an older schema opened read-only: its results have no numbers yet;
            // all of them are numbered in index order, and only a first read can be answered.
            if after > 0 {
                return Err(StoreError::Corrupt(format!(
                    "the database has schema version {schema} without result sequence numbers: \
                     open it once with a writing command (kakehiki web or contest run) to upgrade \
                     it"
                )));
            }
            return Ok((1..)
                .zip(query_results(self, contest, Pick::All)?)
                .collect());
        }
        self.query(
            "reading new results",
            &format!(
                "SELECT seq, {RESULT_COLUMNS} FROM kk_results
                 WHERE contest = $1 AND seq > $2 ORDER BY seq"
            ),
            args![contest, to_db(after)],
            |r| Ok((from_db(r.get(0)?), result_from(contest, r, 1)?)),
        )
    }

    fn put_result(&mut self, r: &NewResult<'_>) -> Result<bool, StoreError> {
        let replay = compress(r.replay)?;
        let entrants = entrants_to_json(r.entrants);
        let mut tx = self.begin("storing a result")?;
        let inserted = tx.execute(
            "storing a result",
            "INSERT INTO kk_results
                 (contest, idx, entrants, report, replay, replay_bytes, duration_ms, worker)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (contest, idx) DO NOTHING",
            args![
                r.contest,
                to_db(r.index),
                &entrants,
                r.report_json,
                &replay,
                r.replay.len() as i64,
                r.duration_ms as i64,
                r.worker
            ],
        )?;
        if inserted == 1 {
            // Number the result: one more in its contest's count. The count's row stays locked
            // until this transaction commits, so numbers become visible in order.
            let seq: i64 = tx.query_one(
                "counting a stored result",
                "INSERT INTO kk_result_counts (contest, results) VALUES ($1, 1)
                 ON CONFLICT (contest) DO UPDATE SET results = kk_result_counts.results + 1
                 RETURNING results",
                args![r.contest],
                |row| row.get(0),
            )?;
            tx.execute(
                "numbering a stored result",
                "UPDATE kk_results SET seq = $3 WHERE contest = $1 AND idx = $2",
                args![r.contest, to_db(r.index), seq],
            )?;
            tx.execute(
                "marking a match done",
                "UPDATE kk_matches SET state = 'done', worker = $3, lease_until = NULL
                 WHERE contest = $1 AND idx = $2",
                args![r.contest, to_db(r.index), r.worker],
            )?;
        }
        tx.commit("committing a result")?;
        Ok(inserted == 1)
    }

    fn results(&mut self, contest: &str) -> Result<Vec<StoredResult>, StoreError> {
        query_results(self, contest, Pick::All)
    }

    fn results_range(
        &mut self,
        contest: &str,
        first: u64,
        last: u64,
    ) -> Result<Vec<StoredResult>, StoreError> {
        query_results(self, contest, Pick::Range(first, last))
    }

    fn result(&mut self, contest: &str, index: u64) -> Result<Option<StoredResult>, StoreError> {
        Ok(query_results(self, contest, Pick::One(index))?.pop())
    }

    fn replay(&mut self, contest: &str, index: u64) -> Result<Option<String>, StoreError> {
        let bytes = self.query_opt(
            "reading a replay",
            "SELECT replay FROM kk_results WHERE contest = $1 AND idx = $2",
            args![contest, to_db(index)],
            |r| r.get::<Vec<u8>>(0),
        )?;
        bytes.map(|b| decompress(contest, index, &b)).transpose()
    }

    fn record_failure(
        &mut self,
        contest: &str,
        index: u64,
        spec_json: &str,
        error: &str,
    ) -> Result<(), StoreError> {
        self.execute(
            "recording a failed match",
            "INSERT INTO kk_matches (contest, idx, spec, state, attempts, last_error)
             SELECT $1, $2, $3, 'failed', 1, $4
             WHERE NOT EXISTS (SELECT 1 FROM kk_results WHERE contest = $1 AND idx = $2)
             ON CONFLICT (contest, idx) DO UPDATE SET state = 'failed',
                 attempts = kk_matches.attempts + 1, last_error = excluded.last_error,
                 lease_until = NULL",
            args![contest, to_db(index), spec_json, error],
        )?;
        Ok(())
    }

    fn failures(&mut self, contest: &str) -> Result<Vec<FailedMatch>, StoreError> {
        self.query(
            "listing failed matches",
            "SELECT idx, attempts, COALESCE(last_error, '') FROM kk_matches
             WHERE contest = $1 AND state = 'failed' ORDER BY idx",
            args![contest],
            |r| {
                Ok(FailedMatch {
                    index: from_db(r.get(0)?),
                    attempts: r.get::<i64>(1)?.max(0) as u32,
                    error: r.get(2)?,
                })
            },
        )
    }

    fn enqueue(&mut self, contest: &str, matches: &[QueuedMatch]) -> Result<u64, StoreError> {
        const CONTEXT: &str = "queueing matches";
        let mut tx = self.begin(CONTEXT)?;
        let mut added = 0;
        for m in matches {
            added += tx.execute(
                CONTEXT,
                "INSERT INTO kk_matches (contest, idx, spec, state)
                 SELECT $1, $2, $3, 'queued'
                 WHERE NOT EXISTS (SELECT 1 FROM kk_results WHERE contest = $1 AND idx = $2)
                 ON CONFLICT (contest, idx) DO UPDATE SET state = 'queued', attempts = 0,
                     lease_until = NULL, spec = excluded.spec WHERE kk_matches.state = 'failed'",
                args![contest, to_db(m.index), &m.spec_json],
            )?;
        }
        tx.commit(CONTEXT)?;
        Ok(added)
    }

    fn claim(
        &mut self,
        worker: &str,
        lease: Duration,
        max_attempts: u32,
    ) -> Result<Option<Claim>, StoreError> {
        const CONTEXT: &str = "claiming a match";
        let now = D::NOW_MS;
        let max_attempts = attempts_db(max_attempts);
        let mut tx = self.begin(CONTEXT)?;
        tx.execute(
            "failing matches out of attempts",
            &format!(
                "UPDATE kk_matches SET state = 'failed', lease_until = NULL,
                     last_error = COALESCE(last_error || '; ', '')
                         || 'lease expired on the last allowed attempt'
                 WHERE state = 'running' AND lease_until < {now} AND attempts >= $1"
            ),
            args![max_attempts],
        )?;
        // The next match, skipping those other workers are claiming right now.
        let claim = tx.query_opt(
            CONTEXT,
            &format!(
                "UPDATE kk_matches AS m SET state = 'running', worker = $1,
                     attempts = m.attempts + 1, lease_until = {now} + $2
                 FROM (SELECT contest AS next_contest, idx AS next_idx FROM kk_matches
                       WHERE (state = 'queued' OR (state = 'running' AND lease_until < {now}))
                         AND attempts < $3
                       ORDER BY contest, idx LIMIT 1 {lock}) AS next
                 WHERE m.contest = next.next_contest AND m.idx = next.next_idx
                 RETURNING contest, idx, spec, attempts",
                lock = D::skip_locked("kk_matches"),
            ),
            args![worker, lease_ms(lease), max_attempts],
            |r| {
                Ok(Claim {
                    contest: r.get(0)?,
                    index: from_db(r.get(1)?),
                    spec_json: r.get(2)?,
                    attempt: r.get::<i64>(3)?.max(0) as u32,
                    worker: worker.to_string(),
                })
            },
        )?;
        tx.commit(CONTEXT)?;
        Ok(claim)
    }

    fn heartbeat(&mut self, claim: &Claim, lease: Duration) -> Result<bool, StoreError> {
        let n = self.execute(
            "extending a lease",
            &format!(
                "UPDATE kk_matches SET lease_until = {} + $5
                 WHERE contest = $1 AND idx = $2 AND worker = $3 AND attempts = $4
                   AND state = 'running'",
                D::NOW_MS
            ),
            args![
                &claim.contest,
                to_db(claim.index),
                &claim.worker,
                attempts_db(claim.attempt),
                lease_ms(lease)
            ],
        )?;
        Ok(n == 1)
    }

    fn release_failed(
        &mut self,
        claim: &Claim,
        error: &str,
        max_attempts: u32,
    ) -> Result<(), StoreError> {
        self.execute(
            "releasing a failed match",
            "UPDATE kk_matches
                 SET state = CASE WHEN attempts >= $5 THEN 'failed' ELSE 'queued' END,
                     lease_until = NULL, last_error = $6
             WHERE contest = $1 AND idx = $2 AND worker = $3 AND attempts = $4
               AND state = 'running'",
            args![
                &claim.contest,
                to_db(claim.index),
                &claim.worker,
                attempts_db(claim.attempt),
                attempts_db(max_attempts),
                error
            ],
        )?;
        Ok(())
    }

    fn queue_counts(&mut self, contest: &str) -> Result<QueueCounts, StoreError> {
        let rows = self.query(
            "counting queued matches",
            "SELECT state, COUNT(*) FROM kk_matches WHERE contest = $1 GROUP BY state",
            args![contest],
            |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
        )?;
        let mut counts = QueueCounts::default();
        for (state, n) in rows {
            counts.set_state(&state, n)?;
        }
        Ok(counts)
    }

    fn open_matches(&mut self) -> Result<u64, StoreError> {
        let n = self.query_one(
            "counting open matches",
            "SELECT COUNT(*) FROM kk_matches WHERE state IN ('queued', 'running')",
            args![],
            |r| r.get::<i64>(0),
        )?;
        Ok(n.max(0) as u64)
    }

    fn release_host_fault(&mut self, claim: &Claim, error: &str) -> Result<(), StoreError> {
        self.execute(
            "giving back a match after a host fault",
            "UPDATE kk_matches SET state = 'queued',
                 attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END,
                 lease_until = NULL, last_error = $5
             WHERE contest = $1 AND idx = $2 AND worker = $3 AND attempts = $4
               AND state = 'running'",
            args![
                &claim.contest,
                to_db(claim.index),
                &claim.worker,
                attempts_db(claim.attempt),
                error
            ],
        )?;
        Ok(())
    }

    fn program_files(&mut self, contest: &str) -> Result<Vec<ProgramFile>, StoreError> {
        self.query(
            "reading program files",
            "SELECT entrant, path, sha256 FROM kk_programs WHERE contest = $1
             ORDER BY entrant, path",
            args![contest],
            |r| {
                Ok(ProgramFile {
                    entrant: r.get(0)?,
                    path: r.get(1)?,
                    sha256: r.get(2)?,
                })
            },
        )
    }

    fn record_program_files(
        &mut self,
        contest: &str,
        files: &[ProgramFile],
    ) -> Result<(), StoreError> {
        const CONTEXT: &str = "recording program files";
        let mut tx = self.begin(CONTEXT)?;
        for f in files {
            tx.execute(
                CONTEXT,
                "INSERT INTO kk_programs (contest, entrant, path, sha256) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (contest, entrant, path) DO NOTHING",
                args![contest, &f.entrant, &f.path, &f.sha256],
            )?;
        }
        tx.commit(CONTEXT)
    }

    fn lock_run(&mut self, holder: &str) -> Result<(), StoreError> {
        self.hold_run_lock(holder)
    }

    fn create_ladder_user(&mut self, user: &NewLadderUser) -> Result<(), StoreError> {
        let n = self.execute(
            "creating a ladder account",
            "INSERT INTO kk_ladder_users
                 (name, role, password_hash, token_sha256, signup_code_sha256, created_at)
             VALUES ($1, $2, NULL, $3, $4, $5) ON CONFLICT (name) DO NOTHING",
            args![
                &user.name,
                user.role.as_str(),
                &user.token_sha256,
                &user.signup_code_sha256,
                now_secs()
            ],
        )?;
        if n == 0 {
            return Err(StoreError::UserExists(user.name.clone()));
        }
        Ok(())
    }

    fn ladder_user(&mut self, name: &str) -> Result<Option<LadderUser>, StoreError> {
        ladder_user_where(self, "u.name = $1", name)
    }

    fn ladder_user_by_token(
        &mut self,
        token_sha256: &str,
    ) -> Result<Option<LadderUser>, StoreError> {
        ladder_user_where(self, "u.token_sha256 = $1", token_sha256)
    }

    fn ladder_signup_name(&mut self, code_sha256: &str) -> Result<Option<String>, StoreError> {
        self.query_opt(
            "checking a sign-up code",
            "SELECT name FROM kk_ladder_users WHERE signup_code_sha256 = $1",
            args![code_sha256],
            |r| r.get(0),
        )
    }

    fn ladder_set_token(&mut self, name: &str, token_sha256: &str) -> Result<bool, StoreError> {
        let n = self.execute(
            "giving an account a new API token",
            "UPDATE kk_ladder_users SET token_sha256 = $2 WHERE name = $1",
            args![name, token_sha256],
        )?;
        Ok(n == 1)
    }

    fn ladder_sign_up(
        &mut self,
        code_sha256: &str,
        password_hash: &str,
    ) -> Result<Option<String>, StoreError> {
        self.query_opt(
            "signing up",
            "UPDATE kk_ladder_users SET password_hash = $2, signup_code_sha256 = NULL
             WHERE signup_code_sha256 = $1 RETURNING name",
            args![code_sha256, password_hash],
            |r| r.get(0),
        )
    }

    fn ladder_users(&mut self) -> Result<Vec<LadderUser>, StoreError> {
        self.query(
            "listing the ladder accounts",
            &format!("SELECT {USER_COLUMNS} FROM kk_ladder_users u ORDER BY u.name"),
            args![],
            ladder_user_from,
        )
    }

    fn ladder_set_disabled(&mut self, name: &str, disabled: bool) -> Result<bool, StoreError> {
        const CONTEXT: &str = "disabling an account";
        let mut tx = self.begin(CONTEXT)?;
        let n = tx.execute(
            CONTEXT,
            "UPDATE kk_ladder_users SET disabled = $2 WHERE name = $1",
            args![name, disabled],
        )?;
        if disabled {
            tx.execute(
                CONTEXT,
                "DELETE FROM kk_ladder_sessions WHERE username = $1",
                args![name],
            )?;
        }
        tx.commit(CONTEXT)?;
        Ok(n > 0)
    }

    fn ladder_set_retired(
        &mut self,
        ladder: &str,
        bot: &str,
        retired: bool,
    ) -> Result<bool, StoreError> {
        let n = self.execute(
            "retiring a bot",
            "UPDATE kk_ladder_bots SET retired = $3 WHERE ladder = $1 AND name = $2",
            args![ladder, bot, retired],
        )?;
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
        let mut tx = self.begin(CONTEXT)?;
        tx.execute(
            CONTEXT,
            "DELETE FROM kk_ladder_sessions WHERE expires_at <= $1",
            args![now],
        )?;
        let n = tx.execute(
            CONTEXT,
            "INSERT INTO kk_ladder_sessions
                 (id_sha256, username, csrf_token, created_at, expires_at)
             SELECT $1, name, $3, $4, $5 FROM kk_ladder_users WHERE name = $2",
            args![id_sha256, username, csrf_token, now, expires_at],
        )?;
        if n == 0 {
            return Err(StoreError::NoSuchUser(username.to_string()));
        }
        tx.commit(CONTEXT)
    }

    fn ladder_session(
        &mut self,
        id_sha256: &str,
        now: i64,
    ) -> Result<Option<LadderSession>, StoreError> {
        self.query_opt(
            "reading a web session",
            &format!(
                "SELECT {USER_COLUMNS}, s.csrf_token, s.expires_at
                 FROM kk_ladder_sessions s JOIN kk_ladder_users u ON u.name = s.username
                 WHERE s.id_sha256 = $1 AND s.expires_at > $2"
            ),
            args![id_sha256, now],
            |r| {
                Ok(LadderSession {
                    user: ladder_user_from(r)?,
                    csrf_token: r.get(6)?,
                    expires_at: r.get(7)?,
                })
            },
        )
    }

    fn delete_ladder_session(&mut self, id_sha256: &str) -> Result<(), StoreError> {
        self.execute(
            "ending a web session",
            "DELETE FROM kk_ladder_sessions WHERE id_sha256 = $1",
            args![id_sha256],
        )?;
        Ok(())
    }

    fn ladder_reinvite(
        &mut self,
        name: &str,
        token_sha256: &str,
        signup_code_sha256: &str,
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "inviting an account again";
        let mut tx = self.begin(CONTEXT)?;
        let n = tx.execute(
            CONTEXT,
            "UPDATE kk_ladder_users SET token_sha256 = $2, signup_code_sha256 = $3,
                 password_hash = NULL WHERE name = $1",
            args![name, token_sha256, signup_code_sha256],
        )?;
        tx.execute(
            CONTEXT,
            "DELETE FROM kk_ladder_sessions WHERE username = $1",
            args![name],
        )?;
        tx.commit(CONTEXT)?;
        Ok(n == 1)
    }

    fn ladder_set_password(
        &mut self,
        name: &str,
        password_hash: &str,
        keep_session: &str,
    ) -> Result<(), StoreError> {
        const CONTEXT: &str = "changing a password";
        let mut tx = self.begin(CONTEXT)?;
        tx.execute(
            CONTEXT,
            "UPDATE kk_ladder_users SET password_hash = $2 WHERE name = $1",
            args![name, password_hash],
        )?;
        tx.execute(
            CONTEXT,
            "DELETE FROM kk_ladder_sessions WHERE username = $1 AND id_sha256 <> $2",
            args![name, keep_session],
        )?;
        tx.commit(CONTEXT)
    }

    fn add_bot_version(&mut self, v: &NewBotVersion) -> Result<u64, StoreError> {
        const CONTEXT: &str = "storing a bot version";
        let now = now_secs();
        let mut tx = self.begin(CONTEXT)?;
        tx.execute(
            CONTEXT,
            "INSERT INTO kk_ladder_bots (ladder, name, owner, created_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (ladder, name) DO NOTHING",
            args![&v.ladder, &v.bot, &v.owner, now],
        )?;
        // The bot's row, locked: uploads of one bot get their numbers one at a time.
        let owner: String = tx.query_one(
            CONTEXT,
            &format!(
                "SELECT owner FROM kk_ladder_bots WHERE ladder = $1 AND name = $2 {}",
                D::FOR_UPDATE
            ),
            args![&v.ladder, &v.bot],
            |r| r.get(0),
        )?;
        if owner != v.owner {
            return Err(StoreError::BotOwnedByOther {
                ladder: v.ladder.clone(),
                bot: v.bot.clone(),
            });
        }
        let version: i64 = tx.query_one(
            CONTEXT,
            "SELECT COALESCE(MAX(version), 0) + 1 FROM kk_ladder_versions
             WHERE ladder = $1 AND bot = $2",
            args![&v.ladder, &v.bot],
            |r| r.get(0),
        )?;
        tx.execute(
            CONTEXT,
            "INSERT INTO kk_ladder_versions
                 (ladder, bot, version, language, source_sha256, status, log, created_at)
             VALUES ($1, $2, $3, $4, $5, 'building', '', $6)",
            args![
                &v.ladder,
                &v.bot,
                version,
                &v.language,
                &v.source_sha256,
                now
            ],
        )?;
        tx.commit(CONTEXT)?;
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
        let n = self.execute(
            "setting a bot version's status",
            "UPDATE kk_ladder_versions SET status = $4, log = $5
             WHERE ladder = $1 AND bot = $2 AND version = $3",
            args![ladder, bot, to_db(version), status.as_str(), log],
        )?;
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
        self.query_opt(
            "reading a bot's owner",
            "SELECT owner FROM kk_ladder_bots WHERE ladder = $1 AND name = $2",
            args![ladder, bot],
            |r| r.get(0),
        )
    }

    fn bot_versions(&mut self, ladder: &str, bot: &str) -> Result<Vec<BotVersion>, StoreError> {
        versions_where(self, "v.bot = $2 ORDER BY v.version", ladder, bot)
    }

    fn active_bot_versions(&mut self, ladder: &str) -> Result<Vec<BotVersion>, StoreError> {
        versions_where(
            self,
            crate::ladder_builds::ACTIVE_VERSIONS,
            ladder,
            VersionStatus::Active.as_str(),
        )
    }

    fn bot_versions_in(
        &mut self,
        ladder: &str,
        status: VersionStatus,
    ) -> Result<Vec<BotVersion>, StoreError> {
        versions_where(
            self,
            "v.status = $2 ORDER BY v.bot, v.version",
            ladder,
            status.as_str(),
        )
    }
}
