//! §7: the hand-checked scoring examples, through `score24` and (example 4, a recorded game)
//! through the engine. §1.4's winner rule: strictly greatest total, otherwise a draw.

use kakehiki_core::{winner_by_max, Game, Score};
use kakehiki_nac::reply::parse_reply;
use kakehiki_nac::{score24, Params, State, NUM_SEATS};

type Matrix = [[u16; NUM_SEATS]; 6];

fn scores(x24: [i64; NUM_SEATS]) -> Vec<Score> {
    x24.iter().map(|&x| Score::new(x, 24)).collect()
}

/// Score of one target row alone (the other rows all zero, i.e. 4-way ties adding nothing).
fn row_score(matrix: &Matrix, weights: &[u8], i: usize) -> Vec<Score> {
    scores(score24(&matrix[i..=i], &weights[i..=i]))
}

fn frac(n: i64, d: i64) -> Score {
    Score::new(n, d)
}

fn int(n: i64) -> Score {
    Score::from_integer(n)
}

#[test]
fn example_1_every_tie_shape() {
    let m = [5, 3, 6, 4, 3, 3];
    let real: Matrix = [
        [2, 2, 2, 0],
        [1, 4, 4, 1],
        [2, 2, 2, 2],
        [0, 0, 7, 0],
        [0; 4],
        [0; 4],
    ];
    assert_eq!(
        row_score(&real, &m, 0),
        [frac(5, 3), frac(5, 3), frac(5, 3), int(-5)]
    );
    assert_eq!(
        row_score(&real, &m, 1),
        [frac(-3, 2), frac(3, 2), frac(3, 2), frac(-3, 2)]
    );
    assert_eq!(row_score(&real, &m, 2), [int(0); 4]);
    assert_eq!(
        row_score(&real, &m, 3),
        [frac(-4, 3), frac(-4, 3), int(4), frac(-4, 3)]
    );
    assert_eq!(row_score(&real, &m, 4), [int(0); 4]);
    assert_eq!(row_score(&real, &m, 5), [int(0); 4]);
    let s = score24(&real, &m);
    assert_eq!(s, [-28, 44, 172, -188]);
    assert_eq!(s.iter().sum::<i64>(), 0);
    assert_eq!(
        scores(s),
        [frac(-7, 6), frac(11, 6), frac(43, 6), frac(-47, 6)]
    );
    assert_eq!(winner_by_max(&scores(s)), Some(2));
}

#[test]
fn example_2() {
    let m = [6, 5, 4, 3, 3, 6];
    let real: Matrix = [
        [4, 4, 1, 0],
        [2, 2, 2, 1],
        [3, 3, 3, 3],
        [0, 5, 0, 0],
        [2, 1, 1, 2],
        [0, 2, 4, 0],
    ];
    let per_target = [
        [int(3), int(3), int(0), int(-6)],
        [frac(5, 3), frac(5, 3), frac(5, 3), int(-5)],
        [int(0); 4],
        [int(-1), int(3), int(-1), int(-1)],
        [frac(3, 2), frac(-3, 2), frac(-3, 2), frac(3, 2)],
        [int(-3), int(0), int(6), int(-3)],
    ];
    for (i, want) in per_target.iter().enumerate() {
        assert_eq!(row_score(&real, &m, i), want, "target {i}");
    }
    let s = score24(&real, &m);
    assert_eq!(s, [52, 148, 124, -324]);
    assert_eq!(
        scores(s),
        [frac(13, 6), frac(37, 6), frac(31, 6), frac(-27, 2)]
    );
    assert_eq!(winner_by_max(&scores(s)), Some(1));
}

