//! Werewolf: one step per phase (each day's opening whispers, talk, vote and night, and the
//! result), read from the AIWolf game log the replay carries (`log` events),
//! with each talk read into plain English, votes in rounds, the night's actions, the roles and
//! the winning team; reply times and errors from the seat record (`seat` events) and the
//! invalid replies as settled (`invalid` events).

use kakehiki_werewolf::talk::{self, Body, Channel, Utterance, Who};
use kakehiki_werewolf::{Role, Species};
use serde_json::{json, Value};

use super::{events, get_str, get_u64, panel, shape, Built, Panel, ViewError};

fn who(w: Who) -> String {
    match w {
        Who::Any => "anyone".into(),
        Who::Agent(0) => "anyone".into(),
        Who::Agent(n) => format!("Agent[{n:02}]"),
    }
}

fn role(r: Option<Role>) -> String {
    match r {
        None => "some role".into(),
        Some(r) => {
            let n = r.name().to_ascii_lowercase();
            let article = if n.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {n}")
        }
    }
}

fn species(s: Option<Species>) -> &'static str {
    match s {
        None => "of some species",
        Some(Species::Human) => "human",
        Some(Species::Werewolf) => "a werewolf",
    }
}

/// A plain-English reading of an utterance said by `speaker`.
pub fn english(u: &Utterance, speaker: &str) -> String {
    match u {
        Utterance::Skip => format!("{speaker} skips"),
        Utterance::Over => format!("{speaker} has nothing more to say"),
        Utterance::Sentence(s) => {
            let subject = s.subject.map(who).unwrap_or_else(|| speaker.to_string());
            body(&s.body, &subject)
        }
    }
}

fn clause(u: &Utterance) -> String {
    match u {
        Utterance::Skip => "skip".into(),
        Utterance::Over => "over".into(),
        Utterance::Sentence(s) => {
            let subject = s.subject.map(who).unwrap_or_else(|| "someone".into());
            body(&s.body, &subject)
        }
    }
}

fn body(b: &Body, subject: &str) -> String {
    match b {
        Body::Estimate(t, r) => format!("{subject} says {} is {}", who(*t), role(*r)),
        Body::Comingout(t, r) => {
            if t.agent().map(|n| format!("Agent[{n:02}]")).as_deref() == Some(subject) {
                format!("{subject} comes out as {}", role(*r))
            } else {
                format!("{subject} declares {} is {}", who(*t), role(*r))
            }
        }
        Body::Divined(t, s) => format!("{subject} divined {}: {}", who(*t), species(*s)),
        Body::Identified(t, s) => format!("{subject} identified {}: {}", who(*t), species(*s)),
        Body::Attack(t) => format!("{subject} wants to attack {}", who(*t)),
        Body::Attacked(t) => format!("{subject} attacked {}", who(*t)),
        Body::Divination(t) => format!("{subject} will divine {}", who(*t)),
        Body::Guard(t) => format!("{subject} will guard {}", who(*t)),
        Body::Guarded(t) => format!("{subject} guarded {}", who(*t)),
        Body::Vote(t) => format!("{subject} will vote for {}", who(*t)),
        Body::Voted(t) => format!("{subject} voted for {}", who(*t)),
        Body::Agree { channel, day, id } => format!(
            "{subject} agrees with {} {id} of day {day}",
            if *channel == Channel::Talk {
                "talk"
            } else {
                "whisper"
            }
        ),
        Body::Disagree { channel, day, id } => format!(
            "{subject} disagrees with {} {id} of day {day}",
            if *channel == Channel::Talk {
                "talk"
            } else {
                "whisper"
            }
        ),
        Body::Request(t, u) => match t {
            Some(t) => format!("{subject} asks {} to: {}", who(*t), clause(u)),
            None => format!("{subject} requests: {}", clause(u)),
        },
        Body::Inquire(t, u) => format!("{subject} asks {} whether: {}", who(*t), clause(u)),
        Body::Because(a, b) => format!("{subject}: {} because {}", clause(b), clause(a)),
        Body::Xor(a, b) => format!("{subject}: either {} or {}, not both", clause(a), clause(b)),
        Body::And(list) => format!(
            "{subject}: {}",
            list.iter().map(clause).collect::<Vec<_>>().join(", and ")
        ),
        Body::Or(list) => format!(
            "{subject}: {}",
            list.iter().map(clause).collect::<Vec<_>>().join(", or ")
        ),
        Body::Not(u) => format!("{subject}: it is not so that {}", clause(u)),
        Body::Day(d, u) => format!("{subject}, about day {d}: {}", clause(u)),
    }
}

