//! One agent's TCP connection (§4.1): TCP_NODELAY, one write per packet through a bounded queue,
//! one persistent line reader (`\n`, `\r\n` or a lone `\r` end a line; lines capped at 64 KiB).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use kakehiki_werewolf::wire::{decode_line, MAX_REPLY_BYTES};

/// Bytes that may wait in a connection's write queue; more counts as a disconnect (§6.2).
pub const WRITE_QUEUE_CAP: usize = 1 << 20;

/// Something the reader saw.
#[derive(Debug)]
enum Incoming {
    Line {
        bytes: Vec<u8>,
        overlong: bool,
        at: Instant,
    },
    Closed(String),
}

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
    lines: mpsc::Receiver<Incoming>,
    writer: mpsc::UnboundedSender<Outgoing>,
    queued: Arc<AtomicUsize>,
    write_failed: Arc<AtomicBool>,
    dead: Option<String>,
    reader_task: JoinHandle<()>,
    writer_task: JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.reader_task.abort();
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
        let (mut rd, mut wr) = stream.into_split();
        let (line_tx, lines) = mpsc::channel::<Incoming>(64);
        let reader_task = tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            let mut split = LineSplitter {
                cur: Vec::new(),
                overlong: false,
                skip_lf: false,
            };
            loop {
                match rd.read(&mut buf).await {
                    Ok(0) => {
                        if !split.cur.is_empty() {
                            let bytes = std::mem::take(&mut split.cur);
                            let _ = line_tx
                                .send(Incoming::Line {
                                    bytes,
                                    overlong: split.overlong,
                                    at: Instant::now(),
                                })
                                .await;
                        }
                        let _ = line_tx
                            .send(Incoming::Closed(
                                "connection closed by the agent (EOF)".into(),
                            ))
                            .await;
                        return;
                    }
                    Ok(n) => {
                        let mut out = Vec::new();
                        split.push(&buf[..n], |bytes, overlong| out.push((bytes, overlong)));
                        let at = Instant::now();
                        for (bytes, overlong) in out {
                            if line_tx
                                .send(Incoming::Line {
                                    bytes,
                                    overlong,
                                    at,
                                })
                                .await
                                .is_err()
                            {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        let _ = line_tx
                            .send(Incoming::Closed(format!("read error: {e}")))
                            .await;
                        return;
                    }
                }
            }
        });
        let (writer, mut out_rx) = mpsc::unbounded_channel::<Outgoing>();
        let queued = Arc::new(AtomicUsize::new(0));
        let write_failed = Arc::new(AtomicBool::new(false));
        let (q, failed) = (queued.clone(), write_failed.clone());
        let writer_task = tokio::spawn(async move {
            while let Some(o) = out_rx.recv().await {
                let len = o.bytes.len();
                if wr.write_all(&o.bytes).await.is_err() {
                    failed.store(true, Ordering::SeqCst);
                    return;
                }
                q.fetch_sub(len, Ordering::SeqCst);
                if let Some(done) = o.done {
                    let _ = done.send(Instant::now());
                }
            }
            let _ = wr.shutdown().await;
        });
        Conn {
            id,
            name: String::new(),
            lines,
            writer,
            queued,
            write_failed,
            dead: None,
            reader_task,
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

    fn enqueue(&mut self, bytes: Vec<u8>, done: Option<oneshot::Sender<Instant>>) -> bool {
        if self.dead().is_some() {
            return false;
        }
        let len = bytes.len();
        if self.queued.load(Ordering::SeqCst) + len > WRITE_QUEUE_CAP {
            self.dead = Some(format!(
                "write queue over {WRITE_QUEUE_CAP} bytes: the agent does not read"
            ));
            return false;
        }
        self.queued.fetch_add(len, Ordering::SeqCst);
        if self.writer.send(Outgoing { bytes, done }).is_err() {
            self.dead = Some("write error".into());
            return false;
        }
        true
    }

    /// Queue a packet that expects no reply. `false` if the connection is (now) dead.
    pub fn send(&mut self, packet: String) -> bool {
        self.enqueue(packet.into_bytes(), None)
    }

    /// Lines that arrived while no reply was outstanding (discarded by the caller, recorded).
    pub fn drain_unsolicited(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(i) = self.lines.try_recv() {
            match i {
                Incoming::Line { bytes, .. } => out.push(decode_line(&bytes)),
                Incoming::Closed(r) => {
                    self.dead.get_or_insert(r);
                }
            }
        }
        out
    }

    /// Send a reply-expecting packet and wait up to `limit` for one line.
    pub async fn ask(&mut self, packet: String, limit: Duration) -> Answer {
        let start = Instant::now();
        let (tx, rx) = oneshot::channel();
        if !self.enqueue(packet.into_bytes(), Some(tx)) {
            let reason = self.dead().unwrap_or("connection closed").to_string();
            return Answer::Disconnect {
                reason,
                io_error: false,
            };
        }
        let written = match tokio::time::timeout(limit, rx).await {
            Ok(Ok(at)) => at,
            Ok(Err(_)) => {
                self.dead = Some("write error".into());
                return Answer::Disconnect {
                    reason: "write error".into(),
                    io_error: true,
                };
            }
            Err(_) => {
                return Answer::Timeout {
                    elapsed_us: start.elapsed().as_micros() as u64,
                }
            }
        };
        let deadline = written + limit;
        match tokio::time::timeout_at(deadline, self.lines.recv()).await {
            Ok(Some(Incoming::Line {
                bytes,
                overlong,
                at,
            })) => Answer::Line {
                text: decode_line(&bytes),
                overlong,
                elapsed_us: at.saturating_duration_since(written).as_micros() as u64,
            },
            Ok(Some(Incoming::Closed(reason))) => {
                self.dead = Some(reason.clone());
                let io_error = reason.starts_with("read error");
                Answer::Disconnect { reason, io_error }
            }
            Ok(None) => {
                self.dead = Some("connection reader stopped".into());
                Answer::Disconnect {
                    reason: "connection reader stopped".into(),
                    io_error: true,
                }
            }
            Err(_) => Answer::Timeout {
                elapsed_us: written.elapsed().as_micros() as u64,
            },
        }
    }

    /// Flush what is queued (bounded wait), e.g. before closing at the end of a run.
    pub async fn flush(&mut self, wait: Duration) {
        let (tx, rx) = oneshot::channel();
        if self.enqueue(Vec::new(), Some(tx)) {
            let _ = tokio::time::timeout(wait, rx).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
