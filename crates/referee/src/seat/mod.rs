//! The one seat layer: every game asks its seats through a [`Table`], whatever the seat is.
//!
//! A seat is a built-in bot, a process on pipes, a TCP client, a WebSocket client, a seat replayed
//! from a recording, or the silent seat (`builtin:silent`, which never answers). The driver asks
//! with [`Table::ask`] (one or many seats at once: each is written to, then all are awaited until
//! their own deadline) or tells with [`Table::tell`] (no reply expected); it gets back one
//! [`Answer`] per seat: the reply bytes, or a timeout, crash with exit code, malformed message,
//! disconnect or resource limit. The table records every request as one
//! [`SeatExchange`] line in the replay, the seat's transport-level failures as [`SeatError`]s with
//! the game's own label, and, at [`Table::finish`], each program's exit and stderr as a
//! [`SeatEnd`]. Just before it writes to a seat, and at the end, it adds what the seat's
//! program wrote on stderr since to the seat's last exchange line (its `stderr`, see
//! [`SeatExchange`]). Re-running a replay is the same driver code on a table of replayed seats
//! ([`Table::replayed`]): each ask is answered by the next recorded exchange of that seat.
//!
//! The transports ([`pipe`], [`tcp`], [`ws`]) implement
//! [`Transport`]; the sandbox's guarantees stay with the processes they wrap.

pub mod client;
pub mod daide;
pub mod human;
pub mod pipe;
pub mod tcp;
pub mod ws;

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::FutureExt;

use kakehiki_agent::NewStderr;
use kakehiki_core::exchange::{
    set_line_stderr, ExchangeLine, ExchangeOutcome, SeatEnd, SeatExchange, SeatRecord,
    SEAT_END_EVENT,
};
use kakehiki_core::replay::{EventLine, LineMark, ParsedReplay, ReplayLog};
use kakehiki_core::{MatchReport, SeatError, SeatErrorKind, SeatSpec};
use serde::Serialize;
use tokio::time::Instant;

use crate::driver::BoxFuture;

pub use crate::driver::SILENT_BOT;

pub use kakehiki_core::exchange::NO_TERMINATOR;

/// What a transport read: one reply unit (a line, a frame), or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub outcome: ExchangeOutcome,
    /// The reply (outcome `reply`), or what had arrived of one (timeout, crash).
    pub bytes: Vec<u8>,
    /// The reply was cut at the transport's length cap.
    pub truncated: bool,
    /// When its last byte arrived (or the failure was seen).
    pub at: Instant,
    /// What went wrong, specifically.
    pub detail: Option<String>,
}

impl Received {
    /// A failure seen now.
    pub fn failure(outcome: ExchangeOutcome, detail: impl Into<String>) -> Self {
        Received {
            outcome,
            bytes: Vec::new(),
            truncated: false,
            at: Instant::now(),
            detail: Some(detail.into()),
        }
    }
}

/// `fut`'s output, or `None` if `deadline` passes first. A future that is ready at its first
/// poll (a write the socket or pipe takes at once: the usual case) makes no timer.
/// A deadline further ahead than [`NO_DEADLINE`] makes no timer either: it stands for none (a
/// seat only listened to, see [`Table::first`]), whose read would otherwise set a timer and drop
/// it again at every Geister ply.
pub async fn by_deadline<F: std::future::Future>(deadline: Instant, fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    if let Some(out) = fut.as_mut().now_or_never() {
        return Some(out);
    }
    if deadline.saturating_duration_since(Instant::now()) > NO_DEADLINE {
        return Some(fut.await);
    }
    tokio::time::timeout_at(deadline, fut).await.ok()
}

/// How far ahead a deadline stands for none at all ([`by_deadline`]); the reads of seats that
/// owe no reply use [`far_deadline`].
pub const NO_DEADLINE: Duration = Duration::from_secs(100 * 24 * 3600);

/// The deadline of a read that has none (a year from now).
pub fn far_deadline() -> Instant {
    Instant::now() + Duration::from_secs(365 * 24 * 3600)
}

/// How a seat's program ended: its exit and the tail of its stderr.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ending {
    /// `exit code 1`, `killed by signal 9`, `still running (killed by the referee)`, ...
    pub exit: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stderr: String,
    /// What its program wrote on stderr since the table last took it
    /// ([`Transport::take_stderr`]), read to its end: it goes on the seat's last exchange.
    pub stderr_rest: NewStderr,
}

impl Ending {
    /// The ending of an exit status as the agent layer reports it.
    pub fn of(exit: Option<kakehiki_agent::ExitInfo>, stderr: String) -> Self {
        Ending {
            exit: exit
                .map(|e| e.to_string())
                .unwrap_or_else(|| "still running (killed by the referee)".into()),
            exit_code: exit.and_then(|e| e.code),
            signal: exit.and_then(|e| e.signal),
            stderr,
            stderr_rest: NewStderr::default(),
        }
    }
}

/// How bytes reach one seat's bot and its replies come back. Implemented by the pipe, TCP and
/// WebSocket transports; the table does the timing, recording and replaying.
pub trait Transport: Send {
    /// Write one message (all of it) by `deadline`. On failure: the outcome and its detail.
    fn write<'a>(
        &'a mut self,
        bytes: &'a [u8],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), Received>>;

    /// [`Transport::write`] of a message the table owns: a transport that sends the bytes as
    /// they are (a WebSocket text frame, a queued TCP write) takes them without a copy.
    fn write_owned(
        &mut self,
        bytes: Vec<u8>,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<(), Received>> {
        Box::pin(async move { self.write(&bytes, deadline).await })
    }

    /// The next reply unit, by `deadline`.
    fn read(&mut self, deadline: Instant) -> BoxFuture<'_, Received>;

    /// Output that arrived while no reply was expected, taken out of the way of the next reply:
    /// the units and how many more were dropped uncounted.
    fn take_unsolicited(&mut self) -> (Vec<Vec<u8>>, u64) {
        (Vec::new(), 0)
    }

    /// Acknowledge what has arrived at once, where the transport can: a bot whose next write
    /// waits for the acknowledgement of its last one (Nagle's algorithm, on by default in most
    /// socket libraries) then sends it without waiting for the referee's delayed one (40 ms on
    /// Linux). Called while the table waits for a further unit from a seat that sent nothing in
    /// between.
    fn ack_now(&mut self) {}

    /// A failure already known before writing (output cap passed, connection gone).
    fn failed(&self) -> Option<Received> {
        None
    }

    /// What the bot's program wrote on stderr since the last call, where the referee launched
    /// it (within its `stderr_cap` over the match, [`kakehiki_agent::StderrConsole`]): the
    /// table takes it just before it writes to the seat, for the seat's last exchange (see
    /// `stderr` in [`SeatExchange`]). What is left at the end comes in [`Ending::stderr_rest`].
    fn take_stderr(&mut self) -> NewStderr {
        NewStderr::default()
    }

    /// The process group of the bot's program, where the referee launched it: `check` watches
    /// it for a bot waiting for input while it owes a reply ([`SeatClock::stop_when_waiting`]).
    fn pgid(&self) -> Option<i32> {
        None
    }

    /// The address of a launched client's connection to its seat, as the referee sees it: the
    /// watch counts only reads of that connection as reads of its input.
    fn peer(&self) -> Option<std::net::SocketAddr> {
        None
    }

    /// Whether replies come as whole messages (WebSocket) rather than lines: a bot waiting for
    /// input then has no unflushed reply, it waits for a message before it answers.
    fn messages(&self) -> bool {
        false
    }

    /// Stop the bot now (its exit is collected by [`Transport::finish`]).
    fn kill(&mut self);

    /// End the seat: give the program `grace` to exit, then stop it; its exit and stderr.
    fn finish(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Ending>;
}

/// One seat of a table.
pub enum Seat {
    /// A built-in bot: the driver computes its reply (the closure given to [`Table::ask`]).
    Builtin,
    /// `builtin:silent`: never answers.
    Silent,
    /// A bot behind a transport.
    Live(Box<dyn Transport>),
    /// A bot that could not be started (the detail says why): every request finds it not running.
    NotStarted(String),
    /// A seat replayed from a recording.
    Replayed {
        exchanges: VecDeque<SeatExchange>,
        end: Option<SeatEnd>,
    },
}

impl Seat {
    /// A seat answered by recorded exchanges (a re-run, an upgrade), and how it ended.
    pub fn replayed(exchanges: VecDeque<SeatExchange>, end: Option<SeatEnd>) -> Seat {
        Seat::Replayed { exchanges, end }
    }

    /// The seat of `builtin:silent`, or a built-in one.
    pub fn builtin(name: &str) -> Seat {
        if name == SILENT_BOT {
            Seat::Silent
        } else {
            Seat::Builtin
        }
    }
}

/// One request to one seat.
#[derive(Debug, Clone)]
pub struct Ask {
    pub seat: usize,
    /// The game's own label (`turn 3`, `ply 15`, `S1901M`).
    pub at: String,
    /// The kind of request (`ready`, `move`, `orders`, ...).
    pub kind: String,
    /// The message; empty when the seat speaks first (a READY line).
    pub msg: Vec<u8>,
    pub limit: Duration,
    /// Failures are the seat's start-up handshake failing ([`SeatErrorKind::NotReady`]).
    pub handshake: bool,
    /// Unterminated text at the deadline is the reply (Negotiate and Conquer, §3.3).
    pub unterminated_is_reply: bool,
    /// Which reply units answer this request; the others (a stale reply to an earlier request,
    /// Diplomacy §6) are listed in the exchange's `discarded` and the seat is read again until
    /// its deadline. `None`: the first unit is the reply. Cut units are always the reply.
    pub accept: Option<ReplyFilter>,
    /// With `accept`: once a unit was not accepted, how long to wait for another; when none
    /// comes within it (or by the deadline), the last unit not accepted is the reply after all
    /// (an invalid one, for the driver to judge). `None`: wait until the deadline, then time out.
    pub patience: Option<Duration>,
}

/// A test of a reply unit: `true` when it answers the request ([`Ask::accept`]).
#[derive(Clone)]
pub struct ReplyFilter(pub std::sync::Arc<ReplyTest>);

/// The function of a [`ReplyFilter`].
pub type ReplyTest = dyn Fn(&[u8]) -> bool + Send + Sync;

impl ReplyFilter {
    pub fn new(f: impl Fn(&[u8]) -> bool + Send + Sync + 'static) -> Self {
        ReplyFilter(std::sync::Arc::new(f))
    }
}

impl std::fmt::Debug for ReplyFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReplyFilter")
    }
}

