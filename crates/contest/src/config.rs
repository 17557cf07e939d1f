//! Contest definitions in TOML.
//!
//! ```toml
//! name = "nac-league"            # the contest's name in the store
//! game = "nac"                   # a registered game
//! rules = "nac"                  # optional; the game's default rule set otherwise
//! format = "round-robin"         # see [`Format`]
//! seed = 2014                    # base seed: the schedule (tables, sets, leagues) derives from it
//! public_seeds = false           # optional: true plays each match from a seed derived from `seed`
//!                                #   (reproducible from the file, guessable by whoever reads it);
//!                                #   by default each match gets a fresh secret seed when played
//! games = 4                      # games per table (round robin), per pairing (geister-gpw), per set (game set)
//! seats = 4                      # optional table size; the game's default otherwise
//! jobs = 2                       # optional default parallelism of `contest run`
//! match_timeout_s = 600          # optional wall-clock limit of one match (a match over it fails)
//! sandbox = "strict"             # optional bot sandbox level: best (default), strict or off
//! cpus_per_bot = 0.5             # optional CPU quota of each bot, in CPUs (an error where it cannot apply)
//!
//! [options]                      # optional game options, passed to the game's driver (time limits ...)
//! turn_ms = 1000
//!
//! [[entrants]]
//! name = "random"
//! seat = "builtin:random"
//!
//! [[entrants]]
//! name = "sample-java"
//! seat = "cmd:java SampleAI"
//! dir = "bots/sample-java"       # optional: the seat's own folder, its read-only working directory
//! env = ["CLASSPATH"]            # optional: environment variables passed through to the bot
//!
//! [[entrants]]                   # geister only: a client that connects on its own
//! name = "remote"
//! seat = "tcp"
//! port = 12000                   # its own port, whichever seat it plays; one match at a time
//! ```
//!
//! Malformed files are rejected with the line and the key.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use kakehiki_core::{GameType, SeatSpec};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use toml::Spanned;

/// Why a contest definition was rejected.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read contest file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{source_name}: {message}")]
    Toml {
        source_name: String,
        message: String,
    },
    #[error("{source_name}: line {line}: key `{key}`: {message}")]
    Invalid {
        source_name: String,
        line: usize,
        key: String,
        message: String,
    },
}

/// A contest format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Every table of `seats` entrants (every pairing for two seats) plays `games` games, seats
    /// rotated so that each entrant plays each seat of the table equally often.
    RoundRobin,
    /// Tables of `seats` distinct entrants drawn at random, in random seat order, until every
    /// entrant has played at least `min_games` games (the 4- and 7-player games).
    RandomTables,
    /// The Geister seed contest: preliminary leagues of 3-4 (single round robin), the top of
    /// each to a final league; ranked by wins with the seed's tie-breaks.
    GeisterSeed,
    /// GPW / GAT leagues: every pairing plays `games` (default 2) games with the first player
    /// swapped; win 3, draw 1, loss 0.
    GeisterGpw,
    /// The AIWolf game set: a fixed roster of `seats` entrants, agent numbers drawn once per
    /// set, `games` games per set, `sets` sets.
    AiwolfGameSet,
    /// The AIWolf (seed 2015) qualifier: tables of `seats` drawn at random until every entrant
    /// has played at least `min_games`; every member of the winning team scores 1; ranked by
    /// mean points.
    AiwolfQualifier,
}

impl Format {
    pub const ALL: &'static [(&'static str, Format)] = &[
        ("round-robin", Format::RoundRobin),
        ("random-tables", Format::RandomTables),
        ("geister-seed", Format::GeisterSeed),
        ("geister-gpw", Format::GeisterGpw),
        ("aiwolf-game-set", Format::AiwolfGameSet),
        ("aiwolf-qualifier", Format::AiwolfQualifier),
    ];

    pub fn name(self) -> &'static str {
        Format::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    /// How points are counted by default.
    pub fn default_scoring(self) -> Scoring {
        match self {
            Format::RoundRobin | Format::RandomTables => Scoring::Score,
            Format::GeisterGpw => Scoring::ThreeOneZero,
            Format::GeisterSeed | Format::AiwolfGameSet | Format::AiwolfQualifier => Scoring::Wins,
        }
    }

    /// Whether entrants are ranked by mean points per game (formats where entrants play
    /// different numbers of games) rather than by total points.
    pub fn ranks_by_mean(self) -> bool {
        matches!(self, Format::RandomTables | Format::AiwolfQualifier)
    }
}

