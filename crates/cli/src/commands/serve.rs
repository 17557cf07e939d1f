//! `kakehiki serve werewolf`: a server agents connect to on their own; runs a game set once the
//! seats are filled.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_referee::games::werewolf::server::{serve_set, SetConfig};

use crate::exit;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The game to serve: `werewolf` (AIWolf agents connect on their own), `geister` (a
    /// standing table on a port pair, playing game after game with the clients that connect) or
    /// `diplomacy` with `--protocol daide` (game after game with the seven DAIDE clients that
    /// connect to --port, default 16713; replays in --out, default diplomacy-games).
    pub game: String,
    /// TCP port to listen on (default 10000, AIWolf's; 0 for a free port); geister: seat 0's
    /// port, seat 1 is on the next (10000 and 10001; 0 for two free ports); `--protocol nlp`:
    /// overrides the configuration file's `server.web_socket.port` (default 8080).
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 to take agents from
    /// other machines); `--protocol nlp`: overrides the file's `server.web_socket.host`.
    #[arg(long)]
    pub host: Option<String>,
    /// Agents per game, the village size (werewolf; default 15); `--protocol nlp`: overrides the
    /// file's `game.agent_count` (default 5).
    #[arg(long)]
    pub players: Option<usize>,
    /// Games in the set, all on the same connections (werewolf, default 100); geister: stop
    /// after this many games (default: serve until stopped). At least 1.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub games: Option<u32>,
    /// Geister: several games on one connection (spec §3.8's extension): a connection stays
    /// open after its end message and plays the next game with a new SET?, the two clients
    /// swapping seats from game to game; a client that reconnects instead takes the free seat
    /// from either port. A client holding a seat waits at most connect_timeout_ms (30 s; --opt
    /// connect_timeout_ms=MS) for an opponent, then its connection is closed with a warning.
    #[arg(long)]
    pub keep_connections: bool,
    /// Rule set: aiwolf-0.6 (default) or seed-2015; geister: gpw (default) or seed.
    #[arg(long)]
    pub rules: Option<String>,
    /// Run seed: game seeds and agent numbers derive from it (geister: game k gets seed + k).
    /// Random if omitted; the seed used is printed (geister: also written to run-seed.txt in
    /// --out).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Game option KEY=VALUE (time_limit_ms=1000, contest_limit_ms=100, role_request=false, ...).
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Fix an agent's number by name: NAME=NUMBER; may be repeated.
    #[arg(long = "number", value_name = "NAME=NUMBER")]
    pub numbers: Vec<String>,
    /// Directory for game logs, errors.jsonl, timings.jsonl and the results (JSON and CSV);
    /// geister: each game's replay (game-NNNNNN.jsonl) and compatible log (default
    /// geister-games).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the results as one JSON object (geister: one JSON line per game).
    #[arg(long)]
    pub json: bool,
    /// Wire protocol: `tcp` (AIWolf 0.6.x, default) or `nlp` (the natural-language division's
    /// aiwolf-nlp-server protocol over WebSocket; host, port, players and limits come from
    /// `--config`, upstream's defaults otherwise: 127.0.0.1:8080, 5 players; `--host`,
    /// `--port`, `--players`, `--games` and `--seed` override the file); `daide` for
    /// `diplomacy` (DAIDE clients, level 0: docs/protocols/diplomacy-daide.md).
    #[arg(long, default_value = "tcp")]
    pub protocol: String,
    /// `--protocol nlp`: the configuration file (upstream's YAML as it is, or TOML or JSON with
    /// the same sections and keys).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Flags given that `what` cannot use: an error naming them, never ignored.
fn refuse_flags(what: &str, given: &[(&str, bool)]) -> anyhow::Result<()> {
    let bad: Vec<&str> = given.iter().filter(|(_, g)| *g).map(|(f, _)| *f).collect();
    if !bad.is_empty() {
        bail!("{} cannot be used with {what}", bad.join(", "));
    }
    Ok(())
}

fn run_nlp(args: ServeArgs) -> anyhow::Result<u8> {
    use kakehiki_referee::games::werewolf_nlp::{load_config_for, server};
    refuse_flags(
        "--protocol nlp (the NLP division's rules and limits come from --config)",
        &[
            ("--rules", args.rules.is_some()),
            ("--opt", !args.options.is_empty()),
            ("--number", !args.numbers.is_empty()),
            ("--keep-connections", args.keep_connections),
        ],
    )?;
    // The file first, then the flags given explicitly.
    let mut config = match &args.config {
        Some(p) => {
            let loaded = load_config_for(p, args.players).map_err(anyhow::Error::msg)?;
            for w in &loaded.warnings {
                eprintln!("werewolf (nlp): warning: {}: {w}", p.display());
            }
            loaded.config
        }
        None => {
            kakehiki_referee::games::werewolf_nlp::Config::for_players(args.players.unwrap_or(5))
        }
    };
    if let Some(h) = &args.host {
        config.server.web_socket.host = h.clone();
    }
    if let Some(p) = args.port {
        config.server.web_socket.port = p;
    }
    let games_to_play = args.games.or(config.game.games).unwrap_or(100);
    if games_to_play == 0 {
        anyhow::bail!(
            "the configuration's game.games is 0: a set plays at least 1 game (set it, or give --games N)"
        );
    }
    let settings = config.settings().context("bad configuration")?;
    let seed = args
        .seed
        .or(config.game.seed)
        .unwrap_or_else(kakehiki_core::fresh_seed);
    let host = config.server.web_socket.host.clone();
    let port = config.server.web_socket.port;
    let cap = kakehiki_referee::accept::SERVE_CONN_CAP.max(4 * settings.agent_count);
    // Games run concurrently; count the connections of up to 4 villages in play.
    crate::fd_budget::check(
        crate::fd_budget::for_server(cap, 4 * settings.agent_count),
        &format!(
            "serve werewolf --protocol nlp ({} + listener + {cap} connections not in a game + \
             4 villages of {} in play)",
            crate::fd_budget::BASE,
            settings.agent_count
        ),
        "fewer players",
    )?;
    let cfg = server::ServeConfig {
        config,
        games: games_to_play,
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
            games_to_play
        );
        server::serve(listener, cfg).await.context("serving failed")
    })?;
    let server::Served {
        games,
        excess_connections,
    } = games;
    if excess_connections > 0 {
        eprintln!(
            "werewolf (nlp): {excess_connections} connections closed at once (over the cap of connections not in a game)"
        );
    }
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
                // Agents name themselves: escaped for the terminal.
                g.agents
                    .iter()
                    .map(|a| kakehiki_core::text::terminal_line(a))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
    Ok(exit::OK)
}

