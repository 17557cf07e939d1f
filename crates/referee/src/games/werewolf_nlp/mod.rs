//! The Werewolf natural-language division (`werewolf-nlp`): the pure game of
//! `kakehiki_werewolf::nlp` joined to its seats through the one seat layer ([`crate::seat`]) —
//! built-in template agents, `builtin:silent`, and agents speaking the aiwolf-nlp-server protocol
//! over WebSocket ([`crate::seat::ws`]; `ws-cmd:` launches one with `{url}`, `{host}` and
//! `{port}` in its command line; `ws` waits for one to connect on its own; `tcp-cmd:` and `tcp`
//! are the same seats under the other games' names).
//!
//! Every request is one `seat` line of the replay, labelled `day N` (notifications, votes,
//! night actions), `day N talk K` / `day N whisper K` (the K-th talk or whisper request of the
//! day, or the K-th group-chat window), `connect` (the NAME of the handshake); the kind is the
//! request's name (`TALK`, `VOTE`, `NAME` for the check after a timeout). A re-run is the same
//! code on the recorded seats.

pub mod server;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;

use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{GameType, SeatErrorKind, SeatSpec};
use kakehiki_werewolf::nlp::config_file::{parse_config, GivenCounts};
use kakehiki_werewolf::nlp::game::{game_id_now, GameResult};
use kakehiki_werewolf::nlp::inproc::block_on_ready;
use kakehiki_werewolf::nlp::logs;
use kakehiki_werewolf::nlp::packet::{Packet, RequestKind};
use kakehiki_werewolf::nlp::{
    nl_builtin, AskError, ChatMessage, NlAgent, NlpConfig, NlpGame, NlpSettings, NLP_BUILTIN_NAMES,
    WEREWOLF_NLP_TYPE,
};

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::seat::ws::{accept_seat, launch_seat, NAME_REQUEST};
use crate::seat::{Ask, Finished, Listen, Seat, Table, SILENT_BOT};

/// The WebSocket seat's module, under the name it had here.
pub use crate::seat::ws;
pub use kakehiki_werewolf::nlp::config_file::{LoadedConfig, NOT_IMPLEMENTED_KEYS};
/// The configuration file's type, for the CLI.
pub use kakehiki_werewolf::nlp::NlpConfig as Config;

use kakehiki_werewolf::nlp::record::{end_event, report, v1_exchanges};
pub use kakehiki_werewolf::nlp::record::{log_agents, win_side, JsonLog, FORMAT, FORMAT_V1};

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

/// The driver.
pub struct WerewolfNlpDriver;

/// `werewolf-nlp`.
pub static WEREWOLF_NLP: WerewolfNlpDriver = WerewolfNlpDriver;

/// How long a program is given to exit after the game.
const GRACE: Duration = Duration::from_secs(2);

