//! DAIDE press, levels 10 to 30, as typed values: what `SND` carries and `FRM` delivers.
//!
//! * Level 10 (peace and alliances): `PRP (arrangement)`, `FCT (arrangement)`, `CCL (press)`,
//!   `TRY (tokens)`, the replies `YES (press)`, `REJ (press)`, `BWX (press)`, `HUH (press with
//!   ERR)`; arrangements `PCE (powers)`, `ALY (powers) VSS (powers)`, `DRW [(powers)]`, `SLO
//!   (power)`, `NOT (arrangement)`, `NAR (arrangement)`.
//! * Level 20 (order proposals): the arrangements `XDO (order)` and `DMZ (powers) (provinces)`.
//! * Level 30 (multi-part arrangements): `AND (arrangement) (arrangement) ...` and `ORR (...)
//!   (...) ...`, of at least two parts, none of them itself an `AND` or `ORR` (nesting is level
//!   50).
//!
//! Parsing accepts every level; [`above_level`] finds the first token a game's level does not
//! allow (a server answers `HUH` with `ERR` before it).

use super::grammar::{power_token, tok, Cursor, DOrder, DProv, MessageError, Out, R};
use super::token::{Token, BRA, KET};
use crate::types::Power;

/// An arrangement: what a proposal (`PRP`) or a statement (`FCT`) is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Arrangement {
    /// `PCE (power power ...)`: peace among at least two powers.
    Pce(Vec<Power>),
    /// `ALY (power power ...) VSS (power ...)`: an alliance of at least two against at least one.
    Aly(Vec<Power>, Vec<Power>),
    /// `DRW`, or `DRW (power power ...)` (at least two).
    Drw(Vec<Power>),
    /// `SLO (power)`.
    Slo(Power),
    /// `NOT (arrangement)`.
    Not(Box<Arrangement>),
    /// `NAR (arrangement)`: no agreement on it.
    Nar(Box<Arrangement>),
    /// `XDO (order)` (level 20).
    Xdo(DOrder),
    /// `DMZ (power ...) (province ...)` (level 20), at least one of each.
    Dmz(Vec<Power>, Vec<DProv>),
    /// `AND (arrangement) (arrangement) ...` (level 30).
    And(Vec<Arrangement>),
    /// `ORR (arrangement) (arrangement) ...` (level 30).
    Orr(Vec<Arrangement>),
}

/// A press message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Press {
    /// `PRP (arrangement)`: a proposal.
    Prp(Arrangement),
    /// `FCT (arrangement)`: a statement of fact.
    Fct(Arrangement),
    /// `CCL (press)`: cancel a message sent earlier.
    Ccl(Box<Press>),
    /// `TRY (token ...)`: the press tokens the sender can take.
    Try(Vec<Token>),
    /// `YES (press)`.
    Yes(Box<Press>),
    /// `REJ (press)`.
    Rej(Box<Press>),
    /// `BWX (press)`: none of your business.
    Bwx(Box<Press>),
    /// `HUH (tokens with ERR)`: a message not understood, as received.
    Huh(Vec<Token>),
}

/// The lowest level that has press token `t`; `None` for a token that is no press word (a
/// power, a province, a bracket...). `YES`, `REJ`, `HUH`, `NOT`, `DRW` and `SLO` are level-0
/// commands too: as press words they are level 10. Tokens of levels beyond 30 have their DAIDE
/// levels (40 to 130); a press token of none of them is 255.
pub fn token_level(t: Token) -> Option<u8> {
    let name = t.name()?;
    Some(match name {
        "PRP" | "FCT" | "CCL" | "TRY" | "BWX" | "PCE" | "ALY" | "VSS" | "NAR" => 10,
        "YES" | "REJ" | "HUH" | "NOT" | "DRW" | "SLO" => 10,
        "XDO" | "DMZ" => 20,
        "AND" | "ORR" => 30,
        "SCD" | "OCC" => 40,
        "CHO" => 50,
        "INS" | "QRY" | "THK" | "IDK" | "SUG" => 60,
        "WHT" | "HOW" => 70,
        "EXP" | "SRY" => 80,
        "FOR" => 90,
        "IFF" | "THN" | "ELS" => 100,
        "XOY" | "YDO" => 110,
        "FWD" | "BCC" | "SND" | "FRM" => 120,
        "WHY" | "POB" => 130,
        _ if t.category() == 0x4A => 255,
        _ => return None,
    })
}

