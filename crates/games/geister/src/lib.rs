//! Geister for programs (spec: `shared/specs/geister.md`).
//!
//! * [`engine`]: the rules (board, placement, moves, captures, escapes, end conditions) with the
//!   rule sets' limit and fault policies ([`rules`]).
//! * [`wire`]: the contest server's text protocol as pure functions (messages, commands, framing).
//! * [`session`]: the referee's side of one game as a pure state machine over timed inputs; the
//!   driver in `kakehiki-referee` only moves bytes and reads the clock.
//! * [`record`]: the game's side of the referee's record (the replay header's parameters, the
//!   report's facts, errors of events, the upgrade of `kakehiki-geister/1` and `/2` replays).
//! * [`bots`]: built-in bots `random`, `rush` and `strong`.
//! * [`ranking`]: the seed league's ranking rules and the GPW/GAT points rules.
//!
//! No processes, clocks, sockets or files here.

pub mod bots;
pub mod engine;
pub mod ranking;
pub mod record;
pub mod rules;
pub mod session;
pub mod wire;

pub use engine::{Action, Colour, Dir, End, EndReason, Geister, Move, PlayRules, RedSet, View};
pub use rules::{AtLimit, Fault, Rules, RulesError};
pub use session::{Event, FaultKind, Out, Session};
pub use wire::{parse_command, Command, Line, LineBuffer, ServerMsg};

use kakehiki_core::{Chance, Dynamics, GameType, Information, Transport};

/// Built-in bot names.
pub const BUILTIN_BOTS: &[&str] = &["random", "rush", "strong"];

/// Geister's declaration.
pub static GAME_TYPE: GameType = GameType {
    name: "geister",
    title: "Geister",
    min_seats: 2,
    max_seats: 2,
    default_seats: 2,
    dynamics: Dynamics::Sequential,
    information: Information::Imperfect,
    chance: Chance::None,
    transports: &[Transport::Stdio, Transport::Tcp],
    rule_sets: &["gpw", "seed"],
    builtin_bots: BUILTIN_BOTS,
};
