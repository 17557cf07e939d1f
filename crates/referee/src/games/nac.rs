//! The driver of `nac` and `religion-war`: one loop, three kinds of seats.
//!
//! The loop (§1.3, §3 of the spec) is written once against [`SeatSource`]: a built-in bot, a live
//! process, or a seat replayed from a recording. Picks are always re-derived from the reply text by
//! the same parser, so re-running a replay checks the parser as well as the engine.

use std::time::Duration;

use base64::Engine as _;
use kakehiki_agent::{BotProcess, ReadOutcome, SandboxConfig};
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{GameType, MatchReport, Outcome, SeatError, SeatErrorKind, SeatSpec};
use kakehiki_nac::bots::{make_bot, NacBot, BOT_NAMES};
use kakehiki_nac::reply::{is_blank, is_ready, parse_reply, Issue, IssueCode};
use kakehiki_nac::{Params, State, Variant, NUM_SEATS};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};

/// Replay format name.
pub const FORMAT: &str = "kakehiki/nac-replay@1";

/// The driver for one variant.
pub struct NacDriver {
    variant: Variant,
    game_type: &'static GameType,
}

/// `nac`.
pub static NAC: NacDriver = NacDriver {
    variant: Variant::Nac,
    game_type: &kakehiki_nac::NAC_TYPE,
};
/// `religion-war`.
pub static RELIGION_WAR: NacDriver = NacDriver {
    variant: Variant::ReligionWar,
    game_type: &kakehiki_nac::RELIGION_WAR_TYPE,
};

/// Time limits (§3.1), configurable as options `ready_ms`, `turn_ms`, `end_grace_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub ready_ms: u64,
    pub turn_ms: u64,
    pub end_grace_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ready_ms: 5000,
            turn_ms: 1000,
            end_grace_ms: 1000,
        }
    }
}

const OPTION_KEYS: &[&str] = &["ready_ms", "turn_ms", "end_grace_ms"];

