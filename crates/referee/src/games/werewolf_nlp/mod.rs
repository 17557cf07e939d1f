//! The Werewolf natural-language division (`werewolf-nlp`): the pure game of
//! `kakehiki_werewolf::nlp` joined to its seats through the one seat layer ([`crate::seat`]) —
//! built-in template agents, `builtin:silent`, and agents speaking the aiwolf-nlp-server protocol
//! over WebSocket ([`crate::seat::ws`]; `ws-cmd:` launches one with `{url}`, `{host}` and
//! `{port}` in its command line; `ws` waits for one to connect on its own; `tcp-cmd:` and `tcp`
//! are the same seats under the other games' names).
//!
//! Every request is one `seat` line of the replay, labelled as [`Labels`] says, or `connect`
//! (the NAME of the handshake); the kind is the request's name (`TALK`, `VOTE`, `NAME` for the
//! check after a timeout). A re-run is the same code on the recorded seats.

pub mod server;

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{GameType, SeatErrorKind, SeatSpec};
use kakehiki_werewolf::nlp::bound::LongestGame;
use kakehiki_werewolf::nlp::game::{game_id_now, GameResult};
use kakehiki_werewolf::nlp::logs;
use kakehiki_werewolf::nlp::options::{self, match_config, BadOption, OPTION_KEYS};
use kakehiki_werewolf::nlp::packet::{Packet, RequestKind, OVER};
use kakehiki_werewolf::nlp::record::{log_files, replayed_game_id};
use kakehiki_werewolf::nlp::seats::{ChatTurns, Labels, CHAT_ROUNDS};
use kakehiki_werewolf::nlp::{
    nl_builtin, AskError, ChatMessage, NlAgent, NlpConfig, NlpGame, NlpSettings, WEREWOLF_NLP_TYPE,
};

use crate::driver::{BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::files::{unix_ms as now_ms, unix_now, update_file, write_files};
use crate::lifecycle::{run_flow, Lifecycle};
use crate::seat::ws::{self, NAME_REQUEST};
use crate::seat::{Answer, Ask, Finished, Listen, Seat, Table, SILENT_BOT};

pub use kakehiki_werewolf::nlp::config_file::{LoadedConfig, NOT_IMPLEMENTED_KEYS};
/// The configuration file's type, for the CLI.
pub use kakehiki_werewolf::nlp::NlpConfig as Config;

use kakehiki_werewolf::nlp::record::{
    check_rerun_format, check_upgrade_format, end_event, header, report, v1_exchanges,
};
pub use kakehiki_werewolf::nlp::record::{log_agents, win_side, JsonLog, FORMAT, FORMAT_V1};
pub use kakehiki_werewolf::nlp::seats::{seat_label, substitute, Timeouts, Who};

/// The driver.
pub struct WerewolfNlpDriver;

/// `werewolf-nlp`.
pub static WEREWOLF_NLP: WerewolfNlpDriver = WerewolfNlpDriver;

/// How long a program is given to exit after the game.
const GRACE: Duration = Duration::from_secs(2);

/// The game for the shared match lifecycle: the agents get [`GRACE`] to exit.
const NLP_LIFE: Lifecycle<NlpConfig> = Lifecycle {
    game: &WEREWOLF_NLP_TYPE,
    format: FORMAT,
    params: checked_config,
    end_grace: |_| GRACE,
};

/// The configuration of a match, checked: its village, and the agents' connect wait.
fn checked_config(spec: &MatchSpec) -> Result<NlpConfig, RefereeError> {
    let config = config_from_spec(spec)?;
    settings_of(&config)?;
    connect_wait(spec)?;
    Ok(config)
}

/// How long an agent is waited for to connect by default: 30 s (a Python agent on the newest
/// upstream libraries took more than 10 s to import them).
const DEFAULT_CONNECT_MS: u64 = 30_000;

/// The longest `connect_timeout_ms` may be: a day.
const MAX_CONNECT_MS: u64 = 86_400_000;

/// How long each WebSocket agent is waited for to connect (`connect_timeout_ms`: 30 s by
/// default, at most [`MAX_CONNECT_MS`]); the one reader for the seats and the longest match.
fn connect_wait(spec: &MatchSpec) -> Result<Duration, RefereeError> {
    let expected = "milliseconds, at most 86400000 (a day)";
    let ms: u64 = spec.option("connect_timeout_ms", DEFAULT_CONNECT_MS, expected)?;
    if ms > MAX_CONNECT_MS {
        return Err(RefereeError::BadOption {
            key: "connect_timeout_ms".into(),
            value: ms.to_string(),
            expected: expected.into(),
        });
    }
    Ok(Duration::from_millis(ms))
}

/// The longest a match of `settings` with `seats` seats and agents waited for `connect` can last
/// while every agent answers legally within its limits. The seats are seated one after another,
/// each counted as a WebSocket agent (the limits are the same whoever sits there): `connect` for
/// it to connect, then the response timeout for the WebSocket handshake and again for its NAME.
/// Then the game, every request one after another ([`LongestGame`]: `action + acceptable` each,
/// every group-chat window its `duration`), and the end grace for the agents to exit.
fn longest_match(
    settings: &NlpSettings,
    seats: usize,
    connect: Duration,
    grace: Duration,
) -> Duration {
    let t = Timeouts::of(settings);
    let seat = connect.saturating_add(t.response().saturating_mul(2));
    let seating = seat.saturating_mul(u32::try_from(seats).unwrap_or(u32::MAX));
    seating
        .saturating_add(LongestGame::of(settings).time())
        .saturating_add(grace)
}

/// The server's secret for player tokens (`SECRET_KEY`), when the configuration requires them.
pub fn secret_of(c: &NlpConfig) -> Result<Option<String>, kakehiki_core::BadOption> {
    options::secret(c, || std::env::var("SECRET_KEY").ok())
}

/// Read a configuration file (YAML for `.yml` / `.yaml`, JSON for `.json`, TOML otherwise).
/// Talk and whisper counts it leaves out are upstream's defaults for its `game.agent_count`, or
/// for `players` agents when given (`serve --players`). Keys Kakehiki does not implement
/// ([`NOT_IMPLEMENTED_KEYS`]) are dropped with a warning each; any other unknown key is an error.
pub fn load_config_for(
    path: &std::path::Path,
    players: Option<usize>,
) -> Result<LoadedConfig, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    LoadedConfig::of(path, &text, players)
}

