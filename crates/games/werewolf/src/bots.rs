//! Built-in agents and the in-process game loop.
//!
//! An agent sees only its own [`GameInfo`] (the same filtered view a TCP agent receives), the
//! request, and the public settings.
//!
//! * `random`: valid random actions and valid random talk (within the seed-2015 templates, so it is
//!   legal under both rule sets).
//! * `sample`: role-aware, in the spirit of the AIWolf sample agents: the seer divines and reports,
//!   the medium reports, the bodyguard protects claimed seers, wolves agree on attacks by whisper
//!   and may fake a seer claim, everyone votes by suspicion built from talk and votes.

use std::collections::HashMap;

use rand::{Rng, RngCore};

use kakehiki_core::{seeded_rng, SeedRng};

use crate::engine::{Pending, Reply, Werewolf};
use crate::info::GameInfo;
use crate::settings::Settings;
use crate::talk::{Body, Utterance, Who};
use crate::types::{agent_str, Request, Role, Species, Team};

/// Names of the built-in agents (`builtin:<name>`).
pub const BUILTIN_NAMES: &[&str] = &["random", "sample"];

/// An in-process agent.
pub trait Agent: Send {
    /// Answer `request` from what this agent may see.
    fn act(&mut self, request: Request, info: &GameInfo<'_>, settings: &Settings) -> Reply;
}

/// A built-in agent by name, its randomness drawn from the game seed and its agent number.
pub fn builtin(name: &str, game_seed: u64, agent: usize) -> Option<Box<dyn Agent>> {
    let rng = seeded_rng(game_seed, &format!("werewolf-agent-{agent}-{name}"));
    match name {
        "random" => Some(Box::new(RandomAgent { rng })),
        "sample" => Some(Box::new(SampleAgent::new(rng))),
        _ => None,
    }
}

/// Play a game to the end in-process: `agents[i]` plays agent `i + 1`. Broadcasts are
/// acknowledged without delivery (built-in agents read everything from the next request's view).
pub fn play_in_process(game: &mut Werewolf, agents: &mut [Box<dyn Agent>]) -> Option<Team> {
    loop {
        match game.pending() {
            Pending::Done => return game.winner(),
            Pending::Notify(_) => {
                let _ = game.ack();
            }
            Pending::Ask { agent, request } => {
                let reply = {
                    let info = GameInfo::for_agent(game, agent, false);
                    agents[agent - 1].act(request, &info, game.settings())
                };
                let _ = game.reply(reply);
            }
        }
    }
}

fn pick_from(rng: &mut SeedRng, v: &[usize]) -> Option<usize> {
    if v.is_empty() {
        None
    } else {
        Some(v[rng.gen_range(0..v.len())])
    }
}

// ----- random ---------------------------------------------------------------------------------

/// Valid random actions and talk.
pub struct RandomAgent {
    rng: SeedRng,
}

const TALK_ROLES: [Role; 6] = [
    Role::Villager,
    Role::Seer,
    Role::Medium,
    Role::Bodyguard,
    Role::Werewolf,
    Role::Possessed,
];

impl RandomAgent {
    fn others(info: &GameInfo<'_>) -> Vec<usize> {
        info.alive().filter(|&a| a != info.agent).collect()
    }

