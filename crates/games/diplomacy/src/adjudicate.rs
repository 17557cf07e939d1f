//! One entry point for all three phase types, plus retreats, adjustments and civil disorder.

use crate::board::Board;
use crate::map::{bfs_layers, bit, bits, Loc, Map, Prov, ProvinceKind, NUM_PROVINCES};
use crate::movement::Resolver;
use crate::order::Order;
use crate::outcome::{FailReason, OrderError, OrderResult, PhaseOutcome, VoidReason};
use crate::types::{PhaseKind, Power, Season, Unit, UnitKind};

const N: usize = NUM_PROVINCES;

/// Adjudicate the phase `board.phase` with `orders` (in input order) and advance `board` to the
/// next phase: units moved, dislodged units with options, centres updated after a Fall turn.
/// The next phase skips a retreat phase with no dislodged unit and an adjustment phase in which
/// no power may build or must remove ([`Board::next_phase_after`]).
pub fn adjudicate(
    resolver: &mut Resolver,
    map: &Map,
    board: &mut Board,
    orders: &[(Power, Order)],
) -> PhaseOutcome {
    let phase = board.phase;
    let out = match phase.kind {
        PhaseKind::Movement => {
            let out = resolver.movement(map, board, orders);
            if phase.season == Season::Fall && !board.has_dislodged() {
                board.update_centers(map);
            }
            out
        }
        PhaseKind::Retreat => {
            let out = retreat(map, board, orders);
            if phase.season == Season::Fall {
                board.update_centers(map);
            }
            out
        }
        PhaseKind::Adjustment => adjust(map, board, orders),
    };
    board.phase = board.next_phase_after(phase);
    out
}

fn set_result(results: &mut Vec<(Unit, OrderResult)>, u: Unit, r: OrderResult) {
    if let Some(e) = results.iter_mut().find(|(x, _)| *x == u) {
        if e.1 == OrderResult::Void {
            e.1 = r;
        }
    } else {
        results.push((u, r));
    }
}

/// Mark `u`'s order failed for `why`, unless an earlier order of the unit already took effect.
fn set_failed(out: &mut PhaseOutcome, u: Unit, why: FailReason) {
    set_result(&mut out.results, u, OrderResult::Fails);
    let failed = out
        .results
        .iter()
        .any(|(x, r)| *x == u && *r == OrderResult::Fails);
    if failed && !out.failures.iter().any(|(x, _)| *x == u) {
        out.failures.push((u, why));
    }
}

