//! The game-independent vocabulary of Kakehiki.
//!
//! Everything here is pure data and pure functions: no processes, clocks or I/O. Each game crate
//! (`crates/games/*`) builds on these types; the referee, the contest layer and the CLI speak only
//! in these types when they do not need to know which game is being played.
//!
//! * [`GameType`] declares a game's nature as data (seats, decision structure, hidden information).
//! * [`Game`] is the pure, seat-observation based interface every engine offers for in-process play.
//! * [`Score`] is an exact rational; [`Outcome`] holds the scores and the winner.
//! * [`SeatSpec`] is the parsed form of `builtin:<name>`, `cmd:<line>`, `tcp`, `tcp-cmd:<line>`.
//! * [`SeatError`] is one recorded failure of a seat (timeout, crash, invalid reply, ...).
//! * [`MatchReport`] is the result every match produces (and `kakehiki play --json` prints).
//! * [`exchange`] is the seat record every replay shares: each request to a seat and its outcome.
//! * [`replay`] holds the JSON-lines container every game's replay uses.

pub mod exchange;
pub mod game;
pub mod game_type;
pub mod human;
pub mod live;
pub mod option;
pub mod private_files;
pub mod replay;
pub mod report;
pub mod rng;
pub mod score;
pub mod seat;
pub mod text;

pub use exchange::{ExchangeOutcome, SeatEnd, SeatExchange, SeatRecord};
pub use game::{Bot, Game};
pub use game_type::{Chance, Dynamics, GameType, Information, Transport};
pub use option::BadOption;
pub use report::{MatchReport, SeatError, SeatErrorKind, SeatReport};
pub use rng::{derive_seed, fresh_seed, keyed_seed, seat_seed, seeded_rng, SeedRng};
pub use score::{
    format_score, score_decimal, score_from_str, score_text_decimal, winner_by_max, Outcome, Score,
};
pub use seat::{SeatSpec, SeatSpecError};
