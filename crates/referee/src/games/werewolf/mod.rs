//! The Werewolf (AIWolf) driver: the pure engine of `kakehiki-werewolf` joined to its seats —
//! built-in agents in-process, and agents over TCP speaking the AIWolf 0.6.x protocol unmodified
//! (`tcp-cmd:` launches one; `tcp` waits for one to connect on its own).
//!
//! Every reply-expecting request is answered by exactly one of: the agent's line, a timeout, a
//! disconnect, or silence (an agent that failed earlier in the game); the engine settles each as
//! §2 and §6 of the spec say, so every game completes. Replays record the seed and every reply;
//! [`GameDriver::rerun`] re-simulates from them byte for byte.

pub mod conn;
pub mod server;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{GameType, MatchReport, Outcome, Score, SeatError, SeatErrorKind, SeatSpec};
use kakehiki_werewolf::bots::{builtin, Agent, BUILTIN_NAMES};
use kakehiki_werewolf::wire::{parse_target, Histories};
use kakehiki_werewolf::{
    GameInfo, Pending, Reply, Request, RuleSet, Settings, Team, Werewolf, WinCount, WEREWOLF_TYPE,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use conn::{Answer, Conn};

/// Replay format name.
pub const FORMAT: &str = "kakehiki/werewolf-replay@1";

/// The driver.
pub struct WerewolfDriver;

/// `werewolf`.
pub static WEREWOLF: WerewolfDriver = WerewolfDriver;

/// Option keys (`--opt key=value`).
pub const OPTION_KEYS: &[&str] = &[
    "time_limit_ms",
    "contest_limit_ms",
    "enforce_contest_limit",
    "role_request",
    "talk_on_first_day",
    "whisper_before_revote",
    "win_count",
    "max_talk",
    "max_talk_turn",
    "max_skip",
    "validate_utterance",
    "log_dir",
    "host",
    "port",
    "connect_timeout_ms",
    "name_timeout_ms",
    "fill_timeout_ms",
];

/// The NAME exchange's own limit, separate from the per-request `time_limit_ms`: upstream
/// 0.6.x applies its 1,000 ms request limit to NAME too, which a JVM started beside a dozen
/// others can miss; Kakehiki allows 5 s (`--opt name_timeout_ms=`).
pub const DEFAULT_NAME_TIMEOUT_MS: u64 = 5_000;

/// How long `serve werewolf` waits for its set to fill before giving up (10 minutes,
/// `--opt fill_timeout_ms=`; 0 waits without end, as upstream does).
pub const DEFAULT_FILL_TIMEOUT_MS: u64 = 600_000;

/// Everything configurable about a game (from rules and options).
#[derive(Debug, Clone)]
pub struct Config {
    pub settings: Settings,
    /// The contest limit: slower replies are recorded as `slow` (§6.2).
    pub contest_limit_ms: u64,
    /// Where game logs, `errors.jsonl` and `timings.jsonl` go (none: not written).
    pub log_dir: Option<PathBuf>,
    pub host: String,
    /// Port to listen on for TCP seats (0: ephemeral if all are `tcp-cmd:`, else 10000).
    pub port: u16,
    pub connect_timeout: Duration,
    /// Limit on the NAME reply of a fresh connection.
    pub name_timeout: Duration,
    /// `serve`: limit on waiting for the set to fill (`None`: no limit).
    pub fill_timeout: Option<Duration>,
}

impl Config {
    /// Build from a rule-set name, a village size and `key=value` options.
    pub fn from_options(
        rules: Option<&str>,
        players: usize,
        options: &BTreeMap<String, String>,
        in_set: bool,
    ) -> Result<Config, RefereeError> {
        let rules = rules.unwrap_or(WEREWOLF_TYPE.default_rules());
        if RuleSet::from_name(rules).is_none() {
            return Err(RefereeError::UnknownRules {
                game: "werewolf".into(),
                rules: rules.into(),
                expected: RuleSet::NAMES.join(", "),
            });
        }
        let mut settings = Settings::for_rules(rules, players).map_err(|e| match e {
            // One sentence: "werewolf (rule set seed-2015) needs exactly 15 seats, got 7".
            kakehiki_werewolf::SettingsError::Seed2015Players(_) => RefereeError::SeatCount {
                game: "werewolf (rule set seed-2015)".into(),
                expected: "exactly 15".into(),
                got: players,
            },
            _ => RefereeError::SeatCount {
                game: format!("werewolf (rule set {rules})"),
                expected: "3 to 18".into(),
                got: players,
            },
        })?;
        let spec = OptionReader(options);
        let aiwolf = settings.rule_set == RuleSet::Aiwolf06;
        settings.time_limit_ms =
            spec.get("time_limit_ms", 1000u64, "milliseconds (1 to 600000)")?;
        let contest_limit_ms = spec.get("contest_limit_ms", 100u64, "milliseconds")?;
        if spec.get("enforce_contest_limit", false, "true or false")? {
            settings.time_limit_ms = contest_limit_ms;
        }
        if !(1..=600_000).contains(&settings.time_limit_ms) {
            return Err(bad(
                "time_limit_ms",
                &settings.time_limit_ms.to_string(),
                "1 to 600000 milliseconds",
            ));
        }
        if aiwolf {
            // Sets deal roles from the seed (§8.1); a single game asks, as the reference does.
            settings.enable_role_request = spec.get("role_request", !in_set, "true or false")?;
            settings.talk_on_first_day = spec.get("talk_on_first_day", false, "true or false")?;
            settings.whisper_before_revote =
                spec.get("whisper_before_revote", false, "true or false")?;
            settings.max_talk = spec.get("max_talk", settings.max_talk, "a count")?;
            settings.max_talk_turn = spec.get(
                "max_talk_turn",
                settings.max_talk_turn,
                "a count (1 to 1000)",
            )?;
            settings.max_skip = spec.get("max_skip", settings.max_skip, "a count")?;
        } else {
            for key in [
                "role_request",
                "talk_on_first_day",
                "whisper_before_revote",
                "max_talk",
                "max_skip",
            ] {
                if options.contains_key(key) {
                    return Err(bad(key, &options[key], "no value: seed-2015 fixes it"));
                }
            }
            settings.max_talk_turn = spec.get(
                "max_talk_turn",
                settings.max_talk_turn,
                "a count (1 to 1000)",
            )?;
        }
        settings.validate_utterance = spec.get("validate_utterance", true, "true or false")?;
        let default_win = if aiwolf { "species" } else { "team" };
        settings.win_count = match options
            .get("win_count")
            .map(String::as_str)
            .unwrap_or(default_win)
        {
            "species" => WinCount::Species,
            "team" => WinCount::Team,
            other => return Err(bad("win_count", other, "team or species")),
        };
        settings
            .validate()
            .map_err(|e| bad("settings", &e.to_string(), "playable settings"))?;
        Ok(Config {
            settings,
            contest_limit_ms,
            log_dir: options.get("log_dir").map(PathBuf::from),
            host: options
                .get("host")
                .cloned()
                .unwrap_or_else(|| "127.0.0.1".into()),
            port: spec.get("port", 0u16, "a TCP port")?,
            connect_timeout: Duration::from_millis(spec.get(
                "connect_timeout_ms",
                10_000u64,
                "milliseconds",
            )?),
            name_timeout: Duration::from_millis(
                match spec.get(
                    "name_timeout_ms",
                    DEFAULT_NAME_TIMEOUT_MS,
                    "milliseconds (1 to 600000)",
                )? {
                    v @ 1..=600_000 => v,
                    v => {
                        return Err(bad(
                            "name_timeout_ms",
                            &v.to_string(),
                            "1 to 600000 milliseconds",
                        ))
                    }
                },
            ),
            fill_timeout: match spec.get(
                "fill_timeout_ms",
                DEFAULT_FILL_TIMEOUT_MS,
                "milliseconds (0: no limit)",
            )? {
                0 => None,
                v => Some(Duration::from_millis(v)),
            },
        })
    }

    pub fn time_limit(&self) -> Duration {
        Duration::from_millis(self.settings.time_limit_ms)
    }
}

fn bad(key: &str, value: &str, expected: &str) -> RefereeError {
    RefereeError::BadOption {
        key: key.into(),
        value: value.into(),
        expected: expected.into(),
    }
}

struct OptionReader<'a>(&'a BTreeMap<String, String>);

