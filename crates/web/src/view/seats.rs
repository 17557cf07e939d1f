//! The per-seat panels of every game, from the one seat record every replay shares (`seat` and
//! `seat_end` lines, `kakehiki_core::exchange`): each request with the game's label, its kind,
//! limit, reply time, outcome, raw reply and, in a private view, the stderr its bot wrote from it
//! until its next request; each program's exit and stderr. No game-specific
//! code: a game's board viewer (if it has one) draws the steps, this fills the panels. A game
//! without a board viewer gets [`generic_steps`]: one step per label of its seat record.

use kakehiki_core::exchange::{SeatExchange, SeatRecord, SEAT_END_EVENT, SEAT_EVENT};
use serde::Serialize;
use serde_json::{json, Value};

use super::{shape, Built, Panel, ViewError};

/// One request to a seat as its panel lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PanelExchange {
    /// The game's label for the moment (`round 3`, `ply 15`, `S1901M`).
    pub at: String,
    pub kind: String,
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<f64>,
    /// The reply as received (text; `raw_b64` replies shown as `base64:…`), cut to 500
    /// characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What the bot wrote on stderr from this request until its next one (only in a private
    /// view: the seat's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// Bytes of that stderr the match's cap dropped (only in a private view).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_dropped: Option<u64>,
}

/// Characters of a reply kept in the view model.
const RAW_KEPT: usize = 500;

/// One request as the panels list it; its stderr only when `private`.
fn panel_exchange(e: &SeatExchange, private: bool) -> PanelExchange {
    let raw = match (&e.raw, &e.raw_b64) {
        (Some(r), _) => Some(r.clone()),
        (None, Some(b)) => Some(format!("base64:{b}")),
        _ => None,
    }
    .map(|r| {
        if r.chars().count() > RAW_KEPT {
            r.chars().take(RAW_KEPT).collect::<String>() + "…"
        } else {
            r
        }
    });
    PanelExchange {
        at: e.at.clone(),
        kind: e.kind.clone(),
        outcome: e.outcome.as_str().to_string(),
        limit_ms: e.limit_ms,
        time_ms: e.time_us.map(|us| us as f64 / 1000.0),
        raw,
        detail: e.detail.clone(),
        stderr: e.stderr.clone().filter(|_| private),
        stderr_dropped: Some(e.stderr_dropped).filter(|&n| private && n > 0),
    }
}

/// What [`fill`] counts from the seat record besides the requests, exits and stderr.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counts {
    /// Reply times (a reply to a request with a limit, from a live seat).
    pub times: bool,
    /// Transport failures, as errors labelled with the game's own words.
    pub errors: bool,
}

/// Fill the panels from the replay's seat record: every request, exit, stderr when `private`,
/// and what `counts` asks for. Returns whether the replay has a seat record.
///
/// Some games' board viewers still count times or errors from their own events (their
/// builders were ported with their drivers); `counts` is meant to be all on for every game once
/// those builders leave it to this function.
pub(crate) fn fill(
    p: &super::Replay,
    panels: &mut [Panel],
    private: bool,
    counts: Counts,
) -> Result<bool, ViewError> {
    let record = record_of(p)?;
    if record.exchanges.is_empty() && record.ends.is_empty() {
        return Ok(false);
    }
    let n = panels.len();
    let seat_line = |seat: usize| {
        p.events
            .iter()
            .find(|l| {
                matches!(l.kind.as_ref(), SEAT_EVENT | SEAT_END_EVENT)
                    && l.value()["seat"].as_u64() == Some(seat as u64)
            })
            .map_or(1, |l| l.line)
    };
    for e in &record.exchanges {
        let pn = panels.get_mut(e.seat).ok_or_else(|| {
            shape(
                seat_line(e.seat),
                format!("seat {} does not exist ({n} seats)", e.seat),
            )
        })?;
        if e.outcome.is_reply() {
            if let (Some(us), Some(_), true) = (e.time_us, e.limit_ms, counts.times) {
                pn.time(us as f64 / 1000.0);
            }
        } else if counts.errors {
            let what = match e.outcome.as_str() {
                "timeout" => format!(
                    "no reply to {} within {} ms",
                    e.kind,
                    e.limit_ms.unwrap_or(0)
                ),
                other => format!(
                    "{} ({})",
                    other.replace('_', " "),
                    e.detail.as_deref().unwrap_or("no detail")
                ),
            };
            pn.error_at(&e.at, e.outcome.as_str(), what);
        }
        pn.exchanges.push(panel_exchange(e, private));
    }
    for end in &record.ends {
        let pn = panels.get_mut(end.seat).ok_or_else(|| {
            shape(
                seat_line(end.seat),
                format!("seat {} does not exist ({n} seats)", end.seat),
            )
        })?;
        pn.exit = Some(end.exit.clone());
        // The seat record is the one source of a seat's stderr: it replaces anything a game's
        // builder put there.
        if private {
            pn.stderr = Some(end.stderr.clone());
        }
    }
    Ok(true)
}

