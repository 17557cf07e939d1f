//! The `strong` bot: province values (see [`super::values`]) give every power a plausible order
//! set; the bot then searches its own orders against sampled order sets of the other powers,
//! adjudicating each pair with the real adjudicator.
//!
//! 1. **Values** for each power (DumbBot's proximity method, from that power's point of view).
//! 2. **Opponent samples**: each other power's orders drawn as a bot of the DumbBot family
//!    would give them: all holds, likelier the more of its units stood still since the previous
//!    movement phase; else Huff-style ([`huff_orders`], as Project20M) or DumbBot-style
//!    ([`value_orders`]), with randomness.
//! 3. **Candidates** of ours from the same generator, each scored by its mean evaluation over
//!    the samples (the same samples for every candidate).
//! 4. **Improvement**: unit by unit, every hold, move and support of ours replaces the unit's
//!    order when it raises the mean; a few passes.
//!
//! The evaluation of an adjudicated position counts the centres we would own (a unit on a centre
//! takes it), our units' positions by their value, our dislodged units and our centres left
//! open to a stronger neighbour.

use std::collections::VecDeque;

use rand::seq::SliceRandom;
use rand::Rng;

use super::values::{reach, Purpose, Style, Values};
use super::{build_sites, buildable, dest_of, move_targets, uref};
use crate::adjudicate::adjudicate;
use crate::board::Board;
use crate::map::{bit, bits, Loc, Map, Prov, NUM_PROVINCES};
use crate::movement::Resolver;
use crate::order::Order;
use crate::types::{PhaseKind, Power, Unit};

/// Settings of the `strong` bot's search.
#[derive(Clone, Copy, Debug)]
pub struct StrongConfig {
    /// Candidate order sets generated per movement phase.
    pub candidates: usize,
    /// Sampled order sets of the other powers each candidate is scored against.
    pub samples: usize,
    /// Unit-by-unit improvement passes over the best candidate.
    pub passes: usize,
    /// Chance that the generator considers the next-best destination (DumbBot's is 0.5).
    pub alternative: f64,
    /// Share of the other powers' sampled order sets drawn in the Huff style
    /// ([`huff_orders`]); the rest are drawn in DumbBot's ([`value_orders`]).
    pub huff_share: f64,
    /// Chance that a Huff-style unit takes its second-best order.
    pub huff_noise: f64,
    /// How likely a power's sampled orders are all holds, as a multiple of the fourth power of
    /// its stillness (the share of its units that stood still since the previous movement
    /// phase): a power that never moves is sampled holding half the time, one whose units
    /// mostly move (or bounce now and then) almost never.
    pub hold_weight: f64,
}

impl Default for StrongConfig {
    fn default() -> Self {
        StrongConfig {
            candidates: 16,
            samples: 16,
            passes: 3,
            alternative: 0.3,
            huff_share: 0.8,
            huff_noise: 0.1,
            hold_weight: 0.5,
        }
    }
}

