//! Running a contest: locally with N parallel matches (`contest run`), as the coordinator of
//! PostgreSQL workers (`contest run --database-url`), and as a worker (`kakehiki worker`).
//!
//! Every result is stored in its own transaction as soon as its match ends, keyed by (contest,
//! match index). A run killed at any moment is continued by running it again: the schedule is
//! recomputed and only matches without a stored result are played.

use std::collections::{BTreeMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kakehiki_core::MatchReport;
use kakehiki_store::{Claim, ContestRow, NewResult, QueuedMatch, Store, StoreError, StoredResult};

use crate::arena::{Arena, MatchJob, PlayError, PreflightProblem};
use crate::config::ContestDef;
use crate::programs::{changed_programs, program_files};
use crate::schedule::{schedule, GameResult, PlannedMatch};

/// A way to (re)connect to the store, for runners that outlive a database restart.
pub type Connect<'a> = &'a (dyn Fn() -> Result<Box<dyn Store>, StoreError> + Sync);

/// How long runners keep reconnecting to a database that went away before they give up.
pub const DEFAULT_RECONNECT_FOR: Duration = Duration::from_secs(300);

/// Why a run stopped with an error (failed matches are not errors: see [`RunSummary`]).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("contest {0:?} is not in the store")]
    UnknownContest(String),
    #[error("the stored definition of contest {name:?} cannot be read: {reason}")]
    BadStoredDefinition { name: String, reason: String },
    #[error("stored result {index} of contest {contest:?} is unusable: {reason}")]
    BadResult {
        contest: String,
        index: u64,
        reason: String,
    },
    #[error(
        "host fault: match {index} of contest {contest:?} was not played because of this machine, \
         not its bots ({reason}); nothing was stored for it and the run stopped: fix the machine \
         (disk space, TMPDIR, file-descriptor limit) and run again to play it"
    )]
    HostFault {
        contest: String,
        index: u64,
        reason: String,
    },
    #[error("{}", preflight_message(.0))]
    Preflight(Vec<PreflightProblem>),
    /// The contest's `match_timeout_s` would cut off a match played within every limit.
    #[error("contest {contest:?}: {problem}")]
    MatchTimeout { contest: String, problem: String },
    #[error(
        "the programs of contest {contest:?} changed since it started, so its results would mix two \
         versions of a bot: {}; restore them, or run the new versions as a new contest (another \
         name or database)",
        .changes.join("; ")
    )]
    ProgramChanged {
        contest: String,
        changes: Vec<String>,
    },
}

fn preflight_message(problems: &[PreflightProblem]) -> String {
    let host = problems.iter().any(|p| p.host_fault);
    let mut msg = format!(
        "{} entrant{} cannot be started{}, so the contest was not started and nothing was stored:",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" },
        if host {
            " (host fault: this machine, not the bot, is at fault for those marked so)"
        } else {
            ""
        }
    );
    for p in problems {
        msg.push_str(&format!("\n  entrant {:?}: {}", p.entrant, p.problem));
    }
    msg
}

/// Options of a run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Matches played at once.
    pub jobs: usize,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// How this runner is named in stored results.
    pub worker: String,
    /// How long a coordinator keeps reconnecting to a database that went away.
    pub reconnect_for: Duration,
    /// The files of the results store on this machine ([`store_files`]): an entrant whose
    /// sandbox would show one of them is refused before the run.
    pub store_files: Vec<std::path::PathBuf>,
}

