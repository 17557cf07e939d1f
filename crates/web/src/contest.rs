//! A contest's data as the pages show it, computed once per change of its stored matches.

use std::collections::BTreeMap;

use kakehiki_contest::ratings::{weng_lin, RatedGame};
use kakehiki_contest::standings::{seat_results, SeatResult};
use kakehiki_contest::{ContestDef, GameResult, Standings};
use kakehiki_core::MatchReport;
use kakehiki_store::StoredResult;
use serde_json::{json, Value};

/// One row of a match list.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MatchRow {
    pub index: u64,
    pub entrants: Vec<usize>,
    pub scores: Vec<String>,
    /// The game's own result in words.
    pub result: String,
    pub errors: usize,
}

/// Ratings after a number of matches.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RatingPoint {
    pub matches: usize,
    pub mu: Vec<f64>,
}

/// Everything the contest, entrant and index pages show, for one stored match count.
#[derive(Debug)]
pub struct ContestData {
    pub name: String,
    pub game: String,
    pub format: String,
    /// Stored matches this was computed from.
    pub count: u64,
    pub standings: Standings,
    pub entrants: Vec<String>,
    pub rows: Vec<MatchRow>,
    /// `h2h[i][j]` = (wins, draws, losses) of entrant i against entrant j in shared matches.
    pub h2h: Vec<Vec<[u32; 3]>>,
    pub rating: Vec<RatingPoint>,
}

/// The game's own result of a match, naming entrants.
pub fn result_text(report: &MatchReport, names: &[String]) -> String {
    let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| format!("seat {i}"));
    let mut out = if let Some(team) = report.extra.get("winner_team").and_then(Value::as_str) {
        format!("{team} team won")
    } else if let Some(w) = report.winner {
        format!("winner: {}", name(w))
    } else if report.everyone_lost {
        "every seat lost".to_string()
    } else {
        "draw".to_string()
    };
    if let Some(end) = report.extra.get("end").and_then(Value::as_str) {
        out.push_str(&format!(" ({end})"));
    }
    if let Some(c) = report.extra.get("centers").and_then(Value::as_object) {
        let list: Vec<String> = c
            .iter()
            .map(|(p, n)| format!("{} {}", &p[..p.len().min(3)], n))
            .collect();
        out.push_str(&format!(" · centres {}", list.join(", ")));
    }
    out
}

const RATING_POINTS: usize = 40;

impl ContestData {
    pub fn new(
        def: &ContestDef,
        standings: Standings,
        stored: &[StoredResult],
        games: &BTreeMap<u64, GameResult>,
    ) -> Self {
        let entrants: Vec<String> = def.entrants.iter().map(|e| e.name.clone()).collect();
        let n = entrants.len();
        let mut rows = Vec::with_capacity(games.len());
        let mut h2h = vec![vec![[0u32; 3]; n]; n];
        let mut rated = Vec::with_capacity(games.len());
        for g in games.values() {
            let names: Vec<String> = g
                .entrants
                .iter()
                .map(|&e| entrants.get(e).cloned().unwrap_or_default())
                .collect();
            rows.push(MatchRow {
                index: g.index,
                entrants: g.entrants.clone(),
                scores: g.report.scores_exact.clone(),
                result: result_text(&g.report, &names),
                errors: g.report.seats.iter().map(|s| s.errors.len()).sum(),
            });
            let res = seat_results(&g.report);
            let rank = |r: &SeatResult| match r {
                SeatResult::Win => 2,
                SeatResult::Draw => 1,
                SeatResult::Loss => 0,
            };
            for (a, &ea) in g.entrants.iter().enumerate() {
                for (b, &eb) in g.entrants.iter().enumerate() {
                    if ea == eb || ea >= n || eb >= n {
                        continue;
                    }
                    let (ra, rb) = match (res.get(a), res.get(b)) {
                        (Some(x), Some(y)) => (rank(x), rank(y)),
                        _ => continue,
                    };
                    let k = match ra.cmp(&rb) {
                        std::cmp::Ordering::Greater => 0,
                        std::cmp::Ordering::Equal => 1,
                        std::cmp::Ordering::Less => 2,
                    };
                    h2h[ea][eb][k] += 1;
                }
            }
            rated.push(RatedGame {
                entrants: g.entrants.clone(),
                scores: g.report.scores.clone(),
            });
        }
        // Weng-Lin after each of up to RATING_POINTS prefixes of the games, in match order (the
        // standings' own update, so the last point is the standings' rating).
        let mut rating = Vec::new();
        if !rated.is_empty() {
            let stride = rated.len().div_ceil(RATING_POINTS).max(1);
            let mut upto = 0;
            loop {
                rating.push(RatingPoint {
                    matches: upto,
                    mu: weng_lin(n, &rated[..upto])
                        .iter()
                        .map(|r| r.rating)
                        .collect(),
                });
                if upto == rated.len() {
                    break;
                }
                upto = (upto + stride).min(rated.len());
            }
        }
        ContestData {
            name: def.name.clone(),
            game: def.game.clone(),
            format: standings.format.clone(),
            count: stored.len() as u64,
            standings,
            entrants,
            rows,
            h2h,
            rating,
        }
    }

    pub fn complete(&self) -> bool {
        self.standings.complete
    }

    pub fn entrant_index(&self, name: &str) -> Option<usize> {
        self.entrants.iter().position(|e| e == name)
    }

    /// The index page's line.
    pub fn summary(&self) -> Value {
        json!({
            "name": self.name, "game": self.game, "format": self.format,
            "matches_stored": self.standings.matches_stored,
            "matches_scheduled": self.standings.matches_scheduled,
            "complete": self.standings.complete,
        })
    }
}
