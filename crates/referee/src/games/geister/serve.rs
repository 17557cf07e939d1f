//! A standing Geister table (`kakehiki serve geister`, spec §3.8): it keeps listening on its
//! port pair and plays game after game with whatever clients connect, as the contest server
//! does; optionally several games on one connection.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use kakehiki_geister::Rules;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::{add_excess_counts, conn, run_game, GameSetup, Players, GEISTER_LIFE};
use crate::driver::{MatchRecord, RefereeError};
use crate::seat::tcp::{ConnQueue, SharedQueue, SharedTcpSeat, TcpSeat};
use crate::seat::Seat;

/// A table: one queue per seat (seat 0 on the first port, seat 1 on the second). Games run on it
/// one after another ([`serve`], [`play_on_table`]); clients reconnect for each game.
pub struct Table {
    queues: [SharedQueue; 2],
    addrs: [SocketAddr; 2],
}

impl Table {
    /// Listen on `host:ports[0]` and `host:ports[1]` (0: free ports).
    pub async fn bind(host: &str, ports: [u16; 2]) -> io::Result<Table> {
        let q0 = ConnQueue::bind(host, ports[0]).await?;
        let q1 = ConnQueue::bind(host, ports[1]).await?;
        Ok(Table {
            addrs: [q0.local_addr(), q1.local_addr()],
            queues: [Arc::new(Mutex::new(q0)), Arc::new(Mutex::new(q1))],
        })
    }

    /// The bound addresses of seat 0 and seat 1.
    pub fn local_addrs(&self) -> [SocketAddr; 2] {
        self.addrs
    }
}

/// Play one game on a table whose two seats are TCP clients connecting to its ports (they may
/// reconnect for every game). The error is the runtime's shutting down.
pub async fn play_on_table(
    table: &mut Table,
    rules: Rules,
    seed: u64,
) -> Result<MatchRecord, RefereeError> {
    let linger = GEISTER_LIFE.end_grace(&rules);
    let seats = table
        .queues
        .iter()
        .map(|q| Seat::Live(Box::new(SharedTcpSeat::waiting(q.clone(), None, conn, linger)) as _))
        .collect();
    let setup = GameSetup {
        rules,
        seed,
        specs: ["tcp".into(), "tcp".into()],
        log_dir: None,
        clock: None,
        live: None,
    };
    let players = Players {
        seats,
        transports: ["tcp"; 2],
        bots: [None, None],
    };
    run_game(&setup, players).await
}

/// A client's connection between games: accepted and not yet in a game, or kept open after a
/// game for the next one (spec §3.8's several-games-per-connection extension).
type Kept = Arc<Mutex<TcpSeat>>;

fn kept(stream: tokio::net::TcpStream) -> Kept {
    Arc::new(Mutex::new(TcpSeat::connected(conn(stream), None)))
}

/// Resolves when the client has closed its kept connection (with nothing unread before).
async fn left(c: &Kept) {
    let mut s = c.lock().await;
    if let Some(conn) = s.conn.as_mut() {
        conn.closed_by_client().await
    }
}

fn live(c: &Kept) -> bool {
    c.try_lock()
        .is_ok_and(|s| s.conn.as_ref().is_some_and(|c| c.dead().is_none()))
}

async fn close(c: Kept, linger: Duration) {
    if let Some(conn) = c.lock().await.conn.as_mut() {
        conn.close(linger).await;
    }
}

/// How a table serves.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub rules: Rules,
    /// Game `k` (from 1) gets the seed `seed + k` (the game itself has no chance; the seed is
    /// recorded).
    pub seed: u64,
    /// Stop after this many games; `None`: serve until stopped.
    pub games: Option<u64>,
    /// Spec §3.8's extension: a connection stays open after its end message and plays the
    /// next game too, the two clients swapping seats from game to game. Otherwise each game
    /// takes a fresh connection on each port (the contest server's way).
    pub keep_connections: bool,
    /// Where to write each game's compatible log (§4.1), if anywhere.
    pub log_dir: Option<PathBuf>,
}

