//! The longest a game can last while every agent answers legally, each answer arriving just
//! within its limit: the game's part of the referee's longest legal match (a contest refuses a
//! `match_timeout_s` below it). Counted from how [`super::game`] asks, one request at a time:
//!
//! * **Requests.** Every request that waits for an answer (TALK and WHISPER in turns, VOTE,
//!   DIVINE, GUARD, ATTACK) is awaited `action + acceptable` ([`Timeouts::action`]). A legal
//!   answer comes within it; a late or unreadable one is followed by the NAME check, which is not
//!   a legal answer and is not counted. Notifications (INITIALIZE, DAILY_INITIALIZE,
//!   DAILY_FINISH, FINISH, the group-chat phase packets and broadcasts) are writes, counted as
//!   prompt.
//! * **A talk or whisper phase** of `k` agents has nothing below two. In turns each agent is asked
//!   at most `min(per_agent, per_day)` times: a request spends one of its `per_agent` whatever it
//!   answers, at most `per_day` rounds are played, and `Skip` and `Over` only end an agent's (or
//!   the phase's) turns sooner, so `max_skip` adds no request. In group chat (`duration` set) the
//!   phase is one window of `duration` (built-in agents take their turns at once before it).
//! * **Days.** Each day plays the day's phases of `logic.day_phases`, then the night's of
//!   `logic.night_phases`, those that are on that day (`only_day`, `except_day`), each action
//!   in order: a talk or whisper phase (above), an execution (`vote.max_count` votes of every
//!   living agent), a divination or a guard (once, when the role table has a seer or a
//!   bodyguard), an attack (`attack_vote.max_count` votes of every living werewolf). Upstream's
//!   default: day 0 a whisper, the talk, a whisper (night), the divination; later days the talk,
//!   then at night the execution, the divination, a whisper, the guard and the attack.
//!   The last day is `max_day` (day 100, [`MAX_DAYS`], when it is unlimited) — or sooner, when
//!   there is a vote (`vote.max_count` ≥ 1): a legal vote names a living agent (the rules' vote;
//!   any other answer is no vote), so every execution exiles one, at most `n − e` agents live
//!   after `e` executions, and a game goes on only while its werewolves (at least one) are
//!   outnumbered by its humans, i.e. while three or more live. So at the start of a phase after
//!   the game's first, which the game checked for its end, fewer than half of the living are
//!   werewolves (`min(werewolves, ⌊(alive − 1) / 2⌋)` whisper and vote to attack); with two or
//!   fewer alive after a phase the game is over — except that a day which ends the game is
//!   followed by its night's first phase, as the game plays it.
//!   A game in which every vote of a day names nobody valid can run to the last day that
//!   `max_day` allows; such answers are not legal votes, and a match that outlasts its time
//!   limit because of them charges the seats that used the most time.
//!
//! Attacks are not counted on (a guard or a vote for a werewolf stops one): they only shorten a
//! game.

use std::time::Duration;

use super::game::MAX_DAYS;
use super::seats::Timeouts;
use super::settings::{NlpSettings, Phase, PhaseAction, TalkLimits};
use crate::types::Role;

/// The most a game of the given settings can ask of its agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongestGame {
    /// The last day the game can reach (it starts on day 0).
    pub last_day: u32,
    /// The requests awaited one after another.
    pub requests: u64,
    /// The time of one request, `action + acceptable`, in milliseconds.
    pub request_ms: u64,
    /// The group-chat windows' time, in milliseconds (each lasts its phase's `duration`).
    pub chat_ms: u64,
}

