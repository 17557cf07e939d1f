//! A line connection over TCP (the Geister and AIWolf protocols), and the client process of a
//! `tcp-cmd:` seat: the seat layer's TCP transport.
//!
//! [`Conn`]: TCP_NODELAY; each message written with one write call straight from the game's
//! task when the socket takes it (a bounded queue drained by a writer task otherwise); one
//! persistent line reader, read by the game's task itself while it awaits a reply (`\n`, `\r\n`
//! or a lone `\r` end a line; lines capped). [`TcpSeat`] is a [`Conn`] (once the client has
//! connected) and the client's process, if the referee launched it: its exit code and stderr
//! are collected like a pipe bot's, and a client that exits before connecting is seen at once
//! ([`wait_connection`]), not when the connection limit runs out. [`SharedTcpSeat`] is a
//! [`TcpSeat`] on a port that serves game after game, its connection awaited at its first
//! request or made before the game, and possibly kept for the next game.

use std::collections::VecDeque;
use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use kakehiki_agent::{ClientProcess, NewStderr, SandboxConfig, SpawnError};
use kakehiki_core::exchange::ExchangeOutcome;
use tokio::io::{AsyncReadExt, ReadBuf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::client::{ending, exited, poll_step, take_stderr, with_exit};
use super::{by_deadline, Ending, Received, Transport};
use crate::accept::{CappedAcceptor, SEAT_CONN_CAP};
use crate::driver::BoxFuture;

/// The usual line cap (64 KiB) of the TCP protocols.
pub const MAX_LINE: usize = 64 * 1024;

/// Bytes that may wait in a connection's write queue; more counts as a disconnect.
pub const WRITE_QUEUE_CAP: usize = 1 << 20;

/// Complete lines kept unread; older ones are dropped beyond it (they are unsolicited anyway).
const PENDING_LINES_CAP: usize = 1024;

/// Bytes of complete lines kept unread (1 MiB); older lines are dropped beyond it, so a flood of
/// long lines holds at most this much (plus the one line being read, at most the line cap).
const PENDING_BYTES_CAP: usize = 1 << 20;

/// Reads of [`Conn::read_available`] per call (256 × 16 KiB = 4 MiB): a client writing as fast
/// as the referee reads cannot hold it there.
const READS_PER_DRAIN: usize = 256;

struct Outgoing {
    bytes: Vec<u8>,
    done: Option<oneshot::Sender<Instant>>,
}

/// How [`Conn::write`] handed bytes over.
enum Wrote {
    /// All taken by the socket at once.
    Now,
    /// Queued for the writer task; the receiver (if asked for) fires once they are written.
    Queued(Option<oneshot::Receiver<Instant>>),
}

/// When a tracked queued write completes (a receiver is always there when it was asked for).
async fn tracked(
    rx: Option<oneshot::Receiver<Instant>>,
) -> Result<Instant, oneshot::error::RecvError> {
    match rx {
        Some(rx) => rx.await,
        None => Ok(Instant::now()),
    }
}

/// A live line connection.
pub struct Conn {
    /// The remote address, where known (for log lines).
    pub peer: Option<std::net::SocketAddr>,
    rd: OwnedReadHalf,
    split: LineSplitter,
    buf: Vec<u8>,
    /// Complete lines read and not yet consumed: bytes, cut at the cap, arrival time.
    lines: VecDeque<(Vec<u8>, bool, Instant)>,
    /// Bytes in `lines`.
    pending_bytes: usize,
    /// Why reading ended (EOF or error), once it has.
    closed: Option<(String, bool)>,
    wr: Arc<OwnedWriteHalf>,
    writer: mpsc::UnboundedSender<Outgoing>,
    queued: Arc<AtomicUsize>,
    write_failed: Arc<AtomicBool>,
    dead: Option<String>,
    writer_task: JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.writer_task.abort();
    }
}

/// Split bytes into lines the way the reference's reader does, with a length cap.
struct LineSplitter {
    cap: usize,
    cur: Vec<u8>,
    overlong: bool,
    skip_lf: bool,
    /// Only LF ends a line (a CR stays in it); see [`Conn::lf_only`].
    lf_only: bool,
}