pub fn run(args: ServeArgs) -> anyhow::Result<u8> {
    match args.protocol.as_str() {
        "tcp" if args.game != "diplomacy" => {}
        "nlp" if args.game == "werewolf" => return run_nlp(args),
        "daide" if args.game == "diplomacy" => return run_diplomacy_daide(args),
        _ if args.game == "diplomacy" => {
            bail!("serve diplomacy takes --protocol daide (DAIDE clients connect on their own)")
        }
        p => bail!(
            "unknown --protocol {p:?}: expected tcp, nlp (werewolf only) or daide (diplomacy only)"
        ),
    }
    if args.game == "geister" {
        refuse_flags(
            "serve geister",
            &[
                ("--players", args.players.is_some()),
                ("--number", !args.numbers.is_empty()),
                ("--config", args.config.is_some()),
            ],
        )?;
        return run_geister(args);
    }
    if args.game != "werewolf" {
        bail!("{:?} has no server mode: only werewolf and geister clients connect on their own (try `kakehiki play`)", args.game);
    }
    if args.keep_connections {
        bail!("--keep-connections is for geister (werewolf agents keep theirs for the whole set)");
    }
    refuse_flags(
        "--protocol tcp (--config is the NLP division's file: add --protocol nlp)",
        &[("--config", args.config.is_some())],
    )?;
    let host = args.host.clone().unwrap_or_else(|| "127.0.0.1".into());
    let players = args.players.unwrap_or(15);
    let port = args.port.unwrap_or(10000);
    let games = args.games.unwrap_or(100);
    let cap = kakehiki_referee::accept::SERVE_CONN_CAP;
    crate::fd_budget::check(
        crate::fd_budget::for_server(cap, players),
        &format!(
            "serve werewolf ({} + listener + {cap} unseated connections + {} seats)",
            crate::fd_budget::BASE,
            players
        ),
        "fewer --players",
    )?;
    let seed = args.seed.unwrap_or_else(kakehiki_core::fresh_seed);
    let mut numbers = std::collections::BTreeMap::new();
    for item in &args.numbers {
        let Some((name, num)) = item.rsplit_once('=') else {
            bail!("--number {item:?}: expected NAME=NUMBER");
        };
        let num: usize = num
            .trim()
            .parse()
            .with_context(|| format!("--number {item:?}: bad number"))?;
        if !(1..=players).contains(&num) {
            bail!("--number {item:?}: the number must be 1 to {}", players);
        }
        numbers.insert(name.to_string(), num);
    }
    let set = SetConfig {
        players,
        games,
        run_seed: seed,
        rules: args.rules.clone(),
        options: super::play::parse_options(&args.options)?,
        out_dir: args.out.clone(),
        numbers,
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((host.as_str(), port))
            .await
            .with_context(|| format!("cannot listen on {host}:{}", port))?;
        eprintln!(
            "werewolf: listening on {}, waiting for {} agents; {games} games, run seed {seed}",
            listener.local_addr()?,
            players,
        );
        serve_set(listener, &set)
            .await
            .context("the game set could not be run")
    })?;
    if args.json {
        let mut v = result.standings.to_json();
        v["excess_connections"] = serde_json::json!(result.excess_connections);
        println!("{}", serde_json::to_string(&v)?);
    } else {
        let s = &result.standings;
        println!(
            "{} games: VILLAGER won {}, WEREWOLF won {}",
            s.games, s.villager_wins, s.werewolf_wins
        );
        if result.excess_connections > 0 {
            println!(
                "{} connections closed at once (over the cap of unseated connections)",
                result.excess_connections
            );
        }
        // Agents name themselves: their names are escaped for the terminal.
        print!("{}", kakehiki_core::text::terminal_text(&s.agents_csv()));
        if let Some(dir) = &args.out {
            println!("results and logs: {}", dir.display());
        }
    }
    Ok(exit::OK)
}

