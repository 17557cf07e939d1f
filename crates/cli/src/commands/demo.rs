//! `kakehiki demo`: a demo match of every game with built-in and example process bots.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_core::SeatSpec;
use kakehiki_referee::{find_game, MatchSpec};

use crate::exit;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Where replays are written.
    #[arg(long, default_value = "demo-out")]
    pub out: PathBuf,
    /// Base seed of the demo matches.
    #[arg(long, default_value_t = 2014)]
    pub seed: u64,
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

    fn python(&self, script: &str) -> SeatSpec {
        let path = self.root.join("examples/bots/python").join(script);
        SeatSpec::Cmd(vec!["python3".into(), path.to_string_lossy().into_owned()])
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

struct DemoMatch {
    game: &'static str,
    seats: Vec<SeatSpec>,
    options: Vec<(&'static str, String)>,
}

fn demo_matches(ex: &Examples) -> anyhow::Result<Vec<DemoMatch>> {
    let b = |n: &str| SeatSpec::Builtin(n.into());
    let mut out = Vec::new();
    for game in ["nac", "religion-war"] {
        out.push(DemoMatch {
            game,
            seats: vec![ex.python("nac_bot.py"), ex.rust("nac-example-bot")?, b("strong"), b("random")],
            options: vec![],
        });
    }
    Ok(out)
}

pub fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let ex = Examples::locate()?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let runtime = tokio::runtime::Runtime::new()?;
    for (i, m) in demo_matches(&ex)?.into_iter().enumerate() {
        let driver = find_game(m.game)?;
        let mut spec = MatchSpec::new(m.game, args.seed + i as u64, m.seats);
        for (k, v) in m.options {
            spec.options.insert(k.into(), v);
        }
        let record = runtime.block_on(driver.play(&spec)).with_context(|| format!("demo match of {}", m.game))?;
        let path = args.out.join(format!("{}-{}.jsonl", m.game, spec.seed));
        std::fs::write(&path, record.replay.to_text()).with_context(|| format!("cannot write {}", path.display()))?;
        println!("== {}", driver.game_type().title);
        print!("{}", super::summary(&record.report));
        println!("replay: {}  (check it: kakehiki replay {})\n", path.display(), path.display());
    }
    Ok(exit::OK)
}
