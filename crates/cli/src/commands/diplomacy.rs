//! `kakehiki diplomacy adjudicate`: the JSON-lines adjudication service
//! (docs/adjudication-service.md); `kakehiki diplomacy map`: the map the engine plays on, as
//! data (docs/protocols/diplomacy.md, "The map"); `kakehiki diplomacy strength`: a bot's
//! strength table against another bot (docs/diplomacy-strength.md).

use std::io;

use anyhow::Context;
use clap::{Args, Subcommand};
use kakehiki_diplomacy::map_data::{map_json, map_text};

use crate::exit;

#[derive(Args, Debug)]
pub struct DiplomacyArgs {
    #[command(subcommand)]
    pub command: DiplomacyCommand,
}

#[derive(Subcommand, Debug)]
pub enum DiplomacyCommand {
    /// Read one JSON object per line on stdin (phase, units, dislodged, centers, homes, orders),
    /// write one adjudicated result per line on stdout, in input order; exits 0 at end of input.
    /// A bad line gets {"error": "..."} and the service carries on. Answers are flushed before
    /// the service waits for more input.
    Adjudicate(AdjudicateArgs),
    /// Print the standard map the engine plays on: provinces (name, type, supply centre, home
    /// power, coasts), army and fleet adjacency, and the start position. Read from the engine's
    /// own tables, so it is exactly what the adjudicator uses.
    Map(MapArgs),
    /// Measure a bot against an opponent over full games: one seat of the bot against six of
    /// the opponent, and one seat of the opponent against six of the bot, every power in turn.
    /// Prints the table of mean scores (1 for a solo, else the survivors share 1), centres,
    /// solos and eliminations per power. The opponent may be any seat spec, e.g. a DAIDE bot
    /// as `daide-cmd:<command line>`; it runs in the sandbox as in `play`.
    Strength(Box<super::strength::StrengthArgs>),
}

#[derive(Args, Debug)]
pub struct MapArgs {
    /// One JSON object (the fields are documented in docs/protocols/diplomacy.md, "The map");
    /// without it, plain text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct AdjudicateArgs {
    /// Adjudicating threads (default: the available cores, at most 8). With more than one, the
    /// threads take blocks of input lines in turn and the output stays in input order.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
}

pub fn run(args: DiplomacyArgs) -> anyhow::Result<u8> {
    match args.command {
        DiplomacyCommand::Adjudicate(a) => {
            let threads = match a.threads {
                Some(n) => usize::from(n),
                None => std::thread::available_parallelism()
                    .map(|n| n.get().min(8))
                    .unwrap_or(1),
            };
            // Unbuffered here: the service writes each block's answers in one call and flushes.
            kakehiki_diplomacy::service::serve_with(io::stdin(), io::stdout(), threads)
                .context("adjudication service i/o")?;
            Ok(exit::OK)
        }
        DiplomacyCommand::Strength(a) => super::strength::run(*a),
        DiplomacyCommand::Map(a) => {
            let map = kakehiki_diplomacy::standard();
            let start = kakehiki_diplomacy::Board::standard_start();
            if a.json {
                println!("{}", serde_json::to_string_pretty(&map_json(map, &start))?);
            } else {
                print!("{}", map_text(map, &start));
            }
            Ok(exit::OK)
        }
    }
}
