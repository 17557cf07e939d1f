//! Rule-set parameters (spec §2): `gpw` (the contest server's defaults) and `seed` (the seed
//! contest). Every number is a parameter; [`Rules::set`] changes one by its option key.

use kakehiki_core::BadOption;
use serde::{Deserialize, Serialize};

/// What happens when the ply counter reaches `max_plies` without a decision (spec §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtLimit {
    /// The game is drawn.
    Draw,
    /// The seed's score formula decides.
    Score,
}

/// What an illegal/malformed or late move costs (spec §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// The offender loses at once.
    Lose,
    /// The offender's turn passes without a move.
    Pass,
}

/// Every parameter of a rule set. Durations are integer milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// Rule-set name (`gpw`, `seed`, or the base name of a customised set).
    pub name: String,
    pub max_plies: u32,
    pub at_limit: AtLimit,
    pub on_illegal: Fault,
    pub on_late: Fault,
    pub bank_ms: u64,
    pub per_move_ms: u64,
    pub set_timeout_ms: u64,
    pub connect_timeout_ms: u64,
    /// Minimum spacing of two messages to one connection without a line read in between (§3.7).
    pub pace_ms: u64,
    /// How long a finished connection is drained before it is closed (§3.8).
    pub linger_ms: u64,
}

/// Why a rule parameter could not be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error("unknown geister rule set {0:?}: expected gpw or seed")]
    UnknownRuleSet(String),
    #[error("unknown geister rule parameter {0:?}")]
    UnknownKey(String),
    #[error("geister rule parameter {key}={value:?}: expected {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
}

/// The option keys [`Rules::set`] understands.
pub const RULE_KEYS: &[&str] = &[
    "max_plies",
    "at_limit",
    "on_illegal",
    "on_late",
    "bank_ms",
    "per_move_ms",
    "set_timeout_ms",
    "connect_timeout_ms",
    "pace_ms",
    "linger_ms",
];

impl Rules {
    /// The contest server's defaults.
    pub fn gpw() -> Self {
        Rules {
            name: "gpw".into(),
            max_plies: 300,
            at_limit: AtLimit::Draw,
            on_illegal: Fault::Lose,
            on_late: Fault::Lose,
            bank_ms: 600_000,
            per_move_ms: 10_000,
            set_timeout_ms: 30_000,
            connect_timeout_ms: 30_000,
            pace_ms: 20,
            linger_ms: 5_000,
        }
    }

    /// The seed contest's rules.
    pub fn seed() -> Self {
        Rules {
            name: "seed".into(),
            max_plies: 500,
            at_limit: AtLimit::Score,
            on_illegal: Fault::Pass,
            on_late: Fault::Pass,
            bank_ms: 0,
            per_move_ms: 1_000,
            set_timeout_ms: 30_000,
            connect_timeout_ms: 30_000,
            pace_ms: 20,
            linger_ms: 5_000,
        }
    }

    /// A named rule set.
    pub fn named(name: &str) -> Result<Self, RulesError> {
        match name {
            "gpw" => Ok(Self::gpw()),
            "seed" => Ok(Self::seed()),
            other => Err(RulesError::UnknownRuleSet(other.to_string())),
        }
    }

    /// A rule set (default `gpw`) changed by the rule parameters among `options`
    /// ([`RULE_KEYS`]; other keys are the caller's), in the options' order. A bad value's
    /// `expected` is its [`RulesError`]'s text; an unknown rule set (which callers check
    /// first) is a bad `rules`.
    pub fn with_options<'a>(
        name: Option<&str>,
        options: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Result<Self, BadOption> {
        let name = name.unwrap_or("gpw");
        let mut rules =
            Self::named(name).map_err(|e| BadOption::new("rules", name, &e.to_string()))?;
        for (k, v) in options {
            if RULE_KEYS.contains(&k.as_str()) {
                rules
                    .set(k, v)
                    .map_err(|e| BadOption::new(k, v, &e.to_string()))?;
            }
        }
        Ok(rules)
    }

