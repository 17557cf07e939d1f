//! A game option (`--opt key=value`, or a value of a game's configuration file) the game refuses.

/// An option value the game refuses: the key, what was given, and what is expected. Rules
/// crates return it; the referee turns it into its own `BadOption` error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadOption {
    pub key: String,
    pub value: String,
    pub expected: String,
}

impl BadOption {
    pub fn new(key: &str, value: &str, expected: &str) -> Self {
        BadOption {
            key: key.into(),
            value: value.into(),
            expected: expected.into(),
        }
    }
}
