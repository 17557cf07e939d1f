//! The contract between the referee and each game's driver.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use kakehiki_agent::SandboxConfig;
use kakehiki_core::replay::{ParsedReplay, ReplayLog};
use kakehiki_core::{GameType, MatchReport, SeatSpec};

/// A boxed future, for the object-safe driver trait.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The built-in seat every game has: it never answers, so every request to it times out at
/// its limit (at once: nothing waits for it). `check` plays it as the timing-out opponent.
pub const SILENT_BOT: &str = "silent";

/// The environment variable that gives each process bot its own seed (decimal, below 2^63): a
/// keyed hash of the match seed and its seat ([`kakehiki_core::seat_seed`]), so a bot that seeds
/// its generator from it plays the same match again from the same replay, and learns nothing of
/// the match seed, which deals the hidden information, or of another seat's seed.
pub const SEED_ENV: &str = "KAKEHIKI_SEED";

/// Seats whose seed [`MatchSpec::new`] prepares: more than any game seats (the natural-language
/// Werewolf division's 30).
const SEEDED_SEATS: usize = 32;

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
    /// Each seat's thinking time as the match goes (every driver's live table adds to it): a
    /// caller that stops a match at its time limit charges the seats that used the most.
    pub clock: crate::clock::SeatClock,
    /// Where the replay is published as the match is played ([`crate::live`]); `None`: nowhere.
    pub live: Option<std::sync::Arc<crate::live::LiveMatch>>,
    /// The desk of each `human` seat, which the caller serves as the seat's page
    /// ([`crate::seat::human`]); a `human` seat without one cannot be played.
    pub desks: BTreeMap<usize, std::sync::Arc<kakehiki_core::human::Desk>>,
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
    /// A spec with default rules, no options and the default sandbox, which gives each process
    /// bot its own seat seed as the environment variable [`SEED_ENV`] (never the match seed).
    pub fn new(game: &str, seed: u64, seats: Vec<SeatSpec>) -> Self {
        let mut sandbox = SandboxConfig::default();
        for seat in 0..seats.len().max(SEEDED_SEATS) {
            let own = kakehiki_core::seat_seed(seed, seat).to_string();
            sandbox
                .seat_vars
                .insert(seat, vec![(SEED_ENV.to_string(), own)]);
        }
        MatchSpec {
            game: game.to_string(),
            rules: None,
            seed,
            seats,
            options: BTreeMap::new(),
            sandbox,
            on_listen: ListenNotice::default(),
            clock: crate::clock::SeatClock::default(),
            live: None,
            desks: BTreeMap::new(),
        }
    }

    /// Replace the sandbox settings (the flags' or a contest's), keeping what the spec gives
    /// bots itself: the variables of every bot and each seat's own seed ([`SEED_ENV`]).
    pub fn set_sandbox(&mut self, mut sandbox: SandboxConfig) {
        let env = std::mem::take(&mut self.sandbox.env);
        let seat_vars = std::mem::take(&mut self.sandbox.seat_vars);
        sandbox.env.extend(env);
        for (seat, vars) in seat_vars {
            sandbox.seat_vars.entry(seat).or_default().extend(vars);
        }
        self.sandbox = sandbox;
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

    /// Fail on a rule set `game` does not have.
    pub fn check_rules(&self, game: &GameType) -> Result<(), RefereeError> {
        match &self.rules {
            Some(r) if !game.rule_sets.contains(&r.as_str()) => Err(RefereeError::UnknownRules {
                game: game.name.into(),
                rules: r.clone(),
                expected: game.rule_sets.join(", "),
            }),
            _ => Ok(()),
        }
    }

    /// Fail on a table of a size `game` does not accept.
    pub fn check_seats(&self, game: &GameType) -> Result<(), RefereeError> {
        if game.accepts_seats(self.seats.len()) {
            return Ok(());
        }
        Err(RefereeError::SeatCount {
            game: game.name.into(),
            expected: match (game.min_seats, game.max_seats) {
                (a, b) if a == b => a.to_string(),
                (a, b) => format!("{a} to {b}"),
            },
            got: self.seats.len(),
        })
    }

    /// Fail on a `builtin:NAME` seat `game` has no bot for (every game has `builtin:silent`).
    pub fn check_builtins(&self, game: &GameType) -> Result<(), RefereeError> {
        let silent = SILENT_BOT;
        for (seat, s) in self.seats.iter().enumerate() {
            match s {
                SeatSpec::Builtin(b) if !game.builtin_bots.contains(&b.as_str()) && b != silent => {
                    return Err(RefereeError::UnknownBot {
                        game: game.name.into(),
                        seat,
                        name: b.clone(),
                        expected: format!("{}, {silent}", game.builtin_bots.join(", ")),
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The checks every game's spec goes through, in one order: its rule set, its number of
    /// seats, its built-in bots, its option keys (`known`). A driver adds its own checks of the
    /// options' values ([`crate::lifecycle::Lifecycle::params`]).
    pub fn check_common(&self, game: &GameType, known: &[&str]) -> Result<(), RefereeError> {
        self.check_rules(game)?;
        self.check_seats(game)?;
        self.check_builtins(game)?;
        self.check_option_keys(known)
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

/// The error for a `daide`/`daide-cmd:` seat in a game other than Diplomacy.
pub fn daide_unsupported(game: &str, seat: usize) -> RefereeError {
    RefereeError::UnsupportedSeat {
        game: game.into(),
        seat,
        form: "daide".into(),
        reason: "DAIDE seats exist for diplomacy only".into(),
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
                kakehiki_core::SeatSpec::Cmd(_)
                    | kakehiki_core::SeatSpec::TcpCmd(_)
                    | kakehiki_core::SeatSpec::Daide(Some(_))
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

/// The fields of a replay line that say what it is: its `event`, a seat line's request `kind`,
/// and an AIWolf log line's type (the second field of its `line`), for the games' rules of what
/// is public during a match ([`GameDriver::public_live`]). `None` for a line that is not an
/// object with an `event`.
pub fn line_kind(line: &str) -> Option<(String, Option<String>)> {
    #[derive(serde::Deserialize)]
    struct Probe {
        event: String,
        kind: Option<String>,
        line: Option<String>,
    }
    let p: Probe = serde_json::from_str(line).ok()?;
    let kind = p
        .kind
        .or_else(|| Some(p.line?.split(',').nth(1)?.to_string()));
    Some((p.event, kind))
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
    /// The replay is in an older format of its game than this build writes: `kakehiki replay
    /// --upgrade` converts it.
    #[error("replay format {found} is older than this kakehiki's {current}: convert it with `kakehiki replay --upgrade FILE -o NEW`, then verify NEW")]
    OldReplayFormat { found: String, current: String },
    /// `kakehiki replay --upgrade` of a replay that needs none.
    #[error("the replay is already in the current format ({0}): nothing to upgrade")]
    AlreadyCurrent(String),
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// A process seat whose sandbox would show it what it may not see (a match's output,
    /// another seat's program or folder), or whose launch line cannot work in it
    /// ([`MatchSpec::deny_outputs_and_other_seats`]).
    #[error("seat {seat} is refused")]
    SeatRefused {
        seat: usize,
        #[source]
        source: kakehiki_agent::SpawnError,
    },
    /// A bot could not be started because of the machine (no room for its working directory,
    /// out of file descriptors, an rlimit the referee cannot set): not the bot's fault, so the
    /// match is not played rather than scored as that seat's loss.
    #[error("host fault: seat {seat} could not be started because of this machine, not the bot: {reason}")]
    HostFault { seat: usize, reason: String },
    /// A match went past its time limit (`match_timeout_s`) with no seat having used any
    /// thinking time (built-in seats only): nobody can be charged, so the machine was too slow.
    #[error("host fault: the match exceeded match_timeout_s = {limit_s} s but no seat used any thinking time (built-in seats only): this machine is too slow for the limit, no bot is charged")]
    OverTimeUnattributed { limit_s: u64 },
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
        matches!(
            self,
            RefereeError::HostFault { .. } | RefereeError::OverTimeUnattributed { .. }
        )
    }
}

impl From<kakehiki_core::BadOption> for RefereeError {
    fn from(e: kakehiki_core::BadOption) -> Self {
        RefereeError::BadOption {
            key: e.key,
            value: e.value,
            expected: e.expected,
        }
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

    /// Check a match's rule set, seats and options as [`GameDriver::play`] does first, without
    /// starting anything: a ladder or a contest refuses bad options before its first match.
    fn check_spec(&self, spec: &MatchSpec) -> Result<(), RefereeError>;

    /// The longest a match of `spec` can last while every seat answers within its limits: the
    /// sum of every limit the driver enforces one after another (start-up, each turn, ply, day
    /// or phase, the grace given at the end), from the same constants and options the driver
    /// plays with. A contest or ladder refuses a `match_timeout_s` below it. Writes to a seat are
    /// counted as prompt (a bot that does not read its input is not answering legally). `None`:
    /// this driver computes no bound (the match time limit is then not checked against one).
    fn longest_legal_match(
        &self,
        spec: &MatchSpec,
    ) -> Result<Option<std::time::Duration>, RefereeError> {
        self.check_spec(spec)?;
        Ok(None)
    }

    /// What the public may read of a match while it is played ([`crate::live`]): the rule, given
    /// a replay line, says whether it may be sent at once; the others are held until the match
    /// is over. None by default; each game names what its players and spectators are told as
    /// the match goes (never a role, a colour, a night pick or an order before it is
    /// adjudicated).
    fn public_live(&self) -> fn(&str) -> bool {
        |_| false
    }

    /// What each seat not charged scores when a match is stopped at its time limit and the
    /// seats that used the most time are charged a loss ([`crate::overtime::overtime_record`]):
    /// 1 unless the game says otherwise.
    fn forfeit_win_score(&self) -> kakehiki_core::Score {
        kakehiki_core::Score::from_integer(1)
    }

    /// Re-run a match from its replay: same seed, every seat's recorded replies and timings
    /// replayed in place of the bots. Returns the re-run's record; the caller compares bytes.
    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError>;

    /// Convert a replay of an older format of this game into the current one, so that it
    /// verifies (`kakehiki replay --upgrade`). A game that never changed its format has nothing
    /// to upgrade from.
    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        Err(RefereeError::BadReplay(format!(
            "{} has no older replay format to upgrade from {:?}",
            self.game_type().name,
            old.header.format
        )))
    }

    /// The replay format this driver writes (`kakehiki/<game>-replay@N`). When given,
    /// [`verify_replay`](crate::verify::verify_replay) refuses a replay of an older `@N` before re-running it, pointing to
    /// `kakehiki replay --upgrade`; without it only a re-run that gets as far as writing its
    /// header finds the same (a re-run that refuses the old header first says only that).
    fn replay_format(&self) -> Option<&'static str> {
        None
    }
}

/// Run `fut` (a match) as a task of its own on the current runtime and await it. Dropping the
/// returned future aborts the task (a match cancelled from outside stops its bots as before); a
/// panic in the task is resumed here. The task is cancelled only when the runtime shuts down,
/// which is the host's doing.
pub async fn as_task<T: Send + 'static>(
    fut: impl Future<Output = T> + Send + 'static,
) -> Result<T, RefereeError> {
    struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);
    impl<T> Drop for AbortOnDrop<T> {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let mut task = AbortOnDrop(tokio::spawn(fut));
    match (&mut task.0).await {
        Ok(value) => Ok(value),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(RefereeError::Io(std::io::Error::other(format!(
            "the match's task ended without a result ({e}): the runtime is shutting down"
        )))),
    }
}

#[cfg(test)]
mod seed_env_tests {
    use super::*;

    #[test]
    fn each_process_bot_gets_its_own_seat_seed_and_never_the_match_seed() {
        let spec = MatchSpec::new("nac", 2014, Vec::new());
        assert!(!spec.sandbox.env.iter().any(|(k, _)| k == SEED_ENV));
        let seed_of = |seat: usize| {
            let cfg = spec.sandbox.for_seat(seat);
            let vars: Vec<_> = cfg.env.iter().filter(|(k, _)| k == SEED_ENV).collect();
            assert_eq!(vars.len(), 1, "seat {seat}: {vars:?}");
            assert!(
                cfg.seat_vars.is_empty(),
                "no other seat's variables go along"
            );
            vars[0].1.clone()
        };
        let seeds: Vec<String> = (0..18).map(seed_of).collect();
        assert_eq!(seeds[0], kakehiki_core::seat_seed(2014, 0).to_string());
        assert!(seeds.iter().all(|s| s != "2014"));
        let distinct: std::collections::BTreeSet<_> = seeds.iter().collect();
        assert_eq!(distinct.len(), seeds.len());
        assert_eq!(SEED_ENV, "KAKEHIKI_SEED");
    }
}

#[cfg(test)]
mod task_tests {
    use super::*;
    use futures_util::FutureExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn a_match_task_gives_back_its_result() {
        assert_eq!(as_task(async { 7 }).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn a_panic_in_a_match_task_reaches_its_caller() {
        let caught = std::panic::AssertUnwindSafe(as_task(async { panic!("the driver's bug") }))
            .catch_unwind()
            .await
            .expect_err("the panic is resumed in the caller");
        assert_eq!(caught.downcast_ref::<&str>(), Some(&"the driver's bug"));
    }

    /// A caller that gives up on a match (a match time limit) drops what the match holds: its
    /// seats, and so its bots.
    #[tokio::test]
    async fn dropping_the_caller_drops_the_match() {
        struct Seats(Arc<AtomicBool>);
        impl Drop for Seats {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let seats = Seats(dropped.clone());
        let never = as_task(async move {
            let _seats = seats;
            std::future::pending::<()>().await
        });
        let gave_up = tokio::time::timeout(std::time::Duration::from_millis(20), never).await;
        assert!(gave_up.is_err());
        for _ in 0..10 {
            if dropped.load(Ordering::SeqCst) {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the match's task still holds its seats after its caller gave up");
    }
}
