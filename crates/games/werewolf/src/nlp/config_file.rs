//! Configuration files of the natural-language division as upstream writes them (YAML), or as
//! JSON or TOML: the text to an [`NlpConfig`], with a warning per key Kakehiki reads and does not
//! implement. Pure: the caller reads the file.

use std::path::Path;

use serde_json::{json, Value};

use super::NlpConfig;

/// The talk and whisper counts a configuration file leaves out take the upstream default for
/// the village size (`default_5.yml`, `default_13.yml`): `max_count.per_agent` / `per_day`.
#[derive(Debug, Clone, Copy, Default)]
pub struct GivenCounts {
    talk_per_agent: bool,
    talk_per_day: bool,
    whisper_per_agent: bool,
    whisper_per_day: bool,
}

impl GivenCounts {
    pub const ALL: GivenCounts = GivenCounts {
        talk_per_agent: true,
        talk_per_day: true,
        whisper_per_agent: true,
        whisper_per_day: true,
    };

    pub fn of(v: &Value) -> GivenCounts {
        let has = |s: &str, k: &str| !v["game"][s]["max_count"][k].is_null();
        GivenCounts {
            talk_per_agent: has("talk", "per_agent"),
            talk_per_day: has("talk", "per_day"),
            whisper_per_agent: has("whisper", "per_agent"),
            whisper_per_day: has("whisper", "per_day"),
        }
    }

    /// Fill what was not given from the defaults for `c.game.agent_count` players.
    pub fn fill(self, c: &mut NlpConfig) {
        let d = NlpConfig::for_players(c.game.agent_count).game;
        let (t, w) = (&mut c.game.talk.max_count, &mut c.game.whisper.max_count);
        if !self.talk_per_agent {
            t.per_agent = d.talk.max_count.per_agent;
        }
        if !self.talk_per_day {
            t.per_day = d.talk.max_count.per_day;
        }
        if !self.whisper_per_agent {
            w.per_agent = d.whisper.max_count.per_agent;
        }
        if !self.whisper_per_day {
            w.per_day = d.whisper.max_count.per_day;
        }
    }
}

/// Keys of upstream's configuration files that Kakehiki reads and does not implement: accepted
/// with a warning naming each (docs/werewolf-nlp.md says what each does upstream).
pub const NOT_IMPLEMENTED_KEYS: &[&str] = &[
    "matching.is_optimize",
    "matching.team_count",
    "matching.game_count",
    "matching.output_path",
    "matching.infinite_loop",
    "custom_profile.dynamic_profile",
    "tts_broadcaster",
    // The newest upstream's deployment keys: each team's failure rate weighting and quarantining
    // its matches, Slack notifications of the server's events, and the match weight's factor
    // for an aborted game (under `matching` in some of upstream's files).
    "team_health",
    "slack_notifier",
    "matching.abort_weight_factor",
];

/// A configuration file as read: the configuration, and one warning per key it gives that
/// Kakehiki accepts without implementing it.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: NlpConfig,
    pub warnings: Vec<String>,
}

impl LoadedConfig {
    /// The configuration file at `path` (its extension tells the format, see [`parse_config`];
    /// errors name the path), whose text is `text`, for `players` agents when given: the counts
    /// the file leaves out follow the village size.
    pub fn of(path: &Path, text: &str, players: Option<usize>) -> Result<LoadedConfig, String> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let (mut config, given, warnings) =
            parse_config(ext, text).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(p) = players {
            config.game.agent_count = p;
        }
        given.fill(&mut config);
        Ok(LoadedConfig { config, warnings })
    }
}

/// YAML to JSON: mapping keys become text (upstream writes `logic.roles` keyed by numbers).
fn yaml_to_json(v: serde_yaml_ng::Value) -> Result<Value, String> {
    use serde_yaml_ng::Value as Y;
    Ok(match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => serde_json::to_value(&n).map_err(|e| e.to_string())?,
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<_, _>>()?,
        ),
        Y::Mapping(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let key = match k {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    other => return Err(format!("a mapping key that is not a scalar: {other:?}")),
                };
                out.insert(key, yaml_to_json(v)?);
            }
            Value::Object(out)
        }
        Y::Tagged(t) => yaml_to_json(t.value)?,
    })
}

/// The file's tree: YAML (`.yml`, `.yaml`, as upstream's), JSON (`.json`), TOML otherwise.
fn parse_tree(ext: &str, text: &str) -> Result<Value, String> {
    match ext.to_ascii_lowercase().as_str() {
        "json" => serde_json::from_str(text).map_err(|e| e.to_string()),
        "yml" | "yaml" => {
            let y: serde_yaml_ng::Value =
                serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
            yaml_to_json(y)
        }
        _ => toml::from_str(text).map_err(|e| e.to_string()),
    }
}

/// Remove the keys Kakehiki does not implement from `v`, naming each one found.
fn take_not_implemented(v: &mut Value) -> Vec<String> {
    let mut found = Vec::new();
    for key in NOT_IMPLEMENTED_KEYS {
        let (section, leaf) = match key.split_once('.') {
            Some((s, l)) => (Some(s), l),
            None => (None, *key),
        };
        let map = match section {
            Some(s) => v.get_mut(s).and_then(Value::as_object_mut),
            None => v.as_object_mut(),
        };
        if map.and_then(|m| m.remove(leaf)).is_some() {
            found.push(format!(
                "{key}: read and not implemented by Kakehiki (ignored; see docs/werewolf-nlp.md)"
            ));
        }
    }
    found
}

/// A configuration file's `text`, its format told by the file's extension `ext` (`yml`/`yaml`,
/// `json`, TOML otherwise): the configuration, which counts it gives, and one warning per key it
/// gives that Kakehiki does not implement. Any other unknown key is an error naming it.
pub fn parse_config(
    ext: &str,
    text: &str,
) -> Result<(NlpConfig, GivenCounts, Vec<String>), String> {
    let mut tree = parse_tree(ext, text)?;
    if tree.is_null() {
        // An empty YAML file: every key takes its default.
        tree = json!({});
    }
    let warnings = take_not_implemented(&mut tree);
    let given = GivenCounts::of(&tree);
    let c: NlpConfig = serde_path_to_error::deserialize(&tree).map_err(|e| {
        let at = e.path().to_string();
        if at == "." {
            e.inner().to_string()
        } else {
            format!("{at}: {}", e.inner())
        }
    })?;
    Ok((c, given, warnings))
}
