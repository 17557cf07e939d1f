//! The driver of `geister` (spec `geister.md`) on the seat layer: built-in bots, stdin/stdout
//! bots (`cmd:`), TCP clients that connect on their own (`tcp`) and TCP clients the referee
//! launches (`tcp-cmd:`), all behind one [`Table`](crate::seat::Table).
//!
//! The game — rules, replies, clocks, faults, its replay events and compatible log — is the pure
//! [`kakehiki_geister::Session`]; this driver is its flow over the table. The protocol lets a
//! seat speak at any time (a line out of turn is answered `NG ` at once), so the flow listens to
//! every live seat with [`Table::first`](crate::seat::Table::first), together with the TCP seats
//! whose client has not connected yet: each seat is assigned (`SET?`) when its own client
//! connects, and plays its placement without waiting for its opponent's. The session's clock is
//! virtual, from the game's start: a reply's time is its request's time plus the seat's measured
//! reply time (a connection's, the time it took), so a re-run (the same flow on replayed seats)
//! reproduces the replay byte for byte.

pub mod serve;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kakehiki_agent::{BotProcess, ClientProcess};
use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{seeded_rng, Bot, GameType, SeatSpec};
use kakehiki_geister::bots::make_bot;
use kakehiki_geister::engine::Geister;
use kakehiki_geister::record::{self, event_error, ConnectionsEvent, HeaderParams, SETUP};
use kakehiki_geister::rules::RULE_KEYS;
use kakehiki_geister::session::{log_file_names, FaultKind};
use kakehiki_geister::wire::{Command, MAX_LINE};
use kakehiki_geister::{Out, Rules, Session, GAME_TYPE};
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::files::{unix_now, write_first_free};
use crate::lifecycle::Lifecycle;
use crate::seat::pipe::Pipe;
pub use crate::seat::tcp::{client_argv, ConnQueue};
use crate::seat::tcp::{launch, Conn, SharedQueue, SharedTcpSeat};
use crate::seat::{Answer, Finished, Seat, Wait};
pub use serve::{play_on_table, Table};

pub use kakehiki_geister::record::{SeatInfo, FORMAT, FORMAT_V1, FORMAT_V2};

/// Driver options besides the rule parameters ([`RULE_KEYS`]).
pub const DRIVER_KEYS: &[&str] = &["host", "port0", "port1", "log_dir"];

/// The driver.
pub struct GeisterDriver;

/// `geister`.
pub static GEISTER: GeisterDriver = GeisterDriver;

/// The game for the shared match lifecycle: the programs get the rules' `linger_ms` to exit
/// (a connection is kept that long after the end message).
pub(crate) const GEISTER_LIFE: Lifecycle<Rules> = Lifecycle {
    game: &GAME_TYPE,
    format: FORMAT,
    params: checked_rules,
    end_grace: |rules| ms(rules.linger_ms),
};

/// The rules of a spec, after checking its rule set, seats and options.
fn checked_rules(spec: &MatchSpec) -> Result<Rules, RefereeError> {
    let mut known: Vec<&str> = RULE_KEYS.to_vec();
    known.extend_from_slice(DRIVER_KEYS);
    spec.check_common(&GAME_TYPE, &known)?;
    rules_from(spec)
}

/// Record `(excess, cap)` of each seat's port, where the excess is not 0.
pub(crate) fn add_excess_counts(record: &mut MatchRecord, counts: [(u64, usize); 2]) {
    for (seat, (excess, cap)) in counts.into_iter().enumerate() {
        if excess > 0 {
            add_connections_event(record, ConnectionsEvent::new(seat, excess, cap));
        }
    }
}

fn add_connections_event(record: &mut MatchRecord, e: ConnectionsEvent) {
    if let Some(s) = record.report.seats.get_mut(e.seat) {
        s.errors.push(e.error());
    }
    record.replay.push(&e);
}

/// A connection the way Geister reads it: LF-framed lines, cut after 256 bytes and a CR.
pub fn conn(stream: tokio::net::TcpStream) -> Conn {
    Conn::start(stream, MAX_LINE + 1).lf_only()
}

