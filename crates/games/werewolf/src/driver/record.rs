//! What a game leaves behind, as data and text: the replay's header and game events, the match
//! report, the game log's text and the new lines of `errors.jsonl` and `timings.jsonl`.

use std::collections::BTreeMap;

use kakehiki_core::replay::ReplayHeader;
use kakehiki_core::{MatchReport, Outcome, Score, SeatErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::config::LOCAL_KEYS;
use crate::ledger::Ledger;
use crate::{Role, Settled, Team, WEREWOLF_TYPE};

/// Replay format name.
pub const FORMAT: &str = "kakehiki/werewolf-replay@2";
/// The format before the seat record (replies as `reply` events); the driver upgrades it.
pub const FORMAT_V1: &str = "kakehiki/werewolf-replay@1";

/// The replay header's `params`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeaderParams {
    pub options: BTreeMap<String, String>,
    pub names: Vec<String>,
    /// Replies owed at the start of the game (a set's game after a timeout), when any.
    #[serde(default, skip_serializing_if = "owes_none")]
    pub owed: Vec<u32>,
}

fn owes_none(owed: &[u32]) -> bool {
    owed.iter().all(|&o| o == 0)
}

impl HeaderParams {
    /// The params of a replay's header, checked against its seats.
    pub fn read(h: &ReplayHeader) -> Result<HeaderParams, String> {
        let params: HeaderParams = serde_json::from_value(h.params.clone())
            .map_err(|e| format!("bad header params: {e}"))?;
        let n = h.seats.len();
        if params.names.len() != n || !WEREWOLF_TYPE.accepts_seats(n) || params.owed.len() > n {
            return Err(format!("{n} seats, {} names", params.names.len()));
        }
        Ok(params)
    }
}

/// The header of one game: seed, seats, names, the game's options (not the host's own) and the
/// replies owed at its start.
pub fn header(
    rules: &str,
    seed: u64,
    seats: &[String],
    ledger: &Ledger,
    options: &BTreeMap<String, String>,
) -> ReplayHeader {
    let options = options
        .iter()
        .filter(|(k, _)| !LOCAL_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let params = HeaderParams {
        options,
        names: ledger.names.clone(),
        owed: ledger.owed.clone(),
    };
    ReplayHeader::new(FORMAT, "werewolf", rules, seed, seats.to_vec(), &params)
}

/// A line of the AIWolf game log (§7).
#[derive(Serialize)]
pub struct LogLine<'a> {
    pub event: &'static str,
    pub line: &'a str,
}

/// A reply the engine could not use as given, and what it used instead.
#[derive(Serialize)]
pub struct Invalid<'a> {
    pub event: &'static str,
    pub seat: usize,
    pub at: &'a str,
    pub kind: &'a str,
    pub value: &'a str,
}

impl Invalid<'_> {
    /// The seat error it is: a seed-2015 rule violation or an invalid reply, and what was
    /// replied (`line`, cut at 200 characters) and used instead.
    ///
    /// A target the contest server takes the same way (a vote, divination or attack of an agent
    /// the rules refuse, or an empty reply to one: it votes at random, or divines or attacks no
    /// one, as this server does) is [`SeatErrorKind::Tolerated`]: the AIWolf 0.6 server counts
    /// it as no fault, and its own sample agents send some.
    pub fn fault(&self, line: Option<&str>, settled: &Settled) -> (SeatErrorKind, String) {
        let (kind, value) = (self.kind, self.value);
        let targeted = matches!(kind, "VOTE" | "DIVINE" | "ATTACK");
        let tolerated = !settled.rule_violation
            && targeted
            && !refused_target(kind, value).is_empty()
            && line.is_some_and(|l| {
                l.trim().is_empty() || crate::wire::parse_target(l, usize::MAX).is_some()
            });
        let fault = match (settled.rule_violation, tolerated) {
            (true, _) => SeatErrorKind::IllegalAction,
            (false, true) => SeatErrorKind::Tolerated,
            (false, false) => SeatErrorKind::InvalidReply,
        };
        let what = match settled.rule_violation {
            true => "outside this rule set's sentence templates",
            false => "invalid",
        };
        let mut detail = match line {
            Some(l) => {
                let reply: String = l.chars().take(200).collect();
                format!("{kind} reply {reply:?} is {what}: settled as {value:?}")
            }
            None => format!("no {kind} reply: settled as {value:?}"),
        };
        if !settled.rule_violation {
            // Any seat number the reply's form names ([`crate::wire::parse_target`], with no
            // upper bound: one past the table is refused the same way).
            match line.and_then(|l| crate::wire::parse_target(l, usize::MAX)) {
                // A readable agent the rules refused: say so, and what the contest server does.
                Some(agent) if matches!(kind, "VOTE" | "DIVINE" | "GUARD" | "ATTACK") => {
                    detail.push_str(&format!(
                        "; Agent[{agent:02}] cannot be chosen here (dead, yourself, or one the rules exclude){}",
                        refused_target(kind, &settled.value)
                    ));
                }
                _ if tolerated => {
                    detail.push_str(&format!("; an empty reply{}", refused_target(kind, value)));
                }
                _ => {
                    if let Some(hint) = expected(kind) {
                        detail.push_str("; ");
                        detail.push_str(hint);
                    }
                }
            }
        }
        (fault, detail)
    }
}

