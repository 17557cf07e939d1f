//! A match stopped at its time limit (`match_timeout_s`) still ends scored: the seats that used
//! the most thinking time ([`crate::seat::SeatClock`]) are charged with a loss, every other seat
//! scores the game's win score ([`GameDriver::forfeit_win_score`]). One function builds that
//! record for every game, so a contest and a ladder charge the same way.

use std::time::Duration;

use kakehiki_core::replay::{ReplayHeader, ReplayLog};
use kakehiki_core::{MatchReport, Outcome, Score, SeatError, SeatErrorKind};
use serde_json::json;

use crate::driver::{GameDriver, MatchRecord, MatchSpec, RefereeError};

/// The replay format of a match stopped at its time limit: its header and one event saying who
/// was charged. It cannot be re-run (the match was cut off), and says so by its format.
pub const OVERTIME_FORMAT: &str = "kakehiki/overtime@1";

/// Where in the match a time-limit charge is recorded ([`SeatError::at`]).
pub const OVERTIME_AT: &str = "match time limit";

/// Seconds with one decimal (`41.2`), from µs.
fn secs(us: u64) -> String {
    format!("{:.1}", us as f64 / 1e6)
}

/// The record of `spec`'s match, stopped after `limit` (its `match_timeout_s`): the seats whose
/// thinking time in `spec.clock` is the greatest (all of them on a tie) score 0 and get a
/// [`SeatErrorKind::Timeout`] error naming the limit and their time; every other seat scores
/// the game's win score. The winner is the one seat not charged, if only one is. A match in
/// which no seat used any time (built-in seats only) charges nobody:
/// [`RefereeError::OverTimeUnattributed`], the host's fault.
pub fn overtime_record(
    driver: &dyn GameDriver,
    spec: &MatchSpec,
    limit: Duration,
) -> Result<MatchRecord, RefereeError> {
    let n = spec.seats.len();
    let limit_s = limit.as_secs();
    let totals = spec.clock.totals(n);
    let most = totals.iter().copied().max().unwrap_or(0);
    if most == 0 {
        return Err(RefereeError::OverTimeUnattributed { limit_s });
    }
    let charged: Vec<bool> = totals.iter().map(|&t| t == most).collect();
    let ties = charged.iter().filter(|&&c| c).count();
    let most_of = if ties == 1 {
        "the most of any seat".to_string()
    } else {
        format!("the most of any seat, tied with {} other(s)", ties - 1)
    };
    let detail = |s: usize| {
        format!(
            "the match exceeded match_timeout_s = {limit_s} s; this seat used {} s of it, {most_of}",
            secs(totals[s])
        )
    };
    let facts = json!({
        "match_timeout_s": limit_s,
        "thinking_us": totals,
        "charged": (0..n).filter(|&s| charged[s]).collect::<Vec<_>>(),
    });
    Ok(charged_record(driver, spec, &charged, detail, facts))
}

/// The record of `spec`'s match, stopped when a seat's thinking time in `spec.clock` passed
/// `budget` (a ladder's `thinking_seconds`, each seat's share of the match): every seat past it
/// scores 0 with a [`SeatErrorKind::Timeout`] error naming the budget and its time; every other
/// seat, however slow the match, scores the game's win score and is never charged. `None` when
/// no seat is past the budget (the match must go on).
pub fn thinking_record(
    driver: &dyn GameDriver,
    spec: &MatchSpec,
    budget: Duration,
) -> Option<MatchRecord> {
    let n = spec.seats.len();
    let totals = spec.clock.totals(n);
    let budget_us = budget.as_micros() as u64;
    let charged: Vec<bool> = totals.iter().take(n).map(|&t| t > budget_us).collect();
    if !charged.contains(&true) {
        return None;
    }
    let budget_s = budget.as_secs();
    let detail = |s: usize| {
        format!(
            "this seat thought for {:.2} s in this match, past its share thinking_seconds = \
             {budget_s} s: the match was stopped and this seat charged; answer faster (the \
             game's per-move limit is not the ladder's whole-match budget)",
            totals[s] as f64 / 1e6
        )
    };
    let facts = json!({
        "thinking_seconds": budget_s,
        "thinking_us": totals,
        "charged": (0..n).filter(|&s| charged[s]).collect::<Vec<_>>(),
    });
    Some(charged_record(driver, spec, &charged, detail, facts))
}

