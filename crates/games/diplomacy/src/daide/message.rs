//! DAIDE messages as typed values: parse from tokens, format to tokens (level 0, plus the
//! commands a level-0 server must recognise to refuse).

use super::press::Press;
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

/// One DAIDE diplomacy message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// `NME ('name') ('version')`.
    Nme(String, String),
    /// `OBS` (optionally with name and version).
    Obs(Option<(String, String)>),
    /// `IAM (power) (passcode)`.
    Iam(Power, i16),
    /// `MAP` (query) or `MAP ('name')`.
    Map(Option<String>),
    /// `MDF` (query) or the map definition.
    Mdf(Option<Box<Mdf>>),
    /// `HLO` (query) or the game start.
    Hlo(Option<Hello>),
    /// `SCO` (query) or centre ownership by power (`None`: `UNO`).
    Sco(Option<Vec<(Option<Power>, Vec<DProv>)>>),
    /// `NOW` (query) or the position.
    Now(Option<(Turn, Vec<Placed>)>),
    /// `HST` or `HST (turn)`.
    Hst(Option<Turn>),
    /// `SUB [(turn)] (order) ...`.
    Sub(Option<Turn>, Vec<DOrder>),
    /// `THX (order) (note)`.
    Thx(DOrder, Token),
    /// `MIS` alone (query, or nothing missing) or what is missing.
    Mis(Option<Missing>),
    /// `GOF`.
    Gof,
    /// `ORD (turn) (order) (result...)`.
    Ord(Turn, DOrder, Vec<Token>),
    /// `TME` (query) or `TME (seconds)`.
    Tme(Option<i16>),
    /// `DRW` or `DRW (power ...)`.
    Drw(Vec<Power>),
    /// `SLO (power)`.
    Slo(Power),
    /// `CCD (power)`.
    Ccd(Power),
    /// `OUT (power)`.
    Out(Power),
    /// `SMR (turn) (entry) ...` (or `SMR` as a query).
    Smr(Option<(Turn, Vec<SmrEntry>)>),
    /// `OFF`.
    Off,
    /// `YES (message)`.
    Yes(Box<Message>),
    /// `REJ (message)`.
    Rej(Box<Message>),
    /// `NOT (message)`.
    Not(Box<Message>),
    /// `HUH (tokens with ERR)`.
    Huh(Vec<Token>),
    /// `PRN (tokens)`.
    Prn(Vec<Token>),
    /// `SND [(turn)] (power ...) (press)`: press a client sends.
    Snd(Option<Turn>, Vec<Power>, Press),
    /// `FRM (power) (power ...) (press)`: press a client receives, with its sender and every
    /// addressee.
    Frm(Power, Vec<Power>, Press),
    /// A command this server does not take part in (`ADM`, `SVE`, `LOD`; a malformed `SND`
    /// refused at level 0), kept whole: its tokens.
    Other(Vec<Token>),
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

