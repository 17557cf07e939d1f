use kakehiki_core::{Bot, SeedRng};
use rand::Rng;

use super::random_placement;
use crate::engine::{Action, Geister, View};

/// Uniformly random placement and uniformly random legal moves.
pub struct RandomBot {
    rng: SeedRng,
}

impl RandomBot {
    pub fn new(rng: SeedRng) -> Self {
        RandomBot { rng }
    }
}

impl Bot<Geister> for RandomBot {
    fn act(&mut self, _seat: usize, view: &View) -> Action {
        if !view.placed {
            return Action::Place(random_placement(&mut self.rng));
        }
        let moves = view.legal_moves();
        Action::Move(moves[self.rng.gen_range(0..moves.len())])
    }
}
