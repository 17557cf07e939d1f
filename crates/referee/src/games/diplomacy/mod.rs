//! The Diplomacy driver (spec diplomacy §6): seven seats, JSON lines, optional press,
//! simultaneous orders. The codec is `kakehiki_diplomacy::wire`; the seats are a [`Table`], so
//! a re-run is this same code on the recorded seats.

use std::collections::BTreeMap;
use std::time::Duration;

use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::replay::{ParsedReplay, ReplayLog};
use kakehiki_core::{GameType, SeatErrorKind};
use kakehiki_diplomacy::replay_v1::{self, START};
use kakehiki_diplomacy::wire::{self, Adjudicated, Params};
use kakehiki_diplomacy::{BuiltinBot, DiplomacyGame, PhaseKind, Power};
use serde_json::json;

mod daide;
mod seats;
pub mod serve;

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::lifecycle::Lifecycle;
use crate::seat::{Answer, Ask, Finished, ReplyFilter, Table};
use daide::DaideSeats;

pub use kakehiki_diplomacy::wire::{FORMAT, FORMAT_V1, GAME_TYPE as DIPLOMACY_TYPE};

/// The driver.
pub struct DiplomacyDriver;

/// `diplomacy`.
pub static DIPLOMACY: DiplomacyDriver = DiplomacyDriver;

/// The label and kind of the end message.
const END: &str = "end";
/// The kind of a press round's request.
const PRESS: &str = "press";
/// What a seat is given to take its end message and exit.
const END_GRACE: Duration = Duration::from_secs(1);

/// The game for the shared match lifecycle: the programs get [`END_GRACE`] to exit.
const DIPLOMACY_LIFE: Lifecycle<Params> = Lifecycle {
    game: &DIPLOMACY_TYPE,
    format: FORMAT,
    params: checked_params,
    end_grace: |_| END_GRACE,
};

/// The rule set, seats and options of a match, checked.
fn checked_params(spec: &MatchSpec) -> Result<Params, RefereeError> {
    spec.check_common(&DIPLOMACY_TYPE, wire::OPTION_KEYS)?;
    Ok(Params::from_options(|k| {
        spec.options.get(k).map(String::as_str)
    })?)
}

/// The messages sent in one round, as text by power.
type Sent = BTreeMap<String, String>;
/// Each power asked in one round, and its reply with whether it was cut, if it replied.
type Replies = Vec<(Power, Option<(String, bool)>)>;

/// One match in progress: the seats, the engine, and what each power has yet to be shown.
struct Run {
    table: Table,
    game: DiplomacyGame,
    params: Params,
    /// The built-in bot of each built-in seat.
    bots: Vec<Option<BuiltinBot>>,
    post: wire::Post,
    /// The DAIDE seats (`daide`, `daide-cmd:`).
    daide: DaideSeats,
    /// Each seat's spec, as the header has it (the `SMR` names of non-DAIDE seats).
    seat_names: Vec<String>,
}