impl LineSplitter {
    fn push(&mut self, chunk: &[u8], mut emit: impl FnMut(Vec<u8>, bool)) {
        for &b in chunk {
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    continue;
                }
            }
            if b == b'\n' || (b == b'\r' && !self.lf_only) {
                self.skip_lf = b == b'\r';
                emit(
                    std::mem::take(&mut self.cur),
                    std::mem::replace(&mut self.overlong, false),
                );
            } else if self.cur.len() < self.cap {
                self.cur.push(b);
            } else {
                self.overlong = true;
            }
        }
    }
}

impl Conn {
    /// Take over an accepted stream; lines longer than `line_cap` bytes are cut to it.
    pub fn start(stream: TcpStream, line_cap: usize) -> Conn {
        let peer = stream.peer_addr().ok();
        let _ = stream.set_nodelay(true);
        let (rd, wr) = stream.into_split();
        let wr = Arc::new(wr);
        let (writer, mut out_rx) = mpsc::unbounded_channel::<Outgoing>();
        let queued = Arc::new(AtomicUsize::new(0));
        let write_failed = Arc::new(AtomicBool::new(false));
        let (q, failed, w) = (queued.clone(), write_failed.clone(), wr.clone());
        let writer_task = tokio::spawn(async move {
            while let Some(o) = out_rx.recv().await {
                let mut off = 0;
                while off < o.bytes.len() {
                    if w.writable().await.is_err() {
                        failed.store(true, Ordering::SeqCst);
                        return;
                    }
                    match w.try_write(&o.bytes[off..]) {
                        Ok(n) => off += n,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(_) => {
                            failed.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                }
                q.fetch_sub(o.bytes.len(), Ordering::SeqCst);
                if let Some(done) = o.done {
                    let _ = done.send(Instant::now());
                }
            }
        });
        Conn {
            peer,
            rd,
            split: LineSplitter {
                cap: line_cap,
                cur: Vec::new(),
                overlong: false,
                skip_lf: false,
                lf_only: false,
            },
            buf: vec![0u8; 16 * 1024],
            lines: VecDeque::new(),
            pending_bytes: 0,
            closed: None,
            wr,
            writer,
            queued,
            write_failed,
            dead: None,
            writer_task,
        }
    }

    /// Frame lines as the Geister contest server does: only LF ends a line (a CR before it
    /// stays in the line for the game's codec to strip), and unterminated bytes at EOF are no
    /// line.
    pub fn lf_only(mut self) -> Conn {
        self.split.lf_only = true;
        self
    }

    /// End the connection politely: write what is queued, shut down the sending side (the
    /// client reads EOF after the last message), then read and discard until the client closes
    /// or `linger` passes, so that nothing it still sends turns the close into a reset.
    pub async fn close(&mut self, linger: Duration) {
        let until = Instant::now() + linger;
        self.flush(linger).await;
        {
            use std::os::fd::AsRawFd;
            let fd = self.rd.as_ref().as_raw_fd();
            let _ = nix::sys::socket::shutdown(fd, nix::sys::socket::Shutdown::Write);
        }
        while self.closed.is_none() {
            match tokio::time::timeout_at(until, self.rd.read(&mut self.buf)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => self.closed = Some(("closed by the referee".into(), false)),
            }
        }
        self.lines.clear();
        self.pending_bytes = 0;
    }

    /// Resolves when the client has closed the connection with no line unread before its EOF;
    /// never when it sent something (kept for the next read). Cancel-safe.
    pub async fn closed_by_client(&mut self) {
        loop {
            self.read_available();
            if !self.lines.is_empty() || (self.closed.is_none() && !self.split.cur.is_empty()) {
                return std::future::pending().await;
            }
            if self.closed.is_some() {
                return;
            }
            if self.rd.readable().await.is_err() {
                return;
            }
        }
    }

    /// Why the connection is unusable, if it is.
    pub fn dead(&self) -> Option<&str> {
        if self.dead.is_none() && self.write_failed.load(Ordering::SeqCst) {
            return Some("write error");
        }
        self.dead.as_deref()
    }

    /// Write `bytes`: at once if nothing is queued and the socket takes it all, else through the
    /// queue (with `track`, a receiver that fires when the queue has written them).
    fn write(&mut self, bytes: Vec<u8>, track: bool) -> Result<Wrote, String> {
        if let Some(d) = self.dead() {
            return Err(d.to_string());
        }
        let mut rest = bytes;
        if self.queued.load(Ordering::SeqCst) == 0 {
            match self.wr.try_write(&rest) {
                Ok(n) if n == rest.len() => return Ok(Wrote::Now),
                Ok(n) => {
                    rest.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => {
                    let why = format!("write error: {e}");
                    self.dead = Some(why.clone());
                    return Err(why);
                }
            }
        }
        let len = rest.len();
        if self.queued.load(Ordering::SeqCst) + len > WRITE_QUEUE_CAP {
            let why = format!("write queue over {WRITE_QUEUE_CAP} bytes: the agent does not read");
            self.dead = Some(why.clone());
            return Err(why);
        }
        self.queued.fetch_add(len, Ordering::SeqCst);
        let (done, written) = match track {
            true => {
                let (tx, rx) = oneshot::channel();
                (Some(tx), Some(rx))
            }
            false => (None, None),
        };
        if self.writer.send(Outgoing { bytes: rest, done }).is_err() {
            self.dead = Some("write error".into());
            return Err("write error".into());
        }
        Ok(Wrote::Queued(written))
    }

    fn take_bytes(&mut self, n: usize, at: Instant) {
        let Conn {
            split,
            buf,
            lines,
            pending_bytes,
            ..
        } = self;
        split.push(&buf[..n], |bytes, overlong| {
            *pending_bytes += bytes.len();
            lines.push_back((bytes, overlong, at));
            while lines.len() > PENDING_LINES_CAP
                || (*pending_bytes > PENDING_BYTES_CAP && lines.len() > 1)
            {
                if let Some((old, _, _)) = lines.pop_front() {
                    *pending_bytes -= old.len();
                }
            }
        });
    }

    fn pop_line(&mut self) -> Option<(Vec<u8>, bool, Instant)> {
        let l = self.lines.pop_front()?;
        self.pending_bytes -= l.0.len();
        Some(l)
    }

    fn on_eof(&mut self, reason: String, io_error: bool) {
        if self.split.lf_only {
            self.split.cur.clear();
        } else if !self.split.cur.is_empty() {
            let bytes = std::mem::take(&mut self.split.cur);
            let overlong = std::mem::replace(&mut self.split.overlong, false);
            self.pending_bytes += bytes.len();
            self.lines.push_back((bytes, overlong, Instant::now()));
        }
        self.closed = Some((reason, io_error));
    }

    /// Read whatever has arrived without waiting.
    fn read_available(&mut self) {
        for _ in 0..READS_PER_DRAIN {
            if self.closed.is_some() {
                return;
            }
            match self.rd.try_read(&mut self.buf) {
                Ok(0) => self.on_eof("connection closed by the client (EOF)".into(), false),
                Ok(n) => self.take_bytes(n, Instant::now()),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => self.on_eof(format!("read error: {e}"), true),
            }
        }
    }

    /// Write `bytes` and wait (until `deadline`) for the last byte to be handed to the socket.
    pub async fn write_by(&mut self, bytes: Vec<u8>, deadline: Instant) -> Result<(), Received> {
        match self.write(bytes, true) {
            Err(reason) => Err(Received::failure(ExchangeOutcome::Disconnect, reason)),
            Ok(Wrote::Now) => Ok(()),
            Ok(Wrote::Queued(rx)) => match tokio::time::timeout_at(deadline, tracked(rx)).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(_)) => {
                    self.dead = Some("write error".into());
                    Err(Received::failure(
                        ExchangeOutcome::Disconnect,
                        "write error",
                    ))
                }
                Err(_) => Err(Received::failure(
                    ExchangeOutcome::Timeout,
                    "the message could not be written in time (the client does not read)",
                )),
            },
        }
    }

    /// Queue `bytes` without waiting for them to be written; an error if the connection is
    /// (now) dead.
    pub fn send(&mut self, bytes: Vec<u8>) -> Result<(), String> {
        self.write(bytes, false).map(|_| ())
    }

    /// Acknowledge what has arrived at once (Linux's TCP_QUICKACK; elsewhere nothing): a client
    /// whose next write waits for that acknowledgement (Nagle's algorithm) sends it now.
    pub fn ack_now(&self) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let stream: &tokio::net::TcpStream = self.rd.as_ref();
            let _ = socket2::SockRef::from(stream).set_tcp_quickack(true);
        }
    }

    /// Lines that arrived while no reply was outstanding, taken out of the way.
    pub fn drain_unsolicited(&mut self) -> Vec<Vec<u8>> {
        self.read_available();
        self.pending_bytes = 0;
        let out = self.lines.drain(..).map(|(b, _, _)| b).collect();
        if let Some((r, _)) = &self.closed {
            self.dead.get_or_insert_with(|| r.clone());
        }
        out
    }

    /// The next line, waiting until `deadline`.
    pub async fn next_line(&mut self, deadline: Instant) -> Received {
        loop {
            if let Some((bytes, overlong, at)) = self.pop_line() {
                return Received {
                    outcome: ExchangeOutcome::Reply,
                    bytes,
                    truncated: overlong,
                    at,
                    detail: None,
                };
            }
            if let Some((reason, _)) = self.closed.clone() {
                self.dead = Some(reason.clone());
                return Received::failure(ExchangeOutcome::Disconnect, reason);
            }
            match by_deadline(deadline, self.rd.read(&mut self.buf)).await {
                None => {
                    return Received {
                        outcome: ExchangeOutcome::Timeout,
                        bytes: self.split.cur.clone(),
                        truncated: false,
                        at: deadline,
                        detail: None,
                    }
                }
                Some(Ok(0)) => self.on_eof("connection closed by the client (EOF)".into(), false),
                Some(Ok(n)) => self.take_bytes(n, Instant::now()),
                Some(Err(e)) => self.on_eof(format!("read error: {e}"), true),
            }
        }
    }

    /// Wait (bounded) until queued packets are written, e.g. before closing at the end of a run.
    pub async fn flush(&mut self, wait: Duration) {
        if self.queued.load(Ordering::SeqCst) == 0 {
            return;
        }
        if let Ok(Wrote::Queued(rx)) = self.write(Vec::new(), true) {
            let _ = tokio::time::timeout(wait, tracked(rx)).await;
        }
    }
}

