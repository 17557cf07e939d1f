//! One driver per game.

pub mod nac;
pub mod werewolf;
