//! Order generation and the built-in bots `random`, `hold` and `strong`.
//!
//! Bots see only the public position (a [`Board`]) and their own power; they draw randomness from
//! the generator they are given (seeded from the match seed by the caller).

use rand::seq::SliceRandom;
use rand::Rng;
use std::sync::OnceLock;

use crate::adjudicate::adjudicate;
use crate::board::Board;
use crate::map::{bfs_layers, bit, bits, Loc, Map, Prov, ProvinceKind, NUM_PROVINCES};
use crate::movement::{needed_seas, route_exists, Resolver};
use crate::order::{Dest, Order, UnitRef};
use crate::types::{PhaseKind, Power, Season, Unit, UnitKind};

/// The order-side reference to a unit on the board (letter and coast filled in).
pub fn uref(map: &Map, u: &Unit) -> UnitRef {
    let prov = map.prov_of(u.loc);
    UnitRef {
        kind: Some(u.kind),
        prov,
        coast: if u.loc != prov { Some(u.loc) } else { None },
    }
}

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
            for d in board
                .dislodged
                .iter()
                .flatten()
                .filter(|d| d.unit.power == power)
            {
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

/// Shortest path lengths (moves without convoy) from every location to every province, per kind.
struct Distances {
    army: Vec<[u8; NUM_PROVINCES]>,
    fleet: Vec<[u8; NUM_PROVINCES]>,
}

fn distances(map: &Map) -> &'static Distances {
    static D: OnceLock<Distances> = OnceLock::new();
    D.get_or_init(|| {
        let nloc = map.num_locations();
        // A search over a `u128` set has fewer than 128 layers.
        let steps = |layer: u32| u8::try_from(layer).expect("fewer than 128 layers");
        let mut army = vec![[u8::MAX; NUM_PROVINCES]; NUM_PROVINCES];
        for (s, row) in army.iter_mut().enumerate() {
            bfs_layers(
                bit(s as Prov),
                |p| map.army_adj(p),
                |p, d| row[p as usize] = steps(d),
            );
        }
        let mut fleet = vec![[u8::MAX; NUM_PROVINCES]; nloc];
        for (s, row) in fleet.iter_mut().enumerate() {
            bfs_layers(
                bit(s as Loc),
                |l| map.fleet_adj(l),
                |l, d| {
                    let p = map.prov_of(l) as usize;
                    row[p] = row[p].min(steps(d));
                },
            );
        }
        Distances { army, fleet }
    })
}

fn dist(map: &Map, u: &Unit, to: Prov) -> u8 {
    let d = distances(map);
    match u.kind {
        UnitKind::Army => d.army[map.prov_of(u.loc) as usize][to as usize],
        UnitKind::Fleet => d.fleet[u.loc as usize][to as usize],
    }
}

/// Settings of the `strong` bot's search.
#[derive(Clone, Copy, Debug)]
pub struct StrongConfig {
    /// Candidate order sets generated per movement phase.
    pub candidates: usize,
    /// Sampled opponent order sets each candidate is scored against.
    pub samples: usize,
}

impl Default for StrongConfig {
    fn default() -> Self {
        StrongConfig {
            candidates: 12,
            samples: 6,
        }
    }
}

