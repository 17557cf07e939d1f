//! A game's nature, declared as data (in the spirit of OpenSpiel's `GameType`).

use serde::Serialize;

/// How decisions are taken within one step of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dynamics {
    /// Every seat that acts in a step acts at once, without seeing the others' choices
    /// (Negotiate and Conquer picks, Diplomacy orders).
    Simultaneous,
    /// One seat acts at a time and sees the result before the next acts (Geister).
    Sequential,
    /// Steps of both kinds (Werewolf: talk turns are simultaneous, the flow is sequential).
    Mixed,
}

/// What a seat may not see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Information {
    /// Every seat sees the whole state (none of our games, but a game may declare it).
    Perfect,
    /// Some state is hidden from some seats; the engine's observation function is the only
    /// channel through which a seat learns anything.
    Imperfect,
}

/// Where randomness comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Chance {
    /// No random element in the rules (Geister, Diplomacy): the bots' replies determine the game.
    None,
    /// Random elements drawn from the recorded match seed (NAC weights, Werewolf roles).
    Seeded,
}

/// How a process bot talks to the referee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Lines on the bot's stdin and stdout (`cmd:`).
    Stdio,
    /// The bot connects to a TCP port of the referee (`tcp`, `tcp-cmd:`).
    Tcp,
}

/// Declaration of one game. Registered once, in the referee's game list.
#[derive(Debug, Clone, Serialize)]
pub struct GameType {
    /// Short name used on the command line and in stored results (`nac`, `geister`, ...).
    pub name: &'static str,
    /// Human readable title.
    pub title: &'static str,
    /// Fewest seats a match may have.
    pub min_seats: usize,
    /// Most seats a match may have.
    pub max_seats: usize,
    /// Seats of a standard match.
    pub default_seats: usize,
    pub dynamics: Dynamics,
    pub information: Information,
    pub chance: Chance,
    /// Transports the game's wire protocol supports for process bots.
    pub transports: &'static [Transport],
    /// Rule-set names; the first is the default.
    pub rule_sets: &'static [&'static str],
    /// Built-in bot names available as `builtin:<name>`.
    pub builtin_bots: &'static [&'static str],
}

impl GameType {
    /// The default rule set.
    pub fn default_rules(&self) -> &'static str {
        self.rule_sets[0]
    }

    /// Whether `n` seats is a valid table size.
    pub fn accepts_seats(&self, n: usize) -> bool {
        (self.min_seats..=self.max_seats).contains(&n)
    }
}
