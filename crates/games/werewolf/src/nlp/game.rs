//! The game of the natural-language division: the upstream server's day and night phases, turn
//! handling, length limits, votes with re-votes, and the error-ratio end, written as one async
//! procedure over a [`Table`] — the seats. The same code runs over WebSocket, with built-in bots
//! in process, and when a replay is re-run; all chance comes from the game seed.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;

use super::logs::LogMark;
use super::packet::{
    Info, JudgeEntry, Packet, RequestKind, SettingPacket, TalkEntry, Text, VoteEntry, FORCE_SKIP,
    OVER, SKIP,
};
use super::settings::{NlpSettings, OnErrorRatio, Phase, PhaseAction, TalkLimits};
use super::text;
use crate::rng;
use crate::types::{Role, Species, Team};

/// Random stream for the profile deal (streams 1–6 are the 0.6 engine's).
pub const STREAM_PROFILE: u64 = 7;

/// Kakehiki's guard when `max_day` is unlimited: a game in which nobody can die (every vote and
/// attack invalid) would run forever upstream; here it ends without a winner after this day.
pub const MAX_DAYS: u32 = 100;

/// Why a request got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskError {
    /// This request failed (timeout or unreadable answer) but the agent answered the NAME check:
    /// it stays in the game.
    Failed,
    /// The agent is gone (closed, send failure, failed NAME check): it is in the error state and
    /// gets no more requests.
    Fatal,
}

/// A message an agent sent in a group-chat phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub agent: usize,
    pub text: String,
    /// When it arrived, on the table's clock ([`Table::elapsed_ms`]).
    pub elapsed_ms: u64,
}

/// The seats of one game. Agents are numbered from 0 here; packets name them.
pub trait Table: Send {
    /// Send a packet that needs no answer. `Err` means the agent is gone.
    fn notify(
        &mut self,
        agent: usize,
        packet: Packet,
    ) -> impl Future<Output = Result<(), ()>> + Send;
    /// Send a packet and wait for the answer (action timeout, then the NAME check).
    fn ask(
        &mut self,
        agent: usize,
        packet: Packet,
    ) -> impl Future<Output = Result<String, AskError>> + Send;
    /// Group-chat mode: collect the messages the agents in `open` send within `duration_ms`,
    /// in arrival order, passing each through `accept` (which broadcasts the accepted ones and
    /// says who may still talk). Agents not in `open` are not read.
    fn chat(
        &mut self,
        open: Vec<usize>,
        duration_ms: u64,
        accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) -> impl Future<Output = ()> + Send;
    /// The table's clock: milliseconds of the game so far, counted only from what the seats'
    /// record holds (each request's recorded reply time, each group-chat window's length), so
    /// that a re-run of the record reads the same clock as the live game did. The game's times
    /// (a talk's `time`) are its start plus this. Tables whose seats take no measured time
    /// (built-in agents in process) stay at 0.
    fn elapsed_ms(&self) -> u64 {
        0
    }
}

/// How the game ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameResult {
    /// The winning team; `None` when the game was cut short (errors or `max_day`).
    pub winner: Option<Team>,
    /// Ended by the error ratio (upstream's `abort`), or with every agent in error.
    pub aborted: bool,
    /// The agents that forfeited their seats (in error under `on_error_ratio = forfeit`): they
    /// score 0 whatever their team does.
    pub forfeited: Vec<bool>,
    pub roles: Vec<Role>,
    pub alive: Vec<bool>,
    pub has_error: Vec<bool>,
    pub last_day: u32,
}

#[derive(Debug, Clone, Default)]
struct DayStatus {
    alive: Vec<bool>,
    talks: Vec<TalkEntry>,
    whispers: Vec<TalkEntry>,
    votes: Vec<(usize, usize)>,
    attack_votes: Vec<(usize, usize)>,
    executed: Option<usize>,
    attacked: Option<usize>,
    divine: Option<(usize, usize)>,
    guard: Option<(usize, usize)>,
}

struct Remain {
    count: Vec<Option<i64>>,
    length: Vec<Option<i64>>,
    skip: Vec<Option<i64>>,
}

/// The `game_id` of the game with `seed` at time 0 ([`game_id_at`]); in-process games use it.
pub fn game_id_of(seed: u64) -> String {
    game_id_at(0, seed)
}