/// One greedy, randomised candidate: each unit heads for a supply centre it does not own,
/// avoiding its own units' destinations; idle units support attacks next to them.
fn greedy_candidate<R: Rng>(
    map: &Map,
    board: &Board,
    power: Power,
    rng: &mut R,
    noise: f64,
) -> Vec<Order> {
    let mut units: Vec<Unit> = board.units_of(power).collect();
    units.shuffle(rng);
    let fall = board.phase.season == Season::Fall;
    let owned = board.owned_mask(power);
    let mut claimed = 0u128; // provinces a unit of ours will occupy
    let mut orders: Vec<(Unit, Order)> = Vec::new();
    let mut pending: Vec<Unit> = Vec::new();
    for u in &units {
        let p = map.prov_of(u.loc);
        // A unit on a centre we do not own holds it in Fall to take it.
        if fall && map.is_sc(p) && owned & bit(p) == 0 && rng.gen::<f64>() >= noise {
            claimed |= bit(p);
            orders.push((*u, Order::Hold(uref(map, u))));
            continue;
        }
        // Score each move target by distance to the best centre reachable through it.
        let mut best: Option<(f64, Loc)> = None;
        for l in bits(move_targets(map, u)) {
            let q = map.prov_of(l);
            if claimed & bit(q) != 0 {
                continue;
            }
            if let Some(o) = board.units[q as usize] {
                if o.power == power {
                    continue; // avoid bouncing our own units
                }
            }
            let moved = Unit { loc: l, ..*u };
            let mut score = f64::MAX;
            for c in 0..NUM_PROVINCES as Prov {
                if !map.is_sc(c) || owned & bit(c) != 0 || claimed & bit(c) != 0 {
                    continue;
                }
                let d = dist(map, &moved, c);
                if d == u8::MAX {
                    continue;
                }
                let foreign = board.units[c as usize]
                    .map(|o| o.power != power)
                    .unwrap_or(false);
                let s = d as f64 + if foreign { 0.7 } else { 0.0 };
                score = score.min(s);
            }
            if score == f64::MAX {
                continue;
            }
            let s = score + rng.gen::<f64>() * noise * 3.0;
            if best.is_none_or(|(b, _)| s < b) {
                best = Some((s, l));
            }
        }
        let stay_score = {
            let mut s = f64::MAX;
            for c in 0..NUM_PROVINCES as Prov {
                if map.is_sc(c) && owned & bit(c) == 0 && claimed & bit(c) == 0 {
                    let d = dist(map, u, c);
                    if d != u8::MAX {
                        s = s.min(d as f64);
                    }
                }
            }
            s
        };
        match best {
            Some((s, l)) if s < stay_score + 0.5 || map.is_sc(p) && owned & bit(p) != 0 => {
                let q = map.prov_of(l);
                claimed |= bit(q);
                orders.push((
                    *u,
                    Order::Move {
                        unit: uref(map, u),
                        dest: dest_of(map, l),
                        via: false,
                    },
                ));
            }
            _ => pending.push(*u),
        }
    }
    // Units without a useful move support an attack of ours they can reach, else hold.
    for u in pending {
        let me = uref(map, &u);
        let mut chosen = None;
        let mut opts: Vec<Order> = Vec::new();
        for (mu, o) in &orders {
            if let Order::Move { dest, .. } = o {
                if reaches(map, &u, dest.prov) && board.units[dest.prov as usize].is_some() {
                    opts.push(Order::SupportMove {
                        unit: me,
                        target: uref(map, mu),
                        dest: *dest,
                    });
                }
            }
        }
        if let Some(o) = opts.choose(rng) {
            chosen = Some(*o);
        }
        if chosen.is_none() {
            for (mu, o) in &orders {
                if let Order::Move { dest, .. } = o {
                    if reaches(map, &u, dest.prov) {
                        chosen = Some(Order::SupportMove {
                            unit: me,
                            target: uref(map, mu),
                            dest: *dest,
                        });
                        break;
                    }
                }
            }
        }
        let o = chosen.unwrap_or(Order::Hold(me));
        orders.push((u, o));
    }
    // Second pass: turn some movers into supporters of a neighbour's attack on an occupied centre.
    let snapshot = orders.clone();
    for (u, o) in orders.iter_mut() {
        if let Order::Move { dest, .. } = o {
            if board.units[dest.prov as usize].is_some() {
                continue;
            }
            if rng.gen::<f64>() < 0.5 {
                continue;
            }
            for (mu, mo) in &snapshot {
                if let Order::Move { dest: d2, .. } = mo {
                    if mu != u
                        && board.units[d2.prov as usize].is_some_and(|x| x.power != power)
                        && reaches(map, u, d2.prov)
                    {
                        *o = Order::SupportMove {
                            unit: uref(map, u),
                            target: uref(map, mu),
                            dest: *d2,
                        };
                        break;
                    }
                }
            }
        }
    }
    orders.into_iter().map(|(_, o)| o).collect()
}

fn evaluate(map: &Map, board: &Board, power: Power) -> f64 {
    let owned = board.owned_mask(power);
    let mut score = 0.0;
    for u in board.units_of(power) {
        let p = map.prov_of(u.loc);
        score += 1.0;
        if map.is_sc(p) {
            score += if owned & bit(p) == 0 { 2.5 } else { 0.6 };
        }
    }
    for d in board.dislodged.iter().flatten() {
        if d.unit.power == power {
            score -= 1.5;
        }
    }
    // Own centres occupied by others are threatened.
    for c in bits(owned) {
        if let Some(o) = board.units[c as usize] {
            if o.power != power {
                score -= 2.0;
            }
        }
    }
    score
}

