//! The referee's side of one game as a pure state machine (spec §2.1, §2.2, §3.6, §4).
//!
//! The driver feeds it what happened — a seat assigned, a framed line from a seat, the clock of a
//! `MOV?` started, time passing, a seat's connection failing — each with the time in milliseconds
//! since the game started, and writes the [`Out`] messages it returns, in order, one write each.
//! Everything the game produces (messages, replay events, compatible log lines) is a function of
//! those inputs, so a replay of the inputs reproduces the game byte for byte.

use kakehiki_core::exchange::ExchangeOutcome;
use serde::{Deserialize, Serialize};

use crate::engine::{Colour, EndReason, Geister, Move, PlayRules, TurnFault, LABELS};
use crate::rules::Rules;
use crate::wire::{frame, parse_command, Command, Line, ServerMsg};

/// The label of the moments before the first ply (connection, placement).
pub const SETUP: &str = "set-up";

/// A message to write to one seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Out {
    pub seat: usize,
    pub msg: ServerMsg,
}

/// A player-side failure (spec §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    Disconnect,
    Exit,
    WriteFailed,
    SetTimeout,
    ConnectTimeout,
}

impl FaultKind {
    /// The fault of a seat whose request ended with `outcome` (neither a reply nor a timeout).
    pub fn of_outcome(outcome: ExchangeOutcome) -> FaultKind {
        match outcome {
            ExchangeOutcome::Disconnect | ExchangeOutcome::Malformed => FaultKind::Disconnect,
            _ => FaultKind::Exit,
        }
    }

    /// The fault of a seat whose connection did not come (its `connect` request, waited for
    /// `limit_ms`, ended with `outcome`); `None` when it came.
    pub fn of_connect(
        outcome: ExchangeOutcome,
        detail: Option<&str>,
        limit_ms: u64,
    ) -> Option<(FaultKind, String)> {
        match outcome {
            ExchangeOutcome::Reply => None,
            ExchangeOutcome::Timeout => Some((
                FaultKind::ConnectTimeout,
                format!("no connection within {limit_ms} ms"),
            )),
            o => Some((Self::of_outcome(o), detail.unwrap_or_default().to_string())),
        }
    }

    fn end_reason(self) -> EndReason {
        match self {
            FaultKind::Disconnect | FaultKind::Exit | FaultKind::WriteFailed => {
                EndReason::Disconnect
            }
            FaultKind::SetTimeout => EndReason::SetTimeout,
            FaultKind::ConnectTimeout => EndReason::ConnectTimeout,
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    Move,
    Illegal,
    Malformed,
    Timeout,
}

/// What happened to a line that was neither a placement nor an answer to `MOV?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    OutOfTurn,
    OwedDiscarded,
    AfterEnd,
    Empty,
    TooLong,
}

/// A captured ghost in a turn record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    /// Label of the captured (opponent) ghost, upper case.
    pub ghost: char,
    pub colour: Colour,
}

/// One replay event (spec §4.2); the header is written by the driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A seat was assigned and sent `SET?`.
    Assign { seat: usize, t: u64 },
    /// A line from a seat that has not placed yet, during the placement phase.
    Set {
        seat: usize,
        t: u64,
        /// The framed line; `null` for a line over 256 bytes.
        raw: Option<String>,
        accepted: bool,
        reason: Option<String>,
        /// The red labels of an accepted placement.
        red: Option<String>,
    },
    /// One ply.
    Turn {
        ply: u32,
        seat: usize,
        t: u64,
        /// The line answered (`null` for a timeout or a line over 256 bytes).
        raw: Option<String>,
        outcome: TurnOutcome,
        /// The applied move, normalised (`A,N`).
        #[serde(rename = "move")]
        mv: Option<String>,
        elapsed_ms: u64,
        bank_ms: i64,
        captured: Option<Captured>,
        escaped: bool,
        /// Why the command was refused.
        reason: Option<String>,
    },
    /// Any other line.
    Line {
        seat: usize,
        t: u64,
        raw: Option<String>,
        disposition: Disposition,
    },
    /// A player-side failure.
    Fault {
        seat: usize,
        kind: FaultKind,
        t: u64,
        detail: String,
    },
    /// The end.
    End {
        winner: Option<usize>,
        draw: bool,
        reason: EndReason,
        plies: u32,
        scores: Option<[i32; 2]>,
        /// The board as seat 0's end message shows it.
        board: String,
    },
}

