//! Movement phase: legality (§2.4), matching, and the guess-and-check resolver (§3.2–3.5).
//!
//! Everything is indexed by province id; sets of provinces are `u128` bitsets. A [`Resolver`]
//! keeps its scratch arrays between phases, so adjudicating a phase allocates only its outputs.

use crate::board::{Board, Dislodged};
use crate::map::{bit, bits, Loc, Map, Prov, ProvinceKind, NUM_PROVINCES};
use crate::order::{Dest, Order};
use crate::outcome::{FailReason, OrderError, OrderResult, PhaseOutcome, VoidReason};
use crate::types::{Power, Unit, UnitKind};

const N: usize = NUM_PROVINCES;
const N_ORDERS_HINT: usize = 40;

/// The effective order of one unit after legality checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Eff {
    Hold,
    Move,
    SupHold,
    SupMove,
    Convoy,
}

// Decision states.
const UNKNOWN: u8 = 0;
const GUESS_F: u8 = 1;
const GUESS_T: u8 = 2;
const DONE_F: u8 = 3;
const DONE_T: u8 = 4;

/// Reusable scratch space for movement adjudication.
pub struct Resolver {
    unit: [Option<Unit>; N],
    eff: [Eff; N],
    /// Move: destination province; support: province supported into; convoy: army destination.
    dest: [Prov; N],
    /// Move: destination location (coast for a fleet into a split province).
    dest_loc: [Loc; N],
    /// Support / convoy: the supported or convoyed unit's province.
    target: [Prov; N],
    /// Support of a move: the coast named, if any.
    sup_coast: [Option<Loc>; N],
    via: u128,
    ordered: u128,
    matched: u128,
    convoy_route: u128,
    h2h: u128,
    sup: [u128; N],
    into: [u128; N],
    convoyers: [u128; N],
    order_index: [u32; N],
    state: [u8; N],
    provisional: u128,
    in_cycle: u128,
    cycle: Vec<Prov>,
    tainted: bool,
    sea: [u128; N],
    sea_ready: bool,
    occ: u128,
}

