//! One driver per game.

pub mod geister;
pub mod nac;
pub mod werewolf;
