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

use crate::{StoreError, VersionStatus};

/// The order builds are claimed in (both backends' `ORDER BY`, over `kk_ladder_builds b` joined
/// with its version `v`): round-robin across bots, i.e. accounts. The bot whose last build was
/// claimed longest ago (or never) goes first, and its oldest build; so an account's second build
/// waits behind every other account's first, whoever queued first.
pub(crate) const CLAIM_ORDER: &str = "COALESCE((SELECT MAX(e.claimed_at) FROM kk_ladder_builds e
       WHERE e.ladder = b.ladder AND e.bot = b.bot), -1),
     v.created_at, b.ladder, b.bot, b.version";

/// The condition (over `kk_ladder_versions v`, with `status` the placeholder of the status
/// `active`) of the versions a ladder plays, for both backends: each bot's newest active
/// version, unless the bot is retired or its owner's account disabled.
pub(crate) fn active_versions(status: &str) -> String {
    format!(
        "v.status = {status} AND v.version = (SELECT MAX(w.version)
             FROM kk_ladder_versions w
             WHERE w.ladder = v.ladder AND w.bot = v.bot AND w.status = {status})
         AND NOT EXISTS (SELECT 1 FROM kk_ladder_bots b
             JOIN kk_ladder_users u ON u.name = b.owner
             WHERE b.ladder = v.ladder AND b.name = v.bot
               AND (b.retired <> 0 OR u.disabled <> 0))
         ORDER BY v.bot"
    )
}

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

/// The versions of `{table}` (`kk_ladder_builds` or `kk_ladder_programs`) a prune removes, for
/// both backends (`p(n)` writes placeholder `n`: 1 the ladder, 2 how many newest versions of a
/// bot are kept, 3 the creation time before which a version may go): never one `building`, never
/// a bot's newest active version nor one of its `keep` newest; every other one created before.
pub(crate) fn prune_sql(table: &str, p: &dyn Fn(usize) -> String) -> String {
    format!(
        "DELETE FROM {table} WHERE {table}.ladder = {l} AND EXISTS (
            SELECT 1 FROM kk_ladder_versions v
            WHERE v.ladder = {table}.ladder AND v.bot = {table}.bot AND v.version = {table}.version
              AND v.status <> 'building' AND v.created_at < {before}
              AND v.version <= (SELECT MAX(w.version) FROM kk_ladder_versions w
                                WHERE w.ladder = v.ladder AND w.bot = v.bot) - {keep}
              AND v.version <> COALESCE((SELECT MAX(w.version) FROM kk_ladder_versions w
                                WHERE w.ladder = v.ladder AND w.bot = v.bot
                                  AND w.status = 'active'), -1))",
        l = p(1),
        keep = p(2),
        before = p(3),
    )
}

/// How a backend measures blobs: its byte length of a blob (`length`, `octet_length`) and what
/// makes a sum of them a 64-bit integer (nothing on SQLite; `::BIGINT` on PostgreSQL, whose
/// `SUM` of bigints is a numeric).
pub(crate) struct BlobSize {
    pub len: &'static str,
    pub int: &'static str,
}

/// The sizes of a ladder's data by kind, for both backends (`p(n)` the backend's placeholder
/// `n`: 1 the ladder, 2 the ladder's contest row).
pub(crate) fn storage_sql(size: &BlobSize, p: &dyn Fn(usize) -> String) -> String {
    let BlobSize { len, int } = size;
    format!(
        "SELECT 'uploads', COUNT(*), COALESCE(SUM({len}(upload)), 0){int} FROM kk_ladder_builds WHERE ladder = {l}
         UNION ALL
         SELECT 'programs', COUNT(*), COALESCE(SUM({len}(a.archive)), 0){int} FROM kk_ladder_archives a
           WHERE EXISTS (SELECT 1 FROM kk_ladder_programs p WHERE p.ladder = {l} AND p.sha256 = a.sha256)
         UNION ALL
         SELECT 'replays', COUNT(*), COALESCE(SUM({len}(replay)), 0){int} FROM kk_results WHERE contest = {c}",
        l = p(1),
        c = p(2),
    )
}

/// The rows of [`storage_sql`] as [`StorageUse`]s.
pub(crate) fn storage_rows(rows: Vec<(String, i64, i64)>) -> Vec<StorageUse> {
    rows.into_iter()
        .map(|(kind, n, bytes)| StorageUse {
            kind: match kind.as_str() {
                "uploads" => "uploads",
                "programs" => "programs",
                _ => "replays",
            },
            rows: u64::try_from(n).unwrap_or(0),
            bytes: u64::try_from(bytes).unwrap_or(0),
        })
        .collect()
}

/// The bytes one bot's uploads and programs take, for both backends (`size` and `p` as for
/// [`storage_sql`]: 1 the ladder, 2 the bot).
pub(crate) fn bot_storage_sql(size: &BlobSize, p: &dyn Fn(usize) -> String) -> String {
    let BlobSize { len, int } = size;
    format!(
        "SELECT (COALESCE((SELECT SUM({len}(upload)) FROM kk_ladder_builds
                           WHERE ladder = {l} AND bot = {b}), 0)
               + COALESCE((SELECT SUM({len}(a.archive)) FROM kk_ladder_archives a
                           WHERE EXISTS (SELECT 1 FROM kk_ladder_programs p
                                         WHERE p.ladder = {l} AND p.bot = {b}
                                           AND p.sha256 = a.sha256)), 0)){int}",
        l = p(1),
        b = p(2),
    )
}

/// Keeping a built program, for both backends: its archive once by digest (`p(1)` the digest,
/// `p(2)` the archive; already kept: nothing), then the version's pointer to it (`p(1)` to
/// `p(4)`: ladder, bot, version, digest).
pub(crate) fn put_program_sql(p: &dyn Fn(usize) -> String) -> [String; 2] {
    [
        format!(
            "INSERT INTO kk_ladder_archives (sha256, archive) VALUES ({}, {})
             ON CONFLICT (sha256) DO NOTHING",
            p(1),
            p(2)
        ),
        format!(
            "INSERT INTO kk_ladder_programs (ladder, bot, version, sha256)
             VALUES ({}, {}, {}, {})
             ON CONFLICT (ladder, bot, version) DO UPDATE SET sha256 = excluded.sha256",
            p(1),
            p(2),
            p(3),
            p(4)
        ),
    ]
}

/// A version's program with its archive, for both backends (`p(1)` to `p(3)`: ladder, bot,
/// version).
pub(crate) fn program_sql(p: &dyn Fn(usize) -> String) -> String {
    format!(
        "SELECT p.sha256, a.archive FROM kk_ladder_programs p
         JOIN kk_ladder_archives a ON a.sha256 = p.sha256
         WHERE p.ladder = {} AND p.bot = {} AND p.version = {}",
        p(1),
        p(2),
        p(3)
    )
}

/// Archives no version points at any more (after a prune).
pub(crate) const PRUNE_ARCHIVES: &str = "DELETE FROM kk_ladder_archives WHERE NOT EXISTS
    (SELECT 1 FROM kk_ladder_programs p WHERE p.sha256 = kk_ladder_archives.sha256)";

pub trait LadderBuilds {
    /// Remove the uploads and built programs of `ladder`'s versions created before `before`
    /// (seconds since the Unix epoch) that are not `building`, not their bot's newest active
    /// version and not among its `keep` newest versions ([`prune_sql`]); the versions, their
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