impl Ask {
    pub fn new(
        seat: usize,
        at: impl Into<String>,
        kind: &str,
        msg: Vec<u8>,
        limit: Duration,
    ) -> Self {
        Ask {
            seat,
            at: at.into(),
            kind: kind.to_string(),
            msg,
            limit,
            handshake: false,
            unterminated_is_reply: false,
            accept: None,
            patience: None,
        }
    }
}

/// A window in which seats speak freely, for [`Table::listen`].
#[derive(Debug, Clone)]
pub struct Listen {
    /// The game's label of the window; unique within the match.
    pub at: String,
    pub kind: String,
    pub limit: Duration,
    opened: Instant,
    deadline: Instant,
    last_us: u64,
}

impl Listen {
    /// A window open from now for `limit`.
    pub fn new(at: impl Into<String>, kind: &str, limit: Duration) -> Listen {
        let opened = Instant::now();
        Listen {
            at: at.into(),
            kind: kind.to_string(),
            limit,
            opened,
            deadline: opened + limit,
            last_us: 0,
        }
    }
}

/// A seat awaited by [`Table::first`].
#[derive(Debug, Clone)]
pub struct Wait {
    pub seat: usize,
    /// The game's own label.
    pub at: String,
    /// The kind of request (or of listening, e.g. `line`).
    pub kind: String,
    /// The time the seat has, from `since`; `None`: no reply is due (the seat is only listened to).
    pub limit: Option<Duration>,
    /// When the request's last byte was written (or the listening began).
    pub since: Instant,
    /// A timeout is the seat's start-up failing ([`SeatErrorKind::NotReady`]).
    pub timeout_not_ready: bool,
    /// Any failure is the seat's start-up handshake failing ([`Ask::handshake`]): the wait
    /// for a client's connection.
    pub handshake: bool,
}

impl Wait {
    fn ask(&self) -> Ask {
        Ask::new(
            self.seat,
            &self.at,
            &self.kind,
            Vec::new(),
            self.limit.unwrap_or_default(),
        )
    }
}

/// What came of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub outcome: ExchangeOutcome,
    /// The reply (or what had arrived of one).
    pub bytes: Vec<u8>,
    pub truncated: bool,
    /// Microseconds from the message written to the reply; `None` for built-in bots.
    pub time_us: Option<u64>,
    pub detail: Option<String>,
    /// Output the seat wrote outside its window, discarded before this request (as recorded in
    /// the exchange's `discarded`).
    pub discarded: Vec<String>,
    /// A replayed exchange's stderr, written back as recorded. A live seat's comes later: the
    /// table adds it to the exchange's line before it next writes to the seat ([`Console`]).
    pub(crate) recorded_stderr: NewStderr,
}

impl Answer {
    /// The reply, if the seat answered.
    pub fn reply(&self) -> Option<&[u8]> {
        (self.outcome == ExchangeOutcome::Reply).then_some(self.bytes.as_slice())
    }

    /// The reply as text (lossy), if the seat answered.
    pub fn text(&self) -> Option<String> {
        self.reply()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// Whether the detail begins with `prefix` (e.g. [`NO_TERMINATOR`], `pipe::WRITE_FAILED`).
    pub fn says(&self, prefix: &str) -> bool {
        self.detail
            .as_deref()
            .is_some_and(|d| d.starts_with(prefix))
    }

    /// The answer of a seat that is not running (`why`), asked nothing.
    pub fn not_running(why: &str) -> Answer {
        Answer {
            outcome: ExchangeOutcome::NotRunning,
            bytes: Vec::new(),
            truncated: false,
            time_us: Some(0),
            detail: Some(why.to_string()),
            discarded: Vec::new(),
            recorded_stderr: NewStderr::default(),
        }
    }

    fn of_record(e: &SeatExchange) -> Answer {
        Answer {
            outcome: e.outcome,
            bytes: e.raw_bytes().unwrap_or_default(),
            truncated: e.truncated,
            time_us: e.time_us,
            detail: e.detail.clone(),
            discarded: e.discarded.clone(),
            recorded_stderr: NewStderr {
                text: e.stderr.clone().unwrap_or_default(),
                dropped: e.stderr_dropped,
            },
        }
    }
}

/// What came of [`Table::tell_taking`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Told {
    /// The failure, if the message could not be delivered (the seat gone).
    pub failed: Option<Answer>,
    /// What the seat had written while no reply was outstanding, taken before the message.
    pub discarded: Vec<String>,
}

/// What a finished table hands back: the replay, every seat's errors, and how each program ended.
pub struct Finished {
    pub log: ReplayLog,
    pub errors: Vec<Vec<SeatError>>,
    pub ends: Vec<Option<SeatEnd>>,
}

/// The key of a seat's stderr tail in the report (`seats[i].stderr`).
pub const STDERR_KEY: &str = "stderr";
/// The key of a seat's exit in the report (`seats[i].exit`).
pub const EXIT_KEY: &str = "exit";

impl Finished {
    /// The match record: `report` filled as [`Finished::fill_report`] says, and the replay.
    pub fn record(self, mut report: MatchReport) -> crate::driver::MatchRecord {
        self.fill_report(&mut report);
        crate::driver::MatchRecord {
            report,
            replay: self.log,
        }
    }

    /// Put each seat's errors, exit and stderr into `report` (built by the driver with empty
    /// error lists).
    pub fn fill_report(&self, report: &mut MatchReport) {
        for (i, seat) in report.seats.iter_mut().enumerate() {
            if let Some(errors) = self.errors.get(i) {
                seat.errors.extend(errors.iter().cloned());
            }
            if let Some(Some(end)) = self.ends.get(i) {
                seat.extra
                    .insert(EXIT_KEY.into(), serde_json::Value::String(end.exit.clone()));
                seat.extra.insert(
                    STDERR_KEY.into(),
                    serde_json::Value::String(end.stderr.clone()),
                );
            }
        }
    }
}

/// A line of the replay not yet serialised: it is, when its turn in the log comes (while the
/// bots think, at the next [`Table::ask`], or before anything else goes to the log).
// Most entries are exchanges: boxing them would cost an allocation per line.
#[allow(clippy::large_enum_variant)]
enum Later {
    /// A driver's event ([`Table::record_later`]).
    Event(Box<dyn FnOnce() -> EventLine + Send>),
    /// A seat's exchange: the request and what came of it; `limit`: whether the seat had a
    /// time to answer (a message that expects no reply has none); `seq`: its number among the
    /// exchanges noted ([`Target::Pending`]).
    Exchange {
        ask: Ask,
        answer: Answer,
        limit: bool,
        seq: u64,
    },
}

impl Later {
    fn line(self) -> EventLine {
        match self {
            Later::Event(f) => f(),
            Later::Exchange {
                ask, answer, limit, ..
            } => {
                let mut rec = Table::exchange_of(&ask, &answer);
                if !limit {
                    rec.limit_ms = None;
                }
                ReplayLog::line_of(&rec)
            }
        }
    }
}

/// Where a live seat's stderr goes, request by request (the `stderr` of its exchanges): just
/// before the table writes to the seat, and at the end, what the seat's program wrote since is
/// added to the seat's last exchange that reached it (not a `not_running` one, unless it is the
/// seat's first).
#[derive(Default)]
struct Console {
    /// The exchange that stderr taken now goes on; `None` before the seat's first.
    target: Option<Target>,
    /// What that exchange carries so far (before the first: what the first will carry).
    text: String,
    dropped: u64,
}

impl Console {
    /// Add `new` to the seat's last exchange: to its line in `log`, or (not yet in the log) to
    /// what [`Table::log`] writes into it; before the seat's first exchange, keep it for that
    /// one.
    fn add(&mut self, new: NewStderr, log: &mut ReplayLog) {
        if new.is_empty() {
            return;
        }
        self.text.push_str(&new.text);
        self.dropped += new.dropped;
        let Some(Target::Line(mark, len)) = self.target else {
            return;
        };
        match log.line_mut(mark) {
            Some(l) => set_line_stderr(l, len, &self.text, self.dropped),
            // The log was replaced (a set's next game): it goes on the seat's next exchange.
            None => {
                self.target = None;
                self.text = new.text;
                self.dropped = new.dropped;
            }
        }
    }
}

/// A seat's exchange that its stderr goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Noted, not yet in the log: the exchange numbered so ([`Later::Exchange`]'s `seq`).
    Pending(u64),
    /// In the log, where the mark says, written without stderr as so many bytes.
    Line(LineMark, usize),
}

/// The event of connections closed at once on a seat's port because as many as its cap were
/// already waiting ([`Table::excess_connections`]).
pub const EXCESS_EVENT: &str = "excess_connections";

/// Lines kept of the output a seat wrote outside its window, before a count.
const DISCARDED_KEPT: usize = 10;

pub use crate::clock::{SeatClock, STOPPED_AFTER_IDENTICAL};

