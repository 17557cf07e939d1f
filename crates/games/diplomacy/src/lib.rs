//! Diplomacy on the standard map: map facts, order parser, a DATC v3.1 adjudicator for all three
//! phase types, the JSON-lines adjudication service and built-in bots.
//!
//! Pure: no processes, clocks, sockets or files (the map is embedded at compile time).

// Arrays indexed by province id are the design (spec §7); range loops over ids read best.
#![allow(clippy::needless_range_loop)]

pub mod adjudicate;
pub mod board;
pub mod bots;
pub mod daide;
pub mod datc;
pub mod engine;
pub mod map;
pub mod map_data;
pub mod movement;
pub mod order;
pub mod outcome;
pub mod person;
pub mod replay_v1;
pub mod service;
pub mod types;
pub mod wire;

pub use adjudicate::{adjudicate, civil_disorder};
pub use board::{Board, Dislodged};
pub use engine::{
    BuiltinBot, DiplomacyGame, EndReason, Observation, PhaseRecord, Rules, BUILTIN_BOTS,
};
pub use map::{standard, Loc, Map, Prov, ProvinceKind, NUM_PROVINCES};
pub use movement::Resolver;
pub use order::{parse_order, Dest, Order, ParseError, UnitRef};
pub use outcome::{FailReason, OrderError, OrderResult, PhaseOutcome, VoidReason};
pub use types::{Phase, PhaseKind, Power, Season, Unit, UnitKind, POWER_NAMES};
