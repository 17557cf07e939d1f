//! Schedules: a pure, deterministic function from a contest definition (and, for staged formats,
//! the results of finished stages) to the list of matches.
//!
//! A restart recomputes the same list and skips the matches already stored. Match `i` has the
//! seed `derive_seed(base seed, "match-i")` reduced to 32 bits (every game accepts 32-bit seeds).

use std::collections::BTreeMap;

use kakehiki_core::{derive_seed, seeded_rng, MatchReport};
use rand::Rng;
use serde::Serialize;

use crate::config::{ContestDef, Format};
use crate::geister::{self, LeagueGame};

/// One scheduled match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedMatch {
    pub index: u64,
    /// Which part of the contest it belongs to (`main`, `set 2`, `league B`, `final`, ...).
    pub stage: String,
    /// Entrant indices in seat order.
    pub entrants: Vec<usize>,
    pub seed: u64,
}

/// A finished match as the schedule and the standings see it.
#[derive(Debug, Clone, PartialEq)]
pub struct GameResult {
    pub index: u64,
    /// Entrant indices in seat order.
    pub entrants: Vec<usize>,
    pub report: MatchReport,
}

/// Every match known so far. `complete` is false while a later stage still depends on results
/// not yet stored (Geister seed leagues before their final).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub matches: Vec<PlannedMatch>,
    pub complete: bool,
}

/// The seed of match `index`.
pub fn match_seed(base: u64, index: u64) -> u64 {
    derive_seed(base, &format!("match-{index}")) >> 32
}

fn planned(def: &ContestDef, index: u64, stage: &str, entrants: Vec<usize>) -> PlannedMatch {
    PlannedMatch {
        index,
        stage: stage.to_string(),
        entrants,
        seed: match_seed(def.seed, index),
    }
}

pub use crate::config::binomial;

/// All `k`-subsets of `0..n` in lexicographic order.
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if k > n {
        return out;
    }
    let mut c: Vec<usize> = (0..k).collect();
    loop {
        out.push(c.clone());
        let mut i = k;
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            if c[i] != i + n - k {
                break;
            }
            if i == 0 {
                return out;
            }
        }
        c[i] += 1;
        for j in i + 1..k {
            c[j] = c[j - 1] + 1;
        }
    }
}

/// Every table plays `games` games; game `g` of a table seats `table[(s + g) % k]` in seat `s`,
/// so with `games` a multiple of `k` everyone plays every seat of the table equally often.
/// Matches are ordered game-major so that a partly played contest is balanced.
fn round_robin(def: &ContestDef) -> Vec<PlannedMatch> {
    let k = def.seats;
    let tables = combinations(def.entrants.len(), k);
    let mut out = Vec::with_capacity(tables.len() * def.games as usize);
    for g in 0..def.games {
        for table in &tables {
            let seats: Vec<usize> = (0..k).map(|s| table[(s + g as usize) % k]).collect();
            let index = out.len() as u64;
            out.push(planned(def, index, "main", seats));
        }
    }
    out
}

/// Tables of `k` distinct entrants drawn uniformly, in random seat order, until every entrant
/// has played at least `min_games` games. Stops exactly then.
fn random_tables(def: &ContestDef) -> Vec<PlannedMatch> {
    let n = def.entrants.len();
    let k = def.seats;
    let mut rng = seeded_rng(def.seed, "tables");
    let mut counts = vec![0u64; n];
    let mut short = n; // entrants with fewer than min_games games
    let mut out = Vec::new();
    let mut pool: Vec<usize> = (0..n).collect();
    while short > 0 {
        // Partial Fisher-Yates: the first k of `pool` are a uniform random ordered sample.
        for i in 0..k {
            let j = rng.gen_range(i..n);
            pool.swap(i, j);
        }
        let seats: Vec<usize> = pool[..k].to_vec();
        for &e in &seats {
            counts[e] += 1;
            if counts[e] == def.min_games {
                short -= 1;
            }
        }
        let index = out.len() as u64;
        out.push(planned(def, index, "main", seats));
    }
    out
}

