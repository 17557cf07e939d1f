//! The Diplomacy driver (spec diplomacy §6): seven seats, JSON lines over stdin/stdout, optional
//! press, simultaneous orders, timeouts and crashes, replays that re-run byte for byte.
//!
//! One loop serves three kinds of seats ([`Source`]): a built-in bot (in-process, its reply
//! formatted as the JSON line a process would send), a live process, or a seat replayed from a
//! recording. Replies are always parsed from their text by the same code, so a re-run checks the
//! parser, the press rules and the adjudicator as well.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::time::Duration;

use kakehiki_agent::{BotProcess, ClientProcess, Line, ReadOutcome, SandboxConfig};
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{
    Chance, Dynamics, GameType, Information, MatchReport, Outcome, SeatError, SeatErrorKind,
    SeatSpec, Transport,
};
use kakehiki_diplomacy::service::state_json;
use kakehiki_diplomacy::{
    standard, BuiltinBot, DiplomacyGame, EndReason, PhaseKind, PhaseRecord, Power, Rules,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::geister::{client_argv, ConnQueue};

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};

/// Replay format name.
pub const FORMAT: &str = "kakehiki/diplomacy-replay@1";

/// The game's declaration.
pub static DIPLOMACY_TYPE: GameType = GameType {
    name: "diplomacy",
    title: "Diplomacy: standard map, DATC v3.1 adjudicator, optional press",
    min_seats: 7,
    max_seats: 7,
    default_seats: 7,
    dynamics: Dynamics::Simultaneous,
    information: Information::Imperfect,
    chance: Chance::None,
    transports: &[Transport::Stdio, Transport::Tcp],
    rule_sets: &["standard"],
    builtin_bots: kakehiki_diplomacy::BUILTIN_BOTS,
};

/// The driver.
pub struct DiplomacyDriver;

/// `diplomacy`.
pub static DIPLOMACY: DiplomacyDriver = DiplomacyDriver;

/// Longest reply line accepted (1 MiB).
const MAX_LINE: usize = 1 << 20;

/// Time and press limits (the start message's `limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub start_ms: u64,
    pub movement_ms: u64,
    pub retreat_ms: u64,
    pub adjustment_ms: u64,
    pub press_ms: u64,
    pub press_messages: usize,
    pub press_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            start_ms: 10_000,
            movement_ms: 5_000,
            retreat_ms: 2_000,
            adjustment_ms: 2_000,
            press_ms: 2_000,
            press_messages: 6,
            press_chars: 1_000,
        }
    }
}

/// The start message's `rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleParams {
    pub solo_centers: usize,
    pub max_year: u16,
    pub press_rounds: u32,
    pub draw_votes: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Params {
    rules: RuleParams,
    limits: Limits,
}

const OPTION_KEYS: &[&str] = &[
    "max_year",
    "solo_centers",
    "press_rounds",
    "draw_votes",
    "start_ms",
    "movement_ms",
    "retreat_ms",
    "adjustment_ms",
    "press_ms",
    "press_messages",
    "press_chars",
    "host",
    "port",
    "connect_ms",
];

fn params_from(spec: &MatchSpec) -> Result<Params, RefereeError> {
    spec.check_option_keys(OPTION_KEYS)?;
    let d = Limits::default();
    let rules = RuleParams {
        solo_centers: spec.option("solo_centers", 18usize, "a number of centres, 1 to 34")?,
        max_year: spec.option("max_year", 1920u16, "a year, 1901 to 9999")?,
        press_rounds: spec.option("press_rounds", 0u32, "a number of rounds, 0 to 20")?,
        draw_votes: spec.option("draw_votes", false, "true or false")?,
    };
    let bad = |key: &str, value: String, expected: &str| RefereeError::BadOption {
        key: key.into(),
        value,
        expected: expected.into(),
    };
    if !(1..=34).contains(&rules.solo_centers) {
        return Err(bad(
            "solo_centers",
            rules.solo_centers.to_string(),
            "a number of centres, 1 to 34",
        ));
    }
    if !(1901..=9999).contains(&rules.max_year) {
        return Err(bad(
            "max_year",
            rules.max_year.to_string(),
            "a year, 1901 to 9999",
        ));
    }
    if rules.press_rounds > 20 {
        return Err(bad(
            "press_rounds",
            rules.press_rounds.to_string(),
            "a number of rounds, 0 to 20",
        ));
    }
    let ms = "milliseconds, 1 to 600000";
    let limits = Limits {
        start_ms: spec.option("start_ms", d.start_ms, ms)?,
        movement_ms: spec.option("movement_ms", d.movement_ms, ms)?,
        retreat_ms: spec.option("retreat_ms", d.retreat_ms, ms)?,
        adjustment_ms: spec.option("adjustment_ms", d.adjustment_ms, ms)?,
        press_ms: spec.option("press_ms", d.press_ms, ms)?,
        press_messages: spec.option(
            "press_messages",
            d.press_messages,
            "a number of messages, 0 to 100",
        )?,
        press_chars: spec.option(
            "press_chars",
            d.press_chars,
            "a number of characters, 1 to 100000",
        )?,
    };
    for (k, v) in [
        ("start_ms", limits.start_ms),
        ("movement_ms", limits.movement_ms),
        ("retreat_ms", limits.retreat_ms),
        ("adjustment_ms", limits.adjustment_ms),
        ("press_ms", limits.press_ms),
    ] {
        if !(1..=600_000).contains(&v) {
            return Err(bad(k, v.to_string(), ms));
        }
    }
    if limits.press_messages > 100 {
        return Err(bad(
            "press_messages",
            limits.press_messages.to_string(),
            "a number of messages, 0 to 100",
        ));
    }
    if !(1..=100_000).contains(&limits.press_chars) {
        return Err(bad(
            "press_chars",
            limits.press_chars.to_string(),
            "a number of characters, 1 to 100000",
        ));
    }
    Ok(Params { rules, limits })
}