/// The replay's text of a framed line (`None` = over 256 bytes).
pub fn line_record(line: &Line) -> Option<String> {
    match line {
        Line::Text(s) | Line::NonAscii(s) => Some(s.clone()),
        Line::Empty => Some(String::new()),
        Line::TooLong => None,
    }
}

/// The framed line a replay record stands for (inverse of [`line_record`]).
pub fn line_from_record(raw: Option<&str>) -> Line {
    match raw {
        None => Line::TooLong,
        Some("") => Line::Empty,
        Some(s) if !s.is_ascii() => Line::NonAscii(s.to_string()),
        Some(s) => Line::Text(s.to_string()),
    }
}

/// The compatible log's file name without `.txt` (spec §4.1):
/// `log-YYYY-MM-DD-HH-mm-ss-SSS` for a UTC time in ms since the epoch.
pub fn log_file_stem(unix_ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms);
    // `2018-03-05T12:34:56.789Z` → `log-2018-03-05-12-34-56-789`
    let stamp = humantime::format_rfc3339_millis(t).to_string();
    let digits = stamp.trim_end_matches('Z').replace(['T', ':', '.'], "-");
    format!("log-{digits}")
}

/// The names to try, in order, for the compatible log of a game whose first placement was at
/// `unix_ms`: `<stem>.txt`, then `<stem>-1.txt` up to `<stem>-999.txt` ([`log_file_stem`]).
pub fn log_file_names(unix_ms: u64) -> impl Iterator<Item = String> {
    let stem = log_file_stem(unix_ms);
    (0..1000).map(move |n| match n {
        0 => format!("{stem}.txt"),
        _ => format!("{stem}-{n}.txt"),
    })
}

/// One game between two seats, as the referee sees it.
#[derive(Debug, Clone)]
pub struct Session {
    rules: Rules,
    game: Geister,
    assigned_at: [Option<u64>; 2],
    /// The seat's end message was sent, or the seat is gone: nothing more is sent to it.
    closed: [bool; 2],
    owed: [u32; 2],
    bank: [i64; 2],
    /// Start of the outstanding `MOV?`'s clock, once written.
    clock: Option<u64>,
    /// A `MOV?` is outstanding for the seat to move.
    awaiting: bool,
    events: Vec<Event>,
    log: Vec<String>,
    first_set_at: Option<u64>,
}

