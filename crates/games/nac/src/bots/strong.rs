//! The `strong` bot: Monte Carlo planning against opponents modelled as random.
//!
//! Each turn, from its own [`View`] only (and what it remembers of earlier views and of its own
//! picks), the bot
//!
//! 1. samples `WORLDS` worlds: the other seats' hidden night picks since the last reveal, drawn
//!    consistently with the count lines it has seen (the night's picks minus its own, dealt out
//!    two per seat in a uniformly random order: exactly the posterior when the others pick
//!    uniformly at random), then the rest of the game with the others picking uniformly at
//!    random; per world it keeps the others' real affinity at every remaining scoring turn;
//! 2. keeps a plan for all its remaining picks, grouped by kind (real gain per pick, and which of
//!    the remaining scorings it counts in), warm-started from the previous turn's plan;
//! 3. hill-climbs over the plan by moving one pick of one kind from one target to another,
//!    taking the best move while it raises the number of worlds in which the bot finishes
//!    strictly first (a small term for the clamped margin over the best other seat breaks ties
//!    and leads across plateaus); it climbs from the previous plan and from the two best of the
//!    "contest exactly this set of targets" plans (sets of 2 to 5 targets), and keeps the best
//!    result, since single-pick moves rarely carry a plan from one set of contested targets to
//!    another;
//! 4. plays this turn's picks out of the plan's allocation for this turn's kind, largest
//!    allocation first.
//!
//! Scores already made are added exactly where the bot saw the matrix they were made from (the
//! turn-5 scoring of `nac` is shown in block 6); any other past scoring is left out.

// Worlds, scorings and targets index several parallel arrays at once.
#![allow(clippy::needless_range_loop)]

use kakehiki_core::SeedRng;
use rand::seq::SliceRandom;
use rand::Rng;

use crate::bots::NacBot;
use crate::state::{score24, View, MAX_TARGETS, NUM_SEATS};

/// Worlds sampled per decision.
const WORLDS: usize = 192;
/// Most hill-climbing steps per decision.
const MAX_STEPS: usize = 400;
/// Plans climbed from each turn besides the previous turn's plan: the best-valued of "every pick
/// of a kind dealt round-robin over one set of 2 to 5 targets", over all such sets.
const SCREENED_STARTS: usize = 2;
/// Objective units for one world won; the clamped margin (in 1/24 points) is added to it.
const WIN: i64 = 1000;
/// Margin clamp, in 1/24 points.
const MARGIN_CAP: i32 = 24 * 8;
/// Scoring turns a plan can look ahead to (the family scores at most twice).
const MAX_SCORINGS: usize = 4;
/// 24 / n for n seats sharing a place.
const SHARE24: [i32; NUM_SEATS + 1] = [0, 24, 12, 8, 6];

/// One kind of remaining pick: its real gain and the scorings it counts in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kind {
    gain: u16,
    /// Bit s: counts in the scoring after turn s.
    mask: u32,
    /// Picks of this kind left in the game (this turn included).
    units: u16,
    /// The plan: picks of this kind per target.
    alloc: [u16; MAX_TARGETS],
}

/// The `strong` built-in bot.
pub struct StrongBot {
    rng: SeedRng,
    /// Picks per target of each night, from the count line of the following day block.
    night_counts: Vec<Option<[u16; MAX_TARGETS]>>,
    /// This seat's picks per target in each turn.
    own: Vec<Option<[u16; MAX_TARGETS]>>,
    /// Past scorings the bot could compute exactly: (turn, score ×24 in seat order).
    known_scores: Vec<(u32, [i64; NUM_SEATS])>,
    /// The plan left from the previous turn.
    plan: Vec<Kind>,
}

impl StrongBot {
    pub fn new(rng: SeedRng) -> Self {
        StrongBot {
            rng,
            night_counts: Vec::new(),
            own: Vec::new(),
            known_scores: Vec::new(),
            plan: Vec::new(),
        }
    }

