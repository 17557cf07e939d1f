//! The pure, in-process interface of a game engine.
//!
//! An engine exposes its state only through [`Game::observe`]: a seat's observation is the only
//! thing a bot (built-in or process) is ever given. Process bots receive the observation encoded in
//! the game's wire format; built-in bots receive it typed.

use crate::score::Outcome;

/// A game engine that can be driven step by step without any I/O.
pub trait Game {
    /// What one seat decides in one step.
    type Action: Clone;
    /// Everything one seat may know when it decides.
    type Observation;

    /// Number of seats in this match.
    fn num_seats(&self) -> usize;

    /// Seats that must decide now. Empty once the game is over. A simultaneous step lists
    /// several seats; a sequential step lists one.
    fn to_act(&self) -> Vec<usize>;

    /// What `seat` may know now. Never contains information hidden from that seat.
    fn observe(&self, seat: usize) -> Self::Observation;

    /// Apply one step. `actions[i]` belongs to seat `to_act()[i]`; `None` means the seat gave no
    /// usable decision and the rules' default applies (target 0, hold, pass, ...).
    fn apply(&mut self, actions: &[Option<Self::Action>]);

    /// The result, once the game is over.
    fn outcome(&self) -> Option<Outcome>;
}

/// A built-in bot: decides from its own observation only.
pub trait Bot<G: Game> {
    /// Choose an action for `seat` from what it observes.
    fn act(&mut self, seat: usize, observation: &G::Observation) -> G::Action;
}

/// Play a game to the end with one in-process bot per seat and return its outcome.
///
/// Every seat is given only its own observation. Used by benchmarks, property tests and the
/// built-in bots' strength reports.
pub fn play_out<G: Game>(game: &mut G, bots: &mut [Box<dyn Bot<G> + '_>]) -> Outcome {
    loop {
        if let Some(outcome) = game.outcome() {
            return outcome;
        }
        let seats = game.to_act();
        let actions: Vec<Option<G::Action>> = seats
            .iter()
            .map(|&s| Some(bots[s].act(s, &game.observe(s))))
            .collect();
        game.apply(&actions);
    }
}
