//! A match's configuration from the referee's options (`--opt key=value`), and the server's
//! secret for player tokens. Pure: the caller reads the configuration file and the environment.

use super::NlpConfig;

/// Option keys (`--opt key=value`).
pub const OPTION_KEYS: &[&str] = &[
    "config",
    "action_ms",
    "response_ms",
    "acceptable_ms",
    "max_day",
    "host",
    "port",
    "connect_timeout_ms",
    "log_dir",
];

/// An option (or configuration value) that is not what was expected.
pub use kakehiki_core::BadOption;

/// The configuration of a match of `players` seats: `file` (the configuration file, read for
/// that village) or the defaults, then the options; `get` returns an option's text, if given.
pub fn match_config<'a>(
    file: Option<NlpConfig>,
    players: usize,
    get: impl Fn(&str) -> Option<&'a str>,
) -> Result<NlpConfig, BadOption> {
    let mut c = file.unwrap_or_else(|| NlpConfig::for_players(players));
    let t = &mut c.server.timeout;
    let times = [
        ("action_ms", &mut t.action),
        ("response_ms", &mut t.response),
        ("acceptable_ms", &mut t.acceptable),
    ];
    for (key, to) in times {
        if let Some(v) = get(key) {
            let ms: u64 = v
                .parse()
                .map_err(|_| BadOption::new(key, v, "milliseconds"))?;
            *to = format!("{ms}ms");
        }
    }
    if let Some(v) = get("max_day") {
        let expected = "a day number, or -1 for no limit";
        c.game.max_day = v
            .parse()
            .map_err(|_| BadOption::new("max_day", v, expected))?;
    }
    if let Some(h) = get("host") {
        c.server.web_socket.host = h.to_string();
    }
    Ok(c)
}

/// The server's secret for player tokens, when the configuration requires them: its
/// `secret_key`, else `env` (upstream's `SECRET_KEY` in the environment).
pub fn secret(
    c: &NlpConfig,
    env: impl FnOnce() -> Option<String>,
) -> Result<Option<String>, BadOption> {
    if !c.server.authentication.enable {
        return Ok(None);
    }
    let s = c.server.authentication.secret_key.clone();
    s.or_else(env).map(Some).ok_or_else(|| {
        BadOption::new(
            "config",
            "server.authentication",
            "a secret_key or SECRET_KEY in the environment",
        )
    })
}
