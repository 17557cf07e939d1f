//! Seating TCP agents (§4.2) and running game sets (§8.1): `kakehiki serve werewolf`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use kakehiki_agent::ClientProcess;
use kakehiki_core::{SeatError, SeatErrorKind, SeatSpec};
use kakehiki_werewolf::contest::{GameResult, SeatCounts, Standings};
use kakehiki_werewolf::rng::{run_table_stream, shuffle, RunSeeds};
use kakehiki_werewolf::wire::name_packet;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::conn::{Answer, Conn};
use super::{game_replay, run_game, write_game_log, Config, Counts, Records, Seat, SeatKind};
use crate::accept::{Accepted, CappedAcceptor, Slot, SERVE_CONN_CAP};
use crate::driver::{MatchSpec, RefereeError};
use kakehiki_werewolf::RuleSet;

/// Accept one connection and read its NAME (§4.2). `Err` explains why no agent was seated.
pub async fn accept_named(
    listener: &TcpListener,
    wait: Duration,
    name_limit: Duration,
    counter: &mut u64,
) -> Result<Conn, String> {
    let (stream, _) = match tokio::time::timeout(wait, listener.accept()).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(format!("accept failed: {e}")),
        Err(_) => return Err(format!("no connection within {} ms", wait.as_millis())),
    };
    *counter += 1;
    name_connection(Conn::start(stream, *counter), name_limit).await
}

/// Send NAME on a fresh connection and store the reply.
pub async fn name_connection(mut conn: Conn, limit: Duration) -> Result<Conn, String> {
    match conn.ask(name_packet(), limit).await {
        Answer::Line { text, .. } => {
            let name = kakehiki_werewolf::talk::trim_reply(&text).to_string();
            conn.name = if name.is_empty() {
                format!("unnamed-{}", conn.id)
            } else {
                name
            };
            Ok(conn)
        }
        Answer::Timeout { .. } => Err(format!("no NAME reply within {} ms", limit.as_millis())),
        Answer::Disconnect { reason, .. } => Err(format!("disconnected before NAME: {reason}")),
    }
}

fn substitute(argv: &[String], host: &str, port: u16) -> Vec<String> {
    argv.iter()
        .map(|a| {
            a.replace("{host}", host)
                .replace("{port}", &port.to_string())
        })
        .collect()
}

fn not_ready(spec: String, name: String, detail: String) -> Seat {
    let mut s = Seat::new(spec, name, SeatKind::Remote(None));
    s.errors.push(SeatError {
        at: String::new(),
        turn: 0,
        kind: SeatErrorKind::NotReady,
        detail,
    });
    s
}