fn read_config(path: &std::path::Path) -> Result<(NlpConfig, GivenCounts, Vec<String>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    parse_config(ext, &text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Read a configuration file (YAML for `.yml` / `.yaml`, JSON for `.json`, TOML otherwise).
/// Talk and whisper counts it leaves out are upstream's defaults for its `game.agent_count`.
/// Keys Kakehiki does not implement ([`NOT_IMPLEMENTED_KEYS`]) are dropped with a warning each;
/// any other unknown key is an error.
pub fn load_config(path: &std::path::Path) -> Result<LoadedConfig, String> {
    load_config_for(path, None)
}

/// [`load_config`] for `players` agents when given (`serve --players`): the counts the file
/// leaves out follow that village size.
pub fn load_config_for(
    path: &std::path::Path,
    players: Option<usize>,
) -> Result<LoadedConfig, String> {
    let (mut c, given, warnings) = read_config(path)?;
    if let Some(p) = players {
        c.game.agent_count = p;
    }
    given.fill(&mut c);
    Ok(LoadedConfig {
        config: c,
        warnings,
    })
}

fn bad(key: &str, value: &str, expected: &str) -> RefereeError {
    RefereeError::BadOption {
        key: key.into(),
        value: value.into(),
        expected: expected.into(),
    }
}

/// The configuration of a match: the file (if any), then the options, then the seat count.
pub fn config_from_spec(spec: &MatchSpec) -> Result<NlpConfig, RefereeError> {
    spec.check_option_keys(OPTION_KEYS)?;
    if let Some(r) = &spec.rules {
        if r != "aiwolf-nlp" {
            return Err(RefereeError::UnknownRules {
                game: "werewolf-nlp".into(),
                rules: r.clone(),
                expected: "aiwolf-nlp".into(),
            });
        }
    }
    let n = spec.seats.len();
    let (mut c, given) = match spec.options.get("config") {
        Some(p) => {
            let (c, given, warnings) = read_config(std::path::Path::new(p))
                .map_err(|e| bad("config", p, &format!("a readable configuration file ({e})")))?;
            for w in warnings {
                tracing::warn!("werewolf-nlp config {p}: {w}");
            }
            (c, given)
        }
        None => (NlpConfig::for_players(n), GivenCounts::ALL),
    };
    // The village is the seats; counts the file leaves out follow its size.
    c.game.agent_count = n;
    given.fill(&mut c);
    let ms = |key: &str| -> Result<Option<String>, RefereeError> {
        match spec.options.get(key) {
            None => Ok(None),
            Some(v) => v
                .parse::<u64>()
                .map(|x| Some(format!("{x}ms")))
                .map_err(|_| bad(key, v, "milliseconds")),
        }
    };
    if let Some(v) = ms("action_ms")? {
        c.server.timeout.action = v;
    }
    if let Some(v) = ms("response_ms")? {
        c.server.timeout.response = v;
    }
    if let Some(v) = ms("acceptable_ms")? {
        c.server.timeout.acceptable = v;
    }
    c.game.max_day = spec.option(
        "max_day",
        c.game.max_day,
        "a day number, or -1 for no limit",
    )?;
    if let Some(h) = spec.options.get("host") {
        c.server.web_socket.host = h.clone();
    }
    Ok(c)
}

fn settings_of(c: &NlpConfig) -> Result<NlpSettings, RefereeError> {
    c.settings().map_err(|e| RefereeError::SeatCount {
        game: "werewolf-nlp".into(),
        expected: format!("a village the configuration allows ({e})"),
        got: c.game.agent_count,
    })
}

/// The upstream timeouts, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub action_ms: u64,
    pub response_ms: u64,
    pub acceptable_ms: u64,
}

impl Timeouts {
    pub fn of(s: &NlpSettings) -> Timeouts {
        Timeouts {
            action_ms: s.timeout_action_ms,
            response_ms: s.timeout_response_ms,
            acceptable_ms: s.timeout_acceptable_ms,
        }
    }
    /// A request's time: the action timeout plus the acceptable delay (also a write's limit).
    fn action(&self) -> Duration {
        Duration::from_millis(self.action_ms + self.acceptable_ms)
    }
    /// The NAME's time (the handshake, the check after a timeout).
    pub fn response(&self) -> Duration {
        Duration::from_millis(self.response_ms.max(1))
    }
}

/// How a seat is played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    /// A built-in agent, named `NAME<seat>` (`sample2`).
    Bot(String),
    /// `builtin:silent`: named `silent<seat>`, never answers.
    Silent(String),
    /// An agent asked its NAME (`ws`, `ws-cmd:`).
    Remote,
}

impl Who {
    /// The seat `i` of spec label `s` (`builtin:sample`, `ws`, ...).
    pub fn of(i: usize, s: &str) -> Who {
        match s.strip_prefix("builtin:") {
            Some(SILENT_BOT) => Who::Silent(format!("{SILENT_BOT}{}", i + 1)),
            Some(name) => Who::Bot(format!("{name}{}", i + 1)),
            None => Who::Remote,
        }
    }
}

