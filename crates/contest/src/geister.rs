//! Geister contest rules (spec geister.md §6): the seed league ranking with its tie-breaks and
//! the GPW/GAT ranking by 3/1/0 points.
//!
//! Pure functions over game results; they take entrant indices and never look at a store. The
//! seed league's ranking and its rematch pairings are the geister crate's
//! ([`kakehiki_geister::ranking`]); this module adapts the stored reports to it.

use std::collections::BTreeMap;

use kakehiki_geister::ranking::{self, GameResult};
use kakehiki_geister::EndReason;
use serde::Serialize;

/// One two-seat game: `players[s]` is the entrant in seat `s`; `winner` is a seat; `end` is
/// the report's end reason (`escape`, `captured_all_good`, `lost_all_bad`, `score`, or a
/// fault such as `timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeagueGame {
    pub players: [usize; 2],
    pub winner: Option<usize>,
    pub end: String,
}

impl LeagueGame {
    fn winning_entrant(&self) -> Option<usize> {
        self.winner.and_then(|s| self.players.get(s).copied())
    }

    fn among(&self, group: &[usize]) -> bool {
        group.contains(&self.players[0]) && group.contains(&self.players[1])
    }

    /// The game as the geister crate's rules take it. A winner that names no seat counts for
    /// nobody, as everywhere in this module.
    fn result(&self) -> GameResult {
        GameResult {
            players: self.players,
            winner: self.winner.filter(|&s| s < self.players.len()),
            reason: end_reason(&self.end),
        }
    }
}

/// A report's `end` (the tracker's names, or the replay's) as the geister crate's reason. The
/// seed ranking reads it only to rank the pattern of a win (spec §6.1 step 3): escape, captured
/// all blue (good), lost all red (bad), score, then any other end (a win by forfeit).
fn end_reason(end: &str) -> EndReason {
    match end {
        "escape" => EndReason::Escape,
        "captured_all_blue" | "captured_all_good" => EndReason::CapturedAllBlue,
        "lost_all_red" | "lost_all_bad" => EndReason::LostAllRed,
        "score" => EndReason::Score,
        "ply_limit" | "ply_limit_draw" => EndReason::PlyLimitDraw,
        "illegal_move" => EndReason::IllegalMove,
        "timeout" => EndReason::Timeout,
        "set_timeout" => EndReason::SetTimeout,
        "connect_timeout" => EndReason::ConnectTimeout,
        "double_forfeit" => EndReason::DoubleForfeit,
        // `disconnect`, and a missing or unknown end: a fault, so a win by forfeit.
        _ => EndReason::Disconnect,
    }
}

/// A league's ranking. `groups` lists entrants best first; entrants in one group share a rank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeagueRanking {
    pub groups: Vec<Vec<usize>>,
    /// Wins of each entrant in the league games (rematches excluded).
    pub wins: BTreeMap<usize, u32>,
}

impl LeagueRanking {
    /// (entrant, 1-based shared rank), best first.
    pub fn ranks(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut rank = 1;
        for g in &self.groups {
            for &e in g {
                out.push((e, rank));
            }
            rank += g.len();
        }
        out
    }

    /// Groups of two or more still tied.
    pub fn tied_groups(&self) -> Vec<Vec<usize>> {
        self.groups
            .iter()
            .filter(|g| g.len() > 1)
            .cloned()
            .collect()
    }

    /// Tied groups that straddle the qualifying cut after `q` places.
    pub fn ties_across_cut(&self, q: usize) -> Vec<Vec<usize>> {
        let mut pos = 0;
        let mut out = Vec::new();
        for g in &self.groups {
            if g.len() > 1 && pos < q && pos + g.len() > q {
                out.push(g.clone());
            }
            pos += g.len();
        }
        out
    }

    /// The qualifiers: the top `q`, except that a tie straddling the cut puts every tied
    /// entrant out (the seed's "両者敗退").
    pub fn qualifiers(&self, q: usize) -> Vec<usize> {
        let mut pos = 0;
        let mut out = Vec::new();
        for g in &self.groups {
            if pos + g.len() <= q {
                out.extend(g.iter().copied());
            }
            pos += g.len();
        }
        out
    }
}

/// Pairings of a single round robin among `members` (in seat order). The first player is
/// balanced: of the pair (i, j), i < j by position, i moves first when i + j is odd. With
/// `swapped` every pairing has the other player first (rematches).
pub fn league_pairings(members: &[usize], swapped: bool) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for i in 0..members.len() {
        for j in i + 1..members.len() {
            let i_first = ((i + j) % 2 == 1) != swapped;
            if i_first {
                out.push(vec![members[i], members[j]]);
            } else {
                out.push(vec![members[j], members[i]]);
            }
        }
    }
    out
}

/// The rematch games of a tied group (step 4): every pair of the group plays once more with the
/// seats swapped relative to its league game (for two players: one game, seats swapped).
pub fn rematch_pairings(group: &[usize], league_games: &[LeagueGame]) -> Vec<Vec<usize>> {
    let games: Vec<GameResult> = league_games.iter().map(LeagueGame::result).collect();
    ranking::rematch_pairings(group, &games)
        .into_iter()
        .map(Vec::from)
        .collect()
}

