//! The parts of DAIDE messages that press and messages share: provinces, locations, units,
//! turns, orders, the payloads of the map and hello messages, and the token writer (`Out`)
//! and reader (`Cursor`) with their primitives. Messages ([`super::message`]) and press
//! ([`super::press`]) are built from these (a message holds press, and press holds orders).

use super::token::{Token, BRA, KET};
use crate::types::{Power, UnitKind};

/// A DAIDE province: its number (`0..75`, [`super::token::PROVINCES`]).
pub type DProv = u8;

/// A location as DAIDE writes it: a province, or a province and a coast token (`(STP NCS)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DLoc {
    /// Province number.
    pub prov: DProv,
    /// The coast token (`NCS`, `SCS`, `ECS`...), for a fleet in a bicoastal province.
    pub coast: Option<Token>,
}

/// A unit: `(AUS AMY BUD)`, `(RUS FLT (STP SCS))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DUnit {
    /// Owner.
    pub power: Power,
    /// Army or fleet.
    pub kind: UnitKind,
    /// Where it stands.
    pub loc: DLoc,
}

/// A season token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DSeason {
    /// Spring movement.
    Spr,
    /// Spring retreats.
    Sum,
    /// Fall movement.
    Fal,
    /// Fall retreats.
    Aut,
    /// Winter adjustments.
    Win,
}

/// A turn: `(SPR 1901)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Turn {
    /// Season.
    pub season: DSeason,
    /// Year.
    pub year: i16,
}

/// An order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DOrder {
    /// `(unit) HLD`.
    Hld(DUnit),
    /// `(unit) MTO loc`.
    Mto(DUnit, DLoc),
    /// `(unit) SUP (unit)`.
    SupHld(DUnit, DUnit),
    /// `(unit) SUP (unit) MTO prov`.
    SupMto(DUnit, DUnit, DProv),
    /// `(unit) CVY (unit) CTO prov`.
    Cvy(DUnit, DUnit, DProv),
    /// `(unit) CTO prov VIA (sea sea ...)`.
    CtoVia(DUnit, DProv, Vec<DProv>),
    /// `(unit) RTO loc`.
    Rto(DUnit, DLoc),
    /// `(unit) DSB`.
    Dsb(DUnit),
    /// `(unit) BLD`.
    Bld(DUnit),
    /// `(unit) REM`.
    Rem(DUnit),
    /// `power WVE`.
    Wve(Power),
}

impl DOrder {
    /// The ordered unit (none for a waive).
    pub fn unit(&self) -> Option<&DUnit> {
        match self {
            DOrder::Hld(u)
            | DOrder::Mto(u, _)
            | DOrder::SupHld(u, _)
            | DOrder::SupMto(u, _, _)
            | DOrder::Cvy(u, _, _)
            | DOrder::CtoVia(u, _, _)
            | DOrder::Rto(u, _)
            | DOrder::Dsb(u)
            | DOrder::Bld(u)
            | DOrder::Rem(u) => Some(u),
            DOrder::Wve(_) => None,
        }
    }
}

/// A unit with, when it is dislodged, its retreat options (`MRT (...)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The unit.
    pub unit: DUnit,
    /// Where it may retreat, if it must.
    pub retreat: Option<Vec<DLoc>>,
}

/// One line of `SMR`: `(power ('name') ('version') centres [year of elimination])`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmrEntry {
    /// The power.
    pub power: Power,
    /// The player's name.
    pub name: String,
    /// The player's version.
    pub version: String,
    /// Centres at the end.
    pub centres: i16,
    /// The year it was eliminated.
    pub eliminated: Option<i16>,
}

/// What an `MDF` adjacency list is for: armies, or fleets (on a coast of a bicoastal province).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdjFrom {
    /// `AMY`.
    Army,
    /// `FLT`, or `(FLT NCS)`.
    Fleet(Option<Token>),
}

/// One adjacency list of `MDF`: who moves, and where to.
pub type AdjList = (AdjFrom, Vec<DLoc>);

