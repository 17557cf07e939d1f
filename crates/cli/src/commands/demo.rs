//! `kakehiki demo`: a small real contest of every registered game, with built-in and example
//! process bots, stored in SQLite; prints the standings and the paths of the replays.

use std::path::{Path, PathBuf};
use std::sync::Arc;

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
        "diplomacy" => (
            "format = \"random-tables\"\nseats = 7\nmin_games = 2\n\n[options]\nmax_year = \"1903\"\n".into(),
            vec![
                ("python-example", ex.python("diplomacy_bot.py", &[])),
                ("strong-a", b("strong")),
                ("strong-b", b("strong")),
                ("random-a", b("random")),
                ("random-b", b("random")),
                ("random-c", b("random")),
                ("random-d", b("random")),
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

pub fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let ex = Examples::locate()?;
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
    for (i, driver) in GAMES.iter().enumerate() {
        let game = driver.game_type().name;
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
        let summary = run_local(&def, store, Arc::new(RefereeArena), &opts)
            .with_context(|| format!("demo contest of {game}"))?;
        let mut store =
            SqliteStore::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
        let results = load_results(&mut store, &def)?;
        println!(
            "== {} — {} ({} matches)",
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
            println!("check one: kakehiki replay {}", p.display());
        }
        println!();
    }
    println!(
        "results: {}  (kakehiki contest standings demo-nac --db {})",
        db.display(),
        db.display()
    );
    Ok(if failed == 0 { exit::OK } else { exit::FAILURE })
}