    /// Remember what this view tells about the past.
    fn observe(&mut self, view: &View) {
        let t = view.turn as usize;
        let turns = view.params.turns as usize;
        if self.night_counts.len() < turns + 2 {
            self.night_counts.resize(turns + 2, None);
            self.own.resize(turns + 2, None);
        }
        if view.is_day() && t > 1 && !view.params.is_day(view.turn - 1) {
            self.night_counts[t - 1] = Some(view.last_counts);
        }
        // The block after the reveal shows the real matrix of the reveal turn: score it if the
        // rules scored then.
        if let Some(r) = view.params.reveal_after {
            if view.turn == r + 1
                && view.params.scores_after(r)
                && !self.known_scores.iter().any(|k| k.0 == r)
            {
                let l = view.targets();
                let s = score24(&view.public[..l], view.weights());
                self.known_scores.push((r, s));
            }
        }
    }

    /// The kinds of this seat's remaining picks and the remaining scoring turns.
    fn kinds(view: &View) -> (Vec<Kind>, Vec<u32>) {
        let p = &view.params;
        let scorings: Vec<u32> = (view.turn..=p.turns)
            .filter(|&s| p.scores_after(s))
            .take(MAX_SCORINGS)
            .collect();
        let mut kinds: Vec<Kind> = Vec::new();
        for u in view.turn..=p.turns {
            let gain = if p.is_day(u) {
                p.day_real_gain
            } else {
                p.night_real_gain
            };
            let mask = scorings
                .iter()
                .filter(|&&s| s >= u)
                .fold(0u32, |m, &s| m | 1 << s);
            if mask == 0 || gain == 0 {
                continue;
            }
            let units = p.picks_in(u) as u16;
            match kinds.iter_mut().find(|k| k.gain == gain && k.mask == mask) {
                Some(k) => k.units += units,
                None => kinds.push(Kind {
                    gain,
                    mask,
                    units,
                    alloc: [0; MAX_TARGETS],
                }),
            }
        }
        (kinds, scorings)
    }

    /// A first plan: each kind's picks dealt round-robin over the heaviest targets.
    fn initial_alloc(kind: &mut Kind, view: &View) {
        let l = view.targets();
        let mut order: Vec<usize> = (0..l).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(view.weights[i]));
        let spread = l.div_ceil(2).max(1);
        kind.alloc = [0; MAX_TARGETS];
        for k in 0..kind.units as usize {
            kind.alloc[order[k % spread]] += 1;
        }
    }

    /// Sample the others' real affinity at each remaining scoring turn, per world:
    /// `out[w][k][i][j]` for the j-th other seat (ascending), target i, k-th scoring.
    fn sample_worlds(
        &mut self,
        view: &View,
        scorings: &[u32],
    ) -> Vec<[[[u16; 3]; MAX_TARGETS]; MAX_SCORINGS]> {
        let p = view.params;
        let l = view.targets();
        let t = view.turn;
        let me = view.seat;
        let others: Vec<usize> = (0..NUM_SEATS).filter(|&q| q != me).collect();
        // Nights whose picks are not in the public matrix yet.
        let hidden_from = match p.reveal_after {
            Some(r) if r < t => r + 1,
            _ => 1,
        };
        let hidden_nights: Vec<(usize, Vec<u8>)> = (hidden_from..t)
            .filter(|&n| !p.is_day(n))
            .map(|n| {
                let n = n as usize;
                let counts = self.night_counts.get(n).copied().flatten();
                let own = self
                    .own
                    .get(n)
                    .copied()
                    .flatten()
                    .unwrap_or([0; MAX_TARGETS]);
                let mut picks = Vec::with_capacity(3 * p.night_picks);
                if let Some(c) = counts {
                    for i in 0..l {
                        for _ in 0..c[i].saturating_sub(own[i]) {
                            picks.push(i as u8);
                        }
                    }
                }
                picks.truncate(3 * p.night_picks);
                (n, picks)
            })
            .collect();
        let mut worlds = vec![[[[0u16; 3]; MAX_TARGETS]; MAX_SCORINGS]; WORLDS];
        let mut deal: Vec<u8> = Vec::with_capacity(3 * p.night_picks);
        for world in worlds.iter_mut() {
            let mut cur = [[0u16; 3]; MAX_TARGETS];
            for (i, row) in cur.iter_mut().enumerate().take(l) {
                for (j, &q) in others.iter().enumerate() {
                    row[j] = view.public[i][q];
                }
            }
            for (_, picks) in &hidden_nights {
                deal.clear();
                deal.extend_from_slice(picks);
                // Missing picks (a count line never seen) are drawn at random.
                while deal.len() < 3 * p.night_picks {
                    deal.push(self.rng.gen_range(0..l as u8));
                }
                deal.shuffle(&mut self.rng);
                for (k, &i) in deal.iter().enumerate() {
                    cur[i as usize][k / p.night_picks] += p.night_real_gain;
                }
            }
            let mut next = 0;
            for u in t..=p.turns {
                let gain = if p.is_day(u) {
                    p.day_real_gain
                } else {
                    p.night_real_gain
                };
                for j in 0..3 {
                    for _ in 0..p.picks_in(u) {
                        let i = ((u64::from(self.rng.gen::<u32>()) * l as u64) >> 32) as usize;
                        cur[i][j] += gain;
                    }
                }
                if next < scorings.len() && scorings[next] == u {
                    world[next] = cur;
                    next += 1;
                }
            }
        }
        worlds
    }
}