/// A fixed roster; each set draws the agent numbers (seat order) once and plays `games` games.
fn game_sets(def: &ContestDef) -> Vec<PlannedMatch> {
    let n = def.entrants.len();
    let mut out = Vec::new();
    for set in 0..def.sets {
        let mut rng = seeded_rng(def.seed, &format!("set-{set}"));
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = rng.gen_range(0..=i);
            order.swap(i, j);
        }
        let stage = format!("set {}", set + 1);
        for _ in 0..def.games {
            let index = out.len() as u64;
            out.push(planned(def, index, &stage, order.clone()));
        }
    }
    out
}

/// The league structure of a Geister seed contest: preliminary leagues (empty when the whole
/// field plays a single final league) and qualifiers per league.
pub fn seed_leagues(def: &ContestDef) -> (Vec<Vec<usize>>, usize) {
    let n = def.entrants.len();
    let l = if def.leagues > 0 {
        def.leagues
    } else if n <= 5 {
        return (Vec::new(), 0);
    } else {
        n.div_ceil(4)
    };
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = seeded_rng(def.seed, "leagues");
    for i in (1..n).rev() {
        let j = rng.gen_range(0..=i);
        order.swap(i, j);
    }
    let mut leagues = vec![Vec::new(); l];
    for (i, e) in order.into_iter().enumerate() {
        leagues[i % l].push(e);
    }
    for league in &mut leagues {
        league.sort_unstable();
    }
    let q = if def.qualifiers_per_league > 0 {
        def.qualifiers_per_league
    } else {
        (4 / l).max(1)
    };
    (leagues, q)
}

