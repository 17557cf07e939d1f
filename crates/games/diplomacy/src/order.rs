//! Order syntax (spec §2.1–2.2): normalisation, aliases, coasts, and a typed parse result.
//!
//! Parsing knows the map but not the position: it resolves names to ids and coasts to coast
//! locations. Whether an order fits the position is decided by the adjudicator (legality, §2.4).

use std::fmt;

use crate::map::{Loc, Map, Prov};
use crate::types::UnitKind;

/// A unit as written in an order: letter optional, province, coast if one was named and exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnitRef {
    /// `A`/`F` as written, if written.
    pub kind: Option<UnitKind>,
    /// Province.
    pub prov: Prov,
    /// The coast location, if a coast of this province was named.
    pub coast: Option<Loc>,
}

/// A destination as written: province and, if named and existing, the coast.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dest {
    /// Province.
    pub prov: Prov,
    /// The coast location, if a coast of this province was named.
    pub coast: Option<Loc>,
}

/// A parsed order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// `A PAR H`.
    Hold(UnitRef),
    /// `A PAR - BUR`, `A LON - NWY VIA`. In a retreat phase a move is a retreat.
    Move {
        /// Ordered unit.
        unit: UnitRef,
        /// Destination.
        dest: Dest,
        /// Explicit `VIA` (convoy only).
        via: bool,
    },
    /// `F BRE S A PAR`.
    SupportHold {
        /// Supporting unit.
        unit: UnitRef,
        /// Supported unit.
        target: UnitRef,
    },
    /// `A MAR S A PAR - BUR`.
    SupportMove {
        /// Supporting unit.
        unit: UnitRef,
        /// Supported unit.
        target: UnitRef,
        /// Where the supported unit moves.
        dest: Dest,
    },
    /// `F NTH C A LON - NWY`.
    Convoy {
        /// Convoying fleet.
        unit: UnitRef,
        /// Convoyed army.
        army: UnitRef,
        /// Destination province of the army.
        dest: Prov,
    },
    /// `F TRI R ALB`.
    Retreat {
        /// Dislodged unit.
        unit: UnitRef,
        /// Where it retreats.
        dest: Dest,
    },
    /// `F TRI D` (retreat phase: disband; adjustment phase: removal).
    Disband(UnitRef),
    /// `A PAR B`.
    Build(UnitRef),
    /// `WAIVE`.
    Waive,
}

impl Order {
    /// The unit the order is for (none for `WAIVE`).
    pub fn unit(&self) -> Option<UnitRef> {
        match *self {
            Order::Hold(u) | Order::Disband(u) | Order::Build(u) => Some(u),
            Order::Move { unit, .. }
            | Order::SupportHold { unit, .. }
            | Order::SupportMove { unit, .. }
            | Order::Convoy { unit, .. }
            | Order::Retreat { unit, .. } => Some(unit),
            Order::Waive => None,
        }
    }
}

/// Why an order string could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Nothing but blanks.
    #[error("empty order")]
    Empty,
    /// A character that has no place in an order.
    #[error("unexpected character {0:?}")]
    BadChar(char),
    /// A word where a province was expected that is no province or alias.
    #[error("unknown province {0:?}")]
    UnknownProvince(String),
    /// The wrong token at a position.
    #[error("expected {expected} at word {pos}, found {found}")]
    Expected {
        /// What would have been valid.
        expected: &'static str,
        /// 1-based token position.
        pos: usize,
        /// What was there.
        found: String,
    },
    /// A suffix after `/` or in brackets that is not a coast.
    #[error("{0:?} is not a coast (expected NC, SC or EC)")]
    BadCoast(String),
}

/// A word of an order, upper case: borrowed from the input when it already is.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Word<'a>(std::borrow::Cow<'a, str>);

impl Word<'_> {
    fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok<'a> {
    Word(Word<'a>),
    Dash,
    Slash,
    Open,
    Close,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) => write!(f, "{:?}", w.as_str()),
            Tok::Dash => f.write_str("\"-\""),
            Tok::Slash => f.write_str("\"/\""),
            Tok::Open => f.write_str("\"(\""),
            Tok::Close => f.write_str("\")\""),
        }
    }
}

