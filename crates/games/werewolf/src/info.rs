//! What one agent may know: the `gameInfo` of §4.6, built per recipient.
//!
//! [`GameInfo::for_agent`] is the only place hidden information is filtered. Both the wire
//! packets and the built-in agents' observations are built from it.

use crate::engine::Werewolf;
use crate::talk::Talk;
use crate::types::{Judge, Role, Status, Vote};

/// The `gameInfo` of one recipient, borrowing the engine's lists.
#[derive(Debug, Clone, PartialEq)]
pub struct GameInfo<'a> {
    pub agent: usize,
    pub attack_vote_list: &'a [Vote],
    pub attacked_agent: Option<usize>,
    pub day: u32,
    pub divine_result: Option<Judge>,
    pub executed_agent: Option<usize>,
    pub existing_role_list: &'a [Role],
    pub guarded_agent: Option<usize>,
    pub last_dead_agent_list: &'a [usize],
    pub latest_attack_vote_list: &'a [Vote],
    pub latest_executed_agent: Option<usize>,
    pub latest_vote_list: &'a [Vote],
    pub medium_result: Option<Judge>,
    /// (agent, talks left), ascending agent.
    pub remain_talk_map: Vec<(usize, u32)>,
    pub remain_whisper_map: Vec<(usize, u32)>,
    /// (agent, role), ascending agent.
    pub role_map: Vec<(usize, Role)>,
    /// Status of agent `i + 1`.
    pub status_map: Vec<Status>,
    pub talk_list: &'a [Talk],
    pub vote_list: &'a [Vote],
    pub whisper_list: &'a [Talk],
}

impl<'a> GameInfo<'a> {
    /// The gameInfo `agent` may see now; `reveal_all` only for FINISH.
    pub fn for_agent(g: &'a Werewolf, agent: usize, reveal_all: bool) -> GameInfo<'a> {
        let n = g.player_num();
        let own = g.role(agent);
        let wolf = own == Role::Werewolf;
        let s = g.settings();
        let role_map = (1..=n)
            .filter(|&a| reveal_all || a == agent || (wolf && g.role(a) == Role::Werewolf))
            .map(|a| (a, g.role(a)))
            .collect();
        let none_votes: &'a [Vote] = &[];
        GameInfo {
            agent,
            attack_vote_list: if wolf {
                g.attack_votes_prev()
            } else {
                none_votes
            },
            attacked_agent: if wolf { g.attacked_prev() } else { None },
            day: g.day(),
            divine_result: g
                .divine_result()
                .filter(|j| j.agent == agent && own == Role::Seer),
            executed_agent: g.executed_prev(),
            existing_role_list: g.existing_roles(),
            guarded_agent: if own == Role::Bodyguard {
                g.guarded_prev()
            } else {
                None
            },
            last_dead_agent_list: g.last_dead(),
            latest_attack_vote_list: if wolf {
                g.attack_votes_latest()
            } else {
                none_votes
            },
            latest_executed_agent: g.executed_today(),
            latest_vote_list: if s.vote_visible {
                g.votes_latest()
            } else {
                none_votes
            },
            medium_result: if own == Role::Medium {
                g.medium_target().map(|(target, result)| Judge {
                    agent,
                    day: g.day(),
                    target,
                    result,
                })
            } else {
                None
            },
            remain_talk_map: g
                .remain_talk()
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.map(|r| (i + 1, r)))
                .collect(),
            remain_whisper_map: if wolf {
                g.remain_whisper()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| r.map(|r| (i + 1, r)))
                    .collect()
            } else {
                Vec::new()
            },
            role_map,
            status_map: (1..=n).map(|a| g.status(a)).collect(),
            talk_list: g.talks(),
            vote_list: if s.vote_visible {
                g.votes_prev()
            } else {
                none_votes
            },
            whisper_list: if wolf { g.whispers() } else { &[] },
        }
    }

    /// Whether `a` is alive in this view.
    pub fn is_alive(&self, a: usize) -> bool {
        self.status_map.get(a.wrapping_sub(1)) == Some(&Status::Alive)
    }

    /// Alive agents, ascending.
    pub fn alive(&self) -> impl Iterator<Item = usize> + '_ {
        self.status_map
            .iter()
            .enumerate()
            .filter(|(_, s)| **s == Status::Alive)
            .map(|(i, _)| i + 1)
    }

    /// The recipient's own role.
    pub fn my_role(&self) -> Role {
        self.role_map
            .iter()
            .find(|(a, _)| *a == self.agent)
            .map(|(_, r)| *r)
            .unwrap_or(Role::Villager)
    }
}
