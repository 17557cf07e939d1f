//! `kakehiki check GAME --seat SPEC`: play a contestant's bot through a set of matches against
//! built-in bots, under every rule set the game has (or the one named with `--rules`): in the
//! first and the last seat with several seeds, against `builtin:silent` (an opponent that never
//! answers), and with more seeds until it has been asked every kind of request the game asked
//! any seat. Then print what went wrong: every error the referee recorded for the bot (at the
//! game's own label, kind, what was expected and what it sent; identical ones condensed), how its
//! program ended and its stderr tail, its median and slowest reply per kind of request against
//! the limit (timed-out requests included), and warnings. Exit status 0 only for a bot with no
//! errors.
//!
//! Game-generic: everything is read from the common seat record of the replay (`seat` and
//! `seat_end` lines, [`SeatRecord`]) and the match report (`errors` with their `at`, `exit`,
//! `stderr`); what differs per game (seats, rule sets, built-in bots) comes from its
//! [`GameType`](kakehiki_core::GameType).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kakehiki_agent::SandboxConfig;
use kakehiki_core::exchange::{ExchangeOutcome, SeatRecord, StderrBegan};
use kakehiki_core::replay::ReplayLog;
use kakehiki_core::text::{last_lines, terminal_line, terminal_text};
use kakehiki_core::{SeatError, SeatErrorKind, SeatSpec};
use kakehiki_referee::seat::{EXIT_KEY, NO_TERMINATOR, SILENT_BOT, STDERR_KEY};
use kakehiki_referee::{find_game, GameDriver, MatchRecord, MatchSpec, RefereeError};
use serde::Serialize;

/// What to check: the bot, the game, and the matches' sandbox (what `kakehiki check`'s flags
/// give).
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The game's registered name.
    pub game: String,
    /// The bot: `cmd:` or `tcp-cmd:` (or another process seat the game takes).
    pub seat: SeatSpec,
    /// The built-in bot of the other seats (default: the game's first, usually `random`).
    pub against: Option<String>,
    /// Only this rule set (default: every rule set of the game).
    pub rules: Option<String>,
    /// Game options, under every rule set checked.
    pub options: BTreeMap<String, String>,
    /// Seeds per seat played (the bot plays the first and the last seat).
    pub seeds: u64,
    /// Seats of a match (`None`: the game's standard match; a ladder checks at its own).
    pub seats: Option<usize>,
    /// The first seed of the check's matches (the others follow from it: the first seat's are
    /// SEED, SEED+7, ...).
    pub seed: u64,
    /// Stop after this long: the check fails, naming the match it was in.
    pub time_limit: Option<Duration>,
    /// The bot's sandbox, its folder as seat 0 (moved to the seat it plays in each match).
    pub sandbox: SandboxConfig,
    /// Called with a line before each match (`check: geister rules gpw seed 1000, ...`).
    pub progress: Option<fn(&str)>,
}

impl CheckOptions {
    /// The check of `seat` in `game` with `kakehiki check`'s defaults: 2 seeds per seat from
    /// seed 1000, every rule set, the default sandbox, no time limit, no progress lines.
    pub fn new(game: &str, seat: SeatSpec) -> Self {
        CheckOptions {
            game: game.to_string(),
            seat,
            against: None,
            rules: None,
            options: BTreeMap::new(),
            seeds: 2,
            seats: None,
            seed: 1000,
            time_limit: None,
            sandbox: SandboxConfig::default(),
            progress: None,
        }
    }
}

/// Why a check could not be run (a bot that fails it is a [`CheckReport`] with `passed` false).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A request the check cannot serve (a built-in seat, an unknown `--against` or `--rules`).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Game(Box<RefereeError>),
    #[error("your bot cannot be started")]
    CannotStart(#[source] kakehiki_agent::SpawnError),
    #[error("cannot run a {game} match under rules {rules}{hint}")]
    Match {
        game: String,
        rules: String,
        /// How to check the other rule sets, when only one refuses an option.
        hint: &'static str,
        #[source]
        source: Box<RefereeError>,
    },
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("the match's {0} is unreadable")]
    Replay(&'static str, #[source] kakehiki_core::replay::ReplayError),
}

#[derive(Debug, Serialize)]
pub struct CheckedMatch {
    rules: String,
    seed: u64,
    seat: usize,
    seats: usize,
    /// What the match tests: `first seat`, `last seat`, `an opponent that times out`, ...
    case: String,
    /// The bot's seat in the game's own terms (`Agent[01] SEER`, `FRANCE, 5 centres`), where
    /// the game says.
    #[serde(rename = "as", skip_serializing_if = "String::is_empty")]
    as_seat: String,
    errors: Vec<SeatError>,
    /// Legal but costly behaviour (a reply without a line terminator, discarded output).
    warnings: Vec<String>,
    /// How your bot's program ended (`exit code 1`, `killed by signal 9 (SIGKILL)`, `still
    /// running (killed by the referee)`), where it ran one.
    exit: Option<String>,
    /// The last lines of its stderr, for a match with errors.
    stderr_tail: String,
    /// Where its stderr began (the request in the game's own terms, and the first line), for a
    /// match with errors in which its program crashed (a non-zero exit or a signal).
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr_began: Option<StderrBegan>,
    /// The check stopped the bot after [`IDENTICAL_ERRORS`] identical errors and went on.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stopped_early: bool,
}

/// Identical errors (the same kind and detail) after which `check` stops the bot's match and
/// goes on to the next.
pub const IDENTICAL_ERRORS: usize = 3;

/// How long a bot that owes a reply may wait to read its input, asleep and using no CPU,
/// before `check` gives up on that reply (a contest waits out the whole limit): such a bot waits
/// for the referee while the referee waits for it.
pub const WAITING_GIVEN: std::time::Duration = std::time::Duration::from_secs(1);

