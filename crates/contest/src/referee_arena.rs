//! The [`Arena`] of the real games: the referee's registry. Every game registered there joins
//! contests without changes here.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use kakehiki_agent::{BotProcess, DeniedPath, ReadOutcome};
use kakehiki_core::{GameType, SeatSpec};
use kakehiki_referee::{find_game, MatchRecord, MatchSpec, RefereeError};

use crate::arena::{Arena, MatchJob, PlayError, Played, PreflightProblem};
use crate::programs::{check_command, command_line, program_paths};

/// Plays matches with the referee's drivers, each worker thread on its own single-threaded
/// async runtime (so `jobs` threads use `jobs` cores).
#[derive(Debug, Clone, Copy, Default)]
pub struct RefereeArena;

thread_local! {
    static RUNTIME: RefCell<Option<tokio::runtime::Runtime>> = const { RefCell::new(None) };
}

/// How long a started entrant must stay up in the pre-flight check.
const PREFLIGHT_WAIT: Duration = Duration::from_millis(1000);

/// The last `max` bytes of `text` (whole characters), trimmed.
fn tail(text: &str, max: usize) -> String {
    let text = text.trim_end();
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
}

fn referee_error(e: RefereeError) -> PlayError {
    if e.is_host_fault() {
        PlayError::HostFault(e.to_string())
    } else {
        PlayError::Failed(e.to_string())
    }
}

/// Run `f` on this thread's runtime.
fn on_runtime<T>(f: impl std::future::Future<Output = T>) -> Result<T, PlayError> {
    RUNTIME.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    PlayError::HostFault(format!("cannot start the async runtime: {e}"))
                })?;
            *slot = Some(rt);
        }
        let Some(rt) = slot.as_ref() else {
            return Err(PlayError::HostFault(
                "cannot start the async runtime".into(),
            ));
        };
        Ok(rt.block_on(f))
    })
}

