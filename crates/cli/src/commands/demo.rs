//! `kakehiki demo`: a small real contest of every registered game, with built-in and example
//! process bots, stored in SQLite; prints the standings, the paths of the replays and the
//! command that shows it all in the browser.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_contest::{
    compute_standings, load_results, run_local, Arena, ContestDef, OutputFormat, RefereeArena,
    RunOptions,
};
use kakehiki_core::SeatSpec;
use kakehiki_referee::GAMES;
use kakehiki_store::{SqliteStore, Store};

use crate::exit;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Where the demo database and the replays are written.
    #[arg(long, default_value = "demo-out")]
    pub out: PathBuf,
    /// Base seed of the demo contests.
    #[arg(long, default_value_t = 2014)]
    pub seed: u64,
    /// Matches played at once.
    #[arg(long, short = 'j', default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Only this game's demo contest (may be repeated; default: every game).
    #[arg(long = "game", value_name = "GAME")]
    pub games: Vec<String>,
}

/// The example bots shipped in `examples/bots/`: the Python ones run from the source tree, the Rust
/// ones from the directory of this executable (cargo builds them side by side).
struct Examples {
    root: PathBuf,
    bin_dir: PathBuf,
}

impl Examples {
    fn locate() -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("cannot locate the kakehiki executable")?;
        let bin_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut root = std::env::current_dir()?;
        loop {
            if root.join("examples/bots/python").is_dir() {
                break;
            }
            if !root.pop() {
                bail!("cannot find examples/bots/ above the current directory: run the demo from the repository");
            }
        }
        Ok(Examples { root, bin_dir })
    }

    fn python(&self, script: &str, args: &[&str]) -> SeatSpec {
        let path = self.root.join("examples/bots/python").join(script);
        let mut argv = vec!["python3".to_string(), path.to_string_lossy().into_owned()];
        argv.extend(args.iter().map(|a| a.to_string()));
        SeatSpec::Cmd(argv)
    }

    fn python_tcp(&self, script: &str) -> SeatSpec {
        let path = self.root.join("examples/bots/python").join(script);
        SeatSpec::TcpCmd(vec![
            "python3".into(),
            path.to_string_lossy().into_owned(),
            "{host}".into(),
            "{port}".into(),
        ])
    }

    /// A starter agent of the natural-language Werewolf division, launched as a WebSocket
    /// client with the server's address (`ws-cmd:`; `tcp-cmd:` is the same seat).
    fn starter_ws(&self, path: &str) -> SeatSpec {
        let path = self.root.join("starters").join(path);
        SeatSpec::TcpCmd(vec![
            "python3".into(),
            path.to_string_lossy().into_owned(),
            "{url}".into(),
        ])
    }

    fn rust(&self, bin: &str) -> anyhow::Result<SeatSpec> {
        let path = self.bin_dir.join(bin);
        if !path.exists() {
            bail!(
                "example bot {} is not built: run `cargo build --release -p kakehiki-example-bots` (scripts/demo does)",
                path.display()
            );
        }
        Ok(SeatSpec::Cmd(vec![path.to_string_lossy().into_owned()]))
    }
}

/// A TOML string literal.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The demo contest of one game, as contest-file text (validated like any contest file).
fn demo_contest(game: &str, seed: u64, ex: &Examples) -> anyhow::Result<Option<String>> {
    let b = |n: &str| SeatSpec::Builtin(n.into());
    let (header, entrants): (String, Vec<(&str, SeatSpec)>) = match game {
        "nac" | "religion-war" => (
            "format = \"round-robin\"\ngames = 4\n".into(),
            vec![
                ("python-example", ex.python("nac_bot.py", &[])),
                ("rust-example", ex.rust("nac-example-bot")?),
                ("strong", b("strong")),
                ("random", b("random")),
            ],
        ),
        "geister" => (
            "rules = \"gpw\"\nformat = \"geister-gpw\"\ngames = 2\n".into(),
            vec![
                ("python-tcp-client", ex.python_tcp("geister_client.py")),
                ("strong", b("strong")),
                ("rush", b("rush")),
                ("random", b("random")),
            ],
        ),
        "werewolf" => (
            "format = \"aiwolf-game-set\"\nseats = 5\ngames = 6\nsets = 1\n".into(),
            vec![
                ("python-example", ex.python_tcp("aiwolf_client.py")),
                ("sample-a", b("sample")),
                ("sample-b", b("sample")),
                ("random-a", b("random")),
                ("random-b", b("random")),
            ],
        ),
        // Scoring `score`: a solo (18 centres) scores 1, otherwise the survivors share 1. Two
        // strong bots against holding and random ones, long enough for centres to decide: one
        // of them wins alone or the weak are eliminated (in 1903 all seven drew at 1/7).
        "diplomacy" => (
            "format = \"random-tables\"\nseats = 7\nmin_games = 4\n\n[options]\nmax_year = \"1910\"\n".into(),
            vec![
                ("python-example", ex.python("diplomacy_bot.py", &[])),
                ("strong-a", b("strong")),
                ("strong-b", b("strong")),
                ("random-a", b("random")),
                ("random-b", b("random")),
                ("hold-a", b("hold")),
                ("hold-b", b("hold")),
            ],
        ),
        // The natural-language division: the Python starter agent over WebSocket (on loopback)
        // in villages of five with the four built-in agents; scoring `wins` (the winning team's
        // members score 1).
        "werewolf-nlp" => (
            "format = \"aiwolf-game-set\"\nseats = 5\ngames = 10\nsets = 1\n".into(),
            vec![
                ("python-starter", ex.starter_ws("werewolf-nlp/python/bot.py")),
                ("sample", b("sample")),
                ("sample-en", b("sample-en")),
                ("random", b("random")),
                ("random-en", b("random-en")),
            ],
        ),
        _ => return Ok(None),
    };
    // Top-level keys first, then tables.
    let (top, tables) = match header.find("\n[") {
        Some(i) => (header[..i + 1].to_string(), header[i + 1..].to_string()),
        None => (header, String::new()),
    };
    let mut text = format!(
        "name = \"demo-{game}\"\ngame = \"{game}\"\nseed = {seed}\nbootstrap = 100\n{top}{tables}"
    );
    for (name, seat) in entrants {
        text.push_str(&format!(
            "\n[[entrants]]\nname = \"{name}\"\nseat = {}\n",
            quoted(&seat.to_string())
        ));
    }
    Ok(Some(text))
}

