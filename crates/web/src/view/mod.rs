//! View models: each game's replay turned into the steps its viewer draws.
//!
//! A view model is one JSON object: `game`, `rules`, `seed`, `unit` (what one step is: ply, turn,
//! day, phase), `seats` (per seat: its entrant, its time per move and its errors with their
//! detail, and its stderr only for a private view), `steps` (one picture each) and `result`.
//! The viewers (`assets/*.js`) only draw what the model says; every rule of the game that the
//! picture needs (board positions, affections, scores, votes) is computed here from the replay,
//! with the game's own crate where the rules decide.

use kakehiki_core::replay::ReplayError;
use lines::Replay;
use serde::Serialize;
use serde_json::Value;

mod diplomacy;
mod geister;
mod lines;
mod nac;
mod seats;
mod werewolf;
mod werewolf_nlp;

/// Why a replay cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("{0}")]
    Replay(#[from] ReplayError),
    #[error("replay line {line}: {message}")]
    Shape { line: usize, message: String },
    #[error("no viewer for game {0:?} and no seat record in its replay to show (board viewers: nac, religion-war, geister, werewolf, werewolf-nlp, diplomacy)")]
    UnknownGame(String),
}

pub(crate) fn shape(line: usize, message: impl Into<String>) -> ViewError {
    ViewError::Shape {
        line,
        message: message.into(),
    }
}

/// Who is looking at the replay.
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// Entrant names in seat order; `None`: the replay's seat specs (a local file, the
    /// contestant's own).
    pub names: Option<Vec<String>>,
    /// Include each seat's stderr (only the contestant's own replay file; never a public page).
    pub private: bool,
}

/// One seat error as the side panel lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PanelError {
    /// The step (index into `steps`) it happened in.
    pub step: usize,
    /// The game's own label for the moment (`S1901M`, `ply 15`, `turn 3`), which the viewer
    /// shows as the link to the step; empty where the replay gives none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub at: String,
    pub kind: String,
    pub detail: String,
}

/// A seat's side panel.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Panel {
    pub name: String,
    /// The name as the viewer prints it: the name alone when no other seat has it, else with
    /// its seat number (`builtin:strong (seat 1)`), so that two seats of one bot stay apart.
    pub label: String,
    /// Moves answered and their response times (milliseconds).
    pub moves: u64,
    pub total_ms: f64,
    pub max_ms: f64,
    pub errors: Vec<PanelError>,
    /// Every request to the seat, from the replay's seat record (empty for replays without one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exchanges: Vec<seats::PanelExchange>,
    /// How the seat's program ended (`exit code 1`, `killed by signal 9`), when it ran one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

impl Panel {
    pub(crate) fn time(&mut self, ms: f64) {
        self.moves += 1;
        self.total_ms += ms;
        if ms > self.max_ms {
            self.max_ms = ms;
        }
    }

    pub(crate) fn error(
        &mut self,
        step: usize,
        kind: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.errors.push(PanelError {
            step,
            at: String::new(),
            kind: kind.into(),
            detail: detail.into(),
        });
    }

    /// An error at `step`, shown with the game's label `at` (the label no step has: a crash
    /// before the ply it was asked for).
    pub(crate) fn error_labelled(
        &mut self,
        step: usize,
        at: &str,
        kind: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.errors.push(PanelError {
            step,
            at: at.to_string(),
            kind: kind.into(),
            detail: detail.into(),
        });
    }

    /// An error at the game's label `at`; its step is found once the steps are known.
    pub(crate) fn error_at(
        &mut self,
        at: &str,
        kind: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.errors.push(PanelError {
            step: 0,
            at: at.to_string(),
            kind: kind.into(),
            detail: detail.into(),
        });
    }
}

/// The view model of a replay (JSON lines text).
pub fn view_model(text: &str, opts: &ViewOptions) -> Result<Value, ViewError> {
    let parsed = Replay::parse(text)?;
    let model = build(&parsed, opts)?;
    Ok(serde_json::to_value(model.of(&parsed)).unwrap_or(Value::Null))
}

/// [`view_model`] as JSON text, written straight from the model (a page embeds it: no
/// [`Value`] tree is built on the way).
pub fn view_model_text(text: &str, opts: &ViewOptions) -> Result<String, ViewError> {
    let parsed = Replay::parse(text)?;
    let model = build(&parsed, opts)?;
    Ok(serde_json::to_string(&model.of(&parsed)).unwrap_or_else(|_| "null".into()))
}

/// What [`build`] makes of a replay, besides the header's facts.
struct ModelParts {
    unit: &'static str,
    panels: Vec<Panel>,
    steps: Steps,
    result: Value,
    extra: Value,
}

/// The model as the viewers read it (its fields in the order a JSON object of it always had).
#[derive(Serialize)]
struct Model<'a> {
    extra: &'a Value,
    game: &'a str,
    result: &'a Value,
    rules: &'a str,
    seats: &'a [Panel],
    seed: u64,
    steps: &'a Steps,
    unit: &'static str,
}