/// The files of a SQLite results store at `db`, as absolute paths: the database, its `-wal`,
/// `-shm` and `-journal`, and its run lock.
pub fn store_files(db: &std::path::Path) -> Vec<std::path::PathBuf> {
    let db = std::path::absolute(db).unwrap_or_else(|_| db.to_path_buf());
    ["", "-wal", "-shm", "-journal", ".lock"]
        .iter()
        .map(|suffix| {
            let mut p = db.as_os_str().to_owned();
            p.push(suffix);
            std::path::PathBuf::from(p)
        })
        .collect()
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            jobs: 1,
            progress: false,
            worker: "local".to_string(),
            reconnect_for: DEFAULT_RECONNECT_FOR,
            store_files: Vec::new(),
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub scheduled: usize,
    /// Results already stored when the run started.
    pub already_stored: usize,
    /// Matches played and stored by this run.
    pub played: u64,
    /// Matches that could not be played: (index, error).
    pub failed: Vec<(u64, String)>,
    /// Every scheduled match has a result and no stage is pending.
    pub complete: bool,
}

/// Record the contest in the store (or check that the stored one has the same definition).
pub fn register(store: &mut dyn Store, def: &ContestDef) -> Result<bool, RunError> {
    Ok(store.register_contest(&ContestRow {
        name: def.name.clone(),
        fingerprint: def.fingerprint(),
        definition: def.to_stored(),
    })?)
}

/// Check what every process entrant's sandbox would show it ([`Arena::mount_problems`]: not
/// the results store's files `store_files`, nor another entrant's program or folder), then start
/// every other process entrant once ([`Arena::preflight`]); any problem stops the run before the
/// contest is registered.
pub fn preflight(
    arena: &dyn Arena,
    def: &ContestDef,
    store_files: &[std::path::PathBuf],
) -> Result<(), RunError> {
    check_match_timeout(arena, def)?;
    let mut problems = arena.mount_problems(def, store_files);
    let refused: Vec<&str> = problems.iter().map(|p| p.entrant.as_str()).collect();
    let rest: Vec<crate::Entrant> = def
        .entrants
        .iter()
        .filter(|e| !refused.contains(&e.name.as_str()))
        .cloned()
        .collect();
    problems.extend(arena.preflight(&def.game, &rest));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(RunError::Preflight(problems))
    }
}

/// Refuse a contest whose `match_timeout_s` is below the longest legal match of its game under
/// its options ([`crate::arena::check_match_timeout`]), checked on a table of `builtin:silent`
/// seats of the contest's size (each seat's limits are the same whoever sits there).
pub fn check_match_timeout(arena: &dyn Arena, def: &ContestDef) -> Result<(), RunError> {
    let probe = MatchJob::probe(
        def.name.clone(),
        &def.game,
        def.rules.clone(),
        def.seats,
        def.options.clone(),
        def.match_timeout_s,
    );
    crate::arena::check_match_timeout(arena, &probe)
        .map(drop)
        .map_err(|problem| RunError::MatchTimeout {
            contest: def.name.clone(),
            problem,
        })
}

/// Compare the entrants' program files with those recorded when the contest started, and record
/// the ones not yet recorded. A changed file is [`RunError::ProgramChanged`].
pub fn check_programs(store: &mut dyn Store, def: &ContestDef) -> Result<(), RunError> {
    let now = program_files(def);
    let recorded = store.program_files(&def.name)?;
    let changes = changed_programs(&recorded, &now);
    if !changes.is_empty() {
        return Err(RunError::ProgramChanged {
            contest: def.name.clone(),
            changes,
        });
    }
    store.record_program_files(&def.name, &now)?;
    Ok(())
}

/// Who runs a contest, for the message of a second run on the same SQLite file.
fn run_holder(def: &ContestDef) -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "process {} on {}, running contest {:?}, since unix time {since}",
        std::process::id(),
        default_worker_name()
            .rsplit_once(':')
            .map(|(h, _)| h.to_string())
            .unwrap_or_default(),
        def.name
    )
}

/// The definition of a stored contest.
pub fn stored_definition(store: &mut dyn Store, name: &str) -> Result<ContestDef, RunError> {
    let row = store
        .contest(name)?
        .ok_or_else(|| RunError::UnknownContest(name.to_string()))?;
    ContestDef::from_stored(&row.definition).map_err(|e| RunError::BadStoredDefinition {
        name: name.to_string(),
        reason: e.to_string(),
    })
}

