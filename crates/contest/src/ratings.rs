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
/// before it, their scores (higher is better) and their teams: the seats with equal `teams`
/// labels play as one team (Weng-Lin's multi-team update, each team the ratings of its seats),
/// and each seat's rating after is its member's in its team's result. A team is ranked by its
/// seats' score; equal team scores tie. Fewer than two teams (every seat on one side) say
/// nothing about the sides, so each seat is rated on its own by its score, as
/// [`weng_lin_game`] does. Lengths that differ, or a score that is not a number, leave the
/// ratings as they were.
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
    // Each seat's team as an index into the distinct labels, in the order of their first seat.
    let mut labels: Vec<&T> = Vec::new();
    let team_of: Vec<usize> = teams
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
    let mut members: Vec<Vec<WengLinRating>> = vec![Vec::new(); labels.len()];
    // The seats of one team normally share a score (a Werewolf side wins or loses together).
    // When they do not (a seat that forfeited scores 0 on a winning side), the team is ranked
    // by its best seat's score, and every seat of it gets the team's result.
    let mut best = vec![f64::NEG_INFINITY; labels.len()];
    for ((&t, seat), &score) in team_of.iter().zip(seats).zip(scores) {
        members[t].push(*seat);
        best[t] = best[t].max(score);
    }
    let rank = ranks(&best);
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = members
        .iter()
        .zip(&rank)
        .map(|(m, &r)| (&m[..], MultiTeamOutcome::new(r)))
        .collect();
    let after = weng_lin_multi_team(&input, &WengLinConfig::new());
    // Each team's members come back in the order they were pushed: seat order.
    let mut next = vec![0; labels.len()];
    team_of
        .iter()
        .zip(seats)
        .map(|(&t, old)| {
            let member = next[t];
            next[t] += 1;
            after
                .get(t)
                .and_then(|team| team.get(member))
                .copied()
                .unwrap_or(*old)
        })
        .collect()
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