/// DumbBot-style orders for `power` from its values `v`: units in random order each pick a
/// destination among their moves and their own province, the better ones likelier
/// (`alternative` is the chance to consider the next-best one); a unit whose pick is already
/// another unit's destination supports that move when the province is contested, and a unit
/// holding next to a contested move of ours supports it.
pub fn value_orders<R: Rng>(
    map: &Map,
    board: &Board,
    power: Power,
    v: &Values,
    rng: &mut R,
    alternative: f64,
) -> Vec<Order> {
    let mut units: Vec<Unit> = board.units_of(power).collect();
    units.shuffle(rng);
    let n = units.len();
    let mut at: [Option<usize>; NUM_PROVINCES] = [None; NUM_PROVINCES];
    for (i, u) in units.iter().enumerate() {
        at[map.prov_of(u.loc) as usize] = Some(i);
    }
    let mut order: Vec<Option<Order>> = vec![None; n];
    let mut moving_into: [Option<usize>; NUM_PROVINCES] = [None; NUM_PROVINCES];
    let mut deferred = vec![false; n];
    let mut queue: VecDeque<usize> = (0..n).collect();
    'units: while let Some(i) = queue.pop_front() {
        let u = units[i];
        let p = map.prov_of(u.loc);
        let me = uref(map, &u);
        let mut opts: Vec<(f64, Loc)> = bits(move_targets(map, &u))
            .map(|l| (v.at(map, u.kind, l), l))
            .collect();
        opts.push((v.at(map, u.kind, u.loc) + 1.0, u.loc));
        opts.sort_by(|a, b| b.0.total_cmp(&a.0));
        loop {
            let mut k = 0;
            while k + 1 < opts.len() {
                let (a, b) = (opts[k].0, opts[k + 1].0);
                let chance = if a <= 0.0 { 0.0 } else { (a - b) * 5.0 / a };
                if rng.gen::<f64>() < alternative && rng.gen::<f64>() >= chance {
                    k += 1;
                } else {
                    break;
                }
            }
            let (_, l) = opts[k];
            let q = map.prov_of(l);
            if q == p {
                order[i] = Some(Order::Hold(me));
                continue 'units;
            }
            if let Some(j) = at[q as usize] {
                match order[j] {
                    None if !deferred[i] => {
                        // Decide after the unit standing there.
                        deferred[i] = true;
                        queue.push_back(i);
                        continue 'units;
                    }
                    Some(Order::Move { .. }) => {}
                    _ => {
                        if v.competition[q as usize] > 1 {
                            order[i] = Some(Order::SupportHold {
                                unit: me,
                                target: uref(map, &units[j]),
                            });
                            continue 'units;
                        }
                        opts.remove(k);
                        continue;
                    }
                }
            }
            if let Some(j) = moving_into[q as usize] {
                if v.competition[q as usize] > 0 {
                    if let Some(Order::Move { dest, .. }) = order[j] {
                        order[i] = Some(Order::SupportMove {
                            unit: me,
                            target: uref(map, &units[j]),
                            dest,
                        });
                        continue 'units;
                    }
                }
                opts.remove(k);
                continue;
            }
            order[i] = Some(Order::Move {
                unit: me,
                dest: dest_of(map, l),
                via: false,
            });
            moving_into[q as usize] = Some(i);
            continue 'units;
        }
    }
    // Holding units support a contested move or hold of ours next to them.
    for i in 0..n {
        if !matches!(order[i], Some(Order::Hold(_))) {
            continue;
        }
        let u = units[i];
        let p = map.prov_of(u.loc);
        let mut best: Option<(f64, Order)> = None;
        for q in bits(reach(map, &u) & !bit(p)) {
            let qi = q as usize;
            let cand = if let Some(j) = moving_into[qi] {
                match order[j] {
                    Some(Order::Move { dest, .. }) if v.competition[qi] > 0 => Some((
                        v.at(map, units[j].kind, units[j].loc).max(v.army[qi]),
                        Order::SupportMove {
                            unit: uref(map, &u),
                            target: uref(map, &units[j]),
                            dest,
                        },
                    )),
                    _ => None,
                }
            } else {
                match at[qi] {
                    Some(j)
                        if v.competition[qi] > 1
                            && !matches!(order[j], Some(Order::Move { .. })) =>
                    {
                        Some((
                            v.at(map, units[j].kind, units[j].loc),
                            Order::SupportHold {
                                unit: uref(map, &u),
                                target: uref(map, &units[j]),
                            },
                        ))
                    }
                    _ => None,
                }
            };
            if let Some((val, o)) = cand {
                if best.as_ref().is_none_or(|(b, _)| val > *b) {
                    best = Some((val, o));
                }
            }
        }
        if let Some((_, o)) = best {
            order[i] = Some(o);
        }
    }
    order.into_iter().flatten().collect()
}