/// A `game_id` as upstream makes it (`ulid.Make()`): a ULID, 48 bits of Unix time in
/// milliseconds, then 80 bits — here a keyed hash of the seed ([`kakehiki_core::keyed_seed`]),
/// never the seed itself, which deals the roles and which every agent is sent the id of. Agents
/// parse the time (the sample agent names its log folder by it); the referee records the id in
/// the replay, and a re-run uses the recorded one.
pub fn game_id_at(unix_ms: u64, seed: u64) -> String {
    let hi = u128::from(kakehiki_core::keyed_seed(seed, "nlp-game-id/hi"));
    let lo = u128::from(kakehiki_core::keyed_seed(seed, "nlp-game-id/lo"));
    ulid::Ulid::from_parts(unix_ms, (hi << 64) | lo).to_string()
}

/// [`game_id_at`] the current time.
pub fn game_id_now(seed: u64) -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    game_id_at(ms, seed)
}

/// One game.
pub struct NlpGame {
    s: Arc<NlpSettings>,
    setting_packet: Arc<SettingPacket>,
    game_id: Text,
    names: Vec<Text>,
    originals: Vec<String>,
    profiles: Vec<Option<String>>,
    /// Each agent's avatar URL in custom-profile mode (empty when its profile has none).
    avatars: Vec<Option<String>>,
    roles: Vec<Role>,
    has_error: Vec<bool>,
    day: u32,
    days: Vec<DayStatus>,
    last_talk: Vec<usize>,
    last_whisper: Vec<usize>,
    /// The game's start in Unix milliseconds: its `game_id`'s time.
    start_ms: u64,
    /// The table's clock ([`Table::elapsed_ms`]) after the last request or window.
    clock_ms: u64,
    rng_talk: ChaCha8Rng,
    rng_whisper: ChaCha8Rng,
    rng_tie: ChaCha8Rng,
    remain: Option<Remain>,
    winner: Option<Team>,
    aborted: bool,
    log: Vec<String>,
    /// When each line of [`NlpGame::log`] was written, and whether by day.
    log_marks: Vec<LogMark>,
    /// Whether it is the day (its phases) or the night, as upstream's `isDaytime`.
    is_day: bool,
}

fn species(r: Role) -> Species {
    r.species()
}

impl NlpGame {
    /// A game for `originals` (the agents' NAME answers, in seat order) from `seed`.
    pub fn new(settings: Arc<NlpSettings>, seed: u64, originals: Vec<String>) -> NlpGame {
        let n = settings.agent_count;
        let mut roles: Vec<Role> = settings
            .roles
            .iter()
            .flat_map(|(r, c)| std::iter::repeat_n(*r, *c))
            .collect();
        roles.resize(n, Role::Villager);
        rng::shuffle(&mut rng::stream(seed, rng::STREAM_DEAL), &mut roles);
        let (names, profiles, avatars) = match &settings.profiles {
            Some(p) => {
                let mut order: Vec<usize> = (0..p.len()).collect();
                rng::shuffle(&mut rng::stream(seed, STREAM_PROFILE), &mut order);
                order.truncate(n);
                (
                    order
                        .iter()
                        .map(|&i| Text::from(p[i].name.as_str()))
                        .collect(),
                    order
                        .iter()
                        .map(|&i| Some(p[i].description.clone()))
                        .collect(),
                    order
                        .iter()
                        .map(|&i| Some(p[i].avatar_url.clone().unwrap_or_default()))
                        .collect(),
                )
            }
            None => (
                (1..=n)
                    .map(|i| Text::from(crate::types::agent_str(i)))
                    .collect(),
                vec![None; n],
                vec![None; n],
            ),
        };
        let setting_packet = Arc::new(SettingPacket::from_settings(&settings));
        NlpGame {
            setting_packet,
            game_id: game_id_of(seed).into(),
            names,
            originals,
            profiles,
            avatars,
            roles,
            has_error: vec![false; n],
            day: 0,
            days: vec![DayStatus {
                alive: vec![true; n],
                ..Default::default()
            }],
            last_talk: vec![0; n],
            last_whisper: vec![0; n],
            start_ms: 0,
            clock_ms: 0,
            rng_talk: rng::stream(seed, rng::STREAM_TALK),
            rng_whisper: rng::stream(seed, rng::STREAM_WHISPER),
            rng_tie: rng::stream(seed, rng::STREAM_TIE),
            remain: None,
            winner: None,
            aborted: false,
            log: Vec::new(),
            log_marks: Vec::new(),
            is_day: true,
            s: settings,
        }
    }

