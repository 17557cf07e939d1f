//! The seats of a Diplomacy match, started: built-in bots, processes on pipes, TCP clients and
//! DAIDE clients.

use std::time::Duration;

use kakehiki_agent::BotProcess;
use kakehiki_core::SeatSpec;
use kakehiki_diplomacy::wire::{self, Params, MS};
use kakehiki_diplomacy::{BuiltinBot, Power};
use tokio::time::Instant;

use super::daide;
use crate::driver::{MatchSpec, RefereeError};
use crate::seat::tcp::{self, Conn, ConnQueue, TcpSeat};
use crate::seat::{pipe::Pipe, Seat, SILENT_BOT};

/// How long a `tcp` or `daide` seat waits for its client to connect (`connect_ms`, 1 ms to
/// 10 minutes; 10 s by default): read by the seats and by the longest-match bound alike.
pub(super) fn connect_ms(spec: &MatchSpec) -> Result<u64, RefereeError> {
    let connect_ms: u64 = spec.option("connect_ms", 10_000u64, MS)?;
    if !(1..=600_000).contains(&connect_ms) {
        let value = connect_ms.to_string();
        let (key, expected) = ("connect_ms".into(), MS.into());
        return Err(RefereeError::BadOption {
            key,
            value,
            expected,
        });
    }
    Ok(connect_ms)
}

/// The seats of a match: built-in bots (with their engines), processes on pipes, TCP clients
/// (`tcp` seats share one listener and connect in seat order; each `tcp-cmd:` client has a
/// listener of its own); and the connections closed at once on each seat's port.
pub(super) async fn start_seats(
    spec: &MatchSpec,
    params: &Params,
) -> Result<Started, RefereeError> {
    let host: String = spec.option("host", "127.0.0.1".into(), "a host name or address")?;
    let port: u16 = spec.option("port", 10000u16, "a TCP port number")?;
    let connect_ms = connect_ms(spec)?;
    let mut sandbox = spec.sandbox.clone();
    sandbox.line_cap = sandbox.line_cap.max(wire::MAX_LINE);
    // `tcp` and `daide` seats share the one listener, taken in seat order.
    let is_tcp = |s: &SeatSpec| matches!(s, SeatSpec::Tcp | SeatSpec::Daide(None));
    let mut shared = match spec.seats.iter().any(is_tcp) {
        true => Some(ConnQueue::bind(&host, port).await?),
        false => None,
    };
    for (i, q) in spec
        .seats
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((i, shared.as_ref()?)).filter(|_| is_tcp(s)))
    {
        spec.on_listen.notify(i, q.local_addr());
    }
    let cannot = |e: &dyn std::fmt::Display| format!("cannot start the bot: {e}");
    let (mut st, mut clients) = (Started::default(), Vec::new());
    for (i, s) in spec.seats.iter().enumerate() {
        let cfg = sandbox.for_seat(i);
        let seat = match s {
            SeatSpec::Builtin(name) if name == SILENT_BOT => Ok(Seat::Silent),
            SeatSpec::Builtin(name) => {
                let bot = BuiltinBot::new(name, spec.seed, i).ok_or_else(|| {
                    let expected = kakehiki_diplomacy::BUILTIN_BOTS.join(", ");
                    let (game, name) = ("diplomacy".into(), name.clone());
                    RefereeError::UnknownBot {
                        game,
                        seat: i,
                        name,
                        expected,
                    }
                })?;
                st.bots.resize_with(i, || None);
                st.bots.push(Some(bot));
                Ok(Seat::Builtin)
            }
            SeatSpec::Cmd(argv) => {
                BotProcess::spawn(argv, &cfg).map(|p| Seat::Live(Box::new(Pipe::new(p))))
            }
            SeatSpec::TcpCmd(argv) | SeatSpec::Daide(Some(argv)) => {
                let label = format!("diplomacy seat {i}");
                tcp::launch(|a| tcp::client_argv(argv, a), &cfg, port, &label).map(|l| {
                    clients.push((i, l));
                    Seat::NotStarted(String::new())
                })
            }
            SeatSpec::Human => Ok(crate::seat::human::seat(spec, i, None)?),
            SeatSpec::Tcp | SeatSpec::Daide(None) => Ok(Seat::NotStarted(cannot(&format!(
                "no client connected to {host}:{port} within {connect_ms} ms"
            )))),
        };
        st.seats.push(match seat {
            Ok(seat) => seat,
            Err(e) => match RefereeError::host_fault(i, &e) {
                Some(fault) => return Err(fault),
                None => Seat::NotStarted(cannot(&e)),
            },
        });
    }
    st.bots.resize_with(spec.seats.len(), || None);
    let deadline = Instant::now() + Duration::from_millis(connect_ms);
    let mut clients = clients.into_iter().peekable();
    for i in 0..spec.seats.len() {
        let (conn, client, excess, cap) = match (clients.next_if(|(c, _)| *c == i), &mut shared) {
            (Some((_, (mut client, mut q))), _) => {
                let got = tcp::wait_connection(&mut q, Some(&mut client), deadline).await;
                (got.map_err(|r| r.detail), Some(client), q.excess(), q.cap())
            }
            (None, Some(q)) if is_tcp(&spec.seats[i]) => {
                let before = q.excess();
                let got = q.next(deadline).await.ok_or(None);
                (got, None, q.excess() - before, q.cap())
            }
            _ => continue,
        };
        st.excess.push((i, excess, cap));
        if matches!(spec.seats[i], SeatSpec::Daide(_)) {
            let (power, votes) = (Power(i as u8), params.rules.draw_votes);
            if let Some(seat) = daide::seat(conn, client, power, votes, cannot) {
                st.seats[i] = seat;
            }
            continue;
        }
        st.seats[i] = match (conn, client) {
            (Ok((stream, _)), client) => {
                let conn = Conn::start(stream, wire::MAX_LINE);
                Seat::Live(Box::new(TcpSeat::connected(conn, client)))
            }
            (Err(why), Some(client)) => Seat::Live(Box::new(TcpSeat {
                conn: None,
                client: Some(client),
                why_not: cannot(&why.unwrap_or_default()),
            })),
            (Err(_), None) => continue,
        };
    }
    Ok(st)
}

/// The seats of a match about to start.
#[derive(Default)]
pub(super) struct Started {
    pub seats: Vec<Seat>,
    /// The built-in bot of each built-in seat.
    pub bots: Vec<Option<BuiltinBot>>,
    /// `(seat, connections closed at once, the port's cap)`.
    pub excess: Vec<(usize, u64, usize)>,
}
