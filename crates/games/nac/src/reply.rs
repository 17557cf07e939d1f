//! Reply parsing (§3.4): the same outcomes as the original referee, every deviation recorded.

use serde::{Deserialize, Serialize};

/// What was wrong with (part of) a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueCode {
    /// The line was longer than 4096 bytes and was cut.
    LineTooLong,
    /// Fields after the n-th were ignored.
    ExtraFields,
    /// Fewer than n fields; the missing ones became target 0.
    MissingField,
    /// An empty field (two spaces in a row, or an empty line); target 0.
    EmptyField,
    /// A field with no number at its start; target 0.
    NotANumber,
    /// A number read leniently (sign, hex, leading whitespace, trailing text); value kept.
    LenientNumber,
    /// A number outside 0..L-1; target 0.
    OutOfRange,
    /// The deadline passed with an unterminated line; it was taken as the reply.
    NoNewline,
}

impl IssueCode {
    /// The code's name in the replay (`out_of_range`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            IssueCode::LineTooLong => "line_too_long",
            IssueCode::ExtraFields => "extra_fields",
            IssueCode::MissingField => "missing_field",
            IssueCode::EmptyField => "empty_field",
            IssueCode::NotANumber => "not_a_number",
            IssueCode::LenientNumber => "lenient_number",
            IssueCode::OutOfRange => "out_of_range",
            IssueCode::NoNewline => "no_newline",
        }
    }
}

/// One recorded deviation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    pub code: IssueCode,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub field: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text: Option<String>,
    /// The value read from the field, where it differs from a plain reading.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<i64>,
}

impl Issue {
    fn new(code: IssueCode, field: Option<usize>, text: Option<&str>, value: Option<i64>) -> Self {
        Issue {
            code,
            field,
            text: text.map(str::to_string),
            value,
        }
    }

    /// A line-level issue without a field.
    pub fn line(code: IssueCode) -> Self {
        Issue::new(code, None, None, None)
    }

    /// The deviation in words, for the seat's error record: `turn 3: out_of_range in field 2
    /// "9", target 0 used`.
    pub fn describe(&self, turn: u32) -> String {
        let mut d = format!("turn {turn}: {}", self.code.as_str());
        if let Some(f) = self.field {
            d.push_str(&format!(" in field {f}"));
        }
        if let Some(t) = &self.text {
            d.push_str(&format!(" {:?}", t.chars().take(100).collect::<String>()));
        }
        match self.code {
            IssueCode::LenientNumber => {
                d.push_str(&format!(", read as {}", self.value.unwrap_or(0)))
            }
            IssueCode::ExtraFields | IssueCode::NoNewline | IssueCode::LineTooLong => {}
            _ => d.push_str(", target 0 used"),
        }
        d
    }
}

/// A reply's deviations in one line for the seat's error record (the replay keeps each one):
/// `reply "3 x": not_a_number in field 1 "x", target 0 used`; at most three listed, and for a
/// reply with no number at its start, the hint that it is most often debug output.
pub fn describe_reply(raw: &str, issues: &[Issue]) -> String {
    const LISTED: usize = 3;
    let shown: String = raw.chars().take(60).collect();
    let cut = if raw.chars().count() > 60 { "..." } else { "" };
    let mut d = format!("reply {shown:?}{cut}: ");
    let said: Vec<String> = issues
        .iter()
        .take(LISTED)
        .map(|i| {
            let full = i.describe(0);
            full.strip_prefix("turn 0: ").unwrap_or(&full).to_string()
        })
        .collect();
    d.push_str(&said.join("; "));
    if issues.len() > LISTED {
        d.push_str(&format!(" (and {} more)", issues.len() - LISTED));
    }
    let first_field_bad = issues
        .iter()
        .any(|i| i.code == IssueCode::NotANumber && i.field == Some(0));
    if first_field_bad {
        d.push_str("; a line that is not numbers is most often debug output: write it to stderr (stdout carries only replies)");
    }
    if issues.iter().any(|i| i.code == IssueCode::NoNewline) {
        d.push_str(": your bot wrote no newline after it, so it was taken only at the deadline; end each reply with \"\\n\" and flush");
    }
    d
}

/// The picks a reply line yields and the deviations found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedReply {
    pub picks: Vec<u8>,
    pub issues: Vec<Issue>,
}

/// JavaScript's white space set (`String.prototype.trim`, `parseInt`).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(c,
        '\u{0009}'..='\u{000D}' | '\u{0020}' | '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}'
        | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}')
}

