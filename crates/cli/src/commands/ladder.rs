//! `kakehiki ladder`: the hosted ladder's commands (`docs/ladder.md`). `build` takes an upload in
//! as the ladder would (intake, build in the sandbox, `check`) and says whether the bot would be
//! active.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use kakehiki_ladder::pipeline::{process_upload, Status};
use kakehiki_ladder::LadderConfig;
use serde::Serialize;

use crate::exit;

#[derive(Args, Debug)]
pub struct LadderArgs {
    #[command(subcommand)]
    pub command: LadderCommand,
}

#[derive(Subcommand, Debug)]
pub enum LadderCommand {
    /// Take in an upload as the ladder would: unpack it (a source file, or a zip or tar.gz
    /// archive, refused whole when hostile), build it with the language's recipe in the
    /// sandbox, and `check` the built bot. Exit 0 when the bot would be active, 4 when it was
    /// refused or its build or check failed (with the log).
    Build(BuildArgs),
    /// Create a contestant's account (or an organiser's with --organiser) and print a one-time
    /// sign-up link and the account's API token. Only their SHA-256 hashes are stored: this is
    /// the one time they are shown.
    Invite(InviteArgs),
    /// Serve the ladder: uploads built and checked in the background, matchmaking, matches
    /// played by workers and rated, the JSON API, the public pages (leaderboard, bots, matches)
    /// and the contestants' pages (sign-up, login, the upload form, a version's log, the
    /// organiser's page).
    Serve(super::ladder_serve::ServeArgs),
    /// Disable an account: it can no longer log in or use its API token, its sessions end and
    /// its bot is matched no more (matches already queued or running finish); its versions,
    /// ratings and matches stay. `--enable` enables it again.
    Disable(DisableArgs),
    /// Retire a bot of a ladder: it is matched no more (matches already queued or running
    /// finish) and leaves the leaderboard; its versions, ratings and matches stay. `--undo`
    /// brings it back.
    Retire(RetireArgs),
    /// Show a ladder's state from its store: play (frozen or not, matches queued, rated, open,
    /// running and stopped or failed), bots and versions by status, accounts, and the store's
    /// size by kind (uploads, built programs, replays).
    Status(StatusArgs),
    /// Freeze the ladder (no more matches are queued), or thaw it with --thaw.
    Freeze(super::ladder_final::FreezeArgs),
    /// Freeze the ladder and run its final over the frozen versions with a contest format, into
    /// the same store (published by `kakehiki contest standings` and `kakehiki web`).
    Final(super::ladder_final::FinalArgs),
}

#[derive(Args, Debug)]
pub struct InviteArgs {
    /// The account's name (1 to 64 letters, digits, `-`, `_` or `.`).
    pub name: String,
    /// SQLite store (created if missing).
    #[arg(
        long,
        default_value = "kakehiki.sqlite",
        conflicts_with = "database_url"
    )]
    pub db: PathBuf,
    /// PostgreSQL store.
    #[arg(long, env = "KAKEHIKI_DATABASE_URL")]
    pub database_url: Option<String>,
    /// The ladder server's address, for the sign-up link.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// An organiser's account (sees everything) rather than a contestant's.
    #[arg(long, conflicts_with = "again")]
    pub organiser: bool,
    /// Invite an existing account again (a lost password, a leaked token): a new sign-up link
    /// and a new API token; its password and the old token stop working and its sessions end.
    #[arg(long)]
    pub again: bool,
    /// Print one JSON object: `name`, `role`, `signup_url`, `token`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct DisableArgs {
    /// The account's name.
    pub name: String,
    /// Enable the account again.
    #[arg(long)]
    pub enable: bool,
    #[command(flatten)]
    pub store: super::contest::StoreArgs,
}