impl Default for Resolver {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether a route origin, s1..sk, destination exists over the seas in `fleets` (§2.4).
pub fn route_exists(map: &Map, origin: Prov, dest: Prov, fleets: u128) -> bool {
    sea_route(|p| map.sea_nbrs(p), origin, dest, fleets)
}

/// [`route_exists`] with the seas next to each province given by `sea_nbrs`.
fn sea_route(sea_nbrs: impl Fn(Prov) -> u128, origin: Prov, dest: Prov, fleets: u128) -> bool {
    let target = sea_nbrs(dest);
    let mut frontier = sea_nbrs(origin) & fleets;
    let mut seen = frontier;
    while frontier != 0 {
        if frontier & target != 0 {
            return true;
        }
        let mut next = 0;
        for s in bits(frontier) {
            next |= sea_nbrs(s);
        }
        next &= fleets & !seen;
        seen |= next;
        frontier = next;
    }
    false
}

/// Seas (with fleets in `fleets`) lying on a shortcut-free route from origin to dest (6.G.19).
pub fn needed_seas(map: &Map, origin: Prov, dest: Prov, fleets: u128) -> u128 {
    fn dfs(
        map: &Map,
        origin: Prov,
        dest: Prov,
        fleets: u128,
        path: &mut Vec<Prov>,
        out: &mut u128,
    ) {
        let last = *path.last().expect("path starts non-empty");
        let mut cand = map.sea_nbrs(last) & fleets;
        // Not adjacent to the origin (only s1 may be), nor to any earlier member but the last.
        cand &= !map.sea_nbrs(origin);
        for &s in &path[..path.len() - 1] {
            cand &= !map.sea_nbrs(s);
        }
        for &s in path.iter() {
            cand &= !bit(s);
        }
        for t in bits(cand) {
            path.push(t);
            if map.sea_nbrs(dest) & bit(t) != 0 {
                for &s in path.iter() {
                    *out |= bit(s);
                }
            } else {
                dfs(map, origin, dest, fleets, path, out);
            }
            path.pop();
        }
    }
    let mut out = 0u128;
    let mut path = Vec::with_capacity(8);
    for s1 in bits(map.sea_nbrs(origin) & fleets) {
        path.push(s1);
        if map.sea_nbrs(dest) & bit(s1) != 0 {
            out |= bit(s1);
        } else {
            dfs(map, origin, dest, fleets, &mut path, &mut out);
        }
        path.pop();
    }
    out
}

/// Whether a unit at `from` could move (without convoy) into province `to`.
fn reaches(map: &Map, u: &Unit, to: Prov) -> bool {
    match u.kind {
        UnitKind::Army => map.army_adj(map.prov_of(u.loc)) & bit(to) != 0,
        UnitKind::Fleet => map.fleet_adj_prov(u.loc) & bit(to) != 0,
    }
}

/// Resolve the destination location of a fleet move (coast rules of §2.3).
pub(crate) fn fleet_dest(map: &Map, from: Loc, dest: &Dest) -> Result<Loc, VoidReason> {
    if map.kind(dest.prov) == ProvinceKind::Land {
        return Err(VoidReason::FleetInland);
    }
    if map.is_split(dest.prov) {
        match dest.coast {
            Some(c) => {
                if map.fleet_adj(from) & bit(c) != 0 {
                    Ok(c)
                } else if map.fleet_adj_prov(from) & bit(dest.prov) != 0 {
                    Err(VoidReason::CoastUnreachable)
                } else {
                    Err(VoidReason::NotAdjacent)
                }
            }
            None => {
                let mut reach = 0u128;
                for &c in &map.provinces[dest.prov as usize].coasts {
                    if map.fleet_adj(from) & bit(c) != 0 {
                        reach |= bit(c);
                    }
                }
                match reach.count_ones() {
                    0 => Err(VoidReason::NotAdjacent),
                    1 => Ok(reach.trailing_zeros() as Loc),
                    _ => Err(VoidReason::CoastMissing),
                }
            }
        }
    } else if map.fleet_adj(from) & bit(dest.prov) != 0 {
        Ok(dest.prov)
    } else {
        Err(VoidReason::NotAdjacent)
    }
}

impl Resolver {
    /// Fresh scratch space.
    pub fn new() -> Self {
        Resolver {
            unit: [None; N],
            eff: [Eff::Hold; N],
            dest: [0; N],
            dest_loc: [0; N],
            target: [0; N],
            sup_coast: [None; N],
            via: 0,
            ordered: 0,
            matched: 0,
            convoy_route: 0,
            h2h: 0,
            sup: [0; N],
            into: [0; N],
            convoyers: [0; N],
            order_index: [0; N],
            state: [UNKNOWN; N],
            provisional: 0,
            in_cycle: 0,
            cycle: Vec::with_capacity(N),
            tainted: false,
            sea: [0; N],
            sea_ready: false,
            occ: 0,
        }
    }

    fn reset(&mut self, map: &Map, board: &Board) {
        if !self.sea_ready {
            // A resolver serves one map: the standard one.
            for (p, s) in self.sea.iter_mut().enumerate() {
                *s = map.sea_nbrs(p as Prov);
            }
            self.sea_ready = true;
        }
        self.unit = board.units;
        self.occ = 0;
        for (p, u) in board.units.iter().enumerate() {
            if u.is_some() {
                self.occ |= bit(p as Prov);
            }
        }
        self.eff = [Eff::Hold; N];
        self.via = 0;
        self.ordered = 0;
        self.matched = 0;
        self.convoy_route = 0;
        self.h2h = 0;
        self.sup = [0; N];
        self.into = [0; N];
        self.convoyers = [0; N];
        self.state = [UNKNOWN; N];
        self.provisional = 0;
        self.in_cycle = 0;
        self.cycle.clear();
        self.tainted = false;
    }

