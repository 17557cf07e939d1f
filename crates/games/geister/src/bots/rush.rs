use kakehiki_core::{Bot, SeedRng};
use rand::Rng;

use super::random_placement;
use crate::engine::{Action, Dir, Geister, Move, View};

/// Like the public "chototsu" (猪突) sample: a random placement, then always advance the blue
/// ghost closest to an exit straight towards that exit, escaping when it stands on it. When that
/// ghost is blocked by an own ghost, the next closest blue ghost moves; with no blue ghost able to
/// advance, a random legal move.
pub struct RushBot {
    rng: SeedRng,
}

impl RushBot {
    pub fn new(rng: SeedRng) -> Self {
        RushBot { rng }
    }
}

/// Manhattan distance from square `s` (own frame) to the nearer exit and that exit's x.
pub(crate) fn exit_distance(s: u8) -> (u8, u8) {
    let (x, y) = (s % 6, s / 6);
    let left = x + y;
    let right = (5 - x) + y;
    if left <= right {
        (left, 0)
    } else {
        (right, 5)
    }
}

impl Bot<Geister> for RushBot {
    fn act(&mut self, _seat: usize, view: &View) -> Action {
        if !view.placed {
            return Action::Place(random_placement(&mut self.rng));
        }
        let legal = view.legal_moves();
        let mut blues: Vec<(u8, u8)> = (0..8u8)
            .filter(|&g| view.own[g as usize] < 36 && view.own_red & (1 << g) == 0)
            .map(|g| (exit_distance(view.own[g as usize]).0, g))
            .collect();
        blues.sort_unstable();
        for (_, g) in blues {
            let s = view.own[g as usize];
            let (x, y) = (s % 6, s / 6);
            let (_, ex) = exit_distance(s);
            // On the exit: leave. Otherwise go north first, then sideways towards the exit.
            let mut wanted = Vec::with_capacity(2);
            if y == 0 && x == ex {
                wanted.push(Dir::N);
            } else {
                if y > 0 {
                    wanted.push(Dir::N);
                }
                if x < ex {
                    wanted.push(Dir::E);
                } else if x > ex {
                    wanted.push(Dir::W);
                }
            }
            for d in wanted {
                let m = Move::new(g, d);
                if legal.contains(&m) {
                    return Action::Move(m);
                }
            }
        }
        Action::Move(legal[self.rng.gen_range(0..legal.len())])
    }
}
