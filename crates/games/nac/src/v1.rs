//! Upgrading a `nac-replay@1` (the driver's own `ready`, move and `stderr` events) to the seat
//! record of `@2`: every READY and move becomes the exchange it was, every `stderr` event the
//! seat's end, and the match is played again on them.

use std::collections::VecDeque;

use kakehiki_core::exchange::{
    ExchangeOutcome, SeatEnd, SeatExchange, NO_TERMINATOR, SEAT_END_EVENT,
};
use kakehiki_core::replay::{ParsedReplay, ReplayHeader};
use serde::Deserialize;

use crate::record::{Limits, MoveStatus, READY_AT, READY_KIND, TURN_KIND};
use crate::reply::{Issue, IssueCode};
use crate::NUM_SEATS;

#[derive(Deserialize)]
struct Ready {
    seat: usize,
    ok: bool,
    time_us: u64,
    errors: Vec<ReadyIssue>,
}

#[derive(Deserialize)]
struct ReadyIssue {
    code: String,
    detail: String,
}

#[derive(Deserialize)]
struct Move {
    seat: usize,
    status: MoveStatus,
    #[serde(default)]
    raw: Option<String>,
    #[serde(default)]
    raw_b64: Option<String>,
    #[serde(default)]
    time_us: Option<u64>,
    #[serde(default)]
    errors: Vec<Issue>,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    discarded: Vec<String>,
}

#[derive(Deserialize)]
struct Turn {
    turn: u32,
    moves: Vec<Move>,
}

#[derive(Deserialize)]
struct Stderr {
    seat: usize,
    text: String,
}

fn ready_exchange(r: &Ready, limits: &Limits, builtin: bool) -> SeatExchange {
    use ExchangeOutcome as O;
    let code = r.errors.first().map(|e| e.code.as_str());
    let detail = r.errors.first().map(|e| e.detail.clone());
    let outcome = match code {
        _ if r.ok => O::Reply,
        Some("spawn_failed") => O::NotRunning,
        Some("bad_ready") => O::Reply,
        Some("crash") => O::Crash,
        _ => O::Timeout,
    };
    let mut ex = SeatExchange::new(r.seat, READY_AT, READY_KIND, outcome);
    ex.limit_ms = Some(limits.ready_ms);
    ex.time_us = (!builtin).then_some(r.time_us);
    match code {
        _ if r.ok => ex.set_raw(b"READY"),
        // `expected READY, got "hello"`: the text is what the bot wrote.
        Some("bad_ready") => {
            let got = detail
                .as_deref()
                .and_then(|d| d.split_once("got "))
                .map(|x| x.1);
            let text = got.and_then(|g| serde_json::from_str::<String>(g).ok());
            ex.set_raw(text.unwrap_or_else(|| "?".into()).as_bytes());
        }
        _ => ex.detail = detail.map(|d| format!("{}: {d}", code.unwrap_or("timeout"))),
    }
    if r.ok && code == Some("no_newline") {
        ex.detail = Some(format!("{NO_TERMINATOR}: taken at the deadline"));
    }
    ex
}

fn move_exchange(t: u32, m: &Move, limits: &Limits, builtin: bool) -> SeatExchange {
    use ExchangeOutcome as O;
    let cap = m
        .detail
        .as_deref()
        .is_some_and(|d| d.starts_with("output cap exceeded"));
    let outcome = match m.status {
        MoveStatus::Ok => O::Reply,
        MoveStatus::Timeout => O::Timeout,
        MoveStatus::Crash | MoveStatus::Dead if cap => O::ResourceLimit,
        MoveStatus::Crash | MoveStatus::Dead => O::Crash,
    };
    let mut ex = SeatExchange::new(m.seat, &format!("turn {t}"), TURN_KIND, outcome);
    ex.limit_ms = Some(limits.turn_ms);
    ex.time_us = if builtin { None } else { m.time_us };
    let mut raw = m.raw.clone().map(String::into_bytes);
    if let Some(b) = &m.raw_b64 {
        raw = Some(b64(b));
    }
    if let Some(raw) = raw.filter(|r| !r.is_empty() || m.status == MoveStatus::Ok) {
        ex.set_raw(&raw);
    }
    let has = |c: IssueCode| m.errors.iter().any(|e| e.code == c);
    ex.truncated = has(IssueCode::LineTooLong);
    ex.detail = m.detail.clone();
    if has(IssueCode::NoNewline) {
        ex.detail = Some(format!("{NO_TERMINATOR}: taken at the deadline"));
    }
    ex.discarded = m.discarded.clone();
    ex
}

/// Each seat's recorded exchanges and end in an `@1` replay, from its events.
pub type SeatRecords = Vec<(VecDeque<SeatExchange>, Option<SeatEnd>)>;

/// The seat record of an `@1` replay: each seat's exchanges, in order, and its end.
pub fn seat_record(
    old: &ParsedReplay,
    h: &ReplayHeader,
    limits: &Limits,
) -> Result<SeatRecords, String> {
    let builtin = |s: usize| h.seats[s].starts_with("builtin:");
    let mut seats: SeatRecords = (0..NUM_SEATS).map(|_| (VecDeque::new(), None)).collect();
    let events = |e: kakehiki_core::replay::ReplayError| e.to_string();
    for r in old.events_of::<Ready>("ready").map_err(events)? {
        let ex = ready_exchange(&r, limits, builtin(r.seat.min(NUM_SEATS - 1)));
        seats
            .get_mut(r.seat)
            .ok_or_else(|| format!("ready event of seat {}", r.seat))?
            .0
            .push_back(ex);
    }
    for t in old.events_of::<Turn>("turn").map_err(events)? {
        for m in t.moves.iter().filter(|m| m.status != MoveStatus::Dead) {
            let ex = move_exchange(t.turn, m, limits, builtin(m.seat.min(NUM_SEATS - 1)));
            seats
                .get_mut(m.seat)
                .ok_or_else(|| format!("move of seat {}", m.seat))?
                .0
                .push_back(ex);
        }
    }
    for e in old.events_of::<Stderr>("stderr").map_err(events)? {
        if let Some(seat) = seats.get_mut(e.seat) {
            seat.1 = Some(SeatEnd {
                event: SEAT_END_EVENT.into(),
                seat: e.seat,
                exit: "not recorded (upgraded from a nac-replay@1)".into(),
                exit_code: None,
                signal: None,
                stderr: e.text,
            });
        }
    }
    Ok(seats)
}

fn b64(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_default()
}
