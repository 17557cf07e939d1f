//! Negotiate and Conquer (`nac`) and Programming Language Religious War, second edition
//! (`religion-war`): one engine, two rule variants, as `shared/specs/negotiate-and-conquer.md` states.
//!
//! * [`Params`] holds a variant's full parameter set (§1.1).
//! * [`mt19937`] draws the weights exactly as the original referee did (§1.2).
//! * [`State`] is the pure engine: turn blocks as wire bytes (§2), picks applied (§1.3), exact
//!   scoring in units of 1/24 (§1.4).
//! * [`reply`] parses a reply line with the original's outcomes, recording every deviation (§3.4).
//! * [`bots`] are the built-in bots (`random`, `strong`).
//!
//! Nothing here touches processes, clocks or I/O.

pub mod bots;
pub mod mt19937;
pub mod record;
pub mod reply;
mod state;
pub mod v1;

pub use state::{score24, Params, State, Variant, View, MAX_TARGETS, NUM_SEATS};

use kakehiki_core::{Chance, Dynamics, GameType, Information, Transport};

/// The `nac` game type.
pub static NAC_TYPE: GameType = GameType {
    name: "nac",
    title: "Negotiate and Conquer (SamurAI Coding 2014-15)",
    min_seats: 4,
    max_seats: 4,
    default_seats: 4,
    dynamics: Dynamics::Simultaneous,
    information: Information::Imperfect,
    chance: Chance::Seeded,
    transports: &[Transport::Stdio],
    rule_sets: &["nac"],
    builtin_bots: bots::BOT_NAMES,
};

/// The `religion-war` game type.
pub static RELIGION_WAR_TYPE: GameType = GameType {
    name: "religion-war",
    title: "Programming Language Religious War, second edition (CODE FESTIVAL 2014)",
    min_seats: 4,
    max_seats: 4,
    default_seats: 4,
    dynamics: Dynamics::Simultaneous,
    information: Information::Imperfect,
    chance: Chance::Seeded,
    transports: &[Transport::Stdio],
    rule_sets: &["religion-war"],
    builtin_bots: bots::BOT_NAMES,
};

/// Reduce an imported seed the way the original did (JavaScript ToUint32): truncate toward zero,
/// then take it modulo 2^32.
pub fn reduce_seed(original: i128) -> u32 {
    original.rem_euclid(1 << 32) as u32
}
