//! The ladder file (`LADDER.toml`): which game and rule set, the languages offered and how each
//! is built and launched, the limits on uploads and builds, the match rate and the built-in bots
//! that take part. Every key but `name` and `game` has a default; an unknown key is an error that
//! names it. See `docs/ladder.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kakehiki_contest::config::GameLookup;
use serde::Deserialize;

/// Why a ladder file was refused.
#[derive(Debug, thiserror::Error)]
pub enum LadderConfigError {
    #[error("cannot read ladder file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// Not TOML, a key of the wrong type, or an unknown key (the message names it).
    #[error("{source_name}: {message}")]
    Toml {
        source_name: String,
        message: String,
    },
    /// A key whose value is not allowed.
    #[error("{source_name}: key `{key}`: {message}")]
    Invalid {
        source_name: String,
        key: String,
        message: String,
    },
    /// Settings the games refuse ([`LadderConfig::check_match_settings`]).
    #[error("{source_name}: the ladder's matches cannot be played: {message}")]
    Unplayable {
        source_name: String,
        message: String,
    },
}

/// How one language's sources become a bot, and how the bot is launched.
///
/// The build runs in the sandbox with the uploaded sources mounted read-only at `$SRC` and its
/// working folder (initially empty, writable, `build_disk_mib` large) as the current directory;
/// what the build leaves in its working folder becomes the bot's program folder. `$MAIN` is the
/// entry file's name. The build has no network.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// The name a single uploaded source file is stored under, and the entry file an archive must
    /// hold at its top.
    pub main: String,
    /// The build's command line (split like a shell would, run without one: use `sh -c '...'`
    /// for several steps).
    pub build: String,
    /// The built bot's command line, run in its program folder: a seat's `cmd:`.
    pub run: String,
    /// Folders the build may read besides the system's (`/usr`, `/bin`, `/lib`, `/etc`): a
    /// toolchain installed elsewhere.
    #[serde(default)]
    pub ro_paths: Vec<PathBuf>,
}

impl Recipe {
    fn new(main: &str, build: &str, run: &str) -> Recipe {
        Recipe {
            main: main.to_string(),
            build: build.to_string(),
            run: run.to_string(),
            ro_paths: Vec::new(),
        }
    }

    /// The build command line, split into words.
    pub fn build_argv(&self) -> Result<Vec<String>, String> {
        split(&self.build, "build")
    }

    /// The run command line, split into words.
    pub fn run_argv(&self) -> Result<Vec<String>, String> {
        split(&self.run, "run")
    }
}

fn split(line: &str, what: &str) -> Result<Vec<String>, String> {
    let words = shell_words::split(line)
        .map_err(|e| format!("the {what} command line {line:?} cannot be split: {e}"))?;
    if words.is_empty() {
        return Err(format!("the {what} command line is empty"));
    }
    Ok(words)
}

/// The languages with a recipe built in.
pub const DEFAULT_LANGUAGES: &[&str] = &["python", "cpp", "java", "rust", "javascript"];

/// The built-in recipe of a language: Python 3, C++ (g++), Java (javac), Rust (rustc, standard
/// library only), JavaScript (node).
pub fn default_recipe(language: &str) -> Option<Recipe> {
    Some(match language {
        "python" => Recipe::new(
            "bot.py",
            r#"sh -c 'cp -R "$SRC"/. . && python3 -m py_compile "$MAIN"'"#,
            "python3 bot.py",
        ),
        "cpp" => Recipe::new(
            "bot.cpp",
            r#"sh -c 'g++ -std=c++17 -O2 -pipe -I "$SRC" -o bot $(find "$SRC" -name "*.cpp")'"#,
            "./bot",
        ),
        "java" => Recipe::new(
            "Main.java",
            r#"sh -c 'javac -encoding UTF-8 -d . $(find "$SRC" -name "*.java")'"#,
            "java -cp . Main",
        ),
        "rust" => Recipe::new(
            "main.rs",
            r#"sh -c 'rustc --edition 2021 -O -o bot "$SRC/$MAIN"'"#,
            "./bot",
        ),
        "javascript" => Recipe::new(
            "bot.js",
            r#"sh -c 'cp -R "$SRC"/. . && node --check "$MAIN"'"#,
            "node bot.js",
        ),
        _ => return None,
    })
}

