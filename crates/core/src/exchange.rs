//! The seat record: what every game's replay says about every request to every seat, in one shape.
//!
//! Whatever the game and whatever the seat (built-in, pipe process, TCP client, WebSocket), the
//! referee records each request it made of a seat as one [`SeatExchange`] line (`"event":"seat"`)
//! and, when a seat's program ends, one [`SeatEnd`] line (`"event":"seat_end"`) with its exit and
//! the tail of its stderr. `check`, `play --json`, the viewers' per-seat panels and the web read
//! these lines without knowing the game; a re-run replays them in place of the bots.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::replay::{ParsedReplay, ReplayError};

/// The `event` of a [`SeatExchange`] line.
pub const SEAT_EVENT: &str = "seat";
/// The `event` of a [`SeatEnd`] line.
pub const SEAT_END_EVENT: &str = "seat_end";

/// The replay as a reader may see it: the `stderr` of every `seat_end` line of a seat not in
/// `visible` emptied (and marked `stderr_hidden`, the other fields as they were, so the replay
/// still verifies: a re-run repeats the recorded ending), the `stderr` and `stderr_dropped` of
/// every `seat` line of such a seat removed (without a mark, which would tell at which
/// requests the bot wrote something), and the `stderr` lines of older replays of such seats
/// left out. The one place that hides a bot's stderr: the contest pages (`visible` empty:
/// nobody), the ladder's pages and API (its owner and the organisers) and their live streams
/// all call it. A line that names stderr but cannot be read is dropped rather than risk a
/// leak.
pub fn hide_stderr(replay: &str, visible: &[bool]) -> String {
    let sees =
        |seat: Option<u64>| seat.is_some_and(|s| visible.get(s as usize).copied().unwrap_or(false));
    let mut out = String::with_capacity(replay.len());
    for line in replay.lines() {
        // Only a line naming stderr can hold any: the others are kept as they are, unparsed.
        if !line.contains("\"stderr") {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let seat = v["seat"].as_u64();
        if v["event"] == "stderr" {
            if sees(seat) {
                out.push_str(line);
                out.push('\n');
            }
            continue;
        }
        if v["event"] == SEAT_EVENT && !sees(seat) {
            out.push_str(&without_stderr(line, &mut v));
            out.push('\n');
            continue;
        }
        if v["event"] == SEAT_END_EVENT && !sees(seat) {
            if let Some(o) = v.as_object_mut() {
                o.insert("stderr".into(), serde_json::Value::String(String::new()));
                o.insert("stderr_hidden".into(), serde_json::Value::Bool(true));
            }
            out.push_str(&v.to_string());
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// A `seat` line (`v`, read from `line`) without its `stderr` and `stderr_dropped`: the line as
/// it was when it has neither (it only quotes the word), else written again in its own field
/// order (a line of an older shape: its fields sorted).
fn without_stderr(line: &str, v: &mut serde_json::Value) -> String {
    let Some(o) = v.as_object_mut() else {
        return line.to_string();
    };
    if !o.contains_key("stderr") && !o.contains_key("stderr_dropped") {
        return line.to_string();
    }
    if let Ok(mut e) = serde_json::from_str::<SeatExchange>(line) {
        e.stderr = None;
        e.stderr_dropped = 0;
        if let Ok(text) = serde_json::to_string(&e) {
            return text;
        }
    }
    o.remove("stderr");
    o.remove("stderr_dropped");
    v.to_string()
}

/// How the detail of a reply taken without its line terminator begins (at the deadline, or
/// when the output closed after it).
pub const NO_TERMINATOR: &str = "no line terminator";

/// How one request to a seat ended. The serialised names are part of the replay format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExchangeOutcome {
    /// A reply arrived in time (a line, a frame, or a built-in bot's answer): `raw` holds it.
    Reply,
    /// A message that expects no reply was delivered.
    Sent,
    /// No complete reply by the deadline; `raw`, if present, is what had arrived of one.
    Timeout,
    /// The seat's program exited or closed its output (`detail` says how, with the exit code).
    Crash,
    /// What arrived cannot be a reply at the transport level (a binary frame where text is
    /// expected, a frame that breaks the framing); `detail` says what.
    Malformed,
    /// The seat's connection closed or failed.
    Disconnect,
    /// The seat passed a cap (output bytes, memory, queued writes) and was stopped.
    ResourceLimit,
    /// The seat was not running when asked (it never started, or it was stopped earlier).
    NotRunning,
}

impl ExchangeOutcome {
    /// The wire name (`reply`, `timeout`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ExchangeOutcome::Reply => "reply",
            ExchangeOutcome::Sent => "sent",
            ExchangeOutcome::Timeout => "timeout",
            ExchangeOutcome::Crash => "crash",
            ExchangeOutcome::Malformed => "malformed",
            ExchangeOutcome::Disconnect => "disconnect",
            ExchangeOutcome::ResourceLimit => "resource_limit",
            ExchangeOutcome::NotRunning => "not_running",
        }
    }

    /// Whether the seat answered.
    pub fn is_reply(self) -> bool {
        matches!(self, ExchangeOutcome::Reply | ExchangeOutcome::Sent)
    }
}

/// One request to one seat and what came back (`"event":"seat"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatExchange {
    /// Always [`SEAT_EVENT`].
    pub event: String,
    /// The seat, counted from 0.
    pub seat: usize,
    /// The game's own label for the moment: `turn 3`, `ply 15`, `S1901M`, `day 2 talk 3`.
    pub at: String,
    /// The kind of request, in the game's own words (`ready`, `move`, `orders`, `TALK`, ...).
    pub kind: String,
    /// The time the seat had, in milliseconds; absent for a message that expects no reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<u64>,
    /// Microseconds from the request's last byte being written to the reply's last byte (or to
    /// the failure); absent where the referee did not measure it (built-in bots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<u64>,
    pub outcome: ExchangeOutcome,
    /// The reply as received (valid UTF-8), without its line terminator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// The reply as received, base64, when it is not valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_b64: Option<String>,
    /// The reply was cut at the transport's length cap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// What went wrong, specifically (exit code, reason of a disconnect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Output the seat wrote while no reply was expected, discarded before this request (the
    /// first few lines, each cut to 200 characters, then a count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discarded: Vec<String>,
    /// What the seat's program wrote on stderr from this request until its next one (lossy
    /// UTF-8), absent when nothing. Always the last fields of the line.
    ///
    /// Just before the referee writes to a seat (a request, or a message that expects no
    /// reply), and when the match ends, it takes what the seat's program has written on stderr
    /// since the last time, as far as it has arrived (what its stderr pipe holds, read then and
    /// there), and adds it to that seat's last exchange: not one whose outcome is
    /// `not_running` (the request never reached the program) unless it is the seat's first (a
    /// client that never connected). So an exchange's `stderr` is what the bot wrote from its
    /// request until its next one: text written just before a reply, read a moment after it,
    /// still goes with that reply; text written after a reply goes with it if it arrives before
    /// the next request; a crash's traceback goes with the request the program crashed on
    /// (once a program ended, all it wrote has arrived). What arrives before a seat's first
    /// exchange goes on its first. The `seat_end` line keeps the whole tail as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// Bytes of that stderr dropped: over a whole match a program keeps at most the sandbox's
    /// `stderr_cap` bytes (64 KiB) in its exchanges; past it, each exchange counts here what it
    /// dropped. Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stderr_dropped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Write `text` and `dropped` as the `stderr` and `stderr_dropped` of a `seat` line serialised
/// without them (its first `base_len` bytes, up to and including its closing brace), replacing
/// whatever stderr it was given since: the line is then the bytes [`ExchangeLine`] would have
/// written with them. A line shorter than `base_len`, or that does not end in a brace, is left
/// alone.
pub fn set_line_stderr(line: &mut String, base_len: usize, text: &str, dropped: u64) {
    if base_len == 0
        || line.len() < base_len
        || !line.ends_with('}')
        || !line.is_char_boundary(base_len - 1)
    {
        return;
    }
    line.truncate(base_len - 1);
    if !text.is_empty() {
        line.push_str(",\"stderr\":");
        line.push_str(&serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into()));
    }
    if dropped > 0 {
        line.push_str(",\"stderr_dropped\":");
        line.push_str(&dropped.to_string());
    }
    line.push('}');
}