/// `serve geister`: a standing table on a port pair (spec §3.8); a replay and a compatible log
/// per game, a summary line per game.
/// The run seed (`--seed`; omitted, a random one, printed by the caller) and the replay
/// directory (`--out`, else `default_out`), created, with the seed written beside the replays
/// (`run-seed.txt`) so that `--seed` repeats the run.
fn run_seed_and_out(args: &ServeArgs, default_out: &str) -> anyhow::Result<(u64, PathBuf)> {
    let seed = args.seed.unwrap_or_else(kakehiki_core::fresh_seed);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(default_out));
    kakehiki_core::private_files::create_dir_all(&out)
        .with_context(|| format!("cannot create the replay directory {}", out.display()))?;
    let seed_file = out.join("run-seed.txt");
    super::play::write_file_atomically(&seed_file, format!("{seed}\n").as_bytes())
        .with_context(|| format!("cannot record the run seed in {}", seed_file.display()))?;
    Ok((seed, out))
}

/// `serve diplomacy --protocol daide`: game after game, each with the seven DAIDE clients that
/// connect (in order: AUS, ENG, ..., TUR), each game's replay in `--out`.
fn run_diplomacy_daide(args: ServeArgs) -> anyhow::Result<u8> {
    use kakehiki_referee::games::diplomacy::serve::{game_line, ServeConfig, DAIDE_PORT};
    use kakehiki_referee::{find_game, ListenNotice};
    refuse_flags(
        "serve diplomacy --protocol daide",
        &[
            ("--players", args.players.is_some()),
            ("--number", !args.numbers.is_empty()),
            ("--config", args.config.is_some()),
            ("--keep-connections", args.keep_connections),
            ("--rules", args.rules.is_some()),
        ],
    )?;
    let options = super::play::parse_options(&args.options)?;
    for key in ["host", "port"] {
        if options.contains_key(key) {
            bail!("--opt {key}=: give --{key} instead");
        }
    }
    let (seed, out) = run_seed_and_out(&args, "diplomacy-games")?;
    let cfg = ServeConfig {
        host: args.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
        port: args.port.unwrap_or(DAIDE_PORT),
        seed,
        options,
    };
    let driver = find_game("diplomacy").context("diplomacy is not registered")?;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let mut k: u64 = 0;
    loop {
        k += 1;
        if args.games.is_some_and(|n| k > u64::from(n)) {
            break;
        }
        let game_seed = cfg.game_seed(k);
        let mut spec = cfg.game(k);
        spec.on_listen = ListenNotice::new(move |seat, addr| {
            if seat == 0 {
                eprintln!(
                    "diplomacy (daide): game {k} (seed {game_seed}): listening on {addr}, run seed {seed}; seats AUS ENG FRA GER ITA RUS TUR in the order clients connect"
                );
            }
        });
        let mut record = runtime
            .block_on(driver.play(&spec))
            .context("cannot run a diplomacy match")?;
        record.stamp_sandbox(&spec);
        let path = out.join(format!("game-{k:06}.jsonl"));
        super::play::write_file_atomically(&path, record.replay.to_text().as_bytes())
            .with_context(|| format!("cannot write the replay to {}", path.display()))?;
        let r = &record.report;
        if args.json {
            println!(
                "{}",
                serde_json::json!({"game": k, "seed": game_seed, "replay": path, "report": r})
            );
        } else {
            println!("{}", game_line(k, r, &path));
        }
    }
    Ok(exit::OK)
}

