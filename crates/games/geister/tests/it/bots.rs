//! Built-in bots: legal, deterministic from their seed, and `strong` beats `random` and `rush`
//! on a small fixed sample (the 1,000-game figures come from `examples/winrate.rs`).

use kakehiki_core::game::play_out;
use kakehiki_core::{seeded_rng, Bot, Game};
use kakehiki_geister::bots::make_bot;
use kakehiki_geister::engine::{Action, Geister, PlayRules};
use kakehiki_geister::Rules;

fn bots(names: [&str; 2], seed: u64) -> Vec<Box<dyn Bot<Geister>>> {
    (0..2)
        .map(|s| -> Box<dyn Bot<Geister>> {
            make_bot(names[s], seeded_rng(seed, &format!("seat-{s}"))).unwrap()
        })
        .collect()
}

/// Play with a check that every action is legal for the seat that makes it.
fn checked_game(names: [&str; 2], seed: u64, rules: &Rules) -> (Geister, Vec<Action>) {
    let mut g = Geister::new(PlayRules::from(rules));
    let mut b = bots(names, seed);
    let mut actions = Vec::new();
    while !g.is_over() {
        let seats = g.to_act();
        let mut acts = Vec::new();
        for &s in &seats {
            let a = b[s].act(s, &g.observe(s));
            if let Action::Move(m) = a {
                assert!(g.check(s, m).is_ok(), "{} played illegal {:?}", names[s], m);
            }
            actions.push(a);
            acts.push(Some(a));
        }
        g.apply(&acts);
    }
    (g, actions)
}

#[test]
fn every_bot_plays_legal_moves_and_is_deterministic() {
    for names in [["random", "rush"], ["rush", "strong"], ["strong", "random"]] {
        for seed in 0..3 {
            let (g1, a1) = checked_game(names, seed, &Rules::seed());
            let (g2, a2) = checked_game(names, seed, &Rules::seed());
            assert_eq!(a1, a2);
            assert_eq!(g1.end(), g2.end());
            assert!(g1.end().unwrap().reason.by_rules(), "{:?}", g1.end());
        }
    }
    assert!(make_bot("nope", seeded_rng(0, "x")).is_err());
}

fn wins(bot: &str, opp: &str, games: u64) -> u64 {
    let rules = Rules::gpw();
    let mut won = 0;
    for game in 0..games {
        let seat = (game % 2) as usize;
        let names = if seat == 0 { [bot, opp] } else { [opp, bot] };
        let mut g = Geister::new(PlayRules::from(&rules));
        let mut b = bots(names, 1000 + game);
        if play_out(&mut g, &mut b).winner == Some(seat) {
            won += 1;
        }
    }
    won
}

#[test]
fn strong_beats_random_and_rush() {
    let vs_random = wins("strong", "random", 20);
    assert!(
        vs_random >= 18,
        "strong won only {vs_random}/20 against random"
    );
    let vs_rush = wins("strong", "rush", 20);
    assert!(vs_rush >= 16, "strong won only {vs_rush}/20 against rush");
}

#[test]
fn rush_beats_random_mostly() {
    // rush runs its blue ghosts at the exits; random rarely stops it.
    let w = wins("rush", "random", 40);
    assert!(w >= 24, "rush won only {w}/40 against random");
}