fn retreat(map: &Map, board: &mut Board, orders: &[(Power, Order)]) -> PhaseOutcome {
    let mut out = PhaseOutcome::default();
    let mut target: [Option<Loc>; N] = [None; N];
    let mut legal = 0u128;
    let mut ordered = 0u128;
    for (idx, (power, order)) in orders.iter().enumerate() {
        let err = |reason| OrderError {
            index: idx,
            power: *power,
            reason,
        };
        let Some(uref) = order.unit() else {
            out.errors.push(err(VoidReason::WrongPhase));
            continue;
        };
        let p = uref.prov;
        let Some(d) = board.dislodged[p as usize] else {
            out.errors.push(err(match board.units[p as usize] {
                Some(u) if u.power != *power => VoidReason::ForeignUnit(u.power),
                Some(_) => VoidReason::NotDislodged,
                None => VoidReason::NoUnit(p),
            }));
            continue;
        };
        if d.unit.power != *power {
            out.errors.push(err(VoidReason::ForeignUnit(d.unit.power)));
            continue;
        }
        ordered |= bit(p);
        if legal & bit(p) != 0 {
            out.errors.push(err(VoidReason::Duplicate));
            continue;
        }
        let res = match *order {
            Order::Disband(_) => Ok(None),
            Order::Retreat { dest, .. } | Order::Move { dest, .. } => {
                let in_options = |l: Loc| d.options & bit(l) != 0;
                match d.unit.kind {
                    UnitKind::Army => {
                        if in_options(dest.prov) {
                            Ok(Some(dest.prov))
                        } else {
                            Err(VoidReason::NotARetreatOption)
                        }
                    }
                    UnitKind::Fleet => {
                        if map.is_split(dest.prov) {
                            match dest.coast {
                                Some(c) if in_options(c) => Ok(Some(c)),
                                Some(_) => Err(VoidReason::NotARetreatOption),
                                None => {
                                    let cs: Vec<Loc> = map.provinces[dest.prov as usize]
                                        .coasts
                                        .iter()
                                        .copied()
                                        .filter(|&c| in_options(c))
                                        .collect();
                                    if cs.len() == 1 {
                                        Ok(Some(cs[0]))
                                    } else {
                                        Err(VoidReason::NotARetreatOption)
                                    }
                                }
                            }
                        } else if in_options(dest.prov) {
                            Ok(Some(dest.prov))
                        } else {
                            Err(VoidReason::NotARetreatOption)
                        }
                    }
                }
            }
            _ => Err(VoidReason::WrongPhase),
        };
        match res {
            Ok(t) => {
                legal |= bit(p);
                target[p as usize] = t;
            }
            Err(r) => out.errors.push(err(r)),
        }
    }
    let mut count = [0u8; N];
    for p in bits(legal) {
        if let Some(l) = target[p as usize] {
            count[map.prov_of(l) as usize] += 1;
        }
    }
    for p in 0..N {
        let Some(d) = board.dislodged[p] else {
            continue;
        };
        let pp = p as Prov;
        let mut survived = false;
        if legal & bit(pp) != 0 {
            match target[p] {
                Some(l) => {
                    let q = map.prov_of(l) as usize;
                    if count[q] == 1 {
                        board.units[q] = Some(Unit { loc: l, ..d.unit });
                        survived = true;
                        out.results.push((d.unit, OrderResult::Succeeds));
                    } else {
                        out.results.push((d.unit, OrderResult::Fails));
                        out.failures.push((d.unit, FailReason::Bounced));
                    }
                }
                None => out.results.push((d.unit, OrderResult::Succeeds)),
            }
        } else if ordered & bit(pp) != 0 {
            out.results.push((d.unit, OrderResult::Void));
        }
        if legal & bit(pp) != 0 {
            let me = crate::bots::uref(map, &d.unit);
            let o = match target[p] {
                Some(l) => Order::Retreat {
                    unit: me,
                    dest: crate::bots::dest_of(map, l),
                },
                None => Order::Disband(me),
            };
            out.orders.push((d.unit.power, o));
        }
        if !survived {
            out.destroyed.push(d.unit);
        }
    }
    board.dislodged = [None; N];
    out
}

/// The units `power` loses by the 2023 civil-disorder rule when it owes `k` removals (spec §1).
pub fn civil_disorder(map: &Map, board: &Board, power: Power, k: usize) -> Vec<Unit> {
    let owned = board.owned_mask(power);
    let mut dist = [u32::MAX; N];
    bfs_layers(owned, |p| map.prov_graph(p), |p, d| dist[p as usize] = d);
    let mut units: Vec<Unit> = board.units_of(power).collect();
    units.sort_by(|a, b| {
        let (pa, pb) = (map.prov_of(a.loc), map.prov_of(b.loc));
        dist[pb as usize]
            .cmp(&dist[pa as usize])
            .then_with(|| (a.kind == UnitKind::Army).cmp(&(b.kind == UnitKind::Army)))
            .then_with(|| {
                map.provinces[pa as usize]
                    .name
                    .as_bytes()
                    .cmp(map.provinces[pb as usize].name.as_bytes())
            })
    });
    units.truncate(k);
    units
}

