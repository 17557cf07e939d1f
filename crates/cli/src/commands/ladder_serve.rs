//! `kakehiki ladder serve` (docs/ladder.md): opens the store, starts the builders, matchmaker and
//! workers, and serves the ladder's API and pages (crates/ladder-web).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use kakehiki_ladder::play::{MatchRate, Matchmaker};
use kakehiki_ladder::LadderConfig;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The ladder file; given again (or a folder of `*.toml` ladder files), the server serves
    /// every ladder, each under `/ladders/NAME/`, with one account per contestant.
    #[arg(long, value_name = "LADDER.toml|DIR", required = true)]
    pub config: Vec<PathBuf>,
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
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Where the server's own match players unpack the bots' programs (the store keeps the
    /// uploads and the built programs).
    #[arg(long, value_name = "DIR", default_value = "ladder-data")]
    pub data: PathBuf,
    /// Builds run at once inside the server (0: only `kakehiki worker` processes build).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub builders: u16,
    /// Lease of a build or match the server's builders and workers claim, in seconds; they
    /// renew it while they work, so a server killed mid-build has its build taken over (by
    /// itself once restarted, or by a worker) within a lease.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub lease_secs: u64,
    /// Matches played at once inside the server (0: only `kakehiki worker` processes on a
    /// shared PostgreSQL store play them).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=1024))]
    pub workers: u16,
    /// Unrated matches signed-in contestants play against the bots in their browser at once,
    /// each played by the server itself ("play against this bot" on a bot's page; 0: none).
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub people: u16,
    /// Matches kept queued or running (default: twice the workers, at least 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub open_matches: Option<u64>,
    /// Seed of the matchmaker's random choices (default: drawn from the operating system).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Mark the web pages' cookies `Secure` (browsers send them over HTTPS only): for a server
    /// behind an HTTPS proxy.
    #[arg(long)]
    pub cookie_secure: bool,
    /// Connections open at once; one more is answered 503 at once.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// Connections open at once from one client (an IPv4 address, or an IPv6 /64).
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_client_connections: u32,
    /// Seconds a client has to send a request's headers (and an idle connection stays open).
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout_secs: u64,
    /// Seconds a request's body may send nothing before the request ends (408).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout_secs: u64,
    /// Seconds to read a request and answer it (408 after).
    #[arg(long, value_name = "SECONDS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub request_timeout_secs: u64,
}

impl ServeArgs {
    fn limits(&self) -> kakehiki_ladder_web::serve::ServeLimits {
        use std::time::Duration;
        kakehiki_ladder_web::serve::ServeLimits {
            connections: self.max_connections as usize,
            connections_per_client: self.max_client_connections as usize,
            header_timeout: Duration::from_secs(self.header_timeout_secs),
            body_timeout: Duration::from_secs(self.body_timeout_secs),
            request_timeout: Duration::from_secs(self.request_timeout_secs),
        }
    }
}

/// Store connections of the request handlers.
const HANDLER_CONNECTIONS: usize = 4;

