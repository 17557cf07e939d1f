//! Ratings: Weng-Lin (updated match by match, in match-index order) and the official batch fit,
//! a Bradley-Terry model by maximum likelihood on the Elo scale with bootstrap confidence
//! intervals. The batch fit depends only on the set of games, never on their order.

use kakehiki_core::seeded_rng;
use rand::Rng;
use serde::Serialize;
pub use skillratings::weng_lin::WengLinRating;
use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig};
use skillratings::MultiTeamOutcome;

/// One game for rating purposes: the entrants in seat order and their scores (higher is
/// better; equal scores are a tie between those seats).
#[derive(Debug, Clone, PartialEq)]
pub struct RatedGame {
    pub entrants: Vec<usize>,
    pub scores: Vec<f64>,
}

/// 1-based ranks by score, best first; equal scores share a rank.
fn ranks(scores: &[f64]) -> Vec<usize> {
    scores
        .iter()
        .map(|s| 1 + scores.iter().filter(|o| **o > *s).count())
        .collect()
}

/// The 1-based place of each seat by score, best first (equal scores share a place).
pub fn places(scores: &[f64]) -> Vec<usize> {
    ranks(scores)
}

/// The Weng-Lin ratings of the seats of one game after it, in seat order, from their ratings
/// before it and their scores (higher is better; equal scores tie). Fewer than two seats, or
/// a score that is not a number, leave the ratings as they were.
pub fn weng_lin_game(seats: &[WengLinRating], scores: &[f64]) -> Vec<WengLinRating> {
    if seats.len() < 2 || seats.len() != scores.len() || scores.iter().any(|s| s.is_nan()) {
        return seats.to_vec();
    }
    let r = ranks(scores);
    let teams: Vec<[WengLinRating; 1]> = seats.iter().map(|s| [*s]).collect();
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(&r)
        .map(|(t, &rank)| (&t[..], MultiTeamOutcome::new(rank)))
        .collect();
    weng_lin_multi_team(&input, &WengLinConfig::new())
        .into_iter()
        .zip(seats)
        .map(|(team, old)| team.first().copied().unwrap_or(*old))
        .collect()
}