/// What the AIWolf 0.6 contest server does with a target its rules refuse, where the game
/// settled it the same way (`settled`: the target used, `-1` for none).
fn refused_target(kind: &str, settled: &str) -> &'static str {
    match (kind, settled) {
        ("VOTE", v) if v != "-1" => {
            ": the contest server, like this one, votes for a random other living agent instead"
        }
        ("DIVINE", "-1") => {
            ": the contest server, like this one, ignores it: no divination that night"
        }
        ("ATTACK", "-1") => {
            ": the contest server, like this one, ignores it: no attack vote from this werewolf"
        }
        _ => "",
    }
}

/// What a valid reply to a request of `kind` looks like, for an invalid one's message.
fn expected(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "TALK" | "WHISPER" => {
            "a talk is one sentence of the protocol (COMINGOUT Agent[01] SEER, VOTE Agent[03], \
             ESTIMATE Agent[02] WEREWOLF, ...) or Over or Skip, agents named with two digits"
        }
        "VOTE" | "DIVINE" | "GUARD" | "ATTACK" => {
            "the reply names one agent: {\"agentIdx\":3}, Agent[03] or 3 (not a sentence such as \
             VOTE Agent[03])"
        }
        _ => return None,
    })
}

/// The replay's last game event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndEvent {
    pub event: String,
    pub winner: String,
    pub day: u32,
}

/// What one game produced.
pub struct GameOutput {
    pub winner: Team,
    pub day: u32,
    pub roles: Vec<Role>,
    pub alive: Vec<bool>,
    /// The AIWolf game log (§7), lines without terminators.
    pub log: Vec<String>,
}

impl GameOutput {
    /// The replay's `end` event.
    pub fn end_event(&self) -> EndEvent {
        EndEvent {
            event: "end".into(),
            winner: self.winner.name().into(),
            day: self.day,
        }
    }

    /// The game log's text: each line with its terminator.
    pub fn log_text(&self) -> String {
        let mut text = String::with_capacity(self.log.iter().map(|l| l.len() + 1).sum());
        for l in &self.log {
            text.push_str(l);
            text.push('\n');
        }
        text
    }

    /// The match report of the game: 1 to each seat of the winning team, its role, team, name
    /// and counts.
    pub fn report(&self, rules: &str, seed: u64, seats: &[String], ledger: &Ledger) -> MatchReport {
        let scores: Vec<Score> = self
            .roles
            .iter()
            .map(|r| Score::from_integer(i64::from(r.team() == self.winner)))
            .collect();
        let outcome = Outcome {
            scores,
            winner: None,
        };
        let seats = seats.iter().map(|s| (s.clone(), Vec::new())).collect();
        let mut report = MatchReport::new("werewolf", rules, seed, &outcome, seats);
        report
            .extra
            .insert("winner_team".into(), json!(self.winner.name()));
        // A team game has no single winning seat (`winner` stays null): the seats of the winning
        // team, in seat order.
        let winner_seats: Vec<usize> = (0..self.roles.len())
            .filter(|&i| self.roles[i].team() == self.winner)
            .collect();
        report
            .extra
            .insert("winner_seats".into(), json!(winner_seats));
        report.extra.insert("days".into(), json!(self.day));
        for (i, s) in report.seats.iter_mut().enumerate() {
            s.extra.insert("agent".into(), json!(i + 1));
            s.extra.insert("name".into(), json!(ledger.names[i]));
            s.extra.insert("role".into(), json!(self.roles[i].name()));
            s.extra
                .insert("team".into(), json!(self.roles[i].team().name()));
            s.extra.insert("alive".into(), json!(self.alive[i]));
            let counts = serde_json::to_value(ledger.counts[i]).unwrap_or(Value::Null);
            s.extra.insert("counts".into(), counts);
        }
        report
    }
}

/// How much of a ledger's errors and timings has been written out.
#[derive(Debug, Default)]
pub struct Written {
    errors: usize,
    timings: usize,
}