/// Every stored result of `def`, by match index.
pub fn load_results(
    store: &mut dyn Store,
    def: &ContestDef,
) -> Result<BTreeMap<u64, GameResult>, RunError> {
    game_results(def, &store.results(&def.name)?)
}

/// Stored results of `def` as games, by match index: reports parsed, entrants resolved.
pub fn game_results(
    def: &ContestDef,
    stored: &[StoredResult],
) -> Result<BTreeMap<u64, GameResult>, RunError> {
    let mut out = BTreeMap::new();
    for r in stored {
        let bad = |reason: String| RunError::BadResult {
            contest: def.name.clone(),
            index: r.index,
            reason,
        };
        let report: MatchReport = serde_json::from_str(&r.report_json)
            .map_err(|e| bad(format!("report is not valid JSON: {e}")))?;
        let entrants = r
            .entrants
            .iter()
            .map(|n| {
                def.entrant_index(n)
                    .ok_or_else(|| bad(format!("unknown entrant {n:?}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if entrants.len() != report.scores.len() {
            return Err(bad(format!(
                "{} entrants but {} scores",
                entrants.len(),
                report.scores.len()
            )));
        }
        out.insert(
            r.index,
            GameResult {
                index: r.index,
                entrants,
                report,
            },
        );
    }
    Ok(out)
}

fn progress_bar(total: u64, done: u64, show: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(
        Some(total),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:30.cyan/blue} {pos}/{len} matches  {per_sec}  eta {eta}  {msg}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_position(done);
    pb.set_message("0 errors");
    pb
}

/// Start a pass over the schedule (the first or one after a stage has finished): note its size
/// in the summary, and on the first pass the results already stored; create the progress bar on
/// the first pass and set its length on every pass.
fn start_pass<'a>(
    pb: &'a mut Option<ProgressBar>,
    summary: &mut RunSummary,
    scheduled: usize,
    stored: usize,
    show: bool,
) -> &'a ProgressBar {
    summary.scheduled = scheduled;
    if pb.is_none() {
        summary.already_stored = stored;
    }
    let bar = pb.get_or_insert_with(|| progress_bar(scheduled as u64, stored as u64, show));
    bar.set_length(scheduled as u64);
    bar
}

/// Closes a match's live stream (`kakehiki_referee::live`) when dropped: once its result is
/// stored, or on any way out before that (its readers then read the stored replay, or nothing).
#[cfg_attr(not(feature = "referee"), allow(dead_code))]
struct LiveEnd<'a>(&'a str, u64);

impl Drop for LiveEnd<'_> {
    fn drop(&mut self) {
        #[cfg(feature = "referee")]
        kakehiki_referee::live::registry().end(self.0, self.1);
    }
}

/// Play one job, turning a panic of the player into an error.
fn play_guarded(
    arena: &dyn Arena,
    job: &MatchJob,
    stop: &AtomicBool,
) -> Result<crate::arena::Played, PlayError> {
    match catch_unwind(AssertUnwindSafe(|| arena.play_until(job, stop))) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(PlayError::Failed(format!(
                "the match player panicked: {msg}"
            )))
        }
    }
}

fn report_json(report: &MatchReport) -> String {
    serde_json::to_string(report).unwrap_or_default()
}

