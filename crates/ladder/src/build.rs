//! Builds in the sandbox: a language's recipe turns the uploaded sources into the bot's program
//! folder.
//!
//! The build command runs as a confined process of the existing bot sandbox
//! ([`kakehiki_agent::ClientProcess`], the same jail as a seat's process): its own uid, PID and
//! mount namespaces, no network (an empty network namespace, as a pipe seat's:
//! [`ClientProcess::spawn_offline`]), the sources mounted read-only at `$SRC`, and a private working folder of
//! `build_disk_mib` (a tmpfs where namespaces exist) as its only writable place. Its memory is
//! bounded over all its processes (`build_memory_mib`, the bot's cgroup, and `RLIMIT_DATA` per
//! process), its wall-clock time by `build_seconds` (then its whole group is killed). When it
//! ends, its working folder is copied out (regular files and folders only, execute bits kept):
//! that copy is the bot's program folder.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kakehiki_agent::{ClientProcess, ExitInfo, SandboxConfig, SpawnError};

use crate::config::{Limits, Recipe};

/// Why a build could not be run (not a verdict on the sources).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("the recipe cannot be used: {0}")]
    Recipe(String),
    #[error("the program folder {} already exists", .0.display())]
    OutputExists(PathBuf),
    #[error("cannot start the build: {0}")]
    Spawn(#[from] SpawnError),
    #[error("cannot prepare the build: {0}")]
    Io(#[from] std::io::Error),
}

/// How a build ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildOutcome {
    /// The build succeeded: the program folder holds its output.
    Built { log: String },
    /// The build command failed (a compile error): its output and how it ended.
    Failed {
        log: String,
        exit_code: Option<i32>,
        signal: Option<i32>,
    },
    /// Killed after the build's time limit.
    TimeLimit { log: String, seconds: u64 },
    /// Killed by the kernel for going over the build's memory limit.
    MemoryLimit { log: String, mib: u64 },
}

impl BuildOutcome {
    /// The build's output (stdout then stderr, each capped).
    pub fn log(&self) -> &str {
        match self {
            BuildOutcome::Built { log }
            | BuildOutcome::Failed { log, .. }
            | BuildOutcome::TimeLimit { log, .. }
            | BuildOutcome::MemoryLimit { log, .. } => log,
        }
    }

    pub fn is_built(&self) -> bool {
        matches!(self, BuildOutcome::Built { .. })
    }

    /// One line saying how the build ended.
    pub fn summary(&self) -> String {
        match self {
            BuildOutcome::Built { .. } => "built".into(),
            BuildOutcome::Failed {
                exit_code: Some(c), ..
            } => format!("build failed (exit code {c})"),
            BuildOutcome::Failed {
                signal: Some(s), ..
            } => format!("build failed (killed by signal {s})"),
            BuildOutcome::Failed { .. } => "build failed".into(),
            BuildOutcome::TimeLimit { seconds, .. } => {
                format!("build stopped at its time limit of {seconds} s")
            }
            BuildOutcome::MemoryLimit { mib, .. } => {
                format!("build killed at its memory limit of {mib} MiB")
            }
        }
    }
}

/// One build: `recipe` applied to the sources in `sources`, its output copied to `out` (which
/// must not exist yet; it is created whatever the outcome, and holds the bot only when the
/// outcome is [`BuildOutcome::Built`]). `base` is the sandbox the ladder runs bots under (its
/// level, uid range, the paths no bot may see); the build's own limits replace its limits.
pub async fn build(
    recipe: &Recipe,
    sources: &Path,
    out: &Path,
    limits: &Limits,
    base: &SandboxConfig,
) -> Result<BuildOutcome, BuildError> {
    let argv = recipe.build_argv().map_err(BuildError::Recipe)?;
    if out.exists() {
        return Err(BuildError::OutputExists(out.to_path_buf()));
    }
    let sources = sources.canonicalize()?;
    let cfg = build_sandbox(recipe, &sources, out, limits, base);
    let mut process = ClientProcess::spawn_offline(&argv, &cfg)?;
    let deadline = Instant::now() + Duration::from_secs(limits.build_seconds);
    let mut timed_out = false;
    let exit: Option<ExitInfo> = loop {
        if let Some(exit) = process.try_exit() {
            break Some(exit);
        }
        if Instant::now() >= deadline {
            timed_out = true;
            process.kill();
            break None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let oom = process.oom_killed();
    let (finished, stderr, stdout) = process.finish_with_output(Duration::ZERO).await;
    let exit = exit.or(finished);
    let mut log = stdout;
    if !log.is_empty() && !log.ends_with('\n') {
        log.push('\n');
    }
    log.push_str(&stderr);
    // The copy is made however the build ended; only a finished build's is the bot.
    std::fs::create_dir_all(out)?;
    Ok(if timed_out {
        BuildOutcome::TimeLimit {
            log,
            seconds: limits.build_seconds,
        }
    } else if oom {
        BuildOutcome::MemoryLimit {
            log,
            mib: limits.build_memory_mib,
        }
    } else {
        match exit {
            Some(ExitInfo { code: Some(0), .. }) => BuildOutcome::Built { log },
            other => BuildOutcome::Failed {
                log,
                exit_code: other.and_then(|e| e.code),
                signal: other.and_then(|e| e.signal),
            },
        }
    })
}

/// The sandbox of a build: `base` with the build's limits, the sources (and the recipe's
/// `ro_paths`) read-only, no TCP port, `$SRC` and `$MAIN` set, its working folder kept as `out`.
pub fn build_sandbox(
    recipe: &Recipe,
    sources: &Path,
    out: &Path,
    limits: &Limits,
    base: &SandboxConfig,
) -> SandboxConfig {
    let mut cfg = base.clone();
    let memory = limits.build_memory_mib << 20;
    let disk = limits.build_disk_mib << 20;
    cfg.limits.memory_bytes = Some(memory);
    cfg.limits.cpu_seconds = Some(limits.build_seconds.saturating_mul(2));
    cfg.limits.file_size_bytes = Some(disk);
    cfg.stderr_cap = 256 << 10;
    cfg.output_cap = 256 << 10;
    cfg.workdir = None;
    cfg.jail.seat_dir = None;
    cfg.jail.tcp_connect = Vec::new();
    cfg.jail.disk_bytes = disk;
    // The sources are the bot's own: shown at a neutral path, which `$SRC` names (no host path
    // reaches a build); the recipe's toolchains keep theirs.
    cfg.jail.own_paths = vec![sources.to_path_buf()];
    cfg.jail.ro_paths = recipe.ro_paths.clone();
    cfg.env.push(("SRC".into(), sources.display().to_string()));
    cfg.env.push(("MAIN".into(), recipe.main.clone()));
    cfg.keep_files = Some(out.to_path_buf());
    cfg.keep_seat_files = None;
    cfg
}