/// Orders in the manner of A. Huff's bot (Parang's Project20M), from its values `v`
/// ([`Style::Huff`](super::values::Style::Huff)): each unit ranks its moves by the gain in value
/// divided by the square of the resistance at the destination (enemy units that could enter
/// it), keeps only moves into centres it does not own or owns under threat (in spring also
/// moves next to them), and holds only when no move gains. A unit that would hold on its own
/// centre attacks a neighbouring centre instead. Units are handled best first; a destination
/// another unit of ours already took is skipped; units left holding support moves of ours that
/// meet resistance. With chance `noise` a unit takes its second-best order.
pub fn huff_orders<R: Rng>(
    map: &Map,
    board: &Board,
    power: Power,
    v: &Values,
    rng: &mut R,
    noise: f64,
) -> Vec<Order> {
    let spring = board.phase.season == crate::types::Season::Spring;
    let mut enemy = [0i32; NUM_PROVINCES];
    let mut own = [0i32; NUM_PROVINCES];
    for u in board.units.iter().flatten() {
        for q in bits(reach(map, u)) {
            if u.power == power {
                own[q as usize] += 1;
            } else {
                enemy[q as usize] += 1;
            }
        }
    }
    let owned = board.owned_mask(power);
    let valuable =
        |q: Prov| -> bool { map.is_sc(q) && (owned & bit(q) == 0 || enemy[q as usize] > 0) };
    let mut valuable_set = 0u128;
    for q in 0..NUM_PROVINCES as Prov {
        if valuable(q) {
            valuable_set |= bit(q);
        }
    }
    // Each unit's options, best first: (score, destination; None to hold).
    type Ranked = (f64, Option<Loc>);
    let mut ranked: Vec<(Unit, Vec<Ranked>)> = Vec::new();
    for u in board.units_of(power) {
        let p = map.prov_of(u.loc);
        let src = v.at(map, u.kind, u.loc);
        let mut opts: Vec<Ranked> = vec![(0.001 * src, None)];
        for l in bits(move_targets(map, &u)) {
            let q = map.prov_of(l);
            let occupant = board.units[q as usize];
            let occupied = occupant.is_some();
            let needed =
                enemy[q as usize] - i32::from(map.is_sc(q) && owned & bit(q) != 0 && !occupied);
            let conflict = f64::from(needed.max(0) + 1 + i32::from(occupied));
            let mut score = (v.at(map, u.kind, l) - src) / (conflict * conflict);
            if needed > 1 {
                score *= 2f64.powi(own[q as usize]);
            }
            if occupant.is_some_and(|o| o.power == power) {
                score /= 200.0;
            }
            opts.push((score, Some(l)));
        }
        let keep = |o: &(f64, Option<Loc>)| {
            let q = o.1.map_or(p, |l| map.prov_of(l));
            valuable_set & bit(q) != 0
                || (spring && o.1.is_some() && map.prov_graph(q) & valuable_set != 0)
        };
        let kept: Vec<Ranked> = opts.iter().copied().filter(keep).collect();
        let mut opts = if kept.is_empty() { opts } else { kept };
        opts.sort_by(|a, b| b.0.total_cmp(&a.0));
        if opts.len() > 1 && rng.gen::<f64>() < noise {
            opts.swap(0, 1);
        }
        if opts[0].1.is_none() && map.is_sc(p) && owned & bit(p) != 0 {
            if let Some(l) = bits(move_targets(map, &u))
                .find(|&l| map.is_sc(map.prov_of(l)) && owned & bit(map.prov_of(l)) == 0)
            {
                opts.insert(0, (f64::MAX, Some(l)));
            }
        }
        ranked.push((u, opts));
    }
    ranked.sort_by(|a, b| b.1[0].0.total_cmp(&a.1[0].0));
    let mut claimed = 0u128;
    let mut chosen: Vec<(Unit, Option<Loc>)> = Vec::new();
    for (u, opts) in &ranked {
        let p = map.prov_of(u.loc);
        let pick = opts
            .iter()
            .map(|o| o.1)
            .find(|d| claimed & bit(d.map_or(p, |l| map.prov_of(l))) == 0)
            .unwrap_or(None);
        claimed |= bit(pick.map_or(p, |l| map.prov_of(l)));
        chosen.push((*u, pick));
    }
    // Units left holding support the moves that meet resistance, strongest need first.
    let mut orders: Vec<Order> = Vec::with_capacity(chosen.len());
    let mut free: Vec<bool> = chosen.iter().map(|(_, d)| d.is_none()).collect();
    let mut supports: Vec<Option<Order>> = vec![None; chosen.len()];
    for (i, (u, d)) in chosen.iter().enumerate() {
        let Some(l) = d else { continue };
        let q = map.prov_of(*l);
        let mut need = enemy[q as usize];
        for (j, (s, _)) in chosen.iter().enumerate() {
            if need <= 0 {
                break;
            }
            if j != i && free[j] && reach(map, s) & bit(q) != 0 && map.prov_of(s.loc) != q {
                free[j] = false;
                supports[j] = Some(Order::SupportMove {
                    unit: uref(map, s),
                    target: uref(map, u),
                    dest: dest_of(map, *l),
                });
                need -= 1;
            }
        }
    }
    for (j, (u, d)) in chosen.iter().enumerate() {
        orders.push(match (supports[j], d) {
            (Some(o), _) => o,
            (None, Some(l)) => Order::Move {
                unit: uref(map, u),
                dest: dest_of(map, *l),
                via: false,
            },
            (None, None) => Order::Hold(uref(map, u)),
        });
    }
    orders
}