impl ModelParts {
    fn of<'a>(&'a self, p: &'a Replay) -> Model<'a> {
        Model {
            extra: &self.extra,
            game: &p.header.game,
            result: &self.result,
            rules: &p.header.rules,
            seats: &self.panels,
            seed: p.header.seed,
            steps: &self.steps,
            unit: self.unit,
        }
    }
}

fn build(parsed: &Replay, opts: &ViewOptions) -> Result<ModelParts, ViewError> {
    let h = &parsed.header;
    let mut panels: Vec<Panel> = (0..h.seats.len())
        .map(|i| Panel {
            name: opts
                .names
                .as_ref()
                .and_then(|n| n.get(i).cloned())
                .unwrap_or_else(|| h.seats[i].clone()),
            ..Panel::default()
        })
        .collect();
    for i in 0..panels.len() {
        let same = panels.iter().filter(|p| p.name == panels[i].name).count();
        panels[i].label = if same > 1 {
            format!("{} (seat {i})", panels[i].name)
        } else {
            panels[i].name.clone()
        };
    }
    if opts.private {
        for l in &parsed.events {
            // A game's own stderr events, or the stderr of the seat record's `seat_end`.
            let key = match l.kind.as_ref() {
                "stderr" => "text",
                "seat_end" => "stderr",
                _ => continue,
            };
            let (line, v) = (&l.line, l.value());
            {
                let seat = v["seat"]
                    .as_u64()
                    .ok_or_else(|| shape(*line, "stderr event without a seat"))?
                    as usize;
                let text = v[key].as_str().unwrap_or("");
                match panels.get_mut(seat) {
                    Some(p) => p.stderr.get_or_insert_with(String::new).push_str(text),
                    None => {
                        return Err(shape(
                            *line,
                            format!("stderr of seat {seat}, which does not exist"),
                        ))
                    }
                }
            }
        }
    }
    let game = h.game.as_str();
    // The per-seat panels of every game come from the one seat record; the board viewers below
    // still count reply times and errors themselves.
    let board = matches!(
        game,
        "nac" | "religion-war" | "geister" | "werewolf" | "werewolf-nlp" | "diplomacy"
    );
    // Geister's reply times come from the seat record (its placement is a reply too).
    let counts = seats::Counts {
        times: !board || game == "geister",
        errors: !board,
    };
    let has_seat_record = seats::fill(parsed, &mut panels, opts.private, counts)?;
    let (unit, steps, result, extra) = match game {
        "nac" | "religion-war" => nac::build(parsed, &mut panels)?,
        "geister" => geister::build(parsed, &mut panels)?,
        "werewolf" => werewolf::build(parsed, &mut panels)?,
        "werewolf-nlp" => werewolf_nlp::build(parsed, &mut panels)?,
        "diplomacy" => diplomacy::build(parsed, &mut panels)?,
        // A game without a board viewer: its seat record, step by step.
        _ if has_seat_record => seats::generic_steps(parsed, opts.private)?,
        other => return Err(ViewError::UnknownGame(other.to_string())),
    };
    seats::link_errors(&mut panels, &steps);
    Ok(ModelParts {
        unit,
        panels,
        steps,
        result,
        extra,
    })
}

/// What a game builder returns: the step unit, the steps, the result and game-wide data.
pub(crate) type Built = (&'static str, Steps, Value, Value);

/// A game's steps: JSON objects, or Geister's own (a match has hundreds of plies, and its
/// page is the ladder's most asked for: they are written straight to text).
pub(crate) enum Steps {
    Values(Vec<Value>),
    Geister(Vec<geister::Step>),
}

impl From<Vec<Value>> for Steps {
    fn from(v: Vec<Value>) -> Self {
        Steps::Values(v)
    }
}

impl Steps {
    /// The first step showing the moment `label` ([`seats::step_has`]).
    pub(crate) fn position(&self, label: &str) -> Option<usize> {
        match self {
            Steps::Values(v) => v.iter().position(|s| seats::step_has(s, label)),
            Steps::Geister(v) => v.iter().position(|s| seats::title_has(&s.title, label)),
        }
    }
}

impl Serialize for Steps {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Steps::Values(v) => v.serialize(s),
            Steps::Geister(v) => v.serialize(s),
        }
    }
}

/// The events of a replay after its header, as `(line, kind, value)`.
pub(crate) fn events<'a>(p: &'a Replay) -> impl Iterator<Item = (usize, &'a str, &'a Value)> {
    p.events
        .iter()
        .map(|l| (l.line, l.kind.as_ref(), l.value()))
}

pub(crate) fn get_u64(v: &Value, key: &str, line: usize) -> Result<u64, ViewError> {
    v.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| shape(line, format!("expected a whole number in {key:?}")))
}

pub(crate) fn get_str<'a>(v: &'a Value, key: &str, line: usize) -> Result<&'a str, ViewError> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| shape(line, format!("expected a string in {key:?}")))
}

pub(crate) fn panel(
    panels: &mut [Panel],
    seat: usize,
    line: usize,
) -> Result<&mut Panel, ViewError> {
    panels
        .get_mut(seat)
        .ok_or_else(|| shape(line, format!("seat {seat} does not exist")))
}