/// How long a kept connection is watched before the next game for the client closing it (a
/// client that played its last game and left is not assigned a game it never wanted).
const LEFT_GRACE: Duration = Duration::from_millis(250);

/// Serve games on `table` until `cfg.games` are played (or forever); `on_game` gets each
/// game's number (from 1) and record as soon as it ends. A game starts when both seats have a
/// connection, so an empty table waits without forfeiting anyone. Returns the games played.
pub async fn serve(
    table: &mut Table,
    cfg: &ServeConfig,
    mut on_game: impl FnMut(u64, &MatchRecord),
) -> u64 {
    let mut kept: [Option<Kept>; 2] = [None, None];
    let mut played = 0u64;
    let linger = GEISTER_LIFE.end_grace(&cfg.rules);
    while cfg.games.is_none_or(|n| played < n) {
        // A kept connection whose client has left since its end message is dropped.
        if kept.iter().any(Option::is_some) {
            tokio::time::sleep(LEFT_GRACE).await;
        }
        for slot in kept.iter_mut() {
            if slot
                .as_ref()
                .is_some_and(|c| left(c).now_or_never().is_some())
            {
                *slot = None;
            }
        }
        let mut conns: [Option<Kept>; 2] = [kept[0].take(), kept[1].take()];
        if !fill_seats(table, &mut conns, cfg).await {
            return played;
        }
        let [Some(c0), Some(c1)] = conns else {
            return played;
        };
        played += 1;
        let setup = GameSetup {
            rules: cfg.rules.clone(),
            seed: cfg.seed.wrapping_add(played),
            specs: ["tcp".into(), "tcp".into()],
            log_dir: cfg.log_dir.clone(),
            clock: None,
            live: None,
        };
        let excess = || async {
            let mut e = [(0, 0); 2];
            for (e, q) in e.iter_mut().zip(&table.queues) {
                let q = q.lock().await;
                *e = (q.excess(), q.cap());
            }
            e
        };
        let before = excess().await;
        let seat = |c: &Kept| {
            let t = SharedTcpSeat::connected(c.clone(), cfg.keep_connections, linger);
            Seat::Live(Box::new(t))
        };
        let players = Players {
            seats: vec![seat(&c0), seat(&c1)],
            transports: ["tcp"; 2],
            bots: [None, None],
        };
        let Ok(mut record) = run_game(&setup, players).await else {
            // The runtime is shutting down: this game was not played.
            return played - 1;
        };
        // Connections closed at once on a port while this game ran count against its seat.
        let after = excess().await;
        let counts = [0, 1].map(|s| (after[s].0 - before[s].0, after[s].1));
        add_excess_counts(&mut record, counts);
        on_game(played, &record);
        // Swap seats: each client plays the other side in the next game.
        if cfg.keep_connections {
            kept = [Some(c1).filter(live), Some(c0).filter(live)];
        }
    }
    // Served the games asked for: close what is still open as after a single game.
    for c in kept.into_iter().flatten() {
        close(c, linger).await;
    }
    played
}

