//! A ladder's final (`kakehiki ladder final`): the ladder is frozen and its active versions
//! (with its built-ins, if asked) become the entrants of a contest file in an existing format,
//! each version's program unpacked from the store, that the contest runner then plays into the
//! same store (docs/ladder.md).

use std::path::Path;

use kakehiki_store::{version_entrant, Store, StoreError};

use crate::program::{materialize, ProgramError};
use crate::LadderConfig;

/// The final's contest: its name, format, games and seed, and whether the built-ins play.
#[derive(Debug, Clone)]
pub struct FinalOptions {
    /// The contest's name.
    pub name: String,
    /// The contest format (`round-robin`, ...).
    pub format: String,
    /// Games per table, per pairing or per set, as the format reads it.
    pub games: u64,
    /// Base seed of the matches.
    pub seed: u64,
    /// The ladder's built-in bots play too.
    pub builtins: bool,
}

/// Why the final's contest file could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FinalError {
    #[error("cannot freeze the ladder")]
    Freeze(#[source] StoreError),
    #[error("cannot read the ladder's versions")]
    Versions(#[source] StoreError),
    #[error("{bot} v{version} is in {language:?}, which the ladder file no longer offers")]
    Language {
        bot: String,
        version: u64,
        language: String,
    },
    #[error("cannot get the program of {bot} v{version}")]
    Program {
        bot: String,
        version: u64,
        #[source]
        source: Box<ProgramError>,
    },
    #[error("{}", too_few(.ladder, .count, .builtins))]
    TooFew {
        ladder: String,
        count: usize,
        builtins: bool,
    },
    #[error("cannot write the final's contest file")]
    Toml(#[source] toml::ser::Error),
}

fn too_few(ladder: &str, &count: &usize, &builtins: &bool) -> String {
    format!(
        "the final of ladder {ladder} needs at least two entrants, and it has {count} active version{}{}",
        if count == 1 { "" } else { "s" },
        if builtins {
            " and built-ins"
        } else {
            " (--builtins adds the ladder's built-ins)"
        }
    )
}

/// Freeze the ladder of `config` and write the text of its final's contest file: every active
/// version (its program unpacked under `data`, as a worker does) and, with `opts.builtins`, the
/// ladder's built-ins.
pub fn final_contest(
    config: &LadderConfig,
    store: &mut dyn Store,
    data: &Path,
    opts: &FinalOptions,
) -> Result<String, FinalError> {
    store
        .ladder_set_frozen(&config.name, true)
        .map_err(FinalError::Freeze)?;
    let versions = store
        .active_bot_versions(&config.name)
        .map_err(FinalError::Versions)?;
    let mut entrants = Vec::new();
    for v in &versions {
        let recipe = config
            .recipe(&v.language)
            .ok_or_else(|| FinalError::Language {
                bot: v.bot.clone(),
                version: v.version,
                language: v.language.clone(),
            })?;
        let dir = materialize(store, data, &config.name, &v.bot, v.version).map_err(|source| {
            FinalError::Program {
                bot: v.bot.clone(),
                version: v.version,
                source: Box::new(source),
            }
        })?;
        entrants.push(toml::toml! {
            name = (version_entrant(&v.bot, v.version))
            seat = (config.transport.seat(&recipe.run))
            dir = (dir.display().to_string())
        });
    }
    if opts.builtins {
        for b in &config.builtins {
            entrants.push(toml::toml! {
                name = (format!("builtin:{b}"))
                seat = (format!("builtin:{b}"))
            });
        }
    }
    if entrants.len() < 2 {
        return Err(FinalError::TooFew {
            ladder: config.name.clone(),
            count: entrants.len(),
            builtins: opts.builtins,
        });
    }
    let mut file = toml::Table::new();
    file.insert("name".into(), opts.name.clone().into());
    file.insert("game".into(), config.game.clone().into());
    file.insert("rules".into(), config.rules.clone().into());
    file.insert("format".into(), opts.format.clone().into());
    file.insert("seed".into(), toml::Value::Integer(opts.seed as i64));
    file.insert("games".into(), toml::Value::Integer(opts.games as i64));
    // The ladder's own match settings: the final is played as its matches were.
    file.insert("seats".into(), toml::Value::Integer(config.seats as i64));
    file.insert(
        "match_timeout_s".into(),
        toml::Value::Integer(config.match_timeout_s as i64),
    );
    if let Some(level) = &config.sandbox {
        file.insert("sandbox".into(), level.clone().into());
    }
    if let Some(millis) = config.cpu_millis {
        file.insert(
            "cpus_per_bot".into(),
            toml::Value::Float(f64::from(millis) / 1000.0),
        );
    }
    if !config.options.is_empty() {
        let options: toml::Table = config
            .options
            .iter()
            .map(|(k, v)| (k.clone(), toml::Value::String(v.clone())))
            .collect();
        file.insert("options".into(), toml::Value::Table(options));
    }
    file.insert(
        "entrants".into(),
        toml::Value::Array(entrants.into_iter().map(toml::Value::Table).collect()),
    );
    Ok(format!(
        "# The final of ladder {:?} over its frozen versions, written by `kakehiki ladder final`.\n{}",
        config.name,
        toml::to_string(&file).map_err(FinalError::Toml)?
    ))
}
