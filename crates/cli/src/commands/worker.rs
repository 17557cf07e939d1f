//! `kakehiki worker`: claim queued matches from PostgreSQL and play them, on any number of
//! machines; hosted ladders' builds are claimed first (`ladder_work`). The logic lives in
//! `kakehiki-contest`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use kakehiki_contest::{run_worker, RefereeArena, WorkerOptions};
use kakehiki_store::{redact_url, PgStore, Store};

use crate::exit;
use kakehiki_ladder::pipeline::LadderWork;

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// PostgreSQL URL of the contest store (the coordinator's `contest run --database-url`).
    #[arg(long, value_name = "URL", env = "KAKEHIKI_DATABASE_URL")]
    pub database_url: String,
    /// Matches played at once.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: u16,
    /// Lease of a claimed match or ladder build in seconds; heartbeats renew it every third
    /// (a build's every quarter). A worker that dies loses its work to others once their leases
    /// expire.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub lease_secs: u64,
    /// Attempts before a match is marked failed.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_attempts: u32,
    /// Stop when no contest has work left: nothing queued or running and no stage still to
    /// queue (default: wait for more work).
    #[arg(long)]
    pub exit_when_idle: bool,
    /// Pause between polls of an empty queue, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub poll_ms: u64,
    /// Where the programs of hosted-ladder bots are unpacked from the store, once per version
    /// (`DIR/LADDER/BOT/vN-DIGEST`).
    #[arg(long, value_name = "DIR", default_value = "kakehiki-programs")]
    pub programs: std::path::PathBuf,
    /// Play matches only: leave the hosted ladders' builds to other workers and the servers'
    /// builders.
    #[arg(long)]
    pub no_builds: bool,
}

pub fn run(args: WorkerArgs) -> anyhow::Result<u8> {
    let url = args.database_url.clone();
    let opts = WorkerOptions {
        jobs: usize::from(args.jobs),
        lease: Duration::from_secs(args.lease_secs),
        max_attempts: args.max_attempts,
        poll: Duration::from_millis(args.poll_ms),
        exit_when_idle: args.exit_when_idle,
        hooks: Some(Arc::new(LadderWork::new(
            std::path::absolute(&args.programs)
                .with_context(|| format!("bad programs folder {}", args.programs.display()))?,
            !args.no_builds,
            Duration::from_secs(args.lease_secs),
        ))),
        ..WorkerOptions::default()
    };
    eprintln!(
        "worker {} on {} with {} jobs",
        opts.name,
        redact_url(&url),
        opts.jobs
    );
    let connect = || PgStore::connect(&url).map(|s| Box::new(s) as Box<dyn Store>);
    let stop = AtomicBool::new(false);
    let summary = run_worker(&connect, Arc::new(RefereeArena), &opts, &stop)
        .with_context(|| format!("worker on {} stopped", redact_url(&url)))?;
    eprintln!(
        "worker {}: {} matches played, {} late duplicates ignored, {} failed attempts, {} reconnects",
        opts.name, summary.played, summary.duplicates, summary.failed, summary.reconnects
    );
    Ok(exit::OK)
}