/// Limits on uploads and builds.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest upload (a source file or an archive), in bytes.
    pub upload_bytes: u64,
    /// Most entries (files and folders) an archive may hold.
    pub archive_entries: u64,
    /// Most bytes an archive may unpack to (counted while unpacking, whatever its headers say).
    pub unpacked_bytes: u64,
    /// Longest a build may run, in seconds (wall clock).
    pub build_seconds: u64,
    /// Memory of a build over all its processes, in MiB.
    pub build_memory_mib: u64,
    /// The build's disk (its working folder, which becomes the program folder), in MiB.
    pub build_disk_mib: u64,
    /// Most uploads one account may make in an hour (web form and API together).
    pub uploads_per_hour: u64,
    /// Longest the `check` after a build may run, in seconds (wall clock): a bot slow enough to
    /// pass it only in hours fails it instead of holding the builder.
    pub check_seconds: u64,
    /// Most bytes the built program folder's files may hold (it is kept in the store), in MiB.
    pub program_mib: u64,
    /// Most files and folders the built program folder may have.
    pub program_entries: u64,
    /// Days an upload and its built program are kept once a newer version replaced them (and
    /// a refused or failed one's), unless among its bot's `keep_versions` newest.
    pub retention_days: u64,
    /// A bot's newest versions whose upload and program are always kept.
    pub keep_versions: u64,
    /// What one account's uploads and built programs may take in the store, in MiB: an upload
    /// past it is refused until older versions are pruned.
    pub account_mib: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            upload_bytes: 1 << 20,
            archive_entries: 1000,
            unpacked_bytes: 16 << 20,
            build_seconds: 120,
            build_memory_mib: 2048,
            build_disk_mib: 256,
            uploads_per_hour: 60,
            check_seconds: 300,
            program_mib: 64,
            program_entries: 10_000,
            retention_days: 30,
            keep_versions: 5,
            account_mib: 1024,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLadder {
    name: String,
    game: String,
    rules: Option<String>,
    #[serde(default)]
    builtins: Vec<String>,
    languages: Option<Vec<String>>,
    #[serde(default)]
    recipes: BTreeMap<String, Recipe>,
    #[serde(default)]
    limits: Limits,
    matches_per_hour: Option<u64>,
    match_timeout_s: Option<u64>,
    thinking_seconds: Option<u64>,
    sandbox: Option<String>,
    cpus_per_bot: Option<toml::Value>,
    transport: Option<String>,
    seats: Option<usize>,
    #[serde(default)]
    copies: bool,
    final_tie_break: Option<String>,
    #[serde(default)]
    options: BTreeMap<String, toml::Value>,
}

/// How a ladder's built bots reach the referee: the game's own protocol over stdin and stdout
/// (`pipe`, a `cmd:` seat), over TCP (`tcp`, a `tcp-cmd:` seat: Geister's and AIWolf's contest
/// protocol), over a WebSocket (`ws`, a `ws-cmd:` seat: the natural-language division) or as a
/// DAIDE client (`daide`, a `daide-cmd:` seat: Diplomacy). The bot runs confined as those seats
/// do in `play` and `contest run`; a networked one in a network namespace of its own whose
/// loopback holds only its seat's listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LadderTransport {
    Pipe,
    Tcp,
    Ws,
    Daide,
}

impl LadderTransport {
    pub const ALL: [LadderTransport; 4] = [
        LadderTransport::Pipe,
        LadderTransport::Tcp,
        LadderTransport::Ws,
        LadderTransport::Daide,
    ];

    /// Its name in the ladder file.
    pub fn name(self) -> &'static str {
        match self {
            LadderTransport::Pipe => "pipe",
            LadderTransport::Tcp => "tcp",
            LadderTransport::Ws => "ws",
            LadderTransport::Daide => "daide",
        }
    }

    /// The seat form of a built bot (`cmd:`, `tcp-cmd:`, `ws-cmd:`, `daide-cmd:`).
    pub fn seat_form(self) -> &'static str {
        match self {
            LadderTransport::Pipe => "cmd:",
            LadderTransport::Tcp => "tcp-cmd:",
            LadderTransport::Ws => "ws-cmd:",
            LadderTransport::Daide => "daide-cmd:",
        }
    }

    /// A recipe's `run` line as the bot is launched: a networked bot is told where to connect
    /// (`{host} {port}`, or `{url}` for a WebSocket), added at the end unless the line already
    /// names `{host}`, `{port}` or `{url}` where it wants them.
    pub fn run_line(self, run: &str) -> String {
        let named = ["{host}", "{port}", "{url}"]
            .iter()
            .any(|p| run.contains(p));
        match self {
            LadderTransport::Pipe => run.to_string(),
            _ if named => run.to_string(),
            LadderTransport::Ws => format!("{run} {{url}}"),
            LadderTransport::Tcp | LadderTransport::Daide => format!("{run} {{host}} {{port}}"),
        }
    }

    /// The seat of a built bot whose recipe runs `run`, as a seat spec (`tcp-cmd:python3
    /// bot.py {host} {port}`).
    pub fn seat(self, run: &str) -> String {
        format!("{}{}", self.seat_form(), self.run_line(run))
    }

    /// The transport a game's ladder uses when its file names none: stdin and stdout where the
    /// game speaks over them, else its contest protocol (AIWolf's TCP, the NLP division's
    /// WebSocket).
    pub fn default_for(game: &kakehiki_core::GameType) -> LadderTransport {
        if game.transports.contains(&kakehiki_core::Transport::Stdio) {
            LadderTransport::Pipe
        } else if game.name == "werewolf-nlp" {
            LadderTransport::Ws
        } else {
            LadderTransport::Tcp
        }
    }

    /// Whether `game` can be played over it.
    fn serves(self, game: &kakehiki_core::GameType) -> bool {
        use kakehiki_core::Transport;
        match self {
            LadderTransport::Pipe => game.transports.contains(&Transport::Stdio),
            LadderTransport::Tcp | LadderTransport::Ws => game.transports.contains(&Transport::Tcp),
            LadderTransport::Daide => game.name == "diplomacy",
        }
    }
}

