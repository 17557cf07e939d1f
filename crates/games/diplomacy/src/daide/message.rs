//! DAIDE messages as typed values: parse from tokens, format to tokens (level 0, plus the
//! commands a level-0 server must recognise to refuse).

pub use super::grammar::*;
use super::grammar::{Cursor, Out, R};
use super::press::Press;
use super::token::{Token, BRA, KET};
use crate::types::Power;

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

impl Out {
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

impl Cursor<'_> {
    pub(super) fn inner_message(&mut self) -> R<Message> {
        self.grouped(|c| c.message())
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
    use crate::types::UnitKind;
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
