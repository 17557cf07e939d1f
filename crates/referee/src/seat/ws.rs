//! A WebSocket seat (`ws`, `ws-cmd:`): an agent of the aiwolf-nlp-server protocol. One message
//! is one text frame each way: a request written as one text frame, one text frame read as the
//! reply. A binary frame, or a message over [`MAX_AGENT_MESSAGE`], is `malformed` (the latter
//! also closes the connection, close code 1009); a close or a read error is a `disconnect`.
//! Writes have a deadline as reads do (an agent that does not read cannot hold the server).
//!
//! The connection's handshake (the WebSocket upgrade, the server's NAME request and, when the
//! server requires it, the agent's token) happens before the match: its NAME answer (or why there
//! is none) is the reply to the seat's first request with an empty message, so the table records
//! it as it records every other reply. A `ws-cmd:` seat's client process is attached: a client
//! that exits while the referee waits for its connection is seen within [`EXIT_POLL`](super::client::EXIT_POLL), and its
//! exit and stderr are the seat's [`Ending`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{timeout, Instant};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use std::net::SocketAddr;

use kakehiki_agent::{ClientProcess, NewStderr, SandboxConfig};
use kakehiki_core::exchange::ExchangeOutcome;

use super::client::{ending, exited, poll_step, take_stderr, with_exit};
use super::{Ending, Received, Seat, Transport};
use crate::driver::{BoxFuture, MatchSpec, RefereeError};
use kakehiki_core::SeatSpec;

/// The server's NAME request, as upstream writes it.
pub const NAME_REQUEST: &str = r#"{"request":"NAME"}"#;

/// Largest message an agent may send, fragments included (64 KiB). An agent sends its NAME, a
/// talk or whisper text (upstream caps a talk at a few hundred characters) or a target's name;
/// a message over this closes the connection (close code 1009, "message too big").
pub const MAX_AGENT_MESSAGE: usize = 64 << 10;

/// Largest single frame an agent may send (64 KiB): the same as a whole message.
pub const MAX_AGENT_FRAME: usize = MAX_AGENT_MESSAGE;

/// Bytes the server may hold for one agent that does not read (4 MiB): a request with the day's
/// talk history is tens of KiB; a send beyond this fails and the agent is gone.
pub const MAX_WRITE_BUFFER: usize = 4 << 20;

/// The WebSocket limits of an agent connection.
pub fn agent_ws_config() -> WebSocketConfig {
    WebSocketConfig {
        max_message_size: Some(MAX_AGENT_MESSAGE),
        max_frame_size: Some(MAX_AGENT_FRAME),
        max_write_buffer_size: MAX_WRITE_BUFFER,
        ..WebSocketConfig::default()
    }
}

/// The `team` of a NAME answer.
pub use kakehiki_werewolf::nlp::record::team_of;

/// HMAC-SHA256 of `msg` under `key`, ready to be finalised or verified.
fn hmac_sha256(key: &[u8], msg: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(msg);
    mac
}

/// Whether `token` is an HS256 JWT signed with `secret` for `team` with `role: PLAYER` (and not
/// expired), as the upstream server checks.
pub fn valid_player_token(secret: &str, token: &str, team: &str, now_secs: u64) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    let [h, p, s] = parts.as_slice() else {
        return false;
    };
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (Ok(header), Ok(payload), Ok(sig)) = (b64.decode(h), b64.decode(p), b64.decode(s)) else {
        return false;
    };
    let Ok(header) = serde_json::from_slice::<Value>(&header) else {
        return false;
    };
    if header["alg"] != "HS256" {
        return false;
    }
    // Compared in constant time.
    if hmac_sha256(secret.as_bytes(), format!("{h}.{p}").as_bytes())
        .verify_slice(&sig)
        .is_err()
    {
        return false;
    }
    let Ok(claims) = serde_json::from_slice::<Value>(&payload) else {
        return false;
    };
    if let Some(exp) = claims.get("exp").and_then(Value::as_u64) {
        if exp < now_secs {
            return false;
        }
    }
    claims["team"] == team && claims["role"] == "PLAYER"
}

