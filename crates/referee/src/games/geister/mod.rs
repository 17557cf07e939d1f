//! The driver of `geister` (spec `geister.md`) on the seat layer: built-in bots, stdin/stdout
//! bots (`cmd:`), TCP clients that connect on their own (`tcp`) and TCP clients the referee
//! launches (`tcp-cmd:`), all behind one [`Table`](crate::seat::Table).
//!
//! The game — rules, replies, clocks, faults, its replay events and compatible log — is the pure
//! [`kakehiki_geister::Session`]; this driver is its flow over the table. The protocol lets a
//! seat speak at any time (a line out of turn is answered `NG ` at once), so the flow listens to
//! every live seat with [`Table::first`](crate::seat::Table::first). The session's clock is
//! virtual: a reply's time is its request's time plus the seat's measured reply time, so a re-run
//! (the same flow on replayed seats) reproduces the replay byte for byte.

pub mod net;
pub mod serve;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::FutureExt;
use kakehiki_agent::BotProcess;
use kakehiki_core::exchange::{ExchangeOutcome, SeatExchange};
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{seeded_rng, Bot, GameType, MatchReport, SeatError, SeatErrorKind, SeatSpec};
use kakehiki_geister::bots::make_bot;
use kakehiki_geister::engine::{outcome_of, Action, EndReason, Geister};
use kakehiki_geister::record::{event_error, v1_seat_record, SETUP};
use kakehiki_geister::rules::RULE_KEYS;
use kakehiki_geister::session::FaultKind;
use kakehiki_geister::wire::{frame, Line, ServerMsg};
use kakehiki_geister::{Out, Rules, Session, BUILTIN_BOTS};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::seat::pipe::Pipe;
use crate::seat::tcp::launch;
pub use crate::seat::tcp::{client_argv, ConnQueue};
use crate::seat::{Ask, Finished, Seat, Wait, SILENT_BOT};
pub use net::{GeisterTcp, Table};

/// Replay format name.
pub const FORMAT: &str = "kakehiki-geister/2";
/// The format [`GameDriver::upgrade`] converts from.
pub const FORMAT_V1: &str = "kakehiki-geister/1";

/// Driver options besides the rule parameters ([`RULE_KEYS`]).
pub const DRIVER_KEYS: &[&str] = &["host", "port0", "port1", "log_dir"];

/// The driver.
pub struct GeisterDriver;

/// `geister`.
pub static GEISTER: GeisterDriver = GeisterDriver;

/// Per seat: how it is connected.
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
/// ([`crate::accept::CappedAcceptor`]): recorded once per seat and game, at the end, and
/// reported as an `excess_connections` seat error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ConnectionsEvent {
    event: String,
    seat: usize,
    excess: u64,
    cap: usize,
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
        s.errors.push(SeatError {
            at: String::new(),
            turn: 0,
            kind: SeatErrorKind::ExcessConnections,
            detail: format!(
                "{} connections to the seat's port closed at once: {} were already waiting (the cap)",
                e.excess, e.cap
            ),
        });
    }
    record.replay.push(&e);
}

/// Everything fixed before a game starts.
pub struct GameSetup {
    pub rules: Rules,
    pub seed: u64,
    pub specs: [String; 2],
    /// Where to write the compatible log (spec §4.1), if anywhere.
    pub log_dir: Option<PathBuf>,
}

/// One game's seats: the table's seat, its transport's name, and a built-in bot's brain.
pub struct Players {
    pub seats: Vec<Seat>,
    pub transports: [&'static str; 2],
    pub bots: [Option<Box<dyn Bot<Geister> + Send>>; 2],
}

/// The game's flow over a table (live or replayed).
struct Flow {
    table: crate::seat::Table,
    /// The replay's header, written once the seats have connected (it names their peers).
    head: ReplayHeader,
    session: Session,
    bots: [Option<Box<dyn Bot<Geister> + Send>>; 2],
    /// What each live seat is awaited for, and its request's time on the virtual clock.
    waits: [Option<(Wait, u64)>; 2],
    /// The virtual clock (ms): the latest input's time.
    now: u64,
    /// Seats whose messages are paced (processes and clients, in a live game).
    paced: [bool; 2],
    last_write: [Option<Instant>; 2],
    read_since_write: [bool; 2],
    /// Session events already written to the replay.
    logged: usize,
}

fn msg_kind(m: &ServerMsg) -> &'static str {
    match m {
        ServerMsg::Set => "SET?",
        ServerMsg::Mov(_) => "MOV?",
        ServerMsg::Ok | ServerMsg::OkRed | ServerMsg::OkBlue => "OK",
        ServerMsg::Ng => "NG",
        _ => "end",
    }
}

