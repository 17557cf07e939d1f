//! Contest ranking rules as pure functions from results to a ranking (spec §6).
//!
//! * [`seed_league_ranking`]: the seed contest's league (§6.1): wins, then head-to-head among the
//!   tied (re-applied to sub-groups), then the win patterns (escape > capturing all blue > the
//!   opponent took all your red > score > forfeit), then one rematch among the still tied (ranked
//!   by the same steps on the rematch games only), then a shared place.
//! * [`points_ranking`]: the GPW/GAT leagues (§6.2, §6.3): win 3, draw 1, loss 0; ties broken by
//!   points among the tied, then wins, then a shared place.
//! * [`seed_league_plan`] and [`qualifiers`]: league sizes, qualifiers per league and who advances.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::EndReason;

/// An entrant, by index.
pub type Player = usize;

/// One finished game of a league.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    /// The entrant in seat 0 (moving first) and in seat 1.
    pub players: [Player; 2],
    /// The winning seat; `None` for a draw or a double forfeit.
    pub winner: Option<usize>,
    pub reason: EndReason,
}

impl GameResult {
    /// The winning entrant.
    pub fn winner_player(&self) -> Option<Player> {
        self.winner.map(|s| self.players[s])
    }

    fn involves_only(&self, group: &[Player]) -> bool {
        group.contains(&self.players[0]) && group.contains(&self.players[1])
    }
}

/// Win patterns in priority order (spec §6.1 step 3 and our extension).
pub fn win_pattern(reason: EndReason) -> usize {
    match reason {
        EndReason::Escape => 0,
        EndReason::CapturedAllBlue => 1,
        EndReason::LostAllRed => 2,
        EndReason::Score => 3,
        // Wins by a fault of the opponent count as walkovers (不戦勝).
        _ => 4,
    }
}

/// How a place was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlaceStatus {
    /// One entrant, decided by the rules.
    Decided,
    /// Still tied after steps 1-3: the organiser must play the rematch among these entrants and
    /// rank again with its results.
    RematchNeeded,
    /// Still tied after the rematch (or the points rules' last tie-break): a shared place.
    Shared,
}

/// One place of a ranking: its 1-based rank and its entrants (several when tied).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub rank: usize,
    pub players: Vec<Player>,
    pub status: PlaceStatus,
}

/// A ranking, best first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ranking {
    pub places: Vec<Place>,
}

impl Ranking {
    fn from_groups(groups: Vec<(Vec<Player>, PlaceStatus)>) -> Ranking {
        let mut rank = 1;
        let mut places = Vec::new();
        for (mut players, status) in groups {
            players.sort_unstable();
            let n = players.len();
            places.push(Place {
                rank,
                players,
                status,
            });
            rank += n;
        }
        Ranking { places }
    }

    /// Groups still waiting for a rematch.
    pub fn rematches_needed(&self) -> Vec<Vec<Player>> {
        self.places
            .iter()
            .filter(|p| p.status == PlaceStatus::RematchNeeded)
            .map(|p| p.players.clone())
            .collect()
    }
}

/// Partition `group` by a key, best (largest) key first.
fn partition_by<K: Ord + Clone>(group: &[Player], key: impl Fn(Player) -> K) -> Vec<Vec<Player>> {
    let mut by: BTreeMap<Reverse<K>, Vec<Player>> = BTreeMap::new();
    for &p in group {
        by.entry(Reverse(key(p))).or_default().push(p);
    }
    by.into_values().collect()
}

fn wins_in<'a>(p: Player, games: impl Iterator<Item = &'a GameResult>) -> usize {
    games.filter(|g| g.winner_player() == Some(p)).count()
}