/// Score contributions of one target to (this seat, the three others), ×24.
#[inline]
fn contrib(mine: u16, others: &[u16; 3], m: i32) -> [i32; 4] {
    let v = [mine, others[0], others[1], others[2]];
    let hi = v[0].max(v[1]).max(v[2].max(v[3]));
    let lo = v[0].min(v[1]).min(v[2].min(v[3]));
    if hi == lo {
        return [0; 4];
    }
    let n_hi = v.iter().filter(|&&x| x == hi).count();
    let n_lo = v.iter().filter(|&&x| x == lo).count();
    let gain = m * SHARE24[n_hi];
    let loss = m * SHARE24[n_lo];
    v.map(|x| {
        if x == hi {
            gain
        } else if x == lo {
            -loss
        } else {
            0
        }
    })
}

#[inline]
fn add4(a: [i32; 4], b: [i32; 4]) -> [i32; 4] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

#[inline]
fn sub4(a: [i32; 4], b: [i32; 4]) -> [i32; 4] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]]
}

/// One world's worth of objective: a win counts `WIN`, plus the clamped margin.
#[inline]
fn objective(total: [i32; 4]) -> i64 {
    let margin = total[0] - total[1].max(total[2]).max(total[3]);
    let win = if margin > 0 { WIN } else { 0 };
    win + i64::from(margin.clamp(-MARGIN_CAP, MARGIN_CAP))
}

/// The plan's evaluation state over the sampled worlds.
struct Evaluator<'a> {
    worlds: &'a [[[[u16; 3]; MAX_TARGETS]; MAX_SCORINGS]],
    weights: [i32; MAX_TARGETS],
    l: usize,
    /// The remaining scoring turns.
    scorings: &'a [u32],
    /// mine[k][i]: this seat's planned real affinity at the k-th remaining scoring.
    mine: [[u16; MAX_TARGETS]; MAX_SCORINGS],
    /// part[w][k][i]: the contribution of target i at scoring k in world w.
    part: Vec<[[[i32; 4]; MAX_TARGETS]; MAX_SCORINGS]>,
    /// total[w]: every seat's total in world w (past known scorings included).
    total: Vec<[i32; 4]>,
}

impl<'a> Evaluator<'a> {
    fn new(
        worlds: &'a [[[[u16; 3]; MAX_TARGETS]; MAX_SCORINGS]],
        view: &View,
        scorings: &'a [u32],
        kinds: &[Kind],
        past: [i32; 4],
    ) -> Self {
        let l = view.targets();
        let mut weights = [0; MAX_TARGETS];
        for i in 0..l {
            weights[i] = i32::from(view.weights[i]);
        }
        let mut mine = [[0u16; MAX_TARGETS]; MAX_SCORINGS];
        for (row, &s) in mine.iter_mut().zip(scorings) {
            for i in 0..l {
                row[i] = view.own_real[i]
                    + kinds
                        .iter()
                        .filter(|kd| kd.mask & (1 << s) != 0)
                        .map(|kd| kd.gain * kd.alloc[i])
                        .sum::<u16>();
            }
        }
        let mut ev = Evaluator {
            worlds,
            weights,
            l,
            scorings,
            mine,
            part: vec![[[[0; 4]; MAX_TARGETS]; MAX_SCORINGS]; worlds.len()],
            total: vec![past; worlds.len()],
        };
        for w in 0..worlds.len() {
            for k in 0..scorings.len() {
                for i in 0..l {
                    let c = contrib(ev.mine[k][i], &worlds[w][k][i], weights[i]);
                    ev.part[w][k][i] = c;
                    ev.total[w] = add4(ev.total[w], c);
                }
            }
        }
        ev
    }