impl super::ReadUnit for Conn {
    fn read_unit(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        Box::pin(self.next_line(deadline))
    }
}

/// A TCP seat: the client's connection once it is made, and the client's process when the
/// referee launched it (`tcp-cmd:`).
pub struct TcpSeat {
    pub conn: Option<Conn>,
    pub client: Option<ClientProcess>,
    /// Why the seat has no connection (set when `conn` is `None`).
    pub why_not: String,
}

impl TcpSeat {
    /// A seat on a connection.
    pub fn connected(conn: Conn, client: Option<ClientProcess>) -> Self {
        TcpSeat {
            conn: Some(conn),
            client,
            why_not: String::new(),
        }
    }

    /// The failure of a seat without a connection: the client's exit, if it has exited.
    fn no_conn(&mut self) -> Received {
        let exit = self.client.as_mut().and_then(ClientProcess::try_exit);
        match exit {
            Some(e) => Received::failure(ExchangeOutcome::Crash, format!("the client exited: {e}")),
            None => Received::failure(ExchangeOutcome::Disconnect, self.why_not.clone()),
        }
    }

    /// [`Transport::write_owned`] without its box (a [`SharedTcpSeat`] calls it in its own).
    async fn write_line(&mut self, bytes: Vec<u8>, deadline: Instant) -> Result<(), Received> {
        let Some(conn) = self.conn.as_mut() else {
            return Err(self.no_conn());
        };
        match conn.write_by(bytes, deadline).await {
            Err(r) => Err(with_exit(r, self.client.as_mut(), "client").await),
            Ok(()) => Ok(()),
        }
    }

