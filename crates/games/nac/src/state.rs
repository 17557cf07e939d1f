//! The engine: state, turn blocks, picks, scoring.

use std::fmt::Write as _;

use kakehiki_core::{Game, Outcome, Score};

use crate::mt19937;

/// Seats in every variant.
pub const NUM_SEATS: usize = 4;
/// Most targets any variant of the family has (`lang-wars`, `ai-lovers`: 8).
pub const MAX_TARGETS: usize = 8;

/// The rule variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Negotiate and Conquer: scoring after turns 5 and 9.
    Nac,
    /// Programming Language Religious War, second edition: scoring after turn 9 only.
    ReligionWar,
}

impl Variant {
    /// The registered name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Nac => "nac",
            Variant::ReligionWar => "religion-war",
        }
    }

    /// The variant's full parameter set.
    pub fn params(self) -> Params {
        match self {
            Variant::Nac => Params::NAC,
            Variant::ReligionWar => Params::RELIGION_WAR,
        }
    }
}

/// A variant's full parameter set (§1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Params {
    pub targets: usize,
    pub turns: u32,
    pub day_label: char,
    pub night_label: char,
    pub day_picks: usize,
    pub night_picks: usize,
    pub day_real_gain: u16,
    pub night_real_gain: u16,
    pub day_public_gain: u16,
    /// After this turn, public := real (`None`: never).
    pub reveal_after: Option<u32>,
    /// Bit t set: scoring after turn t.
    pub scoring_turns: u32,
    pub weight_min: u8,
}

impl Params {
    pub const NAC: Params = Params {
        targets: 6,
        turns: 9,
        day_label: 'D',
        night_label: 'N',
        day_picks: 5,
        night_picks: 2,
        day_real_gain: 1,
        night_real_gain: 2,
        day_public_gain: 1,
        reveal_after: Some(5),
        scoring_turns: (1 << 5) | (1 << 9),
        weight_min: 3,
    };

    pub const RELIGION_WAR: Params = Params {
        day_label: 'W',
        night_label: 'H',
        scoring_turns: 1 << 9,
        ..Params::NAC
    };

    /// Whether turn `t` is a day (odd turns).
    pub fn is_day(&self, t: u32) -> bool {
        t % 2 == 1
    }

    /// The label of turn `t` in its block (`D`/`N`, `W`/`H`).
    pub fn label(&self, t: u32) -> char {
        if self.is_day(t) {
            self.day_label
        } else {
            self.night_label
        }
    }

    /// Picks a seat makes in turn `t`.
    pub fn picks_in(&self, t: u32) -> usize {
        if self.is_day(t) {
            self.day_picks
        } else {
            self.night_picks
        }
    }

    /// Whether the rules score after turn `t`.
    pub fn scores_after(&self, t: u32) -> bool {
        t < 32 && self.scoring_turns & (1 << t) != 0
    }
}

/// The state of one game.
#[derive(Debug, Clone)]
pub struct State {
    params: Params,
    seed: u32,
    weights: [u8; MAX_TARGETS],
    /// real[i][s]
    real: [[u16; NUM_SEATS]; MAX_TARGETS],
    /// public[i][s]
    public: [[u16; NUM_SEATS]; MAX_TARGETS],
    /// Picks per target in the previous turn (all seats).
    counts: [u16; MAX_TARGETS],
    /// The next turn to play, 1-based; `turns + 1` when over.
    turn: u32,
    total24: [i64; NUM_SEATS],
    scorings: Vec<(u32, [i64; NUM_SEATS])>,
}