/// The seats of one match, their recording, and the replay being written.
pub struct Table {
    seats: Vec<Seat>,
    /// Each seat is known not to be running (after a crash, disconnect or resource limit): its
    /// next requests find it so at once.
    down: Vec<Option<String>>,
    errors: Vec<Vec<SeatError>>,
    /// The replay being written (the driver's own events go through [`Table::record`] and
    /// [`Table::record_later`], or [`Table::log`]).
    log: ReplayLog,
    /// Lines not yet serialised (the seats' exchanges, the events of [`Table::record_later`]):
    /// they go to the log before anything else does.
    later: Vec<Later>,
    /// The turn number recorded in [`SeatError::turn`] (the driver keeps it current).
    pub turn: u32,
    /// Of a replayed table: each seat's exchanges' places in the recording (for [`Table::first`]).
    positions: Vec<Vec<usize>>,
    /// Of the last [`Table::ask`]: its first message written and its last reply received.
    span: Option<(Instant, Instant)>,
    /// Where each seat's thinking time is added up, if anyone reads it ([`Table::clocked`]).
    clock: Option<SeatClock>,
    /// Each seat's stderr, request by request.
    consoles: Vec<Console>,
    /// Exchanges noted so far (numbering them for [`Target::Pending`]).
    noted: u64,
    /// Where the replay's final lines are published as the match goes ([`Table::live`]).
    live: Option<std::sync::Arc<crate::live::LiveMatch>>,
}

impl Table {
    /// A table of live seats. `log` already holds the replay header.
    pub fn new(seats: Vec<Seat>, log: ReplayLog) -> Table {
        let n = seats.len();
        let down = seats
            .iter()
            .map(|s| match s {
                Seat::NotStarted(d) => Some(d.clone()),
                _ => None,
            })
            .collect();
        Table {
            seats,
            down,
            errors: vec![Vec::new(); n],
            log,
            turn: 0,
            positions: Vec::new(),
            span: None,
            later: Vec::new(),
            clock: None,
            consoles: (0..n).map(|_| Console::default()).collect(),
            live: None,
            noted: 0,
        }
    }

    /// This table, adding each seat's reply times to `clock` (a live match's
    /// [`crate::MatchSpec::clock`]).
    pub fn clocked(mut self, clock: SeatClock) -> Table {
        self.clock = Some(clock);
        self
    }

    /// A table that answers from `replay`'s seat record, for a re-run. `log` holds the
    /// re-run's header.
    pub fn replayed(
        replay: &ParsedReplay,
        n: usize,
        log: ReplayLog,
    ) -> Result<Table, crate::RefereeError> {
        let record = SeatRecord::of(replay)?;
        let mut seats: Vec<Seat> = (0..n)
            .map(|_| Seat::Replayed {
                exchanges: VecDeque::new(),
                end: None,
            })
            .collect();
        let mut positions = vec![Vec::new(); n];
        for (i, e) in record.exchanges.into_iter().enumerate() {
            if let Some(p) = positions.get_mut(e.seat) {
                p.push(i);
            }
            let Some(Seat::Replayed { exchanges, .. }) = seats.get_mut(e.seat) else {
                return Err(crate::RefereeError::BadReplay(format!(
                    "seat record names seat {} of a {n}-seat match",
                    e.seat
                )));
            };
            exchanges.push_back(e);
        }
        for e in record.ends {
            if let Some(Seat::Replayed { end, .. }) = seats.get_mut(e.seat) {
                *end = Some(e);
            }
        }
        let mut table = Table::new(seats, log);
        table.positions = positions;
        for (line, v) in replay
            .events
            .iter()
            .filter(|(_, v)| v["event"] == EXCESS_EVENT)
        {
            match (v["seat"].as_u64(), v["count"].as_u64(), v["cap"].as_u64()) {
                (Some(s), Some(count), Some(cap)) if (s as usize) < n => {
                    table.excess_connections(s as usize, count, cap as usize)
                }
                _ => {
                    return Err(crate::RefereeError::BadReplay(format!(
                        "line {line}: bad {EXCESS_EVENT} event"
                    )))
                }
            }
        }
        Ok(table)
    }

    /// Count `count` connections closed at once on `seat`'s port (`cap` were already waiting)
    /// against the seat: one error, and an [`EXCESS_EVENT`] line that [`Table::replayed`]
    /// counts again. Call it before the first request, where a re-run does. Zero: nothing.
    pub fn excess_connections(&mut self, seat: usize, count: u64, cap: usize) {
        if count == 0 {
            return;
        }
        self.log().push(
            &serde_json::json!({"event": EXCESS_EVENT, "seat": seat, "count": count, "cap": cap}),
        );
        let detail = format!(
            "{count} connections to the seat's port closed at once: {cap} were already waiting (the cap)"
        );
        self.fault(seat, "connect", SeatErrorKind::ExcessConnections, detail);
    }

    /// The number of seats.
    pub fn len(&self) -> usize {
        self.seats.len()
    }

    /// Whether the table has no seats.
    pub fn is_empty(&self) -> bool {
        self.seats.is_empty()
    }

    /// Whether the seat's reply comes from the driver's built-in bot.
    pub fn is_builtin(&self, seat: usize) -> bool {
        matches!(self.seats.get(seat), Some(Seat::Builtin))
    }

    /// Why the seat is known not to be running, if it is.
    pub fn down(&self, seat: usize) -> Option<&str> {
        self.down.get(seat).and_then(|d| d.as_deref())
    }

    /// Push one of the driver's own events to the replay.
    pub fn record<T: Serialize>(&mut self, event: &T) {
        self.log().push(event);
    }