/// Steps 2 and 3 on a group tied so far; `None` entries of the result are unresolved groups.
fn break_tie(group: &[Player], games: &[GameResult], out: &mut Vec<(Vec<Player>, bool)>) {
    if group.len() < 2 {
        out.push((group.to_vec(), true));
        return;
    }
    let among: Vec<&GameResult> = games.iter().filter(|g| g.involves_only(group)).collect();
    // Step 2: head-to-head wins among the group, re-applied to sub-groups.
    let h2h = partition_by(group, |p| wins_in(p, among.iter().copied()));
    if h2h.len() > 1 {
        for part in h2h {
            break_tie(&part, games, out);
        }
        return;
    }
    // Step 3: those wins by pattern, lexicographically by count.
    let patterns = partition_by(group, |p| {
        let mut counts = [0usize; 5];
        for g in among.iter().filter(|g| g.winner_player() == Some(p)) {
            counts[win_pattern(g.reason)] += 1;
        }
        counts
    });
    if patterns.len() > 1 {
        for part in patterns {
            break_tie(&part, games, out);
        }
        return;
    }
    out.push((group.to_vec(), false));
}

/// Steps 1-3 on `games`: groups best first, each with whether it is resolved.
fn rank_steps(players: &[Player], games: &[GameResult]) -> Vec<(Vec<Player>, bool)> {
    let mut out = Vec::new();
    for part in partition_by(players, |p| wins_in(p, games.iter())) {
        break_tie(&part, games, &mut out);
    }
    out
}

/// Rank a seed-contest league (spec §6.1). `rematches` maps a tied group (sorted) to the results
/// of its rematch; groups still tied after steps 1-3 without rematch results are reported as
/// [`PlaceStatus::RematchNeeded`].
pub fn seed_league_ranking(
    players: &[Player],
    games: &[GameResult],
    rematches: &BTreeMap<Vec<Player>, Vec<GameResult>>,
) -> Ranking {
    let mut groups = Vec::new();
    for (group, resolved) in rank_steps(players, games) {
        if resolved {
            groups.push((group, PlaceStatus::Decided));
            continue;
        }
        let mut key = group.clone();
        key.sort_unstable();
        match rematches.get(&key) {
            None => groups.push((group, PlaceStatus::RematchNeeded)),
            Some(rematch) => {
                for (sub, resolved) in rank_steps(&group, rematch) {
                    let status = if resolved {
                        PlaceStatus::Decided
                    } else {
                        PlaceStatus::Shared
                    };
                    groups.push((sub, status));
                }
            }
        }
    }
    Ranking::from_groups(groups)
}

/// The rematch games a tied group plays (spec §6.1 step 4): two players play one game with the
/// seats swapped relative to their league game; larger groups play a round robin.
pub fn rematch_pairings(group: &[Player], league_games: &[GameResult]) -> Vec<[Player; 2]> {
    let mut out = Vec::new();
    for (i, &a) in group.iter().enumerate() {
        for &b in &group[i + 1..] {
            let previous = league_games
                .iter()
                .find(|g| g.players == [a, b] || g.players == [b, a]);
            out.push(match previous {
                Some(g) => [g.players[1], g.players[0]],
                None => [a, b],
            });
        }
    }
    out
}

/// Who advances from a preliminary league with `k` qualifying places. A shared place that
/// straddles the cut puts all its entrants out (両者敗退). `Err` lists groups whose rematch must
/// be played first because they straddle the cut.
pub fn qualifiers(ranking: &Ranking, k: usize) -> Result<Vec<Player>, Vec<Vec<Player>>> {
    let mut out = Vec::new();
    let mut pending = Vec::new();
    for place in &ranking.places {
        let first = place.rank - 1;
        let last = first + place.players.len();
        if last <= k {
            out.extend(&place.players);
        } else if first < k {
            match place.status {
                PlaceStatus::RematchNeeded => pending.push(place.players.clone()),
                PlaceStatus::Shared | PlaceStatus::Decided => {}
            }
        }
    }
    if pending.is_empty() {
        Ok(out)
    } else {
        Err(pending)
    }
}

