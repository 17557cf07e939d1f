//! The referee's side of the wire (spec diplomacy §6, `docs/protocols/diplomacy.md`): the JSON
//! lines sent to each power, the replies read back as typed results or faults, and the public
//! records of the replay. Pure: no processes, clocks or I/O.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use kakehiki_core::replay::ReplayHeader;
use kakehiki_core::{Chance, Dynamics, GameType, Information, MatchReport, Outcome, Transport};

use crate::service::state_json;
use crate::{standard, BuiltinBot, DiplomacyGame, EndReason, PhaseKind, PhaseRecord, Power, Rules};

/// The replay format: a seat record line per request (`kakehiki_core::exchange`) and the game's
/// events (`start`, `press`, `phase` with the messages sent, `end_message`, `end`, `report`).
pub const FORMAT: &str = "kakehiki/diplomacy-replay@2";
/// The format before the seat record (`exchanges` inside the game's events), see
/// [`crate::replay_v1`].
pub const FORMAT_V1: &str = "kakehiki/diplomacy-replay@1";

/// The game's declaration.
pub static GAME_TYPE: GameType = GameType {
    name: "diplomacy",
    title: "Diplomacy: standard map, DATC v3.1 adjudicator, optional press",
    min_seats: 7,
    max_seats: 7,
    default_seats: 7,
    dynamics: Dynamics::Simultaneous,
    information: Information::Imperfect,
    chance: Chance::None,
    transports: &[Transport::Stdio, Transport::Tcp],
    rule_sets: &["standard"],
    builtin_bots: crate::BUILTIN_BOTS,
};

/// A replay's header.
pub fn header(seed: u64, seats: &[String], params: &Params) -> ReplayHeader {
    ReplayHeader::new(
        FORMAT,
        "diplomacy",
        "standard",
        seed,
        seats.to_vec(),
        params,
    )
}

/// A header's parameters, checked (seven seats).
pub fn params_of(h: &ReplayHeader) -> Result<Params, String> {
    if h.seats.len() != 7 {
        return Err(format!("{} seats, expected 7", h.seats.len()));
    }
    serde_json::from_value(h.params.clone()).map_err(|e| format!("bad header params: {e}"))
}

/// Longest reply line accepted (1 MiB); a longer one is an invalid reply.
pub const MAX_LINE: usize = 1 << 20;

/// Time and press limits (the start message's `limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub start_ms: u64,
    pub movement_ms: u64,
    pub retreat_ms: u64,
    pub adjustment_ms: u64,
    pub press_ms: u64,
    pub press_messages: usize,
    pub press_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            start_ms: 10_000,
            movement_ms: 5_000,
            retreat_ms: 2_000,
            adjustment_ms: 2_000,
            press_ms: 2_000,
            press_messages: 6,
            press_chars: 1_000,
        }
    }
}

/// The start message's `rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleParams {
    pub solo_centers: usize,
    pub max_year: u16,
    pub press_rounds: u32,
    pub draw_votes: bool,
}

/// A match's parameters, as the replay header's `params` holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    pub rules: RuleParams,
    pub limits: Limits,
    /// The DAIDE press level of the DAIDE seats (`docs/protocols/diplomacy-daide.md`): 0, no
    /// press for them; 10, 20 or 30 with press rounds. Absent from a header: 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub daide_level: u8,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// The DAIDE press levels a match may have.
pub const DAIDE_LEVELS: [u8; 4] = [0, 10, 20, 30];

impl Params {
    /// The engine's rules.
    pub fn engine_rules(&self) -> Rules {
        Rules {
            solo_centers: self.rules.solo_centers,
            max_year: self.rules.max_year,
            press_rounds: self.rules.press_rounds,
            draw_votes: self.rules.draw_votes,
        }
    }

    /// The time a power has for its orders in a phase of `kind`.
    pub fn orders_ms(&self, kind: PhaseKind) -> u64 {
        match kind {
            PhaseKind::Movement => self.limits.movement_ms,
            PhaseKind::Retreat => self.limits.retreat_ms,
            PhaseKind::Adjustment => self.limits.adjustment_ms,
        }
    }
}