    /// Record one of the driver's own events at this point of the replay, serialising it later:
    /// during the next [`Table::ask`]'s wait for its bots (or before anything else goes to the
    /// log). A turn's bookkeeping then costs the bots no time.
    pub fn record_later<T: Serialize + Send + 'static>(&mut self, event: T) {
        self.later
            .push(Later::Event(Box::new(move || ReplayLog::line_of(&event))));
    }

    /// The replay as written so far, every event recorded before this call in it.
    pub fn log(&mut self) -> &mut ReplayLog {
        for later in self.later.drain(..) {
            let Later::Exchange { seq, ref ask, .. } = later else {
                self.log.push_line(later.line());
                continue;
            };
            let console = self.consoles.get_mut(ask.seat);
            let line = later.line();
            match console.filter(|c| c.target == Some(Target::Pending(seq))) {
                // The seat's stderr goes on this line: where it is, and what it has so far.
                Some(c) => {
                    let mark = self.log.push_marked(line);
                    if let Some(l) = self.log.line_mut(mark) {
                        let len = l.len();
                        c.target = Some(Target::Line(mark, len));
                        if !c.text.is_empty() || c.dropped > 0 {
                            set_line_stderr(l, len, &c.text, c.dropped);
                        }
                    }
                }
                None => self.log.push_line(line),
            }
        }
        self.publish();
        &mut self.log
    }

    /// Publish the replay's lines that are final to [`Table::live`], if any: those before the
    /// first a seat's stderr may still be added to, and none before the header is in place
    /// (Geister writes it once both seats are known).
    fn publish(&self) {
        let Some(live) = &self.live else {
            return;
        };
        let lines = self.log.lines();
        if !lines
            .first()
            .is_some_and(|l| l.starts_with("{\"event\":\"header\""))
        {
            return;
        }
        let open = self
            .consoles
            .iter()
            .filter_map(|c| match c.target {
                Some(Target::Line(mark, _)) => self.log.index_of(mark),
                _ => None,
            })
            .min()
            .unwrap_or(lines.len());
        live.extend(&lines[..open]);
    }

    /// Publish this table's replay as the match goes ([`crate::live`]).
    pub fn live(mut self, live: Option<std::sync::Arc<crate::live::LiveMatch>>) -> Table {
        self.live = live;
        self
    }

    /// Add what seat `seat`'s program wrote on stderr since it was last taken to the seat's
    /// last exchange ([`Console::add`]).
    fn add_stderr(&mut self, seat: usize, new: NewStderr) {
        if let Some(c) = self.consoles.get_mut(seat) {
            c.add(new, &mut self.log);
        }
    }

    /// Record a fault the driver found in a reply (invalid, illegal, out of protocol).
    pub fn fault(&mut self, seat: usize, at: &str, kind: SeatErrorKind, detail: impl Into<String>) {
        let Some(errors) = self.errors.get_mut(seat) else {
            return;
        };
        let error = SeatError {
            turn: self.turn,
            at: at.to_string(),
            kind,
            detail: detail.into(),
        };
        // Counted only under `check`'s rule: a contest's match never pays for it.
        let limit = self.clock.as_ref().and_then(|c| c.stop_limit());
        let reached = limit.is_some_and(|n| {
            let same = errors
                .iter()
                .filter(|e| e.kind == error.kind && e.detail == error.detail)
                .count();
            same + 1 >= n
        });
        errors.push(error);
        if reached && self.down(seat).is_none() {
            if let Some(c) = &self.clock {
                c.mark_stopped(seat);
            }
            self.kill(seat, STOPPED_AFTER_IDENTICAL);
        }
    }

    /// Of the last [`Table::ask`]: the end of its first message written and its last reply
    /// received, the time it waited for its live seats (`None` when no live seat was read). For
    /// profiling the referee's own time apart from the bots'.
    pub fn span(&self) -> Option<(Instant, Instant)> {
        self.span
    }

    /// The errors recorded so far for `seat`.
    pub fn errors(&self, seat: usize) -> &[SeatError] {
        self.errors.get(seat).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Ask one seat: [`Table::ask`] with one ask, without the bookkeeping of many (the usual
    /// request of a turn-based game).
    pub async fn ask_one(
        &mut self,
        mut ask: Ask,
        mut builtin: impl FnMut(usize, &Ask) -> Vec<u8>,
    ) -> Answer {
        let mut discarded = Discarded::default();
        let begun = self.begin(&mut ask, &mut discarded).await;
        if matches!(begun, Begun::Builtin) {
            tokio::task::yield_now().await;
        }
        self.log();
        self.span = None;
        let mut answer = match begun {
            Begun::Answered(answer) => answer,
            Begun::Builtin => builtin_answer(builtin(ask.seat, &ask)),
            Begun::Waiting(written, deadline) => {
                let Seat::Live(t) = &mut self.seats[ask.seat] else {
                    return Answer::not_running("the seat changed while it was asked");
                };
                let watch = watch_of(self.clock.as_ref(), t.as_ref());
                let answer = read_reply(t, &ask, written, deadline, discarded, watch).await;
                self.span = answer
                    .time_us
                    .map(|us| (written, written + Duration::from_micros(us)));
                self.note(ask, &answer, true);
                return answer;
            }
        };
        answer.discarded = discarded.summary();
        self.note(ask, &answer, true);
        answer
    }

    /// Ask every seat in `asks` at once: each live seat is written to in order, then the built-in
    /// seats' replies are computed with `builtin(seat, ask)`, then every live seat is awaited
    /// until its own deadline (the end of its write plus its limit). One answer per ask, in
    /// order; each is recorded.
    pub async fn ask(
        &mut self,
        asks: Vec<Ask>,
        builtin: impl FnMut(usize, &Ask) -> Vec<u8>,
    ) -> Vec<Answer> {
        self.ask_each(asks, builtin, |_, _| (), || ())
            .await
            .into_iter()
            .map(|(answer, ())| answer)
            .collect()
    }

    /// Start an ask: a seat down, failed, replayed or silent is answered at once; a live seat
    /// is written to (unless it speaks first) and waited for until the deadline; a built-in
    /// seat's reply is computed by the caller. What the seat wrote outside its window is put in
    /// `discarded`.
    async fn begin(&mut self, ask: &mut Ask, discarded: &mut Discarded) -> Begun {
        if let Some(why) = self.down(ask.seat) {
            return Begun::Answered(Answer::not_running(why));
        }
        match &mut self.seats[ask.seat] {
            Seat::Live(t) => {
                // A seat that speaks first (no message): what already arrived is its reply,
                // not output outside its window.
                if !ask.msg.is_empty() {
                    *discarded = Discarded::from(t.take_unsolicited());
                }
                if let Some(failed) = t.failed() {
                    return Begun::Answered(answer_of(failed, None, ask));
                }
                // What the seat wrote on stderr before this request goes on its exchange before
                // (taken before the message is written: nothing in it answers the message).
                if let Some(c) = self.consoles.get_mut(ask.seat) {
                    if !ask.msg.is_empty() {
                        c.add(t.take_stderr(), &mut self.log);
                    }
                }
                let start = Instant::now();
                // From here the seat's time runs (a write it does not read blocks on it).
                if let Some(c) = &self.clock {
                    c.start(ask.seat, start);
                }
                if ask.msg.is_empty() {
                    return Begun::Waiting(start, start + ask.limit);
                }
                // Written, the message is not needed again (no exchange records it).
                let msg = std::mem::take(&mut ask.msg);
                match t.write_owned(msg, start + ask.limit).await {
                    Ok(()) => {
                        let written = Instant::now();
                        Begun::Waiting(written, written + ask.limit)
                    }
                    Err(r) => Begun::Answered(answer_of(r, Some(start), ask)),
                }
            }
            Seat::Replayed { exchanges, .. } => Begun::Answered(match exchanges.pop_front() {
                Some(e) => {
                    discarded.recorded = Some(e.discarded.clone());
                    Answer::of_record(&e)
                }
                None => Answer::not_running("the recording has no more exchanges for this seat"),
            }),
            Seat::Silent => Begun::Answered(Answer {
                outcome: ExchangeOutcome::Timeout,
                bytes: Vec::new(),
                truncated: false,
                time_us: Some(ask.limit.as_micros() as u64),
                detail: Some(format!("{SILENT_BOT} never answers")),
                discarded: Vec::new(),
                recorded_stderr: NewStderr::default(),
            }),
            Seat::Builtin => Begun::Builtin,
            Seat::NotStarted(why) => Begun::Answered(Answer::not_running(why)),
        }
    }

    /// [`Table::ask`], with `each(ask, answer)` run on every answer as soon as it is known: a
    /// live seat's while the others still think (a driver decodes each reply there, so that
    /// only the last one's decoding follows the last reply). Each answer comes with its result.
    /// `meanwhile` runs once every message is written, while the seats think (a driver's
    /// bookkeeping of what it sent).
    pub async fn ask_each<T>(
        &mut self,
        mut asks: Vec<Ask>,
        mut builtin: impl FnMut(usize, &Ask) -> Vec<u8>,
        each: impl Fn(&Ask, &Answer) -> T,
        meanwhile: impl FnOnce(),
    ) -> Vec<(Answer, T)> {
        let each = &each;
        let mut answers: Vec<Option<Answer>> = vec![None; asks.len()];
        // What `each` made of the live seats' answers, as they came.
        let mut made: Vec<Option<T>> = (0..asks.len()).map(|_| None).collect();
        let mut discarded: Vec<Discarded> = vec![Discarded::default(); asks.len()];
        // Deadlines of the live seats written to: (ask index, written at, deadline).
        let mut waiting: Vec<(usize, Instant, Instant)> = Vec::new();
        let mut builtins = false;
        for (i, ask) in asks.iter_mut().enumerate() {
            match self.begin(ask, &mut discarded[i]).await {
                Begun::Answered(answer) => answers[i] = Some(answer),
                Begun::Waiting(written, deadline) => waiting.push((i, written, deadline)),
                Begun::Builtin => builtins = true,
            }
        }
        // Built-in bots think while the processes do.
        if builtins {
            tokio::task::yield_now().await;
        }
        for (i, ask) in asks.iter().enumerate() {
            if answers[i].is_none() && self.is_builtin(ask.seat) {
                answers[i] = Some(builtin_answer(builtin(ask.seat, ask)));
            }
        }
        // The bots think: the events recorded for later are serialised now.
        self.log();
        meanwhile();
        // Await the live seats, each until its own deadline. Each answer's exchange line is
        // serialised as soon as it comes, while the other seats still think; the lines go to
        // the log in the order of the asks.
        let mut reads = Vec::with_capacity(waiting.len());
        {
            let asks = &asks;
            let clock = self.clock.as_ref();
            // Each live seat is read for the first of its asks (a second one in the same round
            // is not answered).
            for (seat, t) in self.seats.iter_mut().enumerate() {
                let Seat::Live(t) = t else { continue };
                let Some(&(i, written, deadline)) = waiting.iter().find(|w| asks[w.0].seat == seat)
                else {
                    continue;
                };
                let discarded = std::mem::take(&mut discarded[i]);
                let watch = watch_of(clock, t.as_ref());
                reads.push(async move {
                    let ask = &asks[i];
                    let answer = read_reply(t, ask, written, deadline, discarded, watch).await;
                    let result = each(ask, &answer);
                    (i, answer, result)
                });
            }
        }
        let first_written = waiting.iter().map(|w| w.1).min();
        // One seat (the usual ask of a turn-based game) is awaited as it is.
        let read = if reads.len() == 1 {
            let one = reads.into_iter().next().expect("one read");
            vec![one.await]
        } else {
            futures_util::future::join_all(reads).await
        };
        let mut last_received = None;
        for (i, answer, result) in read {
            let at = waiting.iter().find(|w| w.0 == i).map(|w| w.1);
            let came = at
                .zip(answer.time_us)
                .map(|(w, us)| w + Duration::from_micros(us));
            last_received = last_received.max(came);
            answers[i] = Some(answer);
            made[i] = Some(result);
        }
        self.span = first_written.zip(last_received);
        let mut out = Vec::with_capacity(asks.len());
        // Recorded now, serialised while the bots think about the next request.
        for (((ask, answer), discarded), made) in
            asks.into_iter().zip(answers).zip(discarded).zip(made)
        {
            let mut answer =
                answer.unwrap_or_else(|| Answer::not_running("asked twice in one round"));
            let result = match made {
                Some(result) => result,
                None => {
                    answer.discarded = discarded.summary();
                    each(&ask, &answer)
                }
            };
            self.note(ask, &answer, true);
            out.push((answer, result));
        }
        out
    }

    /// The next message any of `seats` sends within the window `w` (a group chat): live seats are
    /// read until the window's deadline, in arrival order; replayed seats give their recorded
    /// messages of this window (same `at` and `kind`) in the recorded order. Each message is
    /// recorded as an exchange whose `time_us` counts from the window's opening, strictly
    /// increasing within the window (that order is what a re-run follows); failures are recorded
    /// as for [`Table::ask`]. Built-in, silent and down seats are not listened to. `None` when
    /// the window is over.
    pub async fn listen(&mut self, seats: &[usize], w: &mut Listen) -> Option<(usize, Answer)> {
        let mut first: Option<(usize, u64)> = None;
        let mut live = Vec::new();
        for (s, seat) in self.seats.iter_mut().enumerate() {
            if !seats.contains(&s) || self.down[s].is_some() {
                continue;
            }
            match seat {
                Seat::Replayed { exchanges, .. } => {
                    if let Some(e) = exchanges
                        .front()
                        .filter(|e| e.at == w.at && e.kind == w.kind)
                    {
                        let t = e.time_us.unwrap_or(0);
                        if first.is_none_or(|(_, b)| t < b) {
                            first = Some((s, t));
                        }
                    }
                }
                Seat::Live(t) => live.push((s, t)),
                _ => {}
            }
        }
        let ask = |s: usize| Ask::new(s, w.at.clone(), &w.kind, Vec::new(), w.limit);
        if let Some((s, _)) = first {
            drop(live);
            let Some(Seat::Replayed { exchanges, .. }) = self.seats.get_mut(s) else {
                return None;
            };
            let e = exchanges.pop_front()?;
            let answer = Answer::of_record(&e);
            self.note(ask(s), &answer, true);
            return Some((s, answer));
        }
        if live.is_empty() {
            // Live, the window lasts its time all the same; a re-run does not wait.
            if !self
                .seats
                .iter()
                .any(|s| matches!(s, Seat::Replayed { .. }))
            {
                tokio::time::sleep_until(w.deadline).await;
            }
            return None;
        }
        let deadline = w.deadline;
        let reads = live
            .into_iter()
            .map(|(s, t)| Box::pin(async move { (s, t.read(deadline).await) }));
        let ((s, r), _, _) = futures_util::future::select_all(reads).await;
        if r.outcome == ExchangeOutcome::Timeout {
            return None;
        }
        let us = (r.at.saturating_duration_since(w.opened).as_micros() as u64).max(w.last_us + 1);
        w.last_us = us;
        let answer = Answer {
            outcome: r.outcome,
            bytes: r.bytes,
            truncated: r.truncated,
            time_us: Some(us),
            detail: r.detail,
            discarded: Vec::new(),
            recorded_stderr: NewStderr::default(),
        };
        self.note_unclocked(ask(s), &answer, true);
        Some((s, answer))
    }

    /// Send one seat a message that expects no reply. A failure (the seat gone) is recorded as
    /// an exchange and returned; to a seat already down nothing is sent or recorded.
    pub async fn tell(
        &mut self,
        seat: usize,
        at: &str,
        kind: &str,
        msg: Vec<u8>,
        limit: Duration,
    ) -> Option<Answer> {
        self.tell_with(seat, at, kind, msg, limit, false)
            .await
            .failed
    }

    /// [`Table::tell`], first taking out of the way what the seat wrote while no reply was
    /// outstanding (as [`Table::ask`] does before a request): a protocol whose seats must not
    /// answer such messages learns which message such output followed. What was taken is
    /// recorded with the message (an exchange `sent`, or the failure's), and given back; a re-run
    /// gives back what was recorded.
    pub async fn tell_taking(
        &mut self,
        seat: usize,
        at: &str,
        kind: &str,
        msg: Vec<u8>,
        limit: Duration,
    ) -> Told {
        self.tell_with(seat, at, kind, msg, limit, true).await
    }

    /// [`Table::tell`] (`take` false) and [`Table::tell_taking`] (`take` true): a delivered
    /// message is recorded only when something was taken with it.
    async fn tell_with(
        &mut self,
        seat: usize,
        at: &str,
        kind: &str,
        msg: Vec<u8>,
        limit: Duration,
        take: bool,
    ) -> Told {
        if self.down(seat).is_some() {
            return Told::default();
        }
        let ask = || Ask::new(seat, at, kind, Vec::new(), limit);
        let (answer, ask) = match &mut self.seats[seat] {
            Seat::Live(t) => {
                let discarded = if take {
                    Discarded::from(t.take_unsolicited()).summary()
                } else {
                    Vec::new()
                };
                let written = match t.failed() {
                    Some(failed) => Err((failed, None)),
                    None => {
                        // As before a request: the stderr so far goes on the exchange before.
                        if let Some(c) = self.consoles.get_mut(seat) {
                            c.add(t.take_stderr(), &mut self.log);
                        }
                        let start = Instant::now();
                        match t.write_owned(msg, start + limit).await {
                            Ok(()) => Ok(()),
                            Err(failed) => Err((failed, Some(start))),
                        }
                    }
                };
                let ask = ask();
                let mut answer = match written {
                    Err((failed, start)) => answer_of(failed, start, &ask),
                    Ok(()) if discarded.is_empty() => return Told::default(),
                    Ok(()) => Answer {
                        outcome: ExchangeOutcome::Sent,
                        bytes: Vec::new(),
                        truncated: false,
                        time_us: None,
                        detail: None,
                        discarded: Vec::new(),
                        recorded_stderr: NewStderr::default(),
                    },
                };
                answer.discarded = discarded;
                (answer, ask)
            }
            Seat::Replayed { exchanges, .. } => {
                let head_is_this = exchanges
                    .front()
                    .is_some_and(|e| e.limit_ms.is_none() && e.at == at && e.kind == kind);
                match head_is_this.then(|| exchanges.pop_front()).flatten() {
                    Some(e) => (Answer::of_record(&e), ask()),
                    None => return Told::default(),
                }
            }
            _ => return Told::default(),
        };
        self.note(ask, &answer, false);
        Told {
            discarded: answer.discarded.clone(),
            failed: (answer.outcome != ExchangeOutcome::Sent).then_some(answer),
        }
    }

    /// Await whichever of `waits` answers first: for protocols where a seat may speak at any
    /// time (Geister answers a line out of turn at once). Each wait is a request already written
    /// (`limit` set: its clock runs from `since`) or a seat merely listened to (`limit` `None`:
    /// no deadline, no time measured). Built-in seats with a request answer at once (from
    /// `builtin`); the live seats are read together, each until its own deadline, and the reads
    /// that lose are dropped (a [`Transport::read`] must be cancel-safe: nothing read is lost).
    /// The answer is recorded like an ask's. A replayed table answers with the exchange
    /// recorded first among the seats waited for. `None` when nothing could ever answer.
    pub async fn first(
        &mut self,
        waits: &[Wait],
        mut builtin: impl FnMut(usize, &Wait) -> Vec<u8>,
    ) -> Option<(usize, Answer)> {
        if let Some(c) = &self.clock {
            for w in waits.iter().filter(|w| w.limit.is_some()) {
                if matches!(self.seats.get(w.seat), Some(Seat::Live(_))) {
                    c.start(w.seat, w.since);
                }
            }
        }
        let (i, answer) = self.first_answer(waits, &mut builtin).await?;
        let w = &waits[i];
        let mut ask = w.ask();
        ask.handshake =
            w.handshake || (w.timeout_not_ready && answer.outcome == ExchangeOutcome::Timeout);
        self.note(ask, &answer, w.limit.is_some());
        Some((i, answer))
    }

    async fn first_answer(
        &mut self,
        waits: &[Wait],
        builtin: &mut impl FnMut(usize, &Wait) -> Vec<u8>,
    ) -> Option<(usize, Answer)> {
        let not_running = Answer::not_running;
        if let Some((i, why)) = waits
            .iter()
            .enumerate()
            .find_map(|(i, w)| self.down(w.seat).map(|d| (i, d)))
        {
            return Some((i, not_running(why)));
        }
        // A replayed table: the exchange recorded first among the seats waited for.
        let mut best: Option<(usize, usize)> = None;
        let mut replayed = None;
        for (i, w) in waits.iter().enumerate() {
            if let Some(Seat::Replayed { exchanges, .. }) = self.seats.get(w.seat) {
                replayed.get_or_insert(i);
                let p = &self.positions[w.seat];
                let head = p.len().checked_sub(exchanges.len()).and_then(|k| p.get(k));
                if let Some(&pos) = head {
                    if best.is_none_or(|(b, _)| pos < b) {
                        best = Some((pos, i));
                    }
                }
            }
        }
        if let Some((_, i)) = best {
            if let Some(Seat::Replayed { exchanges, .. }) = self.seats.get_mut(waits[i].seat) {
                if let Some(e) = exchanges.pop_front() {
                    return Some((i, Answer::of_record(&e)));
                }
            }
        }
        if let Some(i) = replayed {
            return Some((
                i,
                not_running("the recording has no more exchanges for this seat"),
            ));
        }
        if let Some((i, w)) = waits
            .iter()
            .enumerate()
            .find(|(_, w)| w.limit.is_some() && self.is_builtin(w.seat))
        {
            // What a live seat has already sent comes first (it arrived before the question).
            if let Some(Some(got)) = self.race(waits).now_or_never() {
                return Some(got);
            }
            return Some((i, builtin_answer(builtin(w.seat, w))));
        }
        // The seats think: the events recorded for later are serialised now.
        self.log();
        self.race(waits).await
    }

    /// Read the live (and silent) seats of `waits` together; the first answer.
    ///
    /// A silent seat's timeout is known in advance: when no live seat owes a reply (the live
    /// seats are only listened to), the earliest one comes at once, dated at its deadline,
    /// after whatever a live seat has already sent. Waiting for it would change nothing but the
    /// wall time (`check`'s "opponent that times out" would take a whole limit per request).
    async fn race(&mut self, waits: &[Wait]) -> Option<(usize, Answer)> {
        let far = far_deadline();
        let silent_first = {
            let is = |w: &Wait, live: bool| match self.seats.get(w.seat) {
                Some(Seat::Live(_)) => live,
                Some(Seat::Silent) => !live,
                _ => false,
            };
            let live_due = waits.iter().any(|w| w.limit.is_some() && is(w, true));
            waits
                .iter()
                .enumerate()
                .filter_map(|(i, w)| Some((i, w.since + w.limit?)).filter(|_| is(w, false)))
                .min_by_key(|&(_, deadline)| deadline)
                .filter(|_| !live_due)
        };
        let mut reads: Vec<BoxFuture<'_, (usize, Received)>> = Vec::new();
        let clock = self.clock.as_ref();
        let mut seats: Vec<Option<&mut Seat>> = self.seats.iter_mut().map(Some).collect();
        for (i, w) in waits.iter().enumerate() {
            let deadline = w.limit.map_or(far, |l| w.since + l);
            match seats.get_mut(w.seat).and_then(Option::take) {
                Some(Seat::Live(t)) => {
                    if let Some(failed) = t.failed() {
                        return Some((i, answer_of(failed, None, &w.ask())));
                    }
                    // Only a seat that owes a reply is watched for waiting on its input.
                    let watch = w.limit.and_then(|_| watch_of(clock, t.as_ref()));
                    reads.push(Box::pin(async move {
                        (i, read_watched(t.as_mut(), deadline, watch).await)
                    }));
                }
                Some(Seat::Silent) if w.limit.is_some() => reads.push(Box::pin(async move {
                    tokio::time::sleep_until(deadline).await;
                    (i, silent_timeout(deadline))
                })),
                _ => {}
            }
        }
        if reads.is_empty() {
            return None;
        }
        let raced = futures_util::future::select_all(reads);
        let (i, received) = match silent_first {
            Some((i, deadline)) => match raced.now_or_never() {
                Some(((j, received), _, _)) => (j, received),
                None => (i, silent_timeout(deadline)),
            },
            None => raced.await.0,
        };
        let w = &waits[i];
        let mut answer = answer_of(received, Some(w.since), &w.ask());
        if w.limit.is_none() {
            answer.time_us = None;
        }
        Some((i, answer))
    }

    fn exchange_of<'a>(ask: &'a Ask, answer: &'a Answer) -> ExchangeLine<'a> {
        let mut rec = ExchangeLine::new(ask.seat, &ask.at, &ask.kind, answer.outcome);
        rec.limit_ms = Some(ask.limit.as_millis() as u64);
        rec.time_us = answer.time_us;
        if !answer.bytes.is_empty() || answer.outcome == ExchangeOutcome::Reply {
            rec.set_raw(&answer.bytes);
        }
        rec.truncated = answer.truncated;
        rec.detail = answer.detail.as_deref();
        rec.discarded = &answer.discarded;
        let recorded = &answer.recorded_stderr;
        rec.stderr = (!recorded.text.is_empty()).then_some(recorded.text.as_str());
        rec.stderr_dropped = recorded.dropped;
        rec
    }

    /// Record one answered ask: its error if the transport failed, and its exchange line (with
    /// the seat's time to answer when it had one), serialised later ([`Later`]).
    /// A live seat's time to answer a request with a limit is added to the clock, if any (a
    /// built-in, silent or replayed seat uses no time).
    fn note(&mut self, ask: Ask, answer: &Answer, limit: bool) {
        let live = matches!(self.seats.get(ask.seat), Some(Seat::Live(_)));
        if let (Some(clock), Some(us), true) = (&self.clock, answer.time_us, limit && live) {
            clock.add(ask.seat, us);
        }
        self.note_unclocked(ask, answer, limit);
    }

    /// [`Table::note`] without the clock: a message in a listening window, whose time counts
    /// from the window's opening and whose window lasts its time whatever the seat does.
    fn note_unclocked(&mut self, ask: Ask, answer: &Answer, limit: bool) {
        self.note_error(&ask, answer);
        let seq = self.noted;
        self.noted += 1;
        // The seat's stderr from now on goes on this exchange if it reached the seat's program,
        // or if it is the seat's first (a client that never connected wrote why).
        let live = matches!(self.seats.get(ask.seat), Some(Seat::Live(_)));
        if let Some(c) = self.consoles.get_mut(ask.seat).filter(|_| live) {
            match c.target {
                // What came before the seat's first exchange stays for it.
                None => c.target = Some(Target::Pending(seq)),
                Some(_) if answer.outcome != ExchangeOutcome::NotRunning => {
                    c.text.clear();
                    c.dropped = 0;
                    c.target = Some(Target::Pending(seq));
                }
                Some(_) => {}
            }
        }
        self.later.push(Later::Exchange {
            ask,
            answer: answer.clone(),
            limit,
            seq,
        });
    }

    fn note_error(&mut self, ask: &Ask, answer: &Answer) {
        let limit_ms = ask.limit.as_millis();
        // `builtin:silent` never answers by design (read from its answer, so that a re-run,
        // whose seats are all replayed, says the same).
        let silent = answer
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with(SILENT_BOT));
        let what = if ask.handshake {
            SeatErrorKind::NotReady
        } else {
            match answer.outcome {
                ExchangeOutcome::Reply | ExchangeOutcome::Sent => return,
                ExchangeOutcome::Timeout => SeatErrorKind::Timeout,
                ExchangeOutcome::Crash | ExchangeOutcome::NotRunning => SeatErrorKind::Crash,
                ExchangeOutcome::Malformed => SeatErrorKind::InvalidReply,
                ExchangeOutcome::Disconnect => SeatErrorKind::Disconnect,
                ExchangeOutcome::ResourceLimit => SeatErrorKind::ResourceLimit,
            }
        };
        if answer.outcome == ExchangeOutcome::Reply {
            return;
        }
        // A seat stopped after identical errors made no new one.
        if answer.outcome == ExchangeOutcome::NotRunning
            && self.down(ask.seat) == Some(STOPPED_AFTER_IDENTICAL)
        {
            return;
        }
        // A seat that is down is reported once, where it went down.
        if answer.outcome == ExchangeOutcome::NotRunning
            && self.errors[ask.seat].iter().any(|e| {
                matches!(
                    e.kind,
                    SeatErrorKind::Crash
                        | SeatErrorKind::Disconnect
                        | SeatErrorKind::ResourceLimit
                        | SeatErrorKind::NotReady
                )
            })
        {
            return;
        }
        // `check` gave up on a bot waiting for input: said first, then what arrived.
        let (within, hint) =
            timeout_words(limit_ms, &answer.bytes, answer.detail.as_deref(), silent);
        let detail = match answer.outcome {
            // A failed handshake's kind is `not_ready`: its detail says it was a timeout.
            ExchangeOutcome::Timeout if ask.handshake => {
                format!("timeout: no reply to {} {within}{hint}", ask.kind)
            }
            ExchangeOutcome::Timeout => format!("no reply to {} {within}{hint}", ask.kind),
            _ => format!(
                "{} ({})",
                answer.outcome.as_str().replace('_', " "),
                answer.detail.as_deref().unwrap_or("no detail")
            ),
        };
        let detail = if ask.handshake {
            format!("{}: {detail}", ask.kind)
        } else {
            detail
        };
        if matches!(
            answer.outcome,
            ExchangeOutcome::Crash
                | ExchangeOutcome::Disconnect
                | ExchangeOutcome::ResourceLimit
                | ExchangeOutcome::NotRunning
        ) {
            self.down[ask.seat] = Some(detail.clone());
        }
        self.fault(ask.seat, &ask.at, what, detail);
    }

    /// Put `seat` in place of seat `i` (a client that reconnected between the games of a set):
    /// it is no longer down. The seat it replaces is returned (dropped by the caller).
    pub fn reseat(&mut self, i: usize, seat: Seat) -> Option<Seat> {
        let mut old = std::mem::replace(self.seats.get_mut(i)?, seat);
        if let Seat::Live(t) = &mut old {
            let new = t.take_stderr();
            self.add_stderr(i, new);
        }
        self.down[i] = match &self.seats[i] {
            Seat::NotStarted(d) => Some(d.clone()),
            _ => None,
        };
        Some(old)
    }

    /// Stop one seat now (a rule forfeits it); it answers nothing more.
    pub fn kill(&mut self, seat: usize, why: &str) {
        if let Some(Seat::Live(t)) = self.seats.get_mut(seat) {
            t.kill();
        }
        if let Some(d) = self.down.get_mut(seat) {
            d.get_or_insert_with(|| why.to_string());
        }
    }

    /// End the match: every program is given `grace` to exit, then stopped; what it wrote on
    /// stderr since the last request goes on its last exchange, and each one's exit and stderr
    /// tail are recorded as a `seat_end` line.
    pub async fn finish(mut self, grace: Duration) -> Finished {
        self.log();
        let seats = std::mem::take(&mut self.seats);
        let mut endings = Vec::new();
        let mut ends: Vec<Option<SeatEnd>> = Vec::new();
        let mut pending = Vec::new();
        for (i, seat) in seats.into_iter().enumerate() {
            match seat {
                Seat::Live(t) => pending.push(async move { (i, t.finish(grace).await) }),
                Seat::NotStarted(why) => endings.push((
                    i,
                    Ending {
                        exit: format!("not started: {why}"),
                        ..Ending::default()
                    },
                )),
                Seat::Replayed { end: Some(e), .. } => endings.push((
                    i,
                    Ending {
                        exit: e.exit,
                        exit_code: e.exit_code,
                        signal: e.signal,
                        stderr: e.stderr,
                        stderr_rest: NewStderr::default(),
                    },
                )),
                _ => {}
            }
        }
        endings.extend(futures_util::future::join_all(pending).await);
        endings.sort_by_key(|(i, _)| *i);
        let live = self.live.take();
        for (i, e) in &mut endings {
            let rest = std::mem::take(&mut e.stderr_rest);
            self.add_stderr(*i, rest);
        }
        let Table {
            errors, mut log, ..
        } = self;
        ends.resize(errors.len(), None);
        for (i, e) in endings {
            let end = SeatEnd {
                event: SEAT_END_EVENT.into(),
                seat: i,
                exit: e.exit,
                exit_code: e.exit_code,
                signal: e.signal,
                stderr: e.stderr,
            };
            log.push(&end);
            ends[i] = Some(end);
        }
        // Every line is final now (the caller publishes the record's own end, see
        // `crate::live`).
        if let Some(live) = live {
            live.extend(log.lines());
        }
        Finished { log, errors, ends }
    }
}