/// Sign a player token (for tests and for organisers handing tokens out).
pub fn sign_player_token(secret: &str, team: &str) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let h = b64.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let p = b64.encode(serde_json::json!({"team": team, "role": "PLAYER"}).to_string());
    let mac = hmac_sha256(secret.as_bytes(), format!("{h}.{p}").as_bytes()).finalize();
    format!("{h}.{p}.{}", b64.encode(mac.into_bytes()))
}

fn now_secs() -> u64 {
    crate::files::unix_now().as_secs()
}

/// A WebSocket agent's seat.
pub struct WsSeat {
    ws: Option<WebSocketStream<TcpStream>>,
    /// The handshake's NAME answer (or why there is none) and the time it took: the reply to
    /// the first request with an empty message.
    hello: Option<(Received, Duration)>,
    /// Its NAME answer (`kanolab1`); empty if it gave none.
    pub original: String,
    /// The team: the name without its trailing digits (`kanolab`).
    pub team: String,
    /// The `ws-cmd:` client process.
    client: Option<ClientProcess>,
    /// Why the connection is gone, once it is.
    gone: Option<String>,
    /// Whether the agent connected (its WebSocket handshake completed).
    connected: bool,
    written_at: Option<Instant>,
    clock: Option<Arc<Mutex<RequestClock>>>,
}

/// The server's own time per request, for the benchmark: from the previous answer read (any
/// agent's) to the next request written to its socket. Shared by the seats of a game.
#[derive(Debug, Default)]
pub struct RequestClock {
    last_answer: Option<Instant>,
    pub gaps: Vec<Duration>,
}

impl WsSeat {
    /// A seat whose agent never connected (`why`), with its client process if it has one: every
    /// request finds it not running; its process's exit and stderr are still collected.
    pub fn not_connected(why: String, client: Option<ClientProcess>) -> WsSeat {
        WsSeat {
            ws: None,
            hello: Some((
                Received::failure(ExchangeOutcome::NotRunning, why.clone()),
                Duration::ZERO,
            )),
            original: String::new(),
            team: String::new(),
            client,
            gone: Some(why),
            connected: false,
            written_at: None,
            clock: None,
        }
    }

    /// Attach the `ws-cmd:` client process.
    pub fn with_client(mut self, client: Option<ClientProcess>) -> WsSeat {
        self.client = client;
        self
    }

    /// Measure the server's time per request on `clock` (the benchmark).
    pub fn with_clock(mut self, clock: Arc<Mutex<RequestClock>>) -> WsSeat {
        self.clock = Some(clock);
        self
    }

    /// Why the agent is not (or no longer) connected, if it is not.
    pub fn gone(&self) -> Option<&str> {
        self.gone.as_deref()
    }
}

/// Wait up to `wait` for one connection on `listener` and make it a seat (WebSocket handshake,
/// NAME, and the token check when `secret` is set). While waiting, a launched `client` that exits
/// is seen within [`EXIT_POLL`](super::client::EXIT_POLL). A seat that does not connect is [`WsSeat::not_connected`].
pub async fn accept_seat(
    listener: &TcpListener,
    wait: Duration,
    name_timeout: Duration,
    secret: Option<&str>,
    mut client: Option<ClientProcess>,
) -> WsSeat {
    let deadline = Instant::now() + wait;
    let accepted = loop {
        let step = poll_step(client.as_ref(), deadline);
        match tokio::time::timeout_at(step, listener.accept()).await {
            Ok(Ok((stream, _))) => break Ok(stream),
            Ok(Err(e)) => break Err(format!("accept failed: {e}")),
            Err(_) => {}
        }
        if let Some(exit) = exited(client.as_mut()) {
            break Err(format!(
                "the agent exited before connecting{}: {exit}",
                missed(client.as_ref(), listener)
            ));
        }
        if Instant::now() >= deadline {
            break Err(format!(
                "no agent connected within {} ms (the limit connect_timeout_ms: an agent slower \
                 to start, such as one loading a language model's libraries, needs a larger one, \
                 e.g. --opt connect_timeout_ms={}){}",
                wait.as_millis(),
                (wait.as_millis() * 2).max(60_000),
                missed_elsewhere(client.as_ref(), listener),
            ));
        }
    };
    match accepted {
        Ok(stream) => {
            let _ = stream.set_nodelay(true);
            handshake(stream, name_timeout, secret)
                .await
                .with_client(client)
        }
        Err(why) => WsSeat::not_connected(why, client),
    }
}