/// The record of a match cut off with the `charged` seats losing (each with the error
/// `detail(seat)`) and every other seat scoring the game's win score; `facts` go into the
/// report (`extra.overtime`) and the replay's one event.
fn charged_record(
    driver: &dyn GameDriver,
    spec: &MatchSpec,
    charged: &[bool],
    detail: impl Fn(usize) -> String,
    facts: serde_json::Value,
) -> MatchRecord {
    let game = driver.game_type();
    let n = spec.seats.len();
    let win = driver.forfeit_win_score();
    let scores: Vec<Score> = charged
        .iter()
        .map(|&c| if c { Score::from_integer(0) } else { win })
        .collect();
    let free: Vec<usize> = (0..n).filter(|&s| !charged[s]).collect();
    let outcome = Outcome {
        scores,
        winner: (free.len() == 1).then(|| free[0]),
    };
    let seats = spec
        .seats
        .iter()
        .enumerate()
        .map(|(s, seat)| {
            let errors = if charged[s] {
                vec![SeatError {
                    turn: 0,
                    at: OVERTIME_AT.into(),
                    kind: SeatErrorKind::Timeout,
                    detail: detail(s),
                }]
            } else {
                Vec::new()
            };
            (seat.to_string(), errors)
        })
        .collect();
    let rules = spec.rules.as_deref().unwrap_or(game.default_rules());
    let mut report = MatchReport::new(game.name, rules, spec.seed, &outcome, seats);
    report.everyone_lost = free.is_empty();
    report.extra.insert("overtime".into(), facts.clone());
    let mut replay = ReplayLog::new();
    let seats = spec.seats.iter().map(ToString::to_string).collect();
    let params = json!({ "options": spec.options });
    replay.push(&ReplayHeader::new(
        OVERTIME_FORMAT,
        game.name,
        rules,
        spec.seed,
        seats,
        &params,
    ));
    let mut event = facts;
    event["event"] = json!("overtime");
    replay.push(&event);
    MatchRecord { report, replay }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kakehiki_core::SeatSpec;

    fn spec(seats: usize) -> MatchSpec {
        let cmd = SeatSpec::Cmd(vec!["bot".into()]);
        let mut s = MatchSpec::new("nac", 5, vec![cmd; seats]);
        s.seats[1] = SeatSpec::Builtin("random".into());
        s
    }

    #[test]
    fn the_seat_that_thought_longest_is_charged_a_loss_and_the_others_win() {
        let driver = crate::find_game("nac").unwrap();
        let s = spec(4);
        s.clock.add(0, 300_000);
        s.clock.add(2, 41_200_000);
        s.clock.add(3, 1_000);
        let rec = overtime_record(driver, &s, Duration::from_secs(60)).unwrap();
        let r = &rec.report;
        assert_eq!(r.scores, vec![1.0, 1.0, 0.0, 1.0]);
        assert_eq!(r.winner, None);
        assert!(!r.everyone_lost);
        for (seat, sr) in r.seats.iter().enumerate() {
            assert_eq!(
                sr.errors.is_empty(),
                seat != 2,
                "seat {seat}: {:?}",
                sr.errors
            );
        }
        let e = &r.seats[2].errors[0];
        assert_eq!(e.kind, SeatErrorKind::Timeout);
        assert_eq!(
            e.detail,
            "the match exceeded match_timeout_s = 60 s; this seat used 41.2 s of it, the most \
             of any seat"
        );
        assert_eq!(r.extra["overtime"]["charged"], json!([2]));
        let parsed = ReplayLog::parse(&rec.replay.to_text()).unwrap();
        assert_eq!(parsed.header.format, OVERTIME_FORMAT);
    }

    #[test]
    fn two_seats_the_one_not_charged_wins_and_a_tie_charges_both() {
        let driver = crate::find_game("nac").unwrap();
        let mut s = spec(4);
        s.seats.truncate(2);
        s.clock.add(0, 5);
        let r = overtime_record(driver, &s, Duration::from_secs(3))
            .unwrap()
            .report;
        assert_eq!((r.scores.clone(), r.winner), (vec![0.0, 1.0], Some(1)));
        s.clock.add(1, 5);
        let r = overtime_record(driver, &s, Duration::from_secs(3))
            .unwrap()
            .report;
        assert_eq!((r.scores.clone(), r.winner), (vec![0.0, 0.0], None));
        assert!(r.everyone_lost);
        assert!(r.seats[1].errors[0].detail.contains("tied with 1 other"));
    }

    #[test]
    fn a_match_in_which_no_seat_used_any_time_charges_nobody_and_is_the_hosts_fault() {
        let driver = crate::find_game("nac").unwrap();
        let e = overtime_record(driver, &spec(4), Duration::from_secs(9)).unwrap_err();
        assert!(matches!(
            e,
            RefereeError::OverTimeUnattributed { limit_s: 9 }
        ));
        assert!(e.is_host_fault());
        assert!(
            e.to_string().contains("no seat used any thinking time"),
            "{e}"
        );
    }

    #[test]
    fn past_its_thinking_budget_a_seat_is_charged_and_a_slow_seat_within_it_is_not() {
        let driver = crate::find_game("nac").unwrap();
        let s = spec(4);
        s.clock.add(0, 29_000_000);
        assert!(thinking_record(driver, &s, Duration::from_secs(30)).is_none());
        s.clock.add(2, 31_000_000);
        let rec = thinking_record(driver, &s, Duration::from_secs(30)).unwrap();
        let r = &rec.report;
        assert_eq!(r.scores, vec![1.0, 1.0, 0.0, 1.0]);
        assert!(
            r.seats[0].errors.is_empty(),
            "29 s of 30 is within the budget"
        );
        let e = &r.seats[2].errors[0];
        assert_eq!(e.kind, SeatErrorKind::Timeout);
        assert!(
            e.detail.starts_with(
                "this seat thought for 31.00 s in this match, past its share thinking_seconds = 30 s"
            ),
            "{}",
            e.detail
        );
        assert_eq!(r.extra["overtime"]["charged"], json!([2]));
        assert_eq!(r.extra["overtime"]["thinking_seconds"], json!(30));
    }
}
