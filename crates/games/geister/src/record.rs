//! The game's side of the referee's seat record (pure): which of the session's events are a
//! seat's errors, and the seat record a `kakehiki-geister/1` replay implies (its events carry
//! every raw reply and its time), from which the referee upgrades it.

use kakehiki_core::exchange::{ExchangeOutcome, SeatEnd, SeatExchange, SEAT_END_EVENT};
use kakehiki_core::SeatErrorKind;
use serde_json::Value;

use crate::session::{Disposition, Event, FaultKind, TurnOutcome};

/// The label of the moments before the first ply (connection, placement).
pub const SETUP: &str = "set-up";

/// The seat error an event shows, if any: `(seat, label, kind, detail)`. `at` labels a line out
/// of turn and a fault. A fault of a seat in `noted` is left out: the seat layer recorded it.
pub fn event_error(
    e: &Event,
    at: &str,
    noted: &[usize],
) -> Option<(usize, String, SeatErrorKind, String)> {
    let quoted =
        |raw: &Option<String>| format!("{:?}", raw.as_deref().unwrap_or("<line over 256 bytes>"));
    match e {
        Event::Set {
            seat,
            raw,
            accepted: false,
            reason,
            ..
        } => Some((
            *seat,
            SETUP.into(),
            SeatErrorKind::InvalidReply,
            format!(
                "placement {} refused: {}",
                quoted(raw),
                reason.as_deref().unwrap_or("")
            ),
        )),
        Event::Turn {
            ply,
            seat,
            raw,
            outcome: o @ (TurnOutcome::Illegal | TurnOutcome::Malformed),
            reason,
            ..
        } => {
            let (kind, what) = match o {
                TurnOutcome::Illegal => (SeatErrorKind::IllegalAction, "illegal move"),
                _ => (SeatErrorKind::InvalidReply, "malformed command"),
            };
            let reason = reason.as_deref().unwrap_or("");
            let detail = format!("{what} {}: {reason}", quoted(raw));
            Some((*seat, format!("ply {ply}"), kind, detail))
        }
        Event::Line {
            seat,
            raw,
            disposition: d @ (Disposition::OutOfTurn | Disposition::TooLong),
            ..
        } => Some((
            *seat,
            at.into(),
            SeatErrorKind::ProtocolError,
            match d {
                Disposition::TooLong => "a line over 256 bytes out of turn (NG)".into(),
                _ => format!("command {} out of turn (NG)", quoted(raw)),
            },
        )),
        Event::Fault {
            seat, kind, detail, ..
        } if !noted.contains(seat) => {
            let k = match kind {
                FaultKind::Disconnect => SeatErrorKind::Disconnect,
                FaultKind::Exit | FaultKind::WriteFailed => SeatErrorKind::Crash,
                FaultKind::SetTimeout | FaultKind::ConnectTimeout => SeatErrorKind::NotReady,
            };
            Some((*seat, at.into(), k, detail.clone()))
        }
        _ => None,
    }
}

fn exchange(
    seat: usize,
    at: &str,
    kind: &str,
    outcome: ExchangeOutcome,
    raw: Option<&str>,
    us: Option<u64>,
) -> Value {
    let mut e = SeatExchange::new(seat, at, kind, outcome);
    // A request's limit (the re-run records its own); a line out of turn has none.
    e.limit_ms = us.map(|_| 0);
    e.time_us = us;
    if let Some(r) = raw {
        e.set_raw(r.as_bytes());
    }
    serde_json::to_value(e).unwrap_or_default()
}

/// The seat record (`seat` and `seat_end` lines, then any `connections` events) of a
/// `kakehiki-geister/1` replay's events; `tcp` says which seats connected over TCP.
pub fn v1_seat_record(events: &[(usize, Value)], tcp: &[bool]) -> Result<Vec<Value>, String> {
    let mut assigned: [Option<u64>; 2] = [None, None];
    let mut out = Vec::new();
    let mut after = Vec::new();
    let too_long = "x".repeat(300);
    for (line, v) in events {
        let seat = v.get("seat").and_then(Value::as_u64).unwrap_or(0) as usize;
        if seat >= 2 || seat >= tcp.len() {
            return Err(format!("line {line}: seat {seat}"));
        }
        match v.get("event").and_then(Value::as_str) {
            Some("stderr") => {
                let end = SeatEnd {
                    event: SEAT_END_EVENT.into(),
                    seat,
                    exit: "not recorded by kakehiki-geister/1".into(),
                    exit_code: None,
                    signal: None,
                    stderr: v["text"].as_str().unwrap_or("").to_string(),
                };
                after.push(serde_json::to_value(end).unwrap_or_default());
                continue;
            }
            Some("connections") => {
                after.push(v.clone());
                continue;
            }
            _ => {}
        }
        let ev: Event =
            serde_json::from_value(v.clone()).map_err(|e| format!("line {line}: {e}"))?;
        let raw = |r: &Option<String>| Some(r.clone().unwrap_or_else(|| too_long.clone()));
        let since = |t: u64| Some(t.saturating_sub(assigned[seat].unwrap_or(0)) * 1000);
        use ExchangeOutcome::{Crash, Disconnect, Reply, Timeout};
        let e = match ev {
            Event::Assign { t, .. } => {
                assigned[seat] = Some(t);
                if !tcp[seat] {
                    continue;
                }
                exchange(seat, SETUP, "connect", Reply, Some(""), Some(0))
            }
            Event::Set { t, raw: r, .. } => {
                exchange(seat, SETUP, "SET?", Reply, raw(&r).as_deref(), since(t))
            }
            Event::Turn {
                ply,
                raw: r,
                outcome,
                elapsed_ms,
                ..
            } => {
                let (o, r) = match outcome {
                    TurnOutcome::Timeout => (Timeout, None),
                    _ => (Reply, raw(&r)),
                };
                let at = format!("ply {ply}");
                exchange(seat, &at, "MOV?", o, r.as_deref(), Some(elapsed_ms * 1000))
            }
            Event::Line { raw: r, .. } => {
                exchange(seat, SETUP, "line", Reply, raw(&r).as_deref(), None)
            }
            Event::Fault {
                kind, detail, t, ..
            } => {
                let (k, o) = match kind {
                    FaultKind::ConnectTimeout => ("connect", Timeout),
                    FaultKind::SetTimeout => ("SET?", Timeout),
                    FaultKind::Disconnect => ("line", Disconnect),
                    _ if tcp[seat] && assigned[seat].is_none() => ("connect", Crash),
                    _ => ("line", Crash),
                };
                let mut e = exchange(seat, SETUP, k, o, None, since(t));
                e["detail"] = Value::String(detail);
                e
            }
            Event::End { .. } => continue,
        };
        out.push(e);
    }
    out.extend(after);
    Ok(out)
}