/// One game to run on a table.
pub struct Game {
    pub settings: Arc<NlpSettings>,
    pub seed: u64,
    pub who: Vec<Who>,
    /// The built-in agents (live); `None` for the other seats and in a re-run.
    pub bots: Vec<Option<Box<dyn NlAgent>>>,
    pub game_id: String,
    /// Keep upstream's JSON log.
    pub json_log: bool,
}

/// A game played to its end.
pub struct Played {
    pub finished: Finished,
    pub result: GameResult,
    pub game: NlpGame,
    /// The NAME answers.
    pub originals: Vec<String>,
    pub json_log: Option<String>,
}

/// A game played, its seats not yet ended.
pub struct Ran {
    pub table: Table,
    pub result: GameResult,
    pub game: NlpGame,
    pub originals: Vec<String>,
    json: Option<JsonLog>,
}

/// Play `g` on `table` (live or replayed: the same code) and end the seats: the replay is
/// `played.finished.log`, ending with the `end` event.
pub async fn run(table: Table, g: Game) -> Played {
    let ran = run_game(table, g).await;
    let mut finished = ran.table.finish(GRACE).await;
    finished.log.push(&end_event(&ran.result, &ran.game));
    let json_log = ran
        .json
        .map(|j| j.text(&ran.game, &ran.originals, win_side(&ran.result)));
    Played {
        finished,
        result: ran.result,
        game: ran.game,
        originals: ran.originals,
        json_log,
    }
}

/// The game of [`run`]: the NAME of every remote seat, then the game to its end.
pub async fn run_game(mut table: Table, g: Game) -> Ran {
    let t = Timeouts::of(&g.settings);
    let remote: Vec<usize> = (0..g.who.len())
        .filter(|&i| g.who[i] == Who::Remote)
        .collect();
    let hello = remote
        .iter()
        .map(|&i| Ask {
            handshake: true,
            ..Ask::new(i, "connect", "NAME", Vec::new(), t.response())
        })
        .collect();
    let names = table.ask(hello, |_, _| Vec::new()).await;
    let mut originals: Vec<String> = g
        .who
        .iter()
        .map(|w| match w {
            Who::Bot(n) | Who::Silent(n) => n.clone(),
            Who::Remote => String::new(),
        })
        .collect();
    for (&i, a) in remote.iter().zip(names) {
        match a.text() {
            Some(name) => originals[i] = name.trim_end_matches('\n').to_string(),
            None => table.kill(i, "not connected"),
        }
    }
    let mut game = NlpGame::new(g.settings, g.seed, originals.clone());
    game.set_game_id(g.game_id);
    table.record(&json!({"event": "game_id", "game_id": game.game_id()}));
    let mut seats = Seats {
        table,
        bots: g.bots,
        who: g.who,
        originals: originals.clone(),
        t,
        json: g.json_log.then(JsonLog::default),
        day: 0,
        counts: [0, 0],
        phase: 0,
    };
    let result = game.run(&mut seats).await;
    Ran {
        table: seats.table,
        result,
        game,
        originals,
        json: seats.json,
    }
}

/// The seats as the game sees them: its requests become the table's asks and tells.
struct Seats {
    table: Table,
    bots: Vec<Option<Box<dyn NlAgent>>>,
    who: Vec<Who>,
    originals: Vec<String>,
    t: Timeouts,
    json: Option<JsonLog>,
    /// The day, its talk and whisper requests (and windows) so far, and the kind of the last
    /// phase started (0 talk, 1 whisper).
    day: u32,
    counts: [u32; 2],
    phase: usize,
}

const CHAT_ROUNDS: usize = 64;
const OVER: &str = "Over";
const TALKS: [&str; 2] = ["talk", "whisper"];

