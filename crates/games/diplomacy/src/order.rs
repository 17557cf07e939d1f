//! Order syntax (spec §2.1–2.2): normalisation, aliases, coasts, and a typed parse result.
//!
//! Parsing knows the map but not the position: it resolves names to ids and coasts to coast
//! locations. Whether an order fits the position is decided by the adjudicator (legality, §2.4).

use std::borrow::Cow;
use std::fmt;

use smallvec::SmallVec;

use crate::map::{Loc, Map, Prov};
use crate::types::{Unit, UnitKind};

/// The order-side reference to a unit on the board (letter and coast filled in).
pub fn uref(map: &Map, u: &Unit) -> UnitRef {
    let prov = map.prov_of(u.loc);
    UnitRef {
        kind: Some(u.kind),
        prov,
        coast: if u.loc != prov { Some(u.loc) } else { None },
    }
}

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

/// A token of an order, borrowed from its upper-case text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    Word(&'a str),
    Dash,
    Slash,
    Open,
    Close,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) => write!(f, "{w:?}"),
            Tok::Dash => f.write_str("\"-\""),
            Tok::Slash => f.write_str("\"/\""),
            Tok::Open => f.write_str("\"(\""),
            Tok::Close => f.write_str("\")\""),
        }
    }
}

/// The tokens of one order; an order has few, so they live on the stack.
type Toks<'a> = SmallVec<[Tok<'a>; 16]>;