impl Session {
    pub fn new(rules: Rules) -> Self {
        let game = Geister::new(PlayRules::from(&rules));
        let bank = rules.bank_ms.min(i64::MAX as u64) as i64;
        Session {
            rules,
            game,
            assigned_at: [None; 2],
            closed: [false; 2],
            owed: [0; 2],
            bank: [bank; 2],
            clock: None,
            awaiting: false,
            events: Vec::new(),
            log: Vec::new(),
            first_set_at: None,
        }
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn game(&self) -> &Geister {
        &self.game
    }

    pub fn is_over(&self) -> bool {
        self.game.is_over()
    }

    /// Replay events so far.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Compatible log lines so far (spec §4.1), without line ends.
    pub fn log_lines(&self) -> &[String] {
        &self.log
    }

    /// The compatible log's text (spec §4.1): LF line ends.
    pub fn log_text(&self) -> String {
        self.log.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Time (ms since start) of the first accepted placement: names the compatible log file.
    pub fn first_set_at(&self) -> Option<u64> {
        self.first_set_at
    }

    /// Remaining bank of a seat (may be negative: counts as 0).
    pub fn bank(&self, seat: usize) -> i64 {
        self.bank[seat]
    }

    /// Whether a seat was assigned and has not been sent its end message (nor failed).
    pub fn is_live(&self, seat: usize) -> bool {
        self.assigned_at[seat].is_some() && !self.closed[seat]
    }

    /// The game's label of the moment: `set-up` before the first ply, then `ply N`.
    pub fn label(&self) -> String {
        if self.game.in_play() || self.game.is_over() {
            format!("ply {}", self.game.ply() + 1)
        } else {
            SETUP.to_string()
        }
    }

    /// Whether a reply is due from the seat: its placement, or its outstanding move.
    pub fn expects_reply(&self, seat: usize) -> bool {
        !self.game.placed(seat) || self.awaiting() == Some(seat)
    }

    /// The seat whose `MOV?` is outstanding.
    pub fn awaiting(&self) -> Option<usize> {
        (self.awaiting && self.game.in_play()).then(|| self.game.to_move())
    }

    /// The time of a seat's next deadline: its placement's, or its outstanding move's.
    pub fn deadline(&self, seat: usize) -> Option<u64> {
        if self.game.is_over() {
            return None;
        }
        if !self.game.placed(seat) {
            return self.assigned_at[seat].map(|t| t.saturating_add(self.rules.set_timeout_ms));
        }
        if self.awaiting() == Some(seat) {
            return self.clock.map(|c| c.saturating_add(self.allowance(seat)));
        }
        None
    }

    /// The earliest deadline of either seat.
    pub fn next_deadline(&self) -> Option<u64> {
        [self.deadline(0), self.deadline(1)]
            .into_iter()
            .flatten()
            .min()
    }

    fn allowance(&self, seat: usize) -> u64 {
        (self.bank[seat].max(0) as u64).saturating_add(self.rules.per_move_ms)
    }

    /// The seat is assigned to this game: it gets `SET?`.
    pub fn assign(&mut self, seat: usize, now: u64) -> Vec<Out> {
        if self.assigned_at[seat].is_some() || self.game.is_over() {
            return Vec::new();
        }
        self.assigned_at[seat] = Some(now);
        self.events.push(Event::Assign { seat, t: now });
        vec![Out {
            seat,
            msg: ServerMsg::Set,
        }]
    }

    /// The outstanding `MOV?` was written at `now`: its clock starts.
    pub fn clock_started(&mut self, seat: usize, now: u64) {
        if self.awaiting() == Some(seat) && self.clock.is_none() {
            self.clock = Some(now);
        }
    }

    /// `msg` was written to `seat` at `now`: a `MOV?` starts its clock. For a request (`SET?`,
    /// `MOV?`): `Some` of the time (ms) the seat has from now to reply, if it has a deadline.
    pub fn written(&mut self, seat: usize, msg: &ServerMsg, now: u64) -> Option<Option<u64>> {
        if matches!(msg, ServerMsg::Mov(_)) {
            self.clock_started(seat, now);
        }
        matches!(msg, ServerMsg::Set | ServerMsg::Mov(_))
            .then(|| self.deadline(seat).map(|d| d.saturating_sub(now)))
    }

    /// What a seat's wait came to in the seat layer: its line (`bytes`, `cut` at the length
    /// cap), time passing (a timeout: the deadlines due), or the seat failing (`detail`).
    pub fn answer(
        &mut self,
        seat: usize,
        outcome: ExchangeOutcome,
        (bytes, cut): (&[u8], bool),
        detail: &str,
        now: u64,
    ) -> Vec<Out> {
        match outcome {
            ExchangeOutcome::Reply if cut => self.line(seat, &Line::TooLong, now),
            ExchangeOutcome::Reply => self.line(seat, &frame(bytes), now),
            ExchangeOutcome::Timeout => self.tick(now),
            o => self.fault(seat, FaultKind::of_outcome(o), detail, now),
        }
    }

    /// A framed line from a seat.
    pub fn line(&mut self, seat: usize, line: &Line, now: u64) -> Vec<Out> {
        let mut out = Vec::new();
        if self.assigned_at[seat].is_none() {
            return out;
        }
        let raw = line_record(line);
        if self.closed[seat] {
            self.line_event(seat, now, raw, Disposition::AfterEnd);
            return out;
        }
        // A late answer overtaken by its deadline is first a timeout.
        if self.awaiting() == Some(seat) {
            if let Some(d) = self.deadline(seat) {
                if now > d {
                    out.extend(self.tick(now));
                    if self.closed[seat] {
                        self.line_event(seat, now, raw, Disposition::AfterEnd);
                        return out;
                    }
                }
            }
        }
        if self.owed[seat] > 0 {
            self.owed[seat] -= 1;
            self.line_event(seat, now, raw, Disposition::OwedDiscarded);
            return out;
        }
        if *line == Line::Empty {
            self.line_event(seat, now, raw, Disposition::Empty);
            return out;
        }
        if !self.game.placed(seat) {
            self.placement_line(seat, line, raw, now, &mut out);
            return out;
        }
        if self.awaiting() != Some(seat) {
            let disposition = if *line == Line::TooLong {
                Disposition::TooLong
            } else {
                Disposition::OutOfTurn
            };
            self.line_event(seat, now, raw, disposition);
            out.push(Out {
                seat,
                msg: ServerMsg::Ng,
            });
            return out;
        }
        self.turn_line(seat, line, raw, now, &mut out);
        out
    }

    /// Record a line that was neither a placement nor an answer to `MOV?`.
    fn line_event(&mut self, seat: usize, now: u64, raw: Option<String>, disposition: Disposition) {
        self.events.push(Event::Line {
            seat,
            t: now,
            raw,
            disposition,
        });
    }

    fn placement_line(
        &mut self,
        seat: usize,
        line: &Line,
        raw: Option<String>,
        now: u64,
        out: &mut Vec<Out>,
    ) {
        let parsed = match line {
            Line::Text(s) => parse_command(s).map_err(|e| e.to_string()),
            Line::TooLong => Err("line longer than 256 bytes".to_string()),
            Line::NonAscii(_) => Err("line with non-ASCII bytes".to_string()),
            Line::Empty => Err("empty line".to_string()),
        };
        match parsed {
            Ok(Command::Set(red)) => {
                if let Err(e) = self.game.place(seat, red) {
                    self.refuse_placement(seat, now, raw, e.to_string(), out);
                    return;
                }
                let letters = raw
                    .as_deref()
                    .map(|r| r[4..].to_ascii_uppercase())
                    .unwrap_or_default();
                self.log.push(format!("player={seat},SET:{letters}"));
                self.first_set_at.get_or_insert(now);
                self.events.push(Event::Set {
                    seat,
                    t: now,
                    raw,
                    accepted: true,
                    reason: None,
                    red: Some(red.labels()),
                });
                out.push(Out {
                    seat,
                    msg: ServerMsg::Ok,
                });
                if self.game.in_play() {
                    self.request_move(out);
                }
            }
            Ok(Command::Mov(_)) => self.refuse_placement(
                seat,
                now,
                raw,
                "a move during the placement phase".into(),
                out,
            ),
            Err(reason) => self.refuse_placement(seat, now, raw, reason, out),
        }
    }

    /// A line refused during the placement phase: recorded with its reason, answered `NG`.
    fn refuse_placement(
        &mut self,
        seat: usize,
        now: u64,
        raw: Option<String>,
        reason: String,
        out: &mut Vec<Out>,
    ) {
        self.events.push(Event::Set {
            seat,
            t: now,
            raw,
            accepted: false,
            reason: Some(reason),
            red: None,
        });
        out.push(Out {
            seat,
            msg: ServerMsg::Ng,
        });
    }

    fn turn_line(
        &mut self,
        seat: usize,
        line: &Line,
        raw: Option<String>,
        now: u64,
        out: &mut Vec<Out>,
    ) {
        let ply = self.game.ply() + 1;
        let start = self.clock.unwrap_or(now);
        let elapsed = now.saturating_sub(start);
        self.bank[seat] = self.bank[seat].saturating_sub(elapsed.min(i64::MAX as u64) as i64);
        self.awaiting = false;
        self.clock = None;
        let (outcome, reason, mv): (TurnOutcome, Option<String>, Option<Move>) = match line {
            Line::Text(s) => match parse_command(s) {
                Ok(Command::Mov(mv)) => match self.game.check(seat, mv) {
                    Ok(()) => (TurnOutcome::Move, None, Some(mv)),
                    Err(e) => (TurnOutcome::Illegal, Some(e.to_string()), None),
                },
                Ok(Command::Set(_)) => (
                    TurnOutcome::Malformed,
                    Some("a placement during play".into()),
                    None,
                ),
                Err(e) => (TurnOutcome::Malformed, Some(e.to_string()), None),
            },
            Line::TooLong => (
                TurnOutcome::Malformed,
                Some("line longer than 256 bytes".into()),
                None,
            ),
            Line::NonAscii(_) => (
                TurnOutcome::Malformed,
                Some("line with non-ASCII bytes".into()),
                None,
            ),
            Line::Empty => unreachable_empty(),
        };
        let bank_ms = self.bank[seat];
        match mv {
            Some(mv) => {
                let effect = match self.game.play(mv) {
                    Ok(e) => e,
                    Err(_) => return, // checked just above
                };
                self.log.push(format!("player={seat},MOV:{}", mv.wire()));
                let captured = effect.captured.map(|(g, colour)| Captured {
                    ghost: LABELS[g as usize],
                    colour,
                });
                self.events.push(Event::Turn {
                    ply,
                    seat,
                    t: now,
                    raw,
                    outcome,
                    mv: Some(mv.wire()),
                    elapsed_ms: elapsed,
                    bank_ms,
                    captured,
                    escaped: effect.escaped,
                    reason: None,
                });
                let ack = match effect.captured {
                    Some((_, Colour::Red)) => ServerMsg::OkRed,
                    Some((_, Colour::Blue)) => ServerMsg::OkBlue,
                    None => ServerMsg::Ok,
                };
                out.push(Out { seat, msg: ack });
            }
            None => {
                self.events.push(Event::Turn {
                    ply,
                    seat,
                    t: now,
                    raw,
                    outcome,
                    mv: None,
                    elapsed_ms: elapsed,
                    bank_ms,
                    captured: None,
                    escaped: false,
                    reason,
                });
                out.push(Out {
                    seat,
                    msg: ServerMsg::Ng,
                });
                let ended = self.game.turn_fault(TurnFault::Illegal);
                if self.fault_passes(ended) {
                    self.log.push(format!("player={seat},PASS"));
                }
            }
        }
        self.after_ply(out);
    }

    /// Whether a turn fault counts as a pass (`ended`: the game is over after it): yes unless the
    /// fault itself decided the game; a pass that ends it by the rules (the ply limit) still counts.
    fn fault_passes(&self, ended: bool) -> bool {
        !ended || self.game.end().is_some_and(|e| e.reason.by_rules())
    }

    fn after_ply(&mut self, out: &mut Vec<Out>) {
        if self.game.is_over() {
            self.finish(out);
        } else {
            self.request_move(out);
        }
    }

    fn request_move(&mut self, out: &mut Vec<Out>) {
        let seat = self.game.to_move();
        self.awaiting = true;
        self.clock = None;
        let board = self.game.view(seat).board();
        out.push(Out {
            seat,
            msg: ServerMsg::Mov(board),
        });
    }

    /// Process every deadline that has passed at `now`.
    pub fn tick(&mut self, now: u64) -> Vec<Out> {
        let mut out = Vec::new();
        if self.game.is_over() {
            return out;
        }
        // Placement deadlines: both at once is a double forfeit.
        let late_set: Vec<usize> = (0..2)
            .filter(|&s| !self.game.placed(s) && self.deadline(s).is_some_and(|d| now >= d))
            .collect();
        if !late_set.is_empty() {
            let faults: Vec<(usize, FaultKind, String)> = late_set
                .iter()
                .map(|&s| {
                    (
                        s,
                        FaultKind::SetTimeout,
                        format!(
                            "no accepted placement within {} ms of SET?",
                            self.rules.set_timeout_ms
                        ),
                    )
                })
                .collect();
            return self.faults(&faults, now);
        }
        if let Some(seat) = self.awaiting() {
            if self.deadline(seat).is_some_and(|d| now >= d) {
                let ply = self.game.ply() + 1;
                let elapsed = now.saturating_sub(self.clock.unwrap_or(now));
                self.awaiting = false;
                self.clock = None;
                self.owed[seat] += 1;
                let bank_ms = self.bank[seat];
                self.events.push(Event::Turn {
                    ply,
                    seat,
                    t: now,
                    raw: None,
                    outcome: TurnOutcome::Timeout,
                    mv: None,
                    elapsed_ms: elapsed,
                    bank_ms,
                    captured: None,
                    escaped: false,
                    reason: Some(format!("no command within {} ms", self.allowance(seat))),
                });
                let ended = self.game.turn_fault(TurnFault::Late);
                if self.fault_passes(ended) {
                    out.push(Out {
                        seat,
                        msg: ServerMsg::Ng,
                    });
                    self.log.push(format!("player={seat},PASS"));
                }
                self.after_ply(&mut out);
            }
        }
        out
    }

    /// One seat's connection failed.
    pub fn fault(&mut self, seat: usize, kind: FaultKind, detail: &str, now: u64) -> Vec<Out> {
        self.faults(&[(seat, kind, detail.to_string())], now)
    }

    /// Seats failing at the same moment; both failing is a double forfeit.
    pub fn faults(&mut self, faults: &[(usize, FaultKind, String)], now: u64) -> Vec<Out> {
        let mut out = Vec::new();
        if self.game.is_over() || faults.is_empty() {
            return out;
        }
        for (seat, kind, detail) in faults {
            self.events.push(Event::Fault {
                seat: *seat,
                kind: *kind,
                t: now,
                detail: detail.clone(),
            });
            if matches!(
                kind,
                FaultKind::Disconnect | FaultKind::Exit | FaultKind::WriteFailed
            ) {
                self.closed[*seat] = true;
            }
        }
        let mut seats: Vec<usize> = faults.iter().map(|f| f.0).collect();
        seats.sort_unstable();
        seats.dedup();
        if seats.len() >= 2 {
            self.game.double_forfeit();
        } else {
            self.game.forfeit(faults[0].0, faults[0].1.end_reason());
        }
        self.awaiting = false;
        self.clock = None;
        self.finish(&mut out);
        out
    }

    /// End messages (winner first, seat 0 first on a draw), the end event and the log's last line.
    fn finish(&mut self, out: &mut Vec<Out>) {
        let Some(end) = self.game.end().copied() else {
            return;
        };
        self.awaiting = false;
        let order = match end.winner {
            Some(w) => [w, 1 - w],
            None => [0, 1],
        };
        for seat in order {
            if !self.is_live(seat) {
                self.closed[seat] = true;
                continue;
            }
            let board = self.game.view(seat).board();
            let msg = match end.winner {
                Some(w) if w == seat => ServerMsg::Won(board),
                Some(_) => ServerMsg::Lst(board),
                None if end.reason == crate::engine::EndReason::DoubleForfeit => {
                    ServerMsg::Lst(board)
                }
                None => ServerMsg::Drw(board),
            };
            out.push(Out { seat, msg });
            self.closed[seat] = true;
        }
        self.events.push(Event::End {
            winner: end.winner,
            draw: end.is_draw(),
            reason: end.reason,
            plies: self.game.ply(),
            scores: end.scores,
            board: self.game.view(0).board(),
        });
        match (end.winner, end.reason) {
            (_, EndReason::DoubleForfeit) => {}
            (Some(w), _) => self.log.push(format!("winner={w}")),
            (None, _) => self.log.push("winner=2".into()),
        }
    }
}

/// Empty lines are handled before a turn line is interpreted.
fn unreachable_empty() -> (TurnOutcome, Option<String>, Option<Move>) {
    (TurnOutcome::Malformed, Some("empty line".into()), None)
}