/// Centres each power would own if the units where they stand took them.
fn prospective_owner(map: &Map, board: &Board, p: Prov) -> Option<Power> {
    board.units[p as usize]
        .map(|u| u.power)
        .or(board.owner[p as usize])
        .filter(|_| map.is_sc(p))
}

const CENTRE: f64 = 10.0;
const POSITION: f64 = 2.0;
const DISLODGED: f64 = 4.0;
const OPEN_CENTRE: f64 = 3.0;

/// The value of an adjudicated position for `power` (see the module documentation).
fn evaluate(map: &Map, after: &Board, power: Power, v: &Values) -> f64 {
    let mut s = 0.0;
    let mut ours = 0u128;
    for p in 0..NUM_PROVINCES as Prov {
        if prospective_owner(map, after, p) == Some(power) {
            s += CENTRE;
            ours |= bit(p);
        }
    }
    let mut near = [[0u8; 7]; NUM_PROVINCES];
    for u in after.units.iter().flatten() {
        if u.power == power {
            s += POSITION * v.at(map, u.kind, u.loc).max(0.0) / v.max;
        }
        for q in bits(reach(map, u)) {
            near[q as usize][u.power.index()] += 1;
        }
    }
    for d in after.dislodged.iter().flatten() {
        if d.unit.power == power {
            s -= DISLODGED;
        }
    }
    for c in bits(ours) {
        let c = c as usize;
        if after.units[c].is_some() {
            continue;
        }
        let mine = near[c][power.index()];
        let theirs = (0..7)
            .filter(|&o| o != power.index())
            .map(|o| near[c][o])
            .max()
            .unwrap_or(0);
        if theirs > mine {
            s -= OPEN_CENTRE;
        }
    }
    s
}

struct Scorer<'a> {
    map: &'a Map,
    board: &'a Board,
    power: Power,
    values: &'a Values,
    samples: Vec<Vec<(Power, Order)>>,
    scratch: Board,
    all: Vec<(Power, Order)>,
}

impl Scorer<'_> {
    fn score(&mut self, resolver: &mut Resolver, cand: &[Order]) -> f64 {
        let mut total = 0.0;
        for s in &self.samples {
            self.all.clear();
            self.all.extend(cand.iter().map(|o| (self.power, *o)));
            self.all.extend(s.iter().copied());
            self.scratch.clone_from(self.board);
            adjudicate(resolver, self.map, &mut self.scratch, &self.all);
            total += evaluate(self.map, &self.scratch, self.power, self.values);
        }
        total / self.samples.len().max(1) as f64
    }
}

