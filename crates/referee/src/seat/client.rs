//! What the TCP and WebSocket transports share about a client the referee launched (`tcp-cmd:`,
//! `ws-cmd:`): its exit is watched while the referee waits for it, a disconnect of a client that
//! has exited says how it exited, and its ending (exit and stderr) is collected the same way.

use std::net::SocketAddr;
use std::time::Duration;

use kakehiki_agent::{ClientProcess, ExitInfo, NewStderr};
use kakehiki_core::exchange::ExchangeOutcome;
use tokio::time::Instant;

use super::{Ending, Received};

/// How often a launched client's exit is looked at while the referee waits for its connection:
/// a client that exits first is reported within this, not when the wait runs out.
pub const EXIT_POLL: Duration = Duration::from_millis(50);

/// How long a disconnect waits for the launched client's exit to say how it ended.
const EXIT_AFTER_DISCONNECT: Duration = Duration::from_millis(200);

/// The next step of a wait until `deadline` that watches `client`: at most [`EXIT_POLL`] away
/// when there is a client to watch.
pub fn poll_step(client: Option<&ClientProcess>, deadline: Instant) -> Instant {
    match client {
        Some(_) => (Instant::now() + EXIT_POLL).min(deadline),
        None => deadline,
    }
}

/// What the launched client wrote on stderr since it was last taken (nothing without one).
pub fn take_stderr(client: Option<&ClientProcess>) -> NewStderr {
    client.map(ClientProcess::take_stderr).unwrap_or_default()
}

/// Why a launched client did not reach its seat at `addr`, said after "where this seat listened":
/// how its command line gets the address (`{host} {port}`, or `{url}` for a WebSocket agent) or
/// that it does not, and where the client connected instead, which the referee refused
/// (`RefusedConnects`).
pub fn missed_seat(client: &ClientProcess, addr: SocketAddr, ws: bool) -> String {
    let (given, example) = match ws {
        false => ("{host} {port}", "tcp-cmd:./bot {host} {port}"),
        true => ("{url} or {host} {port}", "ws-cmd:./agent {url}"),
    };
    let told = client.told_port(addr.port());
    let mut s = if told {
        format!(" (its command line gets it as {given}")
    } else {
        format!(
            " (its command line has no {given}, so your bot was never told where to connect: \
             add it, as in {example}"
        )
    };
    let refused = client.refused_connects();
    if refused.is_none() && told {
        s.push_str("; a connection anywhere else fails, often as \"permission denied\"");
    }
    s.push(')');
    if let Some(r) = refused {
        if let Some(tried) = r.describe() {
            let times = match r.count {
                1 => String::new(),
                n => format!(" ({n} attempts)"),
            };
            s.push_str(&format!(
                "; your bot connected to {tried} instead{times}, which was refused"
            ));
        }
    }
    s
}

/// The launched client's exit, if it has exited.
pub fn exited(client: Option<&mut ClientProcess>) -> Option<ExitInfo> {
    client.and_then(ClientProcess::try_exit)
}

/// A disconnect of a launched client that has exited (or exits within 200 ms) is a crash with
/// its exit: `…; the <who> exited: exit code 1`.
pub async fn with_exit(mut r: Received, client: Option<&mut ClientProcess>, who: &str) -> Received {
    let Some(c) = client else {
        return r;
    };
    if r.outcome != ExchangeOutcome::Disconnect {
        return r;
    }
    let until = Instant::now() + EXIT_AFTER_DISCONNECT;
    loop {
        if let Some(e) = c.try_exit() {
            r.outcome = ExchangeOutcome::Crash;
            let why = r
                .detail
                .take()
                .unwrap_or_else(|| "connection closed".into());
            r.detail = Some(format!("{why}; the {who} exited: {e}"));
            return r;
        }
        if Instant::now() >= until {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// How a seat's client ended: its exit (with ` (memory limit)` when the memory cap killed it)
/// and stderr (its tail, and what was not taken yet); `not_launched` when the referee started
/// no process for the seat.
pub async fn ending(client: Option<ClientProcess>, grace: Duration, not_launched: &str) -> Ending {
    match client {
        Some(c) => {
            let oom = c.oom_killed();
            let console = c.stderr_console();
            let (exit, stderr, _) = c.finish_with_output(grace).await;
            let mut e = Ending::of(exit, stderr);
            e.stderr_rest = console.take_rest();
            if oom {
                e.exit.push_str(" (memory limit)");
            }
            e
        }
        None => Ending {
            exit: not_launched.to_string(),
            ..Ending::default()
        },
    }
}