/// The map definition: `MDF (powers) ((centres) (non-centres)) (adjacencies)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mdf {
    /// The powers.
    pub powers: Vec<Power>,
    /// Supply centres by home power (`None`: `UNO`).
    pub centres: Vec<(Option<Power>, Vec<DProv>)>,
    /// Provinces that are no supply centre.
    pub others: Vec<DProv>,
    /// Each province's adjacency lists.
    pub adjacencies: Vec<(DProv, Vec<AdjList>)>,
}

/// A variant option of `HLO`: `(LVL 0)`, `(MTL 5)`, `(AOA)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The parameter token.
    pub param: Token,
    /// Its number, if it has one.
    pub value: Option<i16>,
}

/// `HLO (power) (passcode) (variant...)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The client's power.
    pub power: Power,
    /// The passcode for `IAM`.
    pub passcode: i16,
    /// The game's options.
    pub variants: Vec<Variant>,
}

/// What `MIS` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Units still without an order (retreats with their options).
    Units(Vec<Placed>),
    /// Adjustments: removals still owed, or (negative) builds still open.
    Count(i16),
}

/// Why tokens are not a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// The brackets do not match (answered with `PRN`).
    #[error("unbalanced brackets")]
    Brackets,
    /// A token out of place (answered with `HUH` and `ERR` before token `index`).
    #[error("token {index}: expected {expected}")]
    Syntax {
        /// 0-based index of the offending token (the message's length at its end).
        index: usize,
        /// What would have fitted.
        expected: &'static str,
    },
}

pub(super) fn tok(name: &str) -> Token {
    Token::named(name).unwrap_or(Token(0))
}

/// The power of a power token.
pub fn power_of(t: Token) -> Option<Power> {
    match t.0 {
        0x4100..=0x4106 => Some(Power((t.0 & 0xFF) as u8)),
        _ => None,
    }
}

/// The token of a power.
pub fn power_token(p: Power) -> Token {
    Token(0x4100 | u16::from(p.0))
}

pub(super) fn season_token(s: DSeason) -> Token {
    Token(
        0x4700
            | match s {
                DSeason::Spr => 0,
                DSeason::Sum => 1,
                DSeason::Fal => 2,
                DSeason::Aut => 3,
                DSeason::Win => 4,
            },
    )
}

pub(super) fn is_coast(t: Token) -> bool {
    t.category() == 0x46 && t.name().is_some()
}

// ---------------------------------------------------------------- formatting

pub(super) struct Out(pub(super) Vec<Token>);

