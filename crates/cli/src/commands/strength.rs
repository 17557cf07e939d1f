//! `kakehiki diplomacy strength`: a Diplomacy bot's strength table against another bot, in full
//! games with every power in turn (docs/diplomacy-strength.md).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use clap::{Args, ValueEnum};
use kakehiki_core::SeatSpec;
use kakehiki_diplomacy::Power;
use kakehiki_referee::{find_game, MatchSpec};
use serde::Serialize;
use serde_json::json;

use super::play::SandboxArgs;
use crate::exit;

/// Which setups to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Setups {
    /// One seat of the bot against six of the opponent.
    One,
    /// One seat of the opponent against six of the bot.
    Six,
    /// Both.
    Both,
}

#[derive(Args, Debug)]
pub struct StrengthArgs {
    /// The bot measured (any seat spec).
    #[arg(long, value_name = "SPEC", default_value = "builtin:strong")]
    pub bot: SeatSpec,
    /// Its opponent (any seat spec), e.g. daide-cmd:<command line> for a DAIDE bot.
    #[arg(long, value_name = "SPEC")]
    pub opponent: SeatSpec,
    /// Games per power in each setup: a setup is 7 times this many games.
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub games_per_power: u32,
    /// `one`: the bot alone against six opponents; `six`: one opponent against six of the bot;
    /// `both`.
    #[arg(long, value_enum, default_value_t = Setups::Both)]
    pub setup: Setups,
    /// The last year played before the game ends in a draw of the survivors (default: the
    /// game's, 1920).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1901..=9999))]
    pub max_year: Option<u32>,
    /// Seed of the first game; game k of a setup has seed + k, so both setups use the same
    /// seeds.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games played at once (default: the available cores).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: Option<u16>,
    /// Print one JSON object (every game and each setup's summary) instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Setup {
    /// The bot holds the lone seat.
    One,
    /// The opponent holds the lone seat.
    Six,
}

/// One game's result for its lone seat.
#[derive(Clone, Debug, Serialize)]
struct GameResult {
    setup: Setup,
    power: &'static str,
    seed: u64,
    /// The lone seat's score.
    score: f64,
    /// The lone seat's centres at the end.
    centers: u64,
    /// The lone seat soloed.
    solo: bool,
    /// Another seat soloed.
    other_solo: bool,
    /// The lone seat was eliminated.
    eliminated: bool,
    /// How the game ended (`solo`, `year_limit`, `draw`).
    end: String,
    /// Seat errors (timeouts, crashes, bad replies) of the lone seat and of the six others.
    lone_errors: usize,
    others_errors: usize,
    seconds: f64,
}

struct Job {
    setup: Setup,
    power: Power,
    spec: MatchSpec,
}

pub fn run(args: StrengthArgs) -> anyhow::Result<u8> {
    let driver = find_game("diplomacy")?;
    let setups: Vec<Setup> = match args.setup {
        Setups::One => vec![Setup::One],
        Setups::Six => vec![Setup::Six],
        Setups::Both => vec![Setup::One, Setup::Six],
    };
    let mut jobs = VecDeque::new();
    for &setup in &setups {
        let (lone, others) = match setup {
            Setup::One => (&args.bot, &args.opponent),
            Setup::Six => (&args.opponent, &args.bot),
        };
        let mut k = 0u64;
        for _ in 0..args.games_per_power {
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
                let seed = args.seed.wrapping_add(k);
                k += 1;
                let mut spec = MatchSpec::new("diplomacy", seed, seats);
                spec.set_sandbox(args.sandbox.config(7)?);
                spec.deny_outputs_and_other_seats([])?;
                if let Some(y) = args.max_year {
                    spec.options.insert("max_year".into(), y.to_string());
                }
                if jobs.is_empty() || power == Power(0) {
                    // Bad seats and options are refused before any game is played.
                    driver.check_spec(&spec)?;
                }
                jobs.push_back(Job { setup, power, spec });
            }
        }
    }
    let total = jobs.len();
    let workers = match args.jobs {
        Some(n) => usize::from(n),
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    }
    .min(total);
    let queue = Arc::new(Mutex::new(jobs));
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let results: Vec<Result<GameResult, String>> = runtime.block_on(async move {
        for _ in 0..workers {
            let queue = Arc::clone(&queue);
            let tx = tx.clone();
            tokio::spawn(async move {
                loop {
                    let Some(job) = queue.lock().expect("queue lock").pop_front() else {
                        break;
                    };
                    let started = Instant::now();
                    let seed = job.spec.seed;
                    let out = driver
                        .play(&job.spec)
                        .await
                        .map_err(|e| {
                            format!(
                                "{} {} seed {seed}: the match could not be played: {e}",
                                setup_name(job.setup),
                                job.power.name()
                            )
                        })
                        .and_then(|record| {
                            result_of(&job, &record.report, started.elapsed().as_secs_f64())
                        });
                    if tx.send(out).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut all = Vec::with_capacity(total);
        while let Some(r) = rx.recv().await {
            match &r {
                Ok(g) => eprintln!(
                    "[{}/{total}] {} {:<8} seed {:>4}: score {:.3}, {:>2} centres, {}{} ({:.1} s)",
                    all.len() + 1,
                    setup_name(g.setup),
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
                Err(e) => eprintln!("[{}/{total}] {e}", all.len() + 1),
            }
            all.push(r);
        }
        all
    });
    let mut failures = Vec::new();
    let mut games = Vec::new();
    for r in results {
        match r {
            Ok(g) => games.push(g),
            Err(e) => failures.push(e),
        }
    }
    games.sort_by_key(|g| (g.setup == Setup::Six, g.seed));
    let summaries: Vec<serde_json::Value> = setups
        .iter()
        .map(|&s| summary_json(s, &args, &games))
        .collect();
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&json!({
                "bot": args.bot.to_string(),
                "opponent": args.opponent.to_string(),
                "setups": summaries,
                "games": games,
                "failures": failures,
            }))?
        );
    } else {
        for &s in &setups {
            print!("{}", table(s, &args, &games));
        }
        for f in &failures {
            println!("not played: {f}");
        }
    }
    if failures.is_empty() {
        Ok(exit::OK)
    } else {
        eprintln!(
            "{} of {total} games could not be played; they are not in the table",
            failures.len()
        );
        Ok(exit::FAILURE)
    }
}

fn setup_name(s: Setup) -> &'static str {
    match s {
        Setup::One => "one-vs-six",
        Setup::Six => "six-vs-one",
    }
}

