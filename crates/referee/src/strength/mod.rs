//! Strength tables: many full games of one bot against another, played in parallel, each read
//! into a per-game result that tables and JSON summaries are made of. The queue, the parallel
//! play and the mean score with its interval are game-generic ([`play_all`], [`MeanScore`]);
//! a game's setups, seats and what its report says of the measured seat live in the game's
//! module ([`diplomacy`]: `kakehiki diplomacy strength`, docs/diplomacy-strength.md).

pub mod diplomacy;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::driver::{GameDriver, MatchRecord, MatchSpec, RefereeError};

/// Why a strength run could not be played at all (a game that could not be played is a
/// failure in the run's results, not an error).
#[derive(Debug, thiserror::Error)]
pub enum StrengthError {
    /// A bad seat, option or sandbox, refused before any game is played.
    #[error(transparent)]
    Game(#[from] RefereeError),
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
}

/// One game of a strength run: its spec, its name in messages, and what is read from its
/// record.
pub trait QueuedGame: Send + 'static {
    /// What the run keeps of the game.
    type Result: Send + 'static;
    fn spec(&self) -> &MatchSpec;
    /// The game in a message: `one-vs-six AUSTRIA seed 3`.
    fn label(&self) -> String;
    /// The game's result from its record; `Err` says what the report lacks.
    fn result(&self, record: &MatchRecord, seconds: f64) -> Result<Self::Result, String>;
}

/// A game's result, or why it could not be played (a host fault, a report without the fields
/// the run reads).
pub type Played<R> = Result<R, String>;

/// Play `games` with `driver`, `jobs` at once (default: the available cores), in the order
/// given; `done(n, total, result)` is told each game's result as it ends (`n` from 1). The
/// results come back in the order the games ended.
pub fn play_all<G: QueuedGame>(
    driver: &'static dyn GameDriver,
    games: Vec<G>,
    jobs: Option<usize>,
    mut done: impl FnMut(usize, usize, &Played<G::Result>),
) -> Result<Vec<Played<G::Result>>, StrengthError> {
    let total = games.len();
    let workers = jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .min(total);
    let queue = Arc::new(Mutex::new(VecDeque::from(games)));
    let runtime = tokio::runtime::Runtime::new().map_err(StrengthError::Runtime)?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    Ok(runtime.block_on(async move {
        for _ in 0..workers {
            let queue = Arc::clone(&queue);
            let tx = tx.clone();
            tokio::spawn(async move {
                loop {
                    let Some(game) = queue.lock().expect("queue lock").pop_front() else {
                        break;
                    };
                    let started = Instant::now();
                    let out = driver
                        .play(game.spec())
                        .await
                        .map_err(|e| {
                            format!("{}: the match could not be played: {e}", game.label())
                        })
                        .and_then(|record| game.result(&record, started.elapsed().as_secs_f64()));
                    if tx.send(out).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut all = Vec::with_capacity(total);
        while let Some(r) = rx.recv().await {
            done(all.len() + 1, total, &r);
            all.push(r);
        }
        all
    }))
}

/// The mean of the measured seat's scores over games, with its 95% interval.
#[derive(Debug, Clone, Copy, Default)]
pub struct MeanScore {
    games: usize,
    sum: f64,
    sum_sq: f64,
}

impl MeanScore {
    pub fn add(&mut self, score: f64) {
        self.games += 1;
        self.sum += score;
        self.sum_sq += score * score;
    }

    /// Games counted.
    pub fn games(&self) -> usize {
        self.games
    }

    /// The mean score (0 without games).
    pub fn mean(&self) -> f64 {
        self.sum / self.games.max(1) as f64
    }

    /// Half-width of the normal 95% interval of the mean (NaN with fewer than 2 games).
    pub fn ci95(&self) -> f64 {
        let n = self.games as f64;
        if self.games < 2 {
            return f64::NAN;
        }
        let m = self.mean();
        let var = ((self.sum_sq - n * m * m) / (n - 1.0)).max(0.0);
        1.96 * (var / n).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_and_its_interval() {
        let mut m = MeanScore::default();
        assert_eq!(m.mean(), 0.0);
        m.add(1.0);
        assert!(m.ci95().is_nan());
        m.add(0.0);
        m.add(0.5);
        assert_eq!(m.games(), 3);
        assert!((m.mean() - 0.5).abs() < 1e-12);
        // Sample variance 0.25, so 1.96 × sqrt(0.25 / 3).
        assert!((m.ci95() - 1.96 * (0.25f64 / 3.0).sqrt()).abs() < 1e-12);
    }
}