    /// Legality of one movement order for the unit at `p` (§2.4). On success the effective order
    /// is stored at `p`.
    fn check(
        &mut self,
        map: &Map,
        fleets: u128,
        p: Prov,
        u: Unit,
        order: &Order,
    ) -> Result<(), VoidReason> {
        let pi = p as usize;
        match *order {
            Order::Hold(_) => {
                self.eff[pi] = Eff::Hold;
            }
            Order::Move { dest, via, .. } => {
                if dest.prov == p {
                    return Err(VoidReason::MoveToOwnProvince);
                }
                match u.kind {
                    UnitKind::Army => {
                        if map.kind(dest.prov) == ProvinceKind::Sea {
                            return Err(VoidReason::ArmyToSea);
                        }
                        let adjacent = map.army_adj(p) & bit(dest.prov) != 0;
                        if (via || !adjacent) && !route_exists(map, p, dest.prov, fleets) {
                            return Err(if adjacent {
                                VoidReason::NoConvoyRoute
                            } else {
                                VoidReason::NotAdjacent
                            });
                        }
                        self.dest_loc[pi] = dest.prov;
                    }
                    UnitKind::Fleet => {
                        if via {
                            return Err(VoidReason::FleetViaConvoy);
                        }
                        self.dest_loc[pi] = fleet_dest(map, u.loc, &dest)?;
                    }
                }
                self.eff[pi] = Eff::Move;
                self.dest[pi] = dest.prov;
                if via {
                    self.via |= bit(p);
                }
            }
            Order::SupportHold { target, .. } => {
                let t = target.prov;
                if t == p {
                    return Err(VoidReason::SupportsItself);
                }
                if self.unit[t as usize].is_none() {
                    return Err(VoidReason::NoUnit(t));
                }
                if !reaches(map, &u, t) {
                    return Err(VoidReason::CannotReach(t));
                }
                self.eff[pi] = Eff::SupHold;
                self.target[pi] = t;
                self.dest[pi] = t;
            }
            Order::SupportMove { target, dest, .. } => {
                let t = target.prov;
                if t == p {
                    return Err(VoidReason::SupportsItself);
                }
                let Some(tu) = self.unit[t as usize] else {
                    return Err(VoidReason::NoUnit(t));
                };
                if dest.prov == p {
                    return Err(VoidReason::SupportIntoOwnProvince);
                }
                if !reaches(map, &u, dest.prov) {
                    return Err(VoidReason::CannotReach(dest.prov));
                }
                if dest.prov == t {
                    return Err(VoidReason::SupportedMoveImpossible);
                }
                let mut coast = None;
                match tu.kind {
                    UnitKind::Army => {
                        if map.kind(dest.prov) == ProvinceKind::Sea
                            || (map.army_adj(t) & bit(dest.prov) == 0
                                && !route_exists(map, t, dest.prov, fleets & !bit(p)))
                        {
                            return Err(VoidReason::SupportedMoveImpossible);
                        }
                    }
                    UnitKind::Fleet => {
                        if map.fleet_adj_prov(tu.loc) & bit(dest.prov) == 0 {
                            return Err(VoidReason::SupportedMoveImpossible);
                        }
                        if let Some(c) = dest.coast {
                            if map.fleet_adj(tu.loc) & bit(c) == 0 {
                                return Err(VoidReason::SupportedMoveImpossible);
                            }
                            coast = Some(c);
                        }
                    }
                }
                self.eff[pi] = Eff::SupMove;
                self.target[pi] = t;
                self.dest[pi] = dest.prov;
                self.sup_coast[pi] = coast;
            }
            Order::Convoy { army, dest, .. } => {
                if u.kind != UnitKind::Fleet || map.kind(p) != ProvinceKind::Sea {
                    return Err(VoidReason::ConvoyNotAtSea);
                }
                let a = army.prov;
                match self.unit[a as usize] {
                    Some(au) if au.kind == UnitKind::Army => {}
                    Some(_) => return Err(VoidReason::ConvoyNotArmy),
                    None => return Err(VoidReason::NoUnit(a)),
                }
                if map.kind(dest) != ProvinceKind::Coast || dest == a {
                    return Err(VoidReason::ConvoyBadDestination);
                }
                if needed_seas(map, a, dest, fleets) & bit(p) == 0 {
                    return Err(VoidReason::ConvoyNotNeeded);
                }
                self.eff[pi] = Eff::Convoy;
                self.target[pi] = a;
                self.dest[pi] = dest;
            }
            Order::Retreat { .. } | Order::Disband(_) | Order::Build(_) | Order::Waive => {
                return Err(VoidReason::WrongPhase);
            }
        }
        Ok(())
    }

