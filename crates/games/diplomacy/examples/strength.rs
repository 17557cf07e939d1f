//! Strength report of the `strong` bot: for each power, `strong` plays it against six `random`
//! powers; a game counts as a win when `strong` ends with more centres than every other power.
//!
//! `cargo run --release -p kakehiki-diplomacy --example strength -- [games_per_power] [max_year]`
//! (defaults: 200 games per power, max year 1920; the issue asks for >= 90% per power).

use kakehiki_core::game::play_out;
use kakehiki_core::Bot;
use kakehiki_diplomacy::{BuiltinBot, DiplomacyGame, Power, Rules};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let games: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let max_year: u16 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1920);
    let mut worst = 1.0f64;
    for power in Power::ALL {
        let mut wins = 0;
        let mut solos = 0;
        let mut centres = 0usize;
        for g in 0..games {
            let seed = 1_000_003 * (power.index() as u64 + 1) + g;
            let mut game = DiplomacyGame::new(Rules {
                max_year,
                ..Rules::default()
            });
            let mut bots: Vec<Box<dyn Bot<DiplomacyGame>>> = (0..7)
                .map(|s| {
                    let name = if s == power.index() {
                        "strong"
                    } else {
                        "random"
                    };
                    Box::new(BuiltinBot::new(name, seed, s).expect("built-in bot")) as _
                })
                .collect();
            let outcome = play_out(&mut game, &mut bots);
            let c = game.center_counts();
            let mine = c[power.index()];
            centres += mine;
            if (0..7).filter(|&i| i != power.index()).all(|i| c[i] < mine) {
                wins += 1;
            }
            if outcome.winner == Some(power.index()) {
                solos += 1;
            }
        }
        let rate = wins as f64 / games as f64;
        worst = worst.min(rate);
        println!(
            "{:<8} wins {wins:>4}/{games} ({:>5.1}%), solos {solos:>4}, mean centres {:.1}",
            power.name(),
            100.0 * rate,
            centres as f64 / games as f64
        );
    }
    println!("worst power: {:.1}%", 100.0 * worst);
}