fn fault_of(outcome: ExchangeOutcome) -> FaultKind {
    match outcome {
        ExchangeOutcome::Disconnect | ExchangeOutcome::Malformed => FaultKind::Disconnect,
        _ => FaultKind::Exit,
    }
}

fn ms(d: u64) -> Duration {
    Duration::from_millis(d)
}

impl Flow {
    fn label(&self) -> String {
        let g = self.session.game();
        if g.in_play() || g.is_over() {
            format!("ply {}", g.ply() + 1)
        } else {
            SETUP.to_string()
        }
    }

    async fn run(&mut self, tcp: [bool; 2]) {
        let rules = self.session.rules().clone();
        let mut faults = Vec::new();
        let connect: Vec<usize> = (0..2).filter(|&s| tcp[s]).collect();
        if !connect.is_empty() {
            let asks = connect
                .iter()
                .map(|&s| {
                    let limit = ms(rules.connect_timeout_ms);
                    let mut a = Ask::new(s, SETUP, "connect", Vec::new(), limit);
                    a.handshake = true;
                    a
                })
                .collect();
            let answers = self.table.ask(asks, |_, _| Vec::new()).await;
            for (&s, a) in connect.iter().zip(&answers) {
                let detail = a.detail.clone().unwrap_or_default();
                match a.outcome {
                    ExchangeOutcome::Reply => {
                        let peer = a.text().filter(|p| !p.is_empty());
                        self.head.params["seats"][s]["peer"] = serde_json::json!(peer);
                    }
                    ExchangeOutcome::Timeout => faults.push((
                        s,
                        FaultKind::ConnectTimeout,
                        format!("no connection within {} ms", rules.connect_timeout_ms),
                    )),
                    o => faults.push((s, fault_of(o), detail)),
                }
            }
        }
        // The header first, with the peers the connections came from.
        let mut log = ReplayLog::new();
        log.push(&self.head);
        for l in std::mem::take(&mut self.table.log).lines() {
            if let Ok(e) = serde_json::from_str::<SeatExchange>(l) {
                log.push(&e);
            }
        }
        self.table.log = log;
        let mut outs = Vec::new();
        for s in (0..2).filter(|s| !faults.iter().any(|f| f.0 == *s)) {
            outs.extend(self.session.assign(s, 0));
        }
        self.deliver(outs).await;
        if !faults.is_empty() {
            let outs = self.session.faults(&faults, self.now);
            self.record_events(Some(&connect));
            self.deliver(outs).await;
        }
        while !self.session.is_over() {
            self.listen();
            let waits: Vec<Wait> = self.waits.iter().flatten().map(|w| w.0.clone()).collect();
            self.table.turn = self.session.game().ply() + 1;
            let Flow {
                table,
                session,
                bots,
                ..
            } = self;
            let got = table
                .first(&waits, |seat, _| builtin_reply(session, bots, seat))
                .await;
            let Some((i, answer)) = got else { break };
            let seat = waits[i].seat;
            let since = self.waits[seat].as_ref().map_or(self.now, |w| w.1);
            let now = since + answer.time_us.unwrap_or(0) / 1000;
            self.now = self.now.max(now);
            let outs = match answer.outcome {
                ExchangeOutcome::Reply => {
                    self.read_since_write[seat] = true;
                    let line = if answer.truncated {
                        Line::TooLong
                    } else {
                        frame(&answer.bytes)
                    };
                    self.session.line(seat, &line, now)
                }
                ExchangeOutcome::Timeout => self.session.tick(now),
                o => {
                    let detail = answer.detail.clone().unwrap_or_default();
                    self.session.fault(seat, fault_of(o), &detail, now)
                }
            };
            self.record_events(Some(&[seat]));
            self.deliver(outs).await;
        }
    }

    /// Every live seat not awaited for a reply is listened to (a line out of turn is answered).
    fn listen(&mut self) {
        let at = self.label();
        for s in 0..2 {
            if !self.session.is_live(s) {
                self.waits[s] = None;
                continue;
            }
            let expecting = !self.session.game().placed(s) || self.session.awaiting() == Some(s);
            let keep = self.waits[s]
                .as_ref()
                .is_some_and(|(w, _)| w.limit.is_some() == expecting && (expecting || w.at == at));
            if !keep && !expecting {
                let wait = Wait {
                    seat: s,
                    at: at.clone(),
                    kind: "line".into(),
                    limit: None,
                    since: Instant::now(),
                    timeout_not_ready: false,
                };
                self.waits[s] = Some((wait, self.now));
            }
        }
    }

