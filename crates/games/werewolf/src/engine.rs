//! The rules engine: a step machine over the game flow of §2 (aiwolf-0.6) and §3 (seed-2015).
//!
//! The engine stops at every request: [`Werewolf::pending`] says which. A reply-expecting request
//! ([`Pending::Ask`]) is answered with [`Werewolf::reply`]; a broadcast ([`Pending::Notify`]) is
//! acknowledged with [`Werewolf::ack`] once it has been delivered. Between two stops the state is
//! exactly what the packets of the stop must show, so the wire layer builds them from it.

use rand_chacha::ChaCha8Rng;

use crate::rng::{self, pick, shuffle};
use crate::settings::{RuleSet, Settings, SettingsError, WinCount};
use crate::talk;
use crate::talk::Talk;
use crate::types::{Judge, Request, Role, Species, Status, Team, Vote};

/// What the engine waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    /// A reply-expecting request to one agent (1-based agent number).
    Ask { agent: usize, request: Request },
    /// A broadcast to every seat (ascending; INITIALIZE in deal order), then [`Werewolf::ack`].
    Notify(Request),
    /// The game is over and FINISH has been delivered.
    Done,
}

/// An agent's answer to an [`Pending::Ask`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// No answer: timeout, disconnect, or an agent silenced earlier in the game.
    Silent,
    /// A text reply (TALK, WHISPER, ROLE), as received (the engine trims it).
    Text(String),
    /// A target reply: the agent number it named, or `None` if none could be read from it.
    Target(Option<usize>),
}

/// How a reply was settled, for the error records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The value used (talk text, target number, `-1` for none, role or `none`).
    pub value: String,
    /// A reply was given but could not be used as given.
    pub invalid: bool,
    /// seed-2015: talk outside the templates (a rule violation of the seed).
    pub rule_violation: bool,
}

impl Settled {
    /// How a target request was settled: the target used (`-1` for none); never a rule violation.
    fn target(target: Option<usize>, invalid: bool) -> Settled {
        Settled {
            value: target.map_or("-1".into(), |t| t.to_string()),
            invalid,
            rule_violation: false,
        }
    }
}

/// Misuse of the step API (a driver bug, never an agent's fault).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    #[error("no reply is awaited now (pending: {0})")]
    NotAwaitingReply(String),
    #[error("no broadcast is pending now (pending: {0})")]
    NotAwaitingAck(String),
    #[error("{got} agent names given for {expected} players")]
    Names { expected: usize, got: usize },
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    DailyInit,
    Talk,
    Whisper,
    DailyFinish,
    Vote,
    Divine,
    Guard,
    Attack,
    Dawn,
}

#[derive(Debug, Clone)]
enum Then {
    Script,
    ResumeTalk(Box<Session>),
    AttackRound(u32),
}

#[derive(Debug, Clone)]
struct Session {
    whisper: bool,
    turn: u32,
    order: Vec<usize>,
    pos: usize,
    participants: Vec<usize>,
    /// Skip streak per agent (index agent − 1).
    skip: Vec<u32>,
    all_over: bool,
    then: Then,
}

#[derive(Debug, Clone)]
enum Act {
    Role {
        pos: usize,
    },
    Initialize,
    DailyInitialize,
    Session(Box<Session>),
    DailyFinish,
    Vote {
        round: u32,
        pos: usize,
        voters: Vec<usize>,
        votes: Vec<Vote>,
    },
    Divine {
        seer: usize,
    },
    Guard {
        bodyguard: usize,
    },
    Attack {
        round: u32,
        pos: usize,
        wolves: Vec<usize>,
        votes: Vec<Vote>,
    },
    Finish,
    Done,
    /// Internal: continue with the day's script.
    Next,
}

struct Streams {
    talk: ChaCha8Rng,
    whisper: ChaCha8Rng,
    substitute: ChaCha8Rng,
    tie: ChaCha8Rng,
}

