//! [`LadderBuilds`] on PostgreSQL: builds are claimed with `FOR UPDATE SKIP LOCKED`, as matches
//! are, so any number of workers on any number of machines build at once.

use std::time::Duration;

use super::{col, err, PgStore};
use crate::ladder_builds::{
    abandoned_log, bot_storage_sql, program_sql, prune_sql, put_program_sql, storage_rows,
    storage_sql, BlobSize, BuildClaim, LadderBuilds, Program, Pruned, StorageUse, CLAIM_ORDER,
    PRUNE_ARCHIVES,
};
use crate::{from_db, now_secs, to_db, StoreError, VersionStatus};

/// Blob sizes on PostgreSQL.
const BLOB_SIZE: BlobSize = BlobSize {
    len: "octet_length",
    int: "::BIGINT",
};

/// Placeholder `n` on PostgreSQL.
fn pg(n: usize) -> String {
    format!("${n}")
}

/// Keep `program` once by digest and point `ladder`'s `bot` v`version` at it, in `tx`.
fn put_program(
    tx: &mut postgres::Transaction<'_>,
    ladder: &str,
    bot: &str,
    version: i64,
    program: &Program,
) -> Result<(), postgres::Error> {
    let [archive, pointer] = put_program_sql(&pg);
    tx.execute(&archive, &[&program.sha256, &program.archive])?;
    tx.execute(&pointer, &[&ladder, &bot, &version, &program.sha256])?;
    Ok(())
}

impl LadderBuilds for PgStore {
    fn ladder_put_upload(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
        upload: &[u8],
    ) -> Result<(), StoreError> {
        self.client
            .execute(
                "INSERT INTO kk_ladder_builds (ladder, bot, version, upload, worker, claimed_until, attempts)
                 VALUES ($1, $2, $3, $4, NULL, NULL, 0)
                 ON CONFLICT (ladder, bot, version) DO UPDATE SET upload = excluded.upload",
                &[&ladder, &bot, &to_db(version), &upload],
            )
            .map_err(err("keeping an upload"))?;
        Ok(())
    }

    fn ladder_prune(&mut self, ladder: &str, keep: u64, before: i64) -> Result<Pruned, StoreError> {
        const CONTEXT: &str = "pruning the ladder's uploads and programs";
        let p = |n: usize| format!("${n}");
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        let mut pruned = Pruned::default();
        let keep = to_db(keep);
        for (table, count) in [
            ("kk_ladder_builds", &mut pruned.uploads),
            ("kk_ladder_programs", &mut pruned.programs),
        ] {
            *count = tx
                .execute(&prune_sql(table, &p), &[&ladder, &keep, &before])
                .map_err(err(CONTEXT))?;
        }
        tx.execute(PRUNE_ARCHIVES, &[]).map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
        Ok(pruned)
    }

    fn ladder_storage(&mut self, ladder: &str) -> Result<Vec<StorageUse>, StoreError> {
        const CONTEXT: &str = "measuring the ladder's storage";
        let p = |n: usize| format!("${n}");
        let sql = storage_sql(&BLOB_SIZE, &p);
        let rows = self
            .client
            .query(&sql, &[&ladder, &crate::ladder_contest(ladder)])
            .map_err(err(CONTEXT))?;
        let mut out = Vec::new();
        for r in &rows {
            out.push((
                col::<String>(r, 0, CONTEXT)?,
                col::<i64>(r, 1, CONTEXT)?,
                col::<i64>(r, 2, CONTEXT)?,
            ));
        }
        Ok(storage_rows(out))
    }