    /// Write the session's messages in order (pacing first); a request starts its seat's wait.
    async fn deliver(&mut self, outs: Vec<Out>) {
        let mut queue: VecDeque<Out> = outs.into();
        while let Some(o) = queue.pop_front() {
            let seat = o.seat;
            let pace = ms(self.session.rules().pace_ms);
            if self.paced[seat] && !pace.is_zero() && !self.read_since_write[seat] {
                if let Some(last) = self.last_write[seat] {
                    tokio::time::sleep_until(last + pace).await;
                }
            }
            let at = self.label();
            let limit = ms(self.session.rules().per_move_ms.max(1000));
            let bytes = o.msg.to_bytes();
            let kind = msg_kind(&o.msg);
            let failed = self.table.tell(seat, &at, kind, &bytes, limit).await;
            self.last_write[seat] = Some(Instant::now());
            self.read_since_write[seat] = false;
            if let Some(a) = failed {
                let detail = format!("write failed: {}", a.detail.unwrap_or_default());
                let more = self
                    .session
                    .fault(seat, FaultKind::WriteFailed, &detail, self.now);
                self.record_events(Some(&[seat]));
                queue.extend(more);
                continue;
            }
            if matches!(o.msg, ServerMsg::Mov(_)) {
                self.session.clock_started(seat, self.now);
            }
            if matches!(o.msg, ServerMsg::Set | ServerMsg::Mov(_)) {
                let limit = self
                    .session
                    .deadline(seat)
                    .map(|d| ms(d.saturating_sub(self.now)));
                let wait = Wait {
                    seat,
                    at,
                    kind: kind.into(),
                    limit,
                    since: Instant::now(),
                    timeout_not_ready: kind == "SET?",
                };
                self.waits[seat] = Some((wait, self.now));
            }
        }
    }

    /// Write the session's new events to the replay; the errors they show are the seats'
    /// (but the failures of seats in `noted`, which the table recorded).
    fn record_events(&mut self, noted: Option<&[usize]>) {
        let at = self.label();
        for e in &self.session.events()[self.logged..] {
            self.table.record(e);
            if let Some((seat, at, kind, detail)) = event_error(e, &at, noted.unwrap_or(&[])) {
                self.table.fault(seat, &at, kind, detail);
            }
        }
        self.logged = self.session.events().len();
    }
}

/// A built-in bot's reply, in the wire format a client would send.
fn builtin_reply(
    session: &Session,
    bots: &mut [Option<Box<dyn Bot<Geister> + Send>>; 2],
    seat: usize,
) -> Vec<u8> {
    let Some(bot) = bots[seat].as_mut() else {
        return Vec::new();
    };
    let view = session.game().view(seat);
    match bot.act(seat, &view) {
        Action::Place(r) => format!("SET:{}", r.labels()).into_bytes(),
        Action::Move(m) => format!("MOV:{}", m.wire()).into_bytes(),
    }
}

/// Play (or re-run, on a replayed table) one game: returns the record and the finished table.
async fn run_flow(
    setup: &GameSetup,
    table: crate::seat::Table,
    head: ReplayHeader,
    transports: [&str; 2],
    bots: [Option<Box<dyn Bot<Geister> + Send>>; 2],
    live: bool,
) -> (MatchRecord, Finished, Session) {
    let mut flow = Flow {
        table,
        head,
        session: Session::new(setup.rules.clone()),
        bots,
        waits: [None, None],
        now: 0,
        paced: transports.map(|t| live && t != "builtin"),
        last_write: [None; 2],
        read_since_write: [false; 2],
        logged: 0,
    };
    flow.run(transports.map(|t| t == "tcp")).await;
    flow.record_events(None);
    let Flow { table, session, .. } = flow;
    let finished = table.finish(ms(setup.rules.linger_ms)).await;
    let record = report(setup, &session, &finished, transports);
    (record, finished, session)
}

fn header(setup: &GameSetup, params: &HeaderParams) -> ReplayHeader {
    ReplayHeader {
        event: "header".into(),
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        game: "geister".into(),
        rules: setup.rules.name.clone(),
        seed: setup.seed,
        seats: setup.specs.to_vec(),
        params: serde_json::to_value(params).unwrap_or_default(),
    }
}