    /// Adjudicate a movement phase. `board.units` is the position; `orders` are in input order.
    /// Updates `board` to the following retreat phase (units moved, dislodged units with options)
    /// and returns the results.
    pub fn movement(
        &mut self,
        map: &Map,
        board: &mut Board,
        orders: &[(Power, Order)],
    ) -> PhaseOutcome {
        self.reset(map, board);
        let mut out = PhaseOutcome::with_capacity(N_ORDERS_HINT);
        let mut fleets = 0u128;
        for i in bits(self.occ & map.seas()) {
            if let Some(u) = self.unit[i as usize] {
                if u.kind == UnitKind::Fleet {
                    fleets |= bit(i);
                }
            }
        }
        let mut has_order = 0u128;
        for (idx, (power, order)) in orders.iter().enumerate() {
            let Some(uref) = order.unit() else {
                out.errors.push(OrderError {
                    index: idx,
                    power: *power,
                    reason: VoidReason::WrongPhase,
                });
                continue;
            };
            let p = uref.prov;
            let Some(u) = self.unit[p as usize] else {
                out.errors.push(OrderError {
                    index: idx,
                    power: *power,
                    reason: VoidReason::NoUnit(p),
                });
                continue;
            };
            if u.power != *power {
                out.errors.push(OrderError {
                    index: idx,
                    power: *power,
                    reason: VoidReason::ForeignUnit(u.power),
                });
                continue;
            }
            self.ordered |= bit(p);
            if has_order & bit(p) != 0 {
                out.errors.push(OrderError {
                    index: idx,
                    power: *power,
                    reason: VoidReason::Duplicate,
                });
                continue;
            }
            match self.check(map, fleets, p, u, order) {
                Ok(()) => {
                    has_order |= bit(p);
                    self.order_index[p as usize] = idx as u32;
                }
                Err(reason) => {
                    self.eff[p as usize] = Eff::Hold;
                    out.errors.push(OrderError {
                        index: idx,
                        power: *power,
                        reason,
                    });
                }
            }
        }
        // Which army moves use the convoy route (4.A.3).
        let mut convoy_mask = 0u128;
        for c in bits(has_order) {
            if self.eff[c as usize] == Eff::Convoy {
                convoy_mask |= bit(c);
            }
        }
        for p in bits(has_order) {
            let pi = p as usize;
            if self.eff[pi] != Eff::Move || self.unit[pi].map(|u| u.kind) != Some(UnitKind::Army) {
                continue;
            }
            let q = self.dest[pi];
            let mut route = self.via & bit(p) != 0 || map.army_adj(p) & bit(q) == 0;
            if !route {
                let power = self.unit[pi].map(|u| u.power);
                for c in bits(convoy_mask) {
                    let ci = c as usize;
                    if self.eff[ci] == Eff::Convoy
                        && self.target[ci] == p
                        && self.dest[ci] == q
                        && self.unit[ci].map(|u| u.power) == power
                    {
                        route = true;
                        break;
                    }
                }
            }
            if route {
                self.convoy_route |= bit(p);
            }
            self.into[q as usize] |= bit(p);
        }
        for p in bits(has_order) {
            let pi = p as usize;
            if self.eff[pi] == Eff::Move && self.convoy_route & bit(p) == 0 {
                self.into[self.dest[pi] as usize] |= bit(p);
            }
        }
        // Head-to-head battles.
        for p in bits(has_order) {
            let pi = p as usize;
            if self.eff[pi] != Eff::Move || self.convoy_route & bit(p) != 0 {
                continue;
            }
            let q = self.dest[pi];
            let qi = q as usize;
            if self.eff[qi] == Eff::Move && self.dest[qi] == p && self.convoy_route & bit(q) == 0 {
                self.h2h |= bit(p);
            }
        }
        // Matching of supports and convoys.
        for p in bits(has_order) {
            let pi = p as usize;
            let t = self.target[pi] as usize;
            let ok = match self.eff[pi] {
                Eff::SupHold => self.eff[t] != Eff::Move,
                Eff::SupMove => {
                    self.eff[t] == Eff::Move
                        && self.dest[t] == self.dest[pi]
                        && match self.sup_coast[pi] {
                            None => true,
                            Some(c) => c == self.dest_loc[t],
                        }
                }
                Eff::Convoy => {
                    self.eff[t] == Eff::Move
                        && self.dest[t] == self.dest[pi]
                        && self.convoy_route & bit(t as Prov) != 0
                }
                _ => continue,
            };
            if ok {
                self.matched |= bit(p);
                if self.eff[pi] == Eff::Convoy {
                    self.convoyers[t] |= bit(p);
                } else {
                    self.sup[t] |= bit(p);
                }
            } else {
                let power = self.unit[pi].map(|u| u.power).unwrap_or(Power(0));
                out.errors.push(OrderError {
                    index: self.order_index[pi] as usize,
                    power,
                    reason: VoidReason::Unmatched(self.target[pi]),
                });
            }
        }
        out.errors.sort_by_key(|e| e.index);
        // Resolve every decision.
        for p in bits(has_order) {
            if self.is_decision(p) {
                self.resolve(p);
            }
        }
        self.finish(map, board, has_order, out)
    }

