//! Diplomacy: one step per phase the powers ordered in: the position before the orders, every
//! order with its result (parsed with the game's own order parser so the viewer can draw it),
//! dislodged units, the press of the phase, and a supply-centre count per power per year.

use kakehiki_diplomacy::{parse_order, standard, Order, ProvinceKind, POWER_NAMES};
use serde_json::{json, Map, Value};

use super::{events, get_str, panel, shape, Built, Panel, ViewError};

fn power_index(name: &str) -> Option<usize> {
    POWER_NAMES.iter().position(|p| *p == name)
}

/// The void orders of a phase record as `(power, order as given, reason)`, from its `errors`
/// (`POWER: order: reason`).
fn void_orders(errors: &[Value]) -> Vec<(String, String, String)> {
    errors
        .iter()
        .filter_map(|e| {
            let (power, rest) = e.as_str()?.split_once(": ")?;
            let (text, reason) = rest.split_once(": ")?;
            Some((power.to_string(), text.to_string(), reason.to_string()))
        })
        .collect()
}

/// One order as the viewer draws it, with its result and, when it did not succeed, why: the
/// record's `failures` for a failed order (bounced, cut, dislodged...), its `errors` for a
/// void one. Marks the void entry it used in `used`.
fn drawn(
    power: &str,
    text: &str,
    results: &Map<String, Value>,
    failures: &Map<String, Value>,
    voids: &[(String, String, String)],
    used: &mut [bool],
) -> Value {
    let map = standard();
    let name = |p| map.prov_name(p).to_string();
    let unit_of = |m: &Map<String, Value>| {
        m.iter()
            .find(|(unit, _)| {
                text.starts_with(unit.as_str()) && text[unit.len()..].starts_with(' ')
            })
            .map(|(_, r)| r.clone())
            .unwrap_or(Value::Null)
    };
    let result = unit_of(results);
    let mut reason = Value::Null;
    if result == "fails" {
        reason = unit_of(failures);
    } else if result == "void" {
        let same = |t: &str| t.trim().eq_ignore_ascii_case(text);
        let unit = text.get(..5).unwrap_or(text);
        let found = voids
            .iter()
            .enumerate()
            .find(|(i, (p, t, _))| !used[*i] && p == power && same(t))
            .or_else(|| {
                voids.iter().enumerate().find(|(i, (p, t, _))| {
                    !used[*i]
                        && p == power
                        && t.trim()
                            .get(..5)
                            .is_some_and(|u| u.eq_ignore_ascii_case(unit))
                })
            });
        if let Some((i, (_, _, r))) = found {
            used[i] = true;
            reason = json!(r);
        }
    }
    let mut o = json!({"power": power, "text": text, "result": result, "reason": reason});
    let Ok(order) = parse_order(map, text) else {
        o["kind"] = json!("unparsed");
        return o;
    };
    if let Some(u) = order.unit() {
        o["unit"] = json!(name(u.prov));
        o["unit_kind"] = json!(u.kind.map(|k| k.letter().to_string()));
    }
    match order {
        Order::Hold(_) => o["kind"] = json!("hold"),
        Order::Move { dest, via, .. } => {
            o["kind"] = json!("move");
            o["dest"] = json!(name(dest.prov));
            o["via"] = json!(via);
        }
        Order::SupportHold { target, .. } => {
            o["kind"] = json!("support_hold");
            o["target"] = json!(name(target.prov));
        }
        Order::SupportMove { target, dest, .. } => {
            o["kind"] = json!("support_move");
            o["target"] = json!(name(target.prov));
            o["dest"] = json!(name(dest.prov));
        }
        Order::Convoy { army, dest, .. } => {
            o["kind"] = json!("convoy");
            o["target"] = json!(name(army.prov));
            o["dest"] = json!(name(dest));
        }
        Order::Retreat { dest, .. } => {
            o["kind"] = json!("retreat");
            o["dest"] = json!(name(dest.prov));
        }
        Order::Disband(_) => o["kind"] = json!("disband"),
        Order::Build(_) => o["kind"] = json!("build"),
        Order::Waive => o["kind"] = json!("waive"),
    }
    o
}

fn centre_counts(state: &Value) -> Vec<usize> {
    POWER_NAMES
        .iter()
        .map(|p| state["centers"][*p].as_array().map_or(0, Vec::len))
        .collect()
}