/// How a game's result turns into points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scoring {
    /// The game's own scores, summed.
    Score,
    /// Win 3, draw 1, loss 0.
    ThreeOneZero,
    /// 1 per win (every member of a winning team wins).
    Wins,
}

impl Scoring {
    pub const ALL: &'static [(&'static str, Scoring)] = &[
        ("score", Scoring::Score),
        ("3-1-0", Scoring::ThreeOneZero),
        ("wins", Scoring::Wins),
    ];
}

/// One entrant: a name and who plays its seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entrant {
    pub name: String,
    pub seat: SeatSpec,
    /// The seat's own folder (relative to the directory the contest runs in): its working
    /// directory, mounted read-only in the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// Environment variables passed through to the bot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// A `tcp` entrant's own port (Geister): it connects there on its own for each of its
    /// games, whichever seat it plays (spec §3.1, a remote entrant's own table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

/// A validated contest definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContestDef {
    pub name: String,
    pub game: String,
    pub rules: Option<String>,
    pub format: Format,
    pub scoring: Scoring,
    pub seed: u64,
    /// Table size.
    pub seats: usize,
    /// Games per table / pairing / set (formats that use it).
    pub games: u64,
    /// Minimum games per entrant (random tables, qualifier).
    pub min_games: u64,
    /// Sets (AIWolf game set).
    pub sets: u64,
    /// Geister seed: number of preliminary leagues (0 = the seed's default for the entrant count).
    pub leagues: usize,
    /// Geister seed: qualifiers per league (0 = the seed's default).
    pub qualifiers_per_league: usize,
    /// Wall-clock limit of one match, seconds (0 = none).
    pub match_timeout_s: u64,
    /// Play each match from its schedule's seed (derived from `seed`, reproducible from the
    /// file and guessable by whoever knows it) instead of a fresh secret one. For demos and
    /// trusted bots.
    pub public_seeds: bool,
    /// Bootstrap resamples of the rating fit.
    pub bootstrap: u32,
    pub options: BTreeMap<String, String>,
    pub entrants: Vec<Entrant>,
    /// The bot sandbox level (`best` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Each bot's CPU quota in thousandths of a CPU (`cpus_per_bot = 0.5` is 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_millis: Option<u32>,
    /// Default parallelism of `contest run`; not part of the fingerprint.
    #[serde(skip)]
    pub jobs: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContest {
    name: Spanned<String>,
    game: Spanned<String>,
    rules: Option<Spanned<String>>,
    format: Spanned<String>,
    seed: Spanned<i64>,
    scoring: Option<Spanned<String>>,
    seats: Option<Spanned<i64>>,
    games: Option<Spanned<i64>>,
    min_games: Option<Spanned<i64>>,
    sets: Option<Spanned<i64>>,
    leagues: Option<Spanned<i64>>,
    qualifiers_per_league: Option<Spanned<i64>>,
    jobs: Option<Spanned<i64>>,
    match_timeout_s: Option<Spanned<i64>>,
    public_seeds: Option<Spanned<bool>>,
    bootstrap: Option<Spanned<i64>>,
    options: Option<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    sandbox: Option<Spanned<String>>,
    cpus_per_bot: Option<Spanned<toml::Value>>,
    entrants: Spanned<Vec<RawEntrant>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntrant {
    name: Spanned<String>,
    seat: Spanned<String>,
    dir: Option<Spanned<String>>,
    env: Option<Spanned<Vec<String>>>,
    port: Option<Spanned<u16>>,
}

/// The top-level keys a contest file may have, as the parser knows them (serde's own field list
/// of the file's shape, so a key added to the parser appears here at once).
pub fn contest_keys() -> &'static [&'static str] {
    serde_aux::serde_introspection::serde_introspect::<RawContest>()
}

