//! A contest's data as the pages show it, kept up to date as results are stored.
//!
//! Each contest has a [`ContestState`] that grows: it reads from the store only the results
//! stored since the last request (one key lookup tells whether there are any), parses each
//! report once, and adds it to the match rows and the head-to-head table. The standings are
//! derived from the parsed games in memory (points, Weng-Lin and the ranking, milliseconds for
//! thousands of matches); the Bradley-Terry bootstrap, the one costly part, is fitted in a
//! background thread while the contest is being stored and the pages say which matches it
//! covers. Requests are served from an immutable [`ContestData`] snapshot; while one request
//! brings a contest up to date, the others are served the previous snapshot instead of waiting.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use kakehiki_contest::ratings::{bradley_terry, weng_lin_update, BtRating};
use kakehiki_contest::standings::{
    compute_scheduled, compute_with, rated_games, seat_results, BradleyTerry, SeatResult,
};
use kakehiki_contest::{
    game_results, ContestDef, Format, GameResult, RunError, Schedule, Standings,
};
use kakehiki_core::{score_text_decimal, MatchReport};
use kakehiki_store::StoredResult;
use serde_json::{json, Value};

/// A score as a page shows it: two decimals, the exact value on hover.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScoreCell {
    pub text: String,
    pub exact: String,
}

impl ScoreCell {
    pub fn new(exact: &str) -> Self {
        ScoreCell {
            text: score_text_decimal(exact),
            exact: exact.to_string(),
        }
    }
}

/// One row of a match list.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MatchRow {
    pub index: u64,
    pub entrants: Vec<usize>,
    pub scores: Vec<ScoreCell>,
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

/// Everything the contest, entrant and index pages show, for one stored result count.
#[derive(Debug)]
pub struct ContestData {
    pub name: String,
    pub game: String,
    pub format: String,
    /// Stored results this was computed from (the store's result count).
    pub count: u64,
    pub standings: Standings,
    pub entrants: Vec<String>,
    /// By match index.
    pub rows: Vec<MatchRow>,
    /// `h2h[i][j]` = (wins, draws, losses) of entrant i against entrant j in shared matches.
    pub h2h: Vec<Vec<[u32; 3]>>,
    pub rating: Vec<RatingPoint>,
    /// Matches the Bradley-Terry interval was fitted on (`None`: not fitted yet, the column is
    /// the point estimate).
    pub bt_matches: Option<usize>,
    /// Whether the stored results were read (false only before the first read).
    pub loaded: bool,
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

/// Bradley-Terry work (games × fits) done inside a request; more goes to a background thread.
const INLINE_BT_WORK: usize = 50_000;

/// The growing state of one contest.
pub struct ContestState {
    pub def: ContestDef,
    /// The schedule, made once, of a format whose schedule does not depend on results (28,000
    /// round-robin matches take milliseconds to list: not on every update).
    schedule: Option<Arc<Schedule>>,
    /// Sequence number of the last stored result read.
    pub seq: u64,
    games: BTreeMap<u64, GameResult>,
    rows: BTreeMap<u64, MatchRow>,
    h2h: Vec<Vec<[u32; 3]>>,
    /// The last Bradley-Terry fit and the number of games it covered.
    bt: Option<(usize, Vec<BtRating>)>,
    bt_running: bool,
    bt_started: Option<Instant>,
    bt_took: Duration,
    /// Whether the first read is done.
    pub loaded: bool,
}

impl ContestState {
    pub fn new(def: ContestDef) -> Self {
        let schedule = (def.format != Format::GeisterSeed)
            .then(|| Arc::new(kakehiki_contest::schedule(&def, &BTreeMap::new())));
        let n = def.entrants.len();
        ContestState {
            def,
            schedule,
            seq: 0,
            games: BTreeMap::new(),
            rows: BTreeMap::new(),
            h2h: vec![vec![[0u32; 3]; n]; n],
            bt: None,
            bt_running: false,
            bt_started: None,
            bt_took: Duration::ZERO,
            loaded: false,
        }
    }

