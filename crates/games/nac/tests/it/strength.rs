//! Strength of the `strong` built-in bot: 1,000 seeded 4-player games against three `random`
//! bots, `strong` in seat (game mod 4). A game counts as won only if `strong` finishes strictly
//! first (a draw does not count).
//!
//! `cargo test -p kakehiki-nac --test it -- strength:: --nocapture` prints the figures.

use kakehiki_core::Game;
use kakehiki_nac::bots::{make_bot, play_to_end, NacBot};
use kakehiki_nac::{Params, State, NUM_SEATS};

const GAMES: u64 = 1000;

/// Games out of `GAMES` that `strong` finished strictly first.
fn strong_wins(params: Params) -> u64 {
    let mut wins = 0;
    for game in 0..GAMES {
        let strong_seat = (game % NUM_SEATS as u64) as usize;
        let mut bots: [Box<dyn NacBot>; NUM_SEATS] = std::array::from_fn(|s| {
            make_bot(if s == strong_seat { "strong" } else { "random" }, s, game)
                .expect("a built-in bot")
        });
        let mut state = State::new(params, game as u32);
        play_to_end(&mut state, &mut bots);
        let outcome = Game::outcome(&state).expect("the game is over");
        if outcome.winner == Some(strong_seat) {
            wins += 1;
        }
    }
    wins
}

#[test]
fn strong_beats_three_random_bots_in_nac() {
    let wins = strong_wins(Params::NAC);
    println!(
        "nac: strong finished strictly first in {wins} of {GAMES} games ({:.1}%)",
        wins as f64 / 10.0
    );
    assert!(
        wins * 100 >= 95 * GAMES,
        "strong won only {wins} of {GAMES} nac games"
    );
}

#[test]
fn strong_beats_three_random_bots_in_religion_war() {
    let wins = strong_wins(Params::RELIGION_WAR);
    println!(
        "religion-war: strong finished strictly first in {wins} of {GAMES} games ({:.1}%)",
        wins as f64 / 10.0
    );
    assert!(
        wins * 100 >= 95 * GAMES,
        "strong won only {wins} of {GAMES} religion-war games"
    );
}
