//! The ladder's builds in the store, so that any machine can build an upload and any worker can
//! run the result: each version's upload is kept with its build claim (who builds it, until
//! when, how many attempts), the ladder file's text is kept per ladder (a worker builds with
//! its recipes and limits), and each built program folder is kept as a gzipped tar with its
//! SHA-256.
//!
//! A version is built by whoever claims it: the claim is one transaction, made only while the
//! version is `building` and nobody holds it (or its holder's lease ran out, as when a worker is
//! killed mid-build); the outcome is stored with the program in one transaction, and only by the
//! claim's holder, so a build taken over after a lease ran out is never stored twice.

use std::time::Duration;

use crate::db::{args, BlobSize, Conn, Db, Tx};
use crate::{from_db, now_secs, to_db, StoreError, VersionStatus};

/// The order builds are claimed in (both backends' `ORDER BY`, over `kk_ladder_builds b` joined
/// with its version `v`): round-robin across bots, i.e. accounts. The bot whose last build was
/// claimed longest ago (or never) goes first, and its oldest build; so an account's second build
/// waits behind every other account's first, whoever queued first.
pub(crate) const CLAIM_ORDER: &str = "COALESCE((SELECT MAX(e.claimed_at) FROM kk_ladder_builds e
       WHERE e.ladder = b.ladder AND e.bot = b.bot), -1),
     v.created_at, b.ladder, b.bot, b.version";

/// The condition (over `kk_ladder_versions v`, with `$2` the status `active`) of the versions a
/// ladder plays: each bot's newest active version, unless the bot is retired or its owner's
/// account disabled.
pub(crate) const ACTIVE_VERSIONS: &str = "v.status = $2 AND v.version = (SELECT MAX(w.version)
         FROM kk_ladder_versions w
         WHERE w.ladder = v.ladder AND w.bot = v.bot AND w.status = $2)
     AND NOT EXISTS (SELECT 1 FROM kk_ladder_bots b
         JOIN kk_ladder_users u ON u.name = b.owner
         WHERE b.ladder = v.ladder AND b.name = v.bot
           AND (b.retired <> 0 OR u.disabled <> 0))
     ORDER BY v.bot";

/// A build claimed by a worker: the upload to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildClaim {
    pub ladder: String,
    pub bot: String,
    pub version: u64,
    pub language: String,
    pub upload: Vec<u8>,
    /// Who holds it, and which attempt this is (the pair identifies the claim).
    pub worker: String,
    pub attempt: u32,
}

/// A built program folder: a gzipped tar and its SHA-256 (lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub sha256: String,
    pub archive: Vec<u8>,
}

/// The log of a version whose builds were all interrupted.
pub fn abandoned_log(attempts: u32) -> String {
    format!(
        "the build was started {attempts} times and never finished (its worker stopped each \
         time): submit it again\n"
    )
}

/// What [`LadderBuilds::ladder_prune`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Uploads (and their build rows) removed.
    pub uploads: u64,
    /// Built programs removed.
    pub programs: u64,
}

/// One kind of a ladder's data in the store: how many rows and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageUse {
    /// `uploads`, `programs` or `replays`.
    pub kind: &'static str,
    pub rows: u64,
    pub bytes: u64,
}

/// The versions of `{table}` (`kk_ladder_builds` or `kk_ladder_programs`) a prune removes (`$1`
/// the ladder, `$2` how many newest versions of a bot are kept, `$3` the creation time before
/// which a version may go): never one `building`, never a bot's newest active version nor one of
/// its `keep` newest; every other one created before.
fn prune_sql(table: &str) -> String {
    format!(
        "DELETE FROM {table} WHERE {table}.ladder = $1 AND EXISTS (
            SELECT 1 FROM kk_ladder_versions v
            WHERE v.ladder = {table}.ladder AND v.bot = {table}.bot AND v.version = {table}.version
              AND v.status <> 'building' AND v.created_at < $3
              AND v.version <= (SELECT MAX(w.version) FROM kk_ladder_versions w
                                WHERE w.ladder = v.ladder AND w.bot = v.bot) - $2
              AND v.version <> COALESCE((SELECT MAX(w.version) FROM kk_ladder_versions w
                                WHERE w.ladder = v.ladder AND w.bot = v.bot
                                  AND w.status = 'active'), -1))"
    )
}