fn tokenize(s: &str) -> Result<Vec<Tok<'_>>, ParseError> {
    fn flush<'s>(s: &'s str, start: &mut Option<usize>, end: usize, toks: &mut Vec<Tok<'s>>) {
        if let Some(b) = start.take() {
            let w = &s[b..end];
            let word = if w.bytes().any(|c| c.is_ascii_lowercase()) {
                std::borrow::Cow::Owned(w.to_ascii_uppercase())
            } else {
                std::borrow::Cow::Borrowed(w)
            };
            toks.push(Tok::Word(Word(word)));
        }
    }
    let mut toks = Vec::with_capacity(8);
    let mut start: Option<usize> = None;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_ascii_alphanumeric() || c == '.' => {
                if start.is_none() {
                    start = Some(i);
                }
            }
            c if c.is_whitespace() => flush(s, &mut start, i, &mut toks),
            '-' => {
                flush(s, &mut start, i, &mut toks);
                if chars.peek().map(|&(_, c)| c) == Some('>') {
                    chars.next();
                }
                toks.push(Tok::Dash);
            }
            '/' => {
                flush(s, &mut start, i, &mut toks);
                toks.push(Tok::Slash);
            }
            '(' => {
                flush(s, &mut start, i, &mut toks);
                toks.push(Tok::Open);
            }
            ')' => {
                flush(s, &mut start, i, &mut toks);
                toks.push(Tok::Close);
            }
            c => return Err(ParseError::BadChar(c)),
        }
    }
    flush(s, &mut start, s.len(), &mut toks);
    Ok(toks)
}

fn coast_word(w: &str) -> Option<&'static str> {
    match w {
        "NC" | "NCS" => Some("NC"),
        "SC" | "SCS" => Some("SC"),
        "EC" | "ECS" => Some("EC"),
        _ => None,
    }
}