/// One game of Werewolf.
pub struct Werewolf {
    settings: Settings,
    seed: u64,
    n: usize,
    names: Vec<String>,
    roles: Vec<Role>,
    alive: Vec<bool>,
    deal_order: Vec<usize>,
    requested: Vec<Option<Role>>,
    day: u32,
    talks: Vec<Talk>,
    whispers: Vec<Talk>,
    remain_talk: Vec<Option<u32>>,
    remain_whisper: Vec<Option<u32>>,
    executed_prev: Option<usize>,
    executed_today: Option<usize>,
    votes_prev: Vec<Vote>,
    votes_latest: Vec<Vote>,
    attack_votes_prev: Vec<Vote>,
    attack_votes_latest: Vec<Vote>,
    attacked_prev: Option<usize>,
    guarded_prev: Option<usize>,
    last_dead: Vec<usize>,
    divine_result: Option<Judge>,
    medium_target: Option<(usize, Species)>,
    divined_tonight: Option<(usize, usize)>,
    guard_tonight: Option<usize>,
    attack_tonight: Option<usize>,
    victim_tonight: Option<usize>,
    script: Vec<Step>,
    pc: usize,
    act: Act,
    rng: Streams,
    winner: Option<Team>,
    log: Vec<String>,
    log_on: bool,
    existing_roles: Vec<Role>,
}