/// The sizes of a ladder's data by kind (`$1` the ladder, `$2` the ladder's contest row).
fn storage_sql(size: &BlobSize) -> String {
    let BlobSize { len, int } = size;
    format!(
        "SELECT 'uploads', COUNT(*), COALESCE(SUM({len}(upload)), 0){int} FROM kk_ladder_builds WHERE ladder = $1
         UNION ALL
         SELECT 'programs', COUNT(*), COALESCE(SUM({len}(a.archive)), 0){int} FROM kk_ladder_archives a
           WHERE EXISTS (SELECT 1 FROM kk_ladder_programs p WHERE p.ladder = $1 AND p.sha256 = a.sha256)
         UNION ALL
         SELECT 'replays', COUNT(*), COALESCE(SUM({len}(replay)), 0){int} FROM kk_results WHERE contest = $2"
    )
}

/// A row of [`storage_sql`] as a [`StorageUse`].
fn storage_use(kind: &str, n: i64, bytes: i64) -> StorageUse {
    StorageUse {
        kind: match kind {
            "uploads" => "uploads",
            "programs" => "programs",
            _ => "replays",
        },
        rows: u64::try_from(n).unwrap_or(0),
        bytes: u64::try_from(bytes).unwrap_or(0),
    }
}

/// The bytes one bot's uploads and programs take (`$1` the ladder, `$2` the bot).
fn bot_storage_sql(size: &BlobSize) -> String {
    let BlobSize { len, int } = size;
    format!(
        "SELECT (COALESCE((SELECT SUM({len}(upload)) FROM kk_ladder_builds
                           WHERE ladder = $1 AND bot = $2), 0)
               + COALESCE((SELECT SUM({len}(a.archive)) FROM kk_ladder_archives a
                           WHERE EXISTS (SELECT 1 FROM kk_ladder_programs p
                                         WHERE p.ladder = $1 AND p.bot = $2
                                           AND p.sha256 = a.sha256)), 0)){int}"
    )
}

/// Keep `program` once by digest (already kept: nothing) and point `ladder`'s `bot` v`version`
/// at it, in `tx`.
fn put_program(
    tx: &mut impl Conn,
    context: &'static str,
    ladder: &str,
    bot: &str,
    version: u64,
    program: &Program,
) -> Result<(), StoreError> {
    tx.execute(
        context,
        "INSERT INTO kk_ladder_archives (sha256, archive) VALUES ($1, $2)
         ON CONFLICT (sha256) DO NOTHING",
        args![&program.sha256, &program.archive],
    )?;
    tx.execute(
        context,
        "INSERT INTO kk_ladder_programs (ladder, bot, version, sha256) VALUES ($1, $2, $3, $4)
         ON CONFLICT (ladder, bot, version) DO UPDATE SET sha256 = excluded.sha256",
        args![ladder, bot, to_db(version), &program.sha256],
    )?;
    Ok(())
}

/// Archives no version points at any more (after a prune).
const PRUNE_ARCHIVES: &str = "DELETE FROM kk_ladder_archives WHERE NOT EXISTS
    (SELECT 1 FROM kk_ladder_programs p WHERE p.sha256 = kk_ladder_archives.sha256)";

pub trait LadderBuilds {
    /// Remove the uploads and built programs of `ladder`'s versions created before `before`
    /// (seconds since the Unix epoch) that are not `building`, not their bot's newest active
    /// version and not among its `keep` newest versions (`prune_sql`); the versions, their
    /// logs, ratings and matches stay.
    fn ladder_prune(&mut self, ladder: &str, keep: u64, before: i64) -> Result<Pruned, StoreError>;

    /// The bytes `ladder` holds in the store by kind: uploads, built programs and the replays
    /// of its matches (compressed).
    fn ladder_storage(&mut self, ladder: &str) -> Result<Vec<StorageUse>, StoreError>;

