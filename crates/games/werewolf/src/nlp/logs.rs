//! The upstream server's log formats, derived from a finished game:
//!
//! * the game log (`game_logger`, `<name>.log`): the `day,status,…`, `talk`, `whisper`, `vote`,
//!   `attackVote`, `execute`, `divine`, `guard`, `attack` and `result` lines the game writes as it
//!   goes ([`super::NlpGame::log`]), joined by newlines;
//! * the real-time log (`realtime_broadcaster`, `<name>.jsonl`): one JSON object per event, as
//!   the upstream viewer reads it — `id`, `idx` (from 1), `day`, `is_day`, `agents` (each `idx`,
//!   `team`, `name`, `profile`, `role`, `is_alive` at that moment), `event` (`開始`, `トーク`,
//!   `囁き`, `投票`, `襲撃投票`, `追放`, `占い`, `護衛`, `襲撃`, `終了`), where the event has
//!   them `message`, `from_idx`, `to_idx`, `bubble_idx`, and `timestamp` (Unix seconds).
//!
//! The real-time log is rebuilt from the game log, which holds every event it needs, and from each
//! line's mark: when it was written and whether by day ([`super::NlpGame::log_marks`]; the start
//! is at the `game_id`'s time, by day). One difference: an execution phase in which no vote at
//! all was valid leaves no game-log line, so its empty `追放` event is not in the real-time log
//! either.

use serde::Serialize;

/// When a game-log line was written ([`super::NlpGame::log_marks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogMark {
    /// Unix milliseconds, on the game's clock.
    pub ms: u64,
    /// Whether it was the day (a day phase) or the night.
    pub is_day: bool,
}

/// One agent as the logs name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogAgent {
    /// Team (the NAME answer without its trailing digits).
    pub team: String,
    /// In-game name (`Agent[01]` or the profile's name).
    pub name: String,
    pub profile: Option<String>,
    /// The profile's avatar URL (with a profile, as upstream: empty when it has none).
    pub avatar: Option<String>,
    /// Role name (`WEREWOLF`, …).
    pub role: &'static str,
}

#[derive(Serialize)]
struct RtAgent<'a> {
    idx: usize,
    team: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avatar: Option<&'a str>,
    role: &'a str,
    is_alive: bool,
}

#[derive(Serialize)]
struct RtPacket<'a> {
    id: &'a str,
    idx: usize,
    day: i64,
    is_day: bool,
    agents: Vec<RtAgent<'a>>,
    event: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from_idx: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to_idx: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bubble_idx: Option<i64>,
    /// When the event happened, in Unix seconds (upstream's `time.Now().Unix()`).
    timestamp: u64,
}

/// The upstream file name of a log: `{game_id}`, `{timestamp}` and `{teams}` (the agents'
/// teams, sorted, joined by `_`) replaced, no extension.
pub fn log_file_name(pattern: &str, game_id: &str, timestamp: u64, agents: &[LogAgent]) -> String {
    let mut teams: Vec<&str> = agents.iter().map(|a| a.team.as_str()).collect();
    teams.sort_unstable();
    pattern
        .replace("{game_id}", game_id)
        .replace("{timestamp}", &timestamp.to_string())
        .replace("{teams}", &teams.join("_"))
}

/// The game log file's text (upstream joins the lines with newlines, no final newline).
pub fn game_log_text(lines: &[String]) -> String {
    lines.join("\n")
}

struct Builder<'a> {
    id: &'a str,
    agents: &'a [LogAgent],
    alive: Vec<bool>,
    day: i64,
    is_day: bool,
    /// The current event's time, Unix milliseconds.
    now_ms: u64,
    out: Vec<String>,
}

impl<'a> Builder<'a> {
    fn emit(
        &mut self,
        event: &str,
        message: Option<&str>,
        from: Option<i64>,
        to: Option<i64>,
        bubble: Option<i64>,
    ) {
        let p = RtPacket {
            id: self.id,
            idx: self.out.len() + 1,
            day: self.day,
            is_day: self.is_day,
            agents: self
                .agents
                .iter()
                .enumerate()
                .map(|(i, a)| RtAgent {
                    idx: i + 1,
                    team: &a.team,
                    name: &a.name,
                    profile: a.profile.as_deref(),
                    avatar: a.avatar.as_deref(),
                    role: a.role,
                    is_alive: self.alive[i],
                })
                .collect(),
            event,
            message,
            from_idx: from,
            to_idx: to,
            bubble_idx: bubble,
            timestamp: self.now_ms / 1000,
        };
        self.out
            .push(serde_json::to_string(&p).unwrap_or_else(|_| "{}".into()));
    }

    fn agent(&self, field: Option<&str>) -> Option<i64> {
        let a = field?.parse::<i64>().ok()?;
        (a >= 1 && (a as usize) <= self.agents.len()).then_some(a)
    }