fn reading(text: &str, agent: usize) -> String {
    let speaker = format!("Agent[{agent:02}]");
    match talk::parse(talk::trim_reply(text)) {
        Ok(u) => english(&u, &speaker),
        Err(e) => format!("{speaker} said something the protocol does not allow ({e})"),
    }
}

/// One phase of one day: its talk, its vote or its night.
#[derive(Default)]
struct Step {
    day: u64,
    /// `whisper` (whispers opening a day), `talk`, `vote`, `night` or `end` (the last day's
    /// dawn, with the result).
    phase: &'static str,
    /// Who is alive as the phase begins.
    alive: Vec<bool>,
    talk: Vec<Value>,
    whisper: Vec<Value>,
    votes: Vec<Vec<Value>>,
    attack_votes: Vec<Vec<Value>>,
    executed: Value,
    divined: Vec<Value>,
    guarded: Vec<Value>,
    attacked: Value,
    result: Value,
}

fn push_vote(rounds: &mut Vec<Vec<Value>>, agent: u64, target: i64) {
    let new_round = rounds
        .last()
        .is_none_or(|r| r.iter().any(|v| v["agent"] == json!(agent)));
    if new_round {
        rounds.push(Vec::new());
    }
    if let Some(r) = rounds.last_mut() {
        r.push(json!({"agent": agent, "target": target}));
    }
}

impl Step {
    fn value(self) -> Value {
        let title = if self.phase == "end" {
            format!("day {} result", self.day)
        } else {
            format!("day {} {}", self.day, self.phase)
        };
        json!({
            "title": title, "day": self.day, "phase": self.phase, "alive": self.alive,
            "talk": self.talk, "whisper": self.whisper, "votes": self.votes,
            "attack_votes": self.attack_votes, "executed": self.executed,
            "divined": self.divined, "guarded": self.guarded, "attacked": self.attacked,
            "result": self.result,
        })
    }
}

/// The phase a request belongs to (`TALK`: talk, `VOTE`: vote, the werewolves' and the seer's
/// and bodyguard's requests: night); `None` for the day's bookkeeping requests.
fn phase_of_request(request: &str) -> Option<&'static str> {
    match request.to_ascii_uppercase().as_str() {
        "TALK" => Some("talk"),
        "VOTE" => Some("vote"),
        "WHISPER" | "ATTACK" | "DIVINE" | "GUARD" => Some("night"),
        _ => None,
    }
}

/// The step an error of `day`'s `request` is listed on: that day's phase of the request, else
/// the day's first step, else the last step.
pub(super) fn step_of(steps: &[Value], day: u64, request: &str) -> usize {
    let phase = phase_of_request(request);
    steps
        .iter()
        .position(|s| s["day"] == day && phase.is_some_and(|p| s["phase"] == p))
        .or_else(|| steps.iter().position(|s| s["day"] == day))
        .unwrap_or(steps.len().saturating_sub(1))
}

/// The phases of a game read from its AIWolf-style game log lines (the 0.6 server's log, and the
/// natural-language server's `game_logger` lines, which share the format).
pub(super) struct LogReader {
    n: usize,
    pub(super) roles: Vec<String>,
    steps: Vec<Step>,
    /// The day being read and who is alive now.
    day: u64,
    alive: Vec<bool>,
    /// Read talk as the 0.6 protocol language (add a plain-English reading); the
    /// natural-language division's talk is free text, shown as said.
    protocol_talk: bool,
}

