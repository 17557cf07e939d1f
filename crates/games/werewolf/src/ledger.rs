//! The bookkeeping of §6 for a run of games: each seat's failure counts (§8.3), who is silenced
//! for the rest of a game, the late replies a seat still owes, and the lines of `errors.jsonl`
//! and `timings.jsonl` (§6.3). Pure: the referee tells it what happened to each request.

use serde::{Deserialize, Serialize};

use crate::engine::Settled;
use crate::types::Request;

/// Failure counters of one seat (§8.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub timeouts: u32,
    pub invalid: u32,
    pub slow: u32,
    pub disconnects: u32,
    /// Games in which the seat was silenced.
    pub silent_games: u32,
}

/// One line of `errors.jsonl` (§6.3).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ErrorRecord {
    pub game: u32,
    pub day: u32,
    pub request: String,
    pub turn: u32,
    pub agent: usize,
    pub name: String,
    pub kind: String,
    #[serde(rename = "elapsedUs")]
    pub elapsed_us: Option<u64>,
    pub reply: Option<String>,
    pub substitute: Option<String>,
}

/// One line of `timings.jsonl` (§6.3).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TimingRecord {
    pub game: u32,
    pub day: u32,
    pub request: String,
    pub turn: u32,
    pub agent: usize,
    pub name: String,
    #[serde(rename = "elapsedUs")]
    pub elapsed_us: Option<u64>,
    pub outcome: String,
}

/// A request: its day, turn (talk turn, vote round), agent and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    pub day: u32,
    pub turn: u32,
    pub agent: usize,
    pub request: Request,
}

/// What came of a reply-expecting request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard<'a> {
    /// A line, this many µs after the request (none: a built-in agent).
    Line(&'a str, Option<u64>),
    /// No line within the limit.
    Timeout(Option<u64>),
    /// The connection or its client is gone: why.
    Gone(&'a str),
    /// The seat has no running agent (it never got one, or lost it in an earlier game).
    NotRunning,
}

/// The §6 accounts of the seats of a run (agent `i + 1` = index `i`).
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    pub game: u32,
    /// Slower replies are `slow` (§6.2).
    pub contest_limit_us: u64,
    pub names: Vec<String>,
    pub counts: Vec<Counts>,
    /// Replies each seat still owes to requests that timed out: the next lines it sends are
    /// those late replies, discarded.
    pub owed: Vec<u32>,
    /// Seats silenced for the rest of the current game (timeout, disconnect, no agent).
    pub silent: Vec<bool>,
    pub errors: Vec<ErrorRecord>,
    pub timings: Vec<TimingRecord>,
}

fn cut(s: &str) -> String {
    s.chars().take(200).collect()
}

impl Ledger {
    pub fn new(names: Vec<String>, contest_limit_ms: u64) -> Ledger {
        let n = names.len();
        Ledger {
            contest_limit_us: contest_limit_ms * 1000,
            names,
            counts: vec![Counts::default(); n],
            owed: vec![0; n],
            silent: vec![false; n],
            ..Ledger::default()
        }
    }

    /// Game `game` begins: nobody is silenced.
    pub fn start(&mut self, game: u32) {
        self.game = game;
        self.silent.fill(false);
    }

    /// Whether the seat still owes a late reply.
    pub fn owes(&self, agent: usize) -> bool {
        self.owed[agent - 1] > 0
    }

    fn silence(&mut self, agent: usize) {
        if !std::mem::replace(&mut self.silent[agent - 1], true) {
            self.counts[agent - 1].silent_games += 1;
        }
    }