/// Play `pending` with `jobs` threads, storing each result as it ends.
fn play_batch(
    def: &ContestDef,
    pending: Vec<PlannedMatch>,
    store: &Arc<Mutex<Box<dyn Store>>>,
    arena: &Arc<dyn Arena>,
    opts: &RunOptions,
    pb: &ProgressBar,
    errors: &AtomicU64,
) -> Result<(u64, Vec<(u64, String)>), RunError> {
    let queue = Mutex::new(pending.into_iter().collect::<VecDeque<_>>());
    let played = AtomicU64::new(0);
    let failed = Mutex::new(Vec::new());
    let fatal: Mutex<Option<RunError>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    // A tcp entrant has one port: its matches are played one at a time.
    let threads = if def.entrants.iter().any(|e| e.port.is_some()) {
        1
    } else {
        opts.jobs.max(1)
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Some(m) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front() else {
                    return;
                };
                let job = MatchJob::new(def, &m);
                let _live = LiveEnd(&job.contest, job.index);
                let start = Instant::now();
                let outcome = play_guarded(arena.as_ref(), &job, &AtomicBool::new(false));
                let elapsed = start.elapsed().as_millis() as u64;
                let mut st = store.lock().unwrap_or_else(|e| e.into_inner());
                let stored = match outcome {
                    Ok(p) => st
                        .put_result(&NewResult {
                            contest: &def.name,
                            index: m.index,
                            entrants: &job.entrants,
                            report_json: &report_json(&p.report),
                            replay: &p.replay,
                            duration_ms: elapsed,
                            worker: &opts.worker,
                        })
                        .map(|_| {
                            played.fetch_add(1, Ordering::SeqCst);
                        }),
                    Err(PlayError::HostFault(reason)) => {
                        // The machine failed, not the match: store nothing (not even a
                        // failure), stop taking matches, report it; a rerun plays it.
                        stop.store(true, Ordering::SeqCst);
                        pb.set_message(format!("host fault at match {}", m.index));
                        fatal
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get_or_insert(RunError::HostFault {
                                contest: def.name.clone(),
                                index: m.index,
                                reason,
                            });
                        Ok(())
                    }
                    Err(PlayError::Failed(e)) => {
                        // Nothing has worked yet in this run: the set-up is probably wrong for
                        // every match (a bad option, a missing bot); stop instead of failing all.
                        if played.load(Ordering::SeqCst) == 0 {
                            stop.store(true, Ordering::SeqCst);
                        }
                        let n = errors.fetch_add(1, Ordering::SeqCst) + 1;
                        pb.set_message(format!("{n} errors (last: match {}: {e})", m.index));
                        failed
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((m.index, e.clone()));
                        st.record_failure(&def.name, m.index, &job.to_json(), &e)
                    }
                    // A local run never takes a match away from itself.
                    Err(PlayError::Stopped) => Ok(()),
                };
                drop(st);
                pb.inc(1);
                if let Err(e) = stored {
                    stop.store(true, Ordering::SeqCst);
                    fatal
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(RunError::Store(e));
                    return;
                }
            });
        }
    });
    if let Some(e) = fatal.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let mut failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    failed.sort();
    Ok((played.into_inner(), failed))
}

/// Run a contest to its end in this process: lock the store against a second run, start every
/// process entrant once, register the contest, check its bots' program files, then play every
/// match without a stored result (stage after stage), `opts.jobs` at a time. Failed matches are
/// recorded and reported; running again retries them. A host fault stops the run with
/// [`RunError::HostFault`] and stores nothing for that match.
pub fn run_local(
    def: &ContestDef,
    mut store: Box<dyn Store>,
    arena: Arc<dyn Arena>,
    opts: &RunOptions,
) -> Result<RunSummary, RunError> {
    store.lock_run(&run_holder(def))?;
    preflight(arena.as_ref(), def, &opts.store_files)?;
    register(store.as_mut(), def)?;
    check_programs(store.as_mut(), def)?;
    let store = Arc::new(Mutex::new(store));
    let mut summary = RunSummary::default();
    let errors = AtomicU64::new(0);
    let mut pb: Option<ProgressBar> = None;
    loop {
        let results = {
            let mut st = store.lock().unwrap_or_else(|e| e.into_inner());
            load_results(st.as_mut(), def)?
        };
        let sched = schedule(def, &results);
        let pending: Vec<PlannedMatch> = sched
            .matches
            .iter()
            .filter(|m| !results.contains_key(&m.index))
            .cloned()
            .collect();
        let bar = start_pass(
            &mut pb,
            &mut summary,
            sched.matches.len(),
            results.len(),
            opts.progress,
        );
        bar.set_position(results.len() as u64);
        if pending.is_empty() {
            summary.complete = sched.complete;
            break;
        }
        let (played, failed) = play_batch(def, pending, &store, &arena, opts, bar, &errors)?;
        summary.played += played;
        if !failed.is_empty() {
            summary.failed = failed;
            break;
        }
    }
    if let Some(bar) = pb {
        bar.finish();
    }
    Ok(summary)
}

