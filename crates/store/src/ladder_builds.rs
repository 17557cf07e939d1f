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

pub trait LadderBuilds {
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
