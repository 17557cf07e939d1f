//! Order generation and the built-in bots `random`, `hold` and `strong`.
//!
//! Bots see only the public position (a [`Board`]) and their own power; they draw randomness from
//! the generator they are given (seeded from the match seed by the caller).

use rand::seq::SliceRandom;
use rand::Rng;

use crate::board::Board;
use crate::map::{bit, bits, Loc, Map, Prov, ProvinceKind, NUM_PROVINCES};
use crate::movement::{needed_seas, route_exists};
use crate::order::{Dest, Order, UnitRef};
use crate::types::{PhaseKind, Power, Unit, UnitKind};

mod strong;
pub mod values;

pub use strong::{huff_orders, stillness, strong_orders, value_orders, StrongConfig};

pub use crate::order::uref;

/// The destination written for location `l` (coast only for split provinces).
pub fn dest_of(map: &Map, l: Loc) -> Dest {
    let prov = map.prov_of(l);
    Dest {
        prov,
        coast: if l != prov { Some(l) } else { None },
    }
}

/// Canonical text of a typed order (bots fill in letters and coasts).
pub fn format_order(map: &Map, o: &Order) -> String {
    let unit = |u: &UnitRef| -> String {
        let loc = match u.coast {
            Some(c) => map.loc_name(c),
            None => map.prov_name(u.prov),
        };
        match u.kind {
            Some(k) => format!("{} {loc}", k.letter()),
            None => loc.to_string(),
        }
    };
    let dest = |d: &Dest| match d.coast {
        Some(c) => map.loc_name(c).to_string(),
        None => map.prov_name(d.prov).to_string(),
    };
    match o {
        Order::Hold(u) => format!("{} H", unit(u)),
        Order::Move {
            unit: u,
            dest: d,
            via,
        } => {
            format!(
                "{} - {}{}",
                unit(u),
                dest(d),
                if *via { " VIA" } else { "" }
            )
        }
        Order::SupportHold { unit: u, target } => format!("{} S {}", unit(u), unit(target)),
        Order::SupportMove {
            unit: u,
            target,
            dest: d,
        } => format!("{} S {} - {}", unit(u), unit(target), dest(d)),
        Order::Convoy {
            unit: u,
            army,
            dest: d,
        } => format!("{} C {} - {}", unit(u), unit(army), map.prov_name(*d)),
        Order::Retreat { unit: u, dest: d } => format!("{} R {}", unit(u), dest(d)),
        Order::Disband(u) => format!("{} D", unit(u)),
        Order::Build(u) => format!("{} B", unit(u)),
        Order::Waive => "WAIVE".to_string(),
    }
}

fn fleets_at_sea(map: &Map, board: &Board) -> u128 {
    let mut m = 0;
    for (p, u) in board.units.iter().enumerate() {
        if let Some(u) = u {
            if u.kind == UnitKind::Fleet && map.kind(p as Prov) == ProvinceKind::Sea {
                m |= bit(p as Prov);
            }
        }
    }
    m
}

/// Locations a unit can move to without convoy.
pub fn move_targets(map: &Map, u: &Unit) -> u128 {
    match u.kind {
        UnitKind::Army => map.army_adj(map.prov_of(u.loc)),
        UnitKind::Fleet => map.fleet_adj(u.loc),
    }
}

fn reaches(map: &Map, u: &Unit, q: Prov) -> bool {
    match u.kind {
        UnitKind::Army => map.army_adj(map.prov_of(u.loc)) & bit(q) != 0,
        UnitKind::Fleet => map.fleet_adj_prov(u.loc) & bit(q) != 0,
    }
}