/// ` to 127.0.0.1:10000, where this seat listened (…)` for a launched agent that has not
/// connected ([`missed_seat`]); nothing for an agent the referee did not launch.
fn missed(client: Option<&ClientProcess>, listener: &TcpListener) -> String {
    let (Some(c), Ok(local)) = (client, listener.local_addr()) else {
        return String::new();
    };
    // Launched agents are told the loopback address of their listener.
    let addr = SocketAddr::from(([127, 0, 0, 1], local.port()));
    format!(
        " to {addr}, where this seat listened{}",
        super::client::missed_seat(c, addr, true)
    )
}

/// `; this seat listened on 127.0.0.1:8080 (…)` for a launched agent that was not told the
/// address or connected elsewhere; nothing for one that was told and tried nothing else (it was
/// only slow).
fn missed_elsewhere(client: Option<&ClientProcess>, listener: &TcpListener) -> String {
    let Some(c) = client else {
        return String::new();
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let tried = c.refused_connects().is_some_and(|r| r.count > 0);
    if c.told_port(port) && !tried {
        return String::new();
    }
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    format!(
        "; this seat listened on {addr}{}",
        super::client::missed_seat(c, addr, true)
    )
}

/// Launch the client of `ws-cmd:` seat `i` under `sandbox` with a listener of its own on `port`
/// (see `ClientProcess::spawn_seat`; `argv_for` makes its command line from the address) and
/// wait for its connection ([`accept_seat`], `times` = the wait and the NAME's time). A client
/// that cannot start is a seat not started, unless the machine is at fault.
pub async fn launch_seat(
    i: usize,
    argv_for: impl FnOnce(SocketAddr) -> Vec<String>,
    sandbox: &SandboxConfig,
    port: u16,
    (wait, name_timeout): (Duration, Duration),
    secret: Option<&str>,
) -> Result<Seat, RefereeError> {
    let (client, port) = match ClientProcess::spawn_seat(argv_for, sandbox, port) {
        Ok(launched) => launched,
        Err(e) => {
            return match RefereeError::host_fault(i, &e) {
                Some(fault) => Err(fault),
                None => Ok(Seat::NotStarted(format!("cannot start the agent: {e}"))),
            }
        }
    };
    // `spawn_seat` hands the listener over non-blocking; one connection is the seat, and the
    // listener closes with `own`.
    let own = TcpListener::from_std(port.listener).map_err(|e| RefereeError::HostFault {
        seat: i,
        reason: format!("cannot use the seat's listener: {e}"),
    })?;
    let ws = accept_seat(&own, wait, name_timeout, secret, Some(client)).await;
    Ok(Seat::Live(Box::new(ws)))
}

/// Where and how long a game's WebSocket seats are awaited ([`start_seats`]).
pub struct Wait<'a> {
    /// The address of the shared listener of the `ws` seats (0: a free port); also the port of
    /// each `ws-cmd:` agent's own listener.
    pub host: &'a str,
    pub port: u16,
    /// How long an agent has to connect, and to answer NAME.
    pub connect: Duration,
    pub name: Duration,
    /// The token secret, when agents must present a player token.
    pub secret: Option<&'a str>,
    /// A `ws-cmd:` agent's command line for its listener's address.
    pub argv: fn(&[String], SocketAddr) -> Vec<String>,
}

