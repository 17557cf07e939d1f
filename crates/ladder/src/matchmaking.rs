//! Matchmaking: who plays the next match of a ladder.
//!
//! One decision picks a *focus* entrant, then fills the other seats:
//!
//! - **Focus**: drawn at random with weight σ² · (1 + 9 / (1 + games)) / (1 + pending)², so a
//!   new or uncertain bot is matched first and most (a new bot weighs about a hundred settled
//!   ones), and an entrant already waiting in queued matches yields to others. Contestants' bots
//!   are the focus whenever the ladder has any; built-in bots only fill seats.
//! - **Opponents**: with probability [`EXPLORE`] any entrant not yet seated, uniformly;
//!   otherwise one of the [`NEAREST`] not yet seated whose μ is nearest the focus's. A table
//!   with more seats than the ladder has entrants is filled with built-in bots (the same one may
//!   sit twice); without built-ins, with copies of the contestants' bots where the ladder file
//!   allows them (`copies`, [`choose_with`]), and otherwise such a table is not played.
//! - **Seats**: the chosen entrants are shuffled into seat order.
//!
//! The decision is pure: the same candidates and the same random stream give the same match.

use rand::seq::SliceRandom;
use rand::Rng;

/// Probability that an opponent is drawn from the whole ladder instead of near the focus.
pub const EXPLORE: f64 = 0.15;
/// How many of the nearest entrants by μ an opponent is drawn from.
pub const NEAREST: usize = 4;

/// An entrant that may be matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub entrant: String,
    pub mu: f64,
    pub sigma: f64,
    pub games: u64,
    /// A built-in bot of the ladder.
    pub builtin: bool,
    /// Its matches queued or running, not yet rated.
    pub pending: u32,
}

/// The focus weight of a candidate (see the module's documentation).
pub fn focus_weight(c: &Candidate) -> f64 {
    let sigma = if c.sigma.is_finite() { c.sigma } else { 0.0 };
    let pending = 1.0 + f64::from(c.pending);
    (sigma * sigma + 1e-9) * (1.0 + 9.0 / (1.0 + c.games as f64)) / (pending * pending)
}

/// The entrants of one match of `seats` seats, as indices into `cands` in seat order; `None`
/// when the ladder cannot fill a table (fewer than two entrants, or too few without built-ins).
pub fn choose(cands: &[Candidate], seats: usize, rng: &mut impl Rng) -> Option<Vec<usize>> {
    choose_with(cands, seats, false, rng)
}

