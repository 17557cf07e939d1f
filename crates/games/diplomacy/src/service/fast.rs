//! The fast path of [`Service::request`]: one pass of serde_json over the line, in which each
//! string becomes its typed value as it is read and no list of strings is kept.
//!
//! It accepts only what it can place without doubt. Anything else (a value of another shape, a
//! name it does not know, a unit placed twice, a field given twice, a missing phase) makes it give
//! up, and the line takes the reference path ([`Service::request_checked`]), which builds the
//! same request or names what is wrong. The test `the_fast_path_reads_as_the_reference_path_does`
//! holds the two together.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{board_unit, power, DislodgedInput, JsonText, Request, Service, S};
use crate::board::Board;
use crate::map::bit;
use crate::order::{parse_order, Order};
use crate::outcome::VoidReason;
use crate::types::{Phase, Power};

/// What the pass has read so far.
struct Fast<'a> {
    phase: Option<Phase>,
    /// Units, centres and home centres, placed as they are read.
    board: Board,
    dislodged: Option<DislodgedInput<'a>>,
    /// Fields met, to give up on a field given twice (as serde's derive refuses it).
    seen: u8,
    orders: Vec<(Power, Order)>,
    given: Vec<(Power, JsonText<'a>, Result<usize, VoidReason>)>,
}

/// The error that makes the pass give up (its text is never shown).
fn give_up<E: de::Error>() -> E {
    E::custom("not on the fast path")
}

/// Read `line` on the fast path; `None`: take the reference path.
pub(super) fn request<'a>(svc: &Service, line: &'a str) -> Option<Request<'a>> {
    let mut f = Fast {
        phase: None,
        board: Board::empty(svc.map, Phase::START),
        dislodged: None,
        seen: 0,
        orders: Vec::with_capacity(40),
        given: Vec::with_capacity(40),
    };
    let mut de = serde_json::Deserializer::from_str(line);
    LineSeed { svc, f: &mut f }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    f.board.phase = f.phase?;
    if f.seen & UNITS == 0 {
        return None;
    }
    if let Some(d) = f.dislodged {
        svc.place_dislodged(&mut f.board, d).ok()?;
    }
    if f.seen & CENTERS == 0 {
        f.board.set_start_centers(svc.map);
    }
    Some(Request {
        board: f.board,
        orders: f.orders,
        given: f.given,
    })
}

const PHASE: u8 = 1;
const UNITS: u8 = 2;
const DISLODGED: u8 = 4;
const CENTERS: u8 = 8;
const HOMES: u8 = 16;
const ORDERS: u8 = 32;

/// The whole line: an object of the service's fields.
struct LineSeed<'s, 'f, 'a> {
    svc: &'s Service,
    f: &'f mut Fast<'a>,
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for LineSeed<'_, '_, 'a> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for LineSeed<'_, '_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(key) = m.next_key::<S<'de>>()? {
            let field = match &*key.0 {
                "phase" => PHASE,
                "units" => UNITS,
                "dislodged" => DISLODGED,
                "centers" => CENTERS,
                "homes" => HOMES,
                "orders" => ORDERS,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if self.f.seen & field != 0 {
                return Err(give_up());
            }
            self.f.seen |= field;
            match field {
                PHASE => {
                    let s: S<'de> = m.next_value()?;
                    self.f.phase = Some(Phase::parse(&s.0).map_err(|_| give_up::<A::Error>())?);
                }
                DISLODGED => self.f.dislodged = Some(m.next_value()?),
                _ => {
                    if field == HOMES {
                        self.f.board.homes = [0; 7];
                    }
                    m.next_value_seed(PowersSeed {
                        svc: self.svc,
                        f: &mut *self.f,
                        field,
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// `{"FRANCE": [...], ...}` of units, centres, home centres or orders.
struct PowersSeed<'s, 'f, 'a> {
    svc: &'s Service,
    f: &'f mut Fast<'a>,
    field: u8,
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for PowersSeed<'_, '_, 'a> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for PowersSeed<'_, '_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of lists")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(key) = m.next_key::<S<'de>>()? {
            let power = power(&key.0).map_err(|_| give_up::<A::Error>())?;
            m.next_value_seed(ListSeed {
                svc: self.svc,
                f: &mut *self.f,
                field: self.field,
                power,
            })?;
        }
        Ok(())
    }
}

/// One power's list of strings, each placed as it is read.
struct ListSeed<'s, 'f, 'a> {
    svc: &'s Service,
    f: &'f mut Fast<'a>,
    field: u8,
    power: Power,
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for ListSeed<'_, '_, 'a> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ListSeed<'_, '_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of strings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (svc, f, pw) = (self.svc, self.f, self.power);
        let map = svc.map;
        while let Some(text) = seq.next_element::<S<'de>>()? {
            let placed = match self.field {
                UNITS => board_unit(map, pw, &text.0).ok().and_then(|u| {
                    let p = map.prov_of(u.loc) as usize;
                    let slot = &mut f.board.units[p];
                    slot.is_none().then(|| *slot = Some(u))
                }),
                CENTERS => svc.center(&text.0).ok().and_then(|p| {
                    let slot = &mut f.board.owner[p as usize];
                    slot.is_none().then(|| *slot = Some(pw))
                }),
                HOMES => svc
                    .center(&text.0)
                    .ok()
                    .map(|p| f.board.homes[pw.index()] |= bit(p)),
                _ => {
                    match parse_order(map, &text.0) {
                        Ok(o) => {
                            f.given.push((pw, JsonText(text.0), Ok(f.orders.len())));
                            f.orders.push((pw, o));
                        }
                        Err(e) => f
                            .given
                            .push((pw, JsonText(text.0), Err(VoidReason::Parse(e)))),
                    }
                    Some(())
                }
            };
            if placed.is_none() {
                return Err(give_up());
            }
        }
        Ok(())
    }
}
