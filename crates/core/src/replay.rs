//! The JSON-lines container of every replay.
//!
//! A replay is a sequence of JSON objects, one per line. The first line is a [`ReplayHeader`]; the
//! rest are game-specific events, each an object with an `"event"` field. Writing the same events
//! gives the same bytes (serde_json with struct field order), which determinism tests rely on.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::Value;

/// The first line of every replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayHeader {
    /// Always `"header"`.
    pub event: String,
    /// Replay format of the game, e.g. `kakehiki/nac-replay@1`.
    pub format: String,
    /// Version of the engine that wrote it.
    pub engine: String,
    /// Game name as registered (`nac`, `geister`, ...).
    pub game: String,
    /// Rule set / variant name.
    pub rules: String,
    /// The match seed.
    pub seed: u64,
    /// Seat specs in seat order.
    pub seats: Vec<String>,
    /// Game-specific parameters (the full rule parameter set).
    pub params: Value,
}

impl ReplayHeader {
    /// The header every driver writes (the one place a replay header is built): `format` and
    /// `game` as the driver declares them, this build's version as the engine, and the game's
    /// `params` serialised (`null` if they cannot be).
    pub fn new(
        format: &str,
        game: &str,
        rules: &str,
        seed: u64,
        seats: Vec<String>,
        params: &impl Serialize,
    ) -> ReplayHeader {
        ReplayHeader {
            event: "header".into(),
            format: format.into(),
            // Every crate of the workspace has the platform's version.
            engine: env!("CARGO_PKG_VERSION").into(),
            game: game.into(),
            rules: rules.into(),
            seed,
            seats,
            params: serde_json::to_value(params).unwrap_or(Value::Null),
        }
    }

    /// This header under another format (an upgrade's re-run writes the current one).
    pub fn with_format(&self, format: &str) -> ReplayHeader {
        ReplayHeader {
            format: format.into(),
            ..self.clone()
        }
    }
}

/// Why a replay could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("replay is empty: expected a header line")]
    Empty,
    #[error("replay line {line}: invalid JSON: {source}")]
    Json {
        line: usize,
        source: serde_json::Error,
    },
    #[error("replay line {line}: {message}")]
    Shape { line: usize, message: String },
}

/// One event serialised as a replay line (compact JSON, no newline), made by
/// [`ReplayLog::line_of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLine(String);

/// An in-memory replay: its lines, in order.
#[derive(Debug, Clone)]
pub struct ReplayLog {
    lines: Vec<String>,
    /// Lines put before all the others so far ([`ReplayLog::push_front`]): a [`LineMark`]
    /// counts them to find its line again.
    fronts: usize,
    /// This log's own number: a mark made in another log (one this log replaced) finds nothing
    /// here.
    id: u64,
}

/// Where a line was put in a [`ReplayLog`] ([`ReplayLog::push_marked`]): it finds the line
/// again whatever is put before it or after it, and nothing in any other log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineMark {
    log: u64,
    index: usize,
    fronts: usize,
}

impl Default for ReplayLog {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ReplayLog {
            lines: Vec::new(),
            fronts: 0,
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }
}

/// Two logs are equal when their lines are.
impl PartialEq for ReplayLog {
    fn eq(&self, other: &Self) -> bool {
        self.lines == other.lines
    }
}

impl Eq for ReplayLog {}