    /// A line that arrived while no reply was outstanding: `late_line` while a reply is owed,
    /// else `unsolicited`.
    pub fn stray(&mut self, at: At, line: &str) -> &'static str {
        let owed = &mut self.owed[at.agent - 1];
        let kind = if *owed > 0 {
            "late_line"
        } else {
            "unsolicited"
        };
        *owed = owed.saturating_sub(1);
        self.error(at, kind, None, Some(line), None);
        kind
    }

    /// The seat's connection or client is gone: silent for the rest of the game.
    pub fn gone(&mut self, at: At, why: &str) {
        self.silence(at.agent);
        self.counts[at.agent - 1].disconnects += 1;
        self.error(at, "disconnect", None, Some(why), None);
    }

    /// Account for what came of a request; the outcome (`ok`, `timeout`, `disconnect`,
    /// `silent`).
    pub fn heard(&mut self, at: At, heard: Heard<'_>) -> &'static str {
        let a = at.agent - 1;
        match heard {
            Heard::Line(text, us) => {
                if let Some(us) = us.filter(|&us| us > self.contest_limit_us) {
                    self.counts[a].slow += 1;
                    self.error(at, "slow", Some(us), Some(text), None);
                }
                "ok"
            }
            Heard::Timeout(us) => {
                self.silence(at.agent);
                self.owed[a] += 1;
                self.counts[a].timeouts += 1;
                self.error(at, "timeout", us, None, None);
                "timeout"
            }
            Heard::Gone(why) => {
                self.gone(at, why);
                "disconnect"
            }
            Heard::NotRunning => {
                self.silence(at.agent);
                "silent"
            }
        }
    }

    /// Account for how the engine settled the reply (`line`, the `outcome` so far) and write the
    /// request's timing line; the final outcome (`invalid` for a reply it could not use).
    pub fn settled(
        &mut self,
        at: At,
        outcome: &'static str,
        us: Option<u64>,
        line: Option<&str>,
        settled: &Settled,
    ) -> &'static str {
        let outcome = if settled.invalid && outcome == "ok" {
            self.counts[at.agent - 1].invalid += 1;
            let kind = match settled.rule_violation {
                true => "rule_violation",
                false => "invalid",
            };
            self.error(at, kind, us, line, Some(&settled.value));
            "invalid"
        } else {
            outcome
        };
        self.timings.push(TimingRecord {
            game: self.game,
            day: at.day,
            request: at.request.name().into(),
            turn: at.turn,
            agent: at.agent,
            name: self.names[at.agent - 1].clone(),
            elapsed_us: us,
            outcome: outcome.into(),
        });
        outcome
    }

    fn error(
        &mut self,
        at: At,
        kind: &str,
        elapsed_us: Option<u64>,
        reply: Option<&str>,
        substitute: Option<&str>,
    ) {
        self.errors.push(ErrorRecord {
            game: self.game,
            day: at.day,
            request: at.request.name().into(),
            turn: at.turn,
            agent: at.agent,
            name: self.names[at.agent - 1].clone(),
            kind: kind.into(),
            elapsed_us,
            reply: reply.map(cut),
            substitute: substitute.map(str::to_string),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_silences_for_the_game_and_owes_a_late_reply() {
        let mut l = Ledger::new(vec!["a".into(), "b".into()], 100);
        let at = At {
            day: 1,
            turn: 0,
            agent: 2,
            request: Request::Vote,
        };
        assert_eq!(
            l.heard(at, Heard::Line("{\"agentIdx\":1}", Some(150_000))),
            "ok"
        );
        assert_eq!(l.counts[1].slow, 1);
        assert_eq!(l.heard(at, Heard::Timeout(Some(1_000_000))), "timeout");
        assert!(l.silent[1] && l.owes(2));
        assert_eq!(l.stray(at, "late"), "late_line");
        assert_eq!(l.stray(at, "more"), "unsolicited");
        l.start(1);
        assert!(!l.silent[1]);
        assert_eq!(l.heard(at, Heard::NotRunning), "silent");
        assert_eq!(l.counts[1].silent_games, 2);
        let kinds: Vec<&str> = l.errors.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["slow", "timeout", "late_line", "unsolicited"]);
    }
}
