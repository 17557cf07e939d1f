//! The driver of `nac` and `religion-war`: the READY handshake and nine turns (§1.3, §3 of the
//! spec) on the seat layer, which records what each seat was sent and answered; the game's own
//! events (weights, turns with the applied picks and parse records, deaths, scorings, result).
//! A re-run is this code on the recorded seats: picks are re-derived from the reply text.

use std::time::Duration;

use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{GameType, MatchReport, Outcome, SeatErrorKind, SeatSpec};
use kakehiki_nac::bots::{make_bot, reply_line, NacBot};
use kakehiki_nac::record::{
    DeathEvent, HeaderParams, MoveEvent, MoveStatus, ResultEvent, ScoringEvent, StreamDigest,
    TurnEvent, WeightsEvent, READY_AT, READY_KIND, TURN_KIND,
};
use kakehiki_nac::reply::{not_ready, parse_received};
use kakehiki_nac::{State, Variant, NUM_SEATS};
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::lifecycle::Lifecycle;
use crate::seat::pipe::{start_match_seats, WRITE_FAILED};
use crate::seat::{Answer, Ask, Finished, Seat, Table, NO_TERMINATOR};

pub use crate::profile::{Profile, TurnProfile};
pub use kakehiki_nac::record::Limits;

/// Replay format name.
pub const FORMAT: &str = "kakehiki/nac-replay@2";
/// The format before the seat record (the driver's own `ready`, move and `stderr` events).
pub const FORMAT_V1: &str = "kakehiki/nac-replay@1";

/// The driver for one variant.
pub struct NacDriver {
    variant: Variant,
    game_type: &'static GameType,
    life: &'static Lifecycle<Limits>,
}

/// `nac`.
pub static NAC: NacDriver = NacDriver {
    variant: Variant::Nac,
    game_type: &kakehiki_nac::NAC_TYPE,
    life: &NAC_LIFE,
};
/// `religion-war`.
pub static RELIGION_WAR: NacDriver = NacDriver {
    variant: Variant::ReligionWar,
    game_type: &kakehiki_nac::RELIGION_WAR_TYPE,
    life: &RELIGION_WAR_LIFE,
};

/// Each variant for the shared match lifecycle: the bots get `end_grace_ms` to exit (§2.1).
const NAC_LIFE: Lifecycle<Limits> = Lifecycle {
    game: &kakehiki_nac::NAC_TYPE,
    format: FORMAT,
    params: |spec| limits_of(&kakehiki_nac::NAC_TYPE, spec),
    end_grace: |limits| Duration::from_millis(limits.end_grace_ms),
};
const RELIGION_WAR_LIFE: Lifecycle<Limits> = Lifecycle {
    game: &kakehiki_nac::RELIGION_WAR_TYPE,
    params: |spec| limits_of(&kakehiki_nac::RELIGION_WAR_TYPE, spec),
    ..NAC_LIFE
};

const OPTION_KEYS: &[&str] = &["ready_ms", "turn_ms", "end_grace_ms"];

/// The limits of a spec, after checking its rule set, seats and options.
fn limits_of(game: &GameType, spec: &MatchSpec) -> Result<Limits, RefereeError> {
    spec.check_common(game, OPTION_KEYS)?;
    let d = Limits::default();
    let ms = "a whole number of milliseconds";
    Ok(Limits {
        ready_ms: spec.option("ready_ms", d.ready_ms, ms)?,
        turn_ms: spec.option("turn_ms", d.turn_ms, ms)?,
        end_grace_ms: spec.option("end_grace_ms", d.end_grace_ms, ms)?,
    })
}

/// One match being played (or re-run): the engine, the seats, the built-in bots.
struct Game {
    variant: Variant,
    seed: u64,
    limits: Limits,
    state: State,
    table: Table,
    /// The built-in bots by seat (none in a re-run: the record answers for them).
    bots: Vec<Option<Box<dyn NacBot>>>,
    alive: [bool; NUM_SEATS],
    streams: [(Sha256, u64); NUM_SEATS],
    profile: Option<Profile>,
    /// When the turns ended (the seats' shutdown starts).
    turns_ended: Option<Instant>,
}

