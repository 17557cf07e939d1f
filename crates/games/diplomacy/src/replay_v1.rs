//! The `@1` replay format, where each request and its reply sat inside the game's events
//! (`exchanges` of `start`, `press` and `phase`), read as the seat record of the current format
//! so that an old replay can be re-run and converted. Pure: no processes, clocks or I/O.

use kakehiki_core::exchange::{ExchangeOutcome, SeatExchange};
use kakehiki_core::replay::ParsedReplay;
use serde_json::Value;

use crate::wire::Params;
use crate::{PhaseKind, Power};

/// The label of the start handshake's requests.
pub const START: &str = "start";

/// The public results of a replay of either format: each phase event's adjudications, and the
/// end's reason and centres. An upgrade must reproduce them.
pub fn results(replay: &ParsedReplay) -> (Vec<Value>, Option<(Value, Value)>) {
    let of = |kind: &'static str| {
        replay
            .events
            .iter()
            .filter(move |(_, v)| v["event"] == kind)
            .map(|(_, v)| v)
    };
    let phases = of("phase").map(|v| v["adjudicated"].clone()).collect();
    let end = of("end")
        .map(|v| (v["reason"].clone(), v["centers"].clone()))
        .next();
    (phases, end)
}

/// The seat record of a `@1` replay, in its order, as replay lines: the connections its report
/// counts as closed at once on a seat's port (`excess_connections` lines), every recorded
/// exchange as the seat line the current referee writes (label `start` or the phase name, kind
/// `start`, `press` or `orders`), and for a seat with none (it never started) a start request
/// that found it not running, with the reason its report gave.
pub fn seat_record(old: &ParsedReplay, params: &Params) -> Result<Vec<Value>, String> {
    let mut lines = excess(old);
    let exchanges = exchanges(old, params)?;
    lines.extend(
        exchanges
            .iter()
            .filter_map(|e| serde_json::to_value(e).ok()),
    );
    Ok(lines)
}

/// The `excess_connections` errors of a `@1` report (`N connections to the seat's port closed
/// at once: CAP were already waiting (the cap)`) as the current format's lines.
fn excess(old: &ParsedReplay) -> Vec<Value> {
    let mut out = Vec::new();
    for (_, v) in old.events.iter().filter(|(_, v)| v["event"] == "report") {
        for (seat, s) in v["report"]["seats"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            for e in s["errors"].as_array().into_iter().flatten() {
                let detail = e["detail"].as_str().unwrap_or("");
                let mut numbers = detail
                    .split(|c: char| !c.is_ascii_digit())
                    .filter_map(|w| w.parse::<u64>().ok());
                if e["kind"] == "excess_connections" {
                    if let (Some(count), Some(cap)) = (numbers.next(), numbers.next()) {
                        out.push(serde_json::json!({"event": "excess_connections",
                            "seat": seat, "count": count, "cap": cap}));
                    }
                }
            }
        }
    }
    out
}

fn exchanges(old: &ParsedReplay, params: &Params) -> Result<Vec<SeatExchange>, String> {
    let mut out = Vec::new();
    let mut seen = [false; 7];
    for (line, v) in &old.events {
        let event = v["event"].as_str().unwrap_or("");
        let phase = v["phase"].as_str().unwrap_or(START);
        for x in v["exchanges"].as_array().into_iter().flatten() {
            let p = x["power"]
                .as_str()
                .and_then(Power::from_name)
                .ok_or_else(|| format!("line {line}: exchange of unknown power {}", x["power"]))?;
            seen[p.index()] = true;
            let (at, kind, limit) = match event {
                "start" => (START, START, params.limits.start_ms),
                "press" => (phase, "press", params.limits.press_ms),
                _ => (phase, "orders", params.orders_ms(phase_kind(phase))),
            };
            let outcome = match x["status"].as_str().unwrap_or("") {
                "ok" => ExchangeOutcome::Reply,
                "timeout" => ExchangeOutcome::Timeout,
                "crash" => ExchangeOutcome::Crash,
                "output_limit" => ExchangeOutcome::ResourceLimit,
                s => return Err(format!("line {line}: exchange status {s:?}")),
            };
            let mut ex = SeatExchange::new(p.index(), at, kind, outcome);
            ex.limit_ms = Some(limit);
            ex.time_us = match outcome {
                ExchangeOutcome::Timeout => Some(limit * 1000),
                _ => x["time_us"].as_u64(),
            };
            ex.detail = x["detail"].as_str().map(str::to_string);
            if let Some(raw) = x["raw"].as_str() {
                ex.set_raw(raw.as_bytes());
            }
            // A reply with a detail was a line cut at the length cap.
            ex.truncated = outcome == ExchangeOutcome::Reply && ex.detail.is_some();
            ex.discarded = serde_json::from_value(x["discarded"].clone()).unwrap_or_default();
            out.push(ex);
        }
    }
    for p in Power::ALL.into_iter().filter(|p| !seen[p.index()]) {
        let mut ex = SeatExchange::new(p.index(), START, START, ExchangeOutcome::NotRunning);
        ex.limit_ms = Some(params.limits.start_ms);
        ex.time_us = Some(0);
        ex.detail = Some(not_started(old, p.index()));
        out.push(ex);
    }
    Ok(out)
}

/// The kind of a phase from its name (`S1901M`, `F1901R`, `W1901A`).
fn phase_kind(name: &str) -> PhaseKind {
    match name.chars().last() {
        Some('R') => PhaseKind::Retreat,
        Some('A') => PhaseKind::Adjustment,
        _ => PhaseKind::Movement,
    }
}

/// Why seat `i` of a `@1` replay never started, from its report.
fn not_started(old: &ParsedReplay, i: usize) -> String {
    old.events
        .iter()
        .filter(|(_, v)| v["event"] == "report")
        .filter_map(|(_, v)| v["report"]["seats"][i]["errors"].as_array())
        .flatten()
        .filter_map(|e| e["detail"].as_str())
        .find(|d| d.starts_with("cannot start the bot"))
        .unwrap_or("cannot start the bot")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excess_connections_of_a_v1_report_become_lines() {
        let text = r#"{"event":"header","format":"kakehiki/diplomacy-replay@1","engine":"0","game":"diplomacy","rules":"standard","seed":1,"seats":["tcp"],"params":null}
{"event":"report","report":{"seats":[{"errors":[{"turn":0,"kind":"excess_connections","detail":"184 connections to the seat's port closed at once: 16 were already waiting (the cap)"}]}]}}
"#;
        let old = kakehiki_core::replay::ReplayLog::parse(text).unwrap();
        assert_eq!(
            excess(&old),
            vec![serde_json::json!({"event":"excess_connections","seat":0,"count":184,"cap":16})]
        );
    }
}
