//! `strong`: single-observer information-set MCTS over determinizations drawn from a belief over
//! the opponent's colours.
//!
//! * Belief: a weight for each of the 70 possible opponent placements. A captured ghost's colour
//!   zeroes every inconsistent placement; each opponent move multiplies the weight of the
//!   placements in which the moved ghost is blue by a likelihood ratio (advancing towards our home
//!   row and our corners is what blue ghosts do).
//! * Search: every iteration samples a placement from the belief, builds the full state and
//!   descends one shared tree of moves (children available in the sample only; UCB with
//!   availability counts), expands one move, plays a short rollout (escape when possible,
//!   otherwise random) and scores the end with a material and race evaluation.
//! * The iteration budget is a count, not a clock, so the bot's choices depend only on its seed
//!   and the observations.

use crate::rules::{AtLimit, Fault};
use kakehiki_core::{Bot, SeedRng};
use rand::Rng;

use super::random_placement;
use super::rush::exit_distance;
use crate::engine::{Action, Dir, Geister, Move, PlayRules, RedSet, View};

/// Search parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrongConfig {
    /// MCTS iterations per move.
    pub iterations: u32,
    /// Plies of a rollout before the evaluation.
    pub rollout_depth: u32,
    /// UCB exploration constant.
    pub exploration: f64,
}

impl Default for StrongConfig {
    fn default() -> Self {
        StrongConfig {
            iterations: 3000,
            rollout_depth: 16,
            exploration: 0.7,
        }
    }
}

/// The search bot.
pub struct StrongBot {
    rng: SeedRng,
    cfg: StrongConfig,
    placements: Vec<u8>,
    weights: Vec<f64>,
    prev: Option<View>,
}

struct Node {
    mv: Move,
    /// Seat that made `mv`.
    player: u8,
    children: Vec<u32>,
    visits: u32,
    avail: u32,
    value: f64,
}

impl StrongBot {
    pub fn new(rng: SeedRng, cfg: StrongConfig) -> Self {
        let placements: Vec<u8> = RedSet::all().map(|r| r.mask()).collect();
        let weights = vec![1.0; placements.len()];
        StrongBot {
            rng,
            cfg,
            placements,
            weights,
            prev: None,
        }
    }

    /// Probability that each opponent ghost is red under the current belief.
    pub fn red_probabilities(&self) -> [f64; 8] {
        let total: f64 = self.weights.iter().sum();
        let mut p = [0.0; 8];
        if total <= 0.0 {
            return [0.5; 8];
        }
        for (m, w) in self.placements.iter().zip(&self.weights) {
            for (g, pg) in p.iter_mut().enumerate() {
                if m & (1 << g) != 0 {
                    *pg += w / total;
                }
            }
        }
        p
    }

    fn update_belief(&mut self, view: &View) {
        // Observed colours are hard facts.
        for g in 0..8 {
            if let Some(c) = view.opp_colour[g] {
                let red = c == crate::engine::Colour::Red;
                for (m, w) in self.placements.iter().zip(self.weights.iter_mut()) {
                    if (m & (1 << g) != 0) != red {
                        *w = 0.0;
                    }
                }
            }
        }
        // The opponent's last move: which ghost moved, and how.
        if let Some(prev) = &self.prev {
            for g in 0..8 {
                let (a, b) = (prev.opp[g], view.opp[g]);
                if a < 36 && b < 36 && a != b {
                    let (ay, by) = (a / 6, b / 6);
                    let mut blue_factor = match by.cmp(&ay) {
                        std::cmp::Ordering::Greater => 1.3,
                        std::cmp::Ordering::Equal => 1.05,
                        std::cmp::Ordering::Less => 0.85,
                    };
                    // Closer to one of our home corners (its exits).
                    let corner = |s: u8| {
                        let (x, y) = (s % 6, s / 6);
                        (x + (5 - y)).min((5 - x) + (5 - y))
                    };
                    if corner(b) < corner(a) {
                        blue_factor *= 1.2;
                    }
                    for (m, w) in self.placements.iter().zip(self.weights.iter_mut()) {
                        if m & (1 << g) == 0 {
                            *w *= blue_factor;
                        }
                    }
                }
            }
        }
        let max = self.weights.iter().cloned().fold(0.0, f64::max);
        if max > 0.0 {
            for w in &mut self.weights {
                *w /= max;
            }
        } else {
            // Inconsistent (should not happen): fall back to placements consistent with captures.
            for (m, w) in self.placements.iter().zip(self.weights.iter_mut()) {
                let ok = (0..8).all(|g| match view.opp_colour[g] {
                    Some(c) => (m & (1 << g) != 0) == (c == crate::engine::Colour::Red),
                    None => true,
                });
                *w = if ok { 1.0 } else { 0.0 };
            }
        }
    }

