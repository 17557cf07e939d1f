//! Formats: seat balance, the qualifier's stopping rule, game sets, Geister leagues.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::{contest_text, parse};
use kakehiki_contest::schedule::{match_seed, seed_leagues};
use kakehiki_contest::{schedule, Format};
use proptest::prelude::*;

fn seat_counts(def: &kakehiki_contest::ContestDef) -> BTreeMap<(usize, usize), u64> {
    let s = schedule(def, &BTreeMap::new());
    let mut counts = BTreeMap::new();
    for m in &s.matches {
        for (seat, &e) in m.entrants.iter().enumerate() {
            *counts.entry((e, seat)).or_insert(0) += 1;
        }
    }
    counts
}

#[test]
fn round_robin_every_entrant_plays_every_seat_equally_often() {
    for (game, k, n_max) in [
        ("duel", 2, 7),
        ("table", 3, 6),
        ("table", 4, 7),
        ("table", 7, 8),
    ] {
        for n in k..=n_max {
            for mult in 1..=2 {
                let def = parse(&contest_text(
                    "rr",
                    game,
                    "round-robin",
                    n,
                    &format!("seats = {k}\ngames = {}", k * mult),
                ));
                let counts = seat_counts(&def);
                let values: BTreeSet<u64> = counts.values().copied().collect();
                assert_eq!(
                    counts.len(),
                    n * k,
                    "every entrant in every seat ({game}, n={n}, k={k})"
                );
                assert_eq!(
                    values.len(),
                    1,
                    "unequal seat counts ({game}, n={n}, k={k}): {counts:?}"
                );
                let s = schedule(&def, &BTreeMap::new());
                let tables = kakehiki_contest::schedule::binomial(n as u64, k as u64);
                assert_eq!(s.matches.len() as u64, tables * (k * mult) as u64);
                assert!(s.complete);
                for m in &s.matches {
                    let distinct: BTreeSet<_> = m.entrants.iter().collect();
                    assert_eq!(distinct.len(), k, "an entrant sits twice at one table");
                }
            }
        }
    }
}

#[test]
fn geister_gpw_plays_every_pairing_twice_with_the_first_player_swapped() {
    let def = parse(&contest_text("gpw", "duel", "geister-gpw", 5, ""));
    assert_eq!(def.games, 2);
    let s = schedule(&def, &BTreeMap::new());
    assert_eq!(s.matches.len(), 10 * 2);
    let mut ordered: BTreeMap<(usize, usize), u32> = BTreeMap::new();
    for m in &s.matches {
        *ordered.entry((m.entrants[0], m.entrants[1])).or_default() += 1;
    }
    for a in 0..5 {
        for b in 0..5 {
            if a != b {
                assert_eq!(
                    ordered.get(&(a, b)),
                    Some(&1),
                    "{a} first against {b} exactly once"
                );
            }
        }
    }
}

#[test]
fn seeds_derive_from_the_base_seed_and_the_schedule_is_deterministic() {
    let def = parse(&contest_text("d", "table", "round-robin", 6, ""));
    let a = schedule(&def, &BTreeMap::new());
    let b = schedule(&def, &BTreeMap::new());
    assert_eq!(a, b);
    let seeds: BTreeSet<u64> = a.matches.iter().map(|m| m.seed).collect();
    assert_eq!(seeds.len(), a.matches.len(), "distinct seeds");
    assert!(a
        .matches
        .iter()
        .all(|m| m.seed == match_seed(7, m.index) && m.seed <= u64::from(u32::MAX)));
    let other =
        parse(&contest_text("d", "table", "round-robin", 6, "").replace("seed = 7", "seed = 8"));
    assert_ne!(
        schedule(&other, &BTreeMap::new()).matches[0].seed,
        a.matches[0].seed
    );
}