/// Reply times of one kind of request under one rule set, over every match.
#[derive(Debug, Serialize, Clone, PartialEq)]
pub struct KindTimes {
    rules: String,
    /// The request, in the game's own words.
    kind: String,
    /// Replies in time.
    replies: usize,
    /// Requests that got no reply in time (each counted at its limit below).
    timeouts: usize,
    median_ms: f64,
    slowest_ms: f64,
    /// The slowest was a timeout: the bot took longer than `slowest_ms`.
    slowest_timed_out: bool,
    /// The time allowed for one reply (the first such request's; it may vary, e.g. a bank).
    limit_ms: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct CheckReport {
    pub game: String,
    pub bot: String,
    /// The rule sets checked.
    pub rules: Vec<String>,
    /// The bot had no errors and the check finished.
    pub passed: bool,
    pub matches: Vec<CheckedMatch>,
    /// Median and slowest reply per rule set and kind of request, against its limit.
    pub timings: Vec<KindTimes>,
    /// Every kind of request the game asked any seat, and how many your bot answered (0: not
    /// met).
    pub coverage: Vec<Coverage>,
    pub warnings: Vec<String>,
    /// Why the check stopped before its last match (its time limit ran out), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Planned matches not played, and why (a start-up that failed the same way twice).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// One kind of request the game sends and the replies the checked bot gave to it.
#[derive(Debug, Serialize)]
pub struct Coverage {
    kind: String,
    replies: usize,
}

/// Lines of stderr shown per failed match.
const TAIL_LINES: usize = 20;

/// Matches played at most, after the planned ones, to meet every kind of request.
const EXTRA_MATCHES: u64 = 12;

/// Built-in matches tried, and the time spent at most, to find a seed that asks a seat a kind
/// of request it has not met.
const PROBE_TRIES: u64 = 300;
const PROBE_TIME: Duration = Duration::from_secs(20);

/// One planned match.
struct Case {
    rules: String,
    seat: usize,
    seed: u64,
    name: String,
    /// A seat played by `builtin:silent`.
    silent: Option<usize>,
}

/// What every match played so far says.
struct Played {
    rules: String,
    seat: usize,
    record: SeatRecord,
}

/// What `check` says of a bot: whether it passed, and the diagnosis it prints.
#[derive(Debug, Clone)]
pub struct CheckVerdict {
    pub passed: bool,
    pub diagnosis: String,
}

/// `check` for a program that is not on the command line (the ladder's built bots): the bot
/// `seat` (a seat spec, `cmd:` or `tcp-cmd:`, `ws-cmd:`, `daide-cmd:`, its command run in
/// `program_dir`, which is its seat folder) checked at tables of `seats` under rule set
/// `rules` of `game` with the game `options`, with the default sandbox, from `seed` within
/// `time_limit`.
#[allow(clippy::too_many_arguments)]
pub fn check_program(
    game: &str,
    rules: &str,
    options: &BTreeMap<String, String>,
    seat: &str,
    seats: usize,
    program_dir: &std::path::Path,
    seed: u64,
    time_limit: Duration,
) -> Result<CheckVerdict, CheckError> {
    let seat: SeatSpec = seat
        .parse()
        .map_err(|e| CheckError::Usage(format!("the bot's seat {seat:?}: {e}")))?;
    let mut opts = CheckOptions::new(game, seat);
    opts.rules = Some(rules.to_string());
    opts.options = options.clone();
    opts.seed = seed;
    opts.seats = Some(seats);
    opts.time_limit = Some(time_limit.max(Duration::from_secs(1)));
    opts.sandbox
        .jail
        .seat_dirs
        .insert(0, program_dir.to_path_buf());
    let report = evaluate(&opts)?;
    Ok(CheckVerdict {
        passed: report.passed,
        diagnosis: diagnosis(&report),
    })
}

/// Play the check's matches and read what they say about the bot.
pub fn evaluate(args: &CheckOptions) -> Result<CheckReport, CheckError> {
    let driver = find_game(&args.game).map_err(|e| CheckError::Game(Box::new(e)))?;
    let gt = driver.game_type();
    if matches!(
        args.seat,
        SeatSpec::Builtin(_) | SeatSpec::Tcp | SeatSpec::Human
    ) {
        return Err(CheckError::Usage(format!(
            "check plays your bot: give --seat cmd:<command line> or tcp-cmd:<command line>, not {}",
            args.seat
        )));
    }
    let playing = || gt.builtin_bots.iter().filter(|b| **b != SILENT_BOT);
    let against = match &args.against {
        Some(name) if name == SILENT_BOT || gt.builtin_bots.contains(&name.as_str()) => {
            name.clone()
        }
        Some(name) => {
            return Err(CheckError::Usage(format!(
                "--against {name}: {} has no built-in bot of that name: expected one of {}, {SILENT_BOT}",
                gt.name,
                playing().copied().collect::<Vec<_>>().join(", ")
            )))
        }
        None => playing()
            .next()
            .map(|s| s.to_string())
            .ok_or_else(|| {
                CheckError::Usage("this game has no built-in bots to play against".into())
            })?,
    };
    // The built-in bot of the matches that look for a seed (one that plays, not `silent`).
    let prober = if against == SILENT_BOT {
        playing().next().map(|s| s.to_string())
    } else {
        Some(against.clone())
    };
    let rule_sets: Vec<String> = match &args.rules {
        Some(r) if gt.rule_sets.contains(&r.as_str()) => vec![r.clone()],
        Some(r) => {
            return Err(CheckError::Usage(format!(
                "--rules {r}: {} has no rule set of that name: expected one of {}",
                gt.name,
                gt.rule_sets.join(", ")
            )))
        }
        None => gt.rule_sets.iter().map(|r| r.to_string()).collect(),
    };
    let options = &args.options;
    let n = args.seats.unwrap_or(gt.default_seats);
    if !gt.accepts_seats(n) || n < 2 {
        return Err(CheckError::Usage(format!(
            "{n} seats: {} is played by {} to {} players",
            gt.name,
            gt.min_seats.max(2),
            gt.max_seats
        )));
    }
    // Your bot's sandbox (its folder as seat 0), moved to the seat it plays in each match.
    let sandbox = &args.sandbox;
    if let SeatSpec::Cmd(argv) | SeatSpec::TcpCmd(argv) | SeatSpec::Daide(Some(argv)) = &args.seat {
        // A launch line that cannot work in the sandbox is one error, not one per match.
        kakehiki_agent::check_mounts(argv, &sandbox.for_seat(0))
            .map_err(CheckError::CannotStart)?;
    }
    let several = rule_sets.len() > 1;
    let mut cases = Vec::new();
    for rules in &rule_sets {
        cases.extend(planned_cases(rules, n, args.seeds, args.seed));
    }
    let deadline = args.time_limit.map(|t| Instant::now() + t);
    let runtime = tokio::runtime::Runtime::new().map_err(CheckError::Runtime)?;
    let ctx = Ctx {
        args,
        driver,
        runtime: &runtime,
        against: &against,
        options,
        sandbox,
        n,
        several,
        deadline,
    };
    let mut matches = Vec::new();
    let mut played = Vec::new();
    let mut stopped = None;
    let mut skipped: Vec<String> = Vec::new();
    let mut skip_notes: Vec<String> = Vec::new();
    // Per rule set, the start-up failure of its last match, if it had one.
    let mut failed_start: BTreeMap<&str, String> = BTreeMap::new();
    for (i, case) in cases.iter().enumerate() {
        if skipped.contains(&case.rules) {
            continue;
        }
        match ctx.play(case)? {
            Some((m, p)) => {
                let start = m
                    .errors
                    .iter()
                    .find(|e| e.kind == SeatErrorKind::NotReady)
                    .map(|e| e.detail.clone());
                match start {
                    // The same start-up failure twice: the others of this rule set would
                    // wait out the same set-up.
                    Some(d) if failed_start.get(case.rules.as_str()) == Some(&d) => {
                        let rest = cases[i + 1..]
                            .iter()
                            .filter(|c| c.rules == case.rules)
                            .count();
                        if rest > 0 {
                            skip_notes.push(format!(
                                "your bot failed its start-up the same way twice under rules {}: check did not play the other {rest} planned match{} of these rules (fix the start-up first)",
                                case.rules,
                                if rest == 1 { "" } else { "es" }
                            ));
                            skipped.push(case.rules.clone());
                        }
                    }
                    Some(d) => {
                        failed_start.insert(&case.rules, d);
                    }
                    None => {
                        failed_start.remove(case.rules.as_str());
                    }
                }
                matches.push(m);
                played.push(p);
            }
            None => {
                stopped = Some(ctx.out_of_time(case));
                break;
            }
        }
    }
    // Until the bot has been asked every kind of request the game asked any seat (a role it was
    // not dealt, a phase that did not occur), a few more matches, each with a seed where the
    // game played by built-in bots asks its seat one of them.
    let mut extra = 0u64;
    let mut next_seed = args.seed.wrapping_add(2000);
    let mut unreachable: Vec<String> = Vec::new();
    while stopped.is_none()
        && extra < EXTRA_MATCHES
        && matches.iter().all(|m: &CheckedMatch| m.errors.is_empty())
    {
        let missing: Vec<(String, String)> = not_met(&played)
            .into_iter()
            .filter(|(_, k)| !unreachable.contains(k))
            .collect();
        let Some((rules, _)) = missing.first().cloned() else {
            break;
        };
        let wanted: Vec<String> = missing
            .iter()
            .filter(|(r, _)| *r == rules)
            .map(|(_, k)| k.clone())
            .collect();
        let found = match &prober {
            Some(bot) => ctx.probe(&rules, bot, &wanted, &mut next_seed)?,
            None => None,
        };
        if ctx.past_deadline() {
            break;
        }
        let Some(seed) = found else {
            unreachable.extend(wanted);
            continue;
        };
        extra += 1;
        let case = Case {
            rules,
            seat: 0,
            seed,
            name: format!("more requests: {} not met yet", wanted.join(", ")),
            silent: None,
        };
        let Some((m, p)) = ctx.play(&case)? else {
            stopped = Some(ctx.out_of_time(&case));
            break;
        };
        matches.push(m);
        played.push(p);
    }
    let samples: Vec<Sample> = played
        .iter()
        .flat_map(|p| samples_of(&p.record, p.seat, &p.rules))
        .collect();
    let mut timings = kind_times(&samples);
    // By rule set, in the order checked (a kind first met in a later match stays with its own).
    timings.sort_by_key(|t| rule_sets.iter().position(|r| *r == t.rules));
    let coverage = coverage_of(&played);
    let passed = stopped.is_none() && matches.iter().all(|m| m.errors.is_empty());
    let mut warnings: Vec<String> = Vec::new();
    let unseen: Vec<&str> = coverage
        .iter()
        .filter(|c| c.replies == 0)
        .map(|c| c.kind.as_str())
        .collect();
    if !unseen.is_empty() && passed {
        warnings.push(format!(
            "your bot never answered a {} request in {} matches (the game asked other seats): that code is untested here",
            unseen.join(", "),
            matches.len()
        ));
    }
    for m in &matches {
        for w in &m.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    warnings.extend(slow_warnings(&samples, several));
    Ok(CheckReport {
        game: args.game.clone(),
        bot: args.seat.to_string(),
        rules: rule_sets,
        passed,
        matches,
        timings,
        coverage,
        warnings,
        stopped,
        skipped: skip_notes,
    })
}

/// The planned matches under one rule set: the bot in the first and in the last seat with
/// `seeds` seeds each, then (with two seats or more) against `builtin:silent`.
fn planned_cases(rules: &str, n: usize, seeds: u64, first: u64) -> Vec<Case> {
    let mut cases = Vec::new();
    let positions: Vec<usize> = if n > 1 { vec![0, n - 1] } else { vec![0] };
    for &seat in &positions {
        for k in 0..seeds {
            cases.push(Case {
                rules: rules.to_string(),
                seat,
                seed: first.wrapping_add(k * 7 + seat as u64),
                name: if seat == 0 { "first seat" } else { "last seat" }.to_string(),
                silent: None,
            });
        }
    }
    if n > 1 {
        cases.push(Case {
            rules: rules.to_string(),
            seat: 0,
            seed: first.wrapping_add(999),
            name: "an opponent that times out".into(),
            silent: Some(1),
        });
    }
    cases
}

/// What every match of one check shares.
struct Ctx<'a> {
    args: &'a CheckOptions,
    driver: &'static dyn GameDriver,
    runtime: &'a tokio::runtime::Runtime,
    against: &'a str,
    options: &'a BTreeMap<String, String>,
    sandbox: &'a kakehiki_agent::SandboxConfig,
    n: usize,
    several: bool,
    /// When the check's time limit runs out.
    deadline: Option<Instant>,
}

impl Ctx<'_> {
    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Why the check stopped in `case`.
    fn out_of_time(&self, case: &Case) -> String {
        format!(
            "the check's time limit of {} s ran out in the match of rules {}, seed {}, your bot in seat {} of {} ({}): your bot answers too slowly for the check to finish; answer well within the game's limits",
            self.args.time_limit.unwrap_or_default().as_secs(),
            case.rules,
            case.seed,
            case.seat,
            self.n,
            case.name
        )
    }

    /// The match of `spec`, or `None` when the check's time limit ran out first.
    fn run_match(&self, spec: &MatchSpec) -> Result<Option<MatchRecord>, CheckError> {
        let rules = spec.rules.as_deref().unwrap_or_default();
        // Without a limit, a timer that never fires (tokio's `timeout` takes `Duration::MAX`
        // as the far future); the timer is made inside the runtime, whose clock it needs.
        let left = self.deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        let timed = async { tokio::time::timeout(left, self.driver.play(spec)).await };
        let Ok(played) = self.runtime.block_on(timed) else {
            return Ok(None);
        };
        played.map(Some).map_err(|e| {
            // An option one of the rule sets refuses: say how to check the others.
            let hint = match e {
                RefereeError::UnknownOption { .. } | RefereeError::BadOption { .. }
                    if self.several =>
                {
                    " (--rules checks one rule set)"
                }
                _ => "",
            };
            CheckError::Match {
                game: self.args.game.clone(),
                rules: rules.to_string(),
                hint,
                source: Box::new(e),
            }
        })
    }

    /// Play one case and read what it says about the bot (`None`: the time limit ran out).
    fn play(&self, case: &Case) -> Result<Option<(CheckedMatch, Played)>, CheckError> {
        let (seat, seed, n) = (case.seat, case.seed, self.n);
        let seats: Vec<SeatSpec> = (0..n)
            .map(|i| {
                if i == seat {
                    self.args.seat.clone()
                } else if case.silent == Some(i) {
                    SeatSpec::Builtin(SILENT_BOT.into())
                } else {
                    SeatSpec::Builtin(self.against.to_string())
                }
            })
            .collect();
        let mut spec = MatchSpec::new(&self.args.game, seed, seats);
        spec.set_sandbox(self.sandbox.clone());
        if let Some(dir) = spec.sandbox.jail.seat_dirs.remove(&0) {
            spec.sandbox.jail.seat_dirs.insert(seat, dir);
        }
        if let Some(dir) = &self.sandbox.keep_seat_files {
            let sub = if self.several {
                format!("{}-seed-{seed}", case.rules)
            } else {
                format!("seed-{seed}")
            };
            spec.sandbox.keep_seat_files = Some(dir.join(sub));
        }
        spec.rules = Some(case.rules.clone());
        spec.options = self.options.clone();
        spec.clock.stop_after_identical(IDENTICAL_ERRORS);
        spec.clock.stop_when_waiting(WAITING_GIVEN);
        if let Some(progress) = self.args.progress {
            progress(&format!(
                "check: {} rules {} seed {seed}, your bot in seat {seat} of {n} ({})",
                self.args.game, case.rules, case.name
            ));
        }
        let Some(record) = self.run_match(&spec)? else {
            return Ok(None);
        };
        let seats = seat_record(&record.replay)?;
        let report_seat = record.report.seats.get(seat);
        // A reply the contest server takes the same way is no fault: a warning.
        let (errors, tolerated): (Vec<SeatError>, Vec<SeatError>) = report_seat
            .map(|s| s.errors.clone())
            .unwrap_or_default()
            .into_iter()
            .partition(|e| e.kind.is_fault());
        let mut warnings = warnings_of(&seats, seat);
        warnings.extend(error_lines(&tolerated).into_iter().map(|line| {
            format!(
                "{line} (not an error: the contest server does the same; check your bot's logic)"
            )
        }));
        let field = |key: &str| {
            report_seat
                .and_then(|s| s.extra.get(key))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let end = seats.end_of(seat);
        let exit = field(EXIT_KEY).or_else(|| end.map(|e| e.exit.clone()));
        let stderr = field(STDERR_KEY)
            .or_else(|| end.map(|e| e.stderr.clone()))
            .unwrap_or_default();
        let stopped_early = spec.clock.stopped(seat);
        let stderr_began = match (errors.is_empty() || stopped_early, end) {
            (false, Some(end)) if end.crashed() => seats.stderr_began(seat),
            _ => None,
        };
        let checked = CheckedMatch {
            rules: case.rules.clone(),
            seed,
            seat,
            seats: n,
            case: case.name.clone(),
            as_seat: report_seat.map(|s| s.in_game_terms()).unwrap_or_default(),
            warnings,
            stderr_tail: if errors.is_empty() {
                String::new()
            } else {
                last_lines(&stderr, TAIL_LINES)
            },
            stderr_began,
            exit,
            errors,
            stopped_early,
        };
        let played = Played {
            rules: case.rules.clone(),
            seat,
            record: seats,
        };
        Ok(Some((checked, played)))
    }

    /// A seed from `*next` under which, with the built-in `bot` in every seat, seat 0 is asked
    /// one of `wanted` (a game's chance, such as the roles dealt, follows from the seed).
    fn probe(
        &self,
        rules: &str,
        bot: &str,
        wanted: &[String],
        next: &mut u64,
    ) -> Result<Option<u64>, CheckError> {
        let start = Instant::now();
        for _ in 0..PROBE_TRIES {
            if start.elapsed() > PROBE_TIME || self.past_deadline() {
                break;
            }
            let seed = *next;
            *next = next.wrapping_add(1);
            let mut spec = MatchSpec::new(
                &self.args.game,
                seed,
                vec![SeatSpec::Builtin(bot.to_string()); self.n],
            );
            spec.rules = Some(rules.to_string());
            spec.options = self.options.clone();
            let Some(record) = self.run_match(&spec)? else {
                return Ok(None);
            };
            let seats = seat_record(&record.replay)?;
            if seats
                .of_seat(0)
                .any(|e| e.limit_ms.is_some() && wanted.contains(&e.kind))
            {
                return Ok(Some(seed));
            }
        }
        Ok(None)
    }
}

/// The seat record of a match's replay.
fn seat_record(replay: &ReplayLog) -> Result<SeatRecord, CheckError> {
    let parsed =
        ReplayLog::parse(&replay.to_text()).map_err(|e| CheckError::Replay("replay", e))?;
    SeatRecord::of(&parsed).map_err(|e| CheckError::Replay("seat record", e))
}

/// The kinds of request (those that expect a reply) the game asked any seat that the checked
/// seat was never asked, in the order first asked, each with the rule set it was first asked
/// under.
fn not_met(played: &[Played]) -> Vec<(String, String)> {
    let met = |kind: &str| {
        played.iter().any(|q| {
            q.record
                .of_seat(q.seat)
                .any(|x| x.limit_ms.is_some() && x.kind == kind)
        })
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for p in played {
        for e in p.record.exchanges.iter().filter(|e| e.limit_ms.is_some()) {
            if !out.iter().any(|(_, k)| *k == e.kind) && !met(&e.kind) {
                out.push((p.rules.clone(), e.kind.clone()));
            }
        }
    }
    out
}

/// Every kind of request the game asked any seat, in the order first asked, with the checked
/// seat's replies to it.
fn coverage_of(played: &[Played]) -> Vec<Coverage> {
    let mut out: Vec<Coverage> = Vec::new();
    for p in played {
        for e in p.record.exchanges.iter().filter(|e| e.limit_ms.is_some()) {
            let i = match out.iter().position(|c| c.kind == e.kind) {
                Some(i) => i,
                None => {
                    out.push(Coverage {
                        kind: e.kind.clone(),
                        replies: 0,
                    });
                    out.len() - 1
                }
            };
            if e.seat == p.seat && e.outcome == ExchangeOutcome::Reply {
                out[i].replies += 1;
            }
        }
    }
    out
}

/// One request to the checked bot that it answered or let time out.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    rules: String,
    kind: String,
    ms: f64,
    limit_ms: Option<f64>,
    timed_out: bool,
}

/// The checked seat's reply times from its seat record: every request that expects a reply
/// and got one in time or none (a timeout counts at its limit). Crashes and the like are not
/// times; messages that expect no reply neither.
fn samples_of(record: &SeatRecord, seat: usize, rules: &str) -> Vec<Sample> {
    record
        .of_seat(seat)
        .filter_map(|e| {
            let limit = e.limit_ms?;
            let timed_out = match e.outcome {
                ExchangeOutcome::Reply => false,
                ExchangeOutcome::Timeout => true,
                _ => return None,
            };
            let us = match e.time_us {
                Some(us) => us,
                None if timed_out => limit * 1000,
                None => return None,
            };
            Some(Sample {
                rules: rules.to_string(),
                kind: e.kind.clone(),
                ms: us as f64 / 1000.0,
                limit_ms: Some(limit as f64),
                timed_out,
            })
        })
        .collect()
}

/// Median and slowest per rule set and kind, in the order first seen. A kind whose requests
/// all timed out stays, its times at the limit.
fn kind_times(samples: &[Sample]) -> Vec<KindTimes> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for s in samples {
        let key = (s.rules.as_str(), s.kind.as_str());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .map(|(rules, kind)| {
            let mut these: Vec<&Sample> = samples
                .iter()
                .filter(|s| s.rules == rules && s.kind == kind)
                .collect();
            let limit_ms = these.iter().find_map(|s| s.limit_ms);
            these.sort_by(|a, b| a.ms.total_cmp(&b.ms).then(a.timed_out.cmp(&b.timed_out)));
            let ms: Vec<f64> = these.iter().map(|s| s.ms).collect();
            let median = if ms.len() % 2 == 1 {
                ms[ms.len() / 2]
            } else {
                (ms[ms.len() / 2 - 1] + ms[ms.len() / 2]) / 2.0
            };
            let timeouts = these.iter().filter(|s| s.timed_out).count();
            KindTimes {
                rules: rules.to_string(),
                kind: kind.to_string(),
                replies: these.len() - timeouts,
                timeouts,
                median_ms: median,
                slowest_ms: ms.last().copied().unwrap_or(0.0),
                slowest_timed_out: these.last().is_some_and(|s| s.timed_out),
                limit_ms,
            }
        })
        .collect()
}

/// Replies in time that took over half their limit, the slowest per rule set and kind.
fn slow_warnings(samples: &[Sample], several: bool) -> Vec<String> {
    let mut worst: Vec<&Sample> = Vec::new();
    for s in samples.iter().filter(|s| !s.timed_out) {
        let Some(limit) = s.limit_ms.filter(|l| *l > 0.0) else {
            continue;
        };
        if s.ms <= 0.5 * limit {
            continue;
        }
        let ratio = |x: &Sample| x.ms / x.limit_ms.unwrap_or(f64::INFINITY);
        match worst
            .iter_mut()
            .find(|w| w.rules == s.rules && w.kind == s.kind)
        {
            Some(w) if ratio(w) < ratio(s) => *w = s,
            Some(_) => {}
            None => worst.push(s),
        }
    }
    worst
        .into_iter()
        .map(|s| {
            let limit = s.limit_ms.unwrap_or_default();
            let rules = if several {
                format!(" under rules {}", s.rules)
            } else {
                String::new()
            };
            format!(
                "your slowest {} reply{rules} took {:.0} ms, {:.0}% of its {:.0} ms limit: a slower machine or a busier contest server may time it out",
                s.kind,
                s.ms,
                100.0 * s.ms / limit,
                limit
            )
        })
        .collect()
}

/// What the checked seat's record shows that costs it without being an error: replies taken
/// only at their deadline for want of a line terminator, output discarded between requests.
fn warnings_of(record: &SeatRecord, seat: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: String| {
        if !out.contains(&w) {
            out.push(w);
        }
    };
    for e in record.of_seat(seat) {
        let unterminated = e
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with(NO_TERMINATOR));
        let at_deadline = match (e.time_us, e.limit_ms) {
            (Some(us), Some(ms)) => us >= ms * 1000,
            _ => false,
        };
        if e.outcome == ExchangeOutcome::Reply && unterminated && at_deadline {
            let s = e.limit_ms.unwrap_or_default() as f64 / 1000.0;
            push(format!(
                "{} without a newline: the referee accepts it only at the deadline, so each one costs you {s} s; end the line with \\n and flush",
                e.kind
            ));
        }
        if !e.discarded.is_empty() {
            push(format!(
                "your bot wrote output while no reply was expected (before a {} request); the referee discarded it (`discarded` in the replay's seat lines)",
                e.kind
            ));
        }
    }
    out
}

/// The label of an error: the game's own, or its turn in reports from before labels.
fn label(e: &SeatError) -> String {
    if e.at.is_empty() {
        format!("turn {}", e.turn)
    } else {
        e.at.clone()
    }
}

/// Errors with the same kind and detail, in the order first seen: the first, and how many more
/// with the labels they span.
#[derive(Debug, PartialEq)]
struct Condensed<'a> {
    first: &'a SeatError,
    more: usize,
    last_at: String,
}