/// Options of a PostgreSQL worker.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Matches played at once (each with its own database connection).
    pub jobs: usize,
    /// Lease of a claimed match; heartbeats extend it every third of it.
    pub lease: Duration,
    /// Attempts before a match is given up.
    pub max_attempts: u32,
    /// Pause between polls of an empty queue.
    pub poll: Duration,
    /// Stop once no contest in the store has work left (nothing queued or running, and no
    /// stage still to schedule).
    pub exit_when_idle: bool,
    /// This worker's name prefix (host and process id by default).
    pub name: String,
    /// How long to keep reconnecting to a database that went away before giving up.
    pub reconnect_for: Duration,
    /// Work besides the queue's matches, and the preparation of a claimed match (the ladder's
    /// builds and programs).
    pub hooks: Option<Arc<dyn WorkerHooks>>,
}

/// What a worker does besides playing the contest queue's matches as they are.
pub trait WorkerHooks: Send + Sync {
    /// Called before each claim of a match: do one piece of other work if there is some (the
    /// ladder's builds come before its matches) and say whether there was. An error is logged
    /// and the loop goes on.
    fn other_work(&self, store: &mut dyn Store, worker: &str) -> Result<bool, String>;

    /// Make a claimed match playable on this machine (unpack its bots' programs). An error
    /// fails this attempt of the match with the message.
    fn prepare(&self, store: &mut dyn Store, job: &mut MatchJob) -> Result<(), String>;
}

impl std::fmt::Debug for dyn WorkerHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WorkerHooks")
    }
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            jobs: 1,
            lease: Duration::from_secs(60),
            max_attempts: 3,
            poll: Duration::from_millis(500),
            exit_when_idle: false,
            name: default_worker_name(),
            reconnect_for: DEFAULT_RECONNECT_FOR,
            hooks: None,
        }
    }
}

/// `host:pid`.
pub fn default_worker_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_string());
    format!("{host}:{}", std::process::id())
}

/// What a worker did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    pub played: u64,
    /// Results that arrived after another worker had stored the same match.
    pub duplicates: u64,
    pub failed: u64,
    /// Matches taken away while this worker played them (stopped by an organiser, or their
    /// lease lost), given up unrecorded.
    pub stopped: u64,
    /// Times the database connection was lost and made again.
    pub reconnects: u64,
}

/// A store connection that is made again, with backoff, when the database goes away (a
/// PostgreSQL restart): every operation is retried on the new connection. Operations are safe
/// to repeat (results are keyed, claims leased, queueing idempotent).
pub struct Reconnecting<'a> {
    store: Box<dyn Store>,
    connect: Connect<'a>,
    reconnect_for: Duration,
    stop: Option<&'a AtomicBool>,
    /// Times the connection was made again.
    pub reconnects: u64,
}

impl<'a> Reconnecting<'a> {
    pub fn new(
        store: Box<dyn Store>,
        connect: Connect<'a>,
        reconnect_for: Duration,
        stop: Option<&'a AtomicBool>,
    ) -> Self {
        Reconnecting {
            store,
            connect,
            reconnect_for,
            stop,
            reconnects: 0,
        }
    }

