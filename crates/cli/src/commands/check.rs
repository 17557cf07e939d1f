//! `kakehiki check GAME --seat SPEC`: the flags of the bot checker (`kakehiki_check`), which
//! plays a contestant's bot against built-in bots and prints what went wrong.

use std::time::Duration;

use clap::Args;
use kakehiki_check::CheckOptions;
use kakehiki_core::SeatSpec;

use super::play::{parse_options, SandboxArgs};
use crate::exit;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The game (see `kakehiki games`).
    pub game: String,
    /// Your bot: cmd:<command line>, or tcp-cmd:<command line> with {host} and {port} for games
    /// with a TCP protocol.
    #[arg(long = "seat", value_name = "SPEC")]
    pub seat: SeatSpec,
    /// The built-in bot the other seats play (default: the game's first, usually `random`).
    #[arg(long, value_name = "NAME")]
    pub against: Option<String>,
    /// Check only this rule set (default: every rule set the game has).
    #[arg(long)]
    pub rules: Option<String>,
    /// Game-specific option KEY=VALUE, under every rule set checked; may be repeated.
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Seats of each match, instead of the game's usual number (`--players 5` for a
    /// five-player Werewolf village, as a ladder of five seats plays).
    #[arg(long, value_name = "N")]
    pub players: Option<usize>,
    /// Seeds per seat played (the bot plays the first and the last seat).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=50))]
    pub seeds: u64,
    /// The first seed of the check's matches (the others follow from it: the first seat's
    /// are SEED, SEED+7, ...). The ladder draws a fresh one for every check, so that a bot
    /// cannot tell a check from a match.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(0..=(1u64 << 62)))]
    pub seed: u64,
    /// Stop after this many seconds: the check fails, naming the match it was in (the ladder
    /// sets its `limits.check_seconds`). Default: no limit but the game's own.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub time_limit_secs: Option<u64>,
    /// Print one JSON object (for CI): `passed`, `rules`, per match `rules`, `seed`, `seat`,
    /// `case`, `errors`, `warnings`, `exit`, `stderr_tail`; `timings` per rule set and kind of
    /// request; `coverage`; `warnings`.
    #[arg(long)]
    pub json: bool,
    /// The same sandbox flags as `play`. Your bot is the one process seat: its folder is
    /// `--seat-dir 0=DIR`, given to it in whichever seat it plays.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

fn progress(line: &str) {
    eprintln!("{line}");
}

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let options = CheckOptions {
        game: args.game,
        seat: args.seat,
        against: args.against,
        rules: args.rules,
        options: parse_options(&args.options)?,
        seeds: args.seeds,
        seats: args.players,
        seed: args.seed,
        time_limit: args.time_limit_secs.map(Duration::from_secs),
        sandbox: args.sandbox.config(1)?,
        progress: (!args.json).then_some(progress as fn(&str)),
    };
    let report = kakehiki_check::evaluate(&options)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", kakehiki_check::diagnosis(&report));
    }
    Ok(if report.passed {
        exit::OK
    } else {
        exit::SEAT_ERRORS
    })
}