impl Run {
    /// Ask the powers at once (`at` the label, each request's message and `seq` from `msg`); a
    /// power whose bot is gone is put in civil disorder. The messages as sent, by
    /// power, and each power's reply text (with whether it was cut), if it replied.
    async fn ask(
        &mut self,
        powers: &[Power],
        at: &str,
        kind: &str,
        limit_ms: u64,
        mut msg: impl FnMut(&mut wire::Post, &DiplomacyGame, Power) -> (u64, Vec<u8>),
    ) -> (Sent, Replies) {
        let mut sent = BTreeMap::new();
        let mut asks = Vec::new();
        for &p in powers {
            if self.daide.is_daide(p) {
                sent.insert(p.name().to_string(), "(daide)".to_string());
                asks.push(self.daide_ask(p, at, kind, limit_ms));
                continue;
            }
            let (seq, m) = msg(&mut self.post, &self.game, p);
            sent.insert(
                p.name().to_string(),
                String::from_utf8_lossy(&m[..m.len() - 1]).into(),
            );
            let mut ask = Ask::new(p.index(), at, kind, m, Duration::from_millis(limit_ms));
            ask.handshake = kind == START;
            ask.accept = Some(ReplyFilter::new(move |r| wire::answers(r, seq)));
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
            .map(|(&p, a)| match self.daide.is_daide(p) {
                true => (p, self.judge_daide(p, at, kind, a)),
                false => (p, self.judge(p, a)),
            })
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
                |post, _, p| post.start(p, &params),
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
        // DAIDE seats take part from level 10 (daide.rs).
        let daide_press = self.params.daide_level > 0;
        let talking: Vec<Power> = Power::ALL
            .into_iter()
            .filter(|&p| !game.is_eliminated(p) && !game.in_civil_disorder(p))
            .filter(|&p| daide_press || !self.daide.is_daide(p))
            .collect();
        let params = self.params;
        let (sent, replies) = self
            .ask(
                &talking,
                &phase,
                PRESS,
                params.limits.press_ms,
                |post, game, p| post.press(game, p, round, &params),
            )
            .await;
        let (mut delivered, mut dropped) = (Vec::new(), Vec::new());
        for (p, reply) in replies {
            let Some((text, cut)) = reply else { continue };
            match wire::read_press(&text, cut, p, &self.game, &params.limits) {
                Err(e) => self.fault(p, &phase, SeatErrorKind::InvalidReply, e),
                Ok((ok, bad)) => {
                    delivered.extend(ok);
                    for (fault, d) in bad {
                        self.fault(p, &phase, SeatErrorKind::InvalidReply, fault);
                        dropped.push(d);
                    }
                }
            }
        }
        self.daide_deliver(&mut delivered, &mut dropped, &phase);
        self.post.deliver(&delivered);
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
        for p in self.daide.powers() {
            if !acting.contains(&p) {
                let m = self.daide.phase_update(p, &self.game);
                self.tell_daide(p, &label, m).await;
            }
        }
        let limit = self.params.orders_ms(phase.kind);
        let (sent, replies) = self
            .ask(&acting, &label, "orders", limit, |post, game, p| {
                post.phase(game, p, limit)
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
        let draw = wire::unanimous(&self.game, &self.params, &votes);
        self.daide.before_step(&self.game);
        let records = match draw {
            true => Vec::new(),
            false => self.game.step(&orders),
        };
        self.daide.after_step(&self.game, &records);
        if draw {
            self.game.declare_draw();
        }
        for (p, at, detail) in wire::illegal_orders(&records) {
            self.fault(p, &at, SeatErrorKind::IllegalAction, detail);
        }
        self.post.adjudicated(&records);
        let adjudicated: Vec<Adjudicated> = records.iter().map(Adjudicated::of).collect();
        self.table.record(&json!({
            "event": "phase", "phase": label, "sent": sent, "draw_votes": votes,
            "adjudicated": adjudicated,
        }));
        !draw
    }

    /// Send `p` the end message (no reply expected) and record it, unless its bot is gone.
    async fn end_seat(&mut self, p: Power, reason: &str) {
        if self.table.down(p.index()).is_some() {
            return;
        }
        if self.daide.is_daide(p) {
            // A DAIDE client keeps hearing the game until it ends (DAIDE has no goodbye for an
            // eliminated power); then it is told the end, the summary and OFF.
            if reason != "eliminated" {
                let m = self.daide.ending(p, &self.game, &self.seat_names);
                self.tell_daide(p, END, m).await;
            }
            return;
        }
        let (seq, msg) = self.post.end(&self.game, p, reason);
        let text = String::from_utf8_lossy(&msg[..msg.len() - 1]).into_owned();
        self.table
            .record(&json!({"event": "end_message", "power": p.name(), "seq": seq, "sent": text}));
        self.table.tell(p.index(), END, END, msg, END_GRACE).await;
    }
}

/// Play (or re-play) a match on `table`: the whole game; the table goes back to the lifecycle
/// with the game, which [`close`] reports on once the seats are finished.
async fn run_match(
    table: Table,
    params: Params,
    bots: Vec<Option<BuiltinBot>>,
    seats: Vec<String>,
    seed: u64,
) -> (Table, DiplomacyGame) {
    let mut run = Run {
        table,
        game: DiplomacyGame::new(params.engine_rules()),
        params,
        bots,
        post: wire::Post::default(),
        daide: DaideSeats::new(&seats, params, seed),
        seat_names: seats,
    };
    run.start().await;
    let mut told = [false; 7];
    while run.game.end_reason().is_none() {
        run.table.turn += 1;
        if !run.phase().await {
            break;
        }
        for p in Power::ALL {
            if run.game.is_eliminated(p)
                && !told[p.index()]
                && run.game.end_reason().is_none()
                && !run.daide.is_daide(p)
            {
                told[p.index()] = true;
                run.end_seat(p, "eliminated").await;
            }
        }
    }
    let reason = run.game.end_reason().map_or("draw", |r| r.as_str());
    for p in Power::ALL.into_iter().filter(|p| !told[p.index()]) {
        run.end_seat(p, reason).await;
    }
    run.table.record(&wire::end_event(&run.game));
    (run.table, run.game)
}

/// The record of a match whose seats are finished: its report, also as the replay's last line.
fn close(seats: &[String], seed: u64) -> impl FnOnce(DiplomacyGame, Finished) -> MatchRecord {
    let seats = seats.to_vec();
    move |game, finished| {
        let mut record = finished.record(wire::report(&game, &seats, seed));
        let report = json!({"event": "report", "report": record.report});
        record.replay.push(&report);
        record
    }
}

impl GameDriver for DiplomacyDriver {
    // The board as each phase is adjudicated (its orders and results): what a power submits,
    // and its press, wait for the end.
    fn public_live(&self) -> fn(&str) -> bool {
        |line| matches!(crate::driver::line_kind(line), Some((e, _)) if matches!(e.as_str(), "header" | "start" | "phase"))
    }
    fn game_type(&self) -> &'static GameType {
        &DIPLOMACY_TYPE
    }

    fn check_spec(&self, spec: &MatchSpec) -> Result<(), RefereeError> {
        DIPLOMACY_LIFE.check(spec).map(drop)
    }

    /// The powers are asked at once: `connect_ms` for `tcp` seats to connect, the start
    /// handshake (`start_ms`), then every year from 1901 to `max_year`: two movement phases,
    /// each `press_rounds` × `press_ms` then `movement_ms`, two retreat phases and an
    /// adjustment; then `END_GRACE` to exit.
    fn longest_legal_match(&self, spec: &MatchSpec) -> Result<Option<Duration>, RefereeError> {
        let p = DIPLOMACY_LIFE.check(spec)?;
        let connect_ms = seats::connect_ms(spec)?;
        let l = &p.limits;
        let years = u64::from(p.rules.max_year.saturating_sub(1900));
        let movement = u64::from(p.rules.press_rounds) * l.press_ms + l.movement_ms;
        let year = 2 * movement + 2 * l.retreat_ms + l.adjustment_ms;
        let ms = connect_ms + l.start_ms + years * year;
        Ok(Some(
            Duration::from_millis(ms) + DIPLOMACY_LIFE.end_grace(&p),
        ))
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            let params = DIPLOMACY_LIFE.check(spec)?;
            let st = seats::start_seats(spec, &params).await?;
            let names: Vec<String> = spec.seats.iter().map(|s| s.to_string()).collect();
            let header = wire::header(spec.seed, &names, &params);
            let mut table = DIPLOMACY_LIFE.open(spec, st.seats, Some(&header));
            for (seat, count, cap) in st.excess {
                table.excess_connections(seat, count, cap);
            }
            let (bots, seed, close) = (st.bots, spec.seed, close(&names, spec.seed));
            let flow = move |table| run_match(table, params, bots, names, seed);
            DIPLOMACY_LIFE.play(&params, table, flow, close).await
        })
    }