impl State {
    /// A new game: weights drawn from `seed` with MT19937.
    pub fn new(params: Params, seed: u32) -> Self {
        let mut weights = [0u8; MAX_TARGETS];
        let mut draws = [0u32; MAX_TARGETS];
        let l = params.targets.min(MAX_TARGETS);
        mt19937::first_outputs(seed, &mut draws[..l]);
        for (w, u) in weights.iter_mut().zip(&draws[..l]) {
            *w = params.weight_min + (u >> 30) as u8;
        }
        State {
            params,
            seed,
            weights,
            real: [[0; NUM_SEATS]; MAX_TARGETS],
            public: [[0; NUM_SEATS]; MAX_TARGETS],
            counts: [0; MAX_TARGETS],
            turn: 1,
            total24: [0; NUM_SEATS],
            scorings: Vec::new(),
        }
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// The weights in target order.
    pub fn weights(&self) -> &[u8] {
        &self.weights[..self.params.targets]
    }

    /// The next turn to play (1-based).
    pub fn turn(&self) -> u32 {
        self.turn
    }

    pub fn is_over(&self) -> bool {
        self.turn > self.params.turns
    }

    /// Picks each seat makes in the current turn.
    pub fn picks_needed(&self) -> usize {
        self.params.picks_in(self.turn)
    }

    /// `real[i][s]`.
    pub fn real(&self, target: usize, seat: usize) -> u16 {
        self.real[target][seat]
    }

    /// `public[i][s]`.
    pub fn public(&self, target: usize, seat: usize) -> u16 {
        self.public[target][seat]
    }

    /// The settings block (§2.2), written once before block 1.
    pub fn settings_text(&self) -> String {
        let mut s = format!(
            "{} {} {}\n",
            self.params.turns, NUM_SEATS, self.params.targets
        );
        for (i, w) in self.weights().iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            let _ = write!(s, "{w}");
        }
        s.push('\n');
        s
    }

    /// The column order seat `seat` sees: itself, then the others ascending.
    pub fn column_order(seat: usize) -> [usize; NUM_SEATS] {
        let mut cols = [seat; NUM_SEATS];
        let mut k = 1;
        for q in 0..NUM_SEATS {
            if q != seat {
                cols[k] = q;
                k += 1;
            }
        }
        cols
    }

    /// Seat `seat`'s block for the current turn (§2.3), built from the state after the previous
    /// turn and nothing else.
    pub fn block_text(&self, seat: usize) -> String {
        let mut s = String::with_capacity(128);
        self.write_block(seat, &mut s);
        s
    }

    /// Append what the referee writes to seat `seat` for the current turn to `out`: its block,
    /// preceded on the first turn by the settings block (§2.2).
    pub fn write_message(&self, seat: usize, out: &mut String) {
        if self.turn == 1 {
            out.push_str(&self.settings_text());
        }
        self.write_block(seat, out);
    }

    /// Append seat `seat`'s block for the current turn to `out`.
    pub fn write_block(&self, seat: usize, out: &mut String) {
        let t = self.turn;
        let day = self.params.is_day(t);
        let label = if day {
            self.params.day_label
        } else {
            self.params.night_label
        };
        let targets = self.params.targets;
        // At most 5 digits and a separator per number: one allocation for the whole block.
        out.reserve(16 + 6 * targets * (NUM_SEATS + 2));
        let mut num = itoa::Buffer::new();
        out.push_str(num.format(t));
        out.push(' ');
        out.push(label);
        out.push('\n');
        let cols = Self::column_order(seat);
        let mut row = |out: &mut String, values: &mut dyn Iterator<Item = u16>| {
            for (k, v) in values.enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                out.push_str(num.format(v));
            }
            out.push('\n');
        };
        for i in 0..targets {
            row(out, &mut cols.iter().map(|&q| self.public[i][q]));
        }
        row(out, &mut (0..targets).map(|i| self.real[i][seat]));
        if day {
            row(out, &mut self.counts[..targets].iter().copied());
        }
    }

    /// Play the current turn. `picks[s]` are seat s's applied picks (already substituted: the
    /// referee maps invalid fields and dead seats to target 0). Extra picks are ignored, missing
    /// ones and out-of-range targets count as target 0, so this never panics.
    pub fn apply(&mut self, picks: [&[u8]; NUM_SEATS]) {
        if self.is_over() {
            return;
        }
        let t = self.turn;
        let n = self.params.picks_in(t);
        let day = self.params.is_day(t);
        let (real_gain, public_gain) = if day {
            (self.params.day_real_gain, self.params.day_public_gain)
        } else {
            (self.params.night_real_gain, 0)
        };
        self.counts = [0; MAX_TARGETS];
        for (s, seat_picks) in picks.iter().enumerate() {
            for k in 0..n {
                let mut i = seat_picks.get(k).copied().unwrap_or(0) as usize;
                if i >= self.params.targets {
                    i = 0;
                }
                self.real[i][s] += real_gain;
                self.public[i][s] += public_gain;
                self.counts[i] += 1;
            }
        }
        if self.params.reveal_after == Some(t) {
            self.public = self.real;
        }
        if self.params.scores_after(t) {
            let s = score24(&self.real[..self.params.targets], self.weights());
            for (total, x) in self.total24.iter_mut().zip(s) {
                *total += x;
            }
            self.scorings.push((t, s));
        }
        self.turn += 1;
    }

    /// Totals so far, in units of 1/24.
    pub fn total24(&self) -> [i64; NUM_SEATS] {
        self.total24
    }

    /// Every scoring so far: (after turn, per-seat score ×24).
    pub fn scorings(&self) -> &[(u32, [i64; NUM_SEATS])] {
        &self.scorings
    }

    /// The totals as exact scores.
    pub fn scores(&self) -> Vec<Score> {
        self.total24.iter().map(|&x| Score::new(x, 24)).collect()
    }

    /// What `seat` may see now (the typed content of its block).
    pub fn view(&self, seat: usize) -> View {
        let mut own_real = [0; MAX_TARGETS];
        for (i, r) in own_real.iter_mut().enumerate() {
            *r = self.real[i][seat];
        }
        let day = self.params.is_day(self.turn);
        View {
            seat,
            params: self.params,
            turn: self.turn,
            weights: self.weights,
            public: self.public,
            own_real,
            last_counts: if day { self.counts } else { [0; MAX_TARGETS] },
        }
    }
}