// ---------------------------------------------------------------------------------------------
// Replay events
// ---------------------------------------------------------------------------------------------

/// How a request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    /// A line answered the request (its content may still be invalid).
    Ok,
    /// No answer by the deadline.
    Timeout,
    /// The process exited or closed its output (or a write failed).
    Crash,
    /// The process exceeded its output cap.
    OutputLimit,
}

/// One request and its answer, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Exchange {
    power: String,
    seq: u64,
    /// The message line sent (without its LF).
    sent: String,
    status: Status,
    /// The answering line (lossy UTF-8), if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    raw: Option<String>,
    /// Microseconds from sending to the answer.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    time_us: Option<u64>,
    /// Why the seat failed (exit status, cap), if it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    detail: Option<String>,
    /// Lines that answered nothing (stale `seq`, output between requests), dropped.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    discarded: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct PressMsg {
    from: String,
    to: String,
    text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Dropped {
    from: String,
    to: String,
    reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Adjudicated {
    phase: String,
    orders: BTreeMap<String, Vec<String>>,
    results: BTreeMap<String, String>,
    /// Why each failed order failed (`bounced`, `cut`, `dislodged`, `no convoy`, ...).
    failures: BTreeMap<String, String>,
    errors: Vec<String>,
    destroyed: Vec<String>,
}

fn adjudicated(r: &PhaseRecord) -> Adjudicated {
    let mut orders: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (p, o) in &r.orders {
        orders
            .entry(p.name().to_string())
            .or_default()
            .push(o.clone());
    }
    Adjudicated {
        phase: r.phase.to_string(),
        orders,
        results: r
            .results
            .iter()
            .map(|(u, res)| (u.clone(), res.as_str().to_string()))
            .collect(),
        failures: r
            .failures
            .iter()
            .map(|(u, f)| (u.clone(), f.as_str().to_string()))
            .collect(),
        errors: r
            .errors
            .iter()
            .map(|(p, o, e)| format!("{p}: {o}: {e}"))
            .collect(),
        destroyed: r.destroyed.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// Seats
// ---------------------------------------------------------------------------------------------

enum Source {
    Builtin(Box<BuiltinBot>),
    Live(Box<BotProcess>),
    /// A bot connected over TCP (`tcp`, or `tcp-cmd:` with the client the referee launched).
    Tcp(Box<TcpSeat>),
    /// Recorded exchanges of this seat, in order.
    Replayed(VecDeque<Exchange>),
    /// The seat failed earlier (or never started): it gets no further messages.
    Gone,
}

/// A TCP seat: the connection, bytes read but not yet split into lines, and the client process
/// the referee launched for it (`tcp-cmd:`).
struct TcpSeat {
    read: OwnedReadHalf,
    write: OwnedWriteHalf,
    buf: Vec<u8>,
    /// A line over [`MAX_LINE`] was cut: its remaining bytes up to the next LF are dropped.
    skipping: bool,
    eof: bool,
    client: Option<ClientProcess>,
}

impl TcpSeat {
    fn new(stream: TcpStream, client: Option<ClientProcess>) -> TcpSeat {
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        TcpSeat {
            read,
            write,
            buf: Vec::new(),
            skipping: false,
            eof: false,
            client,
        }
    }

    /// A complete line from the buffer (LF removed), or a cut one once the buffer holds more
    /// than [`MAX_LINE`] bytes without LF.
    fn pop_line(&mut self) -> Option<Line> {
        loop {
            match self.buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let rest = self.buf.split_off(i + 1);
                    let mut bytes = std::mem::replace(&mut self.buf, rest);
                    bytes.pop();
                    if self.skipping {
                        self.skipping = false;
                        continue;
                    }
                    return Some(Line {
                        bytes,
                        at: Instant::now(),
                        truncated: false,
                    });
                }
                None if self.buf.len() > MAX_LINE => {
                    let was_skipping = self.skipping;
                    let mut bytes = std::mem::take(&mut self.buf);
                    self.skipping = true;
                    if was_skipping {
                        return None;
                    }
                    bytes.truncate(MAX_LINE);
                    return Some(Line {
                        bytes,
                        at: Instant::now(),
                        truncated: true,
                    });
                }
                None => return None,
            }
        }
    }

    /// Lines that arrived since the last request (answering nothing), read without waiting.
    fn take_unsolicited(&mut self) -> Vec<Line> {
        let mut tmp = [0u8; 8192];
        // At most a few MiB per call, so a flooding client cannot hold the referee here.
        for _ in 0..512 {
            if self.eof {
                break;
            }
            match self.read.try_read(&mut tmp) {
                Ok(0) => self.eof = true,
                Ok(n) => self.buf.extend_from_slice(&tmp[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => self.eof = true,
            }
        }
        let mut lines = Vec::new();
        while let Some(l) = self.pop_line() {
            if lines.len() < 100 {
                lines.push(l);
            }
        }
        lines
    }

    async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.write.write_all(bytes).await
    }

    /// The next line by `deadline`, with the same outcomes as a process's stdout.
    async fn read_line(&mut self, deadline: Instant) -> ReadOutcome {
        let mut tmp = [0u8; 8192];
        loop {
            if let Some(l) = self.pop_line() {
                return ReadOutcome::Line(l);
            }
            if self.eof {
                let exit = self.client.as_mut().and_then(|c| c.try_exit());
                return ReadOutcome::Closed {
                    partial: std::mem::take(&mut self.buf),
                    exit,
                };
            }
            match tokio::time::timeout_at(deadline, self.read.read(&mut tmp)).await {
                Ok(Ok(0)) | Ok(Err(_)) => self.eof = true,
                Ok(Ok(n)) => self.buf.extend_from_slice(&tmp[..n]),
                Err(_) => {
                    return ReadOutcome::Timeout {
                        partial: self.buf.clone(),
                    }
                }
            }
        }
    }

    /// Close the connection; a launched client gets `grace` to exit before its group is killed.
    async fn finish(mut self, grace: Duration) {
        let _ = self.write.shutdown().await;
        drop(self.write);
        if let Some(c) = self.client.take() {
            let _ = c.finish(grace).await;
        }
    }

    fn kill(&mut self) {
        if let Some(c) = self.client.as_mut() {
            c.kill();
        }
    }
}

/// One seat's line transport: a process's pipes or a TCP connection.
enum Conn<'a> {
    Pipe(&'a mut BotProcess),
    Tcp(&'a mut TcpSeat),
}

impl Conn<'_> {
    fn take_unsolicited(&mut self) -> Vec<Line> {
        match self {
            Conn::Pipe(p) => p.take_unsolicited().0,
            Conn::Tcp(t) => t.take_unsolicited(),
        }
    }

    async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Conn::Pipe(p) => p.send(bytes).await,
            Conn::Tcp(t) => t.send(bytes).await,
        }
    }

    async fn read_line(&mut self, deadline: Instant) -> ReadOutcome {
        match self {
            Conn::Pipe(p) => p.read_line(deadline).await,
            Conn::Tcp(t) => t.read_line(deadline).await,
        }
    }
}

