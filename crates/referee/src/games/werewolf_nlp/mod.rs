//! The Werewolf natural-language division (`werewolf-nlp`): the pure game of
//! `kakehiki_werewolf::nlp` joined to its seats — built-in template agents in process, and agents
//! speaking the aiwolf-nlp-server protocol over WebSocket (`ws-cmd:` launches one with `{url}`,
//! `{host}` and `{port}` in its command line; `ws` waits for one to connect on its own; `tcp-cmd:`
//! and `tcp` are the same seats under the other games' names).
//!
//! A separate game rather than a rule set of `werewolf`: the seats (5, 9, 13), the transport
//! (WebSocket, text answers), the built-in agents and the replay format all differ, and the
//! registry's [`GameType`] declares those per game.
//!
//! Every answer, failure and group-chat message is recorded in the replay in the order the game
//! used it; [`GameDriver::rerun`] feeds them back to the same game code.

pub mod server;
pub mod ws;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::time::Instant;

use kakehiki_agent::ClientProcess;
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{GameType, MatchReport, Outcome, Score, SeatError, SeatErrorKind, SeatSpec};
use kakehiki_werewolf::nlp::game::{game_id_now, GameResult};
use kakehiki_werewolf::nlp::inproc::block_on_ready;
use kakehiki_werewolf::nlp::logs::{self, LogAgent};
use kakehiki_werewolf::nlp::packet::{Packet, RequestKind};
use kakehiki_werewolf::nlp::{
    nl_builtin, AskError, ChatMessage, NlAgent, NlpConfig, NlpGame, NlpSettings, Table,
    NLP_BUILTIN_NAMES, WEREWOLF_NLP_TYPE,
};
use kakehiki_werewolf::Team;

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use ws::{Timeouts, WsAgent, WsFault};

/// The configuration file's type, for the CLI.
pub use kakehiki_werewolf::nlp::NlpConfig as Config;

/// Replay format name.
pub const FORMAT: &str = "kakehiki/werewolf-nlp-replay@1";

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

/// The talk and whisper counts a configuration file leaves out take the upstream default for
/// the village size (`default_5.yml`, `default_13.yml`): `max_count.per_agent` / `per_day`.
#[derive(Debug, Clone, Copy, Default)]
struct GivenCounts {
    talk_per_agent: bool,
    talk_per_day: bool,
    whisper_per_agent: bool,
    whisper_per_day: bool,
}

impl GivenCounts {
    const ALL: GivenCounts = GivenCounts {
        talk_per_agent: true,
        talk_per_day: true,
        whisper_per_agent: true,
        whisper_per_day: true,
    };

    fn of(v: &Value) -> GivenCounts {
        let has = |s: &str, k: &str| !v["game"][s]["max_count"][k].is_null();
        GivenCounts {
            talk_per_agent: has("talk", "per_agent"),
            talk_per_day: has("talk", "per_day"),
            whisper_per_agent: has("whisper", "per_agent"),
            whisper_per_day: has("whisper", "per_day"),
        }
    }

