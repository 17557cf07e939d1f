//! The Diplomacy driver (spec diplomacy §6): seven seats, JSON lines, optional press,
//! simultaneous orders. The codec is `kakehiki_diplomacy::wire`; the seats are a [`Table`], so
//! a re-run is this same code on the recorded seats.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::FutureExt as _;
use kakehiki_agent::BotProcess;
use kakehiki_core::exchange::{ExchangeOutcome, SeatExchange};
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{
    Chance, Dynamics, GameType, Information, MatchReport, Outcome, SeatErrorKind, SeatSpec,
    Transport,
};
use kakehiki_diplomacy::wire::{self, Adjudicated, Limits, Params, RuleParams};
use kakehiki_diplomacy::{BuiltinBot, DiplomacyGame, EndReason, PhaseKind, Power};
use serde_json::{json, Value};

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::seat::{pipe::Pipe, Answer, Ask, ReplyFilter, Seat, Table, SILENT_BOT};

/// Replay format name.
pub const FORMAT: &str = "kakehiki/diplomacy-replay@2";
/// The format before the seat record (`exchanges` inside the game's events).
pub const FORMAT_V1: &str = "kakehiki/diplomacy-replay@1";

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

/// The label of the start handshake's requests (the phases' are their names, `S1901M`).
const START: &str = "start";
/// The label and kind of the end message.
const END: &str = "end";
/// What a seat is given to take its end message and exit.
const END_GRACE: Duration = Duration::from_secs(1);

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

const MS: &str = "milliseconds, 1 to 600000";