    #[inline]
    fn is_decision(&self, p: Prov) -> bool {
        match self.eff[p as usize] {
            Eff::Move => true,
            Eff::SupHold | Eff::SupMove | Eff::Convoy => self.matched & bit(p) != 0,
            Eff::Hold => false,
        }
    }

    #[inline]
    fn done(&self, p: Prov) -> Option<bool> {
        match self.state[p as usize] {
            DONE_T => Some(true),
            DONE_F => Some(false),
            _ => None,
        }
    }

    fn push_cycle(&mut self, d: Prov) {
        if self.in_cycle & bit(d) == 0 {
            self.in_cycle |= bit(d);
            self.cycle.push(d);
        }
    }

    fn truncate_cycle(&mut self, n: usize) {
        while self.cycle.len() > n {
            let d = self.cycle.pop().expect("length checked");
            self.in_cycle &= !bit(d);
        }
    }

    fn resolve(&mut self, d: Prov) -> bool {
        let di = d as usize;
        match self.state[di] {
            DONE_T => return true,
            DONE_F => return false,
            GUESS_T | GUESS_F => {
                self.push_cycle(d);
                self.tainted = true;
                return self.state[di] == GUESS_T;
            }
            _ => {}
        }
        if self.in_cycle & bit(d) != 0 {
            self.tainted = true;
            return self.provisional & bit(d) != 0;
        }
        let outer = self.tainted;
        self.tainted = false;
        let n = self.cycle.len();
        self.state[di] = GUESS_F;
        let a = self.adjudicate(d);
        if !self.tainted {
            self.state[di] = if a { DONE_T } else { DONE_F };
            self.tainted = outer;
            return a;
        }
        if !self.cycle[n..].contains(&d) {
            self.push_cycle(d);
            if a {
                self.provisional |= bit(d);
            } else {
                self.provisional &= !bit(d);
            }
            self.state[di] = UNKNOWN;
            self.tainted = true;
            return a;
        }
        // d heads the cycle: try the other guess.
        self.truncate_cycle(n);
        self.tainted = false;
        self.state[di] = GUESS_T;
        let b = self.adjudicate(d);
        if a == b {
            self.truncate_cycle(n);
            self.state[di] = if a { DONE_T } else { DONE_F };
            self.tainted = outer;
            return a;
        }
        let mut members: u128 = bit(d);
        for &c in &self.cycle[n..] {
            members |= bit(c);
        }
        self.backup(members);
        self.truncate_cycle(n);
        self.tainted = outer;
        if self.done(d).is_none() {
            self.state[di] = UNKNOWN;
        }
        self.resolve(d)
    }

    fn backup(&mut self, members: u128) {
        let convoys: u128 = bits(members)
            .filter(|&c| self.eff[c as usize] == Eff::Convoy)
            .fold(0, |m, c| m | bit(c));
        if convoys != 0 {
            // Szykman rule: the convoys of the paradox fail.
            for c in bits(convoys) {
                self.state[c as usize] = DONE_F;
            }
            for c in bits(members & !convoys) {
                if self.done(c).is_none() {
                    self.state[c as usize] = UNKNOWN;
                }
            }
        } else if bits(members).all(|c| self.eff[c as usize] == Eff::Move) {
            // Circular movement.
            for c in bits(members) {
                self.state[c as usize] = DONE_T;
            }
        } else {
            for c in bits(members) {
                self.state[c as usize] = DONE_F;
            }
        }
    }

    fn adjudicate(&mut self, d: Prov) -> bool {
        match self.eff[d as usize] {
            Eff::Move => self.adj_move(d),
            Eff::SupHold | Eff::SupMove => self.adj_support(d),
            Eff::Convoy => self.adj_convoy(d),
            Eff::Hold => true,
        }
    }