/// The seats of a single match: built-in agents, `tcp-cmd:` clients (each launched with a
/// network of its own whose loopback holds only its seat's listener, on the AIWolf port: the
/// connection arriving there is its seat, and it can open no other), `tcp` agents in order of
/// connection on the shared listener. A seat whose agent never connects plays silent; the game
/// still runs.
pub async fn seat_match(
    spec: &MatchSpec,
    cfg: &Config,
    clients: &mut Vec<ClientProcess>,
) -> Result<Vec<Seat>, RefereeError> {
    let needs_shared = spec.seats.iter().any(|s| matches!(s, SeatSpec::Tcp));
    // Agents that connect on their own must know the port: AIWolf's 10000 unless one is given.
    let want = match cfg.port {
        0 => 10000,
        p => p,
    };
    let listener = if needs_shared {
        Some(TcpListener::bind((cfg.host.as_str(), want)).await?)
    } else {
        None
    };
    if let Some(l) = &listener {
        let addr = l.local_addr()?;
        for (i, _) in spec
            .seats
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, SeatSpec::Tcp))
        {
            spec.on_listen.notify(i, addr);
        }
    }
    let mut counter = 0u64;
    let mut seats = Vec::new();
    for (i, s) in spec.seats.iter().enumerate() {
        let text = s.to_string();
        let seat = match (s, &listener) {
            (SeatSpec::Builtin(name), _) => {
                Seat::builtin(name, spec.seed, i + 1).ok_or_else(|| RefereeError::UnknownBot {
                    game: "werewolf".into(),
                    seat: i,
                    name: name.clone(),
                    expected: super::builtin_names(),
                })?
            }
            (SeatSpec::Cmd(_), _) => {
                return Err(RefereeError::UnsupportedSeat {
                    game: "werewolf".into(),
                    seat: i,
                    form: "cmd:".into(),
                    reason: "AIWolf agents connect over TCP: use tcp-cmd:<command line with {host} and {port}> or tcp"
                        .into(),
                })
            }
            (SeatSpec::TcpCmd(argv), _) => {
                let launched = ClientProcess::spawn_seat(
                    |addr| substitute(argv, &addr.ip().to_string(), addr.port()),
                    &spec.sandbox.for_seat(i),
                    want,
                );
                match launched {
                    Err(e) if e.is_host_fault() => {
                        return Err(RefereeError::HostFault {
                            seat: i,
                            reason: e.to_string(),
                        })
                    }
                    Err(e) => not_ready(text, format!("seat{i}"), format!("cannot start the agent: {e}")),
                    Ok((client, port)) => {
                        clients.push(client);
                        // `spawn_seat` hands the listener over non-blocking.
                        let own = match TcpListener::from_std(port.listener) {
                            Ok(l) => l,
                            Err(e) => {
                                return Err(RefereeError::HostFault {
                                    seat: i,
                                    reason: format!("cannot use the seat's listener: {e}"),
                                })
                            }
                        };
                        // One connection is the seat; the listener closes with `own` here.
                        match accept_named(&own, cfg.connect_timeout, cfg.name_timeout, &mut counter).await {
                            Ok(conn) => Seat::new(text, conn.name.clone(), SeatKind::Remote(Some(conn))),
                            Err(why) => not_ready(text, format!("seat{i}"), why),
                        }
                    }
                }
            }
            (SeatSpec::Tcp, Some(l)) => match accept_named(l, cfg.connect_timeout, cfg.name_timeout, &mut counter).await {
                Ok(conn) => Seat::new(text, conn.name.clone(), SeatKind::Remote(Some(conn))),
                Err(why) => not_ready(text, format!("seat{i}"), why),
            },
            (SeatSpec::Tcp, None) => unreachable!("a listener exists whenever a tcp seat does"),
        };
        seats.push(seat);
    }
    Ok(seats)
}

/// Flush and close every connection, then let launched clients exit (killing their groups).
pub async fn close_all(seats: &mut [Seat], clients: Vec<ClientProcess>) {
    for s in seats.iter_mut() {
        if let SeatKind::Remote(Some(c)) = &mut s.kind {
            c.flush(Duration::from_secs(1)).await;
        }
        if let SeatKind::Remote(c) = &mut s.kind {
            *c = None;
        }
    }
    for c in clients {
        let _ = c.finish(Duration::from_secs(2)).await;
    }
}

/// A game set (§8.1).
#[derive(Debug, Clone)]
pub struct SetConfig {
    pub players: usize,
    pub games: u32,
    pub run_seed: u64,
    pub rules: Option<String>,
    pub options: BTreeMap<String, String>,
    /// Directory for game logs, `errors.jsonl`, `timings.jsonl` and the results.
    pub out_dir: Option<PathBuf>,
    /// Configured name → agent number map (otherwise a seeded permutation).
    pub numbers: BTreeMap<String, usize>,
}

/// What a set produced.
#[derive(Debug, Clone)]
pub struct SetResult {
    pub standings: Standings,
    pub games: Vec<GameResult>,
    pub errors: usize,
    /// Connections closed at once because [`SERVE_CONN_CAP`] unseated ones were held.
    pub excess_connections: u64,
}

fn counts_delta(before: Counts, after: Counts) -> SeatCounts {
    SeatCounts {
        timeouts: after.timeouts - before.timeouts,
        invalid: after.invalid - before.invalid,
        slow: after.slow - before.slow,
        silent: after.silent_games > before.silent_games,
    }
}