fn params_from(spec: &MatchSpec) -> Result<Params, RefereeError> {
    spec.check_option_keys(OPTION_KEYS)?;
    let d = Limits::default();
    let (centres, year, rounds) = (
        "a number of centres, 1 to 34",
        "a year, 1901 to 9999",
        "a number of rounds, 0 to 20",
    );
    let (msgs, chars) = (
        "a number of messages, 0 to 100",
        "a number of characters, 1 to 100000",
    );
    let p = Params {
        rules: RuleParams {
            solo_centers: spec.option("solo_centers", 18usize, centres)?,
            max_year: spec.option("max_year", 1920u16, year)?,
            press_rounds: spec.option("press_rounds", 0u32, rounds)?,
            draw_votes: spec.option("draw_votes", false, "true or false")?,
        },
        limits: Limits {
            start_ms: spec.option("start_ms", d.start_ms, MS)?,
            movement_ms: spec.option("movement_ms", d.movement_ms, MS)?,
            retreat_ms: spec.option("retreat_ms", d.retreat_ms, MS)?,
            adjustment_ms: spec.option("adjustment_ms", d.adjustment_ms, MS)?,
            press_ms: spec.option("press_ms", d.press_ms, MS)?,
            press_messages: spec.option("press_messages", d.press_messages, msgs)?,
            press_chars: spec.option("press_chars", d.press_chars, chars)?,
        },
    };
    let (r, l) = (&p.rules, &p.limits);
    let checks: [(&str, u64, std::ops::RangeInclusive<u64>, &str); 10] = [
        ("solo_centers", r.solo_centers as u64, 1..=34, centres),
        ("max_year", r.max_year.into(), 1901..=9999, year),
        ("press_rounds", r.press_rounds.into(), 0..=20, rounds),
        ("start_ms", l.start_ms, 1..=600_000, MS),
        ("movement_ms", l.movement_ms, 1..=600_000, MS),
        ("retreat_ms", l.retreat_ms, 1..=600_000, MS),
        ("adjustment_ms", l.adjustment_ms, 1..=600_000, MS),
        ("press_ms", l.press_ms, 1..=600_000, MS),
        ("press_messages", l.press_messages as u64, 0..=100, msgs),
        ("press_chars", l.press_chars as u64, 1..=100_000, chars),
    ];
    for (key, v, range, expected) in checks {
        if !range.contains(&v) {
            return Err(RefereeError::BadOption {
                key: key.into(),
                value: v.to_string(),
                expected: expected.into(),
            });
        }
    }
    Ok(p)
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// One match in progress: the seats, the engine, and what each power has yet to be shown.
struct Run {
    table: Table,
    game: DiplomacyGame,
    params: Params,
    /// The built-in bot of each built-in seat.
    bots: Vec<Option<BuiltinBot>>,
    seq: [u64; 7],
    /// Adjudicated phases not yet shown to each power.
    history: Vec<Vec<Value>>,
    /// Press for each power, delivered with its next message.
    inbox: Vec<Vec<Value>>,
}

impl Run {
    fn next_seq(&mut self, p: Power) -> u64 {
        self.seq[p.index()] += 1;
        self.seq[p.index()]
    }

    /// Ask the powers at once (`at` the label, each request's message built by `msg` from its
    /// `seq`); a power whose bot is gone is put in civil disorder. The messages as sent, by
    /// power, and each power's reply text (with whether it was cut), if it replied.
    async fn ask(
        &mut self,
        powers: &[Power],
        at: &str,
        kind: &str,
        limit_ms: u64,
        mut msg: impl FnMut(&mut Run, Power, u64) -> Vec<u8>,
    ) -> (
        BTreeMap<String, String>,
        Vec<(Power, Option<(String, bool)>)>,
    ) {
        let mut sent = BTreeMap::new();
        let mut asks = Vec::new();
        for &p in powers {
            let seq = self.next_seq(p);
            let m = msg(self, p, seq);
            sent.insert(
                p.name().to_string(),
                String::from_utf8_lossy(&m[..m.len() - 1]).into(),
            );
            let mut ask = Ask::new(p.index(), at, kind, m, ms(limit_ms));
            ask.handshake = kind == START;
            ask.accept = Some(ReplyFilter(std::sync::Arc::new(move |r| {
                wire::answers(r, seq)
            })));
            asks.push(ask);
        }
        let Run {
            table, game, bots, ..
        } = self;
        let answers = table
            .ask(asks, |seat, ask| match bots.get_mut(seat) {
                Some(Some(bot)) => wire::builtin_reply(bot, game, Power(seat as u8), &ask.kind),
                _ => Vec::new(),
            })
            .await;
        let replies = powers
            .iter()
            .zip(answers)
            .map(|(&p, a)| (p, self.judge(p, a)))
            .collect();
        (sent, replies)
    }

    /// The reply of an answer; a power whose bot crashed, exceeded a cap or left is in civil
    /// disorder (the table has recorded why).
    fn judge(&mut self, p: Power, a: Answer) -> Option<(String, bool)> {
        match a.outcome {
            ExchangeOutcome::Reply => Some((a.text().unwrap_or_default(), a.truncated)),
            ExchangeOutcome::Timeout | ExchangeOutcome::Sent => None,
            _ => {
                self.game.set_civil_disorder(p);
                self.table.kill(p.index(), "its power is in civil disorder");
                None
            }
        }
    }

    fn fault(&mut self, p: Power, at: &str, kind: SeatErrorKind, detail: String) {
        self.table.fault(p.index(), at, kind, detail);
    }

    async fn start(&mut self) {
        let params = self.params;
        let (sent, replies) = self
            .ask(
                &Power::ALL,
                START,
                START,
                params.limits.start_ms,
                |_, p, seq| wire::start_msg(seq, p, &params),
            )
            .await;
        for (p, reply) in replies {
            let ok = match reply {
                Some((text, cut)) => wire::read_ready(&text, cut)
                    .map_err(|e| self.fault(p, START, SeatErrorKind::NotReady, e))
                    .is_ok(),
                None => false,
            };
            if !ok {
                self.game.set_civil_disorder(p);
                self.table.kill(p.index(), "start handshake failed");
            }
        }
        self.table.record(&json!({"event": "start", "sent": sent}));
    }

    async fn press_round(&mut self, round: u32) {
        let phase = self.game.board().phase.to_string();
        let game = &self.game;
        let talking: Vec<Power> = Power::ALL
            .into_iter()
            .filter(|&p| !game.is_eliminated(p) && !game.in_civil_disorder(p))
            .collect();
        let params = self.params;
        let (sent, replies) = self
            .ask(
                &talking,
                &phase,
                "press",
                params.limits.press_ms,
                |run, p, seq| {
                    let inbox = std::mem::take(&mut run.inbox[p.index()]);
                    wire::press_msg(&run.game, seq, round, &params, inbox)
                },
            )
            .await;
        let (mut delivered, mut dropped) = (Vec::new(), Vec::new());
        for (p, reply) in replies {
            let Some((text, cut)) = reply else { continue };
            match wire::read_press(&text, cut, p, &self.game, &params.limits) {
                Err(e) => self.fault(p, &phase, SeatErrorKind::InvalidReply, e),
                Ok(msgs) => {
                    for (i, m) in msgs.into_iter().enumerate() {
                        match m {
                            Ok(m) => delivered.push(m),
                            Err(d) => {
                                let why = format!("press message {i} dropped: {}", d.reason);
                                self.fault(p, &phase, SeatErrorKind::InvalidReply, why);
                                dropped.push(d);
                            }
                        }
                    }
                }
            }
        }
        for m in &delivered {
            if let Some(to) = Power::from_name(&m.to) {
                self.inbox[to.index()].push(json!({"from": m.from, "text": m.text}));
            }
        }
        self.table.record(&json!({
            "event": "press", "phase": phase, "round": round,
            "sent": sent, "delivered": delivered, "dropped": dropped,
        }));
    }

    /// One phase: press rounds, orders, adjudication. `false` when a draw was agreed.
    async fn phase(&mut self) -> bool {
        let phase = self.game.board().phase;
        let label = phase.to_string();
        if phase.kind == PhaseKind::Movement {
            for round in 1..=self.params.rules.press_rounds {
                self.press_round(round).await;
            }
        }
        let acting = self.game.acting();
        let limit = self.params.orders_ms(phase.kind);
        let (sent, replies) = self
            .ask(&acting, &label, "orders", limit, |run, p, seq| {
                let inbox = std::mem::take(&mut run.inbox[p.index()]);
                let history = std::mem::take(&mut run.history[p.index()]);
                wire::phase_msg(&run.game, p, seq, limit, inbox, history)
            })
            .await;
        let (mut orders, mut votes) = (Vec::new(), Vec::new());
        for (p, reply) in replies {
            let Some((text, cut)) = reply else { continue };
            match wire::read_orders(&text, cut) {
                Err(e) => self.fault(p, &label, SeatErrorKind::InvalidReply, e),
                Ok((list, draw)) => {
                    orders.push((p, list));
                    if draw && phase.kind == PhaseKind::Movement {
                        votes.push(p.name());
                    }
                }
            }
        }
        let game = &self.game;
        let voters: Vec<Power> = game
            .survivors()
            .into_iter()
            .filter(|p| !game.in_civil_disorder(*p))
            .collect();
        if self.params.rules.draw_votes
            && phase.kind == PhaseKind::Movement
            && !voters.is_empty()
            && voters.iter().all(|p| votes.contains(&p.name()))
        {
            self.game.declare_draw();
            self.table.record(&json!({
                "event": "phase", "phase": label, "sent": sent, "draw_votes": votes,
                "adjudicated": [],
            }));
            return false;
        }
        let records = self.game.step(&orders);
        // Illegal orders count against their seat; unmatched supports and convoys are legal,
        // merely void (reported in history only).
        for r in &records {
            for (p, o, e) in &r.errors {
                if !kakehiki_diplomacy::outcome::is_unmatched_message(e) {
                    let at = r.phase.to_string();
                    self.fault(
                        *p,
                        &at,
                        SeatErrorKind::IllegalAction,
                        format!("{at}: {o}: {e}"),
                    );
                }
            }
        }
        for p in Power::ALL {
            for r in &records {
                self.history[p.index()].push(Adjudicated::history_for(r, p));
            }
        }
        let adjudicated: Vec<Adjudicated> = records.iter().map(Adjudicated::of).collect();
        self.table.record(&json!({
            "event": "phase", "phase": label, "sent": sent, "draw_votes": votes,
            "adjudicated": adjudicated,
        }));
        true
    }

    /// Send `p` the end message (no reply expected) and record it, unless its bot is gone.
    async fn end_seat(&mut self, p: Power, reason: &str) {
        if self.table.down(p.index()).is_some() {
            return;
        }
        let seq = self.next_seq(p);
        let msg = wire::end_msg(&self.game, seq, reason);
        let text = String::from_utf8_lossy(&msg[..msg.len() - 1]).into_owned();
        self.table
            .record(&json!({"event": "end_message", "power": p.name(), "seq": seq, "sent": text}));
        self.table.tell(p.index(), END, END, &msg, END_GRACE).await;
    }
}

/// Play (or re-play) a match on `table`: the whole game, then the seats' ends and the report.
async fn run_match(
    table: Table,
    params: Params,
    bots: Vec<Option<BuiltinBot>>,
    seats: &[String],
    seed: u64,
    grace: Duration,
) -> MatchRecord {
    let mut run = Run {
        table,
        game: DiplomacyGame::new(params.engine_rules()),
        params,
        bots,
        seq: [0; 7],
        history: vec![Vec::new(); 7],
        inbox: vec![Vec::new(); 7],
    };
    run.start().await;
    let mut told = [false; 7];
    while run.game.end_reason().is_none() {
        run.table.turn += 1;
        if !run.phase().await {
            break;
        }
        for p in Power::ALL {
            if run.game.is_eliminated(p) && !told[p.index()] && run.game.end_reason().is_none() {
                told[p.index()] = true;
                run.end_seat(p, "eliminated").await;
            }
        }
    }
    let reason = run.game.end_reason().map_or("draw", |r| r.as_str());
    for p in Power::ALL.into_iter().filter(|p| !told[p.index()]) {
        run.end_seat(p, reason).await;
    }
    let game = &run.game;
    let end = game.end_reason();
    run.table.record(&json!({
        "event": "end",
        "reason": end.map(|r| r.as_str()),
        "winner": match end { Some(EndReason::Solo(p)) => Some(p.name()), _ => None },
        "centers": wire::centers_json(game),
        "state": wire::public_state(game),
    }));
    let finished = run.table.finish(grace).await;
    let outcome: Outcome = game.scores().unwrap_or(Outcome {
        scores: vec![0.into(); 7],
        winner: None,
    });
    let no_errors = seats.iter().map(|s| (s.clone(), Vec::new())).collect();
    let mut report = MatchReport::new("diplomacy", "standard", seed, &outcome, no_errors);
    let counts = game.center_counts();
    for (i, s) in report.seats.iter_mut().enumerate() {
        s.extra.insert("power".into(), json!(Power(i as u8).name()));
        s.extra.insert("centers".into(), json!(counts[i]));
    }
    finished.fill_report(&mut report);
    let x = &mut report.extra;
    x.insert("centers".into(), wire::centers_json(game));
    x.insert("end".into(), json!(end.map(|e| e.as_str())));
    x.insert(
        "year".into(),
        json!(game.history().last().map(|h| h.phase.year)),
    );
    let mut replay = finished.log;
    replay.push(&json!({"event": "report", "report": report}));
    MatchRecord { report, replay }
}

fn header(seed: u64, seats: &[String], params: &Params) -> ReplayLog {
    let mut log = ReplayLog::new();
    log.push(&ReplayHeader {
        event: "header".into(),
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        game: "diplomacy".into(),
        rules: "standard".into(),
        seed,
        seats: seats.to_vec(),
        params: serde_json::to_value(params).unwrap_or(Value::Null),
    });
    log
}

/// The seats of a match: built-in bots (with their engines), processes on pipes, TCP clients.
async fn start_seats(
    spec: &MatchSpec,
) -> Result<(Vec<Seat>, Vec<Option<BuiltinBot>>), RefereeError> {
    let mut sandbox = spec.sandbox.clone();
    sandbox.line_cap = sandbox.line_cap.max(wire::MAX_LINE);
    let (mut seats, mut bots) = (Vec::new(), Vec::new());
    for (i, s) in spec.seats.iter().enumerate() {
        let (seat, bot) = match s {
            SeatSpec::Builtin(name) if name == SILENT_BOT => (Seat::Silent, None),
            SeatSpec::Builtin(name) => match BuiltinBot::new(name, spec.seed, i) {
                Some(b) => (Seat::Builtin, Some(b)),
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
                Ok(p) => (Seat::Live(Box::new(Pipe::new(p))), None),
                Err(e) => match RefereeError::host_fault(i, &e) {
                    Some(fault) => return Err(fault),
                    None => (Seat::NotStarted(format!("cannot start the bot: {e}")), None),
                },
            },
            other => {
                return Err(RefereeError::UnsupportedSeat {
                    game: "diplomacy".into(),
                    seat: i,
                    form: other.to_string(),
                    reason: "TCP seats are not connected yet".into(),
                })
            }
        };
        seats.push(seat);
        bots.push(bot);
    }
    Ok((seats, bots))
}

/// The header's parameters and seats, checked.
fn replay_params(h: &ReplayHeader) -> Result<Params, RefereeError> {
    if h.seats.len() != 7 {
        return Err(RefereeError::BadReplay(format!(
            "{} seats, expected 7",
            h.seats.len()
        )));
    }
    serde_json::from_value(h.params.clone())
        .map_err(|e| RefereeError::BadReplay(format!("bad header params: {e}")))
}

impl GameDriver for DiplomacyDriver {
    fn game_type(&self) -> &'static GameType {
        &DIPLOMACY_TYPE
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            if let Some(r) = spec.rules.as_ref().filter(|r| *r != "standard") {
                return Err(RefereeError::UnknownRules {
                    game: "diplomacy".into(),
                    rules: r.clone(),
                    expected: "standard".into(),
                });
            }
            if spec.seats.len() != 7 {
                return Err(RefereeError::SeatCount {
                    game: "diplomacy".into(),
                    expected: "7".into(),
                    got: spec.seats.len(),
                });
            }
            let params = params_from(spec)?;
            let (seats, bots) = start_seats(spec).await?;
            let names: Vec<String> = spec.seats.iter().map(|s| s.to_string()).collect();
            let table = Table::new(seats, header(spec.seed, &names, &params));
            Ok(run_match(table, params, bots, &names, spec.seed, END_GRACE).await)
        })
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        if h.format != FORMAT {
            return Err(RefereeError::BadReplay(format!(
                "format {:?}, expected {FORMAT:?}{}",
                h.format,
                if h.format == FORMAT_V1 {
                    " (convert it with `kakehiki replay --upgrade`)"
                } else {
                    ""
                }
            )));
        }
        let params = replay_params(h)?;
        let table = Table::replayed(replay, 7, header(h.seed, &h.seats, &params))?;
        let bots = (0..7).map(|_| None).collect();
        run_match(table, params, bots, &h.seats, h.seed, Duration::ZERO)
            .now_or_never()
            .ok_or_else(|| RefereeError::BadReplay("internal: a replayed seat waited".into()))
    }

    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        upgrade_v1(old)
    }
}

