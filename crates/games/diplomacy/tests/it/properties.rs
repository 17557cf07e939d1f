//! Property tests over random self-play: random legal orders never crash the adjudicator, units
//! are conserved apart from the dislodged and destroyed, no two units share a province, and the
//! result does not depend on the order in which orders are listed.

use kakehiki_core::{seeded_rng, Game};
use kakehiki_diplomacy::bots::random_orders;
use kakehiki_diplomacy::engine::{BuiltinBot, DiplomacyGame, Rules};
use kakehiki_diplomacy::{adjudicate, standard, Board, Order, PhaseKind, Power, Resolver};
use proptest::prelude::*;
use rand::seq::SliceRandom;

fn count_units(b: &Board) -> usize {
    b.units.iter().flatten().count()
}

fn check_phase(board: &Board, orders: &[(Power, Order)], shuffle_seed: u64) {
    let map = standard();
    let mut r = Resolver::new();
    let mut after = board.clone();
    let out = adjudicate(&mut r, map, &mut after, orders);
    // The one-pass adjustment check agrees with the per-power rule.
    assert_eq!(
        after.adjustment_needed(),
        Power::ALL.iter().any(|&p| after.must_or_may_adjust(p)),
        "adjustment_needed in {}",
        after.phase
    );
    // The random bot's orders are legal: the only void ones are unmatched supports and convoys.
    for e in &out.errors {
        assert!(
            matches!(e.reason, kakehiki_diplomacy::VoidReason::Unmatched(_)),
            "illegal random order: {:?} {:?}",
            orders[e.index],
            e.reason
        );
    }
    // No two units in one province: the board is indexed by province, so check locations agree.
    for (p, u) in after.units.iter().enumerate() {
        if let Some(u) = u {
            assert_eq!(
                map.prov_of(u.loc) as usize,
                p,
                "unit stored under the wrong province"
            );
            assert!(map.can_stand(u.kind, u.loc));
        }
    }
    let before = count_units(board) + board.dislodged.iter().flatten().count();
    let dislodged_after = after.dislodged.iter().flatten().count();
    match board.phase.kind {
        PhaseKind::Movement | PhaseKind::Retreat => {
            assert_eq!(
                count_units(&after) + dislodged_after + out.destroyed.len(),
                before,
                "conservation"
            );
        }
        PhaseKind::Adjustment => {
            let built = out.results.iter().filter(|(u, r)| {
                *r == kakehiki_diplomacy::OrderResult::Succeeds
                    && board.units[map.prov_of(u.loc) as usize].is_none()
            });
            assert_eq!(
                count_units(&after) + out.destroyed.len(),
                before + built.count(),
                "conservation"
            );
        }
    }
    // A dislodged unit is never also on the board in its province under someone else's id.
    for d in after.dislodged.iter().flatten() {
        assert!(d.options != 0, "dislodged units listed have options");
    }
    // Independence of listing order (within each power's list the relative order is kept only
    // when a power lists two orders for one unit; random bots give one per unit).
    let mut shuffled = orders.to_vec();
    shuffled.shuffle(&mut seeded_rng(shuffle_seed, "shuffle"));
    let mut after2 = board.clone();
    let out2 = adjudicate(&mut r, map, &mut after2, &shuffled);
    assert_eq!(after, after2, "position depends on the listing order");
    let mut a = out.results.clone();
    let mut b = out2.results.clone();
    a.sort_by_key(|(u, _)| (u.loc, u.power));
    b.sort_by_key(|(u, _)| (u.loc, u.power));
    assert_eq!(a, b);
}

