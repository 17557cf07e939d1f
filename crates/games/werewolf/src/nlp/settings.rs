//! The game settings of the natural-language division and the configuration file that sets them.
//!
//! The configuration mirrors the upstream server's YAML sections (`server`, `game`, `logic`,
//! `matching`, `custom_profile`, `json_logger`, `game_logger`, `realtime_broadcaster`) key for
//! key; Kakehiki reads it as TOML (or JSON) and adds `game.seed` and `game.games`. Durations
//! are written as upstream writes them (`"60s"`, `"500ms"`, `"2m"`); `-1` means "no limit" where
//! upstream says so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::Role;

/// Why a configuration is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("no role table for {0} players: give [logic.roles.{0}] (built in: 5, 9 and 13)")]
    NoRoleTable(usize),
    #[error("role table for {players} players has {sum} roles")]
    RoleSum { players: usize, sum: usize },
    #[error("unknown role {0:?} in the role table: expected WEREWOLF, POSSESSED, SEER, BODYGUARD, VILLAGER or MEDIUM")]
    UnknownRole(String),
    #[error("{section}: count_in_word and count_spaces cannot both be true")]
    CountMode { section: &'static str },
    #[error("bad duration {0:?}: expected a number with a unit (ms, s, m, h), e.g. \"60s\"")]
    Duration(String),
    #[error("{key}: {reason}")]
    Value { key: &'static str, reason: String },
    #[error("custom_profile: {0} profiles for {1} players")]
    Profiles(usize, usize),
}

/// Parse `"60s"`, `"1500ms"`, `"2m"`, `"1h"` (or a bare number of seconds) into milliseconds.
pub fn parse_duration_ms(text: &str) -> Result<u64, ConfigError> {
    let t = text.trim();
    let bad = || ConfigError::Duration(text.to_string());
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3_600_000.0)
    } else {
        (t, 1000.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 || v * mult > 1e12 {
        return Err(bad());
    }
    Ok((v * mult).round() as u64)
}

/// A role table: how many of each role.
pub type RoleTable = BTreeMap<String, usize>;

/// The upstream role tables for 5, 9 and 13 players.
pub fn default_roles(players: usize) -> Option<Vec<(Role, usize)>> {
    use Role::*;
    let t: &[(Role, usize)] = match players {
        5 => &[
            (Werewolf, 1),
            (Possessed, 1),
            (Seer, 1),
            (Bodyguard, 0),
            (Villager, 2),
            (Medium, 0),
        ],
        9 => &[
            (Werewolf, 2),
            (Possessed, 1),
            (Seer, 1),
            (Bodyguard, 1),
            (Villager, 3),
            (Medium, 1),
        ],
        13 => &[
            (Werewolf, 3),
            (Possessed, 1),
            (Seer, 1),
            (Bodyguard, 1),
            (Villager, 6),
            (Medium, 1),
        ],
        _ => return None,
    };
    Some(t.to_vec())
}

/// Roles the natural-language division knows.
pub const NLP_ROLES: [Role; 6] = [
    Role::Werewolf,
    Role::Possessed,
    Role::Seer,
    Role::Bodyguard,
    Role::Villager,
    Role::Medium,
];

/// Talk or whisper limits of one phase, as the game uses them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TalkLimits {
    pub per_agent: u32,
    pub per_day: u32,
    pub count_in_word: bool,
    pub count_spaces: bool,
    pub per_talk: Option<i64>,
    pub mention_length: i64,
    pub per_agent_length: Option<i64>,
    pub base_length: Option<i64>,
    pub max_skip: u32,
    /// Group-chat mode: the phase lasts this long and agents talk freely (`None`: turn-based).
    pub duration_ms: Option<u64>,
}