/// The options a match takes: the parameters, and where `tcp` seats connect (`host`, `port`)
/// within how long (`connect_ms`).
pub const OPTION_KEYS: &[&str] = &[
    "max_year",
    "solo_centers",
    "press_rounds",
    "draw_votes",
    "start_ms",
    "movement_ms",
    "retreat_ms",
    "adjustment_ms",
    "press_ms",
    "press_messages",
    "press_chars",
    "daide_level",
    "host",
    "port",
    "connect_ms",
];

/// An option with a value out of its range or of the wrong form.
pub use kakehiki_core::BadOption;

/// Milliseconds, as every time limit is given.
pub const MS: &str = "milliseconds, 1 to 600000";

impl Params {
    /// The parameters given as options (`max_year=1910`, `movement_ms=1000`): `get` returns
    /// an option's text, if given; every value is checked against its range.
    pub fn from_options<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Params, BadOption> {
        const CENTRES: &str = "a number of centres, 1 to 34";
        const YEAR: &str = "a year, 1901 to 9999";
        const ROUNDS: &str = "a number of rounds, 0 to 20";
        const MSGS: &str = "a number of messages, 0 to 100";
        const CHARS: &str = "a number of characters, 1 to 100000";
        let d = Limits::default();
        let keys: [(&str, u64, std::ops::RangeInclusive<u64>, &'static str); 10] = [
            ("solo_centers", 18, 1..=34, CENTRES),
            ("max_year", 1920, 1901..=9999, YEAR),
            ("press_rounds", 0, 0..=20, ROUNDS),
            ("start_ms", d.start_ms, 1..=600_000, MS),
            ("movement_ms", d.movement_ms, 1..=600_000, MS),
            ("retreat_ms", d.retreat_ms, 1..=600_000, MS),
            ("adjustment_ms", d.adjustment_ms, 1..=600_000, MS),
            ("press_ms", d.press_ms, 1..=600_000, MS),
            ("press_messages", d.press_messages as u64, 0..=100, MSGS),
            ("press_chars", d.press_chars as u64, 1..=100_000, CHARS),
        ];
        let mut v = [0u64; 10];
        for (slot, (key, default, range, expected)) in v.iter_mut().zip(keys) {
            let bad = |value: &str| BadOption::new(key, value, expected);
            *slot = match get(key) {
                None => default,
                Some(text) => text.parse().map_err(|_| bad(text))?,
            };
            if !range.contains(slot) {
                return Err(bad(&slot.to_string()));
            }
        }
        // DAIDE seats speak press at level 10 when there are press rounds, unless told
        // otherwise; a level above 0 without press rounds would be ignored: refused.
        let daide_level = match get("daide_level") {
            None if v[2] > 0 => 10,
            None => 0,
            Some(t) => match t.parse::<u8>() {
                Ok(l) if l == 0 || (DAIDE_LEVELS.contains(&l) && v[2] > 0) => l,
                _ => {
                    let expected = match v[2] {
                        0 => "0 (no press rounds: press_rounds is 0)",
                        _ => "a DAIDE press level: 0, 10, 20 or 30",
                    };
                    return Err(BadOption::new("daide_level", t, expected));
                }
            },
        };
        let draw_votes = match get("draw_votes") {
            None => false,
            Some(t) => t
                .parse()
                .map_err(|_| BadOption::new("draw_votes", t, "true or false"))?,
        };
        Ok(Params {
            rules: RuleParams {
                solo_centers: v[0] as usize,
                max_year: v[1] as u16,
                press_rounds: v[2] as u32,
                draw_votes,
            },
            limits: Limits {
                start_ms: v[3],
                movement_ms: v[4],
                retreat_ms: v[5],
                adjustment_ms: v[6],
                press_ms: v[7],
                press_messages: v[8] as usize,
                press_chars: v[9] as usize,
            },
            daide_level,
        })
    }
}

/// The public state every message carries, with the powers in civil disorder.
pub fn public_state(game: &DiplomacyGame) -> Value {
    let mut s = state_json(standard(), game.board());
    s["civil_disorder"] = json!(game
        .civil_disorder_powers()
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>());
    s
}

/// Owned centres per power, by name.
pub fn centers_json(game: &DiplomacyGame) -> Value {
    let counts = game.center_counts();
    let m: Map<String, Value> = Power::ALL
        .iter()
        .map(|p| (p.name().to_string(), json!(counts[p.index()])))
        .collect();
    Value::Object(m)
}

/// A message as sent: its JSON and a line feed.
fn line(v: &Value) -> Vec<u8> {
    let mut l = v.to_string().into_bytes();
    l.push(b'\n');
    l
}

/// The start message.
fn start_msg(seq: u64, p: Power, params: &Params) -> Vec<u8> {
    let powers: Vec<&str> = Power::ALL.iter().map(|p| p.name()).collect();
    line(&json!({
        "type": "start", "seq": seq, "power": p.name(), "powers": powers, "map": "standard",
        "rules": params.rules, "limits": params.limits,
    }))
}

/// A press round's message.
fn press_msg(
    game: &DiplomacyGame,
    seq: u64,
    round: u32,
    params: &Params,
    inbox: Vec<Value>,
) -> Vec<u8> {
    line(&json!({
        "type": "press", "seq": seq, "phase": game.board().phase.to_string(), "round": round,
        "rounds": params.rules.press_rounds, "deadline_ms": params.limits.press_ms,
        "state": public_state(game), "inbox": inbox,
    }))
}

/// A phase message: what `p` may order, its inbox and the adjudications it has not seen.
fn phase_msg(
    game: &DiplomacyGame,
    p: Power,
    seq: u64,
    deadline_ms: u64,
    inbox: Vec<Value>,
    history: Vec<Value>,
) -> Vec<u8> {
    let phase = game.board().phase;
    let mut msg = json!({
        "type": "phase", "seq": seq, "phase": phase.to_string(), "deadline_ms": deadline_ms,
        "state": public_state(game), "orderable": game.orderable(p),
        "inbox": inbox, "history": history,
    });
    if phase.kind == PhaseKind::Adjustment {
        let n = game.board().adjustment(p);
        if n > 0 {
            msg["builds"] = json!(n);
        } else {
            msg["removals"] = json!(-n);
        }
    }
    line(&msg)
}

/// The end message (no reply expected).
fn end_msg(game: &DiplomacyGame, seq: u64, reason: &str) -> Vec<u8> {
    let draw: Vec<&str> = match game.end_reason() {
        Some(EndReason::Solo(_)) | None => Vec::new(),
        _ => game.survivors().iter().map(|q| q.name()).collect(),
    };
    line(&json!({
        "type": "end", "seq": seq, "reason": reason,
        "winner": match game.end_reason() { Some(EndReason::Solo(w)) => Some(w.name()), _ => None },
        "draw": draw, "centers": centers_json(game),
    }))
}

/// What the referee has told each power and has yet to tell it: the `seq` of its last
/// request, the press delivered to it and the adjudicated phases it has not been shown yet.
#[derive(Debug, Clone, Default)]
pub struct Post {
    seq: [u64; 7],
    inbox: [Vec<Value>; 7],
    history: [Vec<Value>; 7],
}

impl Post {
    fn next(&mut self, p: Power) -> u64 {
        self.seq[p.index()] += 1;
        self.seq[p.index()]
    }

