//! Orders between DAIDE and the crate, and the `ORD` results of an adjudicated phase.

use super::message::{DLoc, DOrder, DUnit};
use super::names::{self, dloc, dprov, dunit, NameError};
use super::token::Token;
use crate::adjudicate::adjudicate;
use crate::board::Board;
use crate::bots::uref;
use crate::map::{Map, Prov};
use crate::movement::Resolver;
use crate::order::{Dest, Order, UnitRef};
use crate::outcome::{FailReason, OrderResult};
use crate::types::{PhaseKind, Power, Unit, UnitKind};

fn unit_ref(map: &Map, u: &DUnit) -> Result<UnitRef, NameError> {
    let l = names::loc(map, &u.loc)?;
    let prov = map.prov_of(l);
    Ok(UnitRef {
        kind: Some(u.kind),
        prov,
        coast: (l != prov).then_some(l),
    })
}

fn dest(map: &Map, l: &DLoc) -> Result<Dest, NameError> {
    let at = names::loc(map, l)?;
    let prov = map.prov_of(at);
    Ok(Dest {
        prov,
        coast: (at != prov).then_some(at),
    })
}

/// The crate's order of a DAIDE order. `CTO ... VIA (...)` is a convoyed move whose route the
/// adjudicator finds itself (the sea provinces listed are not checked); `REM` is a removal.
pub fn to_order(map: &Map, o: &DOrder) -> Result<Order, NameError> {
    let p = |d| names::prov(map, d);
    Ok(match o {
        DOrder::Hld(u) => Order::Hold(unit_ref(map, u)?),
        DOrder::Mto(u, l) => Order::Move {
            unit: unit_ref(map, u)?,
            dest: dest(map, l)?,
            via: false,
        },
        DOrder::SupHld(u, s) => Order::SupportHold {
            unit: unit_ref(map, u)?,
            target: unit_ref(map, s)?,
        },
        DOrder::SupMto(u, s, d) => Order::SupportMove {
            unit: unit_ref(map, u)?,
            target: unit_ref(map, s)?,
            dest: Dest {
                prov: p(*d),
                coast: None,
            },
        },
        DOrder::Cvy(u, a, d) => Order::Convoy {
            unit: unit_ref(map, u)?,
            army: unit_ref(map, a)?,
            dest: p(*d),
        },
        DOrder::CtoVia(u, d, _) => Order::Move {
            unit: unit_ref(map, u)?,
            dest: Dest {
                prov: p(*d),
                coast: None,
            },
            via: true,
        },
        DOrder::Rto(u, l) => Order::Retreat {
            unit: unit_ref(map, u)?,
            dest: dest(map, l)?,
        },
        DOrder::Dsb(u) | DOrder::Rem(u) => Order::Disband(unit_ref(map, u)?),
        DOrder::Bld(u) => Order::Build(unit_ref(map, u)?),
        DOrder::Wve(_) => Order::Waive,
    })
}

/// The unit on `board` (or dislodged there) in province `p`.
fn unit_at(board: &Board, p: Prov) -> Option<Unit> {
    board.units[p as usize].or(board.dislodged[p as usize].map(|d| d.unit))
}

fn as_unit(map: &Map, board: &Board, power: Power, r: &UnitRef) -> DUnit {
    let found = unit_at(board, r.prov);
    let unit = found.unwrap_or(Unit {
        power,
        kind: r.kind.unwrap_or(UnitKind::Army),
        loc: r.coast.unwrap_or(r.prov),
    });
    dunit(map, &unit)
}