/// The `strong` bot: a search over randomised greedy candidates, each scored by adjudicating it
/// against sampled random orders of the other powers (centre gains, losses and dislodgements).
pub fn strong_orders<R: Rng>(
    map: &Map,
    board: &Board,
    power: Power,
    cfg: &StrongConfig,
    resolver: &mut Resolver,
    rng: &mut R,
) -> Vec<Order> {
    match board.phase.kind {
        PhaseKind::Movement => {}
        PhaseKind::Retreat => return strong_retreats(map, board, power),
        PhaseKind::Adjustment => return strong_adjustments(map, board, power),
    }
    let mut samples: Vec<Vec<(Power, Order)>> = Vec::with_capacity(cfg.samples);
    for _ in 0..cfg.samples {
        let mut os = Vec::new();
        for pw in Power::ALL {
            if pw != power {
                for o in random_orders(map, board, pw, rng) {
                    os.push((pw, o));
                }
            }
        }
        samples.push(os);
    }
    let mut best: Option<(f64, Vec<Order>)> = None;
    let mut scratch = board.clone();
    let mut all: Vec<(Power, Order)> = Vec::new();
    for i in 0..cfg.candidates.max(1) {
        let noise = if i == 0 { 0.0 } else { 0.35 };
        let cand = greedy_candidate(map, board, power, rng, noise);
        let mut total = 0.0;
        for s in &samples {
            all.clear();
            all.extend(cand.iter().map(|o| (power, *o)));
            all.extend(s.iter().copied());
            scratch.clone_from(board);
            adjudicate(resolver, map, &mut scratch, &all);
            total += evaluate(map, &scratch, power);
        }
        if best.as_ref().is_none_or(|(b, _)| total > *b) {
            best = Some((total, cand));
        }
    }
    best.map(|b| b.1).unwrap_or_default()
}

fn strong_retreats(map: &Map, board: &Board, power: Power) -> Vec<Order> {
    let owned = board.owned_mask(power);
    let mut taken = 0u128;
    let mut out = Vec::new();
    for d in board
        .dislodged
        .iter()
        .flatten()
        .filter(|d| d.unit.power == power)
    {
        let mut best: Option<(u8, Loc)> = None;
        for l in bits(d.options) {
            let q = map.prov_of(l);
            if taken & bit(q) != 0 {
                continue;
            }
            let moved = Unit { loc: l, ..d.unit };
            let mut s = u8::MAX;
            for c in 0..NUM_PROVINCES as Prov {
                if map.is_sc(c) && owned & bit(c) == 0 {
                    s = s.min(dist(map, &moved, c));
                }
            }
            if map.is_sc(q) {
                s = 0;
            }
            if best.is_none_or(|(b, _)| s < b) {
                best = Some((s, l));
            }
        }
        let me = uref(map, &d.unit);
        match best {
            Some((_, l)) => {
                taken |= bit(map.prov_of(l));
                out.push(Order::Retreat {
                    unit: me,
                    dest: dest_of(map, l),
                });
            }
            None => out.push(Order::Disband(me)),
        }
    }
    out
}

fn strong_adjustments(map: &Map, board: &Board, power: Power) -> Vec<Order> {
    let n = board.adjustment(power);
    let mut out = Vec::new();
    if n > 0 {
        let owned = board.owned_mask(power);
        let mut fleets = board
            .units_of(power)
            .filter(|u| u.kind == UnitKind::Fleet)
            .count();
        let mut armies = board.units_of(power).count() - fleets;
        let nearest = |u: &Unit| -> u8 {
            (0..NUM_PROVINCES as Prov)
                .filter(|&c| map.is_sc(c) && owned & bit(c) == 0)
                .map(|c| dist(map, u, c))
                .min()
                .unwrap_or(u8::MAX)
        };
        for p in build_sites(board, power).into_iter().take(n as usize) {
            // The unit nearest to a centre we do not own; on a tie, a fleet for every two armies.
            let prefer_fleet = fleets * 2 < armies;
            let mut best: Option<(u8, bool, Unit)> = None;
            for u in buildable(map, power, p) {
                let d = nearest(&u);
                let is_fleet = u.kind == UnitKind::Fleet;
                let better = match best {
                    None => true,
                    Some((bd, bf, _)) => {
                        d < bd || (d == bd && is_fleet == prefer_fleet && bf != prefer_fleet)
                    }
                };
                if better {
                    best = Some((d, is_fleet, u));
                }
            }
            if let Some((_, is_fleet, u)) = best {
                if is_fleet {
                    fleets += 1;
                } else {
                    armies += 1;
                }
                out.push(Order::Build(uref(map, &u)));
            }
        }
    }
    // Removals are left to the civil-disorder rule, which keeps the units nearest our centres.
    out
}