    /// Change one parameter by its key (see [`RULE_KEYS`]).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), RulesError> {
        let bad = |expected: &'static str| RulesError::BadValue {
            key: key.to_string(),
            value: value.to_string(),
            expected,
        };
        let ms = |v: &str| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| bad("a whole number of milliseconds"))
        };
        let fault = |v: &str| match v.trim() {
            "lose" => Ok(Fault::Lose),
            "pass" => Ok(Fault::Pass),
            _ => Err(bad("lose or pass")),
        };
        match key {
            "max_plies" => {
                let n = value
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| bad("a number of plies from 1 to 100000"))?;
                if !(1..=100_000).contains(&n) {
                    return Err(bad("a number of plies from 1 to 100000"));
                }
                self.max_plies = n;
            }
            "at_limit" => {
                self.at_limit = match value.trim() {
                    "draw" => AtLimit::Draw,
                    "score" => AtLimit::Score,
                    _ => return Err(bad("draw or score")),
                }
            }
            "on_illegal" => self.on_illegal = fault(value)?,
            "on_late" => self.on_late = fault(value)?,
            "bank_ms" => self.bank_ms = ms(value)?,
            "per_move_ms" => {
                let v = ms(value)?;
                if v == 0 {
                    return Err(bad("a positive number of milliseconds"));
                }
                self.per_move_ms = v;
            }
            "set_timeout_ms" => self.set_timeout_ms = ms(value)?,
            "connect_timeout_ms" => self.connect_timeout_ms = ms(value)?,
            "pace_ms" => self.pace_ms = ms(value)?,
            "linger_ms" => self.linger_ms = ms(value)?,
            other => return Err(RulesError::UnknownKey(other.to_string())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_sets_match_the_spec_table() {
        let g = Rules::gpw();
        assert_eq!(
            (g.max_plies, g.at_limit, g.on_illegal, g.on_late),
            (300, AtLimit::Draw, Fault::Lose, Fault::Lose)
        );
        assert_eq!(
            (
                g.bank_ms,
                g.per_move_ms,
                g.set_timeout_ms,
                g.connect_timeout_ms
            ),
            (600_000, 10_000, 30_000, 30_000)
        );
        let s = Rules::seed();
        assert_eq!(
            (s.max_plies, s.at_limit, s.on_illegal, s.on_late),
            (500, AtLimit::Score, Fault::Pass, Fault::Pass)
        );
        assert_eq!(
            (
                s.bank_ms,
                s.per_move_ms,
                s.set_timeout_ms,
                s.connect_timeout_ms
            ),
            (0, 1_000, 30_000, 30_000)
        );
        assert!(matches!(
            Rules::named("x"),
            Err(RulesError::UnknownRuleSet(_))
        ));
    }

    #[test]
    fn parameters_are_settable_and_checked() {
        let mut r = Rules::gpw();
        r.set("bank_ms", "0").unwrap();
        r.set("per_move_ms", "1000").unwrap();
        r.set("at_limit", "score").unwrap();
        r.set("on_late", "pass").unwrap();
        assert_eq!(
            (r.bank_ms, r.per_move_ms, r.at_limit, r.on_late),
            (0, 1000, AtLimit::Score, Fault::Pass)
        );
        assert!(matches!(
            r.set("max_plies", "0"),
            Err(RulesError::BadValue { .. })
        ));
        assert!(matches!(
            r.set("on_late", "maybe"),
            Err(RulesError::BadValue { .. })
        ));
        assert!(matches!(
            r.set("per_move_ms", "-1"),
            Err(RulesError::BadValue { .. })
        ));
        assert!(matches!(
            r.set("colour", "1"),
            Err(RulesError::UnknownKey(_))
        ));
        for k in RULE_KEYS {
            assert!(
                !matches!(r.set(k, "zzz"), Err(RulesError::UnknownKey(_))),
                "{k}"
            );
        }
    }
}
