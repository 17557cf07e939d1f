//! TCP tables (spec §3.1, §3.8): a port pair that listens continuously; each port keeps a FIFO
//! queue of connections, assigned one per game to the seat of that port.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use std::task::Poll;

use tokio::io::ReadBuf;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use crate::accept::{CappedAcceptor, SEAT_CONN_CAP};

/// The connections waiting on one port: at most [`SEAT_CONN_CAP`] (see [`CappedAcceptor`]);
/// more are closed at once and counted ([`ConnQueue::excess`]).
pub struct ConnQueue {
    /// `None`: a seat whose client could not be started.
    acceptor: Option<CappedAcceptor>,
    addr: SocketAddr,
}

impl ConnQueue {
    /// Listen on `host:port` (port 0: a free port) and queue accepted connections, up to
    /// [`SEAT_CONN_CAP`] waiting.
    pub async fn bind(host: &str, port: u16) -> io::Result<ConnQueue> {
        // The previous game's listener on this port lives in its accept task until the runtime
        // drops that aborted task: give it a moment instead of failing the next game.
        let mut tries = 0;
        let listener = loop {
            match TcpListener::bind((host, port)).await {
                Err(e) if e.kind() == io::ErrorKind::AddrInUse && port != 0 && tries < 20 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                r => break r?,
            }
        };
        let label = format!("seat port {host}:{port}");
        Ok(ConnQueue::from_acceptor(CappedAcceptor::new(
            listener,
            SEAT_CONN_CAP,
            label,
        )?))
    }

    /// A queue on a listener made elsewhere (a seat's own listener), with its own cap.
    pub fn from_acceptor(acceptor: CappedAcceptor) -> ConnQueue {
        ConnQueue {
            addr: acceptor.local_addr(),
            acceptor: Some(acceptor),
        }
    }

    /// The queue of a seat's own listener (a `tcp-cmd:` client's, from inside its network
    /// namespace): one connection waits at a time; more are closed at once and counted
    /// ([`ConnQueue::excess`]), so a client flooding its own port holds no descriptor of the
    /// referee.
    pub fn single(listener: std::net::TcpListener, label: &str) -> io::Result<ConnQueue> {
        Ok(ConnQueue::from_acceptor(CappedAcceptor::from_std(
            listener, 1, label,
        )?))
    }

    /// A queue no connection ever comes to (a seat whose client could not be started).
    pub fn closed(addr: SocketAddr) -> ConnQueue {
        ConnQueue {
            acceptor: None,
            addr,
        }
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections closed at once because [`Self::cap`] were already waiting, so far.
    pub fn excess(&self) -> u64 {
        self.acceptor.as_ref().map_or(0, CappedAcceptor::excess)
    }

    /// How many connections may wait.
    pub fn cap(&self) -> usize {
        self.acceptor.as_ref().map_or(0, CappedAcceptor::cap)
    }

    /// The next queued connection that is still open, waiting until `deadline`. A queued
    /// connection whose client already closed it is dropped without penalty. Cancel-safe: the
    /// only suspension point is the queue's receive.
    pub async fn next(&mut self, deadline: Instant) -> Option<(TcpStream, SocketAddr)> {
        loop {
            let Some(acceptor) = self.acceptor.as_mut() else {
                tokio::time::sleep_until(deadline).await;
                return None;
            };
            let (stream, peer) = tokio::time::timeout_at(deadline, acceptor.next())
                .await
                .ok()??
                .release();
            if !closed_by_peer(&stream).await {
                return Some((stream, peer));
            }
        }
    }
}

/// Whether the peer has already closed (EOF pending with no data before it). Data the client
/// sent early stays in the socket. Never suspends, so [`ConnQueue::next`] stays cancel-safe.
pub(crate) async fn closed_by_peer(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 1];
    let mut rb = ReadBuf::new(&mut buf);
    let r = std::future::poll_fn(|cx| Poll::Ready(stream.poll_peek(cx, &mut rb))).await;
    matches!(r, Poll::Ready(Ok(0)) | Poll::Ready(Err(_)))
}

/// A table: one queue per seat (seat 0 on the first port, seat 1 on the second). Games run on it
/// one after another with [`super::play_on_table`]; clients reconnect for each game.
pub struct Table {
    pub(crate) queues: [ConnQueue; 2],
}

impl Table {
    /// Listen on `host:ports[0]` and `host:ports[1]` (0: free ports).
    pub async fn bind(host: &str, ports: [u16; 2]) -> io::Result<Table> {
        let q0 = ConnQueue::bind(host, ports[0]).await?;
        let q1 = ConnQueue::bind(host, ports[1]).await?;
        Ok(Table { queues: [q0, q1] })
    }

    /// The bound addresses of seat 0 and seat 1.
    pub fn local_addrs(&self) -> [SocketAddr; 2] {
        [self.queues[0].local_addr(), self.queues[1].local_addr()]
    }
}
