//! The talk language: AIWolf protocol 3.6 (§5.1), its validation, and a typed parse.
//!
//! [`parse`] turns a trimmed utterance into a [`Utterance`] or rejects it; an utterance is valid
//! exactly when it parses. [`is_2015_template`] checks the seed-2015 subset (§5.4).

use crate::types::{Role, Species};

/// One talk or whisper entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Talk {
    pub idx: u32,
    pub day: u32,
    pub turn: u32,
    /// Agent number (1-based).
    pub agent: usize,
    pub text: String,
    /// The text parsed once by the engine (`None` for `Skip`, `Over` and unparsable text when
    /// validation is off). Public, derived from `text` only; not on the wire.
    pub parsed: Option<std::sync::Arc<Utterance>>,
}

impl Talk {
    pub fn is_skip(&self) -> bool {
        self.text == "Skip"
    }
    pub fn is_over(&self) -> bool {
        self.text == "Over"
    }
}

/// An agent reference in talk: `Agent[N]` or `ANY`. `Agent[00]` is kept as `Agent(0)`
/// (conventionally "any").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Who {
    Any,
    Agent(u32),
}

impl Who {
    /// The agent number, if this names one (not `ANY`, not `Agent[00]`).
    pub fn agent(self) -> Option<usize> {
        match self {
            Who::Agent(n) if n > 0 => Some(n as usize),
            _ => None,
        }
    }
}

/// A whole utterance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Utterance {
    Skip,
    Over,
    Sentence(Sentence),
}

/// A sentence: an optional subject and a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub subject: Option<Who>,
    pub body: Body,
}

/// Which channel an AGREE/DISAGREE refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Talk,
    Whisper,
}

/// The body of a sentence. `None` role/species means `ANY`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Estimate(Who, Option<Role>),
    Comingout(Who, Option<Role>),
    Divined(Who, Option<Species>),
    Identified(Who, Option<Species>),
    Attack(Who),
    Attacked(Who),
    Divination(Who),
    Guard(Who),
    Guarded(Who),
    Vote(Who),
    Voted(Who),
    Agree {
        channel: Channel,
        day: u32,
        id: u32,
    },
    Disagree {
        channel: Channel,
        day: u32,
        id: u32,
    },
    /// `REQUEST a (…)`, or the protocol-2 `REQUEST (…)` (target `None`).
    Request(Option<Who>, Box<Utterance>),
    Inquire(Who, Box<Utterance>),
    Because(Box<Utterance>, Box<Utterance>),
    Xor(Box<Utterance>, Box<Utterance>),
    And(Vec<Utterance>),
    Or(Vec<Utterance>),
    Not(Box<Utterance>),
    Day(u32, Box<Utterance>),
}

/// Why an utterance is invalid. Position is a byte offset into the trimmed text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TalkError {
    #[error("empty utterance")]
    Empty,
    #[error("byte {0}: only printable ASCII and TAB are allowed")]
    Character(usize),
    #[error("byte {pos}: expected {expected}")]
    Expected { pos: usize, expected: &'static str },
    #[error("byte {0}: number beyond 2147483647")]
    Overflow(usize),
    #[error("byte {0}: unexpected text after the utterance")]
    Trailing(usize),
    #[error("nesting deeper than {0} groups")]
    TooDeep(usize),
}

const MAX_DEPTH: usize = 256;

/// Trim leading and trailing bytes ≤ 0x20 (§4.8).
pub fn trim_reply(s: &str) -> &str {
    s.trim_matches(|c: char| (c as u32) <= 0x20)
}

/// Parse a (trimmed) utterance; valid iff `Ok`.
pub fn parse(text: &str) -> Result<Utterance, TalkError> {
    if text.is_empty() {
        return Err(TalkError::Empty);
    }
    if let Some(pos) = text
        .bytes()
        .position(|b| !(b == b'\t' || (0x20..=0x7e).contains(&b)))
    {
        return Err(TalkError::Character(pos));
    }
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let u = p.utterance()?;
    if p.pos != p.s.len() {
        return Err(TalkError::Trailing(p.pos));
    }
    Ok(u)
}