impl ReplayLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// Append one event. Events are plain serialisable values; serialisation of our own types
    /// cannot fail, so a failure is a programming error reported as a JSON string line.
    pub fn push<T: Serialize>(&mut self, event: &T) {
        self.push_line(Self::line_of(event));
    }

    /// The line [`ReplayLog::push`] would append for `event`, serialised ahead of time (e.g.
    /// while other seats are still thinking) and appended in order with
    /// [`ReplayLog::push_line`].
    pub fn line_of<T: Serialize>(event: &T) -> EventLine {
        EventLine(serde_json::to_string(event).unwrap_or_else(|e| {
            format!(
                "{{\"event\":\"unserialisable\",\"error\":{:?}}}",
                e.to_string()
            )
        }))
    }

    /// Append a line made by [`ReplayLog::line_of`].
    pub fn push_line(&mut self, line: EventLine) {
        self.lines.push(line.0);
    }

    /// [`ReplayLog::push_line`], and where the line was put, to change it later with
    /// [`ReplayLog::line_mut`] (the referee completes a seat's exchange with the stderr that
    /// arrives after it).
    pub fn push_marked(&mut self, line: EventLine) -> LineMark {
        self.lines.push(line.0);
        LineMark {
            log: self.id,
            index: self.lines.len() - 1,
            fronts: self.fronts,
        }
    }

    /// The line `mark` was given for, if it is in this log.
    pub fn line_mut(&mut self, mark: LineMark) -> Option<&mut String> {
        if mark.log != self.id {
            return None;
        }
        let shift = self.fronts.checked_sub(mark.fronts)?;
        self.lines.get_mut(mark.index + shift)
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The line number `mark` is at now, if it is in this log.
    pub fn index_of(&self, mark: LineMark) -> Option<usize> {
        if mark.log != self.id {
            return None;
        }
        let shift = self.fronts.checked_sub(mark.fronts)?;
        Some(mark.index + shift).filter(|&i| i < self.lines.len())
    }

    /// Put `event` before every line so far: a header whose facts are known only once the
    /// first events are written (Geister names the peers a seat connected from, and a seat may
    /// play its placement before its opponent has connected).
    pub fn push_front<T: Serialize>(&mut self, event: &T) {
        self.lines.insert(0, Self::line_of(event).0);
        self.fronts += 1;
    }

    /// Add `key` with `value` as the last field of the header line (the referee's own facts
    /// about a match that a re-run cannot reproduce, e.g. the sandbox the bots ran in). The
    /// other bytes of the header stay as they were; [`strip_header_field`] undoes it.
    pub fn append_header_field<T: Serialize>(&mut self, key: &str, value: &T) {
        let Some(header) = self.lines.first_mut() else {
            return;
        };
        let (Ok(key), Ok(value)) = (serde_json::to_string(key), serde_json::to_string(value))
        else {
            return;
        };
        if header.ends_with('}') {
            header.pop();
            header.push(',');
            header.push_str(&key);
            header.push(':');
            header.push_str(&value);
            header.push('}');
        }
    }
}

/// `text` without the header field `key` appended by [`ReplayLog::append_header_field`].
pub fn strip_header_field<'a>(text: &'a str, key: &str) -> std::borrow::Cow<'a, str> {
    let header_end = text.find('\n').unwrap_or(text.len());
    let header = &text[..header_end];
    let needle = format!(",{}:", serde_json::to_string(key).unwrap_or_default());
    match header.rfind(&needle) {
        Some(at) if header.ends_with('}') => {
            let mut out = String::with_capacity(text.len());
            out.push_str(&header[..at]);
            out.push('}');
            out.push_str(&text[header_end..]);
            std::borrow::Cow::Owned(out)
        }
        _ => std::borrow::Cow::Borrowed(text),
    }
}

impl ReplayLog {
    /// The replay as JSON Lines text (each line ends with LF).
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.lines.iter().map(|l| l.len() + 1).sum());
        for l in &self.lines {
            out.push_str(l);
            out.push('\n');
        }
        out
    }

    /// Parse JSON Lines text; blank lines are ignored.
    pub fn parse(text: &str) -> Result<ParsedReplay, ReplayError> {
        let mut values = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line).map_err(|source| ReplayError::Json {
                line: i + 1,
                source,
            })?;
            values.push((i + 1, v));
        }
        let Some((first_line, first)) = values.first().cloned() else {
            return Err(ReplayError::Empty);
        };
        let header: ReplayHeader =
            serde_json::from_value(first).map_err(|e| ReplayError::Shape {
                line: first_line,
                message: format!("expected a replay header: {e}"),
            })?;
        if header.event != "header" {
            return Err(ReplayError::Shape {
                line: first_line,
                message: format!("expected event \"header\", found {:?}", header.event),
            });
        }
        Ok(ParsedReplay {
            header,
            events: values.into_iter().skip(1).collect(),
        })
    }
}

