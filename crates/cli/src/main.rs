//! `kakehiki`: the command line. A thin layer: parse arguments, call the libraries, print.

// The flags' doc comments are clap's help text (`cmd:<command line>`), not rustdoc markup.
#![allow(rustdoc::invalid_html_tags)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc: the adjudication service and the referee allocate many small, short-lived values
/// (parsed orders, JSON lines); it is markedly faster there than the system allocator
/// (`cargo bench -p kakehiki --bench diplomacy_service`).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod commands;
mod errors;
mod fd_budget;

/// Exit codes, documented in `--help`.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// A failure: bad input file, setup error, I/O error. The message says which.
    pub const FAILURE: u8 = 1;
    /// Bad command-line usage (clap's own code).
    pub const USAGE: u8 = 2;
    /// `replay`: the re-run differs from the recording.
    pub const REPLAY_MISMATCH: u8 = 3;
    /// `play --strict`: a process seat had errors.
    pub const SEAT_ERRORS: u8 = 4;
}

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  failure (bad input, a match that could not be set up, I/O error); the message says which
  2  bad command-line usage
  3  replay: the re-run differs from the recording
  4  play --strict, check: your bot (a process seat) had errors (timeouts, crashes, bad replies)";

/// Kakehiki (駆け引き): AI contests for hidden-information and negotiation games.
#[derive(Parser, Debug)]
#[command(name = "kakehiki", version, about, after_help = EXIT_CODES)]
struct Cli {
    /// Log verbosity (error, warn, info, debug, trace); also RUST_LOG.
    #[arg(long, global = true, default_value = "warn")]
    log: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play one match and print its result.
    Play(commands::play::PlayArgs),
    /// Check your bot: play it against built-in bots in the first and last seat, against an
    /// opponent that times out, until it has met every kind of request; print every protocol
    /// error with its turn, what was expected and what it sent, its stderr tail, its median and
    /// slowest reply per request against the limit, and warnings (a READY without a newline).
    /// Exit status 0 only for a bot without errors (4 otherwise); --json for CI.
    Check(commands::check::CheckArgs),
    /// Re-run a replay from its seed and recorded replies; fail if the result differs.
    Replay(commands::replay::ReplayArgs),
    /// List the registered games, their rule sets and built-in bots.
    Games(commands::games::GamesArgs),
    /// Run a demo match of every game with built-in and example process bots.
    Demo(commands::demo::DemoArgs),
    /// Contests: run a contest file, print standings, export replays.
    Contest(commands::contest::ContestArgs),
    /// Claim queued contest matches from PostgreSQL and play them (any number of machines).
    Worker(commands::worker::WorkerArgs),
    /// Diplomacy tools: `adjudicate` is the JSON-lines adjudication service.
    Diplomacy(commands::diplomacy::DiplomacyArgs),
    /// Serve a game set agents connect to on their own (werewolf: AIWolf agents over TCP).
    Serve(commands::serve::ServeArgs),
    /// Serve the web UI: contest standings, matches and a replay viewer from a results store.
    Web(commands::web::WebArgs),
    /// Show the confinement layers process bots run under on this machine.
    Sandbox(commands::sandbox::SandboxArgs),
    /// Show a replay file in the browser: one self-contained HTML page (no network), with the
    /// bots' stderr; or serve it on a local port with --serve.
    View(commands::view::ViewArgs),
    /// The hosted ladder (docs/ladder.md): `build` takes an upload in as the ladder would.
    Ladder(commands::ladder::LadderArgs),
    /// Upload your bot to a ladder server; with --wait, wait for its build and check. Exit 0
    /// when it is active, 4 when its build or check failed or the upload was refused.
    Submit(commands::submit::SubmitArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&cli.log));
    // Colours only on a terminal: a log written to a file holds no escape codes.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // The referee holds a descriptor per bot pipe, listener and connection: take the whole hard
    // limit; commands check their own need against it (fd_budget).
    fd_budget::raise_to_hard();
    let result = match cli.command {
        Command::Play(args) => commands::play::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Replay(args) => commands::replay::run(args),
        Command::Games(args) => commands::games::run(args),
        Command::Demo(args) => commands::demo::run(args),
        Command::Contest(args) => commands::contest::run(args),
        Command::Worker(args) => commands::worker::run(args),
        Command::Diplomacy(args) => commands::diplomacy::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Web(args) => commands::web::run(args),
        Command::Sandbox(args) => commands::sandbox::run(args),
        Command::View(args) => commands::view::run(args),
        Command::Ladder(args) => commands::ladder::run(args),
        Command::Submit(args) => commands::submit::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", errors::render(&e));
            ExitCode::from(exit::FAILURE)
        }
    }
}