/// Orders a unit may be given in the improvement step, given the orders of the others.
fn unit_options(map: &Map, u: &Unit, others: &[Order]) -> Vec<Order> {
    let me = uref(map, u);
    let p = map.prov_of(u.loc);
    let r = reach(map, u) & !bit(p);
    let mut out = vec![Order::Hold(me)];
    for l in bits(move_targets(map, u)) {
        out.push(Order::Move {
            unit: me,
            dest: dest_of(map, l),
            via: false,
        });
    }
    for o in others {
        match *o {
            Order::Move { unit, dest, via } if !via && r & bit(dest.prov) != 0 => {
                out.push(Order::SupportMove {
                    unit: me,
                    target: unit,
                    dest,
                });
            }
            Order::Hold(t)
            | Order::SupportHold { unit: t, .. }
            | Order::SupportMove { unit: t, .. }
                if r & bit(t.prov) != 0 =>
            {
                out.push(Order::SupportHold {
                    unit: me,
                    target: t,
                });
            }
            _ => {}
        }
    }
    out
}

/// For each power, the share of its units at the start of `prev` (a movement phase) that stand
/// where they stood in `board` (the next movement phase); 0 for a power with no unit in `prev`.
pub fn stillness(prev: &Board, board: &Board) -> [f64; 7] {
    let mut total = [0u32; 7];
    let mut still = [0u32; 7];
    for (p, u) in prev.units.iter().enumerate() {
        if let Some(u) = u {
            total[u.power.index()] += 1;
            if board.units[p] == Some(*u) {
                still[u.power.index()] += 1;
            }
        }
    }
    let mut out = [0.0; 7];
    for i in 0..7 {
        if total[i] > 0 {
            out[i] = f64::from(still[i]) / f64::from(total[i]);
        }
    }
    out
}

/// The `strong` bot's orders for `power` (see the module documentation). `still` is each
/// power's [`stillness`] since the previous movement phase (all 0 when there is none).
pub fn strong_orders<R: Rng>(
    map: &Map,
    board: &Board,
    power: Power,
    cfg: &StrongConfig,
    still: &[f64; 7],
    resolver: &mut Resolver,
    rng: &mut R,
) -> Vec<Order> {
    match board.phase.kind {
        PhaseKind::Movement => {}
        PhaseKind::Retreat => return strong_retreats(map, board, power),
        PhaseKind::Adjustment => return strong_adjustments(map, board, power),
    }
    let purpose = Purpose::of(board.phase.season);
    let values: Vec<Option<Values>> = Power::ALL
        .iter()
        .map(|&p| {
            board
                .units_of(p)
                .next()
                .map(|_| Values::new(map, board, p, purpose))
        })
        .collect();
    let Some(mine) = values[power.index()].as_ref() else {
        return Vec::new();
    };
    let huff: Vec<Option<Values>> = Power::ALL
        .iter()
        .map(|&p| {
            (p != power && cfg.huff_share > 0.0 && board.units_of(p).next().is_some())
                .then(|| Values::with_style(map, board, p, purpose, Style::Huff))
        })
        .collect();
    let mut samples = Vec::with_capacity(cfg.samples.max(1));
    for _ in 0..cfg.samples.max(1) {
        let mut os = Vec::new();
        for pw in Power::ALL {
            if pw == power {
                continue;
            }
            let Some(v) = &values[pw.index()] else {
                continue;
            };
            let r = rng.gen::<f64>();
            let drawn = match &huff[pw.index()] {
                _ if r < cfg.hold_weight * still[pw.index()].powi(4) => {
                    super::hold_orders(map, board, pw)
                }
                Some(h) if rng.gen::<f64>() < cfg.huff_share => {
                    huff_orders(map, board, pw, h, rng, cfg.huff_noise)
                }
                _ => value_orders(map, board, pw, v, rng, cfg.alternative),
            };
            os.extend(drawn.into_iter().map(|o| (pw, o)));
        }
        samples.push(os);
    }
    let mut scorer = Scorer {
        map,
        board,
        power,
        values: mine,
        samples,
        scratch: board.clone(),
        all: Vec::new(),
    };
    let mut best: Option<(f64, Vec<Order>)> = None;
    for i in 0..cfg.candidates.max(1) {
        let alt = if i == 0 { 0.0 } else { cfg.alternative };
        let cand = value_orders(map, board, power, mine, rng, alt);
        let s = scorer.score(resolver, &cand);
        if best.as_ref().is_none_or(|(b, _)| s > *b) {
            best = Some((s, cand));
        }
    }
    let (mut best_score, mut orders) = best.expect("at least one candidate");
    let units: Vec<Unit> = board.units_of(power).collect();
    for _ in 0..cfg.passes {
        let mut improved = false;
        for u in &units {
            let here = map.prov_of(u.loc);
            let Some(idx) = orders
                .iter()
                .position(|o| o.unit().map(|r| r.prov) == Some(here))
            else {
                continue;
            };
            let current = orders[idx];
            let others: Vec<Order> = orders
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != idx)
                .map(|(_, o)| *o)
                .collect();
            let mut pick = current;
            for o in unit_options(map, u, &others) {
                if o == current {
                    continue;
                }
                orders[idx] = o;
                let s = scorer.score(resolver, &orders);
                if s > best_score + 1e-9 {
                    best_score = s;
                    pick = o;
                    improved = true;
                }
            }
            orders[idx] = pick;
        }
        if !improved {
            break;
        }
    }
    match_own_supports(&mut orders);
    orders
}