    /// Add results read from the store (`results_since` of this state's `seq`).
    pub fn add(&mut self, stored: Vec<(u64, StoredResult)>) -> Result<(), RunError> {
        let Some(last) = stored.iter().map(|(s, _)| *s).max() else {
            return Ok(());
        };
        let plain: Vec<StoredResult> = stored.into_iter().map(|(_, r)| r).collect();
        let names: Vec<String> = self.def.entrants.iter().map(|e| e.name.clone()).collect();
        let n = names.len();
        for (index, g) in game_results(&self.def, &plain)? {
            if self.games.contains_key(&index) {
                continue;
            }
            let seat_names: Vec<String> = g
                .entrants
                .iter()
                .map(|&e| names.get(e).cloned().unwrap_or_default())
                .collect();
            self.rows.insert(
                index,
                MatchRow {
                    index,
                    entrants: g.entrants.clone(),
                    scores: g
                        .report
                        .scores_exact
                        .iter()
                        .map(|t| ScoreCell::new(t))
                        .collect(),
                    result: result_text(&g.report, &seat_names),
                    errors: g.report.seats.iter().map(|s| s.faults()).sum(),
                },
            );
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
                    self.h2h[ea][eb][k] += 1;
                }
            }
            self.games.insert(index, g);
        }
        self.seq = self.seq.max(last);
        Ok(())
    }

    fn bt_work(&self) -> usize {
        self.games
            .len()
            .saturating_mul(self.def.bootstrap as usize + 1)
    }

    /// Whether the Bradley-Terry fit lags the games.
    fn bt_stale(&self) -> bool {
        self.bt.as_ref().map(|(m, _)| *m) != Some(self.games.len())
    }

    /// Fit Bradley-Terry now if that is cheap; returns whether a background fit is wanted.
    fn refresh_bt_inline(&mut self) -> bool {
        if !self.bt_stale() {
            return false;
        }
        if self.bt_work() <= INLINE_BT_WORK {
            let rated = rated_games(&self.def, &self.games);
            let fit = bradley_terry(
                self.def.entrants.len(),
                &rated,
                self.def.bootstrap,
                self.def.seed,
            );
            self.bt = Some((self.games.len(), fit));
            return false;
        }
        // Not more often than every second, nor more than a third of the time.
        !self.bt_running
            && self
                .bt_started
                .is_none_or(|t| t.elapsed() >= (self.bt_took * 3).max(Duration::from_secs(1)))
    }

    /// The pages' view of the state now.
    pub fn snapshot(&self) -> ContestData {
        let n = self.def.entrants.len();
        let (bt, bt_matches) = match &self.bt {
            Some((m, fit)) => (BradleyTerry::Given(fit), Some(*m)),
            None => (BradleyTerry::PointOnly, None),
        };
        let standings = match &self.schedule {
            Some(sched) => compute_scheduled(&self.def, &self.games, bt, sched),
            None => compute_with(&self.def, &self.games, bt),
        };
        // Weng-Lin after each of up to RATING_POINTS stretches of the games, in match order, in
        // one pass (the standings' own update, so the last point is the standings' rating).
        let rated = rated_games(&self.def, &self.games);
        let mut rating = Vec::new();
        if !rated.is_empty() {
            let stride = rated.len().div_ceil(RATING_POINTS).max(1);
            let mut now = vec![kakehiki_contest::ratings::WengLinRating::new(); n];
            let mut upto = 0;
            loop {
                rating.push(RatingPoint {
                    matches: upto,
                    mu: now.iter().map(|r| r.rating).collect(),
                });
                if upto == rated.len() {
                    break;
                }
                let next = (upto + stride).min(rated.len());
                weng_lin_update(&mut now, &rated[upto..next]);
                upto = next;
            }
        }
        ContestData {
            name: self.def.name.clone(),
            game: self.def.game.clone(),
            format: standings.format.clone(),
            count: self.seq,
            standings,
            entrants: self.def.entrants.iter().map(|e| e.name.clone()).collect(),
            rows: self.rows.values().cloned().collect(),
            h2h: self.h2h.clone(),
            rating,
            bt_matches,
            loaded: self.loaded,
        }
    }
}

/// One contest in the web UI's memory: its growing state and the snapshot pages are served.
pub struct Contest {
    /// The definition (also in the state; here to be read without waiting for it).
    pub def: ContestDef,
    pub state: Mutex<ContestState>,
    pub published: RwLock<Arc<ContestData>>,
    /// Matches scheduled, when the schedule does not depend on results.
    pub scheduled: Option<usize>,
    /// Whether the refresher was asked to bring this contest up to date.
    pub refresh_queued: std::sync::atomic::AtomicBool,
}

impl Contest {
    pub fn new(def: ContestDef) -> Self {
        let state = ContestState::new(def.clone());
        let scheduled = state.schedule.as_ref().map(|s| s.matches.len());
        let first = Arc::new(state.snapshot());
        Contest {
            def,
            state: Mutex::new(state),
            published: RwLock::new(first),
            scheduled,
            refresh_queued: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn current(&self) -> Arc<ContestData> {
        self.published
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn publish(&self, data: ContestData) -> Arc<ContestData> {
        let data = Arc::new(data);
        *self.published.write().unwrap_or_else(|p| p.into_inner()) = data.clone();
        data
    }

    /// Publish the state's snapshot, fitting Bradley-Terry inline or starting a background fit.
    pub fn refresh(self: &Arc<Self>, state: &mut ContestState) -> Arc<ContestData> {
        let background = state.refresh_bt_inline();
        let data = self.publish(state.snapshot());
        if background {
            state.bt_running = true;
            state.bt_started = Some(Instant::now());
            let rated = rated_games(&state.def, &state.games);
            let (n, boot, seed) = (
                state.def.entrants.len(),
                state.def.bootstrap,
                state.def.seed,
            );
            let me = self.clone();
            let spawned = std::thread::Builder::new()
                .name("bradley-terry".into())
                .spawn(move || {
                    let t = Instant::now();
                    let fit = bradley_terry(n, &rated, boot, seed);
                    let mut st = me.state.lock().unwrap_or_else(|p| p.into_inner());
                    st.bt_running = false;
                    st.bt_took = t.elapsed();
                    // Keep a newer fit if one was made inline meanwhile.
                    if st.bt.as_ref().is_none_or(|(m, _)| *m < rated.len()) {
                        st.bt = Some((rated.len(), fit));
                    }
                    let snap = st.snapshot();
                    me.publish(snap);
                });
            if spawned.is_err() {
                state.bt_running = false;
            }
        }
        data
    }
}

impl ContestData {
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
