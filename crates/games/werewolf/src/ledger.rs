//! The bookkeeping of §6 for a run of games: each seat's failure counts (§8.3), who is silenced
//! for the rest of a game, the late replies a seat still owes, what each seat was sent since its
//! last reply (to name the packet a stray line answered), and the lines of `errors.jsonl` and
//! `timings.jsonl` (§6.3). Pure: the referee tells it what happened to each request.

use std::collections::VecDeque;

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

impl At {
    /// The game's label of the moment (`day 1 talk 3`, `day 2`), as the seat record has it.
    pub fn label(&self) -> String {
        crate::wire::label(self.day, self.request.name(), self.turn)
    }
}

/// The requests that ask for a reply, as a contestant reads them in a diagnosis.
pub const REPLY_REQUESTS: &str = "NAME, ROLE, TALK, WHISPER, VOTE, ATTACK, DIVINE and GUARD";

/// What one seat was sent since the last reply read from it, in this game: the request that reply
/// answered and the packets that ask for no reply sent after it which no stray line has answered
/// yet. A line that arrives while no reply is outstanding is matched against it ([`Ledger::stray`]).
#[derive(Debug, Clone, Default)]
struct Window {
    /// The request whose reply was read last, and how many more lines the seat sent for it.
    answered: Option<(At, u32)>,
    /// Packets that ask for no reply, sent since, not yet answered by a stray line.
    unanswered: VecDeque<At>,
}

/// How one seat has strayed in the current game.
#[derive(Debug, Clone, Copy, Default)]
struct Strayed {
    /// It answered a packet that asks for no reply.
    notification: bool,
    /// It answered a request a second time.
    twice: bool,
    /// After that, a reply of its was read while packets that ask for none were unanswered: it
    /// may be its answer to one of them, and the bot one behind from then on.
    behind: bool,
}

/// A line a seat sent while no reply was outstanding, as the ledger recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// `late_line` (a reply owed after a timeout) or `unsolicited`.
    pub kind: &'static str,
    /// The packet it followed: the one it answered, as far as the ledger can tell (else the
    /// moment it was seen).
    pub at: At,
    /// What the contestant reads: what the bot did, where, and the fix.
    pub detail: String,
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
    /// What each seat was sent since its last reply, in the current game.
    windows: Vec<Window>,
    /// How each seat has strayed in the current game.
    strayed: Vec<Strayed>,
}

fn cut(s: &str) -> String {
    s.chars().take(200).collect()
}

/// A stray line as quoted in a diagnosis: cut at 200 characters.
fn quoted(line: &str) -> String {
    format!("{:?}", cut(line))
}

impl Ledger {
    pub fn new(names: Vec<String>, contest_limit_ms: u64) -> Ledger {
        let n = names.len();
        let mut ledger = Ledger {
            contest_limit_us: contest_limit_ms * 1000,
            names,
            counts: vec![Counts::default(); n],
            owed: vec![0; n],
            silent: vec![false; n],
            ..Ledger::default()
        };
        ledger.start(0);
        ledger
    }

    /// Game `game` begins: nobody is silenced, and nothing was sent to anyone in it yet (a game
    /// re-runs alone from its replay, so nothing of an earlier game counts). Before a run's first
    /// game every seat has answered NAME; before a later one, the last game's packets.
    pub fn start(&mut self, game: u32) {
        self.game = game;
        self.silent.fill(false);
        self.windows = (1..=self.names.len())
            .map(|agent| Window {
                answered: (game == 0).then_some((
                    At {
                        day: 0,
                        turn: 0,
                        agent,
                        request: Request::Name,
                    },
                    0,
                )),
                unanswered: VecDeque::new(),
            })
            .collect();
        self.strayed = vec![Strayed::default(); self.names.len()];
    }

    /// A packet that asks for no reply (INITIALIZE, DAILY_INITIALIZE, ...) was delivered.
    pub fn told(&mut self, at: At) {
        if let Some(w) = self.windows.get_mut(at.agent - 1) {
            w.unanswered.push_back(at);
        }
    }

    /// The seat's reply to `at` was read (valid or not): what it was sent before no longer
    /// waits for an answer.
    pub fn answered(&mut self, at: At) {
        if let Some(w) = self.windows.get_mut(at.agent - 1) {
            let strayed = &mut self.strayed[at.agent - 1];
            strayed.behind |= strayed.notification && !w.unanswered.is_empty();
            *w = Window {
                answered: Some((at, 0)),
                unanswered: VecDeque::new(),
            };
        }
    }