/// `parseInt(field)` without radix: `None` for NaN; `Some((value, plain))` where `plain` is false
/// when anything but plain decimal digits was involved.
fn js_parse_int(field: &str) -> Option<(i128, bool)> {
    let trimmed = field.trim_start_matches(is_js_whitespace);
    let mut plain = trimmed.len() == field.len();
    let (negative, rest) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    if rest.len() != trimmed.len() {
        plain = false;
    }
    let (radix, digits) = if rest.len() >= 2 && (rest.starts_with("0x") || rest.starts_with("0X")) {
        plain = false;
        (16, &rest[2..])
    } else {
        (10, rest)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    if end != digits.len() {
        plain = false;
    }
    let mut v: i128 = 0;
    for c in digits[..end].chars() {
        let d = c.to_digit(radix).unwrap_or(0) as i128;
        // Saturate: very long digit strings simply fall out of range.
        v = v.saturating_mul(radix as i128).saturating_add(d);
    }
    Some((if negative { -v } else { v }, plain))
}

/// Parse one reply line (the bytes before the LF) into `n` picks among `targets` targets.
pub fn parse_reply(raw: &[u8], n: usize, targets: usize) -> ParsedReply {
    plain_picks(raw, n, targets).unwrap_or_else(|| parse_reply_fields(raw, n, targets))
}

/// The usual reply, read without allocating more than its picks: exactly `n` fields of decimal
/// digits, one space between them, each a target. `None` for anything else, which
/// [`parse_reply_fields`] reads (with the same result for what this accepts).
fn plain_picks(raw: &[u8], n: usize, targets: usize) -> Option<ParsedReply> {
    let mut picks = Vec::with_capacity(n);
    for field in raw.split(|&b| b == b' ') {
        // Three digits at most: any target fits, and no value overflows.
        if field.is_empty() || field.len() > 3 || !field.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let v = field
            .iter()
            .fold(0usize, |v, &d| v * 10 + usize::from(d - b'0'));
        if v >= targets || picks.len() == n {
            return None;
        }
        picks.push(v as u8);
    }
    (picks.len() == n).then_some(ParsedReply {
        picks,
        issues: Vec::new(),
    })
}

/// [`parse_reply`] field by field, every deviation recorded.
fn parse_reply_fields(raw: &[u8], n: usize, targets: usize) -> ParsedReply {
    let text = String::from_utf8_lossy(raw);
    let line = text.trim_matches(is_js_whitespace);
    let fields: Vec<&str> = line.split(' ').collect();
    let mut picks = Vec::with_capacity(n);
    let mut issues = Vec::new();
    for k in 0..n {
        let Some(&field) = fields.get(k) else {
            issues.push(Issue::new(IssueCode::MissingField, Some(k), None, None));
            picks.push(0);
            continue;
        };
        if field.is_empty() {
            issues.push(Issue::new(
                IssueCode::EmptyField,
                Some(k),
                Some(field),
                None,
            ));
            picks.push(0);
            continue;
        }
        match js_parse_int(field) {
            None => {
                issues.push(Issue::new(
                    IssueCode::NotANumber,
                    Some(k),
                    Some(field),
                    None,
                ));
                picks.push(0);
            }
            Some((v, plain)) => {
                let value = v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
                if !plain {
                    issues.push(Issue::new(
                        IssueCode::LenientNumber,
                        Some(k),
                        Some(field),
                        Some(value),
                    ));
                }
                if v >= 0 && (v as u128) < targets as u128 {
                    picks.push(v as u8);
                } else {
                    issues.push(Issue::new(
                        IssueCode::OutOfRange,
                        Some(k),
                        Some(field),
                        None,
                    ));
                    picks.push(0);
                }
            }
        }
    }
    if fields.len() > n {
        issues.push(Issue::new(
            IssueCode::ExtraFields,
            Some(n),
            Some(&fields[n..].join(" ")),
            None,
        ));
    }
    ParsedReply { picks, issues }
}

/// Parse a reply as the referee received it: `truncated` (cut at the line cap) and
/// `unterminated` (taken without its LF, §3.3) are recorded first, as `line_too_long` and
/// `no_newline`.
pub fn parse_received(
    raw: &[u8],
    truncated: bool,
    unterminated: bool,
    n: usize,
    targets: usize,
) -> ParsedReply {
    let mut parsed = parse_reply(raw, n, targets);
    let lead = match (truncated, unterminated) {
        (true, _) => Some(Issue::line(IssueCode::LineTooLong)),
        (_, true) => Some(Issue::line(IssueCode::NoNewline)),
        _ => None,
    };
    if let Some(lead) = lead {
        parsed.issues.insert(0, lead);
    }
    parsed
}

/// Why a line received while waiting for READY is not one (§3.2): `None` if it is a READY,
/// `Some("")` for a blank line (skipped), else the problem with its code (`bad_ready`,
/// `timeout` for unterminated text at the deadline, `crash` when the output `closed` after
/// unterminated text).
pub fn not_ready(raw: &[u8], unterminated: bool, closed: bool, ready_ms: u64) -> Option<String> {
    let text: String = String::from_utf8_lossy(raw).chars().take(200).collect();
    if unterminated && closed {
        Some(format!(
            "crash: output closed after {text:?} without a newline"
        ))
    } else if is_ready(raw) {
        None
    } else if unterminated {
        Some(format!(
            "timeout: no READY within {ready_ms} ms (unterminated {text:?})"
        ))
    } else if is_blank(raw) {
        Some(String::new())
    } else {
        Some(format!("bad_ready: expected READY, got {text:?}"))
    }
}

/// Whether a (trimmed) line is an acceptable READY (§3.2): `ready` ignoring ASCII case.
pub fn is_ready(raw: &[u8]) -> bool {
    String::from_utf8_lossy(raw)
        .trim_matches(is_js_whitespace)
        .eq_ignore_ascii_case("ready")
}

/// Whether a line is blank after trimming (skipped while waiting for READY).
pub fn is_blank(raw: &[u8]) -> bool {
    String::from_utf8_lossy(raw)
        .trim_matches(is_js_whitespace)
        .is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // The quick reading of the usual reply gives what the field-by-field reading gives, on
        // lines made of digits, spaces and the characters the lenient rules care about.
        #[test]
        fn the_quick_reading_agrees_with_the_full_one(
            fields in prop::collection::vec(
                prop_oneof![4 => "[0-8]", 2 => "[0-9]{1,4}", 1 => "[+x\\-.]?[0-9]{0,2}[x.]?", 1 => Just(String::new())],
                0..8,
            ),
            sep in prop_oneof![6 => Just(" "), 1 => Just("  "), 1 => Just("\t")],
            (lead, trail) in ("[ \t]{0,1}", "[ \r]{0,1}"),
            n in 0usize..7,
            exact in any::<bool>(),
            targets in 1usize..9,
        ) {
            let n = if exact { fields.len() } else { n };
            let line = format!("{lead}{}{trail}", fields.join(sep));
            let raw = line.as_bytes();
            if let Some(quick) = plain_picks(raw, n, targets) {
                prop_assert_eq!(quick, parse_reply_fields(raw, n, targets));
            }
            prop_assert_eq!(parse_reply(raw, n, targets), parse_reply_fields(raw, n, targets));
        }

        #[test]
        fn plain_replies_take_the_quick_reading(picks in prop::collection::vec(0u8..8, 1..6)) {
            let line = picks.iter().map(u8::to_string).collect::<Vec<_>>().join(" ");
            let quick = plain_picks(line.as_bytes(), picks.len(), 8);
            prop_assert_eq!(quick.map(|q| q.picks), Some(picks));
        }
    }

    fn picks(line: &str, n: usize) -> Vec<u8> {
        parse_reply(line.as_bytes(), n, 6).picks
    }

    #[test]
    fn cases_run_on_the_original() {
        assert_eq!(picks("5 5 5 5 5 5 5", 5), [5, 5, 5, 5, 5]);
        assert_eq!(picks("9 -1", 2), [0, 0]);
        assert_eq!(picks("x 1 2 3 4", 5), [0, 1, 2, 3, 4]);
        assert_eq!(picks("1  2", 2), [1, 0]);
        assert_eq!(picks("1\t2\t3 4 5", 5), [1, 4, 5, 0, 0]);
        assert_eq!(picks("3", 2), [3, 0]);
        assert_eq!(picks("", 5), [0, 0, 0, 0, 0]);
        assert_eq!(picks("4 4", 5), [4, 4, 0, 0, 0]);
        assert_eq!(picks("0x5 +3 3.7 -0 1e3", 5), [5, 3, 3, 0, 1]);
        assert_eq!(picks("12 5", 2), [0, 5]);
        assert_eq!(picks("\t4 5", 2), [4, 5]);
        assert_eq!(picks(" 2 3 4 5 1", 5), [2, 3, 4, 5, 1]);
        assert_eq!(picks("5 4 3 2 1\r", 2), [5, 4]);
        assert_eq!(picks("5 5 9 x", 5), [5, 5, 0, 0, 0]);
    }

    #[test]
    fn records_every_deviation() {
        let r = parse_reply(b"5 5 9 x", 5, 6);
        let codes: Vec<_> = r.issues.iter().map(|i| (i.code, i.field)).collect();
        assert_eq!(
            codes,
            [
                (IssueCode::OutOfRange, Some(2)),
                (IssueCode::NotANumber, Some(3)),
                (IssueCode::MissingField, Some(4)),
            ]
        );
        let r = parse_reply(b"0x5 1 1 1 1 9", 5, 6);
        assert_eq!(r.issues[0].code, IssueCode::LenientNumber);
        assert_eq!(r.issues[0].value, Some(5));
        assert_eq!(r.issues[1].code, IssueCode::ExtraFields);
        assert!(parse_reply(b"1 2 3 4 5", 5, 6).issues.is_empty());
    }

    #[test]
    fn survives_hostile_input() {
        let long = "9".repeat(5000);
        assert_eq!(picks(&long, 2), [0, 0]);
        assert_eq!(parse_reply(&[0xff, 0xfe, b' ', b'1'], 2, 6).picks, [0, 1]);
        assert_eq!(picks("\u{3000}3 4\u{feff}", 2), [3, 4]);
        assert_eq!(picks("-", 2), [0, 0]);
        assert_eq!(picks("0x", 2), [0, 0]);
    }

    #[test]
    fn ready_is_case_insensitive_and_trimmed() {
        assert_eq!(not_ready(b"READY\r", false, false, 5000), None);
        assert_eq!(not_ready(b" ", false, false, 5000).as_deref(), Some(""));
        assert!(not_ready(b"hello", false, false, 5000)
            .unwrap()
            .starts_with("bad_ready"));
        assert!(not_ready(b"REA", true, false, 300)
            .unwrap()
            .starts_with("timeout"));
        assert!(not_ready(b"READY", true, true, 300)
            .unwrap()
            .starts_with("crash"));
        let p = parse_received(b"1 2", true, true, 2, 6);
        assert_eq!(p.issues, vec![Issue::line(IssueCode::LineTooLong)]);
        assert_eq!(p.picks, vec![1, 2]);
        assert!(is_ready(b"READY"));
        assert!(is_ready(b" ready\r"));
        assert!(!is_ready(b"hello READY"));
        assert!(is_blank(b" \r"));
    }
}