    /// Fill what was not given from the defaults for `c.game.agent_count` players.
    fn fill(self, c: &mut NlpConfig) {
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
    "logic.day_phases",
    "logic.night_phases",
    "matching.is_optimize",
    "matching.team_count",
    "matching.game_count",
    "matching.output_path",
    "matching.infinite_loop",
    "custom_profile.dynamic_profile",
    "tts_broadcaster",
];

/// A configuration file as read: the configuration, and one warning per key it gives that
/// Kakehiki accepts without implementing it.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: NlpConfig,
    pub warnings: Vec<String>,
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
fn parse_tree(path: &std::path::Path, text: &str) -> Result<Value, String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
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

fn read_config(path: &std::path::Path) -> Result<(NlpConfig, GivenCounts, Vec<String>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let err = |e: String| format!("{}: {e}", path.display());
    let mut tree = parse_tree(path, &text).map_err(err)?;
    if tree.is_null() {
        // An empty YAML file: every key takes its default.
        tree = json!({});
    }
    let warnings = take_not_implemented(&mut tree);
    let given = GivenCounts::of(&tree);
    let c: NlpConfig = serde_path_to_error::deserialize(&tree).map_err(|e| {
        let at = e.path().to_string();
        err(if at == "." {
            e.inner().to_string()
        } else {
            format!("{at}: {}", e.inner())
        })
    })?;
    Ok((c, given, warnings))
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

/// One seat.
#[allow(clippy::large_enum_variant)] // a handful per game; boxing buys nothing
pub enum Seat {
    Bot(Box<dyn NlAgent>),
    /// A WebSocket agent; `None` once it is gone or if it never connected.
    Ws(Option<WsAgent>),
}

/// Replay lines and per-seat errors, written the same way live and in a re-run.
pub struct Recorder {
    pub log: ReplayLog,
    pub errors: Vec<Vec<SeatError>>,
}

// Replay events, serialised straight from borrowed fields (no `Value` per request). Fields are
// in alphabetical order: the same bytes `json!` writes, so replays read back unchanged.
#[derive(serde::Serialize)]
struct AnswerEvent<'a> {
    agent: usize,
    day: u32,
    event: &'static str,
    request: &'static str,
    text: &'a str,
}

#[derive(serde::Serialize)]
struct FailEvent {
    agent: usize,
    day: u32,
    event: &'static str,
    fatal: bool,
    request: &'static str,
}

#[derive(serde::Serialize)]
struct GoneEvent {
    agent: usize,
    day: u32,
    event: &'static str,
    request: &'static str,
}

#[derive(serde::Serialize)]
struct ChatEvent<'a> {
    agent: usize,
    event: &'static str,
    text: &'a str,
}

impl Recorder {
    fn answer(&mut self, agent: usize, p: &Packet, r: &Result<String, AskError>) {
        let request = p.request.name();
        let day = day_of(p);
        match r {
            Ok(text) => self.log.push(&AnswerEvent {
                agent,
                day,
                event: "answer",
                request,
                text,
            }),
            Err(e) => self.log.push(&FailEvent {
                agent,
                day,
                event: "fail",
                fatal: *e == AskError::Fatal,
                request,
            }),
        }
    }
    fn gone(&mut self, agent: usize, p: &Packet) {
        self.log.push(&GoneEvent {
            agent,
            day: day_of(p),
            event: "gone",
            request: p.request.name(),
        });
    }
    fn chat(&mut self, agent: usize, text: &str) {
        self.log.push(&ChatEvent {
            agent,
            event: "chat",
            text,
        });
    }
    fn error(&mut self, agent: usize, day: u32, kind: SeatErrorKind, detail: String) {
        if let Some(e) = self.errors.get_mut(agent) {
            e.push(SeatError {
                at: String::new(),
                turn: day,
                kind,
                detail,
            });
        }
    }
}

fn day_of(p: &Packet) -> u32 {
    p.info.as_ref().map_or(0, |i| i.day)
}

/// The server's own time per request, for the benchmark: from the previous answer read (any
/// agent's) to the next request written to its socket. Only answered WebSocket requests count.
#[derive(Debug, Default)]
pub struct RequestClock {
    last_answer: Option<std::time::Instant>,
    pub gaps: Vec<Duration>,
}

impl RequestClock {
    fn asked(&mut self, a: &WsAgent) {
        if let (Some(prev), Some(w)) = (self.last_answer, a.written_at) {
            self.gaps.push(w.saturating_duration_since(prev));
        }
        self.last_answer = a.answered_at;
    }
}

