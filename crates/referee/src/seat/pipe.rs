//! A process on pipes (`cmd:`): messages written to its stdin, replies read as lines from its
//! stdout (LF ends a line; the line cap and output cap are the sandbox's).

use std::time::Duration;

use kakehiki_agent::{BotProcess, NewStderr, ReadOutcome, SandboxConfig};
use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::SeatSpec;
use tokio::time::Instant;

use super::{by_deadline, Ending, Received, Seat, Transport, NO_TERMINATOR};
use crate::driver::{BoxFuture, MatchSpec, RefereeError};

/// How a failed write begins its detail.
pub const WRITE_FAILED: &str = "write to stdin failed";

/// A bot process speaking on stdin/stdout.
pub struct Pipe {
    proc: Box<BotProcess>,
}

impl Pipe {
    pub fn new(proc: BotProcess) -> Self {
        Pipe {
            proc: Box::new(proc),
        }
    }
}

/// The seats of a pipe game: built-in and silent seats as they are, `cmd:` seats started under
/// `sandbox`. A bot that cannot start is a seat not started (its fault) unless the machine is at
/// fault, which is an error: the match is not played.
pub fn start_seats(
    specs: &[SeatSpec],
    sandbox: &SandboxConfig,
    game: &str,
) -> Result<Vec<Seat>, RefereeError> {
    (0..specs.len())
        .map(|i| start_one(i, &specs[i], sandbox, game))
        .collect()
}

/// [`start_seats`] of a match, whose `human` seats are played from their desks
/// ([`super::human`]).
pub fn start_match_seats(spec: &MatchSpec, game: &str) -> Result<Vec<Seat>, RefereeError> {
    (0..spec.seats.len())
        .map(|i| match &spec.seats[i] {
            SeatSpec::Human => super::human::seat(spec, i, None),
            other => start_one(i, other, &spec.sandbox, game),
        })
        .collect()
}

fn start_one(
    i: usize,
    spec: &SeatSpec,
    sandbox: &SandboxConfig,
    game: &str,
) -> Result<Seat, RefereeError> {
    Ok(match spec {
        SeatSpec::Builtin(name) => Seat::builtin(name),
        SeatSpec::Cmd(argv) => match BotProcess::spawn(argv, &sandbox.for_seat(i)) {
            Ok(p) => Seat::Live(Box::new(Pipe::new(p))),
            Err(e) => {
                if let Some(host) = RefereeError::host_fault(i, &e) {
                    return Err(host);
                }
                Seat::NotStarted(e.to_string())
            }
        },
        other => {
            return Err(RefereeError::UnsupportedSeat {
                game: game.to_string(),
                seat: i,
                form: other.to_string(),
                reason: "this game's bots speak on stdin/stdout: use builtin:<name>, cmd:<command line> or human".into(),
            })
        }
    })
}

impl Pipe {
    async fn send(&mut self, bytes: &[u8], deadline: Instant) -> Result<(), Received> {
        match by_deadline(deadline, self.proc.send(bytes)).await {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => {
                // A broken pipe: the bot closed its input, mostly by exiting (a syntax error, a
                // crash at start). Its exit, read from its output's end, says why.
                let mut detail = format!("{WRITE_FAILED}: {e}");
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    let soon = Instant::now() + Duration::from_millis(500);
                    if let ReadOutcome::Closed { exit: Some(x), .. } =
                        self.proc.read_line(soon).await
                    {
                        detail.push_str(&format!("; the bot had exited: {x}"));
                    }
                }
                Err(Received::failure(ExchangeOutcome::Crash, detail))
            }
            None => Err(Received::failure(
                ExchangeOutcome::Timeout,
                "the message could not be written in time (the bot does not read its input)",
            )),
        }
    }
}

impl Transport for Pipe {
    fn write<'a>(
        &'a mut self,
        bytes: &'a [u8],
        deadline: Instant,
    ) -> BoxFuture<'a, Result<(), Received>> {
        Box::pin(self.send(bytes, deadline))
    }

    fn write_owned(
        &mut self,
        bytes: Vec<u8>,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<(), Received>> {
        Box::pin(async move { self.send(&bytes, deadline).await })
    }

    fn read(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        Box::pin(async move {
            match self.proc.read_line(deadline).await {
                ReadOutcome::Line(l) => Received {
                    outcome: ExchangeOutcome::Reply,
                    bytes: l.bytes,
                    truncated: l.truncated,
                    at: l.at,
                    detail: None,
                },
                ReadOutcome::Timeout { partial } => {
                    if !partial.is_empty() {
                        self.proc.take_partial();
                    }
                    Received {
                        outcome: ExchangeOutcome::Timeout,
                        bytes: partial,
                        truncated: false,
                        at: deadline,
                        detail: None,
                    }
                }
                // Unterminated text followed by EOF is what the bot answered; its exit is
                // noticed at the next request, if there is one.
                ReadOutcome::Closed { partial, .. } if !partial.is_empty() => Received {
                    outcome: ExchangeOutcome::Reply,
                    bytes: partial,
                    truncated: false,
                    at: Instant::now(),
                    detail: Some(format!("{NO_TERMINATOR}: the output closed after it")),
                },
                ReadOutcome::Closed { exit, .. } => Received::failure(
                    ExchangeOutcome::Crash,
                    format!(
                        "output closed before the reply: {}",
                        exit.map(|e| e.to_string())
                            .unwrap_or_else(|| "process still running".into())
                    ),
                ),
                ReadOutcome::OutputLimit { bytes } => Received::failure(
                    ExchangeOutcome::ResourceLimit,
                    format!("output cap exceeded ({bytes} bytes)"),
                ),
            }
        })
    }

    fn take_unsolicited(&mut self) -> (Vec<Vec<u8>>, u64) {
        let (lines, dropped) = self.proc.take_unsolicited();
        let partial = self.proc.take_partial();
        let mut units: Vec<Vec<u8>> = lines.into_iter().map(|l| l.bytes).collect();
        if !partial.is_empty() {
            units.push(partial);
        }
        (units, dropped)
    }

    fn pgid(&self) -> Option<i32> {
        Some(self.proc.pgid())
    }

    fn take_stderr(&mut self) -> NewStderr {
        self.proc.take_stderr()
    }

    fn failed(&self) -> Option<Received> {
        self.proc.output_exceeded().map(|bytes| {
            Received::failure(
                ExchangeOutcome::ResourceLimit,
                format!("output cap exceeded ({bytes} bytes)"),
            )
        })
    }

    fn kill(&mut self) {
        self.proc.kill();
    }

    fn finish(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Ending> {
        Box::pin(async move {
            let oom = self.proc.oom_killed();
            let console = self.proc.stderr_console();
            let (exit, stderr) = self.proc.finish_with_stderr(grace).await;
            let mut ending = Ending::of(exit, stderr);
            ending.stderr_rest = console.take_rest();
            if oom {
                ending.exit.push_str(" (memory limit)");
            }
            ending
        })
    }
}