/// The seats of a WebSocket game: `ws` (`tcp`) seats accepted in seat order on one listener
/// (its address announced to `spec.on_listen`), `ws-cmd:` (`tcp-cmd:`) agents launched under the
/// seat's sandbox, each with a listener of its own, and awaited; every other seat made by
/// `other` (built-in and silent seats, or the game's refusal of a seat form).
pub async fn start_seats(
    spec: &MatchSpec,
    w: &Wait<'_>,
    mut other: impl FnMut(usize, &SeatSpec) -> Result<Seat, RefereeError>,
) -> Result<Vec<Seat>, RefereeError> {
    let is_ws = |s: &SeatSpec| matches!(s, SeatSpec::Tcp);
    let shared = match spec.seats.iter().any(is_ws) {
        true => Some(TcpListener::bind((w.host, w.port)).await?),
        false => None,
    };
    if let Some(l) = &shared {
        for i in (0..spec.seats.len()).filter(|&i| is_ws(&spec.seats[i])) {
            spec.on_listen.notify(i, l.local_addr()?);
        }
    }
    let mut seats = Vec::with_capacity(spec.seats.len());
    for (i, s) in spec.seats.iter().enumerate() {
        seats.push(match (s, &shared) {
            (SeatSpec::TcpCmd(argv), _) => {
                let argv_for = |addr| (w.argv)(argv, addr);
                let times = (w.connect, w.name);
                let sandbox = spec.sandbox.for_seat(i);
                launch_seat(i, argv_for, &sandbox, w.port, times, w.secret).await?
            }
            (SeatSpec::Tcp, Some(l)) => {
                let ws = accept_seat(l, w.connect, w.name, w.secret, None).await;
                Seat::Live(Box::new(ws))
            }
            _ => other(i, s)?,
        });
    }
    Ok(seats)
}

/// Handshake and NAME on an accepted TCP stream. The seat holds the NAME answer, or why there is
/// none (then it is not `WsSeat::connected`).
pub async fn handshake(stream: TcpStream, name_timeout: Duration, secret: Option<&str>) -> WsSeat {
    let mut token: Option<String> = None;
    #[allow(clippy::result_large_err)] // the signature tungstenite's callback requires
    let grab = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        if let Some(q) = req.uri().query() {
            for kv in q.split('&') {
                if let Some(t) = kv.strip_prefix("token=") {
                    token = Some(t.to_string());
                }
            }
        }
        if token.is_none() {
            if let Some(v) = req
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
            {
                token = Some(v.replace("Bearer ", ""));
            }
        }
        Ok(resp)
    };
    let upgraded = timeout(
        name_timeout,
        tokio_tungstenite::accept_hdr_async_with_config(stream, grab, Some(agent_ws_config())),
    )
    .await;
    let mut ws = match upgraded {
        Err(_) => return WsSeat::not_connected("the WebSocket handshake timed out".into(), None),
        Ok(Err(e)) => {
            return WsSeat::not_connected(format!("WebSocket handshake failed: {e}"), None)
        }
        Ok(Ok(ws)) => ws,
    };
    let mut seat = WsSeat::not_connected(String::new(), None);
    seat.gone = None;
    seat.connected = true;
    let sent = Instant::now();
    if let Err(e) = ws.send(Message::Text(NAME_REQUEST.into())).await {
        let why = format!("cannot send NAME: {e}");
        seat.hello = Some((
            Received::failure(ExchangeOutcome::Disconnect, why.clone()),
            Duration::ZERO,
        ));
        seat.gone = Some(why);
        return seat;
    }
    seat.ws = Some(ws);
    let got = seat.read_frame(sent + name_timeout).await;
    let took = got.at.saturating_duration_since(sent);
    if got.outcome == ExchangeOutcome::Reply {
        let original = String::from_utf8_lossy(&got.bytes)
            .trim_end_matches('\n')
            .to_string();
        seat.team = team_of(&original);
        if let Some(secret) = secret {
            let ok = token
                .as_deref()
                .is_some_and(|t| valid_player_token(secret, t, &seat.team, now_secs()));
            if !ok {
                if let Some(mut ws) = seat.ws.take() {
                    let _ = timeout(Duration::from_secs(1), ws.close(None)).await;
                }
                let why = format!("{original}: missing or invalid token");
                let mut refused = Received::failure(ExchangeOutcome::Disconnect, why.clone());
                refused.bytes = got.bytes;
                seat.hello = Some((refused, took));
                seat.gone = Some(why);
                return seat;
            }
        }
        seat.original = original;
    } else {
        let why = format!(
            "NAME: {}",
            got.detail.clone().unwrap_or_else(|| "no answer".into())
        );
        seat.ws = None;
        seat.gone = Some(why);
    }
    seat.hello = Some((got, took));
    seat
}