fn day_of(p: &Packet) -> u32 {
    p.info.as_ref().map_or(0, |i| i.day)
}

impl Seats {
    /// `day N`, or `day N talk K` / `day N whisper K` for the K-th of the day.
    fn label(&mut self, p: &Packet) -> String {
        let day = day_of(p);
        if day != self.day {
            self.day = day;
            self.counts = [0, 0];
        }
        match p.request {
            RequestKind::Talk => self.next(0),
            RequestKind::Whisper => self.next(1),
            _ => format!("day {day}"),
        }
    }

    fn next(&mut self, kind: usize) -> String {
        self.counts[kind] += 1;
        format!("day {} {} {}", self.day, TALKS[kind], self.counts[kind] - 1)
    }

    /// The packet's JSON, where it is sent or logged.
    fn json(&self, a: usize, p: &Packet) -> String {
        if self.bots[a].is_none() || self.json.is_some() {
            p.to_json()
        } else {
            String::new()
        }
    }

    /// Deliver a packet that needs no answer; `false` if the seat is gone.
    async fn deliver(&mut self, a: usize, at: &str, p: &Packet, json: String) -> bool {
        if let Some(bot) = &mut self.bots[a] {
            bot.answer(p);
            return true;
        }
        if let Some(why) = self.table.down(a) {
            let _ = why;
            return false;
        }
        let failed = self
            .table
            .tell(a, at, p.request.name(), json.as_bytes(), self.t.action())
            .await;
        if let Some(f) = failed {
            let why = f.detail.unwrap_or_else(|| f.outcome.as_str().to_string());
            self.table.kill(a, &why);
            return false;
        }
        true
    }

    /// After a timeout: NAME, and only the agent's own name within the response timeout keeps
    /// it in the game.
    async fn name_check(&mut self, a: usize, at: &str) -> Result<String, AskError> {
        let ask = Ask::new(a, at, "NAME", NAME_REQUEST.into(), self.t.response());
        let check = self.table.ask_one(ask, |_, _| Vec::new()).await;
        match check.text() {
            Some(t) if t.trim_end_matches('\n') == self.originals[a] => Err(AskError::Failed),
            other => {
                if let Some(t) = other {
                    let why = format!("timed out, then answered the NAME check with {t:?}");
                    self.table.fault(a, at, SeatErrorKind::Disconnect, &why);
                }
                self.table.kill(a, "out of the game: failed the NAME check");
                Err(AskError::Fatal)
            }
        }
    }
}