/// A person's reply checked against the last block they were sent (the human seat refuses an
/// invalid one with the reason, so that they may try again): `READY` before the first block,
/// then 5 targets on a day (weekday) and 2 on a night (holiday), each in 0..L−1.
pub fn check_reply(last: &str, reply: &str) -> Result<(), String> {
    let lines: Vec<&str> = last.lines().filter(|l| !l.trim().is_empty()).collect();
    // The turn line `t X` starts the block (after the settings in the first one).
    let Some(at) = lines.iter().position(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        f.len() == 2 && matches!(f[1], "D" | "N" | "W" | "H")
    }) else {
        return match reply.trim().eq_ignore_ascii_case("ready") {
            true => Ok(()),
            false => Err(format!(
                "the referee waits for READY before the first turn, not {:?}",
                reply.trim()
            )),
        };
    };
    let day = matches!(lines[at].split(' ').nth(1), Some("D" | "W"));
    let (n, targets) = match day {
        true => (5, lines.len() - at - 3),
        false => (2, lines.len() - at - 2),
    };
    let parsed = parse_reply(reply.as_bytes(), n, targets);
    match parsed.issues.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "{}; this turn takes {n} targets from 0 to {}, separated by spaces",
            describe_reply(reply, &parsed.issues),
            targets - 1
        )),
    }
}

#[cfg(test)]
mod human_tests {
    use super::check_reply;

    #[test]
    fn a_persons_reply_is_checked_against_the_turn() {
        assert_eq!(check_reply("", "READY"), Ok(()));
        assert!(check_reply("", "1 2").unwrap_err().contains("READY"));
        let first = "9 4 6\n3 4 5 6 3 4\n1 D\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0 0 0\n0 0 0 0 0 0\n";
        assert_eq!(check_reply(first, "0 1 2 3 5"), Ok(()));
        let e = check_reply(first, "0 1 2 3 6").unwrap_err();
        assert!(
            e.contains("out_of_range") && e.contains("5 targets from 0 to 5"),
            "{e}"
        );
        let night = "2 N\n1 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0 0 0\n";
        assert_eq!(check_reply(night, "4 4"), Ok(()));
        assert!(check_reply(night, "4 4 4").is_err());
    }
}
