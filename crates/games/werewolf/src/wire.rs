//! The AIWolf 0.6.x wire format as pure functions (§4): packets (compact JSON, alphabetical keys,
//! pure ASCII), history diffs, and the parsing of agents' replies.

use std::fmt::Write as _;

use crate::engine::{Reply, Werewolf};
use crate::info::GameInfo;
use crate::rng::wire_random_seed;
use crate::settings::Settings;
use crate::talk::Talk;
use crate::types::{Judge, Request, Role, Vote};

/// Longest reply line accepted (§4.1); longer lines are invalid replies.
pub const MAX_REPLY_BYTES: usize = 64 * 1024;

/// Append `s` as a JSON string: ASCII only, non-ASCII as `\uXXXX` (surrogate pairs above U+FFFF).
pub fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) == 0x7f || !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{:04x}", u);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_agent(out: &mut String, a: Option<usize>) {
    match a {
        Some(a) => {
            let _ = write!(out, "{a}");
        }
        None => out.push_str("-1"),
    }
}

fn write_talks(out: &mut String, talks: &[Talk]) {
    out.push('[');
    for (i, t) in talks.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "{{\"agent\":{},\"day\":{},\"idx\":{},\"text\":",
            t.agent, t.day, t.idx
        );
        write_json_str(out, &t.text);
        let _ = write!(out, ",\"turn\":{}}}", t.turn);
    }
    out.push(']');
}

fn write_votes(out: &mut String, votes: &[Vote]) {
    out.push('[');
    for (i, v) in votes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "{{\"agent\":{},\"day\":{},\"target\":{}}}",
            v.agent, v.day, v.target
        );
    }
    out.push(']');
}

fn write_judge(out: &mut String, j: &Option<Judge>) {
    match j {
        None => out.push_str("null"),
        Some(j) => {
            let _ = write!(
                out,
                "{{\"agent\":{},\"day\":{},\"result\":\"{}\",\"target\":{}}}",
                j.agent,
                j.day,
                j.result.name(),
                j.target
            );
        }
    }
}

fn write_int_map(out: &mut String, m: &[(usize, u32)]) {
    out.push('{');
    for (i, (a, v)) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{a}\":{v}");
    }
    out.push('}');
}

/// Append a gameInfo object (§4.6): all 21 keys, alphabetical.
pub fn write_game_info(out: &mut String, gi: &GameInfo<'_>) {
    let _ = write!(out, "{{\"agent\":{},\"attackVoteList\":", gi.agent);
    write_votes(out, gi.attack_vote_list);
    out.push_str(",\"attackedAgent\":");
    write_agent(out, gi.attacked_agent);
    let _ = write!(
        out,
        ",\"cursedFox\":-1,\"day\":{},\"divineResult\":",
        gi.day
    );
    write_judge(out, &gi.divine_result);
    out.push_str(",\"executedAgent\":");
    write_agent(out, gi.executed_agent);
    out.push_str(",\"existingRoleList\":[");
    for (i, r) in gi.existing_role_list.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{}\"", r.name());
    }
    out.push_str("],\"guardedAgent\":");
    write_agent(out, gi.guarded_agent);
    out.push_str(",\"lastDeadAgentList\":[");
    for (i, a) in gi.last_dead_agent_list.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{a}");
    }
    out.push_str("],\"latestAttackVoteList\":");
    write_votes(out, gi.latest_attack_vote_list);
    out.push_str(",\"latestExecutedAgent\":");
    write_agent(out, gi.latest_executed_agent);
    out.push_str(",\"latestVoteList\":");
    write_votes(out, gi.latest_vote_list);
    out.push_str(",\"mediumResult\":");
    write_judge(out, &gi.medium_result);
    out.push_str(",\"remainTalkMap\":");
    write_int_map(out, &gi.remain_talk_map);
    out.push_str(",\"remainWhisperMap\":");
    write_int_map(out, &gi.remain_whisper_map);
    out.push_str(",\"roleMap\":{");
    for (i, (a, r)) in gi.role_map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{a}\":\"{}\"", r.name());
    }
    out.push_str("},\"statusMap\":{");
    for (i, s) in gi.status_map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{}\":\"{}\"", i + 1, s.name());
    }
    out.push_str("},\"talkList\":");
    write_talks(out, gi.talk_list);
    out.push_str(",\"voteList\":");
    write_votes(out, gi.vote_list);
    out.push_str(",\"whisperList\":");
    write_talks(out, gi.whisper_list);
    out.push('}');
}