impl kakehiki_werewolf::nlp::Table for Seats {
    async fn notify(&mut self, agent: usize, packet: Packet) -> Result<(), ()> {
        match packet.request {
            RequestKind::TalkPhaseStart => self.phase = 0,
            RequestKind::WhisperPhaseStart => self.phase = 1,
            _ => {}
        }
        let at = self.label(&packet);
        let json = self.json(agent, &packet);
        let logged = self.json.as_ref().map(|_| (json.clone(), now_ms()));
        let ok = self.deliver(agent, &at, &packet, json).await;
        if let (Some(log), Some((req, sent))) = (&mut self.json, logged) {
            let fail = (!ok).then(|| self.table.down(agent).unwrap_or("gone").to_string());
            log.entry(&packet, req, (sent, now_ms()), None, fail.as_deref());
        }
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    async fn ask(&mut self, agent: usize, packet: Packet) -> Result<String, AskError> {
        let at = self.label(&packet);
        let json = self.json(agent, &packet);
        let logged = self.json.as_ref().map(|_| (json.clone(), now_ms()));
        let msg = if self.bots[agent].is_some() {
            Vec::new()
        } else {
            json.into_bytes()
        };
        let kind = packet.request.name();
        let bot = &mut self.bots[agent];
        let ask = Ask::new(agent, at.clone(), kind, msg, self.t.action());
        let answer = self
            .table
            .ask_one(ask, |_, _| {
                let reply = bot.as_mut().and_then(|b| b.answer(&packet));
                reply.unwrap_or_default().into_bytes()
            })
            .await;
        let r = match answer.outcome {
            ExchangeOutcome::Reply => Ok(answer.text().unwrap_or_default().replace('\n', "")),
            ExchangeOutcome::Timeout | ExchangeOutcome::Malformed => {
                self.name_check(agent, &at).await
            }
            _ => Err(AskError::Fatal),
        };
        if let (Some(log), Some((req, sent))) = (&mut self.json, logged) {
            let error = r
                .is_err()
                .then(|| answer.detail.as_deref().unwrap_or("no answer"));
            log.entry(&packet, req, (sent, now_ms()), r.as_deref().ok(), error);
        }
        r
    }

    async fn chat(
        &mut self,
        open: Vec<usize>,
        duration_ms: u64,
        accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) {
        let at = self.next(self.phase);
        let kind = ["TALK", "WHISPER"][self.phase];
        let limit = Duration::from_millis(duration_ms);
        // Built-in agents speak first, in turns, until they say Over.
        let mut bots: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&a| matches!(self.who[a], Who::Bot(_)))
            .collect();
        for _ in 0..CHAT_ROUNDS {
            if bots.is_empty() {
                break;
            }
            let mut still = Vec::new();
            for &a in &bots {
                let bot = &mut self.bots[a];
                let ask = Ask::new(a, at.clone(), kind, Vec::new(), limit);
                let answer = self
                    .table
                    .ask_one(ask, |_, _| {
                        let prompt = Packet::bare(RequestKind::Talk);
                        let text = bot.as_mut().and_then(|b| b.answer(&prompt));
                        text.unwrap_or_else(|| OVER.into()).into_bytes()
                    })
                    .await;
                let text = answer.text().unwrap_or_else(|| OVER.into());
                let over = text == OVER;
                self.broadcast(accept(ChatMessage { agent: a, text }), &at)
                    .await;
                if !over {
                    still.push(a);
                }
            }
            bots = still;
        }
        // The others talk freely until the time is up.
        let remote: Vec<usize> = open
            .into_iter()
            .filter(|&a| self.who[a] == Who::Remote)
            .collect();
        let mut window = Listen::new(at.clone(), kind, limit);
        while let Some((a, answer)) = self.table.listen(&remote, &mut window).await {
            if let Some(text) = answer.text() {
                self.broadcast(accept(ChatMessage { agent: a, text }), &at)
                    .await;
            }
        }
    }
}

impl Seats {
    async fn broadcast(&mut self, to: Vec<(usize, Packet)>, at: &str) {
        for (b, p) in to {
            let json = if self.bots[b].is_none() {
                p.to_json()
            } else {
                String::new()
            };
            self.deliver(b, at, &p, json).await;
        }
    }
}

/// The server's secret for player tokens, when the configuration requires them.
pub fn secret_of(c: &NlpConfig) -> Result<Option<String>, RefereeError> {
    if !c.server.authentication.enable {
        return Ok(None);
    }
    let s = c.server.authentication.secret_key.clone();
    s.or_else(|| std::env::var("SECRET_KEY").ok())
        .map(Some)
        .ok_or_else(|| {
            bad(
                "config",
                "server.authentication",
                "a secret_key or SECRET_KEY in the environment",
            )
        })
}