    /// `p`'s start message, and its `seq`.
    pub fn start(&mut self, p: Power, params: &Params) -> (u64, Vec<u8>) {
        let seq = self.next(p);
        (seq, start_msg(seq, p, params))
    }

    /// `p`'s message of press round `round`, with the press delivered to it since.
    pub fn press(
        &mut self,
        game: &DiplomacyGame,
        p: Power,
        round: u32,
        params: &Params,
    ) -> (u64, Vec<u8>) {
        let seq = self.next(p);
        let inbox = std::mem::take(&mut self.inbox[p.index()]);
        (seq, press_msg(game, seq, round, params, inbox))
    }

    /// `p`'s phase message, with its press and the adjudications it has not seen.
    pub fn phase(&mut self, game: &DiplomacyGame, p: Power, deadline_ms: u64) -> (u64, Vec<u8>) {
        let seq = self.next(p);
        let inbox = std::mem::take(&mut self.inbox[p.index()]);
        let history = std::mem::take(&mut self.history[p.index()]);
        (seq, phase_msg(game, p, seq, deadline_ms, inbox, history))
    }

    /// `p`'s end message.
    pub fn end(&mut self, game: &DiplomacyGame, p: Power, reason: &str) -> (u64, Vec<u8>) {
        let seq = self.next(p);
        (seq, end_msg(game, seq, reason))
    }

    /// Press delivered: each message waits in its addressee's inbox.
    pub fn deliver(&mut self, delivered: &[PressMsg]) {
        for m in delivered {
            if let Some(to) = Power::from_name(&m.to) {
                self.inbox[to.index()].push(json!({"from": m.from, "text": m.text}));
            }
        }
    }

