//! `kakehiki-geister/1` to `/2`: the seat record is made from the old replay's own events (its
//! placements, turns, lines and faults carry the raw replies and their times), then the game is
//! re-run on it by the same flow, which writes the `/2` replay.

use kakehiki_core::exchange::{ExchangeOutcome, SeatEnd, SeatExchange, SEAT_END_EVENT};
use kakehiki_core::replay::{ParsedReplay, ReplayLog};
use kakehiki_geister::session::{Event, FaultKind, TurnOutcome};
use kakehiki_geister::Rules;
use serde::Deserialize;
use serde_json::Value;

use super::{bad, rerun_replay, HeaderParams, SeatInfo, FORMAT, FORMAT_V1, SETUP};
use crate::driver::RefereeError;

#[derive(Deserialize)]
struct V1Seat {
    transport: String,
}

#[derive(Deserialize)]
struct V1Params {
    rules: Rules,
    seats: Vec<V1Seat>,
    started_unix_ms: u64,
}

#[derive(Deserialize)]
struct V1Stderr {
    seat: usize,
    text: String,
}

/// Convert a `/1` replay into a `/2` one.
pub fn upgrade(old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
    let h = &old.header;
    if h.format != FORMAT_V1 {
        return Err(bad(format!(
            "format {:?} is not {FORMAT_V1:?} (the one geister upgrades from)",
            h.format
        )));
    }
    let p: V1Params =
        serde_json::from_value(h.params.clone()).map_err(|e| bad(format!("header params: {e}")))?;
    if p.seats.len() != 2 {
        return Err(bad(format!("expected 2 seats, found {}", p.seats.len())));
    }
    let tcp: Vec<bool> = p.seats.iter().map(|s| s.transport == "tcp").collect();
    let mut assigned: [Option<u64>; 2] = [None, None];
    let mut events: Vec<Value> = Vec::new();
    let mut push = |e: &SeatExchange| events.push(serde_json::to_value(e).unwrap_or_default());
    let exchange = |seat: usize, at: &str, kind: &str, outcome, raw: Option<&str>, us: u64| {
        let mut e = SeatExchange::new(seat, at, kind, outcome);
        // Any limit: the re-run records its own; none would read as a failed write.
        e.limit_ms = Some(0);
        e.time_us = Some(us);
        if let Some(r) = raw {
            e.set_raw(r.as_bytes());
        }
        e
    };
    let mut others: Vec<Value> = Vec::new();
    for (line, v) in &old.events {
        let kind = v.get("event").and_then(Value::as_str).unwrap_or("");
        if kind == "stderr" {
            let s: V1Stderr =
                serde_json::from_value(v.clone()).map_err(|e| bad(format!("line {line}: {e}")))?;
            let end = SeatEnd {
                event: SEAT_END_EVENT.into(),
                seat: s.seat,
                exit: format!("not recorded by {FORMAT_V1}"),
                exit_code: None,
                signal: None,
                stderr: s.text,
            };
            others.push(serde_json::to_value(end).unwrap_or_default());
            continue;
        }
        if kind == "connections" {
            others.push(v.clone());
            continue;
        }
        let ev: Event =
            serde_json::from_value(v.clone()).map_err(|e| bad(format!("line {line}: {e}")))?;
        let too_long = "x".repeat(300);
        let raw_of = |r: &Option<String>| Some(r.clone().unwrap_or_else(|| too_long.clone()));
        let since = |s: usize, t: u64| t.saturating_sub(assigned[s.min(1)].unwrap_or(0)) * 1000;
        match ev {
            Event::Assign { seat, t } => {
                if seat >= 2 {
                    return Err(bad(format!("line {line}: seat {seat}")));
                }
                if tcp[seat] {
                    push(&exchange(
                        seat,
                        SETUP,
                        "connect",
                        ExchangeOutcome::Reply,
                        Some(""),
                        0,
                    ));
                }
                assigned[seat] = Some(t);
            }
            Event::Set { seat, t, raw, .. } => {
                let raw = raw_of(&raw);
                let us = since(seat, t);
                push(&exchange(
                    seat,
                    SETUP,
                    "SET?",
                    ExchangeOutcome::Reply,
                    raw.as_deref(),
                    us,
                ));
            }
            Event::Turn {
                ply,
                seat,
                raw,
                outcome,
                elapsed_ms,
                ..
            } => {
                let at = format!("ply {ply}");
                let us = elapsed_ms * 1000;
                let e = match outcome {
                    TurnOutcome::Timeout => {
                        exchange(seat, &at, "MOV?", ExchangeOutcome::Timeout, None, us)
                    }
                    _ => exchange(
                        seat,
                        &at,
                        "MOV?",
                        ExchangeOutcome::Reply,
                        raw_of(&raw).as_deref(),
                        us,
                    ),
                };
                push(&e);
            }
            Event::Line { seat, raw, .. } => {
                let mut e = exchange(
                    seat,
                    SETUP,
                    "line",
                    ExchangeOutcome::Reply,
                    raw_of(&raw).as_deref(),
                    0,
                );
                e.time_us = None;
                e.limit_ms = None;
                push(&e);
            }
            Event::Fault {
                seat,
                kind,
                detail,
                t,
            } => {
                let (k, outcome) = match kind {
                    FaultKind::ConnectTimeout => ("connect", ExchangeOutcome::Timeout),
                    FaultKind::SetTimeout => ("SET?", ExchangeOutcome::Timeout),
                    FaultKind::Disconnect => ("line", ExchangeOutcome::Disconnect),
                    _ if tcp[seat.min(1)] && assigned[seat.min(1)].is_none() => {
                        ("connect", ExchangeOutcome::Crash)
                    }
                    _ => ("line", ExchangeOutcome::Crash),
                };
                let mut e = exchange(seat, SETUP, k, outcome, None, since(seat, t));
                e.detail = Some(detail);
                push(&e);
            }
            Event::End { .. } => {}
        }
    }
    events.extend(others);
    let params = HeaderParams {
        rules: p.rules,
        seats: p
            .seats
            .into_iter()
            .map(|s| SeatInfo {
                transport: s.transport,
            })
            .collect(),
        started_unix_ms: p.started_unix_ms,
    };
    let mut header = h.clone();
    header.format = FORMAT.into();
    header.params = serde_json::to_value(params).unwrap_or_default();
    let parsed = ParsedReplay {
        header,
        events: events
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i + 2, v))
            .collect(),
    };
    Ok(rerun_replay(&parsed)?.replay)
}