impl LongestGame {
    /// The longest game of `s` (see the module's documentation).
    pub fn of(s: &NlpSettings) -> LongestGame {
        let n = s.agent_count as u64;
        let count = |role: Role| -> u64 {
            s.roles
                .iter()
                .filter(|(r, _)| *r == role)
                .map(|(_, c)| *c as u64)
                .sum()
        };
        let mut w = Walk {
            s,
            n,
            wolves: count(Role::Werewolf),
            seer: u64::from(count(Role::Seer) > 0),
            guard: u64::from(count(Role::Bodyguard) > 0),
            exiled: 0,
            g: LongestGame {
                last_day: 0,
                requests: 0,
                request_ms: Timeouts::of(s).action().as_millis() as u64,
                chat_ms: 0,
            },
        };
        let last = s.max_day.unwrap_or(MAX_DAYS).min(MAX_DAYS);
        // Whether the game has checked for its end (after each phase): until then any number of
        // the werewolves may live.
        let mut checked = false;
        'days: for day in 0..=last {
            w.g.last_day = day;
            for (phases, night) in [(&s.day_phases, false), (&s.night_phases, true)] {
                for phase in phases.iter().filter(|p| p.on(day)) {
                    w.phase(phase, checked);
                    checked = true;
                    if !w.over() {
                        continue;
                    }
                    // A day that ends the game is followed by its night all the same, which
                    // plays its first phase before the end is seen.
                    let first = s.night_phases.iter().find(|p| p.on(day));
                    if let (false, Some(first)) = (night, first) {
                        w.phase(first, false);
                    }
                    break 'days;
                }
            }
        }
        w.g
    }

    /// The game's time: every request at its limit, every group-chat window to its end.
    pub fn time(&self) -> Duration {
        let ms = self.requests.saturating_mul(self.request_ms);
        Duration::from_millis(ms.saturating_add(self.chat_ms))
    }

    fn ask(&mut self, requests: u64) {
        self.requests = self.requests.saturating_add(requests);
    }

    /// A talk or whisper phase of `agents` agents.
    fn talk(&mut self, l: &TalkLimits, agents: u64) {
        if agents < 2 {
            return;
        }
        match l.duration_ms {
            Some(ms) => self.chat_ms = self.chat_ms.saturating_add(ms),
            None => self.ask(agents.saturating_mul(u64::from(l.per_agent.min(l.per_day)))),
        }
    }
}

/// The walk of [`LongestGame::of`] through the days' phases.
struct Walk<'a> {
    s: &'a NlpSettings,
    n: u64,
    wolves: u64,
    seer: u64,
    guard: u64,
    /// The exiles so far: one per execution while there is a vote.
    exiled: u64,
    g: LongestGame,
}

