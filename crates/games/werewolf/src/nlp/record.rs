//! What the referee writes of a natural-language game, as pure functions: the replay's header
//! and `end` event, the match report, upstream's JSON log (`json_logger`), and the seat record a
//! replay of the first format (`@1`) stands for.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use kakehiki_core::exchange::{ExchangeOutcome, SeatExchange};
use kakehiki_core::replay::{ParsedReplay, ReplayHeader};
use kakehiki_core::{MatchReport, Outcome, Score};

use super::game::GameResult;
use super::logs::{self, LogAgent};
use super::packet::Packet;
use super::seats::Who;
use super::{NlpConfig, NlpGame, NlpSettings};
use crate::Team;

/// Replay format name.
pub const FORMAT: &str = "kakehiki/werewolf-nlp-replay@2";
/// The format before the seat layer, which the referee upgrades from.
pub const FORMAT_V1: &str = "kakehiki/werewolf-nlp-replay@1";

/// Whether a replay of format `format` can be re-run: only the current format (`@1` is upgraded
/// first).
pub fn check_rerun_format(format: &str) -> Result<(), String> {
    if format == FORMAT {
        return Ok(());
    }
    Err(format!(
        "format {format:?}, not {FORMAT:?} (`kakehiki replay --upgrade` converts {FORMAT_V1:?})"
    ))
}

/// Whether a replay of format `format` can be upgraded: only `@1`.
pub fn check_upgrade_format(format: &str) -> Result<(), String> {
    if format == FORMAT_V1 {
        return Ok(());
    }
    Err(format!(
        "werewolf-nlp upgrades {FORMAT_V1:?}, not {format:?}"
    ))
}

/// The `team` of a NAME answer: the name without its trailing digits (`kanolab1` → `kanolab`).
pub fn team_of(original: &str) -> String {
    original
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

/// The replay's last event: result, roles, names and the upstream game log.
pub fn end_event(r: &GameResult, game: &NlpGame) -> Value {
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

/// The match report (seat errors are the seat layer's to fill in), with each seat's `team` (its
/// side: `VILLAGER`, `WEREWOLF`). A seat that forfeited ([`GameResult::forfeited`]) scores 0
/// whatever its team did.
pub fn report(spec_seats: &[String], seed: u64, r: &GameResult) -> MatchReport {
    let forfeited = |i: usize| r.forfeited.get(i).copied().unwrap_or(false);
    let scores = r
        .roles
        .iter()
        .enumerate()
        .map(|(i, role)| {
            Score::from_integer(i64::from(Some(role.team()) == r.winner && !forfeited(i)))
        })
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
        spec_seats.iter().map(|s| (s.clone(), Vec::new())).collect(),
    );
    rep.extra.insert(
        "winner_team".into(),
        json!(r.winner.map(|t: Team| t.name())),
    );
    // A team game has no single winning seat (`winner` stays null): the seats of the winning
    // team that did not forfeit, in seat order (empty when the game ended without a winner).
    let winner_seats: Vec<usize> = (0..r.roles.len())
        .filter(|&i| r.winner.is_some_and(|t| r.roles[i].team() == t) && !forfeited(i))
        .collect();
    rep.extra.insert("winner_seats".into(), json!(winner_seats));
    rep.extra.insert("aborted".into(), json!(r.aborted));
    let lost: Vec<usize> = (0..r.roles.len()).filter(|&i| forfeited(i)).collect();
    rep.extra.insert("forfeited_seats".into(), json!(lost));
    rep.extra.insert(
        "roles".into(),
        json!(r.roles.iter().map(|x| x.name()).collect::<Vec<_>>()),
    );
    // Each seat's side, as the AIWolf division's report has it (the ladder rates by sides).
    for (s, role) in rep.seats.iter_mut().zip(&r.roles) {
        s.extra.insert("team".into(), json!(role.team().name()));
    }
    rep
}

/// The replay header; `engine` is the referee's version.
pub fn header(spec_seats: &[String], seed: u64, c: &NlpConfig) -> ReplayHeader {
    ReplayHeader::new(
        FORMAT,
        "werewolf-nlp",
        "aiwolf-nlp",
        seed,
        spec_seats.to_vec(),
        c,
    )
}

/// Upstream's `win_side`: the winning team, or `NONE`.
pub fn win_side(r: &GameResult) -> &'static str {
    r.winner.map_or("NONE", |t| t.name())
}

