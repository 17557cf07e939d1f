//! The DAIDE transport: one client's binary-framed TCP connection, with the referee as its
//! DAIDE server (`daide`, `daide-cmd:` seats of Diplomacy).
//!
//! The conversation itself is pure ([`kakehiki_diplomacy::daide::server::Session`]); this
//! transport carries its bytes. The driver writes a seat a
//! [`Request`] (what to send, what to wait for); the
//! seat sends the messages, then answers each frame the client sends at once (`THX`, `MIS`,
//! `TME`, `REJ`, ...), until the request is answered or its deadline (a press round's deadline
//! is its end, not a timeout). Its reply is every frame
//! the client sent meanwhile, with its arrival time ([`server::encode_inbound`]): the seat record
//! keeps it, and the driver's own copy of the session re-derives the conversation from it, live
//! and on a re-run alike. Frames are at most 65,539 bytes (the header's 16-bit length), read 16
//! KiB at a time; at most [`server::MAX_FRAMES`] are taken per request; writes go through a queue
//! of at most 1 MiB (more: the client does not read, a disconnect).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kakehiki_agent::{ClientProcess, NewStderr};
use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_diplomacy::daide::server::{self, Expect, Request, Session};
use kakehiki_diplomacy::daide::Decoder;
use kakehiki_diplomacy::Power;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::client::{ending, take_stderr, with_exit};
use super::tcp::WRITE_QUEUE_CAP;
use super::{Ending, Received, Transport};
use crate::driver::BoxFuture;

/// The exit recorded for a DAIDE seat whose client the referee did not start.
const NOT_LAUNCHED: &str = "a client the referee did not start (no exit code)";

enum Out {
    Bytes(Vec<u8>),
    Flush(oneshot::Sender<()>),
    /// Shut the sending side down (after an `EM`): the client reads EOF after it.
    Shutdown,
}

/// The empty `RM` (the standard map), the answer to a valid `IM`.
const RM_EMPTY: [u8; 4] = [1, 0, 0, 0];

/// How long after the `IM` the `RM` goes out. DipGame's client (dip 1.3, `Conn.connect`) sets
/// its state to "waiting for RM" only after writing the `IM`, overwriting an "RM received" set
/// meanwhile by its reader thread: an `RM` that comes at once is lost in about one connection
/// in four on a loaded machine, and the client gives up a second later (`FM`).
const RM_DELAY: Duration = Duration::from_millis(100);

/// What the greeter hands back: the read half and the bytes it read; whether it sent the `RM`.
type Greeted = (OwnedReadHalf, Vec<u8>, bool);

/// Until the seat's first request, reads the client's first 8 bytes and, when they are a valid
/// `IM`, answers it with the `RM` at once (DAIDE clients wait about a second for it: DipGame's
/// drop the connection then). The bytes stay for the session, which derives the same `RM`.
async fn greet(
    mut rd: OwnedReadHalf,
    writer: mpsc::UnboundedSender<Out>,
    queued: Arc<AtomicUsize>,
    mut stop: oneshot::Receiver<()>,
) -> Greeted {
    let mut got = Vec::new();
    let mut buf = [0u8; 8];
    while got.len() < 8 {
        tokio::select! {
            _ = &mut stop => return (rd, got, false),
            r = rd.read(&mut buf[..8 - got.len()]) => match r {
                Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                _ => return (rd, got, false),
            },
        }
    }
    let im = got[0] == 0 && got[2..] == [0, 4, 0, 1, 0xDA, 0x10];
    if im {
        tokio::time::sleep(RM_DELAY).await;
        queued.fetch_add(RM_EMPTY.len(), Ordering::SeqCst);
        let _ = writer.send(Out::Bytes(RM_EMPTY.to_vec()));
    }
    (rd, got, im)
}

/// A DAIDE client's connection.
struct Link {
    /// `None` while the greeter has it.
    rd: Option<OwnedReadHalf>,
    greeter: Option<(oneshot::Sender<()>, JoinHandle<Greeted>)>,
    /// The `RM` went out already: the session's is not sent again.
    rm_sent: bool,
    decoder: Decoder,
    buf: Vec<u8>,
    writer: mpsc::UnboundedSender<Out>,
    queued: Arc<AtomicUsize>,
    failed: Arc<AtomicBool>,
    task: JoinHandle<()>,
    /// Why the connection is over, once it is.
    dead: Option<String>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.task.abort();
        if let Some((_, g)) = &self.greeter {
            g.abort();
        }
    }
}