impl Written {
    /// The lines new in `ledger` since the last call, as `(file name, text)`:
    /// `errors.jsonl` and `timings.jsonl` (§6.3), in that order.
    pub fn take_new(&mut self, ledger: &Ledger) -> [(&'static str, String); 2] {
        let new = [
            ("errors.jsonl", jsonl(&ledger.errors[self.errors..])),
            ("timings.jsonl", jsonl(&ledger.timings[self.timings..])),
        ];
        self.errors = ledger.errors.len();
        self.timings = ledger.timings.len();
        new
    }
}

fn jsonl<T: Serialize>(items: &[T]) -> String {
    let mut text = String::new();
    for i in items {
        text.push_str(&serde_json::to_string(i).unwrap_or_default());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod invalid_tests {
    use super::*;

    fn fault(kind: &str, line: Option<&str>, rule_violation: bool) -> String {
        let invalid = Invalid {
            event: "invalid",
            seat: 0,
            at: "day 1",
            kind,
            value: "-1",
        };
        let settled = Settled {
            value: "-1".into(),
            invalid: true,
            rule_violation,
        };
        invalid.fault(line, &settled).1
    }

    #[test]
    fn an_invalid_reply_is_quoted_plainly_with_what_was_expected() {
        let vote = fault("VOTE", Some("VOTE Agent[15]"), false);
        assert_eq!(
            vote,
            "VOTE reply \"VOTE Agent[15]\" is invalid: settled as \"-1\"; the reply names one \
             agent: {\"agentIdx\":3}, Agent[03] or 3 (not a sentence such as VOTE Agent[03])"
        );
        assert!(!vote.contains("Some("));
        let talk = fault("TALK", Some("ok"), false);
        assert!(talk.starts_with("TALK reply \"ok\" is invalid"), "{talk}");
        assert!(talk.contains("COMINGOUT Agent[01] SEER"), "{talk}");
        assert_eq!(
            fault("DIVINE", None, false).split(';').next().unwrap(),
            "no DIVINE reply: settled as \"-1\""
        );
        // A readable agent the rules refused: not a format error.
        assert_eq!(
            fault("DIVINE", Some("Agent[05]"), false),
            "DIVINE reply \"Agent[05]\" is invalid: settled as \"-1\"; Agent[05] cannot be chosen here \
             (dead, yourself, or one the rules exclude): the contest server, like this one, ignores \
             it: no divination that night"
        );
        assert!(fault("VOTE", Some("{\"agentIdx\":7}"), false).ends_with(
            "Agent[07] cannot be chosen here (dead, yourself, or one the rules exclude)"
        ));
        let seed = fault("TALK", Some("hello"), true);
        assert_eq!(
            seed,
            "TALK reply \"hello\" is outside this rule set's sentence templates: settled as \"-1\""
        );
    }

    /// The kind of a fault: `kind` replied `line`, the game used `value`.
    fn kind_of(kind: &str, line: Option<&str>, value: &str) -> (SeatErrorKind, String) {
        let invalid = Invalid {
            event: "invalid",
            seat: 0,
            at: "day 1",
            kind,
            value,
        };
        let settled = Settled {
            value: value.into(),
            invalid: true,
            rule_violation: false,
        };
        invalid.fault(line, &settled)
    }

    #[test]
    fn a_target_the_contest_server_takes_the_same_way_is_tolerated_not_a_fault() {
        use SeatErrorKind::{InvalidReply, Tolerated};
        // A dead (or own, or excluded) agent, or an empty reply: the AIWolf 0.6 server votes
        // at random, divines and attacks no one, as this one does.
        for (kind, line, value) in [
            ("DIVINE", "{\"agentIdx\":3}", "-1"),
            ("DIVINE", "", "-1"),
            ("VOTE", "Agent[02]", "4"),
            ("VOTE", "", "4"),
            ("ATTACK", "3", "-1"),
        ] {
            let (fault, detail) = kind_of(kind, Some(line), value);
            assert_eq!(fault, Tolerated, "{kind} {line:?}: {detail}");
            assert!(
                detail.contains("the contest server, like this one,"),
                "{detail}"
            );
        }
        assert!(kind_of("DIVINE", Some(""), "-1")
            .1
            .ends_with("; an empty reply: the contest server, like this one, ignores it: no divination that night"));
        // Not readable, no reply at all, or what the contest server would not take: faults.
        for (kind, line, value) in [
            ("DIVINE", Some("DIVINE Agent[03]"), "-1"),
            ("VOTE", Some("Agent[02]"), "-1"),
            ("DIVINE", None, "-1"),
            ("GUARD", Some("Agent[02]"), "-1"),
            ("TALK", Some(""), "Over"),
        ] {
            assert_eq!(
                kind_of(kind, line, value).0,
                InvalidReply,
                "{kind} {line:?}"
            );
        }
        assert!(!Tolerated.is_fault() && InvalidReply.is_fault());
    }
}