/// Everything a game of the natural-language division is played with.
#[derive(Debug, Clone, PartialEq)]
pub struct NlpSettings {
    pub agent_count: usize,
    pub max_day: Option<u32>,
    pub vote_visibility: bool,
    pub talk: TalkLimits,
    pub whisper: TalkLimits,
    pub vote_max_count: u32,
    pub vote_allow_self: bool,
    pub attack_max_count: u32,
    pub attack_allow_self: bool,
    pub attack_allow_no_target: bool,
    pub timeout_action_ms: u64,
    pub timeout_response_ms: u64,
    pub timeout_acceptable_ms: u64,
    pub max_continue_error_ratio: f64,
    /// What an agent in error does to the game ([`OnErrorRatio`]).
    pub on_error_ratio: OnErrorRatio,
    /// Role counts in upstream order.
    pub roles: Vec<(Role, usize)>,
    /// Player names and profile texts (custom profiles); `None`: `Agent[NN]` and no profile.
    pub profiles: Option<Vec<Profile>>,
    /// The day's phases in order (`logic.day_phases`).
    pub day_phases: Vec<Phase>,
    /// The night's phases in order (`logic.night_phases`).
    pub night_phases: Vec<Phase>,
}

/// A custom profile: the in-game name and the text sent in INITIALIZE.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    pub name: String,
    pub description: String,
    /// The profile's `avatar_url` (the real-time log's `avatar`).
    pub avatar_url: Option<String>,
}

impl NlpSettings {
    /// The upstream defaults for a village of `players` (5, 9 or 13): `config/default_5.yml` and
    /// `default_13.yml` values, without custom profiles.
    pub fn defaults(players: usize) -> Result<NlpSettings, ConfigError> {
        NlpConfig::for_players(players).settings()
    }

    /// The error count that ends a game: `int(agent_count × ratio)`, at least 1.
    pub fn error_cutoff(&self) -> usize {
        ((self.agent_count as f64 * self.max_continue_error_ratio).floor() as usize).max(1)
    }
}

// ----- the configuration file -------------------------------------------------------------------

fn yes() -> bool {
    true
}

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NlpConfig {
    pub server: ServerConfig,
    pub game: GameConfig,
    pub logic: LogicConfig,
    pub matching: MatchingConfig,
    pub custom_profile: CustomProfileConfig,
    pub json_logger: LoggerConfig,
    pub game_logger: LoggerConfig,
    pub realtime_broadcaster: RealtimeConfig,
}

/// What agents in error (disconnected, or failing the NAME check) do to a game: Kakehiki's
/// `forfeit` (the default) or upstream's `abort` (`server.on_error_ratio`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnErrorRatio {
    /// Each agent in error forfeits its own seat: it is sent nothing more, scores 0 whatever
    /// its team does, and the game plays on to its end and is scored (it ends without a winner
    /// only when every agent is in error). `max_continue_error_ratio` is not used.
    #[default]
    Forfeit,
    /// Upstream's rule: the game ends without a winner, everyone scoring 0, when the agents in
    /// error reach `max(1, int(agent_count × max_continue_error_ratio))`.
    Abort,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    pub web_socket: WebSocketConfig,
    pub authentication: AuthConfig,
    pub timeout: TimeoutConfig,
    pub max_continue_error_ratio: f64,
    /// Kakehiki's own key (upstream has none): `forfeit` (default) or `abort`. Always written
    /// in a replay's header: a header without it is from before the key, when every game
    /// aborted (see the re-run).
    pub on_error_ratio: OnErrorRatio,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            web_socket: WebSocketConfig::default(),
            authentication: AuthConfig::default(),
            timeout: TimeoutConfig::default(),
            max_continue_error_ratio: 0.2,
            on_error_ratio: OnErrorRatio::Forfeit,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebSocketConfig {
    pub host: String,
    pub port: u16,
}

impl Default for WebSocketConfig {
    fn default() -> Self {
        WebSocketConfig {
            host: "127.0.0.1".into(),
            port: 8080,
        }
    }
}