fn report(
    setup: &GameSetup,
    session: &Session,
    finished: &Finished,
    transports: [&str; 2],
) -> MatchRecord {
    let end = session
        .game()
        .end()
        .copied()
        .unwrap_or(kakehiki_geister::End {
            winner: None,
            reason: EndReason::DoubleForfeit,
            scores: None,
        });
    let seats = setup
        .specs
        .iter()
        .map(|s| (s.clone(), Vec::new()))
        .collect();
    let mut report = MatchReport::new(
        "geister",
        &setup.rules.name,
        setup.seed,
        &outcome_of(&end),
        seats,
    );
    finished.fill_report(&mut report);
    report.everyone_lost = end.reason == EndReason::DoubleForfeit;
    let extra = &mut report.extra;
    extra.insert("end".into(), serde_json::json!(end.reason.report_name()));
    extra.insert("reason".into(), serde_json::json!(end.reason.as_str()));
    extra.insert("plies".into(), serde_json::json!(session.game().ply()));
    if let Some(s) = end.scores {
        extra.insert("end_scores".into(), serde_json::json!(s));
    }
    for (sr, t) in report.seats.iter_mut().zip(transports) {
        sr.extra.insert("transport".into(), serde_json::json!(t));
    }
    MatchRecord {
        report,
        replay: finished.log.clone(),
    }
}

/// Play one game with the given seats. Never fails: seat failures are recorded.
pub async fn run_game(setup: &GameSetup, players: Players) -> MatchRecord {
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let params = HeaderParams {
        rules: setup.rules.clone(),
        seats: players
            .transports
            .iter()
            .map(|t| SeatInfo {
                transport: t.to_string(),
                peer: None,
            })
            .collect(),
        started_unix_ms,
    };
    let table = crate::seat::Table::new(players.seats, ReplayLog::new());
    let head = header(setup, &params);
    let (record, _, session) =
        run_flow(setup, table, head, players.transports, players.bots, true).await;
    if let Some(dir) = &setup.log_dir {
        write_compat_log(dir, &session, started_unix_ms);
    }
    record
}