    pub fn names(&self) -> &[Text] {
        &self.names
    }
    /// The agents' profiles (custom-profile mode), in seat order.
    pub fn profiles(&self) -> &[Option<String>] {
        &self.profiles
    }
    /// The agents' avatar URLs (custom-profile mode: the profile's `avatar_url`, empty if it has
    /// none), in seat order.
    pub fn avatars(&self) -> &[Option<String>] {
        &self.avatars
    }
    pub fn roles(&self) -> &[Role] {
        &self.roles
    }
    pub fn game_id(&self) -> &str {
        &self.game_id
    }
    /// Replace the id (before the game runs): the time-stamped one of a live game, or the one a
    /// replay recorded.
    pub fn set_game_id(&mut self, id: String) {
        self.start_ms = ulid::Ulid::from_string(&id).map_or(0, |u| u.timestamp_ms());
        self.game_id = id.into();
    }
    /// Now on the game's clock, in Unix milliseconds: its start ([`NlpGame::game_id`]'s time)
    /// plus the table's clock after the last request.
    pub fn now_ms(&self) -> u64 {
        self.start_ms.saturating_add(self.clock_ms)
    }
    pub fn settings(&self) -> &NlpSettings {
        &self.s
    }
    /// The upstream game log (`game_logger`) lines so far.
    pub fn log(&self) -> &[String] {
        &self.log
    }
    /// When each line of [`NlpGame::log`] was written, on the game's clock ([`NlpGame::now_ms`];
    /// a talk's line at the talk's `time`), and whether by day: the real-time log's `timestamp`
    /// and `is_day`.
    pub fn log_marks(&self) -> &[LogMark] {
        &self.log_marks
    }
    /// Every talk of every day so far.
    pub fn all_talks(&self) -> impl Iterator<Item = &TalkEntry> {
        self.days.iter().flat_map(|d| d.talks.iter())
    }
    /// Every whisper of every day so far.
    pub fn all_whispers(&self) -> impl Iterator<Item = &TalkEntry> {
        self.days.iter().flat_map(|d| d.whispers.iter())
    }