/// Lines recorded as discarded per exchange; more are read and dropped unrecorded.
const MAX_DISCARDED: usize = 100;

/// Characters of a discarded line recorded.
const DISCARDED_CHARS: usize = 4096;

/// Record a discarded line: at most [`MAX_DISCARDED`] per exchange, each cut at
/// [`DISCARDED_CHARS`], so a bot writing stale lines until its deadline holds the referee's
/// memory (and the replay) to a bound.
fn discard(list: &mut Vec<String>, text: String) {
    if list.len() < MAX_DISCARDED {
        list.push(if text.chars().count() > DISCARDED_CHARS {
            text.chars().take(DISCARDED_CHARS).collect()
        } else {
            text
        });
    }
}

/// The seat error for `n` connections closed at once on a seat's port holding `cap`.
fn excess_error(n: u64, cap: usize) -> SeatError {
    SeatError { at: String::new(),
        turn: 0,
        kind: SeatErrorKind::ExcessConnections,
        detail: format!(
            "{n} connections to the seat's port closed at once: {cap} were already waiting (the cap)"
        ),
    }
}

/// Wait for the connection of a `tcp-cmd:` client, giving up when the client exits first or at
/// `deadline`.
async fn await_client(
    queue: &mut ConnQueue,
    client: &mut ClientProcess,
    deadline: Instant,
) -> Result<TcpStream, String> {
    let mut poll = tokio::time::interval(Duration::from_millis(50));
    loop {
        tokio::select! {
            c = queue.next(deadline) => {
                return c.map(|(s, _)| s).ok_or_else(|| "no connection in time".to_string());
            }
            _ = poll.tick() => {
                if let Some(e) = client.try_exit() {
                    return Err(format!("the client exited before connecting ({e})"));
                }
            }
        }
    }
}

/// What a builtin bot answers: the same JSON a process would send.
fn builtin_reply(bot: &mut BuiltinBot, game: &DiplomacyGame, power: Power, kind: &str) -> String {
    match kind {
        "start" => "{\"ready\":true}".to_string(),
        "phase" => json!({ "orders": bot.order_strings(game.board(), power) }).to_string(),
        _ => "{\"messages\":[]}".to_string(),
    }
}

struct Ctx<'g> {
    game: &'g DiplomacyGame,
    kind: &'static str,
}

async fn exchange(
    src: &mut Source,
    power: Power,
    seq: u64,
    sent: String,
    deadline_ms: u64,
    ctx: Ctx<'_>,
) -> Result<Exchange, RefereeError> {
    let mut ex = Exchange {
        power: power.name().to_string(),
        seq,
        sent,
        status: Status::Ok,
        raw: None,
        time_us: None,
        detail: None,
        discarded: Vec::new(),
    };
    match src {
        Source::Gone => unreachable_gone(),
        Source::Builtin(bot) => {
            ex.raw = Some(builtin_reply(bot, ctx.game, power, ctx.kind));
            ex.time_us = Some(0);
            Ok(ex)
        }
        Source::Replayed(queue) => {
            let rec = queue.pop_front().ok_or_else(|| {
                RefereeError::BadReplay(format!("no recorded reply of {power} to request {seq}"))
            })?;
            if rec.seq != seq || rec.power != ex.power {
                return Err(RefereeError::BadReplay(format!(
                    "recorded reply of {} to request {} where the re-run expects {power} {seq}",
                    rec.power, rec.seq
                )));
            }
            // The message itself is re-derived; a difference shows up in the byte comparison.
            Ok(Exchange {
                sent: ex.sent,
                ..rec
            })
        }
        Source::Live(_) | Source::Tcp(_) => {
            let mut proc = match src {
                Source::Live(p) => Conn::Pipe(p),
                Source::Tcp(t) => Conn::Tcp(t),
                _ => return unreachable_gone(),
            };
            let early = proc.take_unsolicited();
            for l in &early {
                discard(
                    &mut ex.discarded,
                    String::from_utf8_lossy(&l.bytes).into_owned(),
                );
            }
            let mut line = ex.sent.clone().into_bytes();
            line.push(b'\n');
            let start = Instant::now();
            if let Err(e) = proc.send(&line).await {
                ex.status = Status::Crash;
                ex.detail = Some(format!("write failed: {e}"));
                return Ok(ex);
            }
            let deadline = start + Duration::from_millis(deadline_ms);
            loop {
                match proc.read_line(deadline).await {
                    ReadOutcome::Line(l) => {
                        let text = String::from_utf8_lossy(&l.bytes).into_owned();
                        if l.truncated {
                            ex.raw = Some(text.chars().take(200).collect());
                            ex.detail = Some(format!("reply longer than {MAX_LINE} bytes"));
                            ex.time_us =
                                Some(l.at.saturating_duration_since(start).as_micros() as u64);
                            return Ok(ex);
                        }
                        // A reply with another seq is stale: dropped, keep waiting.
                        let stale = serde_json::from_str::<Value>(&text)
                            .ok()
                            .and_then(|v| v.get("seq").cloned())
                            .is_some_and(|s| s.as_u64() != Some(seq));
                        if stale {
                            discard(&mut ex.discarded, text);
                            continue;
                        }
                        ex.raw = Some(text);
                        ex.time_us = Some(l.at.saturating_duration_since(start).as_micros() as u64);
                        return Ok(ex);
                    }
                    ReadOutcome::Timeout { .. } => {
                        ex.status = Status::Timeout;
                        return Ok(ex);
                    }
                    ReadOutcome::Closed { exit, .. } => {
                        ex.status = Status::Crash;
                        ex.detail = Some(match exit {
                            Some(e) => format!("output closed ({e})"),
                            None => "output closed".to_string(),
                        });
                        return Ok(ex);
                    }
                    ReadOutcome::OutputLimit { bytes } => {
                        ex.status = Status::OutputLimit;
                        ex.detail = Some(format!("wrote {bytes} bytes, over the output cap"));
                        return Ok(ex);
                    }
                }
            }
        }
    }
}