/// Convert a `@1` replay (each request and reply inside the game's events) to `@2`: its
/// exchanges become the seat record, the match is re-run on them, and the re-run must
/// adjudicate every phase and end as the recording did.
fn upgrade_v1(old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
    let h = &old.header;
    if h.format != FORMAT_V1 {
        return Err(RefereeError::BadReplay(format!(
            "format {:?}: only {FORMAT_V1:?} can be upgraded to {FORMAT:?}",
            h.format
        )));
    }
    let params = replay_params(h)?;
    let bad = |line: usize, what: String| RefereeError::BadReplay(format!("line {line}: {what}"));
    let mut record = ReplayLog::new();
    let mut header = h.clone();
    header.format = FORMAT.into();
    record.push(&header);
    let mut seen = [false; 7];
    let (mut phases, mut end) = (Vec::new(), None);
    for (line, v) in &old.events {
        let event = v.get("event").and_then(Value::as_str).unwrap_or("");
        match event {
            "phase" => phases.push(v["adjudicated"].clone()),
            "end" => end = Some((v["reason"].clone(), v["centers"].clone())),
            _ => {}
        }
        let phase = v["phase"].as_str().unwrap_or(START);
        for x in v["exchanges"].as_array().into_iter().flatten() {
            let p = x["power"]
                .as_str()
                .and_then(Power::from_name)
                .ok_or_else(|| bad(*line, format!("exchange of unknown power {}", x["power"])))?;
            seen[p.index()] = true;
            let (kind, limit) = match event {
                "start" => (START, params.limits.start_ms),
                "press" => ("press", params.limits.press_ms),
                _ => ("orders", params.orders_ms(phase_kind(phase))),
            };
            let at = if event == "start" { START } else { phase };
            let status = x["status"].as_str().unwrap_or("");
            let outcome = match status {
                "ok" => ExchangeOutcome::Reply,
                "timeout" => ExchangeOutcome::Timeout,
                "crash" => ExchangeOutcome::Crash,
                "output_limit" => ExchangeOutcome::ResourceLimit,
                s => return Err(bad(*line, format!("exchange status {s:?}"))),
            };
            let mut ex = SeatExchange::new(p.index(), at, kind, outcome);
            ex.limit_ms = Some(limit);
            ex.time_us = x["time_us"].as_u64();
            ex.detail = x["detail"].as_str().map(str::to_string);
            if let Some(raw) = x["raw"].as_str() {
                ex.set_raw(raw.as_bytes());
            }
            ex.truncated = outcome == ExchangeOutcome::Reply && ex.detail.is_some();
            if outcome == ExchangeOutcome::Timeout {
                ex.time_us = Some(limit * 1000);
            }
            ex.discarded = serde_json::from_value(x["discarded"].clone()).unwrap_or_default();
            record.push(&ex);
        }
    }
    // A seat with no exchange at all never started: its start request found it not running.
    for p in Power::ALL.into_iter().filter(|p| !seen[p.index()]) {
        let mut ex = SeatExchange::new(p.index(), START, START, ExchangeOutcome::NotRunning);
        ex.limit_ms = Some(params.limits.start_ms);
        ex.time_us = Some(0);
        ex.detail = Some(not_started(old, p.index()));
        record.push(&ex);
    }
    let parsed = ReplayLog::parse(&record.to_text())?;
    let rerun = DIPLOMACY.rerun(&parsed)?;
    let new = ReplayLog::parse(&rerun.replay.to_text())?;
    let now: Vec<Value> = new
        .events
        .iter()
        .filter(|(_, v)| v["event"] == "phase")
        .map(|(_, v)| v["adjudicated"].clone())
        .collect();
    let now_end = new
        .events
        .iter()
        .find(|(_, v)| v["event"] == "end")
        .map(|(_, v)| (v["reason"].clone(), v["centers"].clone()));
    if now != phases || now_end != end {
        return Err(RefereeError::BadReplay(
            "the @1 replay does not re-run to the same adjudications and end".into(),
        ));
    }
    Ok(rerun.replay)
}

/// The kind of a phase from its name (`S1901M`, `F1901R`, `W1901A`).
fn phase_kind(name: &str) -> PhaseKind {
    match name.chars().last() {
        Some('R') => PhaseKind::Retreat,
        Some('A') => PhaseKind::Adjustment,
        _ => PhaseKind::Movement,
    }
}

/// Why seat `i` of a `@1` replay never started, from its report.
fn not_started(old: &ParsedReplay, i: usize) -> String {
    old.events
        .iter()
        .filter(|(_, v)| v["event"] == "report")
        .filter_map(|(_, v)| v["report"]["seats"][i]["errors"].as_array())
        .flatten()
        .filter_map(|e| e["detail"].as_str())
        .find(|d| d.starts_with("cannot start the bot"))
        .unwrap_or("cannot start the bot")
        .to_string()
}