/// The compatible log's text (spec §4.1): LF line ends.
pub fn compat_log_text(session: &Session) -> String {
    session
        .log_lines()
        .iter()
        .map(|l| format!("{l}\n"))
        .collect()
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
    let stem = log_file_stem(started_unix_ms + session.first_set_at().unwrap_or(0));
    let text = compat_log_text(session);
    if kakehiki_core::private_files::create_dir_all(dir).is_err() {
        return;
    }
    for n in 0..1000 {
        let name = match n {
            0 => format!("{stem}.txt"),
            _ => format!("{stem}-{n}.txt"),
        };
        match kakehiki_core::private_files::create_new(&dir.join(name)) {
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
                if !BUILTIN_BOTS.contains(&b.as_str()) && b != SILENT_BOT {
                    return Err(RefereeError::UnknownBot {
                        game: "geister".into(),
                        seat,
                        name: b.clone(),
                        expected: format!("{}, {SILENT_BOT}", BUILTIN_BOTS.join(", ")),
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
        let linger = ms(rules.linger_ms);
        let mut players = Players {
            seats: Vec::new(),
            transports: ["builtin"; 2],
            bots: [None, None],
        };
        let mut queues: [Option<Arc<Mutex<ConnQueue>>>; 2] = [None, None];
        // Listeners first: a port in use means the match cannot be set up.
        for (seat, s) in spec.seats.iter().enumerate() {
            let sandbox = spec.sandbox.for_seat(seat);
            let host_fault = |e: &kakehiki_agent::SpawnError| RefereeError::host_fault(seat, e);
            let (transport, made) = match s {
                SeatSpec::Builtin(name) => {
                    let rng = seeded_rng(spec.seed, &format!("seat-{seat}"));
                    players.bots[seat] = make_bot(name, rng).ok();
                    ("builtin", Seat::builtin(name))
                }
                SeatSpec::Cmd(argv) => match BotProcess::spawn(argv, &sandbox) {
                    Ok(p) => ("stdio", Seat::Live(Box::new(Pipe::new(p)))),
                    Err(e) => match host_fault(&e) {
                        Some(f) => return Err(f),
                        None => (
                            "stdio",
                            Seat::NotStarted(format!("cannot start the bot: {e}")),
                        ),
                    },
                },
                SeatSpec::Tcp => {
                    let q = ConnQueue::bind(&host, ports[seat]).await?;
                    spec.on_listen.notify(seat, q.local_addr());
                    let q = Arc::new(Mutex::new(q));
                    queues[seat] = Some(q.clone());
                    (
                        "tcp",
                        Seat::Live(Box::new(GeisterTcp::waiting(q, None, linger))),
                    )
                }
                // The client gets a network of its own holding only its seat's listener, on
                // the contest's port for its seat.
                SeatSpec::TcpCmd(argv) => {
                    let label = format!("geister seat {seat}");
                    match launch(|a| client_argv(argv, a), &sandbox, ports[seat], &label) {
                        Ok((client, q)) => {
                            let q = Arc::new(Mutex::new(q));
                            queues[seat] = Some(q.clone());
                            let t = GeisterTcp::waiting(q, Some(client), linger);
                            ("tcp", Seat::Live(Box::new(t)))
                        }
                        Err(e) => match host_fault(&e) {
                            Some(f) => return Err(f),
                            None => (
                                "tcp",
                                Seat::NotStarted(format!("cannot start the client: {e}")),
                            ),
                        },
                    }
                }
            };
            players.transports[seat] = transport;
            players.seats.push(made);
        }
        let setup = GameSetup {
            rules,
            seed: spec.seed,
            specs: [spec.seats[0].to_string(), spec.seats[1].to_string()],
            log_dir: spec.options.get("log_dir").map(PathBuf::from),
        };
        let mut record = run_game(&setup, players).await;
        let mut counts = [(0, 0); 2];
        for (c, q) in counts.iter_mut().zip(&queues) {
            if let Some(q) = q {
                let q = q.lock().await;
                *c = (q.excess(), q.cap());
            }
        }
        add_excess_counts(&mut record, counts);
        // Close the listeners now: a client must not queue on a table that is gone, and the
        // next match binds the same port.
        drop(queues);
        for _ in 0..2 {
            tokio::task::yield_now().await;
        }
        Ok(record)
    }
}

/// Play one game on a table whose two seats are TCP clients connecting to its ports (they may
/// reconnect for every game).
pub async fn play_on_table(table: &mut Table, rules: Rules, seed: u64) -> MatchRecord {
    let linger = ms(rules.linger_ms);
    let seats = table
        .queues
        .iter()
        .map(|q| Seat::Live(Box::new(GeisterTcp::waiting(q.clone(), None, linger)) as _))
        .collect();
    let setup = GameSetup {
        rules,
        seed,
        specs: ["tcp".into(), "tcp".into()],
        log_dir: None,
    };
    let players = Players {
        seats,
        transports: ["tcp"; 2],
        bots: [None, None],
    };
    run_game(&setup, players).await
}

fn bad(msg: impl Into<String>) -> RefereeError {
    RefereeError::BadReplay(msg.into())
}

/// Re-run a replay: the same flow on a table of replayed seats.
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
    let mut transports = ["builtin"; 2];
    for (t, info) in transports.iter_mut().zip(&params.seats) {
        *t = match info.transport.as_str() {
            "builtin" => "builtin",
            "stdio" => "stdio",
            "tcp" => "tcp",
            other => return Err(bad(format!("unknown seat transport {other:?}"))),
        };
    }
    let setup = GameSetup {
        rules: params.rules.clone(),
        seed: h.seed,
        specs: [h.seats[0].clone(), h.seats[1].clone()],
        log_dir: None,
    };
    let mut params = params;
    for s in &mut params.seats {
        s.peer = None;
    }
    let table = crate::seat::Table::replayed(replay, 2, ReplayLog::new())?;
    let head = header(&setup, &params);
    let flow = run_flow(&setup, table, head, transports, [None, None], false);
    let (mut record, _, _) = flow
        .now_or_never()
        .ok_or_else(|| bad("the re-run waited for a seat that is not replayed"))?;
    for e in replay.events_of::<ConnectionsEvent>("connections")? {
        if e.seat >= 2 {
            return Err(bad(format!("connections event of seat {}", e.seat)));
        }
        add_connections_event(&mut record, e);
    }
    Ok(record)
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

    /// `kakehiki-geister/1`: its events imply the seat record; the same flow re-runs on it.
    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        if old.header.format != FORMAT_V1 {
            return Err(bad(format!(
                "format {:?} is not {FORMAT_V1:?}",
                old.header.format
            )));
        }
        let params: HeaderParams = serde_json::from_value(old.header.params.clone())
            .map_err(|e| bad(format!("header params: {e}")))?;
        let tcp: Vec<bool> = params.seats.iter().map(|s| s.transport == "tcp").collect();
        let events = v1_seat_record(&old.events, &tcp).map_err(bad)?;
        let mut header = old.header.clone();
        header.format = FORMAT.into();
        header.params = serde_json::to_value(params).unwrap_or_default();
        let events = events.into_iter().enumerate().map(|(i, v)| (i + 2, v));
        let new = ParsedReplay {
            header,
            events: events.collect(),
        };
        Ok(rerun_replay(&new)?.replay)
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
}
