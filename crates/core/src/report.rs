//! The result every match produces, and the seat errors it records.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::score::Outcome;

/// What went wrong with a seat. One variant per failure the referee distinguishes; the
/// serialised names are part of the `--json` contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatErrorKind {
    /// The bot did not complete its start-up handshake (READY, start reply, NAME, ...).
    NotReady,
    /// No reply within the time limit.
    Timeout,
    /// The process exited or closed its output before replying, or a write to it failed.
    Crash,
    /// A reply was received but could not be used as given (malformed, out of range, ...); the
    /// rules' substitute was applied.
    InvalidReply,
    /// A syntactically valid action the rules do not allow.
    IllegalAction,
    /// A message that breaks the wire protocol (wrong message type, reply to no request, ...).
    ProtocolError,
    /// A TCP client disconnected.
    Disconnect,
    /// Output received while no reply was expected; discarded.
    UnsolicitedOutput,
    /// The bot exceeded an output or resource cap and was stopped.
    ResourceLimit,
    /// Connections to the seat's port beyond the cap of connections it holds; they were
    /// closed at once (one error per seat and match, the count in its detail).
    ExcessConnections,
    /// A reply the rules refuse but that the original contest server takes without fault, in
    /// the same way this one does (an AIWolf vote or divination of a dead agent: the server
    /// votes at random or divines no one). Reported, with what was done, but not a fault: it
    /// fails no `check` and counts in no error column.
    Tolerated,
}

impl SeatErrorKind {
    /// The wire name (`not_ready`, `timeout`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SeatErrorKind::NotReady => "not_ready",
            SeatErrorKind::Timeout => "timeout",
            SeatErrorKind::Crash => "crash",
            SeatErrorKind::InvalidReply => "invalid_reply",
            SeatErrorKind::IllegalAction => "illegal_action",
            SeatErrorKind::ProtocolError => "protocol_error",
            SeatErrorKind::Disconnect => "disconnect",
            SeatErrorKind::UnsolicitedOutput => "unsolicited_output",
            SeatErrorKind::ResourceLimit => "resource_limit",
            SeatErrorKind::ExcessConnections => "excess_connections",
            SeatErrorKind::Tolerated => "tolerated",
        }
    }

    /// Whether it is the bot's fault: every kind but [`SeatErrorKind::Tolerated`].
    pub fn is_fault(self) -> bool {
        self != SeatErrorKind::Tolerated
    }
}

/// One recorded failure of a seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatError {
    /// The turn (or ply, day, phase number) it happened in; 0 for start-up.
    pub turn: u32,
    /// The game's own label for the moment (`turn 3`, `ply 15`, `S1901M`, `day 2 talk 3`);
    /// empty only in reports written before it was recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub at: String,
    pub kind: SeatErrorKind,
    /// Specific, human readable detail: what was expected and what was received.
    pub detail: String,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// One seat of a match report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeatReport {
    /// The seat spec as given (`builtin:random`, `cmd:...`).
    pub spec: String,
    pub errors: Vec<SeatError>,
    /// Game-specific per-seat fields (Werewolf `role`, Diplomacy `power`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SeatReport {
    /// Its errors that are the bot's fault (every one but a [`SeatErrorKind::Tolerated`]).
    pub fn faults(&self) -> usize {
        self.errors.iter().filter(|e| e.kind.is_fault()).count()
    }
}

impl SeatReport {
    /// The seat in the game's own terms, from its game-specific fields: `Agent[03] SEER`
    /// (Werewolf, `, dead` for a dead one), `FRANCE, 17 centres` (Diplomacy); empty for games
    /// that say nothing. Not escaped for a terminal.
    pub fn in_game_terms(&self) -> String {
        let x = &self.extra;
        if let Some(power) = x.get("power").and_then(|v| v.as_str()) {
            let centres = x.get("centers").and_then(|v| v.as_u64()).unwrap_or(0);
            let noun = if centres == 1 { "centre" } else { "centres" };
            return format!("{power}, {centres} {noun}");
        }
        if let Some(role) = x.get("role").and_then(|v| v.as_str()) {
            let agent = x
                .get("agent")
                .and_then(|v| v.as_u64())
                .map(|a| format!("Agent[{a:02}] "))
                .unwrap_or_default();
            let dead = if x.get("alive").and_then(|v| v.as_bool()) == Some(false) {
                ", dead"
            } else {
                ""
            };
            return format!("{agent}{role}{dead}");
        }
        String::new()
    }
}

/// The result of one match: what `kakehiki play --json` prints and what the store keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchReport {
    pub game: String,
    pub rules: String,
    pub seed: u64,
    /// Scores as numbers, seat order.
    pub scores: Vec<f64>,
    /// Exact scores (`-3/2`), seat order.
    pub scores_exact: Vec<String>,
    /// Winning seat, `null` for a draw (or when every seat lost).
    pub winner: Option<usize>,
    /// No winner and no draw: every seat lost (a Geister double forfeit, spec §2.2). Absent
    /// from the JSON when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub everyone_lost: bool,
    pub seats: Vec<SeatReport>,
    /// Game-specific fields (Geister `end`, Werewolf `winner_team`, Diplomacy `centers`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MatchReport {
    /// A report from an outcome and the per-seat specs and errors.
    pub fn new(
        game: &str,
        rules: &str,
        seed: u64,
        outcome: &Outcome,
        seats: Vec<(String, Vec<SeatError>)>,
    ) -> Self {
        MatchReport {
            game: game.to_string(),
            rules: rules.to_string(),
            seed,
            scores: outcome.scores_f64(),
            scores_exact: outcome.scores_exact(),
            winner: outcome.winner,
            everyone_lost: false,
            seats: seats
                .into_iter()
                .map(|(spec, errors)| SeatReport {
                    spec,
                    errors,
                    extra: Map::new(),
                })
                .collect(),
            extra: Map::new(),
        }
    }
}
