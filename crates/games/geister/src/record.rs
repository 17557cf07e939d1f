//! The game's side of the referee's record (pure): the replay header's parameters, the report's
//! facts, which of the session's events are a seat's errors, and the seat record a
//! `kakehiki-geister/1` replay implies (its events carry every raw reply and its time), from which
//! the referee upgrades it.

use kakehiki_core::exchange::{ExchangeOutcome, SeatEnd, SeatExchange, SEAT_END_EVENT};
use kakehiki_core::replay::{ParsedReplay, ReplayHeader};
use kakehiki_core::{MatchReport, SeatError, SeatErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::engine::{outcome_of, End, EndReason};
use crate::rules::Rules;
use crate::session::{Disposition, Event, FaultKind, Session, TurnOutcome};

/// Replay format name. Its times count from the game's start: a TCP seat is assigned (sent
/// `SET?`) when its own client connects.
pub const FORMAT: &str = "kakehiki-geister/3";
/// The older formats the referee upgrades ([`upgrade`]): `/1` (events only, [`upgrade_v1`])
/// and `/2` (the seat record of a game whose clock started once both TCP seats had connected).
pub const FORMAT_V1: &str = "kakehiki-geister/1";
pub const FORMAT_V2: &str = "kakehiki-geister/2";

/// Per seat: how it is connected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatInfo {
    /// `builtin`, `stdio` or `tcp`.
    pub transport: String,
    /// The TCP peer address, once connected.
    pub peer: Option<String>,
}

/// The header's `params`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderParams {
    pub rules: Rules,
    pub seats: Vec<SeatInfo>,
    /// Wall-clock start (ms since the Unix epoch, UTC).
    pub started_unix_ms: u64,
}

impl HeaderParams {
    /// The parameters of a game about to start: no peer known yet.
    pub fn new(rules: &Rules, transports: [&str; 2], started_unix_ms: u64) -> Self {
        let seats = transports.map(|t| SeatInfo {
            transport: t.to_string(),
            peer: None,
        });
        HeaderParams {
            rules: rules.clone(),
            seats: seats.to_vec(),
            started_unix_ms,
        }
    }
}

/// The replay header of a game.
pub fn header(seed: u64, specs: &[String; 2], params: &HeaderParams) -> ReplayHeader {
    let rules = &params.rules.name;
    ReplayHeader::new(FORMAT, "geister", rules, seed, specs.to_vec(), params)
}

/// A replay header's parameters, with the peers left out (a re-run records its own), and each
/// seat's transport; or why the header is not a Geister `@2` one.
pub fn rerun_params(h: &ReplayHeader) -> Result<(HeaderParams, [&'static str; 2]), String> {
    if h.format != FORMAT {
        return Err(format!("format {:?} is not {FORMAT:?}", h.format));
    }
    if h.game != "geister" {
        return Err(format!("game {:?} is not \"geister\"", h.game));
    }
    let mut params: HeaderParams =
        serde_json::from_value(h.params.clone()).map_err(|e| format!("header params: {e}"))?;
    if h.seats.len() != 2 || params.seats.len() != 2 {
        return Err(format!("expected 2 seats, found {}", h.seats.len()));
    }
    let mut transports = ["builtin"; 2];
    for (t, info) in transports.iter_mut().zip(&mut params.seats) {
        *t = match info.transport.as_str() {
            "builtin" => "builtin",
            "stdio" => "stdio",
            "tcp" => "tcp",
            "human" => "human",
            other => return Err(format!("unknown seat transport {other:?}")),
        };
        info.peer = None;
    }
    Ok((params, transports))
}

/// Connections to a seat's port closed at once because its queue was full: recorded once per
/// seat and game, at the end, and reported as an `excess_connections` seat error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionsEvent {
    pub event: String,
    pub seat: usize,
    pub excess: u64,
    pub cap: usize,
}

impl ConnectionsEvent {
    /// The event of `excess` connections closed at once (`cap` were waiting).
    pub fn new(seat: usize, excess: u64, cap: usize) -> Self {
        ConnectionsEvent {
            event: "connections".into(),
            seat,
            excess,
            cap,
        }
    }

    /// The seat's error it reports.
    pub fn error(&self) -> SeatError {
        SeatError {
            at: String::new(),
            turn: 0,
            kind: SeatErrorKind::ExcessConnections,
            detail: format!(
                "{} connections to the seat's port closed at once: {} were already waiting (the cap)",
                self.excess, self.cap
            ),
        }
    }
}

/// The report of a finished (or abandoned) game, without the seats' errors, exits and stderr
/// (the seat layer adds those).
pub fn report(
    session: &Session,
    seed: u64,
    specs: &[String; 2],
    transports: [&str; 2],
) -> MatchReport {
    let end = session.game().end().copied().unwrap_or(End {
        winner: None,
        reason: EndReason::DoubleForfeit,
        scores: None,
    });
    let seats = specs.iter().map(|s| (s.clone(), Vec::new())).collect();
    let rules = &session.rules().name;
    let mut report = MatchReport::new("geister", rules, seed, &outcome_of(&end), seats);
    report.everyone_lost = end.reason == EndReason::DoubleForfeit;
    let extra = &mut report.extra;
    extra.insert("end".into(), json!(end.reason.report_name()));
    extra.insert("reason".into(), json!(end.reason.as_str()));
    extra.insert("plies".into(), json!(session.game().ply()));
    if let Some(s) = end.scores {
        extra.insert("end_scores".into(), json!(s));
    }
    for (sr, t) in report.seats.iter_mut().zip(transports) {
        sr.extra.insert("transport".into(), json!(t));
    }
    report
}

pub use crate::session::SETUP;

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
                // The seat was assigned when its client connected, `t` ms into the game.
                exchange(seat, SETUP, "connect", Reply, Some(""), Some(t * 1000))
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

/// An older replay as a current one for the referee to re-run (its seat record, which the
/// re-run plays again): a `/1` replay's events imply it ([`upgrade_v1`]); a `/2` replay has one
/// (its re-run dates each seat's assignment at its connection instead of once both had come).
pub fn upgrade(old: &ParsedReplay) -> Result<ParsedReplay, String> {
    match old.header.format.as_str() {
        FORMAT_V1 => upgrade_v1(old),
        FORMAT_V2 => {
            let mut new = old.clone();
            new.header.format = FORMAT.into();
            Ok(new)
        }
        found => Err(format!(
            "format {found:?} is neither {FORMAT_V1:?} nor {FORMAT_V2:?}"
        )),
    }
}

/// A `kakehiki-geister/1` replay as the current replay its events imply (the seat record in
/// place of its events), for the referee to re-run.
pub fn upgrade_v1(old: &ParsedReplay) -> Result<ParsedReplay, String> {
    if old.header.format != FORMAT_V1 {
        let found = &old.header.format;
        return Err(format!("format {found:?} is not {FORMAT_V1:?}"));
    }
    let params: HeaderParams = serde_json::from_value(old.header.params.clone())
        .map_err(|e| format!("header params: {e}"))?;
    let tcp: Vec<bool> = params.seats.iter().map(|s| s.transport == "tcp").collect();
    let events = v1_seat_record(&old.events, &tcp)?;
    let mut header = old.header.clone();
    header.format = FORMAT.into();
    header.params = serde_json::to_value(params).unwrap_or_default();
    let events = events.into_iter().enumerate().map(|(i, v)| (i + 2, v));
    Ok(ParsedReplay {
        header,
        events: events.collect(),
    })
}
