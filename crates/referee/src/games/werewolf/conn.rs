//! One agent's TCP connection (§4.1): TCP_NODELAY; each packet written with one write call
//! straight from the game's task when the socket takes it (a bounded queue drained by a writer
//! task otherwise); one persistent line reader, read by the game's task itself while it awaits a
//! reply (`\n`, `\r\n` or a lone `\r` end a line; lines capped at 64 KiB).

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use kakehiki_werewolf::wire::{decode_line, MAX_REPLY_BYTES};

/// Bytes that may wait in a connection's write queue; more counts as a disconnect (§6.2).
pub const WRITE_QUEUE_CAP: usize = 1 << 20;

/// Complete lines kept unread; older ones are dropped beyond it (they are unsolicited anyway).
const PENDING_LINES_CAP: usize = 1024;

/// Bytes of complete lines kept unread (1 MiB); older lines are dropped beyond it, so a flood of
/// long lines holds at most this much (plus the one line being read, at most 64 KiB).
const PENDING_BYTES_CAP: usize = 1 << 20;

/// Reads of [`Conn::read_available`] per call (256 × 16 KiB = 4 MiB): a client writing as fast
/// as the referee reads cannot hold it there.
const READS_PER_DRAIN: usize = 256;

struct Outgoing {
    bytes: Vec<u8>,
    done: Option<oneshot::Sender<Instant>>,
}

/// The result of one reply-expecting request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A line arrived: decoded text (terminator removed), whether it was cut at 64 KiB, and the
    /// time from the request's last byte handed to the socket to the line's terminator.
    Line {
        text: String,
        overlong: bool,
        elapsed_us: u64,
    },
    /// No line within the limit.
    Timeout { elapsed_us: u64 },
    /// EOF, a read or write error, or a write-queue overflow.
    Disconnect { reason: String, io_error: bool },
}

/// A live agent connection.
pub struct Conn {
    /// Connection counter (for `unnamed-K`).
    pub id: u64,
    pub name: String,
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
    cur: Vec<u8>,
    overlong: bool,
    skip_lf: bool,
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
            if b == b'\n' || b == b'\r' {
                self.skip_lf = b == b'\r';
                emit(
                    std::mem::take(&mut self.cur),
                    std::mem::replace(&mut self.overlong, false),
                );
            } else if self.cur.len() < MAX_REPLY_BYTES {
                self.cur.push(b);
            } else {
                self.overlong = true;
            }
        }
    }
}