fn adjust(map: &Map, board: &mut Board, orders: &[(Power, Order)]) -> PhaseOutcome {
    let mut out = PhaseOutcome::default();
    let start = board.units;
    let mut delta = [0i32; 7];
    for pw in Power::ALL {
        delta[pw.index()] = board.adjustment(pw);
    }
    let mut made = [0i32; 7];
    let mut used = 0u128;
    let mut removed = 0u128;
    for (idx, (power, order)) in orders.iter().enumerate() {
        let pi = power.index();
        let n = delta[pi];
        let err = |reason| OrderError {
            index: idx,
            power: *power,
            reason,
        };
        match *order {
            Order::Waive => {}
            Order::Build(uref) => {
                let p = uref.prov;
                let kind = match uref.kind {
                    Some(k) => Some(k),
                    None if uref.coast.is_some() => Some(UnitKind::Fleet),
                    None if map.kind(p) == ProvinceKind::Land => Some(UnitKind::Army),
                    None => None,
                };
                let Some(kind) = kind else {
                    out.errors.push(err(VoidReason::BuildKindMissing));
                    continue;
                };
                let loc = match kind {
                    UnitKind::Army if map.kind(p) != ProvinceKind::Sea => Some(p),
                    UnitKind::Fleet if map.kind(p) != ProvinceKind::Land => {
                        if map.is_split(p) {
                            uref.coast
                        } else {
                            Some(p)
                        }
                    }
                    _ => None,
                };
                let in_home = board.homes[pi] & bit(p) != 0;
                let Some(loc) = loc else {
                    if in_home {
                        let u = Unit {
                            power: *power,
                            kind,
                            loc: uref.coast.unwrap_or(p),
                        };
                        set_result(&mut out.results, u, OrderResult::Void);
                    }
                    out.errors.push(err(VoidReason::BadBuildKind));
                    continue;
                };
                let u = Unit {
                    power: *power,
                    kind,
                    loc,
                };
                let reason = if n <= 0 {
                    Some(VoidReason::NoBuildsAllowed)
                } else if !in_home
                    || board.owner[p as usize] != Some(*power)
                    || start[p as usize].is_some()
                {
                    Some(VoidReason::NotABuildSite)
                } else {
                    None
                };
                if let Some(r) = reason {
                    if in_home {
                        set_result(&mut out.results, u, OrderResult::Void);
                    }
                    out.errors.push(err(r));
                    continue;
                }
                if used & bit(p) != 0 {
                    set_failed(&mut out, u, FailReason::AlreadyUsed);
                } else if made[pi] >= n {
                    set_failed(&mut out, u, FailReason::AllowanceUsedUp);
                } else {
                    used |= bit(p);
                    made[pi] += 1;
                    board.units[p as usize] = Some(u);
                    set_result(&mut out.results, u, OrderResult::Succeeds);
                    out.orders
                        .push((*power, Order::Build(crate::bots::uref(map, &u))));
                }
            }
            Order::Disband(uref) => {
                let p = uref.prov;
                let u = match start[p as usize] {
                    Some(u) if u.power == *power => u,
                    Some(u) => {
                        out.errors.push(err(VoidReason::ForeignUnit(u.power)));
                        continue;
                    }
                    None => {
                        out.errors.push(err(VoidReason::NoUnit(p)));
                        continue;
                    }
                };
                if n >= 0 {
                    set_result(&mut out.results, u, OrderResult::Void);
                    out.errors.push(err(VoidReason::NoRemovalsOwed));
                    continue;
                }
                if removed & bit(p) != 0 {
                    set_failed(&mut out, u, FailReason::AlreadyUsed);
                } else if made[pi] >= -n {
                    set_failed(&mut out, u, FailReason::AllowanceUsedUp);
                } else {
                    removed |= bit(p);
                    made[pi] += 1;
                    board.units[p as usize] = None;
                    out.destroyed.push(u);
                    set_result(&mut out.results, u, OrderResult::Succeeds);
                    out.orders
                        .push((*power, Order::Disband(crate::bots::uref(map, &u))));
                }
            }
            _ => match order.unit().and_then(|r| start[r.prov as usize]) {
                Some(u) if u.power != *power => {
                    out.errors.push(err(VoidReason::ForeignUnit(u.power)))
                }
                Some(u) => {
                    set_result(&mut out.results, u, OrderResult::Void);
                    out.errors.push(err(VoidReason::WrongPhase));
                }
                None => out.errors.push(err(VoidReason::WrongPhase)),
            },
        }
    }
    for pw in Power::ALL {
        let owed = -delta[pw.index()] - made[pw.index()];
        if delta[pw.index()] < 0 && owed > 0 {
            for u in civil_disorder(map, board, pw, owed as usize) {
                board.units[map.prov_of(u.loc) as usize] = None;
                out.destroyed.push(u);
            }
        }
    }
    out
}