/// The seat record of a replay. Replays written before it (werewolf-nlp `@1`) have events of
/// their own named `seat`, without an `outcome`: those are not seat-record lines.
fn record_of(p: &super::Replay) -> Result<SeatRecord, ViewError> {
    let mut record = SeatRecord::default();
    for l in &p.events {
        let bad = |e: serde_json::Error| shape(l.line, format!("bad seat-record line: {e}"));
        match l.kind.as_ref() {
            // A request with its outcome (read straight from the line's text).
            SEAT_EVENT => match l.decode() {
                Ok(e) => record.exchanges.push(e),
                Err(_) if l.value().get("outcome").is_none() => {}
                Err(e) => return Err(bad(e)),
            },
            SEAT_END_EVENT => record.ends.push(l.decode().map_err(bad)?),
            _ => {}
        }
    }
    Ok(record)
}

/// The steps of a game without a board viewer: one per label of its seat record, in order,
/// each with its requests (their stderr only when `private`) and the game's own events that
/// follow them; the last `result` (or `end`) event is the result.
pub(crate) fn generic_steps(p: &super::Replay, private: bool) -> Result<Built, ViewError> {
    let mut steps: Vec<Value> =
        vec![json!({"title": "start", "at": "", "exchanges": [], "events": []})];
    let mut result = Value::Null;
    for (line, v) in p.events.iter().map(|l| (&l.line, l.value())) {
        match v["event"].as_str() {
            Some(SEAT_EVENT) if v.get("outcome").is_some() => {
                let e: SeatExchange = serde::Deserialize::deserialize(v)
                    .map_err(|err| shape(*line, format!("bad seat line: {err}")))?;
                let last = steps.last().map(|s| s["at"].as_str() == Some(&e.at));
                if last != Some(true) {
                    steps.push(json!({"title": e.at, "at": e.at, "exchanges": [], "events": []}));
                }
                let mut x = serde_json::to_value(panel_exchange(&e, private)).unwrap_or_default();
                x["seat"] = json!(e.seat);
                push(steps.last_mut(), "exchanges", x);
            }
            Some(SEAT_END_EVENT) => {}
            kind => {
                if matches!(kind, Some("result" | "end")) {
                    result = v.clone();
                }
                push(steps.last_mut(), "events", v.clone());
            }
        }
    }
    Ok(("step", steps.into(), result, json!({"generic": true})))
}

fn push(step: Option<&mut Value>, key: &str, v: Value) {
    if let Some(Value::Array(a)) = step.map(|s| &mut s[key]) {
        a.push(v);
    }
}

/// Whether a step shows the moment `label`: it names it in `at` (a label or a list), or its
/// title is the label, alone or followed by a parenthesis (`turn 3 (day)`).
pub(crate) fn step_has(step: &Value, label: &str) -> bool {
    match &step["at"] {
        Value::String(a) => a == label,
        Value::Array(a) => a.iter().any(|x| x.as_str() == Some(label)),
        _ => title_has(step["title"].as_str().unwrap_or(""), label),
    }
}

/// Whether a step's title is the label, alone or followed by a parenthesis (`turn 3 (day)`).
pub(crate) fn title_has(title: &str, label: &str) -> bool {
    title == label
        || title
            .strip_prefix(label)
            .is_some_and(|rest| rest.starts_with(" ("))
}