/// The Weng-Lin ratings of the seats of a team game after it, in seat order, from their ratings
/// before it, their scores (higher is better) and their teams (seats with equal `teams` labels
/// play on one side).
///
/// Weng-Lin's own team model adds up a team's ratings, so the bigger side of an uneven game
/// (Werewolf's village, 3 seats against 2 at 5 players and 11 against 4 at 15) would be
/// expected to win nearly always: its wins would teach nothing, its losses would cost much, and
/// the ratings of a whole ladder would drift down together. Here each side plays as one player
/// of its members' mean rating (μ the mean μ, σ² the mean σ²): sides of equal members are
/// even, whatever their sizes. The side's change is shared out to its members in proportion to
/// their σ² (an uncertain member moves more; equal σ, equal moves), σ shrinks by the side's
/// ratio, and finally every seat gives back the table's mean change in μ, so that a match
/// neither creates nor destroys rating: the ladder's mean stays where it was. A side is ranked
/// by its best seat's score (a seat that forfeited on a winning side shares its side's result).
///
/// Fewer than two sides (every seat on one side) say nothing about the sides, so each seat is
/// rated on its own by its score, as [`weng_lin_game`] does. Lengths that differ, or a score
/// that is not a number, leave the ratings as they were.
pub fn weng_lin_team_game<T: PartialEq>(
    seats: &[WengLinRating],
    scores: &[f64],
    teams: &[T],
) -> Vec<WengLinRating> {
    if seats.len() != scores.len()
        || seats.len() != teams.len()
        || scores.iter().any(|s| s.is_nan())
    {
        return seats.to_vec();
    }
    // Each seat's side as an index into the distinct labels, in the order of their first seat.
    let mut labels: Vec<&T> = Vec::new();
    let side_of: Vec<usize> = teams
        .iter()
        .map(|t| {
            labels.iter().position(|l| *l == t).unwrap_or_else(|| {
                labels.push(t);
                labels.len() - 1
            })
        })
        .collect();
    if labels.len() < 2 {
        return weng_lin_game(seats, scores);
    }
    let n = labels.len();
    let (mut mu, mut var, mut count) = (vec![0.0; n], vec![0.0; n], vec![0usize; n]);
    let mut best = vec![f64::NEG_INFINITY; n];
    for ((&t, seat), &score) in side_of.iter().zip(seats).zip(scores) {
        mu[t] += seat.rating;
        var[t] += seat.uncertainty * seat.uncertainty;
        count[t] += 1;
        best[t] = best[t].max(score);
    }
    let sides: Vec<[WengLinRating; 1]> = (0..n)
        .map(|t| {
            let k = count[t] as f64;
            [WengLinRating {
                rating: mu[t] / k,
                uncertainty: (var[t] / k).sqrt(),
            }]
        })
        .collect();
    let rank = ranks(&best);
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = sides
        .iter()
        .zip(&rank)
        .map(|(side, &r)| (&side[..], MultiTeamOutcome::new(r)))
        .collect();
    let after = weng_lin_multi_team(&input, &WengLinConfig::new());
    let moved: Vec<(f64, f64)> = (0..n)
        .map(|t| {
            let before = sides[t][0];
            let now = after
                .get(t)
                .and_then(|a| a.first())
                .copied()
                .unwrap_or(before);
            (
                now.rating - before.rating,
                now.uncertainty / before.uncertainty,
            )
        })
        .collect();
    let mut out: Vec<WengLinRating> = side_of
        .iter()
        .zip(seats)
        .map(|(&t, old)| {
            let (delta, shrink) = moved[t];
            let share = (old.uncertainty * old.uncertainty) / (sides[t][0].uncertainty.powi(2));
            WengLinRating {
                rating: old.rating + delta * share,
                uncertainty: old.uncertainty * shrink,
            }
        })
        .collect();
    // Conserve the table's rating: every seat gives back the mean change.
    let mean = out
        .iter()
        .zip(seats)
        .map(|(a, b)| a.rating - b.rating)
        .sum::<f64>()
        / seats.len() as f64;
    for r in &mut out {
        r.rating -= mean;
    }
    if out
        .iter()
        .any(|r| !r.rating.is_finite() || !r.uncertainty.is_finite())
    {
        return seats.to_vec();
    }
    out
}

/// Weng-Lin ratings of `n` entrants after the games, applied in the given order (the caller
/// passes them by match index, so a resumed contest gives the same ratings).
pub fn weng_lin(n: usize, games: &[RatedGame]) -> Vec<WengLinRating> {
    let mut ratings = vec![WengLinRating::new(); n];
    weng_lin_update(&mut ratings, games);
    ratings
}

/// Apply more games, in order, to Weng-Lin ratings (one pass gives every intermediate rating,
/// e.g. for a chart of ratings over time).
pub fn weng_lin_update(ratings: &mut [WengLinRating], games: &[RatedGame]) {
    let config = WengLinConfig::new();
    let n = ratings.len();
    for g in games {
        if g.entrants.len() < 2 || g.entrants.iter().any(|&e| e >= n) {
            continue;
        }
        // An entrant may not sit twice in one game for the update; skip such games.
        let mut seen = vec![false; n];
        if g.entrants
            .iter()
            .any(|&e| std::mem::replace(&mut seen[e], true))
        {
            continue;
        }
        let r = ranks(&g.scores);
        let teams: Vec<[WengLinRating; 1]> = g.entrants.iter().map(|&e| [ratings[e]]).collect();
        let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
            .iter()
            .zip(&r)
            .map(|(t, &rank)| (&t[..], MultiTeamOutcome::new(rank)))
            .collect();
        let updated = weng_lin_multi_team(&input, &config);
        for (&e, team) in g.entrants.iter().zip(updated) {
            if let Some(new) = team.first() {
                ratings[e] = *new;
            }
        }
    }
}

/// A Bradley-Terry strength on the Elo scale (mean 1500) with a bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BtRating {
    pub elo: f64,
    /// 2.5th percentile of the bootstrap (equal to `elo` without bootstrap).
    pub low: f64,
    /// 97.5th percentile of the bootstrap.
    pub high: f64,
}