/// [`choose`], where with `copies` a table the entrants and built-ins cannot fill is filled with
/// more seats of the entrants already chosen (any of them, at random).
pub fn choose_with(
    cands: &[Candidate],
    seats: usize,
    copies: bool,
    rng: &mut impl Rng,
) -> Option<Vec<usize>> {
    if seats < 2 || cands.len() < 2 {
        return None;
    }
    let contestants: Vec<usize> = (0..cands.len()).filter(|&i| !cands[i].builtin).collect();
    let builtins: Vec<usize> = (0..cands.len()).filter(|&i| cands[i].builtin).collect();
    if cands.len() < seats && builtins.is_empty() && !copies {
        return None;
    }
    let pool = if contestants.is_empty() {
        (0..cands.len()).collect::<Vec<_>>()
    } else {
        contestants
    };
    let focus = *pool
        .choose_weighted(rng, |&i| focus_weight(&cands[i]))
        .ok()?;
    let mut chosen = vec![focus];
    let mut taken = vec![false; cands.len()];
    taken[focus] = true;
    let mu = cands[focus].mu;
    while chosen.len() < seats {
        let free: Vec<usize> = (0..cands.len()).filter(|&i| !taken[i]).collect();
        let next = if free.is_empty() && builtins.is_empty() {
            // `copies`: another seat of an entrant already at the table.
            *chosen.choose(rng)?
        } else if free.is_empty() {
            *builtins.choose(rng)?
        } else if rng.gen_bool(EXPLORE) {
            *free.choose(rng)?
        } else {
            let mut near = free;
            near.sort_by(|&a, &b| {
                let da = (cands[a].mu - mu).abs();
                let db = (cands[b].mu - mu).abs();
                da.total_cmp(&db).then(a.cmp(&b))
            });
            near.truncate(NEAREST);
            *near.choose(rng)?
        };
        taken[next] = true;
        chosen.push(next);
    }
    chosen.shuffle(rng);
    Some(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;

    fn cand(name: &str, mu: f64, sigma: f64, games: u64, builtin: bool) -> Candidate {
        Candidate {
            entrant: name.into(),
            mu,
            sigma,
            games,
            builtin,
            pending: 0,
        }
    }

    fn rng(seed: u64) -> rand::rngs::StdRng {
        rand::rngs::StdRng::seed_from_u64(seed)
    }

    #[test]
    fn a_new_bot_is_the_focus_of_most_matches() {
        let mut cands: Vec<Candidate> = (0..100)
            .map(|i| cand(&format!("b{i}"), 20.0 + i as f64 * 0.1, 1.5, 200, false))
            .collect();
        cands.push(cand("new", 25.0, 25.0 / 3.0, 0, false));
        let new = cands.len() - 1;
        let mut r = rng(1);
        let plays = (0..1000)
            .filter(|_| choose(&cands, 2, &mut r).unwrap().contains(&new))
            .count();
        // Its weight is about 700 against about 2.3 for each settled bot.
        assert!(plays > 600, "{plays}");
    }

    #[test]
    fn a_waiting_entrant_yields_the_focus() {
        let mut a = cand("a", 25.0, 8.0, 0, false);
        let b = cand("b", 25.0, 8.0, 0, false);
        assert!(focus_weight(&a) == focus_weight(&b));
        a.pending = 3;
        assert!(focus_weight(&a) * 10.0 < focus_weight(&b));
    }

    #[test]
    fn opponents_are_mostly_near_the_focus() {
        // One contestant in the middle and built-ins spread around it.
        let mut cands = vec![cand("me", 25.0, 2.0, 50, false)];
        for i in 0..40 {
            cands.push(cand(&format!("x{i}"), i as f64, 2.0, 50, true));
        }
        let mut r = rng(2);
        let mut near = 0;
        for _ in 0..1000 {
            let m = choose(&cands, 2, &mut r).unwrap();
            let opp = m.iter().copied().find(|&i| i != 0).unwrap();
            if (cands[opp].mu - 25.0).abs() <= 2.0 {
                near += 1;
            }
        }
        // 85% nearest-four (μ 23..=27 minus one) plus a little exploration.
        assert!((800..=950).contains(&near), "{near}");
    }

    #[test]
    fn big_tables_are_filled_with_built_ins_or_not_played() {
        let two = vec![
            cand("a", 25.0, 8.0, 0, false),
            cand("b", 25.0, 8.0, 0, false),
        ];
        assert_eq!(choose(&two, 7, &mut rng(3)), None);
        assert_eq!(choose(&two[..1], 2, &mut rng(3)), None);
        let mut with_builtin = two.clone();
        with_builtin.push(cand("builtin:random", 25.0, 8.0, 0, true));
        let m = choose(&with_builtin, 7, &mut rng(3)).unwrap();
        assert_eq!(m.len(), 7);
        assert!(m.contains(&0) && m.contains(&1));
        assert_eq!(m.iter().filter(|&&i| i == 2).count(), 5);
    }

    #[test]
    fn with_copies_a_table_without_built_ins_is_filled_with_the_entrants_own_bots() {
        let two = vec![
            cand("a", 25.0, 8.0, 0, false),
            cand("b", 25.0, 8.0, 0, false),
        ];
        for seed in 0..50 {
            let m = choose_with(&two, 5, true, &mut rng(seed)).unwrap();
            assert_eq!(m.len(), 5);
            // Both play (the focus and its one opponent), the rest are their copies.
            assert!(m.contains(&0) && m.contains(&1), "{m:?}");
        }
        assert_eq!(choose_with(&two[..1], 5, true, &mut rng(1)), None);
        // Built-ins, where there are some, fill the table before any copy.
        let mut with_builtin = two.clone();
        with_builtin.push(cand("builtin:random", 25.0, 8.0, 0, true));
        let m = choose_with(&with_builtin, 7, true, &mut rng(3)).unwrap();
        assert_eq!(m.iter().filter(|&&i| i == 2).count(), 5);
    }

    #[test]
    fn built_ins_alone_play_each_other() {
        let cands = vec![
            cand("builtin:random", 25.0, 8.0, 0, true),
            cand("builtin:strong", 25.0, 8.0, 0, true),
        ];
        let m = choose(&cands, 2, &mut rng(4)).unwrap();
        let mut s = m.clone();
        s.sort();
        assert_eq!(s, vec![0, 1]);
    }

    proptest! {
        #[test]
        fn every_match_is_a_full_table_of_distinct_entrants_unless_built_ins_fill_it(
            mus in proptest::collection::vec((0.0f64..50.0, 0.5f64..9.0, 0u64..500, any::<bool>(), 0u32..5), 1..30),
            seats in 2usize..8,
            seed in any::<u64>(),
        ) {
            let cands: Vec<Candidate> = mus
                .iter()
                .enumerate()
                .map(|(i, &(mu, sigma, games, builtin, pending))| Candidate {
                    entrant: format!("e{i}"),
                    mu,
                    sigma,
                    games,
                    builtin,
                    pending,
                })
                .collect();
            let has_builtin = cands.iter().any(|c| c.builtin);
            match choose(&cands, seats, &mut rng(seed)) {
                None => prop_assert!(cands.len() < 2 || (cands.len() < seats && !has_builtin)),
                Some(m) => {
                    prop_assert_eq!(m.len(), seats);
                    prop_assert!(m.iter().all(|&i| i < cands.len()));
                    let mut seen = vec![0; cands.len()];
                    for &i in &m {
                        seen[i] += 1;
                    }
                    for (i, &n) in seen.iter().enumerate() {
                        prop_assert!(n <= 1 || cands[i].builtin, "{} seated {} times", i, n);
                    }
                    // A contestant is always seated when the ladder has one.
                    if cands.iter().any(|c| !c.builtin) {
                        prop_assert!(m.iter().any(|&i| !cands[i].builtin));
                    }
                    // Deterministic.
                    prop_assert_eq!(Some(m), choose(&cands, seats, &mut rng(seed)));
                }
            }
        }
    }
}