/// The seats of a live match: built-in agents made, `ws-cmd:` agents launched, and every
/// WebSocket agent waited for (one listener for the `ws` seats; a listener of its own, in its
/// network namespace where there are namespaces, for each `ws-cmd:` seat).
async fn start_seats(
    spec: &MatchSpec,
    config: &NlpConfig,
    name_timeout: Duration,
) -> Result<(Vec<Seat>, Vec<Who>, Vec<Option<Box<dyn NlAgent>>>), RefereeError> {
    let port_opt: u16 = spec.option("port", 0, "a TCP port")?;
    let connect =
        Duration::from_millis(spec.option("connect_timeout_ms", 10_000, "milliseconds")?);
    let secret = secret_of(config)?;
    let want = match port_opt {
        0 => config.server.web_socket.port,
        p => p,
    };
    let listener = if spec.seats.iter().any(|s| matches!(s, SeatSpec::Tcp)) {
        let l = TcpListener::bind((config.server.web_socket.host.as_str(), want)).await?;
        for (i, s) in spec.seats.iter().enumerate() {
            if matches!(s, SeatSpec::Tcp) {
                spec.on_listen.notify(i, l.local_addr()?);
            }
        }
        Some(l)
    } else {
        None
    };
    let (mut seats, mut who, mut bots) = (Vec::new(), Vec::new(), Vec::new());
    for (i, s) in spec.seats.iter().enumerate() {
        let w = Who::of(i, &seat_label(s));
        let seat = match s {
            SeatSpec::Builtin(name) if name == SILENT_BOT => Seat::Silent,
            SeatSpec::Builtin(name) => {
                let bot = nl_builtin(name, spec.seed, i).ok_or_else(|| RefereeError::UnknownBot {
                    game: "werewolf-nlp".into(),
                    seat: i,
                    name: name.clone(),
                    expected: format!("{}, {SILENT_BOT}", NLP_BUILTIN_NAMES.join(", ")),
                })?;
                bots.push(Some(bot));
                seats.push(Seat::Builtin);
                who.push(w);
                continue;
            }
            SeatSpec::Cmd(_) => return Err(RefereeError::UnsupportedSeat {
                game: "werewolf-nlp".into(),
                seat: i,
                form: "cmd:".into(),
                reason: "agents connect over WebSocket: use ws-cmd:<command line with {url}, or {host} and {port}> or ws".into(),
            }),
            SeatSpec::TcpCmd(argv) => {
                let argv_for = |addr: std::net::SocketAddr| {
                    substitute(argv, &addr.ip().to_string(), addr.port())
                };
                let sandbox = spec.sandbox.for_seat(i);
                let times = (connect, name_timeout);
                launch_seat(i, argv_for, &sandbox, want, times, secret.as_deref()).await?
            }
            SeatSpec::Tcp => {
                let l = listener.as_ref().expect("a listener exists whenever a ws seat does");
                let ws = accept_seat(l, connect, name_timeout, secret.as_deref(), None).await;
                Seat::Live(Box::new(ws))
            }
        };
        seats.push(seat);
        who.push(w);
        bots.push(None);
    }
    Ok((seats, who, bots))
}

impl GameDriver for WerewolfNlpDriver {
    fn game_type(&self) -> &'static GameType {
        &WEREWOLF_NLP_TYPE
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            let config = config_from_spec(spec)?;
            let settings = Arc::new(settings_of(&config)?);
            let log_dir = spec.options.get("log_dir").map(std::path::PathBuf::from);
            let (seats, who, bots) =
                start_seats(spec, &config, Timeouts::of(&settings).response()).await?;
            let spec_seats: Vec<String> = spec.seats.iter().map(seat_label).collect();
            let mut log = ReplayLog::new();
            log.push(&header(&spec_seats, spec.seed, &config));
            let g = Game {
                settings,
                seed: spec.seed,
                who,
                bots,
                // A real time in the id, as upstream's; recorded for the re-run.
                game_id: game_id_now(spec.seed),
                json_log: log_dir.is_some() || config.json_logger.enable,
            };
            let p = run(Table::new(seats, log), g).await;
            let json_log = p.json_log.clone();
            write_logs(log_dir.as_deref(), &config, &p.game, &p.originals, json_log)?;
            Ok(record(&spec_seats, spec.seed, p))
        })
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        if h.format != FORMAT {
            return Err(RefereeError::BadReplay(format!(
                "format {:?}, not {FORMAT:?} (`kakehiki replay --upgrade` converts {FORMAT_V1:?})",
                h.format
            )));
        }
        let (g, log) = replayed_game(replay, h)?;
        let table = Table::replayed(replay, g.who.len(), log)?;
        Ok(record(&h.seats, h.seed, block_on_ready(run(table, g))))
    }

    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        if old.header.format != FORMAT_V1 {
            return Err(RefereeError::BadReplay(format!(
                "werewolf-nlp upgrades {FORMAT_V1:?}, not {:?}",
                old.header.format
            )));
        }
        let mut h = old.header.clone();
        h.format = FORMAT.into();
        let (g, log) = replayed_game(old, &h)?;
        let seats = v1_seats(old, &g.who)?;
        Ok(block_on_ready(run(Table::new(seats, log), g)).finished.log)
    }
}