impl Walk<'_> {
    /// At most this many live: `n` less the exiles (attacks only shorten a game).
    fn alive(&self) -> u64 {
        self.n.saturating_sub(self.exiled)
    }

    /// Whether the game is over: with two or fewer left, one side has won.
    fn over(&self) -> bool {
        self.s.vote_max_count > 0 && self.alive() <= 2
    }

    /// The actions of `phase`. `going`: the game is known to go on at its start, so fewer than
    /// half of the living are werewolves; else (the first phase of the game, or the night after a
    /// day that ended it) any of them may be.
    fn phase(&mut self, phase: &Phase, going: bool) {
        let alive = self.alive();
        let wolves = match going {
            true => self.wolves.min(alive.saturating_sub(1) / 2),
            false => self.wolves.min(alive),
        };
        for action in &phase.actions {
            let (alive, s) = (self.alive(), self.s);
            let wolves = wolves.min(alive);
            match action {
                PhaseAction::Talk => self.g.talk(&s.talk, alive),
                PhaseAction::Whisper => self.g.talk(&s.whisper, wolves),
                PhaseAction::Execution => {
                    self.g
                        .ask(u64::from(s.vote_max_count).saturating_mul(alive));
                    if s.vote_max_count > 0 {
                        self.exiled = (self.exiled + 1).min(self.n);
                    }
                }
                PhaseAction::Divine => self.g.ask(self.seer),
                PhaseAction::Guard => self.g.ask(self.guard),
                PhaseAction::Attack => self
                    .g
                    .ask(u64::from(s.attack_max_count).saturating_mul(wolves)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nlp::game::{AskError, ChatMessage, NlpGame, Table};
    use crate::nlp::inproc::block_on_ready;
    use crate::nlp::packet::{Packet, RequestKind};
    use std::sync::Arc;

    /// The defaults of 5 agents (1 werewolf, a seer, no bodyguard; talk 4 per agent and 20
    /// rounds, so 4 requests each; no whispers with one werewolf; one vote, one attack vote;
    /// `max_day` -1): the game ends by day 3 (5 − 2).
    /// Day 0: 5 × 4 talks + 1 divine = 21. Day 1 (5 alive): 20 talks + 5 votes, then 1 divine +
    /// 1 attack vote = 27. Day 2 (4 alive): 16 + 4 + 1 + 1 = 22. Day 3 (3 alive): 12 + 3, and
    /// the exile leaves 2: over, no night = 15. 85 requests at 60 s + 5 s = 5,525 s.
    #[test]
    fn five_agents_by_default_ask_85_requests_until_day_3() {
        let g = LongestGame::of(&NlpSettings::defaults(5).unwrap());
        assert_eq!(
            g,
            LongestGame {
                last_day: 3,
                requests: 85,
                request_ms: 65_000,
                chat_ms: 0
            }
        );
        assert_eq!(g.time(), Duration::from_secs(5_525));
    }

    /// The defaults of 13 agents (3 werewolves, a seer, a bodyguard; talk 4 per agent in 52
    /// rounds; whisper 4 per werewolf in 12 rounds): the game ends by day 11 (13 − 2).
    /// Day 0: 12 whispers + 52 talks + 12 whispers + 1 divine = 77.
    /// Days 1 to 11, a = 14 − d alive: 4a talks + a votes; the a sum to 13 + 12 + … + 3 = 88:
    /// 5 × 88 = 440.
    /// Nights 1 to 10 (13 − d left, at most ⌊(12 − d) / 2⌋ of them werewolves, and 3): a divine
    /// and a guard, 20; werewolves 3, 3, 3, 3, 3, 3, 2, 2, 1, 1: whispers 4 each when two or more,
    /// 6 × 12 + 2 × 8 = 88, attack votes 18 + 4 + 2 = 24; 132. Night 11: 2 left, over.
    /// 77 + 440 + 132 = 649 requests at 65 s = 42,185 s.
    #[test]
    fn thirteen_agents_by_default_ask_649_requests_until_day_11() {
        let g = LongestGame::of(&NlpSettings::defaults(13).unwrap());
        assert_eq!((g.last_day, g.requests, g.chat_ms), (11, 649, 0));
        assert_eq!(g.time(), Duration::from_secs(42_185));
    }

    #[test]
    fn the_bound_grows_with_the_timeouts_and_the_talk_limits() {
        let base = NlpSettings::defaults(5).unwrap();
        let longest = |f: &dyn Fn(&mut NlpSettings)| {
            let mut s = base.clone();
            f(&mut s);
            LongestGame::of(&s)
        };
        let t0 = LongestGame::of(&base).time();
        assert!(longest(&|s| s.timeout_action_ms += 1_000).time() > t0);
        assert!(longest(&|s| s.timeout_acceptable_ms += 1_000).time() > t0);
        // 6 per agent: 2 more talks a day for each of 5 + 5 + 4 + 3 agents.
        assert_eq!(longest(&|s| s.talk.per_agent = 6).requests, 85 + 2 * 17);
        // 20 rounds cap 30 per agent: 16 more a day each.
        assert_eq!(longest(&|s| s.talk.per_agent = 30).requests, 85 + 16 * 17);
        // 2 rounds cap 4 per agent: 2 fewer.
        assert_eq!(longest(&|s| s.talk.per_day = 2).requests, 85 - 2 * 17);
        // Skips add no request.
        assert_eq!(longest(&|s| s.talk.max_skip = 5).requests, 85);
        // Re-votes: a second round of every voter.
        assert_eq!(longest(&|s| s.vote_max_count = 2).requests, 85 + 5 + 4 + 3);
        // Two more attack votes on nights 1 and 2.
        assert_eq!(longest(&|s| s.attack_max_count = 3).requests, 85 + 2 * 2);
        // A shorter game.
        let one = longest(&|s| s.max_day = Some(1));
        assert_eq!((one.last_day, one.requests), (1, 21 + 27));
        // Group chat: one window a day instead of the talk requests.
        let chat = longest(&|s| s.talk.duration_ms = Some(30_000));
        assert_eq!((chat.requests, chat.chat_ms), (85 - 68, 4 * 30_000));
        assert!(longest(&|s| s.talk.duration_ms = Some(40_000)).time() > chat.time());
    }

    /// Configured phases: 5 agents whose day is the talk and whose night, from day 1, is one
    /// phase of the execution and the attack (no divination). Day 0: 20 talks. Day 1: 20 talks,
    /// 5 votes, 1 attack vote = 26. Day 2: 16 + 4 + 1 = 21. Day 3: 12 talks, 3 votes; the exile
    /// leaves 2, but the attack of the same phase comes before the end is seen: 16. 83 requests.
    #[test]
    fn the_bound_follows_the_configured_phases() {
        let mut s = NlpSettings::defaults(5).unwrap();
        let phase = |actions: Vec<PhaseAction>, except_day| Phase {
            name: String::new(),
            actions,
            only_day: None,
            except_day,
        };
        s.day_phases = vec![phase(vec![PhaseAction::Talk], None)];
        s.night_phases = vec![phase(
            vec![PhaseAction::Execution, PhaseAction::Attack],
            Some(0),
        )];
        let g = LongestGame::of(&s);
        assert_eq!((g.last_day, g.requests), (3, 83));
        // No phases at all: nothing is asked, to the last day.
        (s.day_phases, s.night_phases) = (Vec::new(), Vec::new());
        let g = LongestGame::of(&s);
        assert_eq!((g.last_day, g.requests), (MAX_DAYS, 0));
    }

    /// Without a vote nobody is exiled: the game runs to `max_day`, or to day 100.
    #[test]
    fn without_votes_the_game_runs_to_max_day_or_day_100() {
        let mut s = NlpSettings::defaults(5).unwrap();
        s.vote_max_count = 0;
        // Day 0: 21; every later day 20 talks + 1 divine + 1 attack.
        let g = LongestGame::of(&s);
        assert_eq!((g.last_day, g.requests), (MAX_DAYS, 21 + 100 * 22));
        s.max_day = Some(7);
        assert_eq!(LongestGame::of(&s).requests, 21 + 7 * 22);
        s.max_day = Some(u32::MAX);
        assert_eq!(LongestGame::of(&s).last_day, MAX_DAYS);
    }

    /// Seats for [`NlpGame::run`] that answer every request legally and count them: every talk
    /// and whisper is speech (never `Skip` or `Over`); with `rng` `None` everyone votes to make
    /// the game last (a human while more than one human too many lives, the seer and the
    /// bodyguard last, else a werewolf while two live; the
    /// werewolves attack one of their own, which is no attack), else at random among the living.
    struct Counting {
        roles: std::collections::BTreeMap<String, String>,
        rng: Option<u64>,
        requests: u64,
        chat_ms: u64,
    }

    impl Counting {
        fn pick<'a>(&mut self, among: &[&'a str]) -> &'a str {
            let Some(x) = &mut self.rng else {
                return among[0];
            };
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            among[(*x % among.len() as u64) as usize]
        }
    }

    impl Table for Counting {
        async fn notify(&mut self, _: usize, p: Packet) -> Result<(), ()> {
            if let (RequestKind::Initialize, Some(i)) = (p.request, &p.info) {
                let role = i.role_map[&i.agent];
                self.roles.insert(i.agent.to_string(), role.to_string());
            }
            Ok(())
        }

        async fn ask(&mut self, _: usize, p: Packet) -> Result<String, AskError> {
            self.requests += 1;
            let info = p.info.as_ref().expect("every request has info");
            let alive: Vec<&str> = info
                .status_map
                .iter()
                .filter(|(_, s)| **s == "ALIVE")
                .map(|(n, _)| &**n)
                .collect();
            let wolf = |n: &str| self.roles.get(n).is_some_and(|r| r == "WEREWOLF");
            let wolves: Vec<&str> = alive.iter().copied().filter(|n| wolf(n)).collect();
            // Humans, those asked at night last.
            let night = |n: &str| {
                self.roles
                    .get(n)
                    .is_some_and(|r| r == "SEER" || r == "BODYGUARD")
            };
            let mut humans: Vec<&str> = alive.iter().copied().filter(|n| !wolf(n)).collect();
            humans.sort_by_key(|n| night(n));
            let slow = self.rng.is_none();
            let target = match p.request {
                RequestKind::Talk | RequestKind::Whisper => return Ok("Hello, everyone.".into()),
                RequestKind::Vote
                    if slow && humans.len() <= wolves.len() + 1 && wolves.len() > 1 =>
                {
                    wolves[0]
                }
                RequestKind::Vote if slow => humans[0],
                RequestKind::Attack if slow => wolves[0],
                _ => self.pick(&alive),
            };
            Ok(target.to_string())
        }

        async fn chat(
            &mut self,
            _: Vec<usize>,
            duration_ms: u64,
            _: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
        ) {
            self.chat_ms += duration_ms;
        }
    }

    fn play(s: &NlpSettings, seed: u64, rng: Option<u64>) -> Counting {
        let n = s.agent_count;
        let mut t = Counting {
            roles: Default::default(),
            rng,
            requests: 0,
            chat_ms: 0,
        };
        let names = (1..=n).map(|i| format!("a{i}")).collect();
        let mut game = NlpGame::new(Arc::new(s.clone()), seed, names);
        block_on_ready(game.run(&mut t));
        t
    }

    /// The engine itself, played with answers that make a game last and with random legal
    /// answers, never asks more than the bound; a game made to last asks all of it.
    #[test]
    fn played_games_stay_within_the_bound_and_a_slow_one_reaches_it() {
        let mut cases = Vec::new();
        for n in [5, 9, 13] {
            cases.push(NlpSettings::defaults(n).unwrap());
        }
        let mut s = NlpSettings::defaults(9).unwrap();
        (s.vote_max_count, s.attack_max_count, s.talk.per_agent) = (2, 2, 7);
        cases.push(s);
        let mut s = NlpSettings::defaults(13).unwrap();
        s.max_day = Some(3);
        cases.push(s);
        let mut s = NlpSettings::defaults(9).unwrap();
        (s.talk.duration_ms, s.whisper.duration_ms) = (Some(1_000), Some(500));
        cases.push(s);
        // Configured phases: the exile by day (the night after the last exile still opens), two
        // talks a day, a night without divination or guard.
        let phase = |a: &[PhaseAction], only: Option<i64>, except: Option<i64>| Phase {
            name: String::new(),
            actions: a.to_vec(),
            only_day: only,
            except_day: except,
        };
        use PhaseAction::*;
        let mut s = NlpSettings::defaults(9).unwrap();
        s.day_phases = vec![phase(&[Talk, Execution], None, Some(0))];
        s.night_phases = vec![
            phase(&[Divine], None, None),
            phase(&[Whisper, Guard], None, Some(0)),
            phase(&[Attack], None, Some(0)),
        ];
        cases.push(s);
        let mut s = NlpSettings::defaults(13).unwrap();
        s.day_phases = vec![phase(&[Talk], None, None), phase(&[Talk], None, Some(0))];
        cases.push(s);
        let mut s = NlpSettings::defaults(5).unwrap();
        s.day_phases = vec![phase(&[Talk], None, None)];
        s.night_phases = vec![phase(&[Execution, Attack], None, Some(0))];
        cases.push(s);
        for s in &cases {
            let bound = LongestGame::of(s);
            let n = s.agent_count;
            for seed in 0..40 {
                let t = play(s, seed, Some(seed * 7919 + 1));
                assert!(t.requests <= bound.requests, "{n}, seed {seed}");
                assert!(t.chat_ms <= bound.chat_ms, "{n}, seed {seed}");
            }
            for seed in 0..5 {
                let t = play(s, seed, None);
                assert!(t.requests <= bound.requests, "{n}, seed {seed}");
                assert!(t.chat_ms <= bound.chat_ms, "{n}, seed {seed}");
                // An exile by day that ends the game still opens the night, whose first phase
                // (here the divination) the bound counts though the seer may be dead by then.
                let by_day = s
                    .day_phases
                    .iter()
                    .any(|p| p.actions.contains(&PhaseAction::Execution));
                if s.vote_max_count == 1 {
                    // Unanimous votes need no re-vote: with one vote round, all of it.
                    let slack = u64::from(by_day);
                    assert!(
                        t.requests + slack >= bound.requests && t.chat_ms == bound.chat_ms,
                        "{n}, seed {seed}: {} of {}",
                        t.requests,
                        bound.requests
                    );
                }
            }
        }
    }

    /// Limits at their largest saturate instead of overflowing.
    #[test]
    fn huge_limits_saturate() {
        let mut s = NlpSettings::defaults(13).unwrap();
        s.talk.per_agent = u32::MAX;
        s.talk.per_day = u32::MAX;
        s.timeout_action_ms = 1_000_000_000_000;
        s.vote_max_count = 0;
        let g = LongestGame::of(&s);
        assert_eq!(g.time(), Duration::from_millis(u64::MAX));
    }
}
