//! One driver per game.

pub mod nac;