/// The DAIDE order of one of the crate's effective orders of `power` on `board` (the position
/// it was given in). A convoyed move lists the fleets ordered to convoy it (`convoys`).
pub fn to_daide(
    map: &Map,
    board: &Board,
    power: Power,
    o: &Order,
    convoys: &[(Power, Order)],
) -> DOrder {
    let u = |r: &UnitRef| as_unit(map, board, power, r);
    let own = |r: &UnitRef| {
        let mut d = as_unit(map, board, power, r);
        d.power = power;
        d
    };
    let d = |x: &Dest| dloc(map, x.coast.unwrap_or(x.prov));
    match o {
        Order::Hold(r) => DOrder::Hld(own(r)),
        Order::Move { unit, dest, via } => {
            let adjacent = map.army_adj(unit.prov) & crate::map::bit(dest.prov) != 0;
            let army = unit_at(board, unit.prov).is_some_and(|x| x.kind == UnitKind::Army);
            // A convoyed move names its route; one that no fleet was ordered to convoy has
            // none, and DAIDE has no `CTO` without a route (`VIA ( )` is no DAIDE, and
            // DipGame's client fails on it): it is reported as the move it is.
            if army && (*via || !adjacent) {
                let mut seas: Vec<u8> = convoys
                    .iter()
                    .filter_map(|(_, c)| match c {
                        Order::Convoy {
                            unit: f,
                            army: a,
                            dest: t,
                        } if a.prov == unit.prov && *t == dest.prov => Some(dprov(map, f.prov)),
                        _ => None,
                    })
                    .collect();
                seas.sort_unstable();
                if !seas.is_empty() {
                    return DOrder::CtoVia(own(unit), dprov(map, dest.prov), seas);
                }
            }
            DOrder::Mto(own(unit), d(dest))
        }
        Order::SupportHold { unit, target } => DOrder::SupHld(own(unit), u(target)),
        Order::SupportMove { unit, target, dest } => {
            DOrder::SupMto(own(unit), u(target), dprov(map, dest.prov))
        }
        Order::Convoy { unit, army, dest } => DOrder::Cvy(own(unit), u(army), dprov(map, *dest)),
        Order::Retreat { unit, dest } => DOrder::Rto(own(unit), d(dest)),
        Order::Disband(r) if board.phase.kind == PhaseKind::Adjustment => DOrder::Rem(own(r)),
        Order::Disband(r) => DOrder::Dsb(own(r)),
        Order::Build(r) => DOrder::Bld(dunit(
            map,
            &Unit {
                power,
                kind: r.kind.unwrap_or(UnitKind::Army),
                loc: r.coast.unwrap_or(r.prov),
            },
        )),
        Order::Waive => DOrder::Wve(power),
    }
}

fn result_token(name: &str) -> Token {
    Token::named(name).unwrap_or(Token(0x4500))
}