impl SeatExchange {
    /// A record with no reply bytes, time or detail yet.
    pub fn new(seat: usize, at: &str, kind: &str, outcome: ExchangeOutcome) -> Self {
        SeatExchange {
            event: SEAT_EVENT.to_string(),
            seat,
            at: at.to_string(),
            kind: kind.to_string(),
            limit_ms: None,
            time_us: None,
            outcome,
            raw: None,
            raw_b64: None,
            truncated: false,
            detail: None,
            discarded: Vec::new(),
            stderr: None,
            stderr_dropped: 0,
        }
    }

    /// Set the reply bytes: as text when valid UTF-8, else as base64.
    pub fn set_raw(&mut self, bytes: &[u8]) {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                self.raw = Some(s.to_string());
                self.raw_b64 = None;
            }
            Err(_) => {
                self.raw = None;
                self.raw_b64 = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
            }
        }
    }

    /// The reply bytes, if any were recorded (decoding `raw_b64`).
    pub fn raw_bytes(&self) -> Option<Vec<u8>> {
        if let Some(s) = &self.raw {
            return Some(s.clone().into_bytes());
        }
        self.raw_b64
            .as_ref()
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
    }
}

/// A [`SeatExchange`] line written from borrowed parts: the referee records one per request, so
/// it serialises the same JSON without copying the label, kind, reply and detail first.
/// [`SeatExchange`] reads it back.
#[derive(Debug, Clone, Serialize)]
pub struct ExchangeLine<'a> {
    pub event: &'static str,
    pub seat: usize,
    pub at: &'a str,
    pub kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_us: Option<u64>,
    pub outcome: ExchangeOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_b64: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub discarded: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<&'a str>,
    #[serde(skip_serializing_if = "is_zero")]
    pub stderr_dropped: u64,
}

