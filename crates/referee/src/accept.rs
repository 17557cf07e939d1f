//! A listener with a cap on the connections it holds: the one piece every TCP and WebSocket
//! listener of the referee (seat ports, `serve` listeners) accepts through.
//!
//! A [`CappedAcceptor`] accepts in a background task. Each accepted connection takes one of
//! `cap` slots and is handed out as an [`Accepted`]; the slot is free again when the
//! [`Accepted`] (or the [`Slot`] split from it) is dropped. A connection that arrives while every
//! slot is taken is accepted and closed at once, so it holds no descriptor, and counted
//! ([`CappedAcceptor::excess`]); the first such connection and every power of two after it is
//! logged (`tracing` warn) with the listener's label and the cap.
//!
//! What holds a slot is the caller's choice: a seat port's queue frees it when the game takes the
//! connection (the seat then bounds it), a `serve` listener keeps it while the connection waits
//! for its first message and for a game.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// Connections a seat port holds waiting for a game (geister, diplomacy, and the lead's
/// per-seat listeners): one is the seat's, the rest are a client reconnecting or a spare.
pub const SEAT_CONN_CAP: usize = 16;

/// Connections a `serve` listener holds before they are seated (waiting for the handshake,
/// NAME, or a game): `serve werewolf` and `serve werewolf --protocol nlp`.
pub const SERVE_CONN_CAP: usize = 64;

/// A slot of a [`CappedAcceptor`]: free again when dropped.
#[derive(Debug)]
pub struct Slot(#[allow(dead_code)] OwnedSemaphorePermit);

/// One accepted connection and the slot it holds.
#[derive(Debug)]
pub struct Accepted {
    pub stream: TcpStream,
    pub peer: SocketAddr,
    pub slot: Slot,
}

impl Accepted {
    /// The stream and peer, freeing the slot (the caller bounds the connection from now on).
    pub fn release(self) -> (TcpStream, SocketAddr) {
        (self.stream, self.peer)
    }
}

/// A listener that holds at most `cap` connections and closes the excess at once.
pub struct CappedAcceptor {
    addr: SocketAddr,
    cap: usize,
    rx: mpsc::UnboundedReceiver<Accepted>,
    excess: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Drop for CappedAcceptor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CappedAcceptor {
    /// Accept on `listener`, holding at most `cap` (at least 1) connections. `label` names the
    /// listener in the log (`geister seat 0`, `serve werewolf`, ...). Must run in a Tokio runtime.
    pub fn new(
        listener: TcpListener,
        cap: usize,
        label: impl Into<String>,
    ) -> io::Result<CappedAcceptor> {
        let addr = listener.local_addr()?;
        let cap = cap.max(1);
        let label = label.into();
        let slots = Arc::new(Semaphore::new(cap));
        let excess = Arc::new(AtomicU64::new(0));
        // Unbounded in type only: every queued connection holds one of `cap` slots.
        let (tx, rx) = mpsc::unbounded_channel();
        let counter = excess.clone();
        let task = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, peer)) => match slots.clone().try_acquire_owned() {
                        Ok(permit) => {
                            let a = Accepted {
                                stream,
                                peer,
                                slot: Slot(permit),
                            };
                            if tx.send(a).is_err() {
                                return;
                            }
                        }
                        Err(_) => {
                            drop(stream);
                            let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
                            if n.is_power_of_two() {
                                tracing::warn!(
                                    "{label} ({addr}): connection from {peer} closed at once: \
                                     {cap} connections already held (the cap); {n} closed so far"
                                );
                            }
                        }
                    },
                    // Out of descriptors and similar: back off instead of spinning.
                    Err(e) => {
                        tracing::warn!("{label} ({addr}): accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
        });
        Ok(CappedAcceptor {
            addr,
            cap,
            rx,
            excess,
            task,
        })
    }

    /// The same on a standard listener (one created elsewhere, e.g. inside a bot's network
    /// namespace); it is switched to non-blocking mode.
    pub fn from_std(
        listener: std::net::TcpListener,
        cap: usize,
        label: impl Into<String>,
    ) -> io::Result<CappedAcceptor> {
        listener.set_nonblocking(true)?;
        CappedAcceptor::new(TcpListener::from_std(listener)?, cap, label)
    }

    /// The next accepted connection, in arrival order. `None` only if the accept task ended.
    /// Cancel-safe.
    pub async fn next(&mut self) -> Option<Accepted> {
        self.rx.recv().await
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Connections closed at once because the cap was reached, so far.
    pub fn excess(&self) -> u64 {
        self.excess.load(Ordering::Relaxed)
    }

    /// A handle on the excess count that outlives the acceptor's borrow.
    pub fn excess_counter(&self) -> Arc<AtomicU64> {
        self.excess.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn holds_at_most_cap_and_closes_the_rest_at_once() {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut acc = CappedAcceptor::new(l, 3, "test").unwrap();
        let addr = acc.local_addr();
        let mut clients = Vec::new();
        for _ in 0..10 {
            clients.push(TcpStream::connect(addr).await.unwrap());
        }
        // The excess ones see EOF at once: the acceptor closed them.
        let mut closed = 0;
        for c in clients.iter_mut() {
            let mut b = [0u8; 1];
            if let Ok(Ok(0)) =
                tokio::time::timeout(Duration::from_millis(500), c.read(&mut b)).await
            {
                closed += 1;
            }
        }
        assert_eq!(closed, 7);
        assert_eq!(acc.excess(), 7);
        let a = acc.next().await.unwrap();
        let b = acc.next().await.unwrap();
        // Freeing a slot admits the next connection.
        drop(a);
        let (_s, _) = b.release();
        let _late = TcpStream::connect(addr).await.unwrap();
        let _late2 = TcpStream::connect(addr).await.unwrap();
        let _late3 = TcpStream::connect(addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(acc.excess(), 8, "two slots freed, three arrived");
        assert!(acc.next().await.is_some());
        assert!(acc.next().await.is_some());
        assert!(acc.next().await.is_some());
    }
}