    /// The bytes the uploads and programs of `bot` of `ladder` take (its owner's quota).
    fn ladder_bot_storage(&mut self, ladder: &str, bot: &str) -> Result<u64, StoreError>;

    /// Keep the upload of `version` (status `building`) for whoever builds it.
    fn ladder_put_upload(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
        upload: &[u8],
    ) -> Result<(), StoreError>;

    /// A version's upload as it was received.
    fn ladder_upload(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<Vec<u8>>, StoreError>;

    /// Keep the text of the ladder's file (its recipes and limits, for the builders).
    fn ladder_set_file(&mut self, ladder: &str, text: &str) -> Result<(), StoreError>;

    /// The text of the ladder's file, as the server last kept it.
    fn ladder_file(&mut self, ladder: &str) -> Result<Option<String>, StoreError>;

    /// Claim the oldest version still `building` whose upload is kept and that nobody holds (or
    /// whose holder's lease ran out) for `worker` until `lease` from now. A version already
    /// claimed `max_attempts` times is failed instead, with [`abandoned_log`].
    fn ladder_claim_build(
        &mut self,
        worker: &str,
        lease: Duration,
        max_attempts: u32,
    ) -> Result<Option<BuildClaim>, StoreError>;

    /// Hold `claim` until `lease` from now; `false` if it is no longer the holder's.
    fn ladder_extend_build(
        &mut self,
        claim: &BuildClaim,
        lease: Duration,
    ) -> Result<bool, StoreError>;

    /// Store a claimed build's outcome, with its program when it was built, in one
    /// transaction; `false` (and nothing stored) if the claim is no longer the holder's.
    fn ladder_finish_build(
        &mut self,
        claim: &BuildClaim,
        status: VersionStatus,
        log: &str,
        program: Option<&Program>,
    ) -> Result<bool, StoreError>;

    /// Keep a version's built program (replacing one kept before).
    fn ladder_put_program(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
        program: &Program,
    ) -> Result<(), StoreError>;

    /// The SHA-256 of a version's program, without the program.
    fn ladder_program_sha256(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<String>, StoreError>;

    /// A version's program.
    fn ladder_program(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<Program>, StoreError>;

    /// The versions still `building` whose upload is not kept (a server stopped between taking
    /// an upload and keeping it): `(bot, version)`.
    fn ladder_builds_without_upload(
        &mut self,
        ladder: &str,
    ) -> Result<Vec<(String, u64)>, StoreError>;
}

impl<D: Db> LadderBuilds for D {
    fn ladder_put_upload(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
        upload: &[u8],
    ) -> Result<(), StoreError> {
        self.execute(
            "keeping an upload",
            "INSERT INTO kk_ladder_builds
                 (ladder, bot, version, upload, worker, claimed_until, attempts)
             VALUES ($1, $2, $3, $4, NULL, NULL, 0)
             ON CONFLICT (ladder, bot, version) DO UPDATE SET upload = excluded.upload",
            args![ladder, bot, to_db(version), upload],
        )?;
        Ok(())
    }

    fn ladder_prune(&mut self, ladder: &str, keep: u64, before: i64) -> Result<Pruned, StoreError> {
        const CONTEXT: &str = "pruning the ladder's uploads and programs";
        let mut tx = self.begin(CONTEXT)?;
        let mut pruned = Pruned::default();
        for (table, count) in [
            ("kk_ladder_builds", &mut pruned.uploads),
            ("kk_ladder_programs", &mut pruned.programs),
        ] {
            *count = tx.execute(
                CONTEXT,
                &prune_sql(table),
                args![ladder, to_db(keep), before],
            )?;
        }
        tx.execute(CONTEXT, PRUNE_ARCHIVES, args![])?;
        tx.commit(CONTEXT)?;
        Ok(pruned)
    }

    fn ladder_storage(&mut self, ladder: &str) -> Result<Vec<StorageUse>, StoreError> {
        self.query(
            "measuring the ladder's storage",
            &storage_sql(&D::BLOB_SIZE),
            args![ladder, &crate::ladder_contest(ladder)],
            |r| Ok(storage_use(&r.get::<String>(0)?, r.get(1)?, r.get(2)?)),
        )
    }

    fn ladder_bot_storage(&mut self, ladder: &str, bot: &str) -> Result<u64, StoreError> {
        let bytes = self.query_one(
            "measuring a bot's storage",
            &bot_storage_sql(&D::BLOB_SIZE),
            args![ladder, bot],
            |r| r.get::<i64>(0),
        )?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    fn ladder_upload(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.query_opt(
            "reading an upload",
            "SELECT upload FROM kk_ladder_builds WHERE ladder = $1 AND bot = $2 AND version = $3",
            args![ladder, bot, to_db(version)],
            |r| r.get(0),
        )
    }

    fn ladder_set_file(&mut self, ladder: &str, text: &str) -> Result<(), StoreError> {
        self.execute(
            "keeping the ladder file",
            "INSERT INTO kk_ladder_files (ladder, text) VALUES ($1, $2)
             ON CONFLICT (ladder) DO UPDATE SET text = excluded.text",
            args![ladder, text],
        )?;
        Ok(())
    }

    fn ladder_file(&mut self, ladder: &str) -> Result<Option<String>, StoreError> {
        self.query_opt(
            "reading the ladder file",
            "SELECT text FROM kk_ladder_files WHERE ladder = $1",
            args![ladder],
            |r| r.get(0),
        )
    }

    fn ladder_claim_build(
        &mut self,
        worker: &str,
        lease: Duration,
        max_attempts: u32,
    ) -> Result<Option<BuildClaim>, StoreError> {
        const CONTEXT: &str = "claiming a build";
        let now = now_secs();
        let mut tx = self.begin(CONTEXT)?;
        loop {
            // The next build, skipping those other workers are claiming right now.
            let next = tx.query_opt(
                CONTEXT,
                &format!(
                    "SELECT b.ladder, b.bot, b.version, b.attempts, v.language, b.upload
                     FROM kk_ladder_builds b JOIN kk_ladder_versions v
                       ON v.ladder = b.ladder AND v.bot = b.bot AND v.version = b.version
                     WHERE v.status = 'building'
                       AND (b.worker IS NULL OR b.claimed_until IS NULL OR b.claimed_until < $1)
                     ORDER BY {CLAIM_ORDER} LIMIT 1
                     {lock}",
                    lock = D::skip_locked("b"),
                ),
                args![now],
                |r| {
                    Ok((
                        r.get::<String>(0)?,
                        r.get::<String>(1)?,
                        r.get::<i64>(2)?,
                        r.get::<i64>(3)?,
                        r.get::<String>(4)?,
                        r.get::<Vec<u8>>(5)?,
                    ))
                },
            )?;
            let Some((ladder, bot, version, attempts, language, upload)) = next else {
                tx.commit(CONTEXT)?;
                return Ok(None);
            };
            if from_db(attempts) >= u64::from(max_attempts) {
                tx.execute(
                    CONTEXT,
                    "UPDATE kk_ladder_versions SET status = 'build_failed', log = $4
                     WHERE ladder = $1 AND bot = $2 AND version = $3",
                    args![&ladder, &bot, version, &abandoned_log(max_attempts)],
                )?;
                tx.execute(
                    CONTEXT,
                    "UPDATE kk_ladder_builds SET worker = NULL, claimed_until = NULL
                     WHERE ladder = $1 AND bot = $2 AND version = $3",
                    args![&ladder, &bot, version],
                )?;
                continue;
            }
            let until = now.saturating_add(lease.as_secs() as i64);
            tx.execute(
                CONTEXT,
                "UPDATE kk_ladder_builds SET worker = $4, claimed_until = $5,
                     attempts = attempts + 1, claimed_at = $6
                 WHERE ladder = $1 AND bot = $2 AND version = $3",
                args![&ladder, &bot, version, worker, until, now],
            )?;
            tx.commit(CONTEXT)?;
            return Ok(Some(BuildClaim {
                ladder,
                bot,
                version: from_db(version),
                language,
                upload,
                worker: worker.to_string(),
                attempt: (attempts + 1) as u32,
            }));
        }
    }

    fn ladder_extend_build(
        &mut self,
        claim: &BuildClaim,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let until = now_secs().saturating_add(lease.as_secs() as i64);
        let n = self.execute(
            "extending a build's lease",
            "UPDATE kk_ladder_builds SET claimed_until = $6
             WHERE ladder = $1 AND bot = $2 AND version = $3 AND worker = $4 AND attempts = $5",
            args![
                &claim.ladder,
                &claim.bot,
                to_db(claim.version),
                &claim.worker,
                i64::from(claim.attempt),
                until
            ],
        )?;
        Ok(n == 1)
    }

    fn ladder_finish_build(
        &mut self,
        claim: &BuildClaim,
        status: VersionStatus,
        log: &str,
        program: Option<&Program>,
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "storing a build's outcome";
        let version = to_db(claim.version);
        let mut tx = self.begin(CONTEXT)?;
        let held = tx.execute(
            CONTEXT,
            "UPDATE kk_ladder_builds SET worker = NULL, claimed_until = NULL
             WHERE ladder = $1 AND bot = $2 AND version = $3 AND worker = $4 AND attempts = $5",
            args![
                &claim.ladder,
                &claim.bot,
                version,
                &claim.worker,
                i64::from(claim.attempt)
            ],
        )?;
        let building = tx
            .query_opt(
                CONTEXT,
                &format!(
                    "SELECT status FROM kk_ladder_versions
                     WHERE ladder = $1 AND bot = $2 AND version = $3 {}",
                    D::FOR_UPDATE
                ),
                args![&claim.ladder, &claim.bot, version],
                |r| r.get::<String>(0),
            )?
            .is_some_and(|s| s == VersionStatus::Building.as_str());
        if held != 1 || !building {
            // Rolled back: a claim no longer held changes nothing.
            return Ok(false);
        }
        if let Some(p) = program {
            put_program(
                &mut tx,
                CONTEXT,
                &claim.ladder,
                &claim.bot,
                claim.version,
                p,
            )?;
        }
        tx.execute(
            CONTEXT,
            "UPDATE kk_ladder_versions SET status = $4, log = $5
             WHERE ladder = $1 AND bot = $2 AND version = $3",
            args![&claim.ladder, &claim.bot, version, status.as_str(), log],
        )?;
        tx.commit(CONTEXT)?;
        Ok(true)
    }

    fn ladder_put_program(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
        program: &Program,
    ) -> Result<(), StoreError> {
        const CONTEXT: &str = "keeping a program";
        let mut tx = self.begin(CONTEXT)?;
        put_program(&mut tx, CONTEXT, ladder, bot, version, program)?;
        tx.commit(CONTEXT)
    }

    fn ladder_program_sha256(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<String>, StoreError> {
        self.query_opt(
            "reading a program's digest",
            "SELECT sha256 FROM kk_ladder_programs WHERE ladder = $1 AND bot = $2 AND version = $3",
            args![ladder, bot, to_db(version)],
            |r| r.get(0),
        )
    }

    fn ladder_program(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<Program>, StoreError> {
        self.query_opt(
            "reading a program",
            "SELECT p.sha256, a.archive FROM kk_ladder_programs p
             JOIN kk_ladder_archives a ON a.sha256 = p.sha256
             WHERE p.ladder = $1 AND p.bot = $2 AND p.version = $3",
            args![ladder, bot, to_db(version)],
            |r| {
                Ok(Program {
                    sha256: r.get(0)?,
                    archive: r.get(1)?,
                })
            },
        )
    }

    fn ladder_builds_without_upload(
        &mut self,
        ladder: &str,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        self.query(
            "listing builds without an upload",
            "SELECT v.bot, v.version FROM kk_ladder_versions v
             WHERE v.ladder = $1 AND v.status = 'building'
               AND NOT EXISTS (SELECT 1 FROM kk_ladder_builds b
                 WHERE b.ladder = v.ladder AND b.bot = v.bot AND b.version = v.version)
             ORDER BY v.bot, v.version",
            args![ladder],
            |r| Ok((r.get(0)?, from_db(r.get(1)?))),
        )
    }
}
