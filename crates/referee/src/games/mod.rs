//! One driver per game.

pub mod diplomacy;
pub mod geister;
pub mod nac;
#[cfg(feature = "example-game")]
pub mod rps;
pub mod werewolf;
pub mod werewolf_nlp;
