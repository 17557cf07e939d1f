//! Werewolf, natural-language division: one step per phase (talk, vote, night, result), read from the upstream-format game log
//! the replay's `end` event carries — talk and whispers as said (free text), votes in rounds,
//! the executed, attacked, divined and guarded agents, the roles and the winner. Answers and
//! failed requests (`answer`, `fail`, `gone` events) fill the side panels.

use serde_json::{json, Value};

use super::werewolf::{step_of, LogReader};
use super::{events, get_u64, panel, shape, Built, Panel, ViewError};

pub(super) fn build(
    p: &kakehiki_core::replay::ParsedReplay,
    panels: &mut [Panel],
) -> Result<Built, ViewError> {
    let n = panels.len();
    let mut end: Option<(usize, &Value)> = None;
    // Errors are placed on their day's step once the days are known.
    let mut errors: Vec<(usize, u64, String, String, String)> = Vec::new();
    for (line, kind, v) in events(p) {
        match kind {
            "answer" => {
                let agent = get_u64(v, "agent", line)? as usize;
                panel(panels, agent, line)?.moves += 1;
            }
            "fail" | "gone" => {
                let agent = get_u64(v, "agent", line)? as usize;
                panel(panels, agent, line)?;
                let day = v["day"].as_u64().unwrap_or(0);
                let request = v["request"].as_str().unwrap_or("");
                let (kind, detail) = if kind == "gone" {
                    (
                        "disconnect",
                        format!("day {day}: could not send {request}; no more requests"),
                    )
                } else if v["fatal"] == true {
                    (
                        "error",
                        format!("day {day}: {request} failed; the agent is out (error state)"),
                    )
                } else {
                    (
                        "timeout",
                        format!("day {day}: no answer to {request} in time (it answered the NAME check)"),
                    )
                };
                errors.push((agent, day, request.to_string(), kind.into(), detail));
            }
            "end" => end = Some((line, v)),
            _ => {}
        }
    }
    let Some((end_line, e)) = end else {
        return Err(shape(1, "the replay has no end event"));
    };
    let lines = e["game_log"]
        .as_array()
        .ok_or_else(|| shape(end_line, "expected the game log in \"game_log\""))?;
    let mut log = LogReader::new(n, false);
    for l in lines {
        let text = l
            .as_str()
            .ok_or_else(|| shape(end_line, "a game-log line is not a string"))?;
        log.read(text, end_line)?;
    }
    let roles = log.roles.clone();
    let steps = log.steps();
    if steps.is_empty() {
        return Err(shape(end_line, "the replay holds no game log"));
    }
    for (agent, day, request, kind, detail) in errors {
        panels[agent].error(step_of(&steps, day, &request), kind, detail);
    }
    let names: Vec<Value> = e["names"].as_array().cloned().unwrap_or_default();
    if names.len() != n {
        return Err(shape(
            end_line,
            format!("{} names for {n} seats", names.len()),
        ));
    }
    let winner = match e["winner"].as_str() {
        Some(w) => json!(w),
        None => Value::Null,
    };
    let result = json!({
        "winner": winner,
        "aborted": e["aborted"],
        "day": e["last_day"],
        "roles": roles,
    });
    Ok((
        "phase",
        steps,
        result,
        json!({"roles": roles, "names": names}),
    ))
}
