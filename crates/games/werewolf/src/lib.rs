//! Werewolf (AIWolf, 人狼知能): the pure rules engine of the `aiwolf-0.6` and `seed-2015` rule
//! sets, the protocol 3.6 talk language, the AIWolf 0.6.x wire packets as pure functions, the game
//! log, and the built-in agents. No processes, clocks, sockets or files.
//!
//! * [`engine::Werewolf`] is a step machine: [`engine::Werewolf::pending`] names the next request,
//!   [`engine::Werewolf::reply`] / [`engine::Werewolf::ack`] move on.
//! * [`info::GameInfo::for_agent`] is the single place where hidden information is filtered.
//! * [`wire`] encodes packets byte for byte as the reference server's clients expect them.
//! * [`talk`] validates and parses utterances; [`bots`] holds `random` and `sample`.

pub mod adapter;
pub mod bots;
pub mod contest;
pub mod driver;
pub mod engine;
pub mod info;
pub mod ledger;
pub mod nlp;
pub mod rng;
pub mod settings;
pub mod talk;
pub mod types;
pub mod wire;

use kakehiki_core::{Chance, Dynamics, GameType, Information, Transport};

/// The game's declaration.
pub static WEREWOLF_TYPE: GameType = GameType {
    name: "werewolf",
    title: "Werewolf (AIWolf protocol 0.6.x)",
    min_seats: 3,
    max_seats: 18,
    default_seats: 15,
    dynamics: Dynamics::Mixed,
    information: Information::Imperfect,
    chance: Chance::Seeded,
    transports: &[Transport::Tcp],
    rule_sets: &RuleSet::NAMES,
    builtin_bots: bots::BUILTIN_NAMES,
};

pub use engine::{EngineError, Pending, Reply, Settled, Werewolf};
pub use info::GameInfo;
pub use settings::{RuleSet, Settings, SettingsError, WinCount};
pub use talk::Talk;
pub use types::{Judge, Request, Role, Species, Status, Team, Vote};