fn condense(errors: &[SeatError]) -> Vec<Condensed<'_>> {
    let mut out: Vec<Condensed> = Vec::new();
    for e in errors {
        match out
            .iter_mut()
            .find(|c| c.first.kind == e.kind && c.first.detail == e.detail)
        {
            Some(c) => {
                c.more += 1;
                c.last_at = label(e);
            }
            None => out.push(Condensed {
                first: e,
                more: 0,
                last_at: label(e),
            }),
        }
    }
    out
}

/// The words for one and for several errors of a kind.
fn nouns(kind: SeatErrorKind) -> (&'static str, &'static str) {
    match kind {
        SeatErrorKind::NotReady => ("start-up failure", "start-up failures"),
        SeatErrorKind::Timeout => ("timeout", "timeouts"),
        SeatErrorKind::Crash => ("crash", "crashes"),
        SeatErrorKind::InvalidReply => ("invalid reply", "invalid replies"),
        SeatErrorKind::IllegalAction => ("illegal action", "illegal actions"),
        SeatErrorKind::ProtocolError => ("protocol error", "protocol errors"),
        SeatErrorKind::Disconnect => ("disconnect", "disconnects"),
        SeatErrorKind::UnsolicitedOutput => ("unsolicited output", "unsolicited outputs"),
        SeatErrorKind::ResourceLimit => ("resource limit", "resource limits"),
        SeatErrorKind::ExcessConnections => ("excess connection", "excess connections"),
        SeatErrorKind::Tolerated => ("tolerated reply", "tolerated replies"),
    }
}