/// The units one exchange discarded: output before the request and replies not accepted
/// ([`Ask::accept`]), or what the recording says.
#[derive(Debug, Clone, Default)]
struct Discarded {
    units: Vec<Vec<u8>>,
    dropped: u64,
    recorded: Option<Vec<String>>,
}

impl From<(Vec<Vec<u8>>, u64)> for Discarded {
    fn from((units, dropped): (Vec<Vec<u8>>, u64)) -> Self {
        Discarded {
            units,
            dropped,
            recorded: None,
        }
    }
}

impl Discarded {
    /// As recorded: the first few units, each cut to 200 characters, then a count.
    fn summary(self) -> Vec<String> {
        if let Some(r) = self.recorded {
            return r;
        }
        let texts: Vec<&Vec<u8>> = self
            .units
            .iter()
            .filter(|b| !b.iter().all(u8::is_ascii_whitespace))
            .collect();
        let more = texts.len().saturating_sub(DISCARDED_KEPT) as u64 + self.dropped;
        let mut out: Vec<String> = texts
            .iter()
            .take(DISCARDED_KEPT)
            .map(|b| String::from_utf8_lossy(b).chars().take(200).collect())
            .collect();
        if more > 0 {
            out.push(format!("[{more} more lines discarded]"));
        }
        out
    }
}

