//! The game-independent vocabulary of Kakehiki.
//!
//! Nearly everything here is pure data and pure functions, with no processes or I/O; the
//! exceptions are the shared state of matches being played ([`live`], [`human`]), the wall clock
//! they stamp ([`unix_ms`]) and the operating system's generator for secrets
//! ([`fresh_seed`], [`secret_hex`]). Each game crate
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
pub use rng::{
    derive_seed, fresh_seed, keyed_seed, same_secret, seat_seed, secret_hex, seeded_rng, SeedRng,
};
pub use score::{
    format_score, score_decimal, score_from_str, score_text_decimal, winner_by_max, Outcome, Score,
};
pub use seat::{SeatSpec, SeatSpecError};

/// The wall-clock time since the Unix epoch (zero before it), for the times logs and pages show;
/// never part of a replay.
pub fn unix_now() -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

/// [`unix_now`] in milliseconds.
pub fn unix_ms() -> u64 {
    unix_now().as_millis() as u64
}