    /// [`Transport::read`] without its box.
    async fn read_line(&mut self, deadline: Instant) -> Received {
        let Some(conn) = self.conn.as_mut() else {
            return self.no_conn();
        };
        let r = conn.next_line(deadline).await;
        with_exit(r, self.client.as_mut(), "client").await
    }
}

impl Transport for TcpSeat {
    fn write<'a>(
        &'a mut self,
        bytes: &'a [u8],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), Received>> {
        self.write_owned(bytes.to_vec(), deadline)
    }

    fn write_owned(
        &mut self,
        bytes: Vec<u8>,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<(), Received>> {
        Box::pin(self.write_line(bytes, deadline))
    }

    fn read(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        Box::pin(self.read_line(deadline))
    }

    fn take_unsolicited(&mut self) -> (Vec<Vec<u8>>, u64) {
        match self.conn.as_mut() {
            Some(c) => (c.drain_unsolicited(), 0),
            None => (Vec::new(), 0),
        }
    }

    fn ack_now(&mut self) {
        if let Some(c) = &self.conn {
            c.ack_now();
        }
    }

    fn pgid(&self) -> Option<i32> {
        self.client.as_ref().map(ClientProcess::pgid)
    }

    fn peer(&self) -> Option<SocketAddr> {
        self.conn.as_ref()?.peer
    }

    fn take_stderr(&mut self) -> NewStderr {
        take_stderr(self.client.as_ref())
    }

    fn failed(&self) -> Option<Received> {
        match &self.conn {
            Some(c) => c
                .dead()
                .map(|d| Received::failure(ExchangeOutcome::Disconnect, d.to_string())),
            None => Some(Received::failure(
                ExchangeOutcome::Disconnect,
                self.why_not.clone(),
            )),
        }
    }

    fn kill(&mut self) {
        self.conn = None;
        self.why_not = "stopped by the referee".into();
        if let Some(c) = self.client.as_mut() {
            c.kill();
        }
    }

    fn finish(mut self: Box<Self>, grace: Duration) -> BoxFuture<'static, Ending> {
        Box::pin(async move {
            if let Some(c) = self.conn.as_mut() {
                c.flush(grace).await;
            }
            drop(self.conn.take());
            ending(self.client.take(), grace, NOT_LAUNCHED).await
        })
    }
}