/// The agents as the upstream logs name them.
pub fn log_agents(game: &NlpGame, originals: &[String]) -> Vec<LogAgent> {
    (0..game.names().len())
        .map(|i| LogAgent {
            team: originals.get(i).map(|o| team_of(o)).unwrap_or_default(),
            name: game.names()[i].to_string(),
            profile: game.profiles().get(i).cloned().flatten(),
            avatar: game.avatars().get(i).cloned().flatten(),
            role: game.roles()[i].name(),
        })
        .collect()
}

/// The upstream-format log files of a finished game, each its path and text: into `dir` (beside
/// the replay) as `<game_id>.log` (the game log), `<game_id>.realtime.jsonl` (the real-time log)
/// and, when it was recorded, `<game_id>.json` (the JSON log); and where the configuration
/// enables `game_logger` / `realtime_broadcaster` / `json_logger`, into their `output_dir` under
/// their `filename` (`{game_id}`, `{timestamp}` = `now_secs`, `{teams}` replaced), as upstream
/// does.
pub fn log_files(
    dir: Option<&Path>,
    config: &NlpConfig,
    game: &NlpGame,
    originals: &[String],
    json_log: Option<String>,
    now_secs: u64,
) -> Vec<(PathBuf, String)> {
    let agents = log_agents(game, originals);
    let game_log = logs::game_log_text(game.log());
    let realtime = logs::realtime_log(game.game_id(), &agents, game.log(), game.log_marks());
    let realtime = realtime.join("\n");
    let named = |out: &str, pattern: &str, ext: &str| {
        let name = logs::log_file_name(pattern, game.game_id(), now_secs, &agents);
        Path::new(out).join(format!("{name}.{ext}"))
    };
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    if let Some(dir) = dir {
        files.push((
            dir.join(format!("{}.log", game.game_id())),
            game_log.clone(),
        ));
        files.push((
            dir.join(format!("{}.realtime.jsonl", game.game_id())),
            realtime.clone(),
        ));
        if let Some(text) = &json_log {
            files.push((dir.join(format!("{}.json", game.game_id())), text.clone()));
        }
    }
    if let (true, Some(text)) = (config.json_logger.enable, &json_log) {
        let j = &config.json_logger;
        files.push((named(&j.output_dir, &j.filename, "json"), text.clone()));
    }
    if config.game_logger.enable {
        let g = &config.game_logger;
        files.push((named(&g.output_dir, &g.filename, "log"), game_log));
    }
    if config.realtime_broadcaster.enable {
        let r = &config.realtime_broadcaster;
        files.push((named(&r.output_dir, &r.filename, "jsonl"), realtime));
    }
    files
}

/// The id of a replay's game (its `game_id` event), once the replay's number of `seats` is
/// checked against the village of its `settings`.
pub fn replayed_game_id(
    replay: &ParsedReplay,
    seats: usize,
    settings: &NlpSettings,
) -> Result<String, String> {
    if seats != settings.agent_count {
        return Err(format!(
            "{seats} seats for {} players",
            settings.agent_count
        ));
    }
    replay
        .events
        .iter()
        .find(|(_, e)| e["event"] == "game_id")
        .and_then(|(_, e)| e["game_id"].as_str())
        .map(str::to_string)
        .ok_or_else(|| "no game_id event".into())
}

/// Upstream's JSON log (`json_logger`): every request sent to an agent, with its answer or error
/// and the wall-clock times (milliseconds since the epoch) it was sent and answered.
#[derive(Debug, Default)]
pub struct JsonLog {
    pub entries: Vec<Value>,
}

impl JsonLog {
    /// One request: the packet (its JSON is the request's text), when it was sent and answered
    /// (ms since the epoch), the answer or the error.
    pub fn entry(
        &mut self,
        p: &Packet,
        (sent, answered): (u64, u64),
        response: Option<&str>,
        error: Option<&str>,
    ) {
        let mut e = json!({
            "agent": p.info.as_ref().map(|i| &*i.agent).unwrap_or(""),
            "request": p.to_json(),
            "request_timestamp": sent,
            "response_timestamp": answered,
        });
        if let Some(r) = response.filter(|r| !r.is_empty()) {
            e["response"] = json!(r);
        }
        if let Some(x) = error {
            e["error"] = json!(x);
        }
        self.entries.push(e);
    }

