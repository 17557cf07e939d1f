//! The driver of `geister` (spec `geister.md`): built-in bots, stdin/stdout bots (`cmd:`), TCP
//! clients that connect on their own (`tcp`) and TCP clients the referee launches (`tcp-cmd:`).
//!
//! All the game's logic — rules, replies, clocks, faults, replay events, compatible log — lives in
//! the pure [`kakehiki_geister::Session`]; this driver only moves bytes, reads the clock and feeds
//! the session what happened with the time in milliseconds since the game started. A re-run feeds
//! the recorded inputs to a fresh session, which therefore reproduces the replay byte for byte.

pub mod net;
pub mod serve;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kakehiki_agent::{BotProcess, ClientProcess, ReadOutcome};
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{seeded_rng, Bot, GameType, MatchReport, SeatError, SeatErrorKind, SeatSpec};
use kakehiki_geister::bots::make_bot;
use kakehiki_geister::engine::{outcome_of, Action, EndReason, Geister};
use kakehiki_geister::rules::RULE_KEYS;
use kakehiki_geister::session::{line_from_record, Disposition, Event, FaultKind, TurnOutcome};
use kakehiki_geister::wire::{frame, Line, LineBuffer, ServerMsg};
use kakehiki_geister::{Out, Rules, Session, BUILTIN_BOTS};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
pub use net::{ConnQueue, Table};

/// Replay format name.
pub const FORMAT: &str = "kakehiki-geister/1";

/// Driver options besides the rule parameters ([`RULE_KEYS`]).
pub const DRIVER_KEYS: &[&str] = &["host", "port0", "port1", "log_dir"];

/// The driver.
pub struct GeisterDriver;

/// `geister`.
pub static GEISTER: GeisterDriver = GeisterDriver;

/// Per seat: how it was connected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatInfo {
    /// `builtin`, `stdio` or `tcp`.
    pub transport: String,
    /// The TCP peer address, once connected.
    pub peer: Option<String>,
}

/// The header's `params`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct HeaderParams {
    rules: Rules,
    seats: Vec<SeatInfo>,
    /// Wall-clock start (ms since the Unix epoch, UTC).
    started_unix_ms: u64,
}

/// Connections to a seat's port closed at once because its queue was full
/// ([`crate::accept::CappedAcceptor`]): recorded once per seat and game, after the stderr events,
/// and reported as an `excess_connections` seat error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ConnectionsEvent {
    event: String,
    seat: usize,
    excess: u64,
    cap: usize,
}

impl ConnectionsEvent {
    fn error(&self) -> SeatError {
        SeatError { at: String::new(),
            turn: 0,
            kind: SeatErrorKind::ExcessConnections,
            detail: format!(
                "{} connections to the seat's port closed at once: {} were already waiting (the cap)",
                self.excess, self.cap
            ),
        }
    }
}

/// Record the excess connections of each seat's queue (if any) in `record`.
fn add_excess(record: &mut MatchRecord, queues: &[Option<ConnQueue>; 2]) {
    let counts = [0, 1].map(|s| queues[s].as_ref().map_or((0, 0), |q| (q.excess(), q.cap())));
    add_excess_counts(record, counts);
}

/// Record `(excess, cap)` of each seat's port, where the excess is not 0.
pub(crate) fn add_excess_counts(record: &mut MatchRecord, counts: [(u64, usize); 2]) {
    for (seat, (excess, cap)) in counts.into_iter().enumerate() {
        if excess > 0 {
            add_connections_event(
                record,
                ConnectionsEvent {
                    event: "connections".into(),
                    seat,
                    excess,
                    cap,
                },
            );
        }
    }
}

fn add_connections_event(record: &mut MatchRecord, e: ConnectionsEvent) {
    if let Some(s) = record.report.seats.get_mut(e.seat) {
        s.errors.push(e.error());
    }
    record.replay.push(&e);
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct StderrEvent {
    event: String,
    seat: usize,
    text: String,
}

/// How one seat is played, before the game starts.
pub enum SeatPlan<'a> {
    Builtin(Box<dyn Bot<Geister> + Send>),
    /// A stdin/stdout process, or why it could not be started.
    Pipe(Result<BotProcess, String>),
    /// A TCP seat: the queue its connection comes from, and the client process launched for it
    /// (`tcp-cmd:`), or why that could not be started.
    Tcp {
        queue: &'a mut ConnQueue,
        client: Option<Result<ClientProcess, String>>,
    },
    /// A TCP client already connected (a table that waited for both, or a connection kept from
    /// the previous game, spec §3.8): assigned at once.
    Connected(KeptConn),
}

/// A client's TCP connection between games: accepted and not yet assigned, or kept open after
/// a game for the next one (spec §3.8's several-games-per-connection extension).
pub struct KeptConn {
    read: OwnedReadHalf,
    write: OwnedWriteHalf,
    peer: SocketAddr,
}

impl KeptConn {
    /// A freshly accepted connection (TCP_NODELAY is set, spec §3.7).
    pub fn new(stream: TcpStream, peer: SocketAddr) -> KeptConn {
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        KeptConn { read, write, peer }
    }

