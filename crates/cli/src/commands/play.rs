//! `kakehiki play`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_agent::{DeniedPath, SandboxConfig, SandboxLevel};
use kakehiki_core::exchange::SeatRecord;
use kakehiki_core::text::{last_lines, terminal_line, terminal_text};
use kakehiki_core::SeatSpec;
use kakehiki_referee::{find_game, MatchSpec};

use crate::exit;

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// The game: nac, religion-war, ... (see `kakehiki games`).
    pub game: String,
    /// Who plays each seat, in seat order: builtin:<name>, cmd:<command line>, tcp, tcp-cmd:<command line>,
    /// human (a person, from the page whose address is printed: human seat N: http://...);
    /// for diplomacy also daide, daide-cmd:<command line> (a DAIDE client).
    /// The command line is split like a shell would split it, but no shell runs it.
    #[arg(long = "seat", value_name = "SPEC", required = true)]
    pub seats: Vec<SeatSpec>,
    /// Match seed; chance in the match and in built-in bots derives from it. Drawn from the operating system if omitted (never the clock, which a bot could guess); printed with the result.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Rule set (default: the game's first; see `kakehiki games`).
    #[arg(long)]
    pub rules: Option<String>,
    /// Game-specific option KEY=VALUE (e.g. turn_ms=1000); may be repeated.
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Diplomacy: the last year played before a draw is declared.
    #[arg(long)]
    pub max_year: Option<u32>,
    /// Diplomacy: rounds of press before each movement phase.
    #[arg(long)]
    pub press_rounds: Option<u32>,
    /// Write the replay (JSON lines) to this file.
    #[arg(long, value_name = "PATH")]
    pub replay: Option<PathBuf>,
    /// Print exactly one JSON object with the result on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the replay's viewer page (`kakehiki view`) next to the replay; needs --replay.
    #[arg(long, requires = "replay")]
    pub view: bool,
    /// Serve the match on a local port while it is played: its page follows it (the game's
    /// viewer, what the players keep secret shown once it is over), `/events` streams it
    /// (docs/live.md); once it is over the page is its replay's, served until Ctrl-C.
    #[arg(long)]
    pub serve: bool,
    /// Address to serve on with --serve or a human seat (default 127.0.0.1:0, any free port of
    /// the loopback).
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<std::net::SocketAddr>,
    /// Exit with status 4 when a process seat (cmd:, tcp, tcp-cmd:) had errors (timeouts, crashes,
    /// bad replies): for scripts and CI that test a bot.
    #[arg(long)]
    pub strict: bool,
    /// Fill the seats not given with --seat with this spec, up to the game's usual number of
    /// seats (e.g. --fill builtin:random for the six other Diplomacy powers).
    #[arg(long, value_name = "SPEC")]
    pub fill: Option<SeatSpec>,
    /// With --fill: the number of seats to fill up to, instead of the game's usual number
    /// (`--players 5` for a five-player Werewolf village).
    #[arg(long, value_name = "N", requires = "fill")]
    pub players: Option<usize>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// The sandbox of process bots: its level, resource limits (0 means unlimited) and what each