fn wins_in(games: &[LeagueGame], group: &[usize]) -> BTreeMap<usize, u32> {
    let mut wins: BTreeMap<usize, u32> = group.iter().map(|&e| (e, 0)).collect();
    for g in games.iter().filter(|g| g.among(group)) {
        if let Some(w) = g.winning_entrant() {
            *wins.entry(w).or_default() += 1;
        }
    }
    wins
}

/// Rank a seed league (spec §6.1): 1. wins; 2. head-to-head wins within a tied group, again for
/// sub-groups; 3. wins by pattern (escape > captured all blue > lost all red > score >
/// forfeit); 4. groups still tied are re-ranked by steps 1-3 on their `rematches` only (pass
/// the rematch games once played); 5. what is still tied shares a rank.
///
/// The rules are [`ranking::seed_league_ranking`]; this adapts the types. Only games among
/// `members` count. The geister crate takes each tied group's rematch games keyed by the group,
/// so the groups still tied after steps 1-3 are found first and given the games of `rematches`
/// played among them; a group with none stays tied.
pub fn rank_league(
    members: &[usize],
    games: &[LeagueGame],
    rematches: &[LeagueGame],
) -> LeagueRanking {
    let league: Vec<GameResult> = games
        .iter()
        .filter(|g| g.among(members))
        .map(LeagueGame::result)
        .collect();
    let mut ranked = ranking::seed_league_ranking(members, &league, &BTreeMap::new());
    let by_group: BTreeMap<Vec<usize>, Vec<GameResult>> = ranked
        .rematches_needed()
        .into_iter()
        .filter_map(|group| {
            let among: Vec<GameResult> = rematches
                .iter()
                .filter(|r| r.among(&group))
                .map(LeagueGame::result)
                .collect();
            (!among.is_empty()).then_some((group, among))
        })
        .collect();
    if !by_group.is_empty() {
        ranked = ranking::seed_league_ranking(members, &league, &by_group);
    }
    LeagueRanking {
        groups: ranked.places.into_iter().map(|p| p.players).collect(),
        wins: wins_in(games, members),
    }
}