fn check_qualifier(n: usize, k: usize, min_games: u64, seed: u64, format: &str, game: &str) {
    let text = contest_text(
        "q",
        game,
        format,
        n,
        &format!("seats = {k}\nmin_games = {min_games}"),
    )
    .replace("seed = 7", &format!("seed = {seed}"));
    let def = parse(&text);
    let s = schedule(&def, &BTreeMap::new());
    let mut counts = vec![0u64; n];
    for m in &s.matches {
        let distinct: BTreeSet<_> = m.entrants.iter().collect();
        assert_eq!(distinct.len(), k);
        for &e in &m.entrants {
            counts[e] += 1;
        }
    }
    assert!(
        counts.iter().all(|&c| c >= min_games),
        "every entrant has K games: {counts:?}"
    );
    // Stops exactly then: without the last table someone had fewer than K.
    let last = s.matches.last().expect("at least one table");
    let before: Vec<u64> = (0..n)
        .map(|e| counts[e] - u64::from(last.entrants.contains(&e)))
        .collect();
    assert!(
        before.iter().any(|&c| c < min_games),
        "the qualifier went on after everyone had K games"
    );
}

#[test]
fn the_qualifier_stops_exactly_when_every_entrant_has_k_games() {
    for seed in 0..5 {
        check_qualifier(20, 15, 30, seed, "aiwolf-qualifier", "wolf");
        check_qualifier(15, 15, 3, seed, "aiwolf-qualifier", "wolf");
        check_qualifier(9, 4, 12, seed, "random-tables", "table");
        check_qualifier(7, 7, 1, seed, "random-tables", "table");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn qualifier_stopping_rule_holds_for_any_field(n in 5usize..25, k_off in 0usize..6, min_games in 1u64..20, seed in 0u64..1000) {
        let k = (5 + k_off).min(n);
        check_qualifier(n, k, min_games, seed, "aiwolf-qualifier", "wolf");
    }
}

#[test]
fn a_game_set_keeps_one_seat_order_per_set() {
    let def = parse(&contest_text(
        "set",
        "wolf",
        "aiwolf-game-set",
        5,
        "games = 4\nsets = 3",
    ));
    let s = schedule(&def, &BTreeMap::new());
    assert_eq!(s.matches.len(), 12);
    for set in s.matches.chunks(4) {
        assert!(set
            .iter()
            .all(|m| m.entrants == set[0].entrants && m.stage == set[0].stage));
        let mut sorted = set[0].entrants.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
    }
}

#[test]
fn geister_seed_leagues_follow_the_seed_defaults() {
    for (n, leagues, sizes, q) in [
        (8, 2, vec![4, 4], 2),
        (9, 3, vec![3, 3, 3], 1),
        (6, 2, vec![3, 3], 2),
        (13, 4, vec![4, 3, 3, 3], 1),
    ] {
        let def = parse(&contest_text("s", "duel", "geister-seed", n, ""));
        assert_eq!(def.format, Format::GeisterSeed);
        let (ls, qualifiers) = seed_leagues(&def);
        assert_eq!(ls.len(), leagues, "n={n}");
        assert_eq!(ls.iter().map(Vec::len).collect::<Vec<_>>(), sizes, "n={n}");
        assert_eq!(qualifiers, q, "n={n}");
        let all: BTreeSet<usize> = ls.iter().flatten().copied().collect();
        assert_eq!(all.len(), n);
    }
    let def = parse(&contest_text("s", "duel", "geister-seed", 5, ""));
    assert!(
        seed_leagues(&def).0.is_empty(),
        "five entrants play a single final league"
    );
    let s = schedule(&def, &BTreeMap::new());
    assert_eq!(s.matches.len(), 10);
    assert!(s.matches.iter().all(|m| m.stage == "final"));
}

#[test]
fn geister_seed_schedules_the_final_only_after_the_leagues() {
    let def = parse(&contest_text("s", "duel", "geister-seed", 8, ""));
    let s = schedule(&def, &BTreeMap::new());
    assert!(!s.complete);
    assert_eq!(s.matches.len(), 12, "two leagues of four: 6 games each");
    assert!(s.matches.iter().all(|m| m.stage.starts_with("league ")));
}