    fn value(&self) -> i64 {
        self.total.iter().map(|&t| objective(t)).sum()
    }

    /// The best move of one pick of `kind` from a target to another: (value, from, to).
    fn best_move(
        &self,
        kind: &Kind,
        scratch: &mut Vec<[[i32; 4]; 2 * MAX_TARGETS]>,
    ) -> Option<(i64, usize, usize)> {
        let l = self.l;
        let g = kind.gain;
        // Per world and target: the change in totals if one pick leaves (slot i) or joins
        // (slot l + i) target i.
        scratch.clear();
        scratch.resize(self.worlds.len(), [[0; 4]; 2 * MAX_TARGETS]);
        for (w, d) in scratch.iter_mut().enumerate() {
            for k in (0..self.scorings.len()).filter(|&k| kind.mask & (1 << self.scorings[k]) != 0)
            {
                let others = &self.worlds[w][k];
                for i in 0..l {
                    let x = self.mine[k][i];
                    let now = self.part[w][k][i];
                    if kind.alloc[i] > 0 {
                        d[i] = add4(d[i], sub4(contrib(x - g, &others[i], self.weights[i]), now));
                    }
                    d[l + i] = add4(
                        d[l + i],
                        sub4(contrib(x + g, &others[i], self.weights[i]), now),
                    );
                }
            }
        }
        let mut best: Option<(i64, usize, usize)> = None;
        for a in (0..l).filter(|&a| kind.alloc[a] > 0) {
            for b in (0..l).filter(|&b| b != a) {
                let v: i64 = self
                    .total
                    .iter()
                    .zip(scratch.iter())
                    .map(|(&t, d)| objective(add4(add4(t, d[a]), d[l + b])))
                    .sum();
                match best {
                    Some((bv, _, _)) if bv >= v => {}
                    _ => best = Some((v, a, b)),
                }
            }
        }
        best
    }

    /// Move one pick of `kind` from target a to target b.
    fn apply(&mut self, kind: &Kind, a: usize, b: usize) {
        for k in (0..self.scorings.len()).filter(|&k| kind.mask & (1 << self.scorings[k]) != 0) {
            self.mine[k][a] -= kind.gain;
            self.mine[k][b] += kind.gain;
            for w in 0..self.worlds.len() {
                for i in [a, b] {
                    let c = contrib(self.mine[k][i], &self.worlds[w][k][i], self.weights[i]);
                    self.total[w] = add4(sub4(self.total[w], self.part[w][k][i]), c);
                    self.part[w][k][i] = c;
                }
            }
        }
    }
}

impl NacBot for StrongBot {
    fn pick(&mut self, view: &View) -> Vec<u8> {
        let mut out = vec![0; view.picks_needed()];
        self.pick_into(view, &mut out);
        out
    }