/// seat may see.
#[derive(Args, Debug, Clone)]
pub struct SandboxArgs {
    /// Confinement: `best` applies every layer this machine offers and warns about the rest,
    /// `strict` refuses to start bots when a layer is missing, `off` only limits resources
    /// (see `kakehiki sandbox`).
    #[arg(long = "sandbox", value_name = "LEVEL", default_value = "best")]
    pub level: SandboxLevel,
    /// The directory of seat N (numbered from 0, like every seat Kakehiki prints), mounted
    /// read-only as the bot's working directory, so that `./a.out` or `java SampleAI` launch
    /// lines work: --seat-dir 1=bots/java.
    #[arg(long = "seat-dir", value_name = "N=DIR")]
    pub seat_dirs: Vec<String>,
    /// A directory (a toolchain, a venv) every bot may read, mounted read-only; may be repeated.
    #[arg(long = "ro-path", value_name = "PATH")]
    pub ro_paths: Vec<PathBuf>,
    /// An environment variable passed through to bots (e.g. CLASSPATH); may be repeated.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// A bot's disk: the size of its private /tmp (its working directory), in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    pub disk_mib: u64,
    /// First uid of the range bots run as (one uid per running bot).
    #[arg(long, value_name = "UID", default_value_t = 61000)]
    pub uid_base: u32,
    /// CPU seconds per bot process.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub cpu_seconds: u64,
    /// Memory per bot: all its processes, shared memory and files in its /tmp, in MiB (a
    /// cgroup where available; also the private data of each process).
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    pub memory_mib: u64,
    /// Processes per bot (its cgroup's pids.max and its uid's RLIMIT_NPROC).
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub max_processes: u64,
    /// Largest file a bot may write, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub file_size_mib: u64,
    /// Bytes of stderr kept per bot: its tail, and apart from it what the replay's requests
    /// carry over the match.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024)]
    pub stderr_cap: usize,
    /// CPU time per bot, in CPUs (1, 0.5): all its processes together get at most this much (a
    /// cgroup CPU quota). Without it every bot still gets an equal share of the CPU where the
    /// cpu layer is in force. An error where the quota cannot be applied.
    #[arg(long, value_name = "CPUS", value_parser = parse_cpus_arg, allow_negative_numbers = true)]
    pub cpus_per_bot: Option<u32>,
    /// After the match, copy each process seat's working folder (its private /tmp, where a bot
    /// writes its logs) to DIR/seat-N/ (N from 0), at most --disk-mib of it, however the bot
    /// ended (also after a crash or a timeout). `check` keeps each match's under
    /// DIR/seed-S/seat-N/ (DIR/RULES-seed-S/seat-N/ when it checks several rule sets).
    #[arg(long, value_name = "DIR")]
    pub keep_seat_files: Option<PathBuf>,
}

fn parse_cpus_arg(text: &str) -> Result<u32, String> {
    kakehiki_agent::parse_cpus(text)
}

impl SandboxArgs {
    /// The sandbox these flags describe, for a match of `seats` seats (a `--seat-dir` seat
    /// number must be one of them).
    pub fn config(&self, seats: usize) -> anyhow::Result<SandboxConfig> {
        let nonzero = |v: u64| (v > 0).then_some(v);
        let mut cfg = SandboxConfig::default();
        cfg.jail.level = self.level;
        cfg.jail.uid_base = self.uid_base;
        cfg.jail.disk_bytes = self.disk_mib.max(1) << 20;
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        for item in &self.seat_dirs {
            let (n, dir) = item
                .split_once('=')
                .with_context(|| format!("--seat-dir {item:?}: expected N=DIR"))?;
            let range = match seats {
                0 | 1 => "0 (the only seat)".to_string(),
                n => format!("0 to {}", n - 1),
            };
            let n: usize = n
                .trim()
                .parse()
                .ok()
                .filter(|&n| n < seats)
                .with_context(|| {
                    format!("--seat-dir {item:?}: N must be a seat number, from {range}")
                })?;
            let dir = cwd.join(dir);
            if !dir.is_dir() {
                bail!("--seat-dir {item:?}: {} is not a directory", dir.display());
            }
            if cfg.jail.seat_dirs.insert(n, dir).is_some() {
                bail!("--seat-dir {item:?}: seat {n} was given a directory twice");
            }
        }
        for p in &self.ro_paths {
            let p = cwd.join(p);
            if !p.exists() {
                bail!("--ro-path {}: no such file or directory", p.display());
            }
            cfg.jail.ro_paths.push(p);
        }
        cfg.env_passthrough.extend(self.pass_env.iter().cloned());
        if let Some(dir) = &self.keep_seat_files {
            let dir = cwd.join(dir);
            kakehiki_core::private_files::create_dir_all(&dir)
                .with_context(|| format!("--keep-seat-files: cannot create {}", dir.display()))?;
            cfg.jail.denied.push(DeniedPath::new(
                &dir,
                "the seats' kept working folders (--keep-seat-files)",
            ));
            cfg.keep_seat_files = Some(dir);
        }
        cfg.limits.cpu_seconds = nonzero(self.cpu_seconds);
        cfg.limits.memory_bytes = nonzero(self.memory_mib).map(|m| m << 20);
        cfg.limits.processes = nonzero(self.max_processes);
        cfg.limits.file_size_bytes = nonzero(self.file_size_mib).map(|m| m << 20);
        cfg.stderr_cap = self.stderr_cap;
        if self.cpus_per_bot.is_some() {
            cfg.jail.cpu_millis = self.cpus_per_bot;
            kakehiki_agent::SandboxReport::for_jail(&cfg.jail)
                .check_cpu_quota(&cfg.jail)
                .context("--cpus-per-bot")?;
        }
        Ok(cfg)
    }
}