    /// Whether the seat was sent packets that ask for no reply since its last reply and has not
    /// answered them with stray lines: if it answers every packet, its next lines are those
    /// answers, not the reply to the request now.
    pub fn awaits_strays(&self, agent: usize) -> bool {
        self.windows
            .get(agent - 1)
            .is_some_and(|w| !w.unanswered.is_empty())
    }

    /// The note an invalid reply of `agent` ends with when it is likely an answer to an earlier
    /// packet: the seat answered a packet that asks for no reply earlier in this game, and
    /// packets of that kind sent since its last reply were still unanswered when this one came,
    /// or when an earlier one came (it has been one behind since).
    pub fn behind_note(&self, agent: usize) -> Option<&'static str> {
        let strayed = self.strayed.get(agent - 1)?;
        (strayed.notification && (strayed.behind || self.awaits_strays(agent)))
            .then_some("(one behind: your bot answered an earlier packet that asks for no reply)")
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

    /// A line seat `now.agent` sent while no reply was outstanding, seen at `now` (the request
    /// or packet about to be sent): `late_line` while a reply is owed (after a timeout), else
    /// `unsolicited`, matched to the packet it answered. Lines are matched in order: each to the
    /// earliest packet that asks for no reply sent since the seat's last reply and not answered
    /// yet (a bot that answers every packet); when there is none, it is a second reply to the
    /// request answered last. The first of each kind in a game says what is wrong and the fix.
    pub fn stray(&mut self, now: At, line: &str) -> Stray {
        let a = now.agent - 1;
        if self.owed[a] > 0 {
            self.owed[a] -= 1;
            self.error(now, "late_line", None, Some(line), None);
            let detail = format!(
                "late_line: {} arrived while no reply was outstanding; discarded",
                quoted(line)
            );
            return Stray {
                kind: "late_line",
                at: now,
                detail,
            };
        }
        let (w, strayed) = (&mut self.windows[a], &mut self.strayed[a]);
        let (at, detail) = if let Some(packet) = w.unanswered.pop_front() {
            let kind = packet.request.name();
            let detail = match std::mem::replace(&mut strayed.notification, true) {
                false => format!(
                    "your bot replied {} to {kind}, which asks for no reply (only {REPLY_REQUESTS} \
                     do); every later reply is one behind: reply only to those requests",
                    quoted(line)
                ),
                true => format!(
                    "your bot replied {} to {kind}, which asks for no reply: discarded",
                    quoted(line)
                ),
            };
            (packet, detail)
        } else if let Some((request, extra)) = &mut w.answered {
            *extra += 1;
            let kind = request.request.name();
            let which = match *extra {
                1 => "a second",
                _ => "another",
            };
            let detail = match std::mem::replace(&mut strayed.twice, true) {
                false => format!(
                    "your bot sent {which} reply {} to {kind}, which it had already answered; \
                     every later reply is one behind: send exactly one line per request",
                    quoted(line)
                ),
                true => format!(
                    "your bot sent {which} reply {} to {kind}, which it had already answered: \
                     discarded",
                    quoted(line)
                ),
            };
            (*request, detail)
        } else {
            let detail = format!(
                "your bot sent {} before this game's first packet, while no reply was \
                 outstanding (a late answer to the last game's): discarded",
                quoted(line)
            );
            (now, detail)
        };
        self.error(at, "unsolicited", None, Some(line), None);
        Stray {
            kind: "unsolicited",
            at,
            detail,
        }
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
        assert_eq!(l.stray(at, "late").kind, "late_line");
        assert_eq!(l.stray(at, "more").kind, "unsolicited");
        l.start(1);
        assert!(!l.silent[1]);
        assert_eq!(l.heard(at, Heard::NotRunning), "silent");
        assert_eq!(l.counts[1].silent_games, 2);
        let kinds: Vec<&str> = l.errors.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["slow", "timeout", "late_line", "unsolicited"]);
    }

    fn at(day: u32, turn: u32, request: Request) -> At {
        At {
            day,
            turn,
            agent: 1,
            request,
        }
    }

    /// A bot that answers every packet: each stray line is its answer to the next packet that
    /// asks for none, the first says what is wrong and the fix, and each is recorded at its
    /// packet's place.
    #[test]
    fn stray_lines_of_a_bot_that_answers_every_packet_name_the_packets_in_order() {
        let mut l = Ledger::new(vec!["zoo".into(), "b".into()], 100);
        let packets = [
            at(0, 0, Request::Initialize),
            at(0, 0, Request::DailyInitialize),
            at(0, 0, Request::DailyFinish),
            at(1, 0, Request::DailyInitialize),
        ];
        for p in packets {
            l.told(p);
        }
        assert!(l.awaits_strays(1) && !l.awaits_strays(2));
        let talk = at(1, 0, Request::Talk);
        let first = l.stray(talk, "ok");
        assert_eq!(
            (first.kind, first.at.label(), first.detail.as_str()),
            (
                "unsolicited",
                "day 0".to_string(),
                "your bot replied \"ok\" to INITIALIZE, which asks for no reply (only NAME, ROLE, \
                 TALK, WHISPER, VOTE, ATTACK, DIVINE and GUARD do); every later reply is one \
                 behind: reply only to those requests"
            )
        );
        let rest: Vec<(String, String)> = ["ok", "ok", "ok"]
            .iter()
            .map(|line| {
                let s = l.stray(talk, line);
                (s.at.label(), s.detail)
            })
            .collect();
        let said = |kind: &str| {
            format!("your bot replied \"ok\" to {kind}, which asks for no reply: discarded")
        };
        assert_eq!(
            rest,
            [
                ("day 0".to_string(), said("DAILY_INITIALIZE")),
                ("day 0".to_string(), said("DAILY_FINISH")),
                ("day 1".to_string(), said("DAILY_INITIALIZE")),
            ]
        );
        assert!(!l.awaits_strays(1));
        // errors.jsonl records each at its packet.
        let requests: Vec<(u32, &str)> = l
            .errors
            .iter()
            .map(|e| (e.day, e.request.as_str()))
            .collect();
        assert_eq!(
            requests,
            [
                (0, "INITIALIZE"),
                (0, "DAILY_INITIALIZE"),
                (0, "DAILY_FINISH"),
                (1, "DAILY_INITIALIZE")
            ]
        );
        assert!(l
            .errors
            .iter()
            .all(|e| e.kind == "unsolicited" && e.reply.as_deref() == Some("ok")));
    }

    /// With no packet left unanswered, a stray line is a second reply to the request answered
    /// last: NAME before the first game's first packet.
    #[test]
    fn a_stray_line_with_nothing_unanswered_is_a_second_reply() {
        let mut l = Ledger::new(vec!["chatty".into()], 100);
        let init = at(0, 0, Request::Initialize);
        let s = l.stray(init, "hello");
        assert_eq!(
            (s.at.request, s.at.label(), s.detail.as_str()),
            (
                Request::Name,
                "day 0".to_string(),
                "your bot sent a second reply \"hello\" to NAME, which it had already answered; \
                 every later reply is one behind: send exactly one line per request"
            )
        );
        let talk = at(1, 3, Request::Talk);
        l.answered(talk);
        let s = l.stray(at(1, 4, Request::Talk), "Over");
        assert_eq!(
            (s.at.label(), s.detail.as_str()),
            (
                "day 1 talk 3".to_string(),
                "your bot sent a second reply \"Over\" to TALK, which it had already answered: \
                 discarded"
            )
        );
        let s = l.stray(at(1, 4, Request::Talk), "Over");
        assert!(s.detail.starts_with("your bot sent another reply"), "{s:?}");
        // A later game of a run: nothing was asked in it yet.
        l.start(1);
        let s = l.stray(init, "x");
        assert_eq!(s.at, init);
        assert!(
            s.detail.contains("before this game's first packet"),
            "{s:?}"
        );
    }

    /// An invalid reply is said to be one behind only from a seat that answered a packet that
    /// asks for no reply earlier in the game, while such packets were still unanswered.
    #[test]
    fn the_one_behind_note_needs_an_earlier_answer_to_a_packet_that_asks_for_none() {
        let mut l = Ledger::new(vec!["a".into()], 100);
        l.told(at(0, 0, Request::Initialize));
        assert_eq!(l.behind_note(1), None, "no stray line yet");
        l.told(at(0, 0, Request::DailyInitialize));
        l.stray(at(1, 0, Request::Talk), "ok");
        assert_eq!(
            l.behind_note(1),
            Some("(one behind: your bot answered an earlier packet that asks for no reply)")
        );
        l.stray(at(1, 0, Request::Talk), "ok");
        l.answered(at(1, 0, Request::Talk));
        assert_eq!(l.behind_note(1), None, "caught up: its own mistake");
        // A reply read while a packet that asks for none was unanswered: one behind since.
        l.told(at(1, 0, Request::DailyFinish));
        l.answered(at(1, 0, Request::Vote));
        l.answered(at(1, 0, Request::Divine));
        assert!(l.behind_note(1).is_some());
        l.start(1);
        l.told(at(0, 0, Request::Initialize));
        assert_eq!(l.behind_note(1), None, "a new game");
    }
}