impl Game {
    /// A match on `table` (whose log holds the header): the weights are written.
    fn new(variant: Variant, seed: u64, limits: Limits, table: Table) -> Self {
        let mut game = Game {
            variant,
            seed,
            limits,
            state: State::new(variant.params(), seed as u32),
            table,
            bots: Vec::new(),
            alive: [true; NUM_SEATS],
            streams: std::array::from_fn(|_| (Sha256::new(), 0)),
            profile: None,
            turns_ended: None,
        };
        game.table.record(&WeightsEvent::new(game.state.weights()));
        game
    }

    /// `seat` is dead from now on; `detail` says why (by default, the seat's last error).
    fn death(&mut self, seat: usize, reason: &str, detail: Option<String>) {
        let last = self.table.errors(seat).last().map(|e| e.detail.clone());
        let detail = detail.or(last).unwrap_or_default();
        self.alive[seat] = false;
        self.table.kill(seat, reason);
        let turn = self.table.turn;
        self.table.record(&DeathEvent {
            event: "death".into(),
            seat,
            turn,
            reason: reason.into(),
            detail,
        });
    }

    /// READY from every seat at once (§3.2): blank lines are skipped within the same limit; a
    /// seat that does not become ready is dead from the start.
    async fn ready(&mut self) {
        let limit_us = self.limits.ready_ms * 1000;
        let mut used = [0u64; NUM_SEATS];
        let mut waiting: Vec<usize> = (0..NUM_SEATS).collect();
        let mut failed = Vec::new();
        while !waiting.is_empty() {
            let ask = |s: usize| {
                let limit = Duration::from_micros(limit_us - used[s]);
                let mut ask = Ask::new(s, READY_AT, READY_KIND, Vec::new(), limit);
                (ask.handshake, ask.unterminated_is_reply) = (true, true);
                ask
            };
            let asks = waiting.iter().map(|&s| ask(s)).collect();
            let answers = self.table.ask(asks, |_, _| b"READY".to_vec()).await;
            let mut again = Vec::new();
            for (&s, a) in waiting.iter().zip(&answers) {
                let had = limit_us - used[s];
                used[s] = (used[s] + a.time_us.unwrap_or(0)).min(limit_us);
                let Some(bytes) = a.reply() else {
                    failed.push((s, None));
                    continue;
                };
                let unterminated = a.says(NO_TERMINATOR);
                let closed = unterminated && a.time_us < Some(had);
                let why = match not_ready(bytes, unterminated, closed, self.limits.ready_ms) {
                    None => continue,
                    Some(why) if why.is_empty() && used[s] < limit_us => {
                        again.push(s);
                        continue;
                    }
                    Some(why) if why.is_empty() => {
                        format!("timeout: no READY within {} ms", self.limits.ready_ms)
                    }
                    Some(why) => why,
                };
                self.table
                    .fault(s, READY_AT, SeatErrorKind::NotReady, why.clone());
                failed.push((s, Some(why)));
            }
            waiting = again;
        }
        failed.sort_by_key(|f| f.0);
        for (seat, why) in failed {
            self.death(seat, "not_ready", why);
        }
    }