/// The configuration of a match: the file (if any), then the options, then the seat count.
pub fn config_from_spec(spec: &MatchSpec) -> Result<NlpConfig, RefereeError> {
    // The game's own range of seats first; the village the configuration deals is checked
    // against the seats afterwards (`settings_of`).
    spec.check_common(&WEREWOLF_NLP_TYPE, OPTION_KEYS)?;
    let n = spec.seats.len();
    let mut file = None;
    if let Some(p) = spec.options.get("config") {
        let loaded = load_config_for(p.as_ref(), Some(n)).map_err(|e| {
            BadOption::new("config", p, &format!("a readable configuration file ({e})"))
        })?;
        for w in loaded.warnings {
            tracing::warn!("werewolf-nlp config {p}: {w}");
        }
        file = Some(loaded.config);
    }
    let get = |key: &str| spec.options.get(key).map(String::as_str);
    Ok(match_config(file, n, get)?)
}

fn settings_of(c: &NlpConfig) -> Result<NlpSettings, RefereeError> {
    c.settings().map_err(|e| RefereeError::SeatCount {
        game: "werewolf-nlp".into(),
        expected: format!("a village the configuration allows ({e})"),
        got: c.game.agent_count,
    })
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

/// A game played to its end, and its seats: the [`Table`] straight from [`run_game`], or
/// [`Finished`] (the seats ended) from [`run`].
pub struct Played<S> {
    pub seats: S,
    pub result: GameResult,
    pub game: NlpGame,
    /// The NAME answers.
    pub originals: Vec<String>,
    /// Upstream's JSON log, when kept.
    pub json: Option<JsonLog>,
}

/// Play `g` on `table` (live or replayed: the same code) and end the seats as the lifecycle
/// does ([`run_flow`], under `config`'s end grace): the replay is `played.seats.log`, ending with
/// the `end` event.
pub async fn run(table: Table, g: Game, config: &NlpConfig) -> Played<Finished> {
    run_flow(table, NLP_LIFE.end_grace(config), |t| turns(t, g), ended).await
}

/// The game's flow for the lifecycle: [`run_game`], the table handed back.
async fn turns(table: Table, g: Game) -> (Table, Played<()>) {
    let p = run_game(table, g).await;
    let (result, game, originals, json) = (p.result, p.game, p.originals, p.json);
    let played = Played {
        seats: (),
        result,
        game,
        originals,
        json,
    };
    (p.seats, played)
}

/// A game whose seats are finished: the `end` event closes its replay.
fn ended(p: Played<()>, mut seats: Finished) -> Played<Finished> {
    seats.log.push(&end_event(&p.result, &p.game));
    let (result, game, originals, json) = (p.result, p.game, p.originals, p.json);
    Played {
        seats,
        result,
        game,
        originals,
        json,
    }
}

/// The game of [`run`]: the NAME of every remote seat, then the game to its end.
pub async fn run_game(mut table: Table, g: Game) -> Played<Table> {
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
    // The agents were asked their NAME at once: the game's clock starts after the slowest.
    let clock_us = names.iter().filter_map(|a| a.time_us).max().unwrap_or(0);
    let mut originals: Vec<String> = g.who.iter().map(Who::name).collect();
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
        labels: Labels::default(),
        clock_us,
    };
    let result = game.run(&mut seats).await;
    Played {
        seats: seats.table,
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
    labels: Labels,
    /// The game's clock ([`kakehiki_werewolf::nlp::Table::elapsed_ms`]) in microseconds: the
    /// recorded reply times added up, each group-chat window its `duration`. Never read from a
    /// wall clock, so that a re-run, answering from the record, counts the same.
    clock_us: u64,
}

impl Seats {
    /// Add the time `a` took, as it is recorded, to the clock.
    fn count(&mut self, a: &Answer) {
        self.clock_us = self.clock_us.saturating_add(a.time_us.unwrap_or(0));
    }

    /// Deliver a packet that needs no answer; `false` if the seat is gone.
    async fn deliver(&mut self, a: usize, at: &str, p: &Packet) -> bool {
        if let Some(bot) = &mut self.bots[a] {
            bot.answer(p);
            return true;
        }
        if self.table.down(a).is_some() {
            return false;
        }
        let json = p.to_json();
        let failed = self
            .table
            .tell(a, at, p.request.name(), json.into_bytes(), self.t.action())
            .await;
        if let Some(f) = failed {
            self.count(&f);
            let why = f.detail.unwrap_or_else(|| f.outcome.as_str().to_string());
            self.table.kill(a, &why);
            return false;
        }
        true
    }

    /// Deliver the packets a group-chat message makes; an accepted message (it makes some) is
    /// an entry of the JSON log.
    async fn broadcast(&mut self, to: Vec<(usize, Packet)>, at: &str) {
        if let (Some(log), Some((_, p))) = (&mut self.json, to.first()) {
            log.talk(p);
        }
        for (b, p) in to {
            self.deliver(b, at, &p).await;
        }
    }

    /// After a timeout: NAME, and only the agent's own name within the response timeout keeps
    /// it in the game.
    async fn name_check(&mut self, a: usize, at: &str) -> Result<String, AskError> {
        let ask = Ask::new(a, at, "NAME", NAME_REQUEST.into(), self.t.response());
        let check = self.table.ask_one(ask, |_, _| Vec::new()).await;
        self.count(&check);
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
        let at = self.labels.of(&packet);
        let sent = self.json.as_ref().map(|_| now_ms());
        let ok = self.deliver(agent, &at, &packet).await;
        if let (Some(log), Some(sent)) = (&mut self.json, sent) {
            let fail = (!ok).then(|| self.table.down(agent).unwrap_or("gone").to_string());
            log.entry(&packet, (sent, now_ms()), None, fail.as_deref());
        }
        ok.then_some(()).ok_or(())
    }

    async fn ask(&mut self, agent: usize, packet: Packet) -> Result<String, AskError> {
        let at = self.labels.of(&packet);
        let sent = self.json.as_ref().map(|_| now_ms());
        let bot = &mut self.bots[agent];
        // A built-in agent reads the packet itself.
        let msg = match bot {
            Some(_) => Vec::new(),
            None => packet.to_json().into_bytes(),
        };
        let ask = Ask::new(
            agent,
            at.clone(),
            packet.request.name(),
            msg,
            self.t.action(),
        );
        let answer = self
            .table
            .ask_one(ask, |_, _| {
                let reply = bot.as_mut().and_then(|b| b.answer(&packet));
                reply.unwrap_or_default().into_bytes()
            })
            .await;
        self.count(&answer);
        let r = match answer.outcome {
            ExchangeOutcome::Reply => Ok(answer.text().unwrap_or_default().replace('\n', "")),
            ExchangeOutcome::Timeout | ExchangeOutcome::Malformed => {
                self.name_check(agent, &at).await
            }
            _ => Err(AskError::Fatal),
        };
        if let (Some(log), Some(sent)) = (&mut self.json, sent) {
            let error = r
                .is_err()
                .then(|| answer.detail.as_deref().unwrap_or("no answer"));
            log.entry(&packet, (sent, now_ms()), r.as_deref().ok(), error);
        }
        r
    }

    async fn chat(
        &mut self,
        open: Vec<usize>,
        duration_ms: u64,
        accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) {
        let (at, kind) = self.labels.window();
        let limit = Duration::from_millis(duration_ms);
        // Built-in agents speak first, in turns, until they say Over.
        let bots = open
            .iter()
            .copied()
            .filter(|&a| matches!(self.who[a], Who::Bot(_)))
            .collect();
        let mut turns = ChatTurns::new(bots, CHAT_ROUNDS);
        while let Some(a) = turns.turn() {
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
            self.count(&answer);
            let text = answer.text().unwrap_or_else(|| OVER.into());
            turns.said(a, &text);
            let elapsed_ms = self.elapsed_ms();
            let m = ChatMessage {
                agent: a,
                text,
                elapsed_ms,
            };
            self.broadcast(accept(m), &at).await;
        }
        // The others talk freely until the time is up.
        let remote: Vec<usize> = open
            .into_iter()
            .filter(|&a| self.who[a] == Who::Remote)
            .collect();
        // A message's recorded time counts from the window's opening; the window lasts its
        // time live (a re-run does not wait, and counts it all the same).
        let opened = self.clock_us;
        let mut window = Listen::new(at.clone(), kind, limit);
        while let Some((a, answer)) = self.table.listen(&remote, &mut window).await {
            if let Some(text) = answer.text() {
                let at_us = opened.saturating_add(answer.time_us.unwrap_or(0));
                let m = ChatMessage {
                    agent: a,
                    text,
                    elapsed_ms: at_us / 1000,
                };
                self.broadcast(accept(m), &at).await;
            }
        }
        self.clock_us = opened.saturating_add(duration_ms.saturating_mul(1000));
    }

    fn elapsed_ms(&self) -> u64 {
        self.clock_us / 1000
    }
}

/// The seats of a live match, and the built-in agents: built-in agents made, `ws-cmd:` agents
/// launched, and every WebSocket agent waited for (one listener for the `ws` seats; a listener
/// of its own, in its network namespace where there are namespaces, for each `ws-cmd:` seat).
async fn start_seats(
    spec: &MatchSpec,
    config: &NlpConfig,
    name: Duration,
) -> Result<(Vec<Seat>, Vec<Option<Box<dyn NlAgent>>>), RefereeError> {
    // The config file's port unless the spec names one: `port=0` given is a free port of the
    // system's choosing (announced to `spec.on_listen`), never the config's.
    let port = spec.option("port", config.server.web_socket.port, "a TCP port")?;
    let secret = secret_of(config)?;
    let wait = ws::Wait {
        host: &config.server.web_socket.host,
        port,
        connect: connect_wait(spec)?,
        name,
        secret: secret.as_deref(),
        argv: substitute,
    };
    let mut bots: Vec<Option<Box<dyn NlAgent>>> = spec.seats.iter().map(|_| None).collect();
    let seats = ws::start_seats(spec, &wait, |i, s| match s {
        SeatSpec::Builtin(name) if name == SILENT_BOT => Ok(Seat::Silent),
        SeatSpec::Builtin(name) => {
            bots[i] = nl_builtin(name.as_str(), spec.seed, i);
            Ok(Seat::Builtin)
        }
        SeatSpec::Human => crate::seat::human::seat(spec, i, Some(ws::NAME_REQUEST.as_bytes())),
        _ => Err(RefereeError::UnsupportedSeat {
            game: "werewolf-nlp".into(),
            seat: i,
            form: "cmd:".into(),
            reason: "agents connect over WebSocket: use ws-cmd:<command line with {url}, or {host} and {port}> or ws".into(),
        }),
    })
    .await?;
    Ok((seats, bots))
}

impl GameDriver for WerewolfNlpDriver {
    // What the whole village hears: the talk and the votes. Whispers, divinations, guards and
    // attacks wait for the end.
    fn public_live(&self) -> fn(&str) -> bool {
        |line| match crate::driver::line_kind(line) {
            Some((e, k)) => match (e.as_str(), k.as_deref()) {
                ("header" | "game_id", _) => true,
                ("seat", Some(k)) => matches!(k, "NAME" | "TALK" | "VOTE"),
                _ => false,
            },
            None => false,
        }
    }
    fn game_type(&self) -> &'static GameType {
        &WEREWOLF_NLP_TYPE
    }

    fn check_spec(&self, spec: &MatchSpec) -> Result<(), RefereeError> {
        NLP_LIFE.check(spec).map(drop)
    }

    /// `longest_match` of the match's configuration, options and seats.
    fn longest_legal_match(&self, spec: &MatchSpec) -> Result<Option<Duration>, RefereeError> {
        let config = NLP_LIFE.check(spec)?;
        let (settings, connect) = (settings_of(&config)?, connect_wait(spec)?);
        let grace = NLP_LIFE.end_grace(&config);
        Ok(Some(longest_match(
            &settings,
            spec.seats.len(),
            connect,
            grace,
        )))
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            let config = NLP_LIFE.check(spec)?;
            let settings = Arc::new(settings_of(&config)?);
            let log_dir = spec.options.get("log_dir").map(std::path::PathBuf::from);
            let (seats, bots) =
                start_seats(spec, &config, Timeouts::of(&settings).response()).await?;
            let spec_seats: Vec<String> = spec.seats.iter().map(seat_label).collect();
            let header = header(&spec_seats, spec.seed, &config);
            let g = Game {
                settings,
                seed: spec.seed,
                who: Who::all(&spec_seats),
                bots,
                // A real time in the id, as upstream's; recorded for the re-run.
                game_id: game_id_now(spec.seed),
                json_log: log_dir.is_some() || config.json_logger.enable,
            };
            let table = NLP_LIFE.open(spec, seats, Some(&header));
            let p = NLP_LIFE
                .play(&config, table, |t| turns(t, g), ended)
                .await?;
            write_logs(log_dir.as_deref(), &config, &p)?;
            Ok(record(&spec_seats, spec.seed, p))
        })
    }

    fn replay_format(&self) -> Option<&'static str> {
        Some(FORMAT)
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        check_rerun_format(&h.format).map_err(RefereeError::BadReplay)?;
        let (g, config) = replayed_game(replay, h)?;
        let table = NLP_LIFE.replayed(replay, g.who.len(), Some(h))?;
        let p = NLP_LIFE.rerun(&config, table, |t| turns(t, g), ended)?;
        Ok(record(&h.seats, h.seed, p))
    }

    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        check_upgrade_format(&old.header.format).map_err(RefereeError::BadReplay)?;
        let mut h = old.header.clone();
        h.format = FORMAT.into();
        let (g, config) = replayed_game(old, &h)?;
        let ex = v1_exchanges(old, &g.who).map_err(RefereeError::BadReplay)?;
        let seats = ex.into_iter().map(|e| Seat::replayed(e, None)).collect();
        let mut log = ReplayLog::new();
        log.push(&h);
        let table = Table::new(seats, log);
        Ok(NLP_LIFE
            .rerun(&config, table, |t| turns(t, g), ended)?
            .seats
            .log)
    }
}