/// The index of the first token of press `tokens` above `level`, if any.
pub fn above_level(tokens: &[Token], level: u8) -> Option<usize> {
    tokens
        .iter()
        .position(|&t| token_level(t).is_some_and(|l| l > level))
}

/// Whether `t` may be listed in `TRY`: a press word of levels 10 to 30 (others are refused
/// by the level, as any token above the game's).
fn try_token(t: Token) -> bool {
    t.category() == 0x4A || matches!(t.name(), Some("YES" | "REJ" | "DRW" | "SLO" | "NOT"))
}

impl Out {
    pub(super) fn powers_group(&mut self, ps: &[Power]) -> &mut Self {
        self.group(|o| {
            for p in ps {
                o.t(power_token(*p));
            }
        })
    }

    pub(super) fn arrangement(&mut self, a: &Arrangement) -> &mut Self {
        match a {
            Arrangement::Pce(ps) => self.n("PCE").powers_group(ps),
            Arrangement::Aly(a, v) => self.n("ALY").powers_group(a).n("VSS").powers_group(v),
            Arrangement::Drw(ps) if ps.is_empty() => self.n("DRW"),
            Arrangement::Drw(ps) => self.n("DRW").powers_group(ps),
            Arrangement::Slo(p) => self.n("SLO").powers_group(&[*p]),
            Arrangement::Not(x) => self.n("NOT").group(|o| {
                o.arrangement(x);
            }),
            Arrangement::Nar(x) => self.n("NAR").group(|o| {
                o.arrangement(x);
            }),
            Arrangement::Xdo(ord) => self.n("XDO").order(ord),
            Arrangement::Dmz(ps, provs) => self.n("DMZ").powers_group(ps).group(|o| {
                for p in provs {
                    o.prov(*p);
                }
            }),
            Arrangement::And(parts) | Arrangement::Orr(parts) => {
                self.n(match a {
                    Arrangement::And(_) => "AND",
                    _ => "ORR",
                });
                for x in parts {
                    self.group(|o| {
                        o.arrangement(x);
                    });
                }
                self
            }
        }
    }

    pub(super) fn press(&mut self, p: &Press) -> &mut Self {
        let word = match p {
            Press::Prp(_) => "PRP",
            Press::Fct(_) => "FCT",
            Press::Try(_) => "TRY",
            Press::Huh(_) => "HUH",
            Press::Ccl(_) => "CCL",
            Press::Yes(_) => "YES",
            Press::Rej(_) => "REJ",
            Press::Bwx(_) => "BWX",
        };
        self.n(word).group(|o| match p {
            Press::Prp(a) | Press::Fct(a) => {
                o.arrangement(a);
            }
            Press::Try(ts) | Press::Huh(ts) => o.0.extend_from_slice(ts),
            Press::Ccl(x) | Press::Yes(x) | Press::Rej(x) | Press::Bwx(x) => {
                o.press(x);
            }
        })
    }
}

