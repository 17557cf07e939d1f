//! Win rates of the built-in bots, first player alternating, games seeded 0..n.
//!
//! `cargo run --release -p kakehiki-geister --example winrate -- [games] [rules] [bot] [opponent]...`
//! e.g. `-- 1000 gpw strong random rush` plays strong against random and against rush.

use kakehiki_core::game::play_out;
use kakehiki_core::{seeded_rng, Bot};
use kakehiki_geister::bots::{make_bot, StrongBot, StrongConfig};
use kakehiki_geister::engine::{EndReason, Geister, PlayRules};
use kakehiki_geister::Rules;
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let rules =
        Rules::named(args.get(1).map(String::as_str).unwrap_or("gpw")).expect("rules: gpw or seed");
    let bot = args.get(2).cloned().unwrap_or_else(|| "strong".into());
    let opponents: Vec<String> = if args.len() > 3 {
        args[3..].to_vec()
    } else {
        vec!["random".into(), "rush".into()]
    };
    // GEISTER_STRONG_ITERATIONS overrides the strong bot's iteration budget (for tuning).
    let iterations: Option<u32> = std::env::var("GEISTER_STRONG_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok());
    for opp in &opponents {
        let start = std::time::Instant::now();
        let (mut wins, mut draws, mut losses, mut plies) = (0u64, 0u64, 0u64, 0u64);
        let mut reasons: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut lost_by: BTreeMap<&'static str, u64> = BTreeMap::new();
        for game in 0..n {
            let bot_seat = (game % 2) as usize;
            let mut g = Geister::new(PlayRules::from(&rules));
            let names = if bot_seat == 0 {
                [&bot, opp]
            } else {
                [opp, &bot]
            };
            let mut bots: Vec<Box<dyn Bot<Geister> + '_>> = (0..2)
                .map(|s| -> Box<dyn Bot<Geister>> {
                    let rng = seeded_rng(game, &format!("seat-{s}"));
                    match (names[s].as_str(), iterations) {
                        ("strong", Some(it)) => Box::new(StrongBot::new(
                            rng,
                            StrongConfig {
                                iterations: it,
                                ..StrongConfig::default()
                            },
                        )),
                        (name, _) => make_bot(name, rng).unwrap(),
                    }
                })
                .collect();
            let outcome = play_out(&mut g, &mut bots);
            plies += g.ply() as u64;
            let reason = g.end().map(|e| e.reason).unwrap_or(EndReason::PlyLimitDraw);
            match outcome.winner {
                Some(w) if w == bot_seat => {
                    wins += 1;
                    *reasons.entry(reason.as_str()).or_default() += 1;
                }
                Some(_) => {
                    losses += 1;
                    *lost_by.entry(reason.as_str()).or_default() += 1;
                }
                None => draws += 1,
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{bot} vs {opp} ({}): {n} games, won {wins} ({:.1}%), drew {draws}, lost {losses}; wins by {reasons:?}; losses by {lost_by:?}; {:.1} plies/game; {:.1} s ({:.2} ms per ply)",
            rules.name,
            100.0 * wins as f64 / n as f64,
            plies as f64 / n as f64,
            secs,
            1000.0 * secs / plies.max(1) as f64
        );
    }
}