    fn talk(&mut self, info: &GameInfo<'_>, whisper: bool) -> String {
        let n = info.status_map.len();
        let any = |rng: &mut SeedRng| rng.gen_range(1..=n);
        match self.rng.gen_range(0..10) {
            0..=3 => "Over".into(),
            4 => "Skip".into(),
            5 => format!("VOTE {}", agent_str(any(&mut self.rng))),
            6 => {
                let r = TALK_ROLES[self.rng.gen_range(0..TALK_ROLES.len())];
                format!("ESTIMATE {} {}", agent_str(any(&mut self.rng)), r.name())
            }
            7 => {
                let r = TALK_ROLES[self.rng.gen_range(0..TALK_ROLES.len())];
                format!("COMINGOUT {} {}", agent_str(any(&mut self.rng)), r.name())
            }
            8 => {
                let s = if self.rng.gen_bool(0.5) {
                    "HUMAN"
                } else {
                    "WEREWOLF"
                };
                format!("DIVINED {} {}", agent_str(any(&mut self.rng)), s)
            }
            _ => {
                let list = if whisper {
                    info.whisper_list
                } else {
                    info.talk_list
                };
                match list.get(self.rng.gen_range(0..list.len().max(1))) {
                    Some(_) if whisper && self.rng.gen_bool(0.5) => {
                        format!("ATTACK {}", agent_str(any(&mut self.rng)))
                    }
                    Some(t) => format!(
                        "AGREE {} day{} ID:{}",
                        if whisper { "WHISPER" } else { "TALK" },
                        t.day,
                        t.idx
                    ),
                    None => "Over".into(),
                }
            }
        }
    }
}

impl Agent for RandomAgent {
    fn act(&mut self, request: Request, info: &GameInfo<'_>, _settings: &Settings) -> Reply {
        match request {
            Request::Role | Request::Name => Reply::Text("none".into()),
            Request::Talk => Reply::Text(self.talk(info, false)),
            Request::Whisper => Reply::Text(self.talk(info, true)),
            Request::Attack => {
                let wolves: Vec<usize> = info
                    .role_map
                    .iter()
                    .filter(|(_, r)| *r == Role::Werewolf)
                    .map(|(a, _)| *a)
                    .collect();
                let c: Vec<usize> = info.alive().filter(|a| !wolves.contains(a)).collect();
                Reply::Target(pick_from(&mut self.rng, &c))
            }
            Request::Divine => {
                let c: Vec<usize> = Self::others(info);
                Reply::Target(pick_from(&mut self.rng, &c))
            }
            _ => Reply::Target(pick_from(&mut self.rng, &Self::others(info))),
        }
    }
}

// ----- sample ---------------------------------------------------------------------------------

/// A role-aware agent in the spirit of the AIWolf sample agents.
pub struct SampleAgent {
    rng: SeedRng,
    me: usize,
    role: Role,
    day: u32,
    /// Talks of the current day already read.
    read: usize,
    whispers_read: usize,
    /// Self claims: agent → claimed role (latest).
    claims: HashMap<usize, Role>,
    /// Agents that claimed more than one role.
    multi_claim: Vec<usize>,
    /// Seer reports: (claimed seer, target, result).
    divined: Vec<(usize, usize, Species)>,
    /// Medium reports: (claimed medium, target, result).
    identified: Vec<(usize, usize, Species)>,
    /// Per-agent suspicion from behaviour (vote deviations, nonsense claims).
    behaviour: HashMap<usize, i32>,
    /// Declared votes of today: agent → target.
    declared: HashMap<usize, usize>,
    /// My own knowledge: agent → species (seer results, medium results, own wolves).
    known: HashMap<usize, Species>,
    /// Executed agents by day.
    executed: Vec<usize>,
    /// Reports I still have to make (seer and medium, or faked).
    to_report: Vec<String>,
    claimed: bool,
    fake_seer: bool,
    last_declared: Option<usize>,
    /// Agreed attack target of the current night (from whispers).
    attack_plan: Option<usize>,
    whispered_plan: bool,
    days_seen_votes: Vec<u32>,
    /// The day of the last faked divination.
    day_of_fake: u32,
    /// Derived knowledge, rebuilt when something new was learnt.
    cache: Option<Cache>,
}

/// What [`SampleAgent`] derives from its knowledge, computed once per change.
struct Cache {
    trusted: Option<usize>,
    /// Indexed by agent number.
    liar: Vec<bool>,
    susp: Vec<i32>,
}

impl SampleAgent {
    fn new(rng: SeedRng) -> Self {
        SampleAgent {
            rng,
            me: 0,
            role: Role::Villager,
            day: u32::MAX,
            read: 0,
            whispers_read: 0,
            claims: HashMap::new(),
            multi_claim: Vec::new(),
            divined: Vec::new(),
            identified: Vec::new(),
            behaviour: HashMap::new(),
            declared: HashMap::new(),
            known: HashMap::new(),
            executed: Vec::new(),
            to_report: Vec::new(),
            claimed: false,
            fake_seer: false,
            last_declared: None,
            attack_plan: None,
            whispered_plan: false,
            days_seen_votes: Vec::new(),
            day_of_fake: 0,
            cache: None,
        }
    }

