//! Where matches are played: an [`Arena`] knows the games and plays one match. The binary
//! passes the referee's registry (every registered game joins contests without changes here);
//! tests may pass their own.

use std::collections::BTreeMap;

use kakehiki_core::{GameType, MatchReport, SeatSpec};
use serde::{Deserialize, Serialize};

use crate::config::ContestDef;
use crate::schedule::PlannedMatch;

/// Everything needed to play one match of a contest. Stored as JSON in the queue, so a worker
/// on another machine needs nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchJob {
    pub contest: String,
    pub index: u64,
    pub game: String,
    pub rules: Option<String>,
    pub seed: u64,
    /// Seat specs in seat order.
    pub seats: Vec<SeatSpec>,
    /// Entrant names in seat order.
    pub entrants: Vec<String>,
    pub options: BTreeMap<String, String>,
    /// Wall-clock limit of the whole match in seconds; 0 for none.
    pub timeout_s: u64,
    /// Each seat's own folder (`dir` of its entrant), in seat order; empty when no seat has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seat_dirs: Vec<Option<String>>,
    /// Each seat's environment variables to pass through, in seat order; empty when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seat_env: Vec<Vec<String>>,
    /// The contest's sandbox level (`best` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Each bot's CPU quota in thousandths of a CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_millis: Option<u32>,
    /// Play from `seed` itself (a contest file's `public_seeds = true`). Otherwise, the default,
    /// the arena draws a fresh seed from the operating system when it plays the match: the seed
    /// deals the hidden information, and one derived from a contest file's seed can be guessed
    /// by anyone who knows the file. The seed played is in the report and the replay.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public_seed: bool,
    /// Each seat's thinking time in the whole match, in seconds (a ladder's
    /// `thinking_seconds`); 0 for none. A seat past it stops the match and is charged with a
    /// loss, every other seat scores a win ([`kakehiki_referee::thinking_record`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thinking_s: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl MatchJob {
    /// The job of a planned match of `def`.
    pub fn new(def: &ContestDef, m: &PlannedMatch) -> MatchJob {
        MatchJob {
            contest: def.name.clone(),
            index: m.index,
            game: def.game.clone(),
            rules: def.rules.clone(),
            seed: m.seed,
            seats: m
                .entrants
                .iter()
                .map(|&e| def.entrants[e].seat.clone())
                .collect(),
            entrants: m
                .entrants
                .iter()
                .map(|&e| def.entrants[e].name.clone())
                .collect(),
            options: {
                // A tcp entrant waits on its own port in whichever seat it plays.
                let mut o = def.options.clone();
                for (seat, &e) in m.entrants.iter().enumerate() {
                    if let Some(port) = def.entrants[e].port {
                        o.insert(format!("port{seat}"), port.to_string());
                    }
                }
                o
            },
            timeout_s: def.match_timeout_s,
            seat_dirs: if m.entrants.iter().any(|&e| def.entrants[e].dir.is_some()) {
                m.entrants
                    .iter()
                    .map(|&e| def.entrants[e].dir.clone())
                    .collect()
            } else {
                Vec::new()
            },
            seat_env: if m.entrants.iter().any(|&e| !def.entrants[e].env.is_empty()) {
                m.entrants
                    .iter()
                    .map(|&e| def.entrants[e].env.clone())
                    .collect()
            } else {
                Vec::new()
            },
            sandbox: def.sandbox.clone(),
            cpu_millis: def.cpu_millis,
            public_seed: def.public_seeds,
            thinking_s: 0,
        }
    }

    /// A job that is checked, never played: `seats` `builtin:silent` seats of `game` with
    /// `options` and `timeout_s`, the way one of a contest's or a ladder's matches would be set
    /// up (each seat's limits are the same whoever sits there). The caller adds its sandbox.
    pub fn probe(
        contest: String,
        game: &str,
        rules: Option<String>,
        seats: usize,
        options: BTreeMap<String, String>,
        timeout_s: u64,
    ) -> MatchJob {
        MatchJob {
            contest,
            index: 0,
            game: game.to_string(),
            rules,
            seed: 1,
            seats: vec![SeatSpec::Builtin("silent".into()); seats],
            entrants: Vec::new(),
            options,
            timeout_s,
            seat_dirs: Vec::new(),
            seat_env: Vec::new(),
            sandbox: None,
            cpu_millis: None,
            public_seed: true,
            thinking_s: 0,
        }
    }

    /// The seed the match is played from: [`MatchJob::seed`] when it is public, else a fresh
    /// one from the operating system's generator.
    pub fn seed_to_play(&self) -> u64 {
        if self.public_seed {
            self.seed
        } else {
            use rand::RngCore;
            rand::rngs::OsRng.next_u64()
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A played match.
#[derive(Debug, Clone, PartialEq)]
pub struct Played {
    pub report: MatchReport,
    /// JSON lines.
    pub replay: String,
}

/// Why a match was not played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    /// The match could not be set up or did not finish (a bad option, a panic): recorded as
    /// failed; a later run retries it. A match stopped at its time limit is not a failure: it
    /// is played, its slowest seats charged ([`kakehiki_referee::overtime_record`]).
    #[error("{0}")]
    Failed(String),
    /// The machine, not the match or its bots, failed (a bot could not be started for lack of
    /// disk, file descriptors or memory): nothing is recorded, not even a failure, and the run
    /// stops; a rerun on a working machine plays the match.
    #[error("{0}")]
    HostFault(String),
    /// The match was taken away while it was played ([`Arena::play_until`]'s `stop`): nothing
    /// is recorded by whoever played it.
    #[error("the match was stopped while it was played")]
    Stopped,
}

impl PlayError {
    pub fn is_host_fault(&self) -> bool {
        matches!(self, PlayError::HostFault(_))
    }
}

/// A `match_timeout_s` below the longest legal match of its game under its limits: a match
/// played within every limit could still be cut off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "match_timeout_s = {match_timeout_s} is below the longest legal match of {game} under these \
     limits, {} s: raise match_timeout_s to at least {longest_s} or set 0 for no limit",
    thousands(*.longest_s)
)]
pub struct MatchTimeoutTooShort {
    pub game: String,
    pub match_timeout_s: u64,
    /// The longest legal match, in whole seconds rounded up.
    pub longest_s: u64,
}

