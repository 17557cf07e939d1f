//! The contract between the referee and each game's driver.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use kakehiki_agent::SandboxConfig;
use kakehiki_core::replay::{ParsedReplay, ReplayLog};
use kakehiki_core::{GameType, MatchReport, SeatSpec};

/// A boxed future, for the object-safe driver trait.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The environment variable that gives process bots the match seed (decimal), so a bot that
/// seeds its generator from it plays the same match again from the same seed.
pub const SEED_ENV: &str = "KAKEHIKI_SEED";

/// Everything needed to run one match.
#[derive(Debug, Clone)]
pub struct MatchSpec {
    /// Registered game name (`nac`, `religion-war`, `geister`, `werewolf`, `diplomacy`).
    pub game: String,
    /// Rule set; `None` means the game's default.
    pub rules: Option<String>,
    /// The match seed. All chance in the match derives from it.
    pub seed: u64,
    /// One spec per seat, in seat order.
    pub seats: Vec<SeatSpec>,
    /// Game-specific options as text (`max_year=1910`, `turn_ms=1000`, `port0=10000`). Drivers
    /// reject unknown keys and bad values with [`RefereeError::BadOption`].
    pub options: BTreeMap<String, String>,
    /// How process bots are sandboxed (rlimits, caps, environment).
    pub sandbox: SandboxConfig,
    /// Told the address each `tcp` seat waits on, once its listener is bound (the CLI prints
    /// it, so a contestant knows where to point a client).
    pub on_listen: ListenNotice,
}

/// A callback told `(seat, address)` when a `tcp` seat's listener is bound; does nothing by
/// default.
#[derive(Clone, Default)]
pub struct ListenNotice(Option<std::sync::Arc<dyn Fn(usize, std::net::SocketAddr) + Send + Sync>>);

impl ListenNotice {
    /// A notice that calls `f`.
    pub fn new(f: impl Fn(usize, std::net::SocketAddr) + Send + Sync + 'static) -> Self {
        ListenNotice(Some(std::sync::Arc::new(f)))
    }

    /// Tell the callback, if any, that `seat` waits on `addr`.
    pub fn notify(&self, seat: usize, addr: std::net::SocketAddr) {
        if let Some(f) = &self.0 {
            f(seat, addr);
        }
    }
}

impl std::fmt::Debug for ListenNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ListenNotice(set)"
        } else {
            "ListenNotice(none)"
        })
    }
}

impl MatchSpec {
    /// A spec with default rules, no options and the default sandbox, which passes the match
    /// seed to process bots as the environment variable [`SEED_ENV`].
    pub fn new(game: &str, seed: u64, seats: Vec<SeatSpec>) -> Self {
        let mut sandbox = SandboxConfig::default();
        sandbox.env.push((SEED_ENV.to_string(), seed.to_string()));
        MatchSpec {
            game: game.to_string(),
            rules: None,
            seed,
            seats,
            options: BTreeMap::new(),
            sandbox,
            on_listen: ListenNotice::default(),
        }
    }

    /// Read an option, parsed, with a default. Errors name the key and the expected form.
    pub fn option<T: std::str::FromStr>(
        &self,
        key: &str,
        default: T,
        expected: &str,
    ) -> Result<T, RefereeError> {
        match self.options.get(key) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| RefereeError::BadOption {
                key: key.to_string(),
                value: text.clone(),
                expected: expected.to_string(),
            }),
        }
    }

    /// Fail on option keys the driver does not know.
    pub fn check_option_keys(&self, known: &[&str]) -> Result<(), RefereeError> {
        for key in self.options.keys() {
            if !known.contains(&key.as_str()) {
                return Err(RefereeError::UnknownOption {
                    game: self.game.clone(),
                    key: key.clone(),
                    known: known.join(", "),
                });
            }
        }
        Ok(())
    }
}

/// A finished match: its report and its replay.
#[derive(Debug, Clone)]
pub struct MatchRecord {
    pub report: MatchReport,
    pub replay: ReplayLog,
}

/// The key under which the sandbox a match's bots ran in is recorded (report and replay header).
pub const SANDBOX_KEY: &str = "sandbox";

impl MatchRecord {
    /// Record the sandbox layers in force for the spec's process bots in the report (`sandbox`
    /// in `--json`) and in the replay header.
    pub fn stamp_sandbox(&mut self, spec: &MatchSpec) {
        let has_process = spec.seats.iter().any(|s| {
            matches!(
                s,
                kakehiki_core::SeatSpec::Cmd(_) | kakehiki_core::SeatSpec::TcpCmd(_)
            )
        });
        if !has_process {
            return;
        }
        let report = kakehiki_agent::SandboxReport::for_jail(&spec.sandbox.jail);
        if let Ok(v) = serde_json::to_value(&report) {
            self.report.extra.insert(SANDBOX_KEY.to_string(), v);
        }
        self.replay.append_header_field(SANDBOX_KEY, &report);
    }
}

