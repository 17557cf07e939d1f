//! `kakehiki diplomacy strength`: a Diplomacy bot's strength table against another bot, in full
//! games with every power in turn (docs/diplomacy-strength.md). Everything Diplomacy's is here:
//! the setups, the seats by power, the centres and solos read from the report.

use std::fmt::Write as _;

use kakehiki_agent::SandboxConfig;
use kakehiki_core::{MatchReport, SeatSpec};
use kakehiki_diplomacy::Power;
use serde::Serialize;
use serde_json::json;

use super::{play_all, MeanScore, QueuedGame, StrengthError};
use crate::driver::{MatchRecord, MatchSpec};
use crate::find_game;

/// Who holds the lone seat of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Setup {
    /// The bot holds the lone seat, against six of the opponent.
    One,
    /// The opponent holds the lone seat, against six of the bot.
    Six,
}

impl Setup {
    /// Its name in the table and the progress lines.
    pub fn name(self) -> &'static str {
        match self {
            Setup::One => "one-vs-six",
            Setup::Six => "six-vs-one",
        }
    }
}

/// What to measure and how (what `kakehiki diplomacy strength`'s flags give).
#[derive(Debug, Clone)]
pub struct StrengthOptions {
    /// The bot measured.
    pub bot: SeatSpec,
    /// Its opponent.
    pub opponent: SeatSpec,
    /// Games per power in each setup: a setup is 7 times this many games.
    pub games_per_power: u32,
    /// The setups played, in this order.
    pub setups: Vec<Setup>,
    /// The last year played before the game ends in a draw of the survivors (default: the
    /// game's).
    pub max_year: Option<u32>,
    /// Seed of the first game; game k of a setup has seed + k, so every setup uses the same
    /// seeds.
    pub seed: u64,
    /// Games played at once (default: the available cores).
    pub jobs: Option<usize>,
    /// The process seats' sandbox.
    pub sandbox: SandboxConfig,
    /// Told a line as each game ends (`[3/28] one-vs-six FRANCE   seed    3: score ...`).
    pub progress: Option<fn(&str)>,
}

/// One game's result for its lone seat.
#[derive(Clone, Debug, Serialize)]
pub struct GameResult {
    pub setup: Setup,
    pub power: &'static str,
    pub seed: u64,
    /// The lone seat's score.
    pub score: f64,
    /// The lone seat's centres at the end.
    pub centers: u64,
    /// The lone seat soloed.
    pub solo: bool,
    /// Another seat soloed.
    pub other_solo: bool,
    /// The lone seat was eliminated.
    pub eliminated: bool,
    /// How the game ended (`solo`, `year_limit`, `draw`).
    pub end: String,
    /// Seat errors (timeouts, crashes, bad replies) of the lone seat and of the six others.
    pub lone_errors: usize,
    pub others_errors: usize,
    pub seconds: f64,
}

/// A strength run's games, for its table ([`StrengthReport::text`]) and its JSON
/// ([`StrengthReport::to_json`]).
#[derive(Clone, Debug)]
pub struct StrengthReport {
    pub bot: String,
    pub opponent: String,
    pub max_year: Option<u32>,
    pub setups: Vec<Setup>,
    /// The games played, by setup and seed.
    pub games: Vec<GameResult>,
    /// The games that could not be played, each with why; they are not in the tables.
    pub failures: Vec<String>,
    /// Games queued.
    pub total: usize,
}

struct Job {
    setup: Setup,
    power: Power,
    spec: MatchSpec,
}

impl QueuedGame for Job {
    type Result = GameResult;

    fn spec(&self) -> &MatchSpec {
        &self.spec
    }

    fn label(&self) -> String {
        format!(
            "{} {} seed {}",
            self.setup.name(),
            self.power.name(),
            self.spec.seed
        )
    }

    fn result(&self, record: &MatchRecord, seconds: f64) -> Result<GameResult, String> {
        result_of(self, &record.report, seconds)
    }
}