    fn is_wolf_side(&self) -> bool {
        self.role.team() == Team::Werewolf
    }

    /// A public, agent-independent tie-break so that agents with the same knowledge agree.
    fn tie(day: u32, a: usize) -> u64 {
        let mut z = (u64::from(day) << 32) ^ (a as u64) ^ 0x9e37_79b9_7f4a_7c15;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn observe(&mut self, info: &GameInfo<'_>) {
        if self.me == 0 {
            self.me = info.agent;
            self.role = info.my_role();
            for (a, r) in &info.role_map {
                if *r == Role::Werewolf {
                    self.known.insert(*a, Species::Werewolf);
                }
            }
            if self.role != Role::Werewolf {
                self.known.insert(self.me, Species::Human);
            }
        }
        if info.day != self.day {
            self.cache = None;
            self.day = info.day;
            self.read = 0;
            self.whispers_read = 0;
            self.declared.clear();
            self.last_declared = None;
            self.attack_plan = None;
            self.whispered_plan = false;
            if let Some(e) = info.executed_agent {
                self.executed.push(e);
            }
            if let Some(j) = info.divine_result {
                self.known.insert(j.target, j.result);
                self.to_report.push(format!(
                    "DIVINED {} {}",
                    agent_str(j.target),
                    j.result.name()
                ));
            }
            if let Some(j) = info.medium_result {
                self.known.insert(j.target, j.result);
                self.to_report.push(format!(
                    "IDENTIFIED {} {}",
                    agent_str(j.target),
                    j.result.name()
                ));
            }
        }
        // Yesterday's votes: who voted against the outcome or for a known human.
        if !info.vote_list.is_empty() && !self.days_seen_votes.contains(&info.day) {
            self.days_seen_votes.push(info.day);
            self.cache = None;
            let executed = info.executed_agent;
            for v in info.vote_list {
                if Some(v.target) != executed {
                    *self.behaviour.entry(v.agent).or_default() += 2;
                }
                if self.trusted_human(v.target) {
                    *self.behaviour.entry(v.agent).or_default() += 2;
                }
            }
        }
        for t in &info.talk_list[self.read.min(info.talk_list.len())..] {
            let Some(u) = t.parsed.as_deref() else {
                continue;
            };
            let Utterance::Sentence(s) = u else { continue };
            if s.subject.is_some_and(|w| w.agent() != Some(t.agent)) {
                continue;
            }
            if matches!(
                s.body,
                Body::Comingout(_, Some(_))
                    | Body::Divined(_, Some(_))
                    | Body::Identified(_, Some(_))
                    | Body::Vote(_)
            ) {
                self.cache = None;
            }
            match &s.body {
                Body::Comingout(w, Some(r)) => {
                    if w.agent() == Some(t.agent) {
                        if let Some(prev) = self.claims.insert(t.agent, *r) {
                            if prev != *r && !self.multi_claim.contains(&t.agent) {
                                self.multi_claim.push(t.agent);
                            }
                        }
                    } else {
                        // Announcing someone else's role: not something an honest player does.
                        *self.behaviour.entry(t.agent).or_default() += 1;
                    }
                }
                Body::Divined(w, Some(sp)) => {
                    if let Some(target) = w.agent() {
                        self.divined.push((t.agent, target, *sp));
                    }
                }
                Body::Identified(w, Some(sp)) => {
                    if let Some(target) = w.agent() {
                        self.identified.push((t.agent, target, *sp));
                    }
                }
                Body::Vote(w) => {
                    if let Some(target) = w.agent() {
                        self.declared.insert(t.agent, target);
                    }
                }
                _ => {}
            }
        }
        self.read = info.talk_list.len();
        for t in &info.whisper_list[self.whispers_read.min(info.whisper_list.len())..] {
            if t.agent == self.me {
                continue;
            }
            if let Some(Utterance::Sentence(s)) = t.parsed.as_deref() {
                match &s.body {
                    Body::Attack(w) if self.attack_plan.is_none() => {
                        if let Some(a) = w
                            .agent()
                            .filter(|&a| info.is_alive(a) && !self.is_known_wolf(a))
                        {
                            self.attack_plan = Some(a);
                        }
                    }
                    Body::Comingout(w, Some(Role::Seer)) if w.agent() == Some(t.agent) => {
                        // A fellow wolf announced a fake seer claim: do not claim too.
                        self.claimed = true;
                    }
                    _ => {}
                }
            }
        }
        self.whispers_read = info.whisper_list.len();
        if self.cache.is_none() {
            self.refresh(info.status_map.len());
        }
    }

    fn is_known_wolf(&self, a: usize) -> bool {
        self.known.get(&a) == Some(&Species::Werewolf)
    }

    fn seer_claimants(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .claims
            .iter()
            .filter(|(_, r)| **r == Role::Seer)
            .map(|(a, _)| *a)
            .collect();
        v.sort_unstable();
        v
    }

    /// A seer claimant whose word the village can take: the only claimant, not contradicted by
    /// a medium, or myself.
    fn trusted_seer(&self) -> Option<usize> {
        if let Some(c) = &self.cache {
            return c.trusted;
        }
        if self.role == Role::Seer {
            return Some(self.me);
        }
        let seers: Vec<usize> = self
            .seer_claimants()
            .into_iter()
            .filter(|a| !self.is_liar(*a))
            .collect();
        (seers.len() == 1).then(|| seers[0])
    }

    /// A claimant shown lying: reports contradicting my own knowledge or a medium's.
    fn is_liar(&self, a: usize) -> bool {
        if let Some(c) = &self.cache {
            return c.liar.get(a).copied().unwrap_or(false);
        }
        if self.multi_claim.contains(&a) {
            return true;
        }
        if self.role == Role::Seer && a != self.me && self.claims.get(&a) == Some(&Role::Seer) {
            return true;
        }
        self.divined.iter().any(|&(s, t, r)| {
            s == a
                && (self.known.get(&t).is_some_and(|k| *k != r)
                    || self.identified.iter().any(|&(m, it, ir)| {
                        it == t && ir != r && m != a && !self.multi_claim.contains(&m)
                    }))
        })
    }

    fn trusted_human(&self, a: usize) -> bool {
        if self.known.get(&a) == Some(&Species::Human) && !self.is_wolf_side() {
            return true;
        }
        match self.trusted_seer() {
            Some(s) if s != self.me => self
                .divined
                .iter()
                .any(|&(x, t, r)| x == s && t == a && r == Species::Human),
            _ => false,
        }
    }

    /// The village-side suspicion of `a` (higher: more likely a wolf).
    fn suspicion(&self, a: usize) -> i32 {
        if let Some(c) = &self.cache {
            return c.susp.get(a).copied().unwrap_or(0);
        }
        self.compute_suspicion(a)
    }

    /// Rebuild the derived knowledge for agents `1..=n`.
    fn refresh(&mut self, n: usize) {
        self.cache = None;
        let liar: Vec<bool> = (0..=n).map(|a| a > 0 && self.is_liar(a)).collect();
        let trusted = if self.role == Role::Seer {
            Some(self.me)
        } else {
            let seers: Vec<usize> = self
                .seer_claimants()
                .into_iter()
                .filter(|&a| !liar[a.min(n)])
                .collect();
            (seers.len() == 1).then(|| seers[0])
        };
        // Suspicion reads the liar and trust results through the cache.
        self.cache = Some(Cache {
            trusted,
            liar,
            susp: Vec::new(),
        });
        let susp: Vec<i32> = (0..=n).map(|a| self.compute_suspicion(a)).collect();
        if let Some(c) = self.cache.as_mut() {
            c.susp = susp;
        }
    }

    fn compute_suspicion(&self, a: usize) -> i32 {
        let mut s = *self.behaviour.get(&a).unwrap_or(&0);
        if !self.is_wolf_side() {
            match self.known.get(&a) {
                Some(Species::Werewolf) => s += 1000,
                Some(Species::Human) => s -= 1000,
                None => {}
            }
        }
        if self.is_liar(a) {
            s += 30;
        }
        let trusted = self.trusted_seer();
        for &(seer, t, r) in &self.divined {
            if t == a && Some(seer) == trusted && seer != self.me {
                s += if r == Species::Werewolf { 50 } else { -20 };
            }
        }
        if let Some(&t) = self.declared.get(&a) {
            if self.trusted_human(t) {
                s += 1;
            }
        }
        if Some(a) == trusted {
            s -= 40;
        }
        s
    }

    /// Alive agents other than me, best first by `score` (ties by the public tie-break).
    fn best(
        &self,
        info: &GameInfo<'_>,
        score: impl Fn(usize) -> i32,
        exclude_wolves: bool,
    ) -> Option<usize> {
        info.alive()
            .filter(|&a| a != self.me && !(exclude_wolves && self.is_known_wolf(a)))
            .max_by_key(|&a| (score(a), Self::tie(info.day, a)))
    }

    fn vote_target(&self, info: &GameInfo<'_>) -> Option<usize> {
        if self.role == Role::Werewolf {
            // Execute the most dangerous human: a seer or medium claimant, then whoever accused a wolf.
            self.best(info, |a| self.threat(a), true)
        } else if self.role == Role::Possessed {
            let fake = self.to_report_targets();
            self.best(
                info,
                |a| {
                    if fake.contains(&a) {
                        100
                    } else {
                        self.suspicion(a)
                    }
                },
                false,
            )
        } else {
            self.best(info, |a| self.suspicion(a), false)
        }
    }

    fn to_report_targets(&self) -> Vec<usize> {
        self.divined
            .iter()
            .filter(|(s, _, r)| *s == self.me && *r == Species::Werewolf)
            .map(|(_, t, _)| *t)
            .collect()
    }

    /// How dangerous a human is to the wolves.
    fn threat(&self, a: usize) -> i32 {
        let mut s = 0;
        match self.claims.get(&a) {
            Some(Role::Seer) => s += 40,
            Some(Role::Medium) => s += 30,
            Some(Role::Bodyguard) => s += 20,
            _ => {}
        }
        for &(seer, t, r) in &self.divined {
            if seer == a && r == Species::Werewolf && self.is_known_wolf(t) {
                s += 50;
            }
        }
        s
    }

    fn attack_target(&self, info: &GameInfo<'_>) -> Option<usize> {
        self.attack_plan
            .filter(|&a| info.is_alive(a) && !self.is_known_wolf(a))
            .or_else(|| self.best(info, |a| self.threat(a), true))
    }

    fn talk(&mut self, info: &GameInfo<'_>) -> String {
        let day0_silent = info.day == 0;
        if day0_silent {
            return "Over".into();
        }
        // Claims first.
        if !self.claimed {
            match self.role {
                Role::Seer => {
                    self.claimed = true;
                    return format!("COMINGOUT {} SEER", agent_str(self.me));
                }
                Role::Medium if !self.to_report.is_empty() => {
                    self.claimed = true;
                    return format!("COMINGOUT {} MEDIUM", agent_str(self.me));
                }
                Role::Werewolf | Role::Possessed if info.day == 1 => {
                    self.claimed = true;
                    let p = if self.role == Role::Possessed {
                        0.5
                    } else {
                        0.25
                    };
                    if self.rng.gen_bool(p) {
                        self.fake_seer = true;
                        return format!("COMINGOUT {} SEER", agent_str(self.me));
                    }
                }
                _ => {}
            }
        }
        if self.fake_seer && self.day_of_fake != info.day {
            // One fake result per day: a human called a wolf (wolves know who is human).
            self.day_of_fake = info.day;
            let target = if self.role == Role::Werewolf {
                self.best(
                    info,
                    |a| self.threat(a) + (Self::tie(info.day ^ 7, a) % 5) as i32,
                    true,
                )
            } else {
                let c: Vec<usize> = info.alive().filter(|&a| a != self.me).collect();
                pick_from(&mut self.rng, &c)
            };
            if let Some(t) = target {
                self.divined.push((self.me, t, Species::Werewolf));
                self.cache = None;
                return format!("DIVINED {} WEREWOLF", agent_str(t));
            }
        }
        if let Some(r) = self.to_report.pop() {
            if self.role == Role::Seer || self.role == Role::Medium {
                return r;
            }
        }
        match self.vote_target(info) {
            Some(t) if self.last_declared != Some(t) => {
                self.last_declared = Some(t);
                format!("VOTE {}", agent_str(t))
            }
            _ => "Over".into(),
        }
    }

    fn whisper(&mut self, info: &GameInfo<'_>) -> String {
        if !self.whispered_plan {
            self.whispered_plan = true;
            if let Some(t) = self.attack_target(info) {
                if self.attack_plan.is_some() {
                    // Agree with the plan a fellow wolf proposed.
                    if let Some(w) = info.whisper_list.iter().find(|w| {
                        w.agent != self.me
                            && matches!(w.parsed.as_deref(), Some(Utterance::Sentence(s)) if s.body == Body::Attack(Who::Agent(t as u32)))
                    }) {
                        return format!("AGREE WHISPER day{} ID:{}", w.day, w.idx);
                    }
                }
                self.attack_plan = Some(t);
                return format!("ATTACK {}", agent_str(t));
            }
        }
        "Over".into()
    }
}

impl Agent for SampleAgent {
    fn act(&mut self, request: Request, info: &GameInfo<'_>, _settings: &Settings) -> Reply {
        // Roles are dealt after the ROLE requests: nothing to observe before.
        match request {
            Request::Name => return Reply::Text("sample".into()),
            Request::Role => return Reply::Text("none".into()),
            _ => self.observe(info),
        }
        match request {
            Request::Talk => Reply::Text(self.talk(info)),
            Request::Whisper => Reply::Text(self.whisper(info)),
            Request::Vote => Reply::Target(self.vote_target(info)),
            Request::Attack => Reply::Target(self.attack_target(info)),
            Request::Divine => {
                // Divine an unknown alive agent, the most suspicious first.
                let salt = self.rng.next_u64();
                let t = info
                    .alive()
                    .filter(|&a| a != self.me && !self.known.contains_key(&a))
                    .max_by_key(|&a| (self.suspicion(a), Self::tie(salt as u32, a)));
                Reply::Target(t.or_else(|| info.alive().find(|&a| a != self.me)))
            }
            Request::Guard => {
                let seer = self
                    .trusted_seer()
                    .filter(|&s| s != self.me && info.is_alive(s));
                let medium = self
                    .claims
                    .iter()
                    .filter(|(a, r)| {
                        **r == Role::Medium
                            && **a != self.me
                            && info.is_alive(**a)
                            && !self.is_liar(**a)
                    })
                    .map(|(a, _)| *a)
                    .min();
                let t = seer
                    .or(medium)
                    .or_else(|| self.best(info, |a| -self.suspicion(a), false));
                Reply::Target(t)
            }
            _ => Reply::Silent,
        }
    }
}