/// Why a match could not be run or a replay not verified. Bot misbehaviour is never an error
/// here: it is recorded in the report and the match completes.
#[derive(Debug, thiserror::Error)]
pub enum RefereeError {
    #[error("unknown game {0:?}: expected one of {1}")]
    UnknownGame(String, String),
    #[error("unknown rule set {rules:?} for {game}: expected one of {expected}")]
    UnknownRules {
        game: String,
        rules: String,
        expected: String,
    },
    #[error("{game} needs {expected} seats, got {got}")]
    SeatCount {
        game: String,
        expected: String,
        got: usize,
    },
    #[error("seat {seat}: unknown built-in bot {name:?} for {game}: expected one of {expected}")]
    UnknownBot {
        game: String,
        seat: usize,
        name: String,
        expected: String,
    },
    #[error("seat {seat}: {game} does not support seat form {form:?}: {reason}")]
    UnsupportedSeat {
        game: String,
        seat: usize,
        form: String,
        reason: String,
    },
    #[error("unknown option {key:?} for {game}: expected one of {known}")]
    UnknownOption {
        game: String,
        key: String,
        known: String,
    },
    #[error("option {key}={value:?}: expected {expected}")]
    BadOption {
        key: String,
        value: String,
        expected: String,
    },
    #[error("seed {seed} is out of range for {game}: {reason}")]
    BadSeed {
        game: String,
        seed: u64,
        reason: String,
    },
    #[error("bad replay: {0}")]
    BadReplay(String),
    #[error("replay differs from its re-run at line {line}:\n  recorded: {recorded}\n  re-run:   {rerun}")]
    ReplayMismatch {
        line: usize,
        recorded: String,
        rerun: String,
    },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// A bot could not be started because of the machine (no room for its working directory,
    /// out of file descriptors, an rlimit the referee cannot set): not the bot's fault, so the
    /// match is not played rather than scored as that seat's loss.
    #[error("host fault: seat {seat} could not be started because of this machine, not the bot: {reason}")]
    HostFault { seat: usize, reason: String },
}

impl RefereeError {
    /// The error for a seat whose bot failed to start with `e`, if that failure is the host's
    /// fault ([`kakehiki_agent::SpawnError::is_host_fault`]); `None` when it is the bot's.
    pub fn host_fault(seat: usize, e: &kakehiki_agent::SpawnError) -> Option<RefereeError> {
        e.is_host_fault().then(|| RefereeError::HostFault {
            seat,
            reason: e.to_string(),
        })
    }

    /// Whether the match failed because of the machine rather than its bots or its spec.
    pub fn is_host_fault(&self) -> bool {
        matches!(self, RefereeError::HostFault { .. })
    }
}

impl From<kakehiki_core::replay::ReplayError> for RefereeError {
    fn from(e: kakehiki_core::replay::ReplayError) -> Self {
        RefereeError::BadReplay(e.to_string())
    }
}

/// One game's driver. Implementations live in `src/games/<game>.rs` and are listed in
/// [`crate::registry::GAMES`].
pub trait GameDriver: Send + Sync {
    /// The game's nature.
    fn game_type(&self) -> &'static GameType;

    /// Run one match to completion. Bot failures are recorded, never returned as errors; an
    /// error means the match could not be set up (bad spec, unknown bot, port in use, ...).
    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>>;

    /// Re-run a match from its replay: same seed, every seat's recorded replies and timings
    /// replayed in place of the bots. Returns the re-run's record; the caller compares bytes.
    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError>;

    /// Convert a replay of an older format of this game into the current one, so it verifies.
    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        Err(RefereeError::BadReplay(format!(
            "{} has no older replay format to upgrade from {:?}",
            self.game_type().name,
            old.header.format
        )))
    }
}

/// Re-run `text` and check the re-run reproduces it byte for byte.
pub fn verify_replay(text: &str) -> Result<MatchRecord, RefereeError> {
    // What the referee recorded about the bots' sandbox is not part of the game.
    let text = &*kakehiki_core::replay::strip_header_field(text, SANDBOX_KEY);
    let parsed = ReplayLog::parse(text)?;
    let driver = crate::registry::find_game(&parsed.header.game)?;
    let record = driver.rerun(&parsed)?;
    let rerun = record.replay.to_text();
    if rerun != text {
        let recorded_lines: Vec<&str> = text.lines().collect();
        let rerun_lines: Vec<&str> = rerun.lines().collect();
        let n = recorded_lines.len().max(rerun_lines.len());
        for i in 0..n {
            let a = recorded_lines.get(i).copied().unwrap_or("<end of replay>");
            let b = rerun_lines.get(i).copied().unwrap_or("<end of re-run>");
            if a != b {
                return Err(RefereeError::ReplayMismatch {
                    line: i + 1,
                    recorded: a.to_string(),
                    rerun: b.to_string(),
                });
            }
        }
        return Err(RefereeError::ReplayMismatch {
            line: n,
            recorded: "(trailing bytes differ)".into(),
            rerun: "(trailing bytes differ)".into(),
        });
    }
    Ok(record)
}

#[cfg(test)]
mod seed_env_tests {
    use super::*;

    #[test]
    fn process_bots_get_the_match_seed() {
        let spec = MatchSpec::new("nac", 2014, Vec::new());
        assert!(spec
            .sandbox
            .env
            .contains(&(SEED_ENV.to_string(), "2014".to_string())));
        assert_eq!(SEED_ENV, "KAKEHIKI_SEED");
    }
}
