//! Built-in bots. Each decides from its own [`View`](crate::engine::View) only and draws its randomness from a
//! generator seeded by the referee (`kakehiki_core::seeded_rng(match_seed, "seat-<n>")`), so a
//! match is reproducible from its seed.

mod random;
mod rush;
mod strong;

pub use random::RandomBot;
pub use rush::RushBot;
pub use strong::{StrongBot, StrongConfig};

use kakehiki_core::{Bot, SeedRng};
use rand::Rng;

use crate::engine::{Geister, RedSet};

/// Why a bot could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown geister bot {0:?}: expected random, rush or strong")]
pub struct UnknownBot(pub String);

/// A built-in bot by name.
pub fn make_bot(name: &str, rng: SeedRng) -> Result<Box<dyn Bot<Geister> + Send>, UnknownBot> {
    match name {
        "random" => Ok(Box::new(RandomBot::new(rng))),
        "rush" => Ok(Box::new(RushBot::new(rng))),
        "strong" => Ok(Box::new(StrongBot::new(rng, StrongConfig::default()))),
        other => Err(UnknownBot(other.to_string())),
    }
}

/// A uniformly random placement.
pub fn random_placement(rng: &mut SeedRng) -> RedSet {
    let all: Vec<RedSet> = RedSet::all().collect();
    all[rng.gen_range(0..all.len())]
}