    fn pick_into(&mut self, view: &View, out: &mut [u8]) {
        self.observe(view);
        let l = view.targets();
        let t = view.turn as usize;
        let (mut kinds, scorings) = Self::kinds(view);
        // Warm start from the previous plan where a kind still fits.
        for k in kinds.iter_mut() {
            let previous = self.plan.iter().find(|p| {
                p.gain == k.gain && p.mask == k.mask && p.alloc.iter().sum::<u16>() == k.units
            });
            match previous {
                Some(p) => k.alloc = p.alloc,
                None => Self::initial_alloc(k, view),
            }
        }
        let gain_now = if view.is_day() {
            view.params.day_real_gain
        } else {
            view.params.night_real_gain
        };
        let mask_now = scorings
            .iter()
            .filter(|&&s| s >= view.turn)
            .fold(0u32, |m, &s| m | 1 << s);
        let now = kinds
            .iter()
            .position(|k| k.gain == gain_now && k.mask == mask_now);

        if let Some(now) = now {
            let worlds = self.sample_worlds(view, &scorings);
            let mut past = [0i32; 4];
            let me = view.seat;
            let order: Vec<usize> = std::iter::once(me)
                .chain((0..NUM_SEATS).filter(|&q| q != me))
                .collect();
            for (_, s) in &self.known_scores {
                for (j, &q) in order.iter().enumerate() {
                    past[j] += s[q] as i32;
                }
            }
            let mut scratch = Vec::new();
            let mut starts: Vec<Vec<Kind>> = vec![kinds.clone()];
            let mut order: Vec<usize> = (0..l).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(view.weights[i]));
            let mut scored: Vec<(i64, Vec<Kind>)> = Vec::new();
            for set in 1u32..(1 << l) {
                let size = set.count_ones() as usize;
                if !(2..=5).contains(&size) {
                    continue;
                }
                let members: Vec<usize> = order
                    .iter()
                    .copied()
                    .filter(|&i| set & (1 << i) != 0)
                    .collect();
                let mut cand = kinds.clone();
                for k in cand.iter_mut() {
                    k.alloc = [0; MAX_TARGETS];
                    for u in 0..k.units as usize {
                        k.alloc[members[u % size]] += 1;
                    }
                }
                let v = Evaluator::new(&worlds, view, &scorings, &cand, past).value();
                scored.push((v, cand));
            }
            scored.sort_by_key(|c| std::cmp::Reverse(c.0));
            starts.extend(scored.into_iter().take(SCREENED_STARTS).map(|c| c.1));
            let mut best_plan: Option<(i64, Vec<Kind>)> = None;
            for mut cand in starts {
                let value = climb(&worlds, view, &scorings, &mut cand, past, &mut scratch);
                match best_plan {
                    Some((bv, _)) if bv >= value => {}
                    _ => best_plan = Some((value, cand)),
                }
            }
            if let Some((_, plan)) = best_plan {
                kinds = plan;
            }
            // This turn's picks: out of this kind's allocation, largest first.
            let kind = &mut kinds[now];
            for o in out.iter_mut() {
                let i = (0..l)
                    .max_by_key(|&i| (kind.alloc[i], view.weights[i], std::cmp::Reverse(i)))
                    .unwrap_or(0);
                kind.alloc[i] = kind.alloc[i].saturating_sub(1);
                kind.units = kind.units.saturating_sub(1);
                *o = i as u8;
            }
        } else {
            // No scoring left that these picks count in: they cannot matter.
            for o in out.iter_mut() {
                *o = self.rng.gen_range(0..l as u8);
            }
        }
        kinds.retain(|k| k.units > 0);
        self.plan = kinds;
        let mut mine = [0u16; MAX_TARGETS];
        for &i in out.iter() {
            mine[i as usize] += 1;
        }
        if t < self.own.len() {
            self.own[t] = Some(mine);
        }
    }
}

/// Hill-climb `kinds` over the worlds; returns the final objective value.
fn climb(
    worlds: &[[[[u16; 3]; MAX_TARGETS]; MAX_SCORINGS]],
    view: &View,
    scorings: &[u32],
    kinds: &mut [Kind],
    past: [i32; 4],
    scratch: &mut Vec<[[i32; 4]; 2 * MAX_TARGETS]>,
) -> i64 {
    let mut ev = Evaluator::new(worlds, view, scorings, kinds, past);
    let mut value = ev.value();
    for _ in 0..MAX_STEPS {
        let mut best: Option<(i64, usize, usize, usize)> = None;
        for (ki, kind) in kinds.iter().enumerate() {
            if let Some((v, a, b)) = ev.best_move(kind, scratch) {
                match best {
                    Some((bv, ..)) if bv >= v => {}
                    _ => best = Some((v, ki, a, b)),
                }
            }
        }
        match best {
            Some((v, ki, a, b)) if v > value => {
                ev.apply(&kinds[ki], a, b);
                kinds[ki].alloc[a] -= 1;
                kinds[ki].alloc[b] += 1;
                value = v;
            }
            _ => break,
        }
    }
    value
}
