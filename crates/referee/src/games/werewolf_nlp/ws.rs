//! WebSocket agents of the natural-language division: the NAME exchange, token authentication,
//! and requests with the upstream timeouts (action + acceptable, then a NAME check within the
//! response timeout).

use std::time::{Duration, Instant};

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use kakehiki_werewolf::nlp::AskError;

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

/// One connected agent.
pub struct WsAgent {
    pub ws: WebSocketStream<TcpStream>,
    /// Its NAME answer (`kanolab1`).
    pub original: String,
    /// The team: the name without its trailing digits (`kanolab`).
    pub team: String,
    /// Time spent waiting for this agent's answers (from the request handed to the socket to
    /// the answer read), for the server-overhead benchmark.
    pub waited: Duration,
    /// When the last request was written to the socket, and when its answer was read.
    pub written_at: Option<Instant>,
    pub answered_at: Option<Instant>,
}

/// How a request to an agent failed, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsFault {
    /// No answer within the action timeout, but the NAME check passed.
    Timeout,
    /// Closed, unreadable, or the NAME check failed.
    Gone(String),
}

/// Timeouts in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub action_ms: u64,
    pub response_ms: u64,
    pub acceptable_ms: u64,
}

/// The `team` of a NAME answer.
pub fn team_of(original: &str) -> String {
    original
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    inner.update(msg);
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
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
    let mac = hmac_sha256(secret.as_bytes(), format!("{h}.{p}").as_bytes());
    // Constant-time comparison.
    if sig.len() != mac.len()
        || sig
            .iter()
            .zip(mac.iter())
            .fold(0u8, |a, (x, y)| a | (x ^ y))
            != 0
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
    let mac = hmac_sha256(secret.as_bytes(), format!("{h}.{p}").as_bytes());
    format!("{h}.{p}.{}", b64.encode(mac))
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Accept one connection: WebSocket handshake, NAME, and (if `secret` is set) the token check.
pub async fn accept_agent(
    listener: &TcpListener,
    wait: Duration,
    name_timeout: Duration,
    secret: Option<&str>,
) -> Result<WsAgent, String> {
    let (stream, _) = timeout(wait, listener.accept())
        .await
        .map_err(|_| format!("no agent connected within {} ms", wait.as_millis()))?
        .map_err(|e| format!("accept failed: {e}"))?;
    let _ = stream.set_nodelay(true);
    handshake(stream, name_timeout, secret).await
}

/// Handshake and NAME on an accepted TCP stream.
pub async fn handshake(
    stream: TcpStream,
    name_timeout: Duration,
    secret: Option<&str>,
) -> Result<WsAgent, String> {
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
    let mut ws = timeout(
        name_timeout,
        tokio_tungstenite::accept_hdr_async_with_config(stream, grab, Some(agent_ws_config())),
    )
    .await
    .map_err(|_| "the WebSocket handshake timed out".to_string())?
    .map_err(|e| format!("WebSocket handshake failed: {e}"))?;
    ws.send(Message::Text(r#"{"request":"NAME"}"#.into()))
        .await
        .map_err(|e| format!("cannot send NAME: {e}"))?;
    let original = match timeout(name_timeout, read_text(&mut ws)).await {
        Err(_) => return Err("no answer to NAME".into()),
        Ok(Err(e)) => return Err(format!("NAME: {e}")),
        Ok(Ok(t)) => t.trim_end_matches('\n').to_string(),
    };
    let team = team_of(&original);
    if let Some(secret) = secret {
        let ok = token
            .as_deref()
            .is_some_and(|t| valid_player_token(secret, t, &team, now_secs()));
        if !ok {
            let _ = ws.close(None).await;
            return Err(format!("{original}: missing or invalid token"));
        }
    }
    Ok(WsAgent {
        ws,
        original,
        team,
        waited: Duration::ZERO,
        written_at: None,
        answered_at: None,
    })
}

/// The next text (or binary, as UTF-8) message; pings are answered by tungstenite.
pub async fn read_text(ws: &mut WebSocketStream<TcpStream>) -> Result<String, String> {
    loop {
        match ws.next().await {
            None => return Err("connection closed".into()),
            Some(Err(WsError::Capacity(e))) => {
                // Say why before closing: bounded, the agent may not be reading.
                let reason = format!("message over {MAX_AGENT_MESSAGE} bytes");
                let frame = CloseFrame {
                    code: CloseCode::Size,
                    reason: reason.clone().into(),
                };
                let _ = timeout(Duration::from_secs(1), ws.close(Some(frame))).await;
                return Err(format!("{reason} ({e}): connection closed"));
            }
            Some(Err(e)) => return Err(format!("read error: {e}")),
            Some(Ok(Message::Text(t))) => return Ok(t),
            Some(Ok(Message::Binary(b))) => return Ok(String::from_utf8_lossy(&b).into_owned()),
            Some(Ok(Message::Close(_))) => return Err("connection closed".into()),
            Some(Ok(_)) => continue,
        }
    }
}

impl WsAgent {
    /// Send one packet's JSON.
    pub async fn send(&mut self, json: String) -> Result<(), String> {
        self.ws
            .send(Message::Text(json))
            .await
            .map_err(|e| format!("send failed: {e}"))
    }

    /// Send a request and read its answer as upstream: wait action + acceptable; on silence or
    /// a read error other than a close, send NAME and accept only the agent's own name within
    /// the response timeout (the request then fails, the agent stays).
    pub async fn ask(&mut self, json: String, t: Timeouts) -> Result<String, (AskError, WsFault)> {
        if let Err(e) = self.send(json).await {
            return Err((AskError::Fatal, WsFault::Gone(e)));
        }
        let wait = Duration::from_millis(t.action_ms + t.acceptable_ms);
        let sent = Instant::now();
        let got = timeout(wait, read_text(&mut self.ws)).await;
        let read = Instant::now();
        self.waited += read - sent;
        self.written_at = Some(sent);
        self.answered_at = Some(read);
        match got {
            Ok(Ok(text)) if text.contains('\n') => return Ok(text.replace('\n', "")),
            Ok(Ok(text)) => return Ok(text),
            Ok(Err(e)) => return Err((AskError::Fatal, WsFault::Gone(e))),
            Err(_) => {}
        }
        if let Err(e) = self.send(r#"{"request":"NAME"}"#.into()).await {
            return Err((AskError::Fatal, WsFault::Gone(e)));
        }
        match timeout(
            Duration::from_millis(t.response_ms),
            read_text(&mut self.ws),
        )
        .await
        {
            Ok(Ok(text)) if text.trim_end_matches('\n') == self.original => {
                Err((AskError::Failed, WsFault::Timeout))
            }
            Ok(Ok(text)) => Err((
                AskError::Fatal,
                WsFault::Gone(format!(
                    "timed out, then answered the NAME check with {text:?}"
                )),
            )),
            Ok(Err(e)) => Err((AskError::Fatal, WsFault::Gone(e))),
            Err(_) => Err((
                AskError::Fatal,
                WsFault::Gone("timed out, and no answer to the NAME check".into()),
            )),
        }
    }

    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
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
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
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