impl Cursor<'_> {
    /// Powers in a group: at least `min`.
    fn powers_min(&mut self, min: usize) -> R<Vec<Power>> {
        let ps = self.powers_in_group()?;
        if ps.len() < min {
            // The bracket that closed the list too soon.
            self.i -= 1;
            return self.err("a power");
        }
        Ok(ps)
    }

    fn arrangement_in(&mut self, nested: bool) -> R<Arrangement> {
        let Some(t) = self.next() else {
            return self.err("an arrangement");
        };
        Ok(match t.name() {
            Some("PCE") => Arrangement::Pce(self.powers_min(2)?),
            Some("ALY") => {
                let a = self.powers_min(2)?;
                self.expect(tok("VSS"), "VSS")?;
                Arrangement::Aly(a, self.powers_min(1)?)
            }
            Some("DRW") if self.peek() == Some(BRA) => Arrangement::Drw(self.powers_min(2)?),
            Some("DRW") => Arrangement::Drw(Vec::new()),
            Some("SLO") => Arrangement::Slo(self.one_power()?),
            Some("NOT") => Arrangement::Not(Box::new(self.grouped(|c| c.arrangement_in(false))?)),
            Some("NAR") => Arrangement::Nar(Box::new(self.grouped(|c| c.arrangement_in(false))?)),
            Some("XDO") => Arrangement::Xdo(self.order()?),
            Some("DMZ") => {
                let ps = self.powers_min(1)?;
                let provs = self.grouped(Self::provs)?;
                if provs.is_empty() {
                    self.i -= 1;
                    return self.err("a province");
                }
                Arrangement::Dmz(ps, provs)
            }
            Some(w @ ("AND" | "ORR")) if !nested => {
                let mut parts = Vec::new();
                while self.peek() == Some(BRA) {
                    parts.push(self.grouped(|c| c.arrangement_in(true))?);
                }
                if parts.len() < 2 {
                    return self.err("a second part: (arrangement)");
                }
                match w {
                    "AND" => Arrangement::And(parts),
                    _ => Arrangement::Orr(parts),
                }
            }
            _ => {
                self.i -= 1;
                return self.err(if nested {
                    "an arrangement (AND and ORR do not nest)"
                } else {
                    "an arrangement (PCE, ALY, DRW, SLO, NOT, NAR, XDO, DMZ, AND, ORR)"
                });
            }
        })
    }

    /// A press message (its tokens up to the end or its group's closing bracket).
    pub(super) fn press(&mut self) -> R<Press> {
        let Some(t) = self.next() else {
            return self.err("a press message");
        };
        let boxed = |c: &mut Self| -> R<Box<Press>> { Ok(Box::new(c.grouped(Self::press)?)) };
        Ok(match t.name() {
            Some("PRP") => Press::Prp(self.grouped(|c| c.arrangement_in(false))?),
            Some("FCT") => Press::Fct(self.grouped(|c| c.arrangement_in(false))?),
            Some("CCL") => Press::Ccl(boxed(self)?),
            Some("YES") => Press::Yes(boxed(self)?),
            Some("REJ") => Press::Rej(boxed(self)?),
            Some("BWX") => Press::Bwx(boxed(self)?),
            Some("HUH") => Press::Huh(self.raw_group()?),
            Some("TRY") => Press::Try(self.grouped(|c| {
                let mut v = Vec::new();
                while let Some(t) = c.peek().filter(|&t| t != KET) {
                    if !try_token(t) {
                        return c.err("a press token");
                    }
                    v.push(t);
                    c.i += 1;
                }
                if v.is_empty() {
                    return c.err("a press token");
                }
                Ok(v)
            })?),
            _ => {
                self.i -= 1;
                return self.err("a press message (PRP, FCT, CCL, TRY, YES, REJ, BWX, HUH)");
            }
        })
    }
}

impl Press {
    /// The message's tokens.
    pub fn to_tokens(&self) -> Vec<Token> {
        let mut o = Out(Vec::new());
        o.press(self);
        o.0
    }

    /// The readable form (`PRP ( PCE ( ENG FRA ) )`): the text of a press message as a
    /// JSON-lines bot sends and receives it.
    pub fn to_text(&self) -> String {
        super::token::to_text(&self.to_tokens())
    }