    /// Phases adjudicated: every power is shown them with its next phase message.
    pub fn adjudicated(&mut self, records: &[PhaseRecord]) {
        for p in Power::ALL {
            for r in records {
                self.history[p.index()].push(Adjudicated::history_for(r, p));
            }
        }
    }
}

/// Whether a movement phase's votes end the game: draw votes are allowed and every surviving
/// power not in civil disorder voted.
pub fn unanimous(game: &DiplomacyGame, params: &Params, votes: &[&str]) -> bool {
    let voters: Vec<Power> = game
        .survivors()
        .into_iter()
        .filter(|p| !game.in_civil_disorder(*p))
        .collect();
    params.rules.draw_votes
        && game.board().phase.kind == PhaseKind::Movement
        && !voters.is_empty()
        && voters.iter().all(|p| votes.contains(&p.name()))
}

/// The illegal orders of adjudicated phases, each counted against its power: `(power, phase,
/// detail)`. Unmatched supports and convoys are legal, merely void (in history only).
pub fn illegal_orders(records: &[PhaseRecord]) -> Vec<(Power, String, String)> {
    let mut out = Vec::new();
    for r in records {
        for (p, o, e) in &r.errors {
            if !crate::outcome::is_unmatched_message(e) {
                out.push((*p, r.phase.to_string(), format!("{}: {o}: {e}", r.phase)));
            }
        }
    }
    out
}

/// The replay's `end` event: reason, winner, centres and the final state.
pub fn end_event(game: &DiplomacyGame) -> Value {
    let end = game.end_reason();
    json!({
        "event": "end",
        "reason": end.map(|r| r.as_str()),
        "winner": match end { Some(EndReason::Solo(p)) => Some(p.name()), _ => None },
        "centers": centers_json(game),
        "state": public_state(game),
    })
}

/// The match report of a finished game, without seat errors: scores, each seat's power and
/// centres, the centres, the end's reason and the last year played.
pub fn report(game: &DiplomacyGame, seats: &[String], seed: u64) -> MatchReport {
    let outcome: Outcome = game.scores().unwrap_or(Outcome {
        scores: vec![0.into(); 7],
        winner: None,
    });
    let seats = seats.iter().map(|s| (s.clone(), Vec::new())).collect();
    let mut r = MatchReport::new("diplomacy", "standard", seed, &outcome, seats);
    let counts = game.center_counts();
    for (i, s) in r.seats.iter_mut().enumerate() {
        s.extra.insert("power".into(), json!(Power(i as u8).name()));
        s.extra.insert("centers".into(), json!(counts[i]));
    }
    let year = game.history().last().map(|h| h.phase.year);
    r.extra.insert("centers".into(), centers_json(game));
    r.extra
        .insert("end".into(), json!(game.end_reason().map(|e| e.as_str())));
    r.extra.insert("year".into(), json!(year));
    r
}

/// Whether a reply line answers request `seq`: a reply with another `seq` is stale.
pub fn answers(reply: &[u8], seq: u64) -> bool {
    serde_json::from_slice::<Value>(reply)
        .ok()
        .and_then(|v| v.get("seq").cloned())
        .is_none_or(|s| s.as_u64() == Some(seq))
}

fn clip(s: &str) -> String {
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A reply as a JSON object, or why it is not one. `truncated`: the line was cut at
/// [`MAX_LINE`].
pub fn reply_object(raw: &str, truncated: bool) -> Result<Map<String, Value>, String> {
    if truncated {
        return Err(format!("reply longer than {MAX_LINE} bytes"));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("reply is not a JSON object: {}", clip(raw))),
        Err(e) => Err(format!(
            "reply is not valid JSON ({e}): {}{}",
            clip(raw),
            debug_hint(raw)
        )),
    }
}

/// What a reply that is not JSON at all adds: most often it is the bot's own debug output.
fn debug_hint(raw: &str) -> &'static str {
    match raw.trim_start().chars().next() {
        Some('{' | '[' | '"') => "",
        _ => "; a line that is not JSON is most often debug output: write it to stderr (stdout carries only replies)",
    }
}

/// The start reply: `Ok` for `{"ready":true}`, else why not.
pub fn read_ready(raw: &str, truncated: bool) -> Result<(), String> {
    match reply_object(raw, truncated)?.get("ready") {
        Some(Value::Bool(true)) => Ok(()),
        _ => Err(format!("expected {{\"ready\":true}}, got {}", clip(raw))),
    }
}