impl Out {
    pub(super) fn t(&mut self, t: Token) -> &mut Self {
        self.0.push(t);
        self
    }
    pub(super) fn n(&mut self, name: &str) -> &mut Self {
        self.t(tok(name))
    }
    pub(super) fn int(&mut self, v: i16) -> &mut Self {
        self.t(Token::int(v.into()).unwrap_or(Token(0)))
    }
    pub(super) fn group(&mut self, f: impl FnOnce(&mut Out)) -> &mut Self {
        self.0.push(BRA);
        f(self);
        self.0.push(KET);
        self
    }
    pub(super) fn text(&mut self, s: &str) -> &mut Self {
        self.group(|o| {
            for b in s.bytes() {
                o.t(Token::text(b));
            }
        })
    }
    pub(super) fn prov(&mut self, p: DProv) -> &mut Self {
        self.t(Token::province(p).unwrap_or(Token(0)))
    }
    pub(super) fn loc(&mut self, l: &DLoc) -> &mut Self {
        match l.coast {
            None => self.prov(l.prov),
            Some(c) => self.group(|o| {
                o.prov(l.prov).t(c);
            }),
        }
    }
    pub(super) fn unit_inner(&mut self, u: &DUnit) -> &mut Self {
        self.t(power_token(u.power)).n(match u.kind {
            UnitKind::Army => "AMY",
            UnitKind::Fleet => "FLT",
        });
        self.loc(&u.loc)
    }
    pub(super) fn unit(&mut self, u: &DUnit) -> &mut Self {
        self.group(|o| {
            o.unit_inner(u);
        })
    }
    pub(super) fn turn(&mut self, t: &Turn) -> &mut Self {
        self.group(|o| {
            o.t(season_token(t.season)).int(t.year);
        })
    }
    pub(super) fn placed(&mut self, p: &Placed) -> &mut Self {
        self.group(|o| {
            o.unit_inner(&p.unit);
            if let Some(r) = &p.retreat {
                o.n("MRT").group(|o| {
                    for l in r {
                        o.loc(l);
                    }
                });
            }
        })
    }
    pub(super) fn order_inner(&mut self, ord: &DOrder) -> &mut Self {
        match ord {
            DOrder::Hld(u) => self.unit(u).n("HLD"),
            DOrder::Mto(u, l) => self.unit(u).n("MTO").loc(l),
            DOrder::SupHld(u, s) => self.unit(u).n("SUP").unit(s),
            DOrder::SupMto(u, s, p) => self.unit(u).n("SUP").unit(s).n("MTO").prov(*p),
            DOrder::Cvy(u, a, p) => self.unit(u).n("CVY").unit(a).n("CTO").prov(*p),
            DOrder::CtoVia(u, p, seas) => self.unit(u).n("CTO").prov(*p).n("VIA").group(|o| {
                for s in seas {
                    o.prov(*s);
                }
            }),
            DOrder::Rto(u, l) => self.unit(u).n("RTO").loc(l),
            DOrder::Dsb(u) => self.unit(u).n("DSB"),
            DOrder::Bld(u) => self.unit(u).n("BLD"),
            DOrder::Rem(u) => self.unit(u).n("REM"),
            DOrder::Wve(p) => self.t(power_token(*p)).n("WVE"),
        }
    }
    pub(super) fn order(&mut self, ord: &DOrder) -> &mut Self {
        self.group(|o| {
            o.order_inner(ord);
        })
    }
    pub(super) fn owned(&mut self, list: &[(Option<Power>, Vec<DProv>)]) -> &mut Self {
        for (p, provs) in list {
            self.group(|o| {
                match p {
                    Some(p) => o.t(power_token(*p)),
                    None => o.n("UNO"),
                };
                for &q in provs {
                    o.prov(q);
                }
            });
        }
        self
    }
}

// ---------------------------------------------------------------- parsing

pub(super) struct Cursor<'a> {
    pub(super) t: &'a [Token],
    pub(super) i: usize,
}

pub(super) type R<T> = Result<T, MessageError>;