fn season_token(s: DSeason) -> Token {
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

fn is_coast(t: Token) -> bool {
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
    pub(super) fn message(&mut self, m: &Message) -> &mut Self {
        match m {
            Message::Nme(n, v) => self.n("NME").text(n).text(v),
            Message::Obs(None) => self.n("OBS"),
            Message::Obs(Some((n, v))) => self.n("OBS").text(n).text(v),
            Message::Iam(p, code) => self
                .n("IAM")
                .group(|o| {
                    o.t(power_token(*p));
                })
                .group(|o| {
                    o.int(*code);
                }),
            Message::Map(None) => self.n("MAP"),
            Message::Map(Some(name)) => self.n("MAP").text(name),
            Message::Mdf(None) => self.n("MDF"),
            Message::Mdf(Some(mdf)) => {
                self.n("MDF").group(|o| {
                    for p in &mdf.powers {
                        o.t(power_token(*p));
                    }
                });
                self.group(|o| {
                    o.group(|o| {
                        o.owned(&mdf.centres);
                    })
                    .group(|o| {
                        for &p in &mdf.others {
                            o.prov(p);
                        }
                    });
                });
                self.group(|o| {
                    for (p, lists) in &mdf.adjacencies {
                        o.group(|o| {
                            o.prov(*p);
                            for (from, locs) in lists {
                                o.group(|o| {
                                    match from {
                                        AdjFrom::Army => o.n("AMY"),
                                        AdjFrom::Fleet(None) => o.n("FLT"),
                                        AdjFrom::Fleet(Some(c)) => o.group(|o| {
                                            o.n("FLT").t(*c);
                                        }),
                                    };
                                    for l in locs {
                                        o.loc(l);
                                    }
                                });
                            }
                        });
                    }
                })
            }
            Message::Hlo(None) => self.n("HLO"),
            Message::Hlo(Some(h)) => self
                .n("HLO")
                .group(|o| {
                    o.t(power_token(h.power));
                })
                .group(|o| {
                    o.int(h.passcode);
                })
                .group(|o| {
                    for v in &h.variants {
                        o.group(|o| {
                            o.t(v.param);
                            if let Some(x) = v.value {
                                o.int(x);
                            }
                        });
                    }
                }),
            Message::Sco(None) => self.n("SCO"),
            Message::Sco(Some(list)) => self.n("SCO").owned(list),
            Message::Now(None) => self.n("NOW"),
            Message::Now(Some((turn, units))) => {
                self.n("NOW").turn(turn);
                for u in units {
                    self.placed(u);
                }
                self
            }
            Message::Hst(None) => self.n("HST"),
            Message::Hst(Some(t)) => self.n("HST").turn(t),
            Message::Sub(turn, orders) => {
                self.n("SUB");
                if let Some(t) = turn {
                    self.turn(t);
                }
                for o in orders {
                    self.order(o);
                }
                self
            }
            Message::Thx(o, note) => self.n("THX").order(o).group(|g| {
                g.t(*note);
            }),
            Message::Mis(None) => self.n("MIS"),
            Message::Mis(Some(Missing::Units(us))) => {
                self.n("MIS");
                for u in us {
                    self.placed(u);
                }
                self
            }
            Message::Mis(Some(Missing::Count(n))) => self.n("MIS").group(|o| {
                o.int(*n);
            }),
            Message::Gof => self.n("GOF"),
            Message::Ord(turn, o, results) => self.n("ORD").turn(turn).order(o).group(|g| {
                for r in results {
                    g.t(*r);
                }
            }),
            Message::Tme(None) => self.n("TME"),
            Message::Tme(Some(s)) => self.n("TME").group(|o| {
                o.int(*s);
            }),
            Message::Drw(ps) => {
                self.n("DRW");
                if !ps.is_empty() {
                    self.group(|o| {
                        for p in ps {
                            o.t(power_token(*p));
                        }
                    });
                }
                self
            }
            Message::Slo(p) => self.n("SLO").group(|o| {
                o.t(power_token(*p));
            }),
            Message::Ccd(p) => self.n("CCD").group(|o| {
                o.t(power_token(*p));
            }),
            Message::Out(p) => self.n("OUT").group(|o| {
                o.t(power_token(*p));
            }),
            Message::Smr(None) => self.n("SMR"),
            Message::Smr(Some((turn, entries))) => {
                self.n("SMR").turn(turn);
                for e in entries {
                    self.group(|o| {
                        o.t(power_token(e.power))
                            .text(&e.name)
                            .text(&e.version)
                            .int(e.centres);
                        if let Some(y) = e.eliminated {
                            o.int(y);
                        }
                    });
                }
                self
            }
            Message::Off => self.n("OFF"),
            Message::Yes(m) => self.n("YES").group(|o| {
                o.message(m);
            }),
            Message::Rej(m) => self.n("REJ").group(|o| {
                o.message(m);
            }),
            Message::Not(m) => self.n("NOT").group(|o| {
                o.message(m);
            }),
            Message::Huh(ts) => self.n("HUH").group(|o| {
                o.0.extend_from_slice(ts);
            }),
            Message::Prn(ts) => self.n("PRN").group(|o| {
                o.0.extend_from_slice(ts);
            }),
            Message::Snd(turn, to, p) => {
                self.n("SND");
                if let Some(t) = turn {
                    self.turn(t);
                }
                self.powers_group(to).group(|o| {
                    o.press(p);
                })
            }
            Message::Frm(from, to, p) => self
                .n("FRM")
                .powers_group(&[*from])
                .powers_group(to)
                .group(|o| {
                    o.press(p);
                }),
            Message::Other(ts) => {
                self.0.extend_from_slice(ts);
                self
            }
        }
    }
}

impl Message {
    /// The message's tokens.
    pub fn to_tokens(&self) -> Vec<Token> {
        let mut o = Out(Vec::new());
        o.message(self);
        o.0
    }

    /// The message's bytes (the body of a `DM`).
    pub fn to_bytes(&self) -> Vec<u8> {
        super::token::to_bytes(&self.to_tokens())
    }

    /// The readable form (`NME ( 'DumbBot' ) ( '1.0' )`).
    pub fn to_text(&self) -> String {
        super::token::to_text(&self.to_tokens())
    }

    /// Parse a whole message.
    pub fn parse(tokens: &[Token]) -> Result<Message, MessageError> {
        // `PRN` quotes a message whose brackets do not match: its own cannot be counted.
        if let [first, BRA, inner @ .., KET] = tokens {
            if first.name() == Some("PRN") {
                return Ok(Message::Prn(inner.to_vec()));
            }
        }
        let mut depth = 0i32;
        for t in tokens {
            if *t == BRA {
                depth += 1;
            } else if *t == KET {
                depth -= 1;
                if depth < 0 {
                    return Err(MessageError::Brackets);
                }
            }
        }
        if depth != 0 {
            return Err(MessageError::Brackets);
        }
        let mut c = Cursor { t: tokens, i: 0 };
        let m = c.message()?;
        c.end()?;
        Ok(m)
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
    pub(super) fn inner_message(&mut self) -> R<Message> {
        self.grouped(|c| c.message())
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
    pub(super) fn message(&mut self) -> R<Message> {
        let Some(cmd) = self.next() else {
            return self.err("a command");
        };
        let more = !self.at_end() && self.peek() != Some(KET);
        let m = match cmd.name() {
            Some("NME") => Message::Nme(self.text()?, self.text()?),
            Some("OBS") if more => Message::Obs(Some((self.text()?, self.text()?))),
            Some("OBS") => Message::Obs(None),
            Some("IAM") => Message::Iam(self.one_power()?, self.grouped(Self::int)?),
            Some("MAP") if more => Message::Map(Some(self.text()?)),
            Some("MAP") => Message::Map(None),
            Some("MDF") if more => Message::Mdf(Some(Box::new(self.mdf()?))),
            Some("MDF") => Message::Mdf(None),
            Some("HLO") if more => {
                let power = self.one_power()?;
                let passcode = self.grouped(Self::int)?;
                let variants = self.grouped(|c| {
                    let mut v = Vec::new();
                    while c.peek() == Some(BRA) {
                        v.push(c.grouped(|c| {
                            let param = match c.next() {
                                Some(t) if t.category() == 0x49 => t,
                                _ => {
                                    c.i -= 1;
                                    return c.err("a parameter");
                                }
                            };
                            let value = match c.peek() {
                                Some(t) if t.is_int() => Some(c.int()?),
                                _ => None,
                            };
                            Ok(Variant { param, value })
                        })?);
                    }
                    Ok(v)
                })?;
                Message::Hlo(Some(Hello {
                    power,
                    passcode,
                    variants,
                }))
            }
            Some("HLO") => Message::Hlo(None),
            Some("SCO") if more => Message::Sco(Some(self.owned()?)),
            Some("SCO") => Message::Sco(None),
            Some("NOW") if more => {
                let turn = self.turn()?;
                let mut units = Vec::new();
                while self.peek() == Some(BRA) {
                    units.push(self.placed()?);
                }
                Message::Now(Some((turn, units)))
            }
            Some("NOW") => Message::Now(None),
            Some("HST") if more => Message::Hst(Some(self.turn()?)),
            Some("HST") => Message::Hst(None),
            Some("SUB") => {
                // A turn first is `(SPR 1901)`: a season token right after the bracket.
                let has_turn = self.peek() == Some(BRA)
                    && self.t.get(self.i + 1).is_some_and(|t| t.category() == 0x47);
                let turn = if has_turn { Some(self.turn()?) } else { None };
                let mut orders = Vec::new();
                while self.peek() == Some(BRA) {
                    orders.push(self.order()?);
                }
                if orders.is_empty() && turn.is_none() && more {
                    return self.err("an order");
                }
                Message::Sub(turn, orders)
            }
            Some("THX") => {
                let o = self.order()?;
                let note = self.grouped(|c| match c.next() {
                    Some(t) if t.category() == 0x44 => Ok(t),
                    _ => {
                        c.i -= 1;
                        c.err("an order note")
                    }
                })?;
                Message::Thx(o, note)
            }
            Some("MIS") if more => {
                let is_count =
                    self.peek() == Some(BRA) && self.t.get(self.i + 1).is_some_and(|t| t.is_int());
                if is_count {
                    Message::Mis(Some(Missing::Count(self.grouped(Self::int)?)))
                } else {
                    let mut us = Vec::new();
                    while self.peek() == Some(BRA) {
                        us.push(self.placed()?);
                    }
                    Message::Mis(Some(Missing::Units(us)))
                }
            }
            Some("MIS") => Message::Mis(None),
            Some("GOF") => Message::Gof,
            Some("ORD") => {
                let turn = self.turn()?;
                let o = self.order()?;
                let res = self.grouped(|c| {
                    let mut v = Vec::new();
                    while let Some(t) = c.peek().filter(|t| t.category() == 0x45) {
                        v.push(t);
                        c.i += 1;
                    }
                    Ok(v)
                })?;
                Message::Ord(turn, o, res)
            }
            Some("TME") if more => Message::Tme(Some(self.grouped(Self::int)?)),
            Some("TME") => Message::Tme(None),
            Some("DRW") if more => {
                let ps = self.powers_in_group()?;
                if ps.is_empty() {
                    return self.err("a power");
                }
                Message::Drw(ps)
            }
            Some("DRW") => Message::Drw(Vec::new()),
            Some("SLO") => Message::Slo(self.one_power()?),
            Some("CCD") => Message::Ccd(self.one_power()?),
            Some("OUT") => Message::Out(self.one_power()?),
            Some("SMR") if more => {
                let turn = self.turn()?;
                let mut entries = Vec::new();
                while self.peek() == Some(BRA) {
                    entries.push(self.grouped(|c| {
                        let power = c.power()?;
                        let name = c.text()?;
                        let version = c.text()?;
                        let centres = c.int()?;
                        let eliminated = match c.peek() {
                            Some(t) if t.is_int() => Some(c.int()?),
                            _ => None,
                        };
                        Ok(SmrEntry {
                            power,
                            name,
                            version,
                            centres,
                            eliminated,
                        })
                    })?);
                }
                Message::Smr(Some((turn, entries)))
            }
            Some("SMR") => Message::Smr(None),
            Some("OFF") => Message::Off,
            Some("YES") => Message::Yes(Box::new(self.inner_message()?)),
            Some("REJ") => Message::Rej(Box::new(self.inner_message()?)),
            Some("NOT") => Message::Not(Box::new(self.inner_message()?)),
            Some("HUH") => Message::Huh(self.raw_group()?),
            Some("PRN") => Message::Prn(self.raw_group()?),
            Some("SND") => {
                let has_turn = self.peek() == Some(BRA)
                    && self.t.get(self.i + 1).is_some_and(|t| t.category() == 0x47);
                let turn = if has_turn { Some(self.turn()?) } else { None };
                let to = self.powers_in_group()?;
                if to.is_empty() {
                    self.i -= 1;
                    return self.err("a power");
                }
                Message::Snd(turn, to, self.grouped(Self::press)?)
            }
            Some("FRM") => {
                let from = self.one_power()?;
                let to = self.powers_in_group()?;
                if to.is_empty() {
                    self.i -= 1;
                    return self.err("a power");
                }
                Message::Frm(from, to, self.grouped(Self::press)?)
            }
            Some("ADM" | "SVE" | "LOD") => {
                // Kept whole: the rest of this (sub)message.
                let start = self.i - 1;
                let mut depth = 0;
                while let Some(t) = self.peek() {
                    if t == KET && depth == 0 {
                        break;
                    }
                    if t == BRA {
                        depth += 1;
                    } else if t == KET {
                        depth -= 1;
                    }
                    self.i += 1;
                }
                Message::Other(self.t[start..self.i].to_vec())
            }
            _ => {
                self.i -= 1;
                return self.err("a command");
            }
        };
        Ok(m)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::token::{from_text, to_text};
    use super::*;
    use proptest::prelude::*;

    fn parse(s: &str) -> Result<Message, MessageError> {
        Message::parse(&from_text(s).unwrap())
    }

    #[test]
    fn parses_the_messages_of_the_syntax_document() {
        assert_eq!(
            parse("NME ('DumbBot') ('1.0')"),
            Ok(Message::Nme("DumbBot".into(), "1.0".into()))
        );
        let m = parse("SUB ((ENG FLT LON) MTO NTH) ((ENG AMY LVP) HLD) ((ENG FLT EDI) SUP (ENG FLT LON) MTO NTH)").unwrap();
        assert!(matches!(&m, Message::Sub(None, o) if o.len() == 3));
        assert_eq!(Message::parse(&m.to_tokens()), Ok(m));
        let m = parse("NOW (SUM 1901) (RUS FLT (STP SCS)) (TUR AMY CON MRT (BUL SMY))").unwrap();
        assert_eq!(
            to_text(&m.to_tokens()),
            "NOW ( SUM 1901 ) ( RUS FLT ( STP SCS ) ) ( TUR AMY CON MRT ( BUL SMY ) )"
        );
        assert_eq!(
            parse("MIS (-2)"),
            Ok(Message::Mis(Some(Missing::Count(-2))))
        );
        assert_eq!(parse("MIS"), Ok(Message::Mis(None)));
        assert_eq!(parse("NOT (GOF)"), Ok(Message::Not(Box::new(Message::Gof))));
        assert_eq!(
            parse("SUB (FAL 1901) (ENG WVE)"),
            Ok(Message::Sub(
                Some(Turn {
                    season: DSeason::Fal,
                    year: 1901
                }),
                vec![DOrder::Wve(Power(1))]
            ))
        );
        assert_eq!(parse("SUB (( ENG"), Err(MessageError::Brackets));
        assert_eq!(
            parse("SUB ((ENG AMY LVP) HLD HLD)"),
            Err(MessageError::Syntax {
                index: 8,
                expected: ")"
            })
        );
        assert!(matches!(parse("THX"), Err(MessageError::Syntax { .. })));
        assert!(matches!(
            parse("AUS"),
            Err(MessageError::Syntax { index: 0, .. })
        ));
        let unbalanced = from_text("SUB ((AUS AMY VIE) HLD").unwrap();
        let prn = Message::Prn(unbalanced);
        assert_eq!(Message::parse(&prn.to_tokens()), Ok(prn));
        assert!(matches!(
            parse("SND (1901) (ENG) (PRP (PCE (ENG FRA)))"),
            Err(MessageError::Syntax { index: 2, .. })
        ));
        let m = parse("SND (SPR 1901) (ENG GER) (PRP (PCE (ENG FRA)))").unwrap();
        assert!(matches!(&m, Message::Snd(Some(_), to, _) if to.len() == 2));
        assert_eq!(
            to_text(&m.to_tokens()),
            "SND ( SPR 1901 ) ( ENG GER ) ( PRP ( PCE ( ENG FRA ) ) )"
        );
        assert!(matches!(
            parse("FRM (FRA) (ENG) (YES (PRP (PCE (ENG FRA))))"),
            Ok(Message::Frm(Power(2), _, _))
        ));
        assert!(parse("SND () (PRP (PCE (ENG FRA)))").is_err());
    }

    fn power() -> impl Strategy<Value = Power> {
        (0u8..7).prop_map(Power)
    }
    fn text() -> impl Strategy<Value = String> {
        "[ -&(-~]{0,12}"
    }
    fn coast() -> impl Strategy<Value = Token> {
        prop::sample::select(vec!["NCS", "SCS", "ECS", "WCS", "NEC"]).prop_map(tok)
    }
    fn dloc() -> impl Strategy<Value = DLoc> {
        (0u8..75, prop::option::of(coast())).prop_map(|(prov, coast)| DLoc { prov, coast })
    }
    fn dunit() -> impl Strategy<Value = DUnit> {
        (power(), any::<bool>(), dloc()).prop_map(|(power, f, loc)| DUnit {
            power,
            kind: if f { UnitKind::Fleet } else { UnitKind::Army },
            loc,
        })
    }
    fn turn() -> impl Strategy<Value = Turn> {
        (0u8..5, 1901i16..2100).prop_map(|(s, year)| Turn {
            season: [
                DSeason::Spr,
                DSeason::Sum,
                DSeason::Fal,
                DSeason::Aut,
                DSeason::Win,
            ][s as usize],
            year,
        })
    }
    pub(crate) fn order() -> impl Strategy<Value = DOrder> {
        prop_oneof![
            dunit().prop_map(DOrder::Hld),
            (dunit(), dloc()).prop_map(|(u, l)| DOrder::Mto(u, l)),
            (dunit(), dunit()).prop_map(|(u, s)| DOrder::SupHld(u, s)),
            (dunit(), dunit(), 0u8..75).prop_map(|(u, s, p)| DOrder::SupMto(u, s, p)),
            (dunit(), dunit(), 0u8..75).prop_map(|(u, s, p)| DOrder::Cvy(u, s, p)),
            (dunit(), 0u8..75, prop::collection::vec(0u8..75, 0..4))
                .prop_map(|(u, p, s)| DOrder::CtoVia(u, p, s)),
            (dunit(), dloc()).prop_map(|(u, l)| DOrder::Rto(u, l)),
            dunit().prop_map(DOrder::Dsb),
            dunit().prop_map(DOrder::Bld),
            dunit().prop_map(DOrder::Rem),
            power().prop_map(DOrder::Wve),
        ]
    }
    fn placed() -> impl Strategy<Value = Placed> {
        (
            dunit(),
            prop::option::of(prop::collection::vec(dloc(), 0..3)),
        )
            .prop_map(|(unit, retreat)| Placed { unit, retreat })
    }
    fn owned() -> impl Strategy<Value = Vec<(Option<Power>, Vec<DProv>)>> {
        prop::collection::vec(
            (
                prop::option::of(power()),
                prop::collection::vec(0u8..75, 0..4),
            ),
            1..4,
        )
    }
    fn note(cat: u16, n: u16) -> impl Strategy<Value = Token> {
        (0..n).prop_map(move |i| Token(cat | i))
    }
    fn simple() -> impl Strategy<Value = Message> {
        prop_oneof![
            (text(), text()).prop_map(|(a, b)| Message::Nme(a, b)),
            prop::option::of((text(), text())).prop_map(Message::Obs),
            (power(), -8192i16..8192).prop_map(|(p, c)| Message::Iam(p, c)),
            prop::option::of(text()).prop_map(Message::Map),
            Just(Message::Mdf(None)),
            Just(Message::Hlo(None)),
            (
                power(),
                -100i16..8000,
                prop::collection::vec((0u16..12, prop::option::of(0i16..300)), 0..4)
            )
                .prop_map(|(power, passcode, v)| Message::Hlo(Some(Hello {
                    power,
                    passcode,
                    variants: v
                        .into_iter()
                        .map(|(p, value)| Variant {
                            param: Token(
                                0x4900 | [0, 1, 3, 5, 6, 7, 8, 9, 10, 13][p as usize % 10]
                            ),
                            value
                        })
                        .collect()
                }))),
            prop::option::of(owned()).prop_map(Message::Sco),
            prop::option::of((turn(), prop::collection::vec(placed(), 0..5)))
                .prop_map(Message::Now),
            prop::option::of(turn()).prop_map(Message::Hst),
            (
                prop::option::of(turn()),
                prop::collection::vec(order(), 1..4)
            )
                .prop_map(|(t, o)| Message::Sub(t, o)),
            (order(), note(0x4400, 0x0E)).prop_map(|(o, n)| Message::Thx(o, n)),
            Just(Message::Mis(None)),
            (-30i16..30).prop_map(|n| Message::Mis(Some(Missing::Count(n)))),
            prop::collection::vec(placed(), 1..4)
                .prop_map(|u| Message::Mis(Some(Missing::Units(u)))),
            Just(Message::Gof),
            (
                turn(),
                order(),
                prop::collection::vec(note(0x4500, 7), 0..3)
            )
                .prop_map(|(t, o, r)| Message::Ord(t, o, r)),
            prop::option::of(0i16..8000).prop_map(Message::Tme),
            prop::collection::vec(power(), 0..4).prop_map(Message::Drw),
            power().prop_map(Message::Slo),
            power().prop_map(Message::Ccd),
            power().prop_map(Message::Out),
            prop::option::of((
                turn(),
                prop::collection::vec(
                    (
                        power(),
                        text(),
                        text(),
                        0i16..34,
                        prop::option::of(1901i16..1950)
                    ),
                    0..7
                )
            ))
            .prop_map(|s| Message::Smr(s.map(|(t, es)| {
                (
                    t,
                    es.into_iter()
                        .map(|(power, name, version, centres, eliminated)| SmrEntry {
                            power,
                            name,
                            version,
                            centres,
                            eliminated,
                        })
                        .collect(),
                )
            }))),
            Just(Message::Off),
        ]
    }

    fn press_message() -> impl Strategy<Value = Message> {
        use super::super::press::tests::press;
        prop_oneof![
            (
                prop::option::of(turn()),
                prop::collection::vec(power(), 1..4),
                press()
            )
                .prop_map(|(t, to, p)| Message::Snd(t, to, p)),
            (power(), prop::collection::vec(power(), 1..4), press())
                .prop_map(|(f, to, p)| Message::Frm(f, to, p)),
        ]
    }

    pub(crate) fn message() -> impl Strategy<Value = Message> {
        prop_oneof![4 => simple(), 1 => press_message()].prop_recursive(2, 8, 1, |inner| {
            prop_oneof![
                inner.clone().prop_map(|m| Message::Yes(Box::new(m))),
                inner.clone().prop_map(|m| Message::Rej(Box::new(m))),
                inner.prop_map(|m| Message::Not(Box::new(m))),
            ]
        })
    }

    proptest! {
        #[test]
        fn every_message_formats_and_reparses_to_itself(m in message()) {
            let tokens = m.to_tokens();
            prop_assert_eq!(Message::parse(&tokens), Ok(m.clone()));
            let bytes = m.to_bytes();
            prop_assert_eq!(super::super::token::from_bytes(&bytes).unwrap(), tokens.clone());
            prop_assert_eq!(from_text(&to_text(&tokens)).unwrap(), tokens);
        }

        #[test]
        fn arbitrary_tokens_never_panic(ts in prop::collection::vec(prop_oneof![
            Just(BRA), Just(KET), (0u16..0x4000).prop_map(Token), (0x4100u16..0x4B80).prop_map(Token),
            (0u8..75).prop_map(|p| Token::province(p).unwrap())], 0..30)) {
            let _ = Message::parse(&ts);
        }
    }
}
