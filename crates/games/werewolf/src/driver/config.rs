//! The options of a Werewolf game (`--opt key=value`, the rule set, the village size).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::settings::{option, BadOption};
use crate::{RuleSet, Settings, SettingsError, Werewolf, WEREWOLF_TYPE};

/// Option keys (`--opt key=value`).
pub const OPTION_KEYS: &[&str] = &[
    "time_limit_ms",
    "contest_limit_ms",
    "enforce_contest_limit",
    "role_request",
    "talk_on_first_day",
    "whisper_before_revote",
    "win_count",
    "max_talk",
    "max_talk_turn",
    "max_skip",
    "validate_utterance",
    "log_dir",
    "host",
    "port",
    "connect_timeout_ms",
    "name_timeout_ms",
    "fill_timeout_ms",
];

/// The options that concern only this host (where files go, where to listen, how long to wait
/// for connections): a replay's header leaves them out.
pub const LOCAL_KEYS: [&str; 6] = [
    "log_dir",
    "host",
    "port",
    "connect_timeout_ms",
    "name_timeout_ms",
    "fill_timeout_ms",
];

/// The NAME exchange's own limit, separate from the per-request `time_limit_ms`: upstream
/// 0.6.x applies its 1,000 ms request limit to NAME too, which a JVM started beside a dozen
/// others can miss; Kakehiki allows 5 s (`--opt name_timeout_ms=`).
pub const DEFAULT_NAME_TIMEOUT_MS: u64 = 5_000;

/// How long `serve werewolf` waits for its set to fill before giving up (10 minutes,
/// `--opt fill_timeout_ms=`; 0 waits without end, as upstream does).
pub const DEFAULT_FILL_TIMEOUT_MS: u64 = 600_000;

/// Why a game cannot be configured as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// Not the name of a rule set.
    UnknownRules(String),
    /// The rule set is not played by this many: the game as the message names it, the counts
    /// it takes, the count given.
    SeatCount {
        game: String,
        expected: &'static str,
        got: usize,
    },
    /// An option value the game refuses.
    Bad(BadOption),
}

impl From<BadOption> for ConfigError {
    fn from(b: BadOption) -> Self {
        ConfigError::Bad(b)
    }
}

/// Everything configurable about a game (from rules and options).
#[derive(Debug, Clone)]
pub struct Config {
    pub settings: Settings,
    /// The contest limit: slower replies are recorded as `slow` (§6.2).
    pub contest_limit_ms: u64,
    /// Where game logs, `errors.jsonl` and `timings.jsonl` go (none: not written).
    pub log_dir: Option<PathBuf>,
    pub host: String,
    /// Port to listen on for TCP seats (0: ephemeral if all are `tcp-cmd:`, else 10000).
    pub port: u16,
    pub connect_timeout: Duration,
    /// Limit on the NAME reply of a fresh connection.
    pub name_timeout: Duration,
    /// `serve`: limit on waiting for the set to fill (`None`: no limit).
    pub fill_timeout: Option<Duration>,
}

impl Config {
    /// Build from a rule-set name, a village size and `key=value` options.
    pub fn from_options(
        rules: Option<&str>,
        players: usize,
        options: &BTreeMap<String, String>,
        in_set: bool,
    ) -> Result<Config, ConfigError> {
        let rules = rules.unwrap_or(WEREWOLF_TYPE.default_rules());
        if RuleSet::from_name(rules).is_none() {
            return Err(ConfigError::UnknownRules(rules.into()));
        }
        let mut settings = Settings::for_rules(rules, players).map_err(|e| match e {
            // One sentence: "werewolf (rule set seed-2015) needs exactly 15 seats, got 7".
            SettingsError::Seed2015Players(_) => ConfigError::SeatCount {
                game: "werewolf (rule set seed-2015)".into(),
                expected: "exactly 15",
                got: players,
            },
            _ => ConfigError::SeatCount {
                game: format!("werewolf (rule set {rules})"),
                expected: "3 to 18",
                got: players,
            },
        })?;
        let contest_limit_ms = settings.apply_options(options, in_set)?;
        let get = |key, default, expected| option(options, key, default, expected);
        let name_timeout = match get(
            "name_timeout_ms",
            DEFAULT_NAME_TIMEOUT_MS,
            "milliseconds (1 to 600000)",
        )? {
            v @ 1..=600_000 => Duration::from_millis(v),
            v => {
                return Err(ConfigError::Bad(BadOption::new(
                    "name_timeout_ms",
                    &v.to_string(),
                    "1 to 600000 milliseconds",
                )))
            }
        };
        Ok(Config {
            settings,
            contest_limit_ms,
            log_dir: options.get("log_dir").map(PathBuf::from),
            host: options
                .get("host")
                .cloned()
                .unwrap_or_else(|| "127.0.0.1".into()),
            port: option(options, "port", 0u16, "a TCP port")?,
            connect_timeout: Duration::from_millis(get(
                "connect_timeout_ms",
                10_000,
                "milliseconds",
            )?),
            name_timeout,
            fill_timeout: match get(
                "fill_timeout_ms",
                DEFAULT_FILL_TIMEOUT_MS,
                "milliseconds (0: no limit)",
            )? {
                0 => None,
                v => Some(Duration::from_millis(v)),
            },
        })
    }