/// The game of a replay with header `h`, and the re-run's log holding `h`.
fn replayed_game(
    replay: &ParsedReplay,
    h: &ReplayHeader,
) -> Result<(Game, ReplayLog), RefereeError> {
    let config: NlpConfig = serde_json::from_value(h.params.clone())
        .map_err(|e| RefereeError::BadReplay(format!("params: {e}")))?;
    let settings = Arc::new(settings_of(&config)?);
    if h.seats.len() != settings.agent_count {
        return Err(RefereeError::BadReplay(format!(
            "{} seats for {} players",
            h.seats.len(),
            settings.agent_count
        )));
    }
    let game_id = replay
        .events
        .iter()
        .find(|(_, e)| e["event"] == "game_id")
        .and_then(|(_, e)| e["game_id"].as_str())
        .ok_or_else(|| RefereeError::BadReplay("no game_id event".into()))?;
    let who: Vec<Who> = h
        .seats
        .iter()
        .enumerate()
        .map(|(i, s)| Who::of(i, s))
        .collect();
    let mut log = ReplayLog::new();
    log.push(h);
    let g = Game {
        settings,
        seed: h.seed,
        bots: who.iter().map(|_| None).collect(),
        who,
        game_id: game_id.to_string(),
        json_log: false,
    };
    Ok((g, log))
}

/// The seats of a `@1` replay (see [`v1_exchanges`]).
fn v1_seats(old: &ParsedReplay, who: &[Who]) -> Result<Vec<Seat>, RefereeError> {
    let remote: Vec<bool> = who.iter().map(|w| *w == Who::Remote).collect();
    let ex = v1_exchanges(old, &remote).map_err(RefereeError::BadReplay)?;
    let seat = |exchanges| Seat::Replayed {
        exchanges,
        end: None,
    };
    Ok(ex.into_iter().map(seat).collect())
}

