//! Strength of the built-in `strong` bot, reported three ways:
//! 1. `strong` against six `random` powers, for each power (a win: more centres than every other
//!    power at the end);
//! 2. `strong` against six `hold` powers, for each power (same measure, plus solos);
//! 3. seven `strong` bots: how often each power solos, how many games end without a solo, and
//!    each power's mean centre count — what the standings of a contest of built-in bots rest on;
//! 4. the time `strong` takes per phase (median, 99th percentile and maximum, per phase type),
//!    against the contest's limits (5 s a movement phase, 2 s a retreat or adjustment phase).
//!
//! Against third-party bots (DumbBot, Project20M) the table is `kakehiki diplomacy strength`
//! (docs/diplomacy-strength.md).
//!
//! `cargo bench -p kakehiki-diplomacy --bench strength`
//! Environment: `KAKEHIKI_STRENGTH_GAMES` games per power in (1) and (2) and games in (3)
//! (default 20), `KAKEHIKI_STRENGTH_MAX_YEAR` (default 1920).

use kakehiki_core::game::play_out;
use kakehiki_core::Bot;
use kakehiki_diplomacy::{BuiltinBot, DiplomacyGame, Power, Rules};

/// Play one game with `names[i]` at seat `i`; final centre counts and the solo winner.
fn game(names: &[&str; 7], seed: u64, max_year: u16) -> ([usize; 7], Option<usize>) {
    let mut game = DiplomacyGame::new(Rules {
        max_year,
        ..Rules::default()
    });
    let mut bots: Vec<Box<dyn Bot<DiplomacyGame>>> = (0..7)
        .map(|s| Box::new(BuiltinBot::new(names[s], seed, s).expect("built-in bot")) as _)
        .collect();
    let outcome = play_out(&mut game, &mut bots);
    (game.center_counts(), outcome.winner)
}

fn one_against_six(other: &str, games: u64, max_year: u16) {
    println!("strong against six {other} powers, {games} games per power, to {max_year}:");
    let mut worst = 1.0f64;
    for power in Power::ALL {
        let mut names = [other; 7];
        names[power.index()] = "strong";
        let (mut wins, mut solos, mut centres) = (0, 0, 0usize);
        for g in 0..games {
            let seed = 1_000_003 * (power.index() as u64 + 1) + g;
            let (c, winner) = game(&names, seed, max_year);
            let mine = c[power.index()];
            centres += mine;
            if (0..7).filter(|&i| i != power.index()).all(|i| c[i] < mine) {
                wins += 1;
            }
            if winner == Some(power.index()) {
                solos += 1;
            }
        }
        let rate = wins as f64 / games as f64;
        worst = worst.min(rate);
        println!(
            "  {:<8} leads {wins:>4}/{games} ({:>5.1}%), solos {solos:>4}, mean centres {:.1}",
            power.name(),
            100.0 * rate,
            centres as f64 / games as f64
        );
    }
    println!("  worst power: {:.1}%", 100.0 * worst);
}

fn seven_strong(games: u64, max_year: u16) {
    println!("seven strong bots, {games} games, to {max_year}:");
    let mut solos = [0u64; 7];
    let mut centres = [0usize; 7];
    let mut no_solo = 0;
    for g in 0..games {
        let (c, winner) = game(&["strong"; 7], 77_777 + g, max_year);
        match winner {
            Some(w) => solos[w] += 1,
            None => no_solo += 1,
        }
        for p in 0..7 {
            centres[p] += c[p];
        }
    }
    println!("  power     solos   solo %  mean centres");
    for p in Power::ALL {
        let i = p.index();
        println!(
            "  {:<8} {:>6} {:>7.1}% {:>13.1}",
            p.name(),
            solos[i],
            100.0 * solos[i] as f64 / games as f64,
            centres[i] as f64 / games as f64
        );
    }
    println!(
        "  no solo  {no_solo:>6} {:>7.1}%",
        100.0 * no_solo as f64 / games as f64
    );
}

fn phase_times(games: u64, max_year: u16) {
    use kakehiki_core::Game;
    use kakehiki_diplomacy::PhaseKind;
    use std::time::Instant;
    println!("time of one strong bot's orders per phase, seven strong bots, {games} games, to {max_year}:");
    let mut times: [Vec<f64>; 3] = Default::default();
    for g in 0..games {
        let mut game = DiplomacyGame::new(Rules {
            max_year,
            ..Rules::default()
        });
        let mut bots: Vec<BuiltinBot> = (0..7)
            .map(|s| BuiltinBot::new("strong", 5_555 + g, s).expect("built-in bot"))
            .collect();
        while game.outcome().is_none() {
            let seats = game.to_act();
            let kind = game.board().phase.kind;
            let mut actions = Vec::with_capacity(seats.len());
            for &s in &seats {
                let obs = game.observe(s);
                let t = Instant::now();
                let orders = bots[s].act(s, &obs);
                let k = match kind {
                    PhaseKind::Movement => 0,
                    PhaseKind::Retreat => 1,
                    PhaseKind::Adjustment => 2,
                };
                times[k].push(t.elapsed().as_secs_f64() * 1000.0);
                actions.push(Some(orders));
            }
            game.apply(&actions);
        }
    }
    println!("  phase        n   median ms    p99 ms    max ms   limit ms");
    for (k, (name, limit)) in [("movement", 5000), ("retreat", 2000), ("adjustment", 2000)]
        .into_iter()
        .enumerate()
    {
        let v = &mut times[k];
        if v.is_empty() {
            continue;
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        println!(
            "  {name:<10} {:>5} {:>11.2} {:>9.2} {:>9.2} {limit:>10}",
            v.len(),
            at(0.5),
            at(0.99),
            v[v.len() - 1]
        );
    }
}

fn main() {
    let env = |k: &str| std::env::var(k).ok().and_then(|s| s.parse::<u64>().ok());
    let games = env("KAKEHIKI_STRENGTH_GAMES").unwrap_or(20).max(1);
    let max_year = env("KAKEHIKI_STRENGTH_MAX_YEAR")
        .map(|y| y.clamp(1901, 9999) as u16)
        .unwrap_or(1920);
    one_against_six("random", games, max_year);
    one_against_six("hold", games, max_year);
    seven_strong(games, max_year);
    phase_times(games.min(5), max_year);
}