/// score(real) (§1.4) in units of 1/24. `real[i][s]`, one row per target.
pub fn score24(real: &[[u16; NUM_SEATS]], weights: &[u8]) -> [i64; NUM_SEATS] {
    let mut out = [0i64; NUM_SEATS];
    for (row, &m) in real.iter().zip(weights) {
        let hi = *row.iter().max().unwrap_or(&0);
        let lo = *row.iter().min().unwrap_or(&0);
        let n_hi = row.iter().filter(|&&v| v == hi).count() as i64;
        let n_lo = row.iter().filter(|&&v| v == lo).count() as i64;
        // 24 / n for the n = 1..=4 seats that can share a place (exact: 24 = 4!).
        const SHARE24: [i64; NUM_SEATS + 1] = [0, 24, 12, 8, 6];
        let gain = i64::from(m) * SHARE24[n_hi as usize];
        let loss = i64::from(m) * SHARE24[n_lo as usize];
        for (s, &v) in row.iter().enumerate() {
            if v == hi {
                out[s] += gain;
            }
            if v == lo {
                out[s] -= loss;
            }
        }
    }
    out
}

/// What one seat may see: exactly the contents of its turn block, typed. Holds no other seat's
/// real affinity, no scores and nothing about errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    pub seat: usize,
    pub params: Params,
    /// The current turn.
    pub turn: u32,
    pub weights: [u8; MAX_TARGETS],
    /// `public[i][s]` for every seat (absolute seat indices).
    pub public: [[u16; NUM_SEATS]; MAX_TARGETS],
    /// This seat's own real affinity per target.
    pub own_real: [u16; MAX_TARGETS],
    /// Picks per target in the previous turn; shown on day turns only (zeros on nights).
    pub last_counts: [u16; MAX_TARGETS],
}

impl View {
    pub fn is_day(&self) -> bool {
        self.params.is_day(self.turn)
    }

    pub fn picks_needed(&self) -> usize {
        self.params.picks_in(self.turn)
    }

    pub fn targets(&self) -> usize {
        self.params.targets
    }

    pub fn weights(&self) -> &[u8] {
        &self.weights[..self.params.targets]
    }
}

/// The [`Game`] interface: all four seats act at once each turn.
impl Game for State {
    type Action = Vec<u8>;
    type Observation = View;

    fn num_seats(&self) -> usize {
        NUM_SEATS
    }

    fn to_act(&self) -> Vec<usize> {
        if self.is_over() {
            Vec::new()
        } else {
            (0..NUM_SEATS).collect()
        }
    }

    fn observe(&self, seat: usize) -> View {
        self.view(seat)
    }

    fn apply(&mut self, actions: &[Option<Vec<u8>>]) {
        let empty: &[u8] = &[];
        let mut picks = [empty; NUM_SEATS];
        for (s, a) in actions.iter().enumerate().take(NUM_SEATS) {
            if let Some(a) = a {
                picks[s] = a;
            }
        }
        State::apply(self, picks);
    }

    fn outcome(&self) -> Option<Outcome> {
        self.is_over().then(|| Outcome::by_max(self.scores()))
    }
}