    fn replay_format(&self) -> Option<&'static str> {
        Some(FORMAT)
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        let params = wire::params_of(h).map_err(RefereeError::BadReplay)?;
        let header = wire::header(h.seed, &h.seats, &params);
        let table = DIPLOMACY_LIFE.replayed(replay, 7, Some(&header))?;
        let bots = (0..7).map(|_| None).collect();
        let flow = |table| run_match(table, params, bots, h.seats.clone(), h.seed);
        DIPLOMACY_LIFE.rerun(&params, table, flow, close(&h.seats, h.seed))
    }

    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        upgrade_v1(old)
    }
}

/// Convert a `@1` replay to `@2`: its exchanges become the seat record, the match is re-run
/// on them, and the re-run must adjudicate every phase and end as the recording did.
fn upgrade_v1(old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
    let h = &old.header;
    if h.format != FORMAT_V1 {
        return Err(RefereeError::BadReplay(format!(
            "format {:?}: only {FORMAT_V1:?} can be upgraded to {FORMAT:?}",
            h.format
        )));
    }
    let params = wire::params_of(h).map_err(RefereeError::BadReplay)?;
    let mut record = ReplayLog::new();
    record.push(&h.with_format(FORMAT));
    for ex in replay_v1::seat_record(old, &params).map_err(RefereeError::BadReplay)? {
        record.push(&ex);
    }
    let rerun = DIPLOMACY.rerun(&ReplayLog::parse(&record.to_text())?)?;
    if replay_v1::results(&ReplayLog::parse(&rerun.replay.to_text())?) != replay_v1::results(old) {
        return Err(RefereeError::BadReplay(
            "the @1 replay does not re-run to the same adjudications and end".into(),
        ));
    }
    Ok(rerun.replay)
}

#[cfg(test)]
mod bound_tests {
    use super::*;
    use kakehiki_core::SeatSpec;

    #[test]
    fn the_longest_legal_match_is_every_phase_at_its_limit() {
        let mut spec = MatchSpec::new("diplomacy", 1, vec![SeatSpec::Builtin("silent".into()); 7]);
        // Defaults: 20 years to 1920, each 2×5 s + 2×2 s + 2 s = 16 s; 10 s connect, 10 s
        // start, 1 s to exit.
        let d = DIPLOMACY.longest_legal_match(&spec).unwrap().unwrap();
        assert_eq!(d, Duration::from_secs(10 + 10 + 20 * 16 + 1));
        spec.options.insert("max_year".into(), "1901".into());
        spec.options.insert("press_rounds".into(), "2".into());
        // One year: 2×(2×2 s + 5 s) + 2×2 s + 2 s = 24 s.
        let d = DIPLOMACY.longest_legal_match(&spec).unwrap().unwrap();
        assert_eq!(d, Duration::from_secs(10 + 10 + 24 + 1));
        spec.options.insert("max_year".into(), "1800".into());
        assert!(DIPLOMACY.longest_legal_match(&spec).is_err());
    }
}
