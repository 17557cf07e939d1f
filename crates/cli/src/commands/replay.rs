//! `kakehiki replay`: verify a replay (re-run it and compare byte for byte), or convert one of an
//! older format with `--upgrade`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use kakehiki_referee::verify::{upgrade_replay, verify_replay};
use kakehiki_referee::RefereeError;

use crate::exit;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The replay file (JSON lines) written by `kakehiki play --replay`.
    pub path: PathBuf,
    /// Print the re-run's result as one JSON object.
    #[arg(long, conflicts_with = "upgrade")]
    pub json: bool,
    /// Convert a replay of an older format of its game into the current one (printed, or
    /// written to --out), then verify the converted replay.
    #[arg(long)]
    pub upgrade: bool,
    /// With --upgrade: where to write the converted replay (default: standard output).
    #[arg(long, short, value_name = "PATH", requires = "upgrade")]
    pub out: Option<PathBuf>,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<u8> {
    let text = std::fs::read_to_string(&args.path)
        .with_context(|| format!("cannot read replay {}", args.path.display()))?;
    if args.upgrade {
        return upgrade(&text, &args.path, args.out.as_deref());
    }
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

/// `--upgrade`: the game's driver converts the replay, the result is verified before it is
/// written (to `out`, or to standard output).
fn upgrade(text: &str, path: &Path, out: Option<&Path>) -> anyhow::Result<u8> {
    let up = upgrade_replay(text)
        .with_context(|| format!("cannot upgrade replay {}", path.display()))?;
    match out {
        Some(o) => {
            kakehiki_core::private_files::write(o, &up.text)
                .with_context(|| format!("cannot write {}", o.display()))?;
            print!("{}", super::summary(&up.record.report));
            println!(
                "upgraded {} from {} to {}, verified, written to {}",
                path.display(),
                up.from,
                up.to,
                o.display()
            );
        }
        None => {
            print!("{}", up.text);
            eprintln!(
                "upgraded {} from {} to {} and verified",
                path.display(),
                up.from,
                up.to
            );
        }
    }
    Ok(exit::OK)
}
