//! Seating TCP agents (§4.2) and running game sets (§8.1): `kakehiki serve werewolf`. Both put
//! the agents' connections on the seat layer ([`crate::seat::tcp`]) and play on one [`Table`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use kakehiki_core::replay::ReplayLog;
use kakehiki_core::SeatSpec;
use kakehiki_werewolf::bots::builtin;
use kakehiki_werewolf::contest::{GameResult, SeatCounts, Standings};
use kakehiki_werewolf::rng::{run_table_stream, shuffle, RunSeeds};
use kakehiki_werewolf::wire::{decode_line, name_packet};
use kakehiki_werewolf::RuleSet;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{game_header, run_game, write_game_log, Config, Counts, Records, Roster};
use crate::accept::{Accepted, CappedAcceptor, Slot, SERVE_CONN_CAP};
use crate::driver::{MatchSpec, RefereeError};
use crate::seat::tcp::{self, Conn, ConnQueue, TcpSeat, MAX_LINE};
use crate::seat::{read_watched, timeout_words, Seat, SeatClock, Table, Watch};
use kakehiki_core::exchange::ExchangeOutcome;

/// Send NAME on a fresh connection and read the agent's name (§4.2); an empty name is
/// `unnamed-K`, K counting connections. `Err` explains why no agent was seated.
pub async fn name_connection(conn: &mut Conn, limit: Duration, k: u64) -> Result<String, String> {
    name_watched(conn, limit, k, None).await
}

/// [`name_connection`], given up sooner under `check`'s rule when the agent waits for input
/// instead of answering ([`crate::seat::SeatClock::stop_when_waiting`]).
async fn name_watched(
    conn: &mut Conn,
    limit: Duration,
    k: u64,
    watch: Option<Watch>,
) -> Result<String, String> {
    let deadline = Instant::now() + limit;
    if let Err(r) = conn.write_by(name_packet().into_bytes(), deadline).await {
        return Err(format!(
            "NAME not delivered: {}",
            r.detail.unwrap_or_default()
        ));
    }
    let r = read_watched(conn, deadline, watch).await;
    name_of(r, limit, k)
}

/// Send NAME to a seat not on a connection (a person's) and read the name.
async fn name_transport(
    t: &mut dyn crate::seat::Transport,
    limit: Duration,
    k: u64,
) -> Result<String, String> {
    let deadline = Instant::now() + limit;
    if let Err(r) = t.write(name_packet().as_bytes(), deadline).await {
        return Err(format!(
            "NAME not delivered: {}",
            r.detail.unwrap_or_default()
        ));
    }
    name_of(t.read(deadline).await, limit, k)
}

/// The name in the reply to NAME, or why there is none.
fn name_of(r: crate::seat::Received, limit: Duration, k: u64) -> Result<String, String> {
    match r.outcome {
        ExchangeOutcome::Reply => {
            let name = decode_line(&r.bytes);
            let name = kakehiki_werewolf::talk::trim_reply(&name);
            Ok(if name.is_empty() {
                format!("unnamed-{k}")
            } else {
                name.to_string()
            })
        }
        ExchangeOutcome::Timeout => {
            let (within, hint) =
                timeout_words(limit.as_millis(), &r.bytes, r.detail.as_deref(), false);
            Err(format!("no NAME reply {within}{hint}"))
        }
        _ => Err(format!(
            "disconnected before NAME: {}",
            r.detail.unwrap_or_default()
        )),
    }
}

/// Wait for the next connection on `queue` (watching the launched `client`, which is seen
/// within a second if it exits first) and read its NAME: the seat, or why there is none.
async fn seat_one(
    queue: &mut ConnQueue,
    mut client: Option<kakehiki_agent::ClientProcess>,
    cfg: &Config,
    k: u64,
    clock: Option<&SeatClock>,
) -> (Seat, Result<String, String>) {
    let deadline = Instant::now() + cfg.connect_timeout;
    let named = match tcp::wait_connection(queue, client.as_mut(), deadline).await {
        Ok((stream, peer)) => {
            let mut conn = Conn::start(stream, MAX_LINE);
            conn.peer = Some(peer);
            let watch = Watch::of(clock, client.as_ref().map(|c| c.pgid()), Some(peer));
            name_watched(&mut conn, cfg.name_timeout, k, watch)
                .await
                .map(|name| (conn, name))
        }
        Err(r) => Err(r.detail.unwrap_or_default()),
    };
    match named {
        Ok((conn, name)) => (
            Seat::Live(Box::new(TcpSeat::connected(conn, client))),
            Ok(name),
        ),
        Err(why) => {
            // A client that gave up (it closed its connection) is usually exiting: a moment to
            // do so, so that its contestant sees its own exit status and not the SIGKILL that
            // stops a forfeited seat.
            if let Some(c) = client.as_mut() {
                c.exit_within(Duration::from_millis(300)).await;
            }
            let seat = TcpSeat {
                conn: None,
                client,
                why_not: why.clone(),
            };
            (Seat::Live(Box::new(seat)), Err(why))
        }
    }
}