    fn path(&mut self, m: Prov) -> bool {
        if self.convoy_route & bit(m) == 0 {
            return true;
        }
        let mi = m as usize;
        let mut intact = 0u128;
        for c in bits(self.convoyers[mi]) {
            if self.resolve(c) {
                intact |= bit(c);
            }
        }
        // The seas next to each province, as the map has them (cached by `reset`).
        let sea = &self.sea;
        sea_route(|p| sea[p as usize], m, self.dest[mi], intact)
    }

    fn count_supports(&mut self, p: Prov, exclude_power: Option<Power>) -> u32 {
        let mut n = 0;
        for s in bits(self.sup[p as usize]) {
            if let Some(ex) = exclude_power {
                if self.unit[s as usize].map(|u| u.power) == Some(ex) {
                    continue;
                }
            }
            if self.resolve(s) {
                n += 1;
            }
        }
        n
    }

    fn adj_move(&mut self, m: Prov) -> bool {
        let mi = m as usize;
        let q = self.dest[mi];
        let qi = q as usize;
        if !self.path(m) {
            return false;
        }
        let my_power = self.unit[mi].map(|u| u.power);
        let h2h = self.h2h & bit(m) != 0;
        // ATTACK
        let attack = match self.unit[qi] {
            None => 1 + self.count_supports(m, None),
            Some(def) => {
                let leaves = self.eff[qi] == Eff::Move && !h2h && self.resolve(q);
                if leaves {
                    1 + self.count_supports(m, None)
                } else if Some(def.power) == my_power {
                    0
                } else {
                    1 + self.count_supports(m, Some(def.power))
                }
            }
        };
        if attack == 0 {
            return false;
        }
        // DEFEND or HOLD
        if h2h {
            let defend = 1 + self.count_supports(q, None);
            if attack <= defend {
                return false;
            }
        } else if self.unit[qi].is_some() {
            let hold = if self.eff[qi] == Eff::Move {
                if self.resolve(q) {
                    0
                } else {
                    1
                }
            } else {
                1 + self.count_supports(q, None)
            };
            if attack <= hold {
                return false;
            }
        }
        // PREVENT of every other move into q
        for x in bits(self.into[qi] & !bit(m)) {
            let prevent = self.prevent(x);
            if attack <= prevent {
                return false;
            }
        }
        true
    }

    fn prevent(&mut self, x: Prov) -> u32 {
        if !self.path(x) {
            return 0;
        }
        let xi = x as usize;
        if self.h2h & bit(x) != 0 && self.resolve(self.dest[xi]) {
            return 0;
        }
        1 + self.count_supports(x, None)
    }

    fn adj_support(&mut self, s: Prov) -> bool {
        let si = s as usize;
        let aim = if self.eff[si] == Eff::SupMove {
            self.dest[si]
        } else {
            self.target[si]
        };
        let power = self.unit[si].map(|u| u.power);
        let attackers = self.into[si];
        for x in bits(attackers) {
            if self.unit[x as usize].map(|u| u.power) != power && x != aim && self.path(x) {
                return false;
            }
        }
        for x in bits(attackers) {
            if self.resolve(x) {
                return false;
            }
        }
        true
    }

    fn adj_convoy(&mut self, c: Prov) -> bool {
        for x in bits(self.into[c as usize]) {
            let v = match self.done(x) {
                Some(v) => v,
                None => self.adj_move(x),
            };
            if v {
                return false;
            }
        }
        true
    }