impl LogReader {
    pub(super) fn new(n: usize, protocol_talk: bool) -> LogReader {
        LogReader {
            n,
            roles: vec![String::new(); n],
            steps: Vec::new(),
            day: 0,
            alive: vec![true; n],
            protocol_talk,
        }
    }

    fn field(f: &[&str], i: usize, line: usize) -> Result<i64, ViewError> {
        f.get(i)
            .and_then(|x| x.parse::<i64>().ok())
            .ok_or_else(|| shape(line, format!("log field {} is not a number", i + 1)))
    }

    fn agent_ok(&self, a: i64, line: usize) -> Result<u64, ViewError> {
        let n = self.n;
        if a >= 1 && (a as usize) <= n {
            Ok(a as u64)
        } else {
            Err(shape(
                line,
                format!("agent {a} is not one of the {n} seats"),
            ))
        }
    }

    /// The step of `phase` on the day being read: the last step if it is that one, else a new
    /// step beginning with who is alive now.
    fn step(&mut self, phase: &'static str) -> &mut Step {
        let new = self
            .steps
            .last()
            .is_none_or(|s| s.day != self.day || s.phase != phase);
        if new {
            self.steps.push(Step {
                day: self.day,
                phase,
                alive: self.alive.clone(),
                ..Step::default()
            });
        }
        self.steps.last_mut().expect("a step was pushed")
    }

    /// Read one game-log line (`line` is the replay line it came from, for errors).
    pub(super) fn read(&mut self, text: &str, line: usize) -> Result<(), ViewError> {
        let field = Self::field;
        let f: Vec<&str> = text.splitn(6, ',').collect();
        self.day = field(&f, 0, line)? as u64;
        let kind = f.get(1).copied().unwrap_or("");
        // Agent numbers first (they borrow self), then the step.
        let a2 = || -> Result<u64, ViewError> { self.agent_ok(field(&f, 2, line)?, line) };
        let a4 = || -> Result<u64, ViewError> { self.agent_ok(field(&f, 4, line)?, line) };
        match kind {
            "status" => {
                let a = a2()? as usize;
                self.roles[a - 1] = f.get(3).unwrap_or(&"").to_string();
                self.alive[a - 1] = f.get(4) == Some(&"ALIVE");
            }
            k @ ("talk" | "whisper") => {
                let idx = field(&f, 2, line)?;
                let turn = field(&f, 3, line)?;
                let agent = a4()?;
                let said = f.get(5).copied().unwrap_or("");
                let english = if self.protocol_talk {
                    json!(reading(said, agent as usize))
                } else {
                    Value::Null
                };
                let entry = json!({"idx": idx, "turn": turn, "agent": agent, "text": said,
                                   "english": english});
                if k == "talk" {
                    self.step("talk").talk.push(entry)
                } else {
                    // Whispers that open a day (the werewolves' first words on day 0, before
                    // any talk) are a phase of their own; later ones belong to the night.
                    let opening = self
                        .steps
                        .last()
                        .is_none_or(|s| s.day != self.day || s.phase == "whisper");
                    let phase = if opening { "whisper" } else { "night" };
                    self.step(phase).whisper.push(entry)
                }
            }
            k @ ("vote" | "attackVote") => {
                let agent = a2()?;
                let target = field(&f, 3, line)?;
                let rounds = if k == "vote" {
                    &mut self.step("vote").votes
                } else {
                    &mut self.step("night").attack_votes
                };
                push_vote(rounds, agent, target);
            }
            "execute" => {
                let agent = a2()?;
                self.step("vote").executed = json!({"agent": agent, "role": f.get(3)});
                self.alive[agent as usize - 1] = false;
            }
            "divine" => {
                let v = json!({"seer": field(&f, 2, line)?, "target": field(&f, 3, line)?,
                               "species": f.get(4)});
                self.step("night").divined.push(v);
            }
            "identify" => {
                let v = json!({"medium": field(&f, 2, line)?, "target": field(&f, 3, line)?,
                               "species": f.get(4)});
                self.step("night").divined.push(v);
            }
            "guard" => {
                let v = json!({"bodyguard": field(&f, 2, line)?, "target": field(&f, 3, line)?,
                               "role": f.get(4)});
                self.step("night").guarded.push(v);
            }
            "attack" => {
                let target = field(&f, 2, line)?;
                // `-1`: nobody was attacked (the natural-language server writes `-1,true`).
                let success = target >= 1 && f.get(3) == Some(&"true");
                if success {
                    let a = self.agent_ok(target, line)?;
                    self.alive[a as usize - 1] = false;
                }
                self.step("night").attacked = json!({"target": target, "success": success});
            }
            "result" => {
                let v = json!({"humans": field(&f, 2, line)?,
                               "werewolves": field(&f, 3, line)?, "team": f.get(4)});
                self.step("end").result = v;
            }
            _ => {}
        }
        Ok(())
    }