/// A validated ladder file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LadderConfig {
    /// The ladder's name (in URLs: letters, digits, `-` and `_`).
    pub name: String,
    /// A registered game.
    pub game: String,
    /// The rule set (the game's default when not given).
    pub rules: String,
    /// Built-in bots that take part (each one the game has).
    pub builtins: Vec<String>,
    /// The languages offered, each with its recipe (the built-in one unless `[recipes.NAME]`
    /// replaces it), in the file's order.
    pub languages: Vec<(String, Recipe)>,
    pub limits: Limits,
    /// Matches started per hour over the whole ladder.
    pub matches_per_hour: u64,
    /// Per-match settings, as in a contest file: the wall-clock limit of one match in seconds
    /// (0: none), ...
    pub match_timeout_s: u64,
    /// Whether the file gives `match_timeout_s`; when it does not,
    /// [`LadderConfig::check_match_settings`] raises the default to the game's longest legal
    /// match under the ladder's limits if that is longer.
    pub match_timeout_given: bool,
    /// ... each seat's thinking time over a whole match, in seconds (0: none): the ladder's
    /// own time rule on top of the game's. A seat past it stops the match and loses it; the
    /// others win. It bounds how long a legal but slow bot holds a worker.
    pub thinking_seconds: u64,
    /// ... the bot sandbox level (`best` when absent), ...
    pub sandbox: Option<String>,
    /// ... each bot's CPU quota in thousandths of a CPU, ...
    pub cpu_millis: Option<u32>,
    /// ... and the game's options (its time limits and the like), checked against the game by
    /// the program that loads the file (`kakehiki ladder serve` refuses unknown ones).
    pub options: BTreeMap<String, String>,
    /// How the built bots reach the referee (`transport`; [`LadderTransport::default_for`]
    /// the game when the file names none).
    pub transport: LadderTransport,
    /// Seats of a ladder match (`seats`; the game's standard match when not given): the
    /// matchmaker fills a table from the entrants near in rating, the built-ins filling the seats
    /// no other entrant takes.
    pub seats: usize,
    /// Whether a contestant's bot may sit in several seats of one table (`copies`), when the
    /// ladder has fewer entrants than seats and no built-in to fill them; otherwise such a table
    /// is not played.
    pub copies: bool,
    /// How the final's standings on the ladder site order entrants the final's format ranks
    /// the same (`final_tie_break`).
    pub final_tie_break: FinalTieBreak,
}

/// How the final's standings on the ladder site break a tie of the final's own ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalTieBreak {
    /// By the entrants' ladder ratings (μ − 3σ) when the ladder froze: the better one ranks
    /// first (`rating`, the default).
    Rating,
    /// Tied entrants share their rank (`shared`).
    Shared,
    /// Entrants the final ranks level play a play-off among themselves once the final is
    /// complete (a round robin of the final's games, a contest of its own); the play-off's
    /// ranking orders them, and the ladder rating those it still ranks level (`playoff`).
    Playoff,
}

impl FinalTieBreak {
    /// Its name in the ladder file.
    pub fn name(self) -> &'static str {
        match self {
            FinalTieBreak::Rating => "rating",
            FinalTieBreak::Shared => "shared",
            FinalTieBreak::Playoff => "playoff",
        }
    }

    /// Whether the ladder rating orders the final's ties (after a play-off, those it leaves).
    pub fn by_rating(self) -> bool {
        self != FinalTieBreak::Shared
    }
}

/// The default wall-clock limit of one ladder match, in seconds (seat limits end a match long
/// before).
pub const DEFAULT_MATCH_TIMEOUT_S: u64 = 3600;

/// The default thinking time of one seat over a whole ladder match, in seconds: far above
/// what a healthy bot uses (a Geister bot answering each of 100 moves in a second uses 100), far
/// below what one answering just inside the game's per-move limit can use (9 s a move over a long
/// Geister game held a worker for 22 minutes), which would otherwise hold a worker that long.
pub const DEFAULT_THINKING_SECONDS: u64 = 300;

/// The default match rate.
pub const DEFAULT_MATCHES_PER_HOUR: u64 = 600;

impl LadderConfig {
    /// Read and validate a ladder file.
    pub fn load(path: &Path, lookup: &GameLookup<'_>) -> Result<LadderConfig, LadderConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| LadderConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        LadderConfig::parse(&text, &path.display().to_string(), lookup)
    }

