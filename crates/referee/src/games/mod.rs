//! One driver per game.

pub mod diplomacy;
mod diplomacy_daide;
pub mod geister;
pub mod nac;
#[cfg(feature = "example-game")]
pub mod rps;
pub mod werewolf;
pub mod werewolf_nlp;