    /// The steps (one per phase: each day's talk, vote and night, and the result).
    pub(super) fn steps(self) -> Vec<Value> {
        self.steps.into_iter().map(Step::value).collect()
    }
}

pub(super) fn build(p: &super::Replay, panels: &mut [Panel]) -> Result<Built, ViewError> {
    let n = panels.len();
    let mut log = LogReader::new(n, true);
    let mut result = Value::Null;
    // Errors are placed on their phase's step once the steps are known.
    let mut errors: Vec<(usize, u64, String, String, String)> = Vec::new();
    // The last reply of each seat, for the error of an invalid one.
    let mut last_raw: std::collections::HashMap<usize, Option<String>> = Default::default();
    let day_of = |at: &str| -> u64 {
        at.strip_prefix("day ")
            .and_then(|r| r.split(' ').next())
            .and_then(|d| d.parse().ok())
            .unwrap_or(0)
    };
    for (line, kind, v) in events(p) {
        match kind {
            "log" => log.read(get_str(v, "line", line)?, line)?,
            // The seat record: reply times, and every request that went wrong.
            "seat" => {
                let seat = get_u64(v, "seat", line)? as usize;
                let pn = panel(panels, seat, line)?;
                let outcome = v["outcome"].as_str().unwrap_or("");
                let at = v["at"].as_str().unwrap_or("");
                let request = v["kind"].as_str().unwrap_or("");
                last_raw.insert(seat, v["raw"].as_str().map(str::to_string));
                if outcome == "reply" || outcome == "sent" {
                    if let Some(us) = v["time_us"].as_u64() {
                        pn.time(us as f64 / 1000.0);
                    }
                    continue;
                }
                let detail = v["detail"].as_str().unwrap_or(outcome);
                errors.push((
                    seat,
                    day_of(at),
                    request.to_string(),
                    outcome.to_string(),
                    format!("{at} {request} request: {}", detail.replace('_', " ")),
                ));
            }
            "invalid" => {
                let seat = get_u64(v, "seat", line)? as usize;
                panel(panels, seat, line)?;
                let at = v["at"].as_str().unwrap_or("");
                let request = v["kind"].as_str().unwrap_or("");
                let got = match last_raw.get(&seat).cloned().flatten() {
                    Some(l) => format!("{l:?}"),
                    None => "nothing".into(),
                };
                errors.push((
                    seat,
                    day_of(at),
                    request.to_string(),
                    "invalid".into(),
                    format!(
                        "{at} {request} request: received {got}; used {:?}",
                        v["value"].as_str().unwrap_or("")
                    ),
                ));
            }
            "end" => {
                result = json!({"winner": v["winner"], "day": v["day"]});
            }
            _ => {}
        }
    }
    let names: Vec<Value> = p.header.params["names"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let roles = log.roles.clone();
    let steps = log.steps();
    if steps.is_empty() {
        return Err(shape(1, "the replay holds no game log"));
    }
    for (seat, day, request, kind, detail) in errors {
        panels[seat].error(step_of(&steps, day, &request), kind, detail);
    }
    if result.is_object() {
        result["roles"] = json!(roles);
    }
    Ok((
        "phase",
        steps.into(),
        result,
        json!({"roles": roles, "names": names}),
    ))
}
