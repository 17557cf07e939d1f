//! [`LadderBuilds`] on SQLite.

use std::time::Duration;

use rusqlite::{params, OptionalExtension, TransactionBehavior};

use super::{err, SqliteStore};
use crate::ladder_builds::{
    abandoned_log, bot_storage_sql, program_sql, prune_sql, put_program_sql, storage_rows,
    storage_sql, BlobSize, BuildClaim, LadderBuilds, Program, Pruned, StorageUse, CLAIM_ORDER,
    PRUNE_ARCHIVES,
};
use crate::{from_db, now_secs, to_db, StoreError, VersionStatus};

/// Blob sizes on SQLite.
const BLOB_SIZE: BlobSize = BlobSize {
    len: "length",
    int: "",
};

impl LadderBuilds for SqliteStore {
    fn ladder_put_upload(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
        upload: &[u8],
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO kk_ladder_builds (ladder, bot, version, upload, worker, claimed_until, attempts)
                 VALUES (?1, ?2, ?3, ?4, NULL, NULL, 0)
                 ON CONFLICT (ladder, bot, version) DO UPDATE SET upload = excluded.upload",
                params![ladder, bot, to_db(version), upload],
            )
            .map_err(err("keeping an upload"))?;
        Ok(())
    }

    fn ladder_prune(&mut self, ladder: &str, keep: u64, before: i64) -> Result<Pruned, StoreError> {
        const CONTEXT: &str = "pruning the ladder's uploads and programs";
        let p = |n: usize| format!("?{n}");
        let tx = self.conn.transaction().map_err(err(CONTEXT))?;
        let mut pruned = Pruned::default();
        for (table, count) in [
            ("kk_ladder_builds", &mut pruned.uploads),
            ("kk_ladder_programs", &mut pruned.programs),
        ] {
            *count = tx
                .execute(&prune_sql(table, &p), params![ladder, to_db(keep), before])
                .map_err(err(CONTEXT))? as u64;
        }
        tx.execute(PRUNE_ARCHIVES, []).map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
        Ok(pruned)
    }

    fn ladder_storage(&mut self, ladder: &str) -> Result<Vec<StorageUse>, StoreError> {
        const CONTEXT: &str = "measuring the ladder's storage";
        let p = |n: usize| format!("?{n}");
        let mut stmt = self
            .conn
            .prepare(&storage_sql(&BLOB_SIZE, &p))
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map(params![ladder, crate::ladder_contest(ladder)], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(err(CONTEXT))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(err(CONTEXT))?;
        Ok(storage_rows(rows))
    }

    fn ladder_bot_storage(&mut self, ladder: &str, bot: &str) -> Result<u64, StoreError> {
        const CONTEXT: &str = "measuring a bot's storage";
        let p = |n: usize| format!("?{n}");
        let bytes: i64 = self
            .conn
            .query_row(
                &bot_storage_sql(&BLOB_SIZE, &p),
                params![ladder, bot],
                |r| r.get(0),
            )
            .map_err(err(CONTEXT))?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    fn ladder_upload(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .query_row(
                "SELECT upload FROM kk_ladder_builds WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
                params![ladder, bot, to_db(version)],
                |r| r.get(0),
            )
            .optional()
            .map_err(err("reading an upload"))
    }

    fn ladder_set_file(&mut self, ladder: &str, text: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO kk_ladder_files (ladder, text) VALUES (?1, ?2)
                 ON CONFLICT (ladder) DO UPDATE SET text = excluded.text",
                params![ladder, text],
            )
            .map_err(err("keeping the ladder file"))?;
        Ok(())
    }

    fn ladder_file(&mut self, ladder: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT text FROM kk_ladder_files WHERE ladder = ?1",
                params![ladder],
                |r| r.get(0),
            )
            .optional()
            .map_err(err("reading the ladder file"))
    }

    fn ladder_claim_build(
        &mut self,
        worker: &str,
        lease: Duration,
        max_attempts: u32,
    ) -> Result<Option<BuildClaim>, StoreError> {
        const CONTEXT: &str = "claiming a build";
        let now = now_secs();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        loop {
            let next: Option<(String, String, i64, i64, String)> = tx
                .query_row(
                    &format!(
                        "SELECT b.ladder, b.bot, b.version, b.attempts, v.language
                     FROM kk_ladder_builds b JOIN kk_ladder_versions v
                       ON v.ladder = b.ladder AND v.bot = b.bot AND v.version = b.version
                     WHERE v.status = 'building'
                       AND (b.worker IS NULL OR b.claimed_until IS NULL OR b.claimed_until < ?1)
                     ORDER BY {CLAIM_ORDER} LIMIT 1"
                    ),
                    params![now],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()
                .map_err(err(CONTEXT))?;
            let Some((ladder, bot, version, attempts, language)) = next else {
                tx.commit().map_err(err(CONTEXT))?;
                return Ok(None);
            };
            if from_db(attempts) >= u64::from(max_attempts) {
                tx.execute(
                    "UPDATE kk_ladder_versions SET status = 'build_failed', log = ?4
                     WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
                    params![ladder, bot, version, abandoned_log(max_attempts)],
                )
                .map_err(err(CONTEXT))?;
                tx.execute(
                    "UPDATE kk_ladder_builds SET worker = NULL, claimed_until = NULL
                     WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
                    params![ladder, bot, version],
                )
                .map_err(err(CONTEXT))?;
                continue;
            }
            let until = now.saturating_add(lease.as_secs() as i64);
            tx.execute(
                "UPDATE kk_ladder_builds SET worker = ?4, claimed_until = ?5, attempts = attempts + 1, claimed_at = ?6
                 WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
                params![ladder, bot, version, worker, until, now],
            )
            .map_err(err(CONTEXT))?;
            let upload: Vec<u8> = tx
                .query_row(
                    "SELECT upload FROM kk_ladder_builds
                     WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
                    params![ladder, bot, version],
                    |r| r.get(0),
                )
                .map_err(err(CONTEXT))?;
            tx.commit().map_err(err(CONTEXT))?;
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
        let n = self
            .conn
            .execute(
                "UPDATE kk_ladder_builds SET claimed_until = ?6
                 WHERE ladder = ?1 AND bot = ?2 AND version = ?3 AND worker = ?4 AND attempts = ?5",
                params![
                    claim.ladder,
                    claim.bot,
                    to_db(claim.version),
                    claim.worker,
                    i64::from(claim.attempt),
                    until
                ],
            )
            .map_err(err("extending a build's lease"))?;
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
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        let key = params![claim.ladder, claim.bot, to_db(claim.version)];
        let held = tx
            .execute(
                "UPDATE kk_ladder_builds SET worker = NULL, claimed_until = NULL
                 WHERE ladder = ?1 AND bot = ?2 AND version = ?3 AND worker = ?4 AND attempts = ?5",
                params![
                    claim.ladder,
                    claim.bot,
                    to_db(claim.version),
                    claim.worker,
                    i64::from(claim.attempt)
                ],
            )
            .map_err(err(CONTEXT))?;
        let building = tx
            .query_row(
                "SELECT status FROM kk_ladder_versions WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
                key,
                |r| r.get::<_, String>(0),
            )
            .optional()
            .map_err(err(CONTEXT))?
            .is_some_and(|s| s == VersionStatus::Building.as_str());
        if held != 1 || !building {
            return Ok(false);
        }
        if let Some(p) = program {
            let [archive, pointer] = put_program_sql(&|n| format!("?{n}"));
            tx.execute(&archive, params![p.sha256, p.archive])
                .map_err(err(CONTEXT))?;
            tx.execute(
                &pointer,
                params![claim.ladder, claim.bot, to_db(claim.version), p.sha256],
            )
            .map_err(err(CONTEXT))?;
        }
        tx.execute(
            "UPDATE kk_ladder_versions SET status = ?4, log = ?5
             WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
            params![
                claim.ladder,
                claim.bot,
                to_db(claim.version),
                status.as_str(),
                log
            ],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
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
        let [archive, pointer] = put_program_sql(&|n| format!("?{n}"));
        let tx = self.conn.transaction().map_err(err(CONTEXT))?;
        tx.execute(&archive, params![program.sha256, program.archive])
            .map_err(err(CONTEXT))?;
        tx.execute(
            &pointer,
            params![ladder, bot, to_db(version), program.sha256],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))
    }

    fn ladder_program_sha256(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT sha256 FROM kk_ladder_programs WHERE ladder = ?1 AND bot = ?2 AND version = ?3",
                params![ladder, bot, to_db(version)],
                |r| r.get(0),
            )
            .optional()
            .map_err(err("reading a program's digest"))
    }

    fn ladder_program(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<Program>, StoreError> {
        self.conn
            .query_row(
                &program_sql(&|n| format!("?{n}")),
                params![ladder, bot, to_db(version)],
                |r| {
                    Ok(Program {
                        sha256: r.get(0)?,
                        archive: r.get(1)?,
                    })
                },
            )
            .optional()
            .map_err(err("reading a program"))
    }

    fn ladder_builds_without_upload(
        &mut self,
        ladder: &str,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT v.bot, v.version FROM kk_ladder_versions v
                 WHERE v.ladder = ?1 AND v.status = 'building'
                   AND NOT EXISTS (SELECT 1 FROM kk_ladder_builds b
                     WHERE b.ladder = v.ladder AND b.bot = v.bot AND b.version = v.version)
                 ORDER BY v.bot, v.version",
            )
            .map_err(err("listing builds without an upload"))?;
        let rows = stmt
            .query_map(params![ladder], |r| {
                Ok((r.get::<_, String>(0)?, from_db(r.get(1)?)))
            })
            .map_err(err("listing builds without an upload"))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(err("listing builds without an upload"))
    }
}