/// Append a gameSetting object (§4.7): all 19 keys, alphabetical (`roleNumMap` too).
pub fn write_game_setting(out: &mut String, s: &Settings, random_seed: i64) {
    let b = |x: bool| if x { "true" } else { "false" };
    let _ = write!(
        out,
        "{{\"enableNoAttack\":{},\"enableNoExecution\":{},\"enableRoleRequest\":{},\"maxAttackRevote\":{},\
         \"maxRevote\":{},\"maxSkip\":{},\"maxTalk\":{},\"maxTalkTurn\":{},\"maxWhisper\":{},\"maxWhisperTurn\":{},\
         \"playerNum\":{},\"randomSeed\":{},\"roleNumMap\":{{\"ANY\":0",
        b(s.enable_no_attack),
        b(s.enable_no_execution),
        b(s.enable_role_request),
        s.max_attack_revote,
        s.max_revote,
        s.max_skip,
        s.max_talk,
        s.max_talk_turn,
        s.max_whisper,
        s.max_whisper_turn,
        s.player_num(),
        random_seed
    );
    let mut roles: Vec<Role> = Role::FILL_ORDER.to_vec();
    roles.sort_by_key(|r| r.name());
    for r in roles {
        let _ = write!(out, ",\"{}\":{}", r.name(), s.count(r));
    }
    let _ = write!(
        out,
        "}},\"talkOnFirstDay\":{},\"timeLimit\":{},\"validateUtterance\":{},\"votableInFirstDay\":false,\
         \"voteVisible\":{},\"whisperBeforeRevote\":{}}}",
        b(s.talk_on_first_day),
        s.time_limit_ms,
        b(s.validate_utterance),
        b(s.vote_visible),
        b(s.whisper_before_revote)
    );
}

/// The packet's content, before encoding.
#[allow(clippy::large_enum_variant)] // short-lived, built per packet
#[derive(Debug, Clone, PartialEq)]
pub enum Body<'a> {
    /// NAME, ROLE: request only.
    Bare,
    /// gameInfo, optionally with gameSetting.
    Info {
        info: GameInfo<'a>,
        setting: Option<(&'a Settings, i64)>,
    },
    /// The two history diffs.
    Diff {
        talk: &'a [Talk],
        whisper: &'a [Talk],
    },
}

/// Encode one packet line (ending in `\n`).
pub fn encode_packet(request: Request, body: &Body<'_>) -> String {
    let mut out = String::with_capacity(match body {
        Body::Bare => 100,
        Body::Info { .. } => 2048,
        Body::Diff { .. } => 256,
    });
    out.push_str("{\"gameInfo\":");
    match body {
        Body::Info { info, .. } => write_game_info(&mut out, info),
        _ => out.push_str("null"),
    }
    out.push_str(",\"gameSetting\":");
    match body {
        Body::Info {
            setting: Some((s, seed)),
            ..
        } => write_game_setting(&mut out, s, *seed),
        _ => out.push_str("null"),
    }
    let _ = write!(out, ",\"request\":\"{}\",\"talkHistory\":", request.name());
    match body {
        Body::Diff { talk, whisper } => {
            write_talks(&mut out, talk);
            out.push_str(",\"whisperHistory\":");
            write_talks(&mut out, whisper);
        }
        _ => out.push_str("null,\"whisperHistory\":null"),
    }
    out.push_str("}\n");
    out
}

/// The NAME packet.
pub fn name_packet() -> String {
    encode_packet(Request::Name, &Body::Bare)
}

/// Per-game packet state: the history counters of §4.5.
#[derive(Debug, Clone)]
pub struct Histories {
    talks_sent: Vec<usize>,
    whispers_sent: Vec<usize>,
}

impl Histories {
    pub fn new(players: usize) -> Self {
        Histories {
            talks_sent: vec![0; players],
            whispers_sent: vec![0; players],
        }
    }