/// The orders of a phase reply, and whether it votes for a draw; or why there are none.
pub fn read_orders(raw: &str, truncated: bool) -> Result<(Vec<String>, bool), String> {
    let m = reply_object(raw, truncated).map_err(|e| format!("{e}; no orders"))?;
    let draw = m.get("draw") == Some(&Value::Bool(true));
    m.get("orders")
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .map(|o| o.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
        })
        .map(|list| (list, draw))
        .ok_or_else(|| "reply lacks an \"orders\" list of strings; no orders".into())
}

/// A press message delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PressMsg {
    pub from: String,
    pub to: String,
    pub text: String,
}

/// A press message dropped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    pub from: String,
    pub to: String,
    pub reason: String,
}

/// The messages of `from`'s press reply: those delivered, and those dropped with the fault
/// each is (`press message 2 dropped: message to oneself`); or why the reply has none.
#[allow(clippy::type_complexity)]
pub fn read_press(
    raw: &str,
    truncated: bool,
    from: Power,
    game: &DiplomacyGame,
    limits: &Limits,
) -> Result<(Vec<PressMsg>, Vec<(String, Dropped)>), String> {
    let m = reply_object(raw, truncated)?;
    let list = m
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("press reply lacks a \"messages\" list")?;
    Ok::<_, String>(
        list.iter()
            .enumerate()
            .map(|(i, item)| {
                let to = item.get("to").and_then(Value::as_str).unwrap_or("");
                let text = item.get("text").and_then(Value::as_str);
                let target = Power::from_name(to).filter(|t| t.name() == to);
                let reason = match (text, target) {
                    (None, _) => "message without text".to_string(),
                    _ if i >= limits.press_messages => {
                        format!("over the limit of {} messages", limits.press_messages)
                    }
                    (Some(t), _) if t.chars().count() > limits.press_chars => {
                        format!("longer than {} characters", limits.press_chars)
                    }
                    (_, None) => format!("unknown power {to:?}"),
                    (_, Some(t)) if t == from => "message to oneself".into(),
                    (_, Some(t)) if game.is_eliminated(t) => format!("{t} is eliminated"),
                    (Some(text), Some(t)) => {
                        return Ok(PressMsg {
                            from: from.name().into(),
                            to: t.name().into(),
                            text: text.into(),
                        })
                    }
                };
                Err((
                    format!("press message {i} dropped: {reason}"),
                    Dropped {
                        from: from.name().into(),
                        to: to.into(),
                        reason,
                    },
                ))
            })
            .partition::<Vec<_>, _>(Result::is_ok),
    )
    .map(|(ok, bad)| {
        let ok = ok.into_iter().filter_map(Result::ok).collect();
        (ok, bad.into_iter().filter_map(Result::err).collect())
    })
}

/// What a built-in bot answers to a request of `kind`: the line a process would send.
pub fn builtin_reply(
    bot: &mut BuiltinBot,
    game: &DiplomacyGame,
    power: Power,
    kind: &str,
) -> Vec<u8> {
    match kind {
        "start" => b"{\"ready\":true}".to_vec(),
        "orders" => json!({ "orders": bot.order_strings(game.board(), power) })
            .to_string()
            .into_bytes(),
        _ => b"{\"messages\":[]}".to_vec(),
    }
}

/// One adjudicated phase, as the replay and the bots' history show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudicated {
    pub phase: String,
    pub orders: BTreeMap<String, Vec<String>>,
    pub results: BTreeMap<String, String>,
    /// Why each failed order failed (`bounced`, `cut`, `dislodged`, `no convoy`, ...).
    pub failures: BTreeMap<String, String>,
    pub errors: Vec<String>,
    pub destroyed: Vec<String>,
}

impl Adjudicated {
    pub fn of(r: &PhaseRecord) -> Adjudicated {
        let mut orders: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (p, o) in &r.orders {
            orders
                .entry(p.name().to_string())
                .or_default()
                .push(o.clone());
        }
        let named = |m: &mut dyn Iterator<Item = (String, String)>| m.collect();
        Adjudicated {
            phase: r.phase.to_string(),
            orders,
            results: named(
                &mut r
                    .results
                    .iter()
                    .map(|(u, x)| (u.clone(), x.as_str().into())),
            ),
            failures: named(
                &mut r
                    .failures
                    .iter()
                    .map(|(u, f)| (u.clone(), f.as_str().into())),
            ),
            errors: r
                .errors
                .iter()
                .map(|(p, o, e)| format!("{p}: {o}: {e}"))
                .collect(),
            destroyed: r.destroyed.clone(),
        }
    }