/// Pairwise comparisons of one game: every pair of seats, the higher score winning, equal
/// scores a half each; a game of k seats contributes total weight 1 per seat (each pair 1/(k-1)).
fn add_game(n: usize, g: &RatedGame, wins: &mut [f64], pairs: &mut [f64]) {
    let k = g.entrants.len();
    if k < 2 {
        return;
    }
    let w = 1.0 / (k as f64 - 1.0);
    for a in 0..k {
        for b in a + 1..k {
            let (ea, eb) = (g.entrants[a], g.entrants[b]);
            if ea == eb || ea >= n || eb >= n {
                continue;
            }
            let (sa, sb) = (g.scores[a], g.scores[b]);
            let (wa, wb) = if sa > sb {
                (1.0, 0.0)
            } else if sb > sa {
                (0.0, 1.0)
            } else {
                (0.5, 0.5)
            };
            wins[ea] += w * wa;
            wins[eb] += w * wb;
            pairs[ea * n + eb] += w;
            pairs[eb * n + ea] += w;
        }
    }
}

/// Maximum-likelihood Bradley-Terry strengths by the MM algorithm (Hunter 2004), with a weak
/// prior (one virtual drawn game against a reference of strength 1) so that an entrant who
/// won or lost everything still gets a finite rating. Returns Elo-scale ratings, mean 1500.
fn fit(n: usize, wins: &[f64], pairs: &[f64]) -> Vec<f64> {
    const PRIOR: f64 = 1.0;
    let mut p = vec![1.0f64; n];
    for _ in 0..10_000 {
        let mut next = vec![0.0; n];
        let mut change = 0.0f64;
        for i in 0..n {
            let mut denom = PRIOR / (p[i] + 1.0);
            for j in 0..n {
                let nij = pairs[i * n + j];
                if nij > 0.0 {
                    denom += nij / (p[i] + p[j]);
                }
            }
            next[i] = (wins[i] + PRIOR * 0.5) / denom;
        }
        for i in 0..n {
            change = change.max((next[i].ln() - p[i].ln()).abs());
        }
        p = next;
        if change < 1e-10 {
            break;
        }
    }
    let elo: Vec<f64> = p.iter().map(|x| 400.0 * x.log10()).collect();
    let mean = elo.iter().sum::<f64>() / n.max(1) as f64;
    elo.into_iter().map(|e| 1500.0 + e - mean).collect()
}

