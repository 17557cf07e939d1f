//! Werewolf, natural-language division: one step per phase (talk, vote, night, result), read from the upstream-format game log
//! the replay's `end` event carries — talk and whispers as said (free text), votes in rounds,
//! the executed, attacked, divined and guarded agents, the roles and the winner. The seat record
//! (`seat` lines: answers and failed requests) fills the side panels.

use serde_json::{json, Value};

use super::werewolf::{step_of, LogReader};
use super::{events, get_u64, panel, shape, Built, Panel, ViewError};

pub(super) fn build(p: &super::Replay, panels: &mut [Panel]) -> Result<Built, ViewError> {
    let n = panels.len();
    let mut end: Option<(usize, &Value)> = None;
    // Errors are placed on their day's step once the days are known.
    let mut errors: Vec<(usize, u64, String, String, String)> = Vec::new();
    for (line, kind, v) in events(p) {
        match kind {
            // The seat record: one line per request (`at` = `day N ...` or `connect`).
            "seat" => {
                let agent = get_u64(v, "seat", line)? as usize;
                let panel = panel(panels, agent, line)?;
                let request = v["kind"].as_str().unwrap_or("");
                let outcome = v["outcome"].as_str().unwrap_or("");
                if outcome == "reply" {
                    if request != "NAME" {
                        panel.moves += 1;
                    }
                    continue;
                }
                let at = v["at"].as_str().unwrap_or("");
                let day = at
                    .strip_prefix("day ")
                    .and_then(|d| d.split(' ').next())
                    .and_then(|d| d.parse::<u64>().ok())
                    .unwrap_or(0);
                let why = v["detail"].as_str().unwrap_or(outcome);
                let (kind, detail) = match outcome {
                    "timeout" => ("timeout", format!("{at}: no answer to {request} in time")),
                    "malformed" => ("error", format!("{at}: {request}: {why}")),
                    _ => (
                        "disconnect",
                        format!("{at}: {request}: {why}; no more requests"),
                    ),
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
        steps.into(),
        result,
        json!({"roles": roles, "names": names}),
    ))
}