impl OptionReader<'_> {
    fn get<T: std::str::FromStr>(
        &self,
        key: &str,
        default: T,
        expected: &str,
    ) -> Result<T, RefereeError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| bad(key, v, expected)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Seats, records
// ---------------------------------------------------------------------------------------------

/// How a seat is played.
#[allow(clippy::large_enum_variant)] // one per seat; the connection is the common case
pub enum SeatKind {
    Builtin(Box<dyn Agent>),
    /// A TCP agent; `None` once disconnected (or never connected).
    Remote(Option<Conn>),
}

/// One seat of a game (agent number = index + 1).
pub struct Seat {
    pub spec: String,
    pub name: String,
    pub kind: SeatKind,
    /// Silenced for the rest of the current game (timeout, disconnect).
    pub silent: bool,
    /// Replies that timed out and have not arrived yet: the next lines are late replies.
    pub late_expected: u32,
    pub errors: Vec<SeatError>,
    pub counts: Counts,
}

/// Failure counters of one seat (§8.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub timeouts: u32,
    pub invalid: u32,
    pub slow: u32,
    pub disconnects: u32,
    /// Games in which the seat was silenced.
    pub silent_games: u32,
}

impl Seat {
    pub fn builtin(name: &str, seed: u64, agent: usize) -> Option<Seat> {
        Some(Seat::new(
            format!("builtin:{name}"),
            name.to_string(),
            SeatKind::Builtin(builtin(name, seed, agent)?),
        ))
    }

    pub fn new(spec: String, name: String, kind: SeatKind) -> Seat {
        Seat {
            spec,
            name,
            kind,
            silent: false,
            late_expected: 0,
            errors: Vec::new(),
            counts: Counts::default(),
        }
    }
}

/// One line of `errors.jsonl` (§6.3).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ErrorRecord {
    pub game: u32,
    pub day: u32,
    pub request: String,
    pub turn: u32,
    pub agent: usize,
    pub name: String,
    pub kind: String,
    #[serde(rename = "elapsedUs")]
    pub elapsed_us: Option<u64>,
    pub reply: Option<String>,
    pub substitute: Option<String>,
}