/// The exit recorded for a TCP seat whose client the referee did not start.
const NOT_LAUNCHED: &str = "a client the referee did not start (no exit code)";

/// A port's connection queue, shared by the games played on it one after another.
pub type SharedQueue = Arc<Mutex<ConnQueue>>;

/// How a seat takes over an accepted connection: its line cap and framing (for instance
/// `Conn::start(stream, cap).lf_only()`).
pub type Framing = fn(TcpStream) -> Conn;

/// A [`TcpSeat`] on a port that serves game after game (the contest servers' way): its
/// connection may be awaited from the port's [`SharedQueue`] at the seat's first request, or
/// made before the game, and may outlive the game. The seat's first request (the game's
/// `connect`) is answered with the address the client connected from (empty if unknown).
pub struct SharedTcpSeat {
    /// The seat, shared with whoever keeps its connection between games.
    pub seat: Arc<Mutex<TcpSeat>>,
    /// Until the client has connected: the queue its connection is awaited from, until the
    /// first request's deadline (watching a launched client's exit, see [`wait_connection`]),
    /// and how the accepted connection is read (its line cap and framing).
    queue: Option<(SharedQueue, Framing)>,
    /// Connected before the game: the first request is answered at once.
    greet: bool,
    /// Leave a connection still live at the end open (the next game uses it); otherwise it
    /// is closed politely ([`Conn::close`]).
    keep: bool,
    /// How long a closed connection is drained; a launched client has the longer of this and
    /// the table's grace to exit, and its stdout is appended to its stderr tail.
    linger: Duration,
}

impl SharedTcpSeat {
    /// A seat waiting for its client on `queue` (the client launched for it, if any);
    /// `framing` takes over the accepted connection.
    pub fn waiting(
        queue: SharedQueue,
        client: Option<ClientProcess>,
        framing: Framing,
        linger: Duration,
    ) -> Self {
        SharedTcpSeat {
            seat: Arc::new(Mutex::new(TcpSeat {
                conn: None,
                client,
                why_not: "not connected".into(),
            })),
            queue: Some((queue, framing)),
            greet: false,
            keep: false,
            linger,
        }
    }

    /// A seat on a connection made before the game (or kept from the previous one); with
    /// `keep`, a connection still live at the end is left open.
    pub fn connected(seat: Arc<Mutex<TcpSeat>>, keep: bool, linger: Duration) -> Self {
        SharedTcpSeat {
            seat,
            queue: None,
            greet: true,
            keep,
            linger,
        }
    }
}