    /// The packet body `agent` gets for `request` now (advancing the counters for diffs).
    pub fn body<'a>(&mut self, g: &'a Werewolf, agent: usize, request: Request) -> Body<'a> {
        let i = agent - 1;
        let info = |reveal: bool| GameInfo::for_agent(g, agent, reveal);
        let full = match request {
            Request::Name | Request::Role => return Body::Bare,
            Request::Initialize => {
                self.talks_sent[i] = 0;
                self.whispers_sent[i] = 0;
                return Body::Info {
                    info: info(false),
                    setting: Some((g.settings(), wire_random_seed(g.seed()))),
                };
            }
            Request::DailyInitialize => {
                self.talks_sent[i] = 0;
                self.whispers_sent[i] = 0;
                return Body::Info {
                    info: info(false),
                    setting: None,
                };
            }
            Request::Finish => {
                return Body::Info {
                    info: info(true),
                    setting: None,
                }
            }
            Request::Talk | Request::DailyFinish => false,
            Request::Vote => g.has_latest_votes(),
            Request::Attack => g.has_latest_attack_votes() || g.executed_today().is_some(),
            Request::Divine | Request::Guard | Request::Whisper => g.executed_today().is_some(),
        };
        if full {
            return Body::Info {
                info: info(false),
                setting: None,
            };
        }
        let talks = g.talks();
        let talk = &talks[self.talks_sent[i].min(talks.len())..];
        self.talks_sent[i] = talks.len();
        let whisper: &[Talk] = if g.is_wolf(agent) {
            let w = g.whispers();
            let d = &w[self.whispers_sent[i].min(w.len())..];
            self.whispers_sent[i] = w.len();
            d
        } else {
            &[]
        };
        Body::Diff { talk, whisper }
    }

    /// The encoded packet `agent` gets for `request` now.
    pub fn packet(&mut self, g: &Werewolf, agent: usize, request: Request) -> String {
        let body = self.body(g, agent, request);
        encode_packet(request, &body)
    }
}

/// Decode a received line: UTF-8 with invalid bytes replaced, terminator removed.
pub fn decode_line(bytes: &[u8]) -> String {
    let mut b = bytes;
    while let Some((&last, rest)) = b.split_last() {
        if last == b'\n' || last == b'\r' {
            b = rest;
        } else {
            break;
        }
    }
    String::from_utf8_lossy(b).into_owned()
}

fn parse_seat(digits: &str, players: usize) -> Option<usize> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    (n >= 1 && n as usize <= players).then_some(n as usize)
}

/// Read a target reply (§4.8): the reference regex `\{"agentIdx":(\d+)\}` anywhere; a JSON object
/// whose `agentIdx` is an integer or a digit string; `Agent[NN]`; a bare integer. `None` if no form
/// matches or the number is not a seat 1…`players`.
pub fn parse_target(line: &str, players: usize) -> Option<usize> {
    const KEY: &str = "{\"agentIdx\":";
    let mut rest = line;
    while let Some(p) = rest.find(KEY) {
        let after = &rest[p + KEY.len()..];
        let digits_len = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits_len > 0 && after.as_bytes().get(digits_len) == Some(&b'}') {
            return parse_seat(&after[..digits_len], players);
        }
        rest = &rest[p + 1..];
    }
    let t = crate::talk::trim_reply(line);
    if t.starts_with('{') {
        if let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(t) {
            return match m.get("agentIdx") {
                Some(serde_json::Value::Number(n)) => n
                    .as_u64()
                    .and_then(|n| (n >= 1 && n as usize <= players).then_some(n as usize)),
                Some(serde_json::Value::String(s)) => parse_seat(s.trim(), players),
                _ => None,
            };
        }
        return None;
    }
    if let Some(inner) = t.strip_prefix("Agent[").and_then(|s| s.strip_suffix(']')) {
        return parse_seat(inner, players);
    }
    parse_seat(t, players)
}

/// The replay's label for the moment of a request (§2): `day N`, and within a talk or whisper
/// session `day N talk K` / `day N whisper K` (K: the engine's turn).
/// `request` is the request's name ([`Request::name`]).
pub fn label(day: u32, request: &str, turn: u32) -> String {
    match request {
        "TALK" => format!("day {day} talk {turn}"),
        "WHISPER" => format!("day {day} whisper {turn}"),
        _ => format!("day {day}"),
    }
}