    /// Parse and validate ladder TOML; `source_name` names the text in errors. `lookup` finds a
    /// game's declaration, as for contest files (the referee's registry in the binary).
    pub fn parse(
        text: &str,
        source_name: &str,
        lookup: &GameLookup<'_>,
    ) -> Result<LadderConfig, LadderConfigError> {
        let invalid = |key: &str, message: String| LadderConfigError::Invalid {
            source_name: source_name.to_string(),
            key: key.to_string(),
            message,
        };
        let raw: RawLadder = toml::from_str(text).map_err(|e| LadderConfigError::Toml {
            source_name: source_name.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let name = raw.name.trim().to_string();
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid(
                "name",
                format!(
                    "expected 1 to 64 letters, digits, `-` or `_` (it is part of URLs), found {:?}",
                    raw.name
                ),
            ));
        }
        let game_type = lookup(&raw.game).map_err(|m| invalid("game", m))?;
        let rules = match raw.rules {
            None => game_type.default_rules().to_string(),
            Some(r) if game_type.rule_sets.contains(&r.as_str()) => r,
            Some(r) => {
                return Err(invalid(
                    "rules",
                    format!(
                        "{} has no rule set {r:?}: expected one of {}",
                        game_type.name,
                        game_type.rule_sets.join(", ")
                    ),
                ))
            }
        };
        let mut builtins = Vec::new();
        for b in raw.builtins {
            if !game_type.builtin_bots.contains(&b.as_str()) {
                return Err(invalid(
                    "builtins",
                    format!(
                        "{} has no built-in bot {b:?}: expected some of {}",
                        game_type.name,
                        game_type.builtin_bots.join(", ")
                    ),
                ));
            }
            if builtins.contains(&b) {
                return Err(invalid("builtins", format!("{b:?} is named twice")));
            }
            builtins.push(b);
        }
        let names: Vec<String> = match raw.languages {
            Some(l) => l,
            None => DEFAULT_LANGUAGES.iter().map(|s| s.to_string()).collect(),
        };
        if names.is_empty() {
            return Err(invalid(
                "languages",
                "a ladder offers at least one language".into(),
            ));
        }
        for key in raw.recipes.keys() {
            if !names.contains(key) {
                return Err(invalid(
                    &format!("recipes.{key}"),
                    format!("{key:?} is not among `languages` ({})", names.join(", ")),
                ));
            }
        }
        let mut languages: Vec<(String, Recipe)> = Vec::new();
        for lang in names {
            if languages.iter().any(|(l, _)| *l == lang) {
                return Err(invalid("languages", format!("{lang:?} is named twice")));
            }
            let recipe = match raw.recipes.get(&lang) {
                Some(r) => r.clone(),
                None => default_recipe(&lang).ok_or_else(|| {
                    invalid(
                        "languages",
                        format!(
                            "no built-in recipe for {lang:?} (built in: {}): add a [recipes.{lang}] table with `main`, `build` and `run`",
                            DEFAULT_LANGUAGES.join(", ")
                        ),
                    )
                })?,
            };
            let key = format!("recipes.{lang}");
            recipe.build_argv().map_err(|m| invalid(&key, m))?;
            recipe.run_argv().map_err(|m| invalid(&key, m))?;
            if !valid_file_name(&recipe.main) {
                return Err(invalid(
                    &key,
                    format!("`main` must be a plain file name, found {:?}", recipe.main),
                ));
            }
            if let Some(p) = recipe.ro_paths.iter().find(|p| !p.is_absolute()) {
                return Err(invalid(
                    &key,
                    format!("`ro_paths` must be absolute, found {}", p.display()),
                ));
            }
            languages.push((lang, recipe));
        }
        let l = &raw.limits;
        for (key, value, min, max) in [
            ("limits.upload_bytes", l.upload_bytes, 1, 1 << 30),
            ("limits.archive_entries", l.archive_entries, 1, 1_000_000),
            ("limits.unpacked_bytes", l.unpacked_bytes, 1, 16 << 30),
            ("limits.build_seconds", l.build_seconds, 1, 24 * 3600),
            ("limits.build_memory_mib", l.build_memory_mib, 16, 1 << 20),
            ("limits.build_disk_mib", l.build_disk_mib, 1, 1 << 20),
            ("limits.uploads_per_hour", l.uploads_per_hour, 1, 1_000_000),
            ("limits.check_seconds", l.check_seconds, 1, 24 * 3600),
            ("limits.program_mib", l.program_mib, 1, 1 << 20),
            ("limits.program_entries", l.program_entries, 1, 10_000_000),
            ("limits.retention_days", l.retention_days, 1, 36_500),
            ("limits.keep_versions", l.keep_versions, 1, 1_000_000),
            ("limits.account_mib", l.account_mib, 1, 1 << 30),
        ] {
            if !(min..=max).contains(&value) {
                return Err(invalid(
                    key,
                    format!("expected an integer from {min} to {max}, found {value}"),
                ));
            }
        }
        let matches_per_hour = raw.matches_per_hour.unwrap_or(DEFAULT_MATCHES_PER_HOUR);
        if !(1..=1_000_000).contains(&matches_per_hour) {
            return Err(invalid(
                "matches_per_hour",
                format!("expected an integer from 1 to 1000000, found {matches_per_hour}"),
            ));
        }
        let match_timeout_s = raw.match_timeout_s.unwrap_or(DEFAULT_MATCH_TIMEOUT_S);
        if match_timeout_s > 7 * 24 * 3600 {
            return Err(invalid(
                "match_timeout_s",
                format!("expected an integer from 0 (no limit) to 604800, found {match_timeout_s}"),
            ));
        }
        let thinking_seconds = raw.thinking_seconds.unwrap_or(DEFAULT_THINKING_SECONDS);
        if thinking_seconds > 7 * 24 * 3600 {
            return Err(invalid(
                "thinking_seconds",
                format!(
                    "expected an integer from 0 (no limit) to 604800, found {thinking_seconds}"
                ),
            ));
        }
        let sandbox = match raw.sandbox {
            None => None,
            Some(l) if ["best", "strict", "off"].contains(&l.as_str()) => Some(l),
            Some(l) => {
                return Err(invalid(
                    "sandbox",
                    format!("unknown sandbox level {l:?}: expected best, strict or off"),
                ))
            }
        };
        let cpu_millis = match &raw.cpus_per_bot {
            None => None,
            Some(v) => Some(kakehiki_contest::config::cpu_millis(v).ok_or_else(|| {
                invalid(
                    "cpus_per_bot",
                    kakehiki_contest::config::CPUS_EXPECTED.into(),
                )
            })?),
        };
        let transport = match raw.transport.as_deref() {
            None => LadderTransport::default_for(game_type),
            Some(t) => {
                let names: Vec<&str> = LadderTransport::ALL
                    .iter()
                    .filter(|x| x.serves(game_type))
                    .map(|x| x.name())
                    .collect();
                match LadderTransport::ALL.iter().find(|x| x.name() == t) {
                    Some(x) if x.serves(game_type) => *x,
                    Some(_) => {
                        return Err(invalid(
                            "transport",
                            format!(
                                "{} is not played over {t:?}: expected {}",
                                game_type.name,
                                names.join(" or ")
                            ),
                        ))
                    }
                    None => {
                        return Err(invalid(
                            "transport",
                            format!(
                                "unknown transport {t:?}: expected pipe, tcp, ws or daide ({} is played over {})",
                                game_type.name,
                                names.join(" or ")
                            ),
                        ))
                    }
                }
            }
        };
        let seats = raw.seats.unwrap_or(game_type.default_seats);
        if !game_type.accepts_seats(seats) || seats < 2 {
            return Err(invalid(
                "seats",
                format!(
                    "a {} match has {} to {} seats, found {seats}",
                    game_type.name,
                    game_type.min_seats.max(2),
                    game_type.max_seats
                ),
            ));
        }
        let final_tie_break = match raw.final_tie_break.as_deref() {
            None => FinalTieBreak::Rating,
            Some(t) => [
                FinalTieBreak::Rating,
                FinalTieBreak::Shared,
                FinalTieBreak::Playoff,
            ]
            .into_iter()
            .find(|x| x.name() == t)
            .ok_or_else(|| {
                invalid(
                    "final_tie_break",
                    format!("expected \"rating\", \"shared\" or \"playoff\", found {t:?}"),
                )
            })?,
        };
        let mut options = BTreeMap::new();
        for (k, v) in &raw.options {
            let text = kakehiki_contest::config::option_text(v).ok_or_else(|| {
                invalid(
                    &format!("options.{k}"),
                    kakehiki_contest::config::OPTION_EXPECTED.into(),
                )
            })?;
            options.insert(k.clone(), text);
        }
        Ok(LadderConfig {
            name,
            game: game_type.name.to_string(),
            rules,
            builtins,
            languages,
            limits: raw.limits,
            matches_per_hour,
            match_timeout_s,
            match_timeout_given: raw.match_timeout_s.is_some(),
            thinking_seconds,
            sandbox,
            cpu_millis,
            options,
            transport,
            seats,
            copies: raw.copies,
            final_tie_break,
        })
    }

