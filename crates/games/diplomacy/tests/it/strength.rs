//! The `strong` bot against six `random` or six `hold` powers ends with more centres than any of
//! them. The full measurement (200 games per power, >= 90% required) is `--ignored`; the bench
//! `strength` (`cargo bench -p kakehiki-diplomacy --bench strength`) prints the figures against
//! `random` and `hold` and the solo table of seven `strong` bots.

use kakehiki_core::game::play_out;
use kakehiki_core::Bot;
use kakehiki_diplomacy::{BuiltinBot, DiplomacyGame, Power, Rules};

fn win_rate(power: Power, games: u64, max_year: u16) -> f64 {
    win_rate_against("random", power, games, max_year)
}

fn win_rate_against(other: &str, power: Power, games: u64, max_year: u16) -> f64 {
    let mut wins = 0;
    for g in 0..games {
        let seed = 7_919 * (power.index() as u64 + 1) + g;
        let mut game = DiplomacyGame::new(Rules {
            max_year,
            ..Rules::default()
        });
        let mut bots: Vec<Box<dyn Bot<DiplomacyGame>>> = (0..7)
            .map(|s| {
                let name = if s == power.index() { "strong" } else { other };
                Box::new(BuiltinBot::new(name, seed, s).unwrap()) as _
            })
            .collect();
        play_out(&mut game, &mut bots);
        let c = game.center_counts();
        if (0..7)
            .filter(|&i| i != power.index())
            .all(|i| c[i] < c[power.index()])
        {
            wins += 1;
        }
    }
    wins as f64 / games as f64
}

#[test]
fn strong_leads_random_powers_in_short_games() {
    for p in Power::ALL {
        assert_eq!(win_rate(p, 1, 1906), 1.0, "{p}");
    }
}

#[test]
fn strong_leads_hold_powers_in_short_games() {
    for p in Power::ALL {
        assert_eq!(win_rate_against("hold", p, 1, 1904), 1.0, "{p}");
    }
}

#[test]
#[ignore = "about 6 minutes in release: cargo test --release -p kakehiki-diplomacy --test it -- strength:: --ignored"]
fn strong_wins_90_percent_of_200_games_per_power() {
    for p in Power::ALL {
        let r = win_rate(p, 200, 1920);
        assert!(r >= 0.9, "{p}: {r}");
    }
}