/// The keys an `[[entrants]]` table may have, as the parser knows them.
pub fn entrant_keys() -> &'static [&'static str] {
    serde_aux::serde_introspection::serde_introspect::<RawEntrant>()
}

/// Looks up a game's declaration (the referee's registry in the binary, a fake in tests).
pub type GameLookup<'a> = dyn Fn(&str) -> Result<&'static GameType, String> + 'a;

struct Ctx<'a> {
    text: &'a str,
    source_name: &'a str,
}

impl Ctx<'_> {
    fn line(&self, span: Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn invalid(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            source_name: self.source_name.to_string(),
            line: self.line(span),
            key: key.to_string(),
            message: message.into(),
        }
    }

    fn count(
        &self,
        v: &Option<Spanned<i64>>,
        key: &str,
        default: u64,
        min: u64,
        max: u64,
    ) -> Result<u64, ConfigError> {
        match v {
            None => Ok(default),
            Some(s) => {
                let n = *s.get_ref();
                if n < min as i64 || n as u64 > max {
                    Err(self.invalid(
                        s.span(),
                        key,
                        format!("expected an integer from {min} to {max}, found {n}"),
                    ))
                } else {
                    Ok(n as u64)
                }
            }
        }
    }
}

/// The largest number of matches one contest may schedule.
pub const MAX_MATCHES: u64 = 10_000_000;

impl ContestDef {
    /// Read and validate a contest file.
    pub fn load(path: &Path, lookup: &GameLookup<'_>) -> Result<(ContestDef, String), ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let def = ContestDef::parse(&text, &path.display().to_string(), lookup)?;
        Ok((def, text))
    }