    /// The names of the languages it offers, in the file's order.
    pub fn language_names(&self) -> Vec<&str> {
        self.languages.iter().map(|(l, _)| l.as_str()).collect()
    }

    /// A table of `builtin:silent` seats (the game's default count) with the ladder's rule set,
    /// options and sandbox, as one of its matches would be played.
    pub fn probe_job(&self, seats: usize) -> kakehiki_contest::MatchJob {
        let mut job = kakehiki_contest::MatchJob::probe(
            kakehiki_store::ladder_contest(&self.name),
            &self.game,
            Some(self.rules.clone()),
            seats,
            self.options.clone(),
            self.match_timeout_s,
        );
        job.sandbox = self.sandbox.clone();
        job.cpu_millis = self.cpu_millis;
        job.thinking_s = self.thinking_seconds;
        job
    }

    /// Read and validate a ladder file against the referee's games: its per-match settings are
    /// checked as the game checks a match's (an unknown option or a bad value is named here,
    /// not in every match), and its `match_timeout_s` against the longest legal match under its
    /// limits ([`LadderConfig::check_match_settings`]).
    pub fn load_playable(path: &Path) -> Result<LadderConfig, LadderConfigError> {
        use kakehiki_contest::arena::Arena;
        let arena = kakehiki_contest::RefereeArena;
        let mut config = LadderConfig::load(path, &|g| arena.game_type(g))?;
        config
            .check_match_settings(&arena)
            .map_err(|message| LadderConfigError::Unplayable {
                source_name: path.display().to_string(),
                message,
            })?;
        Ok(config)
    }