/// A replay read back: its header and its events with their line numbers.
#[derive(Debug, Clone)]
pub struct ParsedReplay {
    pub header: ReplayHeader,
    pub events: Vec<(usize, Value)>,
}

impl ParsedReplay {
    /// Events of one kind, decoded into `T`, with errors naming the line.
    pub fn events_of<T: DeserializeOwned>(&self, kind: &str) -> Result<Vec<T>, ReplayError> {
        self.events
            .iter()
            .filter(|(_, v)| v.get("event").and_then(Value::as_str) == Some(kind))
            .map(|(line, v)| {
                serde_json::from_value(v.clone()).map_err(|e| ReplayError::Shape {
                    line: *line,
                    message: format!("bad {kind:?} event: {e}"),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reports_lines() {
        let mut log = ReplayLog::new();
        log.push(&ReplayHeader {
            event: "header".into(),
            format: "x@1".into(),
            engine: "0.1.0".into(),
            game: "nac".into(),
            rules: "nac".into(),
            seed: 7,
            seats: vec!["builtin:random".into()],
            params: Value::Null,
        });
        log.push(&serde_json::json!({"event": "turn", "n": 1}));
        let parsed = ReplayLog::parse(&log.to_text()).unwrap();
        assert_eq!(parsed.header.seed, 7);
        assert_eq!(parsed.events.len(), 1);
        let err = ReplayLog::parse("{\"event\":\"header\"}\nnot json\n").unwrap_err();
        assert!(
            err.to_string().contains("line 1") || err.to_string().contains("line 2"),
            "{err}"
        );
        assert!(matches!(ReplayLog::parse("\n\n"), Err(ReplayError::Empty)));
    }

    #[test]
    fn a_line_pushed_to_the_front_comes_before_the_lines_so_far() {
        let mut log = ReplayLog::new();
        log.push(&serde_json::json!({"event": "turn", "n": 1}));
        log.push(&serde_json::json!({"event": "turn", "n": 2}));
        log.push_front(&serde_json::json!({"event": "header"}));
        assert_eq!(
            log.lines(),
            [
                r#"{"event":"header"}"#,
                r#"{"event":"turn","n":1}"#,
                r#"{"event":"turn","n":2}"#
            ]
        );
    }

    #[test]
    fn a_marked_line_is_found_after_lines_put_before_it_and_never_in_another_log() {
        let mut log = ReplayLog::new();
        log.push(&serde_json::json!({"event": "turn", "n": 1}));
        let mark = log.push_marked(ReplayLog::line_of(&serde_json::json!({"event": "seat"})));
        log.push(&serde_json::json!({"event": "turn", "n": 2}));
        log.push_front(&serde_json::json!({"event": "header"}));
        log.line_mut(mark).unwrap().push_str(" changed");
        assert_eq!(log.lines()[2], r#"{"event":"seat"} changed"#);
        let copy = log.clone();
        assert_eq!(copy, log);
        let mut other = ReplayLog::new();
        other.push(&serde_json::json!({"event": "a"}));
        other.push(&serde_json::json!({"event": "b"}));
        other.push(&serde_json::json!({"event": "c"}));
        assert!(other.line_mut(mark).is_none(), "a mark of another log");
        let taken = std::mem::take(&mut log);
        assert!(log.line_mut(mark).is_none(), "the log that replaced it");
        assert_eq!(taken.lines().len(), 4);
    }
}
