//! Built-in bots. Each sees only its seat's [`View`] (the content of its turn block).

use kakehiki_core::{seeded_rng, Bot, SeedRng};
use rand::Rng;

use crate::state::{State, View, NUM_SEATS};

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

/// Greedy by expected standing: estimates every other seat's real affinity from the public
/// matrix plus an equal share of the night totals it cannot see, then spends each pick where it
/// gains the most weight (becoming the sole leader, or escaping the bottom).
pub struct StrongBot {
    rng: SeedRng,
    /// Night picks this seat made, per target (to subtract from the night totals).
    own_night: [u16; crate::state::MAX_TARGETS],
    last_turn: u32,
    last_picks: Vec<u8>,
}

impl StrongBot {
    pub fn new(rng: SeedRng) -> Self {
        StrongBot {
            rng,
            own_night: [0; crate::state::MAX_TARGETS],
            last_turn: 0,
            last_picks: Vec::new(),
        }
    }
}

impl NacBot for StrongBot {
    fn pick(&mut self, view: &View) -> Vec<u8> {
        let l = view.targets();
        let me = view.seat;
        // Estimated real affinity of every seat.
        let mut est = [[0f64; 4]; crate::state::MAX_TARGETS];
        for (i, row) in est.iter_mut().enumerate().take(l) {
            for (q, v) in row.iter_mut().enumerate() {
                *v = f64::from(view.public[i][q]);
            }
            row[me] = f64::from(view.own_real[i]);
        }
        // Hidden night gains of others since the last reveal: R - public of mine tells how much of
        // my own is hidden; the others' hidden part is estimated from the per-target counts we saw.
        let hidden_total: f64 = (0..l)
            .map(|i| f64::from(view.own_real[i] - view.public[i][me]))
            .sum();
        for row in est.iter_mut().take(l) {
            for (q, v) in row.iter_mut().enumerate() {
                if q != me {
                    *v += hidden_total / l as f64;
                }
            }
        }
        let gain = if view.is_day() { 1.0 } else { 2.0 };
        let mut picks = Vec::with_capacity(view.picks_needed());
        for _ in 0..view.picks_needed() {
            let mut best = (f64::MIN, 0usize);
            for (i, row) in est.iter().enumerate().take(l) {
                let w = f64::from(view.weights[i]);
                let others_max = (0..4)
                    .filter(|&q| q != me)
                    .map(|q| row[q])
                    .fold(f64::MIN, f64::max);
                let others_min = (0..4)
                    .filter(|&q| q != me)
                    .map(|q| row[q])
                    .fold(f64::MAX, f64::min);
                let mine = row[me];
                let mut value = 0.0;
                if mine <= others_max && mine + gain > others_max {
                    value += w * (1.0 + 1.0 / (1.0 + others_max - mine));
                } else if mine > others_max {
                    value += w * 0.05;
                } else {
                    value += w / (2.0 + others_max - mine);
                }
                if mine <= others_min {
                    value += w * 0.8;
                }
                value += self.rng.gen::<f64>() * 1e-6;
                if value > best.0 {
                    best = (value, i);
                }
            }
            est[best.1][me] += gain;
            picks.push(best.1 as u8);
        }
        if !view.is_day() {
            for &p in &picks {
                self.own_night[p as usize] += 1;
            }
        }
        self.last_turn = view.turn;
        self.last_picks.clone_from(&picks);
        picks
    }
}

/// Adapter: any [`NacBot`] plays through the generic [`Bot`] interface.
impl Bot<State> for Box<dyn NacBot> {
    fn act(&mut self, _seat: usize, observation: &View) -> Vec<u8> {
        self.pick(observation)
    }
}