impl WsSeat {
    /// The next frame by `deadline`: a text frame is a reply; pings are answered by tungstenite.
    async fn read_frame(&mut self, deadline: Instant) -> Received {
        let Some(ws) = self.ws.as_mut() else {
            return Received::failure(
                ExchangeOutcome::Disconnect,
                self.gone.clone().unwrap_or_else(|| "not connected".into()),
            );
        };
        let got = tokio::time::timeout_at(deadline, async {
            loop {
                match ws.next().await {
                    Some(Ok(Message::Text(t))) => return Ok(t.into_bytes()),
                    Some(Ok(Message::Binary(b))) => {
                        return Err((
                            ExchangeOutcome::Malformed,
                            format!("a binary frame ({} bytes) where text is expected", b.len()),
                            false,
                        ))
                    }
                    Some(Ok(Message::Close(_))) | None => {
                        return Err((
                            ExchangeOutcome::Disconnect,
                            "connection closed".to_string(),
                            true,
                        ))
                    }
                    Some(Err(WsError::Capacity(e))) => {
                        // Say why before closing: bounded, the agent may not be reading.
                        let reason = format!("message over {MAX_AGENT_MESSAGE} bytes");
                        let frame = CloseFrame {
                            code: CloseCode::Size,
                            reason: reason.clone().into(),
                        };
                        let _ = timeout(Duration::from_secs(1), ws.close(Some(frame))).await;
                        return Err((
                            ExchangeOutcome::Malformed,
                            format!("{reason} ({e}): connection closed"),
                            true,
                        ));
                    }
                    Some(Err(e)) => {
                        return Err((
                            ExchangeOutcome::Disconnect,
                            format!("read error: {e}"),
                            true,
                        ))
                    }
                    Some(Ok(_)) => continue,
                }
            }
        })
        .await;
        match got {
            Ok(Ok(bytes)) => {
                let at = Instant::now();
                if let (Some(clock), Some(w)) = (&self.clock, self.written_at) {
                    let mut c = clock.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(prev) = c.last_answer {
                        c.gaps.push(w.saturating_duration_since(prev));
                    }
                    c.last_answer = Some(at);
                }
                Received {
                    outcome: ExchangeOutcome::Reply,
                    bytes,
                    truncated: false,
                    at,
                    detail: None,
                }
            }
            Ok(Err((outcome, detail, closed))) => {
                if closed {
                    self.ws = None;
                    self.gone = Some(detail.clone());
                }
                Received::failure(outcome, detail)
            }
            Err(_) => Received {
                outcome: ExchangeOutcome::Timeout,
                bytes: Vec::new(),
                truncated: false,
                at: deadline,
                detail: None,
            },
        }
    }
}