    /// The client's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Resolves when the client has closed the connection (EOF with nothing before it); never
    /// when it sent something (kept for the next game to read). Consumes nothing: cancel-safe.
    pub async fn left(&self) {
        let mut b = [0u8; 1];
        if let Ok(1..) = self.read.as_ref().peek(&mut b).await {
            std::future::pending::<()>().await;
        }
    }

    /// Close it as at the end of a single-game connection: shut down our sending side, read
    /// and discard until EOF or `linger`.
    pub async fn close(mut self, linger: Duration) {
        let _ = self.write.shutdown().await;
        let until = Instant::now() + linger;
        let mut buf = [0u8; 4096];
        while let Ok(Ok(n)) = tokio::time::timeout_at(until, self.read.read(&mut buf)).await {
            if n == 0 {
                break;
            }
        }
    }
}

enum Io<'a> {
    Builtin(Box<dyn Bot<Geister> + Send>),
    Pipe(BotProcess),
    Waiting {
        queue: &'a mut ConnQueue,
        client: Option<ClientProcess>,
    },
    Tcp {
        read: OwnedReadHalf,
        write: OwnedWriteHalf,
        client: Option<ClientProcess>,
        buf: LineBuffer,
        eof: bool,
    },
    Gone {
        client: Option<ClientProcess>,
    },
}

enum SeatEvent {
    PipeLine(kakehiki_agent::Line),
    PipeClosed(String, bool),
    Connected(TcpStream, SocketAddr),
    ConnectTimeout,
    ClientExited(String),
    Bytes(Vec<u8>),
    Eof,
    NetError(String),
}