impl Link {
    fn start(stream: TcpStream) -> Link {
        let _ = stream.set_nodelay(true);
        let (rd, mut wr) = stream.into_split();
        let (writer, mut rx) = mpsc::unbounded_channel::<Out>();
        let queued = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(AtomicBool::new(false));
        let (stop, stopped) = oneshot::channel();
        let greeter = tokio::spawn(greet(rd, writer.clone(), queued.clone(), stopped));
        let (q, f) = (queued.clone(), failed.clone());
        let task = tokio::spawn(async move {
            while let Some(o) = rx.recv().await {
                match o {
                    Out::Bytes(b) => {
                        if wr.write_all(&b).await.is_err() {
                            f.store(true, Ordering::SeqCst);
                            return;
                        }
                        q.fetch_sub(b.len(), Ordering::SeqCst);
                    }
                    Out::Flush(done) => {
                        let _ = done.send(());
                    }
                    Out::Shutdown => break,
                }
            }
            let _ = wr.shutdown().await;
        });
        Link {
            rd: None,
            greeter: Some((stop, greeter)),
            rm_sent: false,
            decoder: Decoder::default(),
            buf: vec![0; 16 * 1024],
            writer,
            queued,
            failed,
            task,
            dead: None,
        }
    }

    /// Take the read half back from the greeter (once), with what it read.
    async fn reclaim(&mut self) {
        let Some((stop, g)) = self.greeter.take() else {
            return;
        };
        let _ = stop.send(());
        match g.await {
            Ok((rd, got, im)) => {
                self.rd = Some(rd);
                self.decoder.feed(&got);
                self.rm_sent = im;
            }
            Err(_) => self.dead = Some("internal: the greeter failed".into()),
        }
    }

    fn dead(&self) -> Option<String> {
        if self.failed.load(Ordering::SeqCst) {
            return Some("write error".into());
        }
        self.dead.clone()
    }

    fn send(&mut self, bytes: Vec<u8>) -> Result<(), String> {
        if let Some(d) = self.dead() {
            return Err(d);
        }
        if self.queued.load(Ordering::SeqCst) + bytes.len() > WRITE_QUEUE_CAP {
            let why = format!("write queue over {WRITE_QUEUE_CAP} bytes: the client does not read");
            self.dead = Some(why.clone());
            return Err(why);
        }
        self.queued.fetch_add(bytes.len(), Ordering::SeqCst);
        self.writer
            .send(Out::Bytes(bytes))
            .map_err(|_| "write error".to_string())
    }

    /// Close after an error: write what is queued, shut the sending side down, and read and
    /// discard what the client still sends for a moment (at most 4 MiB), so the close does not
    /// turn into a reset that loses the `EM`.
    async fn close(&mut self, why: String) {
        let linger = Instant::now() + Duration::from_millis(300);
        self.reclaim().await;
        self.flush(linger).await;
        let _ = self.writer.send(Out::Shutdown);
        let mut left = 4usize << 20;
        while let (true, Some(rd)) = (left > 0, self.rd.as_mut()) {
            match tokio::time::timeout_at(linger, rd.read(&mut self.buf)).await {
                Ok(Ok(n)) if n > 0 => left = left.saturating_sub(n),
                _ => break,
            }
        }
        self.dead = Some(why);
    }

    /// Wait until what is queued is written, by `deadline`.
    async fn flush(&mut self, deadline: Instant) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.writer.send(Out::Flush(tx)).is_err() {
            return false;
        }
        matches!(tokio::time::timeout_at(deadline, rx).await, Ok(Ok(())))
    }
}

/// A DAIDE seat: the client's connection once made, its launched process (`daide-cmd:`), and
/// the conversation.
pub struct DaideSeat {
    link: Option<Link>,
    client: Option<ClientProcess>,
    why_not: String,
    session: Session,
    /// When the current request's messages were written.
    since: Instant,
}

impl DaideSeat {
    /// The seat of `power` on an accepted connection.
    pub fn connected(
        stream: TcpStream,
        client: Option<ClientProcess>,
        power: Power,
        draw_votes: bool,
    ) -> DaideSeat {
        DaideSeat {
            link: Some(Link::start(stream)),
            client,
            why_not: String::new(),
            session: Session::new(power, draw_votes),
            since: Instant::now(),
        }
    }

    /// The seat of `power` whose client never connected (`why`), its process kept for its
    /// exit and stderr.
    pub fn unconnected(client: Option<ClientProcess>, power: Power, why: String) -> DaideSeat {
        DaideSeat {
            link: None,
            client,
            why_not: why,
            session: Session::new(power, false),
            since: Instant::now(),
        }
    }

    fn no_link(&mut self) -> Received {
        match self.client.as_mut().and_then(ClientProcess::try_exit) {
            Some(e) => Received::failure(ExchangeOutcome::Crash, format!("the client exited: {e}")),
            None => Received::failure(ExchangeOutcome::Disconnect, self.why_not.clone()),
        }
    }

