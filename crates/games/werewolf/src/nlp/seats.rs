//! The referee's seats of a natural-language game, as pure parts: how each seat is played and
//! named, a `ws-cmd:` command line, the time limits of its requests, the labels of its requests,
//! and the turns of built-in agents in a group chat.

use std::net::SocketAddr;
use std::time::Duration;

use kakehiki_core::SeatSpec;

use super::packet::{Packet, RequestKind, OVER};
use super::NlpSettings;

/// The built-in name of a seat that never answers (the seat layer's `builtin:silent`).
pub const SILENT: &str = "silent";

/// How a seat is played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    /// A built-in agent, named `NAME<seat>` (`sample2`).
    Bot(String),
    /// `builtin:silent`: named `silent<seat>`, never answers.
    Silent(String),
    /// An agent asked its NAME (`ws`, `ws-cmd:`).
    Remote,
}

impl Who {
    /// The seat `i` of spec label `s` (`builtin:sample`, `ws`, ...).
    pub fn of(i: usize, s: &str) -> Who {
        match s.strip_prefix("builtin:") {
            Some(SILENT) => Who::Silent(format!("{SILENT}{}", i + 1)),
            Some(name) => Who::Bot(format!("{name}{}", i + 1)),
            None => Who::Remote,
        }
    }

    /// Every seat of a match, from the seats' spec labels.
    pub fn all(seats: &[String]) -> Vec<Who> {
        seats
            .iter()
            .enumerate()
            .map(|(i, s)| Who::of(i, s))
            .collect()
    }

    /// The name of a seat not asked its NAME; empty for a remote one until it answers.
    pub fn name(&self) -> String {
        match self {
            Who::Bot(n) | Who::Silent(n) => n.clone(),
            Who::Remote => String::new(),
        }
    }
}

/// A seat as this game names it: WebSocket seats are `ws` and `ws-cmd:<command line>` (they
/// parse as `tcp` / `tcp-cmd:`, which are accepted as aliases).
pub fn seat_label(s: &SeatSpec) -> String {
    match s {
        SeatSpec::Tcp => "ws".into(),
        SeatSpec::TcpCmd(_) => {
            let t = s.to_string();
            format!("ws-cmd:{}", t.strip_prefix("tcp-cmd:").unwrap_or(&t))
        }
        other => other.to_string(),
    }
}

/// `{url}`, `{host}`, `{port}` in a command line, for an agent to connect to `addr`.
pub fn substitute(argv: &[String], addr: SocketAddr) -> Vec<String> {
    let (host, port) = (addr.ip().to_string(), addr.port());
    argv.iter()
        .map(|a| {
            a.replace("{url}", &format!("ws://{host}:{port}/ws"))
                .replace("{host}", &host)
                .replace("{port}", &port.to_string())
        })
        .collect()
}

/// The upstream timeouts, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub action_ms: u64,
    pub response_ms: u64,
    pub acceptable_ms: u64,
}

impl Timeouts {
    pub fn of(s: &NlpSettings) -> Timeouts {
        Timeouts {
            action_ms: s.timeout_action_ms,
            response_ms: s.timeout_response_ms,
            acceptable_ms: s.timeout_acceptable_ms,
        }
    }

    /// A request's time: the action timeout plus the acceptable delay (also a write's limit).
    pub fn action(&self) -> Duration {
        Duration::from_millis(self.action_ms + self.acceptable_ms)
    }

    /// The NAME's time (the handshake, the check after a timeout).
    pub fn response(&self) -> Duration {
        Duration::from_millis(self.response_ms.max(1))
    }
}

/// The talk and whisper kinds, by index.
const TALKS: [&str; 2] = ["talk", "whisper"];

/// The labels of a game's requests in the replay: `day N` (notifications, votes, night
/// actions), `day N talk K` / `day N whisper K` (the K-th talk or whisper request of the day, or
/// the K-th group-chat window).
#[derive(Debug, Default)]
pub struct Labels {
    /// The day, its talk and whisper requests (and windows) so far, and the kind of the last
    /// phase started (0 talk, 1 whisper).
    day: u32,
    counts: [u32; 2],
    phase: usize,
}

impl Labels {
    /// The label of the request or notification `p` (a phase start sets the kind of the
    /// group-chat windows that follow).
    pub fn of(&mut self, p: &Packet) -> String {
        match p.request {
            RequestKind::TalkPhaseStart => self.phase = 0,
            RequestKind::WhisperPhaseStart => self.phase = 1,
            _ => {}
        }
        let day = p.info.as_ref().map_or(0, |i| i.day);
        if day != self.day {
            self.day = day;
            self.counts = [0, 0];
        }
        match p.request {
            RequestKind::Talk => self.next(0),
            RequestKind::Whisper => self.next(1),
            _ => format!("day {day}"),
        }
    }

    /// The label of the next group-chat window of the phase last started, and the kind of its
    /// messages (`TALK`, `WHISPER`).
    pub fn window(&mut self) -> (String, &'static str) {
        (self.next(self.phase), ["TALK", "WHISPER"][self.phase])
    }

    fn next(&mut self, kind: usize) -> String {
        self.counts[kind] += 1;
        format!("day {} {} {}", self.day, TALKS[kind], self.counts[kind] - 1)
    }
}

/// The most rounds of built-in agents' turns in one group-chat window.
pub const CHAT_ROUNDS: usize = 64;

/// The turns of built-in agents in a group chat: each open agent in turn, round after round,
/// until every one said Over; at most `rounds` rounds.
#[derive(Debug)]
pub struct ChatTurns {
    this: Vec<usize>,
    again: Vec<usize>,
    at: usize,
    rounds: usize,
}

impl ChatTurns {
    pub fn new(open: Vec<usize>, rounds: usize) -> ChatTurns {
        ChatTurns {
            this: open,
            again: Vec::new(),
            at: 0,
            rounds,
        }
    }

    /// The agent whose turn it is; `None` when the chat is over.
    pub fn turn(&mut self) -> Option<usize> {
        if self.at == self.this.len() {
            self.this = std::mem::take(&mut self.again);
            self.at = 0;
            self.rounds = self.rounds.saturating_sub(1);
        }
        if self.rounds == 0 {
            return None;
        }
        let a = *self.this.get(self.at)?;
        self.at += 1;
        Some(a)
    }

    /// Agent `a` said `text` on its turn: it speaks again next round unless that was Over.
    pub fn said(&mut self, a: usize, text: &str) {
        if text != OVER {
            self.again.push(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_turns_go_round_until_every_agent_said_over_or_the_rounds_end() {
        let mut turns = ChatTurns::new(vec![1, 3], 3);
        let mut seen = Vec::new();
        while let Some(a) = turns.turn() {
            seen.push(a);
            turns.said(a, if a == 1 { OVER } else { "hello" });
        }
        assert_eq!(seen, [1, 3, 3, 3]);
        assert_eq!(ChatTurns::new(Vec::new(), 3).turn(), None);
    }

    #[test]
    fn ws_cmd_lines_get_the_url_host_and_port() {
        let argv: Vec<String> = ["a", "{url}", "{host}:{port}"].map(String::from).into();
        assert_eq!(
            substitute(&argv, "127.0.0.1:9".parse().unwrap()),
            ["a", "ws://127.0.0.1:9/ws", "127.0.0.1:9"]
        );
    }
}
