//! Rule sets and the game parameters (`gameSetting`).

use crate::types::Role;

/// The two rule sets (§3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleSet {
    /// The AIWolf reference server 0.6.x rules (default).
    Aiwolf06,
    /// The 2015 contest rules as the seed text states them.
    Seed2015,
}

impl RuleSet {
    pub const NAMES: [&'static str; 2] = ["aiwolf-0.6", "seed-2015"];

    pub fn name(self) -> &'static str {
        match self {
            RuleSet::Aiwolf06 => "aiwolf-0.6",
            RuleSet::Seed2015 => "seed-2015",
        }
    }

    pub fn from_name(s: &str) -> Option<RuleSet> {
        match s {
            "aiwolf-0.6" => Some(RuleSet::Aiwolf06),
            "seed-2015" => Some(RuleSet::Seed2015),
            _ => None,
        }
    }
}

/// How the win check counts (§1, §3 (b)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WinCount {
    /// Alive HUMAN species ≤ alive WEREWOLF species (the possessed counts as human).
    Species,
    /// Alive VILLAGER team ≤ alive WEREWOLF team (the possessed counts with the wolves).
    Team,
}

/// Why settings could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("no role table for {0} players: expected 3 to 18")]
    PlayerCount(usize),
    #[error("rule set seed-2015 is played by exactly 15 players, got {0}")]
    Seed2015Players(usize),
    #[error("unknown rule set {0:?}: expected aiwolf-0.6 or seed-2015")]
    UnknownRules(String),
    #[error("setting {key}: {reason}")]
    Bad { key: &'static str, reason: String },
}

/// Every parameter of a game: the 19 `gameSetting` keys plus our own knobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub rule_set: RuleSet,
    /// Count per role, indexed by [`Role::index`].
    pub role_counts: [usize; 8],
    pub enable_no_attack: bool,
    pub enable_no_execution: bool,
    pub enable_role_request: bool,
    pub max_attack_revote: u32,
    pub max_revote: u32,
    pub max_skip: u32,
    pub max_talk: u32,
    pub max_talk_turn: u32,
    pub max_whisper: u32,
    pub max_whisper_turn: u32,
    pub talk_on_first_day: bool,
    /// The enforced reply limit in ms (sent as `timeLimit`).
    pub time_limit_ms: u64,
    pub validate_utterance: bool,
    pub vote_visible: bool,
    pub whisper_before_revote: bool,
    pub win_count: WinCount,
}

/// The reference role table for `n` players (§1).
pub fn role_table(n: usize) -> Result<[usize; 8], SettingsError> {
    let mut c = [0usize; 8];
    let mut set = |r: Role, k: usize| c[r.index()] = k;
    match n {
        3 => {
            set(Role::Seer, 1);
            set(Role::Villager, 1);
            set(Role::Werewolf, 1);
        }
        4 => {
            set(Role::Seer, 1);
            set(Role::Villager, 2);
            set(Role::Werewolf, 1);
        }
        5 => {
            set(Role::Seer, 1);
            set(Role::Villager, 2);
            set(Role::Werewolf, 1);
            set(Role::Possessed, 1);
        }
        6 => {
            set(Role::Possessed, 1);
            set(Role::Seer, 1);
            set(Role::Villager, 3);
            set(Role::Werewolf, 1);
        }
        7 => {
            set(Role::Seer, 1);
            set(Role::Villager, 4);
            set(Role::Werewolf, 2);
        }
        8 => {
            set(Role::Medium, 1);
            set(Role::Seer, 1);
            set(Role::Villager, 4);
            set(Role::Werewolf, 2);
        }
        9 => {
            set(Role::Medium, 1);
            set(Role::Seer, 1);
            set(Role::Villager, 5);
            set(Role::Werewolf, 2);
        }
        10..=18 => {
            set(Role::Bodyguard, 1);
            set(Role::Medium, 1);
            set(Role::Possessed, 1);
            set(Role::Seer, 1);
            let (v, w) = match n {
                10 => (4, 2),
                11 => (5, 2),
                12 => (5, 3),
                _ => (n - 7, 3),
            };
            set(Role::Villager, v);
            set(Role::Werewolf, w);
        }
        _ => return Err(SettingsError::PlayerCount(n)),
    }
    Ok(c)
}

impl Settings {
    /// The reference `getDefaultGame(n)` for rule set `aiwolf-0.6`.
    pub fn aiwolf(n: usize) -> Result<Settings, SettingsError> {
        Ok(Settings {
            rule_set: RuleSet::Aiwolf06,
            role_counts: role_table(n)?,
            enable_no_attack: false,
            enable_no_execution: false,
            enable_role_request: true,
            max_attack_revote: 1,
            max_revote: 1,
            max_skip: 2,
            max_talk: 10,
            max_talk_turn: 20,
            max_whisper: 10,
            max_whisper_turn: 20,
            talk_on_first_day: false,
            time_limit_ms: 1000,
            validate_utterance: true,
            vote_visible: true,
            whisper_before_revote: false,
            win_count: WinCount::Species,
        })
    }

    /// The seed-2015 rule set (15 players only, §3).
    pub fn seed2015() -> Settings {
        let mut s =
            Settings::aiwolf(15).unwrap_or_else(|_| unreachable!("15 players have a role table"));
        s.rule_set = RuleSet::Seed2015;
        s.enable_role_request = false;
        s.max_revote = 0;
        s.max_attack_revote = 0;
        s.talk_on_first_day = true;
        s.max_talk = 11;
        s.max_talk_turn = 11;
        s.max_whisper = 11;
        s.max_whisper_turn = 11;
        s.max_skip = 11;
        s.win_count = WinCount::Team;
        s
    }