/// League sizes and qualifiers per league for `n` entrants (spec §6.1 default): n <= 5 is a
/// single final league; otherwise ceil(n/4) leagues with sizes differing by at most one and
/// max(1, floor(4 / leagues)) qualifiers each. Returns `(sizes, qualifiers)`; an empty list of
/// sizes for fewer than 2 entrants.
pub fn seed_league_plan(n: usize) -> (Vec<usize>, usize) {
    if n < 2 {
        return (Vec::new(), 0);
    }
    if n <= 5 {
        return (vec![n], n);
    }
    let leagues = n.div_ceil(4);
    let base = n / leagues;
    let extra = n % leagues;
    let sizes = (0..leagues)
        .map(|i| base + usize::from(i < extra))
        .collect();
    (sizes, (4 / leagues).max(1))
}

/// Points of one game for one entrant (GPW/GAT: win 3, draw 1, loss 0; a double forfeit is a
/// loss for both).
pub fn game_points(g: &GameResult, p: Player) -> u32 {
    match g.winner_player() {
        Some(w) if w == p => 3,
        Some(_) => 0,
        None if g.reason == EndReason::DoubleForfeit => 0,
        None => 1,
    }
}

/// Rank a GPW/GAT league or many-games event by points (spec §6.2, §6.3): points, then points in
/// the games among the tied, then wins, then a shared place.
pub fn points_ranking(players: &[Player], games: &[GameResult]) -> Ranking {
    let points = |p: Player, gs: &[&GameResult]| -> u32 {
        gs.iter()
            .filter(|g| g.players.contains(&p))
            .map(|g| game_points(g, p))
            .sum()
    };
    let all: Vec<&GameResult> = games.iter().collect();
    let mut groups = Vec::new();
    for part in partition_by(players, |p| points(p, &all)) {
        if part.len() == 1 {
            groups.push((part, PlaceStatus::Decided));
            continue;
        }
        let among: Vec<&GameResult> = games.iter().filter(|g| g.involves_only(&part)).collect();
        for sub in partition_by(&part, |p| (points(p, &among), wins_in(p, games.iter()))) {
            let status = if sub.len() == 1 {
                PlaceStatus::Decided
            } else {
                PlaceStatus::Shared
            };
            groups.push((sub, status));
        }
    }
    Ranking::from_groups(groups)
}

