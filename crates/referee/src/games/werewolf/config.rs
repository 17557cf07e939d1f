//! The options of a Werewolf game (`--opt key=value`, the rule set, the village size).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use kakehiki_werewolf::settings::{option, BadOption};
use kakehiki_werewolf::{RuleSet, Settings, WEREWOLF_TYPE};

use crate::driver::RefereeError;

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

/// The NAME exchange's own limit, separate from the per-request `time_limit_ms`: upstream
/// 0.6.x applies its 1,000 ms request limit to NAME too, which a JVM started beside a dozen
/// others can miss; Kakehiki allows 5 s (`--opt name_timeout_ms=`).
pub const DEFAULT_NAME_TIMEOUT_MS: u64 = 5_000;

/// How long `serve werewolf` waits for its set to fill before giving up (10 minutes,
/// `--opt fill_timeout_ms=`; 0 waits without end, as upstream does).
pub const DEFAULT_FILL_TIMEOUT_MS: u64 = 600_000;

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
    ) -> Result<Config, RefereeError> {
        let rules = rules.unwrap_or(WEREWOLF_TYPE.default_rules());
        if RuleSet::from_name(rules).is_none() {
            return Err(RefereeError::UnknownRules {
                game: "werewolf".into(),
                rules: rules.into(),
                expected: RuleSet::NAMES.join(", "),
            });
        }
        let mut settings = Settings::for_rules(rules, players).map_err(|e| match e {
            // One sentence: "werewolf (rule set seed-2015) needs exactly 15 seats, got 7".
            kakehiki_werewolf::SettingsError::Seed2015Players(_) => RefereeError::SeatCount {
                game: "werewolf (rule set seed-2015)".into(),
                expected: "exactly 15".into(),
                got: players,
            },
            _ => RefereeError::SeatCount {
                game: format!("werewolf (rule set {rules})"),
                expected: "3 to 18".into(),
                got: players,
            },
        })?;
        let contest_limit_ms = settings.apply_options(options, in_set).map_err(refused)?;
        let get = |key, default, expected| option(options, key, default, expected).map_err(refused);
        let name_timeout = match get(
            "name_timeout_ms",
            DEFAULT_NAME_TIMEOUT_MS,
            "milliseconds (1 to 600000)",
        )? {
            v @ 1..=600_000 => Duration::from_millis(v),
            v => {
                return Err(bad(
                    "name_timeout_ms",
                    &v.to_string(),
                    "1 to 600000 milliseconds",
                ))
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
            port: option(options, "port", 0u16, "a TCP port").map_err(refused)?,
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
}

pub(super) fn bad(key: &str, value: &str, expected: &str) -> RefereeError {
    refused(BadOption::new(key, value, expected))
}

fn refused(b: BadOption) -> RefereeError {
    RefereeError::BadOption {
        key: b.key,
        value: b.value,
        expected: b.expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kakehiki_werewolf::WinCount;

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
            Err(RefereeError::BadOption { .. })
        ));
        assert!(matches!(
            Config::from_options(None, 15, &opts(&[("win_count", "most")]), false),
            Err(RefereeError::BadOption { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("2016"), 15, &opts(&[]), false),
            Err(RefereeError::UnknownRules { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("seed-2015"), 5, &opts(&[]), false),
            Err(RefereeError::SeatCount { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("seed-2015"), 15, &opts(&[("max_talk", "3")]), false),
            Err(RefereeError::BadOption { .. })
        ));
        assert!(matches!(
            Config::from_options(None, 2, &opts(&[]), false),
            Err(RefereeError::SeatCount { .. })
        ));
    }
}