/// Upstream's JSON log (`json_logger`): every request sent to an agent, with its answer or error
/// and the wall-clock times (milliseconds since the epoch) it was sent and answered.
#[derive(Debug, Default)]
pub struct JsonLog {
    pub entries: Vec<Value>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl JsonLog {
    fn entry(
        &mut self,
        p: &Packet,
        request: String,
        sent: u64,
        response: Option<&str>,
        error: Option<&str>,
    ) {
        let mut e = json!({
            "agent": p.info.as_ref().map(|i| i.agent.as_str()).unwrap_or(""),
            "request": request,
            "request_timestamp": sent,
            "response_timestamp": now_ms(),
        });
        if let Some(r) = response.filter(|r| !r.is_empty()) {
            e["response"] = json!(r);
        }
        if let Some(x) = error {
            e["error"] = json!(x);
        }
        self.entries.push(e);
    }

    /// The file's text: `game_id`, `win_side`, `agents` (`idx`, `team`, `name` = the NAME
    /// answer, `role`) and `entries`, as upstream writes it.
    pub fn text(&self, game: &NlpGame, originals: &[String], win_side: &str) -> String {
        let agents: Vec<Value> = (0..game.names().len())
            .map(|i| {
                let o = originals.get(i).map(String::as_str).unwrap_or("");
                json!({"idx": i + 1, "team": ws::team_of(o), "name": o,
                       "role": game.roles()[i].name()})
            })
            .collect();
        json!({"game_id": game.game_id(), "win_side": win_side, "agents": agents,
               "entries": self.entries})
        .to_string()
    }
}

/// The live seats.
pub struct LiveTable {
    pub seats: Vec<Seat>,
    pub timeouts: Timeouts,
    pub rec: Recorder,
    /// Set by the benchmark to measure the server's time per request.
    pub clock: Option<RequestClock>,
    /// Set when the upstream JSON log is to be written.
    pub json_log: Option<JsonLog>,
}

impl LiveTable {
    async fn deliver(&mut self, b: usize, p: Packet) {
        match &mut self.seats[b] {
            Seat::Bot(bot) => {
                bot.answer(&p);
            }
            Seat::Ws(Some(a)) => {
                if let Err(e) = a.send(p.to_json()).await {
                    self.rec.error(b, day_of(&p), SeatErrorKind::Disconnect, e);
                    self.seats[b] = Seat::Ws(None);
                }
            }
            Seat::Ws(None) => {}
        }
    }
}

const CHAT_ROUNDS: usize = 64;

impl Table for LiveTable {
    async fn notify(&mut self, agent: usize, packet: Packet) -> Result<(), ()> {
        let json = packet.to_json();
        // Only when the JSON log is kept: the request's text and the time it was sent.
        let logged = self.json_log.is_some().then(|| json.clone());
        let sent = if logged.is_some() { now_ms() } else { 0 };
        let fail = match &mut self.seats[agent] {
            Seat::Bot(b) => {
                b.answer(&packet);
                None
            }
            Seat::Ws(Some(a)) => a.send(json).await.err(),
            Seat::Ws(None) => Some("not connected".to_string()),
        };
        if let (Some(log), Some(req)) = (&mut self.json_log, logged) {
            log.entry(&packet, req, sent, None, fail.as_deref());
        }
        match fail {
            None => Ok(()),
            Some(e) => {
                self.rec.gone(agent, &packet);
                self.rec
                    .error(agent, day_of(&packet), SeatErrorKind::Disconnect, e);
                self.seats[agent] = Seat::Ws(None);
                Err(())
            }
        }
    }

    async fn ask(&mut self, agent: usize, packet: Packet) -> Result<String, AskError> {
        let t = self.timeouts;
        let json = packet.to_json();
        // Only when the JSON log is kept: the request's text and the time it was sent.
        let logged = self.json_log.is_some().then(|| json.clone());
        let sent = if logged.is_some() { now_ms() } else { 0 };
        let mut why: Option<String> = None;
        let r = match &mut self.seats[agent] {
            Seat::Bot(b) => b.answer(&packet).ok_or(AskError::Failed),
            Seat::Ws(Some(a)) => match a.ask(json, t).await {
                Ok(s) => {
                    if let Some(c) = &mut self.clock {
                        c.asked(a);
                    }
                    Ok(s)
                }
                Err((e, fault)) => {
                    let (kind, detail) = match fault {
                        WsFault::Timeout => (
                            SeatErrorKind::Timeout,
                            format!(
                                "no answer to {} within {} ms",
                                packet.request.name(),
                                t.action_ms + t.acceptable_ms
                            ),
                        ),
                        WsFault::Gone(why) => (SeatErrorKind::Disconnect, why),
                    };
                    why = Some(detail.clone());
                    self.rec.error(agent, day_of(&packet), kind, detail);
                    Err(e)
                }
            },
            Seat::Ws(None) => Err(AskError::Fatal),
        };
        if r == Err(AskError::Fatal) {
            self.seats[agent] = Seat::Ws(None);
        }
        if let (Some(log), Some(req)) = (&mut self.json_log, logged) {
            let error = match (&r, why.as_deref()) {
                (Ok(_), _) => None,
                (Err(_), Some(w)) => Some(w),
                (Err(_), None) => Some("no answer"),
            };
            log.entry(&packet, req, sent, r.as_deref().ok(), error);
        }
        self.rec.answer(agent, &packet, &r);
        r
    }