/// Token authentication: a JWT (HS256) with claims `team` and `role: PLAYER`, signed with the
/// secret (`secret_key`, or the `SECRET_KEY` environment variable as upstream), sent as
/// `Authorization: Bearer <token>` or `?token=<token>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    pub enable: bool,
    pub secret_key: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutConfig {
    pub action: String,
    pub response: String,
    pub acceptable: String,
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        TimeoutConfig {
            action: "60s".into(),
            response: "120s".into(),
            acceptable: "5s".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GameConfig {
    pub agent_count: usize,
    pub max_day: i64,
    pub vote_visibility: bool,
    pub talk: TalkConfig,
    pub whisper: TalkConfig,
    pub vote: VoteConfig,
    pub attack_vote: AttackVoteConfig,
    /// Kakehiki: the seed of the first game (later games take the next seeds); random if absent.
    pub seed: Option<u64>,
    /// Kakehiki: how many games `serve` plays before it exits (0: until stopped); `serve
    /// --games` overrides it; 100 when neither gives it.
    pub games: Option<u32>,
}

impl Default for GameConfig {
    fn default() -> Self {
        GameConfig {
            agent_count: 5,
            max_day: -1,
            vote_visibility: true,
            talk: TalkConfig::talk(20),
            whisper: TalkConfig::whisper(0, 0),
            vote: VoteConfig::default(),
            attack_vote: AttackVoteConfig::default(),
            seed: None,
            games: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TalkConfig {
    /// Group-chat mode when set (`"30s"`).
    pub duration: Option<String>,
    pub max_count: MaxCountConfig,
    pub max_length: MaxLengthConfig,
    pub max_skip: u32,
}

impl Default for TalkConfig {
    fn default() -> Self {
        TalkConfig::talk(20)
    }
}

impl TalkConfig {
    fn talk(per_day: u32) -> Self {
        TalkConfig {
            duration: None,
            max_count: MaxCountConfig {
                per_agent: 4,
                per_day,
            },
            max_length: MaxLengthConfig::default(),
            max_skip: 0,
        }
    }
    fn whisper(per_agent: u32, per_day: u32) -> Self {
        TalkConfig {
            duration: None,
            max_count: MaxCountConfig { per_agent, per_day },
            max_length: MaxLengthConfig::default(),
            max_skip: 0,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaxCountConfig {
    pub per_agent: u32,
    pub per_day: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaxLengthConfig {
    pub count_in_word: bool,
    pub count_spaces: bool,
    pub per_talk: i64,
    pub mention_length: i64,
    pub per_agent: i64,
    pub base_length: i64,
}

impl Default for MaxLengthConfig {
    fn default() -> Self {
        MaxLengthConfig {
            count_in_word: false,
            count_spaces: false,
            per_talk: -1,
            mention_length: 50,
            per_agent: -1,
            base_length: 50,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VoteConfig {
    pub max_count: u32,
    pub allow_self_vote: bool,
}

impl Default for VoteConfig {
    fn default() -> Self {
        VoteConfig {
            max_count: 1,
            allow_self_vote: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AttackVoteConfig {
    pub max_count: u32,
    pub allow_self_vote: bool,
    pub allow_no_target: bool,
}

impl Default for AttackVoteConfig {
    fn default() -> Self {
        AttackVoteConfig {
            max_count: 1,
            allow_self_vote: true,
            allow_no_target: false,
        }
    }
}

/// `logic`: the role tables, and the phases of a day and of a night (upstream's default order
/// when a list is not given).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogicConfig {
    /// The day's phases in order, after DAILY_INITIALIZE.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub day_phases: Option<Vec<Phase>>,
    /// The night's phases in order, after DAILY_FINISH.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub night_phases: Option<Vec<Phase>>,
    /// Keyed by the player count as text (`"5"`, `"13"`).
    pub roles: BTreeMap<String, RoleTable>,
}

/// One phase of a day or a night (`logic.day_phases`, `logic.night_phases`): its actions in
/// order, on the days it is played. The game checks for its end after each phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// The phase's name (upstream logs it; it changes nothing).
    #[serde(default)]
    pub name: String,
    pub actions: Vec<PhaseAction>,
    /// Played only on this day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_day: Option<i64>,
    /// Played on every day but this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub except_day: Option<i64>,
}

impl Phase {
    fn new(
        name: &str,
        action: PhaseAction,
        only_day: Option<i64>,
        except_day: Option<i64>,
    ) -> Phase {
        Phase {
            name: name.into(),
            actions: vec![action],
            only_day,
            except_day,
        }
    }

    /// Whether the phase is played on `day`.
    pub fn on(&self, day: u32) -> bool {
        let day = i64::from(day);
        self.only_day.is_none_or(|d| d == day) && self.except_day != Some(day)
    }

    /// Upstream's day (`config/default_5.yml`): a morning whisper on day 0, then the talk.
    pub fn default_day() -> Vec<Phase> {
        vec![
            Phase::new("morning_whisper", PhaseAction::Whisper, Some(0), None),
            Phase::new("daily_talk", PhaseAction::Talk, None, None),
        ]
    }

    /// Upstream's night: an evening whisper on day 0; from day 1 the exile; the divination;
    /// from day 1 the night whisper, the guard and the attack.
    pub fn default_night() -> Vec<Phase> {
        vec![
            Phase::new("evening_whisper", PhaseAction::Whisper, Some(0), None),
            Phase::new("execution", PhaseAction::Execution, None, Some(0)),
            Phase::new("divine", PhaseAction::Divine, None, None),
            Phase::new("night_whisper", PhaseAction::Whisper, None, Some(0)),
            Phase::new("guard", PhaseAction::Guard, None, Some(0)),
            Phase::new("attack", PhaseAction::Attack, None, Some(0)),
        ]
    }
}

/// What a phase does: a talk or whisper phase, the exile by vote, or a night action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseAction {
    Talk,
    Whisper,
    Execution,
    Divine,
    Guard,
    Attack,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MatchingConfig {
    /// Only agents of one team play together (upstream default).
    pub self_match: bool,
}

impl Default for MatchingConfig {
    fn default() -> Self {
        MatchingConfig { self_match: true }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CustomProfileConfig {
    pub enable: bool,
    /// Item key → label in the profile text, e.g. `age = "年齢"`. Items not listed are not sent.
    pub profile_encoding: BTreeMap<String, String>,
    pub profiles: Vec<ProfileConfig>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProfileConfig {
    pub name: String,
    #[serde(flatten)]
    pub items: BTreeMap<String, toml_like::Scalar>,
}

/// Scalars in profile items (upstream writes ages as numbers).
pub mod toml_like {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(untagged)]
    pub enum Scalar {
        Text(String),
        Int(i64),
        Float(f64),
        Bool(bool),
    }

    impl std::fmt::Display for Scalar {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                Scalar::Text(s) => f.write_str(s),
                Scalar::Int(i) => write!(f, "{i}"),
                Scalar::Float(x) => write!(f, "{x}"),
                Scalar::Bool(b) => write!(f, "{b}"),
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoggerConfig {
    #[serde(default = "yes")]
    pub enable: bool,
    pub output_dir: String,
    pub filename: String,
}

/// `realtime_broadcaster`: the real-time log (written when the game ends; `delay` is accepted and
/// has no effect, as Kakehiki has no live broadcast).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RealtimeConfig {
    #[serde(default = "yes")]
    pub enable: bool,
    pub delay: String,
    pub output_dir: String,
    pub filename: String,
}

impl Default for RealtimeConfig {
    fn default() -> Self {
        RealtimeConfig {
            enable: false,
            delay: "5s".into(),
            output_dir: "./log/realtime".into(),
            filename: "{timestamp}_{teams}".into(),
        }
    }
}

impl Default for LoggerConfig {
    fn default() -> Self {
        LoggerConfig {
            enable: false,
            output_dir: "./log".into(),
            filename: "{timestamp}_{teams}".into(),
        }
    }
}

fn opt_limit(v: i64) -> Option<i64> {
    (v >= 0).then_some(v)
}

impl MaxLengthConfig {
    fn limits(&self, c: &TalkConfig, section: &'static str) -> Result<TalkLimits, ConfigError> {
        if self.count_in_word && self.count_spaces {
            return Err(ConfigError::CountMode { section });
        }
        let duration_ms = match &c.duration {
            Some(d) => Some(parse_duration_ms(d)?),
            None => None,
        };
        Ok(TalkLimits {
            per_agent: c.max_count.per_agent,
            per_day: c.max_count.per_day,
            count_in_word: self.count_in_word,
            count_spaces: self.count_spaces,
            per_talk: opt_limit(self.per_talk),
            mention_length: self.mention_length.max(0),
            per_agent_length: opt_limit(self.per_agent),
            base_length: opt_limit(self.base_length),
            max_skip: c.max_skip,
            duration_ms,
        })
    }
}

impl NlpConfig {
    /// The upstream default configuration for `players` (talk per day 20 for 5, 4 × players
    /// otherwise; whispers only with two or more werewolves).
    pub fn for_players(players: usize) -> NlpConfig {
        let mut c = NlpConfig::default();
        c.game.agent_count = players;
        if players != 5 {
            c.game.talk = TalkConfig::talk(4 * players as u32);
            c.game.whisper = TalkConfig::whisper(4, 12);
        }
        c
    }

    /// The role counts for this configuration's player count.
    pub fn roles(&self) -> Result<Vec<(Role, usize)>, ConfigError> {
        let n = self.game.agent_count;
        let table = match self.logic.roles.get(&n.to_string()) {
            Some(t) => {
                let mut out = Vec::new();
                for r in NLP_ROLES {
                    out.push((r, t.get(r.name()).copied().unwrap_or(0)));
                }
                for k in t.keys() {
                    if !NLP_ROLES.iter().any(|r| r.name() == k) {
                        return Err(ConfigError::UnknownRole(k.clone()));
                    }
                }
                out
            }
            None => default_roles(n).ok_or(ConfigError::NoRoleTable(n))?,
        };
        let sum: usize = table.iter().map(|(_, c)| c).sum();
        if sum != n {
            return Err(ConfigError::RoleSum { players: n, sum });
        }
        Ok(table)
    }

    /// Check the whole configuration and build the game settings.
    pub fn settings(&self) -> Result<NlpSettings, ConfigError> {
        let g = &self.game;
        if !(3..=30).contains(&g.agent_count) {
            return Err(ConfigError::Value {
                key: "game.agent_count",
                reason: format!("{} is not 3 to 30", g.agent_count),
            });
        }
        let ratio = self.server.max_continue_error_ratio;
        if !(0.0..=1.0).contains(&ratio) {
            return Err(ConfigError::Value {
                key: "server.max_continue_error_ratio",
                reason: format!("{ratio} is not 0 to 1"),
            });
        }
        let profiles = if self.custom_profile.enable {
            let p = &self.custom_profile.profiles;
            if p.len() < g.agent_count {
                return Err(ConfigError::Profiles(p.len(), g.agent_count));
            }
            let mut names = std::collections::BTreeSet::new();
            let mut out = Vec::new();
            for prof in p {
                if prof.name.trim().is_empty() || !names.insert(prof.name.clone()) {
                    return Err(ConfigError::Value {
                        key: "custom_profile.profiles",
                        reason: format!("profile name {:?} is empty or repeated", prof.name),
                    });
                }
                let mut lines = Vec::new();
                for (key, label) in &self.custom_profile.profile_encoding {
                    if let Some(v) = prof.items.get(key) {
                        lines.push(format!("{label}: {v}"));
                    }
                }
                out.push(Profile {
                    name: prof.name.clone(),
                    description: lines.join("\n"),
                    avatar_url: prof.items.get("avatar_url").map(|v| v.to_string()),
                });
            }
            Some(out)
        } else {
            None
        };
        let t = &self.server.timeout;
        Ok(NlpSettings {
            agent_count: g.agent_count,
            max_day: u32::try_from(g.max_day).ok(),
            vote_visibility: g.vote_visibility,
            talk: g.talk.max_length.limits(&g.talk, "game.talk")?,
            whisper: g.whisper.max_length.limits(&g.whisper, "game.whisper")?,
            vote_max_count: g.vote.max_count,
            vote_allow_self: g.vote.allow_self_vote,
            attack_max_count: g.attack_vote.max_count,
            attack_allow_self: g.attack_vote.allow_self_vote,
            attack_allow_no_target: g.attack_vote.allow_no_target,
            timeout_action_ms: parse_duration_ms(&t.action)?,
            timeout_response_ms: parse_duration_ms(&t.response)?,
            timeout_acceptable_ms: parse_duration_ms(&t.acceptable)?,
            max_continue_error_ratio: ratio,
            on_error_ratio: self.server.on_error_ratio,
            roles: self.roles()?,
            profiles,
            day_phases: self
                .logic
                .day_phases
                .clone()
                .unwrap_or_else(Phase::default_day),
            night_phases: (self.logic.night_phases.clone()).unwrap_or_else(Phase::default_night),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_error_ratio_is_forfeit_by_default_abort_on_request_and_anything_else_refused() {
        use super::super::config_file::parse_config;
        let (c, _, _) = parse_config("toml", "").unwrap();
        assert_eq!(c.settings().unwrap().on_error_ratio, OnErrorRatio::Forfeit);
        let (c, _, _) = parse_config("yml", "server:\n  on_error_ratio: abort\n").unwrap();
        assert_eq!(c.settings().unwrap().on_error_ratio, OnErrorRatio::Abort);
        let (c, _, _) = parse_config("toml", "[server]\non_error_ratio = \"forfeit\"\n").unwrap();
        assert_eq!(c.server.on_error_ratio, OnErrorRatio::Forfeit);
        let e = parse_config("toml", "[server]\non_error_ratio = \"void\"\n").unwrap_err();
        assert!(
            e.contains("server.on_error_ratio") && e.contains("forfeit"),
            "{e}"
        );
        // Always written out: a replay header without it is from before the key (abort).
        let v = serde_json::to_value(NlpConfig::default()).unwrap();
        assert_eq!(v["server"]["on_error_ratio"], "forfeit", "{v}");
        let mut c = NlpConfig::default();
        c.server.on_error_ratio = OnErrorRatio::Abort;
        assert_eq!(
            serde_json::to_value(c).unwrap()["server"]["on_error_ratio"],
            "abort"
        );
    }

    #[test]
    fn role_tables_match_upstream() {
        for (n, wolves, others) in [(5, 1, 4), (9, 2, 7), (13, 3, 10)] {
            let s = NlpSettings::defaults(n).unwrap();
            let w = s
                .roles
                .iter()
                .find(|(r, _)| *r == Role::Werewolf)
                .unwrap()
                .1;
            assert_eq!(w, wolves);
            assert_eq!(s.roles.iter().map(|(_, c)| c).sum::<usize>() - w, others);
        }
        assert_eq!(
            NlpSettings::defaults(7).unwrap_err(),
            ConfigError::NoRoleTable(7)
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("60s").unwrap(), 60_000);
        assert_eq!(parse_duration_ms("250ms").unwrap(), 250);
        assert_eq!(parse_duration_ms("2m").unwrap(), 120_000);
        assert!(parse_duration_ms("soon").is_err());
        assert!(parse_duration_ms("-1s").is_err());
    }

    #[test]
    fn both_count_modes_are_rejected() {
        let mut c = NlpConfig::for_players(5);
        c.game.talk.max_length.count_in_word = true;
        c.game.talk.max_length.count_spaces = true;
        assert_eq!(
            c.settings().unwrap_err(),
            ConfigError::CountMode {
                section: "game.talk"
            }
        );
    }

    #[test]
    fn phases_read_as_upstream_writes_them_and_default_to_its_order() {
        use super::super::config_file::parse_config;
        use PhaseAction::*;
        let s = NlpSettings::defaults(5).unwrap();
        assert_eq!(s.day_phases, Phase::default_day());
        assert_eq!(s.night_phases, Phase::default_night());
        // Upstream's `config/default_5.yml` lists its default order.
        let yaml = "logic:\n  day_phases:\n    - name: \"morning_whisper\"\n      actions: [\"whisper\"]\n      only_day: 0\n    - name: \"daily_talk\"\n      actions: [\"talk\"]\n  night_phases:\n    - name: \"evening_whisper\"\n      actions: [\"whisper\"]\n      only_day: 0\n    - name: \"execution\"\n      actions: [\"execution\"]\n      except_day: 0\n    - name: \"divine\"\n      actions: [\"divine\"]\n    - name: \"night_whisper\"\n      actions: [\"whisper\"]\n      except_day: 0\n    - name: \"guard\"\n      actions: [\"guard\"]\n      except_day: 0\n    - name: \"attack\"\n      actions: [\"attack\"]\n      except_day: 0\n";
        let (c, _, warnings) = parse_config("yml", yaml).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let read = c.settings().unwrap();
        assert_eq!(read.day_phases, s.day_phases);
        assert_eq!(read.night_phases, s.night_phases);
        // A talk-only day, in TOML; several actions in one phase.
        let toml = "[[logic.day_phases]]\nactions = [\"talk\"]\n\
                    [[logic.night_phases]]\nname = \"n\"\nactions = [\"execution\", \"attack\"]\nexcept_day = 0\n";
        let (c, _, _) = parse_config("toml", toml).unwrap();
        let read = c.settings().unwrap();
        assert_eq!(read.day_phases.len(), 1);
        assert_eq!(read.day_phases[0].actions, [Talk]);
        assert_eq!(read.night_phases[0].actions, [Execution, Attack]);
        assert!(!read.night_phases[0].on(0) && read.night_phases[0].on(1));
        // Written out only when given (a replay's header is as before without them).
        let v = serde_json::to_value(NlpConfig::default()).unwrap();
        assert!(v["logic"].get("day_phases").is_none(), "{v}");
        assert_eq!(
            serde_json::to_value(&c).unwrap()["logic"]["night_phases"][0]["except_day"],
            0
        );
        // An action upstream does not have is an error naming it.
        let e = parse_config("toml", "[[logic.day_phases]]\nactions = [\"vote\"]\n").unwrap_err();
        assert!(
            e.contains("logic.day_phases[0].actions[0]") && e.contains("vote"),
            "{e}"
        );
        let e = parse_config("toml", "[[logic.day_phases]]\nname = \"x\"\n").unwrap_err();
        assert!(e.contains("actions"), "{e}");
        // `only_day` and `except_day` together: both must hold.
        let p = Phase {
            name: String::new(),
            actions: vec![Talk],
            only_day: Some(2),
            except_day: Some(2),
        };
        assert!((0..5).all(|d| !p.on(d)));
        assert!(Phase {
            except_day: None,
            ..p
        }
        .on(2));
    }

    #[test]
    fn error_cutoff_rounds_up_to_one() {
        let mut s = NlpSettings::defaults(5).unwrap();
        assert_eq!(s.error_cutoff(), 1);
        s.agent_count = 13;
        assert_eq!(s.error_cutoff(), 2);
    }
}