/// The games of a GPW/GAT round robin: every pairing twice, each entrant moving first once.
pub fn points_league_pairings(players: &[Player]) -> Vec<[Player; 2]> {
    let mut out = Vec::new();
    for (i, &a) in players.iter().enumerate() {
        for &b in &players[i + 1..] {
            out.push([a, b]);
            out.push([b, a]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use EndReason::*;

    fn g(a: Player, b: Player, winner: Option<Player>, reason: EndReason) -> GameResult {
        let seat = winner.map(|w| if w == a { 0 } else { 1 });
        GameResult {
            players: [a, b],
            winner: seat,
            reason,
        }
    }

    fn order(r: &Ranking) -> Vec<(usize, Vec<Player>, PlaceStatus)> {
        r.places
            .iter()
            .map(|p| (p.rank, p.players.clone(), p.status))
            .collect()
    }

    #[test]
    fn wins_decide_first() {
        let games = [
            g(0, 1, Some(0), Escape),
            g(0, 2, Some(0), Escape),
            g(0, 3, Some(0), Escape),
            g(1, 2, Some(1), Escape),
            g(1, 3, Some(1), Escape),
            g(2, 3, Some(2), Escape),
        ];
        let r = seed_league_ranking(&[0, 1, 2, 3], &games, &BTreeMap::new());
        assert_eq!(
            order(&r),
            vec![
                (1, vec![0], PlaceStatus::Decided),
                (2, vec![1], PlaceStatus::Decided),
                (3, vec![2], PlaceStatus::Decided),
                (4, vec![3], PlaceStatus::Decided)
            ]
        );
    }

    #[test]
    fn head_to_head_breaks_a_two_way_tie_and_draws_count_for_nobody() {
        // 0 and 1 both win 2; 1 beat 0.
        let games = [
            g(0, 1, Some(1), CapturedAllBlue),
            g(0, 2, Some(0), Escape),
            g(0, 3, Some(0), Escape),
            g(1, 2, Some(1), Escape),
            g(1, 3, None, PlyLimitDraw),
            g(2, 3, Some(3), Escape),
        ];
        let r = seed_league_ranking(&[0, 1, 2, 3], &games, &BTreeMap::new());
        assert_eq!(r.places[0].players, vec![1]);
        assert_eq!(r.places[1].players, vec![0]);
        // 2 and 3: one win each (3 beat 2) -> 3 above 2.
        assert_eq!(r.places[2].players, vec![3]);
        assert_eq!(r.places[3].players, vec![2]);
    }

    #[test]
    fn three_way_cycle_uses_win_patterns_then_rematch_then_shared() {
        // 0 > 1 by escape, 1 > 2 by capturing all blue, 2 > 0 by lost-all-red.
        let games = [
            g(0, 1, Some(0), Escape),
            g(1, 2, Some(1), CapturedAllBlue),
            g(2, 0, Some(2), LostAllRed),
        ];
        let r = seed_league_ranking(&[0, 1, 2], &games, &BTreeMap::new());
        assert_eq!(
            order(&r).iter().map(|p| p.1.clone()).collect::<Vec<_>>(),
            vec![vec![0], vec![1], vec![2]]
        );
        // A perfect cycle with equal patterns needs a rematch.
        let games = [
            g(0, 1, Some(0), Escape),
            g(1, 2, Some(1), Escape),
            g(2, 0, Some(2), Escape),
        ];
        let r = seed_league_ranking(&[0, 1, 2], &games, &BTreeMap::new());
        assert_eq!(
            order(&r),
            vec![(1, vec![0, 1, 2], PlaceStatus::RematchNeeded)]
        );
        assert_eq!(r.rematches_needed(), vec![vec![0, 1, 2]]);
        assert_eq!(
            rematch_pairings(&[0, 1, 2], &games),
            vec![[1, 0], [0, 2], [2, 1]]
        );
        // The rematch decides 2 first, 0 and 1 remain tied -> shared second place.
        let mut rm = BTreeMap::new();
        rm.insert(
            vec![0, 1, 2],
            vec![
                g(1, 0, None, PlyLimitDraw),
                g(0, 2, Some(2), Escape),
                g(2, 1, Some(2), Escape),
            ],
        );
        let r = seed_league_ranking(&[0, 1, 2], &games, &rm);
        assert_eq!(
            order(&r),
            vec![
                (1, vec![2], PlaceStatus::Decided),
                (2, vec![0, 1], PlaceStatus::Shared)
            ]
        );
    }

    #[test]
    fn pattern_counts_compare_lexicographically_and_forfeits_come_last() {
        // Four players; 0, 1, 2 each win 2 games overall, one among themselves (a cycle).
        let games = [
            g(0, 1, Some(0), Score),
            g(1, 2, Some(1), LostAllRed),
            g(2, 0, Some(2), Timeout),
            g(0, 3, Some(0), Escape),
            g(1, 3, Some(1), Escape),
            g(2, 3, Some(2), Escape),
        ];
        let r = seed_league_ranking(&[0, 1, 2, 3], &games, &BTreeMap::new());
        // Patterns among the tied: 1 (lost_all_red) > 0 (score) > 2 (forfeit).
        assert_eq!(
            order(&r).iter().map(|p| p.1.clone()).collect::<Vec<_>>(),
            vec![vec![1], vec![0], vec![2], vec![3]]
        );
    }

    #[test]
    fn sub_groups_are_re_resolved_by_their_own_head_to_head() {
        // 0, 1, 2, 3 tie on 2 wins; among them 0 and 1 have 2 wins, 2 and 3 one; within {0, 1}
        // 0 beat 1, within {2, 3} 3 beat 2. Player 4 only draws or loses.
        let games = [
            g(0, 1, Some(0), Escape),
            g(0, 2, Some(2), Escape),
            g(0, 3, Some(0), Escape),
            g(1, 2, Some(1), Escape),
            g(1, 3, Some(1), Escape),
            g(2, 3, Some(3), Escape),
            g(0, 4, None, PlyLimitDraw),
            g(1, 4, None, PlyLimitDraw),
            g(2, 4, Some(2), Escape),
            g(3, 4, Some(3), Escape),
        ];
        let r = seed_league_ranking(&[0, 1, 2, 3, 4], &games, &BTreeMap::new());
        assert_eq!(
            order(&r).iter().map(|p| p.1.clone()).collect::<Vec<_>>(),
            vec![vec![0], vec![1], vec![3], vec![2], vec![4]]
        );
        assert!(r.places.iter().all(|p| p.status == PlaceStatus::Decided));
        // A full cycle of five with equal patterns cannot be decided without a rematch.
        let mut cycle = Vec::new();
        for a in 0..5 {
            for d in 1..=2 {
                let b = (a + d) % 5;
                cycle.push(g(a, b, Some(a), Escape));
            }
        }
        let r = seed_league_ranking(&[0, 1, 2, 3, 4], &cycle, &BTreeMap::new());
        assert_eq!(r.rematches_needed(), vec![vec![0, 1, 2, 3, 4]]);
    }

    #[test]
    fn preliminary_tie_across_the_cut_eliminates_both() {
        let r = Ranking::from_groups(vec![
            (vec![0], PlaceStatus::Decided),
            (vec![1, 2], PlaceStatus::Shared),
            (vec![3], PlaceStatus::Decided),
        ]);
        assert_eq!(qualifiers(&r, 2), Ok(vec![0]));
        assert_eq!(qualifiers(&r, 3), Ok(vec![0, 1, 2]));
        let r = Ranking::from_groups(vec![
            (vec![0, 1], PlaceStatus::RematchNeeded),
            (vec![2], PlaceStatus::Decided),
        ]);
        assert_eq!(qualifiers(&r, 1), Err(vec![vec![0, 1]]));
    }

    #[test]
    fn league_plans_match_the_seed_examples() {
        assert_eq!(seed_league_plan(8), (vec![4, 4], 2));
        assert_eq!(seed_league_plan(9), (vec![3, 3, 3], 1));
        assert_eq!(seed_league_plan(5), (vec![5], 5));
        assert_eq!(seed_league_plan(6), (vec![3, 3], 2));
        assert_eq!(seed_league_plan(13), (vec![4, 3, 3, 3], 1));
        assert_eq!(seed_league_plan(1), (vec![], 0));
    }

    #[test]
    fn points_rules_win_three_draw_one() {
        let pairs = points_league_pairings(&[0, 1, 2]);
        assert_eq!(pairs, vec![[0, 1], [1, 0], [0, 2], [2, 0], [1, 2], [2, 1]]);
        let games = [
            g(0, 1, Some(0), Escape),
            g(1, 0, None, PlyLimitDraw),
            g(0, 2, Some(2), Escape),
            g(2, 0, None, PlyLimitDraw),
            g(1, 2, Some(1), Escape),
            g(2, 1, Some(1), Disconnect),
        ];
        // 0: 3+1+0+1 = 5; 1: 0+1+3+3 = 7; 2: 3+1+0+0 = 4.
        assert_eq!(game_points(&games[1], 0), 1);
        let r = points_ranking(&[0, 1, 2], &games);
        assert_eq!(
            order(&r).iter().map(|p| p.1.clone()).collect::<Vec<_>>(),
            vec![vec![1], vec![0], vec![2]]
        );
        // Tied on points: points among the tied, then wins, then shared.
        let games = [g(0, 1, None, PlyLimitDraw), g(1, 0, None, PlyLimitDraw)];
        let r = points_ranking(&[0, 1], &games);
        assert_eq!(order(&r), vec![(1, vec![0, 1], PlaceStatus::Shared)]);
        let df = GameResult {
            players: [0, 1],
            winner: None,
            reason: DoubleForfeit,
        };
        assert_eq!((game_points(&df, 0), game_points(&df, 1)), (0, 0));
    }
}
