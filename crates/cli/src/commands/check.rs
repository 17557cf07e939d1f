//! `kakehiki check GAME --seat SPEC`: play a contestant's bot through a set of matches against
//! built-in bots, in the first and the last seat and with several seeds, and print what went
//! wrong: every error the referee recorded for the bot (turn, kind, what was expected and what
//! it sent), and its stderr tail. Exit status 0 only for a bot with no errors.

use std::collections::BTreeMap;

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_core::{SeatError, SeatSpec};
use kakehiki_referee::{find_game, MatchSpec};
use serde::Serialize;

use super::play::{parse_options, stderr_tails};
use crate::exit;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The game: nac, religion-war, geister, werewolf, diplomacy.
    pub game: String,
    /// Your bot: cmd:<command line>, or tcp-cmd:<command line> with {host} and {port} for games
    /// with a TCP protocol.
    #[arg(long = "seat", value_name = "SPEC")]
    pub seat: SeatSpec,
    /// The built-in bot the other seats play (default: the game's first, usually `random`).
    #[arg(long, value_name = "NAME")]
    pub against: Option<String>,
    /// Rule set (default: the game's first).
    #[arg(long)]
    pub rules: Option<String>,
    /// Game-specific option KEY=VALUE; may be repeated.
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Seeds per seat played (the bot plays the first and the last seat).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=50))]
    pub seeds: u64,
    /// Print one JSON object (for CI): `passed`, and per match `seed`, `seat`, `errors`, `stderr_tail`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct CheckedMatch {
    seed: u64,
    seat: usize,
    seats: usize,
    errors: Vec<SeatError>,
    stderr_tail: String,
}

#[derive(Debug, Serialize)]
struct CheckReport {
    game: String,
    bot: String,
    passed: bool,
    matches: Vec<CheckedMatch>,
}

/// Lines of stderr shown per failed match.
const TAIL_LINES: usize = 20;

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let driver = find_game(&args.game)?;
    let gt = driver.game_type();
    if matches!(args.seat, SeatSpec::Builtin(_) | SeatSpec::Tcp) {
        bail!(
            "check plays your bot: give --seat cmd:<command line> or tcp-cmd:<command line>, not {}",
            args.seat
        );
    }
    let against = match &args.against {
        Some(name) => name.clone(),
        None => gt
            .builtin_bots
            .first()
            .map(|s| s.to_string())
            .context("this game has no built-in bots to play against")?,
    };
    let options = parse_options(&args.options)?;
    let n = gt.default_seats;
    let positions: Vec<usize> = if n > 1 { vec![0, n - 1] } else { vec![0] };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let mut matches = Vec::new();
    for &seat in &positions {
        for k in 0..args.seeds {
            let seed = 1000 + k * 7 + seat as u64;
            let seats: Vec<SeatSpec> = (0..n)
                .map(|i| {
                    if i == seat {
                        args.seat.clone()
                    } else {
                        SeatSpec::Builtin(against.clone())
                    }
                })
                .collect();
            let mut spec = MatchSpec::new(&args.game, seed, seats);
            spec.rules = args.rules.clone();
            spec.options = options.clone();
            if !args.json {
                eprintln!(
                    "check: {} seed {seed}, your bot in seat {seat} of {n}",
                    args.game
                );
            }
            let record = runtime
                .block_on(driver.play(&spec))
                .with_context(|| format!("cannot run a {} match", args.game))?;
            let errors = record
                .report
                .seats
                .get(seat)
                .map(|s| s.errors.clone())
                .unwrap_or_default();
            let tails: BTreeMap<usize, String> = stderr_tails(&record.replay.to_text(), TAIL_LINES);
            matches.push(CheckedMatch {
                seed,
                seat,
                seats: n,
                stderr_tail: if errors.is_empty() {
                    String::new()
                } else {
                    tails.get(&seat).cloned().unwrap_or_default()
                },
                errors,
            });
        }
    }
    let report = CheckReport {
        game: args.game.clone(),
        bot: args.seat.to_string(),
        passed: matches.iter().all(|m| m.errors.is_empty()),
        matches,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", diagnosis(&report));
    }
    Ok(if report.passed {
        exit::OK
    } else {
        exit::SEAT_ERRORS
    })
}

/// What a contestant reads: per failed match, every error with its turn and detail, then the
/// stderr tail; a verdict at the end.
fn diagnosis(r: &CheckReport) -> String {
    let mut out = String::new();
    for m in &r.matches {
        if m.errors.is_empty() {
            out.push_str(&format!(
                "ok    seed {}, seat {} of {}: no errors\n",
                m.seed, m.seat, m.seats
            ));
            continue;
        }
        out.push_str(&format!(
            "FAIL  seed {}, seat {} of {}: {} error{}\n",
            m.seed,
            m.seat,
            m.seats,
            m.errors.len(),
            if m.errors.len() == 1 { "" } else { "s" }
        ));
        for e in &m.errors {
            out.push_str(&format!(
                "      turn {}: {}: {}\n",
                e.turn,
                e.kind.as_str(),
                e.detail
            ));
        }
        if !m.stderr_tail.trim().is_empty() {
            out.push_str("      your bot's stderr (last lines):\n");
            for line in m.stderr_tail.lines() {
                out.push_str(&format!("      | {line}\n"));
            }
        }
    }
    out.push_str(if r.passed {
        "passed: your bot played every match without an error\n"
    } else {
        "failed: fix the errors above (docs/protocols/ describes each game's protocol)\n"
    });
    out
}
