//! `kakehiki diplomacy adjudicate`: the JSON-lines adjudication service (spec diplomacy §5).

use std::io::{self, BufWriter};

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
    /// write one adjudicated result per line on stdout, flushed per line; exits 0 at end of input.
    /// A bad line gets {"error": "..."} and the service carries on.
    Adjudicate,
}

pub fn run(args: DiplomacyArgs) -> anyhow::Result<u8> {
    match args.command {
        DiplomacyCommand::Adjudicate => {
            let stdin = io::stdin().lock();
            let stdout = BufWriter::new(io::stdout().lock());
            kakehiki_diplomacy::service::serve(stdin, stdout)
                .context("adjudication service i/o")?;
            Ok(exit::OK)
        }
    }
}