fn result_of(
    job: &Job,
    report: &kakehiki_core::MatchReport,
    seconds: f64,
) -> Result<GameResult, String> {
    let i = job.power.index();
    let bad = |what: &str| {
        format!(
            "{} {} seed {}: the report has no {what}",
            setup_name(job.setup),
            job.power.name(),
            job.spec.seed
        )
    };
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
    games: usize,
    score: f64,
    score_sq: f64,
    centers: u64,
    solos: usize,
    other_solos: usize,
    eliminated: usize,
    lone_errors: usize,
    others_errors: usize,
}

impl Tally {
    fn add(&mut self, g: &GameResult) {
        self.games += 1;
        self.score += g.score;
        self.score_sq += g.score * g.score;
        self.centers += g.centers;
        self.solos += usize::from(g.solo);
        self.other_solos += usize::from(g.other_solo);
        self.eliminated += usize::from(g.eliminated);
        self.lone_errors += g.lone_errors;
        self.others_errors += g.others_errors;
    }
    fn mean(&self) -> f64 {
        self.score / self.games.max(1) as f64
    }
    /// Half-width of the normal 95% interval of the mean score.
    fn ci95(&self) -> f64 {
        let n = self.games as f64;
        if self.games < 2 {
            return f64::NAN;
        }
        let m = self.mean();
        let var = ((self.score_sq - n * m * m) / (n - 1.0)).max(0.0);
        1.96 * (var / n).sqrt()
    }
    fn mean_centers(&self) -> f64 {
        self.centers as f64 / self.games.max(1) as f64
    }
}

fn tallies(setup: Setup, games: &[GameResult]) -> (Vec<(Power, Tally)>, Tally) {
    let mut per: Vec<(Power, Tally)> = Power::ALL.iter().map(|&p| (p, Tally::default())).collect();
    let mut all = Tally::default();
    for g in games.iter().filter(|g| g.setup == setup) {
        if let Some((_, t)) = per.iter_mut().find(|(p, _)| p.name() == g.power) {
            t.add(g);
        }
        all.add(g);
    }
    (per, all)
}

fn lone_and_others(setup: Setup, args: &StrengthArgs) -> (String, String) {
    match setup {
        Setup::One => (args.bot.to_string(), args.opponent.to_string()),
        Setup::Six => (args.opponent.to_string(), args.bot.to_string()),
    }
}

fn table(setup: Setup, args: &StrengthArgs, games: &[GameResult]) -> String {
    use std::fmt::Write;
    let (lone, others) = lone_and_others(setup, args);
    let (per, all) = tallies(setup, games);
    let mut out = String::new();
    let year = args
        .max_year
        .map_or_else(|| "the game's year limit".to_string(), |y| y.to_string());
    let _ = writeln!(
        out,
        "{}: one {lone} against six {others}, {} games, to {year}",
        setup_name(setup),
        all.games
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
            if all.games >= 2 {
                format!(" ± {:.3}", all.ci95())
            } else {
                String::new()
            },
        )));
    for (label, t, ci) in rows {
        let _ = writeln!(
            out,
            "  {label:<8} {:>6}  {:>10}  {:>12.1}  {:>5}  {:>13}  {:>10}  {}/{}",
            t.games,
            format!("{:.3}{ci}", t.mean()),
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

fn summary_json(setup: Setup, args: &StrengthArgs, games: &[GameResult]) -> serde_json::Value {
    let (lone, others) = lone_and_others(setup, args);
    let (per, all) = tallies(setup, games);
    let row = |t: &Tally| {
        json!({
            "games": t.games,
            "mean_score": t.mean(),
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
    if all.games >= 2 {
        total["ci95"] = json!(all.ci95());
    }
    json!({
        "setup": setup,
        "lone": lone,
        "others": others,
        "powers": powers,
        "all": total,
    })
}
