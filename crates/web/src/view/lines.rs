//! A replay as the viewers read it: the header, and each event line with its kind, made into a
//! JSON value only when a viewer asks for it. A match page builds its model from a replay on
//! every request, and most of a replay's lines are read once into a typed event (a seat's
//! exchange, a Geister ply) straight from their text: building a [`Value`] of every line first
//! cost as much as all the rest of the model.
//!
//! It reads what [`ReplayLog::parse`](kakehiki_core::replay::ReplayLog::parse) reads and
//! refuses what it refuses, with the same errors: every line must be JSON (the first bad line
//! is named), and the first line must be the header.

use std::borrow::Cow;
use std::cell::OnceCell;

use kakehiki_core::replay::{ReplayError, ReplayHeader};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// One event line.
pub(crate) struct Line<'a> {
    /// Its number in the file, from 1.
    pub(crate) line: usize,
    /// Its `event` (empty when it has none, or not a string), borrowed from the line where it
    /// has no escapes.
    pub(crate) kind: Cow<'a, str>,
    text: &'a str,
    value: OnceCell<Value>,
}

impl<'a> Line<'a> {
    /// The line as a JSON value (made on first use).
    pub(crate) fn value(&self) -> &Value {
        self.value
            .get_or_init(|| serde_json::from_str(self.text).unwrap_or(Value::Null))
    }

    /// The line as a `T`, straight from its text. A line that does not fit is decoded again
    /// from its value, so that the error is the one a decoding of the value gives.
    pub(crate) fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match serde_json::from_str(self.text) {
            Ok(t) => Ok(t),
            Err(_) => T::deserialize(self.value()),
        }
    }
}

/// A replay's header and event lines.
pub(crate) struct Replay<'a> {
    pub(crate) header: ReplayHeader,
    pub(crate) events: Vec<Line<'a>>,
}

/// What a line is, read without building it: its `event` when that is a plain string.
#[derive(Deserialize)]
struct Kind<'a> {
    #[serde(borrow, default)]
    event: Option<&'a serde_json::value::RawValue>,
}

fn kind_of(raw: Option<&serde_json::value::RawValue>) -> Option<Cow<'_, str>> {
    let raw = raw?.get();
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(plain) if !plain.contains('\\') => Some(Cow::Borrowed(plain)),
        _ => serde_json::from_str::<String>(raw).ok().map(Cow::Owned),
    }
}

impl<'a> Replay<'a> {
    pub(crate) fn parse(text: &'a str) -> Result<Replay<'a>, ReplayError> {
        let mut lines = Vec::new();
        for (i, text) in text.lines().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            let line = i + 1;
            let (kind, value) = match serde_json::from_str::<Kind>(text) {
                Ok(k) => (kind_of(k.event), OnceCell::new()),
                // Not an object, a duplicate `event`, or not JSON: as a value, or the error.
                Err(_) => {
                    let v: Value = serde_json::from_str(text)
                        .map_err(|source| ReplayError::Json { line, source })?;
                    let kind = v
                        .get("event")
                        .and_then(Value::as_str)
                        .map(|k| Cow::Owned(k.to_string()));
                    (kind, OnceCell::from(v))
                }
            };
            lines.push(Line {
                line,
                kind: kind.unwrap_or_default(),
                text,
                value,
            });
        }
        if lines.is_empty() {
            return Err(ReplayError::Empty);
        }
        let first = lines.remove(0);
        let header: ReplayHeader = first.decode().map_err(|e| ReplayError::Shape {
            line: first.line,
            message: format!("expected a replay header: {e}"),
        })?;
        if header.event != "header" {
            return Err(ReplayError::Shape {
                line: first.line,
                message: format!("expected event \"header\", found {:?}", header.event),
            });
        }
        Ok(Replay {
            header,
            events: lines,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Replay;
    use kakehiki_core::replay::ReplayLog;

    /// Whatever `ReplayLog::parse` reads, this reads alike (the same events, kinds and
    /// values); whatever it refuses, this refuses with the same message.
    #[test]
    fn reads_and_refuses_as_the_replay_parser_does() {
        let header = r#"{"event":"header","format":"x@1","engine":"0","game":"toy","rules":"r","seed":1,"seats":["a"],"params":null}"#;
        let cases = [
            format!("{header}\n{{\"event\":\"turn\",\"n\":1}}\n\n{{\"n\":2}}\n[1,2]\n"),
            format!("{header}\n{{\"event\":7}}\n{{\"event\":\"a\\\"b\"}}\n{{\"event\":\"x\",\"event\":\"y\"}}\n"),
            format!("{header}\n{{\"event\":\"turn\"\n"),
            "\n\n".to_string(),
            format!("{{\"event\":\"turn\"}}\n{header}\n"),
            "{\"event\":\"header\"}\n".to_string(),
            format!("{header} trailing\n"),
            format!("\n{header}\n{{\"event\":\"end\"}}"),
        ];
        for text in &cases {
            match (ReplayLog::parse(text), Replay::parse(text)) {
                (Ok(old), Ok(new)) => {
                    assert_eq!(old.header, new.header, "{text}");
                    assert_eq!(old.events.len(), new.events.len(), "{text}");
                    for ((line, v), l) in old.events.iter().zip(&new.events) {
                        assert_eq!(*line, l.line, "{text}");
                        assert_eq!(v, l.value(), "{text}");
                        let kind = v.get("event").and_then(serde_json::Value::as_str);
                        assert_eq!(kind.unwrap_or(""), l.kind, "{text}");
                    }
                }
                (Err(old), Err(new)) => assert_eq!(old.to_string(), new.to_string(), "{text}"),
                (old, new) => panic!(
                    "{text}: ReplayLog::parse {:?}, Replay::parse {:?}",
                    old.map(|_| ()),
                    new.map(|_| ())
                ),
            }
        }
    }
}