    async fn chat(
        &mut self,
        open: Vec<usize>,
        duration_ms: u64,
        accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) {
        // Built-in agents speak first, in turns, until they say Over.
        let mut bots: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&a| matches!(self.seats[a], Seat::Bot(_)))
            .collect();
        for _ in 0..CHAT_ROUNDS {
            if bots.is_empty() {
                break;
            }
            let mut still = Vec::new();
            for &a in &bots {
                let Seat::Bot(b) = &mut self.seats[a] else {
                    continue;
                };
                let text = b
                    .answer(&Packet::bare(RequestKind::Talk))
                    .unwrap_or_else(|| "Over".into());
                let over = text == "Over";
                self.rec.chat(a, &text);
                for (to, p) in accept(ChatMessage { agent: a, text }) {
                    self.deliver(to, p).await;
                }
                if !over {
                    still.push(a);
                }
            }
            bots = still;
        }
        // WebSocket agents talk freely until the time is up.
        let deadline = Instant::now() + Duration::from_millis(duration_ms);
        loop {
            let next: Option<(usize, Result<String, String>)> = {
                let mut reads = Vec::new();
                for (i, s) in self.seats.iter_mut().enumerate() {
                    if let (true, Seat::Ws(Some(a))) = (open.contains(&i), s) {
                        reads.push(Box::pin(async move { (i, ws::read_text(&mut a.ws).await) }));
                    }
                }
                if reads.is_empty() {
                    tokio::time::sleep_until(deadline).await;
                    None
                } else {
                    tokio::time::timeout_at(deadline, futures_util::future::select_all(reads))
                        .await
                        .ok()
                        .map(|(first, _, _)| first)
                }
            };
            let Some((i, r)) = next else {
                break;
            };
            match r {
                Ok(text) => {
                    self.rec.chat(i, &text);
                    for (to, p) in accept(ChatMessage { agent: i, text }) {
                        self.deliver(to, p).await;
                    }
                }
                Err(e) => {
                    self.rec.error(i, 0, SeatErrorKind::Disconnect, e);
                    self.seats[i] = Seat::Ws(None);
                }
            }
        }
        self.rec.log.push(&json!({"event": "chat_end"}));
    }
}

/// Seats replayed from a recording.
pub struct ReplayTable {
    events: std::vec::IntoIter<Value>,
    pub rec: Recorder,
}

impl ReplayTable {
    fn peek_is(&self, kind: &str, agent: usize) -> bool {
        self.events
            .as_slice()
            .first()
            .is_some_and(|e| e["event"] == kind && e["agent"] == agent)
    }
}

impl Table for ReplayTable {
    async fn notify(&mut self, agent: usize, packet: Packet) -> Result<(), ()> {
        if self.peek_is("gone", agent) {
            self.events.next();
            self.rec.gone(agent, &packet);
            return Err(());
        }
        Ok(())
    }

    async fn ask(&mut self, agent: usize, packet: Packet) -> Result<String, AskError> {
        let e = self.events.next().unwrap_or(Value::Null);
        let r = if e["agent"] != agent {
            Err(AskError::Fatal)
        } else if e["event"] == "answer" {
            Ok(e["text"].as_str().unwrap_or("").to_string())
        } else if e["fatal"] == true {
            Err(AskError::Fatal)
        } else {
            Err(AskError::Failed)
        };
        self.rec.answer(agent, &packet, &r);
        r
    }

    async fn chat(
        &mut self,
        _open: Vec<usize>,
        _duration_ms: u64,
        accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) {
        while let Some(e) = self.events.as_slice().first().cloned() {
            if e["event"] != "chat" {
                break;
            }
            self.events.next();
            let agent = e["agent"].as_u64().unwrap_or(0) as usize;
            let text = e["text"].as_str().unwrap_or("").to_string();
            self.rec.chat(agent, &text);
            accept(ChatMessage { agent, text });
        }
        if self
            .events
            .as_slice()
            .first()
            .is_some_and(|e| e["event"] == "chat_end")
        {
            self.events.next();
        }
        self.rec.log.push(&json!({"event": "chat_end"}));
    }
}

/// The end of the replay: result, roles and the upstream game log.
/// The replay line recording the game's id (after the seat lines).
fn game_id_event(id: &str) -> Value {
    json!({"event": "game_id", "game_id": id})
}