#[test]
fn example_3_nac_two_scorings_draw() {
    let m = [3, 4, 5, 6, 3, 4];
    let after5: Matrix = [
        [2, 2, 2, 0],
        [0, 3, 3, 0],
        [1, 1, 1, 1],
        [4, 0, 0, 4],
        [5, 2, 5, 2],
        [0, 1, 2, 3],
    ];
    let per_target5 = [
        [int(1), int(1), int(1), int(-3)],
        [int(-2), int(2), int(2), int(-2)],
        [int(0); 4],
        [int(3), int(-3), int(-3), int(3)],
        [frac(3, 2), frac(-3, 2), frac(3, 2), frac(-3, 2)],
        [int(-4), int(0), int(0), int(4)],
    ];
    for (i, want) in per_target5.iter().enumerate() {
        assert_eq!(row_score(&after5, &m, i), want, "after turn 5, target {i}");
    }
    let s5 = score24(&after5, &m);
    assert_eq!(s5, [-12, -36, 36, 12]);
    assert_eq!(
        scores(s5),
        [frac(-1, 2), frac(-3, 2), frac(3, 2), frac(1, 2)]
    );

    let after9: Matrix = [
        [6, 7, 6, 5],
        [6, 8, 9, 4],
        [7, 7, 6, 7],
        [7, 4, 2, 8],
        [11, 5, 9, 8],
        [6, 7, 4, 6],
    ];
    let per_target9 = [
        [int(0), int(3), int(0), int(-3)],
        [int(0), int(0), int(4), int(-4)],
        [frac(5, 3), frac(5, 3), int(-5), frac(5, 3)],
        [int(0), int(0), int(-6), int(6)],
        [int(3), int(-3), int(0), int(0)],
        [int(0), int(4), int(-4), int(0)],
    ];
    for (i, want) in per_target9.iter().enumerate() {
        assert_eq!(row_score(&after9, &m, i), want, "after turn 9, target {i}");
    }
    let s9 = score24(&after9, &m);
    assert_eq!(s9, [112, 136, -264, 16]);
    assert_eq!(scores(s9), [frac(14, 3), frac(17, 3), int(-11), frac(2, 3)]);

    let total: [i64; NUM_SEATS] = std::array::from_fn(|s| s5[s] + s9[s]);
    assert_eq!(total, [100, 100, -228, 28]);
    assert_eq!(
        scores(total),
        [frac(25, 6), frac(25, 6), frac(-19, 2), frac(7, 6)]
    );
    assert_eq!(
        winner_by_max(&scores(total)),
        None,
        "seats 0 and 1 share the top: a draw"
    );
    // Scored once, as in religion-war, the turn-9 matrix alone makes seat 1 the sole winner.
    assert_eq!(winner_by_max(&scores(s9)), Some(1));
}

/// Example 4's matrix: the affinity lines of block 6 of seat 0 in run A (§2.5).
const EX4_REAL: Matrix = [
    [3, 6, 4, 3],
    [3, 3, 5, 6],
    [2, 8, 3, 3],
    [6, 1, 5, 3],
    [3, 3, 3, 3],
    [6, 2, 3, 5],
];
const EX4_WEIGHTS: [u8; 6] = [3, 5, 4, 5, 4, 3];

#[test]
fn example_4_from_the_recorded_game_through_score24() {
    let per_target = [
        [frac(-3, 2), int(3), int(0), frac(-3, 2)],
        [frac(-5, 2), frac(-5, 2), int(0), int(5)],
        [int(-4), int(4), int(0), int(0)],
        [int(5), int(-5), int(0), int(0)],
        [int(0); 4],
        [int(3), int(-3), int(0), int(0)],
    ];
    for (i, want) in per_target.iter().enumerate() {
        assert_eq!(row_score(&EX4_REAL, &EX4_WEIGHTS, i), want, "target {i}");
    }
    let s = score24(&EX4_REAL, &EX4_WEIGHTS);
    assert_eq!(s, [0, -84, 0, 84]);
    assert_eq!(scores(s), [int(0), frac(-7, 2), int(0), frac(7, 2)]);
}

/// The first five turns of §2.5's test AIs.
const REPLIES_1_5: [[&str; 5]; NUM_SEATS] = [
    ["0 0 1 2 3", "5 5", "4 4 5 0 1", "3 3", "1 2 3 4 5"],
    ["1 1 2 3 4", "0 4", "5 5 0 1 2", "2 2", "0 0 0 2 2"],
    ["2 2 3 4 5", "1 1", "0 0 1 2 3", "5 0", "3 3 3 4 4"],
    ["5 5 9 x", "2 3", "1 1 2 3 4", "4 1", "5 5 5 1 1"],
];

fn play_first_five(params: Params, seed: u32) -> State {
    let mut state = State::new(params, seed);
    for t in 0..5 {
        let n = state.picks_needed();
        let picks: Vec<Vec<u8>> = REPLIES_1_5
            .iter()
            .map(|seat| parse_reply(seat[t].as_bytes(), n, 6).picks)
            .collect();
        state.apply([&picks[0], &picks[1], &picks[2], &picks[3]]);
    }
    state
}

#[test]
fn example_4_through_the_engine() {
    let state = play_first_five(Params::NAC, 2014);
    assert_eq!(state.weights(), EX4_WEIGHTS);
    for (i, row) in EX4_REAL.iter().enumerate() {
        let got: Vec<u16> = (0..NUM_SEATS).map(|s| state.real(i, s)).collect();
        assert_eq!(got, row, "real after turn 5, target {i}");
    }
    // nac scores after turn 5 ...
    assert_eq!(state.scorings(), [(5, [0, -84, 0, 84])]);
    assert_eq!(state.total24(), [0, -84, 0, 84]);
    assert_eq!(state.scores(), [int(0), frac(-7, 2), int(0), frac(7, 2)]);
    assert!(Game::outcome(&state).is_none(), "not over after turn 5");
    // ... religion-war does not.
    let rw = play_first_five(Params::RELIGION_WAR, 2014);
    assert!(rw.scorings().is_empty());
    assert_eq!(rw.total24(), [0; NUM_SEATS]);
}