pub(super) fn build(p: &super::Replay, panels: &mut [Panel]) -> Result<Built, ViewError> {
    let mut steps: Vec<Value> = Vec::new();
    let mut press: Vec<Value> = Vec::new();
    let mut last_state = Value::Null;
    let mut result = Value::Null;
    let mut chart: Vec<Value> = Vec::new();
    let exchange = |panels: &mut [Panel], ex: &Value, step: usize, line: usize| {
        let Some(i) = ex["power"].as_str().and_then(power_index) else {
            return Err(shape(
                line,
                format!("exchange of unknown power {}", ex["power"]),
            ));
        };
        let pn = panel(panels, i, line)?;
        if let Some(us) = ex["time_us"].as_u64() {
            pn.time(us as f64 / 1000.0);
        }
        let status = ex["status"].as_str().unwrap_or("");
        if status != "ok" {
            pn.error(
                step,
                status,
                ex["detail"].as_str().unwrap_or("no answer by the deadline"),
            );
        }
        Ok(())
    };
    for (line, kind, v) in events(p) {
        match kind {
            // The seat record (@2): each request's time, and what went wrong at which step.
            "seat" => {
                let seat = v["seat"].as_u64().unwrap_or(u64::MAX) as usize;
                let pn = panel(panels, seat, line)?;
                if let Some(us) = v["time_us"].as_u64() {
                    pn.time(us as f64 / 1000.0);
                }
                let outcome = v["outcome"].as_str().unwrap_or("");
                if !matches!(outcome, "reply" | "sent") {
                    // As the report words it.
                    let detail = match (outcome, v["detail"].as_str()) {
                        ("timeout", _) => format!(
                            "no reply to {} within {} ms",
                            v["kind"].as_str().unwrap_or("the request"),
                            v["limit_ms"].as_u64().unwrap_or(0)
                        ),
                        (_, d) => d.unwrap_or("no detail").to_string(),
                    };
                    pn.error(steps.len(), outcome, detail);
                }
            }
            "start" => {
                for ex in v["exchanges"].as_array().into_iter().flatten() {
                    exchange(panels, ex, 0, line)?;
                }
            }
            "press" => {
                let step = steps.len();
                for ex in v["exchanges"].as_array().into_iter().flatten() {
                    exchange(panels, ex, step, line)?;
                }
                for m in v["delivered"].as_array().into_iter().flatten() {
                    let mut m = m.clone();
                    m["round"] = v["round"].clone();
                    press.push(m);
                }
                for d in v["dropped"].as_array().into_iter().flatten() {
                    if let Some(i) = d["from"].as_str().and_then(power_index) {
                        panel(panels, i, line)?.error(
                            step,
                            "press_dropped",
                            format!(
                                "message to {} dropped: {}",
                                d["to"].as_str().unwrap_or(""),
                                d["reason"].as_str().unwrap_or("")
                            ),
                        );
                    }
                }
            }
            "phase" => {
                let step = steps.len();
                let phase = get_str(v, "phase", line)?.to_string();
                let exchanges = v["exchanges"].as_array().cloned().unwrap_or_default();
                let mut state = Value::Null;
                for ex in &exchanges {
                    exchange(panels, ex, step, line)?;
                }
                // The state the powers were sent: in each exchange (@1) or the messages (@2).
                let sent = exchanges.iter().map(|ex| &ex["sent"]);
                let sent = sent.chain(v["sent"].as_object().into_iter().flat_map(|m| m.values()));
                for text in sent.filter_map(Value::as_str) {
                    if let Ok(msg) = serde_json::from_str::<Value>(text) {
                        state = msg["state"].clone();
                        break;
                    }
                }
                if state.is_null() {
                    state = last_state.clone();
                }
                let mut records = Vec::new();
                for r in v["adjudicated"].as_array().into_iter().flatten() {
                    let empty = Map::new();
                    let results = r["results"].as_object().unwrap_or(&empty);
                    let failures = r["failures"].as_object().unwrap_or(&empty);
                    let voids = void_orders(r["errors"].as_array().map_or(&[], Vec::as_slice));
                    let mut used = vec![false; voids.len()];
                    let mut orders = Vec::new();
                    for (power, list) in r["orders"].as_object().into_iter().flatten() {
                        for o in list.as_array().into_iter().flatten() {
                            orders.push(drawn(
                                power,
                                o.as_str().unwrap_or(""),
                                results,
                                failures,
                                &voids,
                                &mut used,
                            ));
                        }
                    }
                    // Void orders that took no effect at all (no unit, not parsed, a second
                    // order for one unit): listed with their reason beside the effective ones.
                    let unapplied: Vec<Value> = voids
                        .iter()
                        .zip(&used)
                        .filter(|(_, u)| !**u)
                        .map(|((p, t, why), _)| json!({"power": p, "text": t, "reason": why}))
                        .collect();
                    for e in r["errors"].as_array().into_iter().flatten() {
                        let e = e.as_str().unwrap_or("");
                        let (power, rest) = e.split_once(": ").unwrap_or(("", e));
                        if rest.contains(kakehiki_diplomacy::outcome::UNMATCHED_PREFIX) {
                            continue;
                        }
                        if let Some(i) = power_index(power) {
                            panel(panels, i, line)?.error(step, "illegal_action", rest);
                        }
                    }
                    records.push(
                        json!({"phase": r["phase"], "orders": orders, "unapplied": unapplied,
                        "errors": r["errors"], "destroyed": r["destroyed"]}),
                    );
                }
                if phase.starts_with('S') && phase.ends_with('M') && !state.is_null() {
                    chart.push(
                        json!({"label": phase[1..5].to_string(), "counts": centre_counts(&state)}),
                    );
                }
                steps.push(json!({
                    "title": phase, "phase": phase, "state": state, "records": records,
                    "press": std::mem::take(&mut press), "draw_votes": v["draw_votes"],
                }));
                last_state = state;
            }
            "end" => {
                let counts: Vec<u64> = POWER_NAMES
                    .iter()
                    .map(|p| v["centers"][*p].as_u64().unwrap_or(0))
                    .collect();
                result = json!({"reason": v["reason"], "winner": v["winner"], "centers": counts});
                chart.push(json!({"label": "end", "counts": counts}));
                steps.push(json!({
                    "title": "end", "phase": "end", "state": v.get("state").cloned().unwrap_or(Value::Null),
                    "records": [], "press": std::mem::take(&mut press), "end": true,
                }));
            }
            _ => {}
        }
    }
    if steps.is_empty() {
        return Err(shape(1, "the replay holds no phase"));
    }
    let map = standard();
    let provinces: Vec<Value> = map
        .provinces
        .iter()
        .map(|p| {
            json!({"abbr": p.abbr, "name": p.name, "sc": p.supply_center,
                "kind": match p.kind { ProvinceKind::Sea => "sea", ProvinceKind::Coast => "coast", ProvinceKind::Land => "land" },
                "home": p.home_of.map(|h| h.name())})
        })
        .collect();
    Ok((
        "phase",
        steps.into(),
        result,
        json!({"powers": POWER_NAMES, "provinces": provinces, "chart": chart}),
    ))
}