impl<'a> ExchangeLine<'a> {
    /// A line with no reply bytes, time or detail yet.
    pub fn new(seat: usize, at: &'a str, kind: &'a str, outcome: ExchangeOutcome) -> Self {
        ExchangeLine {
            event: SEAT_EVENT,
            seat,
            at,
            kind,
            limit_ms: None,
            time_us: None,
            outcome,
            raw: None,
            raw_b64: None,
            truncated: false,
            detail: None,
            discarded: &[],
            stderr: None,
            stderr_dropped: 0,
        }
    }

    /// Set the reply bytes: as text when valid UTF-8, else as base64 (as [`SeatExchange::set_raw`]).
    pub fn set_raw(&mut self, bytes: &'a [u8]) {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                self.raw = Some(s);
                self.raw_b64 = None;
            }
            Err(_) => {
                self.raw = None;
                self.raw_b64 = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
            }
        }
    }
}

/// How a seat's program ended, and what it wrote on stderr (`"event":"seat_end"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatEnd {
    /// Always [`SEAT_END_EVENT`].
    pub event: String,
    pub seat: usize,
    /// The exit as the platform says it everywhere: `exit code 1`, `killed by signal 9
    /// (SIGKILL)`, `still running (killed by the referee)`, `not started: …`.
    pub exit: String,
    /// The exit code, when the program exited on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The last bytes of its stderr (lossy UTF-8).
    pub stderr: String,
}

impl SeatEnd {
    /// Whether the program crashed: it exited with a non-zero code or was ended by a signal.
    pub fn crashed(&self) -> bool {
        self.exit_code.is_some_and(|c| c != 0) || self.signal.is_some()
    }
}

/// The seat record of a replay: its exchanges and the seats' ends, in replay order.
#[derive(Debug, Clone, Default)]
pub struct SeatRecord {
    pub exchanges: Vec<SeatExchange>,
    pub ends: Vec<SeatEnd>,
}

impl SeatRecord {
    /// Read the seat record of any game's replay.
    pub fn of(replay: &ParsedReplay) -> Result<SeatRecord, ReplayError> {
        Ok(SeatRecord {
            exchanges: replay.events_of(SEAT_EVENT)?,
            ends: replay.events_of(SEAT_END_EVENT)?,
        })
    }

    /// The exchanges of one seat, in order.
    pub fn of_seat(&self, seat: usize) -> impl Iterator<Item = &SeatExchange> {
        self.exchanges.iter().filter(move |e| e.seat == seat)
    }