fn ms_since(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

/// Wait for what a pipe or a waiting TCP seat produces next; never resolves for other seats.
async fn seat_event(io: &mut Io<'_>, connect_deadline: Instant) -> SeatEvent {
    match io {
        Io::Pipe(p) => loop {
            match p
                .read_line(Instant::now() + Duration::from_secs(3600))
                .await
            {
                ReadOutcome::Line(l) => return SeatEvent::PipeLine(l),
                ReadOutcome::Timeout { .. } => continue,
                ReadOutcome::Closed { exit, .. } => {
                    return match exit {
                        Some(e) => SeatEvent::PipeClosed(format!("the bot exited ({e})"), true),
                        None => SeatEvent::PipeClosed("the bot closed its stdout".into(), false),
                    }
                }
                ReadOutcome::OutputLimit { bytes } => {
                    return SeatEvent::PipeClosed(
                        format!(
                            "the bot wrote {bytes} bytes, over the output cap, and was stopped"
                        ),
                        true,
                    )
                }
            }
        },
        Io::Waiting { queue, client } => {
            let mut poll = tokio::time::interval(Duration::from_millis(50));
            loop {
                tokio::select! {
                    c = queue.next(connect_deadline) => {
                        return match c {
                            Some((s, peer)) => SeatEvent::Connected(s, peer),
                            None => SeatEvent::ConnectTimeout,
                        };
                    }
                    _ = poll.tick() => {
                        if let Some(c) = client.as_mut() {
                            if let Some(e) = c.try_exit() {
                                return SeatEvent::ClientExited(format!("the client exited before connecting ({e})"));
                            }
                        }
                    }
                }
            }
        }
        Io::Tcp {
            read, eof: false, ..
        } => {
            let mut buf = [0u8; 4096];
            match read.read(&mut buf).await {
                Ok(0) => SeatEvent::Eof,
                Ok(n) => SeatEvent::Bytes(buf[..n].to_vec()),
                Err(e) => SeatEvent::NetError(e.to_string()),
            }
        }
        _ => std::future::pending().await,
    }
}

/// Read and discard what a finished TCP seat still sends, until EOF or `until`.
async fn drain(io: &mut Io<'_>, until: Instant) {
    if let Io::Tcp { read, eof, .. } = io {
        let mut buf = [0u8; 4096];
        while !*eof {
            match tokio::time::timeout_at(until, read.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => *eof = true,
            }
        }
    }
}

/// Everything fixed before a game starts.
pub struct GameSetup {
    pub rules: Rules,
    pub seed: u64,
    pub specs: [String; 2],
    /// Where to write the compatible log (spec §4.1), if anywhere.
    pub log_dir: Option<PathBuf>,
}

struct Runner<'a> {
    start: Instant,
    session: Session,
    io: [Io<'a>; 2],
    infos: [SeatInfo; 2],
    last_write: [Option<Instant>; 2],
    read_since_write: [bool; 2],
    pending: VecDeque<(usize, Line)>,
    /// Keep TCP connections open after the end message for the next game (spec §3.8).
    keep: bool,
}

impl<'a> Runner<'a> {
    fn now(&self) -> u64 {
        ms_since(self.start)
    }

    /// Write one message (pacing first); returns what the session says after a failed write.
    async fn deliver(&mut self, o: Out) -> Vec<Out> {
        let seat = o.seat;
        let pace = Duration::from_millis(self.session.rules().pace_ms);
        let paced = matches!(self.io[seat], Io::Pipe(_) | Io::Tcp { .. });
        if paced && !pace.is_zero() && !self.read_since_write[seat] {
            if let Some(last) = self.last_write[seat] {
                tokio::time::sleep_until(last + pace).await;
            }
        }
        let bytes = o.msg.to_bytes();
        let result: Result<(), String> = match &mut self.io[seat] {
            Io::Builtin(bot) => {
                match &o.msg {
                    ServerMsg::Set | ServerMsg::Mov(_) => {
                        let view = self.session.game().view(seat);
                        let text = match bot.act(seat, &view) {
                            Action::Place(r) => format!("SET:{}", r.labels()),
                            Action::Move(m) => format!("MOV:{}", m.wire()),
                        };
                        self.pending.push_back((seat, Line::Text(text)));
                    }
                    _ => {}
                }
                Ok(())
            }
            Io::Pipe(p) => p.send(&bytes).await.map_err(|e| e.to_string()),
            Io::Tcp { write, .. } => write.write_all(&bytes).await.map_err(|e| e.to_string()),
            Io::Waiting { .. } | Io::Gone { .. } => Ok(()),
        };
        self.last_write[seat] = Some(Instant::now());
        self.read_since_write[seat] = false;
        match result {
            Ok(()) => {
                if matches!(o.msg, ServerMsg::Mov(_)) {
                    let now = self.now();
                    self.session.clock_started(seat, now);
                }
                Vec::new()
            }
            Err(e) => {
                let now = self.now();
                self.session.fault(
                    seat,
                    FaultKind::WriteFailed,
                    &format!("write failed: {e}"),
                    now,
                )
            }
        }
    }

    fn take_bytes(&mut self, seat: usize, bytes: &[u8]) -> Vec<Out> {
        self.read_since_write[seat] = true;
        let lines = match &mut self.io[seat] {
            Io::Tcp { buf, .. } => buf.push(bytes),
            _ => Vec::new(),
        };
        let now = self.now();
        let mut outs = Vec::new();
        for l in lines {
            outs.extend(self.session.line(seat, &l, now));
        }
        outs
    }

    fn connected(&mut self, seat: usize, stream: TcpStream, peer: SocketAddr) -> Vec<Out> {
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        let client = match std::mem::replace(&mut self.io[seat], Io::Gone { client: None }) {
            Io::Waiting { client, .. } => client,
            _ => None,
        };
        self.io[seat] = Io::Tcp {
            read,
            write,
            client,
            buf: LineBuffer::new(),
            eof: false,
        };
        self.infos[seat].peer = Some(peer.to_string());
        let now = self.now();
        self.session.assign(seat, now)
    }

    fn connect_deadline(&self) -> Instant {
        self.start + Duration::from_millis(self.session.rules().connect_timeout_ms)
    }

    async fn run(&mut self, start_faults: Vec<(usize, FaultKind, String)>) {
        let mut outs: VecDeque<Out> = VecDeque::new();
        if !start_faults.is_empty() {
            outs.extend(self.session.faults(&start_faults, 0));
        }
        for seat in 0..2 {
            if matches!(self.io[seat], Io::Builtin(_) | Io::Pipe(_) | Io::Tcp { .. }) {
                outs.extend(self.session.assign(seat, 0));
            }
        }
        loop {
            while let Some(o) = outs.pop_front() {
                let more = self.deliver(o).await;
                outs.extend(more);
            }
            if self.session.is_over() {
                return;
            }
            if let Some((seat, line)) = self.pending.pop_front() {
                let now = self.now();
                outs.extend(self.session.line(seat, &line, now));
                continue;
            }
            let deadline = self
                .session
                .next_deadline()
                .map(|d| self.start + Duration::from_millis(d))
                .unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            let connect_deadline = self.connect_deadline();
            let [io0, io1] = &mut self.io;
            enum Woke {
                Seat(usize, SeatEvent),
                Deadline,
            }
            let woke = tokio::select! {
                e = seat_event(io0, connect_deadline) => Woke::Seat(0, e),
                e = seat_event(io1, connect_deadline) => Woke::Seat(1, e),
                _ = tokio::time::sleep_until(deadline) => Woke::Deadline,
            };
            let now = self.now();
            match woke {
                Woke::Seat(seat, SeatEvent::PipeLine(l)) => {
                    self.read_since_write[seat] = true;
                    let line = if l.truncated {
                        Line::TooLong
                    } else {
                        frame(&l.bytes)
                    };
                    outs.extend(self.session.line(seat, &line, now));
                }
                Woke::Seat(seat, SeatEvent::PipeClosed(detail, exited)) => {
                    let kind = if exited {
                        FaultKind::Exit
                    } else {
                        FaultKind::Disconnect
                    };
                    outs.extend(self.session.fault(seat, kind, &detail, now));
                    self.retire(seat);
                }
                Woke::Seat(seat, SeatEvent::Connected(stream, peer)) => {
                    outs.extend(self.connected(seat, stream, peer));
                }
                Woke::Seat(_, SeatEvent::ConnectTimeout) => {
                    let late: Vec<(usize, FaultKind, String)> = (0..2)
                        .filter(|&s| matches!(self.io[s], Io::Waiting { .. }))
                        .map(|s| {
                            let ms = self.session.rules().connect_timeout_ms;
                            (
                                s,
                                FaultKind::ConnectTimeout,
                                format!("no connection within {ms} ms"),
                            )
                        })
                        .collect();
                    outs.extend(self.session.faults(&late, now));
                }
                Woke::Seat(seat, SeatEvent::ClientExited(detail)) => {
                    outs.extend(self.session.fault(seat, FaultKind::Exit, &detail, now));
                }
                Woke::Seat(seat, SeatEvent::Bytes(b)) => outs.extend(self.take_bytes(seat, &b)),
                Woke::Seat(seat, SeatEvent::Eof) => {
                    outs.extend(self.session.fault(
                        seat,
                        FaultKind::Disconnect,
                        "the client closed the connection",
                        now,
                    ));
                    self.retire(seat);
                }
                Woke::Seat(seat, SeatEvent::NetError(e)) => {
                    outs.extend(self.session.fault(
                        seat,
                        FaultKind::Disconnect,
                        &format!("connection error: {e}"),
                        now,
                    ));
                    self.retire(seat);
                }
                Woke::Deadline => outs.extend(self.session.tick(now)),
            }
        }
    }

    /// A seat whose connection or process is gone: stop reading it.
    fn retire(&mut self, seat: usize) {
        let old = std::mem::replace(&mut self.io[seat], Io::Gone { client: None });
        self.io[seat] = match old {
            Io::Tcp { client, .. } | Io::Waiting { client, .. } => Io::Gone { client },
            Io::Pipe(mut p) => {
                p.kill();
                Io::Pipe(p)
            }
            other => other,
        };
    }

    /// After the end: close our sending side, drain until EOF or `linger_ms`, stop every
    /// process; returns the captured stderr of process seats.
    async fn finish(&mut self) -> ([Option<String>; 2], [Option<KeptConn>; 2]) {
        let linger = Instant::now() + Duration::from_millis(self.session.rules().linger_ms);
        let mut kept: [Option<KeptConn>; 2] = [None, None];
        if self.keep {
            for (seat, io) in self.io.iter_mut().enumerate() {
                if matches!(
                    io,
                    Io::Tcp {
                        eof: false,
                        client: None,
                        ..
                    }
                ) {
                    if let Io::Tcp { read, write, .. } =
                        std::mem::replace(io, Io::Gone { client: None })
                    {
                        let peer = self.infos[seat]
                            .peer
                            .as_deref()
                            .and_then(|p| p.parse().ok())
                            .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
                        kept[seat] = Some(KeptConn { read, write, peer });
                    }
                }
            }
        }
        for io in self.io.iter_mut() {
            match io {
                Io::Tcp { write, .. } => {
                    let _ = write.shutdown().await;
                }
                Io::Pipe(p) => p.close_stdin(),
                _ => {}
            }
        }
        // Drain TCP seats until EOF (or the linger deadline), both at once.
        let [io0, io1] = &mut self.io;
        tokio::join!(drain(io0, linger), drain(io1, linger));
        let mut texts: [Option<String>; 2] = [None, None];
        for (seat, io) in self.io.iter_mut().enumerate() {
            let old = std::mem::replace(io, Io::Gone { client: None });
            texts[seat] = match old {
                Io::Pipe(mut p) => {
                    // Wait for the process to go (stdout EOF) within the linger time.
                    while let ReadOutcome::Line(_) = p.read_line(linger).await {}
                    let (_, text) = p.finish_with_stderr(Duration::from_millis(10)).await;
                    Some(text)
                }
                Io::Tcp {
                    client: Some(c), ..
                }
                | Io::Gone { client: Some(c) }
                | Io::Waiting {
                    client: Some(c), ..
                } => {
                    let wait = linger.saturating_duration_since(Instant::now());
                    let mut c = c;
                    let _ = tokio::time::timeout(wait, async {
                        while c.try_exit().is_none() {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    })
                    .await;
                    let (_, mut text, out) = c.finish_with_output(Duration::from_millis(10)).await;
                    if !out.is_empty() {
                        text.push_str("\n[stdout]\n");
                        text.push_str(&out);
                    }
                    Some(text)
                }
                _ => None,
            };
        }
        (texts, kept)
    }
}

/// Play one game with the given seats. Never fails: seat failures are recorded.
pub async fn run_game(setup: &GameSetup, plans: [SeatPlan<'_>; 2]) -> MatchRecord {
    run_game_keeping(setup, plans, false).await.0
}

/// Play one game; with `keep`, the TCP connections still open after the end message are not
/// closed but returned, for the next game on the same connection (spec §3.8).
pub async fn run_game_keeping(
    setup: &GameSetup,
    plans: [SeatPlan<'_>; 2],
    keep: bool,
) -> (MatchRecord, [Option<KeptConn>; 2]) {
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let start = Instant::now();
    let mut start_faults = Vec::new();
    let mut infos: [SeatInfo; 2] = std::array::from_fn(|_| SeatInfo {
        transport: String::new(),
        peer: None,
    });
    let [p0, p1] = plans;
    let io = [
        open_seat(0, p0, &mut infos, &mut start_faults),
        open_seat(1, p1, &mut infos, &mut start_faults),
    ];
    let mut runner = Runner {
        start,
        session: Session::new(setup.rules.clone()),
        io,
        infos,
        last_write: [None; 2],
        read_since_write: [false; 2],
        pending: VecDeque::new(),
        keep,
    };
    runner.run(start_faults).await;
    let (stderr, kept) = runner.finish().await;
    let params = HeaderParams {
        rules: setup.rules.clone(),
        seats: runner.infos.to_vec(),
        started_unix_ms,
    };
    if let Some(dir) = &setup.log_dir {
        write_compat_log(dir, &runner.session, started_unix_ms);
    }
    let stderr_events: Vec<StderrEvent> = stderr
        .into_iter()
        .enumerate()
        .filter_map(|(seat, t)| {
            t.map(|text| StderrEvent {
                event: "stderr".into(),
                seat,
                text,
            })
        })
        .collect();
    let rec = record(
        setup.seed,
        &setup.specs,
        &params,
        &runner.session,
        &stderr_events,
    );
    (rec, kept)
}

fn open_seat<'a>(
    seat: usize,
    plan: SeatPlan<'a>,
    infos: &mut [SeatInfo; 2],
    start_faults: &mut Vec<(usize, FaultKind, String)>,
) -> Io<'a> {
    match plan {
        SeatPlan::Builtin(bot) => {
            infos[seat].transport = "builtin".into();
            Io::Builtin(bot)
        }
        SeatPlan::Pipe(Ok(p)) => {
            infos[seat].transport = "stdio".into();
            Io::Pipe(p)
        }
        SeatPlan::Pipe(Err(e)) => {
            infos[seat].transport = "stdio".into();
            start_faults.push((seat, FaultKind::Exit, format!("cannot start the bot: {e}")));
            Io::Gone { client: None }
        }
        SeatPlan::Connected(c) => {
            infos[seat].transport = "tcp".into();
            infos[seat].peer = Some(c.peer.to_string());
            Io::Tcp {
                read: c.read,
                write: c.write,
                client: None,
                buf: LineBuffer::new(),
                eof: false,
            }
        }
        SeatPlan::Tcp { queue, client } => {
            infos[seat].transport = "tcp".into();
            match client {
                Some(Err(e)) => {
                    start_faults.push((
                        seat,
                        FaultKind::Exit,
                        format!("cannot start the client: {e}"),
                    ));
                    Io::Gone { client: None }
                }
                Some(Ok(c)) => Io::Waiting {
                    queue,
                    client: Some(c),
                },
                None => Io::Waiting {
                    queue,
                    client: None,
                },
            }
        }
    }
}

/// The compatible log's text (spec §4.1): LF line ends.
pub fn compat_log_text(session: &Session) -> String {
    let mut s = String::new();
    for l in session.log_lines() {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// `log-YYYY-MM-DD-HH-mm-ss-SSS` for a UTC time in ms since the epoch.
pub fn log_file_stem(unix_ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms);
    // `2018-03-05T12:34:56.789Z` → `log-2018-03-05-12-34-56-789`
    let stamp = humantime::format_rfc3339_millis(t).to_string();
    let digits = stamp.trim_end_matches('Z').replace(['T', ':', '.'], "-");
    format!("log-{digits}")
}

fn write_compat_log(dir: &std::path::Path, session: &Session, started_unix_ms: u64) {
    let at = started_unix_ms + session.first_set_at().unwrap_or(0);
    let stem = log_file_stem(at);
    let text = compat_log_text(session);
    if kakehiki_core::private_files::create_dir_all(dir).is_err() {
        return;
    }
    for n in 0..1000 {
        let name = if n == 0 {
            format!("{stem}.txt")
        } else {
            format!("{stem}-{n}.txt")
        };
        let path = dir.join(name);
        match kakehiki_core::private_files::create_new(&path) {
            Ok(mut f) => {
                use std::io::Write;
                let _ = f.write_all(text.as_bytes());
                return;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return,
        }
    }
}

/// Seat errors, derived from the session's events.
fn seat_errors(events: &[Event]) -> [Vec<SeatError>; 2] {
    let mut errors: [Vec<SeatError>; 2] = [Vec::new(), Vec::new()];
    for e in events {
        match e {
            Event::Set {
                seat,
                raw,
                accepted: false,
                reason,
                ..
            } => errors[*seat].push(SeatError {
                at: String::new(),
                turn: 0,
                kind: SeatErrorKind::InvalidReply,
                detail: format!(
                    "placement {:?} refused: {}",
                    raw.as_deref().unwrap_or("<line over 256 bytes>"),
                    reason.as_deref().unwrap_or("")
                ),
            }),
            Event::Turn {
                ply,
                seat,
                raw,
                outcome,
                reason,
                elapsed_ms,
                ..
            } => {
                let detail = |what: &str| {
                    format!(
                        "{what} {:?}: {}",
                        raw.as_deref().unwrap_or("<line over 256 bytes>"),
                        reason.as_deref().unwrap_or("")
                    )
                };
                let err = match outcome {
                    TurnOutcome::Move => None,
                    TurnOutcome::Illegal => {
                        Some((SeatErrorKind::IllegalAction, detail("illegal move")))
                    }
                    TurnOutcome::Malformed => {
                        Some((SeatErrorKind::InvalidReply, detail("malformed command")))
                    }
                    TurnOutcome::Timeout => Some((
                        SeatErrorKind::Timeout,
                        format!(
                            "{} (waited {elapsed_ms} ms)",
                            reason.as_deref().unwrap_or("no command in time")
                        ),
                    )),
                };
                if let Some((kind, detail)) = err {
                    errors[*seat].push(SeatError {
                        at: String::new(),
                        turn: *ply,
                        kind,
                        detail,
                    });
                }
            }
            Event::Line {
                seat,
                raw,
                disposition: d @ (Disposition::OutOfTurn | Disposition::TooLong),
                ..
            } => errors[*seat].push(SeatError {
                at: String::new(),
                turn: 0,
                kind: SeatErrorKind::ProtocolError,
                detail: match d {
                    Disposition::TooLong => "a line over 256 bytes out of turn (NG)".to_string(),
                    _ => format!(
                        "command {:?} out of turn (NG)",
                        raw.as_deref().unwrap_or("")
                    ),
                },
            }),
            Event::Fault {
                seat, kind, detail, ..
            } => {
                let k = match kind {
                    FaultKind::Disconnect => SeatErrorKind::Disconnect,
                    FaultKind::Exit | FaultKind::WriteFailed => SeatErrorKind::Crash,
                    FaultKind::SetTimeout | FaultKind::ConnectTimeout => SeatErrorKind::NotReady,
                };
                errors[*seat].push(SeatError {
                    at: String::new(),
                    turn: 0,
                    kind: k,
                    detail: detail.clone(),
                });
            }
            _ => {}
        }
    }
    errors
}

fn record(
    seed: u64,
    specs: &[String; 2],
    params: &HeaderParams,
    session: &Session,
    stderr: &[StderrEvent],
) -> MatchRecord {
    let rules_name = params.rules.name.clone();
    let mut log = ReplayLog::new();
    log.push(&ReplayHeader {
        event: "header".into(),
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        game: "geister".into(),
        rules: rules_name.clone(),
        seed,
        seats: specs.to_vec(),
        params: serde_json::to_value(params).unwrap_or_default(),
    });
    for e in session.events() {
        log.push(e);
    }
    for e in stderr {
        log.push(e);
    }
    let end = session
        .game()
        .end()
        .copied()
        .unwrap_or(kakehiki_geister::End {
            winner: None,
            reason: EndReason::DoubleForfeit,
            scores: None,
        });
    let outcome = outcome_of(&end);
    let errors = seat_errors(session.events());
    let mut report = MatchReport::new(
        "geister",
        &rules_name,
        seed,
        &outcome,
        specs.iter().cloned().zip(errors).collect(),
    );
    report.everyone_lost = end.reason == EndReason::DoubleForfeit;
    report
        .extra
        .insert("end".into(), serde_json::json!(end.reason.report_name()));
    report
        .extra
        .insert("reason".into(), serde_json::json!(end.reason.as_str()));
    report
        .extra
        .insert("plies".into(), serde_json::json!(session.game().ply()));
    if let Some(s) = end.scores {
        report
            .extra
            .insert("end_scores".into(), serde_json::json!(s));
    }
    for (seat, info) in params.seats.iter().enumerate() {
        if let Some(sr) = report.seats.get_mut(seat) {
            sr.extra
                .insert("transport".into(), serde_json::json!(info.transport));
        }
    }
    MatchRecord {
        report,
        replay: log,
    }
}

/// Rules from the spec's rule set and options.
pub fn rules_from(spec: &MatchSpec) -> Result<Rules, RefereeError> {
    let name = spec.rules.clone().unwrap_or_else(|| "gpw".into());
    let mut rules = Rules::named(&name).map_err(|_| RefereeError::UnknownRules {
        game: "geister".into(),
        rules: name.clone(),
        expected: "gpw, seed".into(),
    })?;
    for (k, v) in &spec.options {
        if RULE_KEYS.contains(&k.as_str()) {
            rules.set(k, v).map_err(|e| RefereeError::BadOption {
                key: k.clone(),
                value: v.clone(),
                expected: e.to_string(),
            })?;
        }
    }
    Ok(rules)
}

/// Replace `{host}` and `{port}` in a client's command line.
pub fn client_argv(argv: &[String], addr: SocketAddr) -> Vec<String> {
    argv.iter()
        .map(|a| {
            a.replace("{host}", &addr.ip().to_string())
                .replace("{port}", &addr.port().to_string())
        })
        .collect()
}

fn builtin(name: &str, seed: u64, seat: usize) -> Option<Box<dyn Bot<Geister> + Send>> {
    make_bot(name, seeded_rng(seed, &format!("seat-{seat}"))).ok()
}

impl GeisterDriver {
    fn check(&self, spec: &MatchSpec) -> Result<Rules, RefereeError> {
        let mut known: Vec<&str> = RULE_KEYS.to_vec();
        known.extend_from_slice(DRIVER_KEYS);
        spec.check_option_keys(&known)?;
        let rules = rules_from(spec)?;
        if spec.seats.len() != 2 {
            return Err(RefereeError::SeatCount {
                game: "geister".into(),
                expected: "2".into(),
                got: spec.seats.len(),
            });
        }
        for (seat, s) in spec.seats.iter().enumerate() {
            if let SeatSpec::Builtin(b) = s {
                if !BUILTIN_BOTS.contains(&b.as_str()) {
                    return Err(RefereeError::UnknownBot {
                        game: "geister".into(),
                        seat,
                        name: b.clone(),
                        expected: BUILTIN_BOTS.join(", "),
                    });
                }
            }
        }
        Ok(rules)
    }

    async fn play_async(&self, spec: &MatchSpec) -> Result<MatchRecord, RefereeError> {
        let rules = self.check(spec)?;
        let host: String = spec.option(
            "host",
            "127.0.0.1".to_string(),
            "a host name or address to listen on",
        )?;
        let ports = [
            spec.option("port0", 10000u16, "a TCP port number")?,
            spec.option("port1", 10001u16, "a TCP port number")?,
        ];
        let log_dir: Option<PathBuf> = spec.options.get("log_dir").map(PathBuf::from);
        // Listeners first: a port in use means the match cannot be set up.
        let mut queues: [Option<ConnQueue>; 2] = [None, None];
        let mut clients: [Option<Result<ClientProcess, String>>; 2] = [None, None];
        for (seat, s) in spec.seats.iter().enumerate() {
            match s {
                SeatSpec::Tcp => {
                    let q = ConnQueue::bind(&host, ports[seat]).await?;
                    spec.on_listen.notify(seat, q.local_addr());
                    queues[seat] = Some(q);
                }
                // The client gets a network of its own holding only its seat's listener, on
                // the contest's port for its seat.
                SeatSpec::TcpCmd(argv) => {
                    let sandbox = spec.sandbox.for_seat(seat);
                    match ClientProcess::spawn_seat(
                        |addr| client_argv(argv, addr),
                        &sandbox,
                        ports[seat],
                    ) {
                        Ok((client, port)) => {
                            queues[seat] = Some(ConnQueue::single(
                                port.listener,
                                &format!("geister seat {seat}"),
                            )?);
                            clients[seat] = Some(Ok(client));
                        }
                        Err(e) => {
                            if let Some(fault) = RefereeError::host_fault(seat, &e) {
                                return Err(fault);
                            }
                            let addr = SocketAddr::from(([127, 0, 0, 1], ports[seat]));
                            queues[seat] = Some(ConnQueue::closed(addr));
                            clients[seat] = Some(Err(e.to_string()));
                        }
                    }
                }
                _ => {}
            }
        }
        let specs: [String; 2] = [spec.seats[0].to_string(), spec.seats[1].to_string()];
        let [q0, q1] = &mut queues;
        let [c0, c1] = clients;
        let p0 = plan_for(spec, 0, q0.as_mut(), c0)?;
        let p1 = plan_for(spec, 1, q1.as_mut(), c1)?;
        let plans = [p0, p1];
        let setup = GameSetup {
            rules,
            seed: spec.seed,
            specs,
            log_dir,
        };
        let mut record = run_game(&setup, plans).await;
        add_excess(&mut record, &queues);
        // Close the listeners now, not whenever the runtime next runs their aborted accept
        // tasks: a client must not queue on a table that is gone, and the next match binds
        // the same port.
        drop(queues);
        for _ in 0..2 {
            tokio::task::yield_now().await;
        }
        Ok(record)
    }
}

fn plan_for<'a>(
    spec: &MatchSpec,
    seat: usize,
    queue: Option<&'a mut ConnQueue>,
    client: Option<Result<ClientProcess, String>>,
) -> Result<SeatPlan<'a>, RefereeError> {
    let s = &spec.seats[seat];
    Ok(match s {
        SeatSpec::Builtin(name) => match builtin(name, spec.seed, seat) {
            Some(b) => SeatPlan::Builtin(b),
            None => SeatPlan::Pipe(Err(format!("unknown built-in bot {name:?}"))),
        },
        SeatSpec::Cmd(argv) => match BotProcess::spawn(argv, &spec.sandbox.for_seat(seat)) {
            Ok(p) => SeatPlan::Pipe(Ok(p)),
            Err(e) => match RefereeError::host_fault(seat, &e) {
                Some(fault) => return Err(fault),
                None => SeatPlan::Pipe(Err(e.to_string())),
            },
        },
        SeatSpec::Tcp | SeatSpec::TcpCmd(_) => {
            let Some(queue) = queue else {
                return Err(RefereeError::UnsupportedSeat {
                    game: "geister".into(),
                    seat,
                    form: s.to_string(),
                    reason: "no listener".into(),
                });
            };
            SeatPlan::Tcp { queue, client }
        }
    })
}

/// Play one game on a table whose two seats are TCP clients connecting to its ports (they may
/// reconnect for every game).
pub async fn play_on_table(table: &mut Table, rules: Rules, seed: u64) -> MatchRecord {
    let setup = GameSetup {
        rules,
        seed,
        specs: ["tcp".into(), "tcp".into()],
        log_dir: None,
    };
    let [q0, q1] = &mut table.queues;
    run_game(
        &setup,
        [
            SeatPlan::Tcp {
                queue: q0,
                client: None,
            },
            SeatPlan::Tcp {
                queue: q1,
                client: None,
            },
        ],
    )
    .await
}

fn bad(msg: impl Into<String>) -> RefereeError {
    RefereeError::BadReplay(msg.into())
}

/// Re-run a replay: feed its recorded inputs to a fresh session.
pub fn rerun_replay(replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
    let h = &replay.header;
    if h.format != FORMAT {
        return Err(bad(format!("format {:?} is not {FORMAT:?}", h.format)));
    }
    if h.game != "geister" {
        return Err(bad(format!("game {:?} is not \"geister\"", h.game)));
    }
    let params: HeaderParams =
        serde_json::from_value(h.params.clone()).map_err(|e| bad(format!("header params: {e}")))?;
    if h.seats.len() != 2 || params.seats.len() != 2 {
        return Err(bad(format!("expected 2 seats, found {}", h.seats.len())));
    }
    let specs: [String; 2] = [h.seats[0].clone(), h.seats[1].clone()];
    let mut session = Session::new(params.rules.clone());
    let mut stderr = Vec::new();
    let mut connections = Vec::new();
    let mut i = 0;
    let events = &replay.events;
    while i < events.len() {
        let (line_no, v) = &events[i];
        let kind = v.get("event").and_then(|e| e.as_str()).unwrap_or("");
        if kind == "connections" {
            let e: ConnectionsEvent = serde_json::from_value(v.clone())
                .map_err(|e| bad(format!("line {line_no}: {e}")))?;
            if e.seat >= 2 {
                return Err(bad(format!("line {line_no}: seat {}", e.seat)));
            }
            connections.push(e);
            i += 1;
            continue;
        }
        if kind == "stderr" {
            let e: StderrEvent = serde_json::from_value(v.clone())
                .map_err(|e| bad(format!("line {line_no}: {e}")))?;
            stderr.push(e);
            i += 1;
            continue;
        }
        let ev: Event =
            serde_json::from_value(v.clone()).map_err(|e| bad(format!("line {line_no}: {e}")))?;
        let seat_ok = |s: usize| {
            if s < 2 {
                Ok(s)
            } else {
                Err(bad(format!("line {line_no}: seat {s}")))
            }
        };
        match ev {
            Event::Assign { seat, t } => {
                session.assign(seat_ok(seat)?, t);
            }
            Event::Set { seat, t, raw, .. } | Event::Line { seat, t, raw, .. } => {
                session.line(seat_ok(seat)?, &line_from_record(raw.as_deref()), t);
            }
            Event::Turn {
                seat,
                t,
                raw,
                outcome,
                elapsed_ms,
                ..
            } => {
                let seat = seat_ok(seat)?;
                session.clock_started(seat, t.saturating_sub(elapsed_ms));
                if outcome == TurnOutcome::Timeout {
                    session.tick(t);
                } else {
                    session.line(seat, &line_from_record(raw.as_deref()), t);
                }
            }
            Event::Fault {
                kind: FaultKind::SetTimeout,
                t,
                ..
            } => {
                session.tick(t);
            }
            Event::Fault {
                seat,
                kind,
                t,
                detail,
            } => {
                let mut faults = vec![(seat_ok(seat)?, kind, detail)];
                while let Some((_, next)) = events.get(i + 1) {
                    match serde_json::from_value::<Event>(next.clone()) {
                        Ok(Event::Fault {
                            seat: s2,
                            kind: k2,
                            t: t2,
                            detail: d2,
                        }) if t2 == t && k2 != FaultKind::SetTimeout => {
                            faults.push((seat_ok(s2)?, k2, d2));
                            i += 1;
                        }
                        _ => break,
                    }
                }
                session.faults(&faults, t);
            }
            Event::End { .. } => {}
        }
        i += 1;
    }
    let mut rec = record(h.seed, &specs, &params, &session, &stderr);
    for e in connections {
        add_connections_event(&mut rec, e);
    }
    Ok(rec)
}

impl GameDriver for GeisterDriver {
    fn game_type(&self) -> &'static GameType {
        &kakehiki_geister::GAME_TYPE
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(self.play_async(spec))
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        rerun_replay(replay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_file_names_are_utc() {
        assert_eq!(log_file_stem(0), "log-1970-01-01-00-00-00-000");
        // 2018-03-05 12:34:56.789 UTC
        assert_eq!(
            log_file_stem(1_520_253_296_789),
            "log-2018-03-05-12-34-56-789"
        );
        assert_eq!(
            log_file_stem(951_782_400_000),
            "log-2000-02-29-00-00-00-000"
        );
    }

    #[test]
    fn client_commands_get_host_and_port() {
        let argv = vec![
            "java".to_string(),
            "-jar".into(),
            "c.jar".into(),
            "{host}".into(),
            "{port}".into(),
            "x{port}".into(),
        ];
        let addr: SocketAddr = "127.0.0.1:4321"
            .parse()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 4321)));
        assert_eq!(
            client_argv(&argv, addr),
            vec!["java", "-jar", "c.jar", "127.0.0.1", "4321", "x4321"]
        );
    }
}