    /// A group-chat message the phase accepted (upstream's talk entry): the speaker as `agent`,
    /// the broadcast packet `p` carrying it (TALK_BROADCAST or WHISPER_BROADCAST) as `request`,
    /// its text as `response`, and the talk's `time` as both times (milliseconds since the epoch,
    /// as Kakehiki's other entries). A packet that carries no talk adds nothing.
    pub fn talk(&mut self, p: &Packet) {
        let Some(t) = p.new_talk.as_ref().or(p.new_whisper.as_ref()) else {
            return;
        };
        self.entries.push(json!({
            "agent": &*t.agent,
            "request": p.to_json(),
            "request_timestamp": t.time,
            "response_timestamp": t.time,
            "response": &*t.text,
        }));
    }

    /// The file's text: `game_id`, `win_side`, `agents` (`idx`, `team`, `name` = the NAME
    /// answer, `role`) and `entries`, as upstream writes it.
    pub fn text(&self, game: &NlpGame, originals: &[String], win_side: &str) -> String {
        let agents: Vec<Value> = (0..game.names().len())
            .map(|i| {
                let o = originals.get(i).map(String::as_str).unwrap_or("");
                json!({"idx": i + 1, "team": team_of(o), "name": o,
                       "role": game.roles()[i].name()})
            })
            .collect();
        json!({"game_id": game.game_id(), "win_side": win_side, "agents": agents,
               "entries": self.entries})
        .to_string()
    }
}

/// The exchanges of each seat of a `@1` replay, its events read as `@2` records them: an `answer` is a
/// reply; a `fail` a timeout answered by the NAME check, or (`fatal`) a disconnect; a `gone` a
/// notification that could not be sent; a `chat` of a built-in agent its reply. The NAME of a
/// WebSocket agent is its `seat` event's name. Times were not recorded then. `who`: how each seat
/// is played.
pub fn v1_exchanges(
    old: &ParsedReplay,
    who: &[Who],
) -> Result<Vec<VecDeque<SeatExchange>>, String> {
    let bad = |line: usize, what: &str| format!("line {line}: {what}");
    let remote: Vec<bool> = who.iter().map(|w| *w == Who::Remote).collect();
    let n = remote.len();
    let mut names = vec![String::new(); n];
    let mut ex: Vec<VecDeque<SeatExchange>> = vec![VecDeque::new(); n];
    for (line, e) in &old.events {
        let agent = e["agent"].as_u64().map(|a| a as usize).filter(|&a| a < n);
        let request = e["request"].as_str().unwrap_or("");
        let mut x = |outcome, raw: Option<&str>, detail: Option<&str>| {
            let a = agent.ok_or_else(|| bad(*line, "an agent out of range"))?;
            let mut r = SeatExchange::new(a, "", request, outcome);
            if let Some(t) = raw {
                r.set_raw(t.as_bytes());
            }
            r.detail = detail.map(str::to_string);
            ex[a].push_back(r);
            Ok::<usize, String>(a)
        };
        match e["event"].as_str() {
            Some("seat") => {
                let a = agent.ok_or_else(|| bad(*line, "an agent out of range"))?;
                names[a] = e["name"].as_str().unwrap_or("").to_string();
                if remote[a] {
                    let name = Some(names[a].as_str()).filter(|s| !s.is_empty());
                    let (outcome, detail) = match name {
                        Some(_) => (ExchangeOutcome::Reply, None),
                        None => (ExchangeOutcome::NotRunning, Some("did not connect")),
                    };
                    x(outcome, name, detail)?;
                }
            }
            Some("answer") => {
                x(ExchangeOutcome::Reply, e["text"].as_str(), None)?;
            }
            Some("chat") if agent.is_some_and(|a| !remote[a]) => {
                x(ExchangeOutcome::Reply, e["text"].as_str(), None)?;
            }
            Some("chat") => return Err(bad(*line, "group chat of a WebSocket agent: a @1 replay of it cannot be upgraded (its windows were not recorded)")),
            Some("fail") if e["fatal"] == true => {
                x(ExchangeOutcome::Disconnect, None, Some("gone (recorded by format @1)"))?;
            }
            Some("fail") => {
                let a = x(ExchangeOutcome::Timeout, None, None)?;
                let name = names[a].clone();
                ex[a].push_back({
                    let mut r = SeatExchange::new(a, "", "NAME", ExchangeOutcome::Reply);
                    r.set_raw(name.as_bytes());
                    r
                });
            }
            Some("gone") => {
                let a = x(ExchangeOutcome::Disconnect, None, Some("send failed (recorded by format @1)"))?;
                let r = ex[a].back_mut().expect("pushed");
                r.at = format!("day {}", e["day"].as_u64().unwrap_or(0));
            }
            _ => {}
        }
    }
    Ok(ex)
}