#[derive(Args, Debug)]
pub struct RetireArgs {
    /// The bot's name (its owner's account name).
    pub bot: String,
    /// The ladder (its `name`).
    #[arg(long)]
    pub ladder: String,
    /// Bring the bot back.
    #[arg(long)]
    pub undo: bool,
    #[command(flatten)]
    pub store: super::contest::StoreArgs,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The ladder (its `name`).
    #[arg(long)]
    pub ladder: String,
    /// Print one JSON object instead.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: super::contest::StoreArgs,
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The ladder file.
    #[arg(long, value_name = "LADDER.toml")]
    pub config: PathBuf,
    /// One of the ladder's languages.
    #[arg(long)]
    pub language: String,
    /// The upload: one source file, or a zip or tar.gz archive.
    pub path: PathBuf,
    /// Keep the built program folder here (it must not exist); by default it is removed.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print one JSON object: `status` (`active`, `build_failed`, `check_failed` or `refused`)
    /// and `log`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: LadderArgs) -> anyhow::Result<u8> {
    match args.command {
        LadderCommand::Build(a) => build(a),
        LadderCommand::Invite(a) => invite(a),
        LadderCommand::Disable(a) => disable(a),
        LadderCommand::Retire(a) => retire(a),
        LadderCommand::Status(a) => status(a),
        LadderCommand::Serve(a) => super::ladder_serve::run(a),
        LadderCommand::Freeze(a) => super::ladder_final::freeze(a),
        LadderCommand::Final(a) => super::ladder_final::final_(a),
    }
}

fn build(args: BuildArgs) -> anyhow::Result<u8> {
    let config = LadderConfig::load_playable(&args.config)?;
    let upload = std::fs::read(&args.path)
        .with_context(|| format!("cannot read {}", args.path.display()))?;
    let work = tempfile::Builder::new()
        .prefix("kakehiki-ladder-build-")
        .tempdir()
        .context("cannot make a temporary folder")?;
    let program_dir = match &args.out {
        Some(d) => d.clone(),
        None => work.path().join("program"),
    };
    let verdict = process_upload(&config, &args.language, &upload, &program_dir, work.path())?;
    if args.json {
        println!("{}", serde_json::to_string(&verdict)?);
    } else {
        // The build's log holds what the contestant's build printed: escaped for the terminal.
        print!("{}", kakehiki_core::text::terminal_text(&verdict.log));
        println!("status: {}", verdict.status.as_str());
    }
    Ok(match verdict.status {
        Status::Active => exit::OK,
        _ => exit::SEAT_ERRORS,
    })
}

#[derive(Serialize)]
struct Invited<'a> {
    name: &'a str,
    role: &'static str,
    signup_url: String,
    token: &'a str,
}

fn disable(args: DisableArgs) -> anyhow::Result<u8> {
    let mut store = args.store.open()?;
    if !store.ladder_set_disabled(&args.name, !args.enable)? {
        anyhow::bail!("there is no account {:?}", args.name);
    }
    if args.enable {
        println!(
            "enabled {}: it may log in again and its bot is matched again",
            args.name
        );
    } else {
        println!(
            "disabled {}: its sessions ended, its token is refused and its bot is matched no more",
            args.name
        );
    }
    Ok(exit::OK)
}

fn retire(args: RetireArgs) -> anyhow::Result<u8> {
    let mut store = args.store.open()?;
    if !store.ladder_set_retired(&args.ladder, &args.bot, !args.undo)? {
        anyhow::bail!("ladder {:?} has no bot {:?}", args.ladder, args.bot);
    }
    if args.undo {
        println!("{} is back on ladder {}", args.bot, args.ladder);
    } else {
        println!(
            "retired {} from ladder {}: it is matched no more; its history stays",
            args.bot, args.ladder
        );
    }
    Ok(exit::OK)
}

fn status(args: StatusArgs) -> anyhow::Result<u8> {
    let mut store = args.store.open()?;
    let status = kakehiki_ladder::status::status(store.as_mut(), &args.ladder)?;
    if args.json {
        // Through a JSON value: its keys sorted, as the pretty printer shows them.
        println!("{:#}", serde_json::to_value(&status)?);
    } else {
        print!("{}", status.text());
    }
    Ok(exit::OK)
}

fn invite(args: InviteArgs) -> anyhow::Result<u8> {
    let role = if args.organiser {
        kakehiki_store::LadderRole::Organiser
    } else {
        kakehiki_store::LadderRole::Contestant
    };
    let mut store = kakehiki_store::open_store(&args.db, args.database_url.as_deref())?;
    let (invitation, role) =
        kakehiki_ladder::accounts::invite_account(store.as_mut(), &args.name, role, args.again)?;
    let out = Invited {
        name: &args.name,
        role: role.as_str(),
        signup_url: format!(
            "{}/signup?code={}",
            args.url.trim_end_matches('/'),
            invitation.signup_code
        ),
        token: &invitation.token,
    };
    if args.json {
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("invited {} ({})", out.name, out.role);
        println!("sign-up link (works once): {}", out.signup_url);
        println!("API token (shown only now): {}", out.token);
    }
    Ok(exit::OK)
}
