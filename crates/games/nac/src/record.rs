//! The game's own replay events (§6): the weights, each turn's applied picks with their parse
//! records, deaths, scorings and the result. What each seat was sent and answered is the
//! platform's seat record ([`kakehiki_core::exchange`]), not repeated here.

use serde::{Deserialize, Serialize};

use crate::reply::Issue;
use crate::state::{Params, NUM_SEATS};

/// The handshake's label and the kinds of request, as the seat record names them.
pub const READY_AT: &str = "ready";
pub const READY_KIND: &str = "READY";
pub const TURN_KIND: &str = "turn";

/// Time limits (§3.1) in milliseconds: READY, each turn, and the grace before the end's kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub ready_ms: u64,
    pub turn_ms: u64,
    pub end_grace_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ready_ms: 5000,
            turn_ms: 1000,
            end_grace_ms: 1000,
        }
    }
}

/// The replay header's `params`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeaderParams {
    pub variant: Params,
    /// The MT19937 seed: the match seed reduced modulo 2^32 (JavaScript ToUint32).
    pub mt_seed: u32,
    pub limits: Limits,
}

/// `{"event":"weights"}`: the targets' weights, redundant with the seed, for checking.
#[derive(Debug, Serialize)]
pub struct WeightsEvent<'a> {
    pub event: &'static str,
    pub weights: &'a [u8],
}

impl<'a> WeightsEvent<'a> {
    pub fn new(weights: &'a [u8]) -> Self {
        WeightsEvent {
            event: "weights",
            weights,
        }
    }
}

/// Status of one seat's move: `ok`, `timeout`, `crash`, `dead`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveStatus {
    Ok,
    Timeout,
    Crash,
    Dead,
}

/// One seat's move: the picks applied (after substitution) and the parse records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveEvent {
    pub seat: usize,
    pub status: MoveStatus,
    pub picks: Vec<u8>,
    pub errors: Vec<Issue>,
}

impl MoveEvent {
    /// The move of a dead seat: target 0 for every pick.
    pub fn dead(seat: usize, picks: usize) -> Self {
        MoveEvent {
            seat,
            status: MoveStatus::Dead,
            picks: vec![0; picks],
            errors: Vec::new(),
        }
    }
}

/// `{"event":"turn"}`: every seat's move of one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEvent {
    pub event: String,
    pub turn: u32,
    /// `D`/`N` (`nac`), `W`/`H` (`religion-war`).
    pub label: String,
    pub moves: Vec<MoveEvent>,
}

/// `{"event":"death"}`: a seat is dead from `turn` on (turn 0: it never became ready).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeathEvent {
    pub event: String,
    pub seat: usize,
    pub turn: u32,
    /// `not_ready`, `timeout`, `crash`.
    pub reason: String,
    pub detail: String,
}

/// `{"event":"scoring"}`: one scoring (×24).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoringEvent {
    pub event: String,
    pub after_turn: u32,
    pub score24: [i64; NUM_SEATS],
}

/// What a seat was sent: total bytes and SHA-256 (hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamDigest {
    pub bytes: u64,
    pub sha256: String,
}

/// `{"event":"result"}`: totals (×24 and exact), the winner or the seats tied at the top, and
/// each seat's stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultEvent {
    pub event: String,
    pub total24: [i64; NUM_SEATS],
    pub scores: Vec<String>,
    pub winner: Option<usize>,
    pub tied: Vec<usize>,
    pub streams: Vec<StreamDigest>,
}
