//! Geister's TCP seats (spec §3.1, §3.8) on the seat layer's TCP transport: a port pair that
//! listens continuously ([`Table`]), and the transport of one seat ([`GeisterTcp`]), which waits
//! for its client's connection at its first request (`connect`) and frames lines as the contest
//! server does (LF ends a line, 256 bytes at most).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kakehiki_agent::ClientProcess;
use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_geister::wire::MAX_LINE;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::driver::BoxFuture;
use crate::seat::tcp::{wait_connection, Conn, ConnQueue, TcpSeat};
use crate::seat::{Ending, Received, Transport};

/// A port's queue, shared by the games played on it one after another.
pub type SharedQueue = Arc<Mutex<ConnQueue>>;

/// A table: one queue per seat (seat 0 on the first port, seat 1 on the second). Games run on it
/// one after another with [`super::play_on_table`]; clients reconnect for each game.
pub struct Table {
    pub(crate) queues: [SharedQueue; 2],
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

/// A connection the way Geister reads it: LF-framed lines, cut after 256 bytes and a CR.
pub fn conn(stream: tokio::net::TcpStream) -> Conn {
    Conn::start(stream, MAX_LINE + 1).lf_only()
}

/// One Geister TCP seat. Shared with `serve` when connections are kept between games.
pub struct GeisterTcp {
    pub(crate) seat: Arc<Mutex<TcpSeat>>,
    /// Until the client has connected: where its connection comes from.
    queue: Option<SharedQueue>,
    /// Connected before the game: the `connect` request is answered at once.
    greet: bool,
    /// Leave a live connection open at the end (spec §3.8: the next game uses it).
    keep: bool,
    linger: Duration,
}

impl GeisterTcp {
    /// A seat waiting for its client on `queue` (the client launched for it, if any).
    pub fn waiting(queue: SharedQueue, client: Option<ClientProcess>, linger: Duration) -> Self {
        GeisterTcp {
            seat: Arc::new(Mutex::new(TcpSeat {
                conn: None,
                client,
                why_not: "not connected".into(),
            })),
            queue: Some(queue),
            greet: false,
            keep: false,
            linger,
        }
    }

    /// A seat on a connection made before the game (or kept from the previous one); with
    /// `keep`, a connection still live at the end is left open.
    pub fn connected(seat: Arc<Mutex<TcpSeat>>, keep: bool, linger: Duration) -> Self {
        GeisterTcp {
            seat,
            queue: None,
            greet: true,
            keep,
            linger,
        }
    }
}

impl Transport for GeisterTcp {
    fn write<'a>(
        &'a mut self,
        bytes: &'a [u8],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), Received>> {
        Box::pin(async move { self.seat.lock().await.write(bytes, deadline).await })
    }

    fn read(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        Box::pin(async move {
            if std::mem::take(&mut self.greet) {
                let seat = self.seat.lock().await;
                return connected(seat.conn.as_ref().and_then(|c| c.peer));
            }
            let Some(queue) = self.queue.take() else {
                return self.seat.lock().await.read(deadline).await;
            };
            // The first request of a seat still waiting: its connection.
            let mut q = queue.lock().await;
            let mut seat = self.seat.lock().await;
            match wait_connection(&mut q, seat.client.as_mut(), deadline).await {
                Ok((stream, peer)) => {
                    seat.conn = Some(conn(stream));
                    connected(Some(peer))
                }
                Err(r) => {
                    seat.why_not = r.detail.clone().unwrap_or_default();
                    r
                }
            }
        })
    }

    fn failed(&self) -> Option<Received> {
        let seat = self.seat.try_lock().ok()?;
        match &seat.conn {
            None if self.queue.is_some() => None,
            _ => seat.failed(),
        }
    }

    fn kill(&mut self) {
        if let Ok(mut s) = self.seat.try_lock() {
            s.kill();
        }
    }

    fn finish(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Ending> {
        Box::pin(async move {
            let mut seat = self.seat.lock().await;
            let live = seat.conn.as_ref().is_some_and(|c| c.dead().is_none());
            if self.keep && live {
                return not_launched();
            }
            let until = Instant::now() + grace.max(self.linger);
            if let Some(c) = seat.conn.as_mut() {
                c.close(self.linger).await;
            }
            seat.conn = None;
            let Some(client) = seat.client.take() else {
                return not_launched();
            };
            // The client has until the linger's end to exit on its own.
            let oom = client.oom_killed();
            let wait = until.saturating_duration_since(Instant::now());
            let mut client = client;
            let _ = tokio::time::timeout(wait, async {
                while client.try_exit().is_none() {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
            .await;
            let (exit, mut stderr, out) =
                client.finish_with_output(Duration::from_millis(10)).await;
            if !out.is_empty() {
                stderr.push_str("\n[stdout]\n");
                stderr.push_str(&out);
            }
            let mut e = Ending::of(exit, stderr);
            if oom {
                e.exit.push_str(" (memory limit)");
            }
            e
        })
    }
}

/// The answer to a seat's `connect` request: the peer it connected from (empty if unknown).
fn connected(peer: Option<SocketAddr>) -> Received {
    let peer = peer.map(|p| p.to_string()).unwrap_or_default();
    Received {
        outcome: ExchangeOutcome::Reply,
        bytes: peer.into_bytes(),
        truncated: false,
        at: Instant::now(),
        detail: None,
    }
}

fn not_launched() -> Ending {
    Ending {
        exit: "a client the referee did not start (no exit code)".into(),
        ..Ending::default()
    }
}