fn fit_games(n: usize, games: &[&RatedGame]) -> Vec<f64> {
    let mut wins = vec![0.0; n];
    let mut pairs = vec![0.0; n * n];
    for g in games {
        add_game(n, g, &mut wins, &mut pairs);
    }
    fit(n, &wins, &pairs)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The official batch fit: Bradley-Terry over all games, with a 95% interval from `resamples`
/// bootstrap resamples of the games (drawn from `seed`). Order-independent: the result depends
/// on the multiset of games only (the resamples are drawn by position in the list the caller
/// sorts by match index).
pub fn bradley_terry(n: usize, games: &[RatedGame], resamples: u32, seed: u64) -> Vec<BtRating> {
    let all: Vec<&RatedGame> = games.iter().collect();
    let point = fit_games(n, &all);
    if resamples == 0 || games.is_empty() {
        return point
            .into_iter()
            .map(|elo| BtRating {
                elo,
                low: elo,
                high: elo,
            })
            .collect();
    }
    let mut rng = seeded_rng(seed, "bootstrap");
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples as usize); n];
    let mut sample: Vec<&RatedGame> = Vec::with_capacity(games.len());
    for _ in 0..resamples {
        sample.clear();
        for _ in 0..games.len() {
            sample.push(&games[rng.gen_range(0..games.len())]);
        }
        for (i, r) in fit_games(n, &sample).into_iter().enumerate() {
            samples[i].push(r);
        }
    }
    point
        .into_iter()
        .zip(samples)
        .map(|(elo, mut s)| {
            s.sort_by(|a, b| a.total_cmp(b));
            BtRating {
                elo,
                low: percentile(&s, 0.025),
                high: percentile(&s, 0.975),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_game_moves_the_winner_up_and_the_loser_down_and_ties_share_places() {
        let r = WengLinRating::new();
        let after = weng_lin_game(&[r, r, r], &[1.0, 0.0, 0.0]);
        assert!(after[0].rating > r.rating);
        assert!(after[1].rating < r.rating);
        assert_eq!(after[1], after[2]);
        assert!(after.iter().all(|a| a.uncertainty < r.uncertainty));
        assert_eq!(places(&[1.0, 3.0, 3.0, 0.5]), vec![3, 1, 1, 4]);
        // Nothing to rate: unchanged.
        assert_eq!(weng_lin_game(&[r], &[1.0]), vec![r]);
        assert_eq!(weng_lin_game(&[r, r], &[f64::NAN, 1.0]), vec![r, r]);
    }

    use super::*;

    #[test]
    fn sides_are_even_whatever_their_sizes_and_a_ladder_of_team_games_keeps_its_mean() {
        let r = WengLinRating::new();
        // 3 against 2 of equal players: a win of either side moves its seats as much as the
        // other's (no side is expected to win).
        let teams = ["V", "V", "V", "W", "W"];
        let village = weng_lin_team_game(&[r; 5], &[1.0, 1.0, 1.0, 0.0, 0.0], &teams);
        let wolves = weng_lin_team_game(&[r; 5], &[0.0, 0.0, 0.0, 1.0, 1.0], &teams);
        let side_gap = |a: &[WengLinRating]| a[0].rating - a[3].rating;
        assert!((side_gap(&village) + side_gap(&wolves)).abs() < 1e-9);
        for after in [&village, &wolves] {
            let total: f64 = after.iter().map(|a| a.rating - r.rating).sum();
            assert!(total.abs() < 1e-9, "{after:?}");
        }
        // 30 equal players at tables of 15 (11 against 4), the village winning 70% of the
        // time, 2,000 matches: the ladder's mean μ stays 25 (the old per-seat model drifted).
        let mut players = vec![r; 30];
        let mut state: u64 = 7;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for _ in 0..2000 {
            let mut table: Vec<usize> = Vec::new();
            while table.len() < 15 {
                let p = next(30) as usize;
                if !table.contains(&p) {
                    table.push(p);
                }
            }
            let sides: Vec<&str> = (0..15).map(|i| if i < 11 { "V" } else { "W" }).collect();
            let village_won = next(10) < 7;
            let scores: Vec<f64> = sides
                .iter()
                .map(|s| f64::from(u8::from((*s == "V") == village_won)))
                .collect();
            let before: Vec<WengLinRating> = table.iter().map(|&p| players[p]).collect();
            let after = weng_lin_team_game(&before, &scores, &sides);
            for (&p, a) in table.iter().zip(after) {
                players[p] = a;
            }
        }
        let mean = players.iter().map(|p| p.rating).sum::<f64>() / 30.0;
        assert!((mean - 25.0).abs() < 1e-6, "{mean}");
        assert!(players.iter().all(|p| p.uncertainty < r.uncertainty));
    }

    #[test]
    fn a_team_game_moves_every_member_of_a_side_together() {
        let r = WengLinRating::new();
        let teams = ["V", "W", "V", "V", "W"];
        let after = weng_lin_team_game(&[r; 5], &[1.0, 0.0, 1.0, 1.0, 0.0], &teams);
        for (a, t) in after.iter().zip(teams) {
            if t == "V" {
                assert!(a.rating > r.rating, "{after:?}");
            } else {
                assert!(a.rating < r.rating, "{after:?}");
            }
            assert!(a.uncertainty < r.uncertainty);
        }
        assert_eq!(after[0], after[2]);
        assert_eq!(after[1], after[4]);
        // A side ranked by its best seat: a seat scoring 0 on the winning side changes nothing.
        let uneven = weng_lin_team_game(&[r; 5], &[1.0, 0.0, 0.0, 1.0, 0.0], &teams);
        assert_eq!(uneven, after);
        // Every seat its own team: the game of single seats.
        let scores = [3.0, 1.0, 2.0];
        assert_eq!(
            weng_lin_team_game(&[r; 3], &scores, &[1, 2, 3]),
            weng_lin_game(&[r; 3], &scores)
        );
    }

    #[test]
    fn a_team_game_without_two_teams_or_with_bad_input_falls_back() {
        let r = WengLinRating::new();
        let scores = [1.0, 0.0, 0.0];
        // One team only: each seat on its own, by its score.
        assert_eq!(
            weng_lin_team_game(&[r; 3], &scores, &["V"; 3]),
            weng_lin_game(&[r; 3], &scores)
        );
        // Lengths that differ, or a score that is not a number: unchanged.
        assert_eq!(
            weng_lin_team_game(&[r; 3], &scores, &["V", "W"]),
            vec![r; 3]
        );
        assert_eq!(
            weng_lin_team_game(&[r; 2], &[f64::NAN, 1.0], &["V", "W"]),
            vec![r; 2]
        );
        assert_eq!(weng_lin_team_game::<&str>(&[], &[], &[]), vec![]);
    }

    fn duel(a: usize, b: usize, a_wins: bool) -> RatedGame {
        RatedGame {
            entrants: vec![a, b],
            scores: if a_wins {
                vec![1.0, 0.0]
            } else {
                vec![0.0, 1.0]
            },
        }
    }

    #[test]
    fn stronger_players_rate_higher_and_order_does_not_matter() {
        let mut games = Vec::new();
        // 0 beats 1 in 8 of 10, 1 beats 2 in 8 of 10, 0 beats 2 in 9 of 10.
        for i in 0..10 {
            games.push(duel(0, 1, i < 8));
            games.push(duel(1, 2, i < 8));
            games.push(duel(0, 2, i < 9));
        }
        let bt = bradley_terry(3, &games, 0, 1);
        assert!(bt[0].elo > bt[1].elo && bt[1].elo > bt[2].elo, "{bt:?}");
        let mean = bt.iter().map(|r| r.elo).sum::<f64>() / 3.0;
        assert!((mean - 1500.0).abs() < 1e-6);
        let mut reversed = games.clone();
        reversed.reverse();
        let bt2 = bradley_terry(3, &reversed, 0, 1);
        for (a, b) in bt.iter().zip(&bt2) {
            assert!((a.elo - b.elo).abs() < 1e-6);
        }
        // Weng-Lin agrees on the order.
        let wl = weng_lin(3, &games);
        assert!(
            wl[0].rating > wl[1].rating && wl[1].rating > wl[2].rating,
            "{wl:?}"
        );
    }

    #[test]
    fn bootstrap_interval_contains_the_estimate_and_shrinks_with_data() {
        let small: Vec<RatedGame> = (0..10).map(|i| duel(0, 1, i < 7)).collect();
        let large: Vec<RatedGame> = (0..400).map(|i| duel(0, 1, i % 10 < 7)).collect();
        let s = bradley_terry(2, &small, 200, 7);
        let l = bradley_terry(2, &large, 200, 7);
        for r in s.iter().chain(&l) {
            assert!(r.low <= r.elo + 1e-9 && r.elo <= r.high + 1e-9, "{r:?}");
        }
        assert!((l[0].high - l[0].low) < (s[0].high - s[0].low));
        // Deterministic for a seed.
        assert_eq!(s, bradley_terry(2, &small, 200, 7));
    }

    #[test]
    fn unbeaten_entrants_get_finite_ratings_and_ties_split() {
        let games: Vec<RatedGame> = (0..5).map(|_| duel(0, 1, true)).collect();
        let bt = bradley_terry(2, &games, 50, 3);
        assert!(bt
            .iter()
            .all(|r| r.elo.is_finite() && r.low.is_finite() && r.high.is_finite()));
        let draws = vec![RatedGame {
            entrants: vec![0, 1, 2, 3],
            scores: vec![1.0, 1.0, 1.0, 1.0],
        }];
        let bt = bradley_terry(4, &draws, 0, 3);
        assert!(bt.iter().all(|r| (r.elo - 1500.0).abs() < 1e-6));
        assert_eq!(ranks(&[3.0, 5.0, 3.0, -1.0]), vec![2, 1, 2, 4]);
    }
}