fn end_event(r: &GameResult, game: &NlpGame) -> Value {
    json!({
        "event": "end",
        "winner": r.winner.map(|t| t.name()),
        "aborted": r.aborted,
        "last_day": r.last_day,
        "names": game.names(),
        "roles": r.roles.iter().map(|x| x.name()).collect::<Vec<_>>(),
        "alive": r.alive,
        "errors": r.has_error,
        "game_log": game.log(),
    })
}

fn report(
    spec_seats: &[String],
    seed: u64,
    r: &GameResult,
    errors: Vec<Vec<SeatError>>,
) -> MatchReport {
    let scores = r
        .roles
        .iter()
        .map(|role| Score::from_integer(i64::from(Some(role.team()) == r.winner)))
        .collect();
    let outcome = Outcome {
        scores,
        winner: None,
    };
    let mut rep = MatchReport::new(
        "werewolf-nlp",
        "aiwolf-nlp",
        seed,
        &outcome,
        spec_seats.iter().cloned().zip(errors).collect(),
    );
    rep.extra.insert(
        "winner_team".into(),
        json!(r.winner.map(|t: Team| t.name())),
    );
    // A team game has no single winning seat (`winner` stays null): the seats of the winning
    // team, in seat order (empty when the game ended without a winner).
    let winner_seats: Vec<usize> = (0..r.roles.len())
        .filter(|&i| r.winner.is_some_and(|t| r.roles[i].team() == t))
        .collect();
    rep.extra.insert("winner_seats".into(), json!(winner_seats));
    rep.extra.insert("aborted".into(), json!(r.aborted));
    rep.extra.insert(
        "roles".into(),
        json!(r.roles.iter().map(|x| x.name()).collect::<Vec<_>>()),
    );
    rep
}

