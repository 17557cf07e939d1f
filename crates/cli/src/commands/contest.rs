//! `kakehiki contest run|standings|replays`: contests from TOML files, results in SQLite (default)
//! or PostgreSQL. The logic lives in `kakehiki-contest` and `kakehiki-store`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use kakehiki_contest::{
    compute_standings, coordinate, export_replays, load_results, preflight, run_local, store_files,
    stored_definition, Arena, ContestDef, MatchJob, OutputFormat, PlayError, Played, RefereeArena,
    RunOptions, RunSummary,
};
use kakehiki_store::{open_store, open_store_read_only, redact_url, Store};

use crate::exit;

#[derive(Args, Debug)]
pub struct ContestArgs {
    #[command(subcommand)]
    pub command: ContestCommand,
}

#[derive(Subcommand, Debug)]
pub enum ContestCommand {
    /// Run a contest file: schedule every match, play them in parallel, store each result with its
    /// replay. Interrupted at any moment, running it again continues where it stopped. With
    /// --database-url it only queues the matches for `kakehiki worker`s and reports progress.
    Run(RunArgs),
    /// Print the standings of a stored contest: points or wins as the format defines, Weng-Lin
    /// and Bradley-Terry ratings (with bootstrap 95% intervals), league tables, roles and teams.
    Standings(StandingsArgs),
    /// Write the stored replays of a contest to files and print their paths.
    Replays(ReplaysArgs),
}

/// Where results are stored.
#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// SQLite database file (the default store).
    #[arg(long, value_name = "PATH", default_value = "kakehiki.sqlite")]
    pub db: PathBuf,
    /// PostgreSQL URL (postgres://user:password@host:port/database) instead of SQLite.
    #[arg(
        long,
        value_name = "URL",
        env = "KAKEHIKI_DATABASE_URL",
        conflicts_with = "db"
    )]
    pub database_url: Option<String>,
}

impl StoreArgs {
    pub fn open(&self) -> anyhow::Result<Box<dyn Store>> {
        match &self.database_url {
            Some(url) => open_store(&self.db, Some(url))
                .with_context(|| format!("cannot open the store at {}", redact_url(url))),
            None => open_store(&self.db, None)
                .with_context(|| format!("cannot open the store {}", self.db.display())),
        }
    }