impl Cursor<'_> {
    pub(super) fn err<T>(&self, expected: &'static str) -> R<T> {
        Err(MessageError::Syntax {
            index: self.i,
            expected,
        })
    }
    pub(super) fn peek(&self) -> Option<Token> {
        self.t.get(self.i).copied()
    }
    pub(super) fn next(&mut self) -> Option<Token> {
        let t = self.peek();
        if t.is_some() {
            self.i += 1;
        }
        t
    }
    pub(super) fn at_end(&self) -> bool {
        self.i >= self.t.len()
    }
    pub(super) fn end(&self) -> R<()> {
        if self.at_end() {
            Ok(())
        } else {
            self.err("the end of the message")
        }
    }
    pub(super) fn eat(&mut self, t: Token) -> bool {
        if self.peek() == Some(t) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    pub(super) fn expect(&mut self, t: Token, what: &'static str) -> R<()> {
        if self.eat(t) {
            Ok(())
        } else {
            self.err(what)
        }
    }
    pub(super) fn open(&mut self) -> R<()> {
        self.expect(BRA, "(")
    }
    pub(super) fn close(&mut self) -> R<()> {
        self.expect(KET, ")")
    }
    pub(super) fn grouped<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.open()?;
        let v = f(self)?;
        self.close()?;
        Ok(v)
    }
    pub(super) fn text(&mut self) -> R<String> {
        self.grouped(|c| {
            let mut s = String::new();
            while let Some(t) = c.peek().filter(|t| t.is_text()) {
                s.push(char::from(t.0 as u8));
                c.i += 1;
            }
            Ok(s)
        })
    }
    /// The next token as `f` reads it, if it does.
    pub(super) fn take<T>(&mut self, f: impl Fn(Token) -> Option<T>, what: &'static str) -> R<T> {
        match self.peek().and_then(f) {
            Some(v) => {
                self.i += 1;
                Ok(v)
            }
            None => self.err(what),
        }
    }
    pub(super) fn int(&mut self) -> R<i16> {
        self.take(Token::as_int, "a number")
    }
    pub(super) fn power(&mut self) -> R<Power> {
        self.take(power_of, "a power")
    }
    pub(super) fn prov(&mut self) -> R<DProv> {
        self.take(Token::province_number, "a province")
    }
    /// Provinces up to the closing bracket.
    pub(super) fn provs(&mut self) -> R<Vec<DProv>> {
        let mut v = Vec::new();
        while self.peek() != Some(KET) {
            v.push(self.prov()?);
        }
        Ok(v)
    }
    pub(super) fn loc(&mut self) -> R<DLoc> {
        if self.eat(BRA) {
            let prov = self.prov()?;
            let coast = match self.peek() {
                Some(t) if is_coast(t) => {
                    self.i += 1;
                    t
                }
                _ => return self.err("a coast"),
            };
            self.close()?;
            Ok(DLoc {
                prov,
                coast: Some(coast),
            })
        } else {
            Ok(DLoc {
                prov: self.prov()?,
                coast: None,
            })
        }
    }
    pub(super) fn kind(&mut self) -> R<UnitKind> {
        if self.eat(tok("AMY")) {
            Ok(UnitKind::Army)
        } else if self.eat(tok("FLT")) {
            Ok(UnitKind::Fleet)
        } else {
            self.err("AMY or FLT")
        }
    }
    pub(super) fn unit_inner(&mut self) -> R<DUnit> {
        let power = self.power()?;
        let kind = self.kind()?;
        let loc = self.loc()?;
        Ok(DUnit { power, kind, loc })
    }
    pub(super) fn unit(&mut self) -> R<DUnit> {
        self.grouped(Self::unit_inner)
    }
    pub(super) fn turn(&mut self) -> R<Turn> {
        self.grouped(|c| {
            let season = match c.peek().map(|t| t.0) {
                Some(0x4700) => DSeason::Spr,
                Some(0x4701) => DSeason::Sum,
                Some(0x4702) => DSeason::Fal,
                Some(0x4703) => DSeason::Aut,
                Some(0x4704) => DSeason::Win,
                _ => return c.err("a season"),
            };
            c.i += 1;
            Ok(Turn {
                season,
                year: c.int()?,
            })
        })
    }
    pub(super) fn placed(&mut self) -> R<Placed> {
        self.grouped(|c| {
            let unit = c.unit_inner()?;
            let retreat = if c.eat(tok("MRT")) {
                Some(c.grouped(|c| {
                    let mut v = Vec::new();
                    while c.peek() != Some(KET) {
                        v.push(c.loc()?);
                    }
                    Ok(v)
                })?)
            } else {
                None
            };
            Ok(Placed { unit, retreat })
        })
    }
    pub(super) fn order_inner(&mut self) -> R<DOrder> {
        if let Some(p) = self.peek().and_then(power_of) {
            self.i += 1;
            self.expect(tok("WVE"), "WVE")?;
            return Ok(DOrder::Wve(p));
        }
        let u = self.unit()?;
        let Some(t) = self.next() else {
            return self.err("an order");
        };
        Ok(match t.name() {
            Some("HLD") => DOrder::Hld(u),
            Some("MTO") => DOrder::Mto(u, self.loc()?),
            Some("SUP") => {
                let s = self.unit()?;
                if self.eat(tok("MTO")) {
                    DOrder::SupMto(u, s, self.prov()?)
                } else {
                    DOrder::SupHld(u, s)
                }
            }
            Some("CVY") => {
                let a = self.unit()?;
                self.expect(tok("CTO"), "CTO")?;
                DOrder::Cvy(u, a, self.prov()?)
            }
            Some("CTO") => {
                let p = self.prov()?;
                self.expect(tok("VIA"), "VIA")?;
                let seas = self.grouped(Self::provs)?;
                DOrder::CtoVia(u, p, seas)
            }
            Some("RTO") => DOrder::Rto(u, self.loc()?),
            Some("DSB") => DOrder::Dsb(u),
            Some("BLD") => DOrder::Bld(u),
            Some("REM") => DOrder::Rem(u),
            _ => {
                self.i -= 1;
                return self.err("an order (HLD, MTO, SUP, CVY, CTO, RTO, DSB, BLD, REM)");
            }
        })
    }
    pub(super) fn order(&mut self) -> R<DOrder> {
        self.grouped(Self::order_inner)
    }
    pub(super) fn powers_in_group(&mut self) -> R<Vec<Power>> {
        self.grouped(|c| {
            let mut v = Vec::new();
            while c.peek() != Some(KET) {
                v.push(c.power()?);
            }
            Ok(v)
        })
    }
    pub(super) fn one_power(&mut self) -> R<Power> {
        self.grouped(Self::power)
    }
    pub(super) fn owned(&mut self) -> R<Vec<(Option<Power>, Vec<DProv>)>> {
        let mut v = Vec::new();
        while self.peek() == Some(BRA) {
            v.push(self.grouped(|c| {
                let owner = if c.eat(tok("UNO")) {
                    None
                } else {
                    Some(c.power()?)
                };
                Ok((owner, c.provs()?))
            })?);
        }
        Ok(v)
    }
    /// The tokens of a group, raw.
    pub(super) fn raw_group(&mut self) -> R<Vec<Token>> {
        self.open()?;
        let start = self.i;
        let mut depth = 1;
        while let Some(t) = self.next() {
            if t == BRA {
                depth += 1;
            } else if t == KET {
                depth -= 1;
                if depth == 0 {
                    return Ok(self.t[start..self.i - 1].to_vec());
                }
            }
        }
        self.err(")")
    }
    pub(super) fn mdf(&mut self) -> R<Mdf> {
        let powers = self.powers_in_group()?;
        let (centres, others) = self.grouped(|c| {
            let centres = c.grouped(|c| c.owned())?;
            let others = c.grouped(Self::provs)?;
            Ok((centres, others))
        })?;
        let adjacencies = self.grouped(|c| {
            let mut all = Vec::new();
            while c.peek() == Some(BRA) {
                all.push(c.grouped(|c| {
                    let p = c.prov()?;
                    let mut lists = Vec::new();
                    while c.peek() == Some(BRA) {
                        lists.push(c.grouped(|c| {
                            let from = if c.eat(tok("AMY")) {
                                AdjFrom::Army
                            } else if c.eat(tok("FLT")) {
                                AdjFrom::Fleet(None)
                            } else {
                                c.grouped(|c| {
                                    c.expect(tok("FLT"), "FLT")?;
                                    match c.peek() {
                                        Some(t) if is_coast(t) => {
                                            c.i += 1;
                                            Ok(AdjFrom::Fleet(Some(t)))
                                        }
                                        _ => c.err("a coast"),
                                    }
                                })?
                            };
                            let mut locs = Vec::new();
                            while c.peek() != Some(KET) {
                                locs.push(c.loc()?);
                            }
                            Ok((from, locs))
                        })?);
                    }
                    Ok((p, lists))
                })?);
            }
            Ok(all)
        })?;
        Ok(Mdf {
            powers,
            centres,
            others,
            adjacencies,
        })
    }
}