fn header(spec_seats: &[String], seed: u64, c: &NlpConfig) -> ReplayHeader {
    ReplayHeader {
        event: "header".into(),
        format: FORMAT.into(),
        engine: env!("CARGO_PKG_VERSION").into(),
        game: "werewolf-nlp".into(),
        rules: "aiwolf-nlp".into(),
        seed,
        seats: spec_seats.to_vec(),
        params: serde_json::to_value(c).unwrap_or(Value::Null),
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

impl GameDriver for WerewolfNlpDriver {
    fn game_type(&self) -> &'static GameType {
        &WEREWOLF_NLP_TYPE
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            let config = config_from_spec(spec)?;
            let settings = std::sync::Arc::new(settings_of(&config)?);
            let port_opt: u16 = spec.option("port", 0, "a TCP port")?;
            let connect_ms: u64 = spec.option("connect_timeout_ms", 10_000, "milliseconds")?;
            let log_dir = spec.options.get("log_dir").map(std::path::PathBuf::from);
            let timeouts = Timeouts {
                action_ms: settings.timeout_action_ms,
                response_ms: settings.timeout_response_ms,
                acceptable_ms: settings.timeout_acceptable_ms,
            };
            let host = config.server.web_socket.host.clone();
            let secret = if config.server.authentication.enable {
                Some(
                    config
                        .server
                        .authentication
                        .secret_key
                        .clone()
                        .or_else(|| std::env::var("SECRET_KEY").ok())
                        .ok_or_else(|| {
                            bad(
                                "config",
                                "server.authentication",
                                "a secret_key or SECRET_KEY in the environment",
                            )
                        })?,
                )
            } else {
                None
            };
            // `ws` agents share one listener; each `ws-cmd:` agent gets a network of its own
            // whose loopback holds only its seat's listener, on the same port.
            let needs_ws = spec.seats.iter().any(|s| matches!(s, SeatSpec::Tcp));
            let want = match port_opt {
                0 => config.server.web_socket.port,
                p => p,
            };
            let listener = if needs_ws {
                Some(TcpListener::bind((host.as_str(), want)).await?)
            } else {
                None
            };
            if let Some(l) = &listener {
                let addr = l.local_addr()?;
                for (i, s) in spec.seats.iter().enumerate() {
                    if matches!(s, SeatSpec::Tcp) {
                        spec.on_listen.notify(i, addr);
                    }
                }
            }
            let n = spec.seats.len();
            let mut rec = Recorder {
                log: ReplayLog::new(),
                errors: vec![Vec::new(); n],
            };
            let spec_seats: Vec<String> = spec.seats.iter().map(seat_label).collect();
            let mut seats = Vec::new();
            let mut originals = Vec::new();
            let mut clients: Vec<ClientProcess> = Vec::new();
            let connect = Duration::from_millis(connect_ms);
            let name_timeout = Duration::from_millis(timeouts.response_ms.max(1));
            for (i, s) in spec.seats.iter().enumerate() {
                match (s, &listener) {
                    (SeatSpec::Builtin(name), _) => {
                        let bot = nl_builtin(name, spec.seed, i).ok_or_else(|| RefereeError::UnknownBot {
                            game: "werewolf-nlp".into(),
                            seat: i,
                            name: name.clone(),
                            expected: NLP_BUILTIN_NAMES.join(", "),
                        })?;
                        seats.push(Seat::Bot(bot));
                        originals.push(format!("{name}{}", i + 1));
                    }
                    (SeatSpec::Cmd(_), _) => {
                        return Err(RefereeError::UnsupportedSeat {
                            game: "werewolf-nlp".into(),
                            seat: i,
                            form: "cmd:".into(),
                            reason: "agents connect over WebSocket: use ws-cmd:<command line with {url}, or {host} and {port}> or ws".into(),
                        })
                    }
                    (SeatSpec::TcpCmd(argv), _) => {
                        let launched = ClientProcess::spawn_seat(
                            |addr| substitute(argv, &addr.ip().to_string(), addr.port()),
                            &spec.sandbox.for_seat(i),
                            want,
                        );
                        let got = match launched {
                            Err(e) => {
                                if let Some(fault) = RefereeError::host_fault(i, &e) {
                                    return Err(fault);
                                }
                                Err(format!("cannot start the agent: {e}"))
                            }
                            Ok((c, seat)) => {
                                clients.push(c);
                                // `spawn_seat` hands the listener over non-blocking.
                                let own = TcpListener::from_std(seat.listener)
                                    .map_err(|e| RefereeError::HostFault {
                                        seat: i,
                                        reason: format!("cannot use the seat's listener: {e}"),
                                    })?;
                                // One connection is the seat; the listener closes with `own`.
                                ws::accept_agent(&own, connect, name_timeout, secret.as_deref()).await
                            }
                        };
                        push_ws(&mut seats, &mut originals, &mut rec, i, got);
                    }
                    (SeatSpec::Tcp, Some(l)) => {
                        let got = ws::accept_agent(l, connect, name_timeout, secret.as_deref()).await;
                        push_ws(&mut seats, &mut originals, &mut rec, i, got);
                    }
                    (SeatSpec::Tcp, None) => unreachable!("a listener exists whenever a ws seat does"),
                }
            }
            let mut hdr_log = ReplayLog::new();
            hdr_log.push(&header(&spec_seats, spec.seed, &config));
            for (i, o) in originals.iter().enumerate() {
                hdr_log.push(&json!({"event": "seat", "agent": i, "name": o}));
            }
            let mut game = NlpGame::new(settings, spec.seed, originals.clone());
            // A real time in the id, as upstream's; recorded for the re-run.
            game.set_game_id(game_id_now(spec.seed));
            hdr_log.push(&game_id_event(game.game_id()));
            let mut table = LiveTable {
                seats,
                timeouts,
                rec,
                clock: None,
                json_log: (log_dir.is_some() || config.json_logger.enable).then(JsonLog::default),
            };
            let r = game.run(&mut table).await;
            for s in std::mem::take(&mut table.seats) {
                if let Seat::Ws(Some(a)) = s {
                    a.close().await;
                }
            }
            for c in clients {
                let _ = c.finish(Duration::from_secs(2)).await;
            }
            let mut replay = hdr_log;
            for l in table.rec.log.lines() {
                replay.push(&serde_json::from_str::<Value>(l).unwrap_or(Value::Null));
            }
            replay.push(&end_event(&r, &game));
            let json_log = table
                .json_log
                .as_ref()
                .map(|j| j.text(&game, &originals, win_side(&r)));
            write_logs(log_dir.as_deref(), &config, &game, &originals, json_log)?;
            Ok(MatchRecord {
                report: report(&spec_seats, spec.seed, &r, table.rec.errors),
                replay,
            })
        })
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        let config: NlpConfig = serde_json::from_value(h.params.clone())
            .map_err(|e| RefereeError::BadReplay(format!("params: {e}")))?;
        let settings = std::sync::Arc::new(settings_of(&config)?);
        let events: Vec<Value> = replay.events.iter().map(|(_, v)| v.clone()).collect();
        let originals: Vec<String> = events
            .iter()
            .filter(|e| e["event"] == "seat")
            .map(|e| e["name"].as_str().unwrap_or("").to_string())
            .collect();
        if originals.len() != settings.agent_count {
            return Err(RefereeError::BadReplay(format!(
                "{} seat lines for {} players",
                originals.len(),
                settings.agent_count
            )));
        }
        let recorded_id = events
            .iter()
            .find(|e| e["event"] == "game_id")
            .and_then(|e| e["game_id"].as_str())
            .map(str::to_string);
        let body: Vec<Value> = events
            .into_iter()
            .filter(|e| e["event"] != "seat" && e["event"] != "end" && e["event"] != "game_id")
            .collect();
        let n = settings.agent_count;
        let mut table = ReplayTable {
            events: body.into_iter(),
            rec: Recorder {
                log: ReplayLog::new(),
                errors: vec![Vec::new(); n],
            },
        };
        let mut game = NlpGame::new(settings, h.seed, originals.clone());
        // The recorded id (replays from before ids carried a time have none: time 0).
        if let Some(id) = &recorded_id {
            game.set_game_id(id.clone());
        }
        let r = block_on_ready(game.run(&mut table));
        let mut out = ReplayLog::new();
        out.push(&h);
        for (i, o) in originals.iter().enumerate() {
            out.push(&json!({"event": "seat", "agent": i, "name": o}));
        }
        if recorded_id.is_some() {
            out.push(&game_id_event(game.game_id()));
        }
        for l in table.rec.log.lines() {
            out.push(&serde_json::from_str::<Value>(l).unwrap_or(Value::Null));
        }
        out.push(&end_event(&r, &game));
        Ok(MatchRecord {
            report: report(&h.seats, h.seed, &r, table.rec.errors),
            replay: out,
        })
    }
}