/// Everything fixed before a game starts.
#[derive(Clone)]
pub struct GameSetup {
    pub rules: Rules,
    pub seed: u64,
    pub specs: [String; 2],
    /// Where to write the compatible log (spec §4.1), if anywhere.
    pub log_dir: Option<PathBuf>,
    /// Where the seats' thinking times are added up ([`MatchSpec::clock`]), if anywhere.
    pub clock: Option<crate::seat::SeatClock>,
    /// Where the replay is published as it is played ([`MatchSpec::live`]), if anywhere.
    pub live: Option<std::sync::Arc<crate::live::LiveMatch>>,
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
    /// The replay's header, put before the first line once no seat's connection is awaited any
    /// more (it names their peers), or at the end.
    head: ReplayHeader,
    header_written: bool,
    /// The TCP seats whose client's connection is awaited: a seat is assigned (sent `SET?`) as
    /// soon as its own connection comes, whether or not its opponent's has.
    connecting: [bool; 2],
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

fn ms(d: u64) -> Duration {
    Duration::from_millis(d)
}

/// Awaiting `seat` from now for `kind` (a `SET?` unanswered is the seat not getting ready).
fn wait(seat: usize, at: &str, kind: &str, limit: Option<Duration>) -> Wait {
    Wait {
        seat,
        at: at.into(),
        kind: kind.into(),
        limit,
        since: Instant::now(),
        timeout_not_ready: kind == "SET?",
        handshake: false,
    }
}

/// Awaiting the connection of TCP seat `seat` for `limit` from the game's start, `since`
/// (every failure is the seat not getting ready).
fn connect_wait(seat: usize, since: Instant, limit: Duration) -> Wait {
    Wait {
        seat,
        at: SETUP.into(),
        kind: "connect".into(),
        limit: Some(limit),
        since,
        timeout_not_ready: true,
        handshake: true,
    }
}

impl Flow {
    /// The game: seats without a connection to wait for are assigned at once; a TCP seat when
    /// its client connects (within `connect_timeout_ms` of the start), each on its own, so a
    /// seat whose client came first places (and is answered) while its opponent's is awaited
    /// (spec §3.6, §3.10). Then every live seat is listened to until the end.
    async fn run(&mut self, tcp: [bool; 2]) {
        let connect_limit = ms(self.session.rules().connect_timeout_ms);
        let start = Instant::now();
        let mut outs = Vec::new();
        for (s, tcp) in tcp.into_iter().enumerate() {
            if tcp {
                self.connecting[s] = true;
                self.waits[s] = Some((connect_wait(s, start, connect_limit), 0));
            } else {
                outs.extend(self.session.assign(s, 0));
            }
        }
        self.header_once_connected();
        self.deliver(outs).await;
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
            if self.connecting[seat] {
                self.connect_answer(seat, &answer, &waits).await;
                continue;
            }
            if answer.outcome == ExchangeOutcome::Reply {
                self.read_since_write[seat] = true;
            }
            let reply = (answer.bytes.as_slice(), answer.truncated);
            let detail = answer.detail.as_deref().unwrap_or_default();
            let outs = self
                .session
                .answer(seat, answer.outcome, reply, detail, now);
            self.record_events(Some(&[seat]));
            self.deliver(outs).await;
        }
        self.write_header();
    }

    /// What came of the wait for TCP seat `seat`'s connection (`waits`: this round's): the seat
    /// is assigned, or fails. A seat whose connection timed out fails together with every seat
    /// still awaited at the same deadline (both: a double forfeit), each asked once more at
    /// once, so a connection already there is still taken.
    async fn connect_answer(&mut self, seat: usize, answer: &Answer, waits: &[Wait]) {
        let limit_ms = self.session.rules().connect_timeout_ms;
        let mut answers = vec![(seat, answer.clone())];
        if answer.outcome == ExchangeOutcome::Timeout {
            for w in waits {
                if w.seat != seat && self.connecting[w.seat] {
                    let got = self.table.first(std::slice::from_ref(w), |_, _| Vec::new());
                    if let Some((_, a)) = got.await {
                        answers.push((w.seat, a));
                    }
                }
            }
        }
        let mut outs = Vec::new();
        let mut faults = Vec::new();
        for (s, a) in &answers {
            self.connecting[*s] = false;
            match FaultKind::of_connect(a.outcome, a.detail.as_deref(), limit_ms) {
                Some((kind, detail)) => faults.push((*s, kind, detail)),
                None => {
                    let peer = a.text().filter(|p| !p.is_empty());
                    self.head.params["seats"][*s]["peer"] = serde_json::json!(peer);
                    outs.extend(self.session.assign(*s, self.now));
                }
            }
        }
        self.header_once_connected();
        self.record_events(None);
        self.deliver(outs).await;
        if !faults.is_empty() {
            let outs = self.session.faults(&faults, self.now);
            let noted: Vec<usize> = faults.iter().map(|f| f.0).collect();
            self.record_events(Some(&noted));
            self.deliver(outs).await;
        }
    }