/// `4212` as `4,212`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whole seconds, rounded up.
pub fn ceil_secs(d: std::time::Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Refuse `job`'s `timeout_s` when it is below the longest legal match its arena computes (0,
/// no limit, always passes). Returns that bound when there is one.
pub fn check_match_timeout(
    arena: &dyn Arena,
    job: &MatchJob,
) -> Result<Option<std::time::Duration>, String> {
    let Some(longest) = arena.longest_match(job)? else {
        return Ok(None);
    };
    let longest_s = ceil_secs(longest);
    if job.timeout_s != 0 && job.timeout_s < longest_s {
        return Err(MatchTimeoutTooShort {
            game: job.game.clone(),
            match_timeout_s: job.timeout_s,
            longest_s,
        }
        .to_string());
    }
    Ok(Some(longest))
}

/// Why an entrant's program did not start in the check before a contest is registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreflightProblem {
    pub entrant: String,
    pub problem: String,
    /// The machine, not the entrant, is at fault.
    pub host_fault: bool,
}

/// The games, and a way to play one match of them.
pub trait Arena: Send + Sync {
    /// The declaration of a game, or a message naming the known games.
    fn game_type(&self, game: &str) -> Result<&'static GameType, String>;

    /// Play one match to the end. `Err` means the match could not be played (setup error, a
    /// host fault); bot misbehaviour, exceeding the time limit of the whole match included, is
    /// recorded in the report instead.
    fn play(&self, job: &MatchJob) -> Result<Played, PlayError>;

    /// Play `job` as [`Arena::play`] does, but give up with [`PlayError::Stopped`] soon after
    /// `stop` is set (the match was taken away: stopped by an organiser, or its lease lost). An
    /// arena that cannot stop a match midway plays it to its end.
    fn play_until(
        &self,
        job: &MatchJob,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<Played, PlayError> {
        let _ = stop;
        self.play(job)
    }

    /// Check a match's game, rule set, seats and options as playing it would, without starting
    /// anything (a ladder refuses bad options before its first match). An arena that plays no
    /// real game has nothing to check.
    fn check_job(&self, job: &MatchJob) -> Result<(), String> {
        let _ = job;
        Ok(())
    }

    /// The longest a match of `job` can last while every seat answers within the game's
    /// limits ([`kakehiki_referee::GameDriver::longest_legal_match`]); `None` when the arena
    /// knows no bound (its `match_timeout_s` is then not checked against one).
    fn longest_match(&self, job: &MatchJob) -> Result<Option<std::time::Duration>, String> {
        let _ = job;
        Ok(None)
    }

    /// Start the program of every process entrant of `game` once (`entrants`: name and seat)
    /// and report those that cannot run: a missing or non-executable program, one that exits
    /// at once, one the machine cannot start. Built-in and `tcp` seats have nothing to check.
    fn preflight(&self, game: &str, entrants: &[crate::Entrant]) -> Vec<PreflightProblem> {
        let _ = (game, entrants);
        Vec::new()
    }

    /// Report the process entrants whose sandbox would show them what no bot may see: the
    /// results store's files (`store_files`), another entrant's program or folder. Nothing is
    /// started. An arena without a sandbox has nothing to check.
    fn mount_problems(
        &self,
        def: &ContestDef,
        store_files: &[std::path::PathBuf],
    ) -> Vec<PreflightProblem> {
        let _ = (def, store_files);
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_both_numbers() {
        let e = MatchTimeoutTooShort {
            game: "werewolf".into(),
            match_timeout_s: 600,
            longest_s: 4212,
        };
        assert_eq!(
            e.to_string(),
            "match_timeout_s = 600 is below the longest legal match of werewolf under these \
             limits, 4,212 s: raise match_timeout_s to at least 4212 or set 0 for no limit"
        );
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(ceil_secs(std::time::Duration::from_millis(1001)), 2);
        assert_eq!(ceil_secs(std::time::Duration::from_secs(3)), 3);
    }
}