/// The game of a replay with header `h`, and its configuration: what a re-run plays on the
/// replay's [`Table::replayed`].
pub fn replayed_game(
    replay: &ParsedReplay,
    h: &ReplayHeader,
) -> Result<(Game, NlpConfig), RefereeError> {
    let mut config: NlpConfig = serde_json::from_value(h.params.clone())
        .map_err(|e| RefereeError::BadReplay(format!("params: {e}")))?;
    // A replay from before `on_error_ratio` existed was played under upstream's abort.
    if h.params["server"].get("on_error_ratio").is_none() {
        config.server.on_error_ratio = kakehiki_werewolf::nlp::settings::OnErrorRatio::Abort;
    }
    let settings = Arc::new(settings_of(&config)?);
    let game_id =
        replayed_game_id(replay, h.seats.len(), &settings).map_err(RefereeError::BadReplay)?;
    let who = Who::all(&h.seats);
    let g = Game {
        settings,
        seed: h.seed,
        bots: who.iter().map(|_| None).collect(),
        who,
        game_id,
        json_log: false,
    };
    Ok((g, config))
}

/// The match record of a played game.
fn record(spec_seats: &[String], seed: u64, p: Played<Finished>) -> MatchRecord {
    p.seats.record(report(spec_seats, seed, &p.result))
}

