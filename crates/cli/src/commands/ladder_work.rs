//! The ladder's work done by any worker (`kakehiki worker`, the server's builders and its
//! `--workers`): building a version claimed from the store, and unpacking the programs a claimed
//! match needs (`kakehiki_ladder::program`). Nothing here needs a folder shared with the server.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kakehiki_contest::{MatchJob, WorkerHooks};
use kakehiki_ladder::program::{materialize_refs, prune_unused, KEEP_UNUSED};
use kakehiki_ladder::LadderConfig;
use kakehiki_store::{BuildClaim, Store, VersionStatus};

use super::ladder::{process_upload, Status};

/// Claims of a version before it is failed as abandoned.
pub const BUILD_ATTEMPTS: u32 = 3;

/// A worker's ladder work.
pub struct LadderWork {
    /// Where this machine unpacks programs: `PROGRAMS/LADDER/BOT/vN-DIGEST`.
    pub programs: PathBuf,
    /// Whether this worker builds (the server's match players leave builds to its builders).
    pub builds: bool,
    /// The lease of a claimed build (`--lease-secs`, a minute by default). The builder renews it
    /// every quarter of the lease while it builds, so the build of a worker that dies is taken
    /// over within a lease.
    pub lease: Duration,
    /// When the unpacked programs were last pruned (at most once an hour).
    pub pruned: std::sync::Mutex<Option<Instant>>,
}

/// How often a worker prunes the programs it unpacked and no match used for a week.
const PRUNE_PROGRAMS_EVERY: Duration = Duration::from_secs(3600);

impl LadderWork {
    pub fn new(programs: PathBuf, builds: bool, lease: Duration) -> LadderWork {
        LadderWork {
            programs,
            builds,
            lease,
            pruned: std::sync::Mutex::new(None),
        }
    }

    /// Remove the unpacked programs no match used for [`KEEP_UNUSED`], once an hour.
    fn prune_programs(&self) {
        let mut last = self.pruned.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|t| t.elapsed() < PRUNE_PROGRAMS_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        match prune_unused(&self.programs, KEEP_UNUSED) {
            Ok(0) => {}
            Ok(n) => tracing::info!("pruned {n} unpacked programs no match used for a week"),
            Err(e) => tracing::warn!("cannot prune the unpacked programs: {e}"),
        }
    }
}

impl WorkerHooks for LadderWork {
    fn other_work(&self, store: &mut dyn Store, worker: &str) -> Result<bool, String> {
        if !self.builds {
            return Ok(false);
        }
        build_one(store, worker, self.lease)
    }

    fn prepare(&self, store: &mut dyn Store, job: &mut MatchJob) -> Result<(), String> {
        self.prune_programs();
        materialize_refs(store, &self.programs, &mut job.seat_dirs).map_err(|e| e.to_string())
    }
}

/// Claim one build and do it; `false` when there was none.
pub fn build_one(store: &mut dyn Store, worker: &str, lease: Duration) -> Result<bool, String> {
    let claim = store
        .ladder_claim_build(worker, lease, BUILD_ATTEMPTS)
        .map_err(|e| format!("cannot claim a build: {e}"))?;
    let Some(claim) = claim else {
        return Ok(false);
    };
    let what = format!(
        "{} v{} of ladder {}",
        claim.bot, claim.version, claim.ladder
    );
    match build_claimed(store, &claim, lease) {
        Ok((status, log, program)) => {
            let stored = store
                .ladder_finish_build(&claim, status, &log, program.as_ref())
                .map_err(|e| format!("cannot store the build of {what}: {e}"))?;
            if !stored {
                tracing::warn!("the build of {what} was taken over by another worker");
            }
            Ok(true)
        }
        Err(e) => {
            // The machine's fault, not the upload's: let another worker (or a later attempt)
            // take it now. After its attempts the version is failed as abandoned.
            let _ = store.ladder_extend_build(&claim, Duration::ZERO);
            Err(format!("cannot build {what} here: {e:#}"))
        }
    }
}

fn build_claimed(
    store: &mut dyn Store,
    claim: &BuildClaim,
    lease: Duration,
) -> anyhow::Result<(VersionStatus, String, Option<kakehiki_store::Program>)> {
    let Some(text) = store.ladder_file(&claim.ladder)? else {
        anyhow::bail!("the store has no ladder file for {}", claim.ladder);
    };
    let source = format!("the ladder file of {} (from the store)", claim.ladder);
    let config = LadderConfig::parse(&text, &source, &|g| {
        use kakehiki_contest::arena::Arena;
        kakehiki_contest::RefereeArena.game_type(g)
    })?;
    let work = tempfile::Builder::new()
        .prefix("kakehiki-ladder-build-")
        .tempdir()?;
    let program_dir = work.path().join("program");
    // The build and check use no store: the store renews the lease meanwhile.
    let done = AtomicBool::new(false);
    let verdict = std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut last = Instant::now();
            while !done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(100));
                if last.elapsed() >= lease / 4 {
                    last = Instant::now();
                    if let Err(e) = store.ladder_extend_build(claim, lease) {
                        tracing::warn!("cannot renew a build's lease: {e}");
                    }
                }
            }
        });
        let verdict = process_upload(
            &config,
            &claim.language,
            &claim.upload,
            &program_dir,
            work.path(),
        );
        done.store(true, Ordering::SeqCst);
        verdict
    })?;
    let log = verdict.log;
    let (status, program) = match verdict.status {
        Status::Active => (VersionStatus::Active, verdict.program),
        Status::BuildFailed => (VersionStatus::BuildFailed, None),
        Status::CheckFailed => (VersionStatus::CheckFailed, None),
        Status::Refused => (VersionStatus::Refused, None),
    };
    Ok((status, log, program))
}