/// Whether `text` passes the protocol 3.6 check.
pub fn is_valid(text: &str) -> bool {
    parse(text).is_ok()
}

/// Whether `text` is one of the seed-2015 templates (§5.4). `ATTACK` only in whispers.
pub fn is_2015_template(text: &str, whisper: bool) -> bool {
    parse(text).is_ok_and(|u| fits_2015_template(&u, whisper))
}

/// Whether a parsed utterance is one of the seed-2015 templates (§5.4).
pub fn fits_2015_template(u: &Utterance, whisper: bool) -> bool {
    let s = match u {
        Utterance::Skip | Utterance::Over => return true,
        Utterance::Sentence(s) => s,
    };
    if s.subject.is_some() {
        return false;
    }
    let agent = |w: &Who| matches!(w, Who::Agent(_));
    match &s.body {
        Body::Estimate(a, Some(_)) | Body::Comingout(a, Some(_)) => agent(a),
        Body::Divined(a, Some(_)) | Body::Identified(a, Some(_)) => agent(a),
        Body::Guarded(a) | Body::Vote(a) => agent(a),
        Body::Attack(a) => whisper && agent(a),
        Body::Agree { .. } | Body::Disagree { .. } => true,
        _ => false,
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn ws0(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn ws1(&mut self) -> Result<(), TalkError> {
        if !matches!(self.peek(), Some(b' ' | b'\t')) {
            return Err(TalkError::Expected {
                pos: self.pos,
                expected: "a space",
            });
        }
        self.ws0();
        Ok(())
    }

    fn lit(&mut self, l: &str) -> bool {
        if self.s[self.pos..].starts_with(l.as_bytes()) {
            self.pos += l.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, l: &'static str) -> Result<(), TalkError> {
        if self.lit(l) {
            Ok(())
        } else {
            Err(TalkError::Expected {
                pos: self.pos,
                expected: l,
            })
        }
    }

    /// A run of ASCII letters.
    fn word(&mut self) -> &[u8] {
        let start = self.pos;
        while matches!(self.peek(), Some(b) if b.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    fn int(&mut self) -> Result<u32, TalkError> {
        let start = self.pos;
        let mut v: u64 = 0;
        while let Some(b @ b'0'..=b'9') = self.peek() {
            v = v * 10 + u64::from(b - b'0');
            if v > 2_147_483_647 {
                return Err(TalkError::Overflow(start));
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(TalkError::Expected {
                pos: start,
                expected: "a number",
            });
        }
        Ok(v as u32)
    }

    fn try_agent(&mut self) -> Result<Option<Who>, TalkError> {
        if self.lit("ANY") {
            return Ok(Some(Who::Any));
        }
        if self.lit("Agent[") {
            let n = self.int()?;
            self.expect("]")?;
            return Ok(Some(Who::Agent(n)));
        }
        Ok(None)
    }

    fn agent(&mut self) -> Result<Who, TalkError> {
        let pos = self.pos;
        self.try_agent()?.ok_or(TalkError::Expected {
            pos,
            expected: "Agent[N] or ANY",
        })
    }

    fn role(&mut self) -> Result<Option<Role>, TalkError> {
        let pos = self.pos;
        let w = self.word();
        if w == b"ANY" {
            return Ok(None);
        }
        std::str::from_utf8(w)
            .ok()
            .and_then(Role::from_name)
            .map(Some)
            .ok_or(TalkError::Expected {
                pos,
                expected: "a role name",
            })
    }

    fn species(&mut self) -> Result<Option<Species>, TalkError> {
        let pos = self.pos;
        match self.word() {
            b"HUMAN" => Ok(Some(Species::Human)),
            b"WEREWOLF" => Ok(Some(Species::Werewolf)),
            b"ANY" => Ok(None),
            _ => Err(TalkError::Expected {
                pos,
                expected: "HUMAN, WEREWOLF or ANY",
            }),
        }
    }

    fn utterance(&mut self) -> Result<Utterance, TalkError> {
        // `Skip`/`Over` are whole words: followed by the end, a space or `)`.
        for (w, u) in [("Skip", Utterance::Skip), ("Over", Utterance::Over)] {
            if self.s[self.pos..].starts_with(w.as_bytes())
                && matches!(self.s.get(self.pos + 4), None | Some(b' ' | b'\t' | b')'))
            {
                self.pos += 4;
                return Ok(u);
            }
        }
        let subject = self.try_agent()?;
        if subject.is_some() {
            self.ws0();
        }
        let body = self.body()?;
        Ok(Utterance::Sentence(Sentence { subject, body }))
    }

    fn group(&mut self) -> Result<Utterance, TalkError> {
        self.expect("(")?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(TalkError::TooDeep(MAX_DEPTH));
        }
        self.ws0();
        let u = self.utterance()?;
        self.ws0();
        self.expect(")")?;
        self.depth -= 1;
        Ok(u)
    }

    /// `group { {ws} group }`: at least `min` groups.
    fn groups(&mut self, min: usize) -> Result<Vec<Utterance>, TalkError> {
        let mut v = vec![self.group()?];
        loop {
            let save = self.pos;
            self.ws0();
            if self.peek() == Some(b'(') {
                v.push(self.group()?);
            } else {
                self.pos = save;
                break;
            }
        }
        if v.len() < min {
            return Err(TalkError::Expected {
                pos: self.pos,
                expected: "another operand group",
            });
        }
        Ok(v)
    }

    fn first(mut v: Vec<Utterance>) -> Box<Utterance> {
        Box::new(v.swap_remove(0))
    }

    fn two(v: Vec<Utterance>) -> (Box<Utterance>, Box<Utterance>) {
        let mut it = v.into_iter();
        let a = it.next().unwrap_or(Utterance::Skip);
        let b = it.next().unwrap_or(Utterance::Skip);
        (Box::new(a), Box::new(b))
    }

    fn body(&mut self) -> Result<Body, TalkError> {
        let pos = self.pos;
        let kw = self.word().to_vec();
        let unknown = TalkError::Expected {
            pos,
            expected: "a sentence keyword",
        };
        Ok(match kw.as_slice() {
            b"ESTIMATE" | b"COMINGOUT" => {
                self.ws1()?;
                let a = self.agent()?;
                self.ws1()?;
                let r = self.role()?;
                if kw == b"ESTIMATE" {
                    Body::Estimate(a, r)
                } else {
                    Body::Comingout(a, r)
                }
            }
            b"DIVINED" | b"IDENTIFIED" => {
                self.ws1()?;
                let a = self.agent()?;
                self.ws1()?;
                let s = self.species()?;
                if kw == b"DIVINED" {
                    Body::Divined(a, s)
                } else {
                    Body::Identified(a, s)
                }
            }
            b"ATTACK" | b"ATTACKED" | b"DIVINATION" | b"GUARD" | b"GUARDED" | b"VOTE"
            | b"VOTED" => {
                self.ws1()?;
                let a = self.agent()?;
                match kw.as_slice() {
                    b"ATTACK" => Body::Attack(a),
                    b"ATTACKED" => Body::Attacked(a),
                    b"DIVINATION" => Body::Divination(a),
                    b"GUARD" => Body::Guard(a),
                    b"GUARDED" => Body::Guarded(a),
                    b"VOTE" => Body::Vote(a),
                    _ => Body::Voted(a),
                }
            }
            b"AGREE" | b"DISAGREE" => {
                self.ws1()?;
                let cpos = self.pos;
                let channel = match self.word() {
                    b"TALK" => Channel::Talk,
                    b"WHISPER" => Channel::Whisper,
                    _ => {
                        return Err(TalkError::Expected {
                            pos: cpos,
                            expected: "TALK or WHISPER",
                        })
                    }
                };
                self.ws1()?;
                self.expect("day")?;
                let day = self.int()?;
                self.ws1()?;
                self.expect("ID:")?;
                let id = self.int()?;
                if kw == b"AGREE" {
                    Body::Agree { channel, day, id }
                } else {
                    Body::Disagree { channel, day, id }
                }
            }
            b"REQUEST" | b"INQUIRE" => {
                self.ws1()?;
                let target = if self.peek() == Some(b'(') && kw == b"REQUEST" {
                    None
                } else {
                    let a = self.agent()?;
                    self.ws1()?;
                    Some(a)
                };
                let op = Self::first(self.groups(1)?);
                match (kw.as_slice(), target) {
                    (b"INQUIRE", Some(a)) => Body::Inquire(a, op),
                    (_, t) => Body::Request(t, op),
                }
            }
            b"BECAUSE" | b"XOR" => {
                self.ws1()?;
                let (a, b) = Self::two(self.groups(2)?);
                if kw == b"BECAUSE" {
                    Body::Because(a, b)
                } else {
                    Body::Xor(a, b)
                }
            }
            b"AND" | b"OR" => {
                self.ws1()?;
                let v = self.groups(1)?;
                if kw == b"AND" {
                    Body::And(v)
                } else {
                    Body::Or(v)
                }
            }
            b"NOT" => {
                self.ws1()?;
                Body::Not(Self::first(self.groups(1)?))
            }
            b"DAY" => {
                self.ws1()?;
                let d = self.int()?;
                self.ws1()?;
                Body::Day(d, Self::first(self.groups(1)?))
            }
            _ => return Err(unknown),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_samples_pass() {
        for s in [
            "Skip",
            "Over",
            "VOTE Agent[03]",
            "Agent[09] DIVINED Agent[10] HUMAN",
            "REQUEST ANY (VOTE Agent[01])",
            "DAY 1 (DIVINED Agent[10] HUMAN)",
            "BECAUSE (AND (COMINGOUT Agent[09] SEER) (Agent[03] COMINGOUT Agent[03] SEER)) (XOR (ESTIMATE Agent[03] WEREWOLF) (ESTIMATE Agent[03] POSSESSED))",
            "AGREE TALK day1 ID:12",
            "NOT (Skip)",
            "REQUEST (VOTE Agent[01])",
            "Agent[01]VOTE Agent[02]",
            "INQUIRE Agent[02] (VOTE ANY)",
            "AND (VOTE Agent[01])\t(VOTE Agent[02])( VOTE Agent[03] )",
            "ESTIMATE Agent[01] ANY",
            "DIVINED Agent[2147483647] ANY",
            "COMINGOUT Agent[01] FOX",
            "DISAGREE WHISPER day0 ID:0",
            "BECAUSE (VOTE Agent[01]) (VOTE Agent[02]) (Over)",
        ] {
            assert!(parse(s).is_ok(), "{s:?}: {:?}", parse(s));
        }
    }

    #[test]
    fn spec_failures_fail() {
        for s in [
            "",
            "vote Agent[01]",
            "over",
            "hello world",
            "ESTIMATE Agent[01] HUMAN",
            "DIVINED Agent[01] SEER",
            "AGREE TALK day 1 ID:3",
            "INQUESTED Agent[01] HUMAN",
            "REQUEST(VOTE Agent[01])",
            "VOTE Agent[2147483648]",
            "VOTE Agent[01]\u{e9}",
            "VOTE\u{1}Agent[01]",
            "AND ((VOTE Agent[01])",
            "NOT ((VOTE Agent[01])",
            "AND (VOTE Agent[01]), (VOTE Agent[02])",
            "BECAUSE (VOTE Agent[01])",
            "XOR (VOTE Agent[01])",
            "AND",
            "VOTE Agent[01] extra",
            "VOTE Agent[]",
            "VOTE Agent[-1]",
            "VOTEAgent[01]",
            "Skipper",
            "(VOTE Agent[01])",
            "AND (VOTE Agent[01]) x",
        ] {
            assert!(parse(s).is_err(), "{s:?} should fail");
        }
    }

    /// The contest server's validation (AIWolfCommon 0.6's `Content`, `Agent\[\d+\]`) takes an
    /// agent with one digit as the same agent; so does this parser. Two digits stay the standard.
    #[test]
    fn an_agent_with_one_digit_is_the_same_agent() {
        assert_eq!(
            parse("VOTE Agent[3]").unwrap(),
            parse("VOTE Agent[03]").unwrap()
        );
        assert!(is_2015_template("VOTE Agent[3]", false));
    }

    #[test]
    fn parses_to_typed_sentences() {
        assert_eq!(
            parse("Agent[09] DIVINED Agent[10] WEREWOLF").unwrap(),
            Utterance::Sentence(Sentence {
                subject: Some(Who::Agent(9)),
                body: Body::Divined(Who::Agent(10), Some(Species::Werewolf))
            })
        );
        let Utterance::Sentence(s) = parse("REQUEST ANY (VOTE Agent[01])").unwrap() else {
            panic!()
        };
        assert_eq!(
            s.body,
            Body::Request(
                Some(Who::Any),
                Box::new(Utterance::Sentence(Sentence {
                    subject: None,
                    body: Body::Vote(Who::Agent(1))
                }))
            )
        );
        let Utterance::Sentence(s) = parse("AGREE WHISPER day2 ID:7").unwrap() else {
            panic!()
        };
        assert_eq!(
            s.body,
            Body::Agree {
                channel: Channel::Whisper,
                day: 2,
                id: 7
            }
        );
        let Utterance::Sentence(s) = parse("AND (VOTE Agent[01]) (Skip) (Over)").unwrap() else {
            panic!()
        };
        assert_eq!(
            s.body,
            Body::And(vec![
                Utterance::Sentence(Sentence {
                    subject: None,
                    body: Body::Vote(Who::Agent(1))
                }),
                Utterance::Skip,
                Utterance::Over
            ])
        );
    }

    #[test]
    fn deep_nesting_is_rejected_not_a_stack_overflow() {
        let mut s = String::new();
        for _ in 0..10_000 {
            s.push_str("NOT (");
        }
        s.push_str("Skip");
        for _ in 0..10_000 {
            s.push(')');
        }
        assert_eq!(parse(&s), Err(TalkError::TooDeep(MAX_DEPTH)));
    }

    #[test]
    fn seed_2015_templates() {
        for s in [
            "ESTIMATE Agent[01] WEREWOLF",
            "COMINGOUT Agent[02] SEER",
            "DIVINED Agent[03] HUMAN",
            "IDENTIFIED Agent[04] WEREWOLF",
            "GUARDED Agent[05]",
            "VOTE  Agent[06]",
            "AGREE TALK day1 ID:3",
            "DISAGREE WHISPER day2 ID:4",
            "Over",
            "Skip",
        ] {
            assert!(is_2015_template(s, false), "{s}");
        }
        assert!(is_2015_template("ATTACK Agent[07]", true));
        for s in [
            "ATTACK Agent[07]",
            "ESTIMATE Agent[01] ANY",
            "DIVINED Agent[01] ANY",
            "VOTE ANY",
            "Agent[01] VOTE Agent[02]",
            "REQUEST ANY (VOTE Agent[01])",
            "DIVINATION Agent[01]",
            "INQUESTED Agent[01] HUMAN",
        ] {
            assert!(!is_2015_template(s, false), "{s}");
        }
    }
}