/// Stop a seat's bot (process group or launched client) and mark the seat gone.
fn kill_source(src: &mut Source) {
    match src {
        Source::Live(p) => p.kill(),
        Source::Tcp(t) => t.kill(),
        _ => {}
    }
    *src = Source::Gone;
}

fn unreachable_gone() -> Result<Exchange, RefereeError> {
    Err(RefereeError::BadReplay(
        "internal: a request to a seat that has left".into(),
    ))
}

// ---------------------------------------------------------------------------------------------
// The match loop
// ---------------------------------------------------------------------------------------------

struct Run {
    params: Params,
    sources: Vec<Source>,
    log: ReplayLog,
    errors: Vec<Vec<SeatError>>,
    seq: Vec<u64>,
    turn: u32,
    /// Adjudicated phases not yet shown to each power.
    pending_history: Vec<Vec<Value>>,
}

impl Run {
    fn fault(&mut self, p: Power, kind: SeatErrorKind, detail: String) {
        let turn = self.turn;
        self.errors[p.index()].push(SeatError {
            at: String::new(),
            turn,
            kind,
            detail,
        });
    }

    /// Judge a failed exchange: crash and caps put the power in civil disorder.
    fn judge(&mut self, game: &mut DiplomacyGame, p: Power, ex: &Exchange, what: &str) -> bool {
        match ex.status {
            Status::Ok => true,
            Status::Timeout => {
                self.fault(
                    p,
                    SeatErrorKind::Timeout,
                    format!("no reply to the {what} message in time"),
                );
                false
            }
            Status::Crash | Status::OutputLimit => {
                let kind = if ex.status == Status::Crash {
                    SeatErrorKind::Crash
                } else {
                    SeatErrorKind::ResourceLimit
                };
                self.fault(
                    p,
                    kind,
                    format!(
                        "{}; the power is in civil disorder",
                        ex.detail.clone().unwrap_or_default()
                    ),
                );
                game.set_civil_disorder(p);
                kill_source(&mut self.sources[p.index()]);
                false
            }
        }
    }

    fn next_seq(&mut self, p: Power) -> u64 {
        self.seq[p.index()] += 1;
        self.seq[p.index()]
    }

    async fn ask(
        &mut self,
        game: &DiplomacyGame,
        p: Power,
        kind: &'static str,
        msg: Value,
        seq: u64,
        deadline_ms: u64,
    ) -> Result<Exchange, RefereeError> {
        let sent = msg.to_string();
        exchange(
            &mut self.sources[p.index()],
            p,
            seq,
            sent,
            deadline_ms,
            Ctx { game, kind },
        )
        .await
    }
}

fn public_state(game: &DiplomacyGame) -> Value {
    let mut s = state_json(standard(), game.board());
    s["civil_disorder"] = json!(game
        .civil_disorder_powers()
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>());
    s
}

fn reply_object(ex: &Exchange) -> Result<serde_json::Map<String, Value>, String> {
    let raw = ex.raw.as_deref().unwrap_or("");
    if let Some(d) = &ex.detail {
        return Err(d.clone());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("reply is not a JSON object: {}", clip(raw))),
        Err(e) => Err(format!("reply is not valid JSON ({e}): {}", clip(raw))),
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s.to_string()
    }
}