impl Conn {
    /// Take over an accepted stream.
    pub fn start(stream: TcpStream, id: u64) -> Conn {
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
            id,
            name: String::new(),
            peer: None,
            rd,
            split: LineSplitter {
                cur: Vec::new(),
                overlong: false,
                skip_lf: false,
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

    /// Why the connection is unusable, if it is.
    pub fn dead(&self) -> Option<&str> {
        if self.dead.is_none() && self.write_failed.load(Ordering::SeqCst) {
            return Some("write error");
        }
        self.dead.as_deref()
    }

    /// Write `bytes`: at once if nothing is queued and the socket takes it all (returns the
    /// time the last byte was handed over), else through the queue (`None`; `done` fires then).
    fn write(
        &mut self,
        bytes: Vec<u8>,
        done: Option<oneshot::Sender<Instant>>,
    ) -> Result<Option<Instant>, String> {
        if let Some(d) = self.dead() {
            return Err(d.to_string());
        }
        let mut rest = bytes;
        if self.queued.load(Ordering::SeqCst) == 0 {
            match self.wr.try_write(&rest) {
                Ok(n) if n == rest.len() => return Ok(Some(Instant::now())),
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
        if self.writer.send(Outgoing { bytes: rest, done }).is_err() {
            self.dead = Some("write error".into());
            return Err("write error".into());
        }
        Ok(None)
    }

    /// Queue a packet that expects no reply. `false` if the connection is (now) dead.
    pub fn send(&mut self, packet: String) -> bool {
        self.write(packet.into_bytes(), None).is_ok()
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
        if !self.split.cur.is_empty() {
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
                Ok(0) => self.on_eof("connection closed by the agent (EOF)".into(), false),
                Ok(n) => self.take_bytes(n, Instant::now()),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => self.on_eof(format!("read error: {e}"), true),
            }
        }
    }

    /// Lines that arrived while no reply was outstanding (discarded by the caller, recorded).
    pub fn drain_unsolicited(&mut self) -> Vec<String> {
        self.read_available();
        self.pending_bytes = 0;
        let out = self
            .lines
            .drain(..)
            .map(|(b, _, _)| decode_line(&b))
            .collect();
        if let Some((r, _)) = &self.closed {
            self.dead.get_or_insert_with(|| r.clone());
        }
        out
    }

    /// Send a reply-expecting packet and wait up to `limit` for one line.
    pub async fn ask(&mut self, packet: String, limit: Duration) -> Answer {
        match self.request(packet, limit).await {
            Ok(written) => self.next_line(written, limit).await,
            Err(a) => a,
        }
    }

    /// Send a reply-expecting packet; `Ok` holds when its last byte was handed to the socket.
    pub async fn request(&mut self, packet: String, limit: Duration) -> Result<Instant, Answer> {
        let start = Instant::now();
        let (tx, rx) = oneshot::channel();
        match self.write(packet.into_bytes(), Some(tx)) {
            Err(reason) => Err(Answer::Disconnect {
                reason,
                io_error: false,
            }),
            Ok(Some(at)) => Ok(at),
            Ok(None) => match tokio::time::timeout(limit, rx).await {
                Ok(Ok(at)) => Ok(at),
                Ok(Err(_)) => {
                    self.dead = Some("write error".into());
                    Err(Answer::Disconnect {
                        reason: "write error".into(),
                        io_error: true,
                    })
                }
                Err(_) => Err(Answer::Timeout {
                    elapsed_us: start.elapsed().as_micros() as u64,
                }),
            },
        }
    }

    /// The next line, waiting until `written + limit`.
    pub async fn next_line(&mut self, written: Instant, limit: Duration) -> Answer {
        let deadline = written + limit;
        loop {
            if let Some((bytes, overlong, at)) = self.pop_line() {
                return Answer::Line {
                    text: decode_line(&bytes),
                    overlong,
                    elapsed_us: at.saturating_duration_since(written).as_micros() as u64,
                };
            }
            if let Some((reason, io_error)) = self.closed.clone() {
                self.dead = Some(reason.clone());
                return Answer::Disconnect { reason, io_error };
            }
            match tokio::time::timeout_at(deadline, self.rd.read(&mut self.buf)).await {
                Err(_) => {
                    return Answer::Timeout {
                        elapsed_us: written.elapsed().as_micros() as u64,
                    }
                }
                Ok(Ok(0)) => self.on_eof("connection closed by the agent (EOF)".into(), false),
                Ok(Ok(n)) => self.take_bytes(n, Instant::now()),
                Ok(Err(e)) => self.on_eof(format!("read error: {e}"), true),
            }
        }
    }

    /// Wait (bounded) until queued packets are written, e.g. before closing at the end of a run.
    pub async fn flush(&mut self, wait: Duration) {
        if self.queued.load(Ordering::SeqCst) == 0 {
            return;
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(None) = self.write(Vec::new(), Some(tx)) {
            let _ = tokio::time::timeout(wait, rx).await;
        }
    }
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
        let mut conn = Conn::start(server, 1);
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
            cur: Vec::new(),
            overlong: false,
            skip_lf: false,
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
        let long = vec![b'x'; MAX_REPLY_BYTES + 10];
        s.push(&long, |b, o| got.push((b.len(), o)));
        s.push(b"\nok\n", |b, o| got.push((b.len(), o)));
        assert_eq!(got, [(MAX_REPLY_BYTES, true), (2, false)]);
    }
}
