//! Negotiate and Conquer / Religion War: lords (languages) with their strength, each seat's
//! revealed (public) and real affection after every turn, the turn's picks, and the running
//! scores, replayed with the game's own engine (scores exact, not ×24).

use kakehiki_core::score::format_score;
use kakehiki_core::Score;
use kakehiki_nac::{Params, State, NUM_SEATS};
use serde_json::{json, Value};

use super::{events, get_u64, panel, shape, Built, Panel, ViewError};

fn exact(x24: i64) -> String {
    format_score(&Score::new(x24, 24))
}

fn tables(state: &State, targets: usize) -> (Vec<Vec<u16>>, Vec<Vec<u16>>) {
    let real = (0..targets)
        .map(|i| (0..NUM_SEATS).map(|s| state.real(i, s)).collect())
        .collect();
    let public = (0..targets)
        .map(|i| (0..NUM_SEATS).map(|s| state.public(i, s)).collect())
        .collect();
    (real, public)
}

pub(super) fn build(p: &super::Replay, panels: &mut [Panel]) -> Result<Built, ViewError> {
    let params: Params = serde_json::from_value(p.header.params["variant"].clone())
        .map_err(|e| shape(1, format!("header params.variant is not a rule set: {e}")))?;
    let mt_seed = p.header.params["mt_seed"]
        .as_u64()
        .and_then(|s| u32::try_from(s).ok())
        .ok_or_else(|| shape(1, "header params.mt_seed is not a 32-bit seed"))?;
    if panels.len() != NUM_SEATS {
        return Err(shape(
            1,
            format!("expected {NUM_SEATS} seats, found {}", panels.len()),
        ));
    }
    let mut state = State::new(params, mt_seed);
    let targets = params.targets;
    let weights = state.weights().to_vec();
    let (real, public) = tables(&state, targets);
    let mut steps = vec![json!({
        "title": "start", "turn": 0, "real": real, "public": public,
        "totals": vec!["0"; NUM_SEATS], "moves": [], "deaths": [],
    })];
    let mut result = Value::Null;
    // The seat record's latest exchange of each seat (its reply, time and detail), joined to
    // the seat's move when the turn's event comes.
    let mut exchanges: [Option<Value>; NUM_SEATS] = Default::default();
    for (line, kind, v) in events(p) {
        match kind {
            "seat" => {
                let seat = get_u64(v, "seat", line)? as usize;
                let pn = panel(panels, seat, line)?;
                if v["at"] == "ready" {
                    let detail = v["detail"].as_str().unwrap_or("");
                    if v["outcome"] != "reply" {
                        pn.error(
                            0,
                            "not_ready",
                            format!("{}: {detail}", v["outcome"].as_str().unwrap_or("")),
                        );
                    } else if detail.starts_with("no line terminator") {
                        pn.error(0, "no_newline", detail);
                    }
                } else if let Some(slot) = exchanges.get_mut(seat) {
                    *slot = Some(v.clone());
                }
            }
            "weights" => {
                let w: Vec<u8> = serde_json::from_value(v["weights"].clone())
                    .map_err(|e| shape(line, format!("bad weights: {e}")))?;
                if w != weights {
                    return Err(shape(
                        line,
                        format!("recorded weights {w:?} differ from the seed's {weights:?}"),
                    ));
                }
            }
            "ready" => {
                let seat = get_u64(v, "seat", line)? as usize;
                let pn = panel(panels, seat, line)?;
                for e in v["errors"].as_array().into_iter().flatten() {
                    pn.error(
                        0,
                        e["code"].as_str().unwrap_or("not_ready"),
                        e["detail"].as_str().unwrap_or(""),
                    );
                }
            }
            "turn" => {
                let t = get_u64(v, "turn", line)? as u32;
                if t != state.turn() {
                    return Err(shape(
                        line,
                        format!("turn {t} where turn {} was due", state.turn()),
                    ));
                }
                let step = steps.len();
                let mut moves = v["moves"]
                    .as_array()
                    .ok_or_else(|| shape(line, "turn without moves"))?
                    .clone();
                let at = format!("turn {t}");
                for m in moves.iter_mut() {
                    let seat = m["seat"].as_u64().unwrap_or(u64::MAX) as usize;
                    let Some(ex) = exchanges.get_mut(seat).and_then(Option::take) else {
                        continue;
                    };
                    if ex["at"] == at.as_str() {
                        for key in ["raw", "raw_b64", "time_us", "detail"] {
                            if !ex[key].is_null() {
                                m[key] = ex[key].clone();
                            }
                        }
                    }
                }
                let moves = &moves;
                let mut picks: [Vec<u8>; NUM_SEATS] = Default::default();
                for m in moves {
                    let seat = get_u64(m, "seat", line)? as usize;
                    if seat >= NUM_SEATS {
                        return Err(shape(line, format!("move of seat {seat}")));
                    }
                    picks[seat] = serde_json::from_value(m["picks"].clone())
                        .map_err(|e| shape(line, format!("bad picks: {e}")))?;
                    let pn = &mut panels[seat];
                    if let Some(us) = m["time_us"].as_u64() {
                        pn.time(us as f64 / 1000.0);
                    }
                    let status = m["status"].as_str().unwrap_or("");
                    if status != "ok" && status != "dead" {
                        pn.error(
                            step,
                            status,
                            m["detail"].as_str().unwrap_or("no reply in time"),
                        );
                    }
                    for e in m["errors"].as_array().into_iter().flatten() {
                        let code = e["code"].as_str().unwrap_or("invalid_reply");
                        let mut detail = format!("reply {:?}", m["raw"].as_str().unwrap_or(""));
                        if let Some(f) = e["field"].as_u64() {
                            detail.push_str(&format!(", field {f}"));
                        }
                        if let Some(x) = e["text"].as_str() {
                            detail.push_str(&format!(": {x:?}"));
                        }
                        if let Some(x) = e["value"].as_i64() {
                            detail.push_str(&format!(": {x}"));
                        }
                        pn.error(step, code, detail);
                    }
                }
                state.apply([&picks[0], &picks[1], &picks[2], &picks[3]]);
                let (real, public) = tables(&state, targets);
                let scoring = state
                    .scorings()
                    .last()
                    .filter(|(a, _)| *a == t)
                    .map(|(_, s)| s.iter().map(|&x| exact(x)).collect::<Vec<_>>());
                let totals: Vec<String> = state.total24().iter().map(|&x| exact(x)).collect();
                steps.push(json!({
                    "title": format!("turn {t} ({})", v["label"].as_str().unwrap_or("")),
                    "turn": t, "label": v["label"], "day": params.is_day(t),
                    "moves": moves, "real": real, "public": public,
                    "revealed": params.reveal_after.is_some_and(|r| t >= r),
                    "scoring": scoring, "totals": totals, "deaths": [],
                }));
            }
            "death" => {
                let seat = get_u64(v, "seat", line)? as usize;
                let turn = get_u64(v, "turn", line)? as usize;
                let reason = v["reason"].as_str().unwrap_or("");
                let detail = v["detail"].as_str().unwrap_or("");
                let step = turn.min(steps.len().saturating_sub(1));
                if let Some(s) = steps.get_mut(step) {
                    if let Some(d) = s["deaths"].as_array_mut() {
                        d.push(json!({"seat": seat, "reason": reason, "detail": detail}));
                    }
                }
                let pn = panel(panels, seat, line)?;
                // The move's own error already told it (`crash (output closed …)` says the
                // move's `output closed …` again).
                if !pn
                    .errors
                    .iter()
                    .any(|e| e.step == step && (e.detail == detail || detail.contains(&e.detail)))
                {
                    pn.error(step, format!("died: {reason}"), detail);
                }
            }
            "result" => {
                let mine: Vec<String> = state.total24().iter().map(|&x| exact(x)).collect();
                let recorded: Vec<String> = serde_json::from_value(v["scores"].clone())
                    .map_err(|e| shape(line, format!("bad result scores: {e}")))?;
                if recorded != mine {
                    return Err(shape(
                        line,
                        format!("recorded scores {recorded:?} differ from the replayed {mine:?}"),
                    ));
                }
                result = json!({"scores": recorded, "winner": v["winner"], "tied": v["tied"]});
            }
            _ => {}
        }
    }
    let extra = json!({
        "weights": weights, "targets": targets,
        "noun": if p.header.game == "religion-war" { "language" } else { "lord" },
        "day_label": params.day_label.to_string(), "night_label": params.night_label.to_string(),
        "reveal_after": params.reveal_after,
    });
    Ok(("turn", steps.into(), result, extra))
}
