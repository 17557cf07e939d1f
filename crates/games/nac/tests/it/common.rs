//! Shared by the property tests: scripted games and a reader for the blocks the engine writes.

use kakehiki_nac::{Params, State, View, NUM_SEATS};
use proptest::prelude::*;

pub const TURNS: usize = 9;
pub const TARGETS: usize = 6;

/// Every seat's picks for every turn; turn t uses the first 5 (day) or 2 (night) of `[t-1][s]`.
pub type Script = [[[u8; 5]; NUM_SEATS]; TURNS];

pub type Matrix = [[u16; NUM_SEATS]; TARGETS];

pub fn script() -> impl Strategy<Value = Script> {
    proptest::array::uniform9(proptest::array::uniform4(proptest::array::uniform5(
        0u8..TARGETS as u8,
    )))
}

pub fn params() -> impl Strategy<Value = Params> {
    prop_oneof![Just(Params::NAC), Just(Params::RELIGION_WAR)]
}

pub fn is_day(t: usize) -> bool {
    t % 2 == 1
}

pub fn picks_in(t: usize) -> usize {
    if is_day(t) {
        5
    } else {
        2
    }
}

/// Everything a scripted game produced.
pub struct Record {
    pub state: State,
    /// blocks[s][t-1]: seat s's block for turn t, as written.
    pub blocks: [Vec<String>; NUM_SEATS],
    /// streams[s]: settings followed by every block.
    pub streams: [String; NUM_SEATS],
    /// views[s][t-1]: seat s's typed view in turn t.
    pub views: [Vec<View>; NUM_SEATS],
    /// real[t]: the real matrix after turn t (real[0] = start).
    pub real: Vec<Matrix>,
    /// counts[t]: picks per target in turn t (counts[0] unused).
    pub counts: Vec<[u16; TARGETS]>,
}

pub fn real_matrix(state: &State) -> Matrix {
    std::array::from_fn(|i| std::array::from_fn(|s| state.real(i, s)))
}

pub fn play(params: Params, seed: u32, script: &Script) -> Record {
    let mut state = State::new(params, seed);
    let mut blocks: [Vec<String>; NUM_SEATS] = Default::default();
    let mut views: [Vec<View>; NUM_SEATS] = Default::default();
    let mut streams: [String; NUM_SEATS] = std::array::from_fn(|_| state.settings_text());
    let mut real = vec![real_matrix(&state)];
    let mut counts = vec![[0; TARGETS]];
    for t in 1..=TURNS {
        assert_eq!(state.turn() as usize, t);
        for s in 0..NUM_SEATS {
            let b = state.block_text(s);
            streams[s].push_str(&b);
            blocks[s].push(b);
            views[s].push(state.view(s));
        }
        let n = picks_in(t);
        assert_eq!(state.picks_needed(), n);
        let p = &script[t - 1];
        state.apply([&p[0][..n], &p[1][..n], &p[2][..n], &p[3][..n]]);
        real.push(real_matrix(&state));
        let mut c = [0u16; TARGETS];
        for seat in p {
            for &i in &seat[..n] {
                c[i as usize] += 1;
            }
        }
        counts.push(c);
    }
    assert!(state.is_over());
    Record {
        state,
        blocks,
        streams,
        views,
        real,
        counts,
    }
}

/// A turn block read back from its text (§2.3).
#[derive(Debug, PartialEq, Eq)]
pub struct Block {
    pub turn: u32,
    pub label: char,
    /// affinity[i]: the seat's line for target i (own column first, then the others ascending).
    pub affinity: [[u16; NUM_SEATS]; TARGETS],
    pub real: [u16; TARGETS],
    pub counts: Option<[u16; TARGETS]>,
}

fn numbers<const K: usize>(line: &str) -> [u16; K] {
    let v: Vec<u16> = line
        .split(' ')
        .map(|x| x.parse().expect("a number"))
        .collect();
    v.try_into().expect("field count")
}

pub fn read_block(text: &str) -> Block {
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    let (t, label) = lines[0].split_once(' ').expect("turn line");
    let turn: u32 = t.parse().expect("turn number");
    let day = turn % 2 == 1;
    assert_eq!(
        lines.len(),
        if day { 9 } else { 8 },
        "lines in block {turn}"
    );
    Block {
        turn,
        label: label.chars().next().expect("label"),
        affinity: std::array::from_fn(|i| numbers(lines[1 + i])),
        real: numbers(lines[7]),
        counts: day.then(|| numbers(lines[8])),
    }
}

/// The columns seat `p` sees: itself, then the others ascending.
pub fn column_order(p: usize) -> [usize; NUM_SEATS] {
    let mut cols = [p; NUM_SEATS];
    for (k, q) in (1..).zip((0..NUM_SEATS).filter(|&q| q != p)) {
        cols[k] = q;
    }
    cols
}