    /// Run `op`; on a lost connection, reconnect (0.1 s, then doubling up to 5 s between tries)
    /// and run it again, for up to `reconnect_for`.
    pub fn call<T>(
        &mut self,
        mut op: impl FnMut(&mut dyn Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut since: Option<Instant> = None;
        let mut delay = Duration::from_millis(100);
        loop {
            let err = match op(self.store.as_mut()) {
                Err(e) if e.is_connection() => e,
                other => return other,
            };
            let mut err = err;
            loop {
                let first = *since.get_or_insert_with(Instant::now);
                if first.elapsed() >= self.reconnect_for
                    || self.stop.is_some_and(|s| s.load(Ordering::SeqCst))
                {
                    return Err(err);
                }
                tracing::warn!(
                    "lost the database connection ({err}); reconnecting in {:.1} s",
                    delay.as_secs_f64()
                );
                std::thread::sleep(delay);
                delay = (delay * 2).min(Duration::from_secs(5));
                match (self.connect)() {
                    Ok(store) => {
                        self.store = store;
                        self.reconnects += 1;
                        tracing::warn!("reconnected to the database");
                        break;
                    }
                    Err(e) if e.is_connection() => err = e,
                    Err(e) => return Err(e),
                }
            }
        }
    }

    /// The store, for operations that need no retry.
    pub fn store(&mut self) -> &mut dyn Store {
        self.store.as_mut()
    }
}

/// Queue the matches that the stored definitions of coordinated contests (those with queue
/// entries) now schedule but that are neither stored, queued, running nor failed: the next
/// stage of a staged contest, as soon as its previous stage has finished. Coordinators and idle
/// workers both do it; queueing is idempotent. Returns how many matches were queued.
pub fn advance_stages(store: &mut Reconnecting<'_>) -> Result<u64, RunError> {
    let mut queued = 0;
    for name in store.call(|s| s.contest_names())? {
        if store.call(|s| s.queue_counts(&name))?.total() == 0 {
            continue;
        }
        let row = store
            .call(|s| s.contest(&name))?
            .ok_or_else(|| RunError::UnknownContest(name.clone()))?;
        let def = ContestDef::from_stored(&row.definition).map_err(|e| {
            RunError::BadStoredDefinition {
                name: name.clone(),
                reason: e.to_string(),
            }
        })?;
        let results = game_results(&def, &store.call(|s| s.results(&name))?)?;
        let failed: std::collections::BTreeSet<u64> = store
            .call(|s| s.failures(&name))?
            .into_iter()
            .map(|f| f.index)
            .collect();
        let sched = schedule(&def, &results);
        let pending: Vec<QueuedMatch> = sched
            .matches
            .iter()
            .filter(|m| !results.contains_key(&m.index) && !failed.contains(&m.index))
            .map(|m| QueuedMatch {
                index: m.index,
                spec_json: MatchJob::new(&def, m).to_json(),
            })
            .collect();
        if !pending.is_empty() {
            queued += store.call(|s| s.enqueue(&name, &pending))?;
        }
    }
    Ok(queued)
}

/// One claim loop of a worker.
fn worker_loop(
    slot: usize,
    store: Box<dyn Store>,
    connect: Connect<'_>,
    arena: &dyn Arena,
    opts: &WorkerOptions,
    stop: &AtomicBool,
) -> Result<WorkerSummary, RunError> {
    let name = format!("{}:{slot}", opts.name);
    let store = Mutex::new(Reconnecting::new(
        store,
        connect,
        opts.reconnect_for,
        Some(stop),
    ));
    let lock = || store.lock().unwrap_or_else(|e| e.into_inner());
    let mut summary = WorkerSummary::default();
    let result = (|| {
        while !stop.load(Ordering::SeqCst) {
            if let Some(hooks) = &opts.hooks {
                match hooks.other_work(lock().store(), &name) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(e) => tracing::error!("worker {name}: {e}"),
                }
            }
            let claim: Option<Claim> =
                lock().call(|s| s.claim(&name, opts.lease, opts.max_attempts))?;
            let Some(claim) = claim else {
                if opts.exit_when_idle && lock().call(|s| s.open_matches())? == 0 {
                    // Nothing open: unless a staged contest has a next stage to queue (its
                    // coordinator may not have seen the last result yet), the work is done.
                    let queued = advance_stages(&mut lock())?;
                    if queued == 0 && lock().call(|s| s.open_matches())? == 0 {
                        return Ok(());
                    }
                    continue;
                }
                std::thread::sleep(opts.poll);
                continue;
            };
            let mut job: MatchJob = match serde_json::from_str(&claim.spec_json) {
                Ok(j) => j,
                Err(e) => {
                    let msg = format!("queued match spec is not valid: {e}");
                    lock().call(|s| s.release_failed(&claim, &msg, opts.max_attempts))?;
                    summary.failed += 1;
                    continue;
                }
            };
            if let Some(hooks) = &opts.hooks {
                if let Err(e) = hooks.prepare(lock().store(), &mut job) {
                    let msg = format!("the match could not be prepared on {name}: {e}");
                    lock().call(|s| s.release_failed(&claim, &msg, opts.max_attempts))?;
                    summary.failed += 1;
                    continue;
                }
            }
            let done = AtomicBool::new(false);
            let lost = AtomicBool::new(false);
            let start = Instant::now();
            let _live = LiveEnd(&job.contest, job.index);
            let outcome = std::thread::scope(|scope| {
                // Heartbeats keep the lease while the match runs.
                scope.spawn(|| {
                    let beat = (opts.lease / 3).max(Duration::from_millis(50));
                    let mut last = Instant::now();
                    while !done.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(20).min(beat));
                        if last.elapsed() >= beat {
                            last = Instant::now();
                            // A failed heartbeat is not fatal: the result is keyed, a duplicate
                            // from another worker is ignored. No reconnect here: the result's
                            // store call below makes the connection again.
                            // A heartbeat that finds the match no longer this worker's (an
                            // organiser stopped it, or the lease was lost to another worker)
                            // stops it here.
                            if let Ok(false) = lock().store().heartbeat(&claim, opts.lease) {
                                lost.store(true, Ordering::SeqCst);
                            }
                        }
                    }
                });
                let r = play_guarded(arena, &job, &lost);
                done.store(true, Ordering::SeqCst);
                r
            });
            let elapsed = start.elapsed().as_millis() as u64;
            match outcome {
                Ok(p) => {
                    let report = report_json(&p.report);
                    let inserted = lock().call(|s| {
                        s.put_result(&NewResult {
                            contest: &claim.contest,
                            index: claim.index,
                            entrants: &job.entrants,
                            report_json: &report,
                            replay: &p.replay,
                            duration_ms: elapsed,
                            worker: &name,
                        })
                    })?;
                    if inserted {
                        summary.played += 1;
                    } else {
                        summary.duplicates += 1;
                    }
                }
                Err(PlayError::HostFault(reason)) => {
                    // This machine cannot play matches: give the match back uncounted for
                    // another worker and stop this one with the reason.
                    lock().call(|s| s.release_host_fault(&claim, &reason))?;
                    return Err(RunError::HostFault {
                        contest: claim.contest.clone(),
                        index: claim.index,
                        reason,
                    });
                }
                Err(PlayError::Failed(e)) => {
                    lock().call(|s| s.release_failed(&claim, &e, opts.max_attempts))?;
                    summary.failed += 1;
                }
                // No longer this worker's: whoever took it away records what happened.
                Err(PlayError::Stopped) => summary.stopped += 1,
            }
        }
        Ok(())
    })();
    summary.reconnects = lock().reconnects;
    result.map(|()| summary)
}