    fn kill(&mut self, a: i64) {
        if let Some(x) = self.alive.get_mut((a - 1) as usize) {
            *x = false;
        }
    }
}

/// Unix time in nanoseconds as RFC 3339 in UTC with nanoseconds, as Go's `time.Time` writes it
/// in JSON (`2025-01-01T00:00:00.123456789Z`).
pub fn rfc3339_nanos(unix_nanos: u128) -> String {
    let since = std::time::Duration::new(
        (unix_nanos / 1_000_000_000) as u64,
        (unix_nanos % 1_000_000_000) as u32,
    );
    let t = std::time::UNIX_EPOCH + since;
    humantime::format_rfc3339_nanos(t).to_string()
}

/// The real-time broadcaster's `games.json` after a game's file was written: upstream's list of
/// `{"id", "filename" (without `.jsonl`), "updated_at"}`, the game's entry replaced or added.
/// `existing` is the file's text (anything but a JSON array counts as an empty list).
pub fn games_list_with(existing: &str, id: &str, filename: &str, updated_at: &str) -> String {
    let mut items: Vec<serde_json::Value> = serde_json::from_str(existing).unwrap_or_default();
    items.retain(|v| v["id"] != id);
    items.push(serde_json::json!({"id": id, "filename": filename, "updated_at": updated_at}));
    serde_json::Value::Array(items).to_string()
}