/// `text` in upper case, borrowed when it already is (the usual case).
fn upper(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_lowercase()) {
        Cow::Owned(text.to_ascii_uppercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// Split upper-case order text into words (letters, digits, `.`) and `-`/`->`, `/`, `(`, `)`;
/// any Unicode white space separates.
fn tokenize(s: &str) -> Result<Toks<'_>, ParseError> {
    let b = s.as_bytes();
    let mut toks = Toks::new();
    let mut i = 0;
    while i < b.len() {
        let tok = match b[i] {
            c if c.is_ascii_alphanumeric() || c == b'.' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
                toks.push(Tok::Word(&s[start..i]));
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => None,
            b'-' => {
                if b.get(i + 1) == Some(&b'>') {
                    i += 1;
                }
                Some(Tok::Dash)
            }
            b'/' => Some(Tok::Slash),
            b'(' => Some(Tok::Open),
            b')' => Some(Tok::Close),
            c if c.is_ascii() => return Err(ParseError::BadChar(char::from(c))),
            _ => {
                // `i` is at a character boundary: only whole characters are stepped over.
                let c = s[i..].chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
                if !c.is_whitespace() {
                    return Err(ParseError::BadChar(c));
                }
                i += c.len_utf8();
                continue;
            }
        };
        if let Some(t) = tok {
            toks.push(t);
        }
        i += 1;
    }
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
    toks: &'a [Tok<'a>],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.pos)
    }

    fn peek_word(&self) -> Option<&'a str> {
        match self.toks.get(self.pos) {
            Some(Tok::Word(w)) => Some(w),
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
        let mut coast_text: Option<&str> = None;
        match self.peek().copied() {
            Some(Tok::Slash) => {
                self.pos += 1;
                match self.peek_word() {
                    Some(w) => {
                        coast_text = Some(w);
                        self.pos += 1;
                    }
                    None => return Err(self.expected("a coast after \"/\"")),
                }
            }
            Some(Tok::Open) if !bracketed => {
                self.pos += 1;
                match self.peek_word() {
                    Some(w) => {
                        coast_text = Some(w);
                        self.pos += 1;
                    }
                    None => return Err(self.expected("a coast after \"(\"")),
                }
                if !self.eat(&Tok::Close) {
                    return Err(self.expected("\")\""));
                }
            }
            Some(Tok::Word(w)) if coast_word(w).is_some() => {
                coast_text = Some(w);
                self.pos += 1;
            }
            _ => {}
        }
        if bracketed && !self.eat(&Tok::Close) {
            return Err(self.expected("\")\""));
        }
        let coast = match coast_text {
            None => None,
            Some(t) => match coast_word(t) {
                // A coast the province does not have is ignored (4.B.6).
                Some(c) => self.map.coast_of(prov, c),
                None => return Err(ParseError::BadCoast(t.to_string())),
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
    match canonical::order(map, text) {
        Some(o) => Ok(o),
        None => parse_general(map, text),
    }
}

/// [`parse_order`] without the fast path for canonical text.
fn parse_general(map: &Map, text: &str) -> Result<Order, ParseError> {
    parse_with(map, text, |p| p.order())
}

/// Run `f` on a parser over the tokens of `text` in upper case.
fn parse_with<T>(
    map: &Map,
    text: &str,
    f: impl FnOnce(&mut Parser<'_>) -> Result<T, ParseError>,
) -> Result<T, ParseError> {
    let up = upper(text);
    let toks = tokenize(&up)?;
    f(&mut Parser {
        map,
        toks: &toks,
        pos: 0,
    })
}

/// Parse a whole string as one unit (`A PAR`, `f stp(sc)`); the letter is required.
pub fn parse_unit(map: &Map, text: &str) -> Result<UnitRef, ParseError> {
    match canonical::unit(map, text) {
        Some(u) => Ok(u),
        None => parse_unit_general(map, text),
    }
}

/// [`parse_unit`] without the fast path for canonical text.
fn parse_unit_general(map: &Map, text: &str) -> Result<UnitRef, ParseError> {
    parse_with(map, text, |p| {
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
    })
}

/// Parse a whole string as one location (`SPA/NC`, `nrg`).
pub fn parse_location(map: &Map, text: &str) -> Result<Dest, ParseError> {
    parse_with(map, text, |p| {
        if p.at_end() {
            return Err(ParseError::Empty);
        }
        let d = p.location("a province")?;
        p.end()?;
        Ok(d)
    })
}

/// The canonical spelling, parsed without the general tokenizer: upper-case words separated by
/// single spaces, every unit with its letter, coasts written `/NC` (the form
/// [`crate::bots::format_order`] writes and most bots send). Covers holds, moves (with `VIA`),
/// supports, convoys, retreats, disbands, builds and `WAIVE`. Anything else gives `None` and is
/// left to the general parser, which gives the same result for every text accepted here (the
/// property `canonical_orders_parse_as_the_general_parser_does`).
pub(crate) mod canonical {
    use super::{Dest, Order, UnitRef};
    use crate::map::Map;
    use crate::types::UnitKind;

    /// Words of a canonical text, separated by single spaces; an empty word (two spaces, a
    /// leading or trailing space) stops the fast path.
    struct Words<'a> {
        b: &'a [u8],
        i: usize,
    }

    impl<'a> Words<'a> {
        fn new(text: &'a str) -> Self {
            Words {
                b: text.as_bytes(),
                i: 0,
            }
        }

        fn next(&mut self) -> Option<&'a [u8]> {
            let rest = self.b.get(self.i..)?;
            let n = rest.iter().position(|&c| c == b' ').unwrap_or(rest.len());
            if n == 0 {
                return None;
            }
            self.i += n + 1;
            Some(&rest[..n])
        }

        /// Every word was read (and the text did not end in a space).
        fn at_end(&self) -> bool {
            self.i == self.b.len() + 1
        }
    }

    fn kind(w: &[u8]) -> Option<UnitKind> {
        match w {
            b"A" => Some(UnitKind::Army),
            b"F" => Some(UnitKind::Fleet),
            _ => None,
        }
    }

    /// `PAR`, `STP/NC`: a province of three letters (or a three-letter alias), and a coast.
    fn location(map: &Map, w: &[u8]) -> Option<Dest> {
        let (p, c) = match *w {
            [a, b, c] => ([a, b, c], None),
            [a, b, c, b'/', d, e] => ([a, b, c], Some([d, e])),
            _ => return None,
        };
        let prov = map.province_code(p)?;
        let coast = match c.as_ref().map(|c| &c[..]) {
            None => None,
            // A coast the province does not have is ignored (4.B.6), as in the general parser.
            Some(b"NC") => map.coast_of(prov, "NC"),
            Some(b"SC") => map.coast_of(prov, "SC"),
            Some(b"EC") => map.coast_of(prov, "EC"),
            Some(_) => return None,
        };
        Some(Dest { prov, coast })
    }

    fn unit_of(map: &Map, k: &[u8], w: &[u8]) -> Option<UnitRef> {
        let kind = kind(k)?;
        let d = location(map, w)?;
        Some(UnitRef {
            kind: Some(kind),
            prov: d.prov,
            coast: d.coast,
        })
    }

    /// `A PAR`, `F STP/SC`.
    pub(crate) fn unit(map: &Map, text: &str) -> Option<UnitRef> {
        let mut ws = Words::new(text);
        let u = unit_of(map, ws.next()?, ws.next()?)?;
        ws.at_end().then_some(u)
    }

    pub(crate) fn order(map: &Map, text: &str) -> Option<Order> {
        let mut ws = Words::new(text);
        let first = ws.next()?;
        if first == b"WAIVE" {
            return ws.at_end().then_some(Order::Waive);
        }
        let unit = unit_of(map, first, ws.next()?)?;
        let o = match ws.next()? {
            b"H" => Order::Hold(unit),
            b"-" => {
                let dest = location(map, ws.next()?)?;
                let via = !ws.at_end();
                if via && ws.next()? != b"VIA" {
                    return None;
                }
                Order::Move { unit, dest, via }
            }
            b"S" => {
                let target = unit_of(map, ws.next()?, ws.next()?)?;
                if ws.at_end() {
                    Order::SupportHold { unit, target }
                } else {
                    if ws.next()? != b"-" {
                        return None;
                    }
                    let dest = location(map, ws.next()?)?;
                    Order::SupportMove { unit, target, dest }
                }
            }
            b"C" => {
                let army = unit_of(map, ws.next()?, ws.next()?)?;
                if ws.next()? != b"-" {
                    return None;
                }
                let dest = location(map, ws.next()?)?;
                Order::Convoy {
                    unit,
                    army,
                    dest: dest.prov,
                }
            }
            b"R" => Order::Retreat {
                unit,
                dest: location(map, ws.next()?)?,
            },
            b"D" => Order::Disband(unit),
            b"B" => Order::Build(unit),
            _ => return None,
        };
        ws.at_end().then_some(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Words an order may be made of, canonical or not, valid or not.
    const WORDS: &[&str] = &[
        "A",
        "F",
        "H",
        "-",
        "S",
        "C",
        "R",
        "D",
        "B",
        "VIA",
        "WAIVE",
        "CONVOY",
        "BY",
        "HOLD",
        "ARMY",
        "->",
        "NC",
        "SC",
        "(",
        ")",
        "/",
        "a",
        "f",
        "h",
        "via",
        "XYZ",
        "par",
        "Spa/nc",
        "SPA/XX",
        "SPA/",
        "SP",
        "PARIS",
        "NORTH SEA",
        "SPA(NC)",
        "SPA/NCS",
        "1.2",
        "",
        " ",
    ];

    /// Locations, with and without coasts (some the province does not have).
    const LOCS: &[&str] = &[
        "PAR", "BUR", "MAR", "SPA", "SPA/NC", "SPA/SC", "SPA/EC", "STP/NC", "STP/SC", "BUL/EC",
        "BUL/SC", "BUL/NC", "STP/EC", "PAR/NC", "NTH", "LON", "NWY", "MAO", "ENG", "BOT", "GOL",
        "LYO", "ECH", "NAT", "TYR", "CON", "SEV", "ARM", "WAL",
    ];

    /// An order in canonical form from the grammar, then (sometimes) one word replaced by any
    /// word, or a separator changed.
    fn text() -> impl Strategy<Value = String> {
        let unit = (
            prop::sample::select(vec!["A", "F"]),
            prop::sample::select(LOCS),
        )
            .prop_map(|(k, l)| format!("{k} {l}"));
        let loc = || prop::sample::select(LOCS).prop_map(str::to_string);
        let order = prop_oneof![
            unit.clone().prop_map(|u| format!("{u} H")),
            (unit.clone(), loc()).prop_map(|(u, l)| format!("{u} - {l}")),
            (unit.clone(), loc()).prop_map(|(u, l)| format!("{u} - {l} VIA")),
            (unit.clone(), unit.clone()).prop_map(|(u, t)| format!("{u} S {t}")),
            (unit.clone(), unit.clone(), loc()).prop_map(|(u, t, l)| format!("{u} S {t} - {l}")),
            (unit.clone(), unit.clone(), loc()).prop_map(|(u, t, l)| format!("{u} C {t} - {l}")),
            (unit.clone(), loc()).prop_map(|(u, l)| format!("{u} R {l}")),
            unit.clone().prop_map(|u| format!("{u} D")),
            unit.clone().prop_map(|u| format!("{u} B")),
            unit.clone(),
            Just("WAIVE".to_string()),
        ];
        (
            order,
            prop::option::of((any::<prop::sample::Index>(), prop::sample::select(WORDS))),
            prop::sample::select(vec![" ", " ", " ", " ", "  ", "\t"]),
            prop::sample::select(vec!["", "", "", " ", "\n"]),
        )
            .prop_map(|(o, change, sep, pad)| {
                let mut ws: Vec<String> = o.split(' ').map(str::to_string).collect();
                if let Some((i, w)) = change {
                    let i = i.index(ws.len() + 1);
                    if i == ws.len() {
                        ws.push(w.to_string());
                    } else {
                        ws[i] = w.to_string();
                    }
                }
                format!("{pad}{}", ws.join(sep))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn canonical_orders_parse_as_the_general_parser_does(t in text()) {
            let map = crate::map::standard();
            if let Some(o) = canonical::order(map, &t) {
                prop_assert_eq!(parse_general(map, &t), Ok(o), "{:?}", t);
            }
            prop_assert_eq!(parse_order(map, &t), parse_general(map, &t), "{:?}", t);
            if let Some(u) = canonical::unit(map, &t) {
                prop_assert_eq!(parse_unit_general(map, &t), Ok(u), "{:?}", t);
            }
        }
    }

    /// The fast path takes every order the built-in bots write, in every phase type.
    #[test]
    fn the_fast_path_takes_the_orders_bots_write() {
        use crate::bots::{format_order, random_orders};
        use crate::types::Power;
        let map = crate::map::standard();
        let mut resolver = crate::movement::Resolver::new();
        let mut rng = kakehiki_core::seeded_rng(7, "canonical");
        let mut board = crate::board::Board::standard_start();
        let mut seen = 0;
        while board.phase.year <= 1910 {
            let mut orders = Vec::new();
            for p in Power::ALL {
                for o in random_orders(map, &board, p, &mut rng) {
                    let t = format_order(map, &o);
                    assert_eq!(canonical::order(map, &t), Some(o), "{t}");
                    seen += 1;
                    orders.push((p, o));
                }
            }
            crate::adjudicate::adjudicate(&mut resolver, map, &mut board, &orders);
        }
        assert!(seen > 500, "{seen}");
    }
}