/// The replay header.
fn header(spec_seats: &[String], seed: u64, c: &NlpConfig) -> ReplayHeader {
    let engine = env!("CARGO_PKG_VERSION");
    kakehiki_werewolf::nlp::record::header(spec_seats, seed, c, engine)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The match record of a played game.
fn record(spec_seats: &[String], seed: u64, p: Played) -> MatchRecord {
    let mut rep = report(spec_seats, seed, &p.result);
    p.finished.fill_report(&mut rep);
    MatchRecord {
        report: rep,
        replay: p.finished.log,
    }
}

/// A seat as this game names it: WebSocket seats are `ws` and `ws-cmd:<command line>` (they
/// parse as `tcp` / `tcp-cmd:`, which are accepted as aliases).
pub fn seat_label(s: &SeatSpec) -> String {
    match s {
        SeatSpec::Tcp => "ws".into(),
        SeatSpec::TcpCmd(_) => {
            let t = s.to_string();
            format!("ws-cmd:{}", t.strip_prefix("tcp-cmd:").unwrap_or(&t))
        }
        other => other.to_string(),
    }
}

/// `{url}`, `{host}`, `{port}` in a command line.
pub fn substitute(argv: &[String], host: &str, port: u16) -> Vec<String> {
    argv.iter()
        .map(|a| {
            a.replace("{url}", &format!("ws://{host}:{port}/ws"))
                .replace("{host}", host)
                .replace("{port}", &port.to_string())
        })
        .collect()
}

/// Write the upstream-format logs of a finished game. Into `dir` (beside the replay) as
/// `<game_id>.log` (the game log), `<game_id>.realtime.jsonl` (the real-time log) and, when it
/// was recorded, `<game_id>.json` (the JSON log); and where the configuration enables
/// `game_logger` / `realtime_broadcaster` / `json_logger`, into their `output_dir` under their
/// `filename` (`{game_id}`, `{timestamp}`, `{teams}` replaced), as upstream does.
/// Returns the files written.
pub fn write_logs(
    dir: Option<&std::path::Path>,
    config: &NlpConfig,
    game: &NlpGame,
    originals: &[String],
    json_log: Option<String>,
) -> Result<Vec<std::path::PathBuf>, RefereeError> {
    let agents = log_agents(game, originals);
    let game_log = logs::game_log_text(game.log());
    let realtime = logs::realtime_log(game.game_id(), &agents, game.log()).join("\n");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let named = |out: &str, pattern: &str, ext: &str| {
        let name = logs::log_file_name(pattern, game.game_id(), now, &agents);
        std::path::Path::new(out).join(format!("{name}.{ext}"))
    };
    let mut files: Vec<(std::path::PathBuf, &str)> = Vec::new();
    if let Some(dir) = dir {
        files.push((dir.join(format!("{}.log", game.game_id())), &game_log));
        files.push((
            dir.join(format!("{}.realtime.jsonl", game.game_id())),
            &realtime,
        ));
        if let Some(text) = &json_log {
            files.push((dir.join(format!("{}.json", game.game_id())), text));
        }
    }
    if let (true, Some(text)) = (config.json_logger.enable, &json_log) {
        let j = &config.json_logger;
        files.push((named(&j.output_dir, &j.filename, "json"), text));
    }
    if config.game_logger.enable {
        let g = &config.game_logger;
        files.push((named(&g.output_dir, &g.filename, "log"), &game_log));
    }
    if config.realtime_broadcaster.enable {
        let r = &config.realtime_broadcaster;
        files.push((named(&r.output_dir, &r.filename, "jsonl"), &realtime));
    }
    let mut written = Vec::new();
    for (path, text) in files {
        kakehiki_core::private_files::create_parent(&path)?;
        kakehiki_core::private_files::write(&path, text)?;
        // Beside every real-time log, upstream's `games.json` lists it.
        if path.extension().is_some_and(|e| e == "jsonl") {
            update_games_list(&path, game.game_id())?;
        }
        written.push(path);
    }
    Ok(written)
}

/// Add the real-time log at `path` to `games.json` in its folder (upstream's list of
/// `{"id", "filename", "updated_at"}`, which the log viewer reads); games run concurrently, so
/// one writer at a time.
fn update_games_list(path: &std::path::Path, game_id: &str) -> Result<(), RefereeError> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    let filename = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let list = dir.join("games.json");
    let existing = std::fs::read_to_string(&list).unwrap_or_default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let text = logs::games_list_with(&existing, game_id, &filename, &logs::rfc3339_nanos(now));
    kakehiki_core::private_files::write(&list, text)?;
    Ok(())
}

/// Options as a map, for callers that build specs.
pub fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websocket_seats_are_named_ws() {
        assert_eq!(seat_label(&SeatSpec::Tcp), "ws");
        assert_eq!(
            seat_label(&"tcp-cmd:python3 a.py {url}".parse().unwrap()),
            "ws-cmd:python3 a.py {url}"
        );
        assert_eq!(
            seat_label(&"builtin:sample".parse().unwrap()),
            "builtin:sample"
        );
    }
}
