//! A small fake arena for the contest layer's own tests (the end-to-end tests in the CLI use
//! the real registry).
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use kakehiki_contest::{Arena, ContestDef, MatchJob, PlayError, Played};
use kakehiki_core::{
    seeded_rng, Chance, Dynamics, GameType, Information, MatchReport, Outcome, Score, SeatSpec,
    Transport,
};
use rand::Rng;

pub static DUEL: GameType = GameType {
    name: "duel",
    title: "Duel",
    min_seats: 2,
    max_seats: 2,
    default_seats: 2,
    dynamics: Dynamics::Sequential,
    information: Information::Imperfect,
    chance: Chance::Seeded,
    transports: &[Transport::Stdio],
    rule_sets: &["standard", "short"],
    builtin_bots: &["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"],
};

pub static TABLE: GameType = GameType {
    name: "table",
    title: "Table",
    min_seats: 2,
    max_seats: 7,
    default_seats: 4,
    dynamics: Dynamics::Simultaneous,
    information: Information::Imperfect,
    chance: Chance::Seeded,
    transports: &[Transport::Stdio],
    rule_sets: &["standard"],
    builtin_bots: &["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"],
};

pub static WOLF: GameType = GameType {
    name: "wolf",
    title: "Wolf",
    min_seats: 5,
    max_seats: 15,
    default_seats: 5,
    dynamics: Dynamics::Mixed,
    information: Information::Imperfect,
    chance: Chance::Seeded,
    transports: &[Transport::Tcp],
    rule_sets: &["standard"],
    builtin_bots: &["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"],
};

pub fn lookup(name: &str) -> Result<&'static GameType, String> {
    match name {
        "duel" => Ok(&DUEL),
        "table" => Ok(&TABLE),
        "wolf" => Ok(&WOLF),
        other => Err(format!(
            "unknown game {other:?}: expected one of duel, table, wolf"
        )),
    }
}

pub fn parse(text: &str) -> ContestDef {
    ContestDef::parse(text, "test.toml", &lookup).unwrap_or_else(|e| panic!("{e}"))
}

fn strength(spec: &SeatSpec) -> f64 {
    match spec {
        SeatSpec::Builtin(n) => n.trim_start_matches('s').parse().unwrap_or(1.0),
        _ => 1.0,
    }
}

/// Plays fake matches: a seat's score is its strength times a seeded random number.
/// `fail_when` makes chosen matches fail (set-up errors).
pub struct FakeArena {
    pub fail_when: Box<dyn Fn(&MatchJob) -> bool + Send + Sync>,
    /// Matches whose bots the "machine" cannot start (host faults).
    pub host_fault_when: Box<dyn Fn(&MatchJob) -> bool + Send + Sync>,
    pub played: AtomicU64,
    /// Time each match takes.
    pub delay: std::time::Duration,
}

impl FakeArena {
    pub fn new() -> Self {
        FakeArena {
            fail_when: Box::new(|_| false),
            host_fault_when: Box::new(|_| false),
            played: AtomicU64::new(0),
            delay: std::time::Duration::ZERO,
        }
    }

    pub fn failing(f: impl Fn(&MatchJob) -> bool + Send + Sync + 'static) -> Self {
        FakeArena {
            fail_when: Box::new(f),
            ..FakeArena::new()
        }
    }

    pub fn host_faulting(f: impl Fn(&MatchJob) -> bool + Send + Sync + 'static) -> Self {
        FakeArena {
            host_fault_when: Box::new(f),
            ..FakeArena::new()
        }
    }
}

impl Arena for FakeArena {
    fn game_type(&self, game: &str) -> Result<&'static GameType, String> {
        lookup(game)
    }

    fn play(&self, job: &MatchJob) -> Result<Played, PlayError> {
        if (self.host_fault_when)(job) {
            return Err(PlayError::HostFault(format!(
                "seat 0 of match {}: cannot create the bot's working directory: No space left on device (os error 28)",
                job.index
            )));
        }
        if (self.fail_when)(job) {
            return Err(PlayError::Failed(format!(
                "cannot start seat 0 of match {}",
                job.index
            )));
        }
        std::thread::sleep(self.delay);
        self.played.fetch_add(1, Ordering::SeqCst);
        let mut rng = seeded_rng(job.seed, "fake");
        let n = job.seats.len();
        let mut report = if job.game == "wolf" {
            // Seat 0 and 1 are wolves; the wolves win when their strength sum beats a draw.
            let wolves: f64 = job.seats[..2].iter().map(strength).sum::<f64>() * rng.gen::<f64>();
            let village: f64 =
                job.seats[2..].iter().map(strength).sum::<f64>() * rng.gen::<f64>() * 0.5;
            let wolves_win = wolves > village;
            let scores: Vec<Score> = (0..n)
                .map(|s| Score::from_integer(i64::from((s < 2) == wolves_win)))
                .collect();
            let outcome = Outcome {
                scores,
                winner: None,
            };
            let mut r = MatchReport::new(
                &job.game,
                "standard",
                job.seed,
                &outcome,
                job.seats.iter().map(|s| (s.to_string(), vec![])).collect(),
            );
            for (s, seat) in r.seats.iter_mut().enumerate() {
                let role = if s < 2 {
                    "WEREWOLF"
                } else if s == 2 {
                    "SEER"
                } else {
                    "VILLAGER"
                };
                seat.extra.insert("role".into(), role.into());
            }
            r.extra.insert(
                "winner_team".into(),
                (if wolves_win { "WEREWOLF" } else { "VILLAGER" }).into(),
            );
            r
        } else {
            let scores: Vec<Score> = job
                .seats
                .iter()
                .map(|s| Score::new((strength(s) * rng.gen::<f64>() * 12.0).round() as i64, 4))
                .collect();
            let outcome = Outcome::by_max(scores);
            let mut r = MatchReport::new(
                &job.game,
                "standard",
                job.seed,
                &outcome,
                job.seats.iter().map(|s| (s.to_string(), vec![])).collect(),
            );
            let ends = ["escape", "captured_all_good", "lost_all_bad", "score"];
            r.extra
                .insert("end".into(), ends[rng.gen_range(0..ends.len())].into());
            r
        };
        report.rules = job.rules.clone().unwrap_or_else(|| "standard".into());
        let replay = format!(
            "{{\"event\":\"header\",\"game\":\"{}\",\"seed\":{},\"index\":{}}}\n{{\"event\":\"end\"}}\n",
            job.game, job.seed, job.index
        );
        Ok(Played { report, replay })
    }
}

/// A contest file with `n` built-in entrants s1.. of the given game and format.
pub fn contest_text(name: &str, game: &str, format: &str, n: usize, extra: &str) -> String {
    let mut t =
        format!("name = \"{name}\"\ngame = \"{game}\"\nformat = \"{format}\"\nseed = 7\n{extra}\n");
    for i in 0..n {
        t.push_str(&format!(
            "\n[[entrants]]\nname = \"e{i}\"\nseat = \"builtin:s{}\"\n",
            i % 9 + 1
        ));
    }
    t
}