    /// Open the store to read it: a SQLite file read-only (it must exist; nothing is created,
    /// a read-only directory is fine).
    pub fn open_read_only(&self) -> anyhow::Result<Box<dyn Store>> {
        match &self.database_url {
            Some(url) => open_store_read_only(&self.db, Some(url))
                .with_context(|| format!("cannot open the store at {}", redact_url(url))),
            None => open_store_read_only(&self.db, None)
                .with_context(|| format!("cannot read the store {}", self.db.display())),
        }
    }
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The contest file (TOML).
    pub file: PathBuf,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Matches played at once (default: the file's `jobs`, else 1). Not with --database-url:
    /// workers play the matches there, each with its own `kakehiki worker --jobs`.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: Option<u16>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Do not print the standings at the end.
    #[arg(long)]
    pub no_standings: bool,
    /// Serve the contest's web pages (as `kakehiki web` does) on this address while it runs,
    /// each match played here followed live on its page (docs/live.md), and after it until
    /// Ctrl-C. Port 0: any free port (printed).
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<std::net::SocketAddr>,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub enum Format {
    Table,
    Json,
    Csv,
}

#[derive(Args, Debug)]
pub struct StandingsArgs {
    /// The contest's name (the `name` of its file).
    pub name: String,
    #[command(flatten)]
    pub store: StoreArgs,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

#[derive(Args, Debug)]
pub struct ReplaysArgs {
    /// The contest's name.
    pub name: String,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Directory to write to; replays go to <OUT>/<contest>/<match index>.jsonl.
    #[arg(long, default_value = "replays")]
    pub out: PathBuf,
}

pub fn run(args: ContestArgs) -> anyhow::Result<u8> {
    match args.command {
        ContestCommand::Run(a) => run_contest(a),
        ContestCommand::Standings(a) => standings(a),
        ContestCommand::Replays(a) => replays(a).map(|paths| {
            for p in paths {
                println!("{}", p.display());
            }
            exit::OK
        }),
    }
}

/// Read and validate a contest file against the registered games.
pub fn load_definition(file: &Path) -> anyhow::Result<ContestDef> {
    let arena = RefereeArena;
    let (def, _) = ContestDef::load(file, &|g| arena.game_type(g))?;
    Ok(def)
}

pub(crate) fn run_contest(args: RunArgs) -> anyhow::Result<u8> {
    // Validate everything before touching the store: a bad file stores nothing.
    let def = load_definition(&args.file)?;
    if def.cpu_millis.is_some() {
        // A CPU quota the bots would not get is an error, before any match.
        let mut jail = kakehiki_agent::JailConfig::default();
        if let Some(level) = &def.sandbox {
            jail.level = level.parse().map_err(anyhow::Error::msg)?;
        }
        jail.cpu_millis = def.cpu_millis;
        kakehiki_agent::SandboxReport::for_jail(&jail)
            .check_cpu_quota(&jail)
            .with_context(|| format!("{}: cpus_per_bot", args.file.display()))?;
    }
    // A person's entrant plays from the pages this run serves.
    if let Some(e) = def
        .entrants
        .iter()
        .find(|e| matches!(e.seat, kakehiki_core::SeatSpec::Human))
    {
        if args.serve.is_none() || args.store.database_url.is_some() {
            anyhow::bail!(
                "entrant {} is played by a person (seat = \"human\"): run the contest with --serve ADDR, whose pages give the person each of its matches' seat (not with --database-url: workers elsewhere could not serve it)",
                e.name
            );
        }
    }
    if let (Some(j), Some(_)) = (args.jobs, &args.store.database_url) {
        anyhow::bail!(
            "--jobs {j} with --database-url: this command only queues the matches there; the workers play them, each with its own kakehiki worker --jobs N"
        );
    }
    let jobs = args.jobs.map(usize::from).or(def.jobs).unwrap_or(1);
    crate::fd_budget::check(
        crate::fd_budget::for_matches(jobs, def.seats),
        &format!(
            "{jobs} matches at once of {} seats ({} + {jobs} × {} × {} per seat: a bot's pipes, \
             its port and the connections it may hold)",
            def.seats,
            crate::fd_budget::BASE,
            def.seats,
            crate::fd_budget::PER_SEAT
        ),
        "fewer --jobs",
    )?;
    let opts = RunOptions {
        jobs,
        progress: !args.quiet,
        worker: "local".into(),
        // No bot may be shown the SQLite database (a PostgreSQL one is not on this machine).
        store_files: if args.store.database_url.is_none() {
            store_files(&args.store.db)
        } else {
            Vec::new()
        },
        ..RunOptions::default()
    };
    let mut served = None;
    let summary = if let Some(url) = &args.store.database_url {
        // Check the entrants before anything is queued: a typo fails here, not in every match.
        preflight(&RefereeArena, &def, &opts.store_files)?;
        eprintln!(
            "queueing the matches of {} for workers (kakehiki worker --database-url ...)",
            def.name
        );
        let connect = || open_store(&args.store.db, Some(url));
        if let Some(bind) = args.serve {
            served = Some(serve_pages(&args.store, bind, &def.name)?);
        }
        coordinate(&def, &connect, &opts, Duration::from_millis(500))
            .with_context(|| format!("coordinating on {}", redact_url(url)))?
    } else {
        // The pre-flight runs before the store is opened: a refused run (a typo in a launch
        // line) creates no database file, at a mistyped path or anywhere else.
        preflight(&RefereeArena, &def, &opts.store_files)?;
        let store = args.store.open()?;
        if let Some(bind) = args.serve {
            served = Some(serve_pages(&args.store, bind, &def.name)?);
        }
        run_local(&def, store, Arc::new(Prechecked(RefereeArena)), &opts)?
    };
    report_summary(&def, &summary);
    if !args.no_standings {
        let mut store = args.store.open_read_only()?;
        let results = load_results(store.as_mut(), &def)?;
        print!(
            "{}",
            compute_standings(&def, &results).render(OutputFormat::Table)
        );
    }
    if let Some((url, server)) = served {
        eprintln!("the contest's pages stay at {url} (Ctrl-C to stop)");
        let _ = server.join();
    }
    Ok(if summary.failed.is_empty() {
        exit::OK
    } else {
        exit::FAILURE
    })
}

/// Serve the contest's pages from `store` on `bind`, on a thread of their own: the contest's
/// address and the thread.
fn serve_pages(
    store: &StoreArgs,
    bind: std::net::SocketAddr,
    contest: &str,
) -> anyhow::Result<(String, std::thread::JoinHandle<()>)> {
    let (db, url) = (store.db.clone(), store.database_url.clone());
    let opener: kakehiki_web::StoreOpener = Arc::new(move || open_store(&db, url.as_deref()));
    let app = kakehiki_web::app_with_opener(opener, 8).context("cannot serve the store")?;
    let listener =
        std::net::TcpListener::bind(bind).with_context(|| format!("cannot listen on {bind}"))?;
    listener.set_nonblocking(true)?;
    let page = format!(
        "http://{}/contests/{}",
        listener.local_addr()?,
        kakehiki_web::seg(contest)
    );
    eprintln!("watch the contest at {page}");
    // Where the person plays each of their seats.
    let at = page.clone();
    kakehiki_core::human::desks().on_open(Box::new(move |_, index, desk| {
        eprintln!(
            "human seat {} of match {index}: {at}/matches/{index}/seat/{}?key={}",
            desk.seat, desk.seat, desk.key
        );
    }));
    let server = std::thread::Builder::new()
        .name("contest-pages".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Runtime::new() {
                Ok(r) => r,
                Err(e) => return eprintln!("serving the contest's pages failed: {e}"),
            };
            let served = runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                kakehiki_web::serve_listener(app, listener).await
            });
            if let Err(e) = served {
                eprintln!("serving the contest's pages failed: {e}");
            }
        })?;
    Ok((page, server))
}

