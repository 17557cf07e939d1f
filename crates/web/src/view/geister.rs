//! Geister: the 6×6 board after every ply, in seat 0's frame (seat 0's home rows at the bottom).

use kakehiki_geister::engine::START;
use kakehiki_geister::Event;
use serde::Serialize;
use serde_json::{json, Value};

use super::{panel, shape, Built, Panel, Steps, ViewError};

const OFF: u8 = 255;

/// Where the ghosts are: square in seat 0's frame (`y * 6 + x`), or [`OFF`].
struct Board {
    pos: [[u8; 8]; 2],
    red: [[bool; 8]; 2],
    /// Whether the replay has told each ghost's colour (its seat's placement, or its capture
    /// or escape).
    known: [[bool; 8]; 2],
    placed: [bool; 2],
    /// Ghosts lost per seat: (label index, how).
    off: [Vec<(usize, &'static str)>; 2],
}

fn global(seat: usize, own: u8) -> u8 {
    if seat == 0 {
        own
    } else {
        35 - own
    }
}

/// A square as drawn, in the protocol's own coordinates of seat 0's frame (the board is drawn
/// in it): `(x,y)`, x the column from the left, y the row from the top (seat 1's side), both
/// 0 to 5, as seat 0's board string names it.
fn square_name(global: u8) -> String {
    format!("({},{})", global % 6, global / 6)
}

/// A direction of a seat's own frame (`N`: towards the opponent) as drawn on the board: seat 1
/// sits at the top, so its north is the board's down.
fn board_direction(seat: usize, d: &str) -> &'static str {
    match (seat == 0, d) {
        (true, "N") | (false, "S") => "up",
        (true, "S") | (false, "N") => "down",
        (true, "E") | (false, "W") => "right",
        _ => "left",
    }
}

fn label_index(c: char) -> Option<usize> {
    let i = (c.to_ascii_uppercase() as u32).checked_sub('A' as u32)? as usize;
    (i < 8).then_some(i)
}

impl Board {
    fn new() -> Self {
        let mut pos = [[0u8; 8]; 2];
        for (seat, p) in pos.iter_mut().enumerate() {
            for (g, s) in p.iter_mut().enumerate() {
                *s = global(seat, START[g]);
            }
        }
        Board {
            pos,
            red: [[false; 8]; 2],
            known: [[false; 8]; 2],
            placed: [false; 2],
            off: [Vec::new(), Vec::new()],
        }
    }