    fn cur(&self) -> &DayStatus {
        &self.days[self.day as usize]
    }
    fn cur_mut(&mut self) -> &mut DayStatus {
        let d = self.day as usize;
        &mut self.days[d]
    }
    fn alive(&self, a: usize) -> bool {
        self.cur().alive[a]
    }
    fn alive_agents(&self) -> Vec<usize> {
        (0..self.names.len()).filter(|&a| self.alive(a)).collect()
    }
    fn alive_wolves(&self) -> Vec<usize> {
        (0..self.names.len())
            .filter(|&a| self.alive(a) && self.roles[a] == Role::Werewolf)
            .collect()
    }
    fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| **n == *name)
    }

    /// The `info` agent `a` may see now. The only place hidden information is filtered.
    fn info(&self, a: usize) -> Info {
        let role = self.roles[a];
        let wolf = role == Role::Werewolf;
        let mut info = Info {
            game_id: self.game_id.clone(),
            day: self.day,
            agent: self.names[a].clone(),
            profile: None,
            medium_result: None,
            divine_result: None,
            executed_agent: None,
            attacked_agent: None,
            vote_list: Vec::new(),
            attack_vote_list: Vec::new(),
            status_map: BTreeMap::new(),
            role_map: BTreeMap::new(),
            remain_count: None,
            remain_length: None,
            remain_skip: None,
        };
        if self.day > 0 {
            let last_day = self.day - 1;
            let last = &self.days[last_day as usize];
            if let Some(e) = last.executed {
                if role == Role::Medium {
                    info.medium_result = Some(JudgeEntry {
                        day: last_day,
                        agent: self.names[e].clone(),
                        target: self.names[e].clone(),
                        result: species(self.roles[e]).name(),
                    });
                }
                info.executed_agent = Some(self.names[e].clone());
            }
            if let Some((seer, t)) = last.divine {
                if role == Role::Seer {
                    info.divine_result = Some(JudgeEntry {
                        day: last_day,
                        agent: self.names[seer].clone(),
                        target: self.names[t].clone(),
                        result: species(self.roles[t]).name(),
                    });
                }
            }
            if let Some(t) = last.attacked {
                info.attacked_agent = Some(self.names[t].clone());
            }
            let votes = |v: &[(usize, usize)]| {
                v.iter()
                    .map(|&(x, y)| VoteEntry {
                        day: last_day,
                        agent: self.names[x].clone(),
                        target: self.names[y].clone(),
                    })
                    .collect::<Vec<_>>()
            };
            if self.s.vote_visibility {
                info.vote_list = votes(&last.votes);
                if wolf {
                    info.attack_vote_list = votes(&last.attack_votes);
                }
            }
        }
        for (i, n) in self.names.iter().enumerate() {
            info.status_map
                .insert(n.clone(), if self.alive(i) { "ALIVE" } else { "DEAD" });
            if i == a || (wolf && self.roles[i] == Role::Werewolf) {
                info.role_map.insert(n.clone(), self.roles[i].name());
            }
        }
        if let Some(r) = &self.remain {
            info.remain_count = Some(r.count[a].unwrap_or(0));
            info.remain_length = r.length[a];
            info.remain_skip = Some(r.skip[a].unwrap_or(0));
        }
        info
    }

    /// The packet of `kind` for agent `a` (updates the history positions as upstream does).
    pub fn packet(&mut self, a: usize, kind: RequestKind) -> Packet {
        let mut p = Packet::bare(kind);
        if kind == RequestKind::Name {
            return p;
        }
        let mut info = self.info(a);
        let wolf = self.roles[a] == Role::Werewolf;
        match kind {
            RequestKind::Initialize | RequestKind::DailyInitialize => {
                self.last_talk.iter_mut().for_each(|x| *x = 0);
                self.last_whisper.iter_mut().for_each(|x| *x = 0);
                if kind == RequestKind::Initialize {
                    info.profile = self.profiles[a].clone();
                }
                p.setting = Some(self.setting_packet.clone());
            }
            RequestKind::DailyFinish
            | RequestKind::Talk
            | RequestKind::Whisper
            | RequestKind::Attack => {
                let cur = &self.days[self.day as usize];
                let t0 = self.last_talk[a].min(cur.talks.len());
                let talks = cur.talks[t0..].to_vec();
                self.last_talk[a] = cur.talks.len();
                let whispers = if wolf {
                    let w0 = self.last_whisper[a].min(cur.whispers.len());
                    self.last_whisper[a] = cur.whispers.len();
                    cur.whispers[w0..].to_vec()
                } else {
                    self.last_whisper[a] = 0;
                    Vec::new()
                };
                if matches!(kind, RequestKind::Talk | RequestKind::DailyFinish) {
                    p.talk_history = Some(talks);
                }
                if matches!(kind, RequestKind::Whisper | RequestKind::Attack)
                    || (kind == RequestKind::DailyFinish && wolf)
                {
                    p.whisper_history = Some(whispers);
                }
            }
            RequestKind::Finish => {
                for (i, n) in self.names.iter().enumerate() {
                    info.role_map.insert(n.clone(), self.roles[i].name());
                }
            }
            _ => {}
        }
        p.info = Some(info);
        p
    }

    async fn notify<T: Table>(&mut self, t: &mut T, a: usize, kind: RequestKind) {
        let p = self.packet(a, kind);
        if self.has_error[a] {
            return;
        }
        let sent = t.notify(a, p).await;
        self.clock_ms = t.elapsed_ms();
        if sent.is_err() {
            self.has_error[a] = true;
        }
    }

    async fn ask<T: Table>(&mut self, t: &mut T, a: usize, kind: RequestKind) -> Option<String> {
        let p = self.packet(a, kind);
        if self.has_error[a] {
            return None;
        }
        let answer = t.ask(a, p).await;
        self.clock_ms = t.elapsed_ms();
        match answer {
            Ok(s) if s.contains('\n') => Some(s.replace('\n', "")),
            Ok(s) => Some(s),
            Err(AskError::Failed) => None,
            Err(AskError::Fatal) => {
                self.has_error[a] = true;
                None
            }
        }
    }

    async fn everyone<T: Table>(&mut self, t: &mut T, kind: RequestKind) {
        for a in 0..self.names.len() {
            self.notify(t, a, kind).await;
        }
    }

    /// Add a line to the game log, written now on the game's clock.
    fn push_log(&mut self, line: String) {
        self.log.push(line);
        let (ms, is_day) = (self.now_ms(), self.is_day);
        self.log_marks.push(LogMark { ms, is_day });
    }

    fn log_status(&mut self) {
        for a in 0..self.names.len() {
            let line = format!(
                "{},status,{},{},{},{},{}",
                self.day,
                a + 1,
                self.roles[a].name(),
                if self.alive(a) { "ALIVE" } else { "DEAD" },
                self.originals.get(a).map(String::as_str).unwrap_or(""),
                self.names[a]
            );
            self.push_log(line);
        }
    }

    fn should_finish(&mut self) -> bool {
        let errors = self.has_error.iter().filter(|e| **e).count();
        let cutoff = match self.s.on_error_ratio {
            OnErrorRatio::Abort => self.s.error_cutoff(),
            // Agents in error forfeit their own seats; with nobody left to play, it is over.
            OnErrorRatio::Forfeit => self.has_error.len(),
        };
        if errors >= cutoff {
            self.aborted = true;
            return true;
        }
        let (mut humans, mut wolves) = (0, 0);
        for a in self.alive_agents() {
            match species(self.roles[a]) {
                Species::Werewolf => wolves += 1,
                Species::Human => humans += 1,
            }
        }
        self.winner = if humans <= wolves {
            Some(Team::Werewolf)
        } else if wolves == 0 {
            Some(Team::Villager)
        } else {
            None
        };
        self.winner.is_some()
    }

    /// Play the game to its end on `t`.
    pub async fn run<T: Table>(&mut self, t: &mut T) -> GameResult {
        self.everyone(t, RequestKind::Initialize).await;
        loop {
            self.progress_day(t).await;
            self.progress_night(t).await;
            let next = DayStatus {
                alive: self.cur().alive.clone(),
                ..Default::default()
            };
            self.days.push(next);
            self.day += 1;
            if self.s.max_day.is_some_and(|m| self.day > m) || self.day > MAX_DAYS {
                break;
            }
            if self.should_finish() {
                break;
            }
        }
        self.everyone(t, RequestKind::Finish).await;
        self.log_status();
        let (mut humans, mut wolves) = (0, 0);
        for a in self.alive_agents() {
            match species(self.roles[a]) {
                Species::Werewolf => wolves += 1,
                Species::Human => humans += 1,
            }
        }
        let win = match (self.aborted, self.winner) {
            (false, Some(w)) => w.name(),
            _ => "NONE",
        };
        self.push_log(format!("{},result,{},{},{}", self.day, humans, wolves, win));
        GameResult {
            winner: if self.aborted { None } else { self.winner },
            aborted: self.aborted,
            forfeited: match self.s.on_error_ratio {
                OnErrorRatio::Forfeit => self.has_error.clone(),
                OnErrorRatio::Abort => vec![false; self.has_error.len()],
            },
            roles: self.roles.clone(),
            alive: self.cur().alive.clone(),
            has_error: self.has_error.clone(),
            last_day: self.day,
        }
    }

    /// The day: DAILY_INITIALIZE, then the day's phases (`logic.day_phases`).
    async fn progress_day<T: Table>(&mut self, t: &mut T) {
        self.is_day = true;
        self.everyone(t, RequestKind::DailyInitialize).await;
        self.log_status();
        let phases = self.s.day_phases.clone();
        self.phases(t, &phases).await;
    }

    /// The night: DAILY_FINISH, then the night's phases (`logic.night_phases`).
    async fn progress_night<T: Table>(&mut self, t: &mut T) {
        self.is_day = false;
        self.everyone(t, RequestKind::DailyFinish).await;
        let phases = self.s.night_phases.clone();
        self.phases(t, &phases).await;
    }

    /// The phases of today in order, each's actions in order; after each phase, the end of the
    /// game is checked (and ends the day or night), as upstream does.
    async fn phases<T: Table>(&mut self, t: &mut T, phases: &[Phase]) {
        let day = self.day;
        for phase in phases.iter().filter(|p| p.on(day)) {
            for &action in &phase.actions {
                match action {
                    PhaseAction::Talk => self.communicate(t, RequestKind::Talk).await,
                    PhaseAction::Whisper => self.communicate(t, RequestKind::Whisper).await,
                    PhaseAction::Execution => self.execution(t).await,
                    PhaseAction::Divine => self.divine(t).await,
                    PhaseAction::Guard => self.guard(t).await,
                    PhaseAction::Attack => self.attack(t).await,
                }
            }
            if self.should_finish() {
                return;
            }
        }
    }

    async fn communicate<T: Table>(&mut self, t: &mut T, kind: RequestKind) {
        let whisper = kind == RequestKind::Whisper;
        let mut agents = if whisper {
            self.alive_wolves()
        } else {
            self.alive_agents()
        };
        if agents.len() < 2 {
            return;
        }
        let l: TalkLimits = if whisper {
            self.s.whisper.clone()
        } else {
            self.s.talk.clone()
        };
        let n = self.names.len();
        let mut remain = Remain {
            count: vec![None; n],
            length: vec![None; n],
            skip: vec![None; n],
        };
        for &a in &agents {
            remain.count[a] = Some(i64::from(l.per_agent));
            remain.length[a] = l.per_agent_length;
            remain.skip[a] = Some(i64::from(l.max_skip));
        }
        self.remain = Some(remain);
        if let Some(ms) = l.duration_ms {
            self.group_chat(t, kind, agents, &l, ms).await;
            self.remain = None;
            return;
        }
        let rng = if whisper {
            &mut self.rng_whisper
        } else {
            &mut self.rng_talk
        };
        rng::shuffle(rng, &mut agents);
        let mut idx = 0u32;
        for turn in 0..l.per_day {
            let mut spoke = false;
            for &a in &agents {
                let r = self.remain.as_ref().expect("set above");
                if r.count[a].unwrap_or(0) <= 0 || r.length[a].is_some_and(|x| x <= 0) {
                    continue;
                }
                if let Some(c) = self.remain.as_mut().and_then(|r| r.count[a].as_mut()) {
                    *c -= 1;
                }
                let mut text = match self.ask(t, a, kind).await {
                    Some(s) if s == FORCE_SKIP => SKIP.to_string(),
                    Some(s) => s,
                    None => FORCE_SKIP.to_string(),
                };
                // Upstream stamps a talk when the answer (or the failure) is in.
                let time = self.now_ms();
                let r = self.remain.as_mut().expect("set above");
                if text == SKIP {
                    let sk = r.skip[a].get_or_insert(0);
                    if *sk <= 0 {
                        text = OVER.to_string();
                    } else {
                        *sk -= 1;
                    }
                } else if text == FORCE_SKIP {
                    text = SKIP.to_string();
                }
                if text != OVER && text != SKIP {
                    r.skip[a] = Some(i64::from(l.max_skip));
                    let mut rem = r.length[a];
                    text = text::limit_speech(&text, &l, &mut rem, &self.names, a);
                    r.length[a] = rem;
                    if text.is_empty() {
                        text = OVER.to_string();
                    }
                }
                let over = text == OVER;
                if over {
                    r.count[a] = Some(0);
                } else {
                    spoke = true;
                }
                let e = TalkEntry::new(idx, self.day, turn, self.names[a].clone(), text, time);
                self.record_talk(kind, a, e);
                idx += 1;
            }
            if !spoke {
                break;
            }
        }
        self.remain = None;
    }

    /// Keep agent `a`'s talk (or whisper) `e`: in the day's list and the game log.
    fn record_talk(&mut self, kind: RequestKind, a: usize, e: TalkEntry) {
        let whisper = kind == RequestKind::Whisper || kind == RequestKind::WhisperBroadcast;
        let line = format!(
            "{},{},{},{},{},{}",
            self.day,
            if whisper { "whisper" } else { "talk" },
            e.idx,
            e.turn,
            a + 1,
            e.text
        );
        self.log.push(line);
        let (ms, is_day) = (e.time, self.is_day);
        self.log_marks.push(LogMark { ms, is_day });
        if whisper {
            self.cur_mut().whispers.push(e);
        } else {
            self.cur_mut().talks.push(e);
        }
    }

    /// Group-chat mode: phase start, free messages checked against the per-agent count and
    /// length limits and broadcast, `Over` closes an agent, phase end when the time is up.
    async fn group_chat<T: Table>(
        &mut self,
        t: &mut T,
        kind: RequestKind,
        agents: Vec<usize>,
        l: &TalkLimits,
        duration_ms: u64,
    ) {
        let whisper = kind == RequestKind::Whisper;
        let (start, end, cast) = if whisper {
            (
                RequestKind::WhisperPhaseStart,
                RequestKind::WhisperPhaseEnd,
                RequestKind::WhisperBroadcast,
            )
        } else {
            (
                RequestKind::TalkPhaseStart,
                RequestKind::TalkPhaseEnd,
                RequestKind::TalkBroadcast,
            )
        };
        for &a in &agents {
            self.notify(t, a, start).await;
        }
        let open: Vec<usize> = agents
            .iter()
            .copied()
            .filter(|&a| !self.has_error[a])
            .collect();
        let mut idx = 0u32;
        let listeners = agents.clone();
        let mut accepted: Vec<(usize, TalkEntry)> = Vec::new();
        // Each agent's messages accepted so far: upstream's `turn` in group chat.
        let mut turns = vec![0u32; self.names.len()];
        {
            let remain = self.remain.as_mut().expect("set by communicate");
            let names = self.names.clone();
            let (day, start_ms) = (self.day, self.start_ms);
            let mut accept = |m: ChatMessage| -> Vec<(usize, Packet)> {
                let a = m.agent;
                if remain.count[a].unwrap_or(0) <= 0 || remain.length[a].is_some_and(|x| x <= 0) {
                    return Vec::new();
                }
                let mut text = m.text.replace('\n', "");
                if text == SKIP || text == FORCE_SKIP || text.is_empty() {
                    return Vec::new();
                }
                if text != OVER {
                    let mut rem = remain.length[a];
                    text = text::limit_speech(&text, l, &mut rem, &names, a);
                    remain.length[a] = rem;
                    if text.is_empty() {
                        text = OVER.to_string();
                    }
                }
                if let Some(c) = remain.count[a].as_mut() {
                    *c -= 1;
                }
                if text == OVER {
                    remain.count[a] = Some(0);
                }
                let time = start_ms.saturating_add(m.elapsed_ms);
                let entry = TalkEntry::new(idx, day, turns[a], names[a].clone(), text, time);
                idx += 1;
                turns[a] += 1;
                accepted.push((a, entry.clone()));
                let mut p = Packet::bare(cast);
                if whisper {
                    p.new_whisper = Some(entry);
                } else {
                    p.new_talk = Some(entry);
                }
                listeners.iter().map(|&b| (b, p.clone())).collect()
            };
            t.chat(open, duration_ms, &mut accept).await;
        }
        self.clock_ms = t.elapsed_ms();
        for (a, e) in accepted {
            self.record_talk(kind, a, e);
        }
        for &a in &agents {
            self.notify(t, a, end).await;
        }
    }

    /// Ask `voters` for a target; keep valid votes (a living agent; oneself only if allowed).
    async fn collect_votes<T: Table>(
        &mut self,
        t: &mut T,
        kind: RequestKind,
        voters: Vec<usize>,
        allow_self: bool,
    ) -> Vec<(usize, usize)> {
        let mut votes = Vec::new();
        for a in voters {
            let Some(name) = self.ask(t, a, kind).await else {
                continue;
            };
            let Some(target) = self.find(&name) else {
                continue;
            };
            if !self.alive(target) || (!allow_self && target == a) {
                continue;
            }
            votes.push((a, target));
            let what = if kind == RequestKind::Vote {
                "vote"
            } else {
                "attackVote"
            };
            self.push_log(format!("{},{what},{},{}", self.day, a + 1, target + 1));
        }
        votes
    }

    /// The most-voted targets, ascending agent number.
    fn candidates(votes: &[(usize, usize)], keep: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut count: BTreeMap<usize, u32> = BTreeMap::new();
        for &(_, t) in votes {
            if keep(t) {
                *count.entry(t).or_default() += 1;
            }
        }
        let max = count.values().copied().max().unwrap_or(0);
        count
            .into_iter()
            .filter(|&(_, c)| c == max && max > 0)
            .map(|(t, _)| t)
            .collect()
    }

    async fn execution<T: Table>(&mut self, t: &mut T) {
        let mut executed = None;
        let mut candidates = Vec::new();
        for _ in 0..self.s.vote_max_count {
            let voters = self.alive_agents();
            let votes = self
                .collect_votes(t, RequestKind::Vote, voters, self.s.vote_allow_self)
                .await;
            self.cur_mut().votes = votes;
            candidates = Self::candidates(&self.cur().votes, |_| true);
            if candidates.len() == 1 {
                executed = Some(candidates[0]);
                break;
            }
        }
        if executed.is_none() {
            executed = rng::pick(&mut self.rng_tie, &candidates);
        }
        if let Some(e) = executed {
            self.cur_mut().alive[e] = false;
            self.cur_mut().executed = Some(e);
            self.push_log(format!(
                "{},execute,{},{}",
                self.day,
                e + 1,
                self.roles[e].name()
            ));
        }
    }

    async fn divine<T: Table>(&mut self, t: &mut T) {
        let Some(seer) = self
            .alive_agents()
            .into_iter()
            .find(|&a| self.roles[a] == Role::Seer)
        else {
            return;
        };
        let Some(name) = self.ask(t, seer, RequestKind::Divine).await else {
            return;
        };
        let Some(target) = self.find(&name) else {
            return;
        };
        if !self.alive(target) || target == seer {
            return;
        }
        self.cur_mut().divine = Some((seer, target));
        self.push_log(format!(
            "{},divine,{},{},{}",
            self.day,
            seer + 1,
            target + 1,
            species(self.roles[target]).name()
        ));
    }

    async fn guard<T: Table>(&mut self, t: &mut T) {
        let Some(guard) = self
            .alive_agents()
            .into_iter()
            .find(|&a| self.roles[a] == Role::Bodyguard)
        else {
            return;
        };
        let Some(name) = self.ask(t, guard, RequestKind::Guard).await else {
            return;
        };
        let Some(target) = self.find(&name) else {
            return;
        };
        if !self.alive(target) || target == guard {
            return;
        }
        self.cur_mut().guard = Some((guard, target));
        self.push_log(format!(
            "{},guard,{},{},{}",
            self.day,
            guard + 1,
            target + 1,
            self.roles[target].name()
        ));
    }

    async fn attack<T: Table>(&mut self, t: &mut T) {
        if self.alive_wolves().is_empty() {
            return;
        }
        let mut attacked = None;
        let mut candidates = Vec::new();
        for _ in 0..self.s.attack_max_count {
            let wolves = self.alive_wolves();
            let votes = self
                .collect_votes(t, RequestKind::Attack, wolves, self.s.attack_allow_self)
                .await;
            self.cur_mut().attack_votes = votes;
            let roles = self.roles.clone();
            candidates = Self::candidates(&self.cur().attack_votes, |x| roles[x] != Role::Werewolf);
            if candidates.len() == 1 {
                attacked = Some(candidates[0]);
                break;
            }
        }
        if attacked.is_none() && !self.s.attack_allow_no_target {
            attacked = rng::pick(&mut self.rng_tie, &candidates);
        }
        match attacked {
            Some(a) => {
                let guarded = self
                    .cur()
                    .guard
                    .is_some_and(|(g, target)| target == a && self.alive(g));
                if guarded {
                    self.push_log(format!("{},attack,{},false", self.day, a + 1));
                } else {
                    self.cur_mut().alive[a] = false;
                    self.cur_mut().attacked = Some(a);
                    self.push_log(format!("{},attack,{},true", self.day, a + 1));
                }
            }
            None => self.push_log(format!("{},attack,-1,true", self.day)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_ids_are_ulids_holding_a_keyed_hash_of_the_seed_never_the_seed() {
        for seed in [0u64, 7, 32, u64::MAX] {
            let id = game_id_of(seed);
            assert_eq!(id.len(), 26);
            // Time 0: the first ten characters.
            assert_eq!(&id[..10], "0000000000", "{id}");
            let ulid = ulid::Ulid::from_string(&id).unwrap();
            let random = ulid.random();
            assert_ne!(random, u128::from(seed), "{id}");
            // 80 random bits, the last 64 of them the keyed hash the ULID keeps.
            let lo = random & u128::from(u64::MAX);
            assert_eq!(
                lo,
                u128::from(kakehiki_core::keyed_seed(seed, "nlp-game-id/lo"))
            );
            assert_eq!(game_id_of(seed), id, "the same seed gives the same id");
        }
        assert_ne!(game_id_of(7), game_id_of(8));
    }

    #[test]
    fn game_ids_carry_the_time_in_the_first_ten_characters() {
        // 2025-01-01T00:00:00.000Z = 1735689600000 ms: ULID time "01JGFJJZ00".
        let id = game_id_at(1_735_689_600_000, 7);
        assert_eq!(&id[..10], "01JGFJJZ00");
        assert_eq!(&id[10..], &game_id_of(7)[10..]);
        let now = game_id_now(7);
        assert!(now.as_str() > "01JGFJJZ00", "{now}");
        assert_eq!(&now[10..], &game_id_of(7)[10..]);
    }
}
