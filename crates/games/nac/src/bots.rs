//! Built-in bots. Each sees only its seat's [`View`] (the content of its turn block).

use kakehiki_core::{seeded_rng, Bot, SeedRng};
use rand::Rng;

use crate::state::{State, View, NUM_SEATS};

mod strong;
pub use strong::StrongBot;

/// Names accepted as `builtin:<name>`.
pub const BOT_NAMES: &[&str] = &["random", "strong"];

/// A built-in bot for this family.
pub trait NacBot: Send {
    /// This turn's picks (exactly `view.picks_needed()` targets in range).
    fn pick(&mut self, view: &View) -> Vec<u8>;

    /// This turn's picks written into `out` (`out.len() == view.picks_needed()`): the same picks
    /// [`NacBot::pick`] would give, without allocating where the bot can avoid it.
    fn pick_into(&mut self, view: &View, out: &mut [u8]) {
        let picks = self.pick(view);
        for (k, o) in out.iter_mut().enumerate() {
            *o = picks.get(k).copied().unwrap_or(0);
        }
    }
}

impl<T: NacBot + ?Sized> NacBot for Box<T> {
    fn pick(&mut self, view: &View) -> Vec<u8> {
        (**self).pick(view)
    }

    fn pick_into(&mut self, view: &View, out: &mut [u8]) {
        (**self).pick_into(view, out)
    }
}

/// The generator of the built-in bot in `seat`: the match seed's stream `nac-bot-<seat>`.
pub fn bot_rng(seat: usize, match_seed: u64) -> SeedRng {
    const STREAMS: [&str; NUM_SEATS] = ["nac-bot-0", "nac-bot-1", "nac-bot-2", "nac-bot-3"];
    match STREAMS.get(seat) {
        Some(stream) => seeded_rng(match_seed, stream),
        None => seeded_rng(match_seed, &format!("nac-bot-{seat}")),
    }
}

/// Make the named bot for `seat`, its randomness drawn from the match seed.
pub fn make_bot(name: &str, seat: usize, match_seed: u64) -> Option<Box<dyn NacBot>> {
    match name {
        "random" => Some(Box::new(RandomBot::new(seat, match_seed))),
        "strong" => Some(Box::new(StrongBot::new(bot_rng(seat, match_seed)))),
        _ => None,
    }
}

/// A built-in bot's picks as the reply line a process would write (without its LF).
pub fn reply_line(picks: &[u8]) -> String {
    picks
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Play `state` to its end in process: every turn each seat's bot is given that seat's
/// [`View`] only, and its picks are applied together. Allocates nothing per turn.
pub fn play_to_end<B: NacBot>(state: &mut State, bots: &mut [B; NUM_SEATS]) {
    const INLINE: usize = 16;
    let params = *state.params();
    let stride = params.day_picks.max(params.night_picks);
    let mut inline = [0u8; NUM_SEATS * INLINE];
    let mut heap = Vec::new();
    let buf: &mut [u8] = if stride <= INLINE {
        &mut inline
    } else {
        heap.resize(NUM_SEATS * stride, 0);
        &mut heap
    };
    while !state.is_over() {
        let n = state.picks_needed();
        for (s, bot) in bots.iter_mut().enumerate() {
            bot.pick_into(&state.view(s), &mut buf[s * stride..s * stride + n]);
        }
        let at = |s: usize| &buf[s * stride..s * stride + n];
        state.apply([at(0), at(1), at(2), at(3)]);
    }
}

/// Uniformly random picks.
pub struct RandomBot {
    pub rng: SeedRng,
}

impl RandomBot {
    /// The `random` bot of `seat` (what `make_bot("random", seat, match_seed)` makes).
    pub fn new(seat: usize, match_seed: u64) -> Self {
        RandomBot {
            rng: bot_rng(seat, match_seed),
        }
    }
}

impl NacBot for RandomBot {
    fn pick(&mut self, view: &View) -> Vec<u8> {
        let mut picks = vec![0; view.picks_needed()];
        self.pick_into(view, &mut picks);
        picks
    }

    fn pick_into(&mut self, view: &View, out: &mut [u8]) {
        let l = view.targets() as u8;
        for o in out.iter_mut() {
            *o = self.rng.gen_range(0..l);
        }
    }
}

/// Adapter: any [`NacBot`] plays through the generic [`Bot`] interface.
impl Bot<State> for Box<dyn NacBot> {
    fn act(&mut self, _seat: usize, observation: &View) -> Vec<u8> {
        self.pick(observation)
    }
}