async fn run_match(
    params: Params,
    sources: Vec<Source>,
    header: ReplayHeader,
) -> Result<(ReplayLog, DiplomacyGame, Vec<Vec<SeatError>>), RefereeError> {
    let rules = Rules {
        solo_centers: params.rules.solo_centers,
        max_year: params.rules.max_year,
        press_rounds: params.rules.press_rounds,
        draw_votes: params.rules.draw_votes,
    };
    let mut game = DiplomacyGame::new(rules);
    let mut log = ReplayLog::new();
    log.push(&header);
    let mut run = Run {
        params,
        sources,
        log,
        errors: vec![Vec::new(); 7],
        seq: vec![0; 7],
        turn: 0,
        pending_history: vec![Vec::new(); 7],
    };
    let powers: Vec<&str> = Power::ALL.iter().map(|p| p.name()).collect();
    // Start handshake.
    let mut start = Vec::new();
    for p in Power::ALL {
        if matches!(run.sources[p.index()], Source::Gone) {
            game.set_civil_disorder(p);
            continue;
        }
        let seq = run.next_seq(p);
        let msg = json!({
            "type": "start", "seq": seq, "power": p.name(), "powers": powers, "map": "standard",
            "rules": run.params.rules, "limits": run.params.limits,
        });
        let ex = run
            .ask(&game, p, "start", msg, seq, run.params.limits.start_ms)
            .await?;
        let ok = run.judge(&mut game, p, &ex, "start") && {
            match reply_object(&ex) {
                Ok(m) if m.get("ready") == Some(&Value::Bool(true)) => true,
                Ok(_) => {
                    run.fault(
                        p,
                        SeatErrorKind::NotReady,
                        format!(
                            "expected {{\"ready\":true}}, got {}",
                            clip(ex.raw.as_deref().unwrap_or(""))
                        ),
                    );
                    false
                }
                Err(e) => {
                    run.fault(p, SeatErrorKind::NotReady, e);
                    false
                }
            }
        };
        if !ok && !game.in_civil_disorder(p) {
            game.set_civil_disorder(p);
            run.fault(
                p,
                SeatErrorKind::NotReady,
                "start handshake failed; the power is in civil disorder".into(),
            );
            kill_source(&mut run.sources[p.index()]);
        }
        start.push(ex);
    }
    run.log.push(&json!({"event": "start", "exchanges": start}));

    let mut inbox: Vec<Vec<Value>> = vec![Vec::new(); 7];
    let mut eliminated_told = [false; 7];
    while game.end_reason().is_none() {
        run.turn += 1;
        let phase = game.board().phase;
        // Press rounds before each movement phase.
        if phase.kind == PhaseKind::Movement && run.params.rules.press_rounds > 0 {
            let k = run.params.rules.press_rounds;
            for round in 1..=k {
                let mut exchanges = Vec::new();
                let mut delivered: Vec<PressMsg> = Vec::new();
                let mut dropped: Vec<Dropped> = Vec::new();
                let mut next_inbox: Vec<Vec<Value>> = vec![Vec::new(); 7];
                for p in Power::ALL {
                    if game.is_eliminated(p) || game.in_civil_disorder(p) {
                        continue;
                    }
                    let seq = run.next_seq(p);
                    let msg = json!({
                        "type": "press", "seq": seq, "phase": phase.to_string(), "round": round, "rounds": k,
                        "deadline_ms": run.params.limits.press_ms, "state": public_state(&game),
                        "inbox": std::mem::take(&mut inbox[p.index()]),
                    });
                    let ex = run
                        .ask(&game, p, "press", msg, seq, run.params.limits.press_ms)
                        .await?;
                    if run.judge(&mut game, p, &ex, "press") {
                        match reply_object(&ex) {
                            Err(e) => run.fault(p, SeatErrorKind::InvalidReply, e),
                            Ok(m) => {
                                let msgs = m.get("messages").and_then(Value::as_array).cloned();
                                match msgs {
                                    None => run.fault(
                                        p,
                                        SeatErrorKind::InvalidReply,
                                        "press reply lacks a \"messages\" list".into(),
                                    ),
                                    Some(list) => {
                                        for (i, item) in list.iter().enumerate() {
                                            let to = item
                                                .get("to")
                                                .and_then(Value::as_str)
                                                .unwrap_or("");
                                            let text = item.get("text").and_then(Value::as_str);
                                            let target =
                                                Power::from_name(to).filter(|t| t.name() == to);
                                            let reason = if text.is_none() {
                                                Some("message without text".to_string())
                                            } else if i >= run.params.limits.press_messages {
                                                Some(format!(
                                                    "over the limit of {} messages",
                                                    run.params.limits.press_messages
                                                ))
                                            } else if text.map(|t| t.chars().count()).unwrap_or(0)
                                                > run.params.limits.press_chars
                                            {
                                                Some(format!(
                                                    "longer than {} characters",
                                                    run.params.limits.press_chars
                                                ))
                                            } else {
                                                match target {
                                                    None => Some(format!("unknown power {to:?}")),
                                                    Some(t) if t == p => {
                                                        Some("message to oneself".into())
                                                    }
                                                    Some(t) if game.is_eliminated(t) => {
                                                        Some(format!("{t} is eliminated"))
                                                    }
                                                    Some(_) => None,
                                                }
                                            };
                                            match (reason, target, text) {
                                                (None, Some(t), Some(text)) => {
                                                    next_inbox[t.index()].push(
                                                        json!({"from": p.name(), "text": text}),
                                                    );
                                                    delivered.push(PressMsg {
                                                        from: p.name().into(),
                                                        to: t.name().into(),
                                                        text: text.into(),
                                                    });
                                                }
                                                (r, _, _) => {
                                                    let reason = r.unwrap_or_default();
                                                    run.fault(
                                                        p,
                                                        SeatErrorKind::InvalidReply,
                                                        format!(
                                                            "press message {i} dropped: {reason}"
                                                        ),
                                                    );
                                                    dropped.push(Dropped {
                                                        from: p.name().into(),
                                                        to: to.into(),
                                                        reason,
                                                    });
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    exchanges.push(ex);
                }
                inbox = next_inbox;
                run.log.push(&json!({
                    "event": "press", "phase": phase.to_string(), "round": round,
                    "exchanges": exchanges, "delivered": delivered, "dropped": dropped,
                }));
            }
        }
        // Orders.
        let acting = game.acting();
        let deadline_ms = match phase.kind {
            PhaseKind::Movement => run.params.limits.movement_ms,
            PhaseKind::Retreat => run.params.limits.retreat_ms,
            PhaseKind::Adjustment => run.params.limits.adjustment_ms,
        };
        let mut exchanges = Vec::new();
        let mut orders: Vec<(Power, Vec<String>)> = Vec::new();
        let mut draw_votes: Vec<Power> = Vec::new();
        for &p in &acting {
            let seq = run.next_seq(p);
            let mut msg = json!({
                "type": "phase", "seq": seq, "phase": phase.to_string(), "deadline_ms": deadline_ms,
                "state": public_state(&game), "orderable": game.orderable(p),
                "inbox": std::mem::take(&mut inbox[p.index()]),
                "history": std::mem::take(&mut run.pending_history[p.index()]),
            });
            if phase.kind == PhaseKind::Adjustment {
                let n = game.board().adjustment(p);
                if n > 0 {
                    msg["builds"] = json!(n);
                } else {
                    msg["removals"] = json!(-n);
                }
            }
            let ex = run.ask(&game, p, "phase", msg, seq, deadline_ms).await?;
            if run.judge(&mut game, p, &ex, "phase") {
                match reply_object(&ex) {
                    Err(e) => run.fault(p, SeatErrorKind::InvalidReply, format!("{e}; no orders")),
                    Ok(m) => {
                        let list: Option<Vec<String>> =
                            m.get("orders").and_then(Value::as_array).and_then(|a| {
                                a.iter()
                                    .map(|o| o.as_str().map(str::to_string))
                                    .collect::<Option<Vec<String>>>()
                            });
                        match list {
                            None => run.fault(
                                p,
                                SeatErrorKind::InvalidReply,
                                "reply lacks an \"orders\" list of strings; no orders".into(),
                            ),
                            Some(list) => orders.push((p, list)),
                        }
                        if phase.kind == PhaseKind::Movement
                            && m.get("draw") == Some(&Value::Bool(true))
                        {
                            draw_votes.push(p);
                        }
                    }
                }
            }
            exchanges.push(ex);
        }
        let voters: Vec<Power> = game
            .survivors()
            .into_iter()
            .filter(|p| !game.in_civil_disorder(*p))
            .collect();
        let unanimous = run.params.rules.draw_votes
            && phase.kind == PhaseKind::Movement
            && !voters.is_empty()
            && voters.iter().all(|p| draw_votes.contains(p));
        if unanimous {
            game.declare_draw();
            run.log.push(&json!({
                "event": "phase", "phase": phase.to_string(), "exchanges": exchanges,
                "draw_votes": draw_votes.iter().map(|p| p.name()).collect::<Vec<_>>(), "adjudicated": [],
            }));
            break;
        }
        let records = game.step(&orders);
        // Illegal orders are recorded against their seat.
        // (Unmatched supports and convoys are legal, merely void: reported in history only.)
        for r in &records {
            for (p, o, e) in &r.errors {
                if !kakehiki_diplomacy::outcome::is_unmatched_message(e) {
                    run.fault(
                        *p,
                        SeatErrorKind::IllegalAction,
                        format!("{}: {o}: {e}", r.phase),
                    );
                }
            }
        }
        let adj: Vec<Adjudicated> = records.iter().map(adjudicated).collect();
        for p in Power::ALL {
            for r in &records {
                let mut h = serde_json::to_value(adjudicated(r)).unwrap_or(Value::Null);
                let own: Vec<String> = r
                    .errors
                    .iter()
                    .filter(|(q, _, _)| *q == p)
                    .map(|(_, o, e)| format!("{o}: {e}"))
                    .collect();
                h["errors"] = json!(own);
                if let Some(o) = h.as_object_mut() {
                    o.remove("destroyed");
                }
                run.pending_history[p.index()].push(h);
            }
        }
        run.log.push(&json!({
            "event": "phase", "phase": phase.to_string(), "exchanges": exchanges,
            "draw_votes": draw_votes.iter().map(|p| p.name()).collect::<Vec<_>>(), "adjudicated": adj,
        }));
        // Tell newly eliminated powers.
        for p in Power::ALL {
            if game.is_eliminated(p) && !eliminated_told[p.index()] && game.end_reason().is_none() {
                eliminated_told[p.index()] = true;
                end_seat(&mut run, &game, p, "eliminated").await;
            }
        }
    }
    for p in Power::ALL {
        if !eliminated_told[p.index()] {
            let reason = game.end_reason().map(|r| r.as_str()).unwrap_or("draw");
            end_seat(&mut run, &game, p, reason).await;
        }
    }
    let end = game.end_reason();
    let centers = centers_json(&game);
    run.log.push(&json!({
        "event": "end",
        "reason": end.map(|r| r.as_str()),
        "winner": match end { Some(EndReason::Solo(p)) => Some(p.name()), _ => None },
        "centers": centers,
        "state": public_state(&game),
    }));
    Ok((run.log, game, run.errors))
}

fn centers_json(game: &DiplomacyGame) -> Value {
    let counts = game.center_counts();
    let mut m = serde_json::Map::new();
    for p in Power::ALL {
        m.insert(p.name().into(), json!(counts[p.index()]));
    }
    Value::Object(m)
}

/// Send the end message (no reply expected) to a seat still playing, record it in the replay,
/// then close its input: a process gets 1 s before its group is killed, a TCP connection is
/// closed and a launched client gets 1 s to exit.
async fn end_seat(run: &mut Run, game: &DiplomacyGame, p: Power, reason: &str) {
    let src = std::mem::replace(&mut run.sources[p.index()], Source::Gone);
    if matches!(src, Source::Gone) {
        return;
    }
    let seq = run.next_seq(p);
    let draw: Vec<&str> = match game.end_reason() {
        Some(EndReason::Solo(_)) | None => Vec::new(),
        _ => game.survivors().iter().map(|q| q.name()).collect(),
    };
    let msg = json!({
        "type": "end", "seq": seq, "reason": reason,
        "winner": match game.end_reason() { Some(EndReason::Solo(w)) => Some(w.name()), _ => None },
        "draw": draw, "centers": centers_json(game),
    });
    let sent = msg.to_string();
    run.log
        .push(&json!({"event": "end_message", "power": p.name(), "seq": seq, "sent": sent}));
    let mut line = sent.into_bytes();
    line.push(b'\n');
    match src {
        Source::Live(mut proc) => {
            let _ = proc.send(&line).await;
            let _ = proc.finish(Duration::from_secs(1)).await;
        }
        Source::Tcp(mut t) => {
            let _ = t.send(&line).await;
            t.finish(Duration::from_secs(1)).await;
        }
        _ => {}
    }
}

fn report(
    spec_seats: &[String],
    seed: u64,
    game: &DiplomacyGame,
    errors: Vec<Vec<SeatError>>,
) -> MatchReport {
    let outcome: Outcome = game.scores().unwrap_or(Outcome {
        scores: vec![0.into(); 7],
        winner: None,
    });
    let seats: Vec<(String, Vec<SeatError>)> = spec_seats.iter().cloned().zip(errors).collect();
    let mut r = MatchReport::new("diplomacy", "standard", seed, &outcome, seats);
    let counts = game.center_counts();
    for (i, s) in r.seats.iter_mut().enumerate() {
        s.extra.insert("power".into(), json!(Power(i as u8).name()));
        s.extra.insert("centers".into(), json!(counts[i]));
    }
    r.extra.insert("centers".into(), centers_json(game));
    r.extra
        .insert("end".into(), json!(game.end_reason().map(|e| e.as_str())));
    r.extra.insert(
        "year".into(),
        json!(game.history().last().map(|h| h.phase.year)),
    );
    r
}

fn header(seed: u64, seats: &[String], params: &Params) -> ReplayHeader {
    ReplayHeader {
        event: "header".into(),
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        game: "diplomacy".into(),
        rules: "standard".into(),
        seed,
        seats: seats.to_vec(),
        params: serde_json::to_value(params).unwrap_or(Value::Null),
    }
}

/// Run a future whose every await completes at once (replayed seats never wait).
fn block_on_ready<F: Future>(fut: F) -> Option<F::Output> {
    use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
    fn clone(_: *const ()) -> RawWaker {
        RawWaker::new(std::ptr::null(), &VTABLE)
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: the vtable's functions ignore the data pointer, which is never dereferenced.
    let waker = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) };
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    match fut.as_mut().poll(&mut cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

impl GameDriver for DiplomacyDriver {
    fn game_type(&self) -> &'static GameType {
        &DIPLOMACY_TYPE
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            if let Some(r) = &spec.rules {
                if r != "standard" {
                    return Err(RefereeError::UnknownRules {
                        game: "diplomacy".into(),
                        rules: r.clone(),
                        expected: "standard".into(),
                    });
                }
            }
            if spec.seats.len() != 7 {
                return Err(RefereeError::SeatCount {
                    game: "diplomacy".into(),
                    expected: "7".into(),
                    got: spec.seats.len(),
                });
            }
            let params = params_from(spec)?;
            let host: String = spec.option(
                "host",
                "127.0.0.1".to_string(),
                "a host name or address to listen on",
            )?;
            let port: u16 = spec.option("port", 10000u16, "a TCP port number")?;
            let connect_ms: u64 =
                spec.option("connect_ms", 10_000u64, "milliseconds, 1 to 600000")?;
            if !(1..=600_000).contains(&connect_ms) {
                return Err(RefereeError::BadOption {
                    key: "connect_ms".into(),
                    value: connect_ms.to_string(),
                    expected: "milliseconds, 1 to 600000".into(),
                });
            }
            let mut sandbox: SandboxConfig = spec.sandbox.clone();
            sandbox.line_cap = sandbox.line_cap.max(MAX_LINE);
            let mut sources = Vec::new();
            let mut early_errors: Vec<Vec<SeatError>> = vec![Vec::new(); 7];
            let cannot_start = |detail: String| SeatError {
                at: String::new(),
                turn: 0,
                kind: SeatErrorKind::NotReady,
                detail: format!("cannot start the bot: {detail}; the power is in civil disorder"),
            };
            // `tcp` seats share one listener, taking connections in seat order; each `tcp-cmd:`
            // seat has a listener of its own, inside its client's network namespace.
            let mut shared = if spec.seats.iter().any(|s| matches!(s, SeatSpec::Tcp)) {
                let q = ConnQueue::bind(&host, port).await?;
                for (i, _) in spec
                    .seats
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| matches!(s, SeatSpec::Tcp))
                {
                    spec.on_listen.notify(i, q.local_addr());
                }
                Some(q)
            } else {
                None
            };
            let mut launched: Vec<Option<(ConnQueue, Result<ClientProcess, String>)>> =
                (0..7).map(|_| None).collect();
            for (i, seat) in spec.seats.iter().enumerate() {
                match seat {
                    SeatSpec::Builtin(name) => match BuiltinBot::new(name, spec.seed, i) {
                        Some(b) => sources.push(Source::Builtin(Box::new(b))),
                        None => {
                            return Err(RefereeError::UnknownBot {
                                game: "diplomacy".into(),
                                seat: i,
                                name: name.clone(),
                                expected: kakehiki_diplomacy::BUILTIN_BOTS.join(", "),
                            })
                        }
                    },
                    SeatSpec::Cmd(argv) => match BotProcess::spawn(argv, &sandbox.for_seat(i)) {
                        Ok(p) => sources.push(Source::Live(Box::new(p))),
                        Err(e) => {
                            if let Some(fault) = RefereeError::host_fault(i, &e) {
                                return Err(fault);
                            }
                            early_errors[i].push(cannot_start(e.to_string()));
                            sources.push(Source::Gone);
                        }
                    },
                    SeatSpec::TcpCmd(argv) => {
                        // The client gets a network of its own whose loopback holds only its
                        // seat's listener, on `port`.
                        let launch = match ClientProcess::spawn_seat(
                            |addr| client_argv(argv, addr),
                            &sandbox.for_seat(i),
                            port,
                        ) {
                            Ok((client, seat)) => (
                                ConnQueue::single(seat.listener, &format!("diplomacy seat {i}"))?,
                                Ok(client),
                            ),
                            Err(e) => {
                                if let Some(fault) = RefereeError::host_fault(i, &e) {
                                    return Err(fault);
                                }
                                let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
                                (ConnQueue::closed(addr), Err(e.to_string()))
                            }
                        };
                        launched[i] = Some(launch);
                        sources.push(Source::Gone);
                    }
                    SeatSpec::Tcp => sources.push(Source::Gone),
                }
            }
            let deadline = Instant::now() + Duration::from_millis(connect_ms);
            // Connections closed at once on a seat's port (its own, or the shared one while the
            // seat waited on it): `(excess, cap)`.
            let mut excess: Vec<(u64, usize)> = vec![(0, 0); 7];
            for (i, seat) in spec.seats.iter().enumerate() {
                let stream = match (seat, launched[i].take(), shared.as_mut()) {
                    (SeatSpec::TcpCmd(_), Some((_, Err(e))), _) => Err(e),
                    (SeatSpec::TcpCmd(_), Some((mut queue, Ok(mut client))), _) => {
                        let r = await_client(&mut queue, &mut client, deadline).await;
                        excess[i] = (queue.excess(), queue.cap());
                        match r {
                            Ok(stream) => Ok((stream, Some(client))),
                            Err(e) => {
                                client.kill();
                                Err(e)
                            }
                        }
                    }
                    (SeatSpec::Tcp, _, Some(queue)) => {
                        let before = queue.excess();
                        let r = queue.next(deadline).await;
                        excess[i] = (queue.excess() - before, queue.cap());
                        match r {
                            Some((stream, _)) => Ok((stream, None)),
                            None => Err(format!(
                                "no client connected to {host}:{port} within {connect_ms} ms"
                            )),
                        }
                    }
                    _ => continue,
                };
                match stream {
                    Ok((stream, client)) => {
                        sources[i] = Source::Tcp(Box::new(TcpSeat::new(stream, client)))
                    }
                    Err(e) => early_errors[i].push(cannot_start(e)),
                }
            }
            drop(shared);
            let seats: Vec<String> = spec.seats.iter().map(|s| s.to_string()).collect();
            let head = header(spec.seed, &seats, &params);
            let (mut log, game, mut errors) = run_match(params, sources, head).await?;
            for (i, e) in early_errors.into_iter().enumerate() {
                if !e.is_empty() {
                    let mut all = e;
                    all.append(&mut errors[i]);
                    errors[i] = all;
                }
            }
            for (i, (n, cap)) in excess.into_iter().enumerate() {
                if n > 0 {
                    errors[i].push(excess_error(n, cap));
                }
            }
            let report = report(&seats, spec.seed, &game, errors);
            log.push(&json!({"event": "report", "report": report}));
            Ok(MatchRecord {
                report,
                replay: log,
            })
        })
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        if h.format != FORMAT {
            return Err(RefereeError::BadReplay(format!(
                "format {:?}, expected {FORMAT:?}",
                h.format
            )));
        }
        if h.seats.len() != 7 {
            return Err(RefereeError::BadReplay(format!(
                "{} seats, expected 7",
                h.seats.len()
            )));
        }
        let params: Params = serde_json::from_value(h.params.clone())
            .map_err(|e| RefereeError::BadReplay(format!("bad header params: {e}")))?;
        // Every exchange of every seat, in recorded order.
        let mut queues: Vec<VecDeque<Exchange>> = vec![VecDeque::new(); 7];
        for (line, v) in &replay.events {
            let Some(list) = v.get("exchanges").and_then(Value::as_array) else {
                continue;
            };
            for item in list {
                let ex: Exchange = serde_json::from_value(item.clone()).map_err(|e| {
                    RefereeError::BadReplay(format!("line {line}: bad exchange: {e}"))
                })?;
                let p = Power::from_name(&ex.power).ok_or_else(|| {
                    RefereeError::BadReplay(format!("line {line}: unknown power {:?}", ex.power))
                })?;
                queues[p.index()].push_back(ex);
            }
        }
        // Seats that failed to spawn have no exchanges at all; they were never started.
        let sources: Vec<Source> = queues
            .into_iter()
            .enumerate()
            .map(|(i, q)| {
                let spawn_failed = replay.events.iter().any(|(_, v)| {
                    v.get("event").and_then(Value::as_str) == Some("report")
                        && v["report"]["seats"][i]["errors"]
                            .as_array()
                            .is_some_and(|es| {
                                es.iter().any(|e| {
                                    e["turn"] == 0
                                        && e["detail"]
                                            .as_str()
                                            .is_some_and(|d| d.starts_with("cannot start the bot"))
                                })
                            })
                });
                if spawn_failed && q.is_empty() {
                    Source::Gone
                } else {
                    Source::Replayed(q)
                }
            })
            .collect();
        let early: Vec<Option<SeatError>> = (0..7)
            .map(|i| {
                matches!(sources[i], Source::Gone).then(|| {
                    let detail = replay
                        .events
                        .iter()
                        .find_map(|(_, v)| {
                            v["report"]["seats"][i]["errors"].as_array().and_then(|es| {
                                es.iter().find_map(|e| {
                                    e["detail"]
                                        .as_str()
                                        .filter(|d| d.starts_with("cannot start the bot"))
                                        .map(str::to_string)
                                })
                            })
                        })
                        .unwrap_or_default();
                    SeatError {
                        at: String::new(),
                        turn: 0,
                        kind: SeatErrorKind::NotReady,
                        detail,
                    }
                })
            })
            .collect();
        let head = header(h.seed, &h.seats, &params);
        let (mut log, game, mut errors) = block_on_ready(run_match(params, sources, head))
            .ok_or_else(|| RefereeError::BadReplay("internal: a replayed seat waited".into()))??;
        for (i, e) in early.into_iter().enumerate() {
            if let Some(e) = e {
                errors[i].insert(0, e);
            }
        }
        // Connections over a port's cap are not part of the game: taken from the recorded
        // report, last in each seat's errors as in the live match.
        for (i, errs) in errors.iter_mut().enumerate() {
            let recorded = replay
                .events
                .iter()
                .filter(|(_, v)| v.get("event").and_then(Value::as_str) == Some("report"))
                .filter_map(|(_, v)| v["report"]["seats"][i]["errors"].as_array())
                .flatten()
                .filter(|e| e["kind"] == SeatErrorKind::ExcessConnections.as_str())
                .filter_map(|e| serde_json::from_value::<SeatError>(e.clone()).ok());
            errs.extend(recorded);
        }
        let report = report(&h.seats, h.seed, &game, errors);
        log.push(&json!({"event": "report", "report": report}));
        Ok(MatchRecord {
            report,
            replay: log,
        })
    }
}