    /// Check the ladder's per-match settings as the game checks a match's (an unknown option
    /// or a bad value is named here, not in every match), and its `match_timeout_s` against the
    /// longest legal match under its limits: a given one below it is refused with both numbers;
    /// the default, when the file gives none, is raised to it.
    pub fn check_match_settings(
        &mut self,
        arena: &dyn kakehiki_contest::Arena,
    ) -> Result<(), String> {
        let probe = self.probe_job(self.seats);
        arena.check_job(&probe)?;
        if self.match_timeout_given {
            kakehiki_contest::arena::check_match_timeout(arena, &probe)?;
        } else if let Some(longest) = arena.longest_match(&probe)? {
            let longest_s = kakehiki_contest::arena::ceil_secs(longest);
            self.match_timeout_s = self.match_timeout_s.max(longest_s);
        }
        Ok(())
    }

    /// The recipe of a language the ladder offers.
    pub fn recipe(&self, language: &str) -> Option<&Recipe> {
        self.languages
            .iter()
            .find(|(l, _)| l == language)
            .map(|(_, r)| r)
    }
}

/// A file name with no folder part, not `.` or `..`, no NUL.
fn valid_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.contains('\0')
        && name.len() <= 255
}

#[cfg(test)]
mod tests {
    use super::*;
    use kakehiki_core::GameType;