/// `turn 2` to `turn 235` as `turns 2–235`, `ply 3` to `ply 9` as `plies 3–9`; other labels
/// as `S1901M to F1905M`.
fn label_range(first: &str, last: &str) -> String {
    fn split(label: &str) -> Option<(&str, &str)> {
        let (word, num) = label.rsplit_once(' ')?;
        (!num.is_empty() && num.bytes().all(|b| b.is_ascii_digit())).then_some((word, num))
    }
    if first == last {
        return first.to_string();
    }
    match (split(first), split(last)) {
        (Some((w, a)), Some((v, b))) if w == v => format!("{} {a}–{b}", plural(w)),
        _ => format!("{first} to {last}"),
    }
}

/// The plural of a label's last word (`turn` → `turns`, `day 2 talk` → `day 2 talks`).
fn plural(words: &str) -> String {
    let (head, word) = match words.rsplit_once(' ') {
        Some((h, w)) => (format!("{h} "), w),
        None => (String::new(), words),
    };
    let consonant_y = word.len() > 1
        && word.ends_with('y')
        && !matches!(
            word.as_bytes()[word.len() - 2],
            b'a' | b'e' | b'i' | b'o' | b'u'
        );
    if consonant_y {
        format!("{head}{}ies", &word[..word.len() - 1])
    } else {
        format!("{head}{word}s")
    }
}