    /// One turn: every live seat's block at once, each reply parsed into picks as it comes.
    async fn turn(&mut self) {
        let t = self.state.turn();
        self.table.turn = t;
        let at = format!("turn {t}");
        let limit = Duration::from_millis(self.limits.turn_ms);
        let mut asks = Vec::with_capacity(NUM_SEATS);
        // The streams as they were, for a seat whose block turns out not to be written.
        let before = self.streams.clone();
        let mut blocks = Vec::with_capacity(NUM_SEATS);
        for seat in (0..NUM_SEATS).filter(|&s| self.alive[s]) {
            let mut block = String::with_capacity(256);
            self.state.write_message(seat, &mut block);
            let mut ask = Ask::new(seat, at.clone(), TURN_KIND, block.clone().into(), limit);
            ask.unterminated_is_reply = true;
            asks.push(ask);
            blocks.push((seat, block));
        }
        // The streams' digests are taken while the bots think.
        let streams = &mut self.streams;
        let digest = move || {
            for (seat, block) in blocks {
                streams[seat].1 += block.len() as u64;
                streams[seat].0.update(block);
            }
        };
        let seats: Vec<usize> = asks.iter().map(|a| a.seat).collect();
        let (state, bots) = (&self.state, &mut self.bots);
        let builtin = |seat: usize, _: &Ask| match bots.get_mut(seat) {
            Some(Some(bot)) => reply_line(&bot.pick(&state.view(seat))).into_bytes(),
            _ => Vec::new(),
        };
        let (n, targets) = (state.picks_needed(), state.params().targets);
        // Each reply is parsed as it comes, while the other bots still think.
        let parse = |_: &Ask, a: &Answer| {
            let raw = a.reply()?;
            Some(parse_received(
                raw,
                a.truncated,
                a.says(NO_TERMINATOR),
                n,
                targets,
            ))
        };
        let answers = self.table.ask_each(asks, builtin, parse, digest).await;
        // Every seat's move, in seat order: a seat not asked (dead) picks target 0.
        let mut moves: Vec<MoveEvent> = Vec::with_capacity(NUM_SEATS);
        let mut deaths = Vec::new();
        let span = self.table.span();
        for (seat, (a, parsed)) in seats.into_iter().zip(answers) {
            while moves.len() < seat {
                moves.push(MoveEvent::dead(moves.len(), n));
            }
            // A block that could not be written is not part of the seat's stream.
            if a.outcome == ExchangeOutcome::Crash && a.says(WRITE_FAILED) {
                self.streams[seat] = before[seat].clone();
            }
            if let Some(first) = a.discarded.first() {
                let more = match a.discarded.len() {
                    1 => String::new(),
                    k => format!(" and {} more", k - 1),
                };
                let detail = format!("before turn {t}: discarded output {first:?}{more}");
                self.table
                    .fault(seat, &at, SeatErrorKind::UnsolicitedOutput, detail);
            }
            let Some(parsed) = parsed else {
                let (status, reason) = match a.outcome {
                    ExchangeOutcome::Timeout => (MoveStatus::Timeout, "timeout"),
                    _ => (MoveStatus::Crash, "crash"),
                };
                moves.push(MoveEvent {
                    status,
                    ..MoveEvent::dead(seat, n)
                });
                deaths.push((seat, reason));
                continue;
            };
            if !parsed.issues.is_empty() {
                let raw = a.text().unwrap_or_default();
                let detail = kakehiki_nac::reply::describe_reply(raw.trim_end(), &parsed.issues);
                self.table
                    .fault(seat, &at, SeatErrorKind::InvalidReply, detail);
            }
            moves.push(MoveEvent {
                seat,
                status: MoveStatus::Ok,
                picks: parsed.picks,
                errors: parsed.issues,
            });
        }
        while moves.len() < NUM_SEATS {
            moves.push(MoveEvent::dead(moves.len(), n));
        }
        let [m0, m1, m2, m3] = [0, 1, 2, 3].map(|s| &moves[s].picks);
        self.state.apply([m0, m1, m2, m3]);
        // Serialised while the bots think about the next turn.
        self.table.record_later(TurnEvent {
            event: "turn".into(),
            turn: t,
            label: self.state.params().label(t).to_string(),
            moves,
        });
        for (seat, reason) in deaths {
            self.death(seat, reason, None);
        }
        if let Some(&(after_turn, score24)) = self.state.scorings().last().filter(|s| s.0 == t) {
            self.table.record_later(ScoringEvent {
                event: "scoring".into(),
                after_turn,
                score24,
            });
        }
        if let Some(p) = self.profile.as_mut() {
            p.turn_answered(span);
        }
    }

    /// The match's flow: READY and the turns; then the table goes back to the lifecycle, which
    /// stops the bots (§2.1), and the game to [`Game::close`].
    async fn turns(mut self, started: Instant) -> (Table, Game) {
        self.ready().await;
        if let Some(p) = self.profile.as_mut() {
            p.turns_begin(started);
        }
        while !self.state.is_over() {
            if let Some(p) = self.profile.as_mut() {
                p.turn_begins();
            }
            self.turn().await;
            if let Some(p) = self.profile.as_mut() {
                p.turn_ends();
            }
        }
        if let Some(p) = self.profile.as_mut() {
            p.turns_end();
        }
        self.turns_ended = Some(Instant::now());
        let table = std::mem::replace(&mut self.table, Table::new(Vec::new(), ReplayLog::new()));
        (table, self)
    }