/// An arena whose entrants already passed the pre-flight: `run_local` does not start them a
/// second time.
struct Prechecked<A>(A);

impl<A: Arena> Arena for Prechecked<A> {
    fn game_type(&self, game: &str) -> Result<&'static kakehiki_core::GameType, String> {
        self.0.game_type(game)
    }

    fn play(&self, job: &MatchJob) -> Result<Played, PlayError> {
        self.0.play(job)
    }
}

fn report_summary(def: &ContestDef, s: &RunSummary) {
    eprintln!(
        "{}: {} matches scheduled, {} already stored, {} played now{}",
        def.name,
        s.scheduled,
        s.already_stored,
        s.played,
        if s.complete { ", contest complete" } else { "" }
    );
    if !s.failed.is_empty() {
        eprintln!(
            "{} matches failed (run again to retry them):",
            s.failed.len()
        );
        for (index, e) in s.failed.iter().take(20) {
            eprintln!("  match {index}: {}", kakehiki_core::text::terminal_line(e));
        }
        if s.failed.len() > 20 {
            eprintln!("  ... and {} more", s.failed.len() - 20);
        }
    }
}

fn standings(args: StandingsArgs) -> anyhow::Result<u8> {
    let mut store = args.store.open_read_only()?;
    let def = stored_definition(store.as_mut(), &args.name).map_err(|e| {
        let names = store.contest_names().unwrap_or_default();
        anyhow::anyhow!(
            "{e} (stored contests: {})",
            if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            }
        )
    })?;
    let results = load_results(store.as_mut(), &def)?;
    let format = match args.format {
        Format::Table => OutputFormat::Table,
        Format::Json => OutputFormat::Json,
        Format::Csv => OutputFormat::Csv,
    };
    let text = compute_standings(&def, &results).render(format);
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("cannot write the standings")?;
    Ok(exit::OK)
}

/// Write every stored replay of a contest to `<out>/<contest>/<index>.jsonl`.
pub fn replays(args: ReplaysArgs) -> anyhow::Result<Vec<PathBuf>> {
    let mut store = args.store.open_read_only()?;
    Ok(export_replays(store.as_mut(), &args.name, &args.out)?)
}
