//! `kakehiki play`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_agent::SandboxConfig;
use kakehiki_core::SeatSpec;
use kakehiki_referee::{find_game, MatchSpec};

use crate::exit;

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// The game: nac, religion-war, ... (see `kakehiki games`).
    pub game: String,
    /// Who plays each seat, in seat order: builtin:<name>, cmd:<command line>, tcp, tcp-cmd:<command line>.
    /// The command line is split like a shell would split it, but no shell runs it.
    #[arg(long = "seat", value_name = "SPEC", required = true)]
    pub seats: Vec<SeatSpec>,
    /// Match seed; chance in the match and in built-in bots derives from it. Random if omitted.
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
    /// Exit with status 4 when a process seat (cmd:, tcp, tcp-cmd:) had errors (timeouts, crashes,
    /// bad replies): for scripts and CI that test a bot.
    #[arg(long)]
    pub strict: bool,
    /// Fill the seats not given with --seat with this spec, up to the game's usual number of
    /// seats (e.g. --fill builtin:random for the six other Diplomacy powers).
    #[arg(long, value_name = "SPEC")]
    pub fill: Option<SeatSpec>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// Resource limits of process bots (rlimits, inherited by their children). 0 means unlimited.
#[derive(Args, Debug, Clone)]
pub struct SandboxArgs {
    /// CPU seconds per bot process.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub cpu_seconds: u64,
    /// Memory (private writable data) per bot process, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    pub memory_mib: u64,
    /// Processes of the user (RLIMIT_NPROC; does not bind root).
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub max_processes: u64,
    /// Largest file a bot may write, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub file_size_mib: u64,
    /// Bytes of stderr kept per bot.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024)]
    pub stderr_cap: usize,
}

impl SandboxArgs {
    /// The sandbox these flags describe.
    pub fn config(&self) -> SandboxConfig {
        let nonzero = |v: u64| (v > 0).then_some(v);
        let mut cfg = SandboxConfig::default();
        cfg.limits.cpu_seconds = nonzero(self.cpu_seconds);
        cfg.limits.memory_bytes = nonzero(self.memory_mib).map(|m| m << 20);
        cfg.limits.processes = nonzero(self.max_processes);
        cfg.limits.file_size_bytes = nonzero(self.file_size_mib).map(|m| m << 20);
        cfg.stderr_cap = self.stderr_cap;
        cfg
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
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    });
    let mut seats = args.seats;
    if let Some(fill) = &args.fill {
        let want = driver.game_type().default_seats;
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
    // The flags' limits, keeping what the spec passes to bots (the match seed, KAKEHIKI_SEED).
    let bot_env = std::mem::take(&mut spec.sandbox.env);
    spec.sandbox = args.sandbox.config();
    spec.sandbox.env.extend(bot_env);
    if let Some(y) = args.max_year {
        spec.options.insert("max_year".into(), y.to_string());
    }
    if let Some(k) = args.press_rounds {
        spec.options.insert("press_rounds".into(), k.to_string());
    }
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let record = runtime
        .block_on(driver.play(&spec))
        .with_context(|| format!("cannot run a {} match", args.game))?;
    if let Some(path) = &args.replay {
        std::fs::write(path, record.replay.to_text())
            .with_context(|| format!("cannot write the replay to {}", path.display()))?;
    }
    let failed: Vec<usize> = process_seats
        .iter()
        .copied()
        .filter(|&i| {
            record
                .report
                .seats
                .get(i)
                .is_some_and(|s| !s.errors.is_empty())
        })
        .collect();
    if args.json {
        println!("{}", serde_json::to_string(&record.report)?);
    } else {
        print!("{}", super::summary(&record.report));
        if let Some(path) = &args.replay {
            println!("replay: {}", path.display());
        }
    }
    // What a failing bot said on stderr is usually why it failed.
    let tails = stderr_tails(&record.replay.to_text(), STDERR_TAIL_LINES);
    for seat in &failed {
        if let Some(tail) = tails.get(seat).filter(|t| !t.trim().is_empty()) {
            eprintln!("stderr of seat {seat} (last {STDERR_TAIL_LINES} lines at most):");
            for line in tail.lines() {
                eprintln!("  | {line}");
            }
        }
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

/// Lines of a failing bot's stderr shown after the result.
const STDERR_TAIL_LINES: usize = 20;

/// The last `lines` lines of every seat's stderr recorded in a replay (`"event":"stderr"` lines
/// with `seat` and `text`), by seat.
pub fn stderr_tails(replay: &str, lines: usize) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    for line in replay.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v.get("event").and_then(|e| e.as_str()) != Some("stderr") {
            continue;
        }
        let (Some(seat), Some(text)) = (
            v.get("seat").and_then(|s| s.as_u64()),
            v.get("text").and_then(|t| t.as_str()),
        ) else {
            continue;
        };
        let all: Vec<&str> = text.trim_end().lines().collect();
        let tail = all[all.len().saturating_sub(lines)..].join("\n");
        out.insert(seat as usize, tail);
    }
    out
}