    /// Score the match once its seats are finished. The profile comes back when one was asked
    /// for.
    fn close(
        mut self,
        mut finished: Finished,
        started: Instant,
        specs: Vec<String>,
    ) -> (MatchRecord, Option<Profile>) {
        if let (Some(p), Some(ended)) = (self.profile.as_mut(), self.turns_ended) {
            p.shutdown = ended.elapsed();
        }
        let outcome = Outcome::by_max(self.state.scores());
        let total24 = self.state.total24();
        let top = total24.iter().max().copied().unwrap_or(0);
        let tied = match outcome.winner {
            None => (0..NUM_SEATS).filter(|&s| total24[s] == top).collect(),
            Some(_) => Vec::new(),
        };
        let streams = self.streams.map(|(hasher, bytes)| StreamDigest {
            bytes,
            sha256: format!("{:x}", hasher.finalize()),
        });
        finished.log.push(&ResultEvent {
            event: "result".into(),
            total24,
            scores: outcome.scores_exact(),
            winner: outcome.winner,
            tied,
            streams: streams.into(),
        });
        let name = self.variant.name();
        let seats = specs.into_iter().map(|s| (s, Vec::new())).collect();
        let mut report = MatchReport::new(name, name, self.seed, &outcome, seats);
        let total24 = serde_json::json!(total24);
        report.extra.insert("total24".into(), total24);
        finished.fill_report(&mut report);
        if let Some(p) = self.profile.as_mut() {
            p.wall = started.elapsed();
        }
        let replay = finished.log;
        (MatchRecord { report, replay }, self.profile)
    }
}

fn bad(msg: impl Into<String>) -> RefereeError {
    RefereeError::BadReplay(msg.into())
}

impl NacDriver {
    /// The replay header of a match.
    fn header(&self, seed: u64, seats: Vec<String>, limits: Limits) -> ReplayHeader {
        let params = HeaderParams {
            variant: self.variant.params(),
            mt_seed: seed as u32,
            limits,
        };
        let name = self.variant.name();
        self.life.header(name, seed, seats, &params)
    }

    /// Play a match, and note where its wall time went in `profile` (for the benchmark).
    pub async fn play_profiled(
        &self,
        spec: &MatchSpec,
        profile: Option<&mut Profile>,
    ) -> Result<MatchRecord, RefereeError> {
        let limits = self.life.check(spec)?;
        let started = Instant::now();
        let mut seats = start_match_seats(spec, self.variant.name())?;
        for seat in &mut seats {
            if let Seat::NotStarted(why) = seat {
                *why = format!("spawn_failed: {why}");
            }
        }
        let specs: Vec<String> = spec.seats.iter().map(|s| s.to_string()).collect();
        let header = self.header(spec.seed, specs.clone(), limits);
        let table = self.life.open(spec, seats, Some(&header));
        let bots: Vec<_> = (spec.seats.iter().enumerate())
            .map(|(i, s)| match s {
                SeatSpec::Builtin(name) => make_bot(name, i, spec.seed),
                _ => None,
            })
            .collect();
        let (variant, seed, profiled) = (self.variant, spec.seed, profile.is_some());
        let flow = move |table| {
            let mut game = Game::new(variant, seed, limits, table);
            game.profile = profiled.then(Profile::default);
            game.bots = bots;
            game.turns(started)
        };
        let close = move |game: Game, finished| game.close(finished, started, specs);
        let (record, played) = self.life.play(&limits, table, flow, close).await?;
        if let (Some(out), Some(played)) = (profile, played) {
            *out = played;
        }
        Ok(record)
    }