    /// How one seat's program ended, if it ran one.
    pub fn end_of(&self, seat: usize) -> Option<&SeatEnd> {
        self.ends.iter().find(|e| e.seat == seat)
    }

    /// Where one seat's stderr began: the first of its exchanges that carries any (text, or
    /// bytes dropped by the cap), named by the game's own label (`ply 15`, `day 2`, `S1901M`),
    /// or `request N` (counted from 1 among the seat's exchanges) where the game gives none;
    /// and the first line of that text that is not blank (empty when none was kept).
    pub fn stderr_began(&self, seat: usize) -> Option<StderrBegan> {
        let (n, e) = self
            .of_seat(seat)
            .enumerate()
            .find(|(_, e)| e.stderr.is_some() || e.stderr_dropped > 0)?;
        let at = if e.at.trim().is_empty() {
            format!("request {}", n + 1)
        } else {
            e.at.clone()
        };
        let line = e
            .stderr
            .as_deref()
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim_end())
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .to_string();
        Some(StderrBegan { at, line })
    }
}

/// Where a seat's stderr began ([`SeatRecord::stderr_began`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StderrBegan {
    /// The request, in the game's own terms (`ply 15`, `S1901M`, `request 3`).
    pub at: String,
    /// The first line the bot wrote there that is not blank (empty when none was kept).
    pub line: String,
}