/// Play every game of `opts` and gather their results. Bad seats and options are refused
/// before any game is played.
pub fn run(opts: &StrengthOptions) -> Result<StrengthReport, StrengthError> {
    let driver = find_game("diplomacy")?;
    let mut jobs = Vec::new();
    for &setup in &opts.setups {
        let (lone, others) = match setup {
            Setup::One => (&opts.bot, &opts.opponent),
            Setup::Six => (&opts.opponent, &opts.bot),
        };
        let mut k = 0u64;
        for _ in 0..opts.games_per_power {
            for power in Power::ALL {
                let seats: Vec<SeatSpec> = (0..7)
                    .map(|i| {
                        if i == power.index() {
                            lone.clone()
                        } else {
                            others.clone()
                        }
                    })
                    .collect();
                let seed = opts.seed.wrapping_add(k);
                k += 1;
                let mut spec = MatchSpec::new("diplomacy", seed, seats);
                spec.set_sandbox(opts.sandbox.clone());
                spec.deny_outputs_and_other_seats([])?;
                if let Some(y) = opts.max_year {
                    spec.options.insert("max_year".into(), y.to_string());
                }
                if jobs.is_empty() || power == Power(0) {
                    // Bad seats and options are refused before any game is played.
                    driver.check_spec(&spec)?;
                }
                jobs.push(Job { setup, power, spec });
            }
        }
    }
    let total = jobs.len();
    let results = play_all(driver, jobs, opts.jobs, |n, total, r| {
        if let Some(progress) = opts.progress {
            progress(&progress_line(n, total, r));
        }
    })?;
    let mut failures = Vec::new();
    let mut games = Vec::new();
    for r in results {
        match r {
            Ok(g) => games.push(g),
            Err(e) => failures.push(e),
        }
    }
    games.sort_by_key(|g| (g.setup == Setup::Six, g.seed));
    Ok(StrengthReport {
        bot: opts.bot.to_string(),
        opponent: opts.opponent.to_string(),
        max_year: opts.max_year,
        setups: opts.setups.clone(),
        games,
        failures,
        total,
    })
}

fn progress_line(n: usize, total: usize, r: &Result<GameResult, String>) -> String {
    match r {
        Ok(g) => format!(
            "[{n}/{total}] {} {:<8} seed {:>4}: score {:.3}, {:>2} centres, {}{} ({:.1} s)",
            g.setup.name(),
            g.power,
            g.seed,
            g.score,
            g.centers,
            g.end,
            if g.lone_errors + g.others_errors > 0 {
                format!(
                    ", seat errors {} lone / {} others",
                    g.lone_errors, g.others_errors
                )
            } else {
                String::new()
            },
            g.seconds
        ),
        Err(e) => format!("[{n}/{total}] {e}"),
    }
}

fn result_of(job: &Job, report: &MatchReport, seconds: f64) -> Result<GameResult, String> {
    let i = job.power.index();
    let bad = |what: &str| format!("{}: the report has no {what}", job.label());
    let score = *report.scores.get(i).ok_or_else(|| bad("score"))?;
    let seat = report.seats.get(i).ok_or_else(|| bad("seat"))?;
    let centers = seat
        .extra
        .get("centers")
        .and_then(|c| c.as_u64())
        .ok_or_else(|| bad("centre count"))?;
    let end = report
        .extra
        .get("end")
        .and_then(|e| e.as_str())
        .unwrap_or("unfinished")
        .to_string();
    Ok(GameResult {
        setup: job.setup,
        power: job.power.name(),
        seed: job.spec.seed,
        score,
        centers,
        solo: report.winner == Some(i),
        other_solo: report.winner.is_some_and(|w| w != i),
        eliminated: centers == 0 && score == 0.0,
        end,
        lone_errors: seat.errors.len(),
        others_errors: report
            .seats
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, s)| s.errors.len())
            .sum(),
        seconds,
    })
}

#[derive(Default)]
struct Tally {
    score: MeanScore,
    centers: u64,
    solos: usize,
    other_solos: usize,
    eliminated: usize,
    lone_errors: usize,
    others_errors: usize,
}

impl Tally {
    fn add(&mut self, g: &GameResult) {
        self.score.add(g.score);
        self.centers += g.centers;
        self.solos += usize::from(g.solo);
        self.other_solos += usize::from(g.other_solo);
        self.eliminated += usize::from(g.eliminated);
        self.lone_errors += g.lone_errors;
        self.others_errors += g.others_errors;
    }

    fn mean_centers(&self) -> f64 {
        self.centers as f64 / self.score.games().max(1) as f64
    }
}