struct Parser<'a> {
    map: &'a Map,
    toks: Vec<Tok<'a>>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.pos)
    }

    fn peek_word(&self) -> Option<&str> {
        match self.toks.get(self.pos) {
            Some(Tok::Word(w)) => Some(w.as_str()),
            _ => None,
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(t) => t.to_string(),
            None => "end of order".to_string(),
        }
    }

    fn expected(&self, expected: &'static str) -> ParseError {
        ParseError::Expected {
            expected,
            pos: self.pos + 1,
            found: self.found(),
        }
    }

    fn eat_word(&mut self, options: &[&str]) -> bool {
        if let Some(w) = self.peek_word() {
            if options.contains(&w) {
                self.pos += 1;
                return true;
            }
        }
        false
    }

    fn eat(&mut self, t: &Tok<'_>) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// `[A|F|ARMY|FLEET] location`
    fn unit(&mut self) -> Result<UnitRef, ParseError> {
        let kind = if self.eat_word(&["A", "ARMY"]) {
            Some(UnitKind::Army)
        } else if self.eat_word(&["F", "FLEET"]) {
            Some(UnitKind::Fleet)
        } else {
            None
        };
        let d = self.location("a unit (A or F) or a province")?;
        Ok(UnitRef {
            kind,
            prov: d.prov,
            coast: d.coast,
        })
    }

    /// `PROV`, `PROV/NC`, `PROV(NC)`, `PROV NC`, `(PROV NCS)`.
    fn location(&mut self, what: &'static str) -> Result<Dest, ParseError> {
        let bracketed = self.eat(&Tok::Open);
        let Some(w) = self.peek_word() else {
            return Err(self.expected(what));
        };
        let prov = match self.map.province(w) {
            Some(p) => p,
            None => {
                return Err(if is_keyword(w) {
                    self.expected(what)
                } else {
                    ParseError::UnknownProvince(w.to_string())
                })
            }
        };
        self.pos += 1;
        let mut coast_text: Option<String> = None;
        match self.peek().cloned() {
            Some(Tok::Slash) => {
                self.pos += 1;
                match self.peek_word() {
                    Some(w) => {
                        coast_text = Some(w.to_string());
                        self.pos += 1;
                    }
                    None => return Err(self.expected("a coast after \"/\"")),
                }
            }
            Some(Tok::Open) if !bracketed => {
                self.pos += 1;
                match self.peek_word() {
                    Some(w) => {
                        coast_text = Some(w.to_string());
                        self.pos += 1;
                    }
                    None => return Err(self.expected("a coast after \"(\"")),
                }
                if !self.eat(&Tok::Close) {
                    return Err(self.expected("\")\""));
                }
            }
            Some(Tok::Word(w)) if coast_word(w.as_str()).is_some() => {
                coast_text = Some(w.as_str().to_string());
                self.pos += 1;
            }
            _ => {}
        }
        if bracketed && !self.eat(&Tok::Close) {
            return Err(self.expected("\")\""));
        }
        let coast = match coast_text {
            None => None,
            Some(t) => match coast_word(&t) {
                // A coast the province does not have is ignored (4.B.6).
                Some(c) => self.map.coast_of(prov, c),
                None => return Err(ParseError::BadCoast(t)),
            },
        };
        Ok(Dest { prov, coast })
    }

    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn end(&self) -> Result<(), ParseError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.expected("end of order"))
        }
    }

    /// `VIA`, `VIA CONVOY`, `BY CONVOY`.
    fn via(&mut self) -> Result<bool, ParseError> {
        if self.eat_word(&["VIA"]) {
            self.eat_word(&["CONVOY"]);
            Ok(true)
        } else if self.eat_word(&["BY"]) {
            if !self.eat_word(&["CONVOY"]) {
                return Err(self.expected("\"CONVOY\" after \"BY\""));
            }
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// `- LOC (- LOC)* [VIA]`: a convoy path written into a move is dropped (4.A.6).
    fn move_tail(&mut self) -> Result<(Dest, bool), ParseError> {
        let mut dest = self.location("a destination province")?;
        while self.eat(&Tok::Dash) {
            dest = self.location("a destination province")?;
        }
        let via = self.via()?;
        Ok((dest, via))
    }

    fn order(&mut self) -> Result<Order, ParseError> {
        if self.at_end() {
            return Err(ParseError::Empty);
        }
        if self.eat_word(&["WAIVE", "WAIVES"]) {
            self.end()?;
            return Ok(Order::Waive);
        }
        if self.eat_word(&["BUILD", "BUILDS", "B"]) {
            let u = self.unit()?;
            self.end()?;
            return Ok(Order::Build(u));
        }
        if self.eat_word(&["REMOVE", "REMOVES", "DISBAND", "DISBANDS", "D"]) {
            let u = self.unit()?;
            self.end()?;
            return Ok(Order::Disband(u));
        }
        let unit = self.unit()?;
        let o = if self.eat(&Tok::Dash) {
            let (dest, via) = self.move_tail()?;
            Order::Move { unit, dest, via }
        } else if self.eat_word(&["H", "HOLD", "HOLDS"]) {
            Order::Hold(unit)
        } else if self.eat_word(&["R", "RETREAT", "RETREATS"]) {
            self.eat(&Tok::Dash);
            let dest = self.location("a retreat destination")?;
            Order::Retreat { unit, dest }
        } else if self.eat_word(&["D", "DISBAND", "DISBANDS", "REMOVE", "REMOVES"]) {
            Order::Disband(unit)
        } else if self.eat_word(&["B", "BUILD", "BUILDS"]) {
            Order::Build(unit)
        } else if self.eat_word(&["S", "SUPPORT", "SUPPORTS"]) {
            let target = self.unit()?;
            if self.eat(&Tok::Dash) {
                let dest = self.location("the destination of the supported move")?;
                Order::SupportMove { unit, target, dest }
            } else {
                self.eat_word(&["H", "HOLD", "HOLDS"]);
                Order::SupportHold { unit, target }
            }
        } else if self.eat_word(&["C", "CONVOY", "CONVOYS"]) {
            let army = self.unit()?;
            if !self.eat(&Tok::Dash) {
                return Err(self.expected("\"-\" and the destination of the convoyed army"));
            }
            let (dest, _) = self.move_tail()?;
            Order::Convoy {
                unit,
                army,
                dest: dest.prov,
            }
        } else {
            return Err(self.expected("an order (H, -, S, C, R, D, B)"));
        };
        self.end()?;
        Ok(o)
    }
}

fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "H" | "HOLD"
            | "HOLDS"
            | "S"
            | "SUPPORT"
            | "SUPPORTS"
            | "C"
            | "CONVOY"
            | "CONVOYS"
            | "VIA"
            | "BY"
            | "R"
            | "RETREAT"
            | "RETREATS"
            | "D"
            | "DISBAND"
            | "DISBANDS"
            | "REMOVE"
            | "B"
            | "BUILD"
            | "BUILDS"
            | "WAIVE"
            | "A"
            | "F"
    )
}

/// Parse one order string in any form of spec §2.2.
pub fn parse_order(map: &Map, text: &str) -> Result<Order, ParseError> {
    let toks = tokenize(text)?;
    let mut p = Parser { map, toks, pos: 0 };
    p.order()
}

/// Parse a whole string as one unit (`A PAR`, `f stp(sc)`); the letter is required.
pub fn parse_unit(map: &Map, text: &str) -> Result<UnitRef, ParseError> {
    let toks = tokenize(text)?;
    let mut p = Parser { map, toks, pos: 0 };
    if p.at_end() {
        return Err(ParseError::Empty);
    }
    let u = p.unit()?;
    if u.kind.is_none() {
        return Err(ParseError::Expected {
            expected: "a unit letter (A or F)",
            pos: 1,
            found: text.to_string(),
        });
    }
    p.end()?;
    Ok(u)
}

/// Parse a whole string as one location (`SPA/NC`, `nrg`).
pub fn parse_location(map: &Map, text: &str) -> Result<Dest, ParseError> {
    let toks = tokenize(text)?;
    let mut p = Parser { map, toks, pos: 0 };
    if p.at_end() {
        return Err(ParseError::Empty);
    }
    let d = p.location("a province")?;
    p.end()?;
    Ok(d)
}