impl Arena for RefereeArena {
    fn game_type(&self, game: &str) -> Result<&'static GameType, String> {
        find_game(game)
            .map(|d| d.game_type())
            .map_err(|e| e.to_string())
    }

    fn check_job(&self, job: &MatchJob) -> Result<(), String> {
        let driver = find_game(&job.game).map_err(|e| e.to_string())?;
        let mut spec = MatchSpec::new(&job.game, job.seed, job.seats.clone());
        spec.rules = job.rules.clone();
        spec.options = job.options.clone();
        if let Some(level) = &job.sandbox {
            level.parse::<kakehiki_agent::SandboxLevel>()?;
        }
        driver.check_spec(&spec).map_err(|e| e.to_string())
    }

    fn longest_match(&self, job: &MatchJob) -> Result<Option<Duration>, String> {
        let driver = find_game(&job.game).map_err(|e| e.to_string())?;
        let mut spec = MatchSpec::new(&job.game, job.seed, job.seats.clone());
        spec.rules = job.rules.clone();
        spec.options = job.options.clone();
        driver.longest_legal_match(&spec).map_err(|e| e.to_string())
    }

    fn play(&self, job: &MatchJob) -> Result<Played, PlayError> {
        self.play_until(job, &std::sync::atomic::AtomicBool::new(false))
    }

    /// The match is played with its limits watched beside it: the whole match's
    /// `match_timeout_s`, each seat's thinking budget, and `stop`; whichever comes first ends it
    /// (the seats' processes are stopped as the match is dropped).
    fn play_until(
        &self,
        job: &MatchJob,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<Played, PlayError> {
        let driver = find_game(&job.game).map_err(|e| PlayError::Failed(e.to_string()))?;
        // Followed as it is played (`kakehiki_referee::live`); the runner closes it once the
        // result is stored.
        let live = kakehiki_referee::live::registry().start(
            &job.contest,
            job.index,
            &job.game,
            &job.entrants,
            driver.public_live(),
        );
        // A person's seats: their desks, served by the process's pages (`contest run --serve`)
        // while the match is played.
        let desks = kakehiki_core::human::desks();
        let mut open = BTreeMap::new();
        for (i, s) in job.seats.iter().enumerate() {
            if matches!(s, kakehiki_core::SeatSpec::Human) {
                if !desks.served() {
                    return Err(PlayError::Failed(
                        "a human entrant is played from its page: run the contest with --serve"
                            .into(),
                    ));
                }
                let help = kakehiki_referee::seat::human::help_for(&job.game);
                open.insert(i, desks.open(&job.contest, job.index, &job.game, i, help));
            }
        }
        let played = self.play_with(job, stop, open, live);
        desks.close(&job.contest, job.index);
        played
    }

    /// Each process entrant's command line is resolved as its sandbox resolves it (against its
    /// `dir` when it has one) and what would be mounted for it is compared with what it must not
    /// see: the store's files, every other entrant's folder (unless it is this entrant's own) and
    /// program files (unless they are this entrant's own too: the same bot entered twice).
    fn mount_problems(
        &self,
        def: &crate::ContestDef,
        store_files: &[std::path::PathBuf],
    ) -> Vec<PreflightProblem> {
        let Ok(cwd) = std::env::current_dir() else {
            return Vec::new();
        };
        let level = def
            .sandbox
            .as_deref()
            .and_then(|l| l.parse().ok())
            .unwrap_or_default();
        let dir_of = |e: &crate::Entrant| {
            e.dir
                .as_ref()
                .map(|d| kakehiki_agent::jail::normalize(&cwd.join(d)))
        };
        let programs = |e: &crate::Entrant| -> Vec<std::path::PathBuf> {
            let Some(argv) = command_line(&e.seat) else {
                return Vec::new();
            };
            match dir_of(e) {
                Some(dir) => argv
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| *i > 0 || a.contains('/'))
                    .map(|(_, a)| dir.join(a))
                    .filter(|p| p.is_file())
                    .collect(),
                None => program_paths(argv),
            }
        };
        let mut problems = Vec::new();
        for (i, entrant) in def.entrants.iter().enumerate() {
            let Some(argv) = command_line(&entrant.seat) else {
                continue;
            };
            let own_dir = dir_of(entrant);
            let own_programs = programs(entrant);
            let mut sandbox = kakehiki_agent::SandboxConfig::default();
            sandbox.jail.level = level;
            sandbox.jail.seat_dir = own_dir.clone();
            for f in store_files {
                sandbox
                    .jail
                    .denied
                    .push(DeniedPath::new(f, "the results database"));
            }
            for (j, other) in def.entrants.iter().enumerate() {
                if j == i {
                    continue;
                }
                if let Some(d) = dir_of(other).filter(|d| Some(d) != own_dir.as_ref()) {
                    sandbox.jail.denied.push(DeniedPath::new(
                        d,
                        format!("entrant {:?}'s folder", other.name),
                    ));
                }
                for p in programs(other) {
                    if !own_programs.contains(&p) {
                        sandbox.jail.denied.push(DeniedPath::new(
                            p,
                            format!("entrant {:?}'s program", other.name),
                        ));
                    }
                }
            }
            if let Err(e) = kakehiki_agent::check_mounts(argv, &sandbox) {
                problems.push(PreflightProblem {
                    entrant: entrant.name.clone(),
                    problem: e.to_string(),
                    host_fault: e.is_host_fault(),
                });
            }
        }
        problems
    }

    /// Every process entrant's command line is checked (program on `PATH` or at its path and
    /// executable, script files present); `cmd:` entrants are then started at once, each must
    /// stay up for a second (a bot waits for the game's first message; one that exits has a
    /// broken command line or crashes on start), and are killed. `tcp-cmd:` clients are not
    /// started: they would try to connect to a game that is not there.
    fn preflight(&self, game: &str, entrants: &[crate::Entrant]) -> Vec<PreflightProblem> {
        let mut problems = Vec::new();
        let mut to_start: Vec<(&str, &[String], &crate::Entrant)> = Vec::new();
        for entrant in entrants {
            let (name, seat) = (&entrant.name, &entrant.seat);
            let Some(argv) = command_line(seat) else {
                continue;
            };
            // A seat with its own folder names its program relative to that folder: starting
            // it (below, in its folder) is the check.
            let checked = if entrant.dir.is_some() {
                None
            } else {
                check_command(argv)
            };
            if let Some(problem) = checked {
                problems.push(PreflightProblem {
                    entrant: name.clone(),
                    problem,
                    host_fault: false,
                });
            } else if matches!(seat, SeatSpec::Cmd(_)) {
                to_start.push((name, argv, entrant));
            }
        }
        if to_start.is_empty() {
            return problems;
        }
        let spec = MatchSpec::new(game, 0, Vec::new());
        // Starting processes on a machine out of file descriptors can panic inside the async
        // runtime (its signal pipe); that is the machine's fault, reported like any other.
        let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            on_runtime(async {
                let mut found = Vec::new();
                let mut running = Vec::new();
                for (name, argv, entrant) in &to_start {
                    let mut sandbox = spec.sandbox.clone();
                    if let Some(dir) = &entrant.dir {
                        sandbox.jail.seat_dir = std::env::current_dir().ok().map(|d| d.join(dir));
                    }
                    sandbox.env_passthrough.extend(entrant.env.iter().cloned());
                    match BotProcess::spawn(argv, &sandbox) {
                        Ok(p) => running.push((*name, p)),
                        Err(e) => found.push(PreflightProblem {
                            entrant: name.to_string(),
                            problem: if e.is_host_fault() {
                                format!(
                                    "cannot be started because of this machine, not the bot: {e}"
                                )
                            } else {
                                e.to_string()
                            },
                            host_fault: e.is_host_fault(),
                        }),
                    }
                }
                let deadline = tokio::time::Instant::now() + PREFLIGHT_WAIT;
                for (name, mut p) in running {
                    let outcome = p.read_line(deadline).await;
                    let (exit, stderr) = p.finish_with_stderr(Duration::ZERO).await;
                    if let ReadOutcome::Closed { exit: closed, .. } = outcome {
                        let exit = closed.or(exit);
                        let stderr = tail(&stderr, 800);
                        found.push(PreflightProblem {
                            entrant: name.to_string(),
                            problem: format!(
                                "exited at once ({}) before the game sent it anything{}",
                                exit.map(|e| e.to_string())
                                    .unwrap_or_else(|| "closed its stdout".into()),
                                if stderr.is_empty() {
                                    String::new()
                                } else {
                                    format!("; its stderr: {stderr}")
                                }
                            ),
                            host_fault: false,
                        });
                    }
                }
                found
            })
        }))
        .unwrap_or_else(|panic| {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(PlayError::HostFault(format!(
                "the referee failed while starting it: {msg}"
            )))
        });
        match started {
            Ok(found) => problems.extend(found),
            Err(e) => problems.push(PreflightProblem {
                entrant: to_start[0].0.to_string(),
                problem: format!("cannot be started because of this machine, not the bot: {e}"),
                host_fault: true,
            }),
        }
        problems
    }
}