/// The line a built-in agent's reply would be on the wire (none: no answer).
pub fn render_reply(r: &Reply) -> Option<String> {
    match r {
        Reply::Silent => None,
        Reply::Text(t) => Some(t.clone()),
        Reply::Target(Some(n)) => Some(format!("{{\"agentIdx\":{n}}}")),
        Reply::Target(None) => Some(String::new()),
    }
}

/// Whether `line` has the form of a reply to `request`: a talk sentence, `Over`, `Skip` or
/// nothing for TALK and WHISPER, one agent for the four target requests, a role, `none` or `any`
/// for ROLE, anything for NAME; never for a packet that asks for no reply. The form only, not
/// whether the game can use it (a dead target has the form): a line without it may be the
/// seat's answer to an earlier packet, arriving late.
pub fn has_reply_form(request: Request, line: &str, players: usize) -> bool {
    let t = crate::talk::trim_reply(line);
    match request {
        Request::Name => true,
        Request::Role => {
            let t = t.to_ascii_uppercase();
            Role::from_name(&t).is_some() || t == "NONE" || t == "ANY"
        }
        Request::Talk | Request::Whisper => t.is_empty() || crate::talk::is_valid(t),
        r if r.is_target() => parse_target(line, players).is_some(),
        _ => false,
    }
}

/// The engine reply for a received line (§4.8): `None` is no answer; a line cut at
/// [`MAX_REPLY_BYTES`] (`overlong`) is an invalid one.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_forms() {
        assert_eq!(parse_target("{\"agentIdx\":3}", 15), Some(3));
        assert_eq!(parse_target("xx{\"agentIdx\":12}yy", 15), Some(12));
        assert_eq!(parse_target("{\"agentIdx\": 3}", 15), Some(3));
        assert_eq!(parse_target("{ \"agentIdx\" : \"7\" }", 15), Some(7));
        assert_eq!(parse_target("{\"agentIdx\":3,\"x\":1}", 15), Some(3));
        assert_eq!(parse_target("Agent[05]", 15), Some(5));
        assert_eq!(parse_target(" 14 ", 15), Some(14));
        assert_eq!(parse_target("{\"agentIdx\":0}", 15), None);
        assert_eq!(parse_target("{\"agentIdx\":-1}", 15), None);
        assert_eq!(parse_target("{\"agentIdx\":99}", 15), None);
        assert_eq!(
            parse_target("{\"agentIdx\":99999999999999999999999}", 15),
            None
        );
        assert_eq!(parse_target("", 15), None);
        assert_eq!(parse_target("null", 15), None);
        assert_eq!(parse_target("{\"agentIdx\":null}", 15), None);
        assert_eq!(parse_target("{broken", 15), None);
        assert_eq!(parse_target("Agent[5", 15), None);
        assert_eq!(parse_target("3.0", 15), None);
    }

    #[test]
    fn strings_are_ascii_escaped() {
        let mut s = String::new();
        write_json_str(&mut s, "a\"b\\c\n\u{e9}\u{1f600}\u{1}");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\\u0001\"");
        let v: String = serde_json::from_str(&s).unwrap();
        assert_eq!(v, "a\"b\\c\n\u{e9}\u{1f600}\u{1}");
    }

    #[test]
    fn decode_strips_terminators_and_replaces_bad_bytes() {
        assert_eq!(decode_line(b"abc\r\n"), "abc");
        assert_eq!(decode_line(b"a\xffb\n"), "a\u{fffd}b");
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

    #[test]
    fn reply_forms() {
        for (request, line, form) in [
            (Request::Talk, "Over", true),
            (Request::Talk, " VOTE Agent[03] ", true),
            (Request::Talk, "", true),
            (Request::Talk, "ok", false),
            (Request::Talk, "15", false),
            (Request::Whisper, "ATTACK Agent[02]", true),
            (Request::Vote, "{\"agentIdx\":3}", true),
            (Request::Vote, "15", true),
            (Request::Vote, "Over", false),
            (Request::Attack, "ok", false),
            (Request::Role, "seer", true),
            (Request::Role, "none", true),
            (Request::Role, "ok", false),
            (Request::Name, "ok", true),
            (Request::Initialize, "ok", false),
            (Request::Finish, "", false),
        ] {
            assert_eq!(
                has_reply_form(request, line, 15),
                form,
                "{request:?} {line:?}"
            );
        }
    }
}