/// Every legal movement order of one unit, grouped: (holds and moves, supports, convoys).
pub fn movement_candidates(
    map: &Map,
    board: &Board,
    u: &Unit,
) -> (Vec<Order>, Vec<Order>, Vec<Order>) {
    let me = uref(map, u);
    let p = me.prov;
    let fleets = fleets_at_sea(map, board);
    let mut moves = vec![Order::Hold(me)];
    for l in bits(move_targets(map, u)) {
        moves.push(Order::Move {
            unit: me,
            dest: dest_of(map, l),
            via: false,
        });
    }
    if u.kind == UnitKind::Army
        && map.kind(p) == ProvinceKind::Coast
        && map.sea_nbrs(p) & fleets != 0
    {
        for q in 0..NUM_PROVINCES as Prov {
            if q != p && map.kind(q) == ProvinceKind::Coast && route_exists(map, p, q, fleets) {
                moves.push(Order::Move {
                    unit: me,
                    dest: Dest {
                        prov: q,
                        coast: None,
                    },
                    via: true,
                });
            }
        }
    }
    let mut supports = Vec::new();
    for (tp, t) in board.units.iter().enumerate() {
        let Some(t) = t else { continue };
        let tp = tp as Prov;
        if tp == p {
            continue;
        }
        let target = uref(map, t);
        if reaches(map, u, tp) {
            supports.push(Order::SupportHold { unit: me, target });
        }
        for l in bits(move_targets(map, t)) {
            let q = map.prov_of(l);
            if q != p && reaches(map, u, q) {
                supports.push(Order::SupportMove {
                    unit: me,
                    target,
                    dest: dest_of(map, l),
                });
            }
        }
    }
    let mut convoys = Vec::new();
    if u.kind == UnitKind::Fleet && map.kind(p) == ProvinceKind::Sea {
        for (a, au) in board.units.iter().enumerate() {
            let a = a as Prov;
            match au {
                Some(au) if au.kind == UnitKind::Army && map.sea_nbrs(a) & bit(p) != 0 => {
                    for q in 0..NUM_PROVINCES as Prov {
                        if q != a
                            && map.kind(q) == ProvinceKind::Coast
                            && needed_seas(map, a, q, fleets) & bit(p) != 0
                        {
                            convoys.push(Order::Convoy {
                                unit: me,
                                army: uref(map, au),
                                dest: q,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (moves, supports, convoys)
}

/// Build sites of `power`: owned, empty home centres.
pub fn build_sites(board: &Board, power: Power) -> Vec<Prov> {
    bits(board.homes[power.index()] & board.owned_mask(power))
        .filter(|&p| board.units[p as usize].is_none())
        .collect()
}

/// Buildable units at a site.
pub fn buildable(map: &Map, power: Power, p: Prov) -> Vec<Unit> {
    let mut v = Vec::new();
    if map.kind(p) != ProvinceKind::Sea {
        v.push(Unit {
            power,
            kind: UnitKind::Army,
            loc: p,
        });
    }
    if map.kind(p) == ProvinceKind::Coast {
        if map.is_split(p) {
            for &c in &map.provinces[p as usize].coasts {
                v.push(Unit {
                    power,
                    kind: UnitKind::Fleet,
                    loc: c,
                });
            }
        } else {
            v.push(Unit {
                power,
                kind: UnitKind::Fleet,
                loc: p,
            });
        }
    }
    v
}

/// Random legal orders for `power` in the board's phase (the `random` bot).
pub fn random_orders<R: Rng>(map: &Map, board: &Board, power: Power, rng: &mut R) -> Vec<Order> {
    let mut out = Vec::new();
    match board.phase.kind {
        PhaseKind::Movement => {
            for u in board.units_of(power).collect::<Vec<_>>() {
                let (moves, supports, convoys) = movement_candidates(map, board, &u);
                let r: f64 = rng.gen();
                let pick = if !convoys.is_empty() && r < 0.15 {
                    &convoys
                } else if !supports.is_empty() && r < 0.45 {
                    &supports
                } else {
                    &moves
                };
                if let Some(o) = pick.choose(rng) {
                    out.push(*o);
                }
            }
        }
        PhaseKind::Retreat => {
            for d in board.dislodged_of(power) {
                let me = uref(map, &d.unit);
                let mut opts: Vec<Order> = vec![Order::Disband(me)];
                for l in bits(d.options) {
                    opts.push(Order::Retreat {
                        unit: me,
                        dest: dest_of(map, l),
                    });
                }
                out.push(*opts.choose(rng).expect("non-empty"));
            }
        }
        PhaseKind::Adjustment => {
            let n = board.adjustment(power);
            if n > 0 {
                let mut sites = build_sites(board, power);
                sites.shuffle(rng);
                for p in sites.into_iter().take(n as usize) {
                    let u = *buildable(map, power, p)
                        .choose(rng)
                        .expect("a unit fits every home centre");
                    out.push(Order::Build(uref(map, &u)));
                }
            } else if n < 0 {
                let mut us: Vec<Unit> = board.units_of(power).collect();
                us.shuffle(rng);
                for u in us.into_iter().take((-n) as usize) {
                    out.push(Order::Disband(uref(map, &u)));
                }
            }
        }
    }
    out
}

/// Orders of the `hold` bot: every unit holds; nothing else is ordered.
pub fn hold_orders(map: &Map, board: &Board, power: Power) -> Vec<Order> {
    if board.phase.kind != PhaseKind::Movement {
        return Vec::new();
    }
    board
        .units_of(power)
        .map(|u| Order::Hold(uref(map, &u)))
        .collect()
}