/// The text lines of a match's errors: each distinct error once, then how many more like it.
pub fn error_lines(errors: &[SeatError]) -> Vec<String> {
    let mut out = Vec::new();
    for c in condense(errors) {
        let e = c.first;
        out.push(format!("{}: {}: {}", label(e), e.kind.as_str(), e.detail));
        if c.more > 0 {
            let (one, many) = nouns(e.kind);
            out.push(format!(
                "… and {} more {} like this, {}",
                c.more,
                if c.more == 1 { one } else { many },
                label_range(&label(e), &c.last_at)
            ));
        }
    }
    out
}

/// What a contestant reads: per failed match, every error at its label (identical ones
/// condensed), the program's exit and the stderr tail; the reply times; a verdict at the end.
pub fn diagnosis(r: &CheckReport) -> String {
    let several = r.rules.len() > 1;
    let mut out = String::new();
    for m in &r.matches {
        let rules = if several {
            format!("rules {}, ", m.rules)
        } else {
            String::new()
        };
        let as_seat = if m.as_seat.is_empty() {
            String::new()
        } else {
            format!(" as {}", terminal_line(&m.as_seat))
        };
        if m.errors.is_empty() {
            out.push_str(&format!(
                "ok    {rules}seed {}, seat {} of {} ({}){as_seat}: no errors\n",
                m.seed, m.seat, m.seats, m.case
            ));
            continue;
        }
        out.push_str(&format!(
            "FAIL  {rules}seed {}, seat {} of {} ({}){as_seat}: {} error{}\n",
            m.seed,
            m.seat,
            m.seats,
            m.case,
            m.errors.len(),
            if m.errors.len() == 1 { "" } else { "s" }
        ));
        // What the bot wrote (error details quote it, its stderr) is escaped for the terminal.
        for line in error_lines(&m.errors) {
            out.push_str(&format!("      {}\n", terminal_line(&line)));
        }
        if m.stopped_early {
            out.push_str(&format!(
                "      check stopped your bot here after {IDENTICAL_ERRORS} identical errors (the rest of the match would repeat them) and went on to the next match\n"
            ));
        } else if let Some(exit) = &m.exit {
            // Where a crashed bot's stderr began, in the game's own terms.
            let began = match &m.stderr_began {
                Some(b) => format!("; {b}"),
                None => String::new(),
            };
            out.push_str(&format!(
                "      your bot's program: {}\n",
                terminal_line(&format!("{exit}{began}"))
            ));
        }
        if !m.stderr_tail.trim().is_empty() {
            out.push_str("      your bot's stderr (last lines):\n");
            for line in m.stderr_tail.lines() {
                out.push_str(&format!("      | {}\n", terminal_text(line)));
            }
        }
    }
    if !r.timings.is_empty() {
        out.push_str("reply times (median / slowest / limit):\n");
        let name = |t: &KindTimes| {
            if several {
                format!("{} ({})", t.kind, t.rules)
            } else {
                t.kind.clone()
            }
        };
        let width = r.timings.iter().map(|t| name(t).chars().count()).max();
        let width = width.unwrap_or(0).max(12);
        for t in &r.timings {
            let kind = name(t);
            let median_out = 2 * t.timeouts > t.replies + t.timeouts;
            let mut count = format!(
                "{} repl{}",
                t.replies,
                if t.replies == 1 { "y" } else { "ies" }
            );
            if t.timeouts > 0 {
                count.push_str(&format!(
                    ", {} timeout{}",
                    t.timeouts,
                    if t.timeouts == 1 { "" } else { "s" }
                ));
            }
            out.push_str(&format!(
                "      {:<width$} {:>9} / {:>9} / {:>9}  ({count})\n",
                kind,
                fmt_time(t.median_ms, median_out),
                fmt_time(t.slowest_ms, t.slowest_timed_out),
                t.limit_ms.map(fmt_ms).unwrap_or_else(|| "-".into()),
            ));
        }
    }
    if !r.coverage.is_empty() {
        let met: Vec<String> = r
            .coverage
            .iter()
            .map(|c| {
                if c.replies > 0 {
                    format!("{} {}", c.kind, c.replies)
                } else {
                    format!("{} never", c.kind)
                }
            })
            .collect();
        out.push_str(&format!("requests met (replies): {}\n", met.join(", ")));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    for s in &r.skipped {
        out.push_str(&format!("SKIP  {s}\n"));
    }
    if let Some(stopped) = &r.stopped {
        out.push_str(&format!("STOP  {stopped}\n"));
        out.push_str("failed: the check did not finish in its time\n");
    } else if r.passed {
        out.push_str("passed: your bot played every match without an error\n");
    } else {
        out.push_str(
            "failed: fix the errors above (docs/protocols/ describes each game's protocol)\n",
        );
    }
    out
}

/// A time, or `>LIMIT` for one that ran out.
fn fmt_time(ms: f64, timed_out: bool) -> String {
    if timed_out {
        format!(">{}", fmt_ms(ms))
    } else {
        fmt_ms(ms)
    }
}

fn fmt_ms(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kakehiki_core::exchange::{SeatEnd, SeatExchange, SEAT_END_EVENT};

    /// A replay of two seats with the given seat lines, read back as a seat record.
    fn record(lines: &[SeatExchange], ends: &[SeatEnd]) -> SeatRecord {
        let mut log = ReplayLog::new();
        log.push(
            &serde_json::json!({"event":"header","format":"g@2","engine":"0","game":"g",
            "rules":"r","seed":1,"seats":["cmd:x","builtin:random"],"params":null}),
        );
        log.push(&serde_json::json!({"event":"board","anything":"the game's own"}));
        for l in lines {
            log.push(l);
        }
        for e in ends {
            log.push(e);
        }
        seat_record(&log).unwrap()
    }

    fn ex(seat: usize, at: &str, kind: &str, outcome: ExchangeOutcome, us: u64) -> SeatExchange {
        let mut e = SeatExchange::new(seat, at, kind, outcome);
        e.limit_ms = Some(50);
        e.time_us = Some(us);
        if outcome == ExchangeOutcome::Reply {
            e.set_raw(b"1 2");
        }
        e
    }

    fn err(at: &str, kind: SeatErrorKind, detail: &str) -> SeatError {
        SeatError {
            turn: 0,
            at: at.into(),
            kind,
            detail: detail.into(),
        }
    }

    #[test]
    fn times_keep_a_kind_whose_replies_all_timed_out() {
        use ExchangeOutcome::*;
        let mut told = SeatExchange::new(0, "turn 9", "result", Sent);
        told.limit_ms = None;
        let rec = record(
            &[
                ex(0, "start", "ready", Reply, 1200),
                ex(1, "start", "ready", Reply, 0),
                ex(0, "turn 1", "move", Timeout, 50_000),
                ex(0, "turn 2", "move", Timeout, 50_000),
                ex(0, "turn 3", "move", Crash, 3),
                told,
            ],
            &[],
        );
        let samples = samples_of(&rec, 0, "r");
        assert_eq!(
            samples.len(),
            3,
            "replies and timeouts, not the crash: {samples:?}"
        );
        let t = kind_times(&samples);
        assert_eq!(
            t.iter().map(|k| k.kind.as_str()).collect::<Vec<_>>(),
            ["ready", "move"]
        );
        let mv = &t[1];
        assert_eq!((mv.replies, mv.timeouts), (0, 2));
        assert!(mv.slowest_timed_out);
        assert_eq!((mv.slowest_ms, mv.limit_ms), (50.0, Some(50.0)));
        let report = CheckReport {
            game: "g".into(),
            bot: "cmd:x".into(),
            rules: vec!["r".into()],
            passed: false,
            matches: vec![],
            timings: t,
            coverage: vec![],
            warnings: vec![],
            stopped: None,
            skipped: Vec::new(),
        };
        let text = diagnosis(&report);
        assert!(
            text.contains(
                "move            >50 ms /    >50 ms /     50 ms  (0 replies, 2 timeouts)"
            ),
            "{text}"
        );
        assert!(
            text.contains("ready           1.2 ms /    1.2 ms /     50 ms  (1 reply)"),
            "{text}"
        );
    }

    #[test]
    fn identical_errors_are_condensed_with_their_labels() {
        let mut errors = vec![err("turn 1", SeatErrorKind::InvalidReply, "bad \"x\"")];
        for t in 2..=235 {
            errors.push(err(
                &format!("turn {t}"),
                SeatErrorKind::Timeout,
                "no reply to move within 50 ms",
            ));
        }
        errors.push(err("turn 236", SeatErrorKind::Crash, "crash (exit code 1)"));
        let lines = error_lines(&errors);
        assert_eq!(
            lines,
            [
                "turn 1: invalid_reply: bad \"x\"",
                "turn 2: timeout: no reply to move within 50 ms",
                "… and 233 more timeouts like this, turns 2–235",
                "turn 236: crash: crash (exit code 1)",
            ]
        );
        // Other labels, one more, and errors from before labels.
        let two = [
            err("S1901M", SeatErrorKind::Timeout, "t"),
            err("F1901M", SeatErrorKind::Timeout, "t"),
        ];
        assert_eq!(
            error_lines(&two)[1],
            "… and 1 more timeout like this, S1901M to F1901M"
        );
        assert_eq!(label_range("ply 3", "ply 40"), "plies 3–40");
        assert_eq!(
            label_range("day 2 talk 1", "day 2 talk 9"),
            "day 2 talks 1–9"
        );
        assert_eq!(
            label_range("turn 3 (day)", "turn 4 (night)"),
            "turn 3 (day) to turn 4 (night)"
        );
        let old = SeatError {
            turn: 4,
            at: String::new(),
            kind: SeatErrorKind::Timeout,
            detail: "d".into(),
        };
        assert_eq!(error_lines(&[old]), ["turn 4: timeout: d"]);
    }

    #[test]
    fn coverage_counts_kinds_asked_of_any_seat() {
        use ExchangeOutcome::*;
        let a = record(
            &[
                ex(0, "day 1", "TALK", Reply, 10),
                ex(1, "day 1", "TALK", Reply, 0),
                ex(1, "night 1", "DIVINE", Reply, 0),
            ],
            &[],
        );
        let b = record(
            &[
                ex(1, "day 1", "TALK", Reply, 0),
                ex(0, "night 1", "GUARD", Reply, 0),
                ex(0, "night 1", "DIVINE", Reply, 0),
            ],
            &[],
        );
        let played = vec![
            Played {
                rules: "r".into(),
                seat: 0,
                record: a,
            },
            Played {
                rules: "s".into(),
                seat: 1,
                record: b,
            },
        ];
        let cov = coverage_of(&played);
        assert_eq!(
            cov.iter()
                .map(|c| (c.kind.as_str(), c.replies))
                .collect::<Vec<_>>(),
            [("TALK", 2), ("DIVINE", 0), ("GUARD", 0)]
        );
        // Asked of seat 0 under rules s, where the bot played seat 1.
        assert_eq!(
            not_met(&played),
            [
                ("r".to_string(), "DIVINE".to_string()),
                ("s".to_string(), "GUARD".to_string())
            ]
        );
    }

    #[test]
    fn unterminated_replies_and_discarded_output_are_warned() {
        use ExchangeOutcome::*;
        let mut late = ex(0, "start", "READY", Reply, 300_000);
        late.limit_ms = Some(300);
        late.detail = Some("no line terminator: taken at the deadline".into());
        let mut chatty = ex(0, "turn 2", "turn", Reply, 10);
        chatty.discarded = vec!["debug: hi".into()];
        // Taken when the output closed, before the deadline: it cost no time.
        let mut closed = ex(0, "turn 3", "turn", Reply, 10);
        closed.detail = Some("no line terminator: the output closed after it".into());
        let rec = record(&[late, chatty.clone(), chatty, closed], &[]);
        let w = warnings_of(&rec, 0);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("READY without a newline: the referee accepts it only at the deadline, so each one costs you 0.3 s"), "{w:?}");
        assert!(w[1].contains("before a turn request"), "{w:?}");
        assert!(warnings_of(&rec, 1).is_empty());
    }

    #[test]
    fn a_failed_match_shows_the_exit_and_stderr_at_the_labels() {
        let end = SeatEnd {
            event: SEAT_END_EVENT.into(),
            seat: 0,
            exit: "exit code 3".into(),
            exit_code: Some(3),
            signal: None,
            stderr: "a\nTraceback\nboom".into(),
        };
        assert!(end.crashed());
        let mut crash = ex(0, "ply 2", "move", ExchangeOutcome::Crash, 10);
        crash.stderr = Some("\na\nTraceback\nboom".into());
        let quiet = ex(0, "ply 1", "move", ExchangeOutcome::Reply, 10);
        let rec = record(&[quiet, crash], &[end]);
        assert_eq!(rec.end_of(0).unwrap().exit_code, Some(3));
        let report = CheckReport {
            game: "g".into(),
            bot: "cmd:x".into(),
            rules: vec!["gpw".into(), "seed".into()],
            passed: false,
            matches: vec![CheckedMatch {
                rules: "seed".into(),
                seed: 1000,
                seat: 1,
                seats: 2,
                case: "last seat".into(),
                as_seat: String::new(),
                errors: vec![err(
                    "ply 2",
                    SeatErrorKind::Crash,
                    "crash (output closed, exit code 3)",
                )],
                warnings: vec![],
                exit: Some("exit code 3".into()),
                stderr_tail: last_lines("a\nTraceback\nboom\n", 2),
                stderr_began: rec.stderr_began(0),
                stopped_early: false,
            }],
            timings: vec![],
            coverage: vec![],
            warnings: vec![],
            stopped: None,
            skipped: Vec::new(),
        };
        let text = diagnosis(&report);
        assert!(text.contains("FAIL  rules seed, seed 1000, seat 1 of 2 (last seat): 1 error\n      ply 2: crash: crash (output closed, exit code 3)\n      your bot's program: exit code 3; its stderr began at ply 2: a\n      your bot's stderr (last lines):\n      | Traceback\n      | boom\n"), "{text}");
        // A bot's terminal commands and forged lines, in its stderr and in what it sent.
        let mut hostile = report;
        hostile.matches[0].stderr_tail = "\x1b]0;title\x07\r\x1b[Kpassed".into();
        hostile.matches[0].errors[0].detail = "invalid reply \"x\x1b[2J\npassed\"".into();
        hostile.matches[0].stderr_began = Some(StderrBegan {
            at: "ply 2".into(),
            line: "\x1b[2Jpassed".into(),
        });
        let text = diagnosis(&hostile);
        assert!(
            text.contains("exit code 3; its stderr began at ply 2: \\x1b[2Jpassed\n"),
            "{text}"
        );
        assert!(!text.contains('\x1b') && !text.contains('\x07') && !text.contains('\r'));
        assert!(
            text.contains("      | \\x1b]0;title\\x07\\r\\x1b[Kpassed\n"),
            "{text}"
        );
        assert!(
            text.contains("invalid reply \"x\\x1b[2J\\npassed\""),
            "{text}"
        );
    }

    #[test]
    fn every_rule_set_is_planned_with_a_silent_opponent() {
        let cases: Vec<Case> = ["gpw", "seed"]
            .iter()
            .flat_map(|r| planned_cases(r, 2, 1, 1000))
            .collect();
        let got: Vec<(&str, usize, Option<usize>)> = cases
            .iter()
            .map(|c| (c.rules.as_str(), c.seat, c.silent))
            .collect();
        assert_eq!(
            got,
            [
                ("gpw", 0, None),
                ("gpw", 1, None),
                ("gpw", 0, Some(1)),
                ("seed", 0, None),
                ("seed", 1, None),
                ("seed", 0, Some(1)),
            ]
        );
        let seeds: Vec<u64> = planned_cases("gpw", 2, 2, 40)
            .iter()
            .map(|c| c.seed)
            .collect();
        assert_eq!(
            seeds,
            [40, 47, 41, 48, 1039],
            "every seed follows from the first"
        );
        assert_eq!(
            planned_cases("solo", 1, 2, 1000).len(),
            2,
            "no opponent to silence"
        );
    }
}