/// The ladder files `--config` names: each file given, and each `*.toml` file of a folder given
/// (in name order).
fn ladder_files(given: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in given {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("cannot read the folder {}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "toml"))
                .collect();
            if found.is_empty() {
                anyhow::bail!("the folder {} has no ladder file (*.toml)", path.display());
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

pub fn run(args: ServeArgs) -> anyhow::Result<u8> {
    let files = ladder_files(&args.config)?;
    let mut configs = Vec::with_capacity(files.len());
    for file in &files {
        let config = LadderConfig::load_playable(file)?;
        if let Some((_, other)) = configs
            .iter()
            .zip(&files)
            .find(|(c, _): &(&Arc<LadderConfig>, _)| c.name == config.name)
        {
            anyhow::bail!(
                "{} and {} both name the ladder {:?}: each ladder needs its own name",
                other.display(),
                file.display(),
                config.name
            );
        }
        configs.push(Arc::new(config));
    }
    let limits = args.limits();
    crate::fd_budget::check(
        crate::fd_budget::for_server(limits.connections, 0),
        &format!(
            "ladder serve ({} + listener + --max-connections {})",
            crate::fd_budget::BASE,
            limits.connections
        ),
        "a lower --max-connections",
    )?;
    let open = || kakehiki_store::open_store(&args.db, args.database_url.as_deref());
    let mut store = open().context("cannot open the store")?;
    let data = std::path::absolute(&args.data)
        .with_context(|| format!("bad data folder {}", args.data.display()))?;
    kakehiki_core::private_files::create_dir_all(&data)
        .with_context(|| format!("cannot create {}", data.display()))?;
    for (config, file) in configs.iter().zip(&files) {
        // The ladder file's text, for builders on any machine.
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        store
            .ladder_set_file(&config.name, &text)
            .context("cannot keep the ladder file in the store")?;
        kakehiki_ladder_web::adopt_lost_uploads(config, &mut *store, &data)
            .context("cannot adopt the uploads a stopped server left")?;
    }
    let mut stores = vec![store];
    for _ in 1..HANDLER_CONNECTIONS {
        stores.push(open().context("cannot open the store")?);
    }
    let finals = {
        let (db, url) = (args.db.clone(), args.database_url.clone());
        let connect: kakehiki_ladder::final_contest::Connector =
            Arc::new(move || kakehiki_store::open_store(&db, url.as_deref()));
        // No bot of a final may be shown the SQLite database.
        let store_files = if args.database_url.is_none() {
            kakehiki_contest::runner::store_files(&args.db)
        } else {
            Vec::new()
        };
        Arc::new(kakehiki_ladder_web::Finals::new(
            data.clone(),
            connect,
            store_files,
        ))
    };
    // The matches people play share the programs' folder with the server's workers.
    let people = (args.people > 0).then(|| {
        Arc::new(kakehiki_ladder_web::people::People::new(
            data.clone(),
            usize::from(args.people),
        ))
    });
    let apps: Vec<kakehiki_ladder_web::App> =
        kakehiki_ladder_web::App::site(configs.clone(), stores, args.cookie_secure)?
            .into_iter()
            .map(|app| app.with_finals(finals.clone()))
            .map(|app| match &people {
                Some(p) => app.with_people(p.clone()),
                None => app,
            })
            .collect();
    start_builders(&args)?;
    for (i, app) in apps.iter().enumerate() {
        // Each matchmaker its own seed, drawn from the one given.
        let seed = args
            .seed
            .map(|s| s.wrapping_add(i as u64))
            .unwrap_or_else(kakehiki_core::fresh_seed);
        start_matchmaker(&args, &app.config, app.clone(), seed)?;
        start_pruner(&args, &app.config)?;
    }
    start_workers(&args, &data)?;
    let router = kakehiki_ladder_web::router(apps[0].clone());
    let names: Vec<String> = configs
        .iter()
        .map(|c| format!("{} ({})", c.name, c.game))
        .collect();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime
        .block_on(async {
            let listener = tokio::net::TcpListener::bind(args.bind).await?;
            eprintln!(
                "{} {} on http://{}",
                if names.len() == 1 {
                    "ladder"
                } else {
                    "ladders"
                },
                names.join(", "),
                listener.local_addr()?
            );
            kakehiki_ladder_web::serve::serve(listener, router, limits).await;
            Ok::<(), std::io::Error>(())
        })
        .with_context(|| format!("cannot serve on {}", args.bind))?;
    Ok(crate::exit::OK)
}

/// Start the matchmaker: a thread with its own store that rates new results and keeps the
/// ladder's queue filled (crates/ladder/src/play.rs).
fn start_matchmaker(
    args: &ServeArgs,
    config: &LadderConfig,
    app: kakehiki_ladder_web::App,
    seed: u64,
) -> anyhow::Result<()> {
    let seats = config.seats;
    let open = args
        .open_matches
        .unwrap_or_else(|| (2 * u64::from(args.workers)).max(4));
    let mut store = kakehiki_store::open_store(&args.db, args.database_url.as_deref())
        .context("cannot open the store")?;
    let mut mm = Matchmaker::new(config.clone(), seats, seed);
    let mut rate = MatchRate::new(config.matches_per_hour, open, std::time::Instant::now());
    std::thread::Builder::new()
        .name(format!("matchmaker-{}", config.name))
        .spawn(move || loop {
            let budget = rate.available(std::time::Instant::now());
            match mm.step(store.as_mut(), open, budget) {
                Ok(step) => {
                    rate.spend(step.queued);
                    if step.rated + step.skipped > 0 {
                        app.ratings_moved();
                    }
                }
                Err(e) => tracing::error!("ladder matchmaker: {e}"),
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        })
        .context("cannot start the matchmaker")?;
    Ok(())
}

/// How often the server prunes old uploads and programs.
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// Start the pruner: a thread with its own store that removes, every ten minutes (and at
/// start), the uploads and programs older than `limits.retention_days` that no bot needs
/// (`LadderBuilds::ladder_prune`).
fn start_pruner(args: &ServeArgs, config: &LadderConfig) -> anyhow::Result<()> {
    let mut store = kakehiki_store::open_store(&args.db, args.database_url.as_deref())
        .context("cannot open the store")?;
    let (ladder, keep, days) = (
        config.name.clone(),
        config.limits.keep_versions,
        config.limits.retention_days,
    );
    std::thread::Builder::new()
        .name("ladder-pruner".into())
        .spawn(move || loop {
            let now = kakehiki_referee::files::unix_now().as_secs();
            let before =
                i64::try_from(now.saturating_sub(days.saturating_mul(86_400))).unwrap_or(i64::MAX);
            match store.ladder_prune(&ladder, keep, before) {
                Ok(p) if p.uploads + p.programs > 0 => tracing::info!(
                    "ladder {ladder}: pruned {} uploads and {} programs older than {days} days",
                    p.uploads,
                    p.programs
                ),
                Ok(_) => {}
                Err(e) => tracing::error!("ladder pruner: {e}"),
            }
            std::thread::sleep(PRUNE_EVERY);
        })
        .context("cannot start the pruner")?;
    Ok(())
}

/// Start `--builders` threads that claim builds from the store, as `kakehiki worker` does.
fn start_builders(args: &ServeArgs) -> anyhow::Result<()> {
    let lease = std::time::Duration::from_secs(args.lease_secs);
    for slot in 0..args.builders {
        let mut store = kakehiki_store::open_store(&args.db, args.database_url.as_deref())
            .context("cannot open the store")?;
        let name = format!(
            "{}:builder{slot}",
            kakehiki_contest::runner::default_worker_name()
        );
        std::thread::Builder::new()
            .name(format!("ladder-builder-{slot}"))
            .spawn(move || loop {
                match kakehiki_ladder::pipeline::build_one(&mut *store, &name, lease) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(e) => tracing::error!("ladder builder: {e}"),
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
            })
            .context("cannot start a builder")?;
    }
    Ok(())
}

/// Start `--workers` match players inside the server, claiming from the store's queue as
/// `kakehiki worker` does and unpacking programs under `data` (builds are the builders').
fn start_workers(args: &ServeArgs, data: &std::path::Path) -> anyhow::Result<()> {
    if args.workers == 0 {
        return Ok(());
    }
    let db = args.db.clone();
    let url = args.database_url.clone();
    let opts = kakehiki_contest::WorkerOptions {
        jobs: usize::from(args.workers),
        poll: std::time::Duration::from_millis(100),
        hooks: Some(Arc::new(kakehiki_ladder::pipeline::LadderWork::new(
            data.to_path_buf(),
            false,
            std::time::Duration::from_secs(args.lease_secs),
        ))),
        lease: std::time::Duration::from_secs(args.lease_secs),
        ..kakehiki_contest::WorkerOptions::default()
    };
    std::thread::Builder::new()
        .name("ladder-workers".into())
        .spawn(move || {
            let connect = move || kakehiki_store::open_store(&db, url.as_deref());
            let stop = std::sync::atomic::AtomicBool::new(false);
            let arena = Arc::new(kakehiki_contest::RefereeArena);
            if let Err(e) = kakehiki_contest::run_worker(&connect, arena, &opts, &stop) {
                tracing::error!("ladder workers stopped: {e}");
                eprintln!("ladder: the workers stopped: {e}");
            }
        })
        .context("cannot start the workers")?;
    Ok(())
}