    /// The board after a step. Its ghosts are one string (a step's board is drawn from it, and a
    /// match has hundreds of steps: a JSON object per ghost made the model four times larger and
    /// slower): a token per ghost on the board, separated by spaces, each `SLCXY` with `S` the
    /// seat (`0`, `1`), `L` the label (`A`–`H`), `C` its colour (`r` red, `b` blue) and `X`, `Y`
    /// its square (`0`–`5`, seat 0's frame); `C` is `u` for a ghost whose colour the replay has
    /// not told yet (a live match's public replay holds no placement: a ghost's colour is
    /// known once it is captured or escapes).
    fn picture(&self) -> Picture {
        let mut pieces = String::with_capacity(16 * 6);
        for seat in 0..2 {
            for g in 0..8 {
                let s = self.pos[seat][g];
                if s != OFF {
                    if !pieces.is_empty() {
                        pieces.push(' ');
                    }
                    pieces.push((b'0' + seat as u8) as char);
                    pieces.push((b'A' + g as u8) as char);
                    pieces.push(match (self.known[seat][g], self.red[seat][g]) {
                        (false, _) => 'u',
                        (true, true) => 'r',
                        (true, false) => 'b',
                    });
                    pieces.push((b'0' + s % 6) as char);
                    pieces.push((b'0' + s / 6) as char);
                }
            }
        }
        let off = |seat: usize| {
            self.off[seat]
                .iter()
                .map(|&(g, how)| Off {
                    how,
                    label: (b'A' + g as u8) as char,
                    red: self.red[seat][g],
                })
                .collect()
        };
        Picture {
            off: [off(0), off(1)],
            pieces,
            placed: self.placed,
        }
    }
}

/// One step of the viewer: the board after it and what happened (its fields as the viewer
/// reads them; written straight to the page, not through a JSON value).
#[derive(Serialize)]
pub(crate) struct Step {
    board: Picture,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    end: bool,
    notes: Vec<String>,
    pub(crate) title: String,
    #[serde(flatten)]
    ply: Option<Ply>,
}

/// A ply's step: the move as sent and as applied.
#[derive(Serialize)]
struct Ply {
    board_move: Option<String>,
    captured: Option<Taken>,
    elapsed_ms: u64,
    escaped: bool,
    from: Option<[u8; 2]>,
    #[serde(rename = "move")]
    mv: Option<String>,
    outcome: Value,
    ply: u32,
    raw: Option<String>,
    reason: Option<String>,
    seat: usize,
    to: Option<[u8; 2]>,
}

/// The ghost a ply captured.
#[derive(Serialize)]
struct Taken {
    label: char,
    red: bool,
}

/// The board: the ghosts on it ([`Board::picture`]) and those off it, per seat.
#[derive(Serialize)]
struct Picture {
    off: [Vec<Off>; 2],
    pieces: String,
    placed: [bool; 2],
}

/// A ghost off the board: `captured` or `escaped`.
#[derive(Serialize)]
struct Off {
    how: &'static str,
    label: char,
    red: bool,
}

impl Step {
    fn new(title: impl Into<String>, board: &Board, notes: &mut Vec<String>) -> Step {
        Step {
            board: board.picture(),
            end: false,
            notes: std::mem::take(notes),
            title: title.into(),
            ply: None,
        }
    }
}

pub(super) fn build(p: &super::Replay, panels: &mut [Panel]) -> Result<Built, ViewError> {
    let mut b = Board::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut result = json!(null);
    let mut pending_notes: Vec<String> = Vec::new();
    // Plies played (the last moved one's number): a fault is at the next, as the referee says.
    let mut played = 0u32;
    for l in &p.events {
        let (line, kind) = (l.line, l.kind.as_ref());
        if !matches!(kind, "assign" | "set" | "turn" | "line" | "fault" | "end") {
            continue;
        }
        // Read straight from the line's text: a match has hundreds of plies.
        let e: Event = l
            .decode()
            .map_err(|e| shape(line, format!("bad Geister {kind:?} event: {e}")))?;
        let step = steps.len();
        match e {
            Event::Assign { .. } => {}
            Event::Set {
                seat,
                raw,
                accepted,
                reason,
                red,
                ..
            } => {
                panel(panels, seat, line)?;
                if accepted {
                    let red = red.unwrap_or_default();
                    for c in red.chars() {
                        let g = label_index(c)
                            .ok_or_else(|| shape(line, format!("bad red label {c:?}")))?;
                        b.red[seat][g] = true;
                    }
                    b.known[seat] = [true; 8];
                    b.placed[seat] = true;
                    pending_notes.push(format!("seat {seat} placed its red ghosts on {red}"));
                } else {
                    let detail = format!(
                        "placement {:?} refused: {}",
                        raw.unwrap_or_else(|| "(over 256 bytes)".into()),
                        reason.unwrap_or_default()
                    );
                    panels[seat].error(step, "invalid_placement", &detail);
                    pending_notes.push(format!("seat {seat}: {detail}"));
                }
            }
            Event::Turn {
                ply,
                seat,
                raw,
                outcome,
                mv,
                elapsed_ms,
                captured,
                escaped,
                reason,
                ..
            } => {
                if steps.is_empty() {
                    steps.push(Step::new("placement", &b, &mut pending_notes));
                }
                let step = steps.len();
                let pn = panel(panels, seat, line)?;
                // A replay with a seat record has its reply times from it (the placement's
                // included, in µs); an older one from its plies.
                if pn.exchanges.is_empty() {
                    pn.time(elapsed_ms as f64);
                }
                let outcome_name = serde_json::to_value(outcome).unwrap_or(Value::Null);
                let mut from = None;
                let mut to = None;
                // The move in the board's frame (`G down c6 → c5`), whichever seat made it.
                let mut board_move = String::new();
                if let Some(m) = &mv {
                    let (l, d) = m
                        .split_once(',')
                        .ok_or_else(|| shape(line, format!("bad move {m:?}")))?;
                    let g = l
                        .chars()
                        .next()
                        .and_then(label_index)
                        .ok_or_else(|| shape(line, format!("bad ghost in move {m:?}")))?;
                    let at = b.pos[seat][g];
                    if at == OFF {
                        return Err(shape(
                            line,
                            format!("move {m:?} of a ghost not on the board"),
                        ));
                    }
                    let own = global(seat, at);
                    let (x, y) = ((own % 6) as i32, (own / 6) as i32);
                    let (nx, ny) = match d {
                        "N" => (x, y - 1),
                        "S" => (x, y + 1),
                        "E" => (x + 1, y),
                        "W" => (x - 1, y),
                        _ => return Err(shape(line, format!("bad direction in move {m:?}"))),
                    };
                    from = Some([at % 6, at / 6]);
                    let dir = board_direction(seat, d);
                    board_move = if escaped {
                        format!("{l} {dir} {} → off the board", square_name(at))
                    } else {
                        String::new()
                    };
                    if escaped {
                        b.pos[seat][g] = OFF;
                        // Only a blue ghost escapes.
                        b.known[seat][g] = true;
                        b.off[seat].push((g, "escaped"));
                    } else {
                        if !(0..6).contains(&nx) || !(0..6).contains(&ny) {
                            return Err(shape(line, format!("move {m:?} leaves the board")));
                        }
                        let dest = global(seat, (ny * 6 + nx) as u8);
                        b.pos[seat][g] = dest;
                        to = Some([dest % 6, dest / 6]);
                        board_move =
                            format!("{l} {dir} {} → {}", square_name(at), square_name(dest));
                        let other = 1 - seat;
                        if let Some(c) = captured {
                            let cg = label_index(c.ghost).ok_or_else(|| {
                                shape(line, format!("bad captured ghost {:?}", c.ghost))
                            })?;
                            b.pos[other][cg] = OFF;
                            // A capture tells the captured ghost's colour.
                            b.red[other][cg] = matches!(c.colour, kakehiki_geister::Colour::Red);
                            b.known[other][cg] = true;
                            b.off[other].push((cg, "captured"));
                        }
                    }
                } else {
                    let detail = format!(
                        "{}: {}{}",
                        outcome_name.as_str().unwrap_or(""),
                        raw.as_deref()
                            .map(|r| format!("sent {r:?}"))
                            .unwrap_or_else(|| "no usable line".into()),
                        reason
                            .as_deref()
                            .map(|r| format!(" ({r})"))
                            .unwrap_or_default()
                    );
                    pn.error(step, outcome_name.as_str().unwrap_or("error"), detail);
                }
                if mv.is_some() {
                    played = ply;
                }
                let mut s = Step::new(format!("ply {ply}"), &b, &mut pending_notes);
                s.ply = Some(Ply {
                    board_move: (!board_move.is_empty()).then_some(board_move),
                    captured: captured.map(|c| Taken {
                        label: c.ghost,
                        red: matches!(c.colour, kakehiki_geister::Colour::Red),
                    }),
                    elapsed_ms,
                    escaped,
                    from,
                    mv,
                    outcome: outcome_name,
                    ply,
                    raw,
                    reason,
                    seat,
                    to,
                });
                steps.push(s);
            }
            Event::Line {
                seat,
                raw,
                disposition,
                ..
            } => {
                let d = serde_json::to_value(disposition).unwrap_or(Value::Null);
                panel(panels, seat, line)?.error(
                    step.saturating_sub(1),
                    "unsolicited_output",
                    format!(
                        "{}: {:?}",
                        d.as_str().unwrap_or(""),
                        raw.unwrap_or_else(|| "(over 256 bytes)".into())
                    ),
                );
            }
            Event::Fault {
                seat, kind, detail, ..
            } => {
                // Said as `check` and `play` say it: at the ply the seat was asked for (or the
                // set-up), with the seat record's kind.
                use kakehiki_geister::session::FaultKind;
                let placed = b.placed.get(seat).copied().unwrap_or(false);
                let (at, error_kind) = match kind {
                    FaultKind::SetTimeout | FaultKind::ConnectTimeout => {
                        ("set-up".to_string(), "not_ready")
                    }
                    _ if !placed => ("set-up".to_string(), "crash"),
                    FaultKind::Disconnect => (format!("ply {}", played + 1), "disconnect"),
                    FaultKind::Exit | FaultKind::WriteFailed => {
                        (format!("ply {}", played + 1), "crash")
                    }
                };
                panel(panels, seat, line)?.error_labelled(
                    step.saturating_sub(1),
                    &at,
                    error_kind,
                    &detail,
                );
                // The step says what the panel says: the seat record's kind, not the event's.
                pending_notes.push(format!("seat {seat}: {at}: {error_kind} ({detail})"));
            }
            Event::End {
                winner,
                draw,
                reason,
                plies,
                scores,
                ..
            } => {
                result = json!({
                    "winner": winner, "draw": draw, "reason": reason.as_str(),
                    "plies": plies, "scores": scores,
                });
            }
        }
    }
    // A match being played (no end yet) ends with where it is.
    let title = match (steps.is_empty(), result.is_null()) {
        (true, _) => "placement",
        (false, false) => "end",
        (false, true) => "so far",
    };
    let mut last = Step::new(title, &b, &mut pending_notes);
    last.end = true;
    steps.push(last);
    Ok(("ply", Steps::Geister(steps), result, json!({})))
}
