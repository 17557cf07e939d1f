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

use crate::driver::{as_task, BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::seat::pipe::{start_seats, WRITE_FAILED};
use crate::seat::{Answer, Ask, Seat, Table, NO_TERMINATOR};
use crate::verify::check_format;

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

const OPTION_KEYS: &[&str] = &["ready_ms", "turn_ms", "end_grace_ms"];

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
}

impl Game {
    /// A match on `table` (whose log is empty): the replay's header and weights are written.
    fn new(variant: Variant, seed: u64, limits: Limits, specs: Vec<String>, table: Table) -> Self {
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
        };
        let params = HeaderParams {
            variant: variant.params(),
            mt_seed: seed as u32,
            limits,
        };
        game.table.record(&ReplayHeader {
            event: "header".into(),
            format: FORMAT.into(),
            engine: env!("CARGO_PKG_VERSION").into(),
            game: variant.name().into(),
            rules: variant.name().into(),
            seed,
            seats: specs,
            params: serde_json::to_value(params).unwrap_or_default(),
        });
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

    /// Play the match to its end: READY, the turns, then stop the bots (§2.1) and score. The
    /// profile comes back when one was asked for.
    async fn play(
        mut self,
        started: Instant,
        specs: Vec<String>,
    ) -> (MatchRecord, Option<Profile>) {
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
        let shutdown_start = Instant::now();
        let grace = Duration::from_millis(self.limits.end_grace_ms);
        let mut finished = self.table.finish(grace).await;
        if let Some(p) = self.profile.as_mut() {
            p.shutdown = shutdown_start.elapsed();
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
    fn check(&self, spec: &MatchSpec) -> Result<Limits, RefereeError> {
        spec.check_rules(self.game_type)?;
        spec.check_seats(self.game_type)?;
        spec.check_builtins(self.game_type)?;
        spec.check_option_keys(OPTION_KEYS)?;
        let d = Limits::default();
        let ms = "a whole number of milliseconds";
        Ok(Limits {
            ready_ms: spec.option("ready_ms", d.ready_ms, ms)?,
            turn_ms: spec.option("turn_ms", d.turn_ms, ms)?,
            end_grace_ms: spec.option("end_grace_ms", d.end_grace_ms, ms)?,
        })
    }

    /// Play a match, and note where its wall time went in `profile` (for the benchmark).
    pub async fn play_profiled(
        &self,
        spec: &MatchSpec,
        profile: Option<&mut Profile>,
    ) -> Result<MatchRecord, RefereeError> {
        let limits = self.check(spec)?;
        let started = Instant::now();
        let mut seats = start_seats(&spec.seats, &spec.sandbox, self.variant.name())?;
        for seat in &mut seats {
            if let Seat::NotStarted(why) = seat {
                *why = format!("spawn_failed: {why}");
            }
        }
        let specs: Vec<String> = spec.seats.iter().map(|s| s.to_string()).collect();
        let table = Table::new(seats, ReplayLog::new()).clocked(spec.clock.clone());
        let mut game = Game::new(self.variant, spec.seed, limits, specs.clone(), table);
        game.profile = profile.as_ref().map(|_| Profile::default());
        game.bots = (spec.seats.iter().enumerate())
            .map(|(i, s)| match s {
                SeatSpec::Builtin(name) => make_bot(name, i, spec.seed),
                _ => None,
            })
            .collect();
        // The match runs as a task of its own: each reply's reader task then wakes it through
        // the runtime's run queue rather than by unparking the runtime for its caller.
        let (record, played) = as_task(game.play(started, specs)).await?;
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

    /// Play the match of `h` again on recorded seats, on a runtime of its own (and a thread of
    /// its own, so that re-running works from inside an async caller too).
    fn replay_on(
        &self,
        h: &ReplayHeader,
        limits: Limits,
        table: Table,
    ) -> Result<MatchRecord, RefereeError> {
        let game = Game::new(self.variant, h.seed, limits, h.seats.clone(), table);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(RefereeError::Io)?;
        let specs = h.seats.clone();
        std::thread::scope(|scope| {
            scope
                .spawn(move || runtime.block_on(game.play(Instant::now(), specs)))
                .join()
        })
        .map(|(record, _)| record)
        .map_err(|_| bad("the re-run panicked"))
    }
}

impl GameDriver for NacDriver {
    fn game_type(&self) -> &'static GameType {
        self.game_type
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(self.play_profiled(spec, None))
    }

    fn check_spec(&self, spec: &MatchSpec) -> Result<(), RefereeError> {
        self.check(spec).map(drop)
    }

    /// The READY window (`ready_ms`, one budget for every seat at once), then every turn at
    /// its `turn_ms` (the four seats are asked at once), then `end_grace_ms` to exit.
    fn longest_legal_match(&self, spec: &MatchSpec) -> Result<Option<Duration>, RefereeError> {
        let limits = self.check(spec)?;
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
        check_format(&h.format, FORMAT)?;
        let limits = self.header_limits(h, FORMAT)?;
        let table = Table::replayed(replay, NUM_SEATS, ReplayLog::new())?;
        self.replay_on(h, limits, table)
    }

    /// An `@1` replay as `@2`: its `ready` events, moves and `stderr` events become the seat
    /// record, and the match is played again on it.
    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        let h = &old.header;
        let limits = self.header_limits(h, FORMAT_V1)?;
        let record = kakehiki_nac::v1::seat_record(old, h, &limits).map_err(bad)?;
        let seats = record.into_iter().map(|(e, end)| Seat::replayed(e, end));
        let table = Table::new(seats.collect(), ReplayLog::new());
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
