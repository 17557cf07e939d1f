//! The driver of `rps`, the test-only example game of `docs/adding-a-game.md`: rock-paper-scissors
//! over pipes, written on the seat layer.
//!
//! The whole match is [`play_rounds`]: it asks both seats at once through a [`Table`], reads their
//! replies with the rules crate's codec, records the game's own events (`round`, `result`) and
//! finishes the table. Playing runs it on live seats ([`start_match_seats`]); re-running a replay runs
//! the same function on [`Table::replayed`] seats. Built only with the `example-game` feature.

use std::time::Duration;

use kakehiki_core::replay::ParsedReplay;
use kakehiki_core::{seeded_rng, GameType, MatchReport, SeatErrorKind};
use kakehiki_rps::{
    builtin_reply, end_message, outcome, parse_reply, request, round_winner, Throw, DEFAULT_ROUNDS,
    MAX_ROUNDS, RPS_TYPE,
};
use serde::{Deserialize, Serialize};

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::lifecycle::Lifecycle;
use crate::seat::pipe::start_match_seats;
use crate::seat::{Ask, Table};

/// The replay format this driver writes.
pub const FORMAT: &str = "kakehiki/rps-replay@1";

/// The `rps` driver.
pub struct RpsDriver;

/// `rps`.
pub static RPS: RpsDriver = RpsDriver;

// ANCHOR: lifecycle
/// The game, as the shared match lifecycle needs it: the bots get half a second to exit.
const RPS_LIFE: Lifecycle<Params> = Lifecycle {
    game: &RPS_TYPE,
    format: FORMAT,
    params: params_of,
    end_grace: |_| Duration::from_millis(500),
};
// ANCHOR_END: lifecycle

/// The match parameters, recorded in the replay header.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Params {
    rounds: u32,
    move_ms: u64,
}

// ANCHOR: events
/// One round: both throws (`null` for a bad or missing answer) and who won it.
#[derive(Serialize)]
struct RoundEvent {
    event: &'static str,
    round: u32,
    throws: [Option<char>; 2],
    winner: Option<usize>,
}

/// The end of the match: rounds won per seat.
#[derive(Serialize)]
struct ResultEvent {
    event: &'static str,
    wins: [u32; 2],
    winner: Option<usize>,
}
// ANCHOR_END: events

// ANCHOR: flow
/// The match, on whatever seats the table holds (live or replayed): the table goes back to the
/// lifecycle, which finishes the seats, with the report to fill.
async fn play_rounds(
    mut table: Table,
    p: Params,
    seed: u64,
    specs: Vec<String>,
) -> (Table, MatchReport) {
    let limit = Duration::from_millis(p.move_ms);
    let mut rngs = [seeded_rng(seed, "seat-0"), seeded_rng(seed, "seat-1")];
    let (mut wins, mut last) = ([0u32; 2], [None::<Throw>; 2]);
    for round in 1..=p.rounds {
        table.turn = round;
        let at = format!("round {round}");
        let asks = (0..2)
            .map(|s| {
                let msg = request(round, p.rounds, last[s], last[1 - s]);
                Ask::new(s, &at, "throw", msg, limit)
            })
            .collect();
        // A built-in seat answers in the wire format; its reply goes through the same parser.
        let answers = table
            .ask(asks, |s, _| {
                let name = specs[s].strip_prefix("builtin:").unwrap_or("");
                builtin_reply(name, &mut rngs[s])
            })
            .await;
        let mut throws = [None; 2];
        for (s, answer) in answers.iter().enumerate() {
            // Timeouts, crashes and the like are already recorded by the table.
            let Some(reply) = answer.reply() else {
                continue;
            };
            match parse_reply(reply) {
                Ok(t) => throws[s] = Some(t),
                Err(why) => table.fault(s, &at, SeatErrorKind::InvalidReply, why),
            }
        }
        let winner = round_winner(throws);
        if let Some(w) = winner {
            wins[w] += 1;
        }
        table.record(&RoundEvent {
            event: "round",
            round,
            throws: throws.map(|t| t.map(Throw::letter)),
            winner,
        });
        last = throws;
    }
    for s in 0..2 {
        table
            .tell(s, "end", "end", end_message(wins, s), limit)
            .await;
    }
    let result = outcome(wins);
    table.record(&ResultEvent {
        event: "result",
        wins,
        winner: result.winner,
    });
    let seats = specs.into_iter().map(|s| (s, Vec::new())).collect();
    let rules = RPS_TYPE.default_rules();
    (
        table,
        MatchReport::new(RPS_TYPE.name, rules, seed, &result, seats),
    )
}
// ANCHOR_END: flow