    /// Parse and validate contest TOML. `source_name` names the text in errors.
    pub fn parse(
        text: &str,
        source_name: &str,
        lookup: &GameLookup<'_>,
    ) -> Result<ContestDef, ConfigError> {
        let ctx = Ctx { text, source_name };
        let raw: RawContest = toml::from_str(text).map_err(|e| ConfigError::Toml {
            source_name: source_name.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;

        let name = raw.name.get_ref().trim().to_string();
        if name.is_empty() || name.len() > 200 || name.chars().any(|c| c.is_control()) {
            return Err(ctx.invalid(
                raw.name.span(),
                "name",
                "expected a non-empty name of at most 200 characters",
            ));
        }
        let game_type =
            lookup(raw.game.get_ref()).map_err(|m| ctx.invalid(raw.game.span(), "game", m))?;
        let rules = match &raw.rules {
            None => None,
            Some(r) => {
                if !game_type.rule_sets.contains(&r.get_ref().as_str()) {
                    return Err(ctx.invalid(
                        r.span(),
                        "rules",
                        format!(
                            "unknown rule set {:?} for {}: expected one of {}",
                            r.get_ref(),
                            game_type.name,
                            game_type.rule_sets.join(", ")
                        ),
                    ));
                }
                Some(r.get_ref().clone())
            }
        };
        let format = Format::ALL
            .iter()
            .find(|(n, _)| *n == raw.format.get_ref())
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                ctx.invalid(
                    raw.format.span(),
                    "format",
                    format!(
                        "unknown format {:?}: expected one of {}",
                        raw.format.get_ref(),
                        Format::ALL
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
        let scoring = match &raw.scoring {
            None => format.default_scoring(),
            Some(s) => Scoring::ALL
                .iter()
                .find(|(n, _)| *n == s.get_ref())
                .map(|(_, f)| *f)
                .ok_or_else(|| {
                    ctx.invalid(
                        s.span(),
                        "scoring",
                        format!(
                            "unknown scoring {:?}: expected score, 3-1-0 or wins",
                            s.get_ref()
                        ),
                    )
                })?,
        };
        if *raw.seed.get_ref() < 0 {
            return Err(ctx.invalid(raw.seed.span(), "seed", "expected a non-negative integer"));
        }
        let seed = *raw.seed.get_ref() as u64;

        let default_seats = match format {
            Format::GeisterSeed | Format::GeisterGpw => 2,
            _ => game_type.default_seats,
        };
        let seats = ctx.count(&raw.seats, "seats", default_seats as u64, 1, 64)? as usize;
        let seats_span = raw
            .seats
            .as_ref()
            .map(|s| s.span())
            .unwrap_or(raw.format.span());
        if !game_type.accepts_seats(seats) {
            return Err(ctx.invalid(
                seats_span,
                "seats",
                format!(
                    "{} is played by {} to {} seats, not {seats}",
                    game_type.name, game_type.min_seats, game_type.max_seats
                ),
            ));
        }
        if matches!(format, Format::GeisterSeed | Format::GeisterGpw) && seats != 2 {
            return Err(ctx.invalid(
                seats_span,
                "seats",
                format!("format {} is for two-seat games", format.name()),
            ));
        }
        let default_games = match format {
            Format::GeisterGpw => 2,
            Format::AiwolfGameSet => 100,
            _ => seats as u64,
        };
        let games = ctx.count(&raw.games, "games", default_games, 1, MAX_MATCHES)?;
        let games_span = raw
            .games
            .as_ref()
            .map(|s| s.span())
            .unwrap_or(raw.format.span());
        match format {
            Format::RoundRobin if games % seats as u64 != 0 => {
                return Err(ctx.invalid(
                    games_span,
                    "games",
                    format!(
                        "round robin plays each table {games} times, which does not rotate {seats} seats evenly: \
                         expected a multiple of {seats}"
                    ),
                ))
            }
            Format::GeisterGpw if games % 2 != 0 => {
                return Err(ctx.invalid(
                    games_span,
                    "games",
                    format!("geister-gpw swaps the first player: expected an even number of games, found {games}"),
                ))
            }
            _ => {}
        }
        let min_games = ctx.count(&raw.min_games, "min_games", 10, 1, 1_000_000)?;
        let sets = ctx.count(&raw.sets, "sets", 1, 1, 1_000_000)?;
        let leagues = ctx.count(&raw.leagues, "leagues", 0, 0, 1000)? as usize;
        let qualifiers_per_league = ctx.count(
            &raw.qualifiers_per_league,
            "qualifiers_per_league",
            0,
            0,
            1000,
        )? as usize;
        let jobs = match &raw.jobs {
            None => None,
            Some(_) => Some(ctx.count(&raw.jobs, "jobs", 1, 1, 1024)? as usize),
        };
        let match_timeout_s =
            ctx.count(&raw.match_timeout_s, "match_timeout_s", 0, 0, 7 * 24 * 3600)?;
        let bootstrap = ctx.count(&raw.bootstrap, "bootstrap", 200, 0, 100_000)? as u32;

        let mut options = BTreeMap::new();
        if let Some(opts) = &raw.options {
            for (k, v) in opts.get_ref() {
                let Some(text) = option_text(v.get_ref()) else {
                    return Err(ctx.invalid(v.span(), &format!("options.{k}"), OPTION_EXPECTED));
                };
                options.insert(k.clone(), text);
            }
        }

        let sandbox = match &raw.sandbox {
            None => None,
            Some(l) => match l.get_ref().as_str() {
                "best" | "strict" | "off" => Some(l.get_ref().clone()),
                other => {
                    return Err(ctx.invalid(
                        l.span(),
                        "sandbox",
                        format!("unknown sandbox level {other:?}: expected best, strict or off"),
                    ))
                }
            },
        };
        let cpu_millis = match &raw.cpus_per_bot {
            None => None,
            Some(v) => match cpu_millis(v.get_ref()) {
                Some(m) => Some(m),
                None => {
                    return Err(ctx.invalid(v.span(), "cpus_per_bot", CPUS_EXPECTED.to_string()))
                }
            },
        };
        let mut entrants = Vec::new();
        let mut names = BTreeSet::new();
        for (i, e) in raw.entrants.get_ref().iter().enumerate() {
            let ename = e.name.get_ref().trim().to_string();
            let key = format!("entrants[{i}].name");
            if ename.is_empty()
                || ename.len() > 100
                || ename.chars().any(|c| c.is_control() || c == ',')
            {
                return Err(ctx.invalid(
                    e.name.span(),
                    &key,
                    "expected a non-empty name of at most 100 characters without commas or control characters",
                ));
            }
            if !names.insert(ename.clone()) {
                return Err(ctx.invalid(
                    e.name.span(),
                    &key,
                    format!("duplicate entrant name {ename:?}"),
                ));
            }
            let key = format!("entrants[{i}].seat");
            let seat: SeatSpec =
                e.seat
                    .get_ref()
                    .parse()
                    .map_err(|err: kakehiki_core::SeatSpecError| {
                        ctx.invalid(e.seat.span(), &key, err.to_string())
                    })?;
            match &seat {
                SeatSpec::Builtin(bot) if !game_type.builtin_bots.contains(&bot.as_str()) => {
                    return Err(ctx.invalid(
                        e.seat.span(),
                        &key,
                        format!(
                            "unknown built-in bot {bot:?} for {}: expected one of {}",
                            game_type.name,
                            game_type.builtin_bots.join(", ")
                        ),
                    ))
                }
                SeatSpec::Tcp if game_type.name != "geister" => {
                    return Err(ctx.invalid(
                        e.seat.span(),
                        &key,
                        format!("{} has no tcp entrants (a client that connects on its own): use builtin:, cmd: or tcp-cmd:", game_type.name),
                    ))
                }
                SeatSpec::Daide(None) => {
                    return Err(ctx.invalid(
                        e.seat.span(),
                        &key,
                        "a daide entrant that connects on its own has no place in a contest: use daide-cmd:",
                    ))
                }
                SeatSpec::Tcp if e.port.is_none() => {
                    return Err(ctx.invalid(
                        e.seat.span(),
                        &key,
                        "a tcp entrant connects on its own to its own port: give it one with `port = N`",
                    ))
                }
                _ => {}
            }
            let port = match &e.port {
                None => None,
                Some(p) => {
                    let key = format!("entrants[{i}].port");
                    if !matches!(seat, SeatSpec::Tcp) {
                        return Err(ctx.invalid(
                            p.span(),
                            &key,
                            "only a tcp seat has a port (a tcp-cmd: client is given its port)",
                        ));
                    }
                    let port = *p.get_ref();
                    if port == 0 {
                        return Err(ctx.invalid(p.span(), &key, "expected a port from 1 to 65535"));
                    }
                    if let Some(other) = entrants.iter().find(|o: &&Entrant| o.port == Some(port)) {
                        return Err(ctx.invalid(
                            p.span(),
                            &key,
                            format!(
                                "port {port} is already {:?}'s: every tcp entrant has its own",
                                other.name
                            ),
                        ));
                    }
                    Some(port)
                }
            };
            let dir = match &e.dir {
                None => None,
                Some(d) => {
                    let key = format!("entrants[{i}].dir");
                    if !matches!(
                        seat,
                        SeatSpec::Cmd(_) | SeatSpec::TcpCmd(_) | SeatSpec::Daide(Some(_))
                    ) {
                        return Err(ctx.invalid(
                            d.span(),
                            &key,
                            "only a cmd: or tcp-cmd: seat has a directory",
                        ));
                    }
                    let text = d.get_ref().trim();
                    if text.is_empty() || text.contains('\0') {
                        return Err(ctx.invalid(d.span(), &key, "expected a directory path"));
                    }
                    Some(text.to_string())
                }
            };
            let mut env = Vec::new();
            if let Some(vars) = &e.env {
                let key = format!("entrants[{i}].env");
                for v in vars.get_ref() {
                    let ok = !v.is_empty()
                        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                        && !v.as_bytes()[0].is_ascii_digit();
                    if !ok {
                        return Err(ctx.invalid(
                            vars.span(),
                            &key,
                            format!(
                                "{v:?} is not an environment variable name (letters, digits, _)"
                            ),
                        ));
                    }
                    env.push(v.clone());
                }
            }
            entrants.push(Entrant {
                name: ename,
                seat,
                dir,
                env,
                port,
            });
        }
        let n = entrants.len();
        let need = match format {
            Format::AiwolfQualifier | Format::RandomTables | Format::RoundRobin => seats,
            Format::GeisterSeed | Format::GeisterGpw => 2,
            Format::AiwolfGameSet => seats,
        };
        if n < need {
            return Err(ctx.invalid(
                raw.entrants.span(),
                "entrants",
                format!(
                    "format {} with {seats} seats needs at least {need} entrants, found {n}",
                    format.name()
                ),
            ));
        }
        if format == Format::AiwolfGameSet && n != seats {
            return Err(ctx.invalid(
                raw.entrants.span(),
                "entrants",
                format!("an aiwolf game set has a fixed roster of exactly {seats} entrants (one per seat), found {n}"),
            ));
        }
        if format == Format::GeisterSeed && leagues > 0 && leagues * 2 > n {
            let span = raw
                .leagues
                .as_ref()
                .map(|s| s.span())
                .unwrap_or(raw.format.span());
            return Err(ctx.invalid(
                span,
                "leagues",
                format!("{leagues} leagues need at least {} entrants", leagues * 2),
            ));
        }

        let def = ContestDef {
            name,
            game: game_type.name.to_string(),
            rules,
            format,
            scoring,
            seed,
            seats,
            games,
            min_games,
            sets,
            leagues,
            qualifiers_per_league,
            match_timeout_s,
            public_seeds: raw.public_seeds.as_ref().is_some_and(|b| *b.get_ref()),
            bootstrap,
            options,
            entrants,
            sandbox,
            cpu_millis,
            jobs,
        };
        let planned = def.planned_size();
        if planned > MAX_MATCHES {
            return Err(ctx.invalid(
                raw.format.span(),
                "format",
                format!("this contest would schedule about {planned} matches; the limit is {MAX_MATCHES}"),
            ));
        }
        Ok(def)
    }

    /// The stable fingerprint of everything that decides the schedule and the results (not the
    /// parallelism).
    pub fn fingerprint(&self) -> String {
        let canonical = serde_json::to_string(self).unwrap_or_default();
        let digest = Sha256::digest(canonical.as_bytes());
        digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
    }

    /// The definition as stored (canonical JSON).
    pub fn to_stored(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Read back a stored definition.
    pub fn from_stored(text: &str) -> Result<ContestDef, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The index of an entrant by name.
    pub fn entrant_index(&self, name: &str) -> Option<usize> {
        self.entrants.iter().position(|e| e.name == name)
    }
}

/// A game option's value as the driver gets it: a string, a number or a boolean as text.
pub fn option_text(v: &toml::Value) -> Option<String> {
    Some(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        _ => return None,
    })
}

/// What a game option's value must be.
pub const OPTION_EXPECTED: &str = "expected a string, number or boolean";

/// `cpus_per_bot` in thousandths of a CPU, if it is a number of CPUs from 0.01 to 1024.
pub fn cpu_millis(v: &toml::Value) -> Option<u32> {
    let cpus = match v {
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        _ => return None,
    };
    (cpus.is_finite() && (0.01..=1024.0).contains(&cpus)).then(|| (cpus * 1000.0).round() as u32)
}

/// What `cpus_per_bot` must be.
pub const CPUS_EXPECTED: &str = "expected a number of CPUs per bot from 0.01 to 1024 (e.g. 1, 0.5)";

/// Number of ways to choose `k` of `n` (saturating).
pub fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut r: u128 = 1;
    for i in 0..k {
        r = r * u128::from(n - i) / u128::from(i + 1);
        if r > u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    r as u64
}

impl ContestDef {
    /// An upper estimate of the number of matches this definition schedules (to refuse absurd
    /// ones).
    pub fn planned_size(&self) -> u64 {
        let n = self.entrants.len() as u64;
        let k = self.seats as u64;
        match self.format {
            Format::RoundRobin | Format::GeisterGpw => binomial(n, k).saturating_mul(self.games),
            Format::RandomTables | Format::AiwolfQualifier => {
                n.saturating_mul(self.min_games).saturating_mul(3) / k.max(1) + n
            }
            Format::AiwolfGameSet => self.sets.saturating_mul(self.games),
            Format::GeisterSeed => n.saturating_mul(n),
        }
    }
}