    fn ladder_bot_storage(&mut self, ladder: &str, bot: &str) -> Result<u64, StoreError> {
        const CONTEXT: &str = "measuring a bot's storage";
        let p = |n: usize| format!("${n}");
        let sql = bot_storage_sql(&BLOB_SIZE, &p);
        let row = self
            .client
            .query_one(&sql, &[&ladder, &bot])
            .map_err(err(CONTEXT))?;
        let bytes: i64 = col(&row, 0, CONTEXT)?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    fn ladder_upload(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        const CONTEXT: &str = "reading an upload";
        let row = self
            .client
            .query_opt(
                "SELECT upload FROM kk_ladder_builds WHERE ladder = $1 AND bot = $2 AND version = $3",
                &[&ladder, &bot, &to_db(version)],
            )
            .map_err(err(CONTEXT))?;
        row.map(|r| col(&r, 0, CONTEXT)).transpose()
    }

    fn ladder_set_file(&mut self, ladder: &str, text: &str) -> Result<(), StoreError> {
        self.client
            .execute(
                "INSERT INTO kk_ladder_files (ladder, text) VALUES ($1, $2)
                 ON CONFLICT (ladder) DO UPDATE SET text = excluded.text",
                &[&ladder, &text],
            )
            .map_err(err("keeping the ladder file"))?;
        Ok(())
    }

    fn ladder_file(&mut self, ladder: &str) -> Result<Option<String>, StoreError> {
        const CONTEXT: &str = "reading the ladder file";
        let row = self
            .client
            .query_opt(
                "SELECT text FROM kk_ladder_files WHERE ladder = $1",
                &[&ladder],
            )
            .map_err(err(CONTEXT))?;
        row.map(|r| col(&r, 0, CONTEXT)).transpose()
    }

    fn ladder_claim_build(
        &mut self,
        worker: &str,
        lease: Duration,
        max_attempts: u32,
    ) -> Result<Option<BuildClaim>, StoreError> {
        const CONTEXT: &str = "claiming a build";
        let now = now_secs();
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        loop {
            let next = tx
                .query_opt(
                    &format!(
                        "SELECT b.ladder, b.bot, b.version, b.attempts, v.language, b.upload
                     FROM kk_ladder_builds b JOIN kk_ladder_versions v
                       ON v.ladder = b.ladder AND v.bot = b.bot AND v.version = b.version
                     WHERE v.status = 'building'
                       AND (b.worker IS NULL OR b.claimed_until IS NULL OR b.claimed_until < $1)
                     ORDER BY {CLAIM_ORDER} LIMIT 1
                     FOR UPDATE OF b SKIP LOCKED"
                    ),
                    &[&now],
                )
                .map_err(err(CONTEXT))?;
            let Some(row) = next else {
                tx.commit().map_err(err(CONTEXT))?;
                return Ok(None);
            };
            let ladder: String = col(&row, 0, CONTEXT)?;
            let bot: String = col(&row, 1, CONTEXT)?;
            let version: i64 = col(&row, 2, CONTEXT)?;
            let attempts: i64 = col(&row, 3, CONTEXT)?;
            if from_db(attempts) >= u64::from(max_attempts) {
                tx.execute(
                    "UPDATE kk_ladder_versions SET status = 'build_failed', log = $4
                     WHERE ladder = $1 AND bot = $2 AND version = $3",
                    &[&ladder, &bot, &version, &abandoned_log(max_attempts)],
                )
                .map_err(err(CONTEXT))?;
                tx.execute(
                    "UPDATE kk_ladder_builds SET worker = NULL, claimed_until = NULL
                     WHERE ladder = $1 AND bot = $2 AND version = $3",
                    &[&ladder, &bot, &version],
                )
                .map_err(err(CONTEXT))?;
                continue;
            }
            let until = now.saturating_add(lease.as_secs() as i64);
            tx.execute(
                "UPDATE kk_ladder_builds SET worker = $4, claimed_until = $5, attempts = attempts + 1, claimed_at = $6
                 WHERE ladder = $1 AND bot = $2 AND version = $3",
                &[&ladder, &bot, &version, &worker, &until, &now],
            )
            .map_err(err(CONTEXT))?;
            let claim = BuildClaim {
                language: col(&row, 4, CONTEXT)?,
                upload: col(&row, 5, CONTEXT)?,
                ladder,
                bot,
                version: from_db(version),
                worker: worker.to_string(),
                attempt: (attempts + 1) as u32,
            };
            tx.commit().map_err(err(CONTEXT))?;
            return Ok(Some(claim));
        }
    }

    fn ladder_extend_build(
        &mut self,
        claim: &BuildClaim,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let until = now_secs().saturating_add(lease.as_secs() as i64);
        let n = self
            .client
            .execute(
                "UPDATE kk_ladder_builds SET claimed_until = $6
                 WHERE ladder = $1 AND bot = $2 AND version = $3 AND worker = $4 AND attempts = $5",
                &[
                    &claim.ladder,
                    &claim.bot,
                    &to_db(claim.version),
                    &claim.worker,
                    &i64::from(claim.attempt),
                    &until,
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
        let version = to_db(claim.version);
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        let held = tx
            .execute(
                "UPDATE kk_ladder_builds SET worker = NULL, claimed_until = NULL
                 WHERE ladder = $1 AND bot = $2 AND version = $3 AND worker = $4 AND attempts = $5",
                &[
                    &claim.ladder,
                    &claim.bot,
                    &version,
                    &claim.worker,
                    &i64::from(claim.attempt),
                ],
            )
            .map_err(err(CONTEXT))?;
        let building = tx
            .query_opt(
                "SELECT status FROM kk_ladder_versions
                 WHERE ladder = $1 AND bot = $2 AND version = $3 FOR UPDATE",
                &[&claim.ladder, &claim.bot, &version],
            )
            .map_err(err(CONTEXT))?
            .map(|r| col::<String>(&r, 0, CONTEXT))
            .transpose()?
            .is_some_and(|s| s == VersionStatus::Building.as_str());
        if held != 1 || !building {
            return Ok(false);
        }
        if let Some(p) = program {
            put_program(&mut tx, &claim.ladder, &claim.bot, version, p).map_err(err(CONTEXT))?;
        }
        tx.execute(
            "UPDATE kk_ladder_versions SET status = $4, log = $5
             WHERE ladder = $1 AND bot = $2 AND version = $3",
            &[&claim.ladder, &claim.bot, &version, &status.as_str(), &log],
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
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        put_program(&mut tx, ladder, bot, to_db(version), program).map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))
    }

    fn ladder_program_sha256(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<String>, StoreError> {
        const CONTEXT: &str = "reading a program's digest";
        const READ: &str =
            "SELECT sha256 FROM kk_ladder_programs WHERE ladder = $1 AND bot = $2 AND version = $3";
        let read = self.prepared(READ, CONTEXT)?;
        let row = self
            .client
            .query_opt(&read, &[&ladder, &bot, &to_db(version)])
            .map_err(err(CONTEXT))?;
        row.map(|r| col(&r, 0, CONTEXT)).transpose()
    }

    fn ladder_program(
        &mut self,
        ladder: &str,
        bot: &str,
        version: u64,
    ) -> Result<Option<Program>, StoreError> {
        const CONTEXT: &str = "reading a program";
        let row = self
            .client
            .query_opt(&program_sql(&pg), &[&ladder, &bot, &to_db(version)])
            .map_err(err(CONTEXT))?;
        row.map(|r| {
            Ok(Program {
                sha256: col(&r, 0, CONTEXT)?,
                archive: col(&r, 1, CONTEXT)?,
            })
        })
        .transpose()
    }

    fn ladder_builds_without_upload(
        &mut self,
        ladder: &str,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        const CONTEXT: &str = "listing builds without an upload";
        let rows = self
            .client
            .query(
                "SELECT v.bot, v.version FROM kk_ladder_versions v
                 WHERE v.ladder = $1 AND v.status = 'building'
                   AND NOT EXISTS (SELECT 1 FROM kk_ladder_builds b
                     WHERE b.ladder = v.ladder AND b.bot = v.bot AND b.version = v.version)
                 ORDER BY v.bot, v.version",
                &[&ladder],
            )
            .map_err(err(CONTEXT))?;
        rows.iter()
            .map(|r| Ok((col(r, 0, CONTEXT)?, from_db(col(r, 1, CONTEXT)?))))
            .collect()
    }
}