/// One line of `timings.jsonl` (§6.3).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TimingRecord {
    pub game: u32,
    pub day: u32,
    pub request: String,
    pub turn: u32,
    pub agent: usize,
    pub name: String,
    #[serde(rename = "elapsedUs")]
    pub elapsed_us: Option<u64>,
    pub outcome: String,
}

/// Records of a run, flushed to `errors.jsonl` / `timings.jsonl` at every game end.
#[derive(Debug, Default)]
pub struct Records {
    pub dir: Option<PathBuf>,
    pub errors: Vec<ErrorRecord>,
    pub timings: Vec<TimingRecord>,
    flushed_errors: usize,
    flushed_timings: usize,
}

impl Records {
    pub fn new(dir: Option<PathBuf>) -> Records {
        Records {
            dir,
            ..Records::default()
        }
    }

    /// Append what is new to the files (if a directory is set).
    pub fn flush(&mut self) -> Result<(), RefereeError> {
        let Some(dir) = &self.dir else { return Ok(()) };
        kakehiki_core::private_files::create_dir_all(dir)?;
        append_jsonl(
            &dir.join("errors.jsonl"),
            &self.errors[self.flushed_errors..],
        )?;
        append_jsonl(
            &dir.join("timings.jsonl"),
            &self.timings[self.flushed_timings..],
        )?;
        self.flushed_errors = self.errors.len();
        self.flushed_timings = self.timings.len();
        Ok(())
    }
}