/// The seats of a single match: built-in agents, `tcp-cmd:` clients (each launched with a
/// network of its own whose loopback holds only its seat's listener, on the AIWolf port: the
/// connection arriving there is its seat, and it can open no other), `tcp` agents in order of
/// connection on the shared listener. Also the seats that got no agent, and why: they play
/// silent; the game still runs.
pub async fn seat_match(
    spec: &MatchSpec,
    cfg: &Config,
) -> Result<(Vec<Seat>, Roster, Vec<(usize, String)>), RefereeError> {
    // Agents that connect on their own must know the port: AIWolf's 10000 unless one is given.
    let want = match cfg.port {
        0 => 10000,
        p => p,
    };
    let mut shared = match spec.seats.iter().any(|s| matches!(s, SeatSpec::Tcp)) {
        true => Some(ConnQueue::bind(&cfg.host, want).await?),
        false => None,
    };
    if let Some(q) = &shared {
        for (i, s) in spec.seats.iter().enumerate() {
            if matches!(s, SeatSpec::Tcp) {
                spec.on_listen.notify(i, q.local_addr());
            }
        }
    }
    let specs = spec.seats.iter().map(ToString::to_string).collect();
    let mut roster = Roster::new(specs, vec![String::new(); spec.seats.len()], cfg);
    let (mut seats, mut unseated) = (Vec::new(), Vec::new());
    for (i, s) in spec.seats.iter().enumerate() {
        let k = i as u64 + 1;
        let (seat, name) = match s {
            SeatSpec::Builtin(name) => {
                if name != crate::seat::SILENT_BOT {
                    roster.bots[i] = Some(builtin(name, spec.seed, i + 1).ok_or_else(|| {
                        RefereeError::UnknownBot {
                            game: "werewolf".into(),
                            seat: i,
                            name: name.clone(),
                            expected: format!("{}, {}", super::builtin_names(), crate::seat::SILENT_BOT),
                        }
                    })?);
                }
                (Seat::builtin(name), Ok(name.clone()))
            }
            SeatSpec::TcpCmd(argv) => {
                let label = format!("seat {i}'s port");
                let argv_for = |addr| tcp::client_argv(argv, addr);
                match tcp::launch(argv_for, &spec.sandbox.for_seat(i), want, &label) {
                    Err(e) if e.is_host_fault() => {
                        return Err(RefereeError::HostFault {
                            seat: i,
                            reason: e.to_string(),
                        })
                    }
                    Err(e) => {
                        let why = format!("cannot start the agent: {e}");
                        (Seat::NotStarted(why.clone()), Err(why))
                    }
                    Ok((client, mut queue)) => seat_one(&mut queue, Some(client), cfg, k, Some(&spec.clock)).await,
                }
            }
            SeatSpec::Tcp => match shared.as_mut() {
                Some(q) => seat_one(q, None, cfg, k, Some(&spec.clock)).await,
                None => unreachable!("a listener exists whenever a tcp seat does"),
            },
            SeatSpec::Daide(_) => return Err(crate::driver::daide_unsupported("werewolf", i)),
            SeatSpec::Human => {
                let mut person = crate::seat::human::transport(spec, i, None)?;
                let name = name_transport(&mut person, cfg.name_timeout, k).await;
                (Seat::Live(Box::new(person)), name)
            }
            SeatSpec::Cmd(_) => {
                return Err(RefereeError::UnsupportedSeat {
                    game: "werewolf".into(),
                    seat: i,
                    form: "cmd:".into(),
                    reason: "AIWolf agents connect over TCP: use tcp-cmd:<command line with {host} and {port}> or tcp"
                        .into(),
                })
            }
        };
        roster.ledger.names[i] = name.unwrap_or_else(|why| {
            unseated.push((i, why));
            format!("seat{i}")
        });
        seats.push(seat);
    }
    Ok((seats, roster, unseated))
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
    let (tx, mut rx) = mpsc::channel::<(Conn, String, Slot)>(64);
    let acceptor = tokio::spawn(async move {
        let mut counter = 0u64;
        while let Some(a) = accepted.next().await {
            counter += 1;
            let Accepted { stream, peer, slot } = a;
            let mut conn = Conn::start(stream, MAX_LINE);
            conn.peer = Some(peer);
            let tx = tx.clone();
            tokio::spawn(async move {
                match name_connection(&mut conn, limit, counter).await {
                    Ok(name) => {
                        let _ = tx.send((conn, name, slot)).await;
                    }
                    Err(why) => {
                        tracing::warn!("serve werewolf: connection from {peer} dropped: {why}")
                    }
                }
            });
        }
    });
    let mut conns: Vec<(Conn, String)> = Vec::new();
    let deadline = cfg.fill_timeout.map(|d| tokio::time::Instant::now() + d);
    while conns.len() < set.players {
        let next = match deadline {
            Some(d) => match tokio::time::timeout_at(d, rx.recv()).await {
                Ok(n) => n,
                Err(_) => {
                    acceptor.abort();
                    let names: Vec<&str> = conns.iter().map(|(_, n)| n.as_str()).collect();
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
            Some((c, name, _slot)) => {
                tracing::info!(
                    "serve werewolf: {name} seated ({} of {})",
                    conns.len() + 1,
                    set.players
                );
                conns.push((c, name))
            }
            None => break,
        }
    }
    // Agent numbers: configured by name, else a seeded permutation of the arrival order.
    let mut order: Vec<usize> = (0..conns.len()).collect();
    shuffle(&mut run_table_stream(set.run_seed), &mut order);
    let mut slots: Vec<Option<(Conn, String)>> = (0..set.players).map(|_| None).collect();
    let mut rest = Vec::new();
    let mut conns: Vec<Option<(Conn, String)>> = conns.into_iter().map(Some).collect();
    for (i, c) in conns.iter_mut().enumerate() {
        if let Some(&num) = c.as_ref().and_then(|(_, name)| set.numbers.get(name)) {
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
    let mut roster = Roster::new(
        vec!["tcp".into(); set.players],
        vec![String::new(); set.players],
        &cfg,
    );
    let mut seats = Vec::new();
    for (i, c) in slots.into_iter().enumerate() {
        seats.push(match c {
            Some((c, name)) => {
                roster.ledger.names[i] = name;
                Seat::Live(Box::new(TcpSeat::connected(c, None)))
            }
            None => {
                roster.ledger.names[i] = format!("seat{}", i + 1);
                Seat::NotStarted("no agent took the seat".into())
            }
        });
    }
    let rules = cfg.settings.rule_set.name();
    let mut table = Table::new(seats, game_header(rules, 0, &roster, &set.options));
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
        while let Ok((c, name, _slot)) = rx.try_recv() {
            let seat = (0..set.players)
                .find(|&i| table.down(i).is_some() && roster.ledger.names[i] == name);
            if let Some(i) = seat {
                table.reseat(i, Seat::Live(Box::new(TcpSeat::connected(c, None))));
            } else {
                tracing::warn!(
                    "serve werewolf: connection from {} named {:?} dropped: the set is full and \
                     no disconnected seat has that name",
                    c.peer.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                    name
                );
            }
        }
        let before: Vec<Counts> = roster.ledger.counts.clone();
        let seed = seeds.next().unwrap_or(u64::from(game));
        *table.log() = game_header(rules, seed, &roster, &replay_opts);
        let out = run_game(game, seed, &cfg, &mut table, &mut roster).await?;
        if let Some(dir) = &set.out_dir {
            write_game_log(dir, &format!("{game:03}.log"), &out)?;
            let replay = std::mem::take(table.log());
            kakehiki_core::private_files::write(
                &dir.join(format!("{game:03}.replay.jsonl")),
                replay.to_text(),
            )?;
        }
        records.flush(&roster.ledger)?;
        let result = GameResult {
            names: roster.ledger.names.clone(),
            roles: out.roles.clone(),
            winner: out.winner,
            counts: before
                .iter()
                .zip(&roster.ledger.counts)
                .map(|(b, a)| counts_delta(*b, *a))
                .collect(),
        };
        standings.add(&result);
        games.push(result);
    }
    acceptor.abort();
    *table.log() = ReplayLog::new();
    table.finish(super::WEREWOLF_LIFE.end_grace(&cfg)).await;
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
        errors: roster.ledger.errors.len(),
        excess_connections,
    })
}