impl Transport for SharedTcpSeat {
    fn write<'a>(
        &'a mut self,
        bytes: &'a [u8],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), Received>> {
        self.write_owned(bytes.to_vec(), deadline)
    }

    fn write_owned(
        &mut self,
        bytes: Vec<u8>,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<(), Received>> {
        Box::pin(async move { lock(&self.seat).await.write_line(bytes, deadline).await })
    }

    /// Cancel-safe, the wait for the connection included: a read dropped before it ends (a
    /// game awaiting this seat's connection and another seat's line at once, see
    /// [`super::Table::first`]) leaves the seat still waiting for its connection.
    fn read(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        Box::pin(async move {
            if self.greet {
                let seat = self.seat.lock().await;
                self.greet = false;
                return connected(seat.conn.as_ref().and_then(|c| c.peer));
            }
            let Some((queue, framing)) = self.queue.clone() else {
                return lock(&self.seat).await.read_line(deadline).await;
            };
            // The first request of a seat still waiting: its connection.
            let mut q = queue.lock().await;
            let mut seat = self.seat.lock().await;
            let r = wait_connection(&mut q, seat.client.as_mut(), deadline).await;
            self.queue = None;
            match r {
                Ok((stream, peer)) => {
                    seat.conn = Some(framing(stream));
                    connected(Some(peer))
                }
                Err(r) => {
                    seat.why_not = r.detail.clone().unwrap_or_default();
                    r
                }
            }
        })
    }

    fn pgid(&self) -> Option<i32> {
        self.seat.try_lock().ok()?.pgid()
    }

    fn peer(&self) -> Option<SocketAddr> {
        self.seat.try_lock().ok()?.peer()
    }

    fn take_stderr(&mut self) -> NewStderr {
        match self.seat.try_lock() {
            Ok(mut seat) => seat.take_stderr(),
            Err(_) => NewStderr::default(),
        }
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
            let not_launched = || Ending {
                exit: NOT_LAUNCHED.into(),
                ..Ending::default()
            };
            if self.keep && live {
                return not_launched();
            }
            let until = Instant::now() + grace.max(self.linger);
            if let Some(c) = seat.conn.as_mut() {
                c.close(self.linger).await;
            }
            seat.conn = None;
            let Some(mut client) = seat.client.take() else {
                return not_launched();
            };
            // The client has until the linger's end to exit on its own.
            let oom = client.oom_killed();
            client
                .exit_within(until.saturating_duration_since(Instant::now()))
                .await;
            let console = client.stderr_console();
            let (exit, mut stderr, out) =
                client.finish_with_output(Duration::from_millis(10)).await;
            if !out.is_empty() {
                stderr.push_str("\n[stdout]\n");
                stderr.push_str(&out);
            }
            let mut e = Ending::of(exit, stderr);
            e.stderr_rest = console.take_rest();
            if oom {
                e.exit.push_str(" (memory limit)");
            }
            e
        })
    }
}

/// The seat of a [`SharedTcpSeat`], at once when nobody else holds it (the usual case: the
/// table is its only user during a game).
async fn lock(seat: &Mutex<TcpSeat>) -> tokio::sync::MutexGuard<'_, TcpSeat> {
    match seat.try_lock() {
        Ok(guard) => guard,
        Err(_) => seat.lock().await,
    }
}

/// The answer to a [`SharedTcpSeat`]'s first request: the peer it connected from (empty if
/// unknown).
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

/// Replace `{host}` and `{port}` in a client's command line.
pub fn client_argv(argv: &[String], addr: SocketAddr) -> Vec<String> {
    argv.iter()
        .map(|a| {
            a.replace("{host}", &addr.ip().to_string())
                .replace("{port}", &addr.port().to_string())
        })
        .collect()
}

/// Launch the client of a `tcp-cmd:` seat under `sandbox` with its own listener on `port` (0:
/// the default seat port in its own network; a free port of the host without one), `argv_for`
/// turning the address into its command line. The queue holds one connection at a time.
pub fn launch(
    argv_for: impl FnOnce(SocketAddr) -> Vec<String>,
    sandbox: &SandboxConfig,
    port: u16,
    label: &str,
) -> Result<(ClientProcess, ConnQueue), SpawnError> {
    let (client, seat_port) = ClientProcess::spawn_seat(argv_for, sandbox, port)?;
    let mut queue = ConnQueue::single(seat_port.listener, label).map_err(SpawnError::Host)?;
    queue.told = Some(seat_port.addr);
    Ok((client, queue))
}