    fn lookup(name: &str) -> Result<&'static GameType, String> {
        kakehiki_referee::find_game(name)
            .map(|d| d.game_type())
            .map_err(|e| e.to_string())
    }

    fn parse(text: &str) -> Result<LadderConfig, LadderConfigError> {
        LadderConfig::parse(text, "ladder.toml", &lookup)
    }

    fn err(text: &str) -> String {
        match parse(text) {
            Ok(c) => panic!("accepted: {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    const MINIMAL: &str =
        "name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\", \"strong\"]\nlanguages = [\"python\", \"cpp\"]\n";

    #[test]
    fn the_transport_and_the_seats_default_to_the_games_and_are_checked_against_it() {
        let c = parse(MINIMAL).unwrap();
        assert_eq!(
            c.transport,
            LadderTransport::Pipe,
            "geister speaks over pipes too"
        );
        assert_eq!(c.seats, 2);
        assert_eq!(c.transport.seat("python3 bot.py"), "cmd:python3 bot.py");
        let game = |g: &str, extra: &str| {
            parse(&format!(
                "name = \"g\"\ngame = \"{g}\"\nlanguages = [\"python\"]\n{extra}"
            ))
            .unwrap()
        };
        let ww = game("werewolf", "");
        assert_eq!(ww.transport, LadderTransport::Tcp, "AIWolf is TCP only");
        assert_eq!(ww.seats, 15);
        assert!(!ww.copies, "one seat per bot unless the file allows copies");
        assert!(game("werewolf", "copies = true\n").copies);
        assert!(parse(&format!("{MINIMAL}copies = \"yes\"\n")).is_err());
        assert_eq!(
            ww.transport.seat("python3 bot.py"),
            "tcp-cmd:python3 bot.py {host} {port}"
        );
        // A run line that says where it wants the address keeps it there.
        assert_eq!(
            ww.transport
                .seat("python3 bot.py -h {host} -p {port} -n me"),
            "tcp-cmd:python3 bot.py -h {host} -p {port} -n me"
        );
        let nlp = game("werewolf-nlp", "seats = 5");
        assert_eq!(nlp.transport, LadderTransport::Ws);
        assert_eq!(nlp.seats, 5);
        assert_eq!(nlp.transport.seat("java Main"), "ws-cmd:java Main {url}");
        let g = game("geister", "transport = \"tcp\"");
        assert_eq!(g.transport.seat("./bot"), "tcp-cmd:./bot {host} {port}");
        let d = game("diplomacy", "transport = \"daide\"");
        assert_eq!(d.transport.seat("./bot"), "daide-cmd:./bot {host} {port}");
        // Each seat form parses as the seat the referee plays.
        for c in [&ww, &nlp, &g, &d] {
            let spec: kakehiki_core::SeatSpec = c.transport.seat("python3 bot.py").parse().unwrap();
            assert!(!matches!(spec, kakehiki_core::SeatSpec::Cmd(_)), "{spec}");
        }

        let bad = |g: &str, extra: &str| {
            err(&format!(
                "name = \"g\"\ngame = \"{g}\"\nlanguages = [\"python\"]\n{extra}"
            ))
        };
        let e = bad("werewolf", "transport = \"pipe\"");
        assert!(
            e.contains("`transport`")
                && e.contains("werewolf is not played over \"pipe\": expected tcp or ws"),
            "{e}"
        );
        let e = bad("nac", "transport = \"tcp\"");
        assert!(
            e.contains("nac is not played over \"tcp\": expected pipe"),
            "{e}"
        );
        let e = bad("geister", "transport = \"daide\"");
        assert!(e.contains("expected pipe or tcp or ws"), "{e}");
        let e = bad("geister", "transport = \"udp\"");
        assert!(
            e.contains("unknown transport \"udp\": expected pipe, tcp, ws or daide"),
            "{e}"
        );
        let e = bad("geister", "seats = 3");
        assert!(
            e.contains("`seats`") && e.contains("a geister match has 2 to 2 seats, found 3"),
            "{e}"
        );
        let e = bad("werewolf", "seats = 2");
        assert!(
            e.contains("a werewolf match has 3 to 18 seats, found 2"),
            "{e}"
        );
    }

    #[test]
    fn the_minimal_file_parses_with_every_other_key_defaulted() {
        let c = parse(MINIMAL).unwrap();
        assert_eq!(c.name, "g");
        assert_eq!(c.game, "geister");
        assert_eq!(c.rules, "gpw", "geister's default rule set");
        assert_eq!(c.builtins, ["random", "strong"]);
        let langs = c.language_names();
        assert_eq!(langs, ["python", "cpp"]);
        assert_eq!(c.recipe("python"), default_recipe("python").as_ref());
        assert_eq!(c.recipe("cpp").unwrap().run, "./bot");
        assert!(c.recipe("java").is_none(), "not offered");
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.limits.upload_bytes, 1 << 20);
        assert_eq!(c.limits.build_seconds, 120);
        assert_eq!(c.limits.check_seconds, 300);
        assert_eq!(c.limits.uploads_per_hour, 60);
        assert_eq!(c.matches_per_hour, DEFAULT_MATCHES_PER_HOUR);
        assert_eq!(c.match_timeout_s, DEFAULT_MATCH_TIMEOUT_S);
        assert_eq!(c.thinking_seconds, DEFAULT_THINKING_SECONDS);
        assert_eq!(c.probe_job(2).thinking_s, DEFAULT_THINKING_SECONDS);
        assert_eq!((c.sandbox.as_deref(), c.cpu_millis), (None, None));
        assert!(c.options.is_empty());
    }

    #[test]
    fn per_match_settings_are_read_and_bad_ones_named() {
        let c = parse(&format!(
            "{MINIMAL}match_timeout_s = 600\nthinking_seconds = 0\nsandbox = \"strict\"\ncpus_per_bot = 0.5\n[options]\nturn_ms = 2000\nname = \"x\"\n"
        ))
        .unwrap();
        assert_eq!(c.match_timeout_s, 600);
        assert_eq!(c.thinking_seconds, 0, "0 turns the budget off");
        assert_eq!(c.sandbox.as_deref(), Some("strict"));
        assert_eq!(c.cpu_millis, Some(500));
        assert_eq!(c.options["turn_ms"], "2000");
        assert_eq!(c.options["name"], "x");
        for (text, key) in [
            ("match_timeout_s = 700000", "match_timeout_s"),
            ("thinking_seconds = 700000", "thinking_seconds"),
            ("sandbox = \"loose\"", "sandbox"),
            ("cpus_per_bot = 0", "cpus_per_bot"),
            ("cpus_per_bot = \"all\"", "cpus_per_bot"),
            ("[options]\nturn_ms = [1]", "options.turn_ms"),
        ] {
            let e = err(&format!("{MINIMAL}{text}\n"));
            assert!(e.contains(&format!("key `{key}`")), "{text}: {e}");
        }
    }

    #[test]
    fn without_languages_every_built_in_recipe_is_offered() {
        let c = parse("name = \"n\"\ngame = \"nac\"\n").unwrap();
        let langs = c.language_names();
        assert_eq!(langs, DEFAULT_LANGUAGES);
        assert!(c.builtins.is_empty());
        for (lang, r) in &c.languages {
            assert!(r.build_argv().is_ok(), "{lang}");
            assert!(r.run_argv().is_ok(), "{lang}");
        }
    }

    #[test]
    fn recipes_and_limits_can_be_set() {
        let c = parse(
            r#"
name = "w"
game = "werewolf"
rules = "seed-2015"
languages = ["python", "go"]
matches_per_hour = 30
[recipes.go]
main = "main.go"
build = "go build -o bot ."
run = "./bot"
ro_paths = ["/usr/local/go"]
[limits]
upload_bytes = 5000
build_seconds = 10
uploads_per_hour = 5
"#,
        )
        .unwrap();
        assert_eq!(c.rules, "seed-2015");
        assert_eq!(
            c.recipe("go").unwrap().ro_paths,
            [PathBuf::from("/usr/local/go")]
        );
        assert_eq!(c.limits.upload_bytes, 5000);
        assert_eq!(c.limits.build_seconds, 10);
        assert_eq!(c.limits.uploads_per_hour, 5);
        assert_eq!(c.limits.archive_entries, Limits::default().archive_entries);
        assert_eq!(c.matches_per_hour, 30);
    }

    #[test]
    fn a_misspelled_key_is_named() {
        let e = err("name = \"g\"\ngame = \"geister\"\nbuiltin = [\"random\"]\n");
        assert!(e.contains("unknown field `builtin`"), "{e}");
        let e = err("name = \"g\"\ngame = \"geister\"\n[limits]\nupload_byte = 3\n");
        assert!(e.contains("unknown field `upload_byte`"), "{e}");
        let e = err(
            "name = \"g\"\ngame = \"geister\"\nlanguages = [\"cpp\"]\n[recipes.cpp]\nmain = \"a.cpp\"\nbuild = \"g++ a.cpp\"\nrun = \"./a\"\nflags = 1\n",
        );
        assert!(e.contains("unknown field `flags`"), "{e}");
    }

    #[test]
    fn missing_name_or_game_is_an_error() {
        assert!(err("game = \"geister\"\n").contains("missing field `name`"));
        assert!(err("name = \"g\"\n").contains("missing field `game`"));
    }

    #[test]
    fn bad_values_name_their_key() {
        let e = err("name = \"g\"\ngame = \"chess\"\n");
        assert!(e.contains("key `game`") && e.contains("geister"), "{e}");
        let e = err("name = \"g\"\ngame = \"geister\"\nrules = \"x\"\n");
        assert!(e.contains("key `rules`") && e.contains("gpw"), "{e}");
        let e = err("name = \"g\"\ngame = \"geister\"\nbuiltins = [\"sample\"]\n");
        assert!(e.contains("key `builtins`") && e.contains("rush"), "{e}");
        let e = err("name = \"g\"\ngame = \"geister\"\nlanguages = [\"cobol\"]\n");
        assert!(
            e.contains("key `languages`") && e.contains("[recipes.cobol]"),
            "{e}"
        );
        let e = err("name = \"g\"\ngame = \"geister\"\nlanguages = []\n");
        assert!(e.contains("at least one language"), "{e}");
        let e = err("name = \"a b\"\ngame = \"geister\"\n");
        assert!(e.contains("key `name`"), "{e}");
        let e = err("name = \"g\"\ngame = \"geister\"\n[limits]\nbuild_seconds = 0\n");
        assert!(e.contains("key `limits.build_seconds`"), "{e}");
        let e = err("name = \"g\"\ngame = \"geister\"\n[limits]\nuploads_per_hour = 0\n");
        assert!(
            e.contains("key `limits.uploads_per_hour`") && e.contains("from 1 to 1000000"),
            "{e}"
        );
        let e = err("name = \"g\"\ngame = \"geister\"\n[limits]\nupload_bytes = -1\n");
        assert!(e.contains("upload_bytes"), "{e}");
        let e = err(
            "name = \"g\"\ngame = \"geister\"\nlanguages = [\"cpp\"]\n[recipes.python]\nmain = \"a.py\"\nbuild = \"true\"\nrun = \"python3 a.py\"\n",
        );
        assert!(e.contains("key `recipes.python`"), "{e}");
        let e = err(
            "name = \"g\"\ngame = \"geister\"\nlanguages = [\"cpp\"]\n[recipes.cpp]\nmain = \"../a.cpp\"\nbuild = \"true\"\nrun = \"./a\"\n",
        );
        assert!(e.contains("plain file name"), "{e}");
        let e = err(
            "name = \"g\"\ngame = \"geister\"\nlanguages = [\"cpp\"]\n[recipes.cpp]\nmain = \"a.cpp\"\nbuild = \"g++ 'a.cpp\"\nrun = \"./a\"\n",
        );
        assert!(e.contains("cannot be split"), "{e}");
        let e = err("name = \"g\"\ngame = \"geister\"\nmatches_per_hour = 0\n");
        assert!(e.contains("key `matches_per_hour`"), "{e}");
    }
}