impl StrengthReport {
    /// Each setup's table, then a `not played:` line per failure.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for &s in &self.setups {
            out.push_str(&self.table(s));
        }
        for f in &self.failures {
            let _ = writeln!(out, "not played: {f}");
        }
        out
    }

    /// One object: `bot`, `opponent`, `setups` (each setup's summary), `games`, `failures`.
    pub fn to_json(&self) -> serde_json::Value {
        let summaries: Vec<serde_json::Value> =
            self.setups.iter().map(|&s| self.summary_json(s)).collect();
        json!({
            "bot": self.bot,
            "opponent": self.opponent,
            "setups": summaries,
            "games": self.games,
            "failures": self.failures,
        })
    }

    fn tallies(&self, setup: Setup) -> (Vec<(Power, Tally)>, Tally) {
        let mut per: Vec<(Power, Tally)> =
            Power::ALL.iter().map(|&p| (p, Tally::default())).collect();
        let mut all = Tally::default();
        for g in self.games.iter().filter(|g| g.setup == setup) {
            if let Some((_, t)) = per.iter_mut().find(|(p, _)| p.name() == g.power) {
                t.add(g);
            }
            all.add(g);
        }
        (per, all)
    }

    fn lone_and_others(&self, setup: Setup) -> (&str, &str) {
        match setup {
            Setup::One => (&self.bot, &self.opponent),
            Setup::Six => (&self.opponent, &self.bot),
        }
    }

    fn table(&self, setup: Setup) -> String {
        let (lone, others) = self.lone_and_others(setup);
        let (per, all) = self.tallies(setup);
        let mut out = String::new();
        let year = self
            .max_year
            .map_or_else(|| "the game's year limit".to_string(), |y| y.to_string());
        let _ = writeln!(
            out,
            "{}: one {lone} against six {others}, {} games, to {year}",
            setup.name(),
            all.score.games()
        );
        let _ = writeln!(
            out,
            "  power     games  mean score  mean centres  solos  others' solos  eliminated  seat errors (lone/others)"
        );
        let rows = per
            .iter()
            .map(|(p, t)| (p.name(), t, String::new()))
            .chain(std::iter::once((
                "all",
                &all,
                if all.score.games() >= 2 {
                    format!(" ± {:.3}", all.score.ci95())
                } else {
                    String::new()
                },
            )));
        for (label, t, ci) in rows {
            let _ = writeln!(
                out,
                "  {label:<8} {:>6}  {:>10}  {:>12.1}  {:>5}  {:>13}  {:>10}  {}/{}",
                t.score.games(),
                format!("{:.3}{ci}", t.score.mean()),
                t.mean_centers(),
                t.solos,
                t.other_solos,
                t.eliminated,
                t.lone_errors,
                t.others_errors
            );
        }
        out
    }

    fn summary_json(&self, setup: Setup) -> serde_json::Value {
        let (lone, others) = self.lone_and_others(setup);
        let (per, all) = self.tallies(setup);
        let row = |t: &Tally| {
            json!({
                "games": t.score.games(),
                "mean_score": t.score.mean(),
                "mean_centers": t.mean_centers(),
                "solos": t.solos,
                "others_solos": t.other_solos,
                "eliminated": t.eliminated,
                "lone_errors": t.lone_errors,
                "others_errors": t.others_errors,
            })
        };
        let mut powers = serde_json::Map::new();
        for (p, t) in &per {
            powers.insert(p.name().to_string(), row(t));
        }
        let mut total = row(&all);
        if all.score.games() >= 2 {
            total["ci95"] = json!(all.score.ci95());
        }
        json!({
            "setup": setup,
            "lone": lone,
            "others": others,
            "powers": powers,
            "all": total,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(setup: Setup, power: &'static str, seed: u64, score: f64, centers: u64) -> GameResult {
        GameResult {
            setup,
            power,
            seed,
            score,
            centers,
            solo: centers >= 18,
            other_solo: false,
            eliminated: centers == 0 && score == 0.0,
            end: "year_limit".into(),
            lone_errors: 0,
            others_errors: 1,
            seconds: 0.5,
        }
    }

    #[test]
    fn the_table_and_summary_count_each_setups_games() {
        let report = StrengthReport {
            bot: "builtin:strong".into(),
            opponent: "builtin:hold".into(),
            max_year: Some(1903),
            setups: vec![Setup::One],
            games: vec![
                game(Setup::One, "AUSTRIA", 1, 1.0, 18),
                game(Setup::One, "ENGLAND", 2, 0.0, 0),
                game(Setup::Six, "FRANCE", 3, 0.5, 5),
            ],
            failures: vec!["one-vs-six FRANCE seed 3: the match could not be played: x".into()],
            total: 4,
        };
        let text = report.text();
        assert!(
            text.starts_with(
                "one-vs-six: one builtin:strong against six builtin:hold, 2 games, to 1903\n"
            ),
            "{text}"
        );
        assert!(text.contains("  all           2  0.500 ± 0.980"), "{text}");
        assert!(text
            .ends_with("not played: one-vs-six FRANCE seed 3: the match could not be played: x\n"));
        let v = report.to_json();
        let s = &v["setups"][0];
        assert_eq!(s["setup"], "one");
        assert_eq!(s["all"]["games"], 2);
        assert_eq!(s["all"]["solos"], 1);
        assert_eq!(s["all"]["eliminated"], 1);
        assert_eq!(s["all"]["others_errors"], 2);
        assert_eq!(s["powers"]["AUSTRIA"]["mean_centers"], 18.0);
        assert_eq!(s["powers"]["FRANCE"]["games"], 0);
        assert_eq!(v["games"].as_array().map(Vec::len), Some(3));
    }
}