/// Write the upstream-format logs of a finished game (see [`log_files`]: into `dir`, beside the
/// replay, and where the configuration enables them). Returns the files written.
pub fn write_logs(
    dir: Option<&std::path::Path>,
    config: &NlpConfig,
    p: &Played<Finished>,
) -> Result<Vec<std::path::PathBuf>, RefereeError> {
    let (game, now) = (&p.game, unix_now());
    let json = p.json.as_ref();
    let json = json.map(|j| j.text(game, &p.originals, win_side(&p.result)));
    let files = log_files(dir, config, game, &p.originals, json, now.as_secs());
    let written = write_files(files)?;
    // Beside every real-time log, upstream's `games.json` (`{"id", "filename", "updated_at"}`,
    // which its log viewer reads) lists it.
    for path in written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
    {
        let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
            continue;
        };
        let at = logs::rfc3339_nanos(now.as_nanos());
        let name = stem.to_string_lossy();
        update_file(&dir.join("games.json"), |list| {
            logs::games_list_with(list, game.game_id(), &name, &at)
        })?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_crate_names_the_silent_seat_as_the_seat_layer_does() {
        assert_eq!(kakehiki_werewolf::nlp::seats::SILENT, SILENT_BOT);
    }

    fn nlp_spec(seats: usize, options: &[(&str, &str)]) -> MatchSpec {
        let mut spec = MatchSpec::new("werewolf-nlp", 1, vec![SeatSpec::Tcp; seats]);
        for (k, v) in options {
            spec.options.insert(k.to_string(), v.to_string());
        }
        spec
    }

    fn longest(spec: &MatchSpec) -> Duration {
        WEREWOLF_NLP.longest_legal_match(spec).unwrap().unwrap()
    }

    /// Upstream's defaults (action 60 s + acceptable 5 s a request, response 120 s), worked out
    /// by hand; the game's requests are counted in `kakehiki_werewolf::nlp::bound`.
    /// 5 agents: seating 5 × (30 s to connect + 120 s for the handshake + 120 s for the NAME) =
    /// 1,350 s; the game, 85 requests × 65 s = 5,525 s (day 0: 20 talks + a divine; days 1 to 3
    /// with 5, 4, 3 alive: 4 talks and a vote each, then a divine and an attack vote, but no
    /// night after day 3's exile); 2 s to exit: 6,877 s.
    /// 13 agents: seating 13 × 270 s = 3,510 s; the game, 649 requests × 65 s = 42,185 s (day 0:
    /// 2 × 12 whispers + 52 talks + a divine = 77; days 1 to 11 with 13 down to 3 alive: 4 talks
    /// and a vote each, 5 × 88 = 440; nights 1 to 10: a divine, a guard, and 3, 3, 3, 3, 3, 3, 2,
    /// 2, 1, 1 werewolves whispering 4 times each when two or more and voting to attack, 132);
    /// 2 s to exit: 45,697 s.
    #[test]
    fn the_longest_legal_match_of_the_default_villages() {
        assert_eq!(longest(&nlp_spec(5, &[])), Duration::from_secs(6_877));
        assert_eq!(longest(&nlp_spec(13, &[])), Duration::from_secs(45_697));
        // Whoever sits there.
        let mut spec = nlp_spec(5, &[]);
        spec.seats = vec![SeatSpec::Builtin(SILENT_BOT.into()); 5];
        assert_eq!(longest(&spec), Duration::from_secs(6_877));
    }

    #[test]
    fn the_longest_legal_match_grows_with_every_limit_and_the_talk() {
        let base = longest(&nlp_spec(5, &[]));
        let with = |k: &str, v: &str| longest(&nlp_spec(5, &[(k, v)]));
        // 85 requests, 1 s more each.
        assert_eq!(with("action_ms", "61000"), base + Duration::from_secs(85));
        assert_eq!(
            with("acceptable_ms", "6000"),
            base + Duration::from_secs(85)
        );
        assert_eq!(
            with("action_ms", "1000"),
            base - Duration::from_secs(85 * 59)
        );
        // Twice per seat (handshake and NAME), 5 seats.
        assert_eq!(
            with("response_ms", "121000"),
            base + Duration::from_secs(10)
        );
        assert_eq!(
            with("connect_timeout_ms", "31000"),
            base + Duration::from_secs(5)
        );
        // A day fewer: day 3's 15 requests and day 2's 22.
        assert_eq!(with("max_day", "1"), base - Duration::from_secs(37 * 65));
        // The talk limits, from a configuration file: 6 per agent is 2 more for each of the 17
        // agents talking over 4 days; a group chat of 30 s instead of the 68 talk requests.
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let six = file(
            "six.toml",
            "[game.talk.max_count]\nper_agent = 6\nper_day = 20\n",
        );
        assert_eq!(with("config", &six), base + Duration::from_secs(34 * 65));
        let chat = file("chat.toml", "[game.talk]\nduration = \"30s\"\n");
        assert_eq!(
            with("config", &chat),
            base - Duration::from_secs(68 * 65) + Duration::from_secs(4 * 30)
        );
        // A bigger village.
        assert!(longest(&nlp_spec(9, &[])) > base);
    }

    #[test]
    fn bad_options_are_typed_errors_for_the_bound_and_the_check() {
        let bad_option = |options: &[(&str, &str)], key: &str| {
            let spec = nlp_spec(5, options);
            for e in [
                WEREWOLF_NLP.longest_legal_match(&spec).unwrap_err(),
                WEREWOLF_NLP.check_spec(&spec).unwrap_err(),
            ] {
                assert!(
                    matches!(&e, RefereeError::BadOption { key: k, .. } if k == key),
                    "{e}"
                );
            }
        };
        bad_option(&[("action_ms", "soon")], "action_ms");
        bad_option(&[("response_ms", "-1")], "response_ms");
        bad_option(&[("acceptable_ms", "1.5")], "acceptable_ms");
        bad_option(&[("max_day", "many")], "max_day");
        bad_option(&[("connect_timeout_ms", "x")], "connect_timeout_ms");
        bad_option(&[("connect_timeout_ms", "86400001")], "connect_timeout_ms");
        bad_option(
            &[("connect_timeout_ms", "18446744073709551615")],
            "connect_timeout_ms",
        );
        bad_option(&[("config", "/nonexistent/nlp.toml")], "config");
        let e = WEREWOLF_NLP
            .longest_legal_match(&nlp_spec(5, &[("bogus", "1")]))
            .unwrap_err();
        assert!(matches!(e, RefereeError::UnknownOption { .. }), "{e}");
        // No role table for 7 agents.
        let e = WEREWOLF_NLP
            .longest_legal_match(&nlp_spec(7, &[]))
            .unwrap_err();
        assert!(matches!(e, RefereeError::SeatCount { got: 7, .. }), "{e}");
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
