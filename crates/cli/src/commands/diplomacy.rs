//! `kakehiki diplomacy adjudicate`: the JSON-lines adjudication service (spec diplomacy §5).

use std::io;

use anyhow::Context;
use clap::{Args, Subcommand};

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
    }
}