/// Wait until `deadline` for the next connection on `queue`, watching `client` (the seat's
/// launched process, if any): a client that exits first is reported within [`super::client::EXIT_POLL`] as a
/// crash with its exit code (its stderr comes with the seat's ending), not when the limit runs
/// out.
pub async fn wait_connection(
    queue: &mut ConnQueue,
    mut client: Option<&mut ClientProcess>,
    deadline: Instant,
) -> Result<(TcpStream, SocketAddr), Received> {
    let started = Instant::now();
    loop {
        let step = poll_step(client.as_deref(), deadline);
        if let Some(conn) = queue.next(step).await {
            return Ok(conn);
        }
        // Where the seat listened: a client that connects elsewhere (a port of its own, another
        // seat's) never reaches it, so the message names the address, how the client was told
        // it, and where it connected instead.
        let addr = queue.told.unwrap_or(queue.addr);
        let given = client
            .as_deref()
            .map(|c| super::client::missed_seat(c, addr, false))
            .unwrap_or_default();
        if let Some(e) = exited(client.as_deref_mut()) {
            return Err(Received::failure(
                ExchangeOutcome::Crash,
                format!(
                    "the client exited before connecting to {addr}, where this seat listened{given}: {e}"
                ),
            ));
        }
        if Instant::now() >= deadline {
            return Err(Received::failure(
                ExchangeOutcome::Timeout,
                format!(
                    "no connection within {} ms to {addr}, where this seat listened{given}",
                    deadline.saturating_duration_since(started).as_millis()
                ),
            ));
        }
    }
}

/// The connections waiting on one port: at most [`SEAT_CONN_CAP`] (see [`CappedAcceptor`]);
/// more are closed at once and counted ([`ConnQueue::excess`]).
pub struct ConnQueue {
    /// `None`: a seat whose client could not be started.
    acceptor: Option<CappedAcceptor>,
    addr: SocketAddr,
    /// The address a launched client was told to connect to (its `{host}` and `{port}`), which
    /// its messages name: the listener's own address may be the wildcard.
    told: Option<SocketAddr>,
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
            told: None,
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
            told: None,
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
pub async fn closed_by_peer(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 1];
    let mut rb = ReadBuf::new(&mut buf);
    let r = std::future::poll_fn(|cx| Poll::Ready(stream.poll_peek(cx, &mut rb))).await;
    matches!(r, Poll::Ready(Ok(0)) | Poll::Ready(Err(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn unread_lines_hold_at_most_a_mebibyte_and_a_drain_reads_at_most_four() {
        use tokio::io::AsyncWriteExt;
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (server, _) = l.accept().await.unwrap();
        let mut conn = Conn::start(server, MAX_LINE);
        // 8 MiB of unsolicited 60 KiB lines, written while the referee reads none of them.
        let mut line = vec![b'x'; 60 << 10];
        line.push(b'\n');
        let writer = tokio::spawn(async move {
            for _ in 0..140 {
                if client.write_all(&line).await.is_err() {
                    break;
                }
            }
            client
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        conn.read_available();
        let held: usize = conn.lines.iter().map(|(b, _, _)| b.len()).sum();
        assert!(held <= 1 << 20, "{held} bytes of unread lines");
        assert_eq!(held, conn.pending_bytes);
        assert!(!conn.lines.is_empty());
        let got = conn.drain_unsolicited();
        assert!(!got.is_empty());
        assert_eq!(conn.pending_bytes, 0);
        writer.abort();
    }

    #[test]
    fn splits_lines_like_the_reference_reader() {
        let mut s = LineSplitter {
            cap: MAX_LINE,
            cur: Vec::new(),
            overlong: false,
            skip_lf: false,
            lf_only: false,
        };
        let mut got = Vec::new();
        s.push(b"a\nb\r\nc\rd\r", |b, o| {
            got.push((String::from_utf8(b).unwrap(), o))
        });
        s.push(b"\ne\n", |b, o| {
            got.push((String::from_utf8(b).unwrap(), o))
        });
        assert_eq!(
            got.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c", "d", "e"],
            "a LF right after a CR terminator is skipped, even across reads"
        );
        let mut got = Vec::new();
        let long = vec![b'x'; MAX_LINE + 10];
        s.push(&long, |b, o| got.push((b.len(), o)));
        s.push(b"\nok\n", |b, o| got.push((b.len(), o)));
        assert_eq!(got, [(MAX_LINE, true), (2, false)]);
    }
}