impl RefereeArena {
    /// [`Arena::play_until`] of a match whose `human` seats are played from `desks`, published
    /// to `live` as it is played (which the caller serves, and closes once it is done with it).
    pub fn play_with(
        &self,
        job: &MatchJob,
        stop: &std::sync::atomic::AtomicBool,
        desks: BTreeMap<usize, std::sync::Arc<kakehiki_core::human::Desk>>,
        live: std::sync::Arc<kakehiki_referee::live::LiveMatch>,
    ) -> Result<Played, PlayError> {
        let driver = find_game(&job.game).map_err(|e| PlayError::Failed(e.to_string()))?;
        let mut spec = MatchSpec::new(&job.game, job.seed_to_play(), job.seats.clone());
        spec.rules = job.rules.clone();
        spec.options = job.options.clone();
        apply_sandbox(&mut spec, job).map_err(PlayError::Failed)?;
        spec.desks = desks;
        spec.live = Some(live.clone());
        let mut record = on_runtime(async {
            // The whole match's wall-clock limit (0: none) ...
            let over_limit = async {
                match job.timeout_s {
                    0 => std::future::pending::<()>().await,
                    s => tokio::time::sleep(Duration::from_secs(s)).await,
                }
            };
            // ... and each seat's thinking budget (0: none), looked at four times a second.
            let budget = Duration::from_secs(job.thinking_s);
            let over_budget = async {
                if job.thinking_s == 0 {
                    return std::future::pending::<MatchRecord>().await;
                }
                let mut tick = tokio::time::interval(Duration::from_millis(250));
                loop {
                    tick.tick().await;
                    // A record only once a seat is past the budget.
                    if let Some(r) = kakehiki_referee::thinking_record(driver, &spec, budget) {
                        return r;
                    }
                }
            };
            // ... and whether the match was taken away, looked at ten times a second.
            let stopped = async {
                let mut tick = tokio::time::interval(Duration::from_millis(100));
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    tick.tick().await;
                }
            };
            tokio::select! {
                r = driver.play(&spec) => r.map_err(referee_error),
                () = stopped => Err(PlayError::Stopped),
                // Stopped at its limit, the match is still scored: the seats that used the
                // most thinking time are charged (none used any: the host's fault).
                () = over_limit => kakehiki_referee::overtime_record(
                    driver,
                    &spec,
                    Duration::from_secs(job.timeout_s),
                )
                .map_err(referee_error),
                // A seat past its share is charged, never the others.
                r = over_budget => Ok(r),
            }
        })??;
        record.stamp_sandbox(&spec);
        live.finish(record.replay.lines());
        Ok(Played {
            report: record.report,
            replay: record.replay.to_text(),
        })
    }
}

/// The sandbox a contest's match runs its bots in: the contest's level, each seat's folder
/// (relative to the directory the run was started in) and environment variables.
fn apply_sandbox(spec: &mut MatchSpec, job: &MatchJob) -> Result<(), String> {
    let sandbox = &mut spec.sandbox;
    if let Some(level) = &job.sandbox {
        sandbox.jail.level = level.parse()?;
    }
    sandbox.jail.cpu_millis = job.cpu_millis;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    for (seat, dir) in job.seat_dirs.iter().enumerate() {
        if let Some(dir) = dir {
            let path = cwd.join(dir);
            if !path.is_dir() {
                return Err(format!(
                    "seat {seat}'s folder {} is not a directory",
                    path.display()
                ));
            }
            sandbox.jail.seat_dirs.insert(seat, path);
        }
    }
    for (seat, vars) in job.seat_env.iter().enumerate() {
        if !vars.is_empty() {
            sandbox.jail.seat_env.insert(seat, vars.clone());
        }
    }
    Ok(())
}