/// Run a game set on `listener`: wait for `players` agents, number them, play `games` games on the
/// same connections, and write the results. Agents that disconnect are silent until they
/// reconnect with the same name; they take their seat back from the next game on.
pub async fn serve_set(listener: TcpListener, set: &SetConfig) -> Result<SetResult, RefereeError> {
    let cfg = Config::from_options(set.rules.as_deref(), set.players, &set.options, true)?;
    let limit = cfg.name_timeout;
    // Accept forever in the background, holding at most SERVE_CONN_CAP connections that are not
    // seated yet (waiting for NAME, which must come within its own limit, or for a seat); the
    // excess is closed at once and counted. Named connections arrive on a channel; every
    // connection that is not seated is logged with the reason.
    let mut accepted = CappedAcceptor::new(listener, SERVE_CONN_CAP, "serve werewolf")?;
    let excess = accepted.excess_counter();
    let (tx, mut rx) = mpsc::channel::<(Conn, Slot)>(64);
    let acceptor = tokio::spawn(async move {
        let mut counter = 0u64;
        while let Some(a) = accepted.next().await {
            counter += 1;
            let Accepted { stream, peer, slot } = a;
            let conn = Conn::start(stream, counter);
            let tx = tx.clone();
            tokio::spawn(async move {
                match name_connection(conn, limit).await {
                    Ok(mut c) => {
                        c.peer = Some(peer);
                        let _ = tx.send((c, slot)).await;
                    }
                    Err(why) => {
                        tracing::warn!("serve werewolf: connection from {peer} dropped: {why}")
                    }
                }
            });
        }
    });
    let mut conns: Vec<Conn> = Vec::new();
    let deadline = cfg.fill_timeout.map(|d| tokio::time::Instant::now() + d);
    while conns.len() < set.players {
        let next = match deadline {
            Some(d) => match tokio::time::timeout_at(d, rx.recv()).await {
                Ok(n) => n,
                Err(_) => {
                    acceptor.abort();
                    let names: Vec<&str> = conns.iter().map(|c| c.name.as_str()).collect();
                    let msg = format!(
                        "serve werewolf: gave up after waiting {:.1} s for the set to fill \
                         (--opt fill_timeout_ms={}; 0 waits without end): {} of {} agents \
                         seated{}{}",
                        cfg.fill_timeout.unwrap_or_default().as_secs_f64(),
                        cfg.fill_timeout.unwrap_or_default().as_millis(),
                        conns.len(),
                        set.players,
                        if names.is_empty() { "" } else { ": " },
                        names.join(", ")
                    );
                    tracing::error!("{msg}");
                    return Err(RefereeError::Io(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        msg,
                    )));
                }
            },
            None => rx.recv().await,
        };
        match next {
            // Seated: the seat bounds the connection from now on.
            Some((c, _slot)) => {
                tracing::info!(
                    "serve werewolf: {} seated ({} of {})",
                    c.name,
                    conns.len() + 1,
                    set.players
                );
                conns.push(c)
            }
            None => break,
        }
    }
    // Agent numbers: configured by name, else a seeded permutation of the arrival order.
    let mut order: Vec<usize> = (0..conns.len()).collect();
    shuffle(&mut run_table_stream(set.run_seed), &mut order);
    let mut slots: Vec<Option<Conn>> = (0..set.players).map(|_| None).collect();
    let mut rest = Vec::new();
    let mut conns: Vec<Option<Conn>> = conns.into_iter().map(Some).collect();
    for (i, c) in conns.iter_mut().enumerate() {
        if let Some(&num) = c.as_ref().and_then(|c| set.numbers.get(&c.name)) {
            if (1..=set.players).contains(&num) && slots[num - 1].is_none() {
                slots[num - 1] = c.take();
                continue;
            }
        }
        rest.push(i);
    }
    let free_slots: Vec<usize> = (0..set.players).filter(|i| slots[*i].is_none()).collect();
    let mut free = free_slots.into_iter();
    for i in order.into_iter().filter(|i| rest.contains(i)) {
        if let Some(slot) = free.next() {
            slots[slot] = conns[i].take();
        }
    }
    let mut seats: Vec<Seat> = slots
        .into_iter()
        .enumerate()
        .map(|(i, c)| match c {
            Some(c) => Seat::new("tcp".into(), c.name.clone(), SeatKind::Remote(Some(c))),
            None => Seat::new(
                "tcp".into(),
                format!("seat{}", i + 1),
                SeatKind::Remote(None),
            ),
        })
        .collect();
    let mut records = Records::new(set.out_dir.clone());
    let mut standings = Standings::default();
    let mut games = Vec::new();
    let mut seeds = RunSeeds::new(set.run_seed);
    // A replay re-runs as a single game: record the set's effective role-request setting.
    let mut replay_opts = set.options.clone();
    if cfg.settings.rule_set == RuleSet::Aiwolf06 {
        replay_opts
            .entry("role_request".into())
            .or_insert_with(|| cfg.settings.enable_role_request.to_string());
    }
    for game in 0..set.games {
        // Re-admit agents that reconnected under a seat's name.
        while let Ok((c, _slot)) = rx.try_recv() {
            if let Some(s) = seats
                .iter_mut()
                .find(|s| matches!(s.kind, SeatKind::Remote(None)) && s.name == c.name)
            {
                s.kind = SeatKind::Remote(Some(c));
            } else {
                tracing::warn!(
                    "serve werewolf: connection from {} named {:?} dropped: the set is full and \
                     no disconnected seat has that name",
                    c.peer.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                    c.name
                );
            }
        }
        let before: Vec<Counts> = seats.iter().map(|s| s.counts).collect();
        let seed = seeds.next().unwrap_or(u64::from(game));
        let out = run_game(game, seed, &cfg, &mut seats, &mut records).await?;
        if let Some(dir) = &set.out_dir {
            write_game_log(dir, &format!("{game:03}.log"), &out.log)?;
            let replay = game_replay(
                cfg.settings.rule_set.name(),
                seed,
                &seats,
                &replay_opts,
                &out,
            );
            kakehiki_core::private_files::write(
                &dir.join(format!("{game:03}.replay.jsonl")),
                replay.to_text(),
            )?;
        }
        records.flush()?;
        let result = GameResult {
            names: seats.iter().map(|s| s.name.clone()).collect(),
            roles: out.roles.clone(),
            winner: out.winner,
            counts: before
                .iter()
                .zip(&seats)
                .map(|(b, s)| counts_delta(*b, s.counts))
                .collect(),
        };
        standings.add(&result);
        games.push(result);
    }
    acceptor.abort();
    close_all(&mut seats, Vec::new()).await;
    let excess_connections = excess.load(std::sync::atomic::Ordering::Relaxed);
    if excess_connections > 0 {
        tracing::warn!(
            "serve werewolf: {excess_connections} connections closed at once over the cap of \
             {SERVE_CONN_CAP} unseated connections"
        );
    }
    if let Some(dir) = &set.out_dir {
        kakehiki_core::private_files::create_dir_all(dir)?;
        let mut results = standings.to_json();
        if let Some(o) = results.as_object_mut() {
            o.insert(
                "excess_connections".into(),
                serde_json::json!(excess_connections),
            );
        }
        kakehiki_core::private_files::write(
            &dir.join("results.json"),
            serde_json::to_string_pretty(&results).unwrap_or_default(),
        )?;
        kakehiki_core::private_files::write(
            &dir.join("results_agents.csv"),
            standings.agents_csv(),
        )?;
        kakehiki_core::private_files::write(&dir.join("results_roles.csv"), standings.roles_csv())?;
    }
    Ok(SetResult {
        standings,
        games,
        errors: records.errors.len(),
        excess_connections,
    })
}
