//! `kakehiki replay`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use kakehiki_referee::driver::verify_replay;
use kakehiki_referee::RefereeError;

use crate::exit;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The replay file (JSON lines) written by `kakehiki play --replay`.
    pub path: PathBuf,
    /// Print the re-run's result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<u8> {
    let text = std::fs::read_to_string(&args.path)
        .with_context(|| format!("cannot read replay {}", args.path.display()))?;
    match verify_replay(&text) {
        Ok(record) => {
            if args.json {
                println!("{}", serde_json::to_string(&record.report)?);
            } else {
                print!("{}", super::summary(&record.report));
                println!(
                    "replay verified: the re-run reproduces {} byte for byte",
                    args.path.display()
                );
            }
            Ok(exit::OK)
        }
        Err(e @ RefereeError::ReplayMismatch { .. }) => {
            eprintln!(
                "error: replay {} does not reproduce: {e}",
                args.path.display()
            );
            Ok(exit::REPLAY_MISMATCH)
        }
        Err(e) => Err(e).with_context(|| format!("cannot re-run replay {}", args.path.display())),
    }
}