impl std::fmt::Display for StderrBegan {
    /// `its stderr began at ply 15: Traceback (most recent call last):` (the line cut to 200
    /// characters; not escaped for a terminal).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "its stderr began at {}", self.at)?;
        if !self.line.is_empty() {
            let cut: String = self.line.chars().take(200).collect();
            let more = if cut.len() < self.line.len() {
                "…"
            } else {
                ""
            };
            write!(f, ": {cut}{more}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod hide_stderr_tests {
    use super::*;

    #[test]
    fn only_the_visible_seats_keep_their_stderr() {
        let replay = concat!(
            r#"{"event":"header","seats":["a","b"]}"#,
            "\n",
            r#"{"event":"stderr","seat":0,"text":"OLD-0"}"#,
            "\n",
            r#"{"event":"stderr","seat":1,"text":"OLD-1"}"#,
            "\n",
            r#"{"event":"seat_end","seat":0,"exit":"exit code 0","stderr":"MINE"}"#,
            "\n",
            r#"{"event":"seat_end","seat":1,"exit":"exit code 1","stderr":"THEIRS"}"#,
            "\n",
            r#"{"event":"seat_end","seat":1,"stderr":"BROKEN"#,
            "\n",
        );
        let seen = hide_stderr(replay, &[true, false]);
        assert!(seen.contains("OLD-0") && seen.contains("MINE"), "{seen}");
        for hidden in ["OLD-1", "THEIRS", "BROKEN"] {
            assert!(!seen.contains(hidden), "{seen}");
        }
        assert!(seen.contains(r#""exit":"exit code 1""#), "{seen}");
        assert!(seen.contains(r#""stderr_hidden":true"#), "{seen}");
        assert_eq!(seen.lines().count(), 4, "{seen}");
        let public = hide_stderr(replay, &[]);
        for hidden in ["OLD-0", "OLD-1", "MINE", "THEIRS", "BROKEN"] {
            assert!(!public.contains(hidden), "{public}");
        }
    }

    #[test]
    fn the_stderr_of_each_request_is_hidden_as_the_tail_is() {
        let replay = concat!(
            r#"{"event":"header","seats":["a","b"]}"#,
            "\n",
            r#"{"event":"seat","seat":0,"at":"ply 1","kind":"move","limit_ms":10,"time_us":5,"outcome":"reply","raw":"x","stderr":"MINE-1"}"#,
            "\n",
            r#"{"event":"seat","seat":1,"at":"ply 2","kind":"move","limit_ms":10,"time_us":5,"outcome":"reply","raw":"y","stderr":"THEIRS-2","stderr_dropped":7}"#,
            "\n",
            r#"{"event":"seat","seat":1,"at":"ply 4","kind":"move","outcome":"reply","raw":"say \"stderr\""}"#,
            "\n",
            r#"{"event":"seat","seat":1,"at":"ply 6","stderr":"OLD-SHAPE","seats":[1]}"#,
            "\n",
            r#"{"event":"seat","seat":1,"stderr":"BROKEN"#,
            "\n",
        );
        let seen = hide_stderr(replay, &[true, false]);
        assert!(seen.contains("MINE-1"), "{seen}");
        for hidden in ["THEIRS-2", "stderr_dropped", "OLD-SHAPE", "BROKEN"] {
            assert!(!seen.contains(hidden), "{hidden}: {seen}");
        }
        let lines: Vec<&str> = seen.lines().collect();
        assert_eq!(lines.len(), 5, "{seen}");
        // The request itself stays, in its own field order, with no mark.
        assert_eq!(
            lines[2],
            r#"{"event":"seat","seat":1,"at":"ply 2","kind":"move","limit_ms":10,"time_us":5,"outcome":"reply","raw":"y"}"#
        );
        // A line that only quotes the word is kept byte for byte.
        assert_eq!(lines[3], replay.lines().nth(3).unwrap());
        let v: serde_json::Value = serde_json::from_str(lines[4]).unwrap();
        assert_eq!(v["at"], "ply 6");
        assert!(v.get("stderr").is_none(), "{v}");
        assert!(!hide_stderr(replay, &[]).contains("MINE-1"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::ReplayLog;

    #[test]
    fn a_borrowed_line_serialises_as_the_owned_record() {
        type Case<'a> = (
            &'a [u8],
            Option<u64>,
            Option<u64>,
            bool,
            Option<&'a str>,
            &'a [String],
        );
        let discarded = vec!["early".to_string()];
        let cases: [Case; 5] = [
            (b"MOV:A,N", Some(10_000), Some(1234), false, None, &[]),
            (b"", None, None, false, None, &[]),
            (
                b"\xff\x00bin",
                Some(5),
                Some(5000),
                true,
                Some("cut"),
                &discarded,
            ),
            (
                b"partial",
                Some(1),
                Some(1000),
                false,
                Some("no line terminator"),
                &[],
            ),
            (
                b"",
                Some(3),
                Some(0),
                false,
                Some("exit code 1"),
                &discarded,
            ),
        ];
        for (i, (raw, limit, time, cut, detail, dis)) in cases.into_iter().enumerate() {
            let outcome = if i == 4 {
                ExchangeOutcome::Crash
            } else {
                ExchangeOutcome::Reply
            };
            let mut owned = SeatExchange::new(2, "ply 15", "MOV?", outcome);
            let mut line = ExchangeLine::new(2, "ply 15", "MOV?", outcome);
            if !raw.is_empty() || outcome == ExchangeOutcome::Reply {
                owned.set_raw(raw);
                line.set_raw(raw);
            }
            owned.limit_ms = limit;
            line.limit_ms = limit;
            owned.time_us = time;
            line.time_us = time;
            owned.truncated = cut;
            line.truncated = cut;
            owned.detail = detail.map(str::to_string);
            line.detail = detail;
            owned.discarded = dis.to_vec();
            line.discarded = dis;
            let a = serde_json::to_string(&owned).unwrap();
            let b = serde_json::to_string(&line).unwrap();
            assert_eq!(a, b, "case {i}");
            let back: SeatExchange = serde_json::from_str(&b).unwrap();
            assert_eq!(back, owned, "case {i}");
        }
    }

    #[test]
    fn stderr_set_on_a_written_line_is_what_the_line_writes_with_it() {
        let discarded = vec!["early".to_string()];
        let cases: [(&str, u64); 4] = [
            (
                "Traceback (most recent call last):\n  \"x\" \u{1b}[31m é\n",
                0,
            ),
            ("", 12),
            ("kept\n", 65536),
            ("", 0),
        ];
        for (i, (text, dropped)) in cases.into_iter().enumerate() {
            let mut line = ExchangeLine::new(1, "ply 15", "MOV?", ExchangeOutcome::Reply);
            line.set_raw(b"MOV:A,N");
            line.limit_ms = Some(10);
            line.discarded = &discarded;
            let base = serde_json::to_string(&line).unwrap();
            line.stderr = (!text.is_empty()).then_some(text);
            line.stderr_dropped = dropped;
            let whole = serde_json::to_string(&line).unwrap();
            let mut amended = base.clone();
            set_line_stderr(&mut amended, base.len(), "an earlier take", 3);
            set_line_stderr(&mut amended, base.len(), text, dropped);
            assert_eq!(amended, whole, "case {i}");
            let back: SeatExchange = serde_json::from_str(&amended).unwrap();
            assert_eq!(back.stderr.as_deref(), line.stderr, "case {i}");
            assert_eq!(back.stderr_dropped, dropped, "case {i}");
            assert_eq!(serde_json::to_string(&back).unwrap(), whole, "case {i}");
        }
        for (mut not_a_line, base) in [
            (String::from("{\"event\":\"seat\""), 10),
            (String::from("{\"event\":\"seat\"}"), 40),
        ] {
            let before = not_a_line.clone();
            set_line_stderr(&mut not_a_line, base, "x", 0);
            assert_eq!(not_a_line, before);
        }
    }

    #[test]
    fn where_a_seats_stderr_began_is_named_in_the_games_terms() {
        let mut quiet = SeatExchange::new(0, "ply 1", "move", ExchangeOutcome::Reply);
        quiet.limit_ms = Some(10);
        let mut first = SeatExchange::new(0, "ply 3", "move", ExchangeOutcome::Crash);
        first.stderr = Some("\n  \nTraceback (most recent call last):  \r\n  File x\n".into());
        let mut other = SeatExchange::new(1, "ply 2", "move", ExchangeOutcome::Reply);
        other.stderr = Some("not this seat's".into());
        let mut unlabelled = SeatExchange::new(2, "", "go", ExchangeOutcome::Reply);
        unlabelled.stderr_dropped = 9;
        let rec = SeatRecord {
            exchanges: vec![
                quiet.clone(),
                other,
                first,
                SeatExchange::new(2, "", "go", ExchangeOutcome::Reply),
                unlabelled,
            ],
            ends: Vec::new(),
        };
        let began = rec.stderr_began(0).unwrap();
        assert_eq!(began.at, "ply 3");
        assert_eq!(
            began.to_string(),
            "its stderr began at ply 3: Traceback (most recent call last):"
        );
        assert_eq!(
            rec.stderr_began(2).unwrap().to_string(),
            "its stderr began at request 2"
        );
        assert_eq!(rec.stderr_began(3), None);
        let long = SeatRecord {
            exchanges: vec![SeatExchange {
                stderr: Some("é".repeat(300)),
                ..quiet
            }],
            ends: Vec::new(),
        };
        let text = long.stderr_began(0).unwrap().to_string();
        assert!(text.ends_with(&format!("{}…", "é".repeat(200))), "{text}");
    }

    #[test]
    fn records_round_trip_through_a_replay() {
        let mut log = ReplayLog::new();
        log.push(
            &serde_json::json!({"event":"header","format":"x@2","engine":"0","game":"g",
            "rules":"r","seed":1,"seats":["cmd:x"],"params":null}),
        );
        let mut ex = SeatExchange::new(0, "turn 3", "move", ExchangeOutcome::Reply);
        ex.limit_ms = Some(1000);
        ex.time_us = Some(1234);
        ex.set_raw(b"1 2 3");
        log.push(&ex);
        let mut bin = SeatExchange::new(1, "turn 3", "move", ExchangeOutcome::Timeout);
        bin.set_raw(&[0xff, 0x00]);
        log.push(&bin);
        log.push(&SeatEnd {
            event: SEAT_END_EVENT.into(),
            seat: 0,
            exit: "exit code 1".into(),
            exit_code: Some(1),
            signal: None,
            stderr: "Traceback".into(),
        });
        let text = log.to_text();
        assert!(text.contains(r#"{"event":"seat","seat":0,"at":"turn 3","kind":"move","limit_ms":1000,"time_us":1234,"outcome":"reply","raw":"1 2 3"}"#), "{text}");
        let parsed = ReplayLog::parse(&text).unwrap();
        let rec = SeatRecord::of(&parsed).unwrap();
        assert_eq!(rec.exchanges, vec![ex, bin.clone()]);
        assert_eq!(
            rec.of_seat(1).next().unwrap().raw_bytes(),
            Some(vec![0xff, 0x00])
        );
        assert_eq!(rec.end_of(0).unwrap().exit_code, Some(1));
        assert!(rec.end_of(1).is_none());
    }
}
