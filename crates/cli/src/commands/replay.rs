//! `kakehiki replay`: verify a replay (re-run it and compare byte for byte), or convert one of an
//! older format with `--upgrade`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_core::replay::ReplayLog;
use kakehiki_referee::driver::{verify_replay, SANDBOX_KEY};
use kakehiki_referee::{find_game, RefereeError};

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

/// `--upgrade`: the game's driver converts the replay; the result is verified before it is
/// written, and the sandbox the bots ran in (a header field outside the game) is kept.
fn upgrade(text: &str, path: &Path, out: Option<&Path>) -> anyhow::Result<u8> {
    let cannot = || format!("cannot upgrade replay {}", path.display());
    let parsed = ReplayLog::parse(text).with_context(cannot)?;
    let found = parsed.header.format.clone();
    let driver = find_game(&parsed.header.game).with_context(cannot)?;
    let current = driver.replay_format();
    if current == Some(found.as_str()) || (current.is_none() && verify_replay(text).is_ok()) {
        bail!(
            "replay {} is already in the current format ({found}): nothing to upgrade; `kakehiki replay {}` verifies it",
            path.display(),
            path.display()
        );
    }
    let mut log = driver.upgrade(&parsed).with_context(cannot)?;
    let sandbox = text
        .lines()
        .next()
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|h| h.get(SANDBOX_KEY).cloned());
    if let Some(s) = sandbox {
        log.append_header_field(SANDBOX_KEY, &s);
    }
    let upgraded = log.to_text();
    let record = verify_replay(&upgraded).with_context(|| {
        format!(
            "the upgrade of {} (format {found}) does not verify; nothing was written",
            path.display()
        )
    })?;
    let now = ReplayLog::parse(&upgraded)?.header.format;
    match out {
        Some(o) => {
            kakehiki_core::private_files::write(o, &upgraded)
                .with_context(|| format!("cannot write {}", o.display()))?;
            print!("{}", super::summary(&record.report));
            println!(
                "upgraded {} from {found} to {now}, verified, written to {}",
                path.display(),
                o.display()
            );
        }
        None => {
            print!("{upgraded}");
            eprintln!(
                "upgraded {} from {found} to {now} and verified",
                path.display()
            );
        }
    }
    Ok(exit::OK)
}