/// Run a worker: `opts.jobs` claim loops, each with its own store from `connect` (made again,
/// with backoff, when the database goes away), until stopped (or idle, with `exit_when_idle`).
pub fn run_worker(
    connect: Connect<'_>,
    arena: Arc<dyn Arena>,
    opts: &WorkerOptions,
    stop: &AtomicBool,
) -> Result<WorkerSummary, RunError> {
    let mut stores = Vec::new();
    for _ in 0..opts.jobs.max(1) {
        stores.push(connect()?);
    }
    let results: Vec<Result<WorkerSummary, RunError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = stores
            .into_iter()
            .enumerate()
            .map(|(slot, store)| {
                let arena = arena.clone();
                scope.spawn(move || {
                    let r = worker_loop(slot, store, connect, arena.as_ref(), opts, stop);
                    if r.is_err() {
                        stop.store(true, Ordering::SeqCst);
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Ok(WorkerSummary::default())))
            .collect()
    });
    let mut total = WorkerSummary::default();
    for r in results {
        let s = r?;
        total.played += s.played;
        total.duplicates += s.duplicates;
        total.failed += s.failed;
        total.stopped += s.stopped;
        total.reconnects += s.reconnects;
    }
    Ok(total)
}

/// Coordinate a contest run by workers: register it, queue every match without a result,
/// report progress until the workers have finished it (stage after stage). Plays nothing. The
/// connection is made with `connect`, and made again with backoff if the database goes away.
pub fn coordinate(
    def: &ContestDef,
    connect: Connect<'_>,
    opts: &RunOptions,
    poll: Duration,
) -> Result<RunSummary, RunError> {
    let mut store = Reconnecting::new(connect()?, connect, opts.reconnect_for, None);
    let row = ContestRow {
        name: def.name.clone(),
        fingerprint: def.fingerprint(),
        definition: def.to_stored(),
    };
    store.call(|s| s.register_contest(&row))?;
    let now = program_files(def);
    let changes = changed_programs(&store.call(|s| s.program_files(&def.name))?, &now);
    if !changes.is_empty() {
        return Err(RunError::ProgramChanged {
            contest: def.name.clone(),
            changes,
        });
    }
    store.call(|s| s.record_program_files(&def.name, &now))?;
    let mut summary = RunSummary::default();
    let mut pb: Option<ProgressBar> = None;
    let initially_stored = store.call(|s| s.stored_indices(&def.name))?.len() as u64;
    loop {
        let results = game_results(def, &store.call(|s| s.results(&def.name))?)?;
        let sched = schedule(def, &results);
        let bar = start_pass(
            &mut pb,
            &mut summary,
            sched.matches.len(),
            results.len(),
            opts.progress,
        );
        let pending: Vec<QueuedMatch> = sched
            .matches
            .iter()
            .filter(|m| !results.contains_key(&m.index))
            .map(|m| QueuedMatch {
                index: m.index,
                spec_json: MatchJob::new(def, m).to_json(),
            })
            .collect();
        if pending.is_empty() {
            summary.complete = sched.complete;
            break;
        }
        store.call(|s| s.enqueue(&def.name, &pending))?;
        // Wait until nothing of this contest is queued or running.
        loop {
            let counts = store.call(|s| s.queue_counts(&def.name))?;
            let stored = store.call(|s| s.stored_indices(&def.name))?.len() as u64;
            bar.set_position(stored);
            bar.set_message(format!(
                "{} running, {} queued, {} failed",
                counts.running, counts.queued, counts.failed
            ));
            if counts.queued == 0 && counts.running == 0 {
                break;
            }
            std::thread::sleep(poll);
        }
        let failures = store.call(|s| s.failures(&def.name))?;
        let stored_now = store.call(|s| s.stored_indices(&def.name))?;
        let failed: Vec<(u64, String)> = failures
            .into_iter()
            .filter(|f| !stored_now.contains(&f.index))
            .map(|f| (f.index, f.error))
            .collect();
        summary.played = stored_now.len() as u64 - initially_stored.min(stored_now.len() as u64);
        if !failed.is_empty() {
            summary.failed = failed;
            break;
        }
    }
    if let Some(bar) = pb {
        bar.finish();
    }
    Ok(summary)
}