    fn finish(
        &mut self,
        map: &Map,
        board: &mut Board,
        has_order: u128,
        mut out: PhaseOutcome,
    ) -> PhaseOutcome {
        let mut moved = 0u128;
        for p in bits(has_order) {
            if self.eff[p as usize] == Eff::Move && self.state[p as usize] == DONE_T {
                moved |= bit(p);
            }
        }
        // Dislodged units and their attackers.
        let mut dislodger = [u8::MAX; N];
        for q in bits(self.occ & !moved) {
            for x in bits(self.into[q as usize] & moved) {
                dislodger[q as usize] = x;
            }
        }
        // Results (keyed by the unit at the start of the phase).
        for p in bits(self.ordered) {
            let pi = p as usize;
            let u = self.unit[pi].expect("ordered units exist");
            let res = if has_order & bit(p) == 0 {
                OrderResult::Void
            } else {
                match self.eff[pi] {
                    Eff::Move => ok(moved & bit(p) != 0),
                    Eff::Hold => ok(dislodger[pi] == u8::MAX),
                    Eff::SupHold | Eff::SupMove | Eff::Convoy => {
                        if self.matched & bit(p) == 0 {
                            OrderResult::Void
                        } else {
                            ok(self.state[pi] == DONE_T)
                        }
                    }
                }
            };
            out.results.push((u, res));
            if res == OrderResult::Fails {
                let dislodged = dislodger[pi] != u8::MAX;
                let eff = self.eff[pi];
                let convoyed = eff == Eff::Move && !self.path(p);
                let why = match eff {
                    Eff::Move if convoyed => FailReason::NoConvoy,
                    Eff::Move => FailReason::Bounced,
                    _ if dislodged => FailReason::Dislodged,
                    Eff::SupHold | Eff::SupMove => FailReason::Cut,
                    Eff::Convoy => FailReason::ConvoyParadox,
                    Eff::Hold => FailReason::Dislodged,
                };
                out.failures.push((u, why));
            }
            if has_order & bit(p) != 0 {
                out.orders.push((u.power, self.effective(map, p)));
            }
        }
        // Standoff provinces: empty afterwards though a move into them failed with PREVENT > 0.
        let mut occupied_after = 0u128;
        for pp in bits(self.occ) {
            let p = pp as usize;
            if moved & bit(pp) != 0 {
                occupied_after |= bit(self.dest[p]);
            } else if dislodger[p] == u8::MAX {
                occupied_after |= bit(pp);
            }
        }
        let mut standoff = 0u128;
        for x in bits(has_order & !moved) {
            if self.eff[x as usize] != Eff::Move {
                continue;
            }
            let q = self.dest[x as usize];
            if (occupied_after | standoff) & bit(q) == 0 && self.prevent(x) > 0 {
                standoff |= bit(q);
            }
        }
        // New position.
        let mut units = [None; N];
        // Written in place: a copy of the array would cost more than the work.
        board.dislodged.fill(None);
        for pp in bits(self.occ) {
            let p = pp as usize;
            let Some(u) = self.unit[p] else { continue };
            if moved & bit(pp) != 0 {
                let q = self.dest[p] as usize;
                units[q] = Some(Unit {
                    loc: self.dest_loc[p],
                    ..u
                });
            } else if dislodger[p] != u8::MAX {
                let att = dislodger[p];
                let mut excluded = occupied_after | standoff;
                if self.convoy_route & bit(att) == 0 {
                    excluded |= bit(att);
                }
                let mut options = 0u128;
                let cand = match u.kind {
                    UnitKind::Army => map.army_adj(pp),
                    UnitKind::Fleet => map.fleet_adj(u.loc),
                };
                for l in bits(cand) {
                    if excluded & bit(map.prov_of(l)) == 0 {
                        options |= bit(l);
                    }
                }
                if options == 0 {
                    out.destroyed.push(u);
                } else {
                    board.dislodged[p] = Some(Dislodged { unit: u, options });
                }
            } else {
                units[p] = Some(u);
            }
        }
        board.units = units;
        out
    }

    /// The effective order at `p`, typed, with letters and coasts filled in.
    fn effective(&self, map: &Map, p: Prov) -> Order {
        let pi = p as usize;
        let me = crate::order::uref(map, &self.unit[pi].expect("unit exists"));
        let target = self.unit[self.target[pi] as usize]
            .map(|t| crate::order::uref(map, &t))
            .unwrap_or(me);
        let dest_loc = |l: Loc| Dest {
            prov: map.prov_of(l),
            coast: if map.prov_of(l) != l { Some(l) } else { None },
        };
        match self.eff[pi] {
            Eff::Hold => Order::Hold(me),
            Eff::Move => Order::Move {
                unit: me,
                dest: dest_loc(self.dest_loc[pi]),
                via: self.via & bit(p) != 0,
            },
            Eff::SupHold => Order::SupportHold { unit: me, target },
            Eff::SupMove => Order::SupportMove {
                unit: me,
                target,
                dest: Dest {
                    prov: self.dest[pi],
                    coast: self.sup_coast[pi],
                },
            },
            Eff::Convoy => Order::Convoy {
                unit: me,
                army: target,
                dest: self.dest[pi],
            },
        }
    }
}

fn ok(b: bool) -> OrderResult {
    if b {
        OrderResult::Succeeds
    } else {
        OrderResult::Fails
    }
}