    async fn converse(&mut self, deadline: Instant) -> Received {
        let mut blob = String::new();
        let since = self.since;
        let Some(link) = self.link.as_mut() else {
            return self.no_link();
        };
        link.reclaim().await;
        let result = |outcome, blob: String, detail: Option<String>, at| Received {
            outcome,
            bytes: blob.into_bytes(),
            truncated: false,
            at,
            detail,
        };
        loop {
            if self.session.done() {
                return result(ExchangeOutcome::Reply, blob, None, Instant::now());
            }
            if let Some(raw) = link.decoder.next_raw() {
                let ms = since.elapsed().as_millis() as u64;
                blob.push_str(&server::encode_inbound(ms, &raw));
                let step = self.session.receive(&raw, ms);
                for f in step.out {
                    if f == RM_EMPTY {
                        if std::mem::take(&mut link.rm_sent) {
                            continue;
                        }
                        tokio::time::sleep(RM_DELAY).await;
                    }
                    if let Err(why) = link.send(f) {
                        let r =
                            result(ExchangeOutcome::Disconnect, blob, Some(why), Instant::now());
                        return with_exit(r, self.client.as_mut(), "client").await;
                    }
                }
                if let Some(why) = step.close {
                    link.close(why.clone()).await;
                    let outcome = match why.contains("more than") {
                        true => ExchangeOutcome::ResourceLimit,
                        false => ExchangeOutcome::Malformed,
                    };
                    return result(outcome, blob, Some(why), Instant::now());
                }
                continue;
            }
            if let Some(why) = link.dead() {
                let r = result(ExchangeOutcome::Disconnect, blob, Some(why), Instant::now());
                return with_exit(r, self.client.as_mut(), "client").await;
            }
            let want = link.decoder.wants().min(link.buf.len());
            let Some(rd) = link.rd.as_mut() else {
                link.dead = Some("internal: no read half".into());
                continue;
            };
            match tokio::time::timeout_at(deadline, rd.read(&mut link.buf[..want])).await {
                Err(_) => {
                    // A press round ends at its deadline: what came is the reply.
                    let outcome = match self.session.expects() {
                        Expect::Press(_) => ExchangeOutcome::Reply,
                        _ => ExchangeOutcome::Timeout,
                    };
                    return result(outcome, blob, None, deadline);
                }
                Ok(Ok(0)) => {
                    link.dead = Some("connection closed by the client (EOF)".into());
                }
                Ok(Ok(n)) => {
                    let Link { decoder, buf, .. } = link;
                    decoder.feed(&buf[..n]);
                }
                Ok(Err(e)) => link.dead = Some(format!("read error: {e}")),
            }
        }
    }
}

impl Transport for DaideSeat {
    fn write<'a>(
        &'a mut self,
        bytes: &'a [u8],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), Received>> {
        Box::pin(async move {
            let req = Request::decode(bytes).map_err(|e| {
                Received::failure(ExchangeOutcome::NotRunning, format!("internal: {e}"))
            })?;
            let frames = self.session.begin(&req);
            let Some(link) = self.link.as_mut() else {
                return Err(self.no_link());
            };
            for f in frames {
                if let Err(why) = link.send(f) {
                    let r = Received::failure(ExchangeOutcome::Disconnect, why);
                    return Err(with_exit(r, self.client.as_mut(), "client").await);
                }
            }
            if !link.flush(deadline).await {
                return Err(Received::failure(
                    ExchangeOutcome::Timeout,
                    "the message could not be written in time (the client does not read)",
                ));
            }
            self.since = Instant::now();
            Ok(())
        })
    }

    fn read(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        Box::pin(self.converse(deadline))
    }

    fn failed(&self) -> Option<Received> {
        match &self.link {
            Some(l) => l
                .dead()
                .map(|d| Received::failure(ExchangeOutcome::Disconnect, d)),
            None => Some(Received::failure(
                ExchangeOutcome::Disconnect,
                self.why_not.clone(),
            )),
        }
    }

    fn take_stderr(&mut self) -> NewStderr {
        take_stderr(self.client.as_ref())
    }

    fn kill(&mut self) {
        self.link = None;
        self.why_not = "stopped by the referee".into();
        if let Some(c) = self.client.as_mut() {
            c.kill();
        }
    }

    fn finish(mut self: Box<Self>, grace: Duration) -> BoxFuture<'static, Ending> {
        Box::pin(async move {
            if let Some(l) = self.link.as_mut() {
                l.flush(Instant::now() + grace).await;
            }
            drop(self.link.take());
            ending(self.client.take(), grace, NOT_LAUNCHED).await
        })
    }
}