fn sanitize_name(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

impl Werewolf {
    /// A new game. `names` are the agents' names in agent-number order (used in the log).
    pub fn new(settings: Settings, seed: u64, names: Vec<String>) -> Result<Werewolf, EngineError> {
        settings.validate()?;
        let n = settings.player_num();
        if names.len() != n {
            return Err(EngineError::Names {
                expected: n,
                got: names.len(),
            });
        }
        let mut deal_order: Vec<usize> = (1..=n).collect();
        shuffle(&mut rng::stream(seed, rng::STREAM_DEAL), &mut deal_order);
        let mut g = Werewolf {
            n,
            names: names.iter().map(|s| sanitize_name(s)).collect(),
            roles: vec![Role::Villager; n],
            alive: vec![true; n],
            deal_order,
            requested: vec![None; n],
            day: 0,
            talks: Vec::new(),
            whispers: Vec::new(),
            remain_talk: vec![Some(settings.max_talk); n],
            remain_whisper: vec![None; n],
            executed_prev: None,
            executed_today: None,
            votes_prev: Vec::new(),
            votes_latest: Vec::new(),
            attack_votes_prev: Vec::new(),
            attack_votes_latest: Vec::new(),
            attacked_prev: None,
            guarded_prev: None,
            last_dead: Vec::new(),
            divine_result: None,
            medium_target: None,
            divined_tonight: None,
            guard_tonight: None,
            attack_tonight: None,
            victim_tonight: None,
            script: Vec::new(),
            pc: 0,
            act: Act::Done,
            rng: Streams {
                talk: rng::stream(seed, rng::STREAM_TALK),
                whisper: rng::stream(seed, rng::STREAM_WHISPER),
                substitute: rng::stream(seed, rng::STREAM_SUBSTITUTE),
                tie: rng::stream(seed, rng::STREAM_TIE),
            },
            winner: None,
            log: Vec::new(),
            log_on: true,
            existing_roles: settings.existing_roles(),
            seed,
            settings,
        };
        if g.settings.enable_role_request && g.settings.rule_set == RuleSet::Aiwolf06 {
            g.act = Act::Role { pos: 0 };
        } else {
            g.deal();
        }
        Ok(g)
    }

    /// Turn the game log off (benchmarks); on by default.
    pub fn set_logging(&mut self, on: bool) {
        self.log_on = on;
    }

    // ----- accessors -------------------------------------------------------------------------

    /// Roles with count > 0, sorted by wire name (`existingRoleList`).
    pub fn existing_roles(&self) -> &[Role] {
        &self.existing_roles
    }
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn player_num(&self) -> usize {
        self.n
    }
    pub fn names(&self) -> &[String] {
        &self.names
    }
    pub fn day(&self) -> u32 {
        self.day
    }
    /// Seats in deal order (INITIALIZE goes out in this order).
    pub fn deal_order(&self) -> &[usize] {
        &self.deal_order
    }
    /// The role of an agent (1-based). Hidden information: for referees, never for seats.
    pub fn role(&self, agent: usize) -> Role {
        self.roles[agent - 1]
    }
    pub fn roles(&self) -> &[Role] {
        &self.roles
    }
    pub fn is_alive(&self, agent: usize) -> bool {
        self.alive[agent - 1]
    }
    pub fn status(&self, agent: usize) -> Status {
        if self.alive[agent - 1] {
            Status::Alive
        } else {
            Status::Dead
        }
    }
    pub fn winner(&self) -> Option<Team> {
        self.winner
    }
    pub fn is_over(&self) -> bool {
        matches!(self.act, Act::Done)
    }
    /// Lines of the game log written so far (§7), without line ends.
    pub fn log(&self) -> &[String] {
        &self.log
    }
    /// Take the log lines written so far.
    pub fn drain_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log)
    }
    pub fn talks(&self) -> &[Talk] {
        &self.talks
    }
    pub fn whispers(&self) -> &[Talk] {
        &self.whispers
    }
    pub fn executed_today(&self) -> Option<usize> {
        self.executed_today
    }
    /// Whether a completed vote round of today exists (the next VOTE is a revote).
    pub fn has_latest_votes(&self) -> bool {
        !self.votes_latest.is_empty()
    }
    pub fn has_latest_attack_votes(&self) -> bool {
        !self.attack_votes_latest.is_empty()
    }

    /// The talk/whisper turn or the vote/attack round of the pending request (0 otherwise).
    pub fn turn(&self) -> u32 {
        match &self.act {
            Act::Session(s) => s.turn,
            Act::Vote { round, .. } | Act::Attack { round, .. } => *round,
            _ => 0,
        }
    }

    /// Whether `agent` may see whispers, the wolves' roles and attack votes.
    pub fn is_wolf(&self, agent: usize) -> bool {
        self.roles[agent - 1] == Role::Werewolf
    }

    // ----- raw state for the observation builder ----------------------------------------------

    pub(crate) fn remain_talk(&self) -> &[Option<u32>] {
        &self.remain_talk
    }
    pub(crate) fn remain_whisper(&self) -> &[Option<u32>] {
        &self.remain_whisper
    }
    pub(crate) fn executed_prev(&self) -> Option<usize> {
        self.executed_prev
    }
    pub(crate) fn votes_prev(&self) -> &[Vote] {
        &self.votes_prev
    }
    pub(crate) fn votes_latest(&self) -> &[Vote] {
        &self.votes_latest
    }
    pub(crate) fn attack_votes_prev(&self) -> &[Vote] {
        &self.attack_votes_prev
    }
    pub(crate) fn attack_votes_latest(&self) -> &[Vote] {
        &self.attack_votes_latest
    }
    pub(crate) fn attacked_prev(&self) -> Option<usize> {
        self.attacked_prev
    }
    pub(crate) fn guarded_prev(&self) -> Option<usize> {
        self.guarded_prev
    }
    pub(crate) fn last_dead(&self) -> &[usize] {
        &self.last_dead
    }
    pub(crate) fn divine_result(&self) -> Option<Judge> {
        self.divine_result
    }
    pub(crate) fn medium_target(&self) -> Option<(usize, Species)> {
        self.medium_target
    }

    // ----- the step API ------------------------------------------------------------------------

    /// What the engine waits for now.
    pub fn pending(&self) -> Pending {
        match &self.act {
            Act::Role { pos } => Pending::Ask {
                agent: self.deal_order[*pos],
                request: Request::Role,
            },
            Act::Initialize => Pending::Notify(Request::Initialize),
            Act::DailyInitialize => Pending::Notify(Request::DailyInitialize),
            Act::Session(s) => Pending::Ask {
                agent: s.order[s.pos],
                request: if s.whisper {
                    Request::Whisper
                } else {
                    Request::Talk
                },
            },
            Act::DailyFinish => Pending::Notify(Request::DailyFinish),
            Act::Vote { pos, voters, .. } => Pending::Ask {
                agent: voters[*pos],
                request: Request::Vote,
            },
            Act::Divine { seer } => Pending::Ask {
                agent: *seer,
                request: Request::Divine,
            },
            Act::Guard { bodyguard } => Pending::Ask {
                agent: *bodyguard,
                request: Request::Guard,
            },
            Act::Attack { pos, wolves, .. } => Pending::Ask {
                agent: wolves[*pos],
                request: Request::Attack,
            },
            Act::Finish => Pending::Notify(Request::Finish),
            Act::Done | Act::Next => Pending::Done,
        }
    }

    /// Acknowledge a delivered broadcast.
    pub fn ack(&mut self) -> Result<(), EngineError> {
        match self.act {
            Act::Initialize => self.start_day(),
            Act::DailyInitialize | Act::DailyFinish => {
                self.pc += 1;
                self.act = Act::Next;
                self.run();
            }
            Act::Finish => self.act = Act::Done,
            _ => return Err(EngineError::NotAwaitingAck(format!("{:?}", self.pending()))),
        }
        Ok(())
    }

    /// Answer the pending [`Pending::Ask`].
    pub fn reply(&mut self, reply: Reply) -> Result<Settled, EngineError> {
        let act = std::mem::replace(&mut self.act, Act::Next);
        let settled = match act {
            Act::Role { pos } => self.on_role(pos, reply),
            Act::Session(s) => self.on_talk(s, reply),
            Act::Vote {
                round,
                pos,
                voters,
                votes,
            } => self.on_vote(round, pos, voters, votes, reply),
            Act::Divine { seer } => self.on_divine(seer, reply),
            Act::Guard { bodyguard } => self.on_guard(bodyguard, reply),
            Act::Attack {
                round,
                pos,
                wolves,
                votes,
            } => self.on_attack(round, pos, wolves, votes, reply),
            other => {
                self.act = other;
                return Err(EngineError::NotAwaitingReply(format!(
                    "{:?}",
                    self.pending()
                )));
            }
        };
        self.run();
        Ok(settled)
    }

    // ----- start ------------------------------------------------------------------------------

    fn on_role(&mut self, pos: usize, reply: Reply) -> Settled {
        let agent = self.deal_order[pos];
        let mut settled = Settled {
            value: "none".into(),
            invalid: false,
            rule_violation: false,
        };
        match reply {
            Reply::Text(t) => {
                let t = talk::trim_reply(&t).to_ascii_uppercase();
                match Role::from_name(&t) {
                    Some(r) => {
                        let taken = self.requested.iter().filter(|x| **x == Some(r)).count();
                        if taken < self.settings.count(r) {
                            self.requested[agent - 1] = Some(r);
                            settled.value = r.name().into();
                        }
                    }
                    None => settled.invalid = t != "NONE" && t != "ANY",
                }
            }
            Reply::Target(_) => settled.invalid = true,
            Reply::Silent => {}
        }
        if pos + 1 < self.n {
            self.act = Act::Role { pos: pos + 1 };
        } else {
            self.deal();
        }
        settled
    }

    fn deal(&mut self) {
        let mut pool = self
            .deal_order
            .iter()
            .copied()
            .filter(|a| self.requested[a - 1].is_none());
        for role in Role::FILL_ORDER {
            let mut requesters = self
                .deal_order
                .iter()
                .copied()
                .filter(|a| self.requested[a - 1] == Some(role));
            for _ in 0..self.settings.count(role) {
                if let Some(a) = requesters.next().or_else(|| pool.next()) {
                    self.roles[a - 1] = role;
                }
            }
        }
        for a in 1..=self.n {
            if self.is_wolf(a) {
                self.remain_whisper[a - 1] = Some(self.settings.max_whisper);
            }
        }
        self.act = Act::Initialize;
    }

    // ----- days -------------------------------------------------------------------------------

    fn alive_agents(&self) -> Vec<usize> {
        (1..=self.n).filter(|&a| self.alive[a - 1]).collect()
    }

    /// The first living agent with `role`.
    fn alive_with_role(&self, role: Role) -> Option<usize> {
        (1..=self.n).find(|&a| self.alive[a - 1] && self.roles[a - 1] == role)
    }

    fn alive_wolves(&self) -> Vec<usize> {
        (1..=self.n)
            .filter(|&a| self.alive[a - 1] && self.is_wolf(a))
            .collect()
    }

    fn push_log(&mut self, line: String) {
        if self.log_on {
            self.log.push(line);
        }
    }

    /// One log line per ballot of a vote or attack-vote round: `day,kind,agent,target`.
    fn log_votes(&mut self, kind: &str, votes: &[Vote]) {
        for v in votes {
            let line = format!("{},{kind},{},{}", self.day, v.agent, v.target);
            self.push_log(line);
        }
    }

    fn counts(&self) -> (usize, usize) {
        let alive = self.alive_agents();
        let wolves = alive
            .iter()
            .filter(|&&a| self.roles[a - 1].species() == Species::Werewolf)
            .count();
        (alive.len() - wolves, wolves)
    }

    fn win_check(&self) -> Option<Team> {
        let (humans, wolves) = self.counts();
        if wolves == 0 {
            return Some(Team::Villager);
        }
        let lost = match self.settings.win_count {
            WinCount::Species => humans <= wolves,
            WinCount::Team => {
                let alive = self.alive_agents();
                let v = alive
                    .iter()
                    .filter(|&&a| self.roles[a - 1].team() == Team::Villager)
                    .count();
                let w = alive
                    .iter()
                    .filter(|&&a| self.roles[a - 1].team() == Team::Werewolf)
                    .count();
                v <= w
            }
        };
        lost.then_some(Team::Werewolf)
    }

    fn log_status(&mut self) {
        for a in 1..=self.n {
            let line = format!(
                "{},status,{},{},{},{}",
                self.day,
                a,
                self.roles[a - 1].name(),
                self.status(a).name(),
                self.names[a - 1]
            );
            self.push_log(line);
        }
    }

    /// The win check, then day `self.day` begins (or the game finishes).
    fn start_day(&mut self) {
        if let Some(team) = self.win_check() {
            self.winner = Some(team);
            self.log_status();
            let (h, w) = self.counts();
            let line = format!("{},result,{},{},{}", self.day, h, w, team.name());
            self.push_log(line);
            self.act = Act::Finish;
            return;
        }
        self.log_status();
        use Step::*;
        let d0 = self.day == 0;
        self.script = match (self.settings.rule_set, d0) {
            (RuleSet::Aiwolf06, true) if self.settings.talk_on_first_day => {
                vec![DailyInit, Whisper, Talk, DailyFinish, Divine, Dawn]
            }
            (RuleSet::Aiwolf06, true) => vec![DailyInit, DailyFinish, Whisper, Divine, Dawn],
            (RuleSet::Aiwolf06, false) => vec![
                DailyInit,
                Talk,
                DailyFinish,
                Vote,
                Divine,
                Whisper,
                Guard,
                Attack,
                Dawn,
            ],
            (RuleSet::Seed2015, true) => vec![DailyInit, Talk, DailyFinish, Divine, Dawn],
            (RuleSet::Seed2015, false) => vec![
                DailyInit,
                Talk,
                DailyFinish,
                Vote,
                Divine,
                Guard,
                Attack,
                Dawn,
            ],
        };
        self.pc = 0;
        self.act = Act::Next;
        self.run();
    }

    /// Advance through steps that need nobody until the next stop.
    fn run(&mut self) {
        while matches!(self.act, Act::Next) {
            let Some(&step) = self.script.get(self.pc) else {
                // Defensive: a script always ends with Dawn, which starts the next day.
                self.act = Act::Done;
                return;
            };
            self.begin_step(step);
        }
    }

    fn next_step(&mut self) {
        self.pc += 1;
        self.act = Act::Next;
    }

    fn begin_step(&mut self, step: Step) {
        match step {
            Step::DailyInit => self.act = Act::DailyInitialize,
            Step::DailyFinish => self.act = Act::DailyFinish,
            Step::Talk => self.start_session(false, Then::Script),
            Step::Whisper => {
                if self.alive_wolves().len() >= 2 {
                    self.start_session(true, Then::Script)
                } else {
                    self.next_step()
                }
            }
            Step::Vote => self.start_vote(0),
            Step::Divine => match self.alive_with_role(Role::Seer) {
                Some(seer) => self.act = Act::Divine { seer },
                None => self.next_step(),
            },
            Step::Guard => match self.alive_with_role(Role::Bodyguard) {
                Some(bodyguard) => self.act = Act::Guard { bodyguard },
                None => self.next_step(),
            },
            Step::Attack => {
                if self.alive_wolves().is_empty() {
                    self.next_step()
                } else {
                    self.start_attack(0)
                }
            }
            Step::Dawn => self.dawn(),
        }
    }

    // ----- talk and whisper sessions ------------------------------------------------------------

    fn start_session(&mut self, whisper: bool, then: Then) {
        let participants = if whisper {
            self.alive_wolves()
        } else {
            self.alive_agents()
        };
        if participants.is_empty() {
            self.finish_session(then);
            return;
        }
        if whisper {
            for &a in &participants {
                self.remain_whisper[a - 1] = Some(self.settings.max_whisper);
            }
        }
        let s = Session {
            whisper,
            turn: 0,
            order: Vec::new(),
            pos: 0,
            participants,
            skip: vec![0; self.n],
            all_over: true,
            then,
        };
        self.begin_turn(Box::new(s));
    }

    fn begin_turn(&mut self, mut s: Box<Session>) {
        s.order.clone_from(&s.participants);
        let r = if s.whisper {
            &mut self.rng.whisper
        } else {
            &mut self.rng.talk
        };
        shuffle(r, &mut s.order);
        s.pos = 0;
        s.all_over = true;
        self.continue_turn(s);
    }

    fn remaining(&self, whisper: bool, agent: usize) -> u32 {
        let m = if whisper {
            &self.remain_whisper
        } else {
            &self.remain_talk
        };
        m[agent - 1].unwrap_or(0)
    }

    /// Record `Over` for agents with nothing left, until one must be asked or the turn ends.
    fn continue_turn(&mut self, mut s: Box<Session>) {
        while s.pos < s.order.len() {
            let a = s.order[s.pos];
            if self.remaining(s.whisper, a) > 0 {
                self.act = Act::Session(s);
                return;
            }
            self.record_entry(&mut s, a, "Over".to_string(), None);
            s.pos += 1;
        }
        self.end_turn(s);
    }

    fn record_entry(
        &mut self,
        s: &mut Session,
        agent: usize,
        mut text: String,
        parsed: Option<talk::Utterance>,
    ) {
        if text == "Skip" {
            s.skip[agent - 1] += 1;
            if s.skip[agent - 1] > self.settings.max_skip {
                text = "Over".to_string();
            }
        }
        let real = text != "Skip" && text != "Over";
        if real {
            s.skip[agent - 1] = 0;
            let m = if s.whisper {
                &mut self.remain_whisper
            } else {
                &mut self.remain_talk
            };
            if let Some(r) = m[agent - 1].as_mut() {
                *r = r.saturating_sub(1);
            }
        }
        if text != "Over" {
            s.all_over = false;
        }
        let list = if s.whisper {
            &mut self.whispers
        } else {
            &mut self.talks
        };
        let parsed = if real {
            parsed.map(std::sync::Arc::new)
        } else {
            None
        };
        let entry = Talk {
            idx: list.len() as u32,
            day: self.day,
            turn: s.turn,
            agent,
            text,
            parsed,
        };
        if self.log_on {
            let kind = if s.whisper { "whisper" } else { "talk" };
            let line = format!(
                "{},{},{},{},{},{}",
                entry.day, kind, entry.idx, entry.turn, entry.agent, entry.text
            );
            self.log.push(line);
        }
        list.push(entry);
    }

    fn on_talk(&mut self, mut s: Box<Session>, reply: Reply) -> Settled {
        let agent = s.order[s.pos];
        let seed2015 = self.settings.rule_set == RuleSet::Seed2015;
        let mut invalid = false;
        let mut rule_violation = false;
        let mut parsed = None;
        let text = match reply {
            Reply::Silent => {
                if seed2015 {
                    "Over".to_string()
                } else {
                    "Skip".to_string()
                }
            }
            Reply::Target(_) => {
                invalid = true;
                "Skip".to_string()
            }
            Reply::Text(raw) => {
                let t = talk::trim_reply(&raw);
                parsed = talk::parse(t).ok();
                if t.is_empty() {
                    "Skip".to_string()
                } else if seed2015
                    && self.settings.validate_utterance
                    && !parsed
                        .as_ref()
                        .is_some_and(|u| talk::fits_2015_template(u, s.whisper))
                {
                    invalid = true;
                    rule_violation = true;
                    "Skip".to_string()
                } else if self.settings.validate_utterance && parsed.is_none() {
                    invalid = true;
                    "Skip".to_string()
                } else if t.contains(['\n', '\r']) {
                    // Validation off: a line break would corrupt the log and the wire; refuse it.
                    invalid = true;
                    "Skip".to_string()
                } else {
                    t.to_string()
                }
            }
        };
        self.record_entry(&mut s, agent, text, parsed);
        let value = if s.whisper {
            &self.whispers
        } else {
            &self.talks
        }
        .last()
        .map(|t| t.text.clone())
        .unwrap_or_default();
        s.pos += 1;
        self.continue_turn(s);
        Settled {
            value,
            invalid,
            rule_violation,
        }
    }

    fn end_turn(&mut self, s: Box<Session>) {
        if !s.whisper && self.settings.rule_set == RuleSet::Seed2015 {
            // seed-2015: a whisper phase after every talk round, before its end check.
            if !self.alive_wolves().is_empty() {
                self.start_session(true, Then::ResumeTalk(s));
                return;
            }
        }
        self.end_turn_check(s);
    }

    fn end_turn_check(&mut self, mut s: Box<Session>) {
        let max = if s.whisper {
            self.settings.max_whisper_turn
        } else {
            self.settings.max_talk_turn
        };
        if s.all_over || s.turn + 1 >= max {
            let then = std::mem::replace(&mut s.then, Then::Script);
            self.finish_session(then);
        } else {
            s.turn += 1;
            self.begin_turn(s);
        }
    }

    fn finish_session(&mut self, then: Then) {
        match then {
            Then::Script => self.next_step(),
            Then::ResumeTalk(talk) => self.end_turn_check(talk),
            Then::AttackRound(r) => self.start_attack(r),
        }
    }

    // ----- vote -------------------------------------------------------------------------------

    fn start_vote(&mut self, round: u32) {
        let voters = self.alive_agents();
        self.act = Act::Vote {
            round,
            pos: 0,
            voters,
            votes: Vec::new(),
        };
    }

    fn valid_seat(&self, t: usize) -> bool {
        (1..=self.n).contains(&t)
    }

    fn random_alive_except(&mut self, except: usize, no_wolves: bool) -> Option<usize> {
        let c: Vec<usize> = (1..=self.n)
            .filter(|&a| self.alive[a - 1] && a != except && !(no_wolves && self.is_wolf(a)))
            .collect();
        pick(&mut self.rng.substitute, &c)
    }

    /// seed-2015 substitutes a random living agent (but `except`, and no wolf if `no_wolves`) for
    /// a missing or refused target; aiwolf-0.6 leaves none.
    fn seed2015_substitute(&mut self, except: usize, no_wolves: bool) -> Option<usize> {
        if self.settings.rule_set == RuleSet::Seed2015 {
            self.random_alive_except(except, no_wolves)
        } else {
            None
        }
    }

    fn target_of(reply: &Reply) -> (Option<usize>, bool) {
        match reply {
            Reply::Target(t) => (*t, t.is_none()),
            Reply::Silent => (None, false),
            Reply::Text(_) => (None, true),
        }
    }

    /// The target of a target reply: the agent it names if that is a seat `allowed` accepts,
    /// otherwise `substitute`'s choice. Also whether the reply was invalid (unreadable, or naming
    /// a target that was refused).
    fn settle_target(
        &mut self,
        reply: &Reply,
        allowed: impl FnOnce(&Self, usize) -> bool,
        substitute: impl FnOnce(&mut Self) -> Option<usize>,
    ) -> (Option<usize>, bool) {
        let (t, mut invalid) = Self::target_of(reply);
        let target = match t {
            Some(t) if self.valid_seat(t) && allowed(self, t) => Some(t),
            other => {
                invalid |= other.is_some();
                substitute(self)
            }
        };
        (target, invalid)
    }

    fn on_vote(
        &mut self,
        round: u32,
        pos: usize,
        voters: Vec<usize>,
        mut votes: Vec<Vote>,
        reply: Reply,
    ) -> Settled {
        let voter = voters[pos];
        let (target, invalid) = self.settle_target(
            &reply,
            |g, t| g.alive[t - 1] && t != voter,
            |g| g.random_alive_except(voter, false),
        );
        if let Some(target) = target {
            votes.push(Vote {
                agent: voter,
                day: self.day,
                target,
            });
        }
        let settled = Settled::target(target, invalid);
        if pos + 1 < voters.len() {
            self.act = Act::Vote {
                round,
                pos: pos + 1,
                voters,
                votes,
            };
        } else {
            self.end_vote_round(round, votes);
        }
        settled
    }

    /// Agents with the most votes, ascending.
    fn top(&self, votes: &[Vote], extra_for_humans: bool) -> Vec<usize> {
        let mut tally = vec![0u32; self.n + 1];
        for v in votes {
            tally[v.target] += 1;
        }
        if extra_for_humans {
            for (i, t) in tally.iter_mut().enumerate().skip(1) {
                if self.alive[i - 1] && self.roles[i - 1].species() == Species::Human {
                    *t += 1;
                }
            }
        }
        let max = tally.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return Vec::new();
        }
        (1..=self.n).filter(|&a| tally[a] == max).collect()
    }

    fn end_vote_round(&mut self, round: u32, votes: Vec<Vote>) {
        self.log_votes("vote", &votes);
        let top = self.top(&votes, false);
        self.votes_latest = votes;
        let executed = if top.len() == 1 {
            Some(top[0])
        } else if round < self.settings.max_revote {
            self.start_vote(round + 1);
            return;
        } else if self.settings.enable_no_execution {
            None
        } else {
            pick(&mut self.rng.tie, &top)
        };
        if let Some(e) = executed {
            self.alive[e - 1] = false;
            self.executed_today = Some(e);
            let line = format!("{},execute,{},{}", self.day, e, self.roles[e - 1].name());
            self.push_log(line);
        }
        self.next_step();
    }

    // ----- divine, guard ----------------------------------------------------------------------

    fn on_divine(&mut self, seer: usize, reply: Reply) -> Settled {
        let seed2015 = self.settings.rule_set == RuleSet::Seed2015;
        let (target, invalid) = self.settle_target(
            &reply,
            |g, t| g.alive[t - 1] || (seed2015 && g.executed_today == Some(t)),
            |g| g.seed2015_substitute(seer, false),
        );
        if let Some(t) = target {
            self.divined_tonight = Some((seer, t));
            let line = format!(
                "{},divine,{},{},{}",
                self.day,
                seer,
                t,
                self.roles[t - 1].species().name()
            );
            self.push_log(line);
        }
        self.next_step();
        Settled::target(target, invalid)
    }

    fn on_guard(&mut self, bodyguard: usize, reply: Reply) -> Settled {
        let seed2015 = self.settings.rule_set == RuleSet::Seed2015;
        let (target, invalid) = self.settle_target(
            &reply,
            |g, t| t != bodyguard && (!seed2015 || g.alive[t - 1]),
            |g| g.seed2015_substitute(bodyguard, false),
        );
        if let Some(t) = target {
            self.guard_tonight = Some(t);
            let line = format!(
                "{},guard,{},{},{}",
                self.day,
                bodyguard,
                t,
                self.roles[t - 1].name()
            );
            self.push_log(line);
        }
        self.next_step();
        Settled::target(target, invalid)
    }

    // ----- attack -----------------------------------------------------------------------------

    fn start_attack(&mut self, round: u32) {
        let wolves = self.alive_wolves();
        if wolves.is_empty() {
            self.next_step();
            return;
        }
        self.act = Act::Attack {
            round,
            pos: 0,
            wolves,
            votes: Vec::new(),
        };
    }

    fn on_attack(
        &mut self,
        round: u32,
        pos: usize,
        wolves: Vec<usize>,
        mut votes: Vec<Vote>,
        reply: Reply,
    ) -> Settled {
        let wolf = wolves[pos];
        let (target, invalid) = self.settle_target(
            &reply,
            |g, t| g.alive[t - 1] && !g.is_wolf(t),
            |g| g.seed2015_substitute(wolf, true),
        );
        if let Some(target) = target {
            votes.push(Vote {
                agent: wolf,
                day: self.day,
                target,
            });
        }
        let settled = Settled::target(target, invalid);
        if pos + 1 < wolves.len() {
            self.act = Act::Attack {
                round,
                pos: pos + 1,
                wolves,
                votes,
            };
        } else {
            self.end_attack_round(round, votes);
        }
        settled
    }

    fn end_attack_round(&mut self, round: u32, votes: Vec<Vote>) {
        self.log_votes("attackVote", &votes);
        let extra = self.settings.rule_set == RuleSet::Aiwolf06 && !self.settings.enable_no_attack;
        let top = self.top(&votes, extra);
        self.attack_votes_latest = votes;
        let target = if top.len() == 1 {
            Some(top[0])
        } else if round < self.settings.max_attack_revote {
            if self.settings.whisper_before_revote && self.alive_wolves().len() >= 2 {
                self.start_session(true, Then::AttackRound(round + 1));
            } else {
                self.start_attack(round + 1);
            }
            return;
        } else if self.settings.enable_no_attack {
            None
        } else {
            pick(&mut self.rng.tie, &top)
        };
        self.attack_tonight = target;
        let line = match target {
            Some(t) if self.guard_tonight == Some(t) => format!("{},attack,{},false", self.day, t),
            Some(t) => {
                self.victim_tonight = Some(t);
                format!("{},attack,{},true", self.day, t)
            }
            None => format!("{},attack,-1,false", self.day),
        };
        self.push_log(line);
        self.next_step();
    }

    // ----- dawn -------------------------------------------------------------------------------

    fn dawn(&mut self) {
        self.last_dead.clear();
        if let Some(v) = self.victim_tonight.take() {
            self.alive[v - 1] = false;
            self.last_dead.push(v);
        }
        let next = self.day + 1;
        self.executed_prev = self.executed_today.take();
        self.votes_prev = std::mem::take(&mut self.votes_latest);
        self.attack_votes_prev = std::mem::take(&mut self.attack_votes_latest);
        self.attacked_prev = self.attack_tonight.take();
        self.guarded_prev = self.guard_tonight.take();
        self.divine_result = self.divined_tonight.take().map(|(seer, target)| Judge {
            agent: seer,
            day: next,
            target,
            result: self.roles[target - 1].species(),
        });
        self.medium_target = self.executed_prev.map(|e| (e, self.roles[e - 1].species()));
        self.talks.clear();
        self.whispers.clear();
        for a in 1..=self.n {
            let alive = self.alive[a - 1];
            self.remain_talk[a - 1] = alive.then_some(self.settings.max_talk);
            self.remain_whisper[a - 1] =
                (alive && self.is_wolf(a)).then_some(self.settings.max_whisper);
        }
        self.day = next;
        self.start_day();
    }
}
