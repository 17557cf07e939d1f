//! The `werewolf@1` replay (a `reply` event per request) as a seat record: the driver plays the
//! game again on it, and the result must tell the same game as the old replay.

use kakehiki_core::exchange::{ExchangeOutcome, SeatExchange};
use kakehiki_core::replay::ParsedReplay;
use serde::Deserialize;
use serde_json::Value;

use crate::wire::label;

/// A `reply` event of a werewolf@1 replay.
#[derive(Deserialize)]
struct ReplyV1 {
    day: u32,
    turn: u32,
    agent: usize,
    request: String,
    outcome: String,
    line: Option<String>,
    #[serde(default)]
    overlong: bool,
    us: Option<u64>,
}

/// The seat record of an old replay of `n` seats whose requests had `limit_ms` each.
pub fn seat_record(
    old: &ParsedReplay,
    n: usize,
    limit_ms: u64,
) -> Result<Vec<SeatExchange>, String> {
    let mut record = Vec::new();
    // @1 recorded every later request to a silenced seat as `silent`; @2 asks no more.
    let mut quiet = vec![false; n];
    for r in old
        .events_of::<ReplyV1>("reply")
        .map_err(|e| e.to_string())?
    {
        let s = r
            .agent
            .checked_sub(1)
            .filter(|&s| s < n)
            .ok_or_else(|| format!("a reply of agent {} in a {n}-seat game", r.agent))?;
        let outcome = match r.outcome.as_str() {
            "ok" | "invalid" => ExchangeOutcome::Reply,
            "timeout" => ExchangeOutcome::Timeout,
            "disconnect" => ExchangeOutcome::Disconnect,
            "silent" if quiet[s] => continue,
            // A seat silent before anything went wrong in this game never got a seat.
            "silent" => ExchangeOutcome::NotRunning,
            o => return Err(format!("reply outcome {o:?}")),
        };
        quiet[s] |= outcome != ExchangeOutcome::Reply;
        let mut ex = SeatExchange::new(s, &label(r.day, &r.request, r.turn), &r.request, outcome);
        ex.limit_ms = Some(limit_ms);
        ex.time_us = if outcome == ExchangeOutcome::NotRunning {
            Some(0)
        } else {
            r.us
        };
        if let Some(l) = &r.line {
            ex.set_raw(l.as_bytes());
        }
        ex.truncated = r.overlong;
        if outcome == ExchangeOutcome::NotRunning {
            ex.detail = Some("not running (werewolf@1 did not record why)".into());
        }
        record.push(ex);
    }
    Ok(record)
}

/// Whether the re-run `new` tells the same game as `old`: the same log lines and end.
pub fn same_game(old: &ParsedReplay, new: &ParsedReplay) -> Result<(), String> {
    for kind in ["log", "end"] {
        let events = |r: &ParsedReplay| r.events_of::<Value>(kind).map_err(|e| e.to_string());
        if events(old)? != events(new)? {
            return Err(format!(
                "the upgraded replay does not reproduce the recorded {kind:?} events"
            ));
        }
    }
    Ok(())
}
