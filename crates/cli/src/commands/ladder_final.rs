//! `kakehiki ladder freeze` and `kakehiki ladder final`: stop the ladder's matchmaking, and run
//! the final over the frozen versions with an existing contest format (docs/ladder.md).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use kakehiki_ladder::final_contest::{final_contest, FinalOptions};

use super::contest::{run_contest, RunArgs, StoreArgs};
use kakehiki_ladder::LadderConfig;

#[derive(Args, Debug)]
pub struct FreezeArgs {
    /// The ladder file.
    #[arg(long, value_name = "LADDER.toml")]
    pub config: PathBuf,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Thaw a frozen ladder: matchmaking goes on.
    #[arg(long)]
    pub thaw: bool,
}

#[derive(Args, Debug)]
pub struct FinalArgs {
    /// The ladder file.
    #[arg(long, value_name = "LADDER.toml")]
    pub config: PathBuf,
    #[command(flatten)]
    pub store: StoreArgs,
    /// The ladder server's data folder (the built program folders).
    #[arg(long, value_name = "DIR", default_value = "ladder-data")]
    pub data: PathBuf,
    /// The final's contest format (`kakehiki contest --help` lists them).
    #[arg(long, default_value = "round-robin")]
    pub format: String,
    /// Games per table (round robin), per pairing or per set, as the format reads it.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub games: u64,
    /// The final's contest name (default: the ladder's name and `-final`).
    #[arg(long)]
    pub name: Option<String>,
    /// Base seed of the final's matches.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// The ladder's built-in bots play in the final too.
    #[arg(long)]
    pub builtins: bool,
    /// Matches played at once.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: Option<u16>,
    /// Where the final's contest file is written (default: DATA/NAME.toml).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

pub fn freeze(args: FreezeArgs) -> anyhow::Result<u8> {
    let config = LadderConfig::load_playable(&args.config)?;
    let mut store = args.store.open()?;
    store
        .ladder_set_frozen(&config.name, !args.thaw)
        .context("cannot freeze the ladder")?;
    eprintln!(
        "ladder {} {}",
        config.name,
        if args.thaw {
            "thawed: matchmaking goes on"
        } else {
            "frozen: no more matches are queued (those queued are still played and rated)"
        }
    );
    Ok(crate::exit::OK)
}

/// Freeze the ladder, write the final's contest file over its active versions, and run it into
/// the same store, where `kakehiki contest standings` and `kakehiki web` publish it.
pub fn final_(args: FinalArgs) -> anyhow::Result<u8> {
    let config = LadderConfig::load_playable(&args.config)?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| kakehiki_ladder::final_contest::final_contest_name(&config.name));
    let data = std::path::absolute(&args.data)
        .with_context(|| format!("bad data folder {}", args.data.display()))?;
    let opts = FinalOptions {
        name: name.clone(),
        format: args.format.clone(),
        games: args.games,
        seed: args.seed,
        builtins: args.builtins,
    };
    let text = final_contest(&config, args.store.open()?.as_mut(), &data, &opts)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| data.join(format!("{name}.toml")));
    kakehiki_core::private_files::write(&out, text.as_bytes())
        .with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!(
        "ladder {} frozen; the final {name:?} ({} format) is {}",
        config.name,
        args.format,
        out.display()
    );
    let mut code = run_contest(RunArgs {
        file: out,
        store: args.store.clone(),
        jobs: args.jobs,
        quiet: args.quiet,
        no_standings: false,
        serve: None,
    })?;
    // A `playoff` ladder: the entrants the complete final ranks level play their play-offs.
    let standings = {
        let mut store = args.store.open_read_only()?;
        kakehiki_ladder::final_contest::stored_standings(store.as_mut(), &name)
            .context("cannot read the final's standings")?
    };
    for (playoff, text) in
        kakehiki_ladder::final_contest::playoff_contests(&config, &text, &standings)?
    {
        let file = data.join(format!("{playoff}.toml"));
        kakehiki_core::private_files::write(&file, text.as_bytes())
            .with_context(|| format!("cannot write {}", file.display()))?;
        eprintln!(
            "the final ranks entrants level: their play-off {playoff:?} is {}",
            file.display()
        );
        code = code.max(run_contest(RunArgs {
            file,
            store: args.store.clone(),
            jobs: args.jobs,
            quiet: args.quiet,
            no_standings: false,
            serve: None,
        })?);
    }
    let store_arg = match &args.store.database_url {
        Some(_) => "--database-url URL".to_string(),
        None => format!("--db {}", args.store.db.display()),
    };
    eprintln!(
        "published in the store: `kakehiki contest standings {name} {store_arg}`, and its pages with `kakehiki web {store_arg}`"
    );
    Ok(code)
}