fn run_geister(args: ServeArgs) -> anyhow::Result<u8> {
    use kakehiki_referee::games::geister::serve::{game_line, serve, serve_rules, ServeConfig};
    use kakehiki_referee::games::geister::Table;
    let rules = serve_rules(
        args.rules.clone(),
        super::play::parse_options(&args.options)?,
    )?;
    let host = args.host.clone().unwrap_or_else(|| "127.0.0.1".into());
    crate::fd_budget::check(
        crate::fd_budget::for_matches(1, 2),
        &format!(
            "serve geister ({} + 2 ports × {} per seat)",
            crate::fd_budget::BASE,
            crate::fd_budget::PER_SEAT
        ),
        "nothing less: a table needs this much",
    )?;
    let ports = match args.port.unwrap_or(10000) {
        0 => [0, 0],
        p => [
            p,
            p.checked_add(1)
                .context("--port: seat 1 listens on the next port, past 65535")?,
        ],
    };
    let (seed, out) = run_seed_and_out(&args, "geister-games")?;
    let cfg = ServeConfig {
        rules,
        seed,
        games: args.games.map(u64::from),
        keep_connections: args.keep_connections,
        log_dir: Some(out.clone()),
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let mut write_error: Option<anyhow::Error> = None;
    runtime.block_on(async {
        let mut table = Table::bind(&host, ports)
            .await
            .with_context(|| format!("cannot listen on {host} ports {}, {}", ports[0], ports[1]))?;
        let [a0, a1] = table.local_addrs();
        eprintln!(
            "geister: listening on {a0} (seat 0) and {a1} (seat 1), rules {}, run seed {seed} (game k: seed + k), {}{}; replays in {}",
            cfg.rules.name,
            match cfg.games {
                Some(n) => format!("{n} games"),
                None => "until stopped".into(),
            },
            if cfg.keep_connections {
                ", several games per connection"
            } else {
                ""
            },
            out.display()
        );
        let on_game = |n: u64, record: &kakehiki_referee::MatchRecord| {
            let path = out.join(format!("game-{n:06}.jsonl"));
            if let Err(e) =
                super::play::write_file_atomically(&path, record.replay.to_text().as_bytes())
            {
                eprintln!(
                    "game {n}: cannot write the replay {}: {e:#}",
                    path.display()
                );
                write_error.get_or_insert(e);
            }
            if args.json {
                let mut v = serde_json::to_value(&record.report).unwrap_or_default();
                v["game_number"] = serde_json::json!(n);
                v["replay"] = serde_json::json!(path.display().to_string());
                println!("{v}");
            } else {
                println!("{}", game_line(n, record, &path));
            }
        };
        tokio::select! {
            _ = serve(&mut table, &cfg, on_game) => {}
            _ = tokio::signal::ctrl_c() => eprintln!("geister: stopped"),
        }
        anyhow::Ok(())
    })?;
    match write_error {
        Some(e) => Err(e.context("a replay could not be written")),
        None => Ok(exit::OK),
    }
}