/// How an ask stands once begun.
enum Begun {
    /// Answered without waiting (the seat down, failed, replayed or silent).
    Answered(Answer),
    /// A live seat, waited for: when its message was written (or the wait began), its deadline.
    Waiting(Instant, Instant),
    /// A built-in seat: its reply is computed once the live seats have their messages.
    Builtin,
}

/// A built-in bot's reply.
/// What a silent seat gives at its deadline.
fn silent_timeout(deadline: Instant) -> Received {
    let mut r = Received::failure(
        ExchangeOutcome::Timeout,
        format!("{SILENT_BOT} never answers"),
    );
    r.at = deadline;
    r
}

fn builtin_answer(bytes: Vec<u8>) -> Answer {
    Answer {
        outcome: ExchangeOutcome::Reply,
        bytes,
        truncated: false,
        time_us: None,
        detail: None,
        discarded: Vec::new(),
        recorded_stderr: NewStderr::default(),
    }
}

/// Read a live seat's reply to `ask` until `deadline`: a reply unit the ask does not accept (a
/// stale reply) is discarded and the seat read again; kept up to the number recorded, counted
/// beyond, so a flood holds no memory.
async fn read_reply(
    t: &mut Box<dyn Transport>,
    ask: &Ask,
    written: Instant,
    deadline: Instant,
    mut discarded: Discarded,
    watch: Option<Watch>,
) -> Answer {
    let mut stale = 0;
    let mut keep = |discarded: &mut Discarded, bytes: Vec<u8>| {
        if stale < DISCARDED_KEPT {
            stale += 1;
            discarded.units.push(bytes)
        } else {
            discarded.dropped += 1
        }
    };
    // The last unit not accepted, while the seat is given `patience` to send another.
    let mut held: Option<Received> = None;
    let received = loop {
        let until = match (&held, ask.patience) {
            (Some(h), Some(p)) => deadline.min(h.at + p),
            _ => deadline,
        };
        let r = read_watched(t.as_mut(), until, watch).await;
        let stale_unit = match &ask.accept {
            Some(f) => r.outcome == ExchangeOutcome::Reply && !r.truncated && !(f.0)(&r.bytes),
            None => false,
        };
        if stale_unit {
            let older = match ask.patience {
                Some(_) => {
                    t.ack_now();
                    held.replace(r)
                }
                None => Some(r),
            };
            if let Some(older) = older {
                keep(&mut discarded, older.bytes);
            }
            continue;
        }
        match held.take() {
            // Nothing more within the patience or by the deadline, or the seat failed: the
            // last unit it sent is the reply (a failure shows at its next request).
            Some(h) if r.outcome != ExchangeOutcome::Reply => break h,
            // Accepted: the unit held was stale after all.
            Some(h) => keep(&mut discarded, h.bytes),
            None => {}
        }
        break r;
    };
    let mut answer = answer_of(received, Some(written), ask);
    answer.discarded = discarded.summary();
    answer
}

