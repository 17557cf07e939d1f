//! `kakehiki serve werewolf`: a server agents connect to on their own; runs a game set once the
//! seats are filled.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_referee::games::werewolf::server::{serve_set, SetConfig};

use crate::exit;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The game to serve. Only `werewolf` has a server mode (AIWolf agents connect on their own).
    pub game: String,
    /// TCP port to listen on (AIWolf's default is 10000).
    #[arg(long, default_value_t = 10000)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    pub host: String,
    /// Agents per game (the village size).
    #[arg(long, default_value_t = 15)]
    pub players: usize,
    /// Games in the set, all on the same connections.
    #[arg(long, default_value_t = 100)]
    pub games: u32,
    /// Rule set: aiwolf-0.6 (default) or seed-2015.
    #[arg(long)]
    pub rules: Option<String>,
    /// Run seed: game seeds and agent numbers derive from it. Random if omitted.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Game option KEY=VALUE (time_limit_ms=1000, contest_limit_ms=100, role_request=false, ...).
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Fix an agent's number by name: NAME=NUMBER; may be repeated.
    #[arg(long = "number", value_name = "NAME=NUMBER")]
    pub numbers: Vec<String>,
    /// Directory for game logs, errors.jsonl, timings.jsonl and the results (JSON and CSV).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the results as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Wire protocol: `tcp` (AIWolf 0.6.x, default) or `nlp` (the natural-language division's
    /// aiwolf-nlp-server protocol over WebSocket; host, port, players and limits come from
    /// `--config`, upstream's defaults otherwise: 127.0.0.1:8080, 5 players).
    #[arg(long, default_value = "tcp")]
    pub protocol: String,
    /// `--protocol nlp`: the configuration file (TOML, upstream's sections and keys).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

fn run_nlp(args: ServeArgs) -> anyhow::Result<u8> {
    use kakehiki_referee::games::werewolf_nlp::{load_config, server};
    let config = match &args.config {
        Some(p) => load_config(p).map_err(anyhow::Error::msg)?,
        None => kakehiki_referee::games::werewolf_nlp::Config::for_players(5),
    };
    let settings = config.settings().context("bad configuration")?;
    let seed = args.seed.or(config.game.seed).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let host = config.server.web_socket.host.clone();
    let port = config.server.web_socket.port;
    let cfg = server::ServeConfig {
        config,
        games: args.games,
        seed,
        out: args.out.clone(),
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let games = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((host.as_str(), port))
            .await
            .with_context(|| format!("cannot listen on {host}:{port}"))?;
        eprintln!(
            "werewolf (nlp): listening on ws://{}/ws, {} players a game, {} games, seed {seed}",
            listener.local_addr()?,
            settings.agent_count,
            args.games
        );
        server::serve(listener, cfg).await.context("serving failed")
    })?;
    if args.json {
        println!("{}", serde_json::to_string(&games)?);
    } else {
        for g in &games {
            println!(
                "{} seed {}: {} ({})",
                g.game_id,
                g.seed,
                g.winner
                    .unwrap_or(if g.aborted { "aborted" } else { "no winner" }),
                g.agents.join(" ")
            );
        }
    }
    Ok(exit::OK)
}

pub fn run(args: ServeArgs) -> anyhow::Result<u8> {
    match args.protocol.as_str() {
        "tcp" => {}
        "nlp" if args.game == "werewolf" => return run_nlp(args),
        p => bail!("unknown --protocol {p:?}: expected tcp or nlp (werewolf only)"),
    }
    if args.game != "werewolf" {
        bail!("{:?} has no server mode: only werewolf agents connect on their own (try `kakehiki play`)", args.game);
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let mut numbers = std::collections::BTreeMap::new();
    for item in &args.numbers {
        let Some((name, num)) = item.rsplit_once('=') else {
            bail!("--number {item:?}: expected NAME=NUMBER");
        };
        let num: usize = num
            .trim()
            .parse()
            .with_context(|| format!("--number {item:?}: bad number"))?;
        if !(1..=args.players).contains(&num) {
            bail!(
                "--number {item:?}: the number must be 1 to {}",
                args.players
            );
        }
        numbers.insert(name.to_string(), num);
    }
    let set = SetConfig {
        players: args.players,
        games: args.games,
        run_seed: seed,
        rules: args.rules.clone(),
        options: super::play::parse_options(&args.options)?,
        out_dir: args.out.clone(),
        numbers,
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
            .await
            .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
        eprintln!(
            "werewolf: listening on {}, waiting for {} agents; {} games, run seed {seed}",
            listener.local_addr()?,
            args.players,
            args.games
        );
        serve_set(listener, &set)
            .await
            .context("the game set could not be run")
    })?;
    if args.json {
        println!("{}", serde_json::to_string(&result.standings.to_json())?);
    } else {
        let s = &result.standings;
        println!(
            "{} games: VILLAGER won {}, WEREWOLF won {}",
            s.games, s.villager_wins, s.werewolf_wins
        );
        print!("{}", s.agents_csv());
        if let Some(dir) = &args.out {
            println!("results and logs: {}", dir.display());
        }
    }
    Ok(exit::OK)
}
