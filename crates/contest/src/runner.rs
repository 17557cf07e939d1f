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
use kakehiki_store::{ContestRow, NewResult, QueuedMatch, Store, StoreError, StoredResult};

use crate::arena::{Arena, MatchJob};
use crate::config::ContestDef;
use crate::schedule::{schedule, GameResult, PlannedMatch};

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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            jobs: 1,
            progress: false,
            worker: "local".to_string(),
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

/// Play one job, turning a panic of the player into an error.
fn play_guarded(arena: &dyn Arena, job: &MatchJob) -> Result<crate::arena::Played, String> {
    match catch_unwind(AssertUnwindSafe(|| arena.play(job))) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(format!("the match player panicked: {msg}"))
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
    let threads = opts.jobs.max(1);
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
                let start = Instant::now();
                let outcome = play_guarded(arena.as_ref(), &job);
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
                    Err(e) => {
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

/// Run a contest to its end in this process: register it, then play every match without a
/// stored result (stage after stage), `opts.jobs` at a time. Failed matches are recorded and
/// reported; running again retries them.
pub fn run_local(
    def: &ContestDef,
    store: Box<dyn Store>,
    arena: Arc<dyn Arena>,
    opts: &RunOptions,
) -> Result<RunSummary, RunError> {
    let store = Arc::new(Mutex::new(store));
    let mut summary = RunSummary::default();
    {
        let mut st = store.lock().unwrap_or_else(|e| e.into_inner());
        register(st.as_mut(), def)?;
    }
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
    /// Stop once nothing is queued or running anywhere.
    pub exit_when_idle: bool,
    /// This worker's name prefix (host and process id by default).
    pub name: String,
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
}

/// One claim loop of a worker.
fn worker_loop(
    slot: usize,
    store: Box<dyn Store>,
    arena: &dyn Arena,
    opts: &WorkerOptions,
    stop: &AtomicBool,
) -> Result<WorkerSummary, RunError> {
    let name = format!("{}:{slot}", opts.name);
    let store = Mutex::new(store);
    let mut summary = WorkerSummary::default();
    while !stop.load(Ordering::SeqCst) {
        let claim = store.lock().unwrap_or_else(|e| e.into_inner()).claim(
            &name,
            opts.lease,
            opts.max_attempts,
        )?;
        let Some(claim) = claim else {
            if opts.exit_when_idle
                && store
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .open_matches()?
                    == 0
            {
                return Ok(summary);
            }
            std::thread::sleep(opts.poll);
            continue;
        };
        let job: MatchJob = match serde_json::from_str(&claim.spec_json) {
            Ok(j) => j,
            Err(e) => {
                let msg = format!("queued match spec is not valid: {e}");
                store
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .release_failed(&claim, &msg, opts.max_attempts)?;
                summary.failed += 1;
                continue;
            }
        };
        let done = AtomicBool::new(false);
        let start = Instant::now();
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
                        // from another worker is ignored.
                        let _ = store
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .heartbeat(&claim, opts.lease);
                    }
                }
            });
            let r = play_guarded(arena, &job);
            done.store(true, Ordering::SeqCst);
            r
        });
        let elapsed = start.elapsed().as_millis() as u64;
        let mut st = store.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            Ok(p) => {
                let inserted = st.put_result(&NewResult {
                    contest: &claim.contest,
                    index: claim.index,
                    entrants: &job.entrants,
                    report_json: &report_json(&p.report),
                    replay: &p.replay,
                    duration_ms: elapsed,
                    worker: &name,
                })?;
                if inserted {
                    summary.played += 1;
                } else {
                    summary.duplicates += 1;
                }
            }
            Err(e) => {
                st.release_failed(&claim, &e, opts.max_attempts)?;
                summary.failed += 1;
            }
        }
    }
    Ok(summary)
}

/// Run a worker: `opts.jobs` claim loops, each with its own store from `connect`, until
/// stopped (or idle, with `exit_when_idle`).
pub fn run_worker(
    connect: &(dyn Fn() -> Result<Box<dyn Store>, StoreError> + Sync),
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
                    let r = worker_loop(slot, store, arena.as_ref(), opts, stop);
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
    }
    Ok(total)
}

/// Coordinate a contest run by workers: register it, queue every match without a result,
/// report progress until the workers have finished it (stage after stage). Plays nothing.
pub fn coordinate(
    def: &ContestDef,
    mut store: Box<dyn Store>,
    opts: &RunOptions,
    poll: Duration,
) -> Result<RunSummary, RunError> {
    register(store.as_mut(), def)?;
    let mut summary = RunSummary::default();
    let mut pb: Option<ProgressBar> = None;
    loop {
        let results = load_results(store.as_mut(), def)?;
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
        store.enqueue(&def.name, &pending)?;
        // Wait until nothing of this contest is queued or running.
        loop {
            let counts = store.queue_counts(&def.name)?;
            let stored = store.stored_indices(&def.name)?.len() as u64;
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
        let failures = store.failures(&def.name)?;
        let pending_idx: std::collections::BTreeSet<u64> =
            pending.iter().map(|m| m.index).collect();
        let failed: Vec<(u64, String)> = failures
            .into_iter()
            .filter(|f| pending_idx.contains(&f.index))
            .map(|f| (f.index, f.error))
            .collect();
        let stored_now = store.stored_indices(&def.name)?;
        summary.played += pending_idx
            .iter()
            .filter(|i| stored_now.contains(i))
            .count() as u64;
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