    fn sample_placement(&mut self) -> u8 {
        let total: f64 = self.weights.iter().sum();
        let mut r = self.rng.gen::<f64>() * total;
        for (m, w) in self.placements.iter().zip(&self.weights) {
            if r < *w {
                return *m;
            }
            r -= w;
        }
        self.placements[self.weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)]
    }

    fn search(&mut self, view: &View) -> Move {
        let legal = view.legal_moves();
        // An escape wins at once.
        if let Some(m) = legal
            .iter()
            .find(|m| is_escape(view.own[m.ghost as usize], m.dir))
        {
            return *m;
        }
        // With three of its red ghosts taken, a capture that may hit the fourth loses at once:
        // never take that risk while a safe move exists.
        let reds_taken = view
            .opp_colour
            .iter()
            .filter(|c| **c == Some(crate::engine::Colour::Red))
            .count();
        let candidates: Vec<Move> = if reds_taken >= 3 {
            let p_red = self.red_probabilities();
            let safe: Vec<Move> = legal
                .iter()
                .copied()
                .filter(|m| match capture_target(view, *m) {
                    Some(victim) => p_red[victim as usize] < 1e-9,
                    None => true,
                })
                .collect();
            if safe.is_empty() {
                legal.to_vec()
            } else {
                safe
            }
        } else {
            legal.to_vec()
        };
        if candidates.len() == 1 {
            return candidates[0];
        }
        let rules = PlayRules {
            max_plies: view.max_plies,
            at_limit: AtLimit::Draw,
            on_illegal: Fault::Lose,
            on_late: Fault::Lose,
        };
        let me = view.seat as u8;
        let mut nodes: Vec<Node> = vec![Node {
            mv: Move::new(0, Dir::N),
            player: 1 - me,
            children: Vec::new(),
            visits: 0,
            avail: 0,
            value: 0.0,
        }];
        let mut path: Vec<u32> = Vec::with_capacity(64);
        for _ in 0..self.cfg.iterations {
            let opp_red = self.sample_placement();
            let mut state = Geister::determinize(view, opp_red, rules);
            path.clear();
            path.push(0);
            let mut node = 0u32;
            loop {
                if state.is_over() {
                    break;
                }
                let moves = state.legal_moves();
                let mover = state.to_move() as u8;
                let untried: Vec<Move> = moves
                    .iter()
                    .copied()
                    .filter(|m| node != 0 || candidates.contains(m))
                    .filter(|m| {
                        !nodes[node as usize]
                            .children
                            .iter()
                            .any(|&c| nodes[c as usize].mv == *m)
                    })
                    .collect();
                if !untried.is_empty() {
                    let mv = untried[self.rng.gen_range(0..untried.len())];
                    let id = nodes.len() as u32;
                    nodes.push(Node {
                        mv,
                        player: mover,
                        children: Vec::new(),
                        visits: 0,
                        avail: 1,
                        value: 0.0,
                    });
                    nodes[node as usize].children.push(id);
                    let _ = state.play(mv);
                    path.push(id);
                    break;
                }
                let mut best = None;
                let mut best_score = f64::NEG_INFINITY;
                let kids = nodes[node as usize].children.clone();
                for c in kids {
                    let n = &mut nodes[c as usize];
                    if !moves.contains(&n.mv) {
                        continue;
                    }
                    n.avail += 1;
                    let mean = n.value / n.visits.max(1) as f64;
                    let score = mean
                        + self.cfg.exploration
                            * ((n.avail as f64).ln() / n.visits.max(1) as f64).sqrt();
                    if score > best_score {
                        best_score = score;
                        best = Some(c);
                    }
                }
                let Some(c) = best else { break };
                let _ = state.play(nodes[c as usize].mv);
                path.push(c);
                node = c;
            }
            let v = rollout(
                &mut state,
                me as usize,
                self.cfg.rollout_depth,
                &mut self.rng,
            );
            for &id in &path {
                let n = &mut nodes[id as usize];
                n.visits += 1;
                n.value += if n.player == me { v } else { 1.0 - v };
            }
        }
        let root = &nodes[0];
        root.children
            .iter()
            .map(|&c| &nodes[c as usize])
            .max_by(|a, b| a.visits.cmp(&b.visits).then(a.value.total_cmp(&b.value)))
            .map(|n| n.mv)
            .unwrap_or(candidates[0])
    }
}

