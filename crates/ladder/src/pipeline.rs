//! An upload's way to an active version: taken in (unpacked, refused whole when hostile), built
//! with its language's recipe in the sandbox, packed, and checked with the bot checker; and the
//! worker's side of it ([`LadderWork`]): claiming a build from the store, renewing its lease
//! while it runs, storing the verdict, and unpacking the programs a claimed match needs.
//! Nothing here needs a folder shared with the server.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kakehiki_contest::arena::Arena;
use kakehiki_contest::{MatchJob, RefereeArena, WorkerHooks};
use kakehiki_store::{BuildClaim, Store, VersionStatus};
use serde::Serialize;

use crate::build::{BuildError, BuildOutcome};
use crate::intake::IntakeError;
use crate::program::{materialize_refs, prune_unused, ProgramError, KEEP_UNUSED};
use crate::{LadderConfig, LadderConfigError};

/// Where an upload stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Active,
    BuildFailed,
    CheckFailed,
    Refused,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::BuildFailed => "build_failed",
            Status::CheckFailed => "check_failed",
            Status::Refused => "refused",
        }
    }

    /// The status a version is stored with.
    pub fn version_status(self) -> VersionStatus {
        match self {
            Status::Active => VersionStatus::Active,
            Status::BuildFailed => VersionStatus::BuildFailed,
            Status::CheckFailed => VersionStatus::CheckFailed,
            Status::Refused => VersionStatus::Refused,
        }
    }
}

/// What the ladder made of an upload.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub status: Status,
    /// Why it was refused, the build's output, and `check`'s diagnosis.
    pub log: String,
    /// The packed program folder of an active version.
    #[serde(skip)]
    pub program: Option<kakehiki_store::Program>,
}

/// The host's faults while taking in an upload (everything the upload causes is in its
/// [`Verdict`]).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("cannot take in the upload")]
    Intake(#[source] IntakeError),
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("cannot run the build")]
    Build(#[source] BuildError),
    #[error("cannot pack the built program")]
    Pack(#[source] ProgramError),
    #[error("cannot check the built bot")]
    Check(#[source] kakehiki_check::CheckError),
    #[error("the store has no ladder file for {0}")]
    NoLadderFile(String),
    #[error(transparent)]
    Config(#[from] LadderConfigError),
    #[error("cannot read the store")]
    Store(#[source] kakehiki_store::StoreError),
    #[error("cannot make a folder for the build")]
    Folder(#[source] std::io::Error),
}

/// Take in `upload` for `language` of the ladder `config`: unpack it (under `tmp_parent`), build
/// it into `program_dir` (which must not exist) and check the built bot. Errors are the host's
/// (a folder that cannot be written, a sandbox that cannot start); everything the upload causes
/// is in the verdict.
pub fn process_upload(
    config: &LadderConfig,
    language: &str,
    upload: &[u8],
    program_dir: &Path,
    tmp_parent: &Path,
) -> Result<Verdict, PipelineError> {
    let Some(recipe) = config.recipe(language) else {
        let offered = config.language_names();
        return Ok(Verdict {
            status: Status::Refused,
            log: format!(
                "the ladder {} offers no language {language:?}: expected one of {}\n",
                config.name,
                offered.join(", ")
            ),
            program: None,
        });
    };
    let sources = match crate::intake::unpack(upload, &recipe.main, &config.limits, tmp_parent) {
        Ok(s) => s,
        Err(e @ IntakeError::Io(_)) => return Err(PipelineError::Intake(e)),
        Err(e) => {
            return Ok(Verdict {
                status: Status::Refused,
                log: format!("upload refused: {e}\n"),
                program: None,
            })
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PipelineError::Runtime)?;
    let outcome = runtime
        .block_on(crate::build::build(
            recipe,
            sources.root(),
            program_dir,
            &config.limits,
            &kakehiki_agent::SandboxConfig::default(),
        ))
        .map_err(PipelineError::Build)?;
    drop(runtime);
    let mut log = format!("{language} build ({}):\n{}", recipe.build, outcome.log());
    if !log.ends_with('\n') {
        log.push('\n');
    }
    log.push_str(&outcome.summary());
    log.push('\n');
    if !matches!(outcome, BuildOutcome::Built { .. }) {
        return Ok(Verdict {
            status: Status::BuildFailed,
            log,
            program: None,
        });
    }
    // The built folder is measured and packed before the check: one over the ladder's limits
    // (or holding a link, a special file or a set-user-ID bit) is never checked nor kept.
    let program = match crate::program::pack_within(
        program_dir,
        config.limits.program_mib.saturating_mul(1 << 20),
        config.limits.program_entries,
    ) {
        Ok(p) => p,
        Err(e @ ProgramError::Io(_)) => return Err(PipelineError::Pack(e)),
        Err(e) => {
            log.push_str(&format!("build failed: {e}\n"));
            return Ok(Verdict {
                status: Status::BuildFailed,
                log,
                program: None,
            });
        }
    };
    // A fresh seed for every check, so a bot cannot tell it from a match.
    let seat = config.transport.seat(&recipe.run);
    let verdict = kakehiki_check::check_program(
        &config.game,
        &config.rules,
        &config.options,
        &seat,
        config.seats,
        program_dir,
        kakehiki_core::fresh_seed() >> 2,
        Duration::from_secs(config.limits.check_seconds),
    )
    .map_err(PipelineError::Check)?;
    log.push_str(&format!(
        "check ({} {}, {seat}):\n{}",
        config.game, config.rules, verdict.diagnosis
    ));
    Ok(Verdict {
        status: if verdict.passed {
            Status::Active
        } else {
            Status::CheckFailed
        },
        log,
        program: verdict.passed.then_some(program),
    })
}

/// Claims of a version before it is failed as abandoned.
pub const BUILD_ATTEMPTS: u32 = 3;

/// A worker's ladder work (`kakehiki worker`, the server's builders and its `--workers`).
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
        Ok(verdict) => {
            let program = verdict.program.as_ref();
            let stored = store
                .ladder_finish_build(
                    &claim,
                    verdict.status.version_status(),
                    &verdict.log,
                    program,
                )
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
            Err(format!(
                "cannot build {what} here: {}",
                kakehiki_core::text::error_chain(&e)
            ))
        }
    }
}

fn build_claimed(
    store: &mut dyn Store,
    claim: &BuildClaim,
    lease: Duration,
) -> Result<Verdict, PipelineError> {
    let Some(text) = store
        .ladder_file(&claim.ladder)
        .map_err(PipelineError::Store)?
    else {
        return Err(PipelineError::NoLadderFile(claim.ladder.clone()));
    };
    let source = format!("the ladder file of {} (from the store)", claim.ladder);
    let config = LadderConfig::parse(&text, &source, &|g| RefereeArena.game_type(g))?;
    let work = tempfile::Builder::new()
        .prefix("kakehiki-ladder-build-")
        .tempdir()
        .map_err(PipelineError::Folder)?;
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
    Ok(verdict)
}