/// Parse `KEY=VALUE` options.
pub fn parse_options(items: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for item in items {
        let Some((k, v)) = item.split_once('=') else {
            bail!("option {item:?}: expected KEY=VALUE");
        };
        if k.trim().is_empty() {
            bail!("option {item:?}: empty key");
        }
        out.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(out)
}

pub fn run(args: PlayArgs) -> anyhow::Result<u8> {
    let driver = find_game(&args.game)?;
    let seed = args.seed.unwrap_or_else(kakehiki_core::fresh_seed);
    let mut seats = args.seats;
    if let Some(fill) = &args.fill {
        let game = driver.game_type();
        let want = args.players.unwrap_or(game.default_seats);
        if !(game.min_seats..=game.max_seats).contains(&want) {
            bail!(
                "--players {want}: {} is played by {} to {} players",
                game.name,
                game.min_seats,
                game.max_seats
            );
        }
        if seats.len() > want {
            bail!(
                "--players {want} but {} --seat options were given",
                seats.len()
            );
        }
        while seats.len() < want {
            seats.push(fill.clone());
        }
    }
    let process_seats: Vec<usize> = seats
        .iter()
        .enumerate()
        .filter(|(_, s)| !matches!(s, SeatSpec::Builtin(_)))
        .map(|(i, _)| i)
        .collect();
    let mut spec = MatchSpec::new(&args.game, seed, seats);
    spec.rules = args.rules;
    spec.options = parse_options(&args.options)?;
    // The flags' sandbox, keeping what the spec gives bots (each seat's seed, KAKEHIKI_SEED).
    spec.set_sandbox(args.sandbox.config(spec.seats.len())?);
    spec.deny_outputs_and_other_seats(outputs(args.replay.as_deref(), args.view)?)?;
    // A `tcp` seat waits for a client the contestant starts: say where, as soon as it listens.
    let kinds: Vec<&'static str> = spec
        .seats
        .iter()
        .map(|s| match s {
            SeatSpec::Daide(_) => "daide",
            _ => "tcp",
        })
        .collect();
    spec.on_listen = kakehiki_referee::ListenNotice::new(move |seat, addr| {
        let kind = kinds.get(seat).copied().unwrap_or("tcp");
        eprintln!("seat {seat} ({kind}): waiting for a client to connect to {addr}");
    });
    if let Some(y) = args.max_year {
        spec.options.insert("max_year".into(), y.to_string());
    }
    if let Some(k) = args.press_rounds {
        spec.options.insert("press_rounds".into(), k.to_string());
    }
    // A person plays each human seat from its page, served with the match's.
    for (i, s) in spec.seats.iter().enumerate() {
        if matches!(s, SeatSpec::Human) {
            let help = kakehiki_referee::seat::human::help_for(&args.game);
            let desk = kakehiki_core::human::Desk::new(&args.game, i, help);
            spec.desks.insert(i, desk);
        }
    }
    let humans = !spec.desks.is_empty();
    if args.bind.is_some() && !args.serve && !humans {
        bail!("--bind is the address of --serve or of a human seat's page: give --serve, or a --seat human");
    }
    let bind = args.bind.unwrap_or(([127, 0, 0, 1], 0).into());
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    // With --serve or a human seat: the match's page and stream, on from before its first move.
    let served = match args.serve || humans {
        true => Some(runtime.block_on(super::live_serve::start(bind, &spec, driver))?),
        false => None,
    };
    if let Some(s) = &served {
        spec.live = Some(s.live.clone());
    }
    let mut record = runtime
        .block_on(driver.play(&spec))
        .with_context(|| format!("cannot run a {} match", args.game))?;
    record.stamp_sandbox(&spec);
    if let Some(s) = &served {
        s.over(&record.replay);
    }
    if let Some(path) = &args.replay {
        write_file_atomically(path, record.replay.to_text().as_bytes())
            .with_context(|| format!("cannot write the replay to {}", path.display()))?;
    }
    let page = match (&args.replay, args.view) {
        (Some(path), true) => Some(super::view::write_page(path, None)?),
        _ => None,
    };
    let failed: Vec<usize> = process_seats
        .iter()
        .copied()
        .filter(|&i| record.report.seats.get(i).is_some_and(|s| s.faults() > 0))
        .collect();
    if args.json {
        println!("{}", serde_json::to_string(&record.report)?);
    } else {
        print!("{}", super::summary(&record.report));
        if let Some(path) = &args.replay {
            println!("replay: {}", path.display());
        }
        if let Some(page) = &page {
            println!("viewer: {}", page.display());
        }
    }
    // How a failing bot ended and what it said on stderr is usually why it failed; a crashed
    // one's stderr, where it began in the game's own terms.
    let seats = seat_record(&record.replay);
    for seat in &failed {
        let Some(end) = seats.end_of(*seat) else {
            continue;
        };
        let began = match end.crashed() {
            true => seats.stderr_began(*seat).map(|b| format!("; {b}")),
            false => None,
        };
        let ending = format!("{}{}", end.exit, began.unwrap_or_default());
        eprintln!("seat {seat} ended: {}", terminal_line(&ending));
        let tail = last_lines(&end.stderr, STDERR_TAIL_LINES);
        if !tail.trim().is_empty() {
            eprintln!("stderr of seat {seat} (last {STDERR_TAIL_LINES} lines at most):");
            // The bot's bytes, escaped (no terminal command runs) and each line marked as its.
            for line in tail.lines() {
                eprintln!("  | {}", terminal_text(line));
            }
        }
    }
    match served {
        Some(s) if args.serve => {
            println!(
                "the match is over: its replay is at {} (Ctrl-C to stop)",
                s.url
            );
            runtime.block_on(s.wait());
        }
        // The people's pages have a moment to show the end before the server stops.
        Some(_) => {
            runtime.block_on(async { tokio::time::sleep(std::time::Duration::from_secs(2)).await })
        }
        None => {}
    }
    if args.strict && !failed.is_empty() {
        eprintln!(
            "--strict: process seat{} {} had errors",
            if failed.len() == 1 { "" } else { "s" },
            failed
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(exit::SEAT_ERRORS);
    }
    Ok(exit::OK)
}

/// What this match writes that no seat may see: its replay and, with `view`, its viewer page
/// (for [`MatchSpec::deny_outputs_and_other_seats`]).
fn outputs(replay: Option<&std::path::Path>, view: bool) -> anyhow::Result<Vec<DeniedPath>> {
    let Some(path) = replay else {
        return Ok(Vec::new());
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let path = cwd.join(path);
    let mut page = path.as_os_str().to_owned();
    page.push(".html");
    let mut denied = vec![DeniedPath::new(&path, "this match's replay")];
    if view {
        denied.push(DeniedPath::new(
            page,
            "this match's viewer page (every seat's stderr)",
        ));
    }
    Ok(denied)
}

/// Write `bytes` to `path` through a temporary file in the same directory, renamed over it: a
/// symlink planted at `path` is replaced, never followed, and a reader never sees half a file.
/// The file is `0600` (the temporary file's mode); missing directories are created `0700`.
pub fn write_file_atomically(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    kakehiki_core::private_files::create_dir_all(&dir)
        .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".kakehiki-")
        .tempfile_in(&dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .context("cannot write the temporary file")?;
    tmp.as_file()
        .sync_all()
        .context("cannot flush the temporary file")?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .context("cannot rename the temporary file")?;
    Ok(())
}

/// Lines of a failing bot's stderr shown after the result.
const STDERR_TAIL_LINES: usize = 20;

/// The replay's seat record: how each seat's program ended and what it wrote on stderr
/// (`"event":"seat_end"` lines), and every request (`"event":"seat"`); empty if unreadable.
pub fn seat_record(replay: &kakehiki_core::replay::ReplayLog) -> SeatRecord {
    kakehiki_core::replay::ReplayLog::parse(&replay.to_text())
        .ok()
        .and_then(|parsed| SeatRecord::of(&parsed).ok())
        .unwrap_or_default()
}
