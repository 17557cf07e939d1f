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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MatchSpec;
    use kakehiki_core::SeatSpec;

    fn silent_table(d: &dyn GameDriver) -> MatchSpec {
        let n = d.game_type().default_seats;
        MatchSpec::new(
            d.game_type().name,
            1,
            vec![SeatSpec::Builtin("silent".into()); n],
        )
    }

    /// Every game checks a match without playing it as `play` does first: its defaults pass, an
    /// unknown option, an unknown rule set and a wrong seat count are refused.
    #[test]
    fn every_game_checks_a_spec_as_it_plays() {
        for d in GAMES.iter().chain(EXAMPLE_GAMES) {
            let name = d.game_type().name;
            let spec = silent_table(*d);
            d.check_spec(&spec)
                .unwrap_or_else(|e| panic!("{name}: defaults refused: {e}"));
            let mut bad = spec.clone();
            bad.options.insert("bogus".into(), "1".into());
            assert!(
                matches!(d.check_spec(&bad), Err(RefereeError::UnknownOption { .. })),
                "{name}"
            );
            let mut bad = spec.clone();
            bad.rules = Some("no-such-rules".into());
            assert!(d.check_spec(&bad).is_err(), "{name}: rules");
            let mut bad = spec.clone();
            bad.seats = vec![SeatSpec::Builtin("silent".into()); 40];
            assert!(d.check_spec(&bad).is_err(), "{name}: 40 seats");
        }
    }
}