// ---------------------------------------------------------------------------------------------
// Replay events
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct HeaderParams {
    variant: Params,
    /// The MT19937 seed: the match seed reduced modulo 2^32 (JavaScript ToUint32).
    mt_seed: u32,
    limits: Limits,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct WeightsEvent {
    event: String,
    weights: Vec<u8>,
}

/// Codes of READY problems: `spawn_failed`, `timeout`, `bad_ready`, `crash`, `no_newline`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ReadyIssue {
    code: String,
    detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ReadyEvent {
    event: String,
    seat: usize,
    ok: bool,
    time_us: u64,
    errors: Vec<ReadyIssue>,
}

/// Status of one seat's move (§6): `ok`, `timeout`, `crash`, `dead`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum MoveStatus {
    Ok,
    Timeout,
    Crash,
    Dead,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct MoveEvent {
    seat: usize,
    status: MoveStatus,
    /// The reply as received up to the LF, if valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    raw: Option<String>,
    /// The reply as received, base64, if not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    raw_b64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    time_us: Option<u64>,
    picks: Vec<u8>,
    errors: Vec<Issue>,
    /// Why the seat died in this move (exit status, write error, output cap).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    detail: Option<String>,
    /// Non-blank lines received outside the seat's window and discarded before this turn.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    discarded: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct TurnEvent {
    event: String,
    turn: u32,
    label: String,
    moves: Vec<MoveEvent>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct DeathEvent {
    event: String,
    seat: usize,
    turn: u32,
    reason: String,
    detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ScoringEvent {
    event: String,
    after_turn: u32,
    score24: [i64; NUM_SEATS],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StderrEvent {
    event: String,
    seat: usize,
    text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StreamDigest {
    bytes: u64,
    sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ResultEvent {
    event: String,
    total24: [i64; NUM_SEATS],
    scores: Vec<String>,
    winner: Option<usize>,
    /// Seats sharing the top total when the game is a draw.
    tied: Vec<usize>,
    /// What each seat was sent, for checking: total bytes and SHA-256.
    streams: Vec<StreamDigest>,
}

// ---------------------------------------------------------------------------------------------
// Seats
// ---------------------------------------------------------------------------------------------

/// What one seat answered in one turn, before parsing.
#[derive(Debug, Clone)]
enum Reply {
    /// A complete line (its LF removed).
    Line {
        raw: Vec<u8>,
        truncated: bool,
        time_us: u64,
    },
    /// The deadline passed with unterminated text: it is the reply (§3.3).
    NoNewline { raw: Vec<u8>, time_us: u64 },
    /// No reply in time: the seat dies.
    Timeout { time_us: u64 },
    /// The process exited, closed its output, or could not be written to: the seat dies.
    Crash {
        detail: String,
        time_us: u64,
        output_limit: bool,
    },
}

/// How a failed write of a turn's block begins its detail (the block never reached the bot, so
/// its bytes are not counted in the seat's stream).
const WRITE_FAILED: &str = "write to stdin failed";

impl Reply {
    /// Whether the seat's block could not be written (its bytes were never sent).
    fn write_failed(&self) -> bool {
        matches!(self, Reply::Crash { detail, .. } if detail.starts_with(WRITE_FAILED))
    }

    /// The reply of a process seat that is not running (it failed to start, or was stopped).
    fn not_running() -> Reply {
        Reply::Crash {
            detail: "process not running".into(),
            time_us: 0,
            output_limit: false,
        }
    }

    fn time_us(&self) -> u64 {
        match self {
            Reply::Line { time_us, .. }
            | Reply::NoNewline { time_us, .. }
            | Reply::Timeout { time_us }
            | Reply::Crash { time_us, .. } => *time_us,
        }
    }
}

/// How a seat's turn started.
enum Sent {
    /// The seat answered (or failed) at once.
    Answered(Reply),
    /// A process was sent its block (the write began at `write_start` and ended at `written`);
    /// its reply is due by `deadline`.
    Waiting {
        write_start: Instant,
        written: Instant,
        deadline: Instant,
    },
}

#[derive(Clone)]
struct ReadyResult {
    ok: bool,
    time_us: u64,
    errors: Vec<ReadyIssue>,
}

impl ReadyResult {
    /// The seat said READY (`errors` records how, if not cleanly).
    fn ready(time_us: u64, errors: Vec<ReadyIssue>) -> Self {
        ReadyResult {
            ok: true,
            time_us,
            errors,
        }
    }

    /// The seat did not become ready: one problem, by its code.
    fn failed(time_us: u64, code: &str, detail: String) -> Self {
        ReadyResult {
            ok: false,
            time_us,
            errors: vec![ReadyIssue {
                code: code.into(),
                detail,
            }],
        }
    }
}

enum Seat {
    Builtin(Box<dyn NacBot>),
    Process {
        proc: Option<Box<BotProcess>>,
        spawn_error: Option<String>,
    },
    Replayed {
        ready: ReadyResult,
        moves: std::vec::IntoIter<MoveEvent>,
        stderr: Option<String>,
    },
}

fn us_since(start: Instant, at: Instant) -> u64 {
    at.saturating_duration_since(start).as_micros() as u64
}

impl Seat {
    async fn ready(&mut self, limits: &Limits, started: Instant) -> ReadyResult {
        match self {
            Seat::Builtin(_) => ReadyResult::ready(0, vec![]),
            Seat::Replayed { ready, .. } => ready.clone(),
            Seat::Process { proc, spawn_error } => {
                let Some(p) = proc.as_mut() else {
                    let detail = spawn_error.clone().unwrap_or_else(|| "cannot start".into());
                    return ReadyResult::failed(0, "spawn_failed", detail);
                };
                let deadline = started + Duration::from_millis(limits.ready_ms);
                loop {
                    return match p.read_line(deadline).await {
                        ReadOutcome::Line(l) if is_blank(&l.bytes) => continue,
                        ReadOutcome::Line(l) if is_ready(&l.bytes) => {
                            ReadyResult::ready(us_since(started, l.at), vec![])
                        }
                        ReadOutcome::Line(l) => ReadyResult::failed(
                            us_since(started, l.at),
                            "bad_ready",
                            format!(
                                "expected READY, got {:?}",
                                String::from_utf8_lossy(&l.bytes)
                                    .chars()
                                    .take(200)
                                    .collect::<String>()
                            ),
                        ),
                        ReadOutcome::Timeout { partial } if is_ready(&partial) => {
                            p.take_partial();
                            ReadyResult::ready(
                                limits.ready_ms * 1000,
                                vec![ReadyIssue {
                                    code: "no_newline".into(),
                                    detail: "READY without a newline, accepted at the deadline"
                                        .into(),
                                }],
                            )
                        }
                        ReadOutcome::Timeout { .. } => ReadyResult::failed(
                            limits.ready_ms * 1000,
                            "timeout",
                            format!("no READY within {} ms", limits.ready_ms),
                        ),
                        ReadOutcome::Closed { exit, .. } => ReadyResult::failed(
                            us_since(started, Instant::now()),
                            "crash",
                            format!(
                                "output closed before READY ({})",
                                exit.map(|e| e.to_string())
                                    .unwrap_or_else(|| "still running".into())
                            ),
                        ),
                        ReadOutcome::OutputLimit { bytes } => ReadyResult::failed(
                            us_since(started, Instant::now()),
                            "crash",
                            format!("output cap exceeded ({bytes} bytes) before READY"),
                        ),
                    };
                }
            }
        }
    }

    /// Lines the seat wrote outside its window, discarded before its next block: the first few
    /// (each cut to 200 characters) and, if there were more, a note with their number.
    fn take_discarded(&mut self) -> Vec<String> {
        const KEEP: usize = 10;
        match self {
            Seat::Process { proc: Some(p), .. } => {
                let (lines, dropped) = p.take_unsolicited();
                let partial = p.take_partial();
                let texts: Vec<Vec<u8>> = lines
                    .into_iter()
                    .map(|l| l.bytes)
                    .chain(std::iter::once(partial))
                    .filter(|b| !is_blank(b))
                    .collect();
                let more = texts.len().saturating_sub(KEEP) as u64 + dropped;
                let mut out: Vec<String> = texts
                    .iter()
                    .take(KEEP)
                    .map(|b| String::from_utf8_lossy(b).chars().take(200).collect())
                    .collect();
                if more > 0 {
                    out.push(format!("[{more} more lines discarded]"));
                }
                out
            }
            Seat::Replayed { moves, .. } => moves
                .as_slice()
                .first()
                .map(|m| m.discarded.clone())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Start the seat's turn: a built-in or replayed seat answers at once; a process is sent its
    /// block and the referee waits for it later, in [`Seat::await_reply`].
    async fn start_turn(
        &mut self,
        block: &str,
        state: &State,
        seat: usize,
        limits: &Limits,
    ) -> Sent {
        match self {
            Seat::Builtin(bot) => {
                // Let process seats be written to first: a built-in bot's thinking then overlaps
                // theirs.
                tokio::task::yield_now().await;
                let picks = bot.pick(&state.view(seat));
                let raw = picks
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                // Built-in bots are not timed: their replies are deterministic from the seed.
                Sent::Answered(Reply::Line {
                    raw: raw.into_bytes(),
                    truncated: false,
                    time_us: 0,
                })
            }
            Seat::Replayed { moves, .. } => Sent::Answered(match moves.next() {
                Some(m) => replayed_reply(&m),
                None => Reply::Crash {
                    detail: "replay has no move for this turn".into(),
                    time_us: 0,
                    output_limit: false,
                },
            }),
            Seat::Process { proc, .. } => {
                let Some(p) = proc.as_mut() else {
                    return Sent::Answered(Reply::not_running());
                };
                if let Some(bytes) = p.output_exceeded() {
                    return Sent::Answered(Reply::Crash {
                        detail: format!("output cap exceeded ({bytes} bytes)"),
                        time_us: 0,
                        output_limit: true,
                    });
                }
                let limit = Duration::from_millis(limits.turn_ms);
                let write_start = Instant::now();
                match tokio::time::timeout(limit, p.send(block.as_bytes())).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        return Sent::Answered(Reply::Crash {
                            detail: format!("{WRITE_FAILED}: {e}"),
                            time_us: 0,
                            output_limit: false,
                        })
                    }
                    Err(_) => {
                        return Sent::Answered(Reply::Timeout {
                            time_us: limits.turn_ms * 1000,
                        })
                    }
                }
                let written = Instant::now();
                Sent::Waiting {
                    write_start,
                    written,
                    deadline: write_start.max(written) + limit,
                }
            }
        }
    }

    /// Wait for a process seat's reply to the block written at `written`.
    async fn await_reply(&mut self, written: Instant, deadline: Instant, limits: &Limits) -> Reply {
        let Seat::Process { proc: Some(p), .. } = self else {
            return Reply::not_running();
        };
        match p.read_line(deadline).await {
            ReadOutcome::Line(l) => Reply::Line {
                raw: l.bytes,
                truncated: l.truncated,
                time_us: us_since(written, l.at),
            },
            ReadOutcome::Timeout { partial } if !partial.is_empty() => {
                p.take_partial();
                Reply::NoNewline {
                    raw: partial,
                    time_us: limits.turn_ms * 1000,
                }
            }
            ReadOutcome::Timeout { .. } => Reply::Timeout {
                time_us: limits.turn_ms * 1000,
            },
            // Unterminated text followed by EOF is the reply (the original took chunks as
            // they came); the exit is noticed at the next turn, if there is one.
            ReadOutcome::Closed { partial, .. } if !partial.is_empty() => Reply::NoNewline {
                raw: partial,
                time_us: us_since(written, Instant::now()),
            },
            ReadOutcome::Closed { exit, .. } => Reply::Crash {
                detail: format!(
                    "output closed before the reply ({})",
                    exit.map(|e| e.to_string())
                        .unwrap_or_else(|| "process still running".into())
                ),
                time_us: us_since(written, Instant::now()),
                output_limit: false,
            },
            ReadOutcome::OutputLimit { bytes } => Reply::Crash {
                detail: format!("output cap exceeded ({bytes} bytes)"),
                time_us: us_since(written, Instant::now()),
                output_limit: true,
            },
        }
    }

    fn kill(&mut self) {
        if let Seat::Process { proc: Some(p), .. } = self {
            p.kill();
        }
    }

    async fn finish(&mut self, grace: Duration) -> Option<String> {
        match self {
            Seat::Process { proc, .. } => {
                let p = proc.take()?;
                let (_, text) = p.finish_with_stderr(grace).await;
                Some(text)
            }
            Seat::Replayed { stderr, .. } => stderr.take(),
            Seat::Builtin(_) => None,
        }
    }
}

fn decode_raw(m: &MoveEvent) -> Vec<u8> {
    if let Some(r) = &m.raw {
        return r.clone().into_bytes();
    }
    if let Some(b) = &m.raw_b64 {
        return base64::engine::general_purpose::STANDARD
            .decode(b)
            .unwrap_or_default();
    }
    Vec::new()
}

fn replayed_reply(m: &MoveEvent) -> Reply {
    let time_us = m.time_us.unwrap_or(0);
    match m.status {
        MoveStatus::Ok => {
            let raw = decode_raw(m);
            if m.errors.iter().any(|e| e.code == IssueCode::NoNewline) {
                Reply::NoNewline { raw, time_us }
            } else {
                let truncated = m.errors.iter().any(|e| e.code == IssueCode::LineTooLong);
                Reply::Line {
                    raw,
                    truncated,
                    time_us,
                }
            }
        }
        MoveStatus::Timeout => Reply::Timeout { time_us },
        MoveStatus::Crash | MoveStatus::Dead => Reply::Crash {
            detail: m.detail.clone().unwrap_or_default(),
            time_us,
            output_limit: m
                .detail
                .as_deref()
                .is_some_and(|d| d.starts_with("output cap exceeded")),
        },
    }
}

fn raw_fields(raw: &[u8]) -> (Option<String>, Option<String>) {
    match std::str::from_utf8(raw) {
        Ok(s) => (Some(s.to_string()), None),
        Err(_) => (
            None,
            Some(base64::engine::general_purpose::STANDARD.encode(raw)),
        ),
    }
}

fn issue_detail(turn: u32, issue: &Issue) -> String {
    let mut d = format!(
        "turn {turn}: {}",
        serde_json::to_value(issue.code)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    );
    if let Some(f) = issue.field {
        d.push_str(&format!(" in field {f}"));
    }
    if let Some(t) = &issue.text {
        d.push_str(&format!(" {:?}", t.chars().take(100).collect::<String>()));
    }
    match issue.code {
        IssueCode::LenientNumber => d.push_str(&format!(", read as {}", issue.value.unwrap_or(0))),
        IssueCode::ExtraFields | IssueCode::NoNewline | IssueCode::LineTooLong => {}
        _ => d.push_str(", target 0 used"),
    }
    d
}

// ---------------------------------------------------------------------------------------------
// The loop
// ---------------------------------------------------------------------------------------------

/// Where a match's wall time went, for the referee-overhead benchmark. Not part of the replay
/// (it differs from run to run).
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// The whole match, from spawning the bots to the result.
    pub wall: Duration,
    /// Spawning the bots and waiting for every READY (process start).
    pub startup: Duration,
    /// Per turn: where its wall time went.
    pub turns: Vec<TurnProfile>,
    /// Closing stdin, waiting for exits and killing (process stop).
    pub shutdown: Duration,
    /// CPU time of the calling thread during the turns (on a current-thread runtime: all of the
    /// referee's work in the turns, reader tasks included, and none of the bots').
    pub turn_cpu: Duration,
}

/// One turn's wall time, split.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnProfile {
    /// The whole turn.
    pub wall: Duration,
    /// Waiting for bots: from the end of the first block's write to the arrival of the last
    /// reply line.
    pub waited: Duration,
    /// From the turn's start to the end of the first block's write.
    pub before: Duration,
    /// The first block's write alone (part of `before`): handing the block to the kernel, which
    /// wakes the bot.
    pub first_write: Duration,
    /// From the arrival of the last reply line to the turn's end.
    pub after: Duration,
}

fn thread_cpu() -> Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_THREAD)
        .map(|u| {
            let t = |tv: nix::sys::time::TimeVal| {
                Duration::from_secs(tv.tv_sec().max(0) as u64)
                    + Duration::from_micros(tv.tv_usec().max(0) as u64)
            };
            t(u.user_time()) + t(u.system_time())
        })
        .unwrap_or_default()
}

impl Profile {
    /// Time the referee itself spent: everything but process start and stop and waiting for
    /// replies.
    pub fn overhead(&self) -> Duration {
        let turns: Duration = self.turns.iter().map(|t| t.wall).sum();
        let waiting: Duration = self.turns.iter().map(|t| t.waited).sum();
        self.wall
            .saturating_sub(self.startup)
            .saturating_sub(self.shutdown)
            .saturating_sub(turns)
            + turns.saturating_sub(waiting)
    }

    /// Per-turn overhead divided by the number of seats, one value per turn.
    pub fn per_turn_per_seat(&self) -> Vec<Duration> {
        self.turns
            .iter()
            .map(|t| t.wall.saturating_sub(t.waited) / NUM_SEATS as u32)
            .collect()
    }
}

struct Setup {
    variant: Variant,
    seed: u64,
    limits: Limits,
    specs: Vec<String>,
}

/// Record a reply that is taken as the seat's move: its raw text, time, the picks parsed from it,
/// and the parse records after `lead` (the line-level record: cut, or unterminated).
fn accept(mv: &mut MoveEvent, raw: &[u8], time_us: u64, lead: Option<Issue>, targets: usize) {
    let parsed = parse_reply(raw, mv.picks.len(), targets);
    (mv.raw, mv.raw_b64) = raw_fields(raw);
    mv.status = MoveStatus::Ok;
    mv.time_us = Some(time_us);
    mv.picks = parsed.picks;
    mv.errors = lead.into_iter().chain(parsed.issues).collect();
}

/// Turn one seat's reply into its move record, the seat errors it implies and, if the seat dies,
/// the death's reason and detail.
fn settle(
    seat: usize,
    turn: u32,
    n: usize,
    targets: usize,
    reply: Option<Reply>,
    discarded: Vec<String>,
) -> (MoveEvent, Vec<SeatError>, Option<(String, String)>) {
    let mut errors: Vec<SeatError> = Vec::new();
    if let Some(first) = discarded.first() {
        let more = if discarded.len() > 1 {
            format!(" and {} more", discarded.len() - 1)
        } else {
            String::new()
        };
        errors.push(SeatError {
            at: String::new(),
            turn,
            kind: SeatErrorKind::UnsolicitedOutput,
            detail: format!("before turn {turn}: discarded output {first:?}{more}"),
        });
    }
    let mut mv = MoveEvent {
        seat,
        status: MoveStatus::Dead,
        raw: None,
        raw_b64: None,
        time_us: None,
        picks: vec![0; n],
        errors: Vec::new(),
        detail: None,
        discarded,
    };
    let mut death = None;
    match reply {
        None => {}
        Some(Reply::Line {
            raw,
            truncated,
            time_us,
        }) => accept(
            &mut mv,
            &raw,
            time_us,
            truncated.then(|| Issue::line(IssueCode::LineTooLong)),
            targets,
        ),
        Some(Reply::NoNewline { raw, time_us }) => accept(
            &mut mv,
            &raw,
            time_us,
            Some(Issue::line(IssueCode::NoNewline)),
            targets,
        ),
        Some(Reply::Timeout { time_us }) => {
            mv.status = MoveStatus::Timeout;
            mv.time_us = Some(time_us);
            let detail = format!(
                "turn {turn}: no reply within the limit ({} ms)",
                time_us / 1000
            );
            errors.push(SeatError {
                at: String::new(),
                turn,
                kind: SeatErrorKind::Timeout,
                detail: detail.clone(),
            });
            death = Some(("timeout".to_string(), detail));
        }
        Some(Reply::Crash {
            detail,
            time_us,
            output_limit,
        }) => {
            mv.status = MoveStatus::Crash;
            mv.time_us = Some(time_us);
            mv.detail = Some(detail.clone());
            let kind = if output_limit {
                SeatErrorKind::ResourceLimit
            } else {
                SeatErrorKind::Crash
            };
            let detail = format!("turn {turn}: {detail}");
            errors.push(SeatError {
                at: String::new(),
                turn,
                kind,
                detail: detail.clone(),
            });
            death = Some(("crash".to_string(), detail));
        }
    }
    for issue in &mv.errors {
        errors.push(SeatError {
            at: String::new(),
            turn,
            kind: SeatErrorKind::InvalidReply,
            detail: issue_detail(turn, issue),
        });
    }
    (mv, errors, death)
}

/// What one seat's turn came to.
struct SeatTurn {
    mv: MoveEvent,
    errors: Vec<SeatError>,
    death: Option<(String, String)>,
    /// For a process seat that was written to: when the write of its block began and ended, and
    /// when its reply (or its failure) came.
    span: Option<(Instant, Instant, Instant)>,
    /// Its block could not be written (it is not part of the seat's stream).
    unwritten: bool,
}

/// What a seat has been sent: byte count and SHA-256.
struct Stream {
    hasher: Sha256,
    bytes: u64,
}

/// One seat's turn: write its block, wait for the reply and parse it as soon as it comes. Seats
/// run concurrently, so a slow seat delays no other.
async fn seat_turn(
    seat: &mut Seat,
    index: usize,
    block: Option<&str>,
    state: &State,
    limits: &Limits,
) -> SeatTurn {
    let (reply, discarded, span) = match block {
        Some(block) => {
            let discarded = seat.take_discarded();
            let (reply, span) = match seat.start_turn(block, state, index, limits).await {
                Sent::Answered(reply) => (reply, None),
                Sent::Waiting {
                    write_start,
                    written,
                    deadline,
                } => {
                    let reply = seat.await_reply(written, deadline, limits).await;
                    let came = written + Duration::from_micros(reply.time_us());
                    (reply, Some((write_start, written, came)))
                }
            };
            (Some(reply), discarded, span)
        }
        None => (None, Vec::new(), None),
    };
    let unwritten = reply.as_ref().is_some_and(Reply::write_failed);
    let (mv, errors, death) = settle(
        index,
        state.turn(),
        state.picks_needed(),
        state.params().targets,
        reply,
        discarded,
    );
    SeatTurn {
        mv,
        errors,
        death,
        span,
        unwritten,
    }
}

/// A finished turn's replay events, written to the log while the bots think about the next
/// turn (or, after the last turn, before the bots are stopped).
struct TurnEvents {
    turn: TurnEvent,
    deaths: Vec<DeathEvent>,
    scoring: Option<ScoringEvent>,
}

impl TurnEvents {
    fn write(self, log: &mut ReplayLog) {
        log.push(&self.turn);
        for d in &self.deaths {
            log.push(d);
        }
        if let Some(s) = &self.scoring {
            log.push(s);
        }
    }
}

async fn run_match(
    setup: Setup,
    mut seats: [Seat; NUM_SEATS],
    started: Instant,
    mut profile: Option<&mut Profile>,
) -> MatchRecord {
    let Setup {
        variant,
        seed,
        limits,
        specs,
    } = setup;
    let params = variant.params();
    let mt_seed = seed as u32;
    let mut state = State::new(params, mt_seed);
    let mut log = ReplayLog::new();
    let mut errors: Vec<Vec<SeatError>> = vec![Vec::new(); NUM_SEATS];
    log.push(&ReplayHeader {
        event: "header".into(),
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        game: variant.name().into(),
        rules: variant.name().into(),
        seed,
        seats: specs.clone(),
        params: serde_json::to_value(HeaderParams {
            variant: params,
            mt_seed,
            limits,
        })
        .unwrap_or_default(),
    });
    log.push(&WeightsEvent {
        event: "weights".into(),
        weights: state.weights().to_vec(),
    });

    // READY, all seats at once.
    let [s0, s1, s2, s3] = &mut seats;
    let readies = tokio::join!(
        s0.ready(&limits, started),
        s1.ready(&limits, started),
        s2.ready(&limits, started),
        s3.ready(&limits, started)
    );
    let mut alive = [true; NUM_SEATS];
    for (seat, r) in [readies.0, readies.1, readies.2, readies.3]
        .into_iter()
        .enumerate()
    {
        let ok = r.ok;
        let detail = r
            .errors
            .iter()
            .map(|e| format!("{}: {}", e.code, e.detail))
            .collect::<Vec<_>>()
            .join("; ");
        log.push(&ReadyEvent {
            event: "ready".into(),
            seat,
            ok,
            time_us: r.time_us,
            errors: r.errors,
        });
        if !ok {
            alive[seat] = false;
            seats[seat].kill();
            errors[seat].push(SeatError {
                at: String::new(),
                turn: 0,
                kind: SeatErrorKind::NotReady,
                detail: detail.clone(),
            });
            log.push(&DeathEvent {
                event: "death".into(),
                seat,
                turn: 0,
                reason: "not_ready".into(),
                detail,
            });
        }
    }

    if let Some(p) = profile.as_deref_mut() {
        p.startup = started.elapsed();
    }
    let mut streams: [Stream; NUM_SEATS] = std::array::from_fn(|_| Stream {
        hasher: Sha256::new(),
        bytes: 0,
    });
    let cpu_start = profile.as_ref().map(|_| thread_cpu());
    let mut pending: Option<TurnEvents> = None;
    while !state.is_over() {
        let turn_start = Instant::now();
        let t = state.turn();
        // Every block is built before the first is written, so the blocks go out back to back;
        // the bookkeeping (stream digests, the previous turn's replay events) is done while the
        // bots think.
        let blocks: [Option<String>; NUM_SEATS] = std::array::from_fn(|seat| {
            alive[seat].then(|| {
                let mut block = String::with_capacity(256);
                state.write_message(seat, &mut block);
                block
            })
        });
        // The streams as they were, for a seat whose block turns out not to be written.
        let before: Vec<(Sha256, u64)> = streams
            .iter()
            .map(|s| (s.hasher.clone(), s.bytes))
            .collect();
        let [s0, s1, s2, s3] = &mut seats;
        // Futures are first polled in order: the bookkeeping runs after every block is written.
        let bookkeeping = async {
            for (stream, block) in streams.iter_mut().zip(&blocks) {
                if let Some(block) = block {
                    stream.hasher.update(block.as_bytes());
                    stream.bytes += block.len() as u64;
                }
            }
            if let Some(events) = pending.take() {
                events.write(&mut log);
            }
        };
        let (r0, r1, r2, r3, ()) = tokio::join!(
            seat_turn(s0, 0, blocks[0].as_deref(), &state, &limits),
            seat_turn(s1, 1, blocks[1].as_deref(), &state, &limits),
            seat_turn(s2, 2, blocks[2].as_deref(), &state, &limits),
            seat_turn(s3, 3, blocks[3].as_deref(), &state, &limits),
            bookkeeping
        );
        let outcomes = [r0, r1, r2, r3];
        for (seat, outcome) in outcomes.iter().enumerate() {
            if outcome.unwritten {
                (streams[seat].hasher, streams[seat].bytes) = before[seat].clone();
            }
        }
        // Waiting for bots: from the first block written to the last reply received (replies
        // carry their time since their own block was written).
        let first_write = outcomes
            .iter()
            .filter_map(|o| o.span)
            .min_by_key(|s| s.1)
            .map(|s| (s.0, s.1));
        let last_reply = outcomes.iter().filter_map(|o| o.span).map(|s| s.2).max();
        let mut moves = Vec::with_capacity(NUM_SEATS);
        let mut deaths = Vec::new();
        for (seat, outcome) in outcomes.into_iter().enumerate() {
            errors[seat].extend(outcome.errors);
            if let Some((reason, detail)) = outcome.death {
                alive[seat] = false;
                seats[seat].kill();
                deaths.push(DeathEvent {
                    event: "death".into(),
                    seat,
                    turn: t,
                    reason,
                    detail,
                });
            }
            moves.push(outcome.mv);
        }
        state.apply([
            &moves[0].picks,
            &moves[1].picks,
            &moves[2].picks,
            &moves[3].picks,
        ]);
        let label = if params.is_day(t) {
            params.day_label
        } else {
            params.night_label
        };
        pending = Some(TurnEvents {
            turn: TurnEvent {
                event: "turn".into(),
                turn: t,
                label: label.to_string(),
                moves,
            },
            deaths,
            scoring: state
                .scorings()
                .last()
                .copied()
                .filter(|(a, _)| *a == t)
                .map(|(after_turn, score24)| ScoringEvent {
                    event: "scoring".into(),
                    after_turn,
                    score24,
                }),
        });
        if let Some(p) = profile.as_deref_mut() {
            let end = Instant::now();
            p.turns.push(match (first_write, last_reply) {
                (Some((began, first)), Some(last)) => TurnProfile {
                    wall: end - turn_start,
                    waited: last.saturating_duration_since(first),
                    before: first.saturating_duration_since(turn_start),
                    first_write: first.saturating_duration_since(began),
                    after: end.saturating_duration_since(last),
                },
                _ => TurnProfile {
                    wall: end - turn_start,
                    ..TurnProfile::default()
                },
            });
        }
    }
    if let Some(events) = pending.take() {
        events.write(&mut log);
    }
    if let (Some(p), Some(c)) = (profile.as_deref_mut(), cpu_start) {
        p.turn_cpu = thread_cpu().saturating_sub(c);
    }
    let shutdown_start = Instant::now();

    // End: close stdin, wait the grace period, kill (§2.1), all seats at once.
    let grace = Duration::from_millis(limits.end_grace_ms);
    let [s0, s1, s2, s3] = &mut seats;
    let stderrs = tokio::join!(
        s0.finish(grace),
        s1.finish(grace),
        s2.finish(grace),
        s3.finish(grace)
    );
    let stderrs = [stderrs.0, stderrs.1, stderrs.2, stderrs.3];
    if let Some(p) = profile.as_deref_mut() {
        p.shutdown = shutdown_start.elapsed();
    }
    // Replayed seats carry their recorded stderr.
    for (seat, text) in stderrs.iter().enumerate() {
        if let Some(text) = text {
            log.push(&StderrEvent {
                event: "stderr".into(),
                seat,
                text: text.clone(),
            });
        }
    }

    let outcome = Outcome::by_max(state.scores());
    let total24 = state.total24();
    let top = total24.iter().max().copied().unwrap_or(0);
    let tied = if outcome.winner.is_none() {
        (0..NUM_SEATS).filter(|&s| total24[s] == top).collect()
    } else {
        Vec::new()
    };
    let streams = streams
        .into_iter()
        .map(|s| StreamDigest {
            bytes: s.bytes,
            sha256: format!("{:x}", s.hasher.finalize()),
        })
        .collect();
    log.push(&ResultEvent {
        event: "result".into(),
        total24,
        scores: outcome.scores_exact(),
        winner: outcome.winner,
        tied,
        streams,
    });
    let mut report = MatchReport::new(
        variant.name(),
        variant.name(),
        seed,
        &outcome,
        specs.into_iter().zip(errors).collect(),
    );
    report
        .extra
        .insert("total24".into(), serde_json::json!(total24));
    if let Some(p) = profile {
        p.wall = started.elapsed();
    }
    MatchRecord {
        report,
        replay: log,
    }
}

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

fn limits_from(spec: &MatchSpec) -> Result<Limits, RefereeError> {
    spec.check_option_keys(OPTION_KEYS)?;
    let d = Limits::default();
    Ok(Limits {
        ready_ms: spec.option("ready_ms", d.ready_ms, "a whole number of milliseconds")?,
        turn_ms: spec.option("turn_ms", d.turn_ms, "a whole number of milliseconds")?,
        end_grace_ms: spec.option(
            "end_grace_ms",
            d.end_grace_ms,
            "a whole number of milliseconds",
        )?,
    })
}

impl NacDriver {
    fn check(&self, spec: &MatchSpec) -> Result<(), RefereeError> {
        let name = self.variant.name();
        if let Some(r) = &spec.rules {
            if r != name {
                return Err(RefereeError::UnknownRules {
                    game: name.into(),
                    rules: r.clone(),
                    expected: name.into(),
                });
            }
        }
        if spec.seats.len() != NUM_SEATS {
            return Err(RefereeError::SeatCount {
                game: name.into(),
                expected: "4".into(),
                got: spec.seats.len(),
            });
        }
        for (seat, s) in spec.seats.iter().enumerate() {
            match s {
                SeatSpec::Builtin(b) if !BOT_NAMES.contains(&b.as_str()) => {
                    return Err(RefereeError::UnknownBot {
                        game: name.into(),
                        seat,
                        name: b.clone(),
                        expected: BOT_NAMES.join(", "),
                    })
                }
                SeatSpec::Tcp | SeatSpec::TcpCmd(_) => {
                    return Err(RefereeError::UnsupportedSeat {
                        game: name.into(),
                        seat,
                        form: s.to_string(),
                        reason: "its bots speak over stdin/stdout: use cmd:<command line>".into(),
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Play a match and report where its wall time went (for the overhead benchmark).
    pub async fn play_profiled(
        &self,
        spec: &MatchSpec,
    ) -> Result<(MatchRecord, Profile), RefereeError> {
        let mut profile = Profile::default();
        let record = self.play_inner(spec, Some(&mut profile)).await?;
        Ok((record, profile))
    }

    async fn play_async(&self, spec: &MatchSpec) -> Result<MatchRecord, RefereeError> {
        self.play_inner(spec, None).await
    }

    async fn play_inner(
        &self,
        spec: &MatchSpec,
        profile: Option<&mut Profile>,
    ) -> Result<MatchRecord, RefereeError> {
        self.check(spec)?;
        let limits = limits_from(spec)?;
        let started = Instant::now();
        let seats: Vec<Seat> = spec
            .seats
            .iter()
            .enumerate()
            .map(|(seat, s)| make_seat(s, seat, spec.seed, &spec.sandbox))
            .collect::<Result<_, _>>()?;
        let seats: [Seat; NUM_SEATS] = seats.try_into().map_err(|_| RefereeError::SeatCount {
            game: self.variant.name().into(),
            expected: "4".into(),
            got: spec.seats.len(),
        })?;
        let setup = Setup {
            variant: self.variant,
            seed: spec.seed,
            limits,
            specs: spec.seats.iter().map(|s| s.to_string()).collect(),
        };
        Ok(run_match(setup, seats, started, profile).await)
    }
}

/// A seat's bot; `Err` only for a bot that could not be started because of the machine.
fn make_seat(
    spec: &SeatSpec,
    seat: usize,
    seed: u64,
    sandbox: &SandboxConfig,
) -> Result<Seat, RefereeError> {
    Ok(match spec {
        SeatSpec::Builtin(name) => match make_bot(name, seat, seed) {
            Some(bot) => Seat::Builtin(bot),
            // Checked before: unreachable in practice, but a dead seat is the safe answer.
            None => Seat::Process {
                proc: None,
                spawn_error: Some(format!("unknown built-in bot {name:?}")),
            },
        },
        SeatSpec::Cmd(argv) | SeatSpec::TcpCmd(argv) => {
            match BotProcess::spawn(argv, &sandbox.for_seat(seat)) {
                Ok(p) => Seat::Process {
                    proc: Some(Box::new(p)),
                    spawn_error: None,
                },
                Err(e) => match RefereeError::host_fault(seat, &e) {
                    Some(fault) => return Err(fault),
                    None => Seat::Process {
                        proc: None,
                        spawn_error: Some(e.to_string()),
                    },
                },
            }
        }
        SeatSpec::Tcp => Seat::Process {
            proc: None,
            spawn_error: Some("tcp seats are not supported".into()),
        },
    })
}

fn bad(msg: impl Into<String>) -> RefereeError {
    RefereeError::BadReplay(msg.into())
}

impl NacDriver {
    fn rerun_sync(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        if h.format != FORMAT {
            return Err(bad(format!("format {:?} is not {FORMAT:?}", h.format)));
        }
        if h.game != self.variant.name() {
            return Err(bad(format!(
                "game {:?} is not {:?}",
                h.game,
                self.variant.name()
            )));
        }
        let params: HeaderParams = serde_json::from_value(h.params.clone())
            .map_err(|e| bad(format!("header params: {e}")))?;
        if params.variant != self.variant.params() {
            return Err(bad(
                "header params differ from this engine's variant parameters",
            ));
        }
        if h.seats.len() != NUM_SEATS {
            return Err(bad(format!("expected 4 seats, found {}", h.seats.len())));
        }
        let readies: Vec<ReadyEvent> = replay.events_of("ready")?;
        let turns: Vec<TurnEvent> = replay.events_of("turn")?;
        let stderrs: Vec<StderrEvent> = replay.events_of("stderr")?;
        let mut seats: Vec<Seat> = Vec::with_capacity(NUM_SEATS);
        for seat in 0..NUM_SEATS {
            h.seats[seat]
                .parse::<SeatSpec>()
                .map_err(|e| bad(format!("seat {seat}: {e}")))?;
            let ready = readies
                .iter()
                .find(|r| r.seat == seat)
                .ok_or_else(|| bad(format!("no ready event for seat {seat}")))?;
            let moves: Vec<MoveEvent> = turns
                .iter()
                .filter_map(|t| t.moves.iter().find(|m| m.seat == seat).cloned())
                .filter(|m| m.status != MoveStatus::Dead)
                .collect();
            let ready = ReadyResult {
                ok: ready.ok,
                time_us: ready.time_us,
                errors: ready.errors.clone(),
            };
            let stderr = stderrs
                .iter()
                .find(|e| e.seat == seat)
                .map(|e| e.text.clone());
            seats.push(Seat::Replayed {
                ready,
                moves: moves.into_iter(),
                stderr,
            });
        }
        let seats: [Seat; NUM_SEATS] = seats.try_into().map_err(|_| bad("seat count"))?;
        let setup = Setup {
            variant: self.variant,
            seed: h.seed,
            limits: params.limits,
            specs: h.seats.clone(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(RefereeError::Io)?;
        // A fresh runtime on its own thread, so re-running works from inside an async caller too.
        let record = std::thread::scope(|scope| {
            scope
                .spawn(move || runtime.block_on(run_match(setup, seats, Instant::now(), None)))
                .join()
        })
        .map_err(|_| bad("the re-run panicked"))?;
        Ok(record)
    }
}

impl GameDriver for NacDriver {
    fn game_type(&self) -> &'static GameType {
        self.game_type
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(self.play_async(spec))
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        self.rerun_sync(replay)
    }
}
