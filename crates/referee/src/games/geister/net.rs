//! TCP tables (spec §3.1, §3.8): a port pair that listens continuously; each port keeps a FIFO
//! queue of connections, assigned one per game to the seat of that port.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use std::task::Poll;

use tokio::io::ReadBuf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The connections waiting on one port.
pub struct ConnQueue {
    addr: SocketAddr,
    rx: mpsc::UnboundedReceiver<(TcpStream, SocketAddr)>,
    task: JoinHandle<()>,
}

impl Drop for ConnQueue {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ConnQueue {
    /// Listen on `host:port` (port 0: a free port) and queue every accepted connection.
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
        let addr = listener.local_addr()?;
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, peer)) => {
                        if tx.send((stream, peer)).is_err() {
                            return;
                        }
                    }
                    // Out of descriptors and similar: back off instead of spinning.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        });
        Ok(ConnQueue { addr, rx, task })
    }

    /// The queue of a seat's own listener (a `tcp-cmd:` client's, from inside its network
    /// namespace): the first connection is queued and the listener closed at once, so the
    /// kernel refuses every later one and a client flooding its port holds no descriptor of
    /// the referee.
    pub fn single(listener: std::net::TcpListener, addr: SocketAddr) -> io::Result<ConnQueue> {
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok((stream, peer)) = listener.accept().await {
                // A connection its client already closed does not take the seat.
                if !closed_by_peer(&stream).await {
                    let _ = tx.send((stream, peer));
                    return;
                }
            }
        });
        Ok(ConnQueue { addr, rx, task })
    }

    /// A queue no connection ever comes to (a seat whose client could not be started).
    pub fn closed(addr: SocketAddr) -> ConnQueue {
        let (_, rx) = mpsc::unbounded_channel();
        ConnQueue {
            addr,
            rx,
            task: tokio::spawn(async {}),
        }
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The next queued connection that is still open, waiting until `deadline`. A queued
    /// connection whose client already closed it is dropped without penalty. Cancel-safe: the
    /// only suspension point is the queue's receive.
    pub async fn next(&mut self, deadline: Instant) -> Option<(TcpStream, SocketAddr)> {
        loop {
            let (stream, peer) = tokio::time::timeout_at(deadline, self.rx.recv())
                .await
                .ok()??;
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