fn append_jsonl<T: Serialize>(path: &std::path::Path, items: &[T]) -> Result<(), RefereeError> {
    use std::io::Write;
    let mut f = kakehiki_core::private_files::open(path, true)?;
    let mut text = String::new();
    for i in items {
        text.push_str(&serde_json::to_string(i).unwrap_or_default());
        text.push('\n');
    }
    f.write_all(text.as_bytes())?;
    f.flush()?;
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn seat_error_kind(kind: &str) -> Option<SeatErrorKind> {
    Some(match kind {
        "timeout" => SeatErrorKind::Timeout,
        "disconnect" => SeatErrorKind::Disconnect,
        "io_error" => SeatErrorKind::Crash,
        "invalid" => SeatErrorKind::InvalidReply,
        "rule_violation" => SeatErrorKind::IllegalAction,
        "late_line" | "unsolicited" => SeatErrorKind::UnsolicitedOutput,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Replay events
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct HeaderParams {
    options: BTreeMap<String, String>,
    names: Vec<String>,
}

/// One settled reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyEvent {
    event: String,
    day: u32,
    turn: u32,
    agent: usize,
    request: String,
    /// `ok`, `invalid`, `timeout`, `disconnect`, `silent`.
    outcome: String,
    /// The line received (none: no answer).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    line: Option<String>,
    /// The line was longer than 64 KiB (and cut).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    overlong: bool,
    /// Response time of a TCP agent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    us: Option<u64>,
    /// The value the engine used.
    value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEvent {
    event: String,
    line: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndEvent {
    event: String,
    winner: String,
    day: u32,
}

/// One replay event of a game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Event {
    Reply(ReplyEvent),
    Log(LogEvent),
    End(EndEvent),
}

/// The text a built-in agent's reply would have on the wire.
fn render_reply(r: &Reply) -> Option<String> {
    match r {
        Reply::Silent => None,
        Reply::Text(t) => Some(t.clone()),
        Reply::Target(Some(n)) => Some(format!("{{\"agentIdx\":{n}}}")),
        Reply::Target(None) => Some(String::new()),
    }
}

/// The engine reply for a received line (§4.8). `None`: no answer.
pub fn reply_from_line(
    request: Request,
    line: Option<&str>,
    overlong: bool,
    players: usize,
) -> Reply {
    match line {
        None => Reply::Silent,
        Some(_) if overlong => Reply::Target(None),
        Some(l) if request.is_target() => Reply::Target(parse_target(l, players)),
        Some(l) => Reply::Text(l.to_string()),
    }
}

// ---------------------------------------------------------------------------------------------
// One game
// ---------------------------------------------------------------------------------------------

/// What one game produced.
pub struct GameOutput {
    pub winner: Team,
    pub day: u32,
    pub roles: Vec<kakehiki_werewolf::Role>,
    pub alive: Vec<bool>,
    /// The AIWolf game log (§7), lines without terminators.
    pub log: Vec<String>,
    /// Replay events of the game.
    pub events: Vec<Event>,
}

impl GameOutput {
    /// What the finished game `g` produced (the village, if the engine names no winner).
    fn of(g: &Werewolf, log: Vec<String>, events: Vec<Event>) -> GameOutput {
        GameOutput {
            winner: g.winner().unwrap_or(Team::Villager),
            day: g.day(),
            roles: g.roles().to_vec(),
            alive: (1..=g.player_num()).map(|a| g.is_alive(a)).collect(),
            log,
            events,
        }
    }

    /// The replay's last event.
    fn end_event(&self) -> EndEvent {
        EndEvent {
            event: "end".into(),
            winner: self.winner.name().into(),
            day: self.day,
        }
    }
}

struct Ctx<'a> {
    game: u32,
    contest_limit_us: u64,
    time_limit: Duration,
    records: &'a mut Records,
    events: Vec<Event>,
    log: Vec<String>,
}

impl Ctx<'_> {
    /// An error at the engine's current day and turn (see [`Ctx::error_at`]).
    #[allow(clippy::too_many_arguments)]
    fn error(
        &mut self,
        g: &Werewolf,
        seat: &mut Seat,
        agent: usize,
        request: Request,
        kind: &str,
        elapsed_us: Option<u64>,
        reply: Option<&str>,
        substitute: Option<&str>,
    ) {
        self.error_at(
            g.day(),
            g.turn(),
            seat,
            agent,
            request,
            kind,
            elapsed_us,
            reply,
            substitute,
        );
    }

    fn drain_log(&mut self, g: &mut Werewolf) {
        for line in g.drain_log() {
            self.events.push(Event::Log(LogEvent {
                event: "log".into(),
                line: line.clone(),
            }));
            self.log.push(line);
        }
    }
}

/// Play one game on `seats` (agent `i + 1` = `seats[i]`). Never fails because of an agent.
pub async fn run_game(
    game: u32,
    seed: u64,
    cfg: &Config,
    seats: &mut [Seat],
    records: &mut Records,
) -> Result<GameOutput, RefereeError> {
    let n = seats.len();
    let names: Vec<String> = seats.iter().map(|s| s.name.clone()).collect();
    let mut g = Werewolf::new(cfg.settings.clone(), seed, names)
        .map_err(|e| bad("settings", &e.to_string(), "playable settings"))?;
    let mut h = Histories::new(n);
    for s in seats.iter_mut() {
        s.silent = matches!(s.kind, SeatKind::Remote(None));
        if s.silent {
            s.counts.silent_games += 1;
        }
    }
    let mut ctx = Ctx {
        game,
        contest_limit_us: cfg.contest_limit_ms * 1000,
        time_limit: cfg.time_limit(),
        records,
        events: Vec::new(),
        log: Vec::new(),
    };
    loop {
        ctx.drain_log(&mut g);
        match g.pending() {
            Pending::Done => break,
            Pending::Notify(req) => {
                let order: Vec<usize> = if req == Request::Initialize {
                    g.deal_order().to_vec()
                } else {
                    (1..=n).collect()
                };
                for a in order {
                    if let SeatKind::Remote(Some(conn)) = &mut seats[a - 1].kind {
                        let packet = h.packet(&g, a, req);
                        if !conn.send(packet) {
                            disconnect(&mut ctx, &g, &mut seats[a - 1], a, req, None, false);
                        }
                    }
                }
                g.ack()
                    .map_err(|e| RefereeError::BadReplay(e.to_string()))?;
            }
            Pending::Ask { agent, request } => {
                let (line, overlong, outcome, us) = ask_seat(
                    &mut ctx,
                    &mut g,
                    &mut h,
                    &mut seats[agent - 1],
                    agent,
                    request,
                )
                .await;
                let reply = reply_from_line(request, line.as_deref(), overlong, n);
                let (day, turn) = (g.day(), g.turn());
                let settled = g
                    .reply(reply)
                    .map_err(|e| RefereeError::BadReplay(e.to_string()))?;
                let seat = &mut seats[agent - 1];
                let mut outcome = outcome;
                if settled.invalid && outcome == "ok" {
                    outcome = "invalid".into();
                    seat.counts.invalid += 1;
                    let kind = if settled.rule_violation {
                        "rule_violation"
                    } else {
                        "invalid"
                    };
                    let rec_line = line.clone();
                    ctx.error_at(
                        day,
                        turn,
                        seat,
                        agent,
                        request,
                        kind,
                        us,
                        rec_line.as_deref(),
                        Some(&settled.value),
                    );
                }
                ctx.records.timings.push(TimingRecord {
                    game,
                    day,
                    request: request.name().into(),
                    turn,
                    agent,
                    name: seat.name.clone(),
                    elapsed_us: us,
                    outcome: outcome.clone(),
                });
                let ev = ReplyEvent {
                    event: "reply".into(),
                    day,
                    turn,
                    agent,
                    request: request.name().into(),
                    outcome,
                    line,
                    overlong,
                    us: if matches!(seat.kind, SeatKind::Remote(_)) {
                        us
                    } else {
                        None
                    },
                    value: settled.value,
                };
                ctx.events.push(Event::Reply(ev));
            }
        }
    }
    let Ctx { events, log, .. } = ctx;
    let mut out = GameOutput::of(&g, log, events);
    let end = out.end_event();
    out.events.push(Event::End(end));
    Ok(out)
}

impl Ctx<'_> {
    #[allow(clippy::too_many_arguments)]
    fn error_at(
        &mut self,
        day: u32,
        turn: u32,
        seat: &mut Seat,
        agent: usize,
        request: Request,
        kind: &str,
        elapsed_us: Option<u64>,
        reply: Option<&str>,
        substitute: Option<&str>,
    ) {
        let rec = ErrorRecord {
            game: self.game,
            day,
            request: request.name().into(),
            turn,
            agent,
            name: seat.name.clone(),
            kind: kind.into(),
            elapsed_us,
            reply: reply.map(|r| truncate(r, 200)),
            substitute: substitute.map(str::to_string),
        };
        if let Some(k) = seat_error_kind(kind) {
            let mut detail = format!(
                "game {} day {day} {} turn {turn}: {kind}",
                self.game,
                request.name()
            );
            if let Some(r) = &rec.reply {
                detail.push_str(&format!(", reply {r:?}"));
            }
            if let Some(s) = substitute {
                detail.push_str(&format!(", settled as {s:?}"));
            }
            seat.errors.push(SeatError {
                at: String::new(),
                turn: day,
                kind: k,
                detail,
            });
        }
        self.records.errors.push(rec);
    }
}

fn disconnect(
    ctx: &mut Ctx<'_>,
    g: &Werewolf,
    seat: &mut Seat,
    agent: usize,
    request: Request,
    reason: Option<&str>,
    io_error: bool,
) {
    let reason = reason
        .map(str::to_string)
        .or_else(|| match &seat.kind {
            SeatKind::Remote(Some(c)) => c.dead().map(str::to_string),
            _ => None,
        })
        .unwrap_or_else(|| "connection closed".into());
    seat.kind = SeatKind::Remote(None);
    if !seat.silent {
        seat.counts.silent_games += 1;
    }
    seat.silent = true;
    seat.counts.disconnects += 1;
    ctx.error(
        g,
        seat,
        agent,
        request,
        if io_error { "io_error" } else { "disconnect" },
        None,
        Some(&reason),
        None,
    );
}

/// Ask one seat; returns (line, overlong, outcome, elapsed µs).
async fn ask_seat(
    ctx: &mut Ctx<'_>,
    g: &mut Werewolf,
    h: &mut Histories,
    seat: &mut Seat,
    agent: usize,
    request: Request,
) -> (Option<String>, bool, String, Option<u64>) {
    match &mut seat.kind {
        SeatKind::Builtin(bot) => {
            let start = std::time::Instant::now();
            let reply = {
                let info = GameInfo::for_agent(g, agent, false);
                bot.act(request, &info, g.settings())
            };
            let us = start.elapsed().as_micros() as u64;
            (render_reply(&reply), false, "ok".into(), Some(us))
        }
        SeatKind::Remote(conn_slot) => {
            let Some(conn) = conn_slot.as_mut() else {
                return (None, false, "silent".into(), None);
            };
            for l in conn.drain_unsolicited() {
                let kind = if seat.late_expected > 0 {
                    seat.late_expected -= 1;
                    "late_line"
                } else {
                    "unsolicited"
                };
                let reply = Some(l);
                let name = seat.name.clone();
                ctx.records.errors.push(ErrorRecord {
                    game: ctx.game,
                    day: g.day(),
                    request: request.name().into(),
                    turn: g.turn(),
                    agent,
                    name,
                    kind: kind.into(),
                    elapsed_us: None,
                    reply: reply.map(|r| truncate(&r, 200)),
                    substitute: None,
                });
                if let Some(k) = seat_error_kind(kind) {
                    seat.errors.push(SeatError { at: String::new(),
                        turn: g.day(),
                        kind: k,
                        detail: format!("game {} day {}: a line arrived while no reply was outstanding; discarded", ctx.game, g.day()),
                    });
                }
            }
            let usable = matches!(&seat.kind, SeatKind::Remote(Some(c)) if c.dead().is_none());
            if !usable {
                disconnect(ctx, g, seat, agent, request, None, false);
                return (None, false, "silent".into(), None);
            }
            if seat.silent {
                return (None, false, "silent".into(), None);
            }
            let packet = h.packet(g, agent, request);
            let mut late_lines = Vec::new();
            let mut late_expected = seat.late_expected;
            let answer = match &mut seat.kind {
                SeatKind::Remote(Some(conn)) => match conn.request(packet, ctx.time_limit).await {
                    Ok(written) => {
                        let mut a = conn.next_line(written, ctx.time_limit).await;
                        // A reply that timed out earlier and arrives now is that late reply,
                        // not this one: record it and keep waiting (same deadline).
                        while late_expected > 0 {
                            let Answer::Line { text, .. } = &a else { break };
                            late_lines.push(text.clone());
                            late_expected -= 1;
                            a = conn.next_line(written, ctx.time_limit).await;
                        }
                        a
                    }
                    Err(a) => a,
                },
                _ => return (None, false, "silent".into(), None),
            };
            seat.late_expected = late_expected;
            for late in late_lines {
                ctx.error(
                    g,
                    seat,
                    agent,
                    request,
                    "late_line",
                    None,
                    Some(&late),
                    None,
                );
            }
            match answer {
                Answer::Line {
                    text,
                    overlong,
                    elapsed_us,
                } => {
                    if elapsed_us > ctx.contest_limit_us {
                        seat.counts.slow += 1;
                        ctx.error(
                            g,
                            seat,
                            agent,
                            request,
                            "slow",
                            Some(elapsed_us),
                            Some(&text),
                            None,
                        );
                    }
                    (Some(text), overlong, "ok".into(), Some(elapsed_us))
                }
                Answer::Timeout { elapsed_us } => {
                    seat.silent = true;
                    seat.late_expected += 1;
                    seat.counts.timeouts += 1;
                    seat.counts.silent_games += 1;
                    ctx.error(
                        g,
                        seat,
                        agent,
                        request,
                        "timeout",
                        Some(elapsed_us),
                        None,
                        None,
                    );
                    (None, false, "timeout".into(), Some(elapsed_us))
                }
                Answer::Disconnect { reason, io_error } => {
                    disconnect(ctx, g, seat, agent, request, Some(&reason), io_error);
                    (None, false, "disconnect".into(), None)
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------

fn report_of(spec_rules: &str, seed: u64, seats: &[Seat], out: &GameOutput) -> MatchReport {
    let scores: Vec<Score> = out
        .roles
        .iter()
        .map(|r| Score::from_integer(i64::from(r.team() == out.winner)))
        .collect();
    let outcome = Outcome {
        scores,
        winner: None,
    };
    let mut report = MatchReport::new(
        "werewolf",
        spec_rules,
        seed,
        &outcome,
        seats
            .iter()
            .map(|s| (s.spec.clone(), s.errors.clone()))
            .collect(),
    );
    report
        .extra
        .insert("winner_team".into(), json!(out.winner.name()));
    // A team game has no single winning seat (`winner` stays null): the seats of the winning
    // team, in seat order.
    let winner_seats: Vec<usize> = (0..out.roles.len())
        .filter(|&i| out.roles[i].team() == out.winner)
        .collect();
    report
        .extra
        .insert("winner_seats".into(), json!(winner_seats));
    report.extra.insert("days".into(), json!(out.day));
    for (i, s) in report.seats.iter_mut().enumerate() {
        s.extra.insert("agent".into(), json!(i + 1));
        s.extra.insert("name".into(), json!(seats[i].name));
        s.extra.insert("role".into(), json!(out.roles[i].name()));
        s.extra
            .insert("team".into(), json!(out.roles[i].team().name()));
        s.extra.insert("alive".into(), json!(out.alive[i]));
        s.extra.insert(
            "counts".into(),
            serde_json::to_value(seats[i].counts).unwrap_or(Value::Null),
        );
    }
    report
}

fn write_game_log(dir: &std::path::Path, name: &str, log: &[String]) -> Result<(), RefereeError> {
    kakehiki_core::private_files::create_dir_all(dir)?;
    let mut text = String::with_capacity(log.iter().map(|l| l.len() + 1).sum());
    for l in log {
        text.push_str(l);
        text.push('\n');
    }
    kakehiki_core::private_files::write(&dir.join(name), text)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

impl GameDriver for WerewolfDriver {
    fn game_type(&self) -> &'static GameType {
        &WEREWOLF_TYPE
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            spec.check_option_keys(OPTION_KEYS)?;
            let n = spec.seats.len();
            if !WEREWOLF_TYPE.accepts_seats(n) {
                return Err(RefereeError::SeatCount {
                    game: "werewolf".into(),
                    expected: "3 to 18".into(),
                    got: n,
                });
            }
            let cfg = Config::from_options(spec.rules.as_deref(), n, &spec.options, false)?;
            let rules = cfg.settings.rule_set.name();
            let mut clients = Vec::new();
            let mut seats = server::seat_match(spec, &cfg, &mut clients).await?;
            let mut records = Records::new(cfg.log_dir.clone());
            let out = run_game(0, spec.seed, &cfg, &mut seats, &mut records).await?;
            server::close_all(&mut seats, clients).await;
            if let Some(dir) = &cfg.log_dir {
                write_game_log(dir, "000.log", &out.log)?;
            }
            records.flush()?;
            let report = report_of(rules, spec.seed, &seats, &out);
            let replay = game_replay(rules, spec.seed, &seats, &spec.options, &out);
            Ok(MatchRecord { report, replay })
        })
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        if h.format != FORMAT {
            return Err(RefereeError::BadReplay(format!(
                "format {:?}: expected {FORMAT}",
                h.format
            )));
        }
        let params: HeaderParams = serde_json::from_value(h.params.clone())
            .map_err(|e| RefereeError::BadReplay(format!("bad header params: {e}")))?;
        let n = h.seats.len();
        if params.names.len() != n || !WEREWOLF_TYPE.accepts_seats(n) {
            return Err(RefereeError::BadReplay(format!(
                "{n} seats, {} names",
                params.names.len()
            )));
        }
        let cfg = Config::from_options(Some(&h.rules), n, &params.options, false)?;
        let replies: Vec<ReplyEvent> = replay.events_of("reply")?;
        let mut replies = replies.into_iter();
        let mut bots: Vec<Option<Box<dyn Agent>>> = Vec::new();
        for (i, s) in h.seats.iter().enumerate() {
            let spec: SeatSpec = s
                .parse()
                .map_err(|e| RefereeError::BadReplay(format!("seat {i}: {e}")))?;
            bots.push(match spec {
                SeatSpec::Builtin(name) => {
                    Some(builtin(&name, h.seed, i + 1).ok_or_else(|| {
                        RefereeError::BadReplay(format!(
                            "seat {i}: unknown built-in agent {name:?}"
                        ))
                    })?)
                }
                _ => None,
            });
        }
        let mut g = Werewolf::new(cfg.settings.clone(), h.seed, params.names.clone())
            .map_err(|e| RefereeError::BadReplay(e.to_string()))?;
        let mut out = ReplayLog::new();
        out.push(h);
        let mut seat_errors: Vec<Vec<SeatError>> = vec![Vec::new(); n];
        loop {
            for line in g.drain_log() {
                out.push(&LogEvent {
                    event: "log".into(),
                    line,
                });
            }
            match g.pending() {
                Pending::Done => break,
                Pending::Notify(_) => g
                    .ack()
                    .map_err(|e| RefereeError::BadReplay(e.to_string()))?,
                Pending::Ask { agent, request } => {
                    let rec = replies.next().ok_or_else(|| {
                        RefereeError::BadReplay(format!(
                            "the replay ends before {} to agent {agent}",
                            request.name()
                        ))
                    })?;
                    if rec.agent != agent || rec.request != request.name() {
                        return Err(RefereeError::BadReplay(format!(
                            "the re-run asks {} of agent {agent}, the replay has {} of agent {}",
                            request.name(),
                            rec.request,
                            rec.agent
                        )));
                    }
                    let (day, turn) = (g.day(), g.turn());
                    let (line, outcome, us) = match &mut bots[agent - 1] {
                        Some(bot) => {
                            let info = GameInfo::for_agent(&g, agent, false);
                            let r = bot.act(request, &info, g.settings());
                            (render_reply(&r), "ok".to_string(), None)
                        }
                        None => (rec.line.clone(), rec.outcome.clone(), rec.us),
                    };
                    let reply = reply_from_line(request, line.as_deref(), rec.overlong, n);
                    let settled = g
                        .reply(reply)
                        .map_err(|e| RefereeError::BadReplay(e.to_string()))?;
                    let outcome = if settled.invalid && outcome == "ok" {
                        "invalid".to_string()
                    } else {
                        outcome
                    };
                    if outcome != "ok" {
                        if let Some(kind) = seat_error_kind(match outcome.as_str() {
                            "invalid" if settled.rule_violation => "rule_violation",
                            o => o,
                        }) {
                            seat_errors[agent - 1].push(SeatError {
                                at: String::new(),
                                turn: day,
                                kind,
                                detail: format!(
                                    "day {day} {} turn {turn}: {outcome}",
                                    request.name()
                                ),
                            });
                        }
                    }
                    out.push(&ReplyEvent {
                        event: "reply".into(),
                        day,
                        turn,
                        agent,
                        request: request.name().into(),
                        outcome,
                        line,
                        overlong: rec.overlong,
                        us,
                        value: settled.value,
                    });
                }
            }
        }
        let o = GameOutput::of(&g, Vec::new(), Vec::new());
        out.push(&o.end_event());
        let mut seats: Vec<Seat> = h
            .seats
            .iter()
            .zip(&params.names)
            .map(|(s, name)| Seat::new(s.clone(), name.clone(), SeatKind::Remote(None)))
            .collect();
        for (s, e) in seats.iter_mut().zip(seat_errors) {
            s.errors = e;
        }
        Ok(MatchRecord {
            report: report_of(&h.rules, h.seed, &seats, &o),
            replay: out,
        })
    }
}

/// `options` with `role_request=false` where the rule set asks for roles (aiwolf-0.6; seed-2015
/// never does and refuses the key).
pub fn without_role_requests(
    rules: Option<&str>,
    options: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut options = options.clone();
    let rules = rules.unwrap_or(WEREWOLF_TYPE.default_rules());
    if RuleSet::from_name(rules) == Some(RuleSet::Aiwolf06) {
        options.insert("role_request".into(), "false".into());
    }
    options
}

/// The role `seat` (from 0) is dealt in a single game of `seed` with `options` when roles are
/// not requested (`role_request=false`: the deal then follows from the seed alone). `check`
/// uses it to choose seeds that give the checked bot each role.
pub fn dealt_role(
    rules: Option<&str>,
    players: usize,
    options: &BTreeMap<String, String>,
    seed: u64,
    seat: usize,
) -> Result<&'static str, RefereeError> {
    let options = without_role_requests(rules, options);
    let cfg = Config::from_options(rules, players, &options, false)?;
    let names = (1..=players).map(|i| format!("seat{i}")).collect();
    let g = Werewolf::new(cfg.settings, seed, names)
        .map_err(|e| bad("settings", &e.to_string(), "playable settings"))?;
    Ok(g.roles().get(seat).map_or("", |r| r.name()))
}

/// The replay of one game: header (seed, seats, names, the game's options), then its events.
pub fn game_replay(
    rules: &str,
    seed: u64,
    seats: &[Seat],
    options: &BTreeMap<String, String>,
    out: &GameOutput,
) -> ReplayLog {
    let mut replay = ReplayLog::new();
    replay.push(&ReplayHeader {
        event: "header".into(),
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        game: "werewolf".into(),
        rules: rules.into(),
        seed,
        seats: seats.iter().map(|s| s.spec.clone()).collect(),
        params: serde_json::to_value(HeaderParams {
            options: replay_options(options),
            names: seats.iter().map(|s| s.name.clone()).collect(),
        })
        .unwrap_or(Value::Null),
    });
    for e in &out.events {
        replay.push(e);
    }
    replay
}

/// Options that change the game (recorded in the replay header); run-local ones are dropped.
fn replay_options(options: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    options
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "log_dir"
                    | "host"
                    | "port"
                    | "connect_timeout_ms"
                    | "name_timeout_ms"
                    | "fill_timeout_ms"
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Names of the built-in agents, for error messages.
pub fn builtin_names() -> String {
    BUILTIN_NAMES.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::verify_replay;

    fn opts(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options_are_parsed_and_checked() {
        let c = Config::from_options(None, 15, &opts(&[]), false).unwrap();
        assert_eq!((c.settings.time_limit_ms, c.contest_limit_ms), (1000, 100));
        assert!(
            c.settings.enable_role_request,
            "a single game asks ROLE like the reference"
        );
        let c = Config::from_options(None, 15, &opts(&[]), true).unwrap();
        assert!(!c.settings.enable_role_request, "sets deal from the seed");
        let c = Config::from_options(None, 15, &opts(&[("enforce_contest_limit", "true")]), false)
            .unwrap();
        assert_eq!(c.settings.time_limit_ms, 100);
        let c = Config::from_options(Some("seed-2015"), 15, &opts(&[]), false).unwrap();
        assert_eq!(c.settings.win_count, WinCount::Team);
        assert!(matches!(
            Config::from_options(None, 15, &opts(&[("time_limit_ms", "soon")]), false),
            Err(RefereeError::BadOption { .. })
        ));
        assert!(matches!(
            Config::from_options(None, 15, &opts(&[("win_count", "most")]), false),
            Err(RefereeError::BadOption { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("2016"), 15, &opts(&[]), false),
            Err(RefereeError::UnknownRules { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("seed-2015"), 5, &opts(&[]), false),
            Err(RefereeError::SeatCount { .. })
        ));
        assert!(matches!(
            Config::from_options(Some("seed-2015"), 15, &opts(&[("max_talk", "3")]), false),
            Err(RefereeError::BadOption { .. })
        ));
        assert!(matches!(
            Config::from_options(None, 2, &opts(&[]), false),
            Err(RefereeError::SeatCount { .. })
        ));
    }

    #[test]
    fn reply_lines_become_engine_replies() {
        assert_eq!(
            reply_from_line(Request::Vote, None, false, 15),
            Reply::Silent
        );
        assert_eq!(
            reply_from_line(Request::Vote, Some("{\"agentIdx\":3}"), false, 15),
            Reply::Target(Some(3))
        );
        assert_eq!(
            reply_from_line(Request::Vote, Some("{\"agentIdx\": 3}"), false, 15),
            Reply::Target(Some(3))
        );
        assert_eq!(
            reply_from_line(Request::Divine, Some("garbage"), false, 15),
            Reply::Target(None)
        );
        assert_eq!(
            reply_from_line(Request::Talk, Some("Over"), false, 15),
            Reply::Text("Over".into())
        );
        assert_eq!(
            reply_from_line(Request::Talk, Some("VOTE Agent[01]"), true, 15),
            Reply::Target(None)
        );
        for r in [Reply::Text("Skip".into()), Reply::Target(Some(4))] {
            let line = render_reply(&r);
            let req = if matches!(r, Reply::Text(_)) {
                Request::Talk
            } else {
                Request::Vote
            };
            assert_eq!(reply_from_line(req, line.as_deref(), false, 15), r);
        }
    }

    #[tokio::test]
    async fn a_builtin_match_reports_roles_and_teams_and_its_replay_reruns() {
        let seats: Vec<SeatSpec> = (0..15)
            .map(|i| {
                if i % 2 == 0 {
                    "builtin:sample"
                } else {
                    "builtin:random"
                }
                .parse()
                .unwrap()
            })
            .collect();
        for rules in ["aiwolf-0.6", "seed-2015"] {
            let mut spec = MatchSpec::new("werewolf", 5, seats.clone());
            spec.rules = Some(rules.into());
            let rec = WEREWOLF.play(&spec).await.unwrap();
            let team = rec.report.extra["winner_team"]
                .as_str()
                .unwrap()
                .to_string();
            let wins = rec
                .report
                .seats
                .iter()
                .filter(|s| s.extra["team"] == team.as_str())
                .count();
            assert_eq!(
                rec.report.scores.iter().filter(|s| **s == 1.0).count(),
                wins
            );
            assert!(rec
                .report
                .seats
                .iter()
                .all(|s| s.extra.contains_key("role")));
            verify_replay(&rec.replay.to_text()).unwrap();
            // A changed reply is caught.
            let text = rec
                .replay
                .to_text()
                .replacen("\"value\":\"Over\"", "\"value\":\"Skip\"", 1);
            assert!(verify_replay(&text).is_err());
        }
    }

    #[tokio::test]
    async fn bad_seats_are_setup_errors() {
        let mut seats: Vec<SeatSpec> = vec!["builtin:random".parse().unwrap(); 15];
        seats[3] = "builtin:nobody".parse().unwrap();
        let err = WEREWOLF
            .play(&MatchSpec::new("werewolf", 1, seats.clone()))
            .await
            .unwrap_err();
        assert!(
            matches!(err, RefereeError::UnknownBot { seat: 3, .. }),
            "{err}"
        );
        seats[3] = "cmd:./bot".parse().unwrap();
        let err = WEREWOLF
            .play(&MatchSpec::new("werewolf", 1, seats))
            .await
            .unwrap_err();
        assert!(
            matches!(err, RefereeError::UnsupportedSeat { seat: 3, .. }),
            "{err}"
        );
        let mut spec = MatchSpec::new("werewolf", 1, vec!["builtin:random".parse().unwrap(); 15]);
        spec.options.insert("bogus".into(), "1".into());
        assert!(matches!(
            WEREWOLF.play(&spec).await,
            Err(RefereeError::UnknownOption { .. })
        ));
    }
}