    /// The header, once no seat's connection is awaited (it names the peers).
    fn header_once_connected(&mut self) {
        if !self.connecting.contains(&true) {
            self.write_header();
        }
    }

    /// The header before every line so far, once.
    fn write_header(&mut self) {
        if !std::mem::replace(&mut self.header_written, true) {
            self.table.log().push_front(&self.head);
        }
    }

    /// Every live seat not awaited for a reply is listened to (a line out of turn is answered).
    fn listen(&mut self) {
        let at = self.session.label();
        for s in 0..2 {
            if self.connecting[s] {
                continue;
            }
            if !self.session.is_live(s) {
                self.waits[s] = None;
                continue;
            }
            let expecting = self.session.expects_reply(s);
            let keep = self.waits[s]
                .as_ref()
                .is_some_and(|(w, _)| w.limit.is_some() == expecting && (expecting || w.at == at));
            if !keep && !expecting {
                self.waits[s] = Some((wait(s, &at, "line", None), self.now));
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
            let at = self.session.label();
            let limit = ms(self.session.rules().per_move_ms.max(1000));
            let bytes = o.msg.to_bytes();
            let kind = o.msg.kind();
            let failed = self.table.tell(seat, &at, kind, bytes, limit).await;
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
            if let Some(limit) = self.session.written(seat, &o.msg, self.now) {
                self.waits[seat] = Some((wait(seat, &at, kind, limit.map(ms)), self.now));
            }
        }
    }

    /// Write the session's new events to the replay; the errors they show are the seats'
    /// (but the failures of seats in `noted`, which the table recorded).
    fn record_events(&mut self, noted: Option<&[usize]>) {
        let at = self.session.label();
        for e in &self.session.events()[self.logged..] {
            self.table.record_later(e.clone());
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
    Command::from(bot.act(seat, &view)).text().into_bytes()
}

/// One game's flow on `table` (live or replayed): the table goes back to the lifecycle with the
/// session.
async fn turns(
    table: crate::seat::Table,
    setup: GameSetup,
    params: HeaderParams,
    transports: [&'static str; 2],
    bots: [Option<Box<dyn Bot<Geister> + Send>>; 2],
    live: bool,
) -> (crate::seat::Table, Session) {
    let mut flow = Flow {
        table,
        head: record::header(setup.seed, &setup.specs, &params),
        header_written: false,
        connecting: [false; 2],
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
    (table, session)
}

/// The record of a game, once its seats are finished; and the session.
fn close(
    setup: &GameSetup,
    transports: [&'static str; 2],
) -> impl FnOnce(Session, Finished) -> (MatchRecord, Session) + Send + 'static {
    let (seed, specs) = (setup.seed, setup.specs.clone());
    move |session, finished| {
        let report = record::report(&session, seed, &specs, transports);
        (finished.record(report), session)
    }
}

/// Play one game with the given seats, as a task of its own on the current runtime (so that a
/// caller blocked on the runtime does not wake a parked thread for every reply; see
/// [`crate::driver::as_task`]). Seat failures are recorded; the error is the runtime's shutting
/// down.
pub async fn run_game(setup: &GameSetup, players: Players) -> Result<MatchRecord, RefereeError> {
    let started_unix_ms = unix_now().as_millis() as u64;
    let (transports, bots) = (players.transports, players.bots);
    let params = HeaderParams::new(&setup.rules, transports, started_unix_ms);
    let mut table = crate::seat::Table::new(players.seats, ReplayLog::new());
    if let Some(clock) = &setup.clock {
        table = table.clocked(clock.clone());
    }
    table = table.live(setup.live.clone());
    let s = setup.clone();
    let flow = move |table| turns(table, s, params, transports, bots, true);
    let close = close(setup, transports);
    let (record, session) = GEISTER_LIFE.play(&setup.rules, table, flow, close).await?;
    if let Some(dir) = &setup.log_dir {
        let names = log_file_names(started_unix_ms + session.first_set_at().unwrap_or(0));
        write_first_free(dir, names, &session.log_text());
    }
    Ok(record)
}

/// Rules from the spec's rule set (checked first) and options.
pub fn rules_from(spec: &MatchSpec) -> Result<Rules, RefereeError> {
    spec.check_rules(&GAME_TYPE)?;
    Ok(Rules::with_options(spec.rules.as_deref(), &spec.options)?)
}

impl GeisterDriver {
    async fn play_async(&self, spec: &MatchSpec) -> Result<MatchRecord, RefereeError> {
        let rules = GEISTER_LIFE.check(spec)?;
        let host: String = spec.option(
            "host",
            "127.0.0.1".to_string(),
            "a host name or address to listen on",
        )?;
        let ports = [
            spec.option("port0", 10000u16, "a TCP port number")?,
            spec.option("port1", 10001u16, "a TCP port number")?,
        ];
        let linger = GEISTER_LIFE.end_grace(&rules);
        let mut players = Players {
            seats: Vec::new(),
            transports: ["builtin"; 2],
            bots: [None, None],
        };
        let mut queues: [Option<SharedQueue>; 2] = [None, None];
        // Listeners first: a port in use means the match cannot be set up.
        for (seat, s) in spec.seats.iter().enumerate() {
            let sandbox = spec.sandbox.for_seat(seat);
            let slot = &mut queues[seat];
            let made = match s {
                SeatSpec::Builtin(name) => {
                    let rng = seeded_rng(spec.seed, &format!("seat-{seat}"));
                    players.bots[seat] = make_bot(name, rng).ok();
                    Ok(Seat::builtin(name))
                }
                SeatSpec::Cmd(argv) => {
                    BotProcess::spawn(argv, &sandbox).map(|p| Seat::Live(Box::new(Pipe::new(p))))
                }
                SeatSpec::Tcp => {
                    let q = ConnQueue::bind(&host, ports[seat]).await?;
                    spec.on_listen.notify(seat, q.local_addr());
                    Ok(waiting(slot, q, None, linger))
                }
                // The client gets a network of its own holding only its seat's listener, on
                // the contest's port for its seat.
                SeatSpec::TcpCmd(argv) => {
                    let label = format!("geister seat {seat}");
                    launch(|a| client_argv(argv, a), &sandbox, ports[seat], &label)
                        .map(|(client, q)| waiting(slot, q, Some(client), linger))
                }
                SeatSpec::Daide(_) => {
                    return Err(crate::driver::daide_unsupported("geister", seat))
                }
                SeatSpec::Human => Ok(crate::seat::human::seat(spec, seat, None)?),
            };
            let (transport, what) = match s {
                SeatSpec::Builtin(_) => ("builtin", "bot"),
                SeatSpec::Cmd(_) => ("stdio", "bot"),
                SeatSpec::Human => ("human", "person"),
                _ => ("tcp", "client"),
            };
            players.transports[seat] = transport;
            players.seats.push(match made {
                Ok(made) => made,
                Err(e) => match RefereeError::host_fault(seat, &e) {
                    Some(f) => return Err(f),
                    None => Seat::NotStarted(format!("cannot start the {what}: {e}")),
                },
            });
        }
        let setup = GameSetup {
            rules,
            seed: spec.seed,
            specs: [spec.seats[0].to_string(), spec.seats[1].to_string()],
            log_dir: spec.options.get("log_dir").map(PathBuf::from),
            clock: Some(spec.clock.clone()),
            live: spec.live.clone(),
        };
        let mut record = run_game(&setup, players).await?;
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

/// A TCP seat waiting for its client's connection on `q` (kept in `slot` to count its excess).
fn waiting(
    slot: &mut Option<SharedQueue>,
    q: ConnQueue,
    client: Option<ClientProcess>,
    linger: Duration,
) -> Seat {
    let q = Arc::new(Mutex::new(q));
    *slot = Some(q.clone());
    Seat::Live(Box::new(SharedTcpSeat::waiting(q, client, conn, linger)))
}

fn bad(msg: impl Into<String>) -> RefereeError {
    RefereeError::BadReplay(msg.into())
}

/// Re-run a replay: the same flow on a table of replayed seats.
pub fn rerun_replay(replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
    let h = &replay.header;
    // An older format is to be upgraded: its re-run is not the same game any more.
    crate::verify::check_format(&h.format, FORMAT)?;
    let (params, transports) = record::rerun_params(h).map_err(bad)?;
    let setup = GameSetup {
        rules: params.rules.clone(),
        seed: h.seed,
        specs: [h.seats[0].clone(), h.seats[1].clone()],
        log_dir: None,
        clock: None,
        live: None,
    };
    let table = GEISTER_LIFE.replayed(replay, 2, None)?;
    let close = close(&setup, transports);
    let flow = |table| {
        turns(
            table,
            setup.clone(),
            params,
            transports,
            [None, None],
            false,
        )
    };
    let (mut record, _) = GEISTER_LIFE.rerun(&setup.rules, table, flow, close)?;
    for e in replay.events_of::<ConnectionsEvent>("connections")? {
        if e.seat >= 2 {
            return Err(bad(format!("connections event of seat {}", e.seat)));
        }
        add_connections_event(&mut record, e);
    }
    Ok(record)
}

impl GameDriver for GeisterDriver {
    // Everything but the placements (the red ghosts): moves, captures with their colours (told
    // to both players), faults and the end.
    fn public_live(&self) -> fn(&str) -> bool {
        |line| match crate::driver::line_kind(line) {
            Some((e, k)) => e != "set" && !(e == "seat" && k.as_deref() == Some("SET?")),
            None => false,
        }
    }
    fn game_type(&self) -> &'static GameType {
        &GAME_TYPE
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(self.play_async(spec))
    }

    fn check_spec(&self, spec: &MatchSpec) -> Result<(), RefereeError> {
        GEISTER_LIFE.check(spec).map(drop)
    }

    /// `connect_timeout_ms` for the clients, `set_timeout_ms` for the red ghosts, then each
    /// seat's own clock: its bank and `per_move_ms` for each of its moves (half the plies,
    /// rounded up), the pacing of each ply's messages, then `linger_ms`.
    fn longest_legal_match(&self, spec: &MatchSpec) -> Result<Option<Duration>, RefereeError> {
        Ok(Some(longest_match(&GEISTER_LIFE.check(spec)?)))
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        rerun_replay(replay)
    }

    /// `kakehiki-geister/1` (its events imply the seat record) and `/2` (whose game clock
    /// started once both TCP seats had connected): the same flow re-runs on the seat record.
    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        let new = record::upgrade(old).map_err(bad)?;
        Ok(rerun_replay(&new)?.replay)
    }
}

/// The longest a match under `rules` can last with both players within their clocks.
fn longest_match(rules: &Rules) -> Duration {
    let plies = u64::from(rules.max_plies);
    let moves = plies.div_ceil(2);
    let clock = rules
        .bank_ms
        .saturating_add(moves.saturating_mul(rules.per_move_ms));
    let ms = rules
        .connect_timeout_ms
        .saturating_add(rules.set_timeout_ms)
        .saturating_add(clock.saturating_mul(2))
        .saturating_add(plies.saturating_mul(rules.pace_ms))
        .saturating_add(rules.linger_ms);
    Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kakehiki_core::SeatSpec;
    use kakehiki_geister::session::log_file_stem;

    #[test]
    fn the_longest_legal_match_is_both_clocks_and_the_waits() {
        let mut spec = MatchSpec::new("geister", 1, vec![SeatSpec::Builtin("random".into()); 2]);
        let r = GEISTER_LIFE.check(&spec).unwrap();
        let want = r.connect_timeout_ms
            + r.set_timeout_ms
            + 2 * (r.bank_ms + u64::from(r.max_plies).div_ceil(2) * r.per_move_ms)
            + u64::from(r.max_plies) * r.pace_ms
            + r.linger_ms;
        assert_eq!(longest_match(&r), Duration::from_millis(want));
        for (k, v) in [
            ("max_plies", "11"),
            ("bank_ms", "1000"),
            ("per_move_ms", "100"),
            ("set_timeout_ms", "50"),
            ("connect_timeout_ms", "20"),
            ("pace_ms", "0"),
            ("linger_ms", "5"),
        ] {
            spec.options.insert(k.into(), v.into());
        }
        // 6 moves each: 2 × (1000 + 600) + 20 + 50 + 5.
        let d = GEISTER.longest_legal_match(&spec).unwrap().unwrap();
        assert_eq!(d, Duration::from_millis(3200 + 75));
    }

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