/// League names: A, B, ..., Z, AA, ...
pub fn league_name(i: usize) -> String {
    let mut n = i;
    let mut s = String::new();
    loop {
        s.insert(0, (b'A' + (n % 26) as u8) as char);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    s
}

/// The result of a two-seat game for league ranking.
pub fn league_game(r: &GameResult) -> LeagueGame {
    LeagueGame {
        players: [
            r.entrants[0],
            r.entrants.get(1).copied().unwrap_or(r.entrants[0]),
        ],
        winner: r.report.winner,
        // The report's `end` names a double forfeit `disconnect` (the tracker's name); the
        // report says that everyone lost.
        end: if r.report.everyone_lost {
            "double_forfeit".to_string()
        } else {
            r.report
                .extra
                .get("end")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        },
    }
}

/// One stage of a Geister seed contest, as scheduled and (once its games are in) ranked.
#[derive(Debug, Clone)]
pub struct SeedStage {
    pub name: String,
    pub members: Vec<usize>,
    /// Indices of the stage's league games.
    pub games: Vec<u64>,
    /// Indices of its rematch games (step 4 of the tie-breaks).
    pub rematches: Vec<u64>,
    /// The ranking, once every game (and rematch) is in.
    pub ranking: Option<geister::LeagueRanking>,
    /// Qualifiers (preliminary leagues), once ranked.
    pub qualified: Vec<usize>,
}

/// Walk a Geister seed contest: schedule every stage whose inputs are known, rank every stage
/// whose games are in. Returns the stages and the schedule.
pub fn seed_contest(
    def: &ContestDef,
    finished: &BTreeMap<u64, GameResult>,
) -> (Vec<SeedStage>, Schedule) {
    let (leagues, q) = seed_leagues(def);
    let mut matches: Vec<PlannedMatch> = Vec::new();
    let mut stages: Vec<SeedStage> = Vec::new();

    // Preliminary league games first, all leagues, so that they run in parallel.
    for (li, members) in leagues.iter().enumerate() {
        let name = format!("league {}", league_name(li));
        let mut games = Vec::new();
        for pair in geister::league_pairings(members, false) {
            let index = matches.len() as u64;
            games.push(index);
            matches.push(planned(def, index, &name, pair));
        }
        stages.push(SeedStage {
            name,
            members: members.clone(),
            games,
            rematches: vec![],
            ranking: None,
            qualified: vec![],
        });
    }
    let is_final_only = leagues.is_empty();

    // Rank (and rematch) the preliminary leagues once all their games are in. Rematch indices
    // are allocated only then, league by league, so they never depend on arrival order.
    let lookup = |idx: &[u64]| -> Option<Vec<LeagueGame>> {
        idx.iter()
            .map(|i| finished.get(i).map(league_game))
            .collect()
    };
    let mut league_games = Vec::new();
    for stage in &stages {
        match lookup(&stage.games) {
            Some(g) => league_games.push(g),
            None => {
                return (
                    stages,
                    Schedule {
                        matches,
                        complete: false,
                    },
                )
            }
        }
    }
    for (stage, games) in stages.iter_mut().zip(&league_games) {
        let first = geister::rank_league(&stage.members, games, &[]);
        for group in &first.ties_across_cut(q) {
            for pair in geister::rematch_pairings(group, games) {
                let index = matches.len() as u64;
                stage.rematches.push(index);
                matches.push(planned(
                    def,
                    index,
                    &format!("{} rematch", stage.name),
                    pair,
                ));
            }
        }
        if stage.rematches.is_empty() {
            stage.qualified = first.qualifiers(q);
            stage.ranking = Some(first);
        }
    }
    let mut all_ranked = true;
    for (stage, games) in stages.iter_mut().zip(&league_games) {
        if stage.ranking.is_some() {
            continue;
        }
        match lookup(&stage.rematches) {
            Some(rematches) => {
                let ranked = geister::rank_league(&stage.members, games, &rematches);
                stage.qualified = ranked.qualifiers(q);
                stage.ranking = Some(ranked);
            }
            None => all_ranked = false,
        }
    }
    if !all_ranked {
        return (
            stages,
            Schedule {
                matches,
                complete: false,
            },
        );
    }

    // The final league.
    let finalists: Vec<usize> = if is_final_only {
        (0..def.entrants.len()).collect()
    } else {
        stages
            .iter()
            .flat_map(|s| s.qualified.iter().copied())
            .collect()
    };
    let mut fin = SeedStage {
        name: "final".to_string(),
        members: finalists.clone(),
        games: vec![],
        rematches: vec![],
        ranking: None,
        qualified: vec![],
    };
    for pair in geister::league_pairings(&finalists, false) {
        let index = matches.len() as u64;
        fin.games.push(index);
        matches.push(planned(def, index, "final", pair));
    }
    let mut complete = false;
    if let Some(games) = lookup(&fin.games) {
        let first = geister::rank_league(&finalists, &games, &[]);
        let ties = first.tied_groups();
        if ties.is_empty() {
            fin.ranking = Some(first);
            complete = true;
        } else {
            for group in &ties {
                for pair in geister::rematch_pairings(group, &games) {
                    let index = matches.len() as u64;
                    fin.rematches.push(index);
                    matches.push(planned(def, index, "final rematch", pair));
                }
            }
            if let Some(rematches) = lookup(&fin.rematches) {
                fin.ranking = Some(geister::rank_league(&finalists, &games, &rematches));
                complete = true;
            }
        }
    }
    stages.push(fin);
    (stages, Schedule { matches, complete })
}

/// The schedule of a contest, given the results stored so far (only staged formats look at
/// them).
pub fn schedule(def: &ContestDef, finished: &BTreeMap<u64, GameResult>) -> Schedule {
    match def.format {
        Format::RoundRobin | Format::GeisterGpw => Schedule {
            matches: round_robin(def),
            complete: true,
        },
        Format::RandomTables | Format::AiwolfQualifier => Schedule {
            matches: random_tables(def),
            complete: true,
        },
        Format::AiwolfGameSet => Schedule {
            matches: game_sets(def),
            complete: true,
        },
        Format::GeisterSeed => seed_contest(def, finished).1,
    }
}