/// How `check` watches a seat while its reply is owed ([`SeatClock::stop_when_waiting`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Watch {
    pgid: i32,
    after: Duration,
    /// A client's: the local port of its connection to the seat, the one socket whose read is
    /// a read of its input (see `kakehiki_agent::activity`).
    input: Option<u16>,
    /// Replies are whole messages ([`Transport::messages`]).
    messages: bool,
}

impl Watch {
    /// The watch of a bot's process group under `clock`'s rule, if it has one; `input`: the
    /// client's end of its seat connection (its peer address as the referee sees it).
    pub(crate) fn of(
        clock: Option<&SeatClock>,
        pgid: Option<i32>,
        input: Option<std::net::SocketAddr>,
    ) -> Option<Watch> {
        Some(Watch {
            after: clock?.waiting_stop()?,
            pgid: pgid?,
            input: input.map(|a| a.port()),
            messages: false,
        })
    }
}

fn watch_of(clock: Option<&SeatClock>, t: &dyn Transport) -> Option<Watch> {
    let messages = t.messages();
    Watch::of(clock, t.pgid(), t.peer()).map(|w| Watch { messages, ..w })
}

/// How often a watched seat's processes are looked at.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// What [`read_watched`] reads from: a seat's transport, or a connection read before its seat
/// exists (AIWolf's NAME). Its read must be cancel-safe: nothing read is lost when it is dropped.
pub(crate) trait ReadUnit {
    /// The next reply unit, by `deadline`.
    fn read_unit(&mut self, deadline: Instant) -> BoxFuture<'_, Received>;
}

impl ReadUnit for dyn Transport {
    fn read_unit(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        self.read(deadline)
    }
}

/// The next reply unit by `deadline`; with a watch, sooner once the bot waits for input (a
/// timeout whose detail is [`WAITING_FOR_INPUT`], with what arrived so far).
pub(crate) async fn read_watched(
    r: &mut (impl ReadUnit + ?Sized),
    deadline: Instant,
    watch: Option<Watch>,
) -> Received {
    let Some(w) = watch else {
        return r.read_unit(deadline).await;
    };
    let got = tokio::select! {
        got = r.read_unit(deadline) => Some(got),
        () = waiting_for_input(w) => None,
    };
    match got {
        Some(got) => got,
        // The read given up was cancel-safe: what arrived so far (a line without its newline)
        // is read at once.
        None => {
            let mut r = r.read_unit(Instant::now()).await;
            if r.outcome == ExchangeOutcome::Timeout {
                r.detail = Some(match w.messages {
                    false => WAITING_FOR_INPUT.to_string(),
                    true => format!("{WAITING_FOR_INPUT}{WAITING_FOR_A_MESSAGE}"),
                });
            }
            r
        }
    }
}

/// Resolves once the watched bot has been asleep reading its input, using no CPU, for
/// `w.after`. Never resolves where its processes cannot be read.
async fn waiting_for_input(w: Watch) {
    let mut since: Option<(Instant, u64)> = None;
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let now = Instant::now();
        match kakehiki_agent::activity::group_activity(w.pgid, w.input) {
            Some(a) if a.reading_input && a.all_asleep => match since {
                Some((at, ticks)) if ticks == a.cpu_ticks => {
                    if now.saturating_duration_since(at) >= w.after {
                        return;
                    }
                }
                _ => since = Some((now, a.cpu_ticks)),
            },
            _ => since = None,
        }
    }
}

/// A timeout's detail when `check` stopped waiting for a bot that waits for input.
pub const WAITING_FOR_INPUT: &str = "check stopped waiting: your bot was waiting to read its input (asleep, using no CPU), so it would never have replied";

/// What a WebSocket agent's such timeout says after [`WAITING_FOR_INPUT`]: a message is sent
/// whole, so nothing waits unflushed; the agent reads on instead of answering.
pub const WAITING_FOR_A_MESSAGE: &str = "; nothing arrived: your agent is waiting for another message before it answers this request (answer each request before reading the next message)";

/// What such a timeout adds after [`WAITING_FOR_INPUT`]: with nothing arrived, the reply is in
/// the bot's output buffer (or was never written).
pub const WAITING_NOTHING_ARRIVED: &str = "; nothing arrived: a reply written but not flushed stays in your bot's output buffer; flush after each reply";

/// How a timeout is told: `within N ms` (or the limit alone, when `check` stopped waiting
/// first) and what follows it: why check stopped, what arrived without its newline, or that
/// nothing did.
pub(crate) fn timeout_words(
    limit_ms: u128,
    partial: &[u8],
    detail: Option<&str>,
    silent: bool,
) -> (String, String) {
    match detail {
        Some(d) if d.starts_with(WAITING_FOR_INPUT) && d.len() > WAITING_FOR_INPUT.len() => {
            (format!("(its limit: {limit_ms} ms)"), format!(": {d}"))
        }
        Some(d) if d == WAITING_FOR_INPUT => (
            format!("(its limit: {limit_ms} ms)"),
            match partial.is_empty() {
                true => format!(": {d}{WAITING_NOTHING_ARRIVED}"),
                false => format!(": {d}{}", unterminated_hint(partial, silent)),
            },
        ),
        _ => (
            format!("within {limit_ms} ms"),
            unterminated_hint(partial, silent),
        ),
    }
}

/// What a live seat's timeout adds when nothing at all arrived: the bot may be slow, or its
/// reply may sit in its output buffer.
pub const NOTHING_ARRIVED: &str = ": nothing arrived while your bot was running (too slow, or a reply written but not flushed: flush after each reply)";

/// What a timeout's detail adds when the seat did write something, only without the line's
/// end: the beginner's mistake of a reply with no newline (or one the protocol's framing never
/// ended), named with what arrived and the fix.
fn unterminated_hint(partial: &[u8], silent: bool) -> String {
    if partial.is_empty() {
        return if silent {
            String::new()
        } else {
            NOTHING_ARRIVED.to_string()
        };
    }
    const SHOWN: usize = 60;
    let text = String::from_utf8_lossy(&partial[..partial.len().min(SHOWN)]);
    let more = if partial.len() > SHOWN { "..." } else { "" };
    format!(
        ": your bot wrote {text:?}{more} but no newline after it; end each reply with \"\\n\" and flush"
    )
}