/// Point each labelled error at the first step showing its label ([`step_has`]); errors whose
/// label no step has keep their step.
pub(crate) fn link_errors(panels: &mut [Panel], steps: &super::Steps) {
    for pn in panels {
        for e in &mut pn.errors {
            if e.at.is_empty() {
                continue;
            }
            let found = steps.position(&e.at);
            if let Some(i) = found {
                e.step = i;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{view_model, ViewOptions};
    use serde_json::Value;

    /// A replay of a game no viewer knows, with a seat record: a reply, an invalid reply the
    /// game noted in its own event, a crash, and the program's end.
    const TOY: &str = r#"{"event":"header","format":"toy@1","engine":"0","game":"toy","rules":"r","seed":1,"seats":["cmd:bot","builtin:x"],"params":null}
{"event":"seat","seat":0,"at":"move 1","kind":"go","limit_ms":100,"time_us":2500,"outcome":"reply","raw":"a","stderr":"thinking about a\n"}
{"event":"seat","seat":1,"at":"move 1","kind":"go","limit_ms":100,"outcome":"reply","raw":"b"}
{"event":"moved","n":1}
{"event":"seat","seat":0,"at":"move 2","kind":"go","limit_ms":100,"time_us":100000,"outcome":"timeout"}
{"event":"seat","seat":1,"at":"move 2","kind":"go","limit_ms":100,"outcome":"reply","raw":"b"}
{"event":"seat","seat":0,"at":"move 3","kind":"go","limit_ms":100,"time_us":40,"outcome":"crash","detail":"output closed before the reply: exit code 3","stderr":"Traceback: boom\n","stderr_dropped":12}
{"event":"result","winner":1}
{"event":"seat_end","seat":0,"exit":"exit code 3","exit_code":3,"stderr":"Traceback: boom\n"}
"#;

    fn model(private: bool) -> Value {
        view_model(
            TOY,
            &ViewOptions {
                names: None,
                private,
            },
        )
        .unwrap()
    }

    #[test]
    fn a_game_without_a_viewer_gets_the_generic_view_and_seat_panels() {
        let m = model(true);
        assert_eq!(m["unit"], "step");
        let titles: Vec<&str> = m["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["title"].as_str().unwrap())
            .collect();
        assert_eq!(titles, ["start", "move 1", "move 2", "move 3"]);
        assert_eq!(m["steps"][1]["events"][0]["event"], "moved");
        assert_eq!(m["steps"][1]["exchanges"][1]["seat"], 1);
        assert_eq!(m["result"]["winner"], 1);
        let p0 = &m["seats"][0];
        assert_eq!(p0["moves"], 1, "{p0}");
        assert_eq!(p0["max_ms"], 2.5, "{p0}");
        assert_eq!(p0["exit"], "exit code 3");
        assert_eq!(p0["stderr"], "Traceback: boom\n");
        assert_eq!(p0["exchanges"].as_array().unwrap().len(), 3);
        assert_eq!(p0["exchanges"][1]["outcome"], "timeout");
        // Each request with the stderr its bot wrote until the next, in the panel and the step.
        assert_eq!(p0["exchanges"][0]["stderr"], "thinking about a\n");
        assert!(p0["exchanges"][1].get("stderr").is_none(), "{p0}");
        assert_eq!(p0["exchanges"][2]["stderr"], "Traceback: boom\n");
        assert_eq!(p0["exchanges"][2]["stderr_dropped"], 12);
        assert_eq!(m["steps"][3]["exchanges"][0]["stderr"], "Traceback: boom\n");
        let errs = p0["errors"].as_array().unwrap();
        assert_eq!(errs.len(), 2, "{p0}");
        assert_eq!(
            (errs[0]["at"].as_str(), errs[0]["step"].as_u64()),
            (Some("move 2"), Some(2))
        );
        assert_eq!(errs[0]["detail"], "no reply to go within 100 ms");
        assert_eq!(errs[1]["at"], "move 3");
        assert_eq!(errs[1]["step"], 3);
        assert_eq!(errs[1]["kind"], "crash");
        assert!(errs[1]["detail"].as_str().unwrap().contains("exit code 3"));
        // Built-in replies are not timed: no reply count from them.
        assert_eq!(m["seats"][1]["moves"], 0);
        assert!(m["seats"][1]["errors"].as_array().unwrap().is_empty());
    }

    #[test]
    fn stderr_only_in_a_private_view() {
        let m = model(false);
        assert!(m["seats"][0].get("stderr").is_none(), "{}", m["seats"][0]);
        assert_eq!(m["seats"][0]["exit"], "exit code 3");
        let text = m.to_string();
        for hidden in ["thinking about", "Traceback", "stderr_dropped"] {
            assert!(!text.contains(hidden), "{hidden}: {text}");
        }
    }

    #[test]
    fn a_seat_record_naming_a_seat_that_does_not_exist_is_refused() {
        let bad = TOY.replace(r#""seat":1,"at":"move 2""#, r#""seat":5,"at":"move 2""#);
        let e = view_model(&bad, &ViewOptions::default()).unwrap_err();
        assert!(e.to_string().contains("seat 5 does not exist"), "{e}");
        let e = view_model(
            "{\"event\":\"header\",\"format\":\"x@1\",\"engine\":\"0\",\"game\":\"chess\",\"rules\":\"r\",\"seed\":1,\"seats\":[],\"params\":null}\n",
            &ViewOptions::default(),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("no viewer for game \"chess\""),
            "{e}"
        );
    }

    #[test]
    fn errors_link_to_the_step_that_carries_their_label() {
        let mut panels = vec![super::Panel::default()];
        panels[0].error_at("S1901M", "timeout", "x");
        panels[0].error_at("F1901M", "timeout", "y");
        panels[0].error_at("W1901A", "timeout", "z");
        panels[0].error_at("turn 1", "timeout", "t");
        let steps = vec![
            serde_json::json!({"title": "start"}),
            serde_json::json!({"title": "Spring 1901", "at": "S1901M"}),
            serde_json::json!({"title": "Fall 1901", "at": ["F1901M", "F1901R"]}),
            serde_json::json!({"title": "turn 10 (x)"}),
            serde_json::json!({"title": "turn 1 (x)"}),
        ];
        super::link_errors(&mut panels, &steps.into());
        let at: Vec<usize> = panels[0].errors.iter().map(|e| e.step).collect();
        assert_eq!(at, [1, 2, 0, 4]);
    }
}