/// The real-time log (JSON lines, no final newline) of a game from its game log and each line's
/// mark (`marks`, one per line: its time and time of day; a line without one keeps the mark
/// before it). The start is at the `game_id`'s time, by day; the end at the last line's mark.
/// Lines that are not game-log lines are skipped.
pub fn realtime_log(
    game_id: &str,
    agents: &[LogAgent],
    game_log: &[String],
    marks: &[LogMark],
) -> Vec<String> {
    let start_ms = ulid::Ulid::from_string(game_id).map_or(0, |u| u.timestamp_ms());
    let mut b = Builder {
        id: game_id,
        agents,
        alive: vec![true; agents.len()],
        day: 0,
        is_day: true,
        now_ms: start_ms,
        out: Vec::new(),
    };
    b.emit("開始", Some("ゲームが開始されました"), None, None, None);
    let mut winner: Option<String> = None;
    for (i, line) in game_log.iter().enumerate() {
        if let Some(m) = marks.get(i) {
            (b.now_ms, b.is_day) = (m.ms, m.is_day);
        }
        let f: Vec<&str> = line.splitn(6, ',').collect();
        let Some(day) = f.first().and_then(|d| d.parse::<i64>().ok()) else {
            continue;
        };
        let kind = f.get(1).copied().unwrap_or("");
        b.day = day;
        match kind {
            "status" => {
                if let Some(a) = b.agent(f.get(2).copied()) {
                    b.alive[(a - 1) as usize] = f.get(4) == Some(&"ALIVE");
                }
            }
            "talk" | "whisper" => {
                let text = f.get(5).copied().unwrap_or("");
                let who = b.agent(f.get(4).copied());
                let ev = if kind == "talk" {
                    "トーク"
                } else {
                    "囁き"
                };
                b.emit(ev, Some(text), None, None, who);
            }
            "vote" | "attackVote" => {
                let from = b.agent(f.get(2).copied());
                let to = b.agent(f.get(3).copied());
                let ev = if kind == "vote" {
                    "投票"
                } else {
                    "襲撃投票"
                };
                b.emit(ev, None, from, to, None);
            }
            "execute" => {
                let to = b.agent(f.get(2).copied());
                if let Some(t) = to {
                    b.kill(t);
                }
                b.emit("追放", None, None, to, None);
            }
            "divine" | "guard" => {
                let from = b.agent(f.get(2).copied());
                let to = b.agent(f.get(3).copied());
                let ev = if kind == "divine" { "占い" } else { "護衛" };
                b.emit(ev, None, from, to, None);
            }
            "attack" => {
                let to = b.agent(f.get(2).copied());
                match (to, f.get(3) == Some(&"true")) {
                    (Some(t), true) => {
                        b.kill(t);
                        b.emit("襲撃", None, None, Some(t), None);
                    }
                    (Some(t), false) => b.emit("襲撃", None, Some(-1), Some(t), None),
                    (None, _) => b.emit("襲撃", None, None, None, None),
                }
            }
            "result" => {
                winner = f.get(4).map(|w| w.to_string());
            }
            _ => {}
        }
    }
    let w = winner.unwrap_or_else(|| "NONE".into());
    b.emit("終了", Some(&w), None, None, None);
    b.out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::Value;

    use super::*;
    use crate::nlp::inproc::play_builtin;
    use crate::nlp::NlpSettings;

    fn agents_of(game: &crate::nlp::NlpGame, teams: &[&str]) -> Vec<LogAgent> {
        (0..game.names().len())
            .map(|i| LogAgent {
                team: teams[i % teams.len()].into(),
                name: game.names()[i].to_string(),
                profile: None,
                avatar: None,
                role: game.roles()[i].name(),
            })
            .collect()
    }

    #[test]
    fn the_realtime_log_follows_the_game_log_event_for_event() {
        let names = ["sample"; 13];
        let settings = Arc::new(NlpSettings::defaults(13).unwrap());
        let (r, game) = play_builtin(settings, 41, &names).unwrap();
        let agents = agents_of(&game, &["kanolab", "teamb"]);
        let rt: Vec<Value> = realtime_log(game.game_id(), &agents, game.log(), game.log_marks())
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let log = game.log();
        let count = |k: &str| {
            log.iter()
                .filter(|l| l.split(',').nth(1) == Some(k))
                .count()
        };
        let events = |e: &str| rt.iter().filter(|p| p["event"] == e).count();
        assert_eq!(rt[0]["event"], "開始");
        assert_eq!(rt[0]["message"], "ゲームが開始されました");
        assert_eq!(rt[0]["id"], game.game_id());
        assert_eq!(events("トーク"), count("talk"));
        assert_eq!(events("囁き"), count("whisper"));
        assert_eq!(events("投票"), count("vote"));
        assert_eq!(events("襲撃投票"), count("attackVote"));
        assert_eq!(events("追放"), count("execute"));
        assert_eq!(events("占い"), count("divine"));
        assert_eq!(events("護衛"), count("guard"));
        assert_eq!(events("襲撃"), count("attack"));
        let last = rt.last().unwrap();
        assert_eq!(last["event"], "終了");
        assert_eq!(last["message"], r.winner.unwrap().name());
        for (i, p) in rt.iter().enumerate() {
            assert_eq!(p["idx"], i + 1);
            assert_eq!(p["agents"].as_array().unwrap().len(), 13);
            assert_eq!(p["agents"][1]["team"], "teamb");
            assert_eq!(p["agents"][0]["name"], "Agent[01]");
            assert!(p["agents"][0].get("profile").is_none());
        }
        // Talks carry the speaker and the text, by day; votes are at night.
        let talks: Vec<&String> = log.iter().filter(|l| l.contains(",talk,")).collect();
        let rt_talks: Vec<&Value> = rt.iter().filter(|p| p["event"] == "トーク").collect();
        for (l, p) in talks.iter().zip(&rt_talks) {
            let f: Vec<&str> = l.splitn(6, ',').collect();
            assert_eq!(p["day"], f[0].parse::<i64>().unwrap());
            assert_eq!(p["bubble_idx"], f[4].parse::<i64>().unwrap());
            assert_eq!(p["message"], f[5]);
            assert_eq!(p["is_day"], true);
        }
        for p in rt.iter().filter(|p| p["event"] == "投票") {
            assert_eq!(p["is_day"], false);
            assert!(p["from_idx"].is_i64() && p["to_idx"].is_i64());
        }
        // Day 0's first whispers are in the morning.
        let first_whisper = rt.iter().find(|p| p["event"] == "囁き").unwrap();
        assert_eq!(
            (
                first_whisper["day"].as_i64(),
                first_whisper["is_day"].as_bool()
            ),
            (Some(0), Some(true))
        );
        // The executed agent is dead from its execution on.
        let ex = rt.iter().position(|p| p["event"] == "追放").unwrap();
        let who = rt[ex]["to_idx"].as_u64().unwrap() as usize;
        assert!(rt[..ex]
            .iter()
            .all(|p| p["agents"][who - 1]["is_alive"] == true));
        assert!(rt[ex..]
            .iter()
            .all(|p| p["agents"][who - 1]["is_alive"] == false));
        // Final alive flags agree with the result.
        for (i, alive) in r.alive.iter().enumerate() {
            assert_eq!(last["agents"][i]["is_alive"], *alive);
            assert_eq!(last["agents"][i]["role"], r.roles[i].name());
        }
    }

    #[test]
    fn each_event_is_stamped_in_seconds_and_timed_by_its_lines_mark_the_start_by_the_games() {
        let agents: Vec<LogAgent> = (1..=5)
            .map(|i| LogAgent {
                team: "t".into(),
                name: format!("Agent[0{i}]"),
                profile: None,
                avatar: None,
                role: "VILLAGER",
            })
            .collect();
        // 2025-01-01T00:00:00.000Z.
        let start = 1_735_689_600_000;
        let id = crate::nlp::game::game_id_at(start, 3);
        let lines: Vec<String> = [
            "0,status,1,VILLAGER,ALIVE,t1,Agent[01]",
            "0,talk,0,0,1,hello",
            "0,talk,1,0,2,hi",
            "1,vote,1,2",
            "1,execute,2,VILLAGER",
            "1,result,4,0,VILLAGER",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // An exile by day (a day phase with the execution), then the night.
        let marks = [
            (start, true),
            (start + 1_999, true),
            (start + 2_000, true),
            (start + 65_432, true),
            (start + 65_900, false),
        ]
        .map(|(ms, is_day)| LogMark { ms, is_day });
        let rt: Vec<Value> = realtime_log(&id, &agents, &lines, &marks)
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let stamps: Vec<(&str, u64, bool)> = rt
            .iter()
            .map(|p| {
                (
                    p["event"].as_str().unwrap(),
                    p["timestamp"].as_u64().unwrap(),
                    p["is_day"].as_bool().unwrap(),
                )
            })
            .collect();
        let s = start / 1000;
        assert_eq!(
            stamps,
            vec![
                ("開始", s, true),
                ("トーク", s + 1, true),
                ("トーク", s + 2, true),
                ("投票", s + 65, true),
                ("追放", s + 65, false),
                // The result line has no mark of its own: the end keeps the last one.
                ("終了", s + 65, false),
            ]
        );
    }

    #[test]
    fn file_names_follow_the_upstream_pattern() {
        let a = |t: &str| LogAgent {
            team: t.into(),
            name: "Agent[01]".into(),
            profile: None,
            avatar: None,
            role: "SEER",
        };
        let agents = [a("zeta"), a("alpha"), a("kanolab")];
        assert_eq!(
            log_file_name("{timestamp}_{teams}", "00AB", 1700000000, &agents),
            "1700000000_alpha_kanolab_zeta"
        );
        assert_eq!(
            log_file_name("game-{game_id}", "00AB", 1, &agents),
            "game-00AB"
        );
        assert_eq!(
            game_log_text(&["0,status,1".into(), "0,result".into()]),
            "0,status,1\n0,result"
        );
    }

    #[test]
    fn a_guarded_attack_and_an_empty_one_are_told_apart() {
        let agents: Vec<LogAgent> = (1..=5)
            .map(|i| LogAgent {
                team: "t".into(),
                name: format!("Agent[0{i}]"),
                profile: Some("p".into()),
                avatar: Some("http://a/1.png".into()),
                role: "VILLAGER",
            })
            .collect();
        let lines: Vec<String> = [
            "1,attack,3,false",
            "2,attack,-1,true",
            "3,attack,4,true",
            "3,status,4,VILLAGER,DEAD,t1,Agent[04]",
            "3,result,3,1,WEREWOLF",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let night = [LogMark {
            ms: 0,
            is_day: false,
        }; 5];
        let rt: Vec<Value> = realtime_log("X", &agents, &lines, &night)
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            (rt[1]["from_idx"].as_i64(), rt[1]["to_idx"].as_i64()),
            (Some(-1), Some(3))
        );
        assert!(rt[2].get("to_idx").is_none() && rt[2].get("from_idx").is_none());
        assert_eq!(rt[3]["to_idx"], 4);
        assert_eq!(rt[3]["agents"][3]["is_alive"], false);
        assert_eq!(rt[3]["agents"][0]["profile"], "p");
        let list = games_list_with("[]", "A", "a_t", "T1");
        let list = games_list_with(&list, "B", "b_t", "T2");
        let list: Value = serde_json::from_str(&games_list_with(&list, "A", "a_t", "T3")).unwrap();
        assert_eq!(
            list,
            serde_json::json!([
                {"id": "B", "filename": "b_t", "updated_at": "T2"},
                {"id": "A", "filename": "a_t", "updated_at": "T3"}
            ])
        );
        let fresh: Value =
            serde_json::from_str(&games_list_with("garbage", "A", "f", "T")).unwrap();
        assert_eq!(
            fresh,
            serde_json::json!([{"id": "A", "filename": "f", "updated_at": "T"}])
        );
        assert_eq!(rfc3339_nanos(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(
            rfc3339_nanos(1_735_689_600_123_456_789),
            "2025-01-01T00:00:00.123456789Z"
        );
        assert_eq!(
            rfc3339_nanos(951_827_696_000_000_000),
            "2000-02-29T12:34:56.000000000Z"
        );
        // Upstream's `avatar` beside the profile.
        assert_eq!(rt[3]["agents"][0]["avatar"], "http://a/1.png");
        assert_eq!(rt[4]["event"], "終了");
        assert_eq!(rt[4]["message"], "WEREWOLF");
        assert_eq!(rt[4]["is_day"], false, "the end is announced at night");
    }
}