    /// Settings for a rule set name and a player count.
    pub fn for_rules(rules: &str, players: usize) -> Result<Settings, SettingsError> {
        match RuleSet::from_name(rules) {
            Some(RuleSet::Aiwolf06) => Settings::aiwolf(players),
            Some(RuleSet::Seed2015) if players == 15 => Ok(Settings::seed2015()),
            Some(RuleSet::Seed2015) => Err(SettingsError::Seed2015Players(players)),
            None => Err(SettingsError::UnknownRules(rules.to_string())),
        }
    }

    pub fn player_num(&self) -> usize {
        self.role_counts.iter().sum()
    }

    pub fn count(&self, role: Role) -> usize {
        self.role_counts[role.index()]
    }

    /// Roles with count > 0, sorted by wire name.
    pub fn existing_roles(&self) -> Vec<Role> {
        let mut v: Vec<Role> = Role::FILL_ORDER
            .into_iter()
            .filter(|r| self.count(*r) > 0)
            .collect();
        v.sort_by_key(|r| r.name());
        v
    }

    /// Check the parameters are playable.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let n = self.player_num();
        if !(3..=99).contains(&n) {
            return Err(SettingsError::Bad {
                key: "playerNum",
                reason: format!("{n} players: expected 3 to 99"),
            });
        }
        if self.count(Role::Werewolf) == 0 {
            return Err(SettingsError::Bad {
                key: "roleNumMap",
                reason: "at least one WEREWOLF is needed".into(),
            });
        }
        if self.count(Role::Fox) > 0 || self.count(Role::Freemason) > 0 {
            return Err(SettingsError::Bad {
                key: "roleNumMap",
                reason: "FOX and FREEMASON are not played".into(),
            });
        }
        for (key, v) in [
            ("maxTalkTurn", self.max_talk_turn),
            ("maxWhisperTurn", self.max_whisper_turn),
        ] {
            if v == 0 || v > 1000 {
                return Err(SettingsError::Bad {
                    key,
                    reason: format!("{v}: expected 1 to 1000"),
                });
            }
        }
        for (key, v) in [
            ("maxRevote", self.max_revote),
            ("maxAttackRevote", self.max_attack_revote),
            ("maxTalk", self.max_talk),
            ("maxWhisper", self.max_whisper),
            ("maxSkip", self.max_skip),
        ] {
            if v > 1000 {
                return Err(SettingsError::Bad {
                    key,
                    reason: format!("{v}: expected at most 1000"),
                });
            }
        }
        Ok(())
    }
}

/// An option value the game refuses (`--opt key=value`): the key, what was given, what is
/// expected.
pub use kakehiki_core::BadOption;

/// Option `key` of `options` read as a `T` (`default` when absent).
pub fn option<T: std::str::FromStr>(
    options: &std::collections::BTreeMap<String, String>,
    key: &str,
    default: T,
    expected: &str,
) -> Result<T, BadOption> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| BadOption::new(key, v, expected)),
    }
}

impl Settings {
    /// Apply the game's options (`time_limit_ms`, `role_request`, `max_talk`, `win_count`, ...):
    /// the contest limit in milliseconds (§6.2). A single game asks ROLE as the reference does;
    /// a set (`in_set`) deals roles from the seed (§8.1).
    pub fn apply_options(
        &mut self,
        options: &std::collections::BTreeMap<String, String>,
        in_set: bool,
    ) -> Result<u64, BadOption> {
        let get = |key: &str, default: u32, expected: &str| option(options, key, default, expected);
        let flag = |key: &str, default: bool| option(options, key, default, "true or false");
        let aiwolf = self.rule_set == RuleSet::Aiwolf06;
        self.time_limit_ms = option(options, "time_limit_ms", 1000, "milliseconds (1 to 600000)")?;
        let contest_limit_ms = option(options, "contest_limit_ms", 100, "milliseconds")?;
        if flag("enforce_contest_limit", false)? {
            self.time_limit_ms = contest_limit_ms;
        }
        if !(1..=600_000).contains(&self.time_limit_ms) {
            let v = self.time_limit_ms.to_string();
            return Err(BadOption::new(
                "time_limit_ms",
                &v,
                "1 to 600000 milliseconds",
            ));
        }
        if aiwolf {
            self.enable_role_request = flag("role_request", !in_set)?;
            self.talk_on_first_day = flag("talk_on_first_day", false)?;
            self.whisper_before_revote = flag("whisper_before_revote", false)?;
            self.max_talk = get("max_talk", self.max_talk, "a count")?;
            self.max_skip = get("max_skip", self.max_skip, "a count")?;
        } else {
            let fixed = [
                "role_request",
                "talk_on_first_day",
                "whisper_before_revote",
                "max_talk",
                "max_skip",
            ];
            if let Some(key) = fixed.into_iter().find(|k| options.contains_key(*k)) {
                return Err(BadOption::new(
                    key,
                    &options[key],
                    "no value: seed-2015 fixes it",
                ));
            }
        }
        self.max_talk_turn = get("max_talk_turn", self.max_talk_turn, "a count (1 to 1000)")?;
        self.validate_utterance = flag("validate_utterance", true)?;
        let default_win = if aiwolf { "species" } else { "team" };
        self.win_count = match options.get("win_count").map_or(default_win, String::as_str) {
            "species" => WinCount::Species,
            "team" => WinCount::Team,
            other => return Err(BadOption::new("win_count", other, "team or species")),
        };
        self.validate()
            .map_err(|e| BadOption::new("settings", &e.to_string(), "playable settings"))?;
        Ok(contest_limit_ms)
    }
}