fn push_ws(
    seats: &mut Vec<Seat>,
    originals: &mut Vec<String>,
    rec: &mut Recorder,
    i: usize,
    got: Result<WsAgent, String>,
) {
    match got {
        Ok(a) => {
            originals.push(a.original.clone());
            seats.push(Seat::Ws(Some(a)));
        }
        Err(why) => {
            rec.error(i, 0, SeatErrorKind::NotReady, why);
            originals.push(String::new());
            seats.push(Seat::Ws(None));
        }
    }
}

/// Upstream's `win_side`: the winning team, or `NONE`.
pub fn win_side(r: &GameResult) -> &'static str {
    r.winner.map_or("NONE", |t| t.name())
}

/// The agents as the upstream logs name them.
pub fn log_agents(game: &NlpGame, originals: &[String]) -> Vec<LogAgent> {
    (0..game.names().len())
        .map(|i| LogAgent {
            team: originals.get(i).map(|o| ws::team_of(o)).unwrap_or_default(),
            name: game.names()[i].clone(),
            profile: game.profiles().get(i).cloned().flatten(),
            avatar: game.avatars().get(i).cloned().flatten(),
            role: game.roles()[i].name(),
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
    fn recorded_events_are_the_bytes_json_writes() {
        let mut p = Packet::bare(RequestKind::Vote);
        p.info = None;
        let mut r = Recorder {
            log: ReplayLog::new(),
            errors: vec![Vec::new(); 2],
        };
        r.answer(1, &p, &Ok("Agent[02] \"q\"".into()));
        r.answer(0, &p, &Err(AskError::Fatal));
        r.gone(1, &p);
        r.chat(0, "hi\tthere");
        let want = [
            json!({"event": "answer", "agent": 1, "day": 0, "request": "VOTE", "text": "Agent[02] \"q\""}),
            json!({"event": "fail", "agent": 0, "day": 0, "request": "VOTE", "fatal": true}),
            json!({"event": "gone", "agent": 1, "day": 0, "request": "VOTE"}),
            json!({"event": "chat", "agent": 0, "text": "hi\tthere"}),
        ];
        for (got, want) in r.log.lines().iter().zip(want) {
            assert_eq!(got, &want.to_string());
        }
    }

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