/// The `ORD` lines of one phase: every unit of every power (by power, then province number)
/// with the order it carried out (a unit without one holds, a dislodged unit without one
/// disbands) and its result (`SUC`, `BNC`, `CUT`, `DSR`, `NSO`, with `RET` for a unit that must
/// retreat). `before` is the position the orders were given in; `orders` the effective orders
/// (as [`crate::PhaseRecord::orders`] gives them, parsed). Also returns the position after.
pub fn ord_lines(
    map: &Map,
    before: &Board,
    orders: &[(Power, Order)],
) -> (Vec<(DOrder, Vec<Token>)>, Board) {
    let mut after = before.clone();
    let out = adjudicate(&mut Resolver::new(), map, &mut after, orders);
    let result_of = |u: &Unit| out.results.iter().find(|(x, _)| x == u).map(|(_, r)| *r);
    let failure_of = |u: &Unit| out.failures.iter().find(|(x, _)| x == u).map(|(_, f)| *f);
    let order_of = |u: &Unit| {
        out.orders
            .iter()
            .find(|(p, o)| *p == u.power && o.unit().is_some_and(|r| r.prov == map.prov_of(u.loc)))
            .map(|(_, o)| *o)
    };
    let mut lines: Vec<(DOrder, Vec<Token>)> = Vec::new();
    let sort_key = |u: &Unit| (u.power, dprov(map, map.prov_of(u.loc)));
    match before.phase.kind {
        PhaseKind::Movement => {
            let mut units: Vec<Unit> = before.units.iter().flatten().copied().collect();
            units.sort_by_key(sort_key);
            for u in units {
                let p = map.prov_of(u.loc);
                // A unit with nowhere to go is destroyed at once: it was dislodged all the same.
                let dislodged = after.dislodged[p as usize].is_some_and(|d| d.unit == u)
                    || out.destroyed.contains(&u);
                let order = order_of(&u);
                let mut res = match (order, result_of(&u), failure_of(&u)) {
                    (None, _, _) => vec!["SUC"],
                    (_, Some(OrderResult::Void), _) => vec!["NSO"],
                    (_, Some(OrderResult::Fails), Some(FailReason::Cut)) => vec!["CUT"],
                    (
                        _,
                        Some(OrderResult::Fails),
                        Some(FailReason::NoConvoy | FailReason::ConvoyParadox),
                    ) => vec!["DSR"],
                    (_, Some(OrderResult::Fails), Some(FailReason::Dislodged)) => vec![],
                    (_, Some(OrderResult::Fails), _) => vec!["BNC"],
                    _ => vec!["SUC"],
                };
                if dislodged {
                    res.retain(|r| *r != "SUC");
                    res.push("RET");
                }
                let o = order.unwrap_or(Order::Hold(uref(map, &u)));
                lines.push((
                    to_daide(map, before, u.power, &o, &out.orders),
                    res.into_iter().map(result_token).collect(),
                ));
            }
        }
        PhaseKind::Retreat => {
            let mut units: Vec<Unit> = before.dislodged.iter().flatten().map(|d| d.unit).collect();
            units.sort_by_key(sort_key);
            for u in units {
                let (o, res) = match order_of(&u) {
                    Some(o) => {
                        let r = match result_of(&u) {
                            Some(OrderResult::Fails) => "BNC",
                            _ => "SUC",
                        };
                        (o, r)
                    }
                    None => (Order::Disband(uref(map, &u)), "SUC"),
                };
                lines.push((
                    to_daide(map, before, u.power, &o, &[]),
                    vec![result_token(res)],
                ));
            }
        }
        PhaseKind::Adjustment => {
            let mut built = [0i32; 7];
            let mut entries: Vec<(Power, Unit, Order)> = Vec::new();
            for (p, o) in &out.orders {
                if let Order::Build(r) = o {
                    built[p.index()] += 1;
                    let u = Unit {
                        power: *p,
                        kind: r.kind.unwrap_or(UnitKind::Army),
                        loc: r.coast.unwrap_or(r.prov),
                    };
                    entries.push((*p, u, *o));
                }
            }
            for u in &out.destroyed {
                entries.push((u.power, *u, Order::Disband(uref(map, u))));
            }
            entries.sort_by_key(|(_, u, _)| sort_key(u));
            for (p, _, o) in entries {
                lines.push((to_daide(map, before, p, &o, &[]), vec![result_token("SUC")]));
            }
            for p in Power::ALL {
                for _ in built[p.index()]..before.adjustment(p).max(0) {
                    lines.push((DOrder::Wve(p), vec![result_token("SUC")]));
                }
            }
        }
    }
    (lines, after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daide::message::Message;
    use crate::daide::token::from_text;
    use crate::map::standard;
    use crate::order::parse_order;

    fn daide(s: &str) -> DOrder {
        match Message::parse(&from_text(&format!("SUB ({s})")).unwrap()).unwrap() {
            Message::Sub(_, mut o) => o.remove(0),
            m => panic!("{m:?}"),
        }
    }

    #[test]
    fn every_order_kind_converts_both_ways() {
        let map = standard();
        let b = Board::standard_start();
        for (d, own) in [
            ("(AUS AMY VIE) HLD", "A VIE H"),
            ("(RUS FLT (STP SCS)) MTO GOB", "F STP/SC - BOT"),
            ("(ENG FLT LON) MTO ECH", "F LON - ENG"),
            ("(FRA FLT BRE) SUP (FRA AMY PAR)", "F BRE S A PAR"),
            (
                "(FRA AMY MAR) SUP (FRA AMY PAR) MTO BUR",
                "A MAR S A PAR - BUR",
            ),
            (
                "(ENG FLT EDI) CVY (ENG AMY LVP) CTO NWY",
                "F EDI C A LVP - NWY",
            ),
        ] {
            let o = to_order(map, &daide(d)).unwrap();
            assert_eq!(o, parse_order(map, own).unwrap(), "{d}");
            let p = daide(d).unit().unwrap().power;
            assert_eq!(to_daide(map, &b, p, &o, &[]), daide(d), "{own}");
        }
        let via = to_order(map, &daide("(ENG AMY LVP) CTO NWY VIA (NWG)")).unwrap();
        assert_eq!(via, parse_order(map, "A LVP - NWY VIA").unwrap());
        let eng = Power(1);
        let fleet = (eng, parse_order(map, "F NTH C A LVP - NWY").unwrap());
        assert_eq!(
            to_daide(map, &b, eng, &via, std::slice::from_ref(&fleet)),
            daide("(ENG AMY LVP) CTO NWY VIA (NTH)")
        );
        // No fleet convoys it: no route to name, so the move as it is (never `VIA ( )`).
        assert_eq!(
            to_daide(map, &b, eng, &via, &[]),
            daide("(ENG AMY LVP) MTO NWY")
        );
        let by_land = parse_order(map, "A BER - PRU VIA").unwrap();
        assert_eq!(
            to_daide(map, &b, Power(3), &by_land, &[]),
            daide("(GER AMY BER) MTO PRU")
        );
        assert_eq!(
            to_order(map, &daide("(AUS AMY VIE) BLD")).unwrap(),
            parse_order(map, "A VIE B").unwrap()
        );
        assert_eq!(to_order(map, &daide("AUS WVE")).unwrap(), Order::Waive);
        assert!(to_order(map, &daide("(FRA FLT (PAR NCS)) HLD")).is_err());
    }

    #[test]
    fn ord_lists_every_unit_with_its_result() {
        let map = standard();
        let b = Board::standard_start();
        let orders: Vec<(Power, Order)> =
            [(2, "A PAR - BUR"), (3, "A MUN - BUR"), (0, "A VIE - GAL")]
                .iter()
                .map(|&(p, o)| (Power(p), parse_order(map, o).unwrap()))
                .collect();
        let (lines, after) = ord_lines(map, &b, &orders);
        assert_eq!(lines.len(), 22);
        let text: Vec<String> = lines
            .iter()
            .map(|(o, r)| Message::Ord(super::names::turn(b.phase), o.clone(), r.clone()).to_text())
            .collect();
        assert!(
            text.contains(&"ORD ( SPR 1901 ) ( ( FRA AMY PAR ) MTO BUR ) ( BNC )".to_string()),
            "{text:?}"
        );
        assert!(text.contains(&"ORD ( SPR 1901 ) ( ( AUS AMY VIE ) MTO GAL ) ( SUC )".to_string()));
        assert!(text.contains(&"ORD ( SPR 1901 ) ( ( TUR FLT ANK ) HLD ) ( SUC )".to_string()));
        assert_eq!(after.phase.season, crate::types::Season::Fall);
    }

    /// A unit dislodged with nowhere to retreat is destroyed at once: its result is still `RET`
    /// (an empty result is no DAIDE; DipGame's client dies on it).
    #[test]
    fn a_unit_dislodged_with_no_retreat_is_reported_ret() {
        let map = standard();
        let mut b = Board::empty(map, crate::types::Phase::START);
        let army = |p: u8, at: &str| Unit {
            power: Power(p),
            kind: crate::types::UnitKind::Army,
            loc: map.location(at).unwrap(),
        };
        for u in [
            army(4, "TUS"),
            army(2, "PIE"),
            army(2, "VEN"),
            army(2, "ROM"),
        ] {
            b.place(map, u);
        }
        let orders: Vec<(Power, Order)> = [(2, "A PIE - TUS"), (2, "A VEN S A PIE - TUS")]
            .iter()
            .map(|&(p, o)| (Power(p), parse_order(map, o).unwrap()))
            .collect();
        let (lines, after) = ord_lines(map, &b, &orders);
        assert!(
            after.dislodged.iter().all(Option::is_none),
            "no retreat: destroyed"
        );
        let text: Vec<String> = lines
            .iter()
            .map(|(o, r)| Message::Ord(super::names::turn(b.phase), o.clone(), r.clone()).to_text())
            .collect();
        assert!(
            text.contains(&"ORD ( SPR 1901 ) ( ( ITA AMY TUS ) HLD ) ( RET )".to_string()),
            "{text:?}"
        );
        assert!(lines.iter().all(|(_, r)| !r.is_empty()), "{text:?}");
    }
}
