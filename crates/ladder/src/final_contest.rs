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
    #[error("cannot make the final's play-off: {0}")]
    Playoff(String),
}

fn too_few(ladder: &str, &count: &usize, &builtins: &bool) -> String {
    format!(
        "the final of ladder {ladder} needs at least two entrants, and it has {count} active version{}{}",
        if count == 1 { "" } else { "s" },
        if builtins {
            " and built-ins"
        } else {
            " (the ladder's built-ins may enter too: `--builtins`, or the box on the organiser's page)"
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

/// The name of a ladder's final: the one `kakehiki ladder final` gives when not given `--name`,
/// and the one the ladder's site and its organiser's page show.
pub fn final_contest_name(ladder: &str) -> String {
    format!("{ladder}-final")
}

/// Write contest file `text` as `data/NAME.toml` (`name`: the contest's) and read it back as
/// the contest it defines: what the server runs, as `contest run` would run the file.
fn write_contest(
    data: &Path,
    name: &str,
    text: &str,
) -> Result<kakehiki_contest::ContestDef, StartFinalError> {
    use kakehiki_contest::arena::Arena;
    let path = data.join(format!("{name}.toml"));
    kakehiki_core::private_files::write(&path, text.as_bytes()).map_err(|source| {
        StartFinalError::Write {
            path: path.clone(),
            source,
        }
    })?;
    kakehiki_contest::ContestDef::parse(text, &path.display().to_string(), &|g| {
        kakehiki_contest::RefereeArena.game_type(g)
    })
    .map_err(|e| StartFinalError::Contest(e.to_string()))
}

/// Why the server could not start a final ([`start_final`]).
#[derive(Debug, thiserror::Error)]
pub enum StartFinalError {
    #[error("cannot open the store: {0}")]
    Store(#[source] StoreError),
    #[error(transparent)]
    Final(#[from] FinalError),
    #[error("cannot write the final's contest file {}: {source}", path.display())]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Contest(String),
}

/// A store connection maker that may be kept on a thread.
pub type Connector = std::sync::Arc<dyn Fn() -> Result<Box<dyn Store>, StoreError> + Send + Sync>;

/// What `kakehiki ladder final` does, for a server: freeze the ladder, write the final's
/// contest file under `data` (`NAME.toml`), check it as `contest run` does, then queue its
/// matches for the workers on a thread of its own ([`kakehiki_contest::coordinate`]: stage
/// after stage until the final is complete; the server's `--workers` and any `kakehiki worker`
/// play them). `store_files` are the store's files on this machine (SQLite's), which no
/// entrant's sandbox may show. Returns the contest's definition once its matches are being
/// queued; `done` is called on that thread when the coordination ends, with the error if it
/// failed. Running it again with the same options resumes the same final.
pub fn start_final(
    config: &LadderConfig,
    connect: Connector,
    data: &Path,
    store_files: &[std::path::PathBuf],
    opts: &FinalOptions,
    done: impl FnOnce(Result<(), String>) + Send + 'static,
) -> Result<kakehiki_contest::ContestDef, StartFinalError> {
    let text = {
        let mut store = connect().map_err(StartFinalError::Store)?;
        final_contest(config, store.as_mut(), data, opts)?
    };
    let def = write_contest(data, &opts.name, &text)?;
    kakehiki_contest::runner::preflight(&kakehiki_contest::RefereeArena, &def, store_files)
        .map_err(|e| StartFinalError::Contest(e.to_string()))?;
    // A final of the same name with other settings is refused here, not on the thread.
    {
        let mut store = connect().map_err(StartFinalError::Store)?;
        kakehiki_contest::runner::register(store.as_mut(), &def)
            .map_err(|e| StartFinalError::Contest(e.to_string()))?;
    }
    let coordinated = def.clone();
    let (config, data) = (config.clone(), data.to_path_buf());
    std::thread::Builder::new()
        .name(format!("final-{}", config.name))
        .spawn(move || {
            let run = kakehiki_contest::RunOptions {
                jobs: 1,
                progress: false,
                worker: "ladder-final".into(),
                ..kakehiki_contest::RunOptions::default()
            };
            let connect = move || connect();
            let coordinate = |def: &kakehiki_contest::ContestDef| {
                kakehiki_contest::coordinate(
                    def,
                    &connect,
                    &run,
                    std::time::Duration::from_millis(500),
                )
                .map(drop)
                .map_err(|e| e.to_string())
            };
            let outcome = coordinate(&coordinated).and_then(|()| {
                // The play-offs of its ties, once it is complete (a `playoff` ladder).
                let standings = stored_standings(
                    connect().map_err(|e| e.to_string())?.as_mut(),
                    &coordinated.name,
                )
                .map_err(|e| e.to_string())?;
                for (name, text) in
                    playoff_contests(&config, &text, &standings).map_err(|e| e.to_string())?
                {
                    coordinate(&write_contest(&data, &name, &text).map_err(|e| e.to_string())?)?;
                }
                Ok(())
            });
            done(outcome);
        })
        .map_err(|e| StartFinalError::Contest(format!("cannot start the final's thread: {e}")))?;
    Ok(def)
}

/// The standings of stored contest `name` (a final or a play-off), as its results give them.
pub fn stored_standings(
    store: &mut dyn Store,
    name: &str,
) -> Result<kakehiki_contest::Standings, kakehiki_contest::RunError> {
    let def = kakehiki_contest::stored_definition(store, name)?;
    let results = kakehiki_contest::load_results(store, &def)?;
    Ok(kakehiki_contest::compute_standings(&def, &results))
}

/// The name of the play-off of the entrants final `final_name` ranks level at `rank`.
pub fn playoff_name(final_name: &str, rank: usize) -> String {
    format!("{final_name}-playoff-{rank}")
}

/// The groups of entrants `standings` rank level, as (their shared rank, their names), best
/// first.
pub fn tied_groups(standings: &kakehiki_contest::Standings) -> Vec<(usize, Vec<String>)> {
    let mut groups: Vec<(usize, Vec<String>)> = Vec::new();
    for row in &standings.rows {
        match groups.last_mut() {
            Some((rank, names)) if *rank == row.rank => names.push(row.entrant.clone()),
            _ => groups.push((row.rank, vec![row.entrant.clone()])),
        }
    }
    groups.retain(|(_, names)| names.len() > 1);
    groups
}

/// The play-offs of a complete final (`final_text`, its contest file; `standings`, its
/// standings) of a ladder whose `final_tie_break` is `playoff`: for each group of entrants the
/// final ranks level and that fills a table of `config.seats` on its own, a contest file (its
/// name, [`playoff_name`], and its text): the final's file with that group as its entrants, a
/// round robin of the final's games (made even for two seats, so that each plays each side
/// equally often), its seed the final's plus the rank. A group smaller than a table has no
/// play-off: the ladder rating orders it.
pub fn playoff_contests(
    config: &LadderConfig,
    final_text: &str,
    standings: &kakehiki_contest::Standings,
) -> Result<Vec<(String, String)>, FinalError> {
    if config.final_tie_break != crate::config::FinalTieBreak::Playoff || !standings.complete {
        return Ok(Vec::new());
    }
    let file: toml::Table =
        toml::from_str(final_text).map_err(|e| FinalError::Playoff(e.to_string()))?;
    let mut out = Vec::new();
    for (rank, group) in tied_groups(standings) {
        if group.len() < config.seats {
            continue;
        }
        let mut playoff = file.clone();
        let name = playoff_name(&standings.contest, rank);
        playoff.insert("name".into(), name.clone().into());
        playoff.insert("format".into(), "round-robin".into());
        let games = file.get("games").and_then(|g| g.as_integer()).unwrap_or(2);
        let games = if config.seats == 2 {
            games + games % 2
        } else {
            games
        };
        playoff.insert("games".into(), toml::Value::Integer(games));
        let seed = file.get("seed").and_then(|g| g.as_integer()).unwrap_or(1);
        playoff.insert(
            "seed".into(),
            toml::Value::Integer(seed.wrapping_add(rank as i64)),
        );
        let entrants: Vec<toml::Value> = file
            .get("entrants")
            .and_then(|e| e.as_array())
            .map(|all| {
                all.iter()
                    .filter(|e| {
                        e.get("name")
                            .and_then(|n| n.as_str())
                            .is_some_and(|n| group.iter().any(|g| g == n))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if entrants.len() != group.len() {
            return Err(FinalError::Playoff(format!(
                "the final's file has {} of the {} entrants ranked level at {rank}",
                entrants.len(),
                group.len()
            )));
        }
        playoff.insert("entrants".into(), toml::Value::Array(entrants));
        let text = format!(
            "# The play-off of the entrants the final {:?} ranks level at {rank}.\n{}",
            standings.contest,
            toml::to_string(&playoff).map_err(FinalError::Toml)?
        );
        out.push((name, text));
    }
    Ok(out)
}