fn self_play(seed: u64, phases: usize) {
    let map = standard();
    let mut board = Board::standard_start();
    let mut r = Resolver::new();
    let mut rng = seeded_rng(seed, "props");
    for i in 0..phases {
        let mut orders = Vec::new();
        for p in Power::ALL {
            for o in random_orders(map, &board, p, &mut rng) {
                orders.push((p, o));
            }
        }
        check_phase(&board, &orders, seed ^ i as u64);
        adjudicate(&mut r, map, &mut board, &orders);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_self_play_keeps_invariants(seed in any::<u64>()) {
        self_play(seed, 60);
    }

    #[test]
    fn arbitrary_order_text_never_crashes(seed in any::<u64>(), texts in proptest::collection::vec("[A-Za-z /()>-]{0,24}", 0..40)) {
        let map = standard();
        let mut board = Board::standard_start();
        let mut r = Resolver::new();
        let mut rng = seeded_rng(seed, "text");
        let mut orders = Vec::new();
        for t in &texts {
            if let Ok(o) = kakehiki_diplomacy::parse_order(map, t) {
                orders.push((*Power::ALL.choose(&mut rng).unwrap(), o));
            }
        }
        for _ in 0..5 {
            adjudicate(&mut r, map, &mut board, &orders);
        }
    }
}

#[test]
fn random_games_reach_the_year_limit_or_a_solo() {
    for seed in 0..4u64 {
        let mut g = DiplomacyGame::new(Rules {
            max_year: 1910,
            ..Rules::default()
        });
        let mut bots: Vec<Box<dyn kakehiki_core::Bot<DiplomacyGame>>> = (0..7)
            .map(|s| Box::new(BuiltinBot::new("random", seed, s).unwrap()) as _)
            .collect();
        let outcome = kakehiki_core::game::play_out(&mut g, &mut bots);
        assert!(g.end_reason().is_some());
        let last = g.history().last().unwrap().phase;
        match g.end_reason().unwrap() {
            kakehiki_diplomacy::EndReason::YearLimit => {
                assert_eq!(
                    (last.season, last.year),
                    (kakehiki_diplomacy::Season::Fall, 1910),
                    "{last}"
                );
                assert_ne!(last.kind, PhaseKind::Adjustment);
            }
            kakehiki_diplomacy::EndReason::Solo(p) => assert!(g.centers(p) >= 18),
            kakehiki_diplomacy::EndReason::Draw => panic!("no draw votes in this game"),
        }
        let total: kakehiki_core::Score = outcome.scores.iter().sum();
        assert_eq!(total, kakehiki_core::Score::from_integer(1));
        assert!(g.to_act().is_empty());
    }
}

#[test]
fn self_play_is_deterministic_from_the_seed() {
    let run = |seed: u64| {
        let mut g = DiplomacyGame::new(Rules {
            max_year: 1905,
            ..Rules::default()
        });
        let mut bots: Vec<Box<dyn kakehiki_core::Bot<DiplomacyGame>>> = (0..7)
            .map(|s| Box::new(BuiltinBot::new("random", seed, s).unwrap()) as _)
            .collect();
        kakehiki_core::game::play_out(&mut g, &mut bots);
        g.history().to_vec()
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

/// Positions from random self-play; in each, every power's `strong` orders.
fn strong_orders_in_random_positions(seed: u64, phases: usize) {
    let map = standard();
    let mut board = Board::standard_start();
    let mut r = Resolver::new();
    let mut rng = seeded_rng(seed, "strong-props");
    for _ in 0..phases {
        let mut orders = Vec::new();
        for p in Power::ALL {
            let mut bot = BuiltinBot::new("strong", seed, p.index()).unwrap();
            let mine = bot.orders(&board, p);
            let again = BuiltinBot::new("strong", seed, p.index())
                .unwrap()
                .orders(&board, p);
            assert_eq!(mine, again, "strong is deterministic from the seed");
            let units: Vec<_> = mine
                .iter()
                .filter_map(|o| o.unit())
                .map(|u| u.prov)
                .collect();
            let mut distinct = units.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), units.len(), "one order per unit: {mine:?}");
            match board.phase.kind {
                PhaseKind::Movement => {
                    assert_eq!(units.len(), board.units_of(p).count(), "every unit ordered");
                }
                PhaseKind::Retreat => {
                    let dislodged = board.dislodged_of(p).count();
                    assert_eq!(units.len(), dislodged, "every dislodged unit ordered");
                }
                PhaseKind::Adjustment => {
                    let n = board.adjustment(p);
                    let sites = kakehiki_diplomacy::bots::build_sites(&board, p).len() as i32;
                    let expected = if n > 0 { n.min(sites) } else { -n };
                    assert_eq!(mine.len() as i32, expected, "adjustments of {p}: {mine:?}");
                }
            }
            orders.extend(mine.into_iter().map(|o| (p, o)));
        }
        let mut after = board.clone();
        let out = adjudicate(&mut r, map, &mut after, &orders);
        // The strong bot's orders are legal; a support may be left unmatched only by another
        // power's orders, never by its own (its supports name its own units' orders).
        for e in &out.errors {
            let supported_own = match orders[e.index].1 {
                Order::SupportHold { target, .. } | Order::SupportMove { target, .. } => {
                    board.units[target.prov as usize].is_some_and(|u| u.power == e.power)
                }
                _ => false,
            };
            assert!(
                matches!(e.reason, kakehiki_diplomacy::VoidReason::Unmatched(_)) && !supported_own,
                "illegal strong order in {}: {:?} {:?}; its orders: {:?}",
                board.phase,
                orders[e.index],
                e.reason,
                orders.iter().filter(|o| o.0 == e.power).collect::<Vec<_>>()
            );
        }
        // Random orders move the game on, so positions vary.
        let mut next = Vec::new();
        for p in Power::ALL {
            for o in random_orders(map, &board, p, &mut rng) {
                next.push((p, o));
            }
        }
        adjudicate(&mut r, map, &mut board, &next);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    #[test]
    fn strong_orders_are_legal_complete_and_deterministic(seed in any::<u64>()) {
        strong_orders_in_random_positions(seed, 24);
    }
}

/// Found by the property above on CI: in F1908M strong Turkey's army supported a move of its
/// fleet that the fleet no longer made.
#[test]
fn strong_supports_match_their_own_units_orders_seed_14652057594896246149() {
    strong_orders_in_random_positions(14652057594896246149, 24);
}
