//! The one list of games. Adding a game: write `src/games/<game>.rs` with a [`GameDriver`] and add
//! it here.

use crate::driver::{GameDriver, RefereeError};
use crate::games;

/// Every registered game, in the order the CLI lists them.
pub static GAMES: &[&dyn GameDriver] = &[
    &games::nac::NAC,
    &games::nac::RELIGION_WAR,
    &games::werewolf::WEREWOLF,
    &games::werewolf_nlp::WEREWOLF_NLP,
    &games::geister::GEISTER,
    &games::diplomacy::DIPLOMACY,
];

// ANCHOR: example-games
/// Games built only for tests (the `example-game` feature, which the `kakehiki` crate's tests
/// turn on): played, re-run and viewed by name like any game, never listed in [`GAMES`] (so
/// not in `kakehiki games`, the demo or the docs' lists).
pub static EXAMPLE_GAMES: &[&dyn GameDriver] = &[
    #[cfg(feature = "example-game")]
    &games::rps::RPS,
];
// ANCHOR_END: example-games

/// The driver of the named game.
pub fn find_game(name: &str) -> Result<&'static dyn GameDriver, RefereeError> {
    GAMES
        .iter()
        .chain(EXAMPLE_GAMES)
        .copied()
        .find(|g| g.game_type().name == name)
        .ok_or_else(|| {
            RefereeError::UnknownGame(
                name.to_string(),
                GAMES
                    .iter()
                    .map(|g| g.game_type().name)
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        })
}