/// How to run this executable again, as the user would type it: its path relative to the
/// current directory when it is below it (`target/release/kakehiki`), else the full path.
fn this_command() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return "kakehiki".into();
    };
    let rel = std::env::current_dir()
        .ok()
        .and_then(|cwd| exe.strip_prefix(&cwd).ok().map(Path::to_path_buf));
    match rel {
        Some(r) => r.display().to_string(),
        None => exe.display().to_string(),
    }
}

pub fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let names: Vec<&str> = GAMES.iter().map(|d| d.game_type().name).collect();
    for g in &args.games {
        if !names.contains(&g.as_str()) {
            bail!(
                "--game {g:?}: no such game; the demo has {}",
                names.join(", ")
            );
        }
    }
    let ex = Examples::locate()?;
    let kakehiki = this_command();
    let started = Instant::now();
    kakehiki_core::private_files::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    // A fresh database each time: the demo's bot paths depend on where it is run from.
    let db = args.out.join("demo.sqlite");
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        if p.exists() {
            std::fs::remove_file(&p)
                .with_context(|| format!("cannot remove the old {}", p.display()))?;
        }
    }
    let arena = RefereeArena;
    let mut failed = 0;
    let mut contests = Vec::new();
    for (i, driver) in GAMES.iter().enumerate() {
        let game = driver.game_type().name;
        if !args.games.is_empty() && !args.games.iter().any(|g| g == game) {
            continue;
        }
        let Some(text) = demo_contest(game, args.seed + i as u64, &ex)? else {
            println!("== {}: no demo contest yet\n", driver.game_type().title);
            continue;
        };
        let def = ContestDef::parse(&text, &format!("demo contest of {game}"), &|g| {
            arena.game_type(g)
        })?;
        let store: Box<dyn Store> = Box::new(
            SqliteStore::open(&db).with_context(|| format!("cannot open {}", db.display()))?,
        );
        let opts = RunOptions {
            jobs: usize::from(args.jobs),
            progress: false,
            worker: "demo".into(),
            store_files: kakehiki_contest::store_files(&db),
            ..RunOptions::default()
        };
        let game_started = Instant::now();
        let summary = run_local(&def, store, Arc::new(RefereeArena), &opts)
            .with_context(|| format!("demo contest of {game}"))?;
        let took = game_started.elapsed().as_secs_f64();
        let mut store =
            SqliteStore::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
        let results = load_results(&mut store, &def)?;
        println!(
            "== {} — {} ({} matches in {took:.1} s)",
            driver.game_type().title,
            def.format.name(),
            summary.scheduled
        );
        print!(
            "{}",
            compute_standings(&def, &results).render(OutputFormat::Table)
        );
        for (index, e) in &summary.failed {
            println!("match {index} failed: {e}");
        }
        failed += summary.failed.len();
        let paths = super::contest::replays(super::contest::ReplaysArgs {
            name: def.name.clone(),
            store: super::contest::StoreArgs {
                db: db.clone(),
                database_url: None,
            },
            out: args.out.join("replays"),
        })?;
        println!("replays ({}):", paths.len());
        for p in &paths {
            println!("  {}", p.display());
        }
        if let Some(p) = paths.first() {
            println!("check one: {kakehiki} replay {}", p.display());
        }
        println!();
        contests.push(def.name.clone());
    }
    println!(
        "demo played in {:.1} s; results stored in {}",
        started.elapsed().as_secs_f64(),
        db.display()
    );
    println!("each contest's page (standings, matches, replay viewer):");
    for name in &contests {
        println!("  http://127.0.0.1:8080/contests/{name}");
    }
    println!("see what was played in the browser: run this, then open http://127.0.0.1:8080/");
    println!("  {kakehiki} web --db {}", db.display());
    Ok(if failed == 0 { exit::OK } else { exit::FAILURE })
}
