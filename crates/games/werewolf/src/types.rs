//! Roles, teams, species, statuses and the small records of the game (talk, vote, judge).

use std::fmt;

/// A role. `ANY` exists only in `roleNumMap` and in talk, so it is not a variant here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Bodyguard,
    Freemason,
    Medium,
    Possessed,
    Seer,
    Villager,
    Werewolf,
    Fox,
}

impl Role {
    /// Every role, in the order roles are filled at the deal (§2.1).
    pub const FILL_ORDER: [Role; 8] = [
        Role::Bodyguard,
        Role::Freemason,
        Role::Medium,
        Role::Possessed,
        Role::Seer,
        Role::Villager,
        Role::Werewolf,
        Role::Fox,
    ];

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Role::Bodyguard => "BODYGUARD",
            Role::Freemason => "FREEMASON",
            Role::Medium => "MEDIUM",
            Role::Possessed => "POSSESSED",
            Role::Seer => "SEER",
            Role::Villager => "VILLAGER",
            Role::Werewolf => "WEREWOLF",
            Role::Fox => "FOX",
        }
    }

    /// Parse a wire name (exact, upper case).
    pub fn from_name(s: &str) -> Option<Role> {
        Role::FILL_ORDER.into_iter().find(|r| r.name() == s)
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn team(self) -> Team {
        match self {
            Role::Werewolf | Role::Possessed => Team::Werewolf,
            Role::Fox => Team::Others,
            _ => Team::Villager,
        }
    }

    /// What the seer and the medium see.
    pub fn species(self) -> Species {
        if self == Role::Werewolf {
            Species::Werewolf
        } else {
            Species::Human
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Team {
    Villager,
    Werewolf,
    Others,
}

impl Team {
    pub fn name(self) -> &'static str {
        match self {
            Team::Villager => "VILLAGER",
            Team::Werewolf => "WEREWOLF",
            Team::Others => "OTHERS",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Species {
    Human,
    Werewolf,
}

impl Species {
    pub fn name(self) -> &'static str {
        match self {
            Species::Human => "HUMAN",
            Species::Werewolf => "WEREWOLF",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Alive,
    Dead,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Alive => "ALIVE",
            Status::Dead => "DEAD",
        }
    }
}

/// One vote (or attack vote): voter, day, target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vote {
    pub agent: usize,
    pub day: u32,
    pub target: usize,
}

/// A divination or medium result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judge {
    /// The seer or medium.
    pub agent: usize,
    /// The delivery day.
    pub day: u32,
    pub target: usize,
    pub result: Species,
}

/// The requests of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Request {
    Name,
    Role,
    Talk,
    Whisper,
    Vote,
    Divine,
    Guard,
    Attack,
    Initialize,
    DailyInitialize,
    DailyFinish,
    Finish,
}

impl Request {
    pub fn name(self) -> &'static str {
        match self {
            Request::Name => "NAME",
            Request::Role => "ROLE",
            Request::Talk => "TALK",
            Request::Whisper => "WHISPER",
            Request::Vote => "VOTE",
            Request::Divine => "DIVINE",
            Request::Guard => "GUARD",
            Request::Attack => "ATTACK",
            Request::Initialize => "INITIALIZE",
            Request::DailyInitialize => "DAILY_INITIALIZE",
            Request::DailyFinish => "DAILY_FINISH",
            Request::Finish => "FINISH",
        }
    }

    /// Whether the request expects a reply.
    pub fn expects_reply(self) -> bool {
        matches!(
            self,
            Request::Name
                | Request::Role
                | Request::Talk
                | Request::Whisper
                | Request::Vote
                | Request::Divine
                | Request::Guard
                | Request::Attack
        )
    }

    /// Whether the reply is an agent number (`{"agentIdx":N}`).
    pub fn is_target(self) -> bool {
        matches!(
            self,
            Request::Vote | Request::Divine | Request::Guard | Request::Attack
        )
    }
}

/// `Agent[NN]` as written in talk (at least two digits).
pub fn agent_str(n: usize) -> String {
    format!("Agent[{n:02}]")
}