fn is_escape(sq: u8, dir: Dir) -> bool {
    (sq == 0 && matches!(dir, Dir::N | Dir::W)) || (sq == 5 && matches!(dir, Dir::N | Dir::E))
}

/// Play a short random game (escaping whenever possible) and evaluate it for `me` in [0, 1].
fn rollout(state: &mut Geister, me: usize, depth: u32, rng: &mut SeedRng) -> f64 {
    for _ in 0..depth {
        if state.is_over() {
            break;
        }
        let moves = state.legal_moves();
        let pos = state.positions(state.to_move());
        let mv = moves
            .iter()
            .find(|m| is_escape(pos[m.ghost as usize], m.dir))
            .copied()
            .unwrap_or_else(|| moves[rng.gen_range(0..moves.len())]);
        let _ = state.play(mv);
    }
    evaluate(state, me)
}

/// Terminal: 1 / 0.5 / 0. Otherwise material (blue captured from the opponent, own red taken by
/// it, minus opponent red we took) and the race of the nearest blue ghosts to an exit.
fn evaluate(state: &Geister, me: usize) -> f64 {
    if let Some(end) = state.end() {
        return match end.winner {
            Some(w) if w == me => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        };
    }
    let opp = 1 - me;
    let (my_red_lost, my_blue_lost) = state.lost(me);
    let (opp_red_lost, opp_blue_lost) = state.lost(opp);
    let material = (opp_blue_lost as f64 - my_blue_lost as f64) * 0.9
        + (my_red_lost as f64 - opp_red_lost as f64) * 0.35;
    let nearest = |seat: usize| {
        let red = state.red_mask(seat);
        state
            .positions(seat)
            .iter()
            .enumerate()
            .filter(|(g, &p)| p < 36 && red & (1 << g) == 0)
            .map(|(_, &p)| exit_distance(p).0 as f64)
            .fold(12.0, f64::min)
    };
    let race = (nearest(opp) - nearest(me)) * 0.2;
    let x = material + race;
    1.0 / (1.0 + (-x).exp())
}

impl Bot<Geister> for StrongBot {
    fn act(&mut self, _seat: usize, view: &View) -> Action {
        if !view.placed {
            return Action::Place(random_placement(&mut self.rng));
        }
        self.update_belief(view);
        let mv = self.search(view);
        // Our move never moves an opponent ghost to another square, so the next diff of the
        // opponent's ghosts shows exactly its reply.
        self.prev = Some(*view);
        Action::Move(mv)
    }
}

/// The opponent ghost a move would capture, if any.
fn capture_target(view: &View, m: Move) -> Option<u8> {
    let from = view.own[m.ghost as usize];
    if from >= 36 {
        return None;
    }
    let (x, y) = ((from % 6) as i32, (from / 6) as i32);
    let (dx, dy) = match m.dir {
        Dir::N => (0, -1),
        Dir::E => (1, 0),
        Dir::W => (-1, 0),
        Dir::S => (0, 1),
    };
    let (nx, ny) = (x + dx, y + dy);
    if !(0..6).contains(&nx) || !(0..6).contains(&ny) {
        return None;
    }
    let t = (ny * 6 + nx) as u8;
    view.opp.iter().position(|&p| p == t).map(|g| g as u8)
}