/// GPW/GAT ranking (spec §6.2): points (win 3, draw 1, loss 0, a double forfeit a loss for
/// both); ties broken by points in the games among the tied, then by number of wins; what is
/// still tied shares a rank. Returns groups best first.
pub fn rank_gpw(members: &[usize], games: &[LeagueGame]) -> Vec<Vec<usize>> {
    let league: Vec<GameResult> = games
        .iter()
        .filter(|g| g.among(members))
        .map(LeagueGame::result)
        .collect();
    ranking::points_ranking(members, &league)
        .places
        .into_iter()
        .map(|p| p.players)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(a: usize, b: usize, winner: Option<usize>, end: &str) -> LeagueGame {
        LeagueGame {
            players: [a, b],
            winner,
            end: end.to_string(),
        }
    }

    #[test]
    fn ranks_by_wins_first() {
        // 0 beats everyone, 1 beats 2 and 3, 2 beats 3.
        let games = vec![
            g(0, 1, Some(0), "escape"),
            g(2, 0, Some(1), "escape"),
            g(0, 3, Some(0), "escape"),
            g(1, 2, Some(0), "escape"),
            g(3, 1, Some(1), "escape"),
            g(2, 3, Some(0), "escape"),
        ];
        let r = rank_league(&[0, 1, 2, 3], &games, &[]);
        assert_eq!(r.groups, vec![vec![0], vec![1], vec![2], vec![3]]);
        assert_eq!(r.qualifiers(2), vec![0, 1]);
    }

    #[test]
    fn head_to_head_breaks_a_two_way_tie() {
        // 1 and 2 both have 2 wins; 2 beat 1.
        let games = vec![
            g(0, 1, Some(1), "escape"), // 1 beats 0
            g(0, 2, Some(1), "escape"), // 2 beats 0
            g(0, 3, Some(0), "escape"), // 0 beats 3
            g(1, 2, Some(1), "escape"), // 2 beats 1
            g(1, 3, Some(0), "escape"), // 1 beats 3
            g(2, 3, Some(1), "escape"), // 3 beats 2
        ];
        let r = rank_league(&[0, 1, 2, 3], &games, &[]);
        // wins: 0:1, 1:2, 2:2, 3:1; 2 over 1 head to head; 0 vs 3: 0 beat 3.
        assert_eq!(r.groups, vec![vec![2], vec![1], vec![0], vec![3]]);
    }

    #[test]
    fn a_cycle_is_broken_by_win_patterns_then_rematch_then_shared() {
        // Three-way cycle 0>1>2>0, each with one win; patterns differ for 0 (escape) vs the
        // others (captured_all_good, lost_all_bad).
        let games = vec![
            g(0, 1, Some(0), "escape"),
            g(1, 2, Some(0), "captured_all_good"),
            g(2, 0, Some(0), "lost_all_bad"),
        ];
        let r = rank_league(&[0, 1, 2], &games, &[]);
        assert_eq!(r.groups, vec![vec![0], vec![1], vec![2]]);

        // Same patterns for all: still tied -> a rematch decides; no rematch -> shared.
        let games = vec![
            g(0, 1, Some(0), "escape"),
            g(1, 2, Some(0), "escape"),
            g(2, 0, Some(0), "escape"),
        ];
        let r = rank_league(&[0, 1, 2], &games, &[]);
        assert_eq!(r.groups, vec![vec![0, 1, 2]]);
        assert_eq!(r.ranks(), vec![(0, 1), (1, 1), (2, 1)]);
        assert_eq!(r.ties_across_cut(1), vec![vec![0, 1, 2]]);
        // A tie straddling the cut: all out.
        assert_eq!(r.qualifiers(1), Vec::<usize>::new());
        let rematches = vec![
            g(1, 0, Some(0), "escape"),
            g(2, 1, Some(1), "escape"),
            g(0, 2, Some(1), "score"),
        ];
        // rematch wins: 1 beats 0, 1 beats 2, 2 beats 0 -> 1, 2, 0.
        let r = rank_league(&[0, 1, 2], &games, &rematches);
        assert_eq!(r.groups, vec![vec![1], vec![2], vec![0]]);
    }

    #[test]
    fn draws_count_for_nobody_and_forfeits_rank_last_among_patterns() {
        let games = vec![
            g(0, 1, None, "ply_limit"),
            g(0, 2, Some(0), "timeout"), // 0 wins by forfeit
            g(1, 2, Some(0), "score"),   // 1 wins on score
            g(3, 0, Some(0), "escape"),  // 3 beats 0
            g(3, 1, Some(1), "escape"),  // 1 beats 3
            g(2, 3, Some(0), "escape"),  // 2 beats 3
        ];
        // wins: 0:1, 1:2, 2:1, 3:1. Tied {0,2,3}: head to head 0 beat 2, 3 beat 0, 2 beat 3:
        // a cycle; patterns: 0 forfeit, 2 escape, 3 escape -> {2,3} ahead of 0; then 2 beat 3.
        let r = rank_league(&[0, 1, 2, 3], &games, &[]);
        assert_eq!(r.groups, vec![vec![1], vec![2], vec![3], vec![0]]);
    }

    #[test]
    fn rematches_swap_the_seats_of_the_league_game() {
        let games = vec![
            g(0, 1, Some(0), "escape"),
            g(2, 1, Some(0), "escape"),
            g(2, 0, Some(0), "escape"),
        ];
        assert_eq!(
            rematch_pairings(&[0, 1, 2], &games),
            vec![vec![1, 0], vec![0, 2], vec![1, 2]]
        );
        // A pair without a league game keeps the group's order.
        assert_eq!(rematch_pairings(&[0, 3], &games), vec![vec![0, 3]]);
    }

    #[test]
    fn pairings_balance_the_first_player() {
        for n in 2..=6 {
            let members: Vec<usize> = (0..n).collect();
            let pairs = league_pairings(&members, false);
            assert_eq!(pairs.len(), n * (n - 1) / 2);
            let mut first = vec![0i64; n];
            let mut played = vec![0i64; n];
            for p in &pairs {
                first[p[0]] += 1;
                played[p[0]] += 1;
                played[p[1]] += 1;
            }
            for e in 0..n {
                assert!(
                    (2 * first[e] - played[e]).abs() <= 1,
                    "n={n} entrant {e}: {first:?} of {played:?}"
                );
            }
            let swapped = league_pairings(&members, true);
            for (a, b) in pairs.iter().zip(&swapped) {
                assert_eq!(a[0], b[1]);
                assert_eq!(a[1], b[0]);
            }
        }
    }

    #[test]
    fn gpw_ranks_by_points_then_head_to_head_points_then_wins() {
        // 0: W W vs 1, D D vs 2 => 8; 1: L L vs 0, W W vs 2 => 6; 2: D D vs 0, L L vs 1 => 2
        let games = vec![
            g(0, 1, Some(0), "escape"),
            g(1, 0, Some(1), "escape"),
            g(0, 2, None, "ply_limit"),
            g(2, 0, None, "ply_limit"),
            g(1, 2, Some(0), "escape"),
            g(2, 1, Some(1), "escape"),
        ];
        assert_eq!(
            rank_gpw(&[0, 1, 2], &games),
            vec![vec![0], vec![1], vec![2]]
        );
        // Level on points and among themselves: shared.
        let games = vec![g(0, 1, Some(0), "escape"), g(1, 0, Some(0), "escape")];
        assert_eq!(rank_gpw(&[0, 1], &games), vec![vec![0, 1]]);
    }

    #[test]
    fn gpw_double_forfeit_is_a_loss_for_both_not_a_draw() {
        // 0: double forfeit vs 1 => 0; 1: that, and a draw vs 2 => 1; 2: the draw => 1.
        // Counted as a draw it would give 0 one point and 1 two: [[1], [0, 2]].
        let games = vec![g(0, 1, None, "double_forfeit"), g(1, 2, None, "ply_limit")];
        assert_eq!(rank_gpw(&[0, 1, 2], &games), vec![vec![1, 2], vec![0]]);
    }
}