    /// Parse a whole press message (of any level; see [`above_level`]).
    pub fn parse(tokens: &[Token]) -> Result<Press, MessageError> {
        let mut depth = 0i32;
        for t in tokens {
            depth += i32::from(*t == BRA) - i32::from(*t == KET);
            if depth < 0 {
                return Err(MessageError::Brackets);
            }
        }
        if depth != 0 {
            return Err(MessageError::Brackets);
        }
        let mut c = Cursor { t: tokens, i: 0 };
        let p = c.press()?;
        c.end()?;
        Ok(p)
    }

    /// Parse the text form of a press message and check it against `level`: the message, or
    /// why it is none (a word that is no token, a syntax error, a token above the level).
    pub fn from_text_at(text: &str, level: u8) -> Result<Press, String> {
        let tokens = super::token::from_text(text).map_err(|e| e.to_string())?;
        if let Some(i) = above_level(&tokens, level) {
            return Err(format!(
                "{} is above press level {level}",
                tokens.get(i).map(Token::to_string).unwrap_or_default()
            ));
        }
        Press::parse(&tokens).map_err(|e| format!("not DAIDE press: {e}"))
    }

    /// The highest level of a token in the message (10 at least).
    pub fn level(&self) -> u8 {
        self.to_tokens()
            .into_iter()
            .filter_map(token_level)
            .max()
            .unwrap_or(10)
            .max(10)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::message::tests::order;
    use super::super::token::from_text;
    use super::*;
    use proptest::prelude::*;

    fn parse(s: &str) -> Result<Press, MessageError> {
        Press::parse(&from_text(s).unwrap())
    }

    #[test]
    fn parses_the_press_of_the_syntax_document() {
        let p = parse("PRP (PCE (ENG FRA))").unwrap();
        assert_eq!(p, Press::Prp(Arrangement::Pce(vec![Power(1), Power(2)])));
        assert_eq!(p.to_text(), "PRP ( PCE ( ENG FRA ) )");
        let p = parse("YES (PRP (ALY (ENG FRA) VSS (GER)))").unwrap();
        assert_eq!(p.level(), 10);
        assert_eq!(
            p,
            Press::Yes(Box::new(Press::Prp(Arrangement::Aly(
                vec![Power(1), Power(2)],
                vec![Power(3)]
            ))))
        );
        let p = parse("PRP (XDO ((ENG FLT LON) MTO NTH))").unwrap();
        assert_eq!(p.level(), 20);
        let p = parse("PRP (DMZ (ENG FRA) (ECH NTH))").unwrap();
        assert_eq!(p.level(), 20);
        let p = parse("PRP (AND (PCE (ENG FRA)) (DMZ (FRA) (ECH)))").unwrap();
        assert_eq!(p.level(), 30);
        assert!(
            parse("PRP (AND (AND (DRW) (DRW)) (DRW))").is_err(),
            "no nesting"
        );
        assert!(parse("PRP (AND (DRW))").is_err(), "two parts at least");
        assert!(parse("PRP (PCE (ENG))").is_err(), "peace of two at least");
        assert!(parse("TRY (PRP PCE ALY VSS YES REJ)").is_ok());
        assert!(parse("TRY (ENG)").is_err());
        assert!(parse("TRY ()").is_err());
        assert_eq!(
            parse("HUH (PRP (ERR PCE ENG))").unwrap().to_text(),
            "HUH ( PRP ( ERR PCE ENG ) )"
        );
        assert_eq!(parse("PRP (PCE (ENG FRA)"), Err(MessageError::Brackets));
        assert!(matches!(
            parse("PCE (ENG FRA)"),
            Err(MessageError::Syntax { index: 0, .. })
        ));
        assert_eq!(
            Press::from_text_at("PRP (XDO ((ENG FLT LON) MTO NTH))", 10),
            Err("XDO is above press level 10".into())
        );
        assert!(Press::from_text_at("PRP (XDO ((ENG FLT LON) MTO NTH))", 20).is_ok());
        assert!(Press::from_text_at("hello there", 30).is_err());
        assert_eq!(
            above_level(
                &from_text("PRP (AND (PCE (ENG FRA)) (XDO ((ENG FLT LON) HLD)))").unwrap(),
                20
            ),
            Some(2)
        );
    }

    fn power() -> impl Strategy<Value = Power> {
        (0u8..7).prop_map(Power)
    }
    fn powers(min: usize) -> impl Strategy<Value = Vec<Power>> {
        prop::collection::vec(power(), min..4)
    }
    fn simple_arrangement() -> impl Strategy<Value = Arrangement> {
        prop_oneof![
            powers(2).prop_map(Arrangement::Pce),
            (powers(2), powers(1)).prop_map(|(a, v)| Arrangement::Aly(a, v)),
            Just(Arrangement::Drw(Vec::new())),
            powers(2).prop_map(Arrangement::Drw),
            power().prop_map(Arrangement::Slo),
            order().prop_map(Arrangement::Xdo),
            (powers(1), prop::collection::vec(0u8..75, 1..4))
                .prop_map(|(p, q)| Arrangement::Dmz(p, q)),
        ]
    }
    fn part() -> impl Strategy<Value = Arrangement> {
        simple_arrangement().prop_recursive(2, 6, 1, |inner| {
            prop_oneof![
                inner.clone().prop_map(|a| Arrangement::Not(Box::new(a))),
                inner.prop_map(|a| Arrangement::Nar(Box::new(a))),
            ]
        })
    }
    pub(crate) fn arrangement() -> impl Strategy<Value = Arrangement> {
        prop_oneof![
            4 => part(),
            1 => prop::collection::vec(part(), 2..4).prop_map(Arrangement::And),
            1 => prop::collection::vec(part(), 2..4).prop_map(Arrangement::Orr),
        ]
    }
    pub(crate) fn press() -> impl Strategy<Value = Press> {
        let leaf = prop_oneof![
            arrangement().prop_map(Press::Prp),
            arrangement().prop_map(Press::Fct),
            prop::collection::vec(
                prop::sample::select(vec!["PRP", "PCE", "ALY", "VSS", "YES", "REJ", "XDO", "AND"]),
                1..4
            )
            .prop_map(|ws| Press::Try(ws.into_iter().map(tok).collect())),
            arrangement().prop_map(|a| {
                let mut t = Press::Prp(a).to_tokens();
                t.insert(2, tok("ERR"));
                Press::Huh(t)
            }),
        ];
        leaf.prop_recursive(2, 6, 1, |inner| {
            prop_oneof![
                inner.clone().prop_map(|p| Press::Ccl(Box::new(p))),
                inner.clone().prop_map(|p| Press::Yes(Box::new(p))),
                inner.clone().prop_map(|p| Press::Rej(Box::new(p))),
                inner.prop_map(|p| Press::Bwx(Box::new(p))),
            ]
        })
    }

    proptest! {
        #[test]
        fn every_press_message_formats_and_reparses_to_itself(p in press()) {
            let tokens = p.to_tokens();
            prop_assert_eq!(Press::parse(&tokens), Ok(p.clone()));
            prop_assert_eq!(Press::from_text_at(&p.to_text(), 30), Ok(p.clone()));
            let level = p.level();
            prop_assert_eq!(above_level(&tokens, level), None);
            if level > 10 {
                prop_assert!(above_level(&tokens, level - 10).is_some());
            }
        }

        #[test]
        fn arbitrary_press_tokens_never_panic(ts in prop::collection::vec(prop_oneof![
            Just(BRA), Just(KET), (0x4A00u16..0x4A27).prop_map(Token), (0x4100u16..0x4107).prop_map(Token),
            (0x4800u16..0x481F).prop_map(Token), (0u8..75).prop_map(|p| Token::province(p).unwrap())], 0..30)) {
            let _ = Press::parse(&ts);
            let _ = above_level(&ts, 10);
        }
    }
}
