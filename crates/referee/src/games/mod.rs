//! One driver per game.

pub mod diplomacy;
pub mod geister;
pub mod nac;
pub mod werewolf;
pub mod werewolf_nlp;
