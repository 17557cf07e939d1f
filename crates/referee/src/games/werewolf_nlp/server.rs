//! `kakehiki serve werewolf --protocol nlp`: agents connect on their own, as to the upstream
//! server; a game starts whenever the waiting room holds a full village (of one team in
//! self-match mode, of any teams otherwise), and every game's replay and upstream game log are
//! written to the output directory.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use kakehiki_core::replay::ReplayLog;
use kakehiki_werewolf::nlp::game::game_id_now;
use kakehiki_werewolf::nlp::{NlpConfig, NlpSettings};

use super::{header, run, secret_of, write_logs, Game, Timeouts, Who};
use crate::accept::{Accepted, CappedAcceptor, Slot, SERVE_CONN_CAP};
use crate::driver::RefereeError;
use crate::seat::ws::{self, WsSeat};
use crate::seat::{Seat, Table};

/// One served game.
#[derive(Debug, Clone, Serialize)]
pub struct ServedGame {
    pub game_id: String,
    pub seed: u64,
    pub agents: Vec<String>,
    pub names: Vec<String>,
    pub roles: Vec<&'static str>,
    pub winner: Option<&'static str>,
    pub aborted: bool,
}

/// What a server run produced.
#[derive(Debug, Clone)]
pub struct Served {
    pub games: Vec<ServedGame>,
    /// Connections closed at once because the cap of connections not in a game was reached.
    pub excess_connections: u64,
}

/// What to serve.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub config: NlpConfig,
    /// Games to play before returning (0: until the process is stopped).
    pub games: u32,
    pub seed: u64,
    /// Replays (`<game_id>.jsonl`) and the upstream-format logs (`<game_id>.log`,
    /// `<game_id>.realtime.jsonl`) go here.
    pub out: Option<PathBuf>,
}

/// Serve games on `listener` until `cfg.games` have been played.
pub async fn serve(listener: TcpListener, cfg: ServeConfig) -> Result<Served, RefereeError> {
    let settings = Arc::new(cfg.config.settings().map_err(|e| RefereeError::BadOption {
        key: "config".into(),
        value: "file".into(),
        expected: e.to_string(),
    })?);
    let secret = secret_of(&cfg.config)?;
    let n = settings.agent_count;
    let name_timeout = Timeouts::of(&settings).response();
    // Connections not in a game yet (in the handshake, NAME, or the waiting room) hold a slot
    // each: at most `conn_cap`, the excess is closed at once and counted.
    let conn_cap = SERVE_CONN_CAP.max(4 * n);
    let mut accepted = CappedAcceptor::new(listener, conn_cap, "serve werewolf (nlp)")?;
    let excess = accepted.excess_counter();
    let (tx, mut rx) = mpsc::channel::<(WsSeat, Slot)>(64);
    let acceptor = tokio::spawn(async move {
        while let Some(a) = accepted.next().await {
            let Accepted { stream, peer, slot } = a;
            let _ = stream.set_nodelay(true);
            let tx = tx.clone();
            let secret = secret.clone();
            tokio::spawn(async move {
                let a = ws::handshake(stream, name_timeout, secret.as_deref()).await;
                match a.gone() {
                    None => {
                        let _ = tx.send((a, slot)).await;
                    }
                    Some(e) => tracing::warn!("connection from {peer} refused: {e}"),
                }
            });
        }
    });
    let mut room: BTreeMap<String, Vec<(WsSeat, Slot)>> = BTreeMap::new();
    let mut started = 0u32;
    let mut running = JoinSet::new();
    let mut done = Vec::new();
    while cfg.games == 0 || started < cfg.games {
        tokio::select! {
            Some((a, slot)) = rx.recv() => {
                let key = if cfg.config.matching.self_match { a.team.clone() } else { String::new() };
                let q = room.entry(key.clone()).or_default();
                q.push((a, slot));
                if q.len() >= n {
                    // In a game: the game bounds them from now on.
                    let agents: Vec<WsSeat> = q.drain(..n).map(|(a, _slot)| a).collect();
                    let seed = cfg.seed.wrapping_add(u64::from(started));
                    started += 1;
                    running.spawn(play_one(settings.clone(), cfg.config.clone(), seed, agents, cfg.out.clone()));
                }
            }
            Some(r) = running.join_next(), if !running.is_empty() => {
                if let Ok(Ok(g)) = r { done.push(g); }
            }
        }
    }
    while let Some(r) = running.join_next().await {
        if let Ok(Ok(g)) = r {
            done.push(g);
        }
    }
    acceptor.abort();
    let excess = excess.load(std::sync::atomic::Ordering::Relaxed);
    if excess > 0 {
        tracing::warn!(
            "serve werewolf (nlp): {excess} connections closed at once over the cap of {conn_cap}"
        );
    }
    Ok(Served {
        games: done,
        excess_connections: excess,
    })
}

async fn play_one(
    settings: Arc<NlpSettings>,
    config: NlpConfig,
    seed: u64,
    agents: Vec<WsSeat>,
    out: Option<PathBuf>,
) -> Result<ServedGame, RefereeError> {
    let seats: Vec<String> = agents.iter().map(|_| "ws".to_string()).collect();
    let mut log = ReplayLog::new();
    log.push(&header(&seats, seed, &config));
    let table = Table::new(
        agents
            .into_iter()
            .map(|a| Seat::Live(Box::new(a)))
            .collect(),
        log,
    );
    let g = Game {
        settings,
        seed,
        who: seats.iter().map(|_| Who::Remote).collect(),
        bots: seats.iter().map(|_| None).collect(),
        game_id: game_id_now(seed),
        json_log: out.is_some() || config.json_logger.enable,
    };
    let p = run(table, g, &config).await;
    let (game, r) = (&p.game, &p.result);
    if let Some(dir) = &out {
        kakehiki_core::private_files::create_dir_all(dir)?;
        kakehiki_core::private_files::write(
            &dir.join(format!("{}.jsonl", game.game_id())),
            p.seats.log.to_text(),
        )?;
    }
    write_logs(out.as_deref(), &config, &p)?;
    Ok(ServedGame {
        game_id: game.game_id().to_string(),
        seed,
        agents: p.originals.clone(),
        names: game.names().iter().map(|n| n.to_string()).collect(),
        roles: r.roles.iter().map(|x| x.name()).collect(),
        winner: r.winner.map(|t| t.name()),
        aborted: r.aborted,
    })
}