    /// Check a replay's header against this variant; its limits.
    fn header_limits(&self, h: &ReplayHeader, format: &str) -> Result<Limits, RefereeError> {
        let name = self.variant.name();
        if h.format != format {
            return Err(bad(format!("format {:?} is not {format:?}", h.format)));
        }
        if h.game != name {
            return Err(bad(format!("game {:?} is not {name:?}", h.game)));
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
        for (seat, s) in h.seats.iter().enumerate() {
            s.parse::<SeatSpec>()
                .map_err(|e| bad(format!("seat {seat}: {e}")))?;
        }
        Ok(params.limits)
    }

    /// Play the match of `h` again on recorded seats (`table`, holding the re-run's header).
    fn replay_on(
        &self,
        h: &ReplayHeader,
        limits: Limits,
        table: Table,
    ) -> Result<MatchRecord, RefereeError> {
        let (variant, seed, started) = (self.variant, h.seed, Instant::now());
        let flow = |table| Game::new(variant, seed, limits, table).turns(started);
        let close = |game: Game, finished| game.close(finished, started, h.seats.clone()).0;
        self.life.rerun(&limits, table, flow, close)
    }
}

impl GameDriver for NacDriver {
    // The header and the targets' weights: a turn's picks (night picks stay secret, and its
    // errors and timings are its contestant's alone until the end: spec H9), the scores and
    // deaths wait for the end.
    fn public_live(&self) -> fn(&str) -> bool {
        |line| matches!(crate::driver::line_kind(line), Some((e, _)) if e == "header" || e == "weights")
    }
    fn game_type(&self) -> &'static GameType {
        self.game_type
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(self.play_profiled(spec, None))
    }

    fn check_spec(&self, spec: &MatchSpec) -> Result<(), RefereeError> {
        self.life.check(spec).map(drop)
    }

    /// The READY window (`ready_ms`, one budget for every seat at once), then every turn at
    /// its `turn_ms` (the four seats are asked at once), then `end_grace_ms` to exit.
    fn longest_legal_match(&self, spec: &MatchSpec) -> Result<Option<Duration>, RefereeError> {
        let limits = self.life.check(spec)?;
        let turns = u64::from(self.variant.params().turns);
        let ms = limits
            .ready_ms
            .saturating_add(limits.turn_ms.saturating_mul(turns))
            .saturating_add(limits.end_grace_ms);
        Ok(Some(Duration::from_millis(ms)))
    }

    fn replay_format(&self) -> Option<&'static str> {
        Some(FORMAT)
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        crate::verify::check_format(&h.format, FORMAT)?;
        let limits = self.header_limits(h, FORMAT)?;
        let header = self.header(h.seed, h.seats.clone(), limits);
        let table = self.life.replayed(replay, NUM_SEATS, Some(&header))?;
        self.replay_on(h, limits, table)
    }

    /// An `@1` replay as `@2`: its `ready` events, moves and `stderr` events become the seat
    /// record, and the match is played again on it.
    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        let h = &old.header;
        let limits = self.header_limits(h, FORMAT_V1)?;
        let record = kakehiki_nac::v1::seat_record(old, h, &limits).map_err(bad)?;
        let seats = record.into_iter().map(|(e, end)| Seat::replayed(e, end));
        let mut header = ReplayLog::new();
        header.push(&self.header(h.seed, h.seats.clone(), limits));
        let table = Table::new(seats.collect(), header);
        Ok(self.replay_on(h, limits, table)?.replay)
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn the_longest_legal_match_is_ready_every_turn_and_the_grace() {
        for (driver, turns) in [(&NAC, 9), (&RELIGION_WAR, 9)] {
            let mut spec = MatchSpec::new(
                driver.game_type.name,
                1,
                vec![SeatSpec::Builtin("silent".into()); NUM_SEATS],
            );
            let d = Limits::default();
            let want = d.ready_ms + turns * d.turn_ms + d.end_grace_ms;
            assert_eq!(
                driver.longest_legal_match(&spec).unwrap(),
                Some(Duration::from_millis(want))
            );
            spec.options.insert("turn_ms".into(), "50".into());
            spec.options.insert("ready_ms".into(), "100".into());
            spec.options.insert("end_grace_ms".into(), "10".into());
            assert_eq!(
                driver.longest_legal_match(&spec).unwrap(),
                Some(Duration::from_millis(100 + turns * 50 + 10))
            );
        }
    }
}