    /// The record as `p`'s history shows it: its own void orders only, no destroyed units.
    pub fn history_for(r: &PhaseRecord, p: Power) -> Value {
        let mut h = serde_json::to_value(Adjudicated::of(r)).unwrap_or(Value::Null);
        let own: Vec<String> = r
            .errors
            .iter()
            .filter(|(q, _, _)| *q == p)
            .map(|(_, o, e)| format!("{o}: {e}"))
            .collect();
        h["errors"] = json!(own);
        if let Some(o) = h.as_object_mut() {
            o.remove("destroyed");
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_replies_name_another_seq() {
        assert!(answers(br#"{"seq":3,"orders":[]}"#, 3));
        assert!(answers(br#"{"orders":[]}"#, 3));
        assert!(answers(b"not json", 3));
        assert!(!answers(br#"{"seq":4,"orders":[]}"#, 3));
        assert!(!answers(br#"{"seq":"3"}"#, 3));
    }

    #[test]
    fn replies_are_read_or_faulted_with_a_reason() {
        assert_eq!(read_ready(r#"{"ready":true}"#, false), Ok(()));
        assert!(read_ready(r#"{"ready":1}"#, false)
            .unwrap_err()
            .contains("expected"));
        assert_eq!(
            read_orders(r#"{"orders":["A PAR H"],"draw":true}"#, false),
            Ok((vec!["A PAR H".to_string()], true))
        );
        assert!(read_orders("x", false).unwrap_err().ends_with(
            "x; a line that is not JSON is most often debug output: write it to stderr (stdout carries only replies); no orders"
        ));
        // JSON gone wrong is not called debug output.
        assert!(read_orders("{\"orders\"", false)
            .unwrap_err()
            .ends_with("{\"orders\"; no orders"));
        assert!(read_orders("{}", true)
            .unwrap_err()
            .contains("longer than 1048576 bytes"));
        let game = DiplomacyGame::new(
            Params {
                rules: RuleParams {
                    solo_centers: 18,
                    max_year: 1901,
                    press_rounds: 1,
                    draw_votes: false,
                },
                limits: Limits::default(),
                daide_level: 10,
            }
            .engine_rules(),
        );
        let got = read_press(
            r#"{"messages":[{"to":"ENGLAND","text":"hi"},{"to":"FRANCE"},{"to":"AUSTRIA","text":"me"}]}"#,
            false,
            Power::from_name("AUSTRIA").unwrap(),
            &game,
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(got.0.len(), 1);
        assert_eq!(got.1[0].0, "press message 1 dropped: message without text");
        assert_eq!(got.1[1].1.reason, "message to oneself");
    }

    #[test]
    fn the_daide_level_follows_the_press_rounds_and_is_checked() {
        let params = |kv: &[(&str, &str)]| {
            let kv: Vec<(String, String)> = kv
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Params::from_options(|k| kv.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str()))
        };
        assert_eq!(params(&[]).unwrap().daide_level, 0);
        assert_eq!(params(&[("press_rounds", "2")]).unwrap().daide_level, 10);
        let p = params(&[("press_rounds", "1"), ("daide_level", "30")]).unwrap();
        assert_eq!(p.daide_level, 30);
        let p = params(&[("press_rounds", "1"), ("daide_level", "0")]).unwrap();
        assert_eq!(p.daide_level, 0);
        assert!(params(&[("daide_level", "10")]).is_err(), "no press rounds");
        assert!(params(&[("press_rounds", "1"), ("daide_level", "15")]).is_err());
        assert!(params(&[("press_rounds", "1"), ("daide_level", "x")]).is_err());
        // A header without the level (an older game, or one without press) reads as 0, and a
        // level of 0 is not written.
        let mut v = serde_json::to_value(params(&[]).unwrap()).unwrap();
        assert!(v.get("daide_level").is_none());
        v["daide_level"] = json!(20);
        assert_eq!(serde_json::from_value::<Params>(v).unwrap().daide_level, 20);
    }
}