/// The parameters of a spec, after checking its rules, seats and options.
fn params_of(spec: &MatchSpec) -> Result<Params, RefereeError> {
    spec.check_common(&RPS_TYPE, &["rounds", "move_ms"])?;
    let rounds = spec.option(
        "rounds",
        DEFAULT_ROUNDS,
        "a whole number of rounds, 1-10000",
    )?;
    if !(1..=MAX_ROUNDS).contains(&rounds) {
        return Err(RefereeError::BadOption {
            key: "rounds".into(),
            value: rounds.to_string(),
            expected: format!("a whole number of rounds, 1-{MAX_ROUNDS}"),
        });
    }
    let move_ms = spec.option("move_ms", 1000, "milliseconds per throw")?;
    Ok(Params { rounds, move_ms })
}

impl GameDriver for RpsDriver {
    fn game_type(&self) -> &'static GameType {
        &RPS_TYPE
    }

    fn replay_format(&self) -> Option<&'static str> {
        Some(FORMAT)
    }

    // ANCHOR: play
    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            let p = RPS_LIFE.check(spec)?;
            let specs: Vec<String> = spec.seats.iter().map(ToString::to_string).collect();
            let header = RPS_LIFE.header(RPS_TYPE.default_rules(), spec.seed, specs.clone(), &p);
            let seats = start_match_seats(spec, RPS_TYPE.name)?;
            let table = RPS_LIFE.open(spec, seats, Some(&header));
            let seed = spec.seed;
            let flow = move |table| play_rounds(table, p, seed, specs);
            RPS_LIFE.play(&p, table, flow, |r, f| f.record(r)).await
        })
    }
    // ANCHOR_END: play

    fn check_spec(&self, spec: &MatchSpec) -> Result<(), RefereeError> {
        RPS_LIFE.check(spec).map(drop)
    }

    /// Every round waits at most `move_ms` for both throws (asked at once), then the bots get
    /// the end grace to exit.
    fn longest_legal_match(&self, spec: &MatchSpec) -> Result<Option<Duration>, RefereeError> {
        let p = RPS_LIFE.check(spec)?;
        let rounds = Duration::from_millis(p.move_ms).saturating_mul(p.rounds);
        Ok(Some(rounds + RPS_LIFE.end_grace(&p)))
    }

    // ANCHOR: rerun
    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let (p, h) = (RPS_LIFE.recorded(replay)?, &replay.header);
        let header = RPS_LIFE.header(RPS_TYPE.default_rules(), h.seed, h.seats.clone(), &p);
        let table = RPS_LIFE.replayed(replay, 2, Some(&header))?;
        let flow = |table| play_rounds(table, p, h.seed, h.seats.clone());
        RPS_LIFE.rerun(&p, table, flow, |r, f| f.record(r))
    }
    // ANCHOR_END: rerun
}

#[cfg(test)]
mod tests {
    use super::*;
    use kakehiki_core::SeatSpec;

    #[test]
    fn the_longest_legal_match_is_every_round_at_its_limit_and_the_grace() {
        let mut spec = MatchSpec::new("rps", 1, vec![SeatSpec::Builtin("rock".into()); 2]);
        let d = RPS.longest_legal_match(&spec).unwrap().unwrap();
        assert_eq!(d, Duration::from_millis(DEFAULT_ROUNDS as u64 * 1000 + 500));
        spec.options.insert("rounds".into(), "3".into());
        spec.options.insert("move_ms".into(), "200".into());
        let d = RPS.longest_legal_match(&spec).unwrap().unwrap();
        assert_eq!(d, Duration::from_millis(3 * 200 + 500));
        spec.options.insert("move_ms".into(), "fast".into());
        assert!(RPS.longest_legal_match(&spec).is_err());
    }
}
