//! The referee: runs one match of any registered game and records it.
//!
//! Each game has a *driver* (a [`GameDriver`]) in `src/games/<game>.rs` that connects the game's
//! pure engine (`crates/games/<game>`) to its seats: built-in bots in-process, process bots through
//! [`kakehiki_agent`]. Every driver is listed once, in [`registry::GAMES`].

pub mod accept;
pub mod clock;
pub mod driver;
pub mod files;
pub mod games;
mod isolation;
pub mod lifecycle;
pub use kakehiki_core::live;
pub mod overtime;
pub mod profile;
pub mod registry;
pub mod seat;
pub mod strength;
pub mod verify;

pub use driver::{
    BoxFuture, GameDriver, ListenNotice, MatchRecord, MatchSpec, RefereeError, SEED_ENV,
};
pub use overtime::{overtime_record, thinking_record};
pub use registry::{find_game, GAMES};