    pub fn time_limit(&self) -> Duration {
        Duration::from_millis(self.settings.time_limit_ms)
    }

    /// A game of these settings on `seed` among agents named `names`.
    pub fn game(&self, seed: u64, names: Vec<String>) -> Result<Werewolf, ConfigError> {
        Werewolf::new(self.settings.clone(), seed, names).map_err(|e| {
            ConfigError::Bad(BadOption::new(
                "settings",
                &e.to_string(),
                "playable settings",
            ))
        })
    }
}

/// `options` with `role_request=false` where the rule set asks for roles (aiwolf-0.6; seed-2015
/// never does and refuses the key).
pub fn without_role_requests(
    rules: Option<&str>,
    options: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut options = options.clone();
    let rules = rules.unwrap_or(WEREWOLF_TYPE.default_rules());
    if RuleSet::from_name(rules) == Some(RuleSet::Aiwolf06) {
        options.insert("role_request".into(), "false".into());
    }
    options
}

/// The role `seat` (from 0) is dealt in a single game of `seed` with `options` when roles are
/// not requested (`role_request=false`: the deal then follows from the seed alone).
pub fn dealt_role(
    rules: Option<&str>,
    players: usize,
    options: &BTreeMap<String, String>,
    seed: u64,
    seat: usize,
) -> Result<&'static str, ConfigError> {
    let options = without_role_requests(rules, options);
    let cfg = Config::from_options(rules, players, &options, false)?;
    let g = cfg.game(seed, (1..=players).map(|i| format!("seat{i}")).collect())?;
    Ok(g.roles().get(seat).map_or("", |r| r.name()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WinCount;

    fn opts(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options_are_parsed_and_checked() {
        let c = Config::from_options(None, 15, &opts(&[]), false).unwrap();
        assert_eq!((c.settings.time_limit_ms, c.contest_limit_ms), (1000, 100));
        assert!(
            c.settings.enable_role_request,
            "a single game asks ROLE like the reference"
        );
        let c = Config::from_options(None, 15, &opts(&[]), true).unwrap();
        assert!(!c.settings.enable_role_request, "sets deal from the seed");
        let c = Config::from_options(None, 15, &opts(&[("enforce_contest_limit", "true")]), false)
            .unwrap();
        assert_eq!(c.settings.time_limit_ms, 100);
        let c = Config::from_options(Some("seed-2015"), 15, &opts(&[]), false).unwrap();
        assert_eq!(c.settings.win_count, WinCount::Team);
        assert!(matches!(
            Config::from_options(None, 15, &opts(&[("time_limit_ms", "soon")]), false),
            Err(ConfigError::Bad { .. })
        ));
        assert!(matches!(
            Config::from_options(None, 15, &opts(&[("win_count", "most")]), false),
            Err(ConfigError::Bad { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("2016"), 15, &opts(&[]), false),
            Err(ConfigError::UnknownRules { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("seed-2015"), 5, &opts(&[]), false),
            Err(ConfigError::SeatCount { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("seed-2015"), 15, &opts(&[("max_talk", "3")]), false),
            Err(ConfigError::Bad { .. })
        ));
        assert!(matches!(
            Config::from_options(None, 2, &opts(&[]), false),
            Err(ConfigError::SeatCount { .. })
        ));
    }
}