/// A support of one of our units whose order changed after the support was chosen would be
/// void (unmatched): it becomes a hold. A support of a move that now goes to the other coast of
/// the same province follows the move (a support naming a coast must name the move's coast).
fn match_own_supports(orders: &mut [Order]) {
    let by_prov = |orders: &[Order], p: Prov| {
        orders
            .iter()
            .find(|o| o.unit().map(|u| u.prov) == Some(p))
            .copied()
    };
    for i in 0..orders.len() {
        let keep = match orders[i] {
            Order::SupportMove { unit, target, dest } => match by_prov(orders, target.prov) {
                Some(Order::Move { dest: d, .. }) if d.prov == dest.prov => {
                    orders[i] = Order::SupportMove {
                        unit,
                        target,
                        dest: d,
                    };
                    true
                }
                Some(_) => false,
                None => true,
            },
            Order::SupportHold { target, .. } => {
                !matches!(by_prov(orders, target.prov), Some(Order::Move { .. }))
            }
            _ => true,
        };
        if !keep {
            if let Some(u) = orders[i].unit() {
                orders[i] = Order::Hold(u);
            }
        }
    }
}

/// Retreats to the most valuable free option; disband when there is none.
fn strong_retreats(map: &Map, board: &Board, power: Power) -> Vec<Order> {
    let v = Values::new(map, board, power, Purpose::of(board.phase.season));
    let mut taken = 0u128;
    let mut out = Vec::new();
    for d in board.dislodged_of(power) {
        let me = uref(map, &d.unit);
        let best = bits(d.options)
            .filter(|&l| taken & bit(map.prov_of(l)) == 0)
            .max_by(|&a, &b| {
                v.at(map, d.unit.kind, a)
                    .total_cmp(&v.at(map, d.unit.kind, b))
            });
        match best {
            Some(l) => {
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

/// Builds the most valuable units at free home centres; removes the least valuable units.
fn strong_adjustments(map: &Map, board: &Board, power: Power) -> Vec<Order> {
    let n = board.adjustment(power);
    let v = Values::new(map, board, power, Purpose::Winter);
    let mut out = Vec::new();
    if n > 0 {
        let mut opts: Vec<(f64, Unit)> = build_sites(board, power)
            .into_iter()
            .flat_map(|p| buildable(map, power, p))
            .map(|u| (v.at(map, u.kind, u.loc), u))
            .collect();
        opts.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut used = 0u128;
        for (_, u) in opts {
            if out.len() == n as usize {
                break;
            }
            let p = map.prov_of(u.loc);
            if used & bit(p) == 0 {
                used |= bit(p);
                out.push(Order::Build(uref(map, &u)));
            }
        }
    } else if n < 0 {
        let mut us: Vec<(f64, Unit)> = board
            .units_of(power)
            .map(|u| (v.at(map, u.kind, u.loc), u))
            .collect();
        us.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (_, u) in us.into_iter().take((-n) as usize) {
            out.push(Order::Disband(uref(map, &u)));
        }
    }
    out
}