impl Transport for WsSeat {
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
        Box::pin(async move {
            let Some(ws) = self.ws.as_mut() else {
                return Err(Received::failure(
                    ExchangeOutcome::Disconnect,
                    self.gone.clone().unwrap_or_else(|| "not connected".into()),
                ));
            };
            // The drivers write text; only a non-UTF-8 message pays for a lossy conversion.
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            match super::by_deadline(deadline, ws.send(Message::Text(text))).await {
                Some(Ok(())) => {
                    self.written_at = self.clock.as_ref().map(|_| Instant::now());
                    Ok(())
                }
                Some(Err(e)) => {
                    let why = format!("send failed: {e}");
                    self.ws = None;
                    self.gone = Some(why.clone());
                    Err(Received::failure(ExchangeOutcome::Disconnect, why))
                }
                None => Err(Received::failure(
                    ExchangeOutcome::Timeout,
                    "the message could not be written in time (the agent does not read)",
                )),
            }
        })
    }

    fn read(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        Box::pin(async move {
            if let Some((mut hello, took)) = self.hello.take() {
                // Read during the handshake: reported with the time it took then.
                hello.at = Instant::now() + took;
                return hello;
            }
            let r = self.read_frame(deadline).await;
            with_exit(r, self.client.as_mut(), "agent").await
        })
    }

    fn failed(&self) -> Option<Received> {
        if self.hello.is_some() {
            return None;
        }
        self.gone
            .as_ref()
            .map(|why| Received::failure(ExchangeOutcome::Disconnect, why.clone()))
    }

    fn take_stderr(&mut self) -> NewStderr {
        take_stderr(self.client.as_ref())
    }

    // `check`'s watch of a launched agent that waits for input while it owes an answer; only a
    // read of its seat's connection counts, so an agent waiting for its language model is not
    // stopped (`kakehiki_agent::activity`).
    fn pgid(&self) -> Option<i32> {
        self.client.as_ref().map(ClientProcess::pgid)
    }

    fn peer(&self) -> Option<SocketAddr> {
        self.ws.as_ref()?.get_ref().peer_addr().ok()
    }

    fn messages(&self) -> bool {
        true
    }

    fn kill(&mut self) {
        // An agent that connected and whose connection is already gone (it closed it, or it
        // broke) is usually exiting: it is left to [`Transport::finish`], which gives it the
        // table's grace and then stops it, so its contestant sees its own exit status and not
        // the referee's SIGKILL. It holds nothing a connected agent does not. One that never
        // connected is stopped now, as before.
        let already_gone = self.connected && self.gone.is_some();
        // Dropped: the connection closes without a close frame.
        self.ws = None;
        self.gone
            .get_or_insert_with(|| "stopped by the referee".into());
        if let Some(c) = self.client.as_mut().filter(|_| !already_gone) {
            c.kill();
        }
    }

    fn finish(self: Box<Self>, grace: Duration) -> BoxFuture<'static, Ending> {
        Box::pin(async move {
            let WsSeat { ws, client, .. } = *self;
            if let Some(mut ws) = ws {
                let _ = timeout(Duration::from_secs(1), ws.close(None)).await;
            }
            let not_launched = "not launched by the referee (the agent connected on its own)";
            ending(client, grace, not_launched).await
        })
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teams_drop_the_trailing_number() {
        assert_eq!(team_of("kanolab1"), "kanolab");
        assert_eq!(team_of("kanolab12"), "kanolab");
        assert_eq!(team_of("team2b3"), "team2b");
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?").finalize();
        assert_eq!(
            hex::encode(mac.into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn player_tokens_are_checked_for_team_role_and_signature() {
        let t = sign_player_token("s3cret", "kanolab");
        assert!(valid_player_token("s3cret", &t, "kanolab", 0));
        assert!(!valid_player_token("other", &t, "kanolab", 0));
        assert!(!valid_player_token("s3cret", &t, "otherteam", 0));
        assert!(!valid_player_token("s3cret", "a.b", "kanolab", 0));
        let mut bad = t.clone();
        bad.pop();
        assert!(!valid_player_token("s3cret", &bad, "kanolab", 0));
    }
}
