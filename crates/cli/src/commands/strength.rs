//! `kakehiki diplomacy strength`: a Diplomacy bot's strength table against another bot, in full
//! games with every power in turn (docs/diplomacy-strength.md): its flags; the games, their
//! results and the tables are `kakehiki_referee::strength`.

use clap::{Args, ValueEnum};
use kakehiki_core::SeatSpec;
use kakehiki_referee::strength::diplomacy::{self, Setup, StrengthOptions};

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

fn progress(line: &str) {
    eprintln!("{line}");
}

pub fn run(args: StrengthArgs) -> anyhow::Result<u8> {
    let opts = StrengthOptions {
        setups: match args.setup {
            Setups::One => vec![Setup::One],
            Setups::Six => vec![Setup::Six],
            Setups::Both => vec![Setup::One, Setup::Six],
        },
        bot: args.bot,
        opponent: args.opponent,
        games_per_power: args.games_per_power,
        max_year: args.max_year,
        seed: args.seed,
        jobs: args.jobs.map(usize::from),
        sandbox: args.sandbox.config(7)?,
        progress: Some(progress),
    };
    let report = diplomacy::run(&opts)?;
    if args.json {
        println!("{}", serde_json::to_string(&report.to_json())?);
    } else {
        print!("{}", report.text());
    }
    if report.failures.is_empty() {
        Ok(exit::OK)
    } else {
        eprintln!(
            "{} of {} games could not be played; they are not in the table",
            report.failures.len(),
            report.total
        );
        Ok(exit::FAILURE)
    }
}