fn answer_of(r: Received, written: Option<Instant>, ask: &Ask) -> Answer {
    let time_us = written.map(|w| r.at.saturating_duration_since(w).as_micros() as u64);
    let mut answer = Answer {
        outcome: r.outcome,
        bytes: r.bytes,
        truncated: r.truncated,
        time_us,
        detail: r.detail,
        discarded: Vec::new(),
        recorded_stderr: NewStderr::default(),
    };
    if answer.outcome == ExchangeOutcome::Timeout {
        answer.time_us = Some(ask.limit.as_micros() as u64);
        if ask.unterminated_is_reply && !answer.bytes.is_empty() {
            answer.outcome = ExchangeOutcome::Reply;
            answer.detail = Some(format!("{NO_TERMINATOR}: taken at the deadline"));
        }
    }
    answer
}

/// The seat of a spec that the table can make on its own (built-in, silent); `None` for the
/// seats whose transport the driver makes.
pub fn simple_seat(spec: &SeatSpec) -> Option<Seat> {
    match spec {
        SeatSpec::Builtin(name) => Some(Seat::builtin(name)),
        _ => None,
    }
}

#[cfg(test)]
mod deadline_tests {
    use super::*;

    #[test]
    fn a_seat_is_stopped_after_identical_errors_only_when_asked() {
        let fault = |t: &mut Table, detail: &str| {
            t.fault(0, "ply 3", SeatErrorKind::InvalidReply, detail);
        };
        let clock = SeatClock::default();
        let mut t = Table::new(vec![Seat::Silent], ReplayLog::new()).clocked(clock.clone());
        for _ in 0..5 {
            fault(&mut t, "the same");
        }
        assert_eq!(t.down(0), None, "a contest's match is never stopped");

        let clock = SeatClock::default();
        clock.stop_after_identical(3);
        let mut t = Table::new(vec![Seat::Silent], ReplayLog::new()).clocked(clock.clone());
        fault(&mut t, "one");
        fault(&mut t, "two");
        fault(&mut t, "one");
        assert_eq!(t.down(0), None, "two identical errors and another");
        assert!(!clock.stopped(0));
        fault(&mut t, "one");
        assert_eq!(t.down(0), Some(STOPPED_AFTER_IDENTICAL));
        assert!(clock.stopped(0));
    }

    #[tokio::test]
    async fn a_far_deadline_waits_for_the_future_and_a_near_one_ends_it() {
        let slow = async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            7
        };
        assert_eq!(by_deadline(far_deadline(), slow).await, Some(7));
        let near = Instant::now() + Duration::from_millis(20);
        assert_eq!(by_deadline(near, std::future::pending::<()>()).await, None);
        // Ready at once: no timer, whatever the deadline (even one already past).
        assert_eq!(by_deadline(Instant::now(), async { 3 }).await, Some(3));
    }
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[test]
    fn the_clock_adds_answers_and_counts_a_pending_request_until_it_is_answered() {
        let c = SeatClock::default();
        c.add(1, 500);
        c.add(1, 250);
        assert_eq!(c.totals(3), vec![0, 750, 0]);
        c.start(2, Instant::now() - Duration::from_millis(40));
        let t = c.totals(3);
        assert!(t[2] >= 40_000, "{t:?}");
        c.add(2, 7);
        assert_eq!(
            c.totals(3),
            vec![0, 750, 7],
            "the answer replaces the pending time"
        );
    }
}

#[cfg(test)]
mod stderr_tests {
    use super::*;

    /// A seat answering from a script: each read takes the next reply (`None`: the program
    /// exited); each write, then the end, takes the next piece of stderr.
    struct Script {
        replies: VecDeque<Option<&'static str>>,
        stderr: VecDeque<(&'static str, u64)>,
        writes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Transport for Script {
        fn write<'a>(&'a mut self, _: &'a [u8], _: Instant) -> BoxFuture<'a, Result<(), Received>> {
            self.writes
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async { Ok(()) })
        }

        fn read(&mut self, _: Instant) -> BoxFuture<'_, Received> {
            let r = match self.replies.pop_front().flatten() {
                Some(reply) => Received {
                    outcome: ExchangeOutcome::Reply,
                    bytes: reply.into(),
                    truncated: false,
                    at: Instant::now(),
                    detail: None,
                },
                None => Received::failure(ExchangeOutcome::Crash, "exit code 1"),
            };
            Box::pin(async move { r })
        }

        fn take_stderr(&mut self) -> NewStderr {
            let (text, dropped) = self.stderr.pop_front().unwrap_or_default();
            NewStderr {
                text: text.into(),
                dropped,
            }
        }

        fn kill(&mut self) {}

        fn finish(mut self: Box<Self>, _: Duration) -> BoxFuture<'static, Ending> {
            let mut end = Ending::of(None, "the whole tail".into());
            end.stderr_rest = self.take_stderr();
            Box::pin(async move { end })
        }
    }

    fn header_line() -> serde_json::Value {
        serde_json::json!({"event":"header","format":"t@1","engine":"0","game":"t",
            "rules":"t","seed":1,"seats":[],"params":null})
    }

    fn header() -> ReplayLog {
        let mut log = ReplayLog::new();
        log.push(&header_line());
        log
    }

    fn ask(turn: u32) -> Ask {
        Ask::new(
            0,
            format!("turn {turn}"),
            "move",
            b"go\n".to_vec(),
            Duration::from_secs(1),
        )
    }

    /// The flow both the live and the replayed table go through: asks, an event, a message that
    /// expects no reply, a crash, a request to the crashed seat, and the header put before it
    /// all (as Geister does once its seats have connected).
    async fn flow(table: &mut Table) {
        let builtin = |_: usize, _: &Ask| b"b".to_vec();
        for turn in 1..=4 {
            if turn == 2 {
                table
                    .tell(0, "turn 2", "info", b"x\n".to_vec(), Duration::from_secs(1))
                    .await;
            }
            let asks = vec![
                ask(turn),
                Ask {
                    seat: 1,
                    ..ask(turn)
                },
            ];
            table.ask(asks, builtin).await;
            table.record(&serde_json::json!({"event": "turn", "n": turn}));
        }
        table.log().push_front(&header_line());
    }

    fn stderr_of(text: &str, at: &str) -> (Option<String>, u64) {
        let e: SeatExchange = text
            .lines()
            .filter_map(|l| serde_json::from_str::<SeatExchange>(l).ok())
            .find(|e| e.seat == 0 && e.at == at)
            .unwrap_or_else(|| panic!("no exchange at {at}: {text}"));
        (e.stderr, e.stderr_dropped)
    }

    #[tokio::test]
    async fn each_exchange_gets_the_stderr_taken_until_the_seats_next_request() {
        let writes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let script = Script {
            replies: [Some("1"), Some("2"), None].into_iter().collect(),
            // Taken at: turn 1's request (before any exchange), turn 2's message, turn 2's
            // request, turn 3's request, and the end (turn 4 finds the seat down: no write).
            stderr: [
                ("boot\n", 0),
                ("after 1\n", 0),
                ("thinking 1\n", 0),
                ("", 5),
                ("Traceback: boom\n", 0),
            ]
            .into_iter()
            .collect(),
            writes: writes.clone(),
        };
        let seats = vec![Seat::Live(Box::new(script)), Seat::Builtin];
        let mut table = Table::new(seats, ReplayLog::new());
        flow(&mut table).await;
        let done = table.finish(Duration::ZERO).await;
        assert_eq!(writes.load(std::sync::atomic::Ordering::SeqCst), 4);
        let text = done.log.to_text();
        assert_eq!(
            stderr_of(&text, "turn 1"),
            (Some("boot\nafter 1\nthinking 1\n".into()), 0)
        );
        assert_eq!(stderr_of(&text, "turn 2"), (None, 5));
        assert_eq!(
            stderr_of(&text, "turn 3"),
            (Some("Traceback: boom\n".into()), 0),
            "the crash keeps what came after it"
        );
        assert_eq!(
            stderr_of(&text, "turn 4"),
            (None, 0),
            "never reached the seat"
        );
        let builtin: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(r#""seat":1,"#))
            .collect();
        assert_eq!(builtin.len(), 4, "{text}");
        assert!(builtin.iter().all(|l| !l.contains("stderr")), "{text}");
        let first = text.lines().next().unwrap_or_default();
        assert!(first.contains(r#""event":"header""#), "{text}");
        assert!(text.contains(r#""stderr":"the whole tail""#), "{text}");

        // A re-run writes each exchange's stderr as recorded: the same bytes.
        let parsed = ReplayLog::parse(&text).unwrap();
        let mut again = Table::replayed(&parsed, 2, ReplayLog::new()).unwrap();
        flow(&mut again).await;
        assert_eq!(again.finish(Duration::ZERO).await.log.to_text(), text);
    }

    #[tokio::test]
    async fn stderr_after_the_log_was_replaced_goes_on_the_next_exchange() {
        let script = Script {
            replies: [Some("1"), Some("2")].into_iter().collect(),
            stderr: [("", 0), ("late\n", 0), ("", 0)].into_iter().collect(),
            writes: Default::default(),
        };
        let mut table = Table::new(vec![Seat::Live(Box::new(script))], header());
        table.ask_one(ask(1), |_, _| Vec::new()).await;
        table.log();
        // The next game of a set: a new replay.
        *table.log() = header();
        table.ask_one(ask(2), |_, _| Vec::new()).await;
        let text = table.finish(Duration::ZERO).await.log.to_text();
        assert_eq!(stderr_of(&text, "turn 2"), (Some("late\n".into()), 0));
        assert!(!text.contains("turn 1"), "{text}");
    }
}