/// Fill the free seats of `conns`; `false` when a port stopped accepting. An empty table waits
/// (until stopped) for a client on either port, which takes that port's seat. Once one seat is
/// held, the other must be taken within `connect_timeout_ms`: otherwise the held connection is
/// closed (with a warning naming it) and the table is empty again, so no client waits without
/// bound. With `keep_connections` a held seat's client may be on either port (seats swap from
/// game to game), so a newcomer on either port takes the free seat; without it, each seat is
/// taken from its own port's queue (the contest server's way).
async fn fill_seats(table: &mut Table, conns: &mut [Option<Kept>; 2], cfg: &ServeConfig) -> bool {
    let wait_ms = cfg.rules.connect_timeout_ms;
    let [q0, q1] = &table.queues;
    let (mut q0, mut q1) = (q0.lock().await, q1.lock().await);
    loop {
        let held = match conns {
            [Some(_), Some(_)] => return true,
            [Some(_), None] => 0,
            [None, Some(_)] => 1,
            [None, None] => {
                let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
                let (seat, got) = tokio::select! {
                    c = q0.next(far) => (0, c),
                    c = q1.next(far) => (1, c),
                };
                let Some((stream, _)) = got else {
                    return false;
                };
                conns[seat] = Some(kept(stream));
                continue;
            }
        };
        let free = 1 - held;
        let deadline = Instant::now() + Duration::from_millis(wait_ms);
        let far = deadline + Duration::from_secs(365 * 24 * 3600);
        enum Woke {
            Conn(Option<(tokio::net::TcpStream, std::net::SocketAddr)>),
            Left,
            Timeout,
        }
        let (own, other) = if free == 0 {
            (&mut *q0, &mut *q1)
        } else {
            (&mut *q1, &mut *q0)
        };
        let Some(waiting) = conns[held].clone() else {
            continue;
        };
        let woke = tokio::select! {
            c = own.next(far) => Woke::Conn(c),
            c = async {
                if cfg.keep_connections {
                    other.next(far).await
                } else {
                    std::future::pending().await
                }
            } => Woke::Conn(c),
            _ = left(&waiting) => Woke::Left,
            _ = tokio::time::sleep_until(deadline) => Woke::Timeout,
        };
        match woke {
            Woke::Conn(Some((stream, _))) => conns[free] = Some(kept(stream)),
            Woke::Conn(None) => return false,
            Woke::Left => conns[held] = None,
            Woke::Timeout => {
                if let Some(c) = conns[held].take() {
                    let peer = c.lock().await.conn.as_ref().and_then(|c| c.peer);
                    let peer = peer.map(|p| p.to_string()).unwrap_or_default();
                    tracing::warn!(
                        "serve geister: no opponent within {wait_ms} ms (connect_timeout_ms) for {peer} in seat {held}: its connection is closed; the table waits for two new clients"
                    );
                    close(c, Duration::from_millis(200)).await;
                }
            }
        }
    }
}

/// The rules a table serves: a rule set (default `gpw`) changed by rule options
/// ([`kakehiki_geister::rules::RULE_KEYS`]); unknown keys and bad values are errors.
pub fn serve_rules(
    rules: Option<String>,
    options: std::collections::BTreeMap<String, String>,
) -> Result<Rules, crate::RefereeError> {
    let mut spec = crate::MatchSpec::new("geister", 0, Vec::new());
    spec.rules = rules;
    spec.options = options;
    spec.check_option_keys(kakehiki_geister::rules::RULE_KEYS)?;
    super::rules_from(&spec)
}

/// One line per served game: number, seed, the two clients, the result, the replay.
pub fn game_line(n: u64, record: &MatchRecord, path: &std::path::Path) -> String {
    let r = &record.report;
    let peers: Vec<String> = record
        .replay
        .to_text()
        .lines()
        .next()
        .and_then(|h| serde_json::from_str::<serde_json::Value>(h).ok())
        .and_then(|h| h["params"]["seats"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|s| s["peer"].as_str().unwrap_or("?").to_string())
        .collect();
    let peer = |i: usize| peers.get(i).cloned().unwrap_or_else(|| "?".into());
    let reason = r
        .extra
        .get("reason")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let plies = r.extra.get("plies").and_then(|v| v.as_u64()).unwrap_or(0);
    let result = match r.winner {
        Some(w) => format!("seat {w} won"),
        None if r.everyone_lost => "both lost".into(),
        None => "draw".into(),
    };
    let errors: Vec<String> = r
        .seats
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.errors
                .iter()
                .map(move |e| format!("seat {i} {}: {}", e.kind.as_str(), e.detail))
        })
        .collect();
    let mut line = format!(
        "game {n} seed {}: seat 0 {} vs seat 1 {}: {result} ({reason}, {plies} plies); replay {}",
        r.seed,
        peer(0),
        peer(1),
        path.display()
    );
    if !errors.is_empty() {
        line.push_str("; ");
        line.push_str(&errors.join("; "));
    }
    line
}
